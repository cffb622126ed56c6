"""The record of visited ranges: what it shows, when it changes, and its bounds under bad
input."""

from __future__ import annotations

import logging

from lsp_coder.completion.recent_edits import RecentEdits
from lsp_coder.completion.recent_edits import visits as visits_module
from lsp_coder.completion.recent_edits.hunks import DOCUMENT_CHARS_MAX, LINE_CHARS_MAX
from lsp_coder.completion.recent_edits.visits import LINES_MAX, NEAR_LINES, VisitedRanges

A, B, C = "file:///w/pkg/a.py", "file:///w/pkg/b.py", "file:///w/pkg/c.py"
LINES = [f"def step_{i}(value):" if i % 4 == 0 else f"    value = value * {i}"
         for i in range(200)]
TEXT = "\n".join(LINES) + "\n"


class Reader:
    """A document's text as the server reads it, counting the reads."""

    def __init__(self, text: str) -> None:
        self.text, self.reads = text, 0

    def __call__(self) -> str:
        self.reads += 1
        return self.text


def shown(uri: str) -> str:
    return uri.removeprefix("file:///w/")


def entries(record: VisitedRanges, uri: str = B, max_visits: int = 4, budget: int = 4000):
    return record.entries(uri, max_visits, budget, shown)


def test_a_visit_shows_in_another_documents_prompt_once_the_cursor_left_it():
    record, a, b = VisitedRanges(), Reader(TEXT), Reader("x = 1\nx += 1\n")
    record.rested(A, 40, a)
    assert entries(record, uri=A) == ()  # the visit goes on, and never in its own prompt
    record.rested(B, 0, b)
    assert entries(record) == (("pkg/a.py", "\n".join(LINES[35:46])),)
    assert a.reads == 1 and b.reads == 0
    assert entries(record, uri=A) == (("pkg/b.py", "x = 1\nx += 1"),)  # never its own


def test_a_prompt_for_another_document_finishes_the_visit_as_its_first_report_would():
    record, a = VisitedRanges(), Reader(TEXT)
    record.rested(A, 40, a)
    assert entries(record, uri=A) == () and a.reads == 0  # its own prompt: still going on
    prepared = entries(record, uri=B)  # idle work for B, just opened
    assert prepared == (("pkg/a.py", "\n".join(LINES[35:46])),) and a.reads == 1
    record.rested(B, 3, Reader("x = 1\nx += 1\n"))  # then the user's first request there
    assert entries(record, uri=B) == prepared and a.reads == 1


def test_cursor_moves_near_and_keys_change_nothing_until_the_visit_is_finished():
    record, a, b = VisitedRanges(), Reader(TEXT), Reader("x = 1\nx += 1\n")
    record.rested(B, 0, b)
    record.rested(A, 40, a)
    for line in (41, 42, 42, 42, 30, 30 + NEAR_LINES):  # keys typed, the cursor moved near
        record.rested(A, line, a)
    assert a.reads == 0 and entries(record, uri=A) == (("pkg/b.py", "x = 1\nx += 1"),)
    record.rested(A, 100, a)  # far away in the same document: the visit there is finished
    assert a.reads == 1
    assert entries(record, uri=A) == (("pkg/b.py", "x = 1\nx += 1"),)
    assert entries(record) == (("pkg/a.py", "\n".join(  # around its last line, 42; then 100
        LINES[37:48] + ["..."] + LINES[95:106])),)


def test_the_range_is_the_text_when_the_visit_finished():
    record, a = VisitedRanges(), Reader(TEXT)
    record.rested(A, 40, a)
    a.text = TEXT.replace("value * 41", "value * 410")
    record.rested(C, 0, Reader("y = 2\n"))
    assert "    value = value * 410" in entries(record)[0][1]


def test_ranges_of_one_document_join_in_line_order_and_the_newest_document_comes_last():
    record, a, c = VisitedRanges(), Reader(TEXT), Reader(TEXT)
    record.rested(A, 100, a)
    record.rested(C, 10, c)
    record.rested(A, 20, a)
    record.rested(C, 10, c)
    record.rested(A, 31, a)  # 11 lines on: the ranges touch
    record.rested(B, 0, Reader(""))
    got = entries(record)
    assert [path for path, _ in got] == ["pkg/c.py", "pkg/a.py"]
    assert got[1][1] == ("\n".join(LINES[15:26] + LINES[26:37]) + "\n...\n"
                         + "\n".join(LINES[95:106]))


