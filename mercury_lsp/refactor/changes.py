"""The result of a batch refactor — per file, its text before and after and the edits — and its
three printed forms: a unified diff (``diff``), the published edit schema (``json``:
``schema.NextEditResult``, one ``PredictedEdit`` per edit) and a per-file ``summary``."""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import msgspec

from mercury_lsp import __version__
from mercury_lsp.next_edit import apply_edits
from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.refactor.files import Source
from mercury_lsp.schema import (
    NextEditResult,
    NextEditTimings,
    PredictedEdit,
    TextPosition,
    TextRange,
)
from mercury_lsp.text import PositionEncoding, TextIndex

OutputFormat = Literal["diff", "json", "summary"]
FORMATS: tuple[str, ...] = ("diff", "json", "summary")


# One edit: replace ``[start, end)`` (code points) of a file's text; next-edit's own result type.
Edit = Prediction


@dataclass
class FileChange:
    source: Source
    edits: list[Edit] = field(default_factory=list)
    # The text the edits' offsets refer to when it is not the file's: a patch not yet in the file
    # (the result then includes the patch itself).
    base: str | None = None

    @property
    def new_text(self) -> str:
        base = self.source.text if self.base is None else self.base
        return apply_edits(base, [(e.start, e.end, e.new_text) for e in self.edits])

    @property
    def changed(self) -> bool:
        return bool(self.edits) or (self.base is not None and self.base != self.source.text)


@dataclass
class Report:
    """What a run found: changes, notes (skipped files...), and what it assumed."""
    changes: list[FileChange]
    notes: list[str] = field(default_factory=list)
    files_read: int = 0
    timings: NextEditTimings = field(default_factory=NextEditTimings)
    model: str = ""

    @property
    def edit_count(self) -> int:
        return sum(len(c.edits) for c in self.changes)


def display_path(path: Path, cwd: Path | None = None) -> str:
    try:
        return os.path.relpath(path, cwd or Path.cwd())
    except ValueError:
        return str(path)


def render_diff(report: Report) -> str:
    out = []
    for c in report.changes:
        if not c.changed:
            continue
        name = display_path(c.source.path).replace(os.sep, "/")
        out.extend(difflib.unified_diff(c.source.text.splitlines(keepends=True),
                                        c.new_text.splitlines(keepends=True),
                                        f"a/{name}", f"b/{name}"))
        if out and not out[-1].endswith("\n"):
            out[-1] += "\n\\ No newline at end of file\n"
    return "".join(out)


def to_schema(report: Report, encoding: PositionEncoding = PositionEncoding.UTF16) -> NextEditResult:
    edits = []
    for c in report.changes:
        lines = TextIndex(c.source.text if c.base is None else c.base)
        for e in c.edits:
            edits.append(PredictedEdit(
                uri=c.source.uri, range=TextRange(TextPosition(*lines.position_at(e.start, encoding)),
                                              TextPosition(*lines.position_at(e.end, encoding))),
                new_text=e.new_text, confidence=round(e.confidence, 6), reason=e.reason, kind=e.kind,
                source=e.source, old_text=e.old_text, document_version=None, rule=e.rule or None))
    return NextEditResult(edits=edits, model=report.model, version=__version__,
                          position_encoding=encoding.value, timings=report.timings)


def render_json(report: Report) -> str:
    return msgspec.json.format(msgspec.json.encode(to_schema(report)).decode(), indent=2) + "\n"


SUMMARY_TEXT_CHARS = 60  # of an edit's old/new text quoted per line


def _quote(text: str) -> str:
    r = repr(text)
    return r if len(r) <= SUMMARY_TEXT_CHARS else r[: SUMMARY_TEXT_CHARS - 4] + "...'"


def render_summary(report: Report) -> str:
    """One line per edit (``path:line:col  old -> new  [kind, source, confidence]  reason``),
    then the totals."""
    out = []
    for c in report.changes:
        if not c.changed:
            continue
        name = display_path(c.source.path)
        if not c.edits:
            out.append(f"{name}: the first edit (the patch) only")
            continue
        lines = TextIndex(c.source.text if c.base is None else c.base)
        for e in sorted(c.edits, key=lambda e: e.start):
            line = lines.line_of(e.start)
            col = e.start - lines.line_start(line)
            out.append(f"{name}:{line + 1}:{col + 1}  {_quote(e.old_text)} -> {_quote(e.new_text)}  "
                       f"[{e.kind}, {e.source}, confidence {e.confidence:.3f}]  {e.reason}")
    files = sum(1 for c in report.changes if c.changed)
    out.append(f"{report.edit_count} edit(s) in {files} file(s); {report.files_read} file(s) read")
    return "\n".join(out) + "\n"


def render(report: Report, fmt: OutputFormat) -> str:
    if fmt == "json":
        return render_json(report)
    if fmt == "summary":
        return render_summary(report)
    return render_diff(report)
