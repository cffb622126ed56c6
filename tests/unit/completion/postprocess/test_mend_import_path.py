"""An answer's import path that names no file, mended through the workspace the server knows."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from lsp_coder.completion.postprocess import PRE_CACHE, FilterContext, run
from lsp_coder.completion.related import RelatedContext
from lsp_coder.config import Config

CONFIG = Config()
TYPED = "import { NetworkError } from '../"


def _workspace(root: Path) -> str:
    for name in ("src/error/NetworkError.ts", "src/util/x.ts", "src/util/y.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("")
    return (root / "src" / "util" / "x.ts").as_uri()


def _ctx(related: RelatedContext, uri: str, prefix: str, config: Config = CONFIG
         ) -> FilterContext:
    return FilterContext(prefix=prefix, suffix="\n", multiline=False,
                         mend_import_path=related.import_path_mender(uri, prefix.rsplit(
                             "\n", 1)[-1], config))


def test_the_first_line_path_is_mended_before_the_cache(tmp_path):
    uri = _workspace(tmp_path)
    related = RelatedContext()
    related.set_roots([tmp_path.as_uri()], CONFIG)
    try:
        ctx = _ctx(related, uri, "const a = 1;\n" + TYPED)
        assert run(PRE_CACHE, "network/NetworkError.js';\nconst b = 2;", ctx) == (
            "error/NetworkError.js';\nconst b = 2;")
        assert run(PRE_CACHE, "error/NetworkError.js';", ctx) == "error/NetworkError.js';"
        assert _ctx(related, uri, "const a = '../").mend_import_path is None  # no import
        off = replace(CONFIG, context=replace(CONFIG.context, known_members=False))
        assert _ctx(related, uri, TYPED, off).mend_import_path is None
        python = (tmp_path / "src" / "util" / "y.py").as_uri()
        assert run(PRE_CACHE, "network/NetworkError.js'", _ctx(related, python, TYPED)) == (
            "network/NetworkError.js'")  # no JavaScript-family document
    finally:
        related.close()
