"""NE204 repeated-pattern: the user's change repeated at every other place whose tokens read the
same — the anchor before it, the tokens it replaced, the anchor after it.

**What.** Any token rule that is no rename the family's rename rules take (``search``): every
other place in the open documents of the language whose tokens read ``anchor-before + deleted
+ anchor-after`` gets the deleted run replaced by the inserted text (re-indented for multi-line
text). The anchors are backed off from the longest (``patterns.backed_off``) until a variant
matches at most ``nextEdit.repeatMaxSites`` places; when the last two edits are the same change
at different anchors, the anchors are intersected, identifiers they disagree on becoming
wildcards (the generalisation step, ``tokens.generalise``). A replacement in a statement a
keyword opens is also matched with its anchor's identifiers abstracted (``except BadSignature,
e:`` -> every ``except X, e:``); a long deleted run is also matched without anchors. Sites found
only in other documents do not end the search: broader anchors may still find the example's
siblings in its own.

A pattern must be specific: at least ``MIN_PATTERN_CHARS`` characters; a *generic* one (only
keywords, punctuation, built-in types and names the document uses everywhere: a condition's
shape, ``if err:``) that matches ``MANY_SITES`` places or more is capped by likeness to the
example, not only by count — a place whose changed line reads unlike the example's line
(``likeness``) is left out; an insertion in code
must be anchored on a name of the user's code, not on punctuation, keywords and built-in types
alone (``?: string`` + `` | URL`` stands at every field of that type); an item added to one
function's argument list repeats in that function's lists only; a change of one of two
identical lines repeats at the same one of each such pair (``_twin_side``); a replacement by a name is never made in the assignment that defines that name
(``_defines_inserted``: ``x = x``); an insertion is never repeated where its text already stands beside
the place (``_already_there``: the place was changed already, or the example's own place); text naming a local
of the example's function is not repeated where that name is unknown (another document,
another function). Text inserted right after a string literal closes is code, not the string's
prose (``runpytest('-v')`` + ``, '-p', 'no:asyncio'``), and an anchor shorter than
``MIN_PATTERN_CHARS`` reaches back on its line to the nearest name (``tokens``). Inserted text
that spans lines repeats only as code continued on lines of its own at its line's indentation
(``n.lineno)`` -> ``n.lineno,`` / ``n.filename)``: ``tokens.aligned``), re-indented to the site's.
A module switched inside a ``::`` path (``::std::iter::repeat`` -> ``::core::iter::repeat``) binds
nothing the rename rules follow: it repeats here, under its whole anchor.

**Why.** A commit repeats one change at many places (a call wrapped, an argument added, an
``except`` modernised); the anchors say where it applies.

**Example.** ``return err`` -> ``return wrap(err, ctx)`` in one function: the other ``return
err`` lines of the file get the same change.
"""

from __future__ import annotations

import difflib
import re

from mercury_lsp.next_edit.examples import Example
from mercury_lsp.next_edit.query import DocState
from mercury_lsp.next_edit.rules.base import Rule, RuleContext, family_member
from mercury_lsp.next_edit.rules.confidence import PATTERN
from mercury_lsp.next_edit.rules.repeat import next_pattern_site
from mercury_lsp.next_edit.rules.repeat.patterns import Site, backed_off, match_sites
from mercury_lsp.next_edit.rules.repeat.tokens import (
    BOL,
    EOL,
    FAMILY,
    MIN_PATTERN_CHARS,
    WILD,
    TokenRule,
    keyword_shape,
)
from mercury_lsp.next_edit.scopes import binding_kind, binds, scope_of, word_in
from mercury_lsp.next_edit.text import (
    IDENT,
    IMPORT_LINE,
    KEYWORDS,
    TOKEN,
    diff_region,
    is_identifier,
    line_bounds,
)
from mercury_lsp.next_edit.tree import ParsedDoc

