"""The whole next-edit pipeline (``predict``) and its output (``to_result``).

``predict`` parses the query's documents, finds the locations the history ties
(``steps.candidates``) and builds the ``RuleContext`` once; then it runs the rules of the
registry in priority order (``rules.REGISTRY``; a rule disabled by ``nextEdit.disabledRules`` is
skipped, a fallback rule runs only when no rule before it offered an edit), stamps each edit
with its rule's code, drops the edits inside a helper their new text calls
(``resolve.outside_helpers``), resolves the overlaps (``resolve.resolve``: the earlier rule wins), drops
the edits that add parse errors (``resolve.keep_parsing``; an edit that lost its place to one so
dropped gets it back) and ranks the rest by confidence.
``to_result`` turns the outcome into the shared ``NextEditResult`` schema (ranges in the
client's position encoding, each edit carrying its document's version and rule).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from pathlib import Path

from mercury_lsp import __version__
from mercury_lsp.engine_client import EngineCancelled
from mercury_lsp.next_edit.query import (
    EditModel,
    NextEditQuery,
    Note,
    Outcome,
    Prediction,
    check_cancelled,
)
from mercury_lsp.next_edit.recall import Recall
from mercury_lsp.next_edit.resolve import CONFIDENCE_DIGITS, keep_parsing, outside_helpers, ranked, resolve
from mercury_lsp.next_edit.rules import BY_CODE, FAMILIES, REGISTRY, RuleContext
from mercury_lsp.next_edit.steps.candidates import find_candidates
from mercury_lsp.next_edit.text import minified
from mercury_lsp.next_edit.tree import parse_all
from mercury_lsp.schema import (
    NextEditNote,
    NextEditResult,
    NextEditTimings,
    PredictedEdit,
    TextPosition,
    TextRange,
)
from mercury_lsp.syntax import Grammars
from mercury_lsp.text import TextIndex

log = logging.getLogger(__name__)
# Rounds of resolving overlaps and checking the syntax (``_parsing``): each round gives the places
# of the edits the last one dropped to those they had hidden; a third round is rarely needed.
PARSE_ROUNDS = 3
# A rule that raises is logged and skipped (the other rules' edits still answer); with this set
# (the test suite sets it) it raises, so a rule's bug fails its tests instead of hiding.
STRICT_RULES = os.environ.get("MERCURY_LSP_STRICT_RULES") == "1"


def _where(exc: BaseException) -> str:
    """``file:line`` of the innermost frame that raised (no text of the user's: only the code's)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return f"{Path(tb.tb_frame.f_code.co_filename).name}:{tb.tb_lineno}" if tb is not None else "?"


def predict(query: NextEditQuery, model: EditModel | None, grammars: Grammars, cancel=None,
            memory: Recall | None = None) -> Outcome:
    """The ranked edits of every enabled rule for ``query`` (module docstring); ``model`` fills
    the holes the syntax leaves, within ``nextEdit.modelBudgetMs`` (None: the syntax alone);
    ``memory``: the repository memory the rules may ask (None: the open documents alone)."""
    t0 = time.perf_counter()
    opts = query.options
    home = next((d for d in query.docs if d.uri == query.cursor_uri), None)
    kept = tuple(d for d in query.docs if not minified(d.text))  # built output: no rule reads or edits it
    if home is None or len(home.text) > opts.max_document_chars or "\x00" in home.text \
            or not any(d is home for d in kept):
        return Outcome([], [])  # huge, binary (a NUL character) or built output: nothing to learn there
    if len(kept) < len(query.docs):
        query = dataclasses.replace(query, docs=kept)
    ctx = rule_context(query, grammars, model, cancel, memory)
    t1 = time.perf_counter()
    offered: list[Prediction] = []
    for rule in REGISTRY:
        if not ctx.enabled(rule.code) or (rule.fallback and offered):
            continue
        check_cancelled(cancel)
        try:
            got = rule.run(ctx)
        except EngineCancelled:
            raise
        except Exception as exc:  # one rule's bug costs its own edits, not the request's
            if STRICT_RULES:
                raise
            log.warning("next edit: rule %s failed (%s at %s); its edits are left out", rule.code,
                        type(exc).__name__, _where(exc))
            continue
        for p in got:
            p.rule = rule.code
            offered.append(p)
    preds = ranked(_parsing(outside_helpers(offered, ctx.by_uri), ctx, grammars), query)
    t2 = time.perf_counter()
    return Outcome(preds, ctx.candidates, NextEditTimings(candidates_ms=round((t1 - t0) * 1000, 2),
                                                          model_ms=round((t2 - t1) * 1000, 2),
                                                          total_ms=round((t2 - t0) * 1000, 2)),
                   notes=rename_notes(ctx))


def _parsing(offered: list[Prediction], ctx: RuleContext, grammars: Grammars) -> list[Prediction]:
    """``offered`` with the overlaps resolved and the edits that add parse errors dropped; an
    edit that lost its place to one dropped so gets it back (the half of a wrap NE204 repeats,
    ``iter(`` without its ``)``, must not hide NE207's whole wrap of the same line)."""
    def check(preds: list[Prediction]) -> list[Prediction]:
        mine = [p for p in preds if not BY_CODE[p.rule].self_checked]
        return keep_parsing(mine, ctx.by_uri, grammars) + [p for p in preds if BY_CODE[p.rule].self_checked]

    dropped: set[int] = set()
    parsing: set[int] = set()
    for _ in range(PARSE_ROUNDS):
        kept = resolve([p for p in offered if id(p) not in dropped])
        new = [p for p in kept if id(p) not in parsing]
        parsing |= {id(p) for p in check(new)}
        if all(id(p) in parsing for p in new):
            return kept
        dropped |= {id(p) for p in new if id(p) not in parsing}
    return [p for p in kept if id(p) in parsing]


# The rule whose edits the notes accompany: a rename followed through the export machinery.
NOTES_RULE = "NE101"


def rename_notes(ctx: RuleContext) -> list[Note]:
    """The renames' notes (``steps.candidates``), stamped with the rename rule's code; none when
    that rule is disabled."""
    if not ctx.enabled(NOTES_RULE):
        return []
    return [dataclasses.replace(n, rule=NOTES_RULE) for n in ctx.notes]


def rule_context(query: NextEditQuery, grammars: Grammars, model: EditModel | None = None,
                 cancel=None, memory: Recall | None = None) -> RuleContext:
    """The context the rules read for ``query``: its documents parsed, the locations the
    history ties (``steps.candidates``), the newest edits (``RuleContext``)."""
    ctx = RuleContext(query, grammars, parse_all(query.docs, grammars), [], model, cancel, FAMILIES, memory=memory)
    located = find_candidates(query, ctx.parsed, ctx.edited, grammars)
    ctx.candidates, ctx.notes = located.candidates, located.notes
    return ctx


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
                                   source=p.source, old_text=p.old_text, document_version=d.version,
                                   rule=p.rule or None))
    notes = []
    for n in outcome.notes:
        d = docs[n.uri]
        index = indexes.setdefault(n.uri, TextIndex(d.text))
        notes.append(NextEditNote(uri=n.uri, range=TextRange(TextPosition(*index.position_at(n.start, query.encoding)),
                                                             TextPosition(*index.position_at(n.end, query.encoding))),
                                  message=n.message, rule=n.rule or None, document_version=d.version))
    return NextEditResult(edits=edits, model=model_name, version=__version__,
                          position_encoding=query.encoding.value, timings=outcome.timings, notes=notes)
