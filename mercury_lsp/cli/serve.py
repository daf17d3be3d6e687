"""``mercury-lsp serve``: the language server over stdio (default) or TCP; command-line options
are the base settings (same fields as ``initializationOptions``)."""

from __future__ import annotations

import argparse
import json
from typing import Any, get_args

from mercury_lsp.cli.errors import UsageError
from mercury_lsp.config import LogLevel, Preset, parse_settings, problems_message
from mercury_lsp.server import configure_logging, run, run_stdio, run_tcp


def add_subcommand(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="run the language server (stdio by default)")
    p.add_argument("--stdio", action="store_true", help="serve over stdin/stdout (the default)")
    p.add_argument("--tcp", metavar="HOST:PORT", default=None, help="serve over TCP (port 0: any free port)")
    p.add_argument("--model", default=None, help="model directory or hub id (default: embedded)")
    p.add_argument("--device", default=None)
    p.add_argument("--dtype", default=None)
    p.add_argument("--threads", type=int, default=None, help="CPU threads for the model")
    p.add_argument("--preset", default=None, choices=get_args(Preset))
    p.add_argument("--log-level", default=None, choices=get_args(LogLevel))
    p.add_argument("--log-file", default=None, help="write logs here instead of stderr")
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
        except (json.JSONDecodeError, TypeError) as exc:
            raise UsageError(f"--settings is not a JSON object ({exc})") from None
    for key, value in (("model", args.model), ("device", args.device), ("dtype", args.dtype),
                       ("threads", args.threads), ("preset", args.preset), ("logLevel", args.log_level)):
        if value is not None:
            raw[key] = value
    if args.debug_log_user_code:
        raw["debugLogUserCode"] = True
    base, problems = parse_settings(raw)
    if problems:
        raise UsageError(problems_message(problems))
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not host or not port.isdigit():
            raise UsageError(f"--tcp expects HOST:PORT, got {args.tcp!r}")
        configure_logging(base, args.log_file)
        return run(run_tcp(base, host, int(port)))
    configure_logging(base, args.log_file)
    return run(run_stdio(base))
