"""The record of recent edits: what it shows, when it changes, and its bounds under bad input."""

from __future__ import annotations

import logging
import time

from lsp_coder.completion.recent_edits import RecentEdits
from lsp_coder.completion.recent_edits import record as record_module
from lsp_coder.completion.recent_edits.hunks import HUNK_LINES_MAX, LINE_CHARS_MAX

CORE = ("import os\n\n\ndef load_config(path, strict=False):\n    with open(path) as f:\n"
        "        return f.read()\n\n\ndef save_config(path, text):\n    with open(path, 'w')"
        " as f:\n        f.write(text)\n")
A, B = "file:///w/pkg/core.py", "file:///w/pkg/app.py"
FAR = (10_000, 10_001)
"""A window that hides nothing (the request is in another document)."""


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Editor:
    """A document typed into the record as an editor's didChange notifications would."""

    def __init__(self, record: RecentEdits, uri: str, text: str) -> None:
        self.record, self.uri, self.text = record, uri, text
        record.opened(uri, text)

    def type(self, offset: int, chars: str) -> int:
        """Type ``chars`` one key at a time at ``offset``; the offset after them."""
        for char in chars:
            self.text = self.text[:offset] + char + self.text[offset:]
            line = self.text.count("\n", 0, offset)
            last = line + (char == "\n")
            self.record.changed(self.uri, line, last, lambda: self.text)
            offset += 1
        return offset

    def replace_all(self, text: str) -> None:
        """One change of the whole document (a formatter, a paste over everything)."""
        self.text = text
        self.record.changed(self.uri, 0, 1 << 30, lambda: self.text)


def shown(uri: str) -> str:
    return uri.removeprefix("file:///w/")


def entries(record: RecentEdits, uri: str = B, hidden: tuple[int, int] = FAR,
            max_hunks: int = 8, budget: int = 4000):
    return record.entries(uri, hidden, max_hunks, budget, shown)


def rename(editor: Editor, old: str, suffix: str) -> None:
    """Append ``suffix`` to the first ``def old`` of the editor's text, key by key."""
    editor.type(editor.text.index(f"def {old}") + 4 + len(old), suffix)


def test_a_rename_shows_the_new_definition_to_another_file_once_the_user_is_there():
    record = RecentEdits(clock=Clock())
    core = Editor(record, A, CORE)
    rename(core, "load_config", "_v2")
    [(path, body)] = entries(record)
    assert path == "pkg/core.py"
    assert "def load_config_v2(path, strict=False):" in body
    assert "import os" in body and "return f.read()" in body  # the lines around it
    assert "def load_config(" not in body and "save_config" not in body


def test_keys_on_one_line_leave_the_record_as_it_was_until_the_edit_is_finished():
    clock = Clock()
    record = RecentEdits(clock=clock)
    core = Editor(record, A, CORE)
    app = Editor(record, B, "from pkg import core\n\n\ndef main():\n    \n")
    rename(core, "load_config", "_v2")
    first = entries(record)
    cursor = app.text.index("    \n") + 4
    seen = []
    for char in "core.load_config_v2('x')":
        cursor = app.type(cursor, char)
        clock.now += 0.1
        seen.append(entries(record, B, hidden=(0, 10)))
    assert all(s == first for s in seen)  # the prompt's front: the same tokens every key
    # The same holds in the file being renamed while its line is typed.
    rename(core, "save_config", "_x")
    assert entries(record, A, hidden=FAR) == entries(record, A, hidden=FAR)
    before = entries(record, A, hidden=FAR)
    core.type(core.text.index("def save_config_x") + len("def save_config_x"), "y")
    assert entries(record, A, hidden=FAR) == before
    # Leaving the line finishes it.
    core.type(len(core.text), "\n")
    assert "def save_config_xy(path, text):" in dict(entries(record))["pkg/core.py"]


def test_a_pause_finishes_the_edit_of_the_document_being_typed_in():
    clock = Clock()
    record = RecentEdits(clock=clock)
    core = Editor(record, A, CORE)
    rename(core, "save_config", "_v2")
    assert entries(record, A, hidden=FAR) == ()
    clock.now += record_module.PAUSE_S
    [(_, body)] = entries(record, A, hidden=FAR)
    assert "def save_config_v2(path, text):" in body


