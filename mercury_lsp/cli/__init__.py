"""The ``mercury-lsp`` command. Each subcommand (one module here) parses its arguments and calls
one feature module; ``UsageError`` (``cli.errors``) is a command-line mistake (exit status 2).
``DESCRIPTION`` and ``EPILOG`` are what ``mercury-lsp --help`` shows a user."""

from __future__ import annotations

import argparse
import sys

import mercury_lsp
from mercury_engine.errors import EngineError
from mercury_lsp.cli import doctor, editors, http, infill, next_edit, refactor, schema, serve, train
from mercury_lsp.cli.errors import UsageError
from mercury_lsp.cli.infill import split_at

__all__ = ["UsageError", "build_parser", "main", "split_at"]

# In the order --help lists them: the daemon first, then one-shot commands, then tooling.
SUBCOMMANDS = (serve, http, infill, next_edit, refactor, doctor, editors, schema, train)
USAGE_EXIT = 2  # a command-line mistake (as argparse exits)
INTERRUPTED_EXIT = 130  # 128 + SIGINT, as shells report Ctrl-C


DESCRIPTION = """\
Local code completion and next-edit suggestions for your editor, from a diffusion language model
that runs on this machine (or a server you point it at). Editors start `mercury-lsp serve`
themselves; `mercury-lsp editors` prints where their set-up is."""

EPILOG = """\
first steps:
  mercury-lsp doctor                      check the install, the model and your editors
  mercury-lsp infill FILE --line 5 --col 12
                                          fill in code at a position (prints where it went)
  mercury-lsp editors neovim              where the Neovim plugin is (also: emacs, vscode, helix, zed)

`mercury-lsp COMMAND --help` describes a command; docs/install.md and docs/cli.md say more."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mercury-lsp", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"mercury-lsp {mercury_lsp.__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", title="commands")
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
