"""The release workflow cannot run here: it is linted, and what it must do is checked."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
RELEASE = ROOT / ".github" / "workflows" / "release.yml"


def tool(name: str) -> str:
    # The test extra installs both into this interpreter's environment.
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    assert found, f"{name} is missing: pip install -e '.[test]'"
    return found


def test_zizmor_finds_nothing_in_the_workflows():
    result = subprocess.run([tool("zizmor"), "--offline", "--no-progress", *map(str, WORKFLOWS)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_workflows_match_githubs_schema():
    result = subprocess.run([tool("check-jsonschema"), "--builtin-schema",
                             "vendor.github-workflows", *map(str, WORKFLOWS)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_tag_builds_tests_and_publishes_the_three_artifacts():
    workflow = yaml.safe_load(RELEASE.read_text())
    assert workflow[True]["push"]["tags"] == ["v*"]  # YAML 1.1 reads the key `on` as True
    assert workflow["permissions"] == {}
    jobs = workflow["jobs"]
    steps = {name: "\n".join(json.dumps(s) for s in job["steps"]) for name, job in jobs.items()}
    assert "python -m build" in steps["build"] and "vsce package" in steps["build"]
    assert set(jobs["test-python"]["strategy"]["matrix"]["dist"]) == {"wheel", "sdist"}
    for publish in ("publish-pypi", "publish-vsix"):
        assert set(jobs[publish]["needs"]) == {"test-python", "test-vsix"}
    assert jobs["publish-pypi"]["permissions"] == {"id-token": "write"}  # trusted publishing
    assert "pypa/gh-action-pypi-publish@" in steps["publish-pypi"]
    assert "vsce@" in steps["publish-vsix"] and "ovsx@" in steps["publish-vsix"]
    assert "secrets.VSCE_PAT" in steps["publish-vsix"] and "secrets.OVSX_PAT" in steps[
        "publish-vsix"]


def test_the_extension_is_ready_for_the_marketplaces():
    package = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text())
    assert "private" not in package
    for key in ("publisher", "license", "icon", "categories", "engines", "version"):
        assert package.get(key), key
    icon = ROOT / "editors" / "vscode" / package["icon"]
    assert icon.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = (int.from_bytes(icon.read_bytes()[i:i + 4], "big") for i in (16, 20))
    assert width == height >= 128  # the Marketplace asks for at least 128x128
    with open(ROOT / "pyproject.toml", "rb") as f:
        assert tomllib.load(f)["project"]["version"] == package["version"]
    assert (ROOT / "LICENSE").is_file() and (ROOT / "CHANGELOG.md").is_file()
