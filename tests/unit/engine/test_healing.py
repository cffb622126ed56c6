"""Token healing's picks on the tiny model's real vocabulary."""

from __future__ import annotations

import numpy as np

from lsp_coder.engine.healing import choose, spelled
from lsp_coder.engine.sampling import probability


def test_a_healed_pick_spells_the_typed_text_and_says_what_is_left(tiny_vocab):
    rest = b"return"
    logits = np.random.default_rng(0).normal(size=tiny_vocab.n_vocab).astype(np.float32)
    chosen = choose(tiny_vocab, logits, rest, 0.0, np.random.default_rng(0))
    piece = tiny_vocab.piece(chosen.token)
    assert piece.startswith(rest) or rest.startswith(piece)
    assert chosen.rest == (b"" if piece.startswith(rest) else rest[len(piece):])
    allowed = tiny_vocab.healing_candidates(rest)
    assert chosen.token == int(allowed[np.argmax(logits[allowed])])
    assert chosen.constrained == (chosen.token != int(np.argmax(logits)))
    assert chosen.prob == probability(logits[allowed], list(allowed).index(chosen.token))
    # Typed text past the token: the next pick spells what is left.
    assert spelled(tiny_vocab, chosen.token, rest) == chosen.rest
    ret = tiny_vocab.tokenize("ret")
    assert spelled(tiny_vocab, ret[0], rest) == rest[len(tiny_vocab.piece(ret[0])):]
    assert spelled(tiny_vocab, tiny_vocab.tokenize(" x")[0], rest) is None


def test_with_nothing_to_spell_the_pick_is_the_models_own(tiny_vocab):
    logits = np.random.default_rng(1).normal(size=tiny_vocab.n_vocab).astype(np.float32)
    chosen = choose(tiny_vocab, logits, b"", 0.0, np.random.default_rng(0))
    assert (chosen.token, chosen.rest, chosen.constrained) == (int(np.argmax(logits)), b"", False)
    assert chosen.prob == probability(logits, chosen.token)
