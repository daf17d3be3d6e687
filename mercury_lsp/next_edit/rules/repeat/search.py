"""The repeat family's search (``rules.repeat``): every token rule of the newest edits sent to
the family's rules in turn, their sites ranked together and taken once per place.

Each token rule (``tokens.rules_from_edit``; the newest generalised by the one before it) goes
to at most one of the rename paths — ``repeated-rename`` with ``affix-rename`` for a rename in
code (the newest edit only: older renames are the rename search's, NE101), ``prose-word-rename``
for a word of prose — else to ``repeated-pattern`` (and ``next-pattern-site`` when its pattern
matches too many places). Multi-line inserted text is rarely repeated verbatim (a re-spacing of
tokens is); re-wrapped prose is not repeated at all, nor prose rewritten with more than
``MAX_PROSE_WORDS`` words. A rule of the family that is disabled
(``nextEdit.disabledRules``) leaves its places to the others before the ranking. When the
scope-aware rename search found the rename (NE101), the family's renames are left to it. Whether an
example is code or prose is read where its change stands: a deleted comment is prose though the
place it leaves is code, and text inserted right after a string closes is code. A module of an
import's path renamed (``use crate::progress::{Bar}`` -> ``crate::state``) repeats at the other
import lines through it (NE204), never at code that spells the same word.
"""

from __future__ import annotations

import re
from dataclasses import replace

from mercury_lsp.next_edit.examples import Example, to_current
from mercury_lsp.next_edit.prose import inserts_into_prose, non_code
from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import RuleContext
from mercury_lsp.next_edit.rules.confidence import (
    NEXT_PATTERN_SITE,
    PATTERN,
    PATTERN_ANCHOR_BONUS,
    PATTERN_CAP,
    REPEAT_AGE_PENALTY,
    REPEAT_OTHER_DOCUMENT_PENALTY,
    REPEAT_RENAME,
)
from mercury_lsp.next_edit.rules.repeat import (
    affix_rename,
    copied_string,
    next_pattern_site,
    prose_word_rename,
    repeated_pattern,
    repeated_rename,
)
from mercury_lsp.next_edit.rules.repeat.patterns import Site
from mercury_lsp.next_edit.rules.repeat.tokens import TokenRule, aligned, generalise, rules_from_edit
from mercury_lsp.next_edit.scopes import distinctive
from mercury_lsp.next_edit.text import IMPORT_LINE, PATH_COMES, PATH_GOES_ON, diff_region, line_bounds

EXAMPLES = 3  # the newest edits (across documents, ``examples``) read as examples
RENAMED_BINDING = "NE101"  # the rename search whose renames the family's renames give way to
# Prose rewritten with more words than this (``the Router.`` -> ``the Route. Route middleware are
# executed after ...``) is that comment's own sentence, not a change to repeat in other comments:
# on the six real-history sets such repeats were 5 false positives, 1 later hunk and no hit. Text
# with code's punctuation in it (``: ' + enc`` appended to an error message's string) is code
# written into a string, and repeats (3 hits on heldout4).
MAX_PROSE_WORDS = 2

# ``::`` before a name and a path going on after it: a module inside a path (``_module_segment``).
MODULE_BEFORE = re.compile(r"::\s*\Z")
MODULE_AFTER = re.compile(r"\s*::\s*[\w{*]")
CODE_CHARACTERS = re.compile(r"[+=(){}\[\]<>\"`]")


def _rules(examples: list[Example]) -> list[tuple[Example, TokenRule]]:
    """Each example's rules, spans in its document's current text; the newest generalised by the
    one before it."""
    out = []
    for ex in examples:
        rules = rules_from_edit(ex.before, ex.after)
        if ex.age == 0 and len(examples) > 1:
            rules = generalise(rules, rules_from_edit(examples[1].before, examples[1].after),
                               repeated_pattern.MIN_PATTERN_CHARS)
        for r in rules:
            lo, hi = to_current(ex, r.edit_span[0]), to_current(ex, r.edit_span[1])
            if lo is not None and hi is not None:
                out.append((ex, replace(r, edit_span=(lo, hi))))
    return out


def _deletes_comment(rule: TokenRule, grammar: str | None) -> bool:
    """The rule deletes a comment from where it starts (a trailing ``  # type: ignore[call-arg]``):
    prose, though the place it leaves, read in the current text, is code."""
    d = rule.deleted
    return bool(d) and not rule.inserted.strip() and (
        d[0] == "#" and grammar == "python" or d[:2] in (("/", "/"), ("/", "*")))


def _path_segment(text: str, lo: int, hi: int) -> bool:
    """``text[lo:hi]`` is a segment of an import line's module path: a path goes on after it or
    comes to it (``progress`` of ``use crate::progress::{Bar}``, ``old`` of ``from pkg.old import
    x``), not a name the import brings."""
    start = line_bounds(text, lo, lo)[0]
    return (IMPORT_LINE.match(text, start) is not None
            and (PATH_GOES_ON.match(text, hi) is not None or PATH_COMES.search(text, start, lo) is not None))


def _module_segment(text: str, lo: int, hi: int) -> bool:
    """``text[lo:hi]`` is a module inside a path of code, a ``::`` before it and a path after it
    (``::std::iter::repeat`` -> ``::core::iter::repeat``): no binding the rename rules follow,
    but the same path elsewhere, under the whole anchor, is the same switch (strum)."""
    return MODULE_BEFORE.search(text, line_bounds(text, lo, lo)[0], lo) is not None \
        and MODULE_AFTER.match(text, hi) is not None


