"""Known members: picks after a known qualifier keep to its names, on real vocabularies."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

import numpy as np
import pytest

from lsp_coder.engine.generate_request import GenerateRequest
from lsp_coder.engine.generator import Generator
from lsp_coder.engine.greedy_memory import GreedyMemory
from lsp_coder.engine.llama import Model, ModelParams
from lsp_coder.engine.llama_context import Context, ContextParams
from lsp_coder.engine.member_rule import (
    SPELLED_CHARS,
    SPELLED_NAMES,
    MemberRule,
    constrained_pick,
)
from lsp_coder.engine.prefix_cache.manager import PrefixCache
from lsp_coder.engine.speculative import NGramLookup, PreviousSuggestion

ERRORS = frozenset({"NoBoundaryInMultipartDefect", "MessageDefect", "HeaderParseError"})


@pytest.mark.parametrize(("line", "piece", "allowed"), [
    ("x = errors", ".Missing", False),  # no name starts so
    ("x = errors", ".No", True),
    ("x = errors.No", "Boundary", True),
    ("x = errors.NoBoundaryInMultipartDefect", "()", True),
    ("x = errors.Message", "Defect(", True),
    ("x = errors.MessageDefect", "ive", False),  # past the end of every name
    ("x = errors.Message", "Error", False),
    ("x = errors.", "(", False),  # a dot with no name
    ("x = errors.", "\n", False),
    ("x = a.errors", ".Zed", True),  # another object's attribute
    ("x = myerrors", ".Zed", True),
    ('x = "see errors', ".Zed", True),  # in a string
    ("x = 1  # errors", ".Zed", True),  # in a comment
    ("x = errors.Zz", "q", True),  # the user's own name: not the model's to mend
    ("raise errors.MessageDefect()", " from errors.Bad", False),
    ("x = other", ".Zed", True),  # an unknown qualifier
    ("x = errors.Message", "", False),  # the end (a control token) inside a name
    ("x = errors.MessageDefect", "", True),
])
def test_a_piece_is_allowed_when_the_names_it_writes_can_be_members(line, piece, allowed):
    assert MemberRule({"errors": ERRORS}, "").allows(line, piece) is allowed


def test_the_spellings_go_on_from_the_qualifier_or_the_name_being_written():
    rule = MemberRule({"errors": ERRORS, "email.errors": ERRORS}, "")
    assert rule.spellings("x = y") == []
    after_qualifier = rule.spellings("raise errors")
    assert "." in after_qualifier and ".No" in after_qualifier and ".M" in after_qualifier
    assert all(s.startswith(".") for s in after_qualifier)
    assert rule.spellings("raise errors.Mess") == ["a", "ag", "age", *[
        "age" + "Defect"[:i] for i in range(1, 7)]]
    assert rule.spellings("raise email.errors.HeaderParseErr")[-1] == "or"
    # A whole name may end here: the tokens that end it are looked up too.
    assert {"(", ".", "\n"} <= set(rule.spellings("raise errors.MessageDefect"))
    # A module's dunders only where the name starts so (not a guess for another name).
    dunders = MemberRule({"m": frozenset({"__cached__", "run"})}, "")
    assert dunders.spellings("m.") == ["r", "ru", "run"]
    assert "cached" in dunders.spellings("m.__")
    # And a lone "_" is no start where only dunders begin so: it would lead nowhere.
    assert not dunders.allows("m.", "_") and dunders.allows("m.", "__")
    assert dunders.allows("m._", "x")  # the user's own "_": left alone
    assert rule.spellings('print("errors.') == []


IMPORTED = {"from helpers import": frozenset({"load_config", "save_config", "Loader"})}


@pytest.mark.parametrize(("line", "piece", "allowed"), [
    ("from helpers import", " load", True),
    ("from helpers import", " lod", False),  # no name starts so
    ("    from helpers import", " Lo", True),  # indented (a function's own import)
    ("from helpers import load", "_config,", True),
    ("from helpers import load_conf", "x", False),
    ("from helpers import load_config, ", "save", True),
    ("from helpers import load_config,", " xx", False),
    ("from helpers import (", "\n", True),  # a list on the lines below: not ruled
    ("from helpers import", " *", False),  # the model names what it imports
    ("from helpers import *", "\n", True),  # the user may import them all
    ("from helpers import Loader as", " L", True),  # an alias is the user's to name
    ("from helpers import Load", "", False),  # the end inside a name
    ("from helpers import Loader", "\n", True),
    ("from helpers import Lx", "y", True),  # typed by the user: left alone
    ("from other import", " zz", True),  # a module whose names are not known
    ("from helpers impor", "t", True),
    ("x = helpers.", "zz", True),  # the import's head is no qualifier
    ("from helpers import Loader, ", "Loader", False),  # listed already
    ("from helpers import Loader, ", "load_config", True),
    ("from helpers import Loader,", "\n", False),  # a list cut after its comma
    ("from helpers import Loader, ", " # more", False),
    ("from helpers import Loader, ", "\\\n", True),  # a continued line
    ("from helpers import (Loader,", "\n", True),  # parentheses: the list goes on below
    ("from helpers import (Loader, ", ")", True),
    ("from helpers import Loader", " Hooks", False),  # a second word: no element
    ("from helpers import Loader", " a", True),  # ``as`` being written
    ("from helpers import Loader as", " L, load_config", True),
    ("from helpers import Loader as L", " x", False),
    ("from helpers import (Loader", " x", False),
    ("from helpers import Loader  # the", " loader", True),  # a comment
    ("from helpers import Loader Hooks", " x", True),  # the user's own: left alone
    ("from other import Loader", " Hooks", True),  # a module whose names are not known
])
def test_an_import_list_keeps_to_the_names_its_module_offers(line, piece, allowed):
    assert MemberRule(IMPORTED, "").allows(line, piece) is allowed


def test_the_spellings_of_an_import_list_start_after_its_head_or_a_comma():
    rule = MemberRule(IMPORTED, "")
    assert {" L", " load", " save_config"} <= set(rule.spellings("from helpers import"))
    assert {"l", "save_"} <= set(rule.spellings("from helpers import Loader, "))
    assert rule.spellings("from helpers import load_config as") == []
    assert {",", "\n"} <= set(rule.spellings("from helpers import Loader"))
    assert rule.spellings("from other import") == []
    assert "L" not in rule.spellings("from helpers import Loader, ")  # listed already


def test_a_parenthesized_import_list_is_ruled_over_its_lines():
    rule = MemberRule(IMPORTED, "from helpers import")
    line = rule.line(" (\n    Loader,\n    ")
    assert line == "from helpers import (     Loader,     "
    assert rule.allows(line, "save") and not rule.allows(line, "Loader")
    assert not rule.allows(line, "zz")
    assert rule.line(" (\n    Loader,\n)\nx = ") == "x = "  # closed: lines again
    assert rule.line(" Loader\nx = ") == "x = "


def test_a_module_of_thousands_of_names_spells_a_bounded_few():
    huge = MemberRule({"gen": frozenset(f"name_{i:05d}_{'x' * 30}" for i in range(20_000))}, "")
    spelled = huge.spellings("y = gen.")
    assert len(spelled) <= SPELLED_NAMES * SPELLED_CHARS
    assert huge.allows("y = gen.name_19999", "_x") and not huge.allows("y = gen.name_", "q")


def test_a_refused_pick_gives_way_to_the_best_one_that_spells_a_member(tiny_vocab):
    rule = MemberRule({"errors": ERRORS}, "raise errors.")
    line = rule.line("")
    logits = np.full(tiny_vocab.n_vocab, -10.0, dtype=np.float32)
    invented = tiny_vocab.tokenize("Missing")[0]
    logits[invented] = 10.0
    # Far below the 64 most likely: still found, as a token spelling a member's start.
    no = tiny_vocab.piece_id(b"No")
    assert no is not None
    logits[no] = -5.0
    token, prob = constrained_pick(tiny_vocab, logits, rule, line)
    assert token == no and 0 < prob <= 1
    logits[tiny_vocab.piece_id(b"Message")] = 1.0
    assert constrained_pick(tiny_vocab, logits, rule, line)[0] == tiny_vocab.piece_id(b"Message")
    # The model's own pick stands where the rule allows it.
    logits[no] = 20.0
    assert constrained_pick(tiny_vocab, logits, rule, line) is None


def generator(model, memory=False):
    ctx = Context(model, ContextParams(n_ctx=1024, n_batch=256, n_ubatch=256, n_seq_max=2))
    return Generator(model, PrefixCache(ctx, block_size=16),
                     [PreviousSuggestion(model), NGramLookup(max_k=6)],
                     memory=GreedyMemory() if memory else None)


CODE = "import math\n\n\ndef root(x):\n    return math."
MATH = {"math": frozenset(dir(math))}


@pytest.mark.real_model
def test_the_model_writes_only_names_the_module_offers(real_small_model):
    model = Model(real_small_model, ModelParams())
    try:
        prompt = model.tokenize(CODE)
        free = generator(model).generate(GenerateRequest(prompt=prompt, max_tokens=8))
        assert free.text.startswith("ertan(")  # a name the module does not have
        ruled = GenerateRequest(prompt=prompt, max_tokens=8, members=MATH,
                                line_before="    return math.")
        first = generator(model).generate(ruled)
        name = re.match(r"\w*", first.text).group()
        assert name in MATH["math"] and first.text[len(name)] == "(", first.text
        # Remembered free picks the rule refuses are not recalled; a draft of the free
        # answer (the previous suggestion's hint) is refused where the rule picks otherwise.
        remembering = generator(model, memory=True)
        remembering.generate(GenerateRequest(prompt=prompt, max_tokens=8))
        recalled = remembering.generate(ruled)
        assert recalled.tokens == first.tokens and recalled.stats.known_tokens == 0
        # A draft the target accepts up to a name the rule refuses: the rule's pick there,
        # as without drafts ("1 / math.sqrt(x)" when math has no sqrt).
        no_sqrt = {"math": MATH["math"] - {"sqrt"}}
        before = model.tokenize(CODE.removesuffix("math."))
        plain = generator(model).generate(GenerateRequest(prompt=before, max_tokens=8))
        assert plain.text.startswith("1 / math.sqrt(")
        drafted = generator(model).generate(GenerateRequest(
            prompt=before, max_tokens=8, members=no_sqrt, line_before="    return ",
            hint=plain.tokens))
        assert sum(drafted.stats.draft_accepted.values()) >= 2
        assert drafted.text.startswith("1 / math.") and "sqrt" not in drafted.text
        assert drafted.tokens == generator(model).generate(GenerateRequest(
            prompt=before, max_tokens=8, members=no_sqrt, line_before="    return ",
            speculative=False)).tokens
        # Under token healing ("math" read, "." held back: ".sqrt" spells it) as well.
        healed = generator(model).generate(GenerateRequest(
            prompt=model.tokenize(CODE.removesuffix(".")), max_tokens=8, members=no_sqrt,
            line_before="    return math.", heal="."))
        name = re.match(r"\w*", healed.text).group()
        assert name in no_sqrt["math"] and healed.text[len(name)] == "(", healed.text
        # Sampled requests are the model's own.
        sampled = GenerateRequest(prompt=prompt, max_tokens=8, members=MATH,
                                  line_before="    return math.", temperature=0.01)
        assert generator(model).generate(sampled).text.startswith("ertan(")
    finally:
        model.close()


def test_a_module_path_keeps_to_the_packages_submodules():
    rule = MemberRule({"pkg.util": frozenset({"text"})}, "")
    assert rule.allows("from pkg.util.", "te") and not rule.allows("from pkg.util.", "zz")
    assert rule.spellings("import pkg.util") == [".", ".t", ".te", ".tex", ".text"]
    # Two steps in one answer, where the package one dot further is known too.
    deeper = MemberRule({"pkg": frozenset({"core", "util"}), "pkg.util": frozenset({"text"})}, "")
    assert deeper.allows("from pkg.", "util.te") and not deeper.allows("from pkg.", "util.tx")
    assert not deeper.allows("from pkg.", "utils.te")


class LookedUp(Mapping[str, frozenset[str]]):
    """Known members whose import keys are answered when asked, none listed (as a request's
    ``KnownKeys``)."""

    def __init__(self, keys: dict[str, frozenset[str]]) -> None:
        self.keys = keys

    def __getitem__(self, key: str) -> frozenset[str]:
        return self.keys[key]

    def __iter__(self):
        return iter(())

    def __len__(self) -> int:
        return 0


DEEP = LookedUp({"pkg": frozenset({"core", "sub"}), "pkg.sub": frozenset({"deep"}),
                 "pkg.sub.deep": frozenset({"leaf"}),
                 "from pkg.sub.deep.leaf import": frozenset({"grow", "Tree"}),
                 "from .": frozenset({"models"}), "from .models import": frozenset({"User"})})


@pytest.mark.parametrize(("line", "piece", "allowed"), [
    ("from pkg.", "sub.deep.leaf import grow", True),
    ("from pkg.", "sub.deep.leaves", False),  # the third step of one answer
    ("from pkg.sub.deep.leaf import", " Tree, grow", True),
    ("from pkg.sub.deep.leaf import", " Tree, shrink", False),
    ("import pkg.sub.", "deeper", False),
    ("import os.", "whatever", True),  # no key for it: not the workspace's
    ("x = pkg.", "anything", True),  # not an import: a path key is no qualifier
    ("", "from .models import Users", False),  # an import the model writes on its own
    ("", "from .models import User", True),
])
def test_an_import_is_ruled_by_keys_looked_up_as_it_is_written(line, piece, allowed):
    assert MemberRule(DEEP, "").allows(line, piece) is allowed


def test_the_spellings_of_an_absolute_path_go_on_to_a_submodule():
    rule = MemberRule(DEEP, "")
    assert rule.spellings("from pkg.sub.deep.") == ["l", "le", "lea", "leaf"]
    assert rule.spellings("from pkg.s") == ["u", "ub"]


PATHS = {"import '": frozenset({"./util", "./util/format", "./util/format.js", "./lib/date"})}


@pytest.mark.parametrize(("line", "piece", "allowed"), [
    ("import { x } from './", "util/format';", True),
    ("import { x } from './", "utils", False),  # no such file or folder
    ("import { x } from './util/form", "ax'", False),
    ("import { x } from './util", "'", True),  # a folder with an index
    ("import { x } from './lib/", "date.ts'", False),
    ("const d = require('./", "lib/date')", True),
    ("const d = require('./", "lib/x')", False),
    ('import { x } from "./', "zz", True),  # another quote: no paths known for it
    ("import { x } from './zz", "z'", True),  # typed by the user: left alone
    ("// import { x } from './", "zz", True),  # a comment
    ("x = util.", "zz", True),  # the import key is no qualifier
])
def test_a_relative_import_path_keeps_to_the_files_that_exist(line, piece, allowed):
    assert MemberRule(PATHS, "").allows(line, piece) is allowed


def test_the_spellings_of_a_path_go_on_to_a_file_and_end_with_its_quote():
    rule = MemberRule(PATHS, "")
    assert {"u", "util", "lib/date"} <= set(rule.spellings("import { x } from './"))
    assert {"'", "';", "/format"} <= set(rule.spellings("import { x } from './util"))
    assert rule.spellings("import { x } from './util/format';") == []  # closed


RELATIVE = {"from .": frozenset({"core", "util"}), "from .util.": frozenset({"text"}),
            "from . import": frozenset({"Engine", "core", "util"})}


@pytest.mark.parametrize(("line", "piece", "allowed"), [
    ("from .", "co", True),
    ("from .", "utils", False),  # no module starts so
    ("from .", "cores", False),
    ("from .co", "re import", True),
    ("from .cor", "e.", True),  # a module's own path goes on (unknown to the rule)
    ("from .", "zed.", False),
    ("from .util.", "te", True),
    ("from .util.", "tx", False),
    ("from .", "util.tx", False),  # the second step of one answer
    ("from .", "util.text import", True),
    ("from .", " import", True),  # ``from . import``: no name in the path
    ("from . import", " Eng", True),
    ("from . import", " Missing", False),  # the list's key rules it
    ("from ..", "zz", True),  # no names known for that package
    ("from .", "/core", False),  # no path goes on so
    ("from .core", "(", False),
    ("from .core", "", True),  # the end
    ("from .", "\\", True),  # a line continuation
    ("from ..", "/zz", False),  # past the dots it knows: still no path goes on so
    ("x = 1  # from ..", "/zz", True),
    ("    from .", "zz", False),
    ("x = 1  # from .", "zz", True),  # no import at the line's start
])
def test_a_relative_module_path_keeps_to_its_packages_modules(line, piece, allowed):
    assert MemberRule(RELATIVE, "").allows(line, piece) is allowed


def test_the_spellings_of_a_relative_path_go_on_to_a_module():
    rule = MemberRule(RELATIVE, "")
    assert {"c", "core", "u", "util"} <= set(rule.spellings("from ."))
    assert rule.spellings("from .util.t") == ["e", "ex", "ext"]
    assert {"(", " ", "."} <= set(rule.spellings("from .core"))  # a whole name may end
