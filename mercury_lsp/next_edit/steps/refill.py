"""Step 3 of next-edit — **what** goes at each location (the model decides).

The candidate spans are masked together on one canvas per window (the user's edit in view) and
refilled jointly. For a rename, when the model's refill is not the identifier the user typed,
the user's identifier is *scored* at that location (its tokens masked) and that score ranks it:
the model never invents a third name. For a call, the refill is kept when it parses with the
right argument count and the model is confident; otherwise the argument the user added at the
call site they edited is inserted and scored. Each kept refill becomes a ``Prediction``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from mercury_engine.errors import EngineError, InvalidRequestError
from mercury_lsp.config import NextEditOptions
from mercury_lsp.engine_client import EngineCancelled
from mercury_lsp.next_edit.query import (
    Candidate,
    DocState,
    EditModel,
    NextEditQuery,
    Prediction,
    check_cancelled,
)
from mercury_lsp.next_edit.steps.calls import ARGUMENT_LISTS
from mercury_lsp.next_edit.text import diff_region
from mercury_lsp.next_edit.tree import ParsedDoc
from mercury_lsp.schema import EditSource
from mercury_lsp.syntax import Grammars
from mercury_lsp.text import TextIndex

REASON_TEXT_CHARS = 40  # of the model's refill quoted in a reason
CPT_SAMPLE_CHARS = 4000  # text sampled to measure a document's characters per token: a few pages
# Shares of a window's character budget:
HEADER_SHARE = Fraction(1, 4)  # the user's edit repeated above a window that does not contain it
GROUP_SHARE = Fraction(1, 2)  # candidates this close together share one window (spans + context)
ANCHOR_SHARE = Fraction(3, 4)  # a group and the user's edit this close together share one window
BEFORE_SHARE = Fraction(3, 5)  # of the context left around a group: before it (more reads better)
AFTER_SHARE = Fraction(2, 5)  # ... and after it
MAX_SPAN_TOKENS = 64  # a refill span's token budget at most (identifiers, argument lists)


@dataclass
class _Window:
    text: str
    spans: list[tuple[int, int]]
    cands: list[Candidate]


def _anchor_text(doc: DocState, index: TextIndex) -> tuple[int, int] | None:
    """Line range (offsets) of the newest edit in ``doc``."""
    if not doc.history:
        return None
    p, _, e = diff_region(doc.history[0], doc.text)
    return index.line_start(index.line_of(p)), index.line_end(index.line_of(max(p, e)))


def _windows(model: EditModel, doc: ParsedDoc, cands: list[Candidate], anchor: tuple[str, str] | None,
             opts: NextEditOptions) -> list[_Window]:
    """Group candidates of one document into windows that fit the model's context; each shows
    the user's edit (its lines are put first when they are not inside the window)."""
    text = doc.doc.text
    sample = text[:CPT_SAMPLE_CHARS] or " "
    cpt = max(1.0, len(sample) / max(1, model.count_tokens(sample)))
    budget = int(model.context_tokens * opts.window_fill * cpt)
    anchor_range = None
    header_src = ""
    if anchor is not None:
        if anchor[0] == doc.doc.uri:
            anchor_range = _anchor_text(doc.doc, doc.b)
            if anchor_range is not None:
                header_src = text[anchor_range[0]:anchor_range[1]]
        else:
            header_src = anchor[1]
    header_src = header_src[: int(budget * HEADER_SHARE)]
    groups: list[list[Candidate]] = []
    for c in sorted(cands, key=lambda c: c.start):
        if groups and c.end - groups[-1][0].start <= int(budget * GROUP_SHARE):
            groups[-1].append(c)
        else:
            groups.append([c])
    out = []
    for g in groups:
        g0, g1 = g[0].start, g[-1].end
        lo, hi = g0, g1
        if anchor_range is not None and max(g1, anchor_range[1]) - min(g0, anchor_range[0]) <= int(budget * ANCHOR_SHARE):
            lo, hi = min(lo, anchor_range[0]), max(hi, anchor_range[1])
        rem = max(0, budget - (hi - lo))
        index = doc.b
        lo = index.line_start(index.line_of(max(0, lo - int(rem * BEFORE_SHARE))))
        hi = index.line_end(index.line_of(min(len(text), hi + int(rem * AFTER_SHARE))))
        header = ""
        if header_src and not (anchor_range is not None and lo <= anchor_range[0] and anchor_range[1] <= hi):
            header = header_src + "\n"
        shift = len(header) - lo
        out.append(_Window(header + text[lo:hi], [(c.start + shift, c.end + shift) for c in g], g))
    return out


