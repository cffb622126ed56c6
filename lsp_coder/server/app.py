"""The language server: thin handlers that translate between LSP and the completion service.

One session per editor (``session.LspCoderServer``), with its handlers registered one group per
module: ``session_handlers`` (initialize, configuration, shutdown), ``document_handlers`` (open
documents), ``completion_handlers`` (inline and menu completions), ``commands`` and ``health``
(the commands).
"""

from __future__ import annotations

from ..config import Config
from .commands import register_commands
from .completion_handlers import register_completion_handlers
from .document_handlers import register_document_handlers
from .health import register_health_commands
from .host import EngineHost
from .session import LspCoderServer
from .session_handlers import register_session_handlers


def build_server(host: EngineHost, base_config: Config, startup_problem: str | None = None,
                 cwd: str | None = None) -> LspCoderServer:
    """A new editor session on ``host`` (``startup_problem``: what went wrong reading the config
    file, told to the user once the session is initialized; ``cwd``: the folder the editor
    started lsp-coder in, default this process's)."""
    server = LspCoderServer(host, base_config, cwd)
    register_health_commands(server)
    register_session_handlers(server, startup_problem)
    register_document_handlers(server)
    register_completion_handlers(server)
    register_commands(server)
    return server
