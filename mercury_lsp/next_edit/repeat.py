"""Repeated-edit synthesis: generalise the user's last edit(s) and offer it at matching sites.

After the after-the-fact style of IntelliCode's repeated edits (Miltner et al., OOPSLA 2019):
the newest ``EXAMPLES`` edits of all the open documents (``examples``: a change repeated in a
commit is often not the very last edit) are read as token-level changes — each a run of deleted
tokens replaced by a run of inserted ones, with up to ``CONTEXT_TOKENS`` unchanged tokens of the
same line on each side as its anchor (``rules``). A *rule* is one such change. Tokens are words
(identifiers, numbers) and single punctuation characters, so a rule does not depend on spacing.

* **rename rule** (the newest edit only; older renames are the rename search's) — one identifier
  replaced by another: every remaining occurrence of the old identifier (as a whole token,
  outside comments and strings) in the edited binding's scope — the enclosing function when the
  old name still occurs there, else the whole document — and, as a separate lower-ranked group,
  in the other open documents of the same language; a member renamed at its uses
  (``chi.WithBaseContext``) is renamed where another open document declares it, and a name renamed
  by an affix dropped or added (``getOutOrStdout`` -> ``OutOrStdout``) renames its siblings under
  the same whole anchor; a word renamed inside a docstring or comment (``data`` -> ``iterables``,
  a name the code uses) is renamed in the rest of that string or comment run;
* **pattern rule** — anything else: every other place in the open documents whose tokens read
  ``anchor-before + deleted + anchor-after`` gets the deleted run replaced by the inserted text
  (re-indented for multi-line text). When the last two edits are the same change at different
  anchors, the anchors are intersected, identifiers they disagree on becoming wildcards: the
  generalisation step. A replacement in a statement a keyword opens is also matched with its
  anchor's identifiers abstracted (``except BadSignature, e:`` -> every ``except X, e:``). A long
  deleted run is also matched without anchors. Sites found only in other documents do not end
  the search: broader anchors may still find the example's siblings in its own.

A rule must be specific: its pattern has at least ``MIN_PATTERN_CHARS`` non-blank characters,
and a rule matching more than ``nextEdit.repeatMaxSites`` places is dropped as too generic (the
broader anchors are tried too with ``repeatAllSites``: every similar site; renames are then left
to the scope-aware rename search). An insertion in code must be anchored on a name of the user's
code, not on punctuation, keywords and built-in types alone (``?: string`` + `` | URL`` stands at
every field of that type); a change of one of two identical lines repeats at the same one of each
such pair (``_twin_side``); text naming a local of the example's function is not repeated where
that name is unknown (another document, another function). Sites are ranked by the age of their example, the length of
the anchor they matched (structural similarity), the cursor's document first, then by distance
to the cursor. The syntax guard (``pipeline._keep_parsing``) runs on them like on every other
edit.
"""

from __future__ import annotations

import re
from dataclasses import replace

from mercury_lsp.next_edit.examples import Example, recent_edits, to_current
from mercury_lsp.next_edit.patterns import Site, backed_off, match_sites, pattern_regex
from mercury_lsp.next_edit.prose import non_code, prose_span
from mercury_lsp.next_edit.query import DocState, NextEditQuery, Prediction
from mercury_lsp.next_edit.rules import (
    IDENT,
    KEYWORDS,
    WILD,
    Rule,
    affix_change,
    generalise,
    keyword_shape,
    line_bounds,
    rules_from_edit,
)
from mercury_lsp.next_edit.scopes import (
    OTHER_NAMESPACES,
    binding_kind,
    binds,
    declared_elsewhere,
    declaring_scopes,
    distinctive,
    fresh_name,
    inside,
    scope_of,
    word_in,
)
from mercury_lsp.next_edit.text import IMPORT_LINE, declares, diff_region
from mercury_lsp.next_edit.tree import ParsedDoc

