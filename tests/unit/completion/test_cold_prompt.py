"""The short prompt for a cold cache keeps its window start while lines are added above."""

from __future__ import annotations

from dataclasses import replace

from lsp_coder.backends.short_window import COLD_WINDOW_STEP_LINES
from lsp_coder.completion.next_prompts import after_enter
from lsp_coder.completion.service import CompletionRequest, CompletionService
from lsp_coder.config import Config, apply

TEXT = "".join(f"total_{i:03} = add(total, {i})\n" for i in range(120))


def line_end(text: str, line: int) -> int:
    return sum(len(x) for x in text.splitlines(keepends=True)[: line + 1]) - 1


def short_prompt_service(model, **idle) -> CompletionService:
    """A service on ``model`` whose short prompts for a cold cache hold 200 tokens."""
    config = apply(Config(), {"model": {"path": str(model), "n_ctx": 4096, "n_seq_max": 4},
                              "completion": {"max_tokens": 2},
                              "idle": {"cold_prompt_ms": 1, "cold_prompt_tokens": 200, **idle}},
                   "test")
    service = CompletionService(config)
    assert service.load() is None
    return service


def short_and_full(service: CompletionService, req: CompletionRequest):
    """(the gathered query, its full prompt, the short prompt chosen for it) for ``req``."""
    backend = service.backend
    query = backend._gathered(service._query(req))
    full = backend._prompt(query, service.config)
    short = backend._cold.choose(query, service.config, full)
    assert short is not None and len(short.tokens) < len(full.tokens)
    return query, full, short


def test_enter_keeps_the_short_windows_start_the_cache_holds(tiny_qwen):
    # 20 ms: the tiny model cannot read the ~1,000-token full prompt in that time, so both
    # requests read short prompts. Enter at the end of line 60 adds a line above the
    # cursor, and the 4-line steps of the short window would start it 4 lines further down.
    # With the recent lines after the middle token, Enter only appends to the prompt.
    config = apply(Config(), {"model": {"path": str(tiny_qwen), "n_ctx": 4096, "n_seq_max": 4},
                              "completion": {"max_tokens": 4, "recent_lines": 8},
                              "idle": {"cold_prompt_ms": 20, "cold_prompt_tokens": 384}},
                   "test")
    service = CompletionService(config)
    assert service.load() is None
    try:
        before = line_end(TEXT, 60)
        entered, after = after_enter(TEXT, before)
        evaluated = {}
        for remembers in (True, False):
            service.backend.engine.cache.clear()
            uri = f"file:///remembers_{remembers}.py"
            first = service.complete(CompletionRequest(uri=uri, text=TEXT, offset=before))
            assert first.stats is not None and first.stats.short_prompt
            if not remembers:  # closed and opened again: its window start is forgotten
                service.forget(uri)
            second = service.complete(CompletionRequest(uri=uri, text=entered, offset=after))
            assert second.stats is not None and second.stats.short_prompt
            evaluated[remembers] = second.stats.evaluated_tokens
        # The new line (and a re-tokenized token); from a moved start, the whole prompt.
        assert evaluated[True] <= 12 and evaluated[False] > 200, evaluated
    finally:
        service.close()


def test_the_short_prompt_leaves_the_files_imports_to_the_full_one(tiny_qwen):
    from lsp_coder.completion.context import split_document
    from lsp_coder.shared_types import FimQuery

    config = apply(Config(), {"model": {"path": str(tiny_qwen), "n_ctx": 4096, "n_seq_max": 4},
                              "idle": {"cold_prompt_ms": 1, "cold_prompt_tokens": 200}}, "test")
    service = CompletionService(config)
    assert service.load() is None
    try:
        backend = service.backend
        engine = backend.engine
        imports = "import zoneinfo_marker_module\n"
        parts = split_document(TEXT, len(TEXT), prefix_tokens=1024, suffix_tokens=256)
        query = FimQuery(uri="file:///imports.py", sources=replace(parts, imports=imports))
        full = backend._prompt(query, config)
        short = backend._cold.choose(query, config, full)
        bare = backend._prompt(replace(query, sources=parts), config)
        without = backend._cold.choose(replace(query, sources=parts), config, bare)
        marker = engine.tokenize(imports)
        assert short is not None and without is not None
        assert short.tokens == without.tokens
        assert full.tokens[1 : 1 + len(marker)] == marker  # after the prefix token
    finally:
        service.close()


WALK = ("import os\n\n\ndef walk(grid, k):\n    \"\"\"Walk the grid.\n"
        + "".join(f"    Step {i}: the cell to the right of the last one.\n" for i in range(30))
        + "    \"\"\"\n    n = len(grid)\n    for i in range(")


