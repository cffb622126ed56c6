"""JavaScript and TypeScript imports followed to the file they name."""

from __future__ import annotations

from dataclasses import replace

from lsp_coder.completion.related import RelatedContext
from lsp_coder.completion.related.js_definitions import resolve
from lsp_coder.completion.related.js_imports import (
    DEFAULT,
    NAMESPACE,
    Binding,
    imports,
    members,
    not_used_yet,
)
from lsp_coder.config import Config

HEAD = """import Cart, { formatPrice, total as sum } from './util/format';
import * as money from "../lib/money";
import type { Item } from './types';
const legacy = require('./legacy');
const { parse, dump: write } = require('./io');
"""

# Two files define formatPrice; the one nearer the document by folder is not the imported one.
FILES = {
    "web/util/format.ts": (
        "export default class Cart {\n  items: number[] = [];\n}\n"
        "export function formatPrice(n: number, currency: string): string {\n"
        "  return currency + n.toFixed(2);\n}\n"
        "export function total(xs: number[]): number {\n  return 0;\n}\n"),
    "web/formatPrice.ts": "export function formatPrice(n: number): string {\n  return '';\n}\n",
    "lib/money.ts": "export const rate = 2;\nexport function convert(n: number, to: string) {\n"
                    "  return n * rate;\n}\n",
    "web/barrel/index.ts": "export { helper } from './impl';\n",
    "web/barrel/impl.ts": "export function helper(level: number): void {\n}\n",
}


def test_every_import_form_binds_its_names():
    for language in ("javascript", "typescript", "tsx"):
        got = imports(language, HEAD)
        assert got.lines == {line.strip() for line in HEAD.splitlines()}
        assert got.bindings == {
            "Cart": Binding(DEFAULT, "./util/format"),
            "formatPrice": Binding("formatPrice", "./util/format"),
            "sum": Binding("total", "./util/format"),
            "money": Binding(NAMESPACE, "../lib/money"),
            "Item": Binding("Item", "./types"),
            "legacy": Binding(NAMESPACE, "./legacy"),
            "parse": Binding("parse", "./io"),
            "write": Binding("dump", "./io"),
        }
    assert imports("python", HEAD).bindings == {}
    # A syntax error costs only the broken statement.
    broken = imports("typescript", "import { broken from './x'\nimport { ok } from './y';\n")
    assert broken.bindings == {"ok": Binding("ok", "./y")}
    assert members(imports("typescript", HEAD).bindings, "x = money.convert(money . rate") == [
        "convert", "rate"]


def test_a_relative_specifier_resolves_like_node_and_typescript(tmp_path, files):
    files(tmp_path, {"src/a.ts": "", "src/b/index.js": "", "src/c.d.ts": "", "src/d.ts": ""})
    document = tmp_path / "src" / "main.ts"
    assert resolve("./a", document) == tmp_path / "src" / "a.ts"
    assert resolve("./b", document) == tmp_path / "src" / "b" / "index.js"
    assert resolve("./c", document) == tmp_path / "src" / "c.d.ts"
    assert resolve("./d.js", document) == tmp_path / "src" / "d.ts"  # ESM TypeScript
    assert resolve("../src/a", document) == tmp_path / "src" / "a.ts"
    assert resolve("react", document) is None
    assert resolve("./missing", document) is None


