"""``mercury-lsp schema``: the JSON Schema of the structured edit format (``--all``: also the
request and command params)."""

from __future__ import annotations

import argparse
import sys

import msgspec

from mercury_lsp.schema import ApplyEditsParams, NextEditParams, NextEditResult


def add_subcommand(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("schema", help="print the JSON Schema of the structured edit format")
    s.add_argument("--all", action="store_true", help="also the request/command params")
    s.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.all:
        (result, params, apply), defs = msgspec.json.schema_components(
            [NextEditResult, NextEditParams, ApplyEditsParams])
        doc = {"$defs": defs, "anyOf": [result, params, apply]}
    else:
        doc = msgspec.json.schema(NextEditResult)
    sys.stdout.write(msgspec.json.format(msgspec.json.encode(doc).decode(), indent=2) + "\n")
    return 0
