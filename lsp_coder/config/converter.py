"""The strict converter between a config tree and plain values (TOML tables, JSON objects).

No value is coerced into another type (a string is not taken for a number, nor a number for a
bool), except a whole number for a float; unknown keys are refused.
"""

from __future__ import annotations

from typing import Any, Literal

import cattrs

from .sections import Config, FimStrings


def _strict(kind: type):
    def hook(value: Any, _type: type) -> Any:
        if kind is float and isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if type(value) is not kind:
            raise TypeError(f"expected {kind.__name__}, got {type(value).__name__} {value!r}")
        return value

    return hook


converter = cattrs.Converter(forbid_extra_keys=True)
for _kind in (bool, int, float, str):
    converter.register_structure_hook(_kind, _strict(_kind))


def _fim_template(value: Any, _type: Any) -> str | FimStrings:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return converter.structure(value, FimStrings)
    raise TypeError(f"expected a family name or a table of strings, got {value!r}")


converter.register_structure_hook_func(lambda t: t == (str | FimStrings), _fim_template)


def _bool_or_auto(value: Any, _type: Any) -> bool | str:
    if isinstance(value, bool) or value == "auto":
        return value
    raise TypeError(f"expected true, false or 'auto', got {value!r}")


converter.register_structure_hook_func(lambda t: t == (bool | Literal["auto"]), _bool_or_auto)


def _strings(value: Any, _type: Any) -> list[str]:
    """A list of strings, as given (a string is not taken for a list of its characters)."""
    if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        raise TypeError(f"expected a list of strings, got {value!r}")
    return list(value)


converter.register_structure_hook_func(lambda t: t == list[str], _strings)


def to_dict(config: Config) -> dict[str, Any]:
    return converter.unstructure(config)
