"""``bench idle``'s editor: Enter's indentation, fixed up to the file's, types the file back."""

from __future__ import annotations

from lsp_coder.bench.human import indentation_fix, press_enter

CODE = '''class A:
    def f(self, x):
        if x:
            return 1

        y = [
            x,
        ]
        return y


def g():
    pass
'''


def type_back(text: str, typed: str, offset: int) -> tuple[str, dict[str, int]]:
    """Type ``typed`` at ``offset`` with the bench's Enter; the document and the keys."""
    i, keys = 0, {"enter": 0, "backspace": 0, "char": 0}
    while i < len(typed):
        if typed[i] == "\n":
            at, chars, offset, indent = press_enter(text, offset, python=True)
            text = text[:at] + chars + text[at:]
            i += 1
            keys["enter"] += 1
            back, i = indentation_fix(typed, i, indent)
            if back:
                text = text[: offset - back] + text[offset:]
                offset -= back
                keys["backspace"] += 1
            continue
        text = text[:offset] + typed[i] + text[offset:]
        offset += 1
        i += 1
        keys["char"] += 1
    return text, keys


def test_typing_the_file_back_gives_the_file():
    start = CODE.index("    def f")
    cut = CODE[start:]
    text, keys = type_back(CODE[:start], cut, start)
    assert text == CODE
    # Only the dedents Enter does not make are Backspaced (``]``; ``def g`` after the class);
    # ``return`` dedents by itself, and a blank line is two Enters, its indentation moving
    # down, never deleted and typed again.
    assert keys["enter"] == cut.count("\n")
    assert keys["backspace"] == 2, keys
    # No indentation is typed space by space but the first line's (typed before any Enter).
    assert keys["char"] == 4 + sum(len(line.lstrip()) for line in cut.splitlines())


def test_enter_on_a_blank_line_moves_its_indentation_down():
    text = "def f():\n    x = 1\n    "
    assert press_enter(text, len(text), python=True) == (len(text) - 4, "\n", len(text) + 1,
                                                         "    ")
    assert press_enter("    return x", 12, python=True) == (12, "\n", 13, "")
