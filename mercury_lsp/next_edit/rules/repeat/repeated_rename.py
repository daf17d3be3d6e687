"""NE201 repeated-rename: an identifier the newest edit renamed in code is renamed at its other
occurrences in the edited binding's scope.

**What.** One identifier replaced by another, giving a name a *new* name (``fresh_name``; the
old one gone from the edited line, not both still declared): every remaining occurrence of the
old identifier (as a whole token, outside comments and strings) in the edited binding's scope —
the enclosing function when the old name still occurs there (a local: its function only), else
the whole document, not where a function binds the same name itself — and, ranked below, in the
other open documents of the same language; a member renamed at its uses
(``chi.WithBaseContext``) is renamed where another open document declares it; a struct
literal's field key (``Report{title: title}``, ``R { title: title }``) or a keyword argument's
name is a field, never the variable; a rename at a use whose new name is a parameter or local of
its function (``def loads(s)`` written, then ``payload`` -> ``s`` in its body) is that local's. The newest edit
only (older renames are the rename search's, NE101); more sites than ``nextEdit.repeatMaxSites``
(with ``affix-rename``'s): none is offered.

**Why.** The token view finds renames the tree-sitter rename search (NE101) cannot tie: a name
in a grammar it reads generically, a member renamed at one use, a name without its binding in
view.

**Example.** ``opts.verbose`` -> ``opts.quiet`` at one use of a struct field: the other
``.verbose`` accesses, and the field's declaration in the open file that declares it.
"""

from __future__ import annotations

import re

from mercury_lsp.next_edit.members import defines_method
from mercury_lsp.next_edit.prose import non_code
from mercury_lsp.next_edit.query import DocState
from mercury_lsp.next_edit.rules.base import Rule, family_member
from mercury_lsp.next_edit.rules.confidence import REPEAT_RENAME
from mercury_lsp.next_edit.rules.repeat.patterns import Site
from mercury_lsp.next_edit.rules.repeat.tokens import FAMILY, TokenRule
from mercury_lsp.next_edit.scopes import (
    OTHER_NAMESPACES,
    binding_kind,
    both_imported,
    declared_elsewhere,
    declares_local,
    declaring_scopes,
    distinctive,
    fresh_name,
    inside,
    names_field,
    scope_of,
    word_in,
)
from mercury_lsp.next_edit.text import IMPORT_LINE, declares, line_bounds
from mercury_lsp.next_edit.tree import ParsedDoc


def renames_binding(rule: TokenRule, home: DocState, parsed: ParsedDoc | None) -> bool:
    """A rename gives a name a *new* name (``fresh_name``), and the old one is gone from the
    edited line."""
    old, new = rule.deleted[0], rule.inserted.strip()
    if old == "_" or not fresh_name(new, home, scope_of(parsed, rule.edit_span[0])) or both_imported(home, old, new):
        return False
    lo, hi = line_bounds(home.text, *rule.edit_span)
    at = rule.edit_span[0] + len(rule.inserted) - len(rule.inserted.lstrip())
    if parsed is not None and declared_elsewhere(parsed, old, at) and declared_elsewhere(parsed, new, at):
        return False  # both still declared: the user switched to a variable they declared
    if parsed is not None and home.text[:at].rstrip().endswith(".") and defines_method([parsed], home.grammar, old):
        return False  # one use switched while the old method stands: a new method to come
    return not word_in(old, home.text[lo:hi]) and not IMPORT_LINE.match(home.text, lo)


def _declared_local(parsed: ParsedDoc | None, name: str, at: int, edited: tuple[int, int]) -> bool:
    """The example's edit (``edited``, in the current text) also wrote ``name`` as a parameter or a
    keyword-declared local of the function around ``at``: the rename is that local's (``def
    loads(s)`` with ``payload`` -> ``s`` in its body). A parameter the edit did not write does not
    count (``s`` -> ``sep`` beside an old parameter ``sep`` repeats at a sibling's same lines)."""
    scope = scope_of(parsed, at)
    if parsed is None or scope is None:
        return False
    lo, hi = max(scope[0], edited[0]), min(scope[1], edited[1])
    word = re.compile(rf"(?<![\w$.]){re.escape(name)}(?![\w$])")
    return any(binding_kind(parsed, parsed.doc.text, m.start()) == "local"
               for m in word.finditer(parsed.doc.text, lo, max(lo, hi)) if m.start() != at)


def sites(rule: TokenRule, home: DocState, docs: list[tuple[DocState, ParsedDoc | None]],
          edited: tuple[int, int]) -> list[Site]:
    """The other occurrences of the renamed name in its binding's scope (module docstring);
    ``edited``: the span of the example's whole edit in the current text."""
    old, new = rule.deleted[0], rule.inserted.strip()
    home_parsed = next(p for d, p in docs if d is home)
    at = rule.edit_span[0] + (len(rule.inserted) - len(rule.inserted.lstrip()))
    binding = binding_kind(home_parsed, home.text, at)
    # a definition belongs to the function around it (a test's own ``enum Error``), if any
    scope = scope_of(home_parsed, at, outside_its_name=binding == "definition")
    if binding == "use" and (declares_local(home.text, at, at + len(new)) or _declared_local(home_parsed, new, at, edited)):
        binding = "local"  # ``for _, v := range``, or the new name is its function's parameter or declared local
    member = home.text[:at].rstrip().endswith(".")  # an attribute follows attributes only
    before = r"(?<![\w$])" if binding == "definition" else r"(?<=\.)\s*" if member else r"(?<![\w$.])"
    word = re.compile(before + rf"{re.escape(old)}(?![\w$])")
    anywhere = distinctive(old)  # such a name in a comment or string refers to the identifier
    # a member renamed at its uses (``chi.WithBaseContext``): where another document declares it,
    # its declaration and every use there
    bare = re.compile(rf"(?<![\w$]){re.escape(old)}(?![\w$])")
    occurrences = [(doc, [(m.end() - len(old), m.end())
                          for m in (bare if member and doc is not home and declares(old, doc.text) else word).finditer(doc.text)
                          if (anywhere or not non_code(parsed, m.start())) and not inside(parsed, m.start(), OTHER_NAMESPACES)
                          and (member or not names_field(parsed, m.start()))
                          and not (binding == "definition" and IMPORT_LINE.match(doc.text, line_bounds(doc.text, m.start(), m.start())[0]))])
                   for doc, parsed in docs]
    if scope is not None:
        home_occ = next(occ for doc, occ in occurrences if doc is home)
        local = [t for t in home_occ if scope[0] <= t[0] < scope[1]]
        if local or binding == "local":  # a local binding: its function only
            return [Site(home, s, e, new, 0, True, code=RULE.code) for s, e in local]
    # a name of the document (or a definition's): not where a function binds the same name itself
    bound = {doc.uri: declaring_scopes(parsed, old, assignments=False) for doc, parsed in docs}
    return [Site(doc, s, e, new, 0, True, code=RULE.code) for doc, occ in occurrences for s, e in occ
            if not any(lo <= s < hi for lo, hi in bound[doc.uri])]


RULE = Rule("NE201", "repeated-rename", "rename", REPEAT_RENAME.value, family_member(FAMILY, "NE201"),
            __doc__)
