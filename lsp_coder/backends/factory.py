"""The backend ``[backend] kind`` names (the local engine is built by the completion layer)."""

from __future__ import annotations

from ..config import Config, redact_url, url_problem
from .health import Notify
from .llama_server import LlamaServerBackend
from .ollama import OllamaBackend
from .openai_compat import OpenAIBackend
from .remote import RemoteBackend

REMOTE_KINDS: dict[str, type[RemoteBackend]] = {
    "llama-server": LlamaServerBackend,
    "openai": OpenAIBackend,
    "ollama": OllamaBackend,
}


class BackendConfigError(ValueError):
    """``[backend]`` cannot be used as written; the message names the key to fix."""


def remote_backend(config: Config, notify: Notify | None = None) -> RemoteBackend:
    """The HTTP backend for ``config.backend`` (raises BackendConfigError, TemplateError)."""
    bc = config.backend
    if not bc.url:
        raise BackendConfigError(f"[backend] kind = {bc.kind!r} needs url ="
                                 " 'http://host:port'")
    if problem := url_problem(bc.url):
        raise BackendConfigError(f"[backend] url = {redact_url(bc.url)!r}: {problem}")
    if bc.kind == "ollama" and not bc.model:
        raise BackendConfigError("[backend] kind = 'ollama' needs model (an Ollama model name)")
    return REMOTE_KINDS[bc.kind](config, notify)
