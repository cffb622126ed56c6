"""Serving engines get the same other files, in the model family's repository format."""

from __future__ import annotations

from lsp_coder.backends.fim_text import FAMILIES, build

EXTRA = (("pkg/core.py", "def scale(x):\n    ...\n"),)


def test_qwen_and_starcoder_use_their_repository_tokens():
    assert build(FAMILIES["qwen"], EXTRA, "a\n", "b", "\n", "", "proj", "pkg/app.py") == (
        "<|repo_name|>proj\n<|file_sep|>pkg/core.py\ndef scale(x):\n    ...\n"
        "<|file_sep|>pkg/app.py\n<|fim_prefix|>a\n<|fim_suffix|>\n<|fim_middle|>b")
    assert build(FAMILIES["starcoder"], EXTRA, "a\n", "b", "\n", "", "proj", "m.py").startswith(
        "<repo_name>proj\n<file_sep>pkg/core.py\ndef scale(x):\n    ...\n<file_sep>m.py\n"
        "<fim_prefix>a\n")


def test_codellama_gets_path_comments_and_no_other_files_means_no_header():
    assert build(FAMILIES["codellama"], EXTRA, "a\n", "b", "\n", "", "proj", "main.go") == (
        "# pkg/core.py\ndef scale(x):\n    ...\n// main.go\n<PRE> a\n <SUF>\n <MID>b")
    assert build(FAMILIES["qwen"], (), "a\n", "b", "\n", "", "proj", "m.py") == (
        "<|fim_prefix|>a\n<|fim_suffix|>\n<|fim_middle|>b")
