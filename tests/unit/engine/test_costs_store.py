"""Batch costs measured at one load are read back by the next on the same machine."""

from __future__ import annotations

import json
import os
import shutil

from lsp_coder.config import Config
from lsp_coder.config.layers import apply
from lsp_coder.engine.engine import Engine

WITH_DRAFT = apply(Config(), {"speculative": {"draft_model": True}}, "test")


def load(model, draft, costs_file) -> dict:
    engine = Engine(model, draft, WITH_DRAFT, costs_file=costs_file)
    try:
        return {"from": dict(engine.costs_from), "ms": engine.costs.measured,
                "prefill": engine.costs.prefill_token_ms}
    finally:
        engine.close()


def test_a_second_load_reads_the_costs_the_first_measured(tiny_qwen, tiny_qwen_other_seed,
                                                           tmp_path):
    costs_file = tmp_path / "cache" / "batch-costs.json"
    first = load(tiny_qwen, tiny_qwen_other_seed, costs_file)
    assert first["from"] == {tiny_qwen.name: "measured", tiny_qwen_other_seed.name: "measured"}
    second = load(tiny_qwen, tiny_qwen_other_seed, costs_file)
    assert second["from"] == {tiny_qwen.name: "stored", tiny_qwen_other_seed.name: "stored"}
    assert second["ms"] == first["ms"] and second["prefill"] == first["prefill"]
    assert not [p for p in costs_file.parent.iterdir() if p.name.startswith(".costs-")]


def test_another_model_file_is_measured_anew(tiny_qwen, tmp_path):
    costs_file = tmp_path / "batch-costs.json"
    load(tiny_qwen, None, costs_file)
    copy = tmp_path / "copy.gguf"
    shutil.copyfile(tiny_qwen, copy)
    assert load(copy, None, costs_file)["from"] == {"copy.gguf": "measured"}
    os.utime(copy, ns=(1, 1))  # replaced in place: another modification time
    assert load(copy, None, costs_file)["from"] == {"copy.gguf": "measured"}
    assert load(copy, None, costs_file)["from"] == {"copy.gguf": "stored"}


def test_a_damaged_or_unwritable_file_only_costs_a_measurement(tiny_qwen, tmp_path):
    costs_file = tmp_path / "batch-costs.json"
    load(tiny_qwen, None, costs_file)
    data = json.loads(costs_file.read_text())
    for entry in data.values():
        entry["ms"] = {"1": -3}
    costs_file.write_text(json.dumps(data))
    assert load(tiny_qwen, None, costs_file)["from"] == {tiny_qwen.name: "measured"}
    costs_file.write_text("{not json")
    assert load(tiny_qwen, None, costs_file)["from"] == {tiny_qwen.name: "measured"}
    data = json.loads(costs_file.read_text())
    for entry in data.values():
        entry["measured_at"] -= 8 * 24 * 3600  # measured over a week ago
    costs_file.write_text(json.dumps(data))
    assert load(tiny_qwen, None, costs_file)["from"] == {tiny_qwen.name: "measured"}
    blocked = tmp_path / "a-file" / "batch-costs.json"
    blocked.parent.write_text("")  # its folder cannot be made
    assert load(tiny_qwen, None, blocked)["from"] == {tiny_qwen.name: "measured"}
    assert load(tiny_qwen, None, blocked)["from"] == {tiny_qwen.name: "measured"}


def scaled(costs_file, factor: float) -> None:
    data = json.loads(costs_file.read_text())
    for entry in data.values():
        entry["ms"] = {size: ms * factor for size, ms in entry["ms"].items()}
    costs_file.write_text(json.dumps(data))


def test_a_table_measured_while_the_cpu_was_busy_is_measured_again(tiny_qwen, tmp_path):
    costs_file = tmp_path / "batch-costs.json"
    load(tiny_qwen, None, costs_file)
    scaled(costs_file, 100.0)  # a tiny model's 2 ms made as slow as a busy CPU's 7B
    busy = json.loads(costs_file.read_text())
    again = load(tiny_qwen, None, costs_file)
    assert again["from"] == {tiny_qwen.name: "measured again (the stored table was slower)"}
    assert json.loads(costs_file.read_text()) != busy  # the new table replaced it
    assert load(tiny_qwen, None, costs_file)["from"] == {tiny_qwen.name: "stored"}


def test_a_table_faster_than_the_cpu_now_is_kept(tiny_qwen, tmp_path):
    costs_file = tmp_path / "batch-costs.json"
    load(tiny_qwen, None, costs_file)
    scaled(costs_file, 0.1)  # the machine is busy now: real decodes rescale the table
    fast = load(tiny_qwen, None, costs_file)
    assert fast["from"] == {tiny_qwen.name: "stored"}
    assert fast["ms"] == {int(k): v for k, v in
                          next(iter(json.loads(costs_file.read_text()).values()))["ms"].items()}
