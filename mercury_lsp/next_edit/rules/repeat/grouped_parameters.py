"""NE206 grouped-parameters: the user wrote a signature's consecutive parameters of one type with
the type once (``header string, match string`` -> ``header, match string``); the other
signatures that still spell it for each follow.

**What.** The newest edits (``EXAMPLES``) are read for one that grouped parameters in a language
whose parameter lists allow it (Go: ``a, b T``): a run of consecutive parameters of one type
before the edit (``a T, b T``) is ``a, b T`` after it, the names and the type unchanged. Every
other parameter list of the open documents of the language (the functions, methods and function
types and literals; the named results too) with such a run gets it grouped the same way, one
edit a run: ``limit int, backlogLimit int`` -> ``limit, backlogLimit int``. More sites than
``nextEdit.repeatMaxSites`` in the cursor's document and the others together: only the cursor's
document's, if they are few enough; else none.

**Why.** A style fix is made across a package once a reviewer or the author notices it, one
signature after another; its places are read from the syntax, not from the tokens around the
first one (which name other parameters everywhere), so the token pattern rule (NE204) never
finds them.

**Example.** ``func (hr HeaderRouter) Route(header string, match string, ...)`` -> ``Route(header,
match string, ...)``: ``func ThrottleBacklog(limit int, backlogLimit int, backlogTimeout
time.Duration)`` becomes ``func ThrottleBacklog(limit, backlogLimit int, backlogTimeout
time.Duration)`` and ``func WithValue(key interface{}, val interface{})`` becomes ``func
WithValue(key, val interface{})``. Not in Python, Rust, TypeScript or JavaScript, whose parameter
lists have no grouping.
"""

from __future__ import annotations

import re

from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import (
    GROUPED_PARAMETERS,
    REPEAT_AGE_PENALTY,
    REPEAT_OTHER_DOCUMENT_PENALTY,
)
from mercury_lsp.next_edit.text import changed_lines
from mercury_lsp.next_edit.tree import ParsedDoc, walk

EXAMPLES = 3  # the newest edits read (as the token rules)
GROUPING_GRAMMARS = frozenset({"go"})  # parameter lists where 'a, b T' declares two parameters of type T
# Two parameters of one type written each with it, as the edit's old lines show them ('a T, b T');
# the type: a name, a qualified name, a pointer, slice, map or channel of one, 'interface{}'.
TYPE = r"[\w.*\[\]]+(?:\{\})?"
SPELT_EACH = re.compile(rf"(?<![\w.])(\w+)\s+({TYPE})\s*,\s*(\w+)\s+\2(?=\s*[,)])")


def run(ctx: RuleContext) -> list[Prediction]:
    """The other parameter runs that spell one type for each parameter (module docstring)."""
    out: list[Prediction] = []
    for ex in ctx.examples[:EXAMPLES]:
        if ex.doc.grammar not in GROUPING_GRAMMARS or not _grouped(ex.before, ex.after):
            continue
        found = [(p, s, e, new) for d in ctx.same_language(ex.doc) if (p := ctx.by_uri.get(d.uri)) is not None
                 for s, e, new in _runs(p)]
        if len(found) > ctx.options.repeat_max_sites:
            found = [f for f in found if f[0].doc.uri == ctx.query.cursor_uri]
            if len(found) > ctx.options.repeat_max_sites:
                continue
        for p, s, e, new in found:
            conf = GROUPED_PARAMETERS.value - REPEAT_AGE_PENALTY.value * ex.age
            where = ""
            if p.doc.uri != ctx.query.cursor_uri:
                conf -= REPEAT_OTHER_DOCUMENT_PENALTY.value
                where = " (another document)"
            out.append(Prediction(p.doc.uri, s, e, new, round(max(conf, 0.0), 6),
                                  f"parameters of one type grouped as the last edit did{where}", RULE.kind,
                                  "syntax", p.doc.text[s:e]))
        if out:
            break  # the newest grouping example's sites (an older one's are the same places)
    return out


def _grouped(before: str, after: str) -> bool:
    """The edit wrote a run of parameters of one type with the type once: 'a T, b T' in its old
    lines is 'a, b T' in its new ones."""
    lines = changed_lines(before, after)
    if lines is None:
        return False
    bl, bh, ah = lines
    old, new = before[bl:bh], after[bl:ah]
    return any(re.search(rf"(?<![\w.]){m.group(1)}\s*,\s*{m.group(3)}\s+{re.escape(m.group(2))}(?=\s*[,)])", new)
               for m in SPELT_EACH.finditer(old))


def _runs(p: ParsedDoc) -> list[tuple[int, int, str]]:
    """(start, end, grouped text) of each run of two or more consecutive one-name parameters of one
    type in ``p``'s parameter lists (a variadic '...T' ends a list alone and is never grouped)."""
    out = []
    for node in walk(p.tree.root_node):
        if node.type != "parameter_list":
            continue
        run: list[tuple[str, str, int, int]] = []  # (name, type, start, end) of the current run
        for child in [*node.named_children, None]:
            entry = _one_name(p, child) if child is not None else None
            if entry is not None and run and entry[1] == run[-1][1]:
                run.append(entry)
                continue
            if len(run) > 1:
                names = ", ".join(n for n, _, _, _ in run)
                out.append((run[0][2], run[-1][3], f"{names} {run[0][1]}"))
            run = [entry] if entry is not None else []
    return out


def _one_name(p: ParsedDoc, decl) -> tuple[str, str, int, int] | None:
    """(name, type text, start, end) of a parameter declaring one name with a type; None otherwise."""
    if decl.type != "parameter_declaration":
        return None
    names = decl.children_by_field_name("name")
    typ = decl.child_by_field_name("type")
    if len(names) != 1 or typ is None:
        return None
    b = p.b
    name = p.doc.text[b.char(names[0].start_byte):b.char(names[0].end_byte)]
    type_text = re.sub(r"\s+", " ", p.doc.text[b.char(typ.start_byte):b.char(typ.end_byte)])
    return name, type_text, b.char(decl.start_byte), b.char(decl.end_byte)


RULE = Rule("NE206", "grouped-parameters", "repeat", GROUPED_PARAMETERS.value, run, __doc__)
