"""Imports that must follow the user's edit (the import statements come from the language's
query file, ``symbols``):

* **an import no longer used** — the newest edit, rewriting lines in place, removed the last use
  of a name an import brings in: the import goes (its whole line when the name is all it brings,
  else the name and its comma). Edits that remove or add lines are left alone: on real histories
  they were mostly code being moved, its uses coming back a moment later;
* **a name used but not imported** — the newest edit uses a name the document neither defines nor
  imports, and another open document of the language imports exactly that name: the same import
  statement is added to the document's imports, in the group of the statement before it there, at
  its sorted place when that group is sorted (gofmt, isort), else after the group (``_place``).
  Else, when exactly one other open document defines the name at top level and one of the
  document's statements lists names from that document's module, the name joins that list
  (``import_lists``).

Names are identifier tokens outside the import statements. An import's *own* name is its last
identifier outside quotes (``from x import name``, ``use a::name;``), or inside them for a path
(Go's ``"net/http"`` brings ``http``). Nothing is offered for a document without imports.
"""

from __future__ import annotations

import bisect
import re

from mercury_lsp.next_edit.import_lists import (
    QUOTED,
    WORD,
    join,
    module_key,
    names_module,
    statement_names,
    statements,
    top_level,
)
from mercury_lsp.next_edit.query import NextEditQuery, Prediction
from mercury_lsp.next_edit.symbols import captures, parsed_before
from mercury_lsp.next_edit.text import IMPORT_LINE, diff_region, is_identifier
from mercury_lsp.next_edit.tree import ParsedDoc, newest_edited
from mercury_lsp.syntax import Grammars

UNUSED_CONFIDENCE = 0.6
MISSING_CONFIDENCE = 0.5
MIN_SORTED_GROUP = 2  # import statements that show an order (one alone is sorted by itself)


def code_words(doc: ParsedDoc, nodes) -> set[str]:
    """Identifier-like words of ``doc`` outside ``nodes`` (byte offsets: no character map needed)."""
    data, out, pos = doc.b.data, set(), 0
    for n in sorted(nodes, key=lambda n: n.start_byte) + [None]:
        s = len(data) if n is None else n.start_byte
        out.update(WORD.findall(data[pos:s].decode("utf-8", errors="replace")))
        pos = max(pos, len(data) if n is None else n.end_byte)
    return out


def _own_name(statement: str) -> str | None:
    outside = [w for w in WORD.findall(QUOTED.sub(" ", statement)) if is_identifier(w)
               and w not in ("import", "from", "use", "as", "extern", "crate", "pub", "include")]
    if outside:
        return outside[-1]
    inside = WORD.findall(statement)
    return inside[-1] if inside else None


def _line_span(text: str, s: int, e: int) -> tuple[int, int] | None:
    """The whole lines of ``text[s:e]`` (with the line break) when nothing else is on them."""
    lo = text.rfind("\n", 0, s) + 1
    hi = text.find("\n", e)
    hi = len(text) if hi < 0 else hi + 1
    if text[lo:s].strip() or text[e:hi].strip(" \t\n;"):
        return None
    return lo, hi


def _spans(doc: ParsedDoc, nodes) -> list[tuple[int, int]]:
    return [(doc.b.char(n.start_byte), doc.b.char(n.end_byte)) for n in nodes]


def _unused(home: ParsedDoc, old: ParsedDoc, caps: dict, old_caps: dict) -> list[Prediction]:
    text = home.doc.text
    imports = _spans(home, caps["import"])
    gone = code_words(old, old_caps["import"]) - code_words(home, caps["import"])
    out = []
    for s, e in imports:
        statement = text[s:e]
        name = _own_name(statement)
        if name is None or name not in gone:
            continue
        lines = _line_span(text, s, e)
        if lines is not None:
            out.append(Prediction(home.doc.uri, lines[0], lines[1], "", UNUSED_CONFIDENCE,
                                  f"'{name}' is no longer used: its import goes", "import", "syntax",
                                  text[lines[0]:lines[1]]))
    for s, e in imports:  # a name of a list: it and its comma go
        statement = text[s:e]
        for name in sorted(gone & set(WORD.findall(statement))):
            if name == _own_name(statement):
                continue
            m = re.search(rf"(?<![\w$.:]){re.escape(name)}\s*,\s*|\s*,\s*(?<![\w$.:]){re.escape(name)}(?![\w$.:])",
                          statement)
            if m is not None:
                out.append(Prediction(home.doc.uri, s + m.start(), s + m.end(), "", UNUSED_CONFIDENCE,
                                      f"'{name}' is no longer used: it leaves the import", "import", "syntax",
                                      m.group()))
    return out