def test_an_undone_edit_leaves_the_record_and_a_save_finishes_one():
    record = RecentEdits(clock=Clock())
    core = Editor(record, A, CORE)
    rename(core, "load_config", "_v2")
    assert entries(record)
    record.saved(A, CORE)  # undone, then saved
    assert entries(record) == ()
    record.saved(A, CORE.replace("strict=False", "strict=True"))
    assert "strict=True" in entries(record)[0][1]


def test_a_document_closed_with_unsaved_edits_leaves_and_one_saved_stays():
    record = RecentEdits(clock=Clock())
    core = Editor(record, A, CORE)
    core.type(len(core.text), "    ret")  # half typed, then closed without saving
    record.closed(A)
    assert entries(record) == ()
    core = Editor(record, A, CORE)
    rename(core, "load_config", "_v2")
    record.saved(A, core.text)
    record.closed(A)
    assert "def load_config_v2(" in entries(record)[0][1]


def test_the_open_documents_own_hunks_in_its_window_are_not_repeated():
    record = RecentEdits(clock=Clock())
    core = Editor(record, A, CORE)
    rename(core, "load_config", "_v2")
    record.saved(A, core.text)
    def_line = CORE.count("\n", 0, CORE.index("def load_config"))
    assert entries(record, A, hidden=(def_line - 2, def_line + 20)) == ()
    assert entries(record, A, hidden=(def_line + 5, def_line + 20))  # outside its window


def test_old_hunks_leave_by_count_and_by_budget_and_the_newest_file_comes_last():
    record = RecentEdits(clock=Clock())
    files = [f"file:///w/pkg/m{i}.py" for i in range(6)]
    for uri in files:
        editor = Editor(record, uri, CORE)
        rename(editor, "load_config", "_v2")
        record.saved(uri, editor.text)
    got = entries(record, max_hunks=3)
    assert [p for p, _ in got] == ["pkg/m3.py", "pkg/m4.py", "pkg/m5.py"]
    one = sum(len(p) + len(t) + 2 for p, t in got) // 3
    small = entries(record, budget=2 * one + 1)
    assert [p for p, _ in small] == ["pkg/m4.py", "pkg/m5.py"]
    assert entries(record, budget=10) == ()


def test_fewer_hunks_than_the_most_shown_all_show():
    record = RecentEdits(clock=Clock())
    files = [f"file:///w/pkg/m{i}.py" for i in range(5)]
    for uri in files:
        editor = Editor(record, uri, CORE)
        rename(editor, "load_config", "_v2")
        record.saved(uri, editor.text)
    assert [p for p, _ in entries(record, max_hunks=8)] == [f"pkg/m{i}.py" for i in range(5)]


def test_a_formatter_run_over_thousands_of_lines_starts_the_record_again_quickly():
    record = RecentEdits(clock=Clock())
    big = "".join(f"def f{i}(x):\n    return x+{i}\n" for i in range(3000))
    editor = Editor(record, A, big)
    rename(editor, "f7", "_v2")
    record.saved(A, editor.text)
    assert entries(record)
    start = time.perf_counter()
    editor.replace_all(editor.text.replace("x+", "x + "))  # every other line changes
    assert time.perf_counter() - start < 1.0
    assert entries(record) == ()  # not an edit: nothing of it shown
    rename(editor, "f9", "_v3")  # later edits count again
    record.saved(A, editor.text)
    [(_, body)] = entries(record)
    assert "def f9_v3(x):" in body and "f7_v2" not in body


def test_a_document_edited_all_over_for_long_keeps_showing_its_last_edit():
    record = RecentEdits(clock=Clock())
    big = "".join(f"def f{i}(x):\n    return x+{i}\n" for i in range(1000))
    editor = Editor(record, A, big)
    start = time.perf_counter()
    for i in range(0, 1000, 2):  # 500 edits, one line each: past any diff of them all
        editor.type(editor.text.index(f"def f{i}(") + len(f"def f{i}"), "_")
        record.saved(A, editor.text)
    assert time.perf_counter() - start < 10.0  # each diff stays small (it took 14 s)
    rename(editor, "f999", "_v2")
    record.saved(A, editor.text)
    got = entries(record, max_hunks=2)
    assert "def f999_v2(x):" in got[-1][1]


