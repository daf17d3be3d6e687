"""The HTTP API: OpenAI-compatible (``/v1/completions`` with Zed's FIM prompt formats),
Inception-compatible (``/v1/fim/completions``, ``/v1/edit/completions``) and the structured
``/v1/next-edit``, on Starlette + uvicorn, sharing one engine (and its scheduler) between every
client. Loopback by default; an API key off loopback.

Modules: ``wire`` (bodies), ``app`` (routes), ``completions`` / ``edits`` (handlers),
``edit_prompt`` (Inception's tags), ``transport`` (bounded bodies, disconnects, SSE),
``security``, ``errors``, ``openapi``, ``settings``; the command is ``mercury_lsp.cli.http``.
"""
