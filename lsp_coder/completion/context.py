"""What the model sees: windows of the document around the cursor, and other files' chunks."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

CHARS_PER_TOKEN = 3
"""A conservative estimate for code; the exact count is enforced after tokenizing."""

WINDOW_QUANTUM_LINES = 16
"""Window edges move in steps of this many lines, so the prompt (and its cache) stays stable."""

LINE_QUANTUM_CHARS = 1024
"""Within a cursor line too long for the budget, the window's edge moves in steps of this many
characters."""

BLOCK_OPENERS = (":", "{", "(", "[", "=>", "->", " do", " then")


@dataclass(frozen=True, slots=True)
class PromptParts:
    """The pieces of a FIM prompt, in document order.

    ``above`` ends where ``recent`` starts; ``recent`` is the lines just above the cursor line
    that go after the middle token with it (see ``split_document``); ``line_prefix`` is the
    cursor line's text before the cursor; ``suffix`` is the rest of the cursor line and the
    lines below.
    """

    extra: tuple[tuple[str, str], ...]
    above: str
    line_prefix: str
    suffix: str
    recent: str = ""
    repo: str = ""
    """The workspace folder's name (the repository line of the model's format)."""
    path: str = ""
    """The open file's path, written before it when ``extra`` is not empty."""

    @property
    def prefix(self) -> str:
        return self.above + self.recent + self.line_prefix


