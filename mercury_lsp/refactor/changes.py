"""The result of a batch refactor — per file, its text before and after and the edits, and the
notes of the places no edit is offered for (a string naming a renamed definition) — and its
three printed forms: a unified diff (``diff``; the notes go to stderr, ``note_lines``), the
published edit schema (``json``: ``schema.NextEditResult``, one ``PredictedEdit`` per edit, one
``NextEditNote`` per note) and a per-file ``summary`` (edits, then notes)."""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import msgspec

from mercury_lsp import __version__
from mercury_lsp.next_edit import apply_edits
from mercury_lsp.next_edit.query import Note, Prediction
from mercury_lsp.refactor.files import Source
from mercury_lsp.schema import (
    NextEditNote,
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
    """What a run found: changes, notes (skipped files...), what it assumed, and the edits' notes
    (``edit_notes``: places only a string names a renamed definition, with the file's text)."""
    changes: list[FileChange]
    notes: list[str] = field(default_factory=list)
    files_read: int = 0
    timings: NextEditTimings = field(default_factory=NextEditTimings)
    model: str = ""
    edit_notes: list[tuple[Source, Note]] = field(default_factory=list)

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
    notes = []
    for src, n in report.edit_notes:
        lines = TextIndex(src.text)
        notes.append(NextEditNote(uri=src.uri, range=TextRange(TextPosition(*lines.position_at(n.start, encoding)),
                                                               TextPosition(*lines.position_at(n.end, encoding))),
                                  message=n.message, rule=n.rule or None))
    return NextEditResult(edits=edits, model=report.model, version=__version__,
                          position_encoding=encoding.value, timings=report.timings, notes=notes)


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
    out += [f"{line}  [note]" for line in note_lines(report)]
    files = sum(1 for c in report.changes if c.changed)
    notes = f"; {len(report.edit_notes)} note(s)" if report.edit_notes else ""
    out.append(f"{report.edit_count} edit(s) in {files} file(s){notes}; {report.files_read} file(s) read")
    return "\n".join(out) + "\n"


def note_lines(report: Report) -> list[str]:
    """One line per edit note: ``path:line:col  message`` (1-based)."""
    out = []
    for src, n in sorted(report.edit_notes, key=lambda x: (str(x[0].path), x[1].start)):
        lines = TextIndex(src.text)
        line = lines.line_of(n.start)
        out.append(f"{display_path(src.path)}:{line + 1}:{n.start - lines.line_start(line) + 1}  {n.message}")
    return out


def render(report: Report, fmt: OutputFormat) -> str:
    if fmt == "json":
        return render_json(report)
    if fmt == "summary":
        return render_summary(report)
    return render_diff(report)
