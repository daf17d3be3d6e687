"""NE114 sibling-entry: a new member written into one list of things joins the other lists where
its siblings stand.

**What.** The newest edits (``EXAMPLES``) are read for an insertion of whole items into a
collection (``lists``: an enum's variants, a const block, ``__all__``, an import list, a map
literal, a ``|`` chain) that already lists at least ``MIN_SIBLINGS`` others. Every other
collection of the open documents of the language whose items are mostly those siblings — at
least ``MIN_SHARED`` of them and ``MIN_SHARE`` of its items, known by the sibling's name or by
the part of it that varies (``mGET`` -> ``GET``: the prefix all the siblings share dropped),
and naming most of the siblings (``MIN_SIBLING_SHARE``) (an import of a few of the many names
of ``__all__`` takes the few it needs) — and that lacks the new member gets it: the entry of the sibling that comes before it in the
example (or after it) with that sibling's name, and the varying part of it, respelt as the new
member's (in the case each was written), at that sibling's place, with the list's own separator
and alignment. An entry whose other text differs from sibling to sibling (``"a": 1``,
``"b": 2``: a value the new member's entry cannot be known from) is not written; an import list
takes a name from an import list only in its own document (the fallback imports of one module);
more than ``nextEdit.repeatMaxSites`` lists: the member is too common a word, none is offered.

The lists it joins include runs of statements written alike but for the member they name
(``suite.addTest(ext.suite())``, ``suite.addTest(loader.suite())``: ``lists.statement_runs``, at
least ``lists.MIN_RUN`` of them); a statement written into such a run is not read as a new
member (new code is as often written among like statements). A prefix or suffix is shared only
where it ends a part of every name (``m`` of ``mGET``, not the ``s`` of ``commands``).

**Why.** A new member is rarely written once: an HTTP method added to a const block is added to
the method map and to the mask of all methods, a function added to ``__all__`` is added to the
imports that list its siblings. The entry's shape is read from the list it joins, so it is the
user's own.

**Example.** ``mUNLINK`` added to a Go const block after ``mTRACE``: the map
``"TRACE":   mTRACE,`` gets ``"UNLINK":  mUNLINK,`` below that line, and ``mCONNECT | ... |
mTRACE`` gets ``| mUNLINK``; ``'escape_silent'`` added to ``__all__`` after ``'escape'``:
``from ._native import escape, soft_unicode`` becomes ``escape, escape_silent, soft_unicode``.
"""

from __future__ import annotations

import re

from mercury_lsp.next_edit.examples import to_current
from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import (
    REPEAT_AGE_PENALTY,
    SIBLING_ENTRY,
    SIBLING_OTHER_DOCUMENT_PENALTY,
)
from mercury_lsp.next_edit.rules.follow.lists import WORD, Collection, Item, around, around_byte, containing
from mercury_lsp.next_edit.text import diff_region
from mercury_lsp.next_edit.tree import ParsedDoc

# The newest edits read: a new name goes into __all__, both fallback imports and its own
# definition before the next list (heldout: markupsafe's escape_silent; 3 lost it, 5 on every
# tuning set gained that case and changed no other)
EXAMPLES = 5
MIN_SIBLINGS = 2  # the example's list must already hold this many others: a pair is no family yet
MIN_SHARED = 2  # a list must name this many of the siblings ...
MIN_SHARE = 0.6  # ... and be mostly them (a list naming two of them among ten others is another list)
# ... and name most of them: a list of a few of many (an import of three of the sixteen names
# of ``__all__``) takes the few it needs, not every new one
MIN_SIBLING_SHARE = 0.6
MIN_KEY_CHARS = 2  # shorter names ('a', 'x') agree with unrelated lists by chance
MIN_AFFIX_SIBLINGS = 3  # a prefix or suffix is read as shared only across this many names
MIN_CORE_CHARS = 2  # the varying part of a name must keep this much
IMPORTS = ("import_from_statement", "use_list", "named_imports")
MAX_ROTATIONS = 40  # places an insertion is slid to each way to read it as whole items
ALIGNMENT = re.compile(r"(?<=\S)( {2,})(?=\S)")  # a run of spaces that aligns a column (gofmt)


