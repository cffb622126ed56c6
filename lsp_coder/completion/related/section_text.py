"""The other files' section as the prompt builders take it: its record, and its entries
rendered from the items chosen."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from .items import Item
from .text import display_uri, one_line, uri_to_path


@dataclass(frozen=True, slots=True)
class Section:
    """Other files' code for one request, as the prompt builders take it."""

    entries: tuple[tuple[str, str], ...] = ()
    """(path, text) per file, in a stable order; empty: the prompt is the open file's only."""
    repo: str = ""
    """The workspace folder's name (the repository line of the model's own format)."""
    path: str = ""
    """The open file's path, written before it when ``entries`` is not empty."""


def rendered(uri: str, roots: tuple[Path, ...], pinned: tuple[tuple[str, str], ...],
             items: list[Item], relevant_last: bool) -> Section:
    """The section of ``pinned`` entries and ``items`` for document ``uri``: an item's text
    joins the entry of its file."""
    if not items and not pinned:
        return Section()
    entries: OrderedDict[str, list[str]] = OrderedDict((p, [t]) for p, t in pinned)
    first = len(entries)
    for item in items:
        entries.setdefault(item.path, []).append(item.text)
    files = [(p, "\n".join(texts)) for p, texts in entries.items()]
    if relevant_last:  # a file goes where its most relevant item puts it
        files[first:] = reversed(files[first:])
    return Section(tuple(files), *place(uri, roots))


def place(uri: str, roots: tuple[Path, ...]) -> tuple[str, str]:
    """(the name of the workspace folder holding ``uri`` or "", the path a prompt writes)."""
    path = uri_to_path(uri)
    repo = next((one_line(r.name) for r in roots
                 if path is not None and path.is_relative_to(r)), "")
    return repo, display_uri(uri, roots)
