"""Whether a client's completion lists carry lsp-coder's suggestion as an item.

A client that draws the suggestion itself as ghost text (the VS Code extension, the Neovim
plugin, Emacs's ``lsp-coder-ghost-mode``) says so at ``initialize`` with the experimental
client capability ``lspCoderGhostText``. It is then offered no ``completionProvider`` (protocol.py)
and a ``textDocument/completion`` request that comes anyway is answered with an empty list at
once, so the same text is not offered twice (as ghost text and as an item of the list, where
Tab would take the list's) and the engine does not work on an item nobody shows. Every other
client (Helix, Emacs's completion-at-point, Neovim's menu or omnifunc) keeps the item.
"""

from __future__ import annotations

from typing import Any

GHOST_TEXT_CAPABILITY = "lspCoderGhostText"


def wants_menu_item(capabilities: Any) -> bool:
    """Whether completion lists should hold the suggestion: False when the client's
    capabilities say it shows suggestions as ghost text."""
    experimental = getattr(capabilities, "experimental", None)
    return not (isinstance(experimental, dict) and bool(experimental.get(GHOST_TEXT_CAPABILITY)))