def run(ctx: RuleContext) -> list[Prediction]:
    """The lists that lack the member an example added beside its siblings (module docstring)."""
    out: list[Prediction] = []
    seen: set[tuple[str, int]] = set()
    for ex in ctx.examples[:EXAMPLES]:
        home = ctx.by_uri.get(ex.doc.uri)
        inserted = _inserted(ex)
        if home is None or not inserted:
            continue
        found_source = None
        for lo, hi in inserted:
            source = containing(around(home, lo), lo, hi)
            if source is not None:
                found_source = source, lo, hi
                break
        if found_source is None:
            continue
        source, lo, hi = found_source
        if source.kind == "statements":
            continue  # a statement written among like ones is new code as often as a new member
        new = [it for it in source.items if lo <= it.start and it.end <= hi]
        olds = [it for it in source.items if not (lo <= it.start and it.end <= hi)]
        if len(olds) < MIN_SIBLINGS:
            continue
        for item in new:
            found = _sites(ctx, home, source, item, olds)
            if len(found) > ctx.options.repeat_max_sites:
                continue
            for d, at, text in found:
                if (d.doc.uri, at) in seen:
                    continue
                seen.add((d.doc.uri, at))
                conf = SIBLING_ENTRY.value - REPEAT_AGE_PENALTY.value * ex.age
                if d.doc.uri != ctx.query.cursor_uri:
                    conf -= SIBLING_OTHER_DOCUMENT_PENALTY.value
                out.append(Prediction(d.doc.uri, at, at, text, round(max(conf, 0.0), 6),
                                      f"'{item.key}' joins its siblings here", RULE.kind, "syntax", ""))
    return out


def _inserted(ex) -> list[tuple[int, int]]:
    """The spans in the current text that the example may have inserted (an insertion between
    like texts can be read at several places: ``mTRACE\n\tmSTUB`` -> ``mTRACE\n\tmUNLINK\n\tmSTUB``
    inserted ``UNLINK\n\tm`` or ``mUNLINK\n\t``); none when it also deleted words."""
    before, after = ex.before, ex.after
    p, eb, ea = diff_region(before, after)
    if ea <= p or WORD.search(before[p:eb]):
        return []
    spans = [(p, ea)]
    if eb == p:  # a pure insertion: every rotation of it reads the same
        lo, hi = p, ea
        while lo > 0 and after[lo - 1] == after[hi - 1] and len(spans) < MAX_ROTATIONS:
            lo, hi = lo - 1, hi - 1
            spans.append((lo, hi))
        lo, hi = p, ea
        while hi < len(after) and after[lo] == after[hi] and len(spans) < 2 * MAX_ROTATIONS:
            lo, hi = lo + 1, hi + 1
            spans.append((lo, hi))
    out = []
    for lo, hi in spans:
        a, b = to_current(ex, lo), to_current(ex, hi)
        if a is not None and b is not None and b > a:
            out.append((a, b))
    return out


def _sites(ctx: RuleContext, home: ParsedDoc, source: Collection, item: Item,
           olds: list[Item]) -> list[tuple[ParsedDoc, int, str]]:
    """(document, offset, text) of the insertions that give ``item`` to the lists of its siblings."""
    name = item.key
    if name is None or len(name) < MIN_KEY_CHARS or any(name == o.key for o in olds):
        return []
    keys = [o.key for o in olds]
    if any(k is None for k in keys):
        return []
    prefix, suffix = _affixes([*keys, name])
    core = _core(name, prefix, suffix)
    cores = [_core(k, prefix, suffix) for k in keys]
    order = sorted([*olds, item], key=lambda it: it.start)
    words = sorted({w for k, c in zip(keys, cores, strict=True) for w in (k, c) if w}, key=len, reverse=True)
    spelt = re.compile(rb"(?<![\w$])(?:" + b"|".join(re.escape(w.encode()) for w in words) + rb")(?![\w$])", re.I)
    out = []
    for d in (p for p in ctx.parsed if p.doc in ctx.same_language(home.doc)):
        candidates: dict[int, Collection] = {}
        walked: dict = {}
        for m in spelt.finditer(d.b.data):  # the lists that spell a sibling: walked up to from it
            for coll in around_byte(d, m.start(), walked):
                candidates.setdefault(coll.start, coll)
        for coll in sorted(candidates.values(), key=lambda c: c.start):
            if d is home and coll.start <= source.start and source.end <= coll.end:
                continue  # the example's list, or one holding it
            if coll.kind in IMPORTS and source.kind in IMPORTS and d is not home:
                continue
            site = _site(coll, item, order, keys, cores, name, core)
            if site is not None:
                out.append((d, *site))
    return out