# Built-in type names (any of the project's languages): no name of the user's code.
BUILTIN_TYPES = frozenset("""string number boolean bigint any unknown never void object symbol int float
bool str bytes dict list tuple set int8 int16 int32 int64 uint uint8 uint16 uint32 uint64 float32 float64
byte rune error usize isize u8 u16 u32 u64 i8 i16 i32 i64 f32 f64 char String Vec Option Result""".split())
CALLEE = re.compile(r"([\w$]+)\s*$")  # the name just before an opening parenthesis
COMMON_NAME_USES = 8  # a name used this often in the document is no distinctive anchor ('err', 'self')
# A generic pattern (``generic``) matching this many places or more keeps only the places whose
# changed line reads like the example's (``likeness`` at least MIN_GENERIC_LIKENESS): on the dev and
# tuning sets (dev, heldout..heldout4) this dropped 2 sites, both false positives (an ``except X,
# e:`` one-liner, a Go condition ``name != "" &&`` put before an unlike ``if``), and no hit; the
# nearest hits of generic patterns read 0.80 like their example. Fewer places, or a pattern
# naming a distinctive thing, are the count's to cap (``nextEdit.repeatMaxSites``).
MANY_SITES = 3
MIN_GENERIC_LIKENESS = 0.75


def sites(ctx: RuleContext, ex: Example, rule: TokenRule, docs: list[tuple[DocState, ParsedDoc | None]],
          home_parsed: ParsedDoc | None, in_code: bool) -> list[Site]:
    """The sites of ``rule`` (an example's token rule, no rename) in ``docs`` (module docstring);
    the next site below the cursor alone (NE205) when every variant matched too many places."""
    opts, query, home = ctx.options, ctx.query, ex.doc
    lo, hi = rule.edit_span
    sites: list[Site] = []
    callee = _callee(home.text, lo) if not rule.deleted and rule.inserted.lstrip().startswith(",") else None
    # a local of the example's document in the inserted text ('originalSignal.reason') means
    # nothing in another file, or another function, that does not know the name: left out
    local_names = _locals_used(rule, home_parsed)
    twin = _twin_side(ex)
    shaped = keyword_shape(rule) if rule.lead and rule.trail else None
    variants = list(backed_off(rule))
    next_one: Site | None = None  # of the most specific pattern that matched too many places
    for variant in (*variants, *([shaped] if shaped is not None else [])):
        if variant is not shaped and variants is None or variant.pattern_chars < MIN_PATTERN_CHARS:
            continue
        if in_code and not variant.deleted and not _names_a_thing(variant):
            continue  # an insertion anchored on punctuation and type words ('?: string' + ' | URL')
        found = [s for d, p in docs for s in match_sites(variant, d, p, in_code)]
        if callee is not None:  # an item added to one function's list: that function's lists only
            found = [s for s in found if _callee(s.doc.text, s.start) == callee]
        found = [s for s in found if not (s.doc is home and (s.start < hi and lo < s.end or s.start == s.end and lo <= s.start <= hi))
                 and not (not variant.deleted and _already_there(s))
                 and (s.doc is home or all(word_in(n, s.doc.text) for n in local_names))
                 and (twin is None or _has_twin(s.doc.text, s.start, twin))
                 and not _defines_inserted(s, rule)]
        if len(found) > opts.repeat_max_sites:
            if next_one is None and variant is not shaped:
                next_one = next_pattern_site.pick(found, query, ex.age)
            variants = None  # broader literal anchors match more; the keyword-shaped one is tried
            continue
        kept = found
        if len(found) >= MANY_SITES and generic(variant, home):  # capped by likeness, not only by count
            kept = [s for s in found if likeness(rule, home, s) >= MIN_GENERIC_LIKENESS]
        for s in kept:
            s.age, s.code = ex.age, RULE.code
        sites.extend(kept)
        # sites only in other documents: broader anchors may still find the example's siblings
        if any(s.doc is home for s in found) and not opts.repeat_all_sites:
            variants = None
    if not sites and next_one is not None:
        sites.append(next_one)
    if in_code and local_names:  # ... nor in another function of its own document
        sites = [s for s in sites if s.doc is not home
                 or all(word_in(n, _function_text(s, home_parsed)) for n in local_names)]
    return sites


