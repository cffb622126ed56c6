"""A rassumfrassum (rass) preset for lsp-coder beside another language server.

rass sends a request it has no rule for to its first server only, so lsp-coder, which comes
after the user's own server, would never get textDocument/inlineCompletion. This preset sends
that request to the servers that offer it (lsp-coder) and leaves every other rule to rass:

    rass /path/to/lsp-coder-rass.py -- pylsp -- lsp-coder

lsp-coder.el's `lsp-coder-eglot-beside' passes it (`lsp-coder-rass-preset').
"""

from rassumfrassum.frassum import LspLogic

INLINE_COMPLETION = "textDocument/inlineCompletion"


class LspCoderLogic(LspLogic):
    """rass's routing, with inline completions for the servers that answer them."""

    async def on_client_request(self, method, params, servers):
        if method == INLINE_COMPLETION:
            return [s for s in servers if s.caps.get("inlineCompletionProvider") is not None]
        return await super().on_client_request(method, params, servers)


def logic_class():
    """The routing rass uses with this preset."""
    return LspCoderLogic
