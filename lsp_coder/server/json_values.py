"""JSON values as LSP reads them, without pygls or lsprotocol (the stdio forwarder uses them
too): an LSP integer, and the kind of a value for a message."""

from __future__ import annotations

from typing import Any


def lsp_integer(value: Any) -> int:
    """An LSP integer: a JSON number without a fraction (``0.5``, Infinity, ``"3"`` and
    ``true`` are invalid, not rounded or converted)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected an integer, got {json_kind(value)}")
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError("expected an integer, got a number with a fraction")
        return int(value)
    return value


def json_kind(value: Any) -> str:
    """The kind of a JSON value for a message (never the value: it may be document text)."""
    return "null" if value is None else type(value).__name__
