"""Serving engines get the same other files, in the model family's repository format."""

from __future__ import annotations

from lsp_coder.backends.fim_text import FAMILIES, build
from lsp_coder.prompt_parts import PromptParts

EXTRA = (("pkg/core.py", "def scale(x):\n    ...\n"),)


def parts(extra, path: str) -> PromptParts:
    return PromptParts(extra, "a\n", "b", "\n", "", "proj", path)


def test_qwen_and_starcoder_use_their_repository_tokens():
    assert build(FAMILIES["qwen"], parts(EXTRA, "pkg/app.py")) == (
        "<|repo_name|>proj\n<|file_sep|>pkg/core.py\ndef scale(x):\n    ...\n"
        "<|file_sep|>pkg/app.py\n<|fim_prefix|>a\n<|fim_suffix|>\n<|fim_middle|>b")
    assert build(FAMILIES["starcoder"], parts(EXTRA, "m.py")).startswith(
        "<repo_name>proj\n<file_sep>pkg/core.py\ndef scale(x):\n    ...\n<file_sep>m.py\n"
        "<fim_prefix>a\n")


def test_codellama_gets_path_comments_and_no_other_files_means_no_header():
    assert build(FAMILIES["codellama"], parts(EXTRA, "main.go")) == (
        "# pkg/core.py\ndef scale(x):\n    ...\n// main.go\n<PRE> a\n <SUF>\n <MID>b")
    assert build(FAMILIES["qwen"], parts((), "m.py")) == (
        "<|fim_prefix|>a\n<|fim_suffix|>\n<|fim_middle|>b")


def test_the_open_files_imports_start_its_window():
    with_imports = PromptParts((), "a\n", "b", "\n", imports="import os\n")
    assert build(FAMILIES["qwen"], with_imports) == (
        "<|fim_prefix|>import os\na\n<|fim_suffix|>\n<|fim_middle|>b")


def test_the_cursor_lines_indentation_goes_before_the_suffix():
    indented = PromptParts((), "def f(x):\n", "    return", "\n")
    assert build(FAMILIES["qwen"], indented) == (
        "<|fim_prefix|>def f(x):\n    <|fim_suffix|>\n<|fim_middle|>return")
    recent = PromptParts((), "", "    return", "\n", "def f(x):\n")
    assert build(FAMILIES["qwen"], recent) == (
        "<|fim_prefix|><|fim_suffix|>\n<|fim_middle|>def f(x):\n    return")
