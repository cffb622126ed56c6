"""The code around where the user's cursor last rested, in other documents, as the prompt shows
it (recently visited ranges; one record per editor session).

The cursor is reported where it rests (a highlight asked there) and where a completion is
asked. A visit is the cursor's stay in one area of a document: reports in the same document
within ``NEAR_LINES`` of the visit's line keep it going (the visit follows the cursor). It is
finished when the cursor is reported in another document or farther away, or when a prompt is
built for another document (idle work for a file just opened); only then is its range read:
``RADIUS`` lines either side of its last line, as the document is at that moment. So keys
typed and cursor moves change nothing here, and the prompt's front (where the ranges go) stays
as the KV cache holds it until a visit finishes.

A prompt shows finished visits of documents other than the one being completed, one file
entry per document, the most recently visited last, but for a range another entry of the
prompt shows whole (the section's window of an open document, an edit's region). A visit that
overlaps an earlier one of the same document replaces it.

Bounds: at most ``VISITS_MAX`` finished visits, ``LINES_MAX`` lines each, lines cut to
``LINE_CHARS_MAX``; a document over ``hunks.DOCUMENT_CHARS_MAX`` or with a NUL character
(binary), or fewer than ``LINES_MIN`` non-blank lines around the cursor, give no range; a
closed document's visits leave. Nothing here logs document text.

Threads: the reports come from the event loop, ``entries`` from the worker; one lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from .hunks import LINE_CHARS_MAX, Text, document_lines

NEAR_LINES = 12
"""A report this many lines or fewer from the visit's line is the same visit."""

RADIUS = 5
"""Lines kept either side of a visit's last line (blank ones at either end left out)."""

LINES_MAX = 2 * RADIUS + 1
"""Lines of one visited range."""

LINES_MIN = 2
"""A range with fewer non-blank lines is not kept: a lone line tells the model little, and
a lone ``def`` line read as an unfinished file (the 0.5B then answered nothing in the next
one)."""

VISITS_MAX = 16
"""Finished visits kept (the least recent leave first); a prompt shows fewer (settings)."""


@dataclass(frozen=True, slots=True)
class Visit:
    """One finished visit: the lines around where the cursor rested."""

    uri: str
    """The document."""
    start: int
    """Its first line (0-based) in the document when the visit finished."""
    lines: tuple[str, ...]
    """The lines from ``start`` (at most ``LINES_MAX``, each at most ``LINE_CHARS_MAX``)."""

    @property
    def end(self) -> int:
        return self.start + len(self.lines)


@dataclass(slots=True)
class _Current:
    """The visit going on."""

    uri: str
    """Its document."""
    line: int
    """The cursor's last reported line there."""
    text: Text
    """Reads the document's text (called when the visit finishes)."""


def visited_range(uri: str, line: int, text: str) -> Visit | None:
    """The range of a visit of ``uri`` that ended at ``line`` of ``text``; None for a document
    not shown (too big, binary-looking) or a line past its end."""
    lines = document_lines(text)
    if lines is None or not 0 <= line < len(lines):
        return None
    start, end = max(0, line - RADIUS), min(len(lines), line + RADIUS + 1)
    while start < end and not lines[start].strip():  # blank lines at either end: not shown
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    if sum(1 for s in lines[start:end] if s.strip()) < LINES_MIN:
        return None
    return Visit(uri, start, tuple(s.rstrip("\r")[:LINE_CHARS_MAX] for s in lines[start:end]))


class VisitedRanges:
    """The bounded record of one session's visits (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._current: _Current | None = None
        self._visits: list[Visit] = []
        """Finished visits, the least recent first."""

    # -- reports (event loop) -------------------------------------------------------------------

    def rested(self, uri: str, line: int, text: Text) -> None:
        """The cursor is at ``line`` of ``uri`` (``text`` reads the document's text). Cheap
        unless it finishes a visit."""
        with self._lock:
            current = self._current
            if current is not None and current.uri == uri and abs(
                    current.line - line) <= NEAR_LINES:
                current.line, current.text = line, text
                return
            self._current = _Current(uri, line, text)
            if current is not None:
                self._finish(current)

    def closed(self, uri: str) -> None:
        """A document closed: its visits leave (its text may no longer be what the user
        has)."""
        with self._lock:
            if self._current is not None and self._current.uri == uri:
                self._current = None
            self._visits = [v for v in self._visits if v.uri != uri]

    def clear(self) -> None:
        with self._lock:
            self._current = None
            self._visits.clear()

    # -- the prompt's entries (worker) ----------------------------------------------------------

    def entries(self, uri: str, max_visits: int, budget_chars: int,
                shown: Callable[[str], str], allowed: Callable[[str], bool] = lambda u: True,
                elsewhere: Callable[[str, str], bool] = lambda path, text: False
                ) -> tuple[tuple[str, str], ...]:
        """(path, text) per document other than ``uri`` with visits, the most recently
        visited last: the newest ``max_visits`` visits within ``budget_chars`` (older ones
        leave first), each unless ``elsewhere`` says the prompt shows its text (path, text)
        already. A visit going on in another document is finished first, as the first
        report in ``uri`` would finish it: the prompt idle work prepares for a document just
        opened is the one its first request reads. ``shown``: a document's path as the
        prompt writes it; ``allowed``: whether a document may reach the model."""
        if max_visits <= 0 or budget_chars <= 0:
            return ()
        with self._lock:
            current = self._current
            if current is not None and current.uri != uri:  # the user is (going) here now
                self._current = None
                self._finish(current)
            found = [v for v in self._visits if v.uri != uri]
        found = [v for v in found[max(0, len(found) - max_visits):] if allowed(v.uri)
                 and not elsewhere(shown(v.uri), "\n".join(v.lines))]
        while found:
            out = _render(found, shown)
            if sum(len(p) + len(t) + 2 for p, t in out) <= budget_chars:
                return out
            found.pop(0)
        return ()

    # -- helpers (the lock is held) -------------------------------------------------------------

    def _finish(self, current: _Current) -> None:
        visit = visited_range(current.uri, current.line, current.text())
        if visit is None:
            return
        self._visits = [v for v in self._visits if not (
            v.uri == visit.uri and v.start < visit.end and visit.start < v.end)]
        self._visits.append(visit)
        del self._visits[: max(0, len(self._visits) - VISITS_MAX)]


def _render(found: list[Visit], shown: Callable[[str], str]) -> tuple[tuple[str, str], ...]:
    """One entry per document, placed by its newest visit: its ranges in line order, a line of
    ``...`` between two that do not touch."""
    by_uri: dict[str, list[Visit]] = {}
    for visit in found:
        by_uri[visit.uri] = [*by_uri.pop(visit.uri, []), visit]  # to the end: the newest last
    out = []
    for uri, visits in by_uri.items():
        text, end = "", None
        for visit in sorted(visits, key=lambda v: v.start):
            joint = "" if end is None else "\n" if visit.start == end else "\n...\n"
            text += joint + "\n".join(visit.lines)
            end = visit.end
        out.append((shown(uri), text))
    return tuple(out)
