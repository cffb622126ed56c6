"""The open file's import lines above its prompt's window, per language."""

from __future__ import annotations

from pathlib import Path

from lsp_coder.completion.related.import_head import import_head, import_heads
from lsp_coder.completion.related.python_defs import IMPORT_SCAN_CHARS

BODY = "".join(f"value_{i} = compute({i})\n" for i in range(40))


def _head(text: str, path: str, language_id: str = "") -> str:
    window = text.index("value_30")  # the window starts at the 31st body line
    return import_head(text, window, Path(path), language_id)


def test_python_module_level_imports_with_their_continuation_lines():
    text = ('"""Doc.\n\nfrom the start, import this module\n"""\nimport os\n'
            "from .events import (Handle,\n    TimerHandle)\n"
            "import os.path as p, sys  # both\n"
            "from . import \\\n    protocols\nx = 1\n\ndef f():\n    import json\n" + BODY)
    assert _head(text, "pkg/app.py") == ("import os\nfrom .events import (Handle,\n"
                                         "    TimerHandle)\nimport os.path as p, sys  # both\n"
                                         "from . import \\\n    protocols\n")


def test_only_the_imports_above_the_window_count():
    text = "import os\n" + BODY + "import sys\n"
    assert _head(text, "a.py") == "import os\n"
    assert import_head(text, 0, Path("a.py"), "python") == ""
    # a window starting mid-line counts only the whole lines before it
    assert import_head("import os\nimport sys\n", 12, Path("a.py"), "python") == "import os\n"


def test_a_huge_document_is_read_only_at_its_start():
    text = "import os\n" + "x = 1\n" * (IMPORT_SCAN_CHARS // 6) + "import late\n" + BODY
    assert _head(text, "big.py") == "import os\n"


def test_javascript_and_typescript_imports_by_their_parse():
    text = ("// header\nimport {a,\n  b} from './util';\nimport D from 'lib';\n"
            "const fs = require('fs');\nlet n = 1;\n" + BODY)
    expected = "import {a,\n  b} from './util';\nimport D from 'lib';\nconst fs = require('fs');\n"
    assert _head(text, "src/app.ts") == expected
    assert _head(text, "src/app.js") == expected
    # an untitled document: its language id says which
    assert import_head(text, text.index("value_30"), None, "typescriptreact") == expected


def test_c_includes_and_languages_not_read_here():
    text = "#include <stdio.h>\n  # include \"util.h\"\nint n;\n" + BODY
    assert _head(text, "main.c") == "#include <stdio.h>\n  # include \"util.h\"\n"
    assert _head("package main\nimport \"fmt\"\n" + BODY, "main.go") == ""
    assert _head("import os\n" + BODY, "notes.txt", "plaintext") == ""


def test_one_read_gives_each_head_as_a_read_of_the_document_up_to_it():
    texts = {"a.py": ("import os\nfrom .events import (Handle,\n    TimerHandle)\nx = 1\n"
                      "from . import \\\n    protocols\nimport sys\n"),
             "a.ts": ("import {a,\n  b} from './util';\nlet n = 1;\nimport D from 'lib';\n"
                      "const fs = require('fs');\n"),
             "a.c": "#include <stdio.h>\nint n;\n#include \"util.h\"\n"}
    for name, head in texts.items():
        text = head + BODY
        for cut in range(len(head) + 1):
            alone = import_head(text[:cut], cut, Path(name), "")
            assert import_heads(text, (cut, len(text)), Path(name), "") == (
                alone, import_head(text, len(text), Path(name), "")), (name, cut)
