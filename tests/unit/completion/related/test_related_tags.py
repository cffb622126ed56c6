"""Definitions of the languages other than Python, by tree-sitter tag queries."""

from __future__ import annotations

import pytest

from lsp_coder.completion.related import tags

SAMPLES = {
    "javascript": ("lib.js", "// Adds.\nexport function addTotals(a, b) {\n  return a + b;\n}\n",
                   "addTotals", "function addTotals(a, b)"),
    "typescript": ("lib.ts", "export interface Shape {\n  area(): number;\n}\n"
                   "export function makeShape(n: number): Shape {\n  return null;\n}\n",
                   "makeShape", "function makeShape(n: number): Shape"),
    "go": ("lib.go", "package lib\n\n// Sum adds.\nfunc SumAll(xs []int) int {\n\treturn 0\n}\n",
           "SumAll", "func SumAll(xs []int) int"),
    "rust": ("lib.rs", "/// Adds.\npub fn sum_all(xs: &[i32]) -> i32 {\n    0\n}\n", "sum_all",
             "pub fn sum_all(xs: &[i32]) -> i32"),
    "c": ("lib.h", "int sum_all(const int *xs, int n) {\n  return 0;\n}\n", "sum_all",
          "int sum_all(const int *xs, int n)"),
    "cpp": ("lib.cpp", "class Counter {\n public:\n  int next();\n};\n", "Counter",
            "class Counter"),
    "java": ("Lib.java", "public class Lib {\n  public int sumAll(int[] xs) {\n    return 0;\n"
             "  }\n}\n", "sumAll", "public int sumAll(int[] xs)"),
    "lua": ("lib.lua", "local function sum_all(xs)\n  return 0\nend\n", "sum_all",
            "function sum_all(xs)"),
    "bash": ("lib.sh", "sum_all() {\n  echo 0\n}\n", "sum_all", "sum_all()"),
    "python": ("lib.py", "def sum_all(xs):\n    return 0\n", "sum_all", "def sum_all(xs)"),
}


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_each_covered_language_finds_and_renders_its_definitions(language):
    name, source, defined, shown = SAMPLES[language]
    assert tags.language_of("." + name.rsplit(".", 1)[1]) == language
    found = tags.definitions(language, source.encode())
    tag = next(t for t in found if t.name == defined)
    text = tags.render(tag, source.splitlines(keepends=True), found)
    assert shown in text


def test_a_long_definition_shows_its_signature_and_members_not_its_body():
    methods = "".join(f"  method{i}(x) {{\n    return x + {i};\n  }}\n" for i in range(10))
    source = f"/** A stack. */\nclass Stack {{\n{methods}}}\n"
    found = tags.definitions("javascript", source.encode())
    cls = next(t for t in found if t.name == "Stack")
    text = tags.render(cls, source.splitlines(keepends=True), found)
    assert text.startswith("/** A stack. */\nclass Stack {\n")
    assert "  method9(x) {\n" in text and "return x" not in text and text.endswith("}\n")


def test_a_syntax_error_costs_only_the_broken_definition():
    source = b"function good(a) {\n  return a;\n}\nfunction broken(a {\n  return\n"
    assert "good" in {t.name for t in tags.definitions("javascript", source)}