def test_a_megabyte_paste_a_binary_or_a_huge_document_is_not_tracked():
    record = RecentEdits(clock=Clock())
    core = Editor(record, A, CORE)
    rename(core, "load_config", "_v2")
    record.saved(A, core.text)
    paste = "x = 1  # pasted\n" * (1 << 16)  # 1 MiB
    core.replace_all(core.text + paste)
    assert entries(record) == ()
    for _ in range(50):  # typing in it after: no copy per key
        core.type(len(core.text), "y")
    assert entries(record) == ()
    binary = Editor(record, "file:///w/blob.py", "data = b'\x00\x01'\n" + CORE)
    rename(binary, "load_config", "_v2")
    record.saved(binary.uri, binary.text)
    huge = Editor(record, "file:///w/huge.py", CORE + "# pad\n" * 100_000)
    rename(huge, "load_config", "_v2")
    record.saved(huge.uri, huge.text)
    assert entries(record) == ()
    # Back to a normal size (the paste undone and saved): tracked again from there.
    record.saved(A, CORE)
    core.text = CORE
    rename(core, "save_config", "_v2")
    record.saved(A, core.text)
    assert "save_config_v2" in entries(record)[0][1]


def test_a_long_pasted_block_and_long_lines_show_cut():
    record = RecentEdits(clock=Clock())
    core = Editor(record, A, CORE)
    block = "".join(f"    step_{i}({'y' * 1000})\n" for i in range(200))
    at = core.text.index("def save_config")
    core.text = core.text[:at] + "def pasted():\n" + block + "\n\n" + core.text[at:]
    record.saved(A, core.text)
    [(_, body)] = entries(record, budget=100_000)
    lines = body.split("\n")
    assert len(lines) <= HUNK_LINES_MAX and max(map(len, lines)) <= LINE_CHARS_MAX
    assert "def pasted():" in body


def storm(record: RecentEdits, editors: list[Editor]) -> float:
    """A refactoring tool renames ``load_config`` in every editor's document, one change
    each; the seconds it took the record."""
    start = time.perf_counter()
    for editor in editors:
        at = editor.text.index("def load_config")
        editor.text = editor.text.replace("load_config", "read_config")
        line = editor.text.count("\n", 0, at)
        record.changed(editor.uri, line, line, lambda e=editor: e.text)
    return time.perf_counter() - start


def test_a_rename_storm_shows_the_newest_renames_within_the_bounds():
    record = RecentEdits(clock=Clock())
    editors = [Editor(record, f"file:///w/pkg/m{i:02}.py", CORE) for i in range(30)]
    storm(record, editors)
    got = entries(record, max_hunks=8, budget=100_000)
    assert [p for p, _ in got] == [f"pkg/m{i:02}.py" for i in range(22, 30)]
    assert all("def read_config(path, strict=False):" in t for _, t in got)


def test_a_rename_storm_over_hundreds_of_big_files_keeps_memory_and_the_prompt_bounded(
        caplog):
    caplog.set_level(logging.DEBUG)
    record = RecentEdits(clock=Clock())
    secret = "SECRET_TOKEN_abc123"
    text = CORE + f"KEY = '{secret}'\n" + "# filler line\n" * 4000
    editors = [Editor(record, f"file:///w/pkg/m{i}.py", text) for i in range(500)]
    assert storm(record, editors) < 10.0
    got = entries(record, max_hunks=8, budget=3000)
    assert sum(len(p) + len(t) + 2 for p, t in got) <= 3000
    assert sum(t.count("def read_config") for _, t in got) <= 8
    assert len(record._documents) <= record_module.TRACKED_DOCUMENTS_MAX
    assert sum(d.chars for d in record._documents.values()) <= record_module.TRACKED_CHARS_MAX
    assert secret not in caplog.text and "load_config" not in caplog.text
