"""lsp-coder: local AI code completion over the Language Server Protocol."""

__version__ = "0.1.0"