def _site(coll: Collection, item: Item, order: list[Item], keys: list[str], cores: list[str], name: str,
          core: str) -> tuple[int, str] | None:
    """Where and what to insert so that ``coll`` lists ``item`` too (None: not a list of its siblings)."""
    matched: dict[int, int] = {}  # sibling index -> index of its entry in coll
    for j, entry in enumerate(coll.items):
        words = entry.words
        if name in words or (core and any(w.lower() == core.lower() for w in words)):
            return None  # it lists the new member already
        for i, (k, c) in enumerate(zip(keys, cores, strict=True)):
            if i not in matched and (k in words or (c and any(w.lower() == c.lower() for w in words))):
                matched[i] = j
                break
    if (len(matched) < MIN_SHARED or len(matched) < MIN_SHARE * len(coll.items)
            or len(matched) < MIN_SIBLING_SHARE * len(keys)):
        return None
    masks = {_mask(coll.items[j].text, keys[i], cores[i]) for i, j in matched.items()}
    if len(masks) != 1:
        return None  # the entries differ beyond their names: the new one's text cannot be known
    siblings = [it for it in order if it is not item]
    at = order.index(item)
    before = [siblings.index(it) for it in reversed(order[:at])]
    after = [siblings.index(it) for it in order[at + 1:]]
    for candidates, below in ((before, True), (after, False)):
        i = next((i for i in candidates if i in matched), None)
        if i is None:
            continue
        j = matched[i]
        entry = coll.items[j]
        text = _aligned(entry.text, _respelt(entry.text, keys[i], cores[i], name, core))
        if text == entry.text:
            return None
        sep = coll.separator_after(j)
        if below and j + 1 < len(coll.items):  # at the next entry's start (where a token edit there meets it)
            return coll.items[j + 1].start, text + sep
        return (entry.end, sep + text) if below else (entry.start, text + sep)
    return None


def _affixes(names: list[str]) -> tuple[str, str]:
    """The prefix and suffix every one of ``names`` shares (none for fewer than ``MIN_AFFIX_SIBLINGS``)."""
    if len(names) < MIN_AFFIX_SIBLINGS:
        return "", ""
    prefix = names[0]
    for n in names[1:]:
        while not n.startswith(prefix):
            prefix = prefix[:-1]
    suffix = names[0]
    for n in names[1:]:
        while not n.endswith(suffix):
            suffix = suffix[1:]
    prefix = prefix if _part_boundary(prefix, names, True) else ""
    suffix = suffix if _part_boundary(suffix, names, False) else ""
    if any(len(n) - len(prefix) - len(suffix) < MIN_CORE_CHARS for n in names):
        return prefix, ""
    return prefix, suffix


def _part_boundary(affix: str, names: list[str], is_prefix: bool) -> bool:
    """The affix ends (a suffix: starts) a part of each name: ``m`` of ``mGET``, ``opt_`` of
    ``opt_a``, ``Error`` of ``FooError`` — not the ``s`` of ``commands`` and ``options``."""
    if not affix:
        return False
    for n in names:
        if is_prefix:
            edge, nxt = affix[-1], n[len(affix):len(affix) + 1]
        else:
            edge, nxt = affix[0], n[len(n) - len(affix) - 1:len(n) - len(affix)]
        if not nxt:
            return False
        if is_prefix and not (edge in "_$" or (edge.islower() and nxt.isupper()) or (edge.isupper() and nxt.isupper()
                                                                                      and len(affix) > 1)):
            return False
        if not is_prefix and not (edge in "_$" or nxt in "_$" or (edge.isupper() and nxt.islower()) or nxt.isdigit()):
            return False
    return True


def _core(name: str, prefix: str, suffix: str) -> str:
    core = name[len(prefix):len(name) - len(suffix)] if suffix else name[len(prefix):]
    return core if len(core) >= MIN_CORE_CHARS else ""


def _styled(word: str, core: str) -> str:
    """``core`` written in ``word``'s case (``GET`` -> ``LINK``, ``get`` -> ``link``)."""
    if word.isupper():
        return core.upper()
    if word.islower():
        return core.lower()
    if word[:1].isupper():
        return core[:1].upper() + core[1:]
    return core


def _respelt(text: str, key: str, core: str, name: str, new_core: str) -> str:
    """``text`` (a sibling's entry) with the sibling's name and the varying part of it respelt."""
    def word(m: re.Match) -> str:
        w = m.group()
        if w == key:
            return name
        if core and new_core and w.lower() == core.lower():
            return _styled(w, new_core)
        return w

    return WORD.sub(word, text)


def _mask(text: str, key: str, core: str) -> str:
    """The entry with its own name (and the varying part of it) blanked, spacing ignored."""
    def word(m: re.Match) -> str:
        w = m.group()
        if w == key:
            return "\x00K"
        if core and w.lower() == core.lower():
            return "\x00C"
        return w

    return re.sub(r"\s+", " ", WORD.sub(word, text)).strip()


def _aligned(old: str, new: str) -> str:
    """``new`` with its first aligning run of spaces resized so that what follows it starts at the
    column it did in ``old`` (gofmt's aligned map values)."""
    m_old, m_new = ALIGNMENT.search(old), ALIGNMENT.search(new)
    if m_old is None or m_new is None:
        return new
    width = max(1, m_old.end() - m_new.start())
    return new[:m_new.start()] + " " * width + new[m_new.end():]


RULE = Rule("NE114", "sibling-entry", "repeat", SIBLING_ENTRY.value, run, __doc__)
