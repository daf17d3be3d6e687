"""Uses of a name whose import the user removed (shared by ``unimported-rename``, NE403, and
``unimported-use``, NE404: the reverse of ``missing-import``).

The import statements (the language's query file, ``symbols``) of the newest edited document are
compared between its oldest text in the history and now. A name the imports brought then and
bring no more, that the document does not define, and that code still uses, is stale:

* **replaced** — the imports now bring a name that is the old one with a prefix or suffix
  dropped or added (``izip`` -> ``zip`` when ``from itertools import izip`` became
  ``from six.moves import zip``): each use is renamed; or the name's module is imported now
  instead (``from .keys import hashkey as _defaultkey`` -> ``from . import keys``, ``import
  {parse} from './url'`` -> ``import * as url from './url'``): each use is qualified
  (``keys.hashkey``, ``url.parse``);
* **unwrapped** — otherwise a call of it with one argument gives way to the argument
  (``strip_current_dir(path)`` -> ``path``); a line left assigning a name to itself
  (``let input = strip_current_dir(input);``) is deleted;
* **deleted** — any other use (a path through it: ``libc::isatty(...)``) takes its statement with
  it (``removed.statement_lines``: a short statement that defines nothing), but a statement giving
  its function's result (``return cast(T, x)``), which is the user's to rewrite.

A module path is no name an import brings (``progress`` of ``use crate::progress::{Bar}``, ``m``
of ``from m import x``): a field of that name is no use of it.

Uses in comments, strings and the import statements themselves are left alone; more than
``MAX_SITES`` uses of one name: the user is reworking the code, nothing is offered for it.
The renames are NE403's edits, the unwrapped and deleted uses NE404's.
"""

from __future__ import annotations

import re

from mercury_lsp.next_edit.import_lists import WORD
from mercury_lsp.next_edit.prose import non_code
from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import RuleContext
from mercury_lsp.next_edit.rules.confidence import UNIMPORTED_RENAME, UNIMPORTED_USE
from mercury_lsp.next_edit.statements import statement_lines, widened
from mercury_lsp.next_edit.symbols import captures, parsed_before
from mercury_lsp.next_edit.text import PATH_GOES_ON, QUOTED, is_identifier
from mercury_lsp.next_edit.tree import ParsedDoc

# A Python ``from m import a as b, c`` (parenthesized lists too) and an ECMAScript named import.
PY_FROM_IMPORT = re.compile(r"^[ \t]*from\s+(?P<module>\.*[\w.]*)\s+import\s+(?P<names>\([^)]*\)|[^\n]+)", re.M)
JS_NAMED_IMPORT = re.compile(r"import\s+(?:type\s+)?(?P<names>\{[^}]*\})\s+from\s+(?P<path>'[^']*'|\"[^\"]*\")")
# What an import statement names that it does not bring (``_import_words``): the module of
# Python's ``from m import x`` (and a segment a path goes on from: ``text.PATH_GOES_ON``).
PYTHON_FROM = re.compile(r"^\s*from\s+\S+")
# Statements that give their function's result: deleting one for a stale name changes what the
# function does (``return cast(T, x)``); its use is the user's to rewrite.
RESULT_STATEMENT = re.compile(r"\s*(?:return|raise|throw|yield)\b")
MIN_NAME_CHARS = 3  # a replacement name shorter than this ('re', 'os') pairs with too much
MAX_SITES = 6
SELF_ASSIGNMENT = re.compile(r"^[ \t]*(?:(?:let|const|var)\s+(?:mut\s+)?)?([A-Za-z_$][\w$]*)\s*:?=\s*\1\s*;?[ \t]*$")


def _import_words(doc: ParsedDoc, caps: dict) -> set[str]:
    """The names the import statements bring: their words but the module paths' (a quoted path —
    in Go its last part, the package's name —, ``from m`` of Python, a segment a path goes on
    from: ``progress`` of ``use crate::progress::{Bar}``)."""
    out = set()
    for n in caps["import"]:
        path = (lambda m: " " + m.group()[1:-1].rstrip("/").rsplit("/", 1)[-1] + " ") if doc.doc.grammar == "go" else ""
        text = PYTHON_FROM.sub("", QUOTED.sub(path, doc.b.node_text(n)))  # Go: a package is its path's last part
        out |= {m.group() for m in WORD.finditer(text) if is_identifier(m.group()) and not PATH_GOES_ON.match(text, m.end())}
    return out


def _paired(old: str, added: set[str]) -> str | None:
    """The one newly imported name that is ``old`` with an affix dropped or added."""
    found = {n for n in added if n != old and min(len(n), len(old)) >= MIN_NAME_CHARS
             and (old.endswith(n) or old.startswith(n) or n.endswith(old) or n.startswith(old))}
    return found.pop() if len(found) == 1 else None


