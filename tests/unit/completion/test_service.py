"""The completion service on tiny real models: FIM templates from the GGUF, prefix-only mode."""

from __future__ import annotations

from dataclasses import replace

import pytest

from lsp_coder.backends.local_prompt import build_prompt
from lsp_coder.completion.context import split_document
from lsp_coder.completion.service import CompletionRequest, CompletionService
from lsp_coder.confidence import first_line_confidence
from lsp_coder.config import Config, apply
from tests.fixtures.tiny_gguf import QWEN_FIM_IDS, codellama_fim_ids

DOC = "def add(a, b):\n    ret\n\nprint(add(1, 2))\n"
CURSOR = DOC.index("ret") + 3


def service_for(path, **completion) -> CompletionService:
    config = apply(Config(), {"model": {"path": str(path), "n_ctx": 1024, "n_seq_max": 2},
                              "completion": {"max_tokens": 6, **completion}}, "test")
    service = CompletionService(config)
    assert service.load() is None
    return service


def prompt_for(service: CompletionService):
    engine = service.backend.engine
    parts = split_document(DOC, CURSOR, prefix_tokens=512, suffix_tokens=512)
    return build_prompt(engine.template, parts, engine.tokenize, engine.detokenize,
                        prefix_tokens=512, suffix_tokens=512, extra_tokens=0)


@pytest.mark.parametrize("fixture, ids", [("tiny_qwen", QWEN_FIM_IDS),
                                          ("tiny_codellama", codellama_fim_ids())])
def test_fim_template_comes_from_the_models_own_tokens(request, fixture, ids):
    service = service_for(request.getfixturevalue(fixture))
    try:
        engine = service.backend.engine
        assert (engine.template.prefix, engine.template.suffix, engine.template.middle) == (
            ids["pre"], ids["suf"], ids["mid"])
        prompt = prompt_for(service)
        tokens = prompt.tokens
        pre, suf, mid = (tokens.index(ids[k]) for k in ("pre", "suf", "mid"))
        assert pre < suf < mid
        # Each part reads exactly its text, the cursor line's indentation at the prefix
        # part's end; only CodeLlama's own format puts a space after <PRE> (its SentencePiece
        # vocabulary's lead, which no other piece gets).
        lead = " " if fixture == "tiny_codellama" else ""
        assert engine.detokenize(tokens[pre + 1 : suf]) == lead + "def add(a, b):\n    "
        assert engine.detokenize(tokens[suf + 1 : mid]) == "\n\nprint(add(1, 2))\n"
        # The typed word's last token is held back for healing.
        assert engine.detokenize(tokens[mid + 1 :]) + prompt.heal == "ret"
        assert prompt.heal and "ret".endswith(prompt.heal)
        suggestion = service.complete(CompletionRequest(uri="file:///t.py", text=DOC,
                                                        offset=CURSOR))
        assert suggestion.stats is not None and suggestion.stats.prompt_tokens == len(tokens)
    finally:
        service.close()


def test_a_model_without_fim_tokens_warns_and_completes_from_the_prefix(tiny_qwen_nofim):
    service = service_for(tiny_qwen_nofim)
    try:
        assert not service.backend.engine.template.has_fim
        assert any("fill-in-the-middle" in w for w in service.backend.engine.warnings)
        tokens = prompt_for(service).tokens
        assert not set(QWEN_FIM_IDS.values()) & set(tokens)
        # no suffix in the prompt
        assert "print(add" not in service.backend.engine.detokenize(tokens)
        suggestion = service.complete(CompletionRequest(uri="file:///t.py", text=DOC,
                                                        offset=CURSOR))
        assert suggestion.stop_reason in ("eog", "max_tokens", "stop")
    finally:
        service.close()


def test_incompatible_draft_model_is_refused_with_a_warning(tiny_qwen, tiny_qwen_padded):
    config = apply(Config(), {"model": {"path": str(tiny_qwen), "draft_path": str(tiny_qwen_padded),
                                        "n_ctx": 1024, "n_seq_max": 2},
                              "speculative": {"draft_model": True}}, "test")
    service = CompletionService(config)
    assert service.load() is None
    try:
        assert service.backend.engine.draft is None
        assert any("draft model" in w and "128" in w for w in service.backend.engine.warnings)
    finally:
        service.close()


def test_bad_model_paths_are_reported_not_raised(tmp_path):
    missing = tmp_path / "nope.gguf"
    service = CompletionService(apply(Config(), {"model": {"path": str(missing)}}, "test"))
    error = service.load()
    assert error and str(missing) in error
    assert service.complete(CompletionRequest(uri="file:///t.py", text=DOC, offset=3)).text == ""


