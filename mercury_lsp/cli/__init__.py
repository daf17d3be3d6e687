"""The ``mercury-lsp`` command. Each subcommand (one module here) parses its arguments and calls
one feature module; ``UsageError`` (``cli.errors``) is a command-line mistake (exit status 2)."""

from __future__ import annotations

import argparse
import sys

from mercury_engine.errors import EngineError
from mercury_lsp.cli import http, infill, next_edit, refactor, schema, serve, train
from mercury_lsp.cli.errors import UsageError
from mercury_lsp.cli.infill import split_at

__all__ = ["UsageError", "build_parser", "main", "split_at"]

SUBCOMMANDS = (infill, train, serve, next_edit, refactor, schema, http)
USAGE_EXIT = 2  # a command-line mistake (as argparse exits)
INTERRUPTED_EXIT = 130  # 128 + SIGINT, as shells report Ctrl-C


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mercury-lsp", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for command in SUBCOMMANDS:
        command.add_subcommand(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UsageError as exc:
        print(f"mercury-lsp {args.command}: error: {exc}", file=sys.stderr)
        return USAGE_EXIT
    except KeyboardInterrupt:
        return INTERRUPTED_EXIT
    except Exception as exc:
        if isinstance(exc, EngineError):
            print(f"mercury-lsp {args.command}: error: {exc}", file=sys.stderr)
            return USAGE_EXIT
        raise