def test_the_short_prompt_keeps_the_def_its_window_leaves_out(tiny_qwen):
    # A function below a long docstring: the 200-token short prompt starts inside the
    # docstring, and the ``def`` line (with the parameters the body uses) goes at its front,
    # where the import lines would. The next key reads only what it appends.
    from lsp_coder.completion.context import split_document
    from lsp_coder.shared_types import FimQuery

    service = short_prompt_service(tiny_qwen)
    try:
        backend, engine, config = service.backend, service.backend.engine, service.config
        parts = split_document(WALK, len(WALK), prefix_tokens=1024, suffix_tokens=256)
        query = FimQuery(uri="file:///walk.py", sources=parts)
        full = backend._prompt(query, config)
        short = backend._cold.choose(query, config, full)
        assert short is not None and len(short.tokens) < len(full.tokens)
        short_text = engine.detokenize(short.tokens[1:])  # after the prefix token
        assert short_text.startswith("def walk(grid, k):\n    Step ")
        assert engine.detokenize(full.tokens).count("def walk(grid, k):") == 1
        # The same in a file just opened, and the next key appends to the cached prompt.
        uri = "file:///walk.py"
        first = service.complete(CompletionRequest(uri=uri, text=WALK, offset=len(WALK)))
        assert first.stats is not None and first.stats.short_prompt
        typed = WALK + "k"
        second = service.complete(CompletionRequest(uri=uri, text=typed, offset=len(typed)))
        assert second.stats is not None and second.stats.short_prompt
        assert second.stats.evaluated_tokens <= 4, second.stats.evaluated_tokens
    finally:
        service.close()


HEADED = "import zoneinfo_marker_module\nfrom helpers_marker import add\n\n\n" + TEXT


def test_the_short_prompt_keeps_the_imports_its_window_uses(tiny_qwen):
    # Far below the file's imports: the 200-token short prompt keeps the statement of the
    # name its lines call (``add``) and leaves the other out; switched off, neither.
    for keep in (True, False):
        service = short_prompt_service(tiny_qwen, cold_prompt_imports=keep)
        try:
            engine = service.backend.engine
            req = CompletionRequest(uri="file:///headed.py", text=HEADED, offset=len(HEADED))
            query, full, short = short_and_full(service, req)
            assert "import zoneinfo_marker_module" in query.parts.head_imports
            short_text = engine.detokenize(short.tokens)
            assert ("from helpers_marker import add\n" in short_text) is keep
            assert "zoneinfo_marker_module" not in short_text
            assert "from helpers_marker import add\n" in engine.detokenize(full.tokens)
            # Typing a name of the other import on the cursor's line changes nothing before it
            first = service.complete(req)
            assert first.stats is not None and first.stats.short_prompt
            typed = HEADED + "zoneinfo_marker_module"
            second = service.complete(CompletionRequest(uri=req.uri, text=typed,
                                                        offset=len(typed)))
            assert second.stats is not None and second.stats.short_prompt
            assert second.stats.evaluated_tokens <= 12, second.stats.evaluated_tokens
        finally:
            service.close()


def test_a_line_using_another_import_leaves_the_lines_before_the_window_as_they_were(
        tiny_qwen):
    # The user types a line that uses the other import's name and presses Enter: the line is
    # above the cursor now, and a short prompt built afresh puts the statement that binds it
    # before the window, so every token of the window after it is read again. While the
    # cache holds the last short prompt, the next one keeps the lines it put there; with no
    # prompt to keep (the document closed and opened again), the statement comes in.
    service = short_prompt_service(tiny_qwen)
    try:
        engine = service.backend.engine
        uri = "file:///headed.py"
        first = service.complete(CompletionRequest(uri=uri, text=HEADED, offset=len(HEADED)))
        assert first.stats is not None and first.stats.short_prompt
        typed = HEADED + "zone = zoneinfo_marker_module.ZoneInfo(name)\n"
        req = CompletionRequest(uri=uri, text=typed, offset=len(typed))
        second = service.complete(req)
        assert second.stats is not None and second.stats.short_prompt
        assert second.stats.evaluated_tokens <= 24, second.stats.evaluated_tokens
        statement = "import zoneinfo_marker_module\n"
        _, _, kept = short_and_full(service, req)
        assert statement not in engine.detokenize(kept.tokens)
        assert "from helpers_marker import add\n" in engine.detokenize(kept.tokens)
        service.forget(uri)
        _, _, fresh = short_and_full(service, req)
        assert statement in engine.detokenize(fresh.tokens)
    finally:
        service.close()


CROWDED = ("".join(f"from m{i} import a{i}, b{i}\n" for i in range(12)) + "\n\nclass Totals:\n"
           "    def compute(self, x):\n"
           + "".join(f"        x = f(x, a{i % 12}, b{i % 12})\n" for i in range(60))
           + "        x = ")