def test_prompt_budgets_shrink_to_fit_a_small_kv_cache(tiny_qwen):
    service = service_for(tiny_qwen, prefix_tokens=4096, suffix_tokens=2048)
    try:
        long_doc = "".join(f"value_{i} = compute({i}, {i * 3})\n" for i in range(600))
        suggestion = service.complete(CompletionRequest(uri="file:///big.py", text=long_doc,
                                                        offset=len(long_doc) // 2))
        assert suggestion.stop_reason in ("eog", "max_tokens", "stop")
        assert suggestion.stats.prompt_tokens <= service.backend.engine.cache.budget
    finally:
        service.close()


def test_forget_snapshot_and_reconfigure_between_requests(tiny_qwen):
    service = service_for(tiny_qwen)
    try:
        assert service.snapshot()["kv_used_bytes"] == 0
        req = CompletionRequest(uri="file:///t.py", text=DOC, offset=CURSOR)
        service.complete(req)  # visits the document: it becomes extra context for others
        snap = service.snapshot()
        assert snap["model_loaded"] and snap["error"] is None
        assert 0 < snap["kv_used_bytes"] <= snap["kv_budget_bytes"]
        assert snap["kv_evicted_blocks"] == 0
        service.suggestions.store(req.uri, DOC[:CURSOR], "", "urn a + b")
        other = ("file:///other.py", "print(add(3, 4))\n", 0, 1000, service.config)
        assert service.related.section(*other).entries  # the document completed in is shown
        service.forget(req.uri)
        assert service.suggestions.latest(req.uri) == ""
        assert not service.related.section(*other).entries
        # New speculation settings need no reload; the engine takes them with the next request.
        engine = service.backend.engine
        old = service.config
        new = apply(old, {"speculative": {"greedy_memory": False, "p_min": 0.7}}, "test")
        assert service.reconfigure(new) is False
        assert engine.config is old and engine.generator.use_memory
        service.complete(req)
        assert engine.config is new and not engine.generator.use_memory
        assert service.reconfigure(apply(new, {"model": {"n_ctx": 512}}, "test")) is True
    finally:
        service.close()
    assert service.snapshot() == {"model_loaded": False, "error": None,
                                  "backend": {"kind": "local"}}


MEAN = ("def mean(values):\n    total = 0\n    for value in values:\n        total += value\n"
        "    return total / len(values)\n\n\nprint(mean([1, 2, 3]))\n")


@pytest.mark.parametrize("line", ["    total = 0", "        total += value",
                                  "    return total / len(values)"])
def test_at_the_end_of_a_finished_line_generation_stops_at_the_newline(real_small_model, line):
    # Single-line mode shows the text before the first newline only. The model's answer at
    # the end of these lines is mostly a newline and the next line, which took 8 to 21 tokens
    # to generate before being dropped (the 0.5B adds a trailing comment to the last one).
    config = apply(Config(), {"model": {"path": str(real_small_model), "n_ctx": 1024,
                                        "n_seq_max": 2, "draft_path": "none"},
                              "completion": {"max_tokens": 32}, "idle": {"enabled": False}},
                   "test")
    service = CompletionService(config)
    assert service.load() is None
    try:
        offset = MEAN.index(line) + len(line)
        suggestion = service.complete(CompletionRequest(uri="file:///mean.py", text=MEAN,
                                                        offset=offset))
        assert "\n" not in suggestion.text and suggestion.stop_reason == "stop"
        shown = len(service.backend.engine.tokenize(suggestion.text))
        assert suggestion.stats is not None
        assert suggestion.stats.generated_tokens <= shown + 2, (suggestion.text, shown)
        if line != "    return total / len(values)":
            assert suggestion.text == ""
    finally:
        service.close()


def confidence_of(suggestion) -> float | None:
    return first_line_confidence(suggestion.stats.token_probs, suggestion.stats.first_line_tokens)


def test_an_unsure_answer_to_typing_is_hidden_and_not_cached_unless_invoked(tiny_qwen):
    service = service_for(tiny_qwen)
    try:
        req = CompletionRequest(uri="file:///t.py", text=DOC, offset=CURSOR)
        assert service.config.completion.min_confidence == 0.5  # the default
        hidden_by_default = service.complete(req)  # a random model is sure of nothing
        assert hidden_by_default.text == "" and hidden_by_default.extra["unsure"]
        service.reconfigure(apply(service.config, {"completion": {"min_confidence": 0.0}},
                                  "test"))
        shown = service.complete(req)
        assert shown.text and shown.stats is not None
        assert confidence_of(shown) < 1.0
        assert service.suggestions.latest(req.uri)
        service.forget(req.uri)
        service.reconfigure(apply(service.config, {"completion": {"min_confidence": 1.0}},
                                  "test"))
        # the same answer again (from the greedy memory, with the same probabilities): hidden
        hidden = service.complete(req)
        assert hidden.text == "" and hidden.extra["unsure"]
        assert confidence_of(hidden) == confidence_of(shown)
        assert service.suggestions.latest(req.uri) == ""
        asked = service.complete(replace(req, invoked=True))
        assert asked.text == shown.text and "unsure" not in asked.extra
    finally:
        service.close()
