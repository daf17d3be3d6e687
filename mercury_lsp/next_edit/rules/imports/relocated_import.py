"""NE405 relocated-import: imports follow a definition moved to another document.

A top-level definition (the language's query file, ``symbols``: ``@definition`` whose node is on
an unindented line) that an edited document gained since its oldest text in the history is a
definition on the move. Its module is the document's module key (``import_lists``: ``fshelper``
for ``src/fshelper/mod.rs``). For every other open document of the grammar:

* **the old home is left** — another edited document lost the definition, and the document imports
  the name in a statement that names the old home's module: the name leaves that statement (it
  and its comma; the module is renamed instead when the name is all the statement brings:
  ``use internal::is_executable;`` -> ``use fshelper::is_executable;``), and joins a statement that
  names the new home's module, if the document has one;
* **a copy to be replaced** — the document itself defines the name with the very same text (the
  user pasted it into its new home; the old copy goes next, ``line_repeat``): the name joins the
  statement that names the new home's module.

How a name joins or leaves a statement's list: ``import_lists``. Nothing is offered for a
language whose imports bring packages rather than names (Go): its statements list no names.

**Why.** A definition moved between modules is imported from its old home everywhere; those
imports break once the old copy goes.

**Example.** ``is_executable`` moved from ``src/internal.rs`` to ``src/fshelper/mod.rs``:
``use internal::is_executable;`` -> ``use fshelper::is_executable;``.
"""

from __future__ import annotations

import re

from mercury_lsp.next_edit.import_lists import (
    QUOTED,
    WORD,
    code_words,
    join,
    module_key,
    names_module,
    statement_names,
    statements,
    top_level,
)
from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import JOIN_IMPORT, RELOCATED_IMPORT
from mercury_lsp.next_edit.symbols import captures, parsed_before
from mercury_lsp.next_edit.tree import ParsedDoc

MAX_EDITED_DOCS = 4  # edited documents read for definitions on the move (the newest edits)


def _leave(doc: ParsedDoc, stmt: tuple[int, int, str], name: str, old_key: str, new_key: str,
           used: set[str], language) -> Prediction | None:
    s, e, text = stmt
    names = [n for _, n in statement_names(text, used | {name}, language)]
    if names == [name]:  # all it brings: its module changes
        new = re.sub(rf"(?<![\w$]){re.escape(old_key)}(?![\w$])", new_key, text)
        return Prediction(doc.doc.uri, s, e, new, RELOCATED_IMPORT.value,
                          f"'{name}' moved to '{new_key}': the import follows", "import", "syntax", text)
    m = re.search(rf"(?<![\w$.:]){re.escape(name)}\s*,\s*|\s*,\s*(?<![\w$.:]){re.escape(name)}(?![\w$.:])", text)
    if m is None:
        return None
    return Prediction(doc.doc.uri, s + m.start(), s + m.end(), "", RELOCATED_IMPORT.value,
                      f"'{name}' moved to '{new_key}': it leaves this import", "import", "syntax", m.group())


def run(ctx: RuleContext) -> list[Prediction]:
    """The imports of the definitions on the move (module docstring)."""
    grammars, parsed = ctx.grammars, ctx.parsed
    edited = ctx.edited[:MAX_EDITED_DOCS]
    gained: dict[str, list[tuple[ParsedDoc, str]]] = {}
    lost: dict[str, list[ParsedDoc]] = {}
    for doc in edited:
        old = parsed_before(grammars, doc.doc, doc.doc.history[-1])
        if old is None:
            continue
        now, then = top_level(doc, captures(grammars, doc)), top_level(old, captures(grammars, old))
        for name in now.keys() - then.keys():
            gained.setdefault(name, []).append((doc, now[name]))
        for name in then.keys() - now.keys():
            lost.setdefault(name, []).append(doc)
    out: list[Prediction] = []
    for name, homes in sorted(gained.items()):
        if len(homes) != 1:
            continue
        home, definition = homes[0]
        new_key = module_key(home.doc.uri)
        old_keys = {module_key(d.doc.uri) for d in lost.get(name, []) if d.doc.grammar == home.doc.grammar}
        for doc in parsed:
            if doc is home or doc.doc.grammar != home.doc.grammar:
                continue
            caps = captures(grammars, doc)
            stmts = statements(doc, caps)
            if not stmts:
                continue
            language = grammars.language(doc.doc.grammar)
            used = code_words(doc, caps["import"])
            target = next((st for st in stmts if names_module(st[2], new_key)), None)
            leaving = next((st for st in stmts for k in old_keys if names_module(st[2], k)
                            and name in WORD.findall(QUOTED.sub(" ", st[2]))), None)
            if leaving is not None:
                k = next(k for k in old_keys if names_module(leaving[2], k))
                left = _leave(doc, leaving, name, k, new_key, used, language)
                out += [left] if left is not None else []
                if left is not None and left.end - left.start == len(leaving[2]):
                    continue  # the statement itself now names the new home
            elif top_level(doc, caps).get(name) != definition:
                continue
            joined = (join(doc, target, name, used, language, f"'{name}' moved: it is imported from its new home",
                           JOIN_IMPORT.value) if target is not None else None)
            out += [joined] if joined is not None else []
    return out


RULE = Rule("NE405", "relocated-import", "import", RELOCATED_IMPORT.value, run, __doc__)
