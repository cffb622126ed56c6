"""The other files' section: what fills it, its budget, and its stability for the KV cache."""

from __future__ import annotations

import json.decoder
from dataclasses import replace
from pathlib import Path

from lsp_coder.completion.related import RelatedContext, Section
from lsp_coder.completion.related.windows import CLOSED_KEPT
from lsp_coder.config import Config, apply

CONFIG = Config()
APP = "from pkg.core import Engine, scale_value\n\n\ndef main():\n    job = 1\n    "


def context_for(workspace: Path, config: Config = CONFIG) -> RelatedContext:
    related = RelatedContext()
    related.set_roots([workspace.as_uri()], config)
    if related.index is not None:
        assert related.index.wait_ready(60)
    return related


def section(related: RelatedContext, uri: str, text: str, budget: int = 512,
            config: Config = CONFIG, record: bool = True) -> Section:
    """The section for a cursor at the end of ``text``, whose prompt shows all of it."""
    return related.section(uri, text, len(text), budget, config, record,
                           window_lines=(text.count("\n"), 0))


def test_definitions_of_the_names_used_come_in_the_repository_layout(workspace):
    related = context_for(workspace)
    uri = (workspace / "pkg" / "app.py").as_uri()
    assert section(related, uri, APP) == Section()  # nothing imported is used yet
    got = section(related, uri, APP + "engine = Engine(")
    assert got.repo == "proj" and got.path == "pkg/app.py"
    [(path, body)] = got.entries
    assert path == "pkg/core.py" and body.startswith("@dataclass\nclass Engine:")


def test_the_section_stays_the_same_while_typing_and_grows_at_its_end(workspace):
    related = context_for(workspace)
    uri = (workspace / "pkg" / "app.py").as_uri()
    first = section(related, uri, APP + "engine = Engine(")
    for typed in ("engine = Engine('a', ", "engine = Engine('a', speed=2)\n    x = 1",
                  "engine = Engine('a', speed=2)\n    # Engine(\n    "):
        assert section(related, uri, APP + typed) == first
    grown = section(related, uri, APP + "engine = Engine('a')\n    y = scale_value(")
    [(path, body)] = grown.entries
    assert body.startswith(first.entries[0][1])  # the engine stays first: the prefix is kept
    assert "def scale_value(" in body[len(first.entries[0][1]) :]
    # Going back to a line that needs only the first name keeps the grown section.
    assert section(related, uri, APP + "engine = Engine(") == grown


def test_a_preview_does_not_change_the_section_a_request_will_get(workspace):
    related = context_for(workspace)
    uri = (workspace / "pkg" / "app.py").as_uri()
    first = section(related, uri, APP + "engine = Engine(")
    section(related, uri, APP + "y = scale_value(", record=False)
    assert section(related, uri, APP + "engine = Engine(") == first


def test_a_forty_line_chunk_reaches_the_prompt_within_the_budget(tmp_path):
    # The case: 40 lines of json/decoder.py (about 1,300 characters) never fitted.
    source = Path(json.decoder.__file__).read_text().splitlines(keepends=True)
    chunk_text = "".join(source[40:80])
    related = RelatedContext()
    related.opened("file:///lib/decoder.py", chunk_text)
    cursor_text = "".join(source[40:60]) + "    "  # the cursor's lines share its names
    config = apply(CONFIG, {"context": {"definitions": False}}, "t")
    default = section(related, "file:///app/main.py", cursor_text, config.context.budget_tokens,
                      config)
    [(path, body)] = default.entries
    assert path == "decoder.py" and len(body.splitlines()) >= 20
    small = section(related, "file:///app/other.py", cursor_text, 128, config)
    [(_, trimmed)] = small.entries
    assert 0 < len(trimmed) <= 128 * 3 and trimmed in chunk_text


def test_other_languages_get_definitions_from_the_index_nearest_first(tmp_path, files):
    files(tmp_path, {
        "web/util/format.ts": "export function formatPrice(n: number): string {\n"
                              "  return n.toFixed(2);\n}\n",
        "other/format.ts": "export function formatPrice(n: number, c: string): string {\n"
                           "  return c + n;\n}\n",
        "go/price.go": "package go\nfunc formatPrice() {}\n",
    })
    related = context_for(tmp_path)
    uri = (tmp_path / "web" / "cart.ts").as_uri()
    got = section(related, uri, "import { formatPrice } from './util/format';\n"
                                "const shown = formatPrice(")
    [(path, body)] = got.entries
    assert path == "web/util/format.ts" and "formatPrice(n: number): string" in body


