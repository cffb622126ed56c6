"""The import statements a short prompt keeps: those that bind a name its window uses."""

from __future__ import annotations

from lsp_coder.backends.import_use import bound_names, imports_used, statements

PYTHON = ("import os\n"
          "import xml.dom.minidom as dom\n"
          "from . import events, protocols\n"
          "from .signals import (installHandler,\n"
          "                      removeHandler)\n"
          "from .log import logger\n")


def test_a_statement_in_brackets_or_after_a_backslash_is_one():
    assert statements(PYTHON)[3] == ("from .signals import (installHandler,\n"
                                     "                      removeHandler)\n")
    assert statements("from a import b, \\\n    c\nimport d\n") == [
        "from a import b, \\\n    c\n", "import d\n"]
    js = "import {\n  a,\n  b as c,\n} from './x';\nconst y = require('y');\n"
    assert statements(js) == ["import {\n  a,\n  b as c,\n} from './x';\n",
                              "const y = require('y');\n"]


def test_the_names_a_statement_binds():
    assert bound_names("from .log import logger\n") == {"logger"}
    assert bound_names("import xml.dom.minidom as dom\n") == {"xml", "dom", "minidom"}
    assert bound_names("import Foo, { bar as baz } from '@scope/pkg';") == {"Foo", "bar", "baz"}
    assert bound_names("const { a } = require('node:fs');") == {"a"}
    assert bound_names("#include <stdio.h>\n") == set()


def test_only_the_statements_the_window_uses_in_file_order():
    above = "    loop = events.get_event_loop()\n"
    below = "    logger.info('ready')\n"
    assert imports_used(PYTHON, above, below, 1000) == (
        "from . import events, protocols\nfrom .log import logger\n")
    assert imports_used(PYTHON, above, "", 1000) == "from . import events, protocols\n"
    assert imports_used(PYTHON, "x = 1\n", "", 1000) == ""
    assert imports_used("", above, below, 1000) == ""


def test_a_statement_the_window_shows_is_not_repeated():
    above = "from .log import logger\n\nlogger.debug('x')\n"
    assert imports_used(PYTHON, above, "", 1000) == ""


def test_over_the_room_the_last_statements_stay():
    above = "os.sep\ndom.parse\nlogger.info\n"
    assert imports_used(PYTHON, above, "", 1000) == (
        "import os\nimport xml.dom.minidom as dom\nfrom .log import logger\n")
    assert imports_used(PYTHON, above, "", 60) == (
        "import xml.dom.minidom as dom\nfrom .log import logger\n")
    assert imports_used(PYTHON, above, "", 10) == ""
