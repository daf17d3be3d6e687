"""mercury-lsp: the editor-facing daemon (LSP, HTTP, CLI). It knows text, not tensors."""

__version__ = "0.1.0"
