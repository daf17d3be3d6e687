"""``mercury-lsp serve``: the language server over stdio (default) or TCP; command-line options
are the base settings (same fields as ``initializationOptions``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, get_args

import mercury_lsp
from mercury_lsp.cli.daemon import exit_daemon
from mercury_lsp.cli.errors import UsageError
from mercury_lsp.config import LogLevel, Preset, parse_settings
from mercury_lsp.server import configure_logging, run, run_stdio, run_tcp
from mercury_lsp.server.access import AccessError, AllowedRoots, check_tcp, read_token


def add_subcommand(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="run the language server (stdio by default)")
    transport = p.add_mutually_exclusive_group()
    transport.add_argument("--stdio", action="store_true", help="serve over stdin/stdout (the default)")
    transport.add_argument("--tcp", metavar="HOST:PORT", default=None, help="serve over TCP (port 0: any free port)")
    p.add_argument("--model", default=None, help="model directory or hub id (default: embedded)")
    p.add_argument("--device", default=None)
    p.add_argument("--dtype", default=None)
    p.add_argument("--threads", type=int, default=None, help="CPU threads for the model")
    p.add_argument("--preset", default=None, choices=get_args(Preset))
    p.add_argument("--log-level", default=None, choices=get_args(LogLevel))
    p.add_argument("--log-file", default=None, help="write logs here instead of stderr")
    p.add_argument("--token-file", default=None, metavar="PATH",
                   help="a secret clients must send as initializationOptions.token (required for --tcp "
                        "beyond loopback)")
    p.add_argument("--root", action="append", default=[], metavar="DIR",
                   help="with --tcp: a directory clients may have files read from (next edit's workspace "
                        "files), repeatable; none: only the documents they open (stdio: the editor's folders)")
    p.add_argument("--settings", default=None, metavar="JSON",
                   help="base settings as JSON (same fields as initializationOptions)")
    p.add_argument("--debug-log-user-code", action="store_true",
                   help="allow user code (requests, suggestions) into the logs")
    p.set_defaults(func=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    raw: dict[str, Any] = {}
    if args.settings:
        try:
            raw.update(json.loads(args.settings))
        except (ValueError, TypeError) as exc:
            raise UsageError(f"--settings is not a JSON object ({exc})") from None
    for key, value in (("model", args.model), ("device", args.device), ("dtype", args.dtype),
                       ("threads", args.threads), ("preset", args.preset), ("logLevel", args.log_level)):
        if value is not None:
            raw[key] = value
    if args.debug_log_user_code:
        raw["debugLogUserCode"] = True
    if not isinstance(raw, dict):
        raise UsageError("--settings is not a JSON object")
    base, problems = parse_settings(raw)
    if problems:
        raise UsageError("invalid settings: " + "; ".join(problems))
    if args.log_file:
        _check_log_file(args.log_file)
    if args.tcp:
        host, port = _host_port(args.tcp)
        try:
            token = read_token(args.token_file) if args.token_file else None
            check_tcp(host, token)
        except AccessError as exc:
            raise UsageError(str(exc)) from None
        roots = _roots(args.root)
        configure_logging(base, args.log_file)
        try:
            status = run(run_tcp(base, host, port, token, roots=roots))
        except OSError as exc:  # binding: the only OSError that reaches here (connections handle theirs)
            raise UsageError(f"--tcp {args.tcp}: cannot listen: {exc.strerror or exc}") from None
        exit_daemon(status)
    if args.token_file:
        raise UsageError("--token-file applies to --tcp only (stdio has one client: the editor that started it)")
    if args.root:
        raise UsageError("--root applies to --tcp only (over stdio the editor's workspace folders are read)")
    configure_logging(base, args.log_file)
    if sys.stdin.isatty():
        print(terminal_banner(), file=sys.stderr, flush=True)
    exit_daemon(run(run_stdio(base)))


def terminal_banner() -> str:
    """The one line ``serve`` prints when a person, not an editor, started it in a terminal."""
    from mercury_lsp.cli.editors import editors_dir

    setup = editors_dir()
    where = f"{setup}/<editor>/README.md" if setup else "editors/<editor>/README.md"
    return (f"mercury-lsp serve {mercury_lsp.__version__}: the mercury-lsp language server, waiting for an editor "
            f"to speak LSP (JSON-RPC) to it on stdin/stdout; typed text is not LSP. Set an editor up to start "
            f"it: {where} (`mercury-lsp editors`). Ctrl-D quits.")


MAX_PORT = 65535


def _roots(dirs: list[str]) -> AllowedRoots:
    for d in dirs:
        if not Path(d).is_dir():
            raise UsageError(f"--root {d}: not a directory")
    return AllowedRoots(dirs)


def _host_port(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(f"--tcp expects HOST:PORT, got {value!r}")
    if int(port) > MAX_PORT:
        raise UsageError(f"--tcp {value}: port {port} is out of range (0..{MAX_PORT}; 0: any free port)")
    return host.strip("[]"), int(port)


def _check_log_file(path: str) -> None:
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise UsageError(f"--log-file {path}: cannot write to it ({exc.strerror or type(exc).__name__})") from None
