"""The settings shipped in editors/ are valid lsp-coder config trees (no client needed)."""

from __future__ import annotations

import re
import tomllib

import pytest

from lsp_coder.config import Config, apply, to_dict
from tests.clients.conftest import REPO_ROOT

pytestmark = pytest.mark.clients

EDITORS = REPO_ROOT / "editors"
HELIX_LANGUAGES = ("python", "rust", "javascript", "typescript", "go", "c", "cpp")


def test_helix_languages_toml() -> None:
    """lsp-coder is added next to each language's own server, with a valid config table."""
    data = tomllib.loads((EDITORS / "helix" / "languages.toml").read_text(encoding="utf-8"))
    server = data["language-server"]["lsp-coder"]
    assert server["command"] == "lsp-coder"
    apply(Config(), server["config"], "helix config")  # raises ConfigError on a bad key
    languages = {lang["name"]: lang for lang in data["language"]}
    assert set(languages) == set(HELIX_LANGUAGES)
    for name, lang in languages.items():
        names = [s if isinstance(s, str) else s["name"] for s in lang["language-servers"]]
        assert "lsp-coder" in names, name
        assert len(names) > 1, f"{name}: the language's own server was dropped"


def test_vscode_settings_map_to_server_keys() -> None:
    """Every setting extension.ts maps names a real key of the server's config tree."""
    source = (EDITORS / "vscode" / "src" / "extension.ts").read_text(encoding="utf-8")
    pairs = re.findall(r"\['([\w.]+)', \['(\w+)', '(\w+)'\]\]", source)
    assert len(pairs) >= 5, pairs
    tree = to_dict(Config())
    for setting, table, key in pairs:
        assert key in tree.get(table, {}), f"lspCoder.{setting} maps to unknown {table}.{key}"

