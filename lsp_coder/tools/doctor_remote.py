"""``lsp-coder doctor`` with ``[backend] kind`` set to a serving engine: can we reach it, and how
fast it answers a completion and a token count."""

from __future__ import annotations

import time

from ..backends.factory import BackendConfigError, remote_backend
from ..backends.fim_text import TemplateError
from ..backends.transport import TransportError
from ..config import Config
from ..config.urls import redact_url
from ..prompt_parts import PromptParts
from ..shared_types import FimQuery

_SAMPLE_ABOVE = "def fibonacci(n):\n    \"\"\"The n-th Fibonacci number.\"\"\"\n"
_SAMPLE_TYPED = "    if n < 2:"


def doctor_remote(config: Config) -> int:
    bc = config.backend
    print(f"backend     {bc.kind} at {redact_url(bc.url) or '(no url)'}"
          f"{f', model {bc.model}' if bc.model else ''}")
    if bc.api_key_env:
        print(f"token       from ${bc.api_key_env}"
              f" ({'set' if _env_set(bc.api_key_env) else 'NOT SET in this environment'})")
    try:
        backend = remote_backend(config)
    except (BackendConfigError, TemplateError, OSError, ValueError) as exc:
        print(f"config      {exc}")
        return 1
    try:
        template = backend.template
        print(f"FIM         {template.prefix} … {template.suffix} … {template.middle}")
        try:
            t0 = time.perf_counter()
            backend.probe()
            print(f"reachable   yes ({(time.perf_counter() - t0) * 1000:.0f} ms for"
                  f" {backend.probe_path})")
        except TransportError as exc:
            from ..backends.health import explain

            print(f"reachable   no: {explain(exc, backend.url, bc.api_key_env)}")
            return 1
        sample = _SAMPLE_ABOVE * 20
        t0 = time.perf_counter()
        n = backend.count_tokens(sample)
        count_ms = (time.perf_counter() - t0) * 1000
        print(f"tokens      {backend.count_tokens.method}: {n} tokens for {len(sample)} chars"
              f" in {count_ms:.1f} ms")
        query = FimQuery(uri="doctor",
                         sources=PromptParts((), _SAMPLE_ABOVE, _SAMPLE_TYPED, "\n"),
                         max_tokens=8)
        for attempt in ("cold", "warm"):
            t0 = time.perf_counter()
            result = backend.complete(query)
            ms = (time.perf_counter() - t0) * 1000
            if result.stop_reason.startswith("backend"):
                print(f"completion  failed: {backend.health.message}")
                return 1
            cached = result.server_cached_tokens
            stats = result.stats
            cached_text = ("not reported" if cached is None else
                           f"{cached}/{stats.prompt_tokens if stats else '?'} prompt tokens cached")
            print(f"completion  {attempt}: {ms:.0f} ms, {len(result.text)} chars,"
                  f" {cached_text}")
        how = backend.encoding.describe()
        print("prompt      " + ("token ids (text read as text, control tokens by id)"
                                if how["as"] == "tokens" else
                                f"text, control-token text in it broken ({how['why_text']})"))
        print("status      ok: the engine answers completions")
        return 0
    finally:
        backend.close()


def _env_set(name: str) -> bool:
    import os

    return bool(os.environ.get(name))