def test_each_source_can_be_turned_off_and_a_zero_budget_means_none(workspace):
    related = context_for(workspace)
    related.opened("file:///notes/engine.py", "engine = Engine('x')\nengine.start(1)\n")
    uri = (workspace / "pkg" / "app.py").as_uri()
    text = APP + "engine = Engine('a')\n    engine.start("
    both = section(related, uri, text)
    assert [p for p, _ in both.entries] == ["pkg/core.py", "engine.py"]
    off = replace(CONFIG, context=replace(CONFIG.context, definitions=False, workspace=False))
    assert [p for p, _ in section(RelatedContext(), uri, text, config=off).entries] == []
    related_off = context_for(workspace)
    related_off.opened("file:///notes/engine.py", "engine = Engine('x')\nengine.start(1)\n")
    assert [p for p, _ in section(related_off, uri, text, config=off).entries] == ["engine.py"]
    assert section(related, uri, text, budget=0) == Section()


def test_relevant_last_puts_the_definitions_after_the_similar_windows(workspace):
    text = APP + "engine = Engine('a')\n    engine.start("
    uri = (workspace / "pkg" / "app.py").as_uri()
    last = apply(CONFIG, {"context": {"relevant_last": True,
                                      "pinned": ["pinned.py\nLIMIT = 3"]}}, "t")
    got = {}
    for name, config in (("first", CONFIG), ("last", last)):
        related = context_for(workspace)
        related.opened("file:///notes/engine.py", "engine = Engine('x')\nengine.start(1)\n")
        got[name] = section(related, uri, text, config=config).entries
    assert [p for p, _ in got["first"]] == ["pkg/core.py", "engine.py"]
    assert [p for p, _ in got["last"]] == ["pinned.py", "engine.py", "pkg/core.py"]
    assert dict(got["last"])["pkg/core.py"] == dict(got["first"])["pkg/core.py"]


def test_the_windows_shown_stay_at_the_next_block_unless_it_names_others_far_more():
    # Five open files, one window each; the cursor's lines name them unevenly. A block
    # boundary that lets a fourth window overtake (by a third) keeps the three shown: the
    # section and the prompt behind it stay. A block that names none of them shows what it
    # names.
    def with_files() -> RelatedContext:
        related = RelatedContext()
        for doc, count in {"a": 3, "b": 3, "c": 3, "d": 4, "e": 2}.items():
            related.opened(f"file:///lib/{doc}.py",
                           " + ".join(f"{doc}_{i}" for i in range(count)) + "\n")
        return related

    config = apply(CONFIG, {"context": {"definitions": False}}, "t")
    uri = "file:///app/main.py"
    start = [f"x = {doc}_{i}\n" for doc in "abc" for i in range(3)] + ["x = d_0\n"] * 3
    related = with_files()
    first = section(related, uri, "".join(start), config=config)
    assert [p for p, _ in first.entries] == ["a.py", "b.py", "c.py"]
    more = start + [f"x = d_{i}\n" for i in range(1, 4)] + ["x = e_0\n", "x = e_1\n"] * 2
    assert len(more) > 16  # the next block of lines
    fresh = section(with_files(), uri, "".join(more), config=config)  # no last section
    assert [p for p, _ in fresh.entries] == ["d.py", "a.py", "b.py"]
    assert section(related, uri, "".join(more), config=config) == first
    far = more + ["pass\n"] * 60 + ["x = e_0 + e_1\n"]
    assert [p for p, _ in section(related, uri, "".join(far), config=config).entries] == ["e.py"]


def test_saving_keeps_the_section_and_a_closed_or_changed_file_leaves_it(workspace):
    related = context_for(workspace)
    notes = "file:///notes/engine.py"
    related.opened(notes, "engine = Engine('x')\nengine.start(1)\n")
    app = workspace / "pkg" / "app.py"
    text = APP + "engine = Engine('a')\n    engine.start("
    first = section(related, app.as_uri(), text)
    assert [p for p, _ in first.entries] == ["pkg/core.py", "engine.py"]
    related.saved(app.as_uri(), text)  # the text the request read: nothing changes
    assert section(related, app.as_uri(), text) == first
    related.closed(notes)
    assert [p for p, _ in section(related, app.as_uri(), text).entries] == ["pkg/core.py"]
    core = workspace / "pkg" / "core.py"
    core.write_text(core.read_text().replace("speed: int = 3\n", "speed: int = 4\n"))
    related.files_changed([core])
    [(_, body)] = section(related, app.as_uri(), text).entries
    assert "    speed: int = 4\n" in body and "    speed: int = 3\n" not in body