def test_the_imports_it_keeps_leave_room_for_the_scope_lines(tiny_qwen):
    # Twelve statements the window uses, short ones of many tokens: those kept fit the
    # import lines' share in the prompt's own tokens, so the scope lines after them stay.
    service = short_prompt_service(tiny_qwen)
    try:
        req = CompletionRequest(uri="file:///crowded.py", text=CROWDED, offset=len(CROWDED))
        _, _, short = short_and_full(service, req)
        engine = service.backend.engine
        text = engine.detokenize(short.tokens)
        assert "from m11 import a11, b11\nclass Totals:\n    def compute(self, x):\n" in text
        assert "from m0 import" not in text
    finally:
        service.close()


def test_a_moved_window_keeps_the_remembered_lines_at_the_start_the_cache_holds(tiny_qwen):
    # The document's last short prompt started its window at line S with the lines before it
    # that a window starting lower would have (a prompt built afresh stops after three
    # builds, and can keep the lines worked out for the start of its second one). Now a
    # prompt built afresh starts 4 lines lower, with those same lines before it, and one
    # built afresh at S would put another import statement there (S's lines use it): the
    # prompt the cache holds, at S with the remembered lines, is the one to read.
    service = short_prompt_service(tiny_qwen)
    try:
        backend, config = service.backend, service.config
        cold = backend._cold
        windows, engine = cold._windows, backend.engine
        uri = "file:///moved.py"

        def short_query(text: str):
            req = CompletionRequest(uri=uri, text=text, offset=len(text))
            query = backend._gathered(service._query(req))
            return cold._options(query, config, backend._prompt(query, config))[1]

        lines = HEADED.splitlines(keepends=True)
        query = short_query(HEADED)
        fresh = windows.scoped(query, config, window_step_lines=COLD_WINDOW_STEP_LINES)
        start = fresh.dropped_lines - COLD_WINDOW_STEP_LINES
        first_above = len(lines) - len(query.parts.above.splitlines())
        lines[first_above + start + 1] = "zone = zoneinfo_marker_module.ZoneInfo(name)\n"
        text = "".join(lines)
        query = short_query(text)
        fresh = windows.scoped(query, config, window_step_lines=COLD_WINDOW_STEP_LINES)
        at_start = windows.scoped(query, config, window_drop_lines=start)
        assert fresh.dropped_lines == start + COLD_WINDOW_STEP_LINES
        assert "zoneinfo" not in fresh.head and "zoneinfo" in at_start.head
        held_query = replace(query, sources=replace(query.parts, imports=fresh.head))
        held = replace(backend._prompt(held_query, config, window_drop_lines=start),
                       head=fresh.head)
        assert engine.prefill(held.tokens).outcome == "done"
        windows.remember(uri, query.parts.above.splitlines(keepends=True), held)
        answer = service.complete(CompletionRequest(uri=uri, text=text, offset=len(text)))
        assert answer.stats is not None and answer.stats.short_prompt
        assert answer.stats.evaluated_tokens <= 2, answer.stats.evaluated_tokens
    finally:
        service.close()



LONGER = "".join(f"total_{i:03} = add(total, {i}) + add(total, 1)\n" for i in range(120))
LONG_NAME = "zoneinfo_marker" + "_module" * 7


def test_a_window_start_that_moves_back_and_forth_keeps_its_own_import_lines(tiny_qwen):
    # A line in the short window uses an import whose statement is long: the statement joins
    # the prompt, its room pushes the window's start below that line, the statement leaves,
    # and the start comes back. The prompt ends with a start and the statements its own
    # window uses, wherever the line is.
    service = short_prompt_service(tiny_qwen)
    try:
        backend, config = service.backend, service.config
        windows = backend._cold._windows

        def short_query(text: str):
            req = CompletionRequest(uri="file:///longer.py", text=text, offset=len(text))
            query = backend._gathered(service._query(req))
            return backend._cold._options(query, config, backend._prompt(query, config))[1]

        headed = f"import {LONG_NAME}\nfrom helpers_marker import add\n\n\n" + LONGER
        lines = headed.splitlines(keepends=True)
        query = short_query(headed)
        start = windows.scoped(query, config,
                               window_step_lines=COLD_WINDOW_STEP_LINES).dropped_lines
        first_above = len(lines) - len(query.parts.above.splitlines())
        for below_start in range(-2, 3):
            changed = list(lines)
            changed[first_above + start + below_start] = f"zone = {LONG_NAME}.ZoneInfo(n)\n"
            query = short_query("".join(changed))
            short = windows.scoped(query, config, window_step_lines=COLD_WINDOW_STEP_LINES)
            window = "".join(query.parts.above.splitlines(keepends=True)[short.dropped_lines:])
            assert window.count("\n") >= 3
            assert ("ZoneInfo(" in window) == (f"import {LONG_NAME}\n" in short.head), (
                below_start, short.dropped_lines, short.head)
    finally:
        service.close()
