"""A recording stand-in engine on loopback, for asserting the prompts a serving engine gets.

It speaks llama-server's, vLLM's (and SGLang's), llama-cpp-python's and Ollama's wire formats
over real HTTP, with a real tokenizer (a GGUF's vocabulary, read without weights), and reads a
prompt as those engines do: a string (or a string inside llama-server's mixed list) with its
control-token text parsed into control tokens, a list of ids as it is. It records every prompt
as the token ids the engine would evaluate, and answers each completion with ``reply``.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import llama_cpp

from tests.backends.recorded import ollama_stream, openai_stream

KINDS = ("llama-server", "vllm", "llama-cpp-python", "ollama")


class Vocabulary:
    """A GGUF's tokenizer and which of its tokens are control tokens."""

    def __init__(self, gguf: Path) -> None:
        self._llama = llama_cpp.Llama(model_path=str(gguf), vocab_only=True, verbose=False)
        vocab = llama_cpp.llama_model_get_vocab(self._llama.model)
        wanted = llama_cpp.LLAMA_TOKEN_ATTR_CONTROL | llama_cpp.LLAMA_TOKEN_ATTR_UNKNOWN
        self.controls = {t for t in range(llama_cpp.llama_vocab_n_tokens(vocab))
                         if llama_cpp.llama_vocab_get_attr(vocab, t) & wanted}
        self.add_bos = bool(llama_cpp.llama_vocab_get_add_bos(vocab))
        self.bos = llama_cpp.llama_vocab_bos(vocab)

    def tokens(self, text: str, parse_special: bool = True, add_bos: bool = False) -> list[int]:
        ids = self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=parse_special)
        return ([self.bos] if add_bos and self.add_bos else []) + ids

    def text(self, ids: list[int]) -> str:
        """What the model reads: ids as text, a control token as its own text."""
        out = b""
        for t in ids:
            out += self._llama.detokenize([t], special=True)
        return out.decode("utf-8", "replace")

    def control_ids(self, ids: list[int]) -> list[int]:
        return [t for t in ids if t in self.controls]


class StandIn:
    """The engine; ``prompts`` holds each completion's prompt as the ids it would evaluate."""

    def __init__(self, vocabulary: Vocabulary, kind: str, reply: str = "return 1") -> None:
        assert kind in KINDS
        self.vocabulary, self.kind, self.reply = vocabulary, kind, reply
        self.prompts: list[list[int]] = []
        self.bodies: list[dict] = []
        self.paths: list[str] = []
        self.refused = 0
        self.tokenized: list[dict] = []
        """The bodies of the tokenize requests."""
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def texts(self) -> list[str]:
        """Each prompt as the model reads it."""
        return [self.vocabulary.text(p) for p in self.prompts]

    # -- the wire formats ---------------------------------------------------------------------

    def answer(self, method: str, path: str, body: dict) -> tuple[int, str, str]:
        """(status, content type, body) for one request."""
        self.paths.append(f"{method} {path}")
        v = self.vocabulary
        if method == "GET":
            found = {"llama-server": "/health", "ollama": "/api/version"}.get(self.kind,
                                                                                "/v1/models")
            if path != found:
                return 404, "application/json", "{}"
            return 200, "application/json", json.dumps({"status": "ok", "data": []})
        if path in ("/tokenize", "/extras/tokenize"):
            self.tokenized.append(body)
        if self.kind == "llama-server" and path == "/tokenize":
            ids = self._mixed(body["content"], body.get("parse_special", True),
                              body.get("add_special", False))
            return 200, "application/json", json.dumps({"tokens": ids})
        if self.kind == "vllm" and path == "/tokenize":  # HF tokenizers parse control text
            ids = v.tokens(body["prompt"], True, body.get("add_special_tokens", True))
            return 200, "application/json", json.dumps(
                {"count": len(ids), "tokens": ids, "max_model_len": 32768, "token_strs": None})
        if self.kind == "llama-cpp-python" and path == "/extras/tokenize":
            return 200, "application/json", json.dumps(
                {"tokens": v.tokens(body["input"], True, True)})
        if self.kind == "llama-server" and path == "/completion":
            self._record(body, self._mixed(body["prompt"], True, True))
            events = [{"content": self.reply, "stop": False},
                      {"content": "", "stop": True,
                       "timings": {"cache_n": 0, "prompt_n": len(self.prompts[-1]),
                                   "predicted_n": 1, "prompt_ms": 1.0}}]
            return 200, "text/event-stream", "".join(f"data: {json.dumps(e)}\n\n"
                                                     for e in events)
        if self.kind in ("vllm", "llama-cpp-python") and path == "/v1/completions":
            prompt = body["prompt"]
            if isinstance(prompt, list):
                if self.kind == "llama-cpp-python":  # its request model takes strings only
                    self.refused += 1  # (seen from the real one: a 500, not a 422)
                    return 500, "application/json", json.dumps({"error": {
                        "message": "1 validation error: {'type': 'string_type', 'loc':"
                                   " ('body', 'prompt', 'str'), 'msg': 'Input should be a"
                                   " valid string'}", "type": "internal_server_error"}})
                ids = [int(t) for t in prompt]
            else:
                ids = v.tokens(prompt, True, True)
            self._record(body, ids)
            return 200, "text/event-stream", openai_stream(
                "m", [self.reply], prompt_tokens=len(ids), cached_tokens=0)
        if self.kind == "ollama" and path == "/api/generate":
            self._record(body, v.tokens(body["prompt"], True, not body.get("raw")))
            return 200, "application/x-ndjson", ollama_stream(
                "m", [self.reply], prompt_eval_count=len(self.prompts[-1]))
        return 404, "application/json", json.dumps({"error": f"no route {path}"})

    def _mixed(self, prompt, parse_special: bool, add_special: bool) -> list[int]:
        """llama-server's reading of a prompt: a string, or a list of ids and strings."""
        if isinstance(prompt, str):
            return self.vocabulary.tokens(prompt, parse_special, add_special)
        out: list[int] = []
        for i, piece in enumerate(prompt):
            if isinstance(piece, str):
                out += self.vocabulary.tokens(piece, parse_special, add_special and i == 0)
            else:
                out.append(int(piece))
        return out

    def _record(self, body: dict, ids: list[int]) -> None:
        self.bodies.append(body)
        self.prompts.append(ids)

    def _handler(self):
        engine = self

        class Handler(BaseHTTPRequestHandler):
            def _reply(self, method: str) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(size) or b"{}") if size else {}
                status, kind, text = engine.answer(method, self.path, body)
                data = text.encode()
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 (http.server's names)
                self._reply("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._reply("POST")

            def log_message(self, *args) -> None:
                pass

        return Handler
