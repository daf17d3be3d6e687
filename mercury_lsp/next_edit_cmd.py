"""``mercury-lsp next-edit`` and ``mercury-lsp schema``.

``next-edit FILE --after-diff PATCH``: apply a unified diff (the user's first edit) to FILE in
memory, predict the remaining edits, print them (human-readable, or the structured JSON of
``schema.NextEditResult`` with ``--json``). ``schema``: the JSON Schema of that format.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import msgspec

from mercury_lsp.documents import PositionEncoding
from mercury_lsp.next_edit import DocState, EngineEdits, NextEditQuery, diff_region, predict, to_result
from mercury_lsp.schema import ApplyEditsParams, NextEditParams, NextEditResult
from mercury_lsp.syntax import grammar_for

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class PatchError(ValueError):
    """A diff that cannot be read or does not apply (message for the user)."""


# ---------------------------------------------------------------------------- unified diff
def apply_unified_diff(text: str, patch: str, name: str | None = None) -> str:
    """``text`` with the hunks of ``patch`` applied (exact context match, no fuzz).

    A patch touching several files uses the file whose ``+++`` path ends with ``name``.
    """
    files: list[tuple[str, list[str]]] = []
    current: list[str] | None = None
    rem_old = rem_new = 0
    for line in patch.splitlines(keepends=True):
        if rem_old > 0 or rem_new > 0:  # inside a hunk: count its lines
            assert current is not None
            current.append(line)
            tag = line[:1]
            if tag == " " or not line.strip("\r\n"):
                rem_old, rem_new = rem_old - 1, rem_new - 1
            elif tag == "-":
                rem_old -= 1
            elif tag == "+":
                rem_new -= 1
            elif tag != "\\":
                raise PatchError(f"malformed hunk line {line.rstrip()[:60]!r}")
            continue
        if line.startswith("\\") and current is not None:
            current.append(line)
        elif line.startswith("+++ "):
            current = []
            files.append((line[4:].strip().split("\t")[0], current))
        elif (m := HUNK.match(line)) is not None:
            if current is None:
                current = []
                files.append(("", current))
            current.append(line)
            rem_old, rem_new = int(m.group(2) or 1), int(m.group(4) or 1)
        # other lines ("diff --git", "index", "--- a/...", prose) are headers: skipped
    if not files:
        raise PatchError("no hunks found (expected a unified diff with @@ ... @@ lines)")
    if len(files) > 1:
        matches = [f for f in files if name and f[0].endswith(name)]
        if len(matches) != 1:
            raise PatchError(f"the patch touches {len(files)} files; none (or several) match {name!r}")
        files = matches
    body = files[0][1]
    src = text.splitlines(keepends=True)
    out: list[str] = []
    pos = 0  # next source line (0-based) not yet copied
    i = 0
    hunks = 0
    while i < len(body):
        m = HUNK.match(body[i])
        if not m:
            if body[i].strip():
                raise PatchError(f"unexpected line in the patch: {body[i].rstrip()[:60]!r}")
            i += 1
            continue
        hunks += 1
        old_start, old_len = int(m.group(1)), int(m.group(2) or 1)
        new_len = int(m.group(4) or 1)
        start = old_start - 1 if old_len else old_start
        if start < pos or start > len(src):
            raise PatchError(f"hunk {hunks} starts at line {old_start}, outside the file or before the previous hunk")
        out.extend(src[pos:start])
        pos = start
        i += 1
        seen_old = seen_new = 0
        while i < len(body) and (seen_old < old_len or seen_new < new_len or body[i].startswith("\\")):
            line = body[i]
            tag, content = line[:1], line[1:]
            if tag == "\\":  # "\ No newline at end of file": the previous line has no newline
                if out and out[-1].endswith("\n") and _last_tag(body, i) in ("+", " "):
                    out[-1] = out[-1][:-1]
                i += 1
                continue
            if tag in (" ", "-"):
                if pos >= len(src) or src[pos].rstrip("\r\n") != content.rstrip("\r\n"):
                    raise PatchError(f"hunk {hunks} does not apply: line {pos + 1} of the file does not "
                                     f"match the patch")
                if tag == " ":
                    out.append(src[pos])
                pos += 1
                seen_old += 1
                seen_new += tag == " "
            elif tag == "+":
                out.append(content if content.endswith("\n") else content + "\n")
                seen_new += 1
            elif line.strip() == "":  # an empty context line whose leading space was stripped
                if pos >= len(src) or src[pos].strip():
                    raise PatchError(f"hunk {hunks} does not apply at line {pos + 1}")
                out.append(src[pos])
                pos += 1
                seen_old += 1
                seen_new += 1
            else:
                raise PatchError(f"hunk {hunks}: malformed line {line.rstrip()[:60]!r}")
            i += 1
        if seen_old != old_len or seen_new != new_len:
            raise PatchError(f"hunk {hunks} is truncated (expected -{old_len} +{new_len} lines)")
    if not hunks:
        raise PatchError("no hunks found (expected a unified diff with @@ ... @@ lines)")
    out.extend(src[pos:])
    return "".join(out)


def _last_tag(body: list[str], i: int) -> str:
    return body[i - 1][:1] if i > 0 else ""


# ---------------------------------------------------------------------------- commands
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
    p.set_defaults(func=_run_next_edit)
    s = sub.add_parser("schema", help="print the JSON Schema of the structured edit format")
    s.add_argument("--all", action="store_true", help="also the request/command params")
    s.set_defaults(func=_run_schema)


def _read(path: Path, what: str) -> str:
    from mercury_lsp.cli import UsageError

    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{what} {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{what} {path}: cannot read as UTF-8 text ({exc})") from None


def _run_next_edit(args: argparse.Namespace) -> int:
    from mercury_lsp.cli import UsageError

    text = _read(args.file, "file")
    patch = _read(args.after_diff, "patch")
    try:
        after = apply_unified_diff(text, patch, args.file.name)
    except PatchError as exc:
        raise UsageError(f"{args.after_diff}: {exc}") from None
    if after == text:
        raise UsageError(f"{args.after_diff}: the patch changes nothing")
    uri = args.file.resolve().as_uri()
    docs = [DocState(uri, after, grammar_for("", uri), None, (text,), 1.0)]
    for extra in args.also:
        t = _read(extra, "file")
        u = extra.resolve().as_uri()
        docs.append(DocState(u, t, grammar_for("", u), None))
    _, _, cursor = diff_region(text, after)
    query = NextEditQuery(tuple(docs), uri, cursor, PositionEncoding.UTF16)
    from engine import Engine
    from mercury_lsp.syntax import Grammars

    engine = Engine.load(args.model, device=args.device, dtype=args.dtype)
    outcome = predict(query, EngineEdits(engine), Grammars())
    result = to_result(outcome, query, str(engine.path or args.model or "embedded"))
    if args.json:
        sys.stdout.write(msgspec.json.format(msgspec.json.encode(result).decode(), indent=2) + "\n")
        return 0
    print_human(result, Path.cwd())
    return 0


def print_human(result: NextEditResult, cwd: Path) -> None:
    if not result.edits:
        print("no further edits predicted")
    for e in result.edits:
        path = e.uri.removeprefix("file://")
        try:
            path = str(Path(path).relative_to(cwd))
        except ValueError:
            pass
        r = e.range
        print(f"{path}:{r.start.line + 1}:{r.start.character + 1}  {e.old_text!r} -> {e.new_text!r}  "
              f"[{e.kind}, {e.source}, confidence {e.confidence:.3f}]  {e.reason}")
    t = result.timings
    print(f"({len(result.edits)} edit(s); candidates {t.candidates_ms:.0f} ms, model {t.model_ms:.0f} ms)",
          file=sys.stderr)


def _run_schema(args: argparse.Namespace) -> int:
    if args.all:
        (result, params, apply), defs = msgspec.json.schema_components(
            [NextEditResult, NextEditParams, ApplyEditsParams])
        doc = {"$defs": defs, "anyOf": [result, params, apply]}
    else:
        doc = msgspec.json.schema(NextEditResult)
    sys.stdout.write(msgspec.json.format(msgspec.json.encode(doc).decode(), indent=2) + "\n")
    return 0
