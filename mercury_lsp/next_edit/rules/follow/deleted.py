"""Names the user just deleted (shared by ``removed-use``, NE105, and ``removed-import-name``,
NE106): a line of the newest edits' deleted lines that declares a name (``func name``, ``def
name``, ``var|let|const|static name``, a struct field ``name Type``, ``name = value`` or Go's
``name := value`` at the top of a line) removed it when the name is defined nowhere any more — not in the document (the
language's query file, ``symbols``, and the same declaration shapes in its text) nor in the other
open documents of its language (``gone``)."""

from __future__ import annotations

import re

from mercury_lsp.next_edit.examples import Example, to_current
from mercury_lsp.next_edit.rules.base import RuleContext
from mercury_lsp.next_edit.scopes import scope_of
from mercury_lsp.next_edit.symbols import captures
from mercury_lsp.next_edit.text import KEYWORDS, changed_lines, diff_region
from mercury_lsp.next_edit.tree import ParsedDoc

EXAMPLES = 3  # the newest edits read (as the token rules)
MIN_NAME_CHARS = 4  # shorter names ('x', 'err', 'ctx') are assigned again and again
MIN_DECLARED_CHARS = 2  # ... but a keyword declares a type or function of any length ('interface Ky')
# More uses than this: the user is reworking the code. A field or variable deleted takes its uses
# with it (the dev set's commits removed a struct field and its 12 uses together); a function or
# type deleted was more often moved (cut, then pasted lower: its uses stay).
MAX_SITES = 16
MAX_CALLABLE_SITES = 2
CALLABLE = re.compile(r"(?:function|func|def|fn|class|struct|type|interface|enum|trait)\b")
DECLARATION = re.compile(
    r"^[ \t]*(?:(?:pub(?:\([\w:]+\))?|export|async)\s+)*(?:"
    r"(?P<keyword>(?:function\b\*?|func(?![\w$]))\s*(?:\([^)]*\)\s*)?|def\s+|fn\s+|class\s+|struct\s+|type\s+|interface\s+|enum\s+|trait\s+"
    r"|var\s+|let\s+(?:mut\s+)?"
    r"|const\s+|static\s+)(?P<name>[A-Za-z_$][\w$]*)(?=[\s(<:=])"
    # bare: an assignment at the start of a line (Python), a short variable declaration (Go
    # 'name := value'), a field 'name Type' (Go)
    r"|(?P<bare>[A-Za-z_$][\w$]*)(?=\s*:?=(?!=)|\s+[*\[\]]*[A-Za-z_][\w.*\[\]]*[ \t]*(?://.*)?$))")


def gone(ctx: RuleContext) -> list[tuple[Example, ParsedDoc, str, int]]:
    """(example, its document, name, the most uses it may leave) of every name an example deleted
    that no open document of its language defines any more, the newest example first; a name the
    history renamed (a rename candidate's old name) is no deleted one."""
    out = []
    renamed = {c.old_text for c in ctx.candidates if c.kind == "rename"}  # renamed, not deleted: NE101's
    for ex in ctx.examples[:EXAMPLES]:
        home = ctx.by_uri.get(ex.doc.uri)
        names = deleted_declarations(ex.before, ex.after) if home is not None else {}
        names = {n: k for n, k in names.items() if n not in renamed}
        if not names:
            continue
        others = [p for p in ctx.parsed if p.doc.grammar == home.doc.grammar]
        for name in sorted(names):
            if not any(_declared(name, p, captures(ctx.grammars, p)) for p in others):
                out.append((ex, home, name, names[name]))
    return out


def deleted_declarations(before: str, after: str) -> dict[str, int]:
    """Names declared on the lines an edit deleted that the lines it wrote do not name, with the
    most uses they may leave (``MAX_SITES``, ``MAX_CALLABLE_SITES``)."""
    lines = changed_lines(before, after)
    if lines is None:
        return {}
    lo, hb, ha = lines
    old = [m for line in before[lo:hb].split("\n") if (m := DECLARATION.match(line))]
    new = after[lo:ha]
    return {_name(m): MAX_CALLABLE_SITES if CALLABLE.match(m.group("keyword") or "") else MAX_SITES for m in old
            if len(_name(m)) >= (MIN_NAME_CHARS if m.group("bare") else MIN_DECLARED_CHARS) and _name(m) not in KEYWORDS
            and re.search(rf"(?<![\w$]){re.escape(_name(m))}(?![\w$])", new) is None}


def _name(m: re.Match) -> str:
    return m.group("name") or m.group("bare")


def _declared(name: str, doc: ParsedDoc, caps: dict) -> bool:
    """``name`` is defined in ``doc`` (its query's definitions, or a declaring keyword before it:
    a bare ``name = value`` line is an assignment in most languages)."""
    if any(doc.b.node_text(n) == name for n in caps["definition"]):
        return True
    return any(m.group("name") == name for line in doc.doc.text.split("\n") if (m := DECLARATION.match(line)))  # keyword form


def local_scope(ex: Example, home: ParsedDoc, limit: int) -> tuple[int, int] | None:
    """The function a deleted variable was local to (``host = host[:i]`` deleted in one method):
    its uses are there only, and never an attribute (``v.host``, ``self.show_default``). None
    for anything else (a function, type or module-level name: the whole document)."""
    if limit != MAX_SITES:
        return None
    at = to_current(ex, diff_region(ex.before, ex.after)[0])
    return scope_of(home, at) if at is not None else None