def _edited(ex: Example) -> tuple[int, int]:
    """The span of the example's edit in its document's current text (empty when rewritten since)."""
    p, _, ea = diff_region(ex.before, ex.after)
    lo, hi = to_current(ex, p), to_current(ex, ea)
    return (lo, hi) if lo is not None and hi is not None else (0, 0)


def family_edits(ctx: RuleContext) -> list[Prediction]:
    """The family's edits of this query, ranked, each naming the family rule that found it."""
    opts = ctx.options
    sites: list[Site] = []
    seen_rules = set()
    for ex, rule in _rules(ctx.examples[:EXAMPLES]):
        home = ex.doc
        key = (rule.lead, rule.deleted, rule.trail, rule.inserted)
        if key in seen_rules or not rule.deleted and not rule.inserted.strip():
            continue
        seen_rules.add(key)
        docs = [(d, ctx.by_uri.get(d.uri)) for d in ctx.same_language(home)]
        home_parsed = ctx.by_uri.get(home.uri)
        lo, hi = rule.edit_span
        at = lo + len(rule.inserted) - len(rule.inserted.lstrip())
        in_code = not (non_code(home_parsed, at) if rule.deleted and not rule.quote_flip or not rule.lead
                       else inserts_into_prose(home_parsed, lo)) and not _deletes_comment(rule, home.grammar)
        if "\n" in rule.inserted.strip("\n") and not rule.layout and (
                rule.deleted or not in_code or not aligned(rule.inserted, rule.indent)):
            continue  # multi-line text is rarely repeated verbatim (a re-spacing of tokens is, and an
            # argument added on a line of its own, aligned: ``n.lineno,`` / ``n.filename)``)
        if rule.layout and not in_code:
            continue  # prose re-wrapped: each paragraph breaks its own lines
        if not in_code and not ex.age and ctx.enabled(copied_string.RULE.code) \
                and ctx.shared(copied_string.copies) is not None:
            continue  # a string rewritten that has copies: those are its sites (NE210), not other strings
        if not in_code and len(rule.inserted.split()) > MAX_PROSE_WORDS and not CODE_CHARACTERS.search(rule.inserted):
            continue  # a sentence rewritten is its comment's own
        if rule.is_rename and in_code and _path_segment(home.text, lo, hi):
            # a module of an import's path renamed (``use crate::progress::{...}`` -> ``crate::state``):
            # the other imports through it follow, and nothing else (a field may share its name)
            sites.extend(s for s in repeated_pattern.sites(ctx, ex, rule, docs, home_parsed, in_code)
                         if IMPORT_LINE.match(s.doc.text, line_bounds(s.doc.text, s.start, s.start)[0]))
            continue
        if rule.is_rename:
            word_of_prose = not in_code and not distinctive(rule.deleted[0])
            if word_of_prose:
                sites.extend(prose_word_rename.sites(rule, home, home_parsed, (lo, hi)))
            if not in_code and not ex.age:
                sites.extend(prose_word_rename.doc_subject(rule, home, (lo, hi)))
            if ex.age:
                continue  # an older example's renames in code are the rename search's (whole history)
            binding = repeated_rename.renames_binding(rule, home, home_parsed)
            if in_code and not binding and not _module_segment(home.text, lo, hi):
                continue
            if word_of_prose and not (rule.lead and rule.trail):
                continue  # a word of prose changed: repeated under its whole anchor only (below)
            if not word_of_prose and binding:
                found = repeated_rename.sites(rule, home, docs, _edited(ex)) + affix_rename.sites(rule, home, home_parsed)
                found = [s for s in found if not (s.doc is home and s.start < hi and lo < s.end)]
                if len(found) <= opts.repeat_max_sites and not opts.repeat_all_sites:
                    sites.extend(found)
                continue
        sites.extend(repeated_pattern.sites(ctx, ex, rule, docs, home_parsed, in_code))
    out = _rank([s for s in sites if ctx.enabled(s.code)], ctx)
    if ctx.enabled(RENAMED_BINDING) and any(c.kind == "rename" for c in ctx.candidates):
        out = [p for p in out if p.kind != "rename"]  # the scope-aware rename search found the sites
    return out


def _rank(sites: list[Site], ctx: RuleContext) -> list[Prediction]:
    query = ctx.query
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
        if s.rename:
            conf = REPEAT_RENAME.value
        else:
            conf = min(PATTERN_CAP.value, PATTERN.value + PATTERN_ANCHOR_BONUS.value * s.anchor)
        if s.code == next_pattern_site.RULE.code:
            conf = NEXT_PATTERN_SITE.value
        conf -= REPEAT_AGE_PENALTY.value * s.age
        where = ""
        if s.doc.uri != query.cursor_uri:
            conf -= REPEAT_OTHER_DOCUMENT_PENALTY.value
            where = " (another document)"
        what = (f"'{old}' was renamed to '{s.new_text}'" if s.rename
                else "the same change as the last edit")
        out.append(Prediction(s.doc.uri, s.start, s.end, s.new_text, round(max(conf, 0.0), 6),
                              f"repeated edit: {what}{where}", "rename" if s.rename else "repeat",
                              "syntax", old, rule=s.code))
        if len(out) >= ctx.options.repeat_max_results:
            break
    return out
