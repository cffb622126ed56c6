"""Token healing's picks on the tiny model's real vocabulary."""

from __future__ import annotations

import numpy as np
import pytest

from lsp_coder.engine.healing import choose, spelled
from lsp_coder.engine.llama import Model, ModelParams
from lsp_coder.engine.sampling import probability


@pytest.fixture(scope="module")
def tiny(tiny_qwen):
    model = Model(tiny_qwen, ModelParams(vocab_only=True))
    yield model
    model.close()


def test_a_healed_pick_spells_the_typed_text_and_says_what_is_left(tiny):
    rest = b"return"
    logits = np.random.default_rng(0).normal(size=tiny.n_vocab).astype(np.float32)
    chosen = choose(tiny, logits, rest, 0.0, np.random.default_rng(0))
    piece = tiny.piece(chosen.token)
    assert piece.startswith(rest) or rest.startswith(piece)
    assert chosen.rest == (b"" if piece.startswith(rest) else rest[len(piece):])
    allowed = tiny.healing_candidates(rest)
    assert chosen.token == int(allowed[np.argmax(logits[allowed])])
    assert chosen.constrained == (chosen.token != int(np.argmax(logits)))
    assert chosen.prob == probability(logits[allowed], list(allowed).index(chosen.token))
    # Typed text past the token: the next pick spells what is left.
    assert spelled(tiny, chosen.token, rest) == chosen.rest
    ret = tiny.tokenize("ret")
    assert spelled(tiny, ret[0], rest) == rest[len(tiny.piece(ret[0])):]
    assert spelled(tiny, tiny.tokenize(" x")[0], rest) is None


def test_with_nothing_to_spell_the_pick_is_the_models_own(tiny):
    logits = np.random.default_rng(1).normal(size=tiny.n_vocab).astype(np.float32)
    chosen = choose(tiny, logits, b"", 0.0, np.random.default_rng(0))
    assert (chosen.token, chosen.rest, chosen.constrained) == (int(np.argmax(logits)), b"", False)
    assert chosen.prob == probability(logits, chosen.token)
