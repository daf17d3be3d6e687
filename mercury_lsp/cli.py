"""The ``mercury-lsp`` command. Each subcommand parses its arguments and calls one module."""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path


class UsageError(Exception):
    """A command-line mistake: printed without a traceback, exit status 2."""


# ---------------------------------------------------------------------------- infill
def _add_infill(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("infill", help="fill in code at a position of a file (one shot)")
    p.add_argument("file", type=Path)
    p.add_argument("--line", type=int, required=True, help="1-based line of the cursor")
    p.add_argument("--col", type=int, required=True, help="1-based column (character) of the cursor")
    p.add_argument("--max-tokens", type=int, default=32)
    p.add_argument("--steps", type=int, default=None, help="denoising steps (default: one per token)")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--model", default=None, help="model directory or hub id (default: embedded)")
    p.add_argument("--device", default="auto")
    p.add_argument("--dtype", default="auto")
    p.add_argument("--json", action="store_true", help="print the structured result as JSON")
    p.set_defaults(func=_run_infill)


def split_at(text: str, line: int, col: int) -> tuple[str, str]:
    """Split ``text`` at a 1-based (line, column); a column past the line's end is refused.

    Lines end at ``\n``, ``\r\n`` or ``\r`` only, as in editors and LSP (not at the form feeds
    and other separators ``str.splitlines`` also breaks on).
    """
    lines = re.split(r"(?<=\n)|(?<=\r)(?!\n)", text)
    if not 1 <= line <= len(lines):
        raise UsageError(f"--line {line} is outside the file (1..{len(lines)})")
    body = lines[line - 1].rstrip("\r\n")
    if not 1 <= col <= len(body) + 1:
        raise UsageError(f"--col {col} is outside line {line} (1..{len(body) + 1})")
    offset = sum(len(s) for s in lines[: line - 1]) + col - 1
    return text[:offset], text[offset:]


def _run_infill(args: argparse.Namespace) -> int:
    from engine import Engine

    try:
        text = args.file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{args.file}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{args.file}: cannot read as UTF-8 text ({exc})") from None
    prefix, suffix = split_at(text, args.line, args.col)
    engine = Engine.load(args.model, device=args.device, dtype=args.dtype)
    result = engine.infill(prefix, suffix, args.max_tokens, steps=args.steps,
                           temperature=args.temperature, seed=args.seed)
    if args.json:
        print(json.dumps(dataclasses.asdict(result), indent=2))
    else:
        sys.stdout.write(result.text)
        if not result.text.endswith("\n"):
            sys.stdout.write("\n")
    return 0


# ---------------------------------------------------------------------------- main
SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [_add_infill]


def _module_subcommands() -> list[Callable[[argparse._SubParsersAction], None]]:
    """Subcommands defined beside the code they run (imported here, at parse time)."""
    from mercury_lsp import next_edit_cmd, server, train_cmd
    from mercury_lsp.refactor import cli as refactor_cli

    return [train_cmd.add_subcommand, server.add_subcommand, next_edit_cmd.add_subcommand,
            refactor_cli.add_subcommand]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mercury-lsp", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for add in SUBCOMMANDS + _module_subcommands():
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UsageError as exc:
        print(f"mercury-lsp {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        # The engine (and torch) is imported only by commands that need it: `serve` answers
        # `initialize` before the model's imports are done.
        engine_errors = sys.modules.get("engine.errors")
        if engine_errors is not None and isinstance(exc, engine_errors.EngineError):
            print(f"mercury-lsp {args.command}: error: {exc}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
