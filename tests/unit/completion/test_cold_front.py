"""The short prompt for a cold cache that starts with the front of the full prompt the cache
holds (``idle.cold_prompt_front``)."""

from __future__ import annotations

from dataclasses import replace

from lsp_coder.backends.cold_prompt import line_cut
from lsp_coder.completion.context import split_document
from lsp_coder.completion.next_prompts import NextPrompt
from lsp_coder.completion.service import CompletionService
from lsp_coder.config import Config, apply
from lsp_coder.prompt_parts import PromptBudget
from lsp_coder.shared_types import FimQuery

LINES = [f"total_{i:03} = add(total, {i})\n" for i in range(160)]
CURSOR_LINE = 140


def document(typed: str) -> tuple[str, int]:
    head = "".join(LINES[:CURSOR_LINE]) + typed
    return head + "\n" + "".join(LINES[CURSOR_LINE:]), len(head)


def service_with(tiny_qwen, **idle) -> CompletionService:
    config = apply(Config(), {"model": {"path": str(tiny_qwen), "n_ctx": 4096, "n_seq_max": 4},
                              "completion": {"max_tokens": 2},
                              "idle": {"cold_prompt_ms": 1, "cold_prompt_tokens": 200,
                                       **idle}}, "test")
    service = CompletionService(config)
    assert service.load() is None
    return service


def query_for(typed: str) -> FimQuery:
    text, offset = document(typed)
    parts = split_document(text, offset, prefix_tokens=1024, suffix_tokens=256)
    return FimQuery(uri="file:///totals.py", sources=parts)


def full_prompt(service: CompletionService, typed: str):
    """The backend's gathered query with ``typed`` on the cursor line, and its full prompt."""
    query = service.backend._gathered(query_for(typed))
    return query, service.backend._prompt(query, service.config)


def test_line_cut_ends_after_a_line():
    texts = {1: "a", 2: "b\n", 3: "c", 4: "\n    ", 5: "d"}
    detokenize = lambda ids: "".join(texts[i] for i in ids)  # noqa: E731
    tokens = [1, 2, 3, 4, 5]
    assert line_cut(tokens, 0, 5, detokenize) == 2  # "\n    " does not end a line
    assert line_cut(tokens, 2, 5, detokenize) == 2  # none after the low end: the low end
    assert line_cut(tokens, 0, 1, detokenize) == 0


def test_the_short_prompt_starts_with_what_the_cache_holds_of_the_full_one(tiny_qwen):
    service = service_with(tiny_qwen, cold_prompt_front=True)
    try:
        backend, engine = service.backend, service.backend.engine
        config = service.config
        query, full = full_prompt(service, "tot")
        assert full.above_at > 0 and full.dropped_lines > 0  # the window leaves lines out
        plain = backend._cold.choose(query, apply(config, {"idle": {"cold_prompt_front": False}},
                                                  "test"), full)
        assert plain is not None
        # Nothing of the window read yet: the short prompt as without the setting.
        assert backend._cold.choose(query, config, full).tokens == plain.tokens
        engine.prefill(full.tokens[: full.above_at + 300])
        fronted = backend._cold.choose(query, config, full)
        assert fronted is not None and len(fronted.tokens) < len(full.tokens)
        cut = full.above_at + 250
        assert fronted.tokens[:cut] == full.tokens[:cut]
        text = engine.detokenize(fronted.tokens)
        above = query.parts.above.splitlines(keepends=True)
        assert above[full.dropped_lines] in text  # the front: the full window's first lines
        assert above[-1] in text  # the short window: the lines above the cursor
        gap = [line for line in above[full.dropped_lines:] if line not in text]
        assert gap, "the lines between the front and the short window are left out"
        assert text.endswith("tot") or "tot" in engine.detokenize(fronted.tokens[-4:]) \
            or fronted.heal
        # It costs what the short prompt does: the front is cached.
        new = len(fronted.tokens) - engine.cached_prefix(fronted.tokens)
        assert new <= len(plain.tokens), (new, len(plain.tokens))
    finally:
        service.close()


def test_keys_after_a_fronted_prompt_keep_its_cut(tiny_qwen):
    # Idle work goes on reading the full prompt between keys; the next key's short prompt
    # keeps the cut the cache holds with its window, and reads only what was typed.
    service = service_with(tiny_qwen, cold_prompt_front=True)
    try:
        backend, engine = service.backend, service.backend.engine
        config = service.config
        query, full = full_prompt(service, "tot")
        engine.prefill(full.tokens[: full.above_at + 200])
        first = backend._cold.choose(query, config, full)
        assert first is not None
        engine.prefill(first.tokens)
        engine.prefill(full.tokens[: full.above_at + 500])
        typed, full_typed = full_prompt(service, "tota")
        second = backend._cold.choose(typed, config, full_typed)
        assert second is not None
        assert len(second.tokens) - engine.cached_prefix(second.tokens) <= 4
    finally:
        service.close()


