"""The user's last edits, across documents, as the prompt shows them (one per editor session).

An edit counts once it is finished: the document is saved, typing moves to another line or
another document, a change spans lines (a paste, a formatter, a refactoring tool), typing
resumes after ``PAUSE_S``, or a request comes for another document. Keys typed on one line
change nothing here, so the prompt's front (where these edits go) stays as the KV cache holds
it. What a prompt shows is each changed region as it is now, a few lines around it, one file
entry per document, the most recent last; the document being completed leaves out the hunks
its own window shows.

Bounds: at most ``TRACKED_DOCUMENTS_MAX`` documents and ``TRACKED_CHARS_MAX`` characters of
their texts are kept (the least recently edited leave first); a document over
``hunks.DOCUMENT_CHARS_MAX`` or with a NUL character (binary) is not tracked; a change too big to
be an edit (``hunks.diff_hunks``) starts the document's record again from its new text (and
when only the edits since tracking began add up to one, from the text before the last edit).
Nothing here logs document text.

Threads: the events come from the event loop, ``entries`` from the worker; one lock.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from .hunks import Hunk, Text, diff_hunks, document_lines, region, render
from .visits import VisitedRanges

PAUSE_S = 2.0
"""Typing that resumes after this long a pause in a document finishes its last edit."""

TRACKED_DOCUMENTS_MAX = 64
"""Documents whose texts are kept to find their edits (a rename storm keeps the last ones)."""

TRACKED_CHARS_MAX = 8_000_000
"""Characters of kept texts (two per tracked document) in all."""

@dataclass(slots=True)
class _Document:
    """What is kept of one document."""

    base: list[str]
    """Its lines when tracking began (an edit back to them is undone)."""
    lines: list[str]
    """Its lines at its last finished edit."""
    hunks: list[Hunk] = field(default_factory=list)
    """``base`` -> ``lines``, in line order."""
    typing: int | None = None
    """The line of an edit not finished yet (None: none)."""
    text: Text | None = None
    """Reads the text of that unfinished edit."""
    last_change: float = 0.0
    """When it last changed (``clock``)."""
    chars: int = 0
    """Characters of ``base`` and ``lines`` (for ``TRACKED_CHARS_MAX``)."""
    saved: bool = True
    """No change since it was opened or last saved (its edits outlive a close)."""


def _document(lines: list[str], now: float) -> _Document:
    """A document tracked from ``lines`` on."""
    return _Document(lines, lines, last_change=now, chars=2 * sum(map(len, lines)))


class RecentEdits:
    """The bounded record of one session's finished edits (see the module docstring)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._documents: OrderedDict[str, _Document] = OrderedDict()
        """Tracked documents, the least recently edited first."""
        self._stamp = 0
        self._last_uri: str | None = None
        """The document the last change was in."""
        self._skipped: OrderedDict[str, None] = OrderedDict()
        """Documents not tracked (too big, binary) until opened or saved again."""
        self.visits = VisitedRanges()
        """Where the cursor rested in the session's documents (``visits``)."""

    # -- events (event loop) --------------------------------------------------------------------

    def opened(self, uri: str, text: str) -> None:
        """A document opened: its text is what later edits are found against (an open of the
        text already kept keeps its edits)."""
        lines = document_lines(text)
        with self._lock:
            doc = self._documents.get(uri)
            if doc is not None and lines == doc.lines:
                return
            self._documents.pop(uri, None)
            if lines is not None:
                self._documents[uri] = _document(lines, self._clock())
                self._bound()
            self._skipped.pop(uri, None)
            if lines is None:
                self._skip(uri)

    def changed(self, uri: str, first: int, last: int, text: Text) -> None:
        """A change of lines ``first`` to ``last`` (as they are after it) of ``uri``;
        ``text`` reads the document's text. Cheap while typing stays on one line."""
        now = self._clock()
        with self._lock:
            other = self._last_uri
            self._last_uri = uri
            if other is not None and other != uri:
                self._finish_pending(other)
            if uri in self._skipped:
                return
            doc = self._documents.get(uri)
            if doc is None:  # not tracked: from here on (an evicted document)
                self._start(uri, text)
                return
            paused = now - doc.last_change >= PAUSE_S
            doc.last_change, doc.saved = now, False
            if doc.typing is not None and (paused or first != last or first != doc.typing):
                self._finish(uri, text())
            elif first != last:
                self._finish(uri, text())
            doc = self._documents.get(uri)
            if doc is not None:
                if first == last:
                    doc.typing, doc.text = first, text
                self._documents.move_to_end(uri)

    def saved(self, uri: str, text: str | None) -> None:
        """A document saved: its edit is finished (``text``: its content, when known)."""
        with self._lock:
            if uri in self._skipped and text is not None:
                self._skipped.pop(uri)
                self._start(uri, lambda: text)
            elif text is not None:
                self._finish(uri, text)
            else:
                self._finish_pending(uri)
            doc = self._documents.get(uri)
            if doc is not None:
                doc.saved = True

    def closed(self, uri: str) -> None:
        """A document closed: its edits stay when it was saved with them (the user may use
        them elsewhere), and leave when not (the editor dropped them, or a half-typed line
        would steer other files' suggestions)."""
        with self._lock:
            doc = self._documents.get(uri)
            if doc is not None and not doc.saved:
                del self._documents[uri]
            if self._last_uri == uri:
                self._last_uri = None
        self.visits.closed(uri)

    def clear(self) -> None:
        with self._lock:
            self._documents.clear()
            self._skipped.clear()
            self._last_uri = None
        self.visits.clear()

    def rested(self, uri: str, line: int, text: Text) -> None:
        """The cursor is at ``line`` of ``uri`` (a highlight or a completion asked there;
        ``text`` reads the document's text): a visit (``VisitedRanges.rested``)."""
        self.visits.rested(uri, line, text)

    # -- the prompt's entries (worker) ----------------------------------------------------------

    def entries(self, uri: str, hidden: tuple[int, int], max_hunks: int, budget_chars: int,
                shown: Callable[[str], str], allowed: Callable[[str], bool] = lambda u: True
                ) -> tuple[tuple[str, str], ...]:
        """(path, text) per document with edits, the most recently edited last: the newest
        ``max_hunks`` hunks within ``budget_chars`` (older ones leave first).

        ``uri``: the document a request is for; its unfinished edit stays unfinished unless
        paused, the other documents' are finished (the user is here now), and its hunks in
        lines ``hidden`` (first, last; its prompt's window) are left out. ``shown``: a
        document's path as the prompt writes it; ``allowed``: whether a document may reach
        the model.
        """
        if max_hunks <= 0 or budget_chars <= 0:
            return ()
        now = self._clock()
        with self._lock:
            for other in list(self._documents):
                doc = self._documents[other]
                if doc.typing is not None and (other != uri or now - doc.last_change >= PAUSE_S):
                    self._finish_pending(other)
            found = [(h.stamp, u, h) for u, doc in self._documents.items() for h in doc.hunks
                     if not (u == uri and h.start <= hidden[1] and h.end >= hidden[0])]
            found.sort(key=lambda f: f[0])
            found = [f for f in found[max(0, len(found) - max_hunks):] if allowed(f[1])]
            lines = {u: self._documents[u].lines for _, u, _ in found}
        while found:
            out = self._render(found, lines, shown)
            if sum(len(p) + len(t) + 2 for p, t in out) <= budget_chars:
                return out
            found.pop(0)
        return ()

    @staticmethod
    def _render(found: list[tuple[int, str, Hunk]], lines: dict[str, list[str]],
                shown: Callable[[str], str]) -> tuple[tuple[str, str], ...]:
        by_uri: OrderedDict[str, list[Hunk]] = OrderedDict()
        for _, uri, hunk in found:  # oldest first: a document's place is its newest hunk's
            by_uri.setdefault(uri, []).append(hunk)
            by_uri.move_to_end(uri)
        return tuple((shown(uri), render([region(h, lines[uri]) for h in hunks], lines[uri]))
                     for uri, hunks in by_uri.items())

    # -- helpers (the lock is held) -------------------------------------------------------------

    def _start(self, uri: str, text: Text) -> None:
        lines = document_lines(text())
        if lines is None:
            self._skip(uri)
        else:
            self._documents[uri] = _document(lines, self._clock())
            self._bound()

    def _skip(self, uri: str) -> None:
        self._skipped[uri] = None
        while len(self._skipped) > TRACKED_DOCUMENTS_MAX:
            self._skipped.popitem(last=False)

    def _finish_pending(self, uri: str) -> None:
        doc = self._documents.get(uri)
        if doc is not None and doc.text is not None:
            self._finish(uri, doc.text())

    def _finish(self, uri: str, text: str) -> None:
        """The edit of ``uri`` ending at ``text`` is finished: its hunks found again."""
        doc = self._documents.get(uri)
        if doc is None:
            return
        doc.typing, doc.text = None, None
        lines = document_lines(text)
        if lines is None:
            del self._documents[uri]
            self._skip(uri)
            return
        if lines == doc.lines:
            return
        found = diff_hunks(doc.base, lines)
        before = {h.change: h.stamp for h in doc.hunks}
        if found is None:  # too much changed since tracking began: this edit alone, if one
            found = diff_hunks(doc.lines, lines)
            before = {}
            if found is None:  # not an edit: a formatter, a file replaced; from here on
                doc.base, doc.lines, doc.hunks = lines, lines, []
                doc.chars = 2 * sum(map(len, lines))
                self._bound()
                return
            doc.base = doc.lines
        hunks = []
        for start, end, old, new in found:
            stamp = before.get((old, new))
            if stamp is None:
                self._stamp += 1
                stamp = self._stamp
            hunks.append(Hunk(start, end, old, new, stamp))
        doc.chars = sum(map(len, doc.base)) + sum(map(len, lines))
        doc.lines, doc.hunks = lines, hunks
        self._bound()

    def _bound(self) -> None:
        """Drop documents past the bounds: the least recently edited of those without hunks
        first (they show nothing yet), then the least recently edited."""
        total = sum(doc.chars for doc in self._documents.values())
        order = [u for u, d in self._documents.items() if not d.hunks] + [
            u for u, d in self._documents.items() if d.hunks]
        for uri in order:
            if len(self._documents) <= TRACKED_DOCUMENTS_MAX and total <= TRACKED_CHARS_MAX:
                break
            total -= self._documents.pop(uri).chars
