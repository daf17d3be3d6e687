"""NE402 missing-import: a name the user's edit uses but the document does not import is
imported.

**What.** The newest edit uses a name the document neither defines nor imports (the import
statements come from the language's query file, ``symbols``; names: ``import_lists``). When
another open document of the language imports exactly that name, the same import statement is
added to the document's imports, in the group of the statement before it there, at its sorted
place when that group is sorted (gofmt, isort), else after the group (``_place``). Else, when
exactly one other open document defines the name at top level and one of the document's
statements lists names from that document's module, the name joins that list. Nothing is
offered for a document without imports.

**Why.** A name used without its import does not resolve; the project's other files show which
statement brings it.

**Example.** Writing ``errors.New("x")`` in a Go file whose imports lack ``"errors"`` while
another open file imports it: ``"errors"`` joins the import block at its sorted place.
"""

from __future__ import annotations

import bisect
import re

from mercury_lsp.next_edit.import_lists import (
    WORD,
    code_words,
    edited_imports,
    join,
    line_span,
    module_key,
    names_module,
    own_name,
    statement_names,
    statements,
    top_level,
)
from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import JOIN_IMPORT, MISSING_IMPORT
from mercury_lsp.next_edit.symbols import captures
from mercury_lsp.next_edit.text import IMPORT_LINE, diff_region, is_identifier
from mercury_lsp.next_edit.tree import ParsedDoc

MIN_SORTED_GROUP = 2  # import statements that show an order (one alone is sorted by itself)


def run(ctx: RuleContext) -> list[Prediction]:
    """The imports the names the newest edit uses lack (module docstring)."""
    got = edited_imports(ctx.edited, ctx.grammars)
    if got is None:
        return []
    home = got.home
    others = (p for p in ctx.parsed if p is not home and p.doc.grammar == home.doc.grammar)
    return _missing(home, got.before, got.caps, got.imports, ((p, captures(ctx.grammars, p)) for p in others),
                    ctx.grammars.language(home.doc.grammar))


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
            i = next((i for i, st in enumerate(stmts) if own_name(st) == name), None)
            if i is None:
                continue
            statement = stmts[i]
            (s, e), after = _place(text, imports, statement, stmts[i - 1] if i else None)
            lines = line_span(text, s, e)
            indent = text[text.rfind("\n", 0, s) + 1:s]
            if lines is None:  # several statements on the line: the new one goes on a line after it
                at, new = e, "\n" + indent + statement
            else:
                at, new = lines[1] if after else lines[0], indent + statement + "\n"
            out.append(Prediction(home.doc.uri, at, at, new, MISSING_IMPORT.value,
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
    return join(home, stmt, name, used, language, f"'{name}' is defined in '{key}': it joins that import",
                JOIN_IMPORT.value)


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


RULE = Rule("NE402", "missing-import", "import", MISSING_IMPORT.value, run, __doc__)