def test_a_visit_over_an_earlier_one_replaces_it_and_old_ones_leave_by_count_and_budget():
    record, a = VisitedRanges(), Reader(TEXT)
    record.rested(A, 40, a)
    record.rested(C, 0, Reader("z = 3\nz += 3\n"))
    record.rested(A, 44, a)
    record.rested(C, 0, Reader("z = 3\nz += 3\n"))
    assert entries(record) == (("pkg/a.py", "\n".join(LINES[39:50])),
                               ("pkg/c.py", "z = 3\nz += 3"))
    for line in range(60, 200, 20):
        record.rested(A, line, a)
    got = entries(record, uri=B, max_visits=3)
    assert got[0][1] == "\n".join(LINES[135:146] + ["..."] + LINES[155:166] + ["..."]
                                  + LINES[175:186])
    one = len("pkg/a.py") + len("\n".join(LINES[175:186])) + 2
    assert entries(record, budget=one) == (("pkg/a.py", "\n".join(LINES[175:186])),)
    assert entries(record, budget=one - 1) == ()
    assert entries(record, max_visits=0) == ()
    for line in range(0, 200, 13 + NEAR_LINES):
        record.rested(C if line % 2 else A, line, a)
    assert len(record._visits) <= visits_module.VISITS_MAX


def test_a_closed_document_leaves_and_clear_empties_the_record():
    record = RecentEdits()  # the session's record forwards closes and clears to its visits
    a = Reader(TEXT)
    record.rested(A, 40, a)
    record.rested(C, 0, Reader("w = 4\nw += 4\n"))
    record.rested(A, 10, a)
    record.closed(A)
    record.rested(B, 0, Reader(""))  # the visit going on in A left with it: not read
    assert record.visits.entries(B, 4, 4000, shown) == (("pkg/c.py", "w = 4\nw += 4"),)
    assert a.reads == 1
    record.clear()
    assert record.visits.entries(B, 4, 4000, shown) == ()


def test_huge_binary_blank_and_vanished_lines_give_no_range_and_long_lines_are_cut(caplog):
    caplog.set_level(logging.DEBUG)
    record = VisitedRanges()
    secret = "API_TOKEN_visited_1234"
    huge = Reader(f"{secret}\n" + "x" * DOCUMENT_CHARS_MAX)
    binary = Reader(f"{secret}\x00\x01\x02\n" * 50)
    blank = Reader("\n" * 50)
    lone = Reader("\n" * 18 + "def add(a, b):\n    ")  # one line: no range
    short = Reader("only = 1\n")
    wide = Reader(f"{secret} = '" + "y" * 50_000 + "'\nz = 0\n")
    for reader in (huge, binary, blank, lone, short):
        record.rested(A, 20, reader)  # line 20: past the short document's end
        record.rested(C, 0, wide)
        record.rested(B, 0, Reader(""))
    assert [p for p, _ in entries(record, uri="file:///other")] == ["pkg/c.py"]
    (_, body), = entries(record, uri="file:///other")
    assert body == f"{secret} = '".ljust(LINE_CHARS_MAX, "y") + "\nz = 0"
    assert all(r.reads == 1 for r in (huge, binary, blank, lone, short))
    assert secret not in caplog.text


def test_a_cursor_storm_reads_each_document_once_per_finished_visit_and_stays_bounded():
    record = VisitedRanges()
    readers = [Reader(TEXT) for _ in range(300)]
    for i, reader in enumerate(readers):
        for line in range(0, 20):  # keys and moves in one place: one visit
            record.rested(f"file:///w/m{i}.py", 50 + line % 3, reader)
    record.rested(B, 0, Reader(""))
    assert all(r.reads == 1 for r in readers)
    got = entries(record, max_visits=16, budget=1 << 20)
    assert len(got) == visits_module.VISITS_MAX
    assert all(len(body.split("\n")) == LINES_MAX for _, body in got)
    assert got[-1][0] == "m299.py"


def test_a_range_the_prompt_shows_elsewhere_whole_is_left_out():
    record, a = VisitedRanges(), Reader(TEXT)
    record.rested(A, 40, a)
    record.rested(A, 100, a)
    record.rested(C, 0, Reader("v = 5\nv += 5\n"))
    window = "\n".join(LINES[30:50])  # the section's window of a.py holds the first visit
    got = record.entries(B, 4, 4000, shown, elsewhere=lambda path, text: (
        path == "pkg/a.py" and text in window))
    assert got == (("pkg/a.py", "\n".join(LINES[95:106])), ("pkg/c.py", "v = 5\nv += 5"))