def test_a_closed_file_stays_a_source_as_saved_until_it_is_gone(tmp_path, files):
    # Outside any workspace folder, with no workspace: only what the user had open counts.
    files(tmp_path, {"notes/engine.py": "engine = Engine('saved')\nengine.start(1)\n"})
    notes = tmp_path / "notes" / "engine.py"
    related = RelatedContext()
    related.opened(notes.as_uri(), "engine = Engine('unsaved')\nengine.start(1)\n")
    app = (tmp_path / "app.py").as_uri()
    text = "engine = Engine('a')\nengine.start("
    [(_, body)] = section(related, app, text).entries
    assert "'unsaved'" in body  # open: the editor's text
    related.closed(notes.as_uri())
    [(path, body)] = section(related, app, text).entries
    assert path == "engine.py" and "'saved'" in body  # closed: the file as saved
    related.opened(notes.as_uri(), "engine = Engine('again')\nengine.start(1)\n")
    [(_, body)] = section(related, app, text).entries  # once, the editor's text again
    assert "'again'" in body
    related.closed(notes.as_uri())
    notes.unlink()
    assert section(related, app, text).entries == ()
    for i in range(CLOSED_KEPT + 1):  # only the last few closed are kept
        other = files(tmp_path, {f"n{i}.py": "engine = Engine('x')\nengine.start(2)\n"})
        related.closed((other / f"n{i}.py").as_uri())
    # Equal windows rank by name, so n0.py would come first were it still kept.
    assert section(related, app, text).entries[0][0] == "n1.py"


def test_a_modules_outline_gets_what_the_similar_windows_leave(workspace):
    related = context_for(workspace)
    # An open document whose lines share the cursor's names: a similar window.
    other = workspace / "pkg" / "other.py"
    other_text = "from pkg import core\n\n\ndef build(job_count, job_name):\n" + "".join(
        f"    job_{i} = core.Engine(job_name, job_count + {i})\n" for i in range(6))
    related.opened(other.as_uri(), other_text)
    app = "from pkg import core\n\n\ndef start(job_count, job_name):\n    x = core."
    got = section(related, (workspace / "pkg" / "app.py").as_uri(), app)
    paths = [path for path, _ in got.entries]
    assert paths == ["pkg/other.py", "pkg/core.py"]
    assert "def scale_value(" in got.entries[1][1]  # the outline of core, after the window


def test_pinned_code_comes_first_and_the_sources_keep_what_is_left(workspace):
    related = context_for(workspace)
    uri = (workspace / "pkg" / "app.py").as_uri()
    pinned = "pkg/core.py\ndef scale_value(x):\n    return x * 2\n"
    config = apply(CONFIG, {"context": {"pinned": [pinned, "no text here"]}}, "test")
    got = section(related, uri, APP + "engine = Engine(", config=config)
    [(path, body)] = got.entries  # the same file: one entry, the pinned code first
    assert path == "pkg/core.py" and got.path == "pkg/app.py"
    assert body.startswith("def scale_value(x):\n    return x * 2\n\n@dataclass\nclass Engine:")
    # with every source off (in-file only), the pinned code alone
    alone = apply(config, {"context": {"definitions": False, "open_files": False}}, "test")
    assert section(context_for(workspace), uri, APP, config=alone).entries == (
        ("pkg/core.py", "def scale_value(x):\n    return x * 2\n"),)


def test_a_first_answers_names_are_looked_up_as_if_typed(workspace):
    related = context_for(workspace)
    uri = (workspace / "pkg" / "app.py").as_uri()
    window = (APP.count("\n"), 0)
    assert section(related, uri, APP) == Section()  # the cursor names nothing imported yet
    found = related.section(uri, APP, len(APP), 512, CONFIG, window_lines=window,
                            first_answer="engine = Engine(")
    [(path, body)] = found.entries
    assert path == "pkg/core.py" and body.startswith("@dataclass\nclass Engine:")
    # An answer that names nothing imported finds nothing; the typed text is what it was.
    assert related.section(uri, APP, len(APP), 512, CONFIG, window_lines=window,
                           first_answer="x = 1") == found  # kept while it serves
    assert section(related, uri, APP + "engine = Engine(") == found


def test_the_section_a_request_last_read_is_held_until_one_reads_the_new_one(workspace):
    related = context_for(workspace)
    uri = (workspace / "pkg" / "app.py").as_uri()
    first = section(related, uri, APP + "engine = Engine(")
    assert related.held(uri, 512, CONFIG) is None  # no request has read a section yet
    related.shown(uri)
    grown = section(related, uri, APP + "engine = Engine('a')\n    y = scale_value(")
    assert grown != first
    assert related.held(uri, 512, CONFIG) == first  # what the cache holds
    assert related.held(uri, 20, CONFIG) is None  # no longer fits the budget
    related.shown(uri)
    assert related.held(uri, 512, CONFIG) == grown
    related.closed(uri)
    assert related.held(uri, 512, CONFIG) is None


def test_a_held_section_never_shows_a_file_excluded_since(workspace):
    related = context_for(workspace)
    uri = (workspace / "pkg" / "app.py").as_uri()
    section(related, uri, APP + "engine = Engine(")
    related.shown(uri)
    excluding = apply(CONFIG, {"context": {"exclude": ["pkg/core.py"]}}, "test")
    assert section(related, uri, APP + "engine = Engine(", config=excluding) == Section()
    assert related.held(uri, 512, excluding) is None