def test_an_imported_name_shows_the_definition_its_import_names(tmp_path, files):
    files(tmp_path, FILES)
    # No index at all: the imports alone find the files; only the names at the cursor.
    config = replace(Config(), context=replace(Config().context, workspace=False,
                                               unused_imports=False))
    related = RelatedContext()
    related.set_roots([tmp_path.as_uri()], config)
    uri = (tmp_path / "web" / "cart.ts").as_uri()
    head = "import Cart, { formatPrice, total as sum } from './util/format';\n"

    def shown(line: str) -> list[tuple[str, str]]:
        text = head + line
        return list(related.section(uri, text, len(text), 512, config,
                                    window_lines=(text.count("\n"), 0)).entries)

    [(path, body)] = shown("const shown = formatPrice(")
    assert path == "web/util/format.ts" and "currency: string" in body
    [(_, body)] = shown("const all = sum(")  # the alias: the name it is exported as
    assert body.startswith("export function total(xs: number[])")
    [(_, body)] = shown("const cart = new Cart(")  # the default export
    assert body.startswith("export default class Cart")
    namespace = "import * as money from '../lib/money';\n"
    text = namespace + "const y = money.convert("
    [(path, body)] = related.section(uri, text, len(text), 512, config,
                                     window_lines=(1, 0)).entries
    assert path == "lib/money.ts" and body.startswith("export function convert(")


def test_names_imported_and_not_used_yet_are_those_the_text_never_mentions():
    found = imports("typescript", HEAD)
    # Namespaces are left out; the last imported first; a mention anywhere counts as a use.
    assert not_used_yet(found, HEAD) == ["write", "parse", "Item", "sum", "formatPrice", "Cart"]
    code = HEAD + "const c = new Cart();\n// parse later\nconst totalPrice = 1;\n"
    assert not_used_yet(found, code) == ["write", "Item", "sum", "formatPrice"]
    assert not_used_yet(imports("typescript", ""), code) == []
    # A package's names have no file here to show: they take no place among the pending.
    packaged = imports("typescript", "import React, { useState } from 'react';\n" + HEAD)
    assert not_used_yet(packaged, HEAD) == not_used_yet(found, HEAD)


def test_names_not_used_yet_follow_the_names_at_the_cursor_unless_turned_off(tmp_path, files):
    files(tmp_path, FILES)
    on = replace(Config(), context=replace(Config().context, workspace=False))  # the default
    off = replace(on, context=replace(on.context, unused_imports=False))
    uri = (tmp_path / "web" / "cart.ts").as_uri()
    head = "import Cart, { formatPrice, total as sum } from './util/format';\n"

    def shown(text: str, config: Config) -> str:
        related = RelatedContext()
        related.set_roots([tmp_path.as_uri()], config)
        return "".join(body for _, body in related.section(
            uri, text, len(text), 512, config, window_lines=(text.count("\n"), 0)).entries)

    text = head + "const shown = formatPrice(1, 'EUR');\nconst next = "
    assert "class Cart" not in shown(text, off) and "total(" not in shown(text, off)
    body = shown(text, on)
    assert body.index("formatPrice(n") < body.index("total(xs") < body.index("class Cart")
    # Cart used far above the cursor (not one of the names at it): only total is pending.
    used = head + "const c = new Cart();\n" + "// step\n" * 30 + text.removeprefix(head)
    assert "class Cart" not in shown(used, on) and "total(xs" in shown(used, on)
    huge = text + "// filler\n" * 30_000  # past context.max_file_bytes: nothing pending
    assert "total(xs" not in shown(huge, on)


def test_a_re_exported_name_falls_back_to_the_index(tmp_path, files):
    files(tmp_path, FILES)
    config = Config()
    related = RelatedContext()
    related.set_roots([tmp_path.as_uri()], config)
    assert related.index is not None and related.index.wait_ready(60)
    uri = (tmp_path / "web" / "app.ts").as_uri()
    text = "import { helper as help } from './barrel';\nhelp("
    [(path, body)] = related.section(uri, text, len(text), 512, config,
                                     window_lines=(1, 0)).entries
    assert path == "web/barrel/impl.ts" and "level: number" in body


def test_only_the_imports_start_is_parsed_and_code_below_it_changes_nothing():
    head = "import {\n  a,\n  b\n} from './ab';\nconst x = require('./x');\n"
    code = "".join(f"const v{i} = Array.from(a, b);\n" for i in range(2000))
    found = imports("typescript", head + code)
    assert set(found.bindings) == {"a", "b", "x"}
    assert imports("typescript", head + code + "const typed = Array.fr") is found  # no parse