def split_document(text: str, offset: int, *, prefix_tokens: int,
                   suffix_tokens: int, recent_lines: int = 0) -> PromptParts:
    """Cut ``text`` around ``offset`` (a str index) into windows within the token budgets.

    ``recent_lines``: the lines above the cursor line back to the last absolute multiple of
    this many lines go to ``recent`` (after the middle token, with the typed line), so Enter
    only appends to the prompt; the suffix is evaluated again once every ``recent_lines``
    lines instead of at every new line. 0: none.
    """
    offset = max(0, min(offset, len(text)))
    line_start = text.rfind("\n", 0, offset) + 1
    budget = prefix_tokens * CHARS_PER_TOKEN
    # Only the lines that can fit are split (a big document is not split whole per request);
    # window edges still fall on absolute multiples of WINDOW_QUANTUM_LINES.
    from_ = text.rfind("\n", 0, max(0, line_start - budget - 1)) + 1
    first = text.count("\n", 0, from_)
    above_lines = text[from_:line_start].split("\n")[:-1]
    above_lines = [line + "\n" for line in above_lines]
    start, used = len(above_lines), 0
    while start > 0 and used + len(above_lines[start - 1]) <= budget:
        start -= 1
        used += len(above_lines[start])
    if start + first > 0:
        quantized = -(-(start + first) // WINDOW_QUANTUM_LINES) * WINDOW_QUANTUM_LINES
        start = min(len(above_lines), quantized - first)
    above = "".join(above_lines[start:])

    budget = suffix_tokens * CHARS_PER_TOKEN
    limit = min(len(text), offset + budget + 1)
    below_lines = text[offset:limit].splitlines(keepends=True)
    end, used = 0, 0
    while end < len(below_lines) and used + len(below_lines[end]) <= budget:
        used += len(below_lines[end])
        end += 1
    if end < len(below_lines) or limit < len(text):
        end = max(1, end // WINDOW_QUANTUM_LINES * WINDOW_QUANTUM_LINES)
    suffix = "".join(below_lines[:end])[:budget]  # the cursor line's rest may be too long
    line_prefix = text[line_start:offset]
    limit = prefix_tokens * CHARS_PER_TOKEN
    if len(line_prefix) > limit:  # a very long line: keep the text just before the cursor
        cut = -(-(len(line_prefix) - limit) // LINE_QUANTUM_CHARS) * LINE_QUANTUM_CHARS
        line_prefix, above = line_prefix[cut:], ""
    recent = ""
    if recent_lines > 0 and above:
        kept = above.split("\n")[:-1]
        n = min(len(kept), (first + len(above_lines)) % recent_lines)
        if n:
            cut = len(above) - sum(len(line) + 1 for line in kept[-n:])
            above, recent = above[:cut], above[cut:]
    return PromptParts((), above, line_prefix, suffix, recent)


def wants_multiline(parts: PromptParts) -> bool:
    """Multi-line after a block opener or on a blank line; else complete the current line."""
    rest_of_line = parts.suffix.split("\n", 1)[0]
    if rest_of_line.strip():
        return False
    typed = parts.line_prefix.rstrip()
    if not typed:
        return True
    return typed.endswith(BLOCK_OPENERS)


class ExtraContext:
    """A small ring of chunks from other files, placed first in the prompt in a stable order.

    A chunk is taken from a file when the user leaves it (completes in another file). The ring
    keeps the most recent ``max_chunks`` files; their order in the prompt is the order they
    entered the ring, so adding a new chunk only changes the prompt's end of this section.
    """

    def __init__(self, max_chunks: int = 3, chunk_lines: int = 40) -> None:
        self.max_chunks = max_chunks
        self.chunk_lines = chunk_lines
        self._chunks: OrderedDict[str, tuple[str, str]] = OrderedDict()
        self._current: tuple[str, str, str, int] | None = None
        self._lock = threading.Lock()  # forget() comes from the server thread

    def visit(self, uri: str, path: str, text: str, offset: int) -> None:
        """Record where the user is; leaving a file pushes a chunk of it into the ring."""
        with self._lock:
            self._visit(uri, path, text, offset)

    def _visit(self, uri: str, path: str, text: str, offset: int) -> None:
        if self._current is not None and self._current[0] != uri:
            old_uri, old_path, old_text, old_offset = self._current
            self._chunks.pop(old_uri, None)
            self._chunks[old_uri] = (old_path, self._chunk_around(old_text, old_offset))
            while len(self._chunks) > self.max_chunks:
                self._chunks.popitem(last=False)
        self._current = (uri, path, text, offset)

    def _chunk_around(self, text: str, offset: int) -> str:
        """``chunk_lines`` lines around ``offset``, starting on a window step; only the lines
        near the cursor are scanned (a file being left may be megabytes)."""
        line = text.count("\n", 0, offset)
        lo = max(0, line - self.chunk_lines // 2)
        lo -= lo % WINDOW_QUANTUM_LINES
        start = text.rfind("\n", 0, offset) + 1
        for _ in range(line - lo):
            start = text.rfind("\n", 0, start - 1) + 1
        end = start
        for _ in range(self.chunk_lines):
            newline = text.find("\n", end)
            end = len(text) if newline < 0 else newline + 1
            if newline < 0:
                break
        body = text[start:end]
        return body if body.endswith("\n") or not body else body + "\n"

    def forget(self, uri: str) -> None:
        """A file closed: its chunk leaves the ring (and it is no longer being left)."""
        with self._lock:
            self._chunks.pop(uri, None)
            if self._current is not None and self._current[0] == uri:
                self._current = None

    def chunks(self, uri: str, budget_tokens: int,
               preview: bool = False) -> tuple[tuple[str, str], ...]:
        """(path, text) chunks of files other than ``uri``, oldest first, within the budget.

        ``preview``: the chunks as they will be once the user completes in ``uri`` (the file
        being left has entered the ring), without changing the ring.
        """
        budget = budget_tokens * CHARS_PER_TOKEN
        out: list[tuple[str, str]] = []
        used = 0
        with self._lock:
            ring = OrderedDict(self._chunks)
            current = self._current
        if preview and current is not None and current[0] != uri:
            ring.pop(current[0], None)
            ring[current[0]] = (current[1], self._chunk_around(current[2], current[3]))
            while len(ring) > self.max_chunks:
                ring.popitem(last=False)
        items = list(ring.items())
        for other, (path, body) in items:
            if other == uri:
                continue
            if used + len(path) + len(body) > budget:
                break
            out.append((path, body))
            used += len(path) + len(body)
        return tuple(out)
