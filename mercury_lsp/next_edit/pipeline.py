"""The whole next-edit pipeline (``predict``), its step 4 and its output.

4. **Check** — edits that add parse errors are dropped (``_keep_parsing``); the rest are ranked
   by confidence. ``to_result`` turns the outcome into the shared ``NextEditResult`` schema
   (ranges in the client's position encoding, each edit carrying its document's version).
"""

from __future__ import annotations

import time

from mercury_lsp import __version__
from mercury_lsp.engine_client import CancelToken, EngineCancelled
from mercury_lsp.next_edit.candidates import find_candidates
from mercury_lsp.next_edit.complete import complete_line
from mercury_lsp.next_edit.dropped import dropped_arguments
from mercury_lsp.next_edit.extract import named_values
from mercury_lsp.next_edit.imports import import_edits
from mercury_lsp.next_edit.line_repeat import repeated_lines
from mercury_lsp.next_edit.locate import drop_candidates
from mercury_lsp.next_edit.moved import moved_lines
from mercury_lsp.next_edit.query import EditModel, NextEditQuery, Outcome, Prediction, check_cancelled
from mercury_lsp.next_edit.refill import predict_with_model
from mercury_lsp.next_edit.relocated import relocated_imports
from mercury_lsp.next_edit.removed import removed_uses
from mercury_lsp.next_edit.repeat import repeated_edits
from mercury_lsp.next_edit.supersede import superseded_lines
from mercury_lsp.next_edit.text import apply_edits
from mercury_lsp.next_edit.tree import ParsedDoc
from mercury_lsp.next_edit.unimported import stale_uses
from mercury_lsp.next_edit.whitespace import whitespace_edits
from mercury_lsp.schema import NextEditResult, NextEditTimings, PredictedEdit, TextPosition, TextRange
from mercury_lsp.syntax import Grammars, count_errors
from mercury_lsp.text import TextIndex

# Whole-document error counts compare a text before and after the edits: no practical cap.
WHOLE_DOCUMENT_ERRORS = 1 << 20
CONFIDENCE_DIGITS = 6  # confidences are reported (and ranked) rounded to this many digits
# Edits the syntax determines whole (the user's identifier at a tied occurrence, the user's
# argument copied into a call) skip the model; they rank like repeated-edit renames (0.8) and
# calls a little below (the copied argument may not fit every call).
SYNTAX_CONFIDENCE = {"rename": 0.8, "signature": 0.6}
PLACEHOLDER_CONFIDENCE = 0.3  # a call the signature change reaches, its new argument left to the user


