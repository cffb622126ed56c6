"""What the service hears of documents and files (event loop): one call per LSP event,
recorded by the other files' context and the record of recent edits and visits."""

from __future__ import annotations

from collections.abc import Callable

from ..config import Config
from .context import one_line_end
from .recent_edits import RecentEdits
from .related import RelatedContext
from .related.text import uri_to_path


class DocumentEvents:
    """``CompletionService``'s document and file events (a part of it, not used alone)."""

    config: Config
    related: RelatedContext
    edits: RecentEdits

    def workspace_folders(self, folders: list[str]) -> None:
        """The client's workspace folders (URIs); the index is built in the background."""
        self.related.set_roots(folders, self.config)

    def document_opened(self, uri: str, text: str) -> None:
        """A document opened: its code may be shown in other documents' prompts."""
        text = one_line_end(text)
        self.related.opened(uri, text)
        self.edits.opened(uri, text)

    def document_changed(self, uri: str, first: int, last: int, text: Callable[[], str]) -> None:
        """A document changed in lines ``first`` to ``last`` (as they are now; they differ for
        a change across lines); ``text`` reads its text (``one_line_end``'s), called only when
        the change finishes an edit (see ``RecentEdits``). Cheap: called for every key."""
        self.edits.changed(uri, first, last, text)

    def document_saved(self, uri: str, text: str | None) -> None:
        """A document saved (``text``: its content, when known)."""
        text = None if text is None else one_line_end(text)
        self.related.saved(uri, text)
        self.edits.saved(uri, text)

    def files_changed(self, uris: list[str]) -> None:
        """Files created, changed or deleted on disk (``workspace/didChangeWatchedFiles``)."""
        paths = [p for p in map(uri_to_path, uris) if p is not None]
        self.related.files_changed(paths)

    def cursor_rested(self, uri: str, line: int, text: Callable[[], str]) -> None:
        """The cursor is at ``line`` of ``uri`` (a highlight or a completion asked there;
        ``text`` reads the document's text, only when a visit finishes): a visit for the
        other documents' prompts, with ``context.visited_ranges``."""
        if self.config.context.visited_ranges:
            self.edits.rested(uri, line, text)
