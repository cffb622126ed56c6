"""The FIM prompt keeps its start while the user types on a line (so the KV cache keeps it)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from lsp_coder.backends.local_prompt import FimTemplate, _fit_above, build_prompt
from lsp_coder.completion.context import split_document
from lsp_coder.prompt_parts import PromptParts, whole_levels


def _tokenize(text: str) -> list[int]:
    return [ord(c) for c in text]  # one token per character: 3x over the char estimate


def test_typing_on_a_line_keeps_a_long_prompts_start():
    """A window above larger than the token budget drops whole lines, never a token per key."""
    above = "".join(f"value_{i} = compute({i})\n" for i in range(200))
    prompts = []
    for typed in ("    ", "    r", "    re", "    ret", "    retu"):
        parts = PromptParts((), above, typed, "\n")
        prompts.append(build_prompt(FimTemplate(1, 2, 3), parts, _tokenize,
                                    lambda t: "".join(map(chr, t)), prefix_tokens=1000,
                                    suffix_tokens=100, extra_tokens=0).tokens)
    first = prompts[0][: prompts[0].index(2)]
    assert len(first) <= 1000
    for prompt in prompts[1:]:
        assert prompt[: len(first)] == first


def test_the_cursor_lines_indentation_ends_the_prefix_and_its_code_follows_the_middle():
    """As in the plain prompt, a blank line's indentation comes before the suffix and nothing
    is healed; the code typed on the line goes after the middle token, so it only appends."""
    detok = lambda t: "".join(map(chr, t))  # noqa: E731
    above = "def mean(values):\n    if values:\n"
    prompts = [build_prompt(FimTemplate(1, 2, 3), PromptParts((), above, typed, "\n"), _tokenize,
                            detok, prefix_tokens=1000, suffix_tokens=100, extra_tokens=0)
               for typed in ("        ", "        r", "        re", "        ret")]
    blank = prompts[0]
    assert detok(blank.tokens) == "\x01def mean(values):\n    if values:\n        \x02\n\x03"
    assert blank.heal == ""
    for prompt, code in zip(prompts[1:], ("", "r", "re")):
        assert prompt.tokens[: len(blank.tokens)] == blank.tokens
        assert detok(prompt.tokens[len(blank.tokens) :]) == code
    assert prompts[-1].heal == "t"
    tabs = build_prompt(FimTemplate(1, 2, 3), PromptParts((), "\tif x:\n", "\t\tx = ", "\n"),
                        _tokenize, detok, prefix_tokens=1000, suffix_tokens=100, extra_tokens=0)
    assert detok(tabs.tokens).endswith("\t\t\x02\n\x03x =") and tabs.heal == " "
    # A line above of thousands of spaces: the cursor line's indentation like it keeps a
    # quarter of the prefix budget of them.
    deep = " " * 5000
    wide = build_prompt(FimTemplate(1, 2, 3), PromptParts((), deep + "y\n", deep + "x", "\n"),
                        _tokenize, detok, prefix_tokens=1000, suffix_tokens=100, extra_tokens=0)
    assert detok(wide.tokens).endswith(" " * 250 + "\x02\n\x03")
    assert len(wide.tokens) <= 1000 + 100 + 3
    # At the end of a file with no last newline (nothing after the cursor) all of it goes
    # after the middle token.
    end = build_prompt(FimTemplate(1, 2, 3), PromptParts((), above, "    ", ""), _tokenize,
                       detok, prefix_tokens=1000, suffix_tokens=100, extra_tokens=0)
    assert detok(end.tokens) == "\x01" + above + "\x02\x03   " and end.heal == " "
    # With recent lines after the middle token the whole cursor line goes there too.
    recent = build_prompt(FimTemplate(1, 2, 3), PromptParts((), "", "    r", "\n", above),
                          _tokenize, detok, prefix_tokens=1000, suffix_tokens=100,
                          extra_tokens=0)
    assert detok(recent.tokens) == "\x01\x02\n\x03" + above + "    "


def test_only_whole_levels_of_indentation_go_before_the_suffix():
    """Alignment and a level typed space by space go after the middle token, so those keys
    only append to the prompt; a whole level (at most one deeper than the line above) ends
    the prefix."""
    detok = lambda t: "".join(map(chr, t))  # noqa: E731
    above = "def mean(values):\n    total = add(values[0],\n"
    prompts = [build_prompt(FimTemplate(1, 2, 3), PromptParts((), above, " " * n, "\n"),
                            _tokenize, detok, prefix_tokens=1000, suffix_tokens=100,
                            extra_tokens=0) for n in range(8, 20)]
    first = detok(prompts[0].tokens)
    assert first.endswith("        \x02\n\x03")
    for prompt in prompts[1:]:
        assert detok(prompt.tokens).startswith(first)
    assert prompts[-1].heal == " "  # the last space is healed, as any last token


def test_spm_puts_the_suffix_first_and_the_code_above_after_the_middle_token():
    """CodeLlama's suffix-first order (``<PRE> <SUF>{suffix} <MID> {prefix}``): its text lead
    goes before the code above, after the middle token; typing on the line only appends."""
    detok = lambda t: "".join(map(chr, t))  # noqa: E731
    template = FimTemplate(1, 2, 3, prefix_lead=(ord("_"),))
    above = "def mean(values):\n    if values:\n"
    prompts = [build_prompt(template, PromptParts((), above, typed, "\n    return 0\n"),
                            _tokenize, detok, prefix_tokens=1000, suffix_tokens=100,
                            extra_tokens=0, layout="spm")
               for typed in ("        ", "        r", "        re")]
    assert detok(prompts[0].tokens) == ("\x01\x02\n    return 0\n\x03_" + above + "        ")
    for prompt, code in zip(prompts[1:], ("", "r")):
        assert prompt.tokens[: len(prompts[0].tokens)] == prompts[0].tokens
        assert detok(prompt.tokens[len(prompts[0].tokens) :]) == code


def test_whole_levels():
    assert whole_levels("", "") == 0
    assert whole_levels("", "        ") == 8  # nothing above: whole levels
    assert whole_levels("\n\n", "      ") == 4
    assert whole_levels("    if x:\n", "       ") == 4  # a deeper level being typed
    assert whole_levels("    if x:\n", "        ") == 8
    assert whole_levels("            return x\n\n", "    ") == 4  # a dedent
    assert whole_levels("    call(a,\n", " " * 43) == 8  # alignment
    assert whole_levels("function f() {\n  if (x) {\n", "   ") == 2  # the file's unit
    # A window inside a method, with no line of the first level: the unit is still 4.
    method = "        a = 1\n        if a:\n            b = 2\n"
    assert whole_levels(method, " " * 12) == 12 and whole_levels(method, " " * 14) == 12
    assert whole_levels("\tcall(a,\n", "\t\t  ") == 2  # tabs, then alignment spaces
    assert whole_levels("\tcall(a,\n", "\t\t\t") == 2


def _prompt_at(text: str, offset: int, recent_lines: int) -> list[int]:
    parts = split_document(text, offset, prefix_tokens=4000, suffix_tokens=1000,
                           recent_lines=recent_lines)
    return build_prompt(FimTemplate(1, 2, 3), parts, _tokenize, lambda t: "".join(map(chr, t)),
                        prefix_tokens=4000, suffix_tokens=1000, extra_tokens=0).tokens


def _shared(a: list[int], b: list[int]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def test_with_recent_lines_enter_appends_to_the_prompt_until_a_step_boundary():
    lines = [f"total = add(total, {i})\n" for i in range(40)]
    text = "".join(lines)
    typed_through = []
    for line in range(16, 23):  # Enter at the end of lines 16..22: lines 16.. are recent
        end = sum(len(x) for x in lines[: line + 1]) - 1
        before = _prompt_at(text, end, recent_lines=8)
        after = _prompt_at(text[:end] + "\n" + text[end:], end + 1, recent_lines=8)
        typed_through.append(len(after) - _shared(before, after))
    assert max(typed_through) <= 2  # the new line and at most one re-tokenized token
    end = sum(len(x) for x in lines[:24]) - 1  # Enter at the end of line 23: line 24 starts a step
    before = _prompt_at(text, end, recent_lines=8)
    after = _prompt_at(text[:end] + "\n" + text[end:], end + 1, recent_lines=8)
    assert len(after) - _shared(before, after) > 300  # the suffix block again, once per step
    without = _prompt_at(text, sum(len(x) for x in lines[:18]) - 1, recent_lines=0)
    entered = _prompt_at(text[:sum(len(x) for x in lines[:18]) - 1] + "\n"
                         + text[sum(len(x) for x in lines[:18]) - 1:],
                         sum(len(x) for x in lines[:18]), recent_lines=0)
    assert len(entered) - _shared(without, entered) > 300  # PSM without: at every Enter


def test_recent_lines_go_after_the_middle_token_and_the_text_is_unchanged():
    text = "".join(f"line_{i} = {i}\n" for i in range(40))
    offset = text.index("line_21") + 4
    parts = split_document(text, offset, prefix_tokens=4000, suffix_tokens=1000,
                           recent_lines=8)
    assert parts.recent == "".join(f"line_{i} = {i}\n" for i in range(16, 21))
    assert parts.above + parts.recent + parts.line_prefix == text[:offset]
    tokens = build_prompt(FimTemplate(1, 2, 3), parts, _tokenize,
                          lambda t: "".join(map(chr, t)), prefix_tokens=4000,
                          suffix_tokens=1000, extra_tokens=0).tokens
    middle = tokens.index(3)
    assert "".join(map(chr, tokens[middle + 1 :])) == parts.recent + "lin"  # "e" is healed


def test_a_finer_window_step_keeps_a_short_prompts_lines_above():
    """42 lines of 25 tokens and 150 tokens of room: 16-line steps drop 16, 32, then all 42
    lines, while 4-line steps stop at the last 6 lines (150 tokens)."""
    above = "".join(f"value_{i:03} = compute({i:03})\n" for i in range(42))
    parts = PromptParts((), above, "", "\n")

    def above_tokens(step: int) -> int:
        tokens = build_prompt(FimTemplate(1, 2, 3), parts, _tokenize,
                              lambda t: "".join(map(chr, t)), prefix_tokens=214,
                              suffix_tokens=10, extra_tokens=0, window_step_lines=step).tokens
        return tokens.index(2) - 1

    assert above_tokens(16) == 0
    assert above_tokens(4) == 150


def test_a_recent_line_added_by_enter_keeps_where_a_short_window_starts():
    """Lines of 12 tokens; 320 tokens of room above the typed line, cut in 4-line steps. Each
    Enter adds a recent line; the room for them grows in steps of 64 tokens, so the window's
    start moves at most once in the group of 8 lines, not at every Enter."""
    text = "".join(f"v_{i:03} = {i:03}\n" for i in range(96))
    starts = []
    for line in range(81, 88):  # the cursor on lines 1-7 of the group that starts at 80
        offset = sum(12 for _ in range(line))
        parts = split_document(text, offset, prefix_tokens=4000, suffix_tokens=100,
                               recent_lines=8)
        tokens = build_prompt(FimTemplate(1, 2, 3), parts, _tokenize,
                              lambda t: "".join(map(chr, t)), prefix_tokens=384,
                              suffix_tokens=20, extra_tokens=0, window_step_lines=4).tokens
        starts.append("".join(map(chr, tokens[1:13])))
    assert len(set(starts)) <= 2, starts


def _fewest_steps(above: str, limit: int, step: int) -> tuple[list[int], int]:
    """What ``_fit_above`` must find: drop ``step`` lines at a time until the rest fits."""
    lines = above.splitlines(keepends=True)
    drop = 0
    while len(_tokenize("".join(lines[drop:]))) > limit:
        drop += step
    return _tokenize("".join(lines[drop:])), drop


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=120), st.integers(0, 400), st.integers(1, 16))
def test_the_window_above_drops_the_fewest_steps_that_fit(widths, limit, step):
    above = "".join("x" * width + "\n" for width in widths)
    assert _fit_above(above, _tokenize, limit, step) == _fewest_steps(above, limit, step)


def test_fitting_a_long_window_tokenizes_a_few_times_not_once_per_step():
    """A short prompt's window over 1,000 lines: bisection tries about log2(250) drops of 4
    lines, where trying each step in turn tokenized up to 250 times."""
    above = "".join(f"value_{i:04} = compute({i})\n" for i in range(1000))
    calls = []

    def counting(text: str) -> list[int]:
        calls.append(len(text))
        return _tokenize(text)

    tokens, dropped = _fit_above(above, counting, 300, 4)
    assert (tokens, dropped) == _fewest_steps(above, 300, 4)
    assert len(calls) <= 10, len(calls)


def _text(tokens: list[int], names: dict[int, str]) -> str:
    return "".join(names.get(t, chr(t) if t > 31 or t == 10 else "?") for t in tokens)


EXTRA = (("pkg/core.py", "def scale(x):\n    ...\n"), ("util.py", "LIMIT = 10"))


def _repo_prompt(template: FimTemplate, extra=EXTRA, extra_tokens: int = 1000,
                 head: int | None = None) -> str:
    parts = PromptParts(extra, "x = 1\n", "y = sc", "\n", repo="proj", path="pkg/app.py")
    tokens = build_prompt(template, parts, _tokenize, lambda t: "".join(map(chr, t)),
                          prefix_tokens=100, suffix_tokens=100, extra_tokens=extra_tokens,
                          extra_head_tokens=head).tokens
    return _text(tokens, {1: "<PRE>", 2: "<SUF>", 3: "<MID>", 4: "<SEP>", 5: "<REPO>"})


def test_other_files_use_the_models_repository_format():
    qwen = FimTemplate(1, 2, 3, file_sep=4, repo_name=5)
    assert _repo_prompt(qwen) == (
        "<REPO>proj\n<SEP>pkg/core.py\ndef scale(x):\n    ...\n<SEP>util.py\nLIMIT = 10\n"
        "<SEP>pkg/app.py\n<PRE>x = 1\n<SUF>\n<MID>y = s")
    # A budget too small for both files leaves the last one out, not both.
    assert _repo_prompt(qwen, extra_tokens=60) == (
        "<REPO>proj\n<SEP>pkg/core.py\ndef scale(x):\n    ...\n<SEP>pkg/app.py\n<PRE>x = 1\n"
        "<SUF>\n<MID>y = s")
    assert _repo_prompt(qwen, extra_tokens=5) == "<PRE>x = 1\n<SUF>\n<MID>y = s"


def test_a_model_without_a_file_separator_gets_path_comments():
    assert _repo_prompt(FimTemplate(1, 2, 3)) == (
        "# pkg/core.py\ndef scale(x):\n    ...\n# util.py\nLIMIT = 10\n# pkg/app.py\n"
        "<PRE>x = 1\n<SUF>\n<MID>y = s")


def test_without_other_files_the_prompt_is_the_single_file_one():
    assert _repo_prompt(FimTemplate(1, 2, 3, file_sep=4, repo_name=5), extra=()) == (
        "<PRE>x = 1\n<SUF>\n<MID>y = s")


def test_the_short_prompt_keeps_the_start_of_the_full_prompts_section():
    """Cut after a line's end within the head budget, then the open file: its tokens are the
    full prompt's first ones, so reading the full prompt later reuses them."""
    qwen = FimTemplate(1, 2, 3, file_sep=4, repo_name=5)
    full = _repo_prompt(qwen)
    short = _repo_prompt(qwen, head=33)  # "<REPO>proj\n<SEP>pkg/core.py\ndef scale(x):\n" is 32
    assert short == ("<REPO>proj\n<SEP>pkg/core.py\ndef scale(x):\n<SEP>pkg/app.py\n<PRE>x = 1\n"
                     "<SUF>\n<MID>y = s")
    section = short[: short.index("<SEP>pkg/app.py")]
    assert full.startswith(section)
    # Not one line of another file fits: no section at all, as without other files.
    assert _repo_prompt(qwen, head=20) == "<PRE>x = 1\n<SUF>\n<MID>y = s"
    # A head budget the whole section fits changes nothing.
    assert _repo_prompt(qwen, head=1000) == full


