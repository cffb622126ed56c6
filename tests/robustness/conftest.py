"""A module-scoped raw client of the real server on a tiny model, and option helpers."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import server_env
from tests.robustness.rawclient import RawServer


def tiny_options(model: Path, **completion) -> dict:
    """Fast settings: no debounce, no time box, short suggestions."""
    return {"model": {"path": str(model), "draft_path": "none", "n_ctx": 1024},
            "completion": {"debounce_ms": 0, "max_tokens": 8, "inline_budget_ms": 0,
                           **completion}}


@pytest.fixture(scope="module")
def server(tiny_qwen):
    """One initialized server with its model loaded, shared by a module's tests."""
    srv = RawServer(server_env())
    answer = srv.initialize(tiny_options(tiny_qwen))
    assert "result" in answer, answer
    totals = srv.wait_for_model()
    assert totals["model_loaded"], totals
    yield srv
    srv.close()


@pytest.fixture
def fresh(tiny_qwen):
    """A server of its own (not initialized) for lifecycle cases; closed after the test."""
    servers: list[RawServer] = []

    def start(*args: str, env: dict[str, str] | None = None) -> RawServer:
        srv = RawServer(env or server_env(), args)
        servers.append(srv)
        return srv

    yield start
    for srv in servers:
        srv.close()
