"""Opens the backend ``[backend] kind`` names: the in-process engine or a serving engine."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..config import Config, redact_url, url_problem
from ..engine.engine import Engine
from ..engine.llama import ModelLoadError
from ..load_progress import LoadProgress
from ..model_files import ModelUnavailable, cache_dir, resolve_model_paths
from .base import Backend
from .fim_text import TemplateError
from .health import Notify
from .llama_server import LlamaServerBackend
from .local import LocalBackend
from .ollama import OllamaBackend
from .openai_compat import OpenAIBackend
from .remote import RemoteBackend

REMOTE_KINDS: dict[str, type[RemoteBackend]] = {
    "llama-server": LlamaServerBackend,
    "openai": OpenAIBackend,
    "ollama": OllamaBackend,
}


COSTS_FILE = "batch-costs.json"
"""In the cache folder: each model's batch costs as measured here (see engine/costs_store)."""


class BackendConfigError(ValueError):
    """``[backend]`` cannot be used as written; the message names the key to fix."""


class BackendUnavailable(Exception):
    """No backend could be opened from the config; the message says why and what to fix."""


def open_backend(config: Config, settings: Callable[[], Config],
                 progress: LoadProgress | None = None, notify: Notify | None = None) -> Backend:
    """The backend for ``config`` (raises BackendUnavailable).

    ``settings`` gives the current settings later on (the completion service owns them).
    ``progress`` hears the model files being assembled and their weights read; ``notify``
    gets a serving engine's one-per-outage messages. A draft model that cannot be used only
    costs the draft (a warning in the engine's ``warnings``).
    """
    if config.backend.kind != "local":
        try:
            return remote_backend(config, notify)
        except (BackendConfigError, TemplateError, OSError, ValueError) as exc:
            raise BackendUnavailable(str(exc)) from exc
    try:
        try:
            target, draft = resolve_model_paths(config, progress)
            draft_problem = None
        except ModelUnavailable as exc:  # perhaps only the draft: retry without it
            target, draft = resolve_model_paths(replace(config, model=replace(
                config.model, draft_path="none")), progress)
            draft_problem = f"draft model not used ({exc}); completing without a draft model"
        engine = Engine(target, draft, config, progress, costs_file=cache_dir() / COSTS_FILE)
    except (ModelUnavailable, ModelLoadError, OSError, ValueError) as exc:
        message = str(exc)
        if "config" not in message:
            message += " (fix [model] path in the config)"
        raise BackendUnavailable(message) from exc
    if draft_problem:
        engine.warnings.append(draft_problem)
    return LocalBackend(engine, settings)


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
