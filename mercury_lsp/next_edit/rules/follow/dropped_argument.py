"""NE103 dropped-argument: arguments whose name the user's edit unbound — a parameter removed
from a signature, a local or constant deleted — leave the calls still passing them.

A name is *unbound* by the newest edit when the language's query file (``symbols``) finds fewer
definitions and parameters of it after the edit than before, one of them inside the edited
region, none is left in the enclosing function (the document, at the top level), and the edit
did not rename it (a rename is NE101's). Its remaining references that are a whole argument of a
call (in the enclosing function for a parameter or local, in the document otherwise) are removed
with their comma — not those inside a nested scope that binds the name itself (a closure's
parameter, a match arm's pattern: ``scopes.rebinding_spans``).

**Why.** An argument naming a binding that is gone no longer compiles; the call passed it for
the parameter or local the user just removed.

**Example.** ``func run(ctx, opts)`` -> ``func run(opts)`` after deleting the local ``ctx``:
``helper(ctx, opts)`` in that function becomes ``helper(opts)``.
"""

from __future__ import annotations

from collections import Counter

from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import DROPPED_ARGUMENT
from mercury_lsp.next_edit.scopes import FUNCTION_SCOPES, rebinding_spans, scope_of
from mercury_lsp.next_edit.steps.calls import ARGUMENT_LISTS
from mercury_lsp.next_edit.symbols import captures, parsed_before
from mercury_lsp.next_edit.text import diff_region
from mercury_lsp.next_edit.tree import ParsedDoc, enclosing

MAX_SITES = 4  # more uses than this: the user is reworking the code, not dropping one argument


def _bindings(doc: ParsedDoc, got: dict) -> Counter:
    return Counter(doc.b.node_text(n) for n in got["definition"] + got["parameter"])


def _argument_span(doc: ParsedDoc, node) -> tuple[int, int] | None:
    """The argument ``node`` with one adjacent comma (the one before it, else the one after)."""
    args = node.parent
    if args is None or args.type not in ARGUMENT_LISTS:
        return None
    items = [c for c in args.named_children if c.type != "comment"]
    i = next((k for k, c in enumerate(items) if c.id == node.id), None)
    if i is None:
        return None
    if i > 0:
        return doc.b.char(items[i - 1].end_byte), doc.b.char(node.end_byte)
    if len(items) > 1:
        return doc.b.char(node.start_byte), doc.b.char(items[1].start_byte)
    return doc.b.char(node.start_byte), doc.b.char(node.end_byte)


def run(ctx: RuleContext) -> list[Prediction]:
    """The arguments the newest edit unbound, out of the calls passing them (module docstring)."""
    if not ctx.edited:
        return []
    grammars, home = ctx.grammars, ctx.edited[0]
    before, text = home.doc.history[0], home.doc.text
    p, eb, ea = diff_region(before, text)
    old = parsed_before(grammars, home.doc, before)
    if old is None:
        return []
    old_caps, caps = captures(grammars, old), captures(grammars, home)
    lost = _bindings(old, old_caps) - _bindings(home, caps)
    if not lost:
        return []
    pb, ebb = old.b.byte(p), old.b.byte(max(eb, p + 1))  # compared in bytes: no character map needed
    edited_names = {old.b.node_text(n) for n in old_caps["definition"] + old_caps["parameter"]
                    if pb <= n.start_byte < ebb}
    scope = scope_of(home, p) if p < len(text) else None
    lo, hi = scope if scope is not None else (0, len(text))
    bound = {home.b.node_text(n) for n in caps["definition"] + caps["parameter"]
             if home.b.byte(lo) <= n.start_byte < home.b.byte(hi)}  # still bound in the scope
    renamed = {c.old_text for c in ctx.candidates if c.kind == "rename"}  # renamed, not gone: NE101's
    at = home.b.byte(min(p, max(len(text) - 1, 0)))
    leaf = home.tree.root_node.descendant_for_byte_range(at, at + 1)
    func = (enclosing(leaf, FUNCTION_SCOPES) if leaf is not None else None) or home.tree.root_node
    out: list[Prediction] = []
    for name in sorted(set(lost) & edited_names - bound - renamed):
        sites = []
        shadowed = rebinding_spans(func, name, home.b, at)  # a closure's or a pattern's own binding
        for n in caps["reference"]:
            s = home.b.char(n.start_byte)
            if home.b.node_text(n) != name or p <= s < ea or (scope is not None and not scope[0] <= s < scope[1]):
                continue
            if any(lo <= n.start_byte < hi for lo, hi in shadowed):
                continue
            span = _argument_span(home, n)
            if span is not None:
                sites.append(span)
        if len(sites) > MAX_SITES:
            continue
        out += [Prediction(home.doc.uri, s, e, "", DROPPED_ARGUMENT.value, f"'{name}' is gone: the argument goes",
                           RULE.kind, "syntax", text[s:e]) for s, e in sites]
    return out


RULE = Rule("NE103", "dropped-argument", "signature", DROPPED_ARGUMENT.value, run, __doc__)