class TimeBox(CancelToken):
    """A child of the request's token that also gives up ``seconds`` from now: model work that
    overruns its time box ends early, the request itself goes on (with the syntax's edits)."""

    def __init__(self, parent, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        parent_deadline = getattr(parent, "deadline", None)
        super().__init__(deadline if parent_deadline is None else min(deadline, parent_deadline))
        self.parent = parent

    @property
    def cancelled(self) -> bool:
        return super().cancelled or (self.parent is not None and self.parent.cancelled)

    def check(self) -> None:
        if self.parent is not None:
            self.parent.check()
        super().check()


def _keep_parsing(preds: list[Prediction], parsed: list[ParsedDoc], grammars: Grammars) -> list[Prediction]:
    """Drop edits that add parse errors (all of a document's edits at once; one by one if needed)."""
    by_uri = {p.doc.uri: p for p in parsed}
    out = []
    for uri in dict.fromkeys(p.uri for p in preds):
        doc = by_uri.get(uri)
        mine = [p for p in preds if p.uri == uri]
        if doc is None:
            out.extend(mine)
            continue
        parser = grammars.parser(doc.doc.grammar)
        base = count_errors(doc.tree.root_node, 0, len(doc.b.data), limit=WHOLE_DOCUMENT_ERRORS)

        def errors(edits: list[Prediction], doc: ParsedDoc = doc, parser=parser) -> int:
            text = apply_edits(doc.doc.text, [(p.start, p.end, p.new_text) for p in edits])
            data = text.encode("utf-8")
            return count_errors(parser.parse(data).root_node, 0, len(data), limit=WHOLE_DOCUMENT_ERRORS)

        if errors(mine) <= base:
            out.extend(mine)
        else:
            out.extend(p for p in mine if errors([p]) <= base)
    return out


def predict(query: NextEditQuery, model: EditModel | None, grammars: Grammars, cancel=None) -> Outcome:
    """Candidates (syntax), refill and scores (model), checks and ranking. Locations whose new
    text the syntax determines are answered by the syntax (source "syntax"); only the holes
    (``expected`` None: a call whose new argument is unknown, the model-only path) go to the
    model, nearest first, up to ``max_model_candidates`` and within ``model_budget_ms``."""
    t0 = time.perf_counter()
    opts = query.options
    home = next((d for d in query.docs if d.uri == query.cursor_uri), None)
    if home is None or len(home.text) > opts.max_document_chars or "\x00" in home.text:
        return Outcome([], [])  # huge or binary (a NUL character): nothing to learn there
    cands, parsed = find_candidates(query, grammars)
    cands.sort(key=lambda c: (c.uri != query.cursor_uri, abs(c.start - query.cursor)))
    cands = cands[: opts.max_candidates]
    t1 = time.perf_counter()
    check_cancelled(cancel)
    repeats = repeated_edits(query, parsed)
    if any(c.kind == "rename" for c in cands):  # the scope-aware rename search found the sites
        repeats = [r for r in repeats if r.kind != "rename"]
    rules = (superseded_lines(query) + moved_lines(query, parsed) + repeated_lines(query) + import_edits(query, parsed, grammars)
             + dropped_arguments(query, parsed, grammars) + named_values(query, parsed)
             + stale_uses(query, parsed, grammars) + removed_uses(query, parsed, grammars)
             + relocated_imports(query, parsed, grammars)
             + whitespace_edits(query))
    for s in rules:
        if not any(r.uri == s.uri and r.start <= s.end and s.start <= r.end for r in repeats):
            repeats.append(s)
    preds = [Prediction(c.uri, c.start, c.end, c.expected, SYNTAX_CONFIDENCE.get(c.kind, 0.0), c.reason,
                        c.kind, "syntax", c.old_text) for c in cands if c.expected is not None]
    holes = [c for c in cands if c.expected is None][: opts.max_model_candidates]
    box = TimeBox(cancel, opts.model_budget_ms / 1000)
    if model is not None and (holes or (not cands and not repeats and opts.model_fallback)):
        preds += _model_edits(model, query, holes, parsed, grammars, cancel, box)
    # a hole the model left (no model, out of time, or a fill that did not pass) is never dropped:
    # the call is offered with the new argument a placeholder named after its parameter
    preds += [Prediction(c.uri, c.start, c.end, c.placeholder, PLACEHOLDER_CONFIDENCE,
                         f"{c.reason}; the new argument is a placeholder for you to fill", c.kind, "syntax",
                         c.old_text)
              for c in holes if c.placeholder is not None
              and not any(p.uri == c.uri and p.start < c.end and c.start < p.end for p in preds)]
    # The half-typed line at the cursor, whatever else follows from the edit; the model is asked
    # to finish it only when nothing else does (its refill costs most of a request's time).
    busy = bool(preds or repeats)
    # The line's completion passed its own syntax guard; the other edits are checked without it,
    # so that its repair cannot cover for an edit that breaks (a copy of the half-typed line).
    finished = _boxed(lambda: complete_line(query, parsed, grammars, None if busy else model, box), cancel)
    preds += [r for r in repeats if not any(p.uri == r.uri and p.start < r.end and r.start < p.end
                                            or (p.uri, p.start, p.end) == (r.uri, r.start, r.end)
                                            for p in preds + finished)]
    preds = [p for p in preds if p.new_text != p.old_text]
    kept = _keep_parsing(preds, parsed, grammars)
    preds = kept + [f for f in finished if not any(p.uri == f.uri and p.start <= f.start <= p.end for p in kept)]
    cursor_doc = query.cursor_uri
    preds.sort(key=lambda p: (-round(p.confidence, CONFIDENCE_DIGITS), p.uri != cursor_doc, abs(p.start - query.cursor)))
    t2 = time.perf_counter()
    return Outcome(preds, cands, NextEditTimings(candidates_ms=round((t1 - t0) * 1000, 2),
                                                 model_ms=round((t2 - t1) * 1000, 2),
                                                 total_ms=round((t2 - t0) * 1000, 2)))


def _boxed(work, cancel) -> list[Prediction]:
    """``work()``, or nothing when it overran its time box; the request's own cancel still raises."""
    try:
        return work()
    except EngineCancelled:
        if cancel is not None and cancel.cancelled:
            raise
        return []


def _model_edits(model: EditModel, query: NextEditQuery, holes: list, parsed: list[ParsedDoc],
                 grammars: Grammars, cancel, box: TimeBox) -> list[Prediction]:
    """The model's edits for the holes (or the model-only path when there are none), time-boxed."""
    def work() -> list[Prediction]:
        checked = holes or drop_candidates(model, query, parsed, box)
        return predict_with_model(model, query, checked, parsed, grammars, box) if checked else []

    return _boxed(work, cancel)


def to_result(outcome: Outcome, query: NextEditQuery, model_name: str) -> NextEditResult:
    docs = {d.uri: d for d in query.docs}
    indexes: dict[str, TextIndex] = {}
    edits = []
    for p in outcome.predictions:
        d = docs[p.uri]
        index = indexes.setdefault(p.uri, TextIndex(d.text))
        rng = TextRange(TextPosition(*index.position_at(p.start, query.encoding)),
                        TextPosition(*index.position_at(p.end, query.encoding)))
        edits.append(PredictedEdit(uri=p.uri, range=rng, new_text=p.new_text,
                                   confidence=round(p.confidence, CONFIDENCE_DIGITS), reason=p.reason, kind=p.kind,
                                   source=p.source, old_text=p.old_text, document_version=d.version))
    return NextEditResult(edits=edits, model=model_name, version=__version__,
                          position_encoding=query.encoding.value, timings=outcome.timings)
