"""The other files' section of the prompt: what the cursor uses, from where it is defined.

Sources, in the order they fill the budget: the definitions of the names used at the cursor
(``definitions``: Python, JavaScript and TypeScript by their imports, every language by the
workspace index), then the windows most similar to the lines at the cursor, of open documents,
of recently closed ones (as saved on disk), of the open one beyond its prompt's window and of
files near it (``neighbours``). The section sits first in the prompt, so a change re-reads the
whole prompt: it is recomputed only when what the cursor needs changes and otherwise kept as
it was (see ``RelatedContext.section``). No source reads a file the user excludes or one that
holds secrets (``exclusion``), and no excluded document's text is shown.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ...config import Config
from ..context import CHARS_PER_TOKEN
from .cursor_lines import lines_above, lines_by_distance
from .items import Item, fit_items, kept_stable
from .js_paths import relative_path_typed
from .known_keys import KnownKeys
from .pinned import pinned_entries, pinned_tokens
from .section_text import Section, rendered
from .tags import language_of
from .text import uri_to_path
from .workspace_state import WorkspaceState


class RelatedContext(WorkspaceState):
    """Builds each request's section (and the names known after an import's dot) from what
    ``WorkspaceState`` tracks; ``section`` and ``members`` run on the worker, each waiting at
    most ``FILES_LIMIT_S`` for the files it reads (``bounded``)."""

    # -- the section (worker) -------------------------------------------------------------------

    def section(self, uri: str, text: str, offset: int, budget_tokens: int, config: Config,
                record: bool = True, window_lines: tuple[int, int] = (0, 0),
                first_answer: str = "") -> Section:
        """The other files' section for a request at ``offset`` of ``text`` (document ``uri``);
        empty when reading the files takes over ``FILES_LIMIT_S`` (see ``_section``)."""
        return self._bounded_section.run(
            lambda: self._section(uri, text, offset, budget_tokens, config, record,
                                  window_lines, first_answer), Section())

    def _section(self, uri: str, text: str, offset: int, budget_tokens: int, config: Config,
                 record: bool, window_lines: tuple[int, int], first_answer: str) -> Section:
        """The other files' section for a request at ``offset`` of ``text`` (document ``uri``).

        Stability: when everything the cursor needs now is already in the document's last
        section, that section is returned unchanged; otherwise the items still needed keep
        their order and the new ones follow. ``record``: remember the result as the
        document's section (False for a preview by idle work). ``window_lines``: the lines
        above and below the cursor line that the prompt holds (no window of them is repeated
        here). ``first_answer``: an answer at the cursor whose names are looked up as if typed
        (``context.second_pass``; the similar windows and the remembered text stay the
        document's own).
        """
        cc = config.context
        pinned = pinned_entries(cc.pinned)
        budget = (budget_tokens - pinned_tokens(pinned)) * CHARS_PER_TOKEN
        if (budget <= 0 or not (cc.definitions or cc.open_files)) and not pinned:
            return Section()
        self._exclude(config)
        self._use_index(config)
        with self._lock:
            roots, generation = self._roots, self._generation
            files_generation = self._files_generation
            others = [(u, t) for u, t in reversed(self._documents.items()) if u != uri]
            previous = self._sections.get(uri)
            if record:  # the most recently edited document; no other section changes for it
                self._remember(uri, text)
        others = [(u, t) for u, t in others if self.exclusion.allows_uri(u)]
        path = uri_to_path(uri)
        line = text.count("\n", 0, offset)
        items: list[Item] = []
        outlines: list[Item] = []
        if cc.definitions and budget > 0:
            looked, at = ((text[:offset] + first_answer + text[offset:],
                           offset + len(first_answer)) if first_answer else (text, offset))
            found = self._definitions.items(looked, lines_above(looked, at),
                                            lines_by_distance(looked, at), path, roots,
                                            cc.max_file_bytes, self._held.index,
                                            files_generation, cc.unused_imports)
            items += [item for item in found if not item.outline]
            outlines = [item for item in found if item.outline]
        if cc.open_files and budget > 0:
            items += self._windows.items(uri, text, offset, line, others, roots,
                                         (generation, files_generation), window_lines,
                                         cc.max_file_bytes, cc.workspace,
                                         tuple(item.key for item in previous or ()))
        # A module's outline is a guess at what comes after its dot; a window of code that
        # shares the cursor's names was measured to be worth more, so outlines get what is left.
        items += outlines
        wanted = fit_items(items, budget)
        # An ignore file may have changed since an item was found: none that is excluded now.
        chosen = [i for i in kept_stable(previous, wanted)
                  if self.exclusion.allows_uri(i.key[1])]
        if record:
            with self._lock:
                self._sections[uri] = chosen
        return rendered(uri, roots, pinned, chosen, cc.relevant_last)

    def members(self, uri: str, text: str, offset: int, config: Config
                ) -> Mapping[str, frozenset[str]]:
        """The names each name the document imports from the workspace offers after its dot
        (``context.known_members``; ``DefinitionFinder.members``); none when reading the
        files takes over ``FILES_LIMIT_S``. In a Python document, the keys of an import being
        written are looked up as the rule asks for them (``KnownKeys``), bounded the same
        way."""
        cc = config.context
        path = uri_to_path(uri)
        if not cc.known_members:
            return {}
        with self._lock:
            roots, files_generation = self._roots, self._files_generation
            open_texts = {other: t for u, t in self._documents.items()
                          if u != uri and (other := uri_to_path(u)) is not None}
        found = self._bounded_section.run(
            lambda: self._definitions.members(text, lines_above(text, offset), path, roots,
                                              cc.max_file_bytes, files_generation,
                                              open_texts), {})
        if path is None or language_of(path.suffix) != "python":
            return found

        def look_up(key: str) -> frozenset[str] | None:
            return self._bounded_section.run(
                lambda: self._definitions.look_up(key, path, roots, cc.max_file_bytes,
                                                  files_generation, open_texts), None)
        return KnownKeys(found, look_up)

    def import_path_mender(self, uri: str, line_before: str, config: Config
                           ) -> Callable[[str], str | None] | None:
        """What mends an answer's first line where the cursor line (``line_before``) ends in
        the relative path of an import (``DefinitionFinder.mend_import_path``, bounded as
        reading other files is); None where it ends in none or ``context.known_members`` is
        off."""
        path = uri_to_path(uri)
        if not config.context.known_members or path is None or (
                not relative_path_typed(line_before)):
            return None
        with self._lock:
            roots, files_generation = self._roots, self._files_generation

        def mend(answer_line: str) -> str | None:
            return self._bounded_section.run(
                lambda: self._definitions.mend_import_path(line_before, answer_line, path,
                                                           roots, files_generation), None)
        return mend

    # -- the section the cache holds (worker) ---------------------------------------------------

    def shown(self, uri: str) -> None:
        """A request for ``uri`` read a prompt with the document's recorded section: the
        backend's cache holds it now."""
        with self._lock:
            recorded = self._sections.get(uri)
            if recorded is not None:
                self._shown[uri] = recorded

    def held(self, uri: str, budget_tokens: int, config: Config) -> Section | None:
        """The section of the prompt a request for ``uri`` last read (``shown``), for a
        backend whose cache lacks the prompt with a new one (see ``PromptParts.held_extra``):
        None when there is none, or it no longer fits ``budget_tokens``; no item that is
        excluded now."""
        cc = config.context
        pinned = pinned_entries(cc.pinned)
        budget = (budget_tokens - pinned_tokens(pinned)) * CHARS_PER_TOKEN
        with self._lock:
            shown, roots = self._shown.get(uri), self._roots
        if not shown:
            return None
        items = [i for i in shown if self.exclusion.allows_uri(i.key[1])]
        if fit_items(items, budget) != items:  # it no longer fits whole
            return None
        return rendered(uri, roots, pinned, items, cc.relevant_last)
