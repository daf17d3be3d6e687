"""NE403 unimported-rename: uses renamed to the paired new import."""

from __future__ import annotations

from mercury_lsp.next_edit import NextEditQuery, predict
from mercury_lsp.syntax import Grammars
from tests.support.next_edit import applied_all as applied
from tests.support.next_edit import edited as doc

G = Grammars()






def test_a_name_imported_under_a_shorter_name_is_renamed_at_its_uses():
    src = ("from itertools import izip, imap\nfrom functools import reduce\n\n\n"
           "def pairs(left, right):\n    for x, y in izip(left, right):\n        yield x\n\n\n"
           "def total(data):\n    return reduce(lambda a, b: a << 8 | b, imap(ord, data), 0)\n")
    one = src.replace("from itertools import izip, imap\n", "")
    two = one.replace("from functools import reduce", "from six.moves import zip, map, reduce")
    d = doc("file:///i.py", two, (one, src))
    preds = predict(NextEditQuery((d,), d.uri, 40), None, G).predictions
    assert applied(two, preds) == two.replace("izip(", "zip(").replace("imap(", "map(")
