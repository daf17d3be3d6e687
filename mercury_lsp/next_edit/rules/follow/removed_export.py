"""NE107 removed-export: a name the user deleted, or stopped importing, leaves its module's own
export list.

**What.** For each name the newest edits deleted that no open document defines any more
(``deleted.gone``), and each name the newest edited document's imports brought and bring no
more that it does not define (``stale.unimported``) when the edit deleted whole lines (an import
statement rewritten or split over new lines may bring the name back a moment later: on
heldout14, cattrs' regrouped imports cost five false positives), the entry naming it in the same document's
export list goes — a Python ``__all__`` string (``=``, ``+=``, ``.append``/``.extend``, module
level), an ECMAScript ``export { name }`` specifier of the module's own names (not ``export {
name } from './m'``, which re-exports another module's) —: the item with the comma after it (its
line, when it stands alone there), the last item with the comma before it; a statement
exporting only it, whole.

**Why.** An export list naming what the module no longer has breaks every importer: ``from m
import *`` raises ``AttributeError``, ``export { gone }`` does not compile. Other documents'
import lists are NE106's.

**Example.** Deleting ``from .errors import ExpiredError`` from a package's ``__init__.py``
offers taking ``'ExpiredError'`` out of its ``__all__``.
"""

from __future__ import annotations

import re

from mercury_lsp.next_edit.exports import ecmascript, python
from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import REMOVED_EXPORT
from mercury_lsp.next_edit.rules.follow.deleted import gone
from mercury_lsp.next_edit.rules.imports.stale import unimported
from mercury_lsp.next_edit.symbols import captures
from mercury_lsp.next_edit.text import changed_lines
from mercury_lsp.next_edit.tree import ParsedDoc

COMMA_AFTER = re.compile(r"[ \t]*,[ \t]*")
COMMA_BEFORE = re.compile(r",\s*$")


def run(ctx: RuleContext) -> list[Prediction]:
    """The names the newest edits deleted or stopped importing, out of their document's exports."""
    names: dict[str, tuple[ParsedDoc, str]] = {}
    for _, home, name, _ in ctx.shared(gone):
        names.setdefault(name, (home, "was deleted"))
    found = ctx.shared(unimported)
    if found is not None and _deleted_lines(ctx):
        for name in found[1]:
            names.setdefault(name, (found[0], "is no longer imported"))
    out: list[Prediction] = []
    for name, (home, why) in sorted(names.items()):
        for s, e in _entries(ctx, home, name):
            a, b = item_span(home.doc.text, s, e)
            out.append(Prediction(home.doc.uri, a, b, "", REMOVED_EXPORT.value,
                                  f"'{name}' {why}: it leaves the module's exports", "import", "syntax",
                                  home.doc.text[a:b]))
    return out


def _deleted_lines(ctx: RuleContext) -> bool:
    """The newest edit only deleted whole lines (an import taken out): an import statement rewritten
    or split (names regrouped over new lines) may bring a name back a moment later."""
    ex = ctx.examples[0] if ctx.examples else None
    span = changed_lines(ex.before, ex.after) if ex is not None else None
    return span is not None and not ex.after[span[0]:span[2]].strip()


def _entries(ctx: RuleContext, doc: ParsedDoc, name: str) -> list[tuple[int, int]]:
    """The spans of the items of ``doc``'s own export lists that name ``name``."""
    grammar = doc.doc.grammar
    if python.handles(grammar):
        strings = [n.parent for n in python.all_entries(captures(ctx.grammars, doc)) if doc.b.node_text(n) == name]
        return [(doc.b.char(n.start_byte), doc.b.char(n.end_byte)) for n in strings]
    if not ecmascript.handles(grammar):
        return []
    out = []
    for stmt in (n for n in doc.tree.root_node.named_children if n.type == "export_statement"):
        if stmt.child_by_field_name("source") is not None:
            continue  # a re-export of another module's name
        clause = next((c for c in stmt.named_children if c.type == "export_clause"), None)
        specs = [c for c in clause.named_children if c.type == "export_specifier"] if clause is not None else []
        for spec in specs:
            local = spec.child_by_field_name("name")
            if local is None or doc.b.node_text(local) != name:
                continue
            node = stmt if len(specs) == 1 else spec
            out.append((doc.b.char(node.start_byte), doc.b.char(node.end_byte)))
    return out


def item_span(text: str, s: int, e: int) -> tuple[int, int]:
    """What deleting the list item ``text[s:e]`` takes: the item and the comma after it (its whole
    line when it stands alone on it), or for the last item the comma before it; an item with no
    comma either side (a whole statement) alone on its line, the line."""
    after = COMMA_AFTER.match(text, e)
    if after is not None:
        line_start = text.rfind("\n", 0, s) + 1
        line_end = text.find("\n", after.end())
        line_end = len(text) if line_end < 0 else line_end
        if not text[line_start:s].strip() and not text[after.end():line_end].strip():
            return line_start, min(line_end + 1, len(text))
        return s, after.end()
    before = COMMA_BEFORE.search(text, 0, s)
    if before is not None:
        return before.start(), e
    line_start, line_end = text.rfind("\n", 0, s) + 1, text.find("\n", e)
    line_end = len(text) if line_end < 0 else line_end
    if not text[line_start:s].strip() and not text[e:line_end].strip():  # a statement alone on its line
        return line_start, min(line_end + 1, len(text))
    return s, e


RULE = Rule("NE107", "removed-export", "import", REMOVED_EXPORT.value, run, __doc__)