def test_the_files_imports_go_at_the_windows_front_within_a_quarter_of_the_prefix():
    above = "".join(f"value_{i} = compute({i})\n" for i in range(200))
    detok = lambda t: "".join(map(chr, t))  # noqa: E731
    few = "import os\nfrom pkg.core import Engine\n"
    parts = PromptParts((), above, "    ", "\n", imports=few)
    prompt = build_prompt(FimTemplate(1, 2, 3), parts, _tokenize, detok, prefix_tokens=1000,
                          suffix_tokens=100, extra_tokens=0).tokens
    prefix = detok(prompt[prompt.index(1) + 1 : prompt.index(2)])
    assert prefix.startswith(few + "value_") and len(prefix) <= 1000
    assert prefix.endswith("value_199 = compute(199)\n    ")  # the cursor line's indentation
    many = "".join(f"import module_{i}\n" for i in range(100))  # 1,890 characters
    parts = PromptParts((), above, "    ", "\n", imports=many)
    prompt = build_prompt(FimTemplate(1, 2, 3), parts, _tokenize, detok, prefix_tokens=1000,
                          suffix_tokens=100, extra_tokens=0).tokens
    prefix = detok(prompt[prompt.index(1) + 1 : prompt.index(2)])
    kept = prefix[: prefix.index("value_")]
    assert many.startswith(kept) and kept.endswith("\n") and 230 <= len(kept) <= 250
