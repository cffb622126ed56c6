"""How a config problem is told: a value, a key and what is expected, in words, cut short, and
one message for a layer's problems."""

from __future__ import annotations

from typing import Any, Literal, get_args, get_origin

from .sections import FimStrings

PROBLEMS_SHOWN = 8
"""One message names at most this many bad keys, and as many unknown ones; the rest are
counted."""

VALUE_SHOWN_CHARS = 60
"""A value or key named in a message is cut to this many characters."""


def shown(value: Any) -> str:
    """``value`` for a message: its repr, cut short."""
    return _cut(repr(value))


def _cut(text: str) -> str:
    return text if len(text) <= VALUE_SHOWN_CHARS else text[: VALUE_SHOWN_CHARS - 3] + "..."


def shown_key(key: Any) -> str:
    """A key for a message: as written when it is a string, cut short."""
    return _cut(key) if isinstance(key, str) else shown(key)


def expected(hint: Any) -> str:
    """What a value of type ``hint`` must be, in words."""
    if hint == (bool | Literal["auto"]):
        return "true, false or 'auto'"
    if get_origin(hint) is Literal:
        return "one of " + ", ".join(repr(v) for v in get_args(hint))
    if hint == (str | FimStrings):
        return ("a family name or a table of prefix, suffix, middle, file_sep and repo_name"
                " strings")
    if get_origin(hint) is dict:
        return "a table of strings"
    if get_origin(hint) is list:
        return "a list of strings"
    return {bool: "true or false", int: "a whole number", float: "a number",
            str: "a string"}.get(hint, str(hint))


def layer_message(source: str, problems: list[str], unknown: list[str]) -> str:
    """One message for a layer's problems and unknown keys, at most ``PROBLEMS_SHOWN`` of
    each named."""
    parts = problems[:PROBLEMS_SHOWN]
    if len(problems) > PROBLEMS_SHOWN:
        parts.append(f"and {len(problems) - PROBLEMS_SHOWN} more bad values")
    if unknown:
        named = ", ".join(unknown[:PROBLEMS_SHOWN])
        more = (f" and {len(unknown) - PROBLEMS_SHOWN} more"
                if len(unknown) > PROBLEMS_SHOWN else "")
        word = "key" if len(unknown) == 1 else "keys"
        parts.append(f"unknown {word} {named}{more} ignored")
    return f"{source}: {'; '.join(parts)}"
