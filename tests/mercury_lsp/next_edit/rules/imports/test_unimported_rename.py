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


def test_a_name_whose_module_is_imported_instead_is_qualified_python_and_typescript():
    src = ("from .keys import hashkey as _defaultkey\nfrom .keys import typedkey\n\n\n"
           "def cached(cache, key=_defaultkey, lock=None):\n    return _wrap(cache, key)\n\n\n"
           "def other(key=typedkey):\n    return _defaultkey(1)\n")
    after = src.replace("from .keys import hashkey as _defaultkey\n", "from . import keys\n")
    d = doc("file:///c/__init__.py", after, (src,))
    preds = predict(NextEditQuery((d,), d.uri, 0), None, G).predictions
    assert applied(after, preds) == after.replace("key=_defaultkey", "key=keys.hashkey").replace(
        "_defaultkey(1)", "keys.hashkey(1)")
    src = "import {parse, format} from './url';\n\nexport function go(s: string) {\n  return format(parse(s));\n}\n"
    after = src.replace("import {parse, format} from './url';", "import * as url from './url';")
    d = doc("file:///g.ts", after, (src,), "typescript")
    preds = predict(NextEditQuery((d,), d.uri, 0), None, G).predictions
    assert applied(after, preds) == after.replace("format(parse(s))", "url.format(url.parse(s))")
