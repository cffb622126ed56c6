"""Streams in the engines' documented wire formats, for engines that cannot run here.

Shapes follow each engine's API reference: vLLM and SGLang's OpenAI-compatible completions
(server-sent events, a usage chunk with ``choices: []`` before ``data: [DONE]`` when
``stream_options.include_usage`` is set; ``prompt_tokens_details.cached_tokens`` with vLLM's
``--enable-prompt-tokens-details`` / SGLang's ``--enable-cache-report``), and Ollama's
``/api/generate`` (newline-delimited JSON, the last object ``done: true`` with its counters).
"""

from __future__ import annotations

import json


def openai_stream(model: str, pieces: list[str], *, prompt_tokens: int,
                  cached_tokens: int | None, id_prefix: str = "cmpl") -> str:
    events = []
    for i, piece in enumerate(pieces):
        last = i == len(pieces) - 1
        events.append({
            "id": f"{id_prefix}-7f3a", "object": "text_completion", "created": 1764460800,
            "model": model,
            "choices": [{"index": 0, "text": piece, "logprobs": None,
                         "finish_reason": "stop" if last else None,
                         "stop_reason": None}],
            "usage": None,
        })
    usage = {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens + len(pieces),
             "completion_tokens": len(pieces),
             "prompt_tokens_details": None if cached_tokens is None
             else {"cached_tokens": cached_tokens}}
    events.append({"id": f"{id_prefix}-7f3a", "object": "text_completion",
                   "created": 1764460800, "model": model, "choices": [], "usage": usage})
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"


VLLM_SUFFIX_ERROR = {"object": "error", "message": "suffix is not currently supported",
                     "type": "BadRequestError", "param": None, "code": 400}


def ollama_stream(model: str, pieces: list[str], *, prompt_eval_count: int) -> str:
    lines = [{"model": model, "created_at": "2026-11-30T00:10:00.000000Z", "response": p,
              "done": False} for p in pieces]
    lines.append({"model": model, "created_at": "2026-11-30T00:10:00.500000Z", "response": "",
                  "done": True, "done_reason": "stop", "context": [1, 2, 3],
                  "total_duration": 512000000, "load_duration": 2100000,
                  "prompt_eval_count": prompt_eval_count, "prompt_eval_duration": 120000000,
                  "eval_count": len(pieces), "eval_duration": 380000000})
    return "".join(json.dumps(line) + "\n" for line in lines)
