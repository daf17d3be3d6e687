"""Who may use a TCP daemon, what one client may change for the others, and what it may read.

* A token (``serve --token-file``) is required off loopback; a client presents it as
  ``initializationOptions.token`` and is compared in constant time. A wrong or missing token
  ends the connection after one error.
* Until a connection's ``initialize`` is accepted (``PreAuth``) it has a deadline, a small frame
  limit, and a place among a bounded number of such connections; a bad frame ends it.
* What a connection may read from disk besides its open documents (``AllowedRoots``): over
  stdio, the editor's workspace folders; on a shared daemon, only the ``--root`` directories of
  its command line (none: nothing).
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
import os
import socket
from collections.abc import Iterable
from dataclasses import dataclass
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


# ---------------------------------------------------------------------------- before initialize
# A client sends ``initialize`` first, at once: one that has not within this is not a client.
PRE_AUTH_TIMEOUT_S = 10.0
# Connections waiting to be accepted at one time: editors connect one by one; 300 idle sockets
# held the daemon's descriptors and memory (issue 27).
MAX_PRE_AUTH_CONNECTIONS = 16
# The largest frame before ``initialize`` is accepted: an editor's initialize (VS Code's, every
# capability) is about 15 KiB; four 60 MB frames took 250 MB before the token was checked.
PRE_AUTH_MAX_MESSAGE_BYTES = 256 * 1024


@dataclass
class PreAuth:
    """The bounds on TCP connections whose ``initialize`` has not been accepted yet."""
    timeout_s: float = PRE_AUTH_TIMEOUT_S
    max_connections: int = MAX_PRE_AUTH_CONNECTIONS
    max_message_bytes: int = PRE_AUTH_MAX_MESSAGE_BYTES
    waiting: int = 0

    def admit(self) -> Waiting | None:
        """A new connection's place among those waiting; None (refuse it) when they are too many."""
        if self.waiting >= self.max_connections:
            log.warning("connection refused: %d connections are already waiting to initialize", self.waiting)
            return None
        self.waiting += 1
        return Waiting(self)


class Waiting:
    """One connection's place until its ``initialize`` is accepted or it ends (``release``, once)."""

    def __init__(self, bounds: PreAuth) -> None:
        self.bounds = bounds
        self.released = False

    def release(self) -> None:
        if not self.released:
            self.released = True
            self.bounds.waiting -= 1


# ---------------------------------------------------------------------------- what may be read
class AllowedRoots:
    """The directories a connection may read files under, besides its open documents: the one
    place the server decides it (next edit's scan of workspace files; the repository memory).

    ``contains(path)``: ``path`` resolved (symbolic links followed, ``..`` gone) lies under a
    root. ``within(folders)``: the directories to read for a client whose workspace folders are
    ``folders`` (a folder inside a root, or a root inside a folder). Roots are resolved once,
    when made. Over stdio the server makes one from the editor's workspace folders each time
    (``MercuryServer.allowed_roots``); a shared daemon has its command line's for every client.
    """

    def __init__(self, roots: Iterable[str | Path] = ()) -> None:
        self.roots: tuple[Path, ...] = tuple(dict.fromkeys(Path(os.path.realpath(r)) for r in roots if str(r)))

    def __bool__(self) -> bool:
        return bool(self.roots)

    def __repr__(self) -> str:
        return f"AllowedRoots({[str(r) for r in self.roots]})"

    def contains(self, path: str | Path) -> bool:
        real = Path(os.path.realpath(path))
        return any(real == r or real.is_relative_to(r) for r in self.roots)

    def within(self, folders: Iterable[str | Path]) -> list[Path]:
        out: dict[Path, None] = {}
        for folder in folders:
            real = Path(os.path.realpath(folder))
            for r in self.roots:
                if real == r or real.is_relative_to(r):
                    out[real] = None
                elif r.is_relative_to(real):
                    out[r] = None
        return list(out)
