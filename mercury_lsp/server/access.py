"""Who may use a TCP daemon, and what one client may change for the others.

* A token (``serve --token-file``) is required off loopback; a client presents it as
  ``initializationOptions.token`` and is compared in constant time. A wrong or missing token
  ends the connection after one error.
* On a shared (TCP) daemon the engine-wide settings (model, device, dtype, threads, the context
  size, the backend) and the logging switches come only from the daemon's command line: a client's values
  for them are ignored (and it is told once), so one client cannot reload the model, break it,
  or turn on user-code logging for the others. Per-connection settings (preset, maxTokens, ...)
  stay the client's own.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import socket
from pathlib import Path
from typing import Any

import msgspec

from mercury_lsp.config import Settings
from mercury_lsp.server.jsonrpc import INVALID_REQUEST, Reject

log = logging.getLogger("mercury_lsp")

MIN_TOKEN_CHARS = 16  # shorter secrets are guessable over a network
TOKEN_OPTION = "token"
DAEMON_FIELDS = ("model", "device", "dtype", "threads", "backend", "log_level", "debug_log_user_code")


class AccessError(ValueError):
    """A TCP setup that would be unsafe or a token file that cannot be used (message for the CLI)."""


def is_loopback(host: str) -> bool:
    """True when ``host`` binds only to this machine (every address it resolves to is loopback)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        try:
            infos = socket.getaddrinfo(host, None)
        except OSError:
            return False
        return bool(infos) and all(ipaddress.ip_address(i[4][0]).is_loopback for i in infos)


def read_token(path: str) -> str:
    try:
        token = Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise AccessError(f"--token-file {path}: cannot read it ({type(exc).__name__})") from None
    if len(token) < MIN_TOKEN_CHARS:
        raise AccessError(f"--token-file {path}: the token must have at least {MIN_TOKEN_CHARS} characters")
    return token


def check_tcp(host: str, token: str | None) -> None:
    if token is None and not is_loopback(host):
        raise AccessError(f"--tcp {host}: serving beyond loopback needs --token-file (clients send the "
                          f"token as initializationOptions.{TOKEN_OPTION})")


def admit(data: dict, token: str | None) -> Reject | None:
    """For an ``initialize`` message: take the client's token out of its options, and refuse the
    connection when the daemon wants a token and this is not it (constant-time comparison)."""
    if data.get("method") != "initialize":
        return None
    params = data.get("params")
    options = params.get("initializationOptions") if isinstance(params, dict) else None
    offered = options.pop(TOKEN_OPTION, None) if isinstance(options, dict) else None
    if token is None:
        return None
    # surrogatepass: a token holding a lone surrogate is just a wrong one (it raised, unanswered)
    ok = isinstance(offered, str) and hmac.compare_digest(offered.encode("utf-8", "surrogatepass"), token.encode())
    if ok:
        return None
    log.warning("connection refused: missing or wrong token")
    msg_id = data.get("id")
    return Reject(INVALID_REQUEST, "authentication failed: this daemon needs initializationOptions.token",
                  msg_id if isinstance(msg_id, int | str) and not isinstance(msg_id, bool) else None)


def daemon_owned(settings: Settings, base: Settings) -> tuple[Settings, list[str]]:
    """``settings`` with the daemon-wide fields put back to the daemon's; the names changed."""
    changed = [f for f in DAEMON_FIELDS if getattr(settings, f) != getattr(base, f)]
    updates: dict[str, Any] = {f: getattr(base, f) for f in changed}
    if settings.context.max_context_tokens != base.context.max_context_tokens:
        changed.append("context.max_context_tokens")
        updates["context"] = msgspec.structs.replace(settings.context,
                                                     max_context_tokens=base.context.max_context_tokens)
    return (msgspec.structs.replace(settings, **updates) if updates else settings), changed