def likeness(rule: TokenRule, home: DocState, site: Site) -> float:
    """How much the site's line, changed, reads like the example's line (the share of their tokens
    in common, in order: ``difflib``'s ratio over ``text.TOKEN``)."""
    lo, hi = line_bounds(home.text, *rule.edit_span)
    a, b = line_bounds(site.doc.text, site.start, site.end)
    changed = site.doc.text[a:site.start] + site.new_text + site.doc.text[site.end:b]
    return difflib.SequenceMatcher(None, TOKEN.findall(home.text[lo:hi]), TOKEN.findall(changed),
                                   autojunk=False).ratio()


def generic(variant: TokenRule, home: DocState) -> bool:
    """The variant's anchors name nothing distinctive — only keywords, built-in types, punctuation
    and names the example's document uses at ``COMMON_NAME_USES`` places or more (``err``,
    ``self``, ``options``), no number — and what it replaces names nothing but keywords (a
    replaced name or type, ``(tuple, list)``, is what makes a pattern specific)."""
    def word(t: str) -> bool:
        return t not in (WILD, EOL, BOL) and (t[0].isalnum() or t[0] in "_$")

    if any(word(t) and t not in KEYWORDS for t in variant.deleted):
        return False
    for t in variant.lead + variant.trail:
        if not word(t) or t in KEYWORDS or t in BUILTIN_TYPES:
            continue
        if t[0].isdigit() or len(re.findall(rf"(?<![\w$]){re.escape(t)}(?![\w$])", home.text)) < COMMON_NAME_USES:
            return False
    return True


def _already_there(site: Site) -> bool:
    """The site's inserted text already stands right beside it on its line, token for token (the
    place is one the user already changed, or never needed it): ``*args: t.Any`` inserted again
    before ``*args: t.Any``, ``"methodkey",`` after ``"methodkey",``, ``.as_dyn_error()`` before
    ``.as_dyn_error()``. Repeating it would write the text twice. Punctuation alone doubles
    rightly (a ``)`` closing a call the other change opened)."""
    new = TOKEN.findall(site.new_text)
    if not any(t[0].isalnum() or t[0] in "_$\"'`" for t in new):
        return False
    text = site.doc.text
    lo, hi = line_bounds(text, site.start, site.end)
    before, after = TOKEN.findall(text[lo:site.start]), TOKEN.findall(text[site.end:hi])
    return after[:len(new)] == new or before[len(before) - len(new):] == new


def _defines_inserted(site: Site, rule: TokenRule) -> bool:
    """The site is the value of the very assignment that defines the name the rule inserts
    (``config_roots = config.getini("roots")`` just written, the rule ``config.getini("roots")``
    -> ``config_roots``): replacing it would assign the name to itself."""
    name = rule.inserted.strip()
    if not is_identifier(name):
        return False
    text = site.doc.text
    head = text[text.rfind("\n", 0, site.start) + 1:site.start]
    return re.fullmatch(rf"[ \t]*(?:(?:let|const|var)\s+(?:mut\s+)?)?{re.escape(name)}\s*(?::[^=]*)?:?=\s*", head) is not None


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


def _names_a_thing(rule: TokenRule) -> bool:
    """The rule's anchor holds a name of the user's code: an identifier that is no keyword and no
    built-in type (``string``, ``int``, ...). An insertion anchored on punctuation and type words
    alone stands at every field of that type."""
    return any(IDENT.match(t) and t not in KEYWORDS and t not in BUILTIN_TYPES for t in rule.lead + rule.trail)


def _function_text(site: Site, parsed: ParsedDoc | None) -> str:
    """The text of the function around ``site`` (none at the top level)."""
    scope = scope_of(parsed, site.start)
    return site.doc.text[scope[0]:scope[1]] if scope is not None else ""


def _locals_used(rule: TokenRule, parsed: ParsedDoc | None) -> set[str]:
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


RULE = Rule("NE204", "repeated-pattern", "repeat", PATTERN.value, family_member(FAMILY, "NE204"),
            __doc__)
