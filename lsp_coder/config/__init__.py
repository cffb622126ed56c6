"""One typed configuration tree.

Precedence, lowest first: the defaults below < a TOML file (``--config PATH``,
``$LSP_CODER_CONFIG`` or ``$XDG_CONFIG_HOME/lsp-coder/config.toml``) < the client's
``initializationOptions`` < ``workspace/didChangeConfiguration``. Every level is the same tree as
``config.example.toml``; a layer is merged key by key over the one below it.

The records are ``sections.py``'s; merging a layer over a config is ``layers.py``'s (``apply``),
with the checks of its values in ``checks.py`` and ``urls.py`` and their wording in
``messages.py``; ``converter.py`` turns a tree into plain values and back, ``files.py`` reads the
config file and ``sharing.py`` tells which sessions can share a model. The names most callers
need are imported here.
"""

from .layers import ConfigError, apply
from .sections import (
    MAX_N_SEQ,
    MAX_TOKENS_ANY,
    MIN_N_CTX,
    BackendConfig,
    CacheConfig,
    CompletionConfig,
    Config,
    ContextConfig,
    FimStrings,
    IdleConfig,
    ModelConfig,
    ServerConfig,
    SpeculativeConfig,
)
from .sharing import model_key
from .urls import redact_url, url_problem

__all__ = [
    "MAX_N_SEQ", "MAX_TOKENS_ANY", "MIN_N_CTX", "BackendConfig", "CacheConfig",
    "CompletionConfig", "Config", "ConfigError", "ContextConfig", "FimStrings", "IdleConfig",
    "ModelConfig", "ServerConfig", "SpeculativeConfig", "apply", "model_key", "redact_url",
    "url_problem",
]
