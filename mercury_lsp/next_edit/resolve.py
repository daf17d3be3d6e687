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

**Helpers** (``outside_helpers``): an edit is never made inside the definition of a function
its new text names: replacing ``len(x)`` by ``size_of(x)``, or ``fmt.Errorf("load: %w", err)``
by ``wrap(err)``, repeats everywhere but in ``def size_of`` and ``func wrap`` themselves, where
it would recurse forever — unless the edit renames the function's own old name (the user renamed
``fact`` to ``factorial`` at its definition: its recursive calls follow).

**Ranking** (``ranked``): highest confidence first (rounded to ``CONFIDENCE_DIGITS``), the
cursor's document first, then nearest the cursor.
"""

from __future__ import annotations

from bisect import bisect_right

from mercury_lsp.next_edit.query import NextEditQuery, Prediction
from mercury_lsp.next_edit.scopes import FUNCTION_SCOPES
from mercury_lsp.next_edit.text import IDENT, KEYWORDS, TOKEN, apply_edits, declares
from mercury_lsp.next_edit.tree import ParsedDoc, walk
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


# The field naming what a declaration or assignment gives a function to (``const f = x => ...``,
# ``f = lambda x: ...``, ``let f = |x| ...``).
ASSIGNED_NAME_FIELDS = ("name", "left", "pattern")


def outside_helpers(preds: list[Prediction], by_uri: dict[str, ParsedDoc]) -> list[Prediction]:
    """``preds`` without the edits inside a function their new text names (module docstring)."""
    functions: dict[str, dict[str, list[tuple[int, int]]]] = {}
    out = []
    for p in preds:
        doc = by_uri.get(p.uri)
        # the names of the new text that the document defines with a keyword (a cheap test first:
        # the tree is walked only for a document that defines one)
        names = {t for t in TOKEN.findall(p.new_text) if IDENT.match(t) and t not in KEYWORDS
                 and doc is not None and declares(t, doc.doc.text)}
        if names and not _renamed_definition(doc, p.old_text.strip()):
            if p.uri not in functions:
                functions[p.uri] = _functions(doc)
            if any(lo <= p.start < hi for n in names for lo, hi in functions[p.uri].get(n, ())):
                continue
        out.append(p)
    return out


def _renamed_definition(doc: ParsedDoc, old: str) -> bool:
    """``old`` named a definition before the recent edits and names none now: the user renamed it
    at its definition, and its recursive calls follow it."""
    if not IDENT.match(old) or not doc.doc.history:
        return False
    return declares(old, doc.doc.history[-1]) and not declares(old, doc.doc.text)


def _functions(doc: ParsedDoc) -> dict[str, list[tuple[int, int]]]:
    """Name -> code-point spans of the functions (and methods) of ``doc`` defined with that name."""
    out: dict[str, list[tuple[int, int]]] = {}
    for n in walk(doc.tree.root_node):
        if n.type not in FUNCTION_SCOPES:
            continue
        name, whole = n.child_by_field_name("name"), n
        if name is None and n.parent is not None:  # a function given to a name: 'const f = x => ...'
            whole = n.parent
            name = next((whole.child_by_field_name(f) for f in ASSIGNED_NAME_FIELDS
                         if whole.child_by_field_name(f) is not None), None)
            if name is None or name.type != "identifier":
                continue
        if name is not None:
            out.setdefault(doc.b.node_text(name), []).append((doc.b.char(whole.start_byte), doc.b.char(whole.end_byte)))
    return out


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