# Built-in type names (any of the project's languages): no name of the user's code.
BUILTIN_TYPES = frozenset("""string number boolean bigint any unknown never void object symbol int float
bool str bytes dict list tuple set int8 int16 int32 int64 uint uint8 uint16 uint32 uint64 float32 float64
byte rune error usize isize u8 u16 u32 u64 i8 i16 i32 i64 f32 f64 char String Vec Option Result""".split())
MIN_PATTERN_CHARS = 8  # shorter patterns ('(' -> '[') match too much to be a user's intent
EXAMPLES = 3  # the newest edits (across documents, ``examples``) read as examples
AGE_PENALTY = 0.1  # a site of an older example's rule ranks this much below the newest's
# A definition's keyword just before a name (``func (c *Command) name``, ``def name``).
DEFINED_HERE = re.compile(r"\b(?:func|def|fn|function|class|struct|type|interface|enum|trait)\s+(?:\([^)\n]*\)\s*)?\Z")
CALLEE = re.compile(r"([\w$]+)\s*$")  # the name just before an opening parenthesis
RENAME_CONFIDENCE = 0.8
PATTERN_CONFIDENCE = 0.5  # plus ANCHOR_BONUS per anchor token matched
ANCHOR_BONUS = 0.05
OTHER_DOCUMENT_PENALTY = 0.3  # a public rename across files ranks below in-file edits
NEXT_SITE_CONFIDENCE = 0.35  # the next of a change's too many places: a guess at where the user goes


def _renames_binding(rule: Rule, home: DocState, parsed: ParsedDoc | None) -> bool:
    """A rename gives a name a *new* name (``fresh_name``), and the old one is gone from the
    edited line."""
    old, new = rule.deleted[0], rule.inserted.strip()
    if old == "_" or not fresh_name(new, home, scope_of(parsed, rule.edit_span[0])):
        return False
    lo, hi = line_bounds(home.text, *rule.edit_span)
    at = rule.edit_span[0] + len(rule.inserted) - len(rule.inserted.lstrip())
    if parsed is not None and declared_elsewhere(parsed, old, at) and declared_elsewhere(parsed, new, at):
        return False  # both still declared: the user switched to a variable they declared
    return not word_in(old, home.text[lo:hi]) and not IMPORT_LINE.match(home.text, lo)


def _rename_sites(rule: Rule, home: DocState, docs: list[tuple[DocState, ParsedDoc | None]]) -> list[Site]:
    old, new = rule.deleted[0], rule.inserted.strip()
    home_parsed = next(p for d, p in docs if d is home)
    at = rule.edit_span[0] + (len(rule.inserted) - len(rule.inserted.lstrip()))
    binding = binding_kind(home_parsed, home.text, at)
    # a definition belongs to the function around it (a test's own ``enum Error``), if any
    scope = scope_of(home_parsed, at, outside_its_name=binding == "definition")
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
                          and not (binding == "definition" and IMPORT_LINE.match(doc.text, line_bounds(doc.text, m.start(), m.start())[0]))])
                   for doc, parsed in docs]
    if scope is not None:
        home_occ = next(occ for doc, occ in occurrences if doc is home)
        local = [t for t in home_occ if scope[0] <= t[0] < scope[1]]
        if local or binding == "local":  # a local binding: its function only
            return [Site(home, s, e, new, 0, True) for s, e in local]
    # a name of the document (or a definition's): not where a function binds the same name itself
    bound = {doc.uri: declaring_scopes(parsed, old, assignments=False) for doc, parsed in docs}
    return [Site(doc, s, e, new, 0, True) for doc, occ in occurrences for s, e in occ
            if not any(lo <= s < hi for lo, hi in bound[doc.uri])]


