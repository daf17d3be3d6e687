"""Statements left using a definition the user deleted.

The newest edits (``examples``) are read for the lines they deleted; a deleted line that declares
a name (``func name``, ``def name``, ``var|let|const|static name``, a struct field
``name Type``, ``name = value`` at the top of a line) removed it when the name is defined nowhere
any more: not in the document (the language's query file, ``symbols``, and the same declaration
shapes in its text) nor in the other open documents of its language. Each statement of the
document still using it in code goes (whole lines, with a blank line that would be left doubled):
a variable deleted inside a function was its local: only that function's uses count, and never
an attribute of the same name (``v.host`` for a deleted ``host``). The statement is the use's
outermost enclosing node directly inside a block (a function body,
a class or struct body, the file), when it is at most ``MAX_STATEMENT_LINES`` lines and not a
definition of a function, type or class itself (those are the user's to rework).

The name also leaves the import lists of the other open documents of the language (with its
comma). More uses of a name than ``MAX_SITES`` (a field or variable) or ``MAX_CALLABLE_SITES`` (a function or
type: more often moved than deleted): the user is reworking the code, nothing is offered.
"""

from __future__ import annotations

import re

from mercury_lsp.next_edit.examples import Example, recent_edits, to_current
from mercury_lsp.next_edit.line_repeat import widen_deletion
from mercury_lsp.next_edit.prose import non_code
from mercury_lsp.next_edit.query import NextEditQuery, Prediction
from mercury_lsp.next_edit.rules import KEYWORDS, line_bounds
from mercury_lsp.next_edit.scopes import binds, scope_of
from mercury_lsp.next_edit.symbols import captures
from mercury_lsp.next_edit.text import diff_region
from mercury_lsp.next_edit.tree import ParsedDoc
from mercury_lsp.syntax import Grammars

EXAMPLES = 3  # the newest edits read (as ``repeat``)
MIN_NAME_CHARS = 4  # shorter names ('x', 'err', 'ctx') are assigned again and again
MIN_DECLARED_CHARS = 2  # ... but a keyword declares a type or function of any length ('interface Ky')
# More uses than this: the user is reworking the code. A field or variable deleted takes its uses
# with it (the dev set's commits removed a struct field and its 12 uses together); a function or
# type deleted was more often moved (cut, then pasted lower: its uses stay).
MAX_SITES = 16
MAX_CALLABLE_SITES = 2
CALLABLE = re.compile(r"(?:func|def|fn|class|struct|type|interface|enum|trait)\b")
MAX_STATEMENT_LINES = 6
CONFIDENCE = 0.45
OPENERS = ("{", ":", "(")  # a line ending so opens a block (or a parameter list)
DECLARATION = re.compile(
    r"^[ \t]*(?:(?:pub(?:\([\w:]+\))?|export|async)\s+)*(?:"
    r"(?P<keyword>func\s*(?:\([^)]*\)\s*)?|def\s+|fn\s+|class\s+|struct\s+|type\s+|interface\s+|enum\s+|trait\s+"
    r"|var\s+|let\s+(?:mut\s+)?"
    r"|const\s+|static\s+)(?P<name>[A-Za-z_$][\w$]*)(?=[\s(<:=])"
    # bare: an assignment at the start of a line (Python), a field 'name Type' (Go)
    r"|(?P<bare>[A-Za-z_$][\w$]*)(?=\s*=(?!=)|\s+[*\[\]]*[A-Za-z_][\w.*\[\]]*[ \t]*(?://.*)?$))")
# Nodes whose children are statements (any grammar): a use's statement is the child of one.
BLOCKS = ("block", "statement_list", "statement_block", "compound_statement", "source_file", "module", "program",
          "declaration_list", "field_declaration_list", "class_body", "translation_unit")
# Statements never deleted whole: definitions are the user's to rework.
DEFINITIONS = ("function_definition", "function_declaration", "method_declaration", "function_item",
               "class_definition", "class_declaration", "impl_item", "type_declaration", "struct_item",
               "method_definition", "decorated_definition", "interface_declaration")


def deleted_declarations(before: str, after: str) -> dict[str, int]:
    """Names declared on the lines an edit deleted that the lines it wrote do not name, with the
    most uses they may leave (``MAX_SITES``, ``MAX_CALLABLE_SITES``)."""
    p, eb, ea = diff_region(before, after)
    if p == eb == ea:
        return set()
    lo, hb = line_bounds(before, p, eb)
    _, ha = line_bounds(after, p, ea)
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


