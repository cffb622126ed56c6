"""What the next request will probably need, so idle time can prepare its prompt.

Five kinds, each a document text and cursor the user is likely to produce next:

- ``accept``: the shown suggestion inserted, the cursor after it;
- ``enter``: with the cursor at the end of a line, a new line with the indentation an editor
  inserts (the line above's, one level deeper after a block opener, one level shallower after a
  Python ``return``/``pass``/...; a blank line's whitespace moves down with the cursor, as
  VS Code and Vim remove auto-indent left on a line);
- ``window``: a file just opened; only the prefix part of the prompt that any cursor in the
  file's first window will share (the cursor position is not known yet).
- ``cursor``: the cursor the client reported outside a completion request (a
  ``textDocument/documentHighlight`` request, which VS Code and Emacs eglot send wherever the
  cursor comes to rest): what ``idle.cursor_prompt`` says, the full prompt there, the short
  one with the full prompt's front first, or the prompt a request there would read;
- ``full``: the state as it is, when its answer came from the short prompt for a cold cache:
  the full prompt, so the keys after it can have it (the local engine reads the short prompt
  with the other files' section first, when requests could not read that one in time).

The engine is told only "prefill these tokens"; how is its business (local: a spare sequence
sharing the cached prefix; remote: a prefill-only request).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..prompt_parts import space_unit
from .context import CHARS_PER_TOKEN

ENTER_OPENERS = (":", "{", "(", "[")
"""A line ending with one of these gets one more level of indentation on the next line."""

INDENT_SCAN_CHARS = 200_000
"""How much of a file is read for its indentation unit."""

PYTHON_DEDENTERS = ("return", "pass", "break", "continue", "raise")
"""A Python line starting with one of these gets one level less on the next line."""

HINTS = ("window", "cursor")
"""Kinds from where the user is now (a file opened, a cursor reported), not from an answer."""

IN_VIEW = (*HINTS, "full")
"""Kinds that prepare the state the user is in now, not a guess at the next key."""


@dataclass(frozen=True, slots=True)
class NextPrompt:
    """A document state the user will probably produce next (``kind`` says how).

    It holds the document as it is (``base``, cursor at ``offset``) and what the branch adds
    (``suggestion`` for ``accept``); ``state()`` builds the branch's text. That is a copy of the
    whole document, so planning stays cheap on the event loop and the worker pays for it.
    """

    kind: str
    uri: str
    path: str
    base: str
    offset: int
    suggestion: str = ""

    def state(self) -> tuple[str, int]:
        """The branch's document text and cursor."""
        if self.kind == "accept":
            head = self.base[: self.offset] + self.suggestion
            return head + self.base[self.offset :], len(head)
        if self.kind == "enter":
            entered = after_enter(self.base, self.offset,
                                  python=self.path.endswith((".py", ".pyi")))
            if entered is not None:
                return entered
        return self.base, self.offset


def after_answer(uri: str, path: str, text: str, offset: int,
                 suggestion: str, cold: bool = False) -> list[NextPrompt]:
    """The branches after a suggestion was shown at ``offset``, most likely first: at a
    line's end Enter (pressed at every line end) comes before accepting the suggestion,
    unless nothing but indentation is typed on the line yet and the suggestion goes on on it
    (the line has not started: the user accepts it or types it). ``cold``: the answer came
    from the short prompt for a cold cache. Requests keep reading short prompts until idle
    work has filled the full one, so the Enter and accept branches (whose prefill reads the
    prompt a request would read) come first and the full prompt, a long job that goes on
    from where it stopped, takes the idle time left."""
    out: list[NextPrompt] = []
    if _at_line_end(text, offset):
        out.append(NextPrompt("enter", uri, path, text, offset))
    if suggestion:
        unstarted = (not _line_before(text, offset).strip()
                     and bool(suggestion.split("\n", 1)[0].strip()))
        out.insert(0 if unstarted else len(out),
                   NextPrompt("accept", uri, path, text, offset, suggestion))
    if cold:
        out.append(NextPrompt("full", uri, path, text, offset))
    return out


def past_indentation(text: str, offset: int, remainder: str) -> tuple[str, int, str]:
    """Where the engine confirms a suggestion the user types along (``remainder``: its part
    not typed yet): past the rest of its indentation, as (text, cursor, remainder), where the
    cursor's line has only whitespace before the cursor and the suggestion goes on with more
    spaces or tabs and then code on that line; else where the user is.

    The prompt puts a line's whole levels of indentation before the suffix, so the first key
    of code after indentation typed a space or a tab at a time reads the suffix again (about
    80 tokens, a second on a 2-core CPU) unless the confirm read that prompt already."""
    unchanged = text, offset, remainder
    if _line_before(text, offset).strip(" \t"):
        return unchanged
    code = remainder.lstrip(" \t")
    if code == remainder or not code or code[0] in "\r\n":
        return unchanged
    indentation = remainder[: len(remainder) - len(code)]
    return (text[:offset] + indentation + text[offset:], offset + len(indentation), code)


def _line_before(text: str, offset: int) -> str:
    """The text of ``offset``'s line before it."""
    return text[text.rfind("\n", 0, offset) + 1 : offset]


def _at_line_end(text: str, offset: int) -> bool:
    """Only whitespace between ``offset`` and the end of its line."""
    line_end = text.find("\n", offset)
    return not text[offset : len(text) if line_end < 0 else line_end].strip()


def after_enter(text: str, offset: int, python: bool = False) -> tuple[str, int] | None:
    """The text and cursor after pressing Enter at ``offset``; None unless at a line's end."""
    if not _at_line_end(text, offset):
        return None
    line_start = text.rfind("\n", 0, offset) + 1
    line = text[line_start:offset]
    newline = "\r\n" if "\r\n" in text else "\n"
    if not line.strip():  # an untouched auto-indent is removed; the cursor keeps its column
        head = text[:line_start] + newline + line
        return head + text[offset:], len(head)
    indent = line[: len(line) - len(line.lstrip())]
    unit = indent_unit(text, indent)
    stripped = line.rstrip()
    if stripped.endswith(ENTER_OPENERS):
        indent += unit
    elif python and stripped.lstrip().split(" ", 1)[0] in PYTHON_DEDENTERS:
        indent = indent[: max(0, len(indent) - len(unit))]
    head = text[:offset] + newline + indent
    return head + text[offset:], len(head)


def indent_unit(text: str, indent: str = "") -> str:
    """One level of indentation: a tab where the line uses tabs, else the file's most common
    step from a line to a deeper one (``space_unit``, as editors detect it; the prompt's
    whole levels use the same)."""
    if indent.startswith("\t"):
        return "\t"
    return " " * space_unit(text[:INDENT_SCAN_CHARS].splitlines()[:2000])


def document_window(uri: str, path: str, text: str, prefix_tokens: int) -> NextPrompt:
    """A just-opened file: the cursor at the start of the last line of its first window.

    Every cursor above that line has a prompt whose prefix part starts at the file's top, so
    the window's prefix is shared (up to the cursor's line) by all of them.
    """
    budget = prefix_tokens * CHARS_PER_TOKEN
    offset, used = 0, 0
    for line in text[: budget + 1].splitlines(keepends=True):
        if not line.endswith("\n") or used + len(line) > budget:
            break
        used += len(line)
        offset = used
    return NextPrompt("window", uri, path, text, offset)
