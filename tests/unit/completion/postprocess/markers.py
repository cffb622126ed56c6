"""Marker helpers for postprocess tests.

A marked text is a document with three markers: `║` is the cursor, and `├`/`┤`
enclose the suggestion inserted there (the raw model output). For example
`"def f(x):\\n    ║├return x┤\\n"` has prefix `"def f(x):\\n    "`, suggestion
`"return x"` and suffix `"\\n"`.
"""

from __future__ import annotations

from lsp_coder.completion.postprocess.base import FilterContext

CURSOR = "║"
START = "├"
END = "┤"


def parse_marked(text: str, *, multiline: bool = True) -> tuple[FilterContext, str]:
    """Splits a marked text into the filter context and the suggestion.

    `║` may be left out when `├` is there (the cursor is then at `├`), and `├┤`
    may be left out (the suggestion is then ""). When both are present, `║`
    must come right before `├`. Each marker appears at most once.

    Args:
        text: the marked document.
        multiline: passed on to `FilterContext.multiline`.

    Returns:
        The context (prefix, suffix, multiline) and the suggestion text.

    Raises:
        ValueError: if the markers are missing, repeated or out of order.
    """
    for marker in (CURSOR, START, END):
        if text.count(marker) > 1:
            raise ValueError(f"marker {marker!r} appears more than once")
    if (START in text) != (END in text):
        raise ValueError(f"{START!r} and {END!r} go together")
    if START in text:
        text = text.replace(CURSOR + START, START)
        if CURSOR in text:
            raise ValueError(f"{CURSOR!r} must come right before {START!r}")
        prefix, rest = text.split(START)
        if END not in rest:
            raise ValueError(f"{END!r} must come after {START!r}")
        suggestion, suffix = rest.split(END)
    elif CURSOR in text:
        prefix, suffix = text.split(CURSOR)
        suggestion = ""
    else:
        raise ValueError(f"no {CURSOR!r} or {START!r} marker")
    return FilterContext(prefix=prefix, suffix=suffix, multiline=multiline), suggestion
