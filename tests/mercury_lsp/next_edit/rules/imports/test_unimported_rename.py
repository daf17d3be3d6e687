"""NE403 unimported-rename: uses renamed to the paired new import."""

from __future__ import annotations

from mercury_lsp.next_edit import DocState, NextEditQuery, apply_edits, predict
from mercury_lsp.syntax import Grammars

G = Grammars()


def doc(uri: str, text: str, history: tuple[str, ...] = (), grammar="python") -> DocState:
    return DocState(uri, text, grammar, 1, history, 1.0 if history else 0.0, (1.0,) * len(history))


def applied(text: str, preds) -> str:
    return apply_edits(text, [(p.start, p.end, p.new_text) for p in preds])


def test_a_name_imported_under_a_shorter_name_is_renamed_at_its_uses():
    src = ("from itertools import izip, imap\nfrom functools import reduce\n\n\n"
           "def pairs(left, right):\n    for x, y in izip(left, right):\n        yield x\n\n\n"
           "def total(data):\n    return reduce(lambda a, b: a << 8 | b, imap(ord, data), 0)\n")
    one = src.replace("from itertools import izip, imap\n", "")
    two = one.replace("from functools import reduce", "from six.moves import zip, map, reduce")
    d = doc("file:///i.py", two, (one, src))
    preds = predict(NextEditQuery((d,), d.uri, 40), None, G).predictions
    assert applied(two, preds) == two.replace("izip(", "zip(").replace("imap(", "map(")
