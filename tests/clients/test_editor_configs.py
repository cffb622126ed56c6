"""The settings shipped in editors/ are valid lsp-coder config trees (no client needed)."""

from __future__ import annotations

import re
import tomllib

import pytest

from lsp_coder.config import Config, apply
from lsp_coder.config.converter import to_dict
from tests.clients.conftest import REPO_ROOT

pytestmark = pytest.mark.clients

EDITORS = REPO_ROOT / "editors"
HELIX_DEFAULTS = {
    "python": ["ty", "ruff", "jedi", "pylsp"],
    "rust": ["rust-analyzer"],
    "javascript": ["typescript-language-server"],
    "typescript": ["typescript-language-server"],
    "go": ["gopls", "golangci-lint-lsp"],
    "c": ["clangd"],
    "cpp": ["clangd"],
}
"""Helix 25.07's own language-servers lists (its languages.toml) for the languages we ship."""

LSP_CODER_ENTRY = {"name": "lsp-coder", "only-features": ["completion"]}


def server_names(language: dict) -> list[str]:
    """The names in a [[language]] entry's language-servers list, in order."""
    return [s if isinstance(s, str) else s["name"] for s in language["language-servers"]]


def check_appended(before: list, after: list) -> None:
    """`after` is `before` unchanged, in order, with lsp-coder (completion only) appended."""
    assert after[:-1] == before, f"the user's servers changed: {before} -> {after}"
    assert after[-1] == LSP_CODER_ENTRY, after[-1]


def test_helix_languages_toml() -> None:
    """lsp-coder is appended to each language's default servers, with a valid config table."""
    data = tomllib.loads((EDITORS / "helix" / "languages.toml").read_text(encoding="utf-8"))
    server = data["language-server"]["lsp-coder"]
    assert server["command"] == "lsp-coder"
    apply(Config(), server["config"], "helix config")  # raises ConfigError on a bad key
    languages = {lang["name"]: lang for lang in data["language"]}
    assert set(languages) == set(HELIX_DEFAULTS)
    for name, lang in languages.items():
        check_appended(HELIX_DEFAULTS[name], lang["language-servers"])


def test_helix_readme_appends_to_the_users_servers() -> None:
    """The README's before/after example keeps the user's servers and appends lsp-coder; its
    server definition is the file's (a subset of its settings) and a valid config."""
    readme = (EDITORS / "helix" / "README.md").read_text(encoding="utf-8")
    blocks = [tomllib.loads(b) for b in re.findall(r"```toml\n(.*?)```", readme, re.S)]
    assert len(blocks) == 3, blocks
    definition, before, after = blocks
    shipped = tomllib.loads((EDITORS / "helix" / "languages.toml").read_text(encoding="utf-8"))
    ours = definition["language-server"]["lsp-coder"]
    theirs = shipped["language-server"]["lsp-coder"]
    assert ours["command"] == theirs["command"] and ours["timeout"] == theirs["timeout"]
    for table, values in ours["config"].items():
        assert values.items() <= theirs["config"][table].items(), table
    apply(Config(), ours["config"], "helix README")
    (old,), (new,) = before["language"], after["language"]
    assert old["name"] == new["name"]
    assert len(server_names(old)) >= 2, "the example should show a user's own servers"
    check_appended(old["language-servers"], new["language-servers"])


def test_vscode_settings_map_to_server_keys() -> None:
    """Every setting the extension maps (src/settings.ts) names a real key of the server's
    config tree."""
    source = (EDITORS / "vscode" / "src" / "settings.ts").read_text(encoding="utf-8")
    pairs = re.findall(r"\['([\w.]+)', \['(\w+)', '(\w+)'\]\]", source)
    assert len(pairs) >= 5, pairs
    tree = to_dict(Config())
    for setting, table, key in pairs:
        assert key in tree.get(table, {}), f"lspCoder.{setting} maps to unknown {table}.{key}"

