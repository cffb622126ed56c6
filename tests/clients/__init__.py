"""Tests that drive lsp-coder from real editor clients."""