def _affix_sites(rule: Rule, home: DocState, parsed: ParsedDoc | None) -> list[Site]:
    """A function, method or type renamed at its definition by a prefix or suffix dropped
    (``getOutOrStdout`` -> ``OutOrStdout``): the names under the same whole anchor in the document
    (``func (c *Command) getOutOrStderr()``) get the same change. (Added affixes are left alone:
    ``new_`` added to one method is no convention for its siblings.)"""
    old, new = rule.deleted[0], rule.inserted.strip()
    change = affix_change(old, new) if len(new) < len(old) else None  # a convention dropped ('get')
    at = rule.edit_span[0] + len(rule.inserted) - len(rule.inserted.lstrip())
    if change is None or not (rule.lead and rule.trail) or not DEFINED_HERE.search(home.text, 0, at):
        return []  # only a definition's name: a parameter, local or attribute says nothing of its siblings
    out = []
    for m in pattern_regex(rule.lead, (WILD,), rule.trail, True).finditer(home.text):
        name = m.group(2).strip()
        new = change(name) if name != rule.inserted.strip() else None
        if new is not None and not non_code(parsed, m.start(2)):
            s = m.end(1) + len(m.group(2)) - len(m.group(2).lstrip())
            out.append(Site(home, s, s + len(name), new, len(rule.lead) + len(rule.trail), False))
    return out


def _prose_sites(rule: Rule, home: DocState, parsed: ParsedDoc | None, edit: tuple[int, int]) -> list[Site]:
    """A word of a docstring or comment changed to a name the code uses (``data`` -> ``iterables``
    in a docstring's examples): the same word in the rest of that string or comment run."""
    old, new = rule.deleted[0], rule.inserted.strip()
    span = prose_span(parsed, edit[0] + len(rule.inserted) - len(rule.inserted.lstrip()))
    if span is None or not any(not non_code(parsed, m.start())
                               for m in re.finditer(rf"(?<![\w$]){re.escape(new)}(?![\w$])", home.text)):
        return []
    word = re.compile(rf"(?<![\w$]){re.escape(old)}(?![\w$])")
    return [Site(home, m.start(), m.end(), new, 0, True) for m in word.finditer(home.text, *span)
            if not (m.start() < edit[1] and edit[0] < m.end())]


def _rules(examples: list[Example]) -> list[tuple[Example, Rule]]:
    """Each example's rules, spans in its document's current text; the newest generalised by the
    one before it."""
    out = []
    for ex in examples:
        rules = rules_from_edit(ex.before, ex.after)
        if ex.age == 0 and len(examples) > 1:
            rules = generalise(rules, rules_from_edit(examples[1].before, examples[1].after))
        for r in rules:
            lo, hi = to_current(ex, r.edit_span[0]), to_current(ex, r.edit_span[1])
            if lo is not None and hi is not None:
                out.append((ex, replace(r, edit_span=(lo, hi))))
    return out