def _missing(home: ParsedDoc, before: str, caps: dict, imports: list[tuple[int, int]],
             others, language) -> list[Prediction]:
    """``others``: (document, captures) of the other documents, read only when a name is new."""
    text = home.doc.text
    p, _, ea = diff_region(before, text)
    lo, hi = text.rfind("\n", 0, p) + 1, text.find("\n", ea)
    written = [line for line in text[lo:len(text) if hi < 0 else hi].split("\n") if not IMPORT_LINE.match(line)]
    # the words the edit wrote, outside import lines (an import being typed names a module, not a use)
    new_words = set(WORD.findall(text[p:ea])) & set(WORD.findall("\n".join(written))) - set(WORD.findall(before))
    known = {home.b.node_text(n) for n in caps["definition"] + caps["parameter"]}
    known |= {w for s, e in imports for w in WORD.findall(text[s:e])}
    out: list[Prediction] = []
    names = sorted(w for w in new_words - known if is_identifier(w))
    others = list(others) if names else []
    for name in names:
        for doc, got in others:
            stmts = [doc.b.node_text(n) for n in got["import"]]
            i = next((i for i, st in enumerate(stmts) if _own_name(st) == name), None)
            if i is None:
                continue
            statement = stmts[i]
            (s, e), after = _place(text, imports, statement, stmts[i - 1] if i else None)
            lines = _line_span(text, s, e)
            indent = text[text.rfind("\n", 0, s) + 1:s]
            if lines is None:  # several statements on the line: the new one goes on a line after it
                at, new = e, "\n" + indent + statement
            else:
                at, new = lines[1] if after else lines[0], indent + statement + "\n"
            out.append(Prediction(home.doc.uri, at, at, new, MISSING_CONFIDENCE,
                                  f"'{name}' is used but not imported", "import", "syntax", ""))
            break
        else:
            if re.search(rf"(?<![\w$.:]){re.escape(name)}(?![\w$])", text[p:ea]):  # a bare use, not 'm.name'
                joined = _from_definer(home, caps, name, others, language)
                out += [joined] if joined is not None else []
    return out


def _from_definer(home: ParsedDoc, caps: dict, name: str, others, language) -> Prediction | None:
    """The one other document that defines ``name`` at top level: when a statement of ``home``
    names its module (and lists names, not the module itself), the name joins it."""
    definers = [doc for doc, got in others if name in top_level(doc, got)]
    if len(definers) != 1:
        return None
    key = module_key(definers[0].doc.uri)
    used = code_words(home, caps["import"])
    stmt = next((st for st in statements(home, caps) if names_module(st[2], key)
                 and key not in {n for _, n in statement_names(st[2], used, language)}), None)
    if stmt is None:
        return None
    return join(home, stmt, name, used, language, f"'{name}' is defined in '{key}': it joins that import")


def _place(text: str, imports: list[tuple[int, int]], statement: str,
           anchor: str | None) -> tuple[tuple[int, int], bool]:
    """Where a new import statement goes: (the statement it goes next to, after it?). In the group
    (statements with no blank line between them) that holds ``anchor`` (the statement before it in
    the document it comes from), else the last group: at its sorted place when the group is sorted
    (gofmt, isort), else after the group."""
    groups = [[imports[0]]]
    for prev, cur in zip(imports, imports[1:], strict=False):
        gap = text[prev[1]:cur[0]]
        if gap.count("\n") > 1 or gap.strip(" \t\n;"):
            groups.append([])
        groups[-1].append(cur)
    group = next((g for g in groups if anchor is not None and any(text[s:e] == anchor for s, e in g)), groups[-1])
    texts = [text[s:e] for s, e in group]
    if len(group) >= MIN_SORTED_GROUP and texts == sorted(texts):
        i = bisect.bisect(texts, statement)
        if i < len(group):
            return group[i], False
    return group[-1], True


def import_edits(query: NextEditQuery, parsed: list[ParsedDoc], grammars: Grammars) -> list[Prediction]:
    edited = newest_edited(parsed)
    if not edited:
        return []
    home = edited[0]
    caps = captures(grammars, home)
    imports = _spans(home, caps["import"])
    if not imports:
        return []
    before = home.doc.history[0]
    p, eb, ea = diff_region(before, home.doc.text)
    in_place = before.count("\n", p, eb) == home.doc.text.count("\n", p, ea)
    old = parsed_before(grammars, home.doc, before)
    if old is None:
        return []
    unused = _unused(home, old, caps, captures(grammars, old)) if in_place else []
    others = (p for p in parsed if p is not home and p.doc.grammar == home.doc.grammar)
    return unused + _missing(home, before, caps, imports, ((p, captures(grammars, p)) for p in others),
                             grammars.language(home.doc.grammar))