def widened(text: str, s: int, e: int) -> tuple[int, int]:
    """A deleted line with the blank line after it when it was the first of its block (the
    blank line would open the block), else as ``line_repeat.widen_deletion`` widens it."""
    above = text[text.rfind("\n", 0, max(s - 1, 0)) + 1:s].rstrip()
    below_end = text.find("\n", e)
    if above.endswith(OPENERS) and below_end >= 0 and not text[e:below_end].strip():
        return s, below_end + 1
    return widen_deletion(text, s, e)


def statement_lines(doc: ParsedDoc, offset: int) -> tuple[int, int] | None:
    """The whole lines (with a blank line that deleting them would leave doubled) of the statement
    around ``offset``: the innermost enclosing node directly inside a block that stands alone on
    its lines (``let x = unsafe { f() };``, not ``f()`` in its inner block), when it spans at most
    ``MAX_STATEMENT_LINES`` lines and defines no function, type or class; else None."""
    text = doc.doc.text
    b = doc.b.byte(offset)
    node = doc.tree.root_node.descendant_for_byte_range(b, b + 1)
    while node is not None and node.parent is not None:
        if node.parent.type in BLOCKS:
            if node.type in DEFINITIONS or node.end_point[0] - node.start_point[0] >= MAX_STATEMENT_LINES:
                return None
            s, e = doc.b.char(node.start_byte), doc.b.char(node.end_byte)
            lo, hi = line_bounds(text, s, e)
            if not text[lo:s].strip() and not text[e:hi].strip(" \t;,"):
                return widened(text, lo, min(hi + 1, len(text)))
        node = node.parent
    return None


def _from_imports(name: str, doc: ParsedDoc, caps: dict) -> list[Prediction]:
    """``name`` taken out of the import lists of ``doc`` (a list's item with its comma; a statement
    importing only it, whole)."""
    text, out = doc.doc.text, []
    for n in caps["import"]:
        s, e = doc.b.char(n.start_byte), doc.b.char(n.end_byte)
        statement = text[s:e]
        m = re.search(rf"(?<![\w$.:]){re.escape(name)}\s*,\s*|\s*,\s*(?<![\w$.:]){re.escape(name)}(?![\w$.:])",
                      statement)
        if m is not None:
            out.append(Prediction(doc.doc.uri, s + m.start(), s + m.end(), "", CONFIDENCE,
                                  f"'{name}' was deleted: it leaves the import", "import", "syntax", m.group()))
    return out


def local_scope(ex: Example, home: ParsedDoc, limit: int) -> tuple[int, int] | None:
    """The function a deleted variable was local to (``host = host[:i]`` deleted in one method):
    its uses are there only, and never an attribute (``v.host``, ``self.show_default``). None
    for anything else (a function, type or module-level name: the whole document)."""
    if limit != MAX_SITES:
        return None
    at = to_current(ex, diff_region(ex.before, ex.after)[0])
    return scope_of(home, at) if at is not None else None


def removed_uses(query: NextEditQuery, parsed: list[ParsedDoc], grammars: Grammars) -> list[Prediction]:
    by_uri = {p.doc.uri: p for p in parsed}
    out: list[Prediction] = []
    taken: set[tuple[str, int]] = set()
    for ex in recent_edits(query, EXAMPLES):
        home = by_uri.get(ex.doc.uri)
        names = deleted_declarations(ex.before, ex.after) if home is not None else set()
        if not names:
            continue
        others = [p for p in parsed if p.doc.grammar == home.doc.grammar]
        text = home.doc.text
        for name in sorted(names):
            if any(_declared(name, p, captures(grammars, p)) for p in others):
                continue
            for p in others:
                if p is not home:
                    out += _from_imports(name, p, captures(grammars, p))
            scope = local_scope(ex, home, names[name])
            word = re.compile(rf"(?<![\w${'.' if scope else ''}]){re.escape(name)}(?![\w$])")
            uses = [m.start() for m in word.finditer(text, *(scope or (0, len(text))))
                    if not non_code(home, m.start())]
            if scope and any(binds(home, at, name) for at in uses):
                continue  # still a parameter or assigned in its function: not gone
            if not uses or len(uses) > names[name]:
                continue
            for at in uses:
                span = statement_lines(home, at)
                if span is None or (home.doc.uri, span[0]) in taken:
                    continue
                taken.add((home.doc.uri, span[0]))
                s, e = span
                out.append(Prediction(home.doc.uri, s, e, "", CONFIDENCE,
                                      f"'{name}' was deleted: the statement using it goes", "repeat", "syntax",
                                      text[s:e]))
    return out
