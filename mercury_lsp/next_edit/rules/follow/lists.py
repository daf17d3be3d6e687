"""Collections in the tree (shared by ``sibling-entry``, NE114): the nodes that list like things —
an enum's variants, a const block, an import list, ``__all__``, a map or array literal, a
``match``'s arms, a chain of ``|`` — read as their items (``Collection``), each with the words it
spells (identifiers, and words inside its strings: ``"GET": mGET`` spells ``GET`` and ``mGET``).

The list node types are named per grammar (``COLLECTIONS``): the ones that enumerate things of
one kind. Argument and parameter lists are left out (a new argument is a signature change, NE102).
A chain of one binary operator (``mGET | mHEAD | mPUT``, TypeScript's ``'a' | 'b'``) is one
collection of its operands. In a block of statements, a *run* of consecutive statements written
alike but for one word (``suite.addTest(ext.suite())``, ``suite.addTest(loader.suite())``: the
same tokens, differing at the same places by one word each) is one collection too, each statement
known by its word (``statement_runs``): a list of things written out as statements.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mercury_lsp.next_edit.statements import BLOCKS
from mercury_lsp.next_edit.text import KEYWORDS, TOKEN
from mercury_lsp.next_edit.tree import ParsedDoc, walk

WORD = re.compile(r"[A-Za-z_$][\w$]*")
COMMENTS = ("comment", "line_comment", "block_comment")
# Per grammar: node type -> the item types it lists (None: every named child that is no comment).
COLLECTIONS: dict[str, dict[str, tuple[str, ...] | None]] = {
    "python": {"list": None, "tuple": None, "set": None, "dictionary": ("pair",),
               "import_from_statement": ("dotted_name", "aliased_import")},
    "go": {"const_declaration": ("const_spec",), "var_declaration": ("var_spec",),
           "literal_value": ("keyed_element", "literal_element"), "field_declaration_list": ("field_declaration",)},
    "rust": {"enum_variant_list": ("enum_variant",), "use_list": None, "array_expression": None,
             "match_block": ("match_arm",), "field_declaration_list": ("field_declaration",)},
    "javascript": {"array": None, "object": ("pair", "shorthand_property_identifier"),
                   "named_imports": ("import_specifier",), "export_clause": ("export_specifier",)},
    "typescript": {"array": None, "object": ("pair", "shorthand_property_identifier"),
                   "named_imports": ("import_specifier",), "export_clause": ("export_specifier",),
                   "enum_body": None, "object_type": ("property_signature",)},
}
COLLECTIONS["tsx"] = COLLECTIONS["typescript"]
# Chains of one binary operator read as collections of their operands (node type -> operators).
CHAINS = {"python": ("binary_operator",), "go": ("binary_expression",), "rust": ("binary_expression",),
          "javascript": ("binary_expression",), "typescript": ("binary_expression", "union_type"),
          "tsx": ("binary_expression", "union_type")}
CHAIN_OPERATORS = frozenset({"|"})  # flags and unions; a chain of conditions or sums is no list of members
MIN_ITEMS = 2
MAX_STATEMENT_LINES = 3  # a longer statement is code of its own, not an entry of a list
MAX_STATEMENT_TOKENS = 40
MIN_RUN = 3  # statements alike: two are a coincidence as often as a list


@dataclass(frozen=True)
class Item:
    start: int  # code points in the document's text
    end: int
    text: str
    slot: str | None = None  # a statement's word of its run (else the item is known by its first word)

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(w for w in WORD.findall(self.text) if w not in KEYWORDS)

    @property
    def key(self) -> str | None:
        """The word the item is known by: its first (``"GET": mGET`` is ``GET``'s entry), or a
        statement's word of its run."""
        if self.slot is not None:
            return self.slot
        words = self.words
        return words[0] if words else None


@dataclass(frozen=True)
class Collection:
    start: int
    end: int
    items: tuple[Item, ...]
    kind: str  # the list node's type (a chain: its node type and operator)
    text: str  # the collection's text

    def separator_after(self, i: int) -> str:
        """The text to put between item ``i`` and an item inserted after it: the one that follows
        it, or for the last item the list's most common separator (a wrapped line's break is
        where that line was full, not the list's separator)."""
        if i + 1 < len(self.items):
            return self._between(i)
        seps = [self._between(k) for k in range(len(self.items) - 1)]
        return max(seps, key=lambda s: (seps.count(s), "\n" not in s)) if seps else ", "

    def _between(self, i: int) -> str:
        a, b = self.items[i], self.items[i + 1]
        return self.text[a.end - self.start:b.start - self.start]


def collections(doc: ParsedDoc) -> list[Collection]:
    """Every collection of ``doc`` with at least ``MIN_ITEMS`` items, in document order."""
    out = []
    for n in walk(doc.tree.root_node):
        coll = collection_of(doc, n)
        if coll is not None:
            out.append(coll)
    return out


def around(doc: ParsedDoc, offset: int, seen: dict | None = None) -> list[Collection]:
    """The collections holding the character at ``offset``, the innermost first (a walk up the
    tree from it: cheaper than reading every collection of a large document). ``seen`` keeps the
    nodes already read across calls: the walk stops at the first one (its collections are known),
    and a block gives all its statement runs, not only those holding ``offset``."""
    return around_byte(doc, doc.b.byte(offset), seen)


def around_byte(doc: ParsedDoc, b: int, seen: dict | None = None) -> list[Collection]:
    """``around`` at byte offset ``b``."""
    node = doc.tree.root_node.descendant_for_byte_range(b, b)
    out = []
    while node is not None:
        key = (node.start_byte, node.end_byte, node.type)
        if seen is not None:
            if key in seen:
                break
            seen[key] = True
        coll = collection_of(doc, node)
        if coll is not None:
            out.append(coll)
        if node.type in BLOCKS:  # with ``seen``, every run of the block (it is not walked again)
            out += [r for r in statement_runs(doc, node) if seen is not None or r.start <= doc.b.char(b) < r.end]
        node = node.parent
    return out


def statement_runs(doc: ParsedDoc, block) -> list[Collection]:
    """The runs of statements of ``block`` written alike but for one word (module docstring)."""
    stmts = [c for c in block.named_children if c.type not in COMMENTS]
    text = doc.doc.text
    rows = []
    for c in stmts:
        if c.end_point[0] - c.start_point[0] + 1 > MAX_STATEMENT_LINES:
            rows.append(None)
            continue
        s, e = doc.b.char(c.start_byte), doc.b.char(c.end_byte)
        toks = TOKEN.findall(text, s, e)
        rows.append((s, e, toks) if len(toks) <= MAX_STATEMENT_TOKENS else None)
    out: list[Collection] = []
    run: list[tuple[int, int, str]] = []  # (start, end, word)
    shape = None
    for i, row in enumerate(rows + [None]):
        prev = rows[i - 1] if i > 0 else None
        slot = _slot(prev[2], row[2]) if prev is not None and row is not None else None
        if slot is not None and (shape is None or shape == slot[0]) and (not run or run[-1][2] == slot[1]):
            if not run:
                run.append((prev[0], prev[1], slot[1]))
            run.append((row[0], row[1], slot[2]))
            shape = slot[0]
            continue
        if len(run) >= MIN_RUN and len({w for _, _, w in run}) == len(run):
            lo, hi = run[0][0], run[-1][1]
            out.append(Collection(lo, hi, tuple(Item(s, e, text[s:e], w) for s, e, w in run), "statements",
                                  text[lo:hi]))
        run, shape = [], None
        if slot is not None:  # this pair starts a run of another shape
            run = [(prev[0], prev[1], slot[1]), (row[0], row[1], slot[2])]
            shape = slot[0]
    return out


def _slot(a: list[str], b: list[str]) -> tuple[tuple, str, str] | None:
    """(the places they differ, a's word, b's word) when two token lists differ only by one word
    of each, standing at the same places (None otherwise)."""
    if len(a) != len(b):
        return None
    where = tuple(i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)
    if not where:
        return None
    wa, wb = {a[i] for i in where}, {b[i] for i in where}
    if len(wa) != 1 or len(wb) != 1:
        return None
    x, y = wa.pop(), wb.pop()
    if not (WORD.fullmatch(x) and WORD.fullmatch(y)) or x in KEYWORDS or y in KEYWORDS:
        return None
    return where, x, y


def collection_of(doc: ParsedDoc, n) -> Collection | None:
    """``n`` read as a collection (None: not one, or fewer than ``MIN_ITEMS`` items)."""
    grammar = doc.doc.grammar or ""
    kinds = COLLECTIONS.get(grammar, {})
    if n.type in kinds:
        types = kinds[n.type]
        items = [c for c in n.named_children if c.type not in COMMENTS and (types is None or c.type in types)]
        if n.type == "import_from_statement":
            items = [c for c in items if not _field_is(n, "module_name", c)]
        return _collection(doc, n, items, n.type)
    if n.type in CHAINS.get(grammar, ()) and (n.parent is None or n.parent.type != n.type
                                             or _operator(n.parent) != _operator(n)):
        op = _operator(n)
        if op in CHAIN_OPERATORS:
            return _collection(doc, n, _operands(n, op), f"{n.type} {op}")
    return None


def _collection(doc: ParsedDoc, node, items: list, kind: str) -> Collection | None:
    if len(items) < MIN_ITEMS:
        return None
    b = doc.b
    start, end = b.char(node.start_byte), b.char(node.end_byte)
    text = doc.doc.text
    return Collection(start, end, tuple(Item(b.char(c.start_byte), b.char(c.end_byte),
                                             text[b.char(c.start_byte):b.char(c.end_byte)]) for c in items),
                      kind, text[start:end])


def _field_is(parent, name: str, node) -> bool:
    child = parent.child_by_field_name(name)
    return child is not None and child.start_byte == node.start_byte and child.end_byte == node.end_byte


def _operator(node) -> str | None:
    op = node.child_by_field_name("operator")
    if op is not None:
        return op.type
    return next((c.type for c in node.children if not c.is_named), None)


def _operands(node, op: str) -> list:
    """The operands of a chain of ``op`` (left-nested: ``(a | b) | c``)."""
    out = []
    for c in node.named_children:
        if c.type == node.type and _operator(c) == op:
            out.extend(_operands(c, op))
        elif c.type not in COMMENTS:
            out.append(c)
    return out


def containing(colls: list[Collection], lo: int, hi: int) -> Collection | None:
    """The innermost collection whose items cover ``[lo, hi)`` with whole items."""
    best = None
    for c in colls:
        if c.start <= lo and hi <= c.end and any(lo <= it.start and it.end <= hi for it in c.items):
            if best is None or c.end - c.start < best.end - best.start:
                best = c
    return best
