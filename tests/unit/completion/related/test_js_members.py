"""JavaScript and TypeScript: the names an imported binding offers after its dot."""

from __future__ import annotations

from pathlib import Path

from lsp_coder.completion.related.js_imports import imports
from lsp_coder.completion.related.js_members import EXPORTS, ScriptMembers, file_members

AUTHORITY = b"""export enum AuthorityType { Default, Adfs = 1, "Quoted" = 2, "not-a-name" = 3 }
export const Headers = { METADATA: 'x', 'quoted-key': 1, short, build() {} } as const;
const Frozen = Object.freeze({ A: 1 });
const Spread = { ...other, B: 2 };
const Computed = { [key]: 1 };
export { Frozen, Spread, Computed, Other as Renamed };
export * as helpers from './helpers';
export function bar() {}
export type Kind = string;
export interface Shape {}
"""


def test_enums_and_object_literals_offer_their_keys_and_a_file_its_exports():
    found = file_members("typescript", AUTHORITY).names
    assert found["AuthorityType"] == {"Default", "Adfs", "Quoted"}
    assert found["Headers"] == {"METADATA", "short", "build"}
    assert found["Frozen"] == {"A"}
    assert "Spread" not in found and "Computed" not in found  # not all keys are known
    assert found[EXPORTS] == {"AuthorityType", "Headers", "Frozen", "Spread", "Computed",
                              "Renamed", "helpers", "bar", "Kind", "Shape"}


def test_a_file_whose_exports_its_text_cannot_show_offers_no_export_list():
    assert EXPORTS not in file_members("typescript", AUTHORITY + b"export * from './z';\n").names
    assert file_members("javascript", b"const A = {x: 1};\nmodule.exports = { A };\n").names == {}
    assert file_members("javascript", b"exports.run = () => 1;\n").names == {}
    destructured = file_members("javascript", b"export const { a, b } = make();\n").names
    assert EXPORTS not in destructured


def test_imported_bindings_offer_what_their_files_declare(tmp_path: Path):
    (tmp_path / "authority.ts").write_bytes(AUTHORITY)
    (tmp_path / "plain.js").write_text("module.exports = { run() {} };\n")
    document = tmp_path / "client.ts"
    head = ("import { AuthorityType as Kind, Headers, bar } from './authority';\n"
            "import * as authority from './authority';\nimport * as plain from './plain';\n"
            "import React from 'react';\nconst x = Kind.")
    found = ScriptMembers(262_144).find(imports("typescript", head).bindings, document, 0)
    assert set(found) == {"Kind", "Headers", "authority"}  # bar is a function
    assert found["Kind"] == {"Default", "Adfs", "Quoted"}
    assert "AuthorityType" in found["authority"]
    refused = ScriptMembers(262_144, allows=lambda path: path.name != "authority.ts")
    assert refused.find(imports("typescript", head).bindings, document, 0) == {}


def test_a_file_open_in_the_editor_also_offers_its_unsaved_members(tmp_path: Path):
    authority = tmp_path / "authority.ts"
    authority.write_bytes(AUTHORITY)
    document = tmp_path / "client.ts"
    bindings = imports("typescript", "import { AuthorityType } from './authority';\n").bindings
    members = ScriptMembers(262_144)
    unsaved = {authority: AUTHORITY.decode().replace("Adfs = 1,", "Adfs = 1, Ciam = 4,")}
    assert "Ciam" in members.find(bindings, document, 0, unsaved)["AuthorityType"]
    assert "Ciam" not in members.find(bindings, document, 0)["AuthorityType"]
    spread = {authority: "export const AuthorityType = { ...base };\n"}
    assert members.find(bindings, document, 0, spread) == {}
