"""Steps 1-2 of next-edit for renames and signature changes: the locations the recent history
ties (``find_candidates``; the scoping itself is in ``locate``).

A rename is read two ways, first that holds:

* **the newest edits** — the smallest diff between one of the texts before the newest edit
  records and the current text turns one identifier into another (``identifier_change``), and the
  new name is fresh (not in use before: otherwise the user switched to another existing thing);
* **the whole recent history, line by line** (``line_renames``) — the lines that changed since the
  oldest text of the history, paired old to new, read as identifier maps: a paired line keeps its
  tokens except identifiers, each changed identifier maps to one new one across all pairs. This
  finds a rename spread over several hunks or followed by other edits (a line retyped elsewhere
  pairs with its old copy when it makes at most one rename the aligned pairs do not: ``for _, c :=
  range cases`` retyped as ``for _, testCase := range testCases`` once ``cases`` -> ``testCases``
  is read; a definition's visibility added or dropped beside its rename, ``export type X`` ->
  ``type _X``, still pairs), several renames at once (``history, window`` -> ``window, ordered``), and a rename
  to a name already in use when the edited occurrence *binds* the name (a definition, a parameter, an assignment target: the old
  binding is gone, so its remaining uses must follow) — renaming ``w`` back to ``width`` included.

Occurrences inside the lines the history changed are the user's own and are never touched. A
renamed module-level definition also reaches the places its language's export machinery spells
the name in (``exports``: ``__all__``, re-exports, ``pub use``, ``pkg.Old``, ``export {...}``);
where only a string names it, a note says so (``Located.notes``).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from mercury_lsp.next_edit.exports import Reach, reach
from mercury_lsp.next_edit.prose import mentions
from mercury_lsp.next_edit.query import Candidate, NextEditQuery, Note
from mercury_lsp.next_edit.scopes import (
    binds,
    both_imported,
    declared_elsewhere,
    distinctive,
    fresh_name,
    imported,
    local_only_scopes,
    redeclared,
    scope_of,
)
from mercury_lsp.next_edit.steps.calls import signature_candidates
from mercury_lsp.next_edit.steps.detect import identifier_change
from mercury_lsp.next_edit.steps.locate import rename_sites_generic, rename_sites_python
from mercury_lsp.next_edit.text import (
    IMPORT_LINE,
    PATH_SEPARATORS,
    TOKEN,
    declares,
    diff_region,
    is_identifier,
)
from mercury_lsp.next_edit.tree import ParsedDoc
from mercury_lsp.syntax import Grammars

# Renames whose name lives in one function (``locate``'s roles): a comment elsewhere that spells
# the name speaks of another thing, so their mentions in prose are not followed.
SCOPED_ROLES = frozenset(("local", "parameter", "keyword", "variable"))
MAX_CHANGED_LINES = 200  # more lines changed than this is a rewrite, not read line by line
# The span from the history's first change to its last, compared line by line (difflib hashes
# lines: a few milliseconds); hunks far apart in one file (an enum renamed at line 143, its uses
# at 365) need more than the changed lines.
MAX_REGION_LINES = 3000
# A definition's visibility, added or dropped with its rename in one line ('export type X' ->
# 'type _X'): the line still pairs with its old version.
VISIBILITY = frozenset(("export", "pub", "public", "private"))
MIN_PAIR_TOKENS = 2  # a line of one token ('x') pairs with anything: not evidence of a rename
MAX_PAIR_RENAMES = 2  # a line pair changing more identifiers than this is rewritten, not renamed
# An identifier directly followed by one of these (not '==') is assigned to: it binds the name.
# A line of comment (any grammar): its words are prose, not identifiers.
COMMENT_LINE = re.compile(r"\s*(?:#|//|/\*|\*|--)")
# Words that are never renamed identifiers, in any of the grammars (keywords and literals).
RESERVED = frozenset("""self this super true false null nil None True False undefined let const var
func fn def return if else for while in of new typeof mut pub use mod impl struct enum type
interface class import from export package go defer range match""".split())


def _line_spans(text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    out, pos = [], lo
    for line in text[lo:hi].splitlines(keepends=True):
        out.append((pos, pos + len(line)))
        pos += len(line)
    return out


def _pair_map(a: str, b: str, b_start: int, limit: int = MAX_PAIR_RENAMES) -> list[tuple[int, str, str]] | None:
    """(offset of the new identifier, old, new) for each identifier the line pair changes; None
    when the lines differ in anything but identifiers."""
    ta, tb = list(TOKEN.finditer(a)), list(TOKEN.finditer(b))
    if ta and tb and ta[0].group() != tb[0].group():  # 'export type X' -> 'type _X': the visibility aside
        ta, tb = (ta[1:], tb) if ta[0].group() in VISIBILITY else (ta, tb[1:]) if tb[0].group() in VISIBILITY else (ta, tb)
    if len(ta) != len(tb) or not ta:
        return None
    if len(ta) < MIN_PAIR_TOKENS and not (distinctive(ta[0].group()) and distinctive(tb[0].group())):
        return None  # a lone short name ('x'): a lone compound one is an enum member or field renamed
    if (IMPORT_LINE.match(a) or IMPORT_LINE.match(b)) and not _binding_renamed(ta, tb):
        return None  # another thing imported ('from a import x' -> 'from b import x'): no rename
    if COMMENT_LINE.match(a) or COMMENT_LINE.match(b):
        return None  # prose: 'O(k)' -> 'O(n)' in a comment renames no variable
    out, last = [], None
    for i, (x, y) in enumerate(zip(ta, tb, strict=True)):
        if x.group() == y.group():
            continue
        if not (is_identifier(x.group()) and is_identifier(y.group())) or {x.group(), y.group()} & RESERVED:
            return None
        if last is not None and 0 < i - last - 1 <= 2 and all(t.group() in PATH_SEPARATORS for t in ta[last + 1:i]):
            return None  # names of one path replaced together ('log.Printf' -> 't.Logf'): a new callee, no rename
        out.append((b_start + y.start(), x.group(), y.group()))
        last = i
    return out if 0 < len({old for _, old, _ in out}) <= limit else None


def _binding_renamed(ta: list, tb: list) -> bool:
    """An import line pair whose one change is the local name it binds, from the same module:
    ``import m from '.'`` -> ``import pMap from '.'``, ``import numpy as np`` -> ``... as npy``."""
    diff = [i for i, (x, y) in enumerate(zip(ta, tb, strict=True)) if x.group() != y.group()]
    if len(diff) != 1 or diff[0] == 0:
        return False
    i = diff[0]
    before, after = ta[i - 1].group(), ta[i + 1].group() if i + 1 < len(ta) else ""
    return (before == "import" and after == "from") or before == "as"


def line_renames(before: str, after: str) -> tuple[list[tuple[int, str, str]], list[tuple[int, int]]]:
    """(renames, changed spans): each consistent identifier map of the changed lines as (offset in
    ``after`` of an occurrence of the new name, old, new), and the spans of ``after`` that changed."""
    p, eb, ea = diff_region(before, after)
    if p == eb == ea:
        return [], []
    lo = before.rfind("\n", 0, p) + 1
    tail = before.find("\n", eb)
    hb = len(before) if tail < 0 else tail + 1
    ha = ea + (hb - eb)
    a_spans, b_spans = _line_spans(before, lo, hb), _line_spans(after, lo, ha)
    if max(len(a_spans), len(b_spans)) > MAX_REGION_LINES:
        return [], [(lo, ha)]
    a_lines = [before[s:e] for s, e in a_spans]
    b_lines = [after[s:e] for s, e in b_spans]
    ops = [o for o in difflib.SequenceMatcher(None, a_lines, b_lines, autojunk=False).get_opcodes() if o[0] != "equal"]
    if sum(max(i2 - i1, j2 - j1) for _, i1, i2, j1, j2 in ops) > MAX_CHANGED_LINES:
        return [], [(lo, ha)]
    pairs, changed, gone, came = [], [], [], []
    for tag, i1, i2, j1, j2 in ops:
        if j2 > j1:
            changed.append((b_spans[j1][0], b_spans[j2 - 1][1]))
        if tag == "replace" and i2 - i1 == j2 - j1:
            pairs += [(i1 + d, j1 + d) for d in range(i2 - i1)]
        else:
            gone += range(i1, i2)
            came += range(j1, j2)
    # the renames the aligned pairs agree on: a retyped line may make one of them and one more
    established = {(old, new) for i, j in pairs for _, old, new in _pair_map(a_lines[i], b_lines[j], 0) or ()}
    for j in came:  # a line removed in one hunk and retyped with a new name in another
        for i in gone:
            got = _pair_map(a_lines[i], b_lines[j], 0)
            if got is not None and len({(old, new) for _, old, new in got} - established) <= 1:
                pairs.append((i, j))
                gone.remove(i)
                break
    found: dict[str, list[tuple[int, str, str]]] = {}
    conflicts: set[str] = set()
    for i, j in pairs:
        for off, old, new in _pair_map(a_lines[i], b_lines[j], b_spans[j][0]) or ():
            if found.get(old, [(0, old, new)])[0][2] != new:
                conflicts.add(old)
            found.setdefault(old, []).append((off, old, new))
    # two names swapped (``red`` <-> ``italic`` reordered in a line) are a reorder, not two renames
    conflicts |= {old for old, rs in found.items() if rs[0][2] in found and found[rs[0][2]][0][2] == old}
    return [r for old, rs in found.items() if old not in conflicts for r in rs], changed


# Calls by a plain name (no member, no path): what an external name is switched at (``external``).
CALLS = ("call", "call_expression", "macro_invocation")


def external(parsed: list[ParsedDoc], home: ParsedDoc, start: int, old: str, new: str) -> bool:
    """The edit switched the callee of a call by a plain name (``println!(...)`` -> ``print!(...)``,
    ``len(x)`` -> ``size(x)``) from a name no open document of the language binds, now or before
    the recent edits, and the document does not import: a builtin or another library's function,
    which cannot be renamed — its other calls are the user's to switch or not (NE111 follows a
    switch to a new helper)."""
    b = home.b.byte(start)
    node = home.tree.root_node.descendant_for_byte_range(b, b + len(new.encode("utf-8")))
    parent = node.parent if node is not None else None
    if parent is None or node.type != "identifier" or parent.type not in CALLS or parent.named_children[:1] != [node]:
        return False
    if imported(home.doc, old):
        return False
    word = re.compile(rf"(?<![\w$.]){re.escape(old)}(?![\w$])")
    for p in parsed:
        if p.doc.grammar == home.doc.grammar and any(binds(p, m.start(), old) for m in word.finditer(p.doc.text)):
            return False
    return not declares(old, home.doc.history[-1] if home.doc.history else home.doc.text)


@dataclass
class Located:
    """The locations the history ties (``candidates``), and the notes of the places only a
    string names a renamed definition (``exports``: no edit is offered there)."""
    candidates: list[Candidate] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)


def _sites(parsed: list[ParsedDoc], home: ParsedDoc, start: int, old: str, new: str, grammars: Grammars):
    """(the occurrences ``locate`` ties, their role, the export machinery's ``Reach``), or None
    when no identifier spelling ``new`` stands at ``start``."""
    bs = home.b.byte(start)
    node = home.tree.root_node.descendant_for_byte_range(bs, bs + len(new.encode("utf-8")))
    if node is None or home.b.node_text(node) != new:
        return None
    if home.doc.grammar == "python":
        sites, role = rename_sites_python(parsed, home, node, old)
    else:
        sites, role = rename_sites_generic(parsed, home, node, old)
    if role == "document" or role.startswith("module-level"):
        local = local_only_scopes(home, new)
        if local:  # a document-wide name switched to a function's own value: that function's uses only
            sites = [(p, n) for p, n in sites if p is home and any(lo <= p.b.char(n.start_byte) < hi for lo, hi in local)]
            return sites, "document", Reach()
    return sites, role, reach(parsed, home, node, old, new, grammars)


def _candidates(sites, role: str, home: ParsedDoc, old: str, new: str,
                skip: list[tuple[int, int]] = (), exported: Reach | None = None) -> list[Candidate]:
    out = []
    seen: set[tuple[str, int, int]] = set()

    def add(p: ParsedDoc, n, text: str, why: str) -> None:
        s, e = p.b.char(n.start_byte), p.b.char(n.end_byte)
        if (p.doc.uri, s, e) in seen or (p is home and any(lo <= s < hi for lo, hi in skip)):
            return
        seen.add((p.doc.uri, s, e))
        out.append(Candidate(p.doc.uri, s, e, old, "rename", text, f"{role} '{old}' was renamed to '{new}'{why}"))

    for p, n in sites:
        add(p, n, new, "" if p is home else " (another document)")
    for site in exported.sites if exported is not None else ():
        add(site.doc, site.node, site.text(old, new), f" ({site.why})")
    if role not in SCOPED_ROLES and not imported(home.doc, old):  # a definition's or member's mentions in prose
        docs = {id(p): p for p, _ in sites} | {id(home): home}
        for p in docs.values():
            for s, e in mentions(p, old, new):
                if (p.doc.uri, s, e) not in seen and not (p is home and any(lo <= s < hi for lo, hi in skip)):
                    seen.add((p.doc.uri, s, e))
                    out.append(Candidate(p.doc.uri, s, e, old, "rename", new,
                                         f"{role} '{old}' was renamed to '{new}' (a mention in prose)", mention=True))
    return out


def rename_candidates(parsed: list[ParsedDoc], home: ParsedDoc, grammars: Grammars) -> Located:
    text = home.doc.text
    renames, changed = line_renames(home.doc.history[-1], text) if home.doc.history else ([], [])
    targets = {new for _, _, new in renames}  # names the history gave to other things
    out: list[Candidate] = []
    notes: list[Note] = []
    done: set[str] = set()
    for before in home.doc.history:
        change = identifier_change(before, text)
        if change is None:
            continue
        start, old, new = change
        if not fresh_name(new, home.doc, scope_of(home, start)):  # in use already: see line by line
            continue
        if declared_elsewhere(home, old, start) and declared_elsewhere(home, new, start):
            continue  # both still declared: the user switched to a variable they declared, no rename
        if both_imported(home.doc, old, new):
            continue  # a switch between two names the module imports (Display::fmt -> Debug::fmt)
        if redeclared(home, old, start):
            continue  # the old name declared anew: its uses are that declaration's
        if external(parsed, home, start, old, new):
            continue  # one use of a builtin or another library's name switched: no rename
        got = _sites(parsed, home, start, old, new, grammars)
        if got is not None:  # the old name's occurrences the user wrote for something else stay
            out = _candidates(got[0], got[1], home, old, new, changed if old in targets else (), got[2])
            notes += got[2].notes
            done.add(old)  # the newest rename first; the history's other renames follow
            break
    for start, old, new in sorted(renames, key=lambda r: not binds(home, r[0], r[2])):
        if old in done:
            continue
        if not (binds(home, start, new) or fresh_name(new, home.doc, scope_of(home, start))):
            continue
        if declared_elsewhere(home, old, start) and declared_elsewhere(home, new, start) \
                or redeclared(home, old, start) or both_imported(home.doc, old, new) \
                or external(parsed, home, start, old, new):
            continue
        got = _sites(parsed, home, start, old, new, grammars)
        if got is None:
            continue
        done.add(old)
        out += _candidates(got[0], got[1], home, old, new, changed, got[2])
        notes += got[2].notes
    return Located(out, notes)


def find_candidates(query: NextEditQuery, parsed: list[ParsedDoc], edited: list[ParsedDoc],
                    grammars: Grammars) -> Located:
    """The locations the history ties (renames and signature changes of the ``edited`` documents,
    the newest edited first, at most ``nextEdit.maxDocuments`` of them), each once, nearest the
    cursor first (the cursor's document first), at most ``nextEdit.maxCandidates``; and the
    renames' notes."""
    uris = {p.doc.uri for p in parsed}
    cands: list[Candidate] = []
    notes: list[Note] = []
    for home in edited[: query.options.max_documents]:
        renamed = rename_candidates(parsed, home, grammars)
        cands.extend(renamed.candidates)
        notes.extend(n for n in renamed.notes if n not in notes)
        cands.extend(signature_candidates(parsed, home, home.doc.history[-1], grammars))
    seen: set[tuple[str, int, int]] = set()
    unique = []
    for c in cands:
        key = (c.uri, c.start, c.end)
        if key not in seen and c.uri in uris:
            seen.add(key)
            unique.append(c)
    unique.sort(key=lambda c: (c.uri != query.cursor_uri, abs(c.start - query.cursor)))
    return Located(unique[: query.options.max_candidates], notes)
