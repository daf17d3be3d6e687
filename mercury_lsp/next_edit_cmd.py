"""``mercury-lsp next-edit`` and ``mercury-lsp schema``.

``next-edit FILE --after-diff PATCH | --git [REV]``: the edits that follow a first edit of FILE,
whether or not FILE already contains it; output and ``--apply`` as in ``refactor``
(``mercury_lsp.refactor.cli``). ``schema``: the JSON Schema of the structured edit format.
"""

from __future__ import annotations

import argparse
import sys

import msgspec

from mercury_lsp.refactor.patch import PatchError, apply_hunks, parse_patch
from mercury_lsp.schema import ApplyEditsParams, NextEditParams, NextEditResult

__all__ = ["PatchError", "add_subcommand", "apply_unified_diff"]


def apply_unified_diff(text: str, patch: str, name: str | None = None) -> str:
    """``text`` with the hunks of ``patch`` applied (exact match; a patch touching several files
    uses the one whose path ends with ``name``). Raises ``PatchError``."""
    files = parse_patch(patch)
    if len(files) > 1:
        files = [f for f in files if name and f.path.endswith(name)]
        if len(files) != 1:
            raise PatchError(f"the patch touches several files; none (or several) match {name!r}")
    return apply_hunks(text, files[0].hunks)[0]


# ---------------------------------------------------------------------------- commands
def add_subcommand(sub: argparse._SubParsersAction) -> None:
    from mercury_lsp.refactor.cli import add_next_edit  # next-edit shares refactor's output and --apply

    add_next_edit(sub)
    s = sub.add_parser("schema", help="print the JSON Schema of the structured edit format")
    s.add_argument("--all", action="store_true", help="also the request/command params")
    s.set_defaults(func=_run_schema)


def _run_schema(args: argparse.Namespace) -> int:
    if args.all:
        (result, params, apply), defs = msgspec.json.schema_components(
            [NextEditResult, NextEditParams, ApplyEditsParams])
        doc = {"$defs": defs, "anyOf": [result, params, apply]}
    else:
        doc = msgspec.json.schema(NextEditResult)
    sys.stdout.write(msgspec.json.format(msgspec.json.encode(doc).decode(), indent=2) + "\n")
    return 0
