"""Files near the open document (never opened) and the open document beyond its window."""

from __future__ import annotations

import os
from dataclasses import replace

from lsp_coder.completion.related import RelatedContext
from lsp_coder.completion.related.neighbours import NEIGHBOURS_MAX, NeighbourFiles
from lsp_coder.config import Config

CONFIG = Config()
USAGE = ("def report(rows):\n    for row in rows:\n        total = tally_rows(row, weight=2)\n"
         "        emit_total(total, channel='audit')\n    return total\n")


def test_imported_modules_come_first_then_the_folder_by_name(tmp_path, files):
    files(tmp_path, {
        "pkg/__init__.py": "from .core import tally_rows\n",  # only imports: nothing to show
        "pkg/app.py": "",
        "pkg/core.py": "def tally_rows(row, weight=1):\n    return row * weight\n",
        "pkg/a_first.py": "X = 1\n",
        "pkg/notes.txt": "not code\n",
        "lib/far.py": "def far():\n    pass\n",
    })
    head = "from pkg.core import tally_rows\nfrom lib import far\n"
    near = NeighbourFiles(1 << 20).near(tmp_path / "pkg" / "app.py", head, (tmp_path,), set())
    assert [p.relative_to(tmp_path).as_posix() for p, _ in near] == [
        "pkg/core.py", "lib/far.py", "pkg/a_first.py"]


def test_binary_huge_unreadable_links_and_skipped_files_are_left_out(tmp_path, files):
    files(tmp_path, {"pkg/app.py": "", "pkg/huge.py": "#" * 5000, "pkg/open.py": "Y = 2\n",
                     "pkg/ok.py": "Z = 3\n"})
    (tmp_path / "pkg" / "blob.py").write_bytes(b"def f():\0\0\0")
    denied = tmp_path / "pkg" / "denied.py"
    denied.write_text("W = 4\n")
    denied.chmod(0)
    os.symlink(tmp_path / "pkg" / "loop.py", tmp_path / "pkg" / "loop.py")
    os.symlink(tmp_path / "pkg" / "ok.py", tmp_path / "pkg" / "link.py")
    near = NeighbourFiles(4096).near(tmp_path / "pkg" / "app.py", "", (tmp_path,),
                                     {tmp_path / "pkg" / "open.py"})
    names = [p.name for p, _ in near]
    assert "ok.py" in names
    assert not {"huge.py", "blob.py", "loop.py", "link.py", "open.py", "app.py"} & set(names)
    assert os.geteuid() == 0 or "denied.py" not in names


def test_nothing_outside_the_workspace_folders_is_read(tmp_path, files):
    files(tmp_path, {"scratch/app.py": "", "scratch/other.py": "Y = 2\n",
                     "proj/pkg/__init__.py": "", "proj/pkg/app.py": "",
                     "proj/pkg/mine.py": "Z = 3\n", "proj/lib/util.py": "U = 1\n"})
    finder = NeighbourFiles(4096)
    pkg = tmp_path / "proj" / "pkg"
    # A script outside every workspace folder (or with none): no neighbours at all.
    assert finder.near(tmp_path / "scratch" / "app.py", "", (pkg,), set()) == []
    assert finder.near(tmp_path / "scratch" / "app.py", "", (), set()) == []
    # Inside one: its folder's files; an import that resolves beside the package, outside
    # the folder the user opened, is not read.
    head = "from lib.util import U\n"
    assert [p.name for p, _ in finder.near(pkg / "app.py", head, (tmp_path / "proj",),
                                           set())] == ["util.py", "mine.py"]
    assert [p.name for p, _ in finder.near(pkg / "app.py", head, (pkg,), set())] == ["mine.py"]


def test_a_big_folder_gives_at_most_the_bound(tmp_path, files):
    files(tmp_path, {f"pkg/m{i:03}.py": f"V{i} = {i}\n" for i in range(200)})
    near = NeighbourFiles(4096).near(tmp_path / "pkg" / "m000.py", "", (tmp_path,), set())
    assert len(near) == NEIGHBOURS_MAX


def test_a_file_never_opened_shows_how_the_name_is_used(tmp_path, files):
    files(tmp_path, {"pkg/report.py": USAGE, "pkg/audit.py": ""})
    related = RelatedContext()
    related.set_roots([tmp_path.as_uri()], CONFIG)
    related.index.wait_ready(60)
    text = "def audit(rows):\n    for row in rows:\n        total = "
    uri = (tmp_path / "pkg" / "audit.py").as_uri()
    got = related.section(uri, text, len(text), 512, CONFIG, window_lines=(2, 0))
    assert got.entries == (("pkg/report.py", USAGE),)
    related.close()


def test_the_open_file_beyond_the_prompt_window_is_a_candidate(tmp_path):
    filler = "".join(f"filler_{i} = {i}\n" for i in range(60))
    text = USAGE + filler + "def audit(rows):\n    for row in rows:\n        total = "
    line = text.count("\n")
    related = RelatedContext()
    uri = (tmp_path / "alone.py").as_uri()  # no folder on disk: no neighbours
    got = related.section(uri, text, len(text), 512, CONFIG, window_lines=(30, 0))
    [(path, body)] = got.entries
    assert path == "alone.py" and "tally_rows(row, weight=2)" in body
    # The same lines inside what the prompt shows are not repeated.
    again = RelatedContext().section(uri, text, len(text), 512, CONFIG,
                                     window_lines=(line, 0))
    assert again.entries == ()
    # A document larger than max_file_bytes is not scanned for its own windows.
    small = replace(CONFIG, context=replace(CONFIG.context, max_file_bytes=len(text) - 1))
    big = RelatedContext().section(uri, text, len(text), 512, small, window_lines=(30, 0))
    assert big.entries == ()


def test_names_used_just_below_the_cursor_get_their_definitions(tmp_path, files):
    files(tmp_path, {"pkg/core.py": "def tally_rows(row, weight=1):\n    return row\n",
                     "pkg/app.py": ""})
    text = ("from pkg.core import tally_rows\n\n\ndef main(rows):\n    \n"
            "    return tally_rows(1)\n")
    offset = text.index("    \n") + 4
    related = RelatedContext()
    related.set_roots([tmp_path.as_uri()], replace(CONFIG, context=replace(
        CONFIG.context, workspace=False)))
    definitions_only = replace(CONFIG, context=replace(CONFIG.context, open_files=False))
    got = related.section((tmp_path / "pkg" / "app.py").as_uri(), text, offset, 512,
                          definitions_only, window_lines=(4, 2))
    assert got.entries == (("pkg/core.py", "def tally_rows(row, weight=1):\n    ...\n"),)
