"""Postprocessing reads whole lines near the cursor, and the suggestion cache compares in place:
neither copies nor splits all of a big document."""

from __future__ import annotations

from lsp_coder.completion.filter_window import FILTER_WINDOW_CHARS, filter_window
from lsp_coder.completion.postprocess import POST_CACHE, PRE_CACHE, FilterContext, run
from lsp_coder.completion.suggestions import SuggestionCache

BIG = "".join(f"def function_{i}(x):\n    return x * {i}\n\n" for i in range(20_000))


def test_the_window_is_whole_lines_around_the_cursor_and_bounded():
    offset = BIG.index("def function_10000")
    prefix, suffix = filter_window(BIG, offset)
    assert BIG[offset - len(prefix) : offset + len(suffix)] == prefix + suffix
    assert BIG[offset - len(prefix) - 1] == "\n" and BIG[offset + len(suffix)] == "\n"
    assert FILTER_WINDOW_CHARS <= len(prefix) < FILTER_WINDOW_CHARS + 40
    assert FILTER_WINDOW_CHARS <= len(suffix) < FILTER_WINDOW_CHARS + 40
    assert filter_window("x = 1\ny", 5) == ("x = 1", "\ny")


def test_filters_on_the_window_give_what_they_give_on_the_whole_document():
    offset = BIG.index("def function_10000")
    below = BIG[offset:].split("\n", 2)
    # The model re-generates the two lines after the cursor and goes on: they are cut.
    suggestion = "def helper():\n    pass\n" + below[1] + "\n"
    whole = FilterContext(prefix=BIG[:offset], suffix=BIG[offset:])
    prefix, suffix = filter_window(BIG, offset)
    window = FilterContext(prefix=prefix, suffix=suffix)

    def both(text: str, ctx: FilterContext) -> str:
        return run(POST_CACHE, run(PRE_CACHE, text, ctx), ctx)

    assert both(suggestion, window) == both(suggestion, whole) == "def helper():\n    pass"
    echo = "\n    return x * 9999\n\ndef other():"  # repeats the lines above the cursor
    assert both(echo, window) == both(echo, whole) != echo


def test_the_suggestion_cache_matches_text_before_the_offset_in_place():
    cache = SuggestionCache()
    cursor = BIG.index("def function_10000")
    cache.store("file:///big.py", BIG[:cursor], "", "def helper(y):")
    typed = BIG[:cursor] + "def h" + BIG[cursor:]
    hit = cache.lookup("file:///big.py", typed, cursor + 5, "")
    assert hit is not None and hit.remainder == "elper(y):"
    assert cache.lookup("file:///big.py", typed, cursor - 1, "") is None  # before the shown cursor
    edited_above = "#" + typed
    assert cache.lookup("file:///big.py", edited_above, cursor + 6, "") is None
