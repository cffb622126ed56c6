"""`require_program` / `require_or_skip`: a skip with how-to-get on a bare machine, a failure in CI.

Each case runs pytest in a subprocess on a small test file, so the outcome and the exit status
checked are the ones a person (or `.ci/run`) sees.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from tests.conftest import REQUIRE_ALL_ENV

REPO_ROOT = Path(__file__).resolve().parents[1]

CASES = '''
from tests.conftest import require_or_skip, require_program


def test_missing_program():
    require_program("lsp-coder-no-such-program", "get it from the moon")


def test_present_program():
    assert require_program("lsp-coder-fake-client", "unused") == {present!r}


def test_missing_other_thing():
    require_or_skip("no built llama-server; to run this test: build it")
'''


def run_cases(tmp_path: Path, require_all: str | None) -> tuple[int, dict[str, str], str]:
    """Runs the cases with `LSP_CODER_REQUIRE_ALL` set to `require_all` (None: unset).

    Returns (exit status, {test name: "passed" | "skipped: msg" | "failed: msg"}, output).
    """
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    present = bin_dir / "lsp-coder-fake-client"
    present.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    present.chmod(present.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nasyncio_default_fixture_loop_scope = function\n", encoding="utf-8")
    (tmp_path / "test_cases.py").write_text(CASES.format(present=str(present)), encoding="utf-8")
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
               PYTHONPATH=str(REPO_ROOT))
    env.pop(REQUIRE_ALL_ENV, None)
    if require_all is not None:
        env[REQUIRE_ALL_ENV] = require_all
    report = tmp_path / "report.xml"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
         f"--junit-xml={report}", "test_cases.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    outcomes = {}
    for case in ElementTree.parse(report).iter("testcase"):
        outcome = "passed"
        for kind in ("skipped", "failure", "error"):
            found = case.find(kind)
            if found is not None:
                outcome = f"{kind}: {found.get('message')}"
        outcomes[case.get("name")] = outcome
    return done.returncode, outcomes, done.stdout + done.stderr


def test_missing_programs_skip_with_how_to_get_them(tmp_path: Path) -> None:
    """Unset (a bare machine): skipped with the reason, found ones pass, exit status 0."""
    status, outcomes, output = run_cases(tmp_path, None)
    assert status == 0, output
    assert outcomes == {
        "test_missing_program": "skipped: 'lsp-coder-no-such-program' is not on PATH;"
                                " to run this test: get it from the moon",
        "test_present_program": "passed",
        "test_missing_other_thing": "skipped: no built llama-server; to run this test: build it",
    }, output
    assert "SKIPPED" in output and "get it from the moon" in output, output


def test_require_all_turns_skips_into_failures(tmp_path: Path) -> None:
    """`LSP_CODER_REQUIRE_ALL=1` (CI): the same tests fail, and pytest exits with status 1."""
    status, outcomes, output = run_cases(tmp_path, "1")
    assert status == 1, output
    assert outcomes["test_present_program"] == "passed", output
    for name in ("test_missing_program", "test_missing_other_thing"):
        assert outcomes[name].startswith("failure: "), (name, output)
        assert f"{REQUIRE_ALL_ENV}=1" in outcomes[name], (name, output)
    assert "get it from the moon" in outcomes["test_missing_program"], output


def test_require_all_other_than_1_still_skips(tmp_path: Path) -> None:
    """Only the value 1 turns skips into failures."""
    status, outcomes, output = run_cases(tmp_path, "0")
    assert status == 0, output
    assert outcomes["test_missing_program"].startswith("skipped: "), output
