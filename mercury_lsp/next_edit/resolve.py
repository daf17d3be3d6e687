"""One answer from the edits of many rules: overlaps resolved, the syntax guard, the ranking.

**Overlaps** (``resolve``, the one resolver): the edits are taken in priority order — the
registry's order of their rules (``rules.REGISTRY``), then each rule's own order — and an edit
is dropped when its span *meets* the span of an edit already taken in the same document. Spans
are closed here: two edits conflict when they overlap, when one ends where the other starts,
or when both insert at the same place. The earlier edit wins. (Two edits that touch are two
readings of one place — a line deleted by one rule and re-indented by another, a name renamed
and a call rebuilt around it — and applying both would run their texts together.) An edit that
changes nothing is dropped first, so that it never blocks a real one. What is left can always
be applied together, and passes ``mercury.applyEdits``' checks.

**Guard** (``keep_parsing``): the edits of a document that add parse errors to it are dropped
(all of its edits tried at once, then one by one when together they break it). A rule whose
edits passed their own syntax check (``Rule.self_checked``: the line at the cursor finished) is
left out of the guard: its repair must not cover for another edit that breaks the parse.

**Ranking** (``ranked``): highest confidence first (rounded to ``CONFIDENCE_DIGITS``), the
cursor's document first, then nearest the cursor.
"""

from __future__ import annotations

from bisect import bisect_right

from mercury_lsp.next_edit.query import NextEditQuery, Prediction
from mercury_lsp.next_edit.text import apply_edits
from mercury_lsp.next_edit.tree import ParsedDoc
from mercury_lsp.syntax import Grammars, count_errors

# Whole-document error counts compare a text before and after the edits: no practical cap.
WHOLE_DOCUMENT_ERRORS = 1 << 20
CONFIDENCE_DIGITS = 6  # confidences are reported (and ranked) rounded to this many digits


def resolve(preds: list[Prediction]) -> list[Prediction]:
    """``preds`` (in priority order) without the edits that change nothing or meet an earlier
    one in their document (module docstring)."""
    kept: list[Prediction] = []
    # per document, the kept spans sorted by start; they never meet, so their ends are sorted too
    starts: dict[str, list[int]] = {}
    ends: dict[str, list[int]] = {}
    for p in preds:
        if p.new_text == p.old_text:
            continue
        s, e = starts.setdefault(p.uri, []), ends.setdefault(p.uri, [])
        i = bisect_right(s, p.end)  # the kept spans starting at or before this one's end
        if i > 0 and e[i - 1] >= p.start:
            continue
        s.insert(i, p.start)
        e.insert(i, p.end)
        kept.append(p)
    return kept


def keep_parsing(preds: list[Prediction], by_uri: dict[str, ParsedDoc], grammars: Grammars) -> list[Prediction]:
    """Drop edits that add parse errors (all of a document's edits at once; one by one if needed)."""
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


def ranked(preds: list[Prediction], query: NextEditQuery) -> list[Prediction]:
    return sorted(preds, key=lambda p: (-round(p.confidence, CONFIDENCE_DIGITS), p.uri != query.cursor_uri,
                                        abs(p.start - query.cursor)))