def test_a_cursor_at_rest_reads_the_full_prompt_with_cursor_prompt_full(tiny_qwen):
    text, offset = document("tot")
    job = NextPrompt("cursor", "file:///totals.py", "totals.py", text, offset)
    read = {}
    for cursor_prompt in ("request", "full"):
        service = service_with(tiny_qwen, cursor_prompt=cursor_prompt)
        try:
            result = service.prefill(job, job.state(), lambda: False)
            assert result is not None and result.outcome == "done"
            read[cursor_prompt] = (result.prompt_tokens, result.short_prompt)
        finally:
            service.close()
    assert read["request"][1] and not read["full"][1]
    assert read["full"][0] > read["request"][0] + 500, read


def test_a_cursor_at_rest_reads_the_front_then_the_full_prompt(tiny_qwen):
    # cursor_prompt = "front": the cursor job reads the short prompt that starts with the
    # full prompt's front up to its window and cursor_front_tokens of it; a request after it
    # reads that prompt from the cache, and the full prompt read next reuses the front.
    text, offset = document("tot")
    job = NextPrompt("cursor", "file:///totals.py", "totals.py", text, offset)
    service = service_with(tiny_qwen, cursor_prompt="front", cursor_front_tokens=120)
    try:
        backend, engine, config = service.backend, service.backend.engine, service.config
        query, full = full_prompt(service, "tot")
        result = service.prefill(job, job.state(), lambda: False)
        assert result is not None and result.outcome == "done" and result.short_prompt
        assert result.prompt_tokens < len(full.tokens) - 200
        asked = backend._cold.choose(query, config, full)
        assert asked is not None and asked.tokens[: asked.front] == full.tokens[: asked.front]
        front = asked.front
        assert full.above_at + 80 <= front <= full.above_at + 120, (front, full.above_at)
        assert engine.cached_prefix(asked.tokens) == len(asked.tokens)
        whole = service.prefill(service.full_at(job), job.state(), lambda: False)
        assert whole is not None and not whole.short_prompt
        assert whole.prompt_tokens == len(full.tokens)
        assert whole.reused_tokens >= front and whole.evaluated_tokens <= len(full.tokens) - front
    finally:
        service.close()


HELPERS = "".join(f"def helper_{i:03}(value):\n    return value + {i}\n" for i in range(60))


def sectioned_prompt(service: CompletionService, typed: str):
    """``full_prompt`` with another file's section before the open one."""
    text, offset = document(typed)
    parts = split_document(text, offset, prefix_tokens=1024, suffix_tokens=256)
    parts = replace(parts, extra=(("helpers.py", HELPERS),), path="totals.py")
    query = FimQuery(uri="file:///totals.py", sources=parts,
                     budget=PromptBudget(prefix=1024, suffix=256, extra=1500))
    query = service.backend._gathered(query)
    return query, service.backend._prompt(query, service.config)


def test_the_short_prompt_keeps_the_part_of_the_section_the_cache_holds(tiny_qwen):
    # Idle work read only the start of the other files' section when the request came: the
    # short prompt starts with that part (cut after a line's end), then the short window,
    # and lacks no more than the one without the section does, but for the path line.
    service = service_with(tiny_qwen, cold_prompt_front=True)
    try:
        backend, engine, config = service.backend, service.backend.engine, service.config
        query, full = sectioned_prompt(service, "tot")
        section_end = full.above_at - 20
        assert section_end > 300 and "helper_059" in engine.detokenize(full.tokens)
        bare = backend._cold.choose(query, config, full)
        assert bare is not None and "helper_" not in engine.detokenize(bare.tokens)
        # Another document's short prompt starts with the same few tokens.
        engine.prefill(bare.tokens[:6] + engine.tokenize("elsewhere = 1\n"))
        engine.prefill(full.tokens[:200])
        short = backend._cold.choose(query, config, full)
        assert short is not None and 150 < short.front <= 200, short.front
        assert short.tokens[: short.front] == full.tokens[: short.front]
        text = engine.detokenize(short.tokens)
        assert "helper_000" in text and "helper_059" not in text
        assert "totals.py" in text and query.parts.above.splitlines()[-1] in text
        new = len(short.tokens) - engine.cached_prefix(short.tokens)
        assert new <= len(bare.tokens) + 12, (new, len(bare.tokens))
        # The keys after it keep its cut while idle work reads on.
        engine.prefill(short.tokens)
        engine.prefill(full.tokens[:280])
        typed, full_typed = sectioned_prompt(service, "tota")
        second = backend._cold.choose(typed, config, full_typed)
        assert second is not None and second.front == short.front
        assert len(second.tokens) - engine.cached_prefix(second.tokens) <= 4
    finally:
        service.close()


def test_a_short_prompt_already_read_is_not_traded_for_a_part_of_the_section(tiny_qwen):
    # The short prompt without the section is in the cache: a front of the section read
    # since would make the next request read the whole window again.
    service = service_with(tiny_qwen, cold_prompt_front=True)
    try:
        backend, engine, config = service.backend, service.backend.engine, service.config
        query, full = sectioned_prompt(service, "tot")
        bare = backend._cold.choose(query, config, full)
        assert bare is not None and not bare.front
        engine.prefill(bare.tokens)
        engine.prefill(full.tokens[:200])
        again = backend._cold.choose(query, config, full)
        assert again is not None and again.tokens == bare.tokens
    finally:
        service.close()