def qualified(name: str, before: str, now: str, grammar: str) -> str | None:
    """``module.original`` when the name's import (``from m.keys import hashkey as name``,
    ``import {original as name} from './keys'``) gave way to an import of its module
    (``from m import keys``, ``import m.keys``, ``import * as keys from './keys'``) that the text
    before did not have; None otherwise."""
    if grammar == "python":
        for m in PY_FROM_IMPORT.finditer(before):
            original = _imported_as(m.group("names"), name)
            if original is None:
                continue
            module = m.group("module")
            head, _, last = module.rpartition(".")
            if not head and module.startswith("."):  # '.keys': the package '.', the module 'keys'
                head, last = module[:len(module) - len(module.lstrip("."))], module.lstrip(".")
            forms = [(rf"^[ \t]*import\s+{re.escape(module)}(?:\s+as\s+(?P<alias>\w+))?[ \t]*$", module)]
            if head:
                forms.append((rf"^[ \t]*from\s+{re.escape(head)}\s+import\s+[^\n]*(?<![\w.]){re.escape(last)}\b"
                              rf"(?:\s+as\s+(?P<alias>\w+))?", last))
            for form, bound in forms:
                got = re.search(form, now, re.M)
                if got is not None and re.search(form, before, re.M) is None:
                    return f"{got.group('alias') or bound}.{original}"
        return None
    if grammar in ("javascript", "typescript", "tsx"):
        for m in JS_NAMED_IMPORT.finditer(before):
            original = _imported_as(m.group("names"), name)
            if original is None:
                continue
            star = re.search(rf"import\s+\*\s+as\s+(\w+)\s+from\s+{re.escape(m.group('path'))}", now)
            if star is not None and star.group() not in before:
                return f"{star.group(1)}.{original}"
    return None


def _imported_as(names: str, name: str) -> str | None:
    """The original name of the import list's item that binds ``name`` (``hashkey as name``,
    ``name``); None when no item binds it."""
    for item in re.split(r"[,\n]", names.strip("(){} \n")):
        parts = item.split()
        if parts == [name]:
            return name
        if len(parts) == 3 and parts[1] == "as" and parts[2] == name:
            return parts[0]
    return None


def _argument(text: str, open_paren: int) -> tuple[int, int] | None:
    """(start, end) of the one argument of the call whose '(' is at ``open_paren``; None when
    it has none or several, or does not close on its line."""
    depth, i = 0, open_paren
    while i < len(text) and text[i] != "\n":
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                inner = text[open_paren + 1:i]
                return (open_paren + 1, i) if inner.strip() else None
        elif ch == "," and depth == 1:
            return None
        i += 1
    return None


def unimported(ctx: RuleContext) -> tuple[ParsedDoc, list[str], set[str]] | None:
    """The newest edited document, the names its imports brought then and no more that it does
    not define (sorted), and the names they bring now and did not then; None when none went."""
    if not ctx.edited:
        return None
    grammars, home = ctx.grammars, ctx.edited[0]
    old = parsed_before(grammars, home.doc, home.doc.history[-1])
    if old is None:
        return None
    caps = captures(grammars, home)
    now, then = _import_words(home, caps), _import_words(old, captures(grammars, old))
    defined = {home.b.node_text(n) for n in caps["definition"] + caps["parameter"]}
    removed = sorted(then - now - defined)
    return (home, removed, now - then) if removed else None


def stale_uses(ctx: RuleContext) -> list[Prediction]:
    """The edits at the uses of the names the newest edited document no longer imports (module
    docstring): renames (kind "rename") and unwrapped or deleted uses (kind "import")."""
    found = ctx.shared(unimported)
    if found is None:
        return []
    home, removed, added = found
    text = home.doc.text
    caps = captures(ctx.grammars, home)
    imports = [(home.b.char(n.start_byte), home.b.char(n.end_byte)) for n in caps["import"]]
    out: list[Prediction] = []
    for name in removed:
        uses = [m.start() for m in re.finditer(rf"(?<![\w$.:]){re.escape(name)}(?![\w$])", text)
                if not any(s <= m.start() < e for s, e in imports) and not non_code(home, m.start())]
        if not uses or len(uses) > MAX_SITES:
            continue
        new = _paired(name, added) or qualified(name, home.doc.history[-1], text, home.doc.grammar)
        for at in uses:
            if new is not None:
                why = f"its module is: '{new}'" if "." in new else f"'{new}' is"
                out.append(Prediction(home.doc.uri, at, at + len(name), new, UNIMPORTED_RENAME.value,
                                      f"'{name}' is no longer imported: {why}", "rename", "syntax", name))
                continue
            paren = at + len(name)
            while paren < len(text) and text[paren] in " \t":
                paren += 1
            arg = _argument(text, paren) if paren < len(text) and text[paren] == "(" else None
            if arg is None:  # a path through it ('libc::isatty(...)', 'OnceLock::new()'): its statement goes
                span = statement_lines(home, at)
                if span is not None and RESULT_STATEMENT.match(text, span[0]):
                    continue  # the function's result: the user's to rewrite
                if span is not None and not any(p.start < span[1] and span[0] < p.end for p in out):
                    out.append(Prediction(home.doc.uri, *span, "", UNIMPORTED_USE.value,
                                          f"'{name}' is no longer imported: the statement using it goes", "import",
                                          "syntax", text[span[0]:span[1]]))
                continue
            lo = text.rfind("\n", 0, at) + 1
            hi = text.find("\n", paren)
            hi = len(text) if hi < 0 else hi
            line = text[lo:at] + text[arg[0]:arg[1]] + text[arg[1] + 1:hi]
            if SELF_ASSIGNMENT.match(line):
                s, e = widened(text, lo, min(hi + 1, len(text)))
                out.append(Prediction(home.doc.uri, s, e, "", UNIMPORTED_USE.value,
                                      f"'{name}' is no longer imported: the line goes", "import", "syntax", text[s:e]))
            else:
                out.append(Prediction(home.doc.uri, at, arg[1] + 1, text[arg[0]:arg[1]], UNIMPORTED_USE.value,
                                      f"'{name}' is no longer imported: its call goes", "import", "syntax",
                                      text[at:arg[1] + 1]))
    return out
