"""NE111 adopted-name: the user switched one use of a name to a newly written one; the other uses
of the old name follow — never inside the new name's own definition.

**What.** The newest edits (``EXAMPLES``) are read for one that replaced a name in a path with
another, the rest of the line unchanged but for punctuation (``izip(a, b)`` -> ``zip(a, b)``,
``options.skip`` -> ``opts.skip``, ``t.Protocol`` -> ``te.Protocol``, ``self.eof()`` ->
``self.parse_whitespace()``), where the old name is still in use and the switched name binds nothing there (a rename is
NE101's and NE201's: a variable's binding, a member's declaration or ``self.name = ...``), and the new one is *adopted*: absent from the document before the recent
edits (a new import, a helper, or a local made from the old name: ``var opts = options || {}``),
or switched to by two edits already, or a value of the switch's own function (a parameter, a
local) where only functions bind the name and the old name is none of that function's values
(``log.Fatal`` -> ``t.Fatal`` in a test taking ``t``: its uses after the binding, in that function
only). A member switched once to one that no open document has yet (``self.handle_name`` ->
``self.handle_assign_name`` in one entry of a dispatch table) is a method still to write for that
place alone, no migration. Its other uses become the new name:

* the head of a path (``izip``, ``options``): every use of it as a name of its own (a call when
  the example was one), after the new name's binding and within its function when that is a
  local's; when the new head is a module an import brings (``t.Protocol`` -> ``te.Protocol``),
  only with the member the example used;
* the last name of a path (a method, ``.eof()``): every use of that member, calls when the
  example was a call — on the same receiver, unless two edits switched it already (``.get(`` is
  every map's).

Never at a definition or binding of either name, never inside the new name's own definition or
its binding's statement (a helper calling the function it replaces would call itself forever);
in the example's document (other documents import their own names) — but a module or crate
switched on an import line and used no more in its document (``extern crate num;`` ->
``extern crate num_traits;``) is switched in the other open documents of the language, where it
heads a path (``use num::NumCast;``) or an import brings it (ranked below). More sites than
``nextEdit.repeatMaxSites``: none is offered.

**Why.** A migration is done one use at a time: an import of a helper and one call rewritten say
the other calls are to follow. Renaming the old name everywhere (a rename) would rewrite its
definition and the helper's own call of it.

**Example.** ``var opts = options || {}`` written and ``options.immediate`` -> ``opts.immediate``:
``options.skip`` below becomes ``opts.skip``, ``var opts = options || {}`` stays.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from mercury_lsp.next_edit.examples import Example, to_current
from mercury_lsp.next_edit.members import declares
from mercury_lsp.next_edit.prose import non_code
from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import (
    ADOPTED_NAME,
    REPEAT_AGE_PENALTY,
    REPEAT_OTHER_DOCUMENT_PENALTY,
)
from mercury_lsp.next_edit.scopes import (
    FUNCTION_SCOPES,
    binding_kind,
    binds,
    local_only_scopes,
    scope_of,
    word_in,
)
from mercury_lsp.next_edit.text import IDENT, IMPORT_LINE, KEYWORDS, TOKEN, diff_region, line_bounds
from mercury_lsp.next_edit.tree import ParsedDoc

EXAMPLES = 3  # the newest edits read (as the token rules)
PUNCTUATION = frozenset(";,")  # changes of these beside the switch are the user's style, not the switch
MIN_NAME_CHARS = 2  # a shorter old name ('t') is followed only as a module's alias, with its member
TRAILING_COMMENT = re.compile(r"\s(?://|#)(?![\[!]).*$")
MAX_REGION_LINES = 3  # an edit of more lines is rewriting code, not switching one name
DEFINITION_TYPES = FUNCTION_SCOPES + ("class_definition", "class_declaration", "struct_item", "enum_item",
                                      "trait_item", "type_declaration")


@dataclass(frozen=True)
class Switch:
    old: str
    new: str
    member: str | None  # the member after the head that must follow it (a module's), None: any
    tail: bool  # the last name of a path switched (a method), not its head
    call: bool  # the example's use was a call
    at: int  # the example's new name in the current text
    receiver: str = ""  # a switched member's receiver as written ('self', 'de'; '' for a head)


def run(ctx: RuleContext) -> list[Prediction]:
    """The other uses of the names the newest edits switched away from (module docstring)."""
    out: list[Prediction] = []
    seen: set[tuple[str, int]] = set()
    examples = ctx.examples[:EXAMPLES]
    read = [(ex, s) for ex in examples for s in switches(ex)]
    for ex, sw in read:
        home = ctx.by_uri.get(ex.doc.uri)
        if home is None:
            continue
        repeated = sum(1 for _, o in read if (o.old, o.new, o.tail) == (sw.old, sw.new, sw.tail)) > 1
        oldest = home.doc.history[-1] if home.doc.history else home.doc.text
        own = _own_scope(home, sw)
        if not (repeated or not word_in(sw.new, oldest) or own is not None):
            continue  # the new name is neither new nor switched to twice: another thing, not a migration
        if sw.tail and not repeated and not _written(ctx, home, sw):
            continue  # a member no document has yet: one use switched to a method still to write
        sites = _sites(home, sw, repeated, own)
        found = [(home, s, e) for s, e in sites or ()]
        if sites is None and _on_import_line(home, sw.at):  # a dependency switched where it is declared
            found = [(d, s, e) for d in ctx.parsed if d is not home and d.doc in ctx.same_language(home.doc)
                     for s, e in _module_uses(d, sw.old)]
        if not found or len(found) > ctx.options.repeat_max_sites:
            continue
        for d, s, e in found:
            if (d.doc.uri, s) in seen:
                continue
            seen.add((d.doc.uri, s))
            conf = ADOPTED_NAME.value - REPEAT_AGE_PENALTY.value * ex.age
            if d is not home:
                conf -= REPEAT_OTHER_DOCUMENT_PENALTY.value
            out.append(Prediction(d.doc.uri, s, e, sw.new, round(max(conf, 0.0), 6),
                                  f"'{sw.old}' was switched to '{sw.new}' above", RULE.kind, "syntax",
                                  d.doc.text[s:e]))
    return out


def _on_import_line(home: ParsedDoc, at: int) -> bool:
    lo, hi = line_bounds(home.doc.text, at, at)
    return IMPORT_LINE.match(home.doc.text[lo:hi]) is not None


def _module_uses(d: ParsedDoc, old: str) -> list[tuple[int, int]]:
    """Spans of ``old`` as a module or crate in ``d``: the head of a path (``num::NumCast``) or the
    name an import line brings (``extern crate num;``)."""
    text = d.doc.text
    out = []
    for m in re.finditer(rf"(?<![\w$.:]){re.escape(old)}(?![\w$])", text):
        lo, hi = line_bounds(text, m.start(), m.start())
        head = re.match(r"\s*(?:::|\.)\s*[A-Za-z_{*]", text[m.end():])
        if (head or IMPORT_LINE.match(text[lo:hi])) and not non_code(d, m.start()):
            out.append((m.start(), m.end()))
    return out


def switches(ex: Example) -> list[Switch]:
    """The name switches of one edit (at most one: an edit switching several names is a rewrite)."""
    before, after = ex.before, ex.after
    p, eb, ea = diff_region(before, after)
    if p == eb == ea:
        return []
    bl, bh = line_bounds(before, p, eb)
    al, ah = line_bounds(after, p, ea)
    if before.count("\n", bl, bh) >= MAX_REGION_LINES:
        return []
    ta, tb = _tokens(before, bl, bh), _tokens(after, al, ah)
    ops = [o for o in difflib.SequenceMatcher(None, [t for t, _ in ta], [t for t, _ in tb],
                                              autojunk=False).get_opcodes() if o[0] != "equal"]
    named = [o for o in ops if not all(t in PUNCTUATION for t, _ in ta[o[1]:o[2]] + tb[o[3]:o[4]])]
    if len(named) != 1 or named[0][0] != "replace":
        return []
    _, i1, i2, j1, j2 = named[0]
    if i2 - i1 != 1 or j2 - j1 != 1:
        return []
    old, new = ta[i1][0], tb[j1][0]
    if not (IDENT.match(old) and IDENT.match(new)) or old in KEYWORDS or new in KEYWORDS:
        return []
    tail = i1 > 0 and (ta[i1 - 1][0] == "." or ta[i1 - 1][0] == ":" and i1 > 1 and ta[i1 - 2][0] == ":")
    head_of_path = i1 + 1 < len(ta) and (ta[i1 + 1][0] == "." or ta[i1 + 1][0] == ":" and i1 + 2 < len(ta)
                                         and ta[i1 + 2][0] == ":")
    member = ta[i1 + 2][0] if head_of_path and i1 + 2 < len(ta) and ta[i1 + 1][0] == "." else \
        ta[i1 + 3][0] if head_of_path and i1 + 3 < len(ta) else None
    call = i1 + 1 < len(ta) and ta[i1 + 1][0] == "("
    at = to_current(ex, tb[j1][1])
    if at is None:
        return []
    receiver = re.sub(r"\s", "", _receiver_before(before[bl:ta[i1][1]].rstrip())) if tail else ""
    return [Switch(old, new, member, tail, call, at, receiver)]


def _tokens(text: str, lo: int, hi: int) -> list[tuple[str, int]]:
    """(token, offset) of the lines ``text[lo:hi]``, their trailing comments left out (a comment the
    user added beside the switch is no second change)."""
    out = []
    pos = lo
    for line in text[lo:hi].split("\n"):
        m = TRAILING_COMMENT.search(line)
        code = line[:m.start()] if m is not None and not _in_quotes(line, m.start()) else line
        out += [(t.group(), pos + t.start()) for t in TOKEN.finditer(code)]
        pos += len(line) + 1
    return out


def _in_quotes(line: str, at: int) -> bool:
    return any(line[:at].count(q) % 2 for q in "\"'`")


def _own_scope(home: ParsedDoc, sw: Switch) -> tuple[int, int] | None:
    """The span of the function around the switch when it binds the new name itself and only
    functions bind it (``local_only_scopes``: ``log.Fatal`` -> ``t.Fatal`` in a test taking ``t``):
    the function's own value, adopted there whether or not the document spelt it before. The span
    starts after the name's first binding there (a parameter's: the signature; a local's: its
    statement), for the uses above it are of the old value."""
    if sw.tail:
        return None
    scope = next(((lo, hi) for lo, hi in local_only_scopes(home, sw.new) if lo <= sw.at < hi), None)
    if scope is None:
        return None
    text = home.doc.text
    if any(binds(home, m.start(), sw.old)
           for m in re.compile(rf"(?<![\w$.]){re.escape(sw.old)}(?![\w$])").finditer(text, *scope)):
        return None  # two values of the function's own (``window``, ``ordered``): one use switched, no migration
    for m in re.compile(rf"(?<![\w$.]){re.escape(sw.new)}(?![\w$])").finditer(text, *scope):
        if binds(home, m.start(), sw.new):
            return line_bounds(text, m.start(), m.start())[1], scope[1]
    return None


def _sites(home: ParsedDoc, sw: Switch, repeated: bool,
           own: tuple[int, int] | None = None) -> list[tuple[int, int]] | None:
    """Spans of the old name's uses that follow the switch (None: the switch is no migration);
    ``own``: the function binding the new name around the switch, the only place they follow."""
    text = home.doc.text
    word = re.compile(rf"(?<![\w$]){re.escape(sw.old)}(?![\w$])")
    uses = [m.start() for m in word.finditer(text) if not non_code(home, m.start())]
    if not uses:
        return None  # the old name is gone: a rename, the rename rules' to follow
    if len(sw.old) < MIN_NAME_CHARS and (sw.tail or sw.member is None):
        return None  # a one-letter name switched is a module alias's member ('t.Protocol') or nothing
    if binds(home, sw.at, sw.new) or _defines(home, sw.at) or declares(home, sw.at):
        return None  # the switch renamed a binding or a member: a rename (NE101, NE201), the old name to be bound anew
    new_binding = _binding(home, sw.new) if own is None else None
    if new_binding is not None and not new_binding[2] and not _names(sw.old, text[new_binding[0]:new_binding[1]]):
        return None  # a local that is not made from the old name (``var opts = options || {}``) is another value
    # a new head bound by an import is a module (``te``): only the member the example used follows
    imported = own is None and new_binding is None and any(IMPORT_LINE.match(line) and word_in(sw.new, line)
                                           for line in text.split("\n"))
    lo, hi = own or (0, len(text))
    if new_binding is not None and not new_binding[2] and not sw.tail:
        scope = scope_of(home, new_binding[0])
        if scope is not None:
            lo, hi = new_binding[1], scope[1]  # a local: after it, in its function
    out = []
    for at in uses:
        if not lo <= at < hi or (new_binding is not None and new_binding[0] <= at < new_binding[1]):
            continue
        before = text[:at].rstrip()
        after = text[at + len(sw.old):]
        after_stripped = after.lstrip()
        if sw.tail != (before.endswith(".") or before.endswith("::")):
            continue
        if sw.tail and not repeated and re.sub(r"\s", "", _receiver_before(before)) != sw.receiver:
            continue  # a member switched once: on the same receiver only ('.get(' is everyone's)
        if sw.call and not after_stripped.startswith("("):
            continue
        if not sw.tail and imported and sw.member is not None and not re.match(rf"\s*\.\s*{re.escape(sw.member)}(?![\w$])", after):
            continue
        if binds(home, at, sw.old) or _in_definition_of(home, at, sw.new) or _defines(home, at):
            continue
        out.append((at, at + len(sw.old)))
    return out


def _written(ctx: RuleContext, home: ParsedDoc, sw: Switch) -> bool:
    """The switched-to member stands somewhere else than the switch in the open documents of the
    language (its definition, or another use): ``self.handle_name`` -> ``self.handle_assign_name``
    in one entry of a dispatch table, with no ``handle_assign_name`` anywhere yet, is a new method
    for that entry alone (heldout5: jinja), not a migration of every ``handle_name``."""
    word = re.compile(rf"(?<![\w$]){re.escape(sw.new)}(?![\w$])")
    return any(not (d is home.doc and m.start() == sw.at)
               for d in ctx.same_language(home.doc) for m in word.finditer(d.text))


def _receiver_before(before: str) -> str:
    """The path before the ``.`` or ``::`` that ends ``before`` (``self.inner`` of ``self.inner.``)."""
    m = re.search(r"((?:[A-Za-z_$][\w$]*\s*(?:\.|::)\s*)*[A-Za-z_$][\w$]*)\s*(?:\.|::)$", before)
    return m.group(1) if m else ""


def _names(name: str, text: str) -> bool:
    """``text`` uses ``name`` as a name of its own (not as a member: ``option.name()``)."""
    return re.search(rf"(?<![\w$.]){re.escape(name)}(?![\w$])", text) is not None


def _binding(home: ParsedDoc, name: str) -> tuple[int, int, bool] | None:
    """The line that binds ``name`` first (its ``def``, its ``var``) and whether it defines a
    function or type (else a value), if any."""
    text = home.doc.text
    for m in re.finditer(rf"(?<![\w$.]){re.escape(name)}(?![\w$])", text):
        if binds(home, m.start(), name):
            lo, hi = line_bounds(text, m.start(), m.start())
            return lo, hi, binding_kind(home, text, m.start()) == "definition" or _defines(home, m.start())
    return None


def _in_definition_of(home: ParsedDoc, at: int, name: str) -> bool:
    """``at`` lies inside the definition of ``name`` (a helper's body: calling the old name there is
    what the helper is for)."""
    b = home.b.byte(at)
    node = home.tree.root_node.descendant_for_byte_range(b, b + 1)
    while node is not None:
        if node.type in DEFINITION_TYPES:
            n = node.child_by_field_name("name")
            if n is None and node.parent is not None and node.parent.type == "variable_declarator":
                n = node.parent.child_by_field_name("name")
            if n is not None and home.b.node_text(n) == name:
                return True
        node = node.parent
    return False


def _defines(home: ParsedDoc, at: int) -> bool:
    """The name at ``at`` is the one a definition defines (``def izip``)."""
    b = home.b.byte(at)
    node = home.tree.root_node.descendant_for_byte_range(b, b + 1)
    parent = node.parent if node is not None else None
    return parent is not None and parent.type in DEFINITION_TYPES and parent.child_by_field_name("name") == node


RULE = Rule("NE111", "adopted-name", "rename", ADOPTED_NAME.value, run, __doc__)
