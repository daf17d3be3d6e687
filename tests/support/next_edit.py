"""Shared helpers of the next-edit tests: documents with a history, a prediction by the syntax alone
(``ask``), by the pipeline with an optional model (``run``), a rule alone (``rule_edits``), and the
text the edits give (``applied``, ``renamed``)."""

from __future__ import annotations

from mercury_lsp.completion.choose import MemoryRequest
from mercury_lsp.config import NextEditOptions, Settings
from mercury_lsp.memory import Memory, OpenDoc
from mercury_lsp.next_edit import DocState, NextEditQuery, apply_edits, predict
from mercury_lsp.next_edit.pipeline import rule_context
from mercury_lsp.next_edit.recall import Recall
from mercury_lsp.syntax import Grammars, grammar_for

G = Grammars()
# A function whose parameter is shadowed by a nested function, a lambda, a comprehension, a
# keyword argument, an attribute and an f-string: the cases a scope-aware rename tells apart.
AREA = '''def area(width, height):
    total = width * height
    def inner(width):
        return width
    scale = lambda width: width * 2
    print(f(width=width), obj.width, [width for width in range(3)], f"{width}")
    return total + width

width = 3
x = area(1, 2)
y = area(3, 4)
'''


def doc(uri: str, text: str, history: tuple[str, ...] = (), times: tuple[float, ...] = (), grammar="python"):
    return DocState(uri, text, grammar, 1, history, max(times, default=0.0), times)


def edited(uri: str, text: str, history: tuple[str, ...] = (), grammar: str = "python") -> DocState:
    """A document edited once per text of ``history`` (all at time 1)."""
    return DocState(uri, text, grammar, 1, history, 1.0 if history else 0.0, (1.0,) * len(history))


def ask(*docs: DocState, cursor_uri: str | None = None, cursor: int = 0):
    q = NextEditQuery(docs, cursor_uri or docs[0].uri, cursor)
    return predict(q, None, G).predictions


def applied(text: str, preds, uri: str) -> str:
    return apply_edits(text, [(p.start, p.end, p.new_text) for p in preds if p.uri == uri])


def run(after: str, before: str, *others: DocState, model=None, uri="file:///a.py", cursor=0,
        options: NextEditOptions | None = None):
    docs = (DocState(uri, after, grammar_for("", uri), 7, (before,), 1.0), *others)
    q = NextEditQuery(docs, uri, cursor, options=options or NextEditOptions())
    return predict(q, model, G), q


def applied_all(text: str, preds) -> str:
    """``text`` with every prediction applied (one document)."""
    return apply_edits(text, [(p.start, p.end, p.new_text) for p in preds])


def renamed(text: str, preds) -> str:
    return apply_edits(text, [(p.start, p.end, p.new_text) for p in preds])


def rule_edits(rule, *docs: DocState, cursor: int = 0, options: NextEditOptions | None = None,
               memory: Recall | None = None):
    """``rule``'s own edits for ``docs`` (the cursor in the first), before the pipeline resolves
    overlaps and checks the syntax; ``memory``: the repository memory it may ask (``recall``)."""
    q = NextEditQuery(docs, docs[0].uri, cursor, options=options or NextEditOptions())
    return rule.run(rule_context(q, G, memory=memory))


def recall(memory: Memory, home: DocState, *others: DocState) -> Recall:
    """``memory`` as a next-edit request on ``home`` asks it (``others``: the other open
    documents), gated as the server gates it (``completion.minProbability``'s default)."""
    open_docs = tuple(OpenDoc(d.uri, d.version or 0, d.text, d.grammar or "") for d in others)
    request = MemoryRequest(memory, open_docs, home.grammar or "", False)
    return Recall(request, Settings().completion.min_probability, Settings().completion.length_weight)


def follow(home: tuple[str, str, str], *others: tuple[str, str], options: NextEditOptions | None = None,
           rule: str | None = "NE101"):
    """A definition renamed in ``home`` (uri, text before, text after) with ``others`` (uri, text)
    open beside it: (uri -> each document's text once ``rule``'s edits are applied (None: every
    rule's), the notes)."""
    uri, before, after = home
    docs = (DocState(uri, after, grammar_for("", uri), 1, (before,), 1.0, (1.0,)),
            *(DocState(u, t, grammar_for("", u), 1) for u, t in others))
    out = predict(NextEditQuery(docs, uri, 0, options=options or NextEditOptions()), None, G)
    preds = [p for p in out.predictions if rule is None or p.rule == rule]
    return {d.uri: applied(d.text, preds, d.uri) for d in docs}, out.notes
