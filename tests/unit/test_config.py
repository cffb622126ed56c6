"""The configuration tree: example file, precedence, and errors that name the key."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from lsp_coder.config import Config, ConfigError, apply, load_file, to_dict

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
