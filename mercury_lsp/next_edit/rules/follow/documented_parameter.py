"""NE115 documented-parameter: the user renamed a parameter in its function's documentation (a
JSDoc ``@param``, a Sphinx ``:param:``); the parameter it documents follows.

**What.** The newest edit (``EXAMPLES`` of them, newest first) is read for a documentation tag
whose parameter name changed and nothing else of the line but its spacing and brackets:
``@param {object} [opt]`` -> ``@param {object} [options]`` (JSDoc, in the comment above a
function, a method or a function assigned to a name), ``:param opt:`` -> ``:param options:``
(Sphinx, in the docstring of the function it is in; a typed ``:param dict opt:`` too). The
function it documents has a parameter of the old name and none of the new: that parameter is
renamed — only it: the uses in the body follow the parameter once the user takes the edit (the
rename rules, NE101), and some are often meant to stay (``var opt = options || {}``).

**Why.** The documentation is often fixed first — a review asked for ``options``, the editor's
cursor was in the comment — and the code is the next stop; nothing else ties the comment's word
to the parameter.

**Example.** `` * @param {object} [opt]`` -> `` * @param {object} [options]`` above ``function
parse(str, opt) {``: ``opt`` in ``parse(str, opt)`` becomes ``options``.
"""

from __future__ import annotations

import re

from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import DOCUMENTED_PARAMETER, REPEAT_AGE_PENALTY
from mercury_lsp.next_edit.scopes import FUNCTION_SCOPES
from mercury_lsp.next_edit.text import changed_lines
from mercury_lsp.next_edit.tree import ParsedDoc, enclosing, walk

EXAMPLES = 3  # the newest edits read (as the token rules)
# A parameter's documentation tag, the name in group 'name': JSDoc's '@param {T} name',
# '@param {T} [name]', '[name=default]', '@arg'/'@argument'; Sphinx's ':param name:',
# ':param type name:'.
TAGS = (re.compile(r"@(?:param|arg|argument)\b(?:\s*\{[^}]*\})?\s*\[?\s*(?P<name>[A-Za-z_$][\w$]*)"),
        re.compile(r":param\s+(?:[\w.\[\], |]+\s+)?(?P<name>[A-Za-z_]\w*)\s*:"))
DOC_COMMENTS = ("comment",)  # the comment above the function (JSDoc)
DOCSTRINGS = ("string", "string_content")  # the docstring inside it (Python)
FUNCTIONS = FUNCTION_SCOPES + ("generator_function_declaration", "generator_function")
NAME_FIELDS = ("name", "pattern", "left")  # a parameter node's field holding the name it declares


def run(ctx: RuleContext) -> list[Prediction]:
    """The parameter a renamed documentation tag documents (module docstring)."""
    for ex in ctx.examples[:EXAMPLES]:
        p = ctx.by_uri.get(ex.doc.uri)
        if p is None or ex.index:  # an older record of the document: its offsets are not the text's
            continue
        renamed = _renamed_tag(ex.before, ex.after)
        if renamed is None:
            continue
        at, old, new = renamed
        func = _documented(p, at)
        if func is None:
            continue
        params = _parameters(p, func)
        if new in params or old not in params:
            continue  # the documentation was fixed to match the code, or documents another thing
        s, e = params[old]
        return [Prediction(p.doc.uri, s, e, new, round(max(DOCUMENTED_PARAMETER.value - REPEAT_AGE_PENALTY.value * ex.age, 0.0), 6),
                           f"the documentation renamed parameter '{old}' to '{new}'", RULE.kind, "syntax", old)]
    return []


def _renamed_tag(before: str, after: str) -> tuple[int, str, str] | None:
    """(offset of the new name in ``after``, old name, new name) when the edit changed one line,
    a documentation tag whose parameter name is all that changed (spacing and brackets aside)."""
    lines = changed_lines(before, after)
    if lines is None:
        return None
    bl, bh, ah = lines
    old_line, new_line = before[bl:bh], after[bl:ah]
    if "\n" in old_line.rstrip("\n") or "\n" in new_line.rstrip("\n"):
        return None
    for tag in TAGS:
        mo, mn = tag.search(old_line), tag.search(new_line)
        if mo is None or mn is None or mo.group("name") == mn.group("name"):
            continue
        if _rest(old_line, mo) != _rest(new_line, mn):
            return None  # more of the line changed: rewritten documentation, not a rename
        return bl + mn.start("name"), mo.group("name"), mn.group("name")
    return None


def _rest(line: str, m: re.Match) -> str:
    """The line without the tag's name, its spacing and brackets."""
    return re.sub(r"[\s\[\]]", "", line[:m.start("name")] + line[m.end("name"):])


def _documented(p: ParsedDoc, at: int):
    """The function the documentation at ``at`` documents: the one below a comment, or the one
    around a docstring; None when there is none."""
    node = p.tree.root_node.descendant_for_byte_range(p.b.byte(at), p.b.byte(at))
    while node is not None and node.type not in DOC_COMMENTS + DOCSTRINGS:
        node = node.parent
    if node is None:
        return None
    if node.type in DOCSTRINGS:
        return enclosing(node, FUNCTIONS)
    below = node.next_named_sibling
    if below is None:
        return None
    first_line = below.start_point[0]
    return next((n for n in walk(below) if n.type in FUNCTIONS and n.start_point[0] <= first_line + 1), None)


def _parameters(p: ParsedDoc, func) -> dict[str, tuple[int, int]]:
    """Name -> span of each parameter ``func`` declares in its parameter list."""
    params = func.child_by_field_name("parameters") or func.child_by_field_name("parameter")
    if params is None:
        return {}
    out: dict[str, tuple[int, int]] = {}
    targets = [params] if params.type == "identifier" else [
        n for n in walk(params) if n.type == "identifier" and n.parent is not None
        and (n.parent.id == params.id or any(
            (f := n.parent.child_by_field_name(name)) is not None and f.id == n.id for name in NAME_FIELDS))]
    for n in targets:
        s, e = p.b.char(n.start_byte), p.b.char(n.end_byte)
        out.setdefault(p.doc.text[s:e], (s, e))
    return out


RULE = Rule("NE115", "documented-parameter", "rename", DOCUMENTED_PARAMETER.value, run, __doc__)
