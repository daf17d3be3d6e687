"""The work of ``mercury-lsp next-edit FILE --after-diff PATCH`` (its arguments: ``cli.next_edit``):
apply a unified diff (the user's first edit) to FILE in memory, predict the remaining edits, and
print them human-readable (or as the structured JSON of ``schema.NextEditResult``).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from mercury_lsp.documents import PositionEncoding
from mercury_lsp.next_edit.pipeline import predict, to_result
from mercury_lsp.next_edit.query import DocState, EngineEdits, NextEditQuery
from mercury_lsp.next_edit.text import diff_region
from mercury_lsp.schema import NextEditResult
from mercury_lsp.syntax import Grammars, grammar_for

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class PatchError(ValueError):
    """A diff that cannot be read or does not apply (message for the user)."""


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


@dataclass(frozen=True)
class SourceFile:
    """A file given on the command line (its text read by the caller)."""
    path: Path
    text: str


def predict_after_patch(file: SourceFile, after: str, also: list[SourceFile], engine,
                        model_name: str) -> NextEditResult:
    """The edits that follow changing ``file`` to ``after``, over ``file`` and ``also``, by
    ``engine`` (an ``engine.Engine``)."""
    uri = file.path.resolve().as_uri()
    docs = [DocState(uri, after, grammar_for("", uri), None, (file.text,), 1.0)]
    for extra in also:
        u = extra.path.resolve().as_uri()
        docs.append(DocState(u, extra.text, grammar_for("", u), None))
    _, _, cursor = diff_region(file.text, after)
    query = NextEditQuery(tuple(docs), uri, cursor, PositionEncoding.UTF16)
    outcome = predict(query, EngineEdits(engine), Grammars())
    return to_result(outcome, query, model_name)


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
