"""The configuration tree: example file, precedence, and errors that name the key."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import pytest

from lsp_coder.config import Config, ConfigError, FimStrings, apply
from lsp_coder.config.converter import to_dict
from lsp_coder.config.files import load_file

EXAMPLE = Path(__file__).resolve().parents[2] / "config.example.toml"


def test_example_file_documents_every_option_with_its_default():
    assert load_file(EXAMPLE) == Config()
    text = EXAMPLE.read_text()
    for section in dataclasses.fields(Config):
        assert f"[{section.name}]" in text
        for field in dataclasses.fields(getattr(Config(), section.name)):
            assert f"\n{field.name} = " in text, f"{section.name}.{field.name} undocumented"


def test_layers_merge_key_by_key_in_order(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[model]\npath = "/m.gguf"\nn_ctx = 4096\n[completion]\nmax_lines = 3\n')
    config = load_file(path)
    config = apply(config, {"model": {"n_ctx": 2048}}, "initializationOptions")
    config = apply(config, {"completion": {"debounce_ms": 0}}, "didChangeConfiguration")
    assert config.model.path == "/m.gguf"
    assert config.model.n_ctx == 2048
    assert config.completion.max_lines == 3
    assert config.completion.debounce_ms == 0
    assert to_dict(config)["completion"]["max_lines"] == 3


@pytest.mark.parametrize("layer, key", [
    ({"completion": {"debounce_ms": "fast"}}, "debounce_ms"),
    ({"speculative": {"enabled": "yes"}}, "enabled"),
    ({"speculative": {"draft_model": "yes"}}, "draft_model"),
    ({"model": {"n_ctx": 2048.5}}, "n_ctx"),
    ({"model": {"n_ctxx": 2048}}, "n_ctxx"),
    ({"modle": {}}, "modle"),
    ({"model": "x"}, "model"),
    ({"completion": {"fim_layout": "mps"}}, "fim_layout"),
    ({"model": {"use_extra_bufts": "yes"}}, "use_extra_bufts"),
])
def test_wrong_types_and_unknown_keys_name_the_key(layer, key):
    with pytest.raises(ConfigError) as info:
        apply(Config(), layer, "initializationOptions")
    assert key in str(info.value)
    assert "initializationOptions" in str(info.value)


def every_key() -> list[tuple[str, str, object]]:
    """(section, key, a value of the wrong type) for every setting."""
    out = []
    for section in dataclasses.fields(Config):
        hints = typing.get_type_hints(section.default_factory)
        for field in dataclasses.fields(section.default_factory()):
            stringy = hints[field.name] in (str, str | FimStrings)
            out.append((section.name, field.name, 96 if stringy else "96"))
    return out


TEAM = {"kind": "openai", "url": "http://gpu-box:8000/v1", "fim_template": "qwen"}


@pytest.mark.parametrize("section, key, wrong", every_key(),
                         ids=[f"{s}.{k}" for s, k, _ in every_key()])
def test_each_setting_of_the_wrong_type_costs_only_itself(section, key, wrong):
    """One bad key is named with its value and what it takes, and falls back alone: the rest
    of the layer, [backend] above all, still applies (before, the whole layer was dropped and
    a team user's server loaded the local model)."""
    layer = {"backend": dict(TEAM), "completion": {"debounce_ms": 7}}
    layer.setdefault(section, {})[key] = wrong
    with pytest.raises(ConfigError) as info:
        apply(Config(), layer, "initializationOptions")
    message = str(info.value)
    assert f"{section}.{key} = {wrong!r}: expected " in message
    usable = info.value.usable
    assert getattr(getattr(usable, section), key) == getattr(getattr(Config(), section), key)
    if section != "backend":
        assert (usable.backend.kind, usable.backend.url) == ("openai", TEAM["url"])
    if (section, key) != ("completion", "debounce_ms"):
        assert usable.completion.debounce_ms == 7


def test_unknown_keys_are_named_and_ignored_and_the_rest_applies():
    layer = {"backend": dict(TEAM), "context": {"excludes": ["*.env"], "budget_tokens": 64},
             "future": {"x": 1}}
    with pytest.raises(ConfigError) as info:
        apply(Config(), layer, "initializationOptions")
    assert "unknown keys context.excludes, future ignored" in str(info.value)
    usable = info.value.usable
    assert usable.backend.kind == "openai" and usable.context.budget_tokens == 64


def test_a_message_about_many_unknown_keys_is_capped():
    layer = {f"key{i}": i for i in range(250_000)} | {"x" * 100_000: {"y" * 100_000: 1}}
    with pytest.raises(ConfigError) as info:
        apply(Config(), layer, "initializationOptions")
    message = str(info.value)
    assert len(message) < 1000 and "and 249993 more" in message


@pytest.mark.parametrize("headers, bad", [
    ({"X-Team": "editors\r\nX-Admin: 1"}, "X-Team"),
    ({"X-Team": "a\nb"}, "X-Team"),
    ({"X Team": "a"}, "X Team"),
    ({"X-Team:": "a"}, "X-Team:"),
])
def test_a_header_with_a_line_break_is_a_setting_error(headers, bad):
    """Named when the config is read (it was blamed on the engine at the first request)."""
    layer = {"backend": {**TEAM, "headers": {**headers, "X-Good": "1"}}}
    with pytest.raises(ConfigError) as info:
        apply(Config(), layer, "initializationOptions")
    assert "backend.headers" in str(info.value) and bad in str(info.value)
    assert info.value.usable.backend.headers == {"X-Good": "1"}
    assert info.value.usable.backend.kind == "openai"


def test_integers_are_accepted_for_floats_but_bools_are_not_ints():
    assert apply(Config(), {"completion": {"temperature": 1}}, "t").completion.temperature == 1.0
    with pytest.raises(ConfigError):
        apply(Config(), {"completion": {"max_tokens": True}}, "t")


def test_bad_toml_is_a_clear_error(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("[model\npath = 1\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_file(path)
    with pytest.raises(ConfigError, match="not found"):
        load_file(tmp_path / "missing.toml")


def test_the_older_name_of_the_context_budget_is_still_read():
    config = apply(Config(), {"completion": {"extra_context_tokens": 1024}}, "t")
    assert config.context.budget_tokens == 1024
    both = {"completion": {"extra_context_tokens": 1024}, "context": {"budget_tokens": 64}}
    assert apply(Config(), both, "t").context.budget_tokens == 64
    assert apply(Config(), {"context": {"definitions": False}}, "t").context == (
        dataclasses.replace(Config().context, definitions=False))
