"""Typed settings of ``mercury-lsp http`` (defaults are what a user should get)."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

from mercury_lsp.backend.base import QueueLimits

# Loopback only, unless asked: an open port needs an API key.
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


class HttpLimits(msgspec.Struct, rename="camel", kw_only=True, frozen=True):
    """Limits against oversized and slow requests."""
    # A whole request body (an edit request carries a file and its neighbours).
    max_body_bytes: Annotated[int, Meta(ge=1024)] = 4 * 1024 * 1024
    # prompt + suffix characters: far more than any model's context (the engine trims to it),
    # far less than what would make tokenizing a request slow.
    max_prompt_chars: Annotated[int, Meta(ge=1)] = 256 * 1024
    max_tokens: Annotated[int, Meta(ge=1, le=4096)] = 512  # largest max_tokens accepted
    default_max_tokens: Annotated[int, Meta(ge=1, le=4096)] = 64  # when a request names none
    header_timeout_s: Annotated[float, Meta(gt=0)] = 10.0  # connection open -> headers complete
    # A request line (414 past it) and a whole head (431): clients send a few hundred bytes; a
    # URL of a few KiB and a long cookie still fit (nginx: 8 KiB lines, 32 KiB in all).
    max_request_line_bytes: Annotated[int, Meta(ge=1024)] = 8 * 1024
    max_header_bytes: Annotated[int, Meta(ge=1024)] = 32 * 1024
    body_timeout_s: Annotated[float, Meta(gt=0)] = 10.0  # headers complete -> body complete
    request_timeout_s: Annotated[float, Meta(gt=0)] = 30.0  # deadline of one request's work
    keep_alive_s: Annotated[float, Meta(gt=0)] = 5.0  # idle keep-alive connections are closed after


class HttpSettings(msgspec.Struct, rename="camel", kw_only=True, frozen=True):
    host: str = DEFAULT_HOST
    port: Annotated[int, Meta(ge=0, le=65535)] = DEFAULT_PORT
    api_key: str | None = None  # from --api-key-file; required off loopback
    limits: HttpLimits = HttpLimits()
    queue: QueueLimits = QueueLimits()
    preset: str = "balanced"
    debug_log_user_code: bool = False