def repeated_edits(query: NextEditQuery, parsed: list[ParsedDoc]) -> list[Prediction]:
    """Predictions from the user's last edit(s) generalised into rules (module docstring)."""
    opts = query.options
    by_uri = {p.doc.uri: p for p in parsed}
    sites: list[Site] = []
    seen_rules = set()
    for ex, rule in _rules(recent_edits(query, EXAMPLES)):
        home, grammar = ex.doc, ex.doc.grammar
        key = (rule.lead, rule.deleted, rule.trail, rule.inserted)
        if key in seen_rules or not rule.deleted and not rule.inserted.strip():
            continue
        seen_rules.add(key)
        docs = [(d, by_uri.get(d.uri)) for d in query.docs
                if d is home or (grammar is not None and d.grammar == grammar)]
        home_parsed = by_uri.get(home.uri)
        lo, hi = rule.edit_span
        at = lo + len(rule.inserted) - len(rule.inserted.lstrip())
        in_code = not non_code(home_parsed, at if rule.deleted or not rule.lead else max(lo - 1, 0))
        if "\n" in rule.inserted.strip("\n") and not rule.layout:
            continue  # multi-line text is rarely repeated verbatim (a re-spacing of tokens is)
        if rule.layout and not in_code:
            continue  # prose re-wrapped: each paragraph breaks its own lines
        if rule.is_rename and not in_code and not distinctive(rule.deleted[0]):
            sites.extend(_prose_sites(rule, home, home_parsed, (lo, hi)))
        if rule.is_rename and ex.age:
            continue  # an older example's renames in code are the rename search's (whole history)
        if rule.is_rename and in_code and not _renames_binding(rule, home, home_parsed):
            continue
        if rule.is_rename and not in_code and not distinctive(rule.deleted[0]) and not (rule.lead and rule.trail):
            continue  # a word of prose changed: repeated under its whole anchor only (below)
        if rule.is_rename and (in_code or distinctive(rule.deleted[0])) and _renames_binding(rule, home, home_parsed):
            found = _rename_sites(rule, home, docs) + _affix_sites(rule, home, home_parsed)
            found = [s for s in found if not (s.doc is home and s.start < hi and lo < s.end)]
            if len(found) <= opts.repeat_max_sites and not opts.repeat_all_sites:
                sites.extend(found)
            continue
        callee = _callee(home.text, lo) if not rule.deleted and rule.inserted.lstrip().startswith(",") else None
        # a local of the example's document in the inserted text ('originalSignal.reason') means
        # nothing in another file, or another function, that does not know the name: left out
        local_names = _locals_used(rule, home_parsed)
        twin = _twin_side(ex)
        shaped = keyword_shape(rule) if rule.lead and rule.trail else None
        variants = list(backed_off(rule))
        before = len(sites)
        next_site: Site | None = None  # of the most specific pattern that matched too many places
        for variant in (*variants, *([shaped] if shaped is not None else [])):
            if variant is not shaped and variants is None or variant.pattern_chars < MIN_PATTERN_CHARS:
                continue
            if in_code and not variant.deleted and not _names_a_thing(variant):
                continue  # an insertion anchored on punctuation and type words ('?: string' + ' | URL')
            found = [s for d, p in docs for s in match_sites(variant, d, p, in_code)]
            if callee is not None:  # an item added to one function's list: that function's lists only
                found = [s for s in found if _callee(s.doc.text, s.start) == callee]
            found = [s for s in found if not (s.doc is home and s.start < hi and lo < s.end)
                     and (s.doc is home or all(word_in(n, s.doc.text) for n in local_names))
                     and (twin is None or _has_twin(s.doc.text, s.start, twin))]
            if len(found) > opts.repeat_max_sites:
                if next_site is None and variant is not shaped:
                    next_site = _next_in_document(found, query, ex.age)
                variants = None  # broader literal anchors match more; the keyword-shaped one is tried
                continue
            for s in found:
                s.age = ex.age
            sites.extend(found)
            # sites only in other documents: broader anchors may still find the example's siblings
            if any(s.doc is home for s in found) and not opts.repeat_all_sites:
                variants = None
        if len(sites) == before and next_site is not None:
            sites.append(next_site)
        if in_code and local_names:  # ... nor in another function of its own document
            sites[before:] = [s for s in sites[before:] if s.doc is not home
                              or all(word_in(n, _function_text(s, home_parsed)) for n in local_names)]
    return _rank(sites, query)


def _twin_side(ex: Example) -> int | None:
    """-1 (+1) when the example changed one line of two identical lines standing together, the
    lower (upper) one: ``w[0]`` -> ``w[1]`` in the second of two ``assertIs(w[0]...)`` lines
    repeats at the second of each such pair only. None otherwise."""
    p, eb, _ = diff_region(ex.before, ex.after)
    lo, hi = line_bounds(ex.before, p, eb)
    if "\n" in ex.before[lo:hi]:
        return None
    for side in (-1, 1):
        if _neighbour(ex.before, lo, hi, side) == ex.before[lo:hi].strip():
            return side
    return None


def _has_twin(text: str, offset: int, side: int) -> bool:
    lo, hi = line_bounds(text, offset, offset)
    return _neighbour(text, lo, hi, side) == text[lo:hi].strip()


def _neighbour(text: str, lo: int, hi: int, side: int) -> str | None:
    """The stripped line above (``side`` -1) or below (+1) the line ``[lo, hi)``."""
    if side < 0:
        return None if lo == 0 else text[line_bounds(text, lo - 1, lo - 1)[0]:lo - 1].strip()
    return None if hi >= len(text) else text[hi + 1:line_bounds(text, hi + 1, hi + 1)[1]].strip()


