"""``lsp-coder bench reuse`` on the tiny model: every key's prompt read, the short prompts'
front kept while the user types."""

from __future__ import annotations

import argparse
import json

from lsp_coder.bench.prompt_reuse import LARGE_READ, run_prompt_reuse
from lsp_coder.client.trace import cut_lines

HEAD = "import json\nfrom os import path\n\n\n"
TARGET = ("def parse(raw):\n    size = len(raw)\n    data = json.loads(raw)\n"
          "    text = json.dumps(data)\n    return path.basename(text)\n\n\n")


def step(i: int) -> str:
    return f"def step_{i}(x):\n    y = x + {i}\n    return path.join(str(y), 'a')\n\n\n"


SOURCE = HEAD + "".join(step(i) for i in range(36)) + TARGET + "".join(
    step(i) for i in range(36, 60))
"""A long module whose typed lines (``make_trace``'s cut, 60 % of the way down) are the first
in the window to use ``json``."""


def args_for(tmp_path, model, files, cold_ms, branches=False):
    return argparse.Namespace(files=files, model=str(model), draft="none", lines=3,
                              max_tokens=1, time_box=0, settings=[], out=tmp_path / "out",
                              cold_ms=cold_ms, token_ms=10.0, branches=branches)


def test_every_key_reads_its_prompt_and_the_short_prompts_front_stays(tiny_qwen, tmp_path,
                                                                      capsys):
    assert cut_lines(SOURCE, 3)[1].startswith("    data = json.loads(raw)\n")
    source = tmp_path / "proj" / "long.py"
    source.parent.mkdir()
    source.write_text(SOURCE)
    runs = {}
    for cold_ms in (1500, 0):
        runs[cold_ms] = run_prompt_reuse(args_for(tmp_path, tiny_qwen, [source], cold_ms))
        assert json.loads((tmp_path / "out" / "reuse.json").read_text()) == runs[cold_ms]
    printed = capsys.readouterr().out
    assert "long.py" in printed and "from cache" in printed
    short, full = runs[1500], runs[0]
    # The same keys both ways; short prompts where the full one is not read within 1.5 s at
    # the pinned 10 ms a token, full prompts with cold_prompt_ms = 0.
    kinds = [k["kind"] for k in short["keys"]]
    assert kinds == [k["kind"] for k in full["keys"]]
    assert kinds[0] == "open" and kinds.count("enter") >= 2 and "mid" in kinds
    assert all(k["short_prompt"] for k in short["keys"])
    assert not any(k["short_prompt"] for k in full["keys"])
    assert short["keys"][0]["read_tokens"] < full["keys"][0]["read_tokens"]
    # After the first key the short prompts read what the key changed and what follows it:
    # the Enter after `data = json.loads(raw)` keeps the lines before the window as they
    # were, though a prompt built afresh would put `import json` there.
    assert all(k["read_tokens"] <= LARGE_READ for k in short["keys"][1:]), short["keys"]
    for run in (short, full):
        total = run["files"]["all"]
        assert total["read_tokens"] == sum(k["read_tokens"] for k in run["keys"])
        assert total["large_reads"] == sum(k["read_tokens"] > LARGE_READ for k in run["keys"])
        assert total["read_tokens"] < total["prompt_tokens"] // 10


def test_with_branches_the_enters_find_their_prompts_read(tiny_qwen, tmp_path):
    # --branches: idle work's Enter branch is read in full after each key at a line's end,
    # and counted apart; every Enter then reads only the token its answer starts from.
    source = tmp_path / "proj" / "long.py"
    source.parent.mkdir()
    source.write_text(SOURCE)
    run = run_prompt_reuse(args_for(tmp_path, tiny_qwen, [source], 1500, branches=True))
    enters = [k for k in run["keys"] if k["kind"] == "enter"]
    branches = [k for k in run["keys"] if k["kind"] == "branch"]
    assert len(enters) >= 2 and all(k["read_tokens"] <= 2 for k in enters), enters
    assert branches and all(k["read_tokens"] <= LARGE_READ for k in branches)
    total = run["files"]["all"]
    assert total["keys"] == len(run["keys"]) - len(branches)
    assert total["branches"] == len(branches)
    assert total["branch_read_tokens"] == sum(k["read_tokens"] for k in branches)
    assert total["read_by_kind"]["enter"] == sum(k["read_tokens"] for k in enters)
