"""NE209 extended-list: names the user added to one definition's list of names (a Rust
``#[derive(...)]``, a Python class's bases, a TypeScript ``implements`` list) join the sibling
lists that lack them.

**What.** The newest edit rewrote one line holding such a list, and the list's new names are its
old ones (in any order) and more: nothing taken out, every item a plain (dotted) name. Every
other list of the same kind in the open documents of the language that shares at least
``MIN_SHARED`` names with the example's old list (all of them, for a shorter one) and lacks some
of its new names gets those it lacks, each after the name it follows in the example (first
when it is first there, else last), with the list's own separator — the nearest ``nextEdit.repeatMaxResults`` first, the cursor's document before the
others; more than ``nextEdit.repeatMaxSites`` such lists: the names are too common a family to
say which ones the user means, none is offered.

**Why.** ``#[derive(Clone, Eq, PartialEq)]`` -> ``#[derive(Clone, PartialEq, Eq, Hash)]`` is one
type made hashable; its sibling ``#[derive(Copy, Clone, PartialEq)]`` needs ``Eq`` and ``Hash``,
not the example's token change (which NE204 repeats only where the same tokens stand). What the
site lacks is the set difference, and the example's new list says it.

**Example.** ``#[derive(Clone, Eq, PartialEq)]`` -> ``#[derive(Clone, PartialEq, Eq, Hash)]``:
``#[derive(Copy, Clone, PartialEq)]`` below becomes ``#[derive(Copy, Clone, PartialEq, Eq,
Hash)]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import EXTENDED_LIST, REPEAT_OTHER_DOCUMENT_PENALTY
from mercury_lsp.next_edit.text import changed_lines
from mercury_lsp.next_edit.tree import ParsedDoc

IMPLEMENTS = re.compile(r"\bimplements[ \t]+(?P<items>[\w$.]+(?:[ \t]*,[ \t]*[\w$.]+)*)[ \t]*\{")
# The lists per grammar: the group ``items`` is the comma-separated names.
LISTS = {
    "rust": re.compile(r"#\[derive\((?P<items>[^()\]]*)\)\]"),
    "python": re.compile(r"^[ \t]*class[ \t]+\w+[ \t]*\((?P<items>[^()\n]*)\)[ \t]*:", re.M),
    "typescript": IMPLEMENTS,
    "tsx": IMPLEMENTS,
}
NAME = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*")
MIN_SHARED = 2  # a list sharing fewer names with the example is another family (``Debug`` alone)


@dataclass(frozen=True)
class NameList:
    start: int  # of the items, in the document
    end: int
    items: tuple[str, ...]
    separator: str  # between two items (``", "``)


def name_lists(text: str, pattern: re.Pattern) -> list[NameList]:
    """The lists of plain names ``pattern`` finds in ``text`` (a list holding anything else, a
    keyword argument or a generic type, is skipped)."""
    out = []
    for m in pattern.finditer(text):
        raw = m.group("items")
        items = tuple(i.strip() for i in raw.split(","))
        if items and items[-1] == "":
            items = items[:-1]  # a trailing comma
        if not items or not all(NAME.fullmatch(i) for i in items):
            continue
        sep = re.search(r",\s*", raw)
        out.append(NameList(m.start("items"), m.start("items") + len(raw.rstrip().rstrip(",")), items,
                            sep.group() if sep else ", "))
    return out


def _example(ctx: RuleContext, pattern: re.Pattern) -> tuple[NameList, tuple[str, ...]] | None:
    """The list the newest edit extended (as it is now) and the example's old names."""
    ex = ctx.newest
    span = changed_lines(ex.before, ex.after) if ex is not None else None
    if span is None:
        return None
    lo, old_end, new_end = span
    old, new = name_lists(ex.before[lo:old_end], pattern), name_lists(ex.after[lo:new_end], pattern)
    if len(old) != 1 or len(new) != 1 or ex.before[lo:old_end].count("\n") or ex.after[lo:new_end].count("\n"):
        return None
    if not set(old[0].items) < set(new[0].items):
        return None  # a name taken out, or none added: another change
    now = new[0]
    return NameList(lo + now.start, lo + now.end, now.items, now.separator), old[0].items


def run(ctx: RuleContext) -> list[Prediction]:
    """The sibling lists given the names the example added that they lack (module docstring)."""
    ex = ctx.newest
    pattern = LISTS.get(ex.doc.grammar or "") if ex is not None else None
    got = _example(ctx, pattern) if pattern is not None else None
    if got is None:
        return []
    mine, old = got
    need = min(MIN_SHARED, len(old))
    sites: list[tuple[ParsedDoc, NameList]] = []
    for p in ctx.parsed:
        if p.doc.grammar != ex.doc.grammar:
            continue
        for nl in name_lists(p.doc.text, pattern):
            if p.doc.uri == ex.doc.uri and nl.start == mine.start:
                continue
            if len(set(nl.items) & set(old)) >= need and any(n not in nl.items for n in mine.items):
                sites.append((p, nl))
    if not sites or len(sites) > ctx.query.options.repeat_max_sites:
        return []
    cursor = ctx.query.cursor
    sites.sort(key=lambda s: (s[0].doc.uri != ex.doc.uri, abs(s[1].start - cursor)))
    out = []
    for p, nl in sites[:ctx.query.options.repeat_max_results]:
        added = [n for n in mine.items if n not in nl.items]
        confidence = EXTENDED_LIST.value - (0 if p.doc.uri == ex.doc.uri else REPEAT_OTHER_DOCUMENT_PENALTY.value)
        out.append(Prediction(p.doc.uri, nl.start, nl.end, nl.separator.join(extended(nl.items, mine.items)),
                              round(confidence, 3), f"the names the user added to a list like this one: "
                              f"{', '.join(added)}", RULE.kind, "syntax", p.doc.text[nl.start:nl.end]))
    return out


def extended(items: tuple[str, ...], example: tuple[str, ...]) -> list[str]:
    """``items`` with the names of ``example`` it lacks, each where the example has it: after the
    name before it there (when ``items`` has that one), first when it is first there, else last."""
    out = list(items)
    for i, name in enumerate(example):
        if name in out:
            continue
        before = example[i - 1] if i else None
        if before is None:
            out.insert(0, name)
        elif before in out:
            out.insert(out.index(before) + 1, name)
        else:
            out.append(name)
    return out


RULE = Rule("NE209", "extended-list", "repeat", EXTENDED_LIST.value, run, __doc__)