def _names_a_thing(rule: Rule) -> bool:
    """The rule's anchor holds a name of the user's code: an identifier that is no keyword and no
    built-in type (``string``, ``int``, ...). An insertion anchored on punctuation and type words
    alone stands at every field of that type."""
    return any(IDENT.match(t) and t not in KEYWORDS and t not in BUILTIN_TYPES for t in rule.lead + rule.trail)


def _next_in_document(found: list[Site], query: NextEditQuery, age: int) -> Site | None:
    """Of a rule's too many sites, the first below the cursor in its document: a change the user
    makes at many places is made top to bottom, so its next place is the likeliest next edit
    (offered alone, ranked low: ``NEXT_SITE_CONFIDENCE``)."""
    below = [s for s in found if s.doc.uri == query.cursor_uri and s.start >= query.cursor]
    if not below:
        return None
    site = min(below, key=lambda s: s.start)
    site.age, site.next_only = age, True
    return site


def _function_text(site: Site, parsed: ParsedDoc | None) -> str:
    """The text of the function around ``site`` (none at the top level)."""
    scope = scope_of(parsed, site.start)
    return site.doc.text[scope[0]:scope[1]] if scope is not None else ""


def _locals_used(rule: Rule, parsed: ParsedDoc | None) -> set[str]:
    """Names of the rule's inserted text that the example's document declares as locals only
    (inside functions: ``const originalSignal = ...``; not also at the top level or imported, as
    ``t`` of ``import typing as t``)."""
    if parsed is None:
        return set()
    text = parsed.doc.text
    names = set(re.findall(r"(?<![\w$.])[A-Za-z_$][\w$]*", rule.inserted)) - KEYWORDS
    out = set()
    for n in names:
        at = [m.start() for m in re.finditer(rf"(?<![\w$.]){re.escape(n)}(?![\w$])", text)]
        local = [a for a in at if binding_kind(parsed, text, a) == "local"]
        if not local:
            continue
        if all(scope_of(parsed, a) is not None for a in local) and not any(
                scope_of(parsed, a) is None and binds(parsed, a, n) or IMPORT_LINE.match(text, line_bounds(text, a, a)[0])
                for a in at):
            out.add(n)
    return out


def _callee(text: str, offset: int) -> str | None:
    """The name before the innermost '(' still open at ``offset`` on its line (a call's or a
    definition's), None when there is none."""
    depth = 0
    for i in range(offset - 1, max(-1, text.rfind("\n", 0, offset) - 1), -1):
        if text[i] == ")":
            depth += 1
        elif text[i] == "(":
            if depth == 0:
                m = CALLEE.search(text, 0, i)
                return m.group(1) if m is not None else None
            depth -= 1
    return None


def _rank(sites: list[Site], query: NextEditQuery) -> list[Prediction]:
    out: list[Prediction] = []
    taken: dict[str, list[tuple[int, int]]] = {}
    for s in sorted(sites, key=lambda s: (s.age, s.doc.uri != query.cursor_uri, -s.anchor,
                                          abs(s.start - query.cursor))):
        spans = taken.setdefault(s.doc.uri, [])
        if any(s.start < e and b < s.end or (s.start == s.end == b) for b, e in spans):
            continue
        old = s.doc.text[s.start:s.end]
        if old == s.new_text:
            continue
        spans.append((s.start, s.end))
        conf = RENAME_CONFIDENCE if s.rename else min(0.95, PATTERN_CONFIDENCE + ANCHOR_BONUS * s.anchor)
        if s.next_only:
            conf = NEXT_SITE_CONFIDENCE
        conf -= AGE_PENALTY * s.age
        where = ""
        if s.doc.uri != query.cursor_uri:
            conf -= OTHER_DOCUMENT_PENALTY
            where = " (another document)"
        what = (f"'{old}' was renamed to '{s.new_text}'" if s.rename
                else "the same change as the last edit")
        out.append(Prediction(s.doc.uri, s.start, s.end, s.new_text, round(max(conf, 0.0), 6),
                              f"repeated edit: {what}{where}", "rename" if s.rename else "repeat",
                              "syntax", old))
        if len(out) >= query.options.repeat_max_results:
            break
    return out
