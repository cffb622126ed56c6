"""Known members over real stdio: after an imported name's dot the model writes a name it offers
(a Python module, a TypeScript enum), in a Python import's list a name its module has, and in
a TypeScript import's relative path a file that exists (one of ``../`` steps mended to the
file of its name), and after a relative Python ``from .`` a module of the package and names
it has."""

from __future__ import annotations

import re

import pytest
from lsprotocol import types

from lsp_coder.completion.related.js_definitions import resolve
from tests.lsp.helpers import end_position, inline, open_doc, start_in_folder

pytestmark = pytest.mark.real_model

AUTHORITY = "export enum AuthorityType {\n  Kerberos7,\n  Saml9,\n}\n"
CLIENT = ("import { AuthorityType } from './authority';\n\n"
          "export function isCloud(kind: AuthorityType): boolean {\n"
          "  return kind === AuthorityType.")
GEOMETRY = ("PI = 3.14159\n\n\ndef circle_area(r):\n    return PI * r * r\n\n\n"
            "def square_area(s):\n    return s * s\n")
APP = "import geometry\n\n\ndef root(x):\n    return geometry."
IMPORTING = "import math\n\nfrom geometry import"
RELATIVE = "import math\n\nfrom .models import User\nfrom ."
DEEP = "import math\n\nfrom shapes.solids."
BELOW_DEEP = "\n\n\ndef crate(side):\n    return volume(side) * EDGES\n"
PATHED = "import { isCloud } from './"
CLIMBING = "import { isCloud } from '../"
SHAPES_NAMES = {"", "geometry", "models", "User", "PI", "circle_area", "square_area"}
"""The names of the package ``shapes`` and of its modules (its path's and its lists')."""
CUBE_NAMES = {"volume", "EDGES"}
"""The names of ``shapes.solids.cube``, the one module of its package."""
WORKSPACE_PATHS = {f"{stem}{suffix}" for stem in ("authority", "client_kinds/index")
                   for suffix in ("", ".js", ".ts")} | {"client_kinds"}


async def _answer(client, uri: str, text: str, language: str, below: str = "") -> str:
    """The first suggestion's text at the end of ``text`` (``below`` after it), opened as
    ``uri``."""
    open_doc(client, uri, text + below, language)
    result = await inline(client, uri, end_position(text))
    assert isinstance(result, types.InlineCompletionList) and result.items, result
    answer = result.items[0].insert_text
    assert isinstance(answer, str)
    return answer


async def _first_name(client, uri: str, text: str = APP, language: str = "python") -> str:
    return re.match(r"\s*([\w.]*)", await _answer(client, uri, text, language)).group(1)


async def _first_line(client, uri: str, text: str, below: str = "") -> str:
    return (await _answer(client, uri, text, "python", below)).split("\n")[0]


async def _first_path(client, uri: str, text: str = PATHED) -> str:
    return re.match(r"[^'\n]*", await _answer(client, uri, text, "typescript")).group()


def _relative_import(line: str) -> set[str]:
    """The module after ``from .`` and the names listed after ``import`` in ``line`` (a line
    continuation after its last comma is none)."""
    module, _, listed = line.partition(" import")
    return {module.strip()} | {name.strip(" \\") for name in listed.split(",")}


def _module_and_list(line: str) -> tuple[str, set[str]]:
    """The module of the import ``line`` goes on with and the names it lists."""
    module, _, listed = line.partition(" import")
    return module.strip(), {name.strip(" \\") for name in listed.split(",")} - {""}


async def test_the_name_after_an_imported_names_dot_is_one_it_offers(tmp_path,
                                                                      real_small_model):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "geometry.py").write_text(GEOMETRY)
    (root / "shapes").mkdir()
    (root / "shapes" / "__init__.py").write_text("")
    (root / "shapes" / "geometry.py").write_text(GEOMETRY)
    (root / "shapes" / "models.py").write_text("class User:\n    pass\n")
    (root / "shapes" / "solids").mkdir()
    (root / "shapes" / "solids" / "__init__.py").write_text("")
    (root / "shapes" / "solids" / "cube.py").write_text(
        "EDGES = 12\n\n\ndef volume(side):\n    return side ** 3\n")
    (root / "authority.ts").write_text(AUTHORITY)
    (root / "client_kinds").mkdir()
    (root / "client_kinds" / "index.ts").write_text("export const KINDS = 2;\n")
    # No definitions or windows in the prompt: the model knows nothing of geometry.py but
    # what the rule lets it write.
    client = await start_in_folder(
        root, real_small_model,
        completion={"debounce_ms": 0, "max_tokens": 12, "inline_budget_ms": 0,
                    "min_confidence": 0.0},
        context={"definitions": False, "open_files": False, "workspace": False})
    try:
        ruled = await _first_name(client, (root / "app.py").as_uri())
        assert ruled in ("PI", "circle_area", "square_area", "__name__"), ruled
        enum = await _first_name(client, (root / "client.ts").as_uri(), CLIENT, "typescript")
        assert enum in ("Kerberos7", "Saml9"), enum
        listed = await _first_name(client, (root / "lists.py").as_uri(), IMPORTING)
        assert listed in ("PI", "circle_area", "square_area"), listed
        pathed = await _first_path(client, (root / "paths.ts").as_uri())
        assert pathed in WORKSPACE_PATHS, pathed
        # After ../ the model writes utils (no such file there): mended to the one utils.
        (root / "web" / "lib").mkdir(parents=True)
        (root / "web" / "lib" / "utils.ts").write_text("export const isCloud = 1;\n")
        climbing = root / "web" / "app" / "paths3.ts"
        climbed = await _first_path(client, climbing.as_uri(), CLIMBING)
        assert resolve("../" + climbed, climbing) is not None, climbed
        assert climbed == "lib/utils", climbed
        ruled_line = await _first_line(client, (root / "shapes" / "area.py").as_uri(), RELATIVE)
        assert _relative_import(ruled_line) <= SHAPES_NAMES, ruled_line
        deep_line = await _first_line(client, (root / "deep.py").as_uri(), DEEP, BELOW_DEEP)
        module, names = _module_and_list(deep_line)
        assert module == "cube" and names and names <= CUBE_NAMES, deep_line
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"context": {"known_members": False}}))
        free = await _first_name(client, (root / "app2.py").as_uri())
        assert free not in ("PI", "circle_area", "square_area"), free  # sqrt, as for math
        free = await _first_name(client, (root / "client2.ts").as_uri(), CLIENT, "typescript")
        assert free not in ("Kerberos7", "Saml9"), free
        free = await _first_name(client, (root / "lists2.py").as_uri(), IMPORTING)
        assert free not in ("PI", "circle_area", "square_area"), free
        free = await _first_path(client, (root / "paths2.ts").as_uri())
        assert free not in WORKSPACE_PATHS, free  # isCloud, the name it imports
        free = await _first_path(client, (root / "web" / "app" / "paths4.ts").as_uri(),
                                 CLIMBING)
        assert resolve("../" + free, climbing) is None, free  # not mended
        free = await _first_line(client, (root / "shapes" / "area2.py").as_uri(), RELATIVE)
        assert not _relative_import(free) <= SHAPES_NAMES, free  # serializers, UserSerializer
        free = await _first_line(client, (root / "deep2.py").as_uri(), DEEP, BELOW_DEEP)
        module, names = _module_and_list(free)
        assert module != "cube" or not names <= CUBE_NAMES, free  # cube import cube
        errors = [m for m in client.messages if m.type == types.MessageType.Error]
        assert not errors, errors
    finally:
        await client.shutdown_session()
        await client.stop()
