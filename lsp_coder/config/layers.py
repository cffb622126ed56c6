"""Merging a settings layer (a TOML file, ``initializationOptions``,
``workspace/didChangeConfiguration``) over a config, key by key: a bad value costs only its
own key."""

from __future__ import annotations

from dataclasses import fields
from typing import Any, get_type_hints

from .checks import check_ranges, check_relations, check_url, header_problems
from .converter import converter
from .messages import expected, layer_message, shown, shown_key
from .sections import Config


class ConfigError(ValueError):
    """A config layer has a value of the wrong type or out of range, or an unknown key; the
    message names each key, its value and what is expected.

    ``usable``: the layer applied without them (each bad key keeps its previous value, each
    unknown key is left out); None only for a file that cannot be read at all.
    """

    def __init__(self, message: str, usable: Config | None = None) -> None:
        super().__init__(message)
        self.usable = usable


_SECTIONS: dict[str, type] = {f.name: f.default_factory for f in fields(Config)}
"""The config's sections by name (each a dataclass)."""


def _take(merged: dict[str, Any], config: Config, layer: dict[str, Any]
          ) -> tuple[list[str], list[str]]:
    """Put the good values of ``layer`` into ``merged`` (``config`` unstructured), key by
    key; returns the problems (a value of the wrong type, named with what was expected and
    what is kept) and the unknown keys, which are left out."""
    problems: list[str] = []
    unknown: list[str] = []
    for name, section_layer in layer.items():
        cls = _SECTIONS.get(name)
        if cls is None:
            unknown.append(shown_key(name))
            continue
        if not isinstance(section_layer, dict):
            problems.append(f"{name} = {shown(section_layer)}: expected a table of settings")
            continue
        hints = get_type_hints(cls)
        for key, value in section_layer.items():
            hint = hints.get(key) if isinstance(key, str) else None
            if hint is None:
                unknown.append(f"{name}.{shown_key(key)}")
                continue
            before = getattr(getattr(config, name), key)
            try:
                converter.structure(value, hint)
            except Exception:  # cattrs wraps every failure
                problems.append(f"{name}.{key} = {shown(value)}: expected {expected(hint)};"
                                f" keeping {shown(before)}")
                continue
            if isinstance(value, dict) and isinstance(merged[name].get(key), dict):
                value = {**merged[name][key], **value}  # a table merges key by key
            if (name, key) == ("backend", "headers"):
                value, bad = header_problems(value)
                problems += bad
            merged[name][key] = value
    return problems, unknown


def apply(config: Config, layer: dict[str, Any] | None, source: str) -> Config:
    """A new Config with ``layer`` merged over ``config``.

    A bad value costs only its own key: a wrong type, a value out of range or a broken
    relation keeps that key's value from ``config``; an unknown key is left out; the rest of
    the layer applies. Then ConfigError is raised naming each (key, value, what is expected),
    with the config to use as ``usable``.
    """
    if not layer:
        return config
    if not isinstance(layer, dict):
        raise ConfigError(f"{source}: expected a table of settings, got {type(layer).__name__}",
                          usable=config)
    merged = converter.unstructure(config)
    problems, unknown = _take(merged, config, _renamed(layer))
    new = converter.structure(merged, Config)
    usable, more = check_ranges(new, config)
    problems += more
    usable, more = check_relations(usable, config)
    problems += more
    usable, more = check_url(usable, config)
    problems += more
    if problems or unknown:
        raise ConfigError(layer_message(source, problems, unknown), usable=usable)
    return new


def _renamed(layer: dict[str, Any]) -> dict[str, Any]:
    """``layer`` with keys of earlier versions put where they live now:
    ``completion.extra_context_tokens`` is ``context.budget_tokens`` (which wins if both are
    given)."""
    completion = layer.get("completion")
    if not (isinstance(completion, dict) and "extra_context_tokens" in completion):
        return layer
    completion = dict(completion)
    budget = completion.pop("extra_context_tokens")
    context = layer.get("context")
    context = dict(context) if isinstance(context, dict) else {}
    context.setdefault("budget_tokens", budget)
    return {**layer, "completion": completion, "context": context}


def settings_layer(value: Any) -> Any:
    """The settings tree in a client's message: under a ``lsp-coder`` (or ``lspCoder``) key
    when there is one (``workspace/didChangeConfiguration`` sends a whole section), else the
    value itself."""
    if isinstance(value, dict):
        return value.get("lsp-coder", value.get("lspCoder", value))
    return value


def _merge(base: dict[str, Any], layer: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in layer.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def merge_layers(lower: dict[str, Any] | None, upper: dict[str, Any] | None) -> dict[str, Any]:
    """One layer holding ``upper`` merged key by key over ``lower`` (applying it equals
    applying both in turn)."""
    return _merge(lower if isinstance(lower, dict) else {},
                  upper if isinstance(upper, dict) else {})