def _refill_window(model: EditModel, w: _Window, opts: NextEditOptions, cancel) -> list[tuple[str, float]]:
    budgets = [model.count_tokens(c.expected if c.expected is not None else c.old_text) + opts.refill_slack_tokens
               for c in w.cands]
    budgets = [max(1, min(b, MAX_SPAN_TOKENS)) for b in budgets]
    try:
        return model.refill(w.text, w.spans, budgets, max(budgets) + 1, cancel)
    except EngineCancelled:
        raise
    except (InvalidRequestError, EngineError):  # the spans do not fit together: refill halves
        if len(w.cands) == 1:
            raise
        half = len(w.cands) // 2
        a = _Window(w.text, w.spans[:half], w.cands[:half])
        b = _Window(w.text, w.spans[half:], w.cands[half:])
        return _refill_window(model, a, opts, cancel) + _refill_window(model, b, opts, cancel)


def _arg_count(c: Candidate, text: str, doc: ParsedDoc, grammars: Grammars) -> int | None:
    """The arguments of ``c``'s call with its inside (``c``'s span) replaced by ``text``, in the
    document's own grammar (reparsed incrementally); None when that argument list has errors."""
    parser = grammars.parser(doc.doc.grammar)
    if parser is None:
        return None
    new = TextIndex(doc.doc.text[:c.start] + text + doc.doc.text[c.end:])
    tree = doc.tree.copy()
    tree.edit(doc.b.byte(c.start), doc.b.byte(c.end), new.byte(c.start + len(text)),
              doc.b.point(c.start), doc.b.point(c.end), new.point(c.start + len(text)))
    tree = parser.parse(new.data, tree)
    lo, hi = new.byte(c.start) - 1, new.byte(c.start + len(text)) + 1  # the parentheses
    node = tree.root_node.descendant_for_byte_range(lo, hi)
    while node is not None and (node.start_byte, node.end_byte) != (lo, hi):
        node = node.parent if node.start_byte >= lo and node.end_byte <= hi else None
    if node is None or node.type not in ARGUMENT_LISTS or node.has_error:
        return None
    return sum(1 for a in node.named_children if a.type != "comment")


def _decide(c: Candidate, model_text: str, model_conf: float, opts: NextEditOptions,
            doc: ParsedDoc, grammars: Grammars) -> tuple[str, EditSource, float] | None:
    """(new text, source, confidence before scoring); confidence < 0: score ``expected``."""
    if c.kind == "rename":
        if model_text.strip() == c.expected:
            return c.expected, "model", model_conf
        return c.expected, "scored", -1.0
    if c.kind == "signature":
        if c.expected is not None and model_text.strip() == c.expected.strip():
            return c.expected, "model", model_conf
        if (model_conf >= opts.model_min_confidence and model_text.strip()
                and _arg_count(c, model_text, doc, grammars) == c.arg_count):
            return model_text, "model", model_conf
        if c.expected is not None:
            return c.expected, "scored", -1.0
        return None
    if model_conf >= opts.drop_min_confidence and model_text.strip() and model_text != c.old_text:
        return model_text, "model", model_conf
    return None


def predict_with_model(model: EditModel, query: NextEditQuery, cands: list[Candidate], by_uri: dict[str, ParsedDoc],
                        edited: list[ParsedDoc], grammars: Grammars, cancel) -> list[Prediction]:
    """The model's edits at ``cands`` (module docstring); ``by_uri``: the parsed documents,
    ``edited``: those with a history, the newest edited first (its edit is shown in each window)."""
    opts = query.options
    anchor = None
    if edited:
        d = edited[0]
        rng = _anchor_text(d.doc, d.b)
        if rng is not None:
            anchor = (d.doc.uri, d.doc.text[rng[0]:rng[1]])
    preds: list[Prediction] = []
    for uri in dict.fromkeys(c.uri for c in cands):
        doc = by_uri[uri]
        for w in _windows(model, doc, [c for c in cands if c.uri == uri], anchor, opts):
            check_cancelled(cancel)
            fills = _refill_window(model, w, opts, cancel)
            decided = []
            to_score = []
            for i, (c, (text, conf)) in enumerate(zip(w.cands, fills, strict=True)):
                d = _decide(c, text, conf, opts, doc, grammars)
                if d is None:
                    continue
                decided.append((i, c, d, text))
                if d[2] < 0:
                    s, e = w.spans[i]
                    to_score.append((s, e, d[0]))
            scores = model.score(w.text, to_score, cancel) if to_score else []
            it = iter(scores)
            for _, c, (new_text, source, conf), text in decided:
                if conf < 0:
                    conf = next(it)
                    shown = "".join(ch for ch in text.strip() if ch.isprintable() and ch != "\ufffd")[:REASON_TEXT_CHARS]
                    reason = f"{c.reason}; the model's refill was {shown!r}, the user's text scored"
                else:
                    reason = f"{c.reason}; refilled by the model"
                preds.append(Prediction(c.uri, c.start, c.end, new_text, min(1.0, max(0.0, conf)), reason,
                                        c.kind, source, c.old_text, text))
    return preds
