"""``[backend]``: its keys, the FIM template forms, and the prompt pieces fitted to budgets."""

from __future__ import annotations

import pytest

from lsp_coder.backends.fim_text import FAMILIES, TemplateError, build, resolve
from lsp_coder.backends.remote_fit import fit_parts
from lsp_coder.config import Config, ConfigError, FimStrings, apply
from lsp_coder.prompt_parts import PromptBudget, PromptParts


def test_backend_defaults_to_the_local_engine():
    assert Config().backend.kind == "local"


def test_fim_template_takes_a_family_or_a_table_of_strings():
    named = apply(Config(), {"backend": {"kind": "openai", "fim_template": "starcoder"}}, "t")
    assert resolve(named.backend.fim_template) == FAMILIES["starcoder"]
    explicit = apply(Config(), {"backend": {"fim_template": {
        "prefix": "<a>", "suffix": "<b>", "middle": "<c>"}}}, "t")
    assert explicit.backend.fim_template == FimStrings(prefix="<a>", suffix="<b>", middle="<c>")
    assert resolve(explicit.backend.fim_template).middle == "<c>"


@pytest.mark.parametrize("layer,key", [
    ({"kind": "vllm"}, "kind"),
    ({"fim_template": 3}, "fim_template"),
    ({"fim_template": {"prefix": "<a>", "bogus": "x"}}, "bogus"),
    ({"timeout_ms": "fast"}, "timeout_ms"),
    ({"headers": {"X": 1}}, "headers"),
])
def test_bad_backend_settings_name_the_key(layer, key):
    with pytest.raises(ConfigError, match=key):
        apply(Config(), {"backend": layer}, "initializationOptions")


def test_unknown_family_says_which_ones_exist():
    with pytest.raises(TemplateError, match="codellama"):
        resolve("gpt")
    with pytest.raises(TemplateError, match="middle"):
        resolve(FimStrings(prefix="<a>", suffix="<b>"))


def test_prompt_grows_only_at_its_end_while_typing_on_a_line():
    template = FAMILIES["qwen"]
    other = (("b.py", "B = 2\n"),)
    before = build(template, PromptParts(other, "def f():\n", "    ret", "\n"))
    after = build(template, PromptParts(other, "def f():\n", "    retu", "\n"))
    assert after.startswith(before)


def count_words(text: str) -> int:
    return len(text.split())


def test_fit_parts_trims_whole_window_steps_from_the_far_ends():
    above = "".join(f"a{i} x\n" for i in range(40))  # 80 words
    suffix = "".join(f"b{i} y\n" for i in range(40))
    parts = PromptParts((("u.py", "one two"), ("v.py", "three four five")), above, "z", suffix)
    fitted = fit_parts(parts, count_words, PromptBudget(prefix=50, suffix=48, extra=6))
    assert fitted.above.endswith("a39 x\n") and count_words(fitted.above) <= 49
    assert fitted.above.startswith("a16 x\n")  # 16 lines dropped at a time, never fewer
    assert fitted.suffix.startswith("b0 y\n") and fitted.suffix.endswith("b23 y\n")
    assert fitted.extra == (("u.py", "one two"),)
    assert fitted.line_prefix == "z"


def test_fit_parts_holds_the_files_imports_to_a_quarter_of_the_prefix_first():
    above = "".join(f"a{i} x\n" for i in range(40))  # 80 words
    imports = "".join(f"import m{i}\n" for i in range(10))  # 20 words
    parts = PromptParts((), above, "z", "\n", imports=imports)
    fitted = fit_parts(parts, count_words, PromptBudget(prefix=50, suffix=48, extra=0))
    assert fitted.imports == "".join(f"import m{i}\n" for i in range(6))  # 12 of 50 // 4
    assert count_words(fitted.imports) + count_words(fitted.above) <= 49
    # 37 words left: 16 lines dropped leave 48, 32 leave 16
    assert fitted.above.endswith("a39 x\n") and fitted.above.startswith("a32 x\n")
