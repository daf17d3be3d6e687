"""``mercury-lsp next-edit FILE --after-diff PATCH [--also FILE]...``: predict the edits that
follow a first edit (the work: ``next_edit.command``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import msgspec

from mercury_lsp.cli.errors import UsageError, read_text
from mercury_lsp.next_edit.command import (
    PatchError,
    SourceFile,
    apply_unified_diff,
    predict_after_patch,
    print_human,
)


def add_subcommand(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("next-edit", help="predict the edits that follow a first edit (a unified diff)")
    p.add_argument("file", type=Path)
    p.add_argument("--after-diff", type=Path, required=True, metavar="PATCH",
                   help="unified diff of the first edit (applied in memory, the file is not changed)")
    p.add_argument("--also", type=Path, action="append", default=[], metavar="FILE",
                   help="another file to look for occurrences in (repeatable)")
    p.add_argument("--model", default=None, help="model directory or hub id (default: embedded)")
    p.add_argument("--device", default="auto")
    p.add_argument("--dtype", default="auto")
    p.add_argument("--json", action="store_true", help="print the structured JSON (mercury-lsp schema)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from engine import Engine

    file = SourceFile(args.file, read_text(args.file, "file"))
    patch = read_text(args.after_diff, "patch")
    try:
        after = apply_unified_diff(file.text, patch, args.file.name)
    except PatchError as exc:
        raise UsageError(f"{args.after_diff}: {exc}") from None
    if after == file.text:
        raise UsageError(f"{args.after_diff}: the patch changes nothing")
    also = [SourceFile(path, read_text(path, "file")) for path in args.also]
    engine = Engine.load(args.model, device=args.device, dtype=args.dtype)
    result = predict_after_patch(file, after, also, engine, str(engine.path or args.model or "embedded"))
    if args.json:
        sys.stdout.write(msgspec.json.format(msgspec.json.encode(result).decode(), indent=2) + "\n")
        return 0
    print_human(result, Path.cwd())
    return 0
