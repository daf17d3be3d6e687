"""NE301 repeated-lines: whole lines the user just deleted or inserted, deleted or inserted again
where the same lines stand.

**Why.** The token rules (``rules.repeat``) anchor a change on its own line, so a whole line
removed or added has no anchor there; here the unit is the line (compared without its
indentation).

* **deleted lines** — the block of lines an edit deleted (``fmt.Println("err:", err)``, a
  debugging print; ``var minWidth = 40;``, a now-unused local) is deleted wherever the same block
  still stands, in the example's document and the open documents of its language — except in
  text the examples just wrote (the block moved, or written again: deleting it undoes the user)
  and, for imports of other libraries, where the document's code still uses a name they bring;
* **inserted lines** — the lines an edit inserted between two lines are inserted between every
  other such pair of lines, or, where no pair stands, above every other line like the one below
  them (``f.wroteHeader = true`` above ``fl := f.basicWriter.ResponseWriter.(http.Flusher)`` in
  each ``Flush`` method) or below every line like the one above; re-indented to the site. Import
  lines go into another document only where it uses a name they bring (``_uses_import``); lines
  using a name only some functions bind (a parameter: ``self.option_name = option_name``) go only
  into a function where that name stands (``_bound_at``);
* **a file's header** — header lines (comments, ``#![allow(...)]``, ``//go:build``, ``"use
  strict"``, ``from __future__``: ``blocks.HEADER_LINE``) inserted at the very start of a document
  go to the top of the other open documents of its language in the same folder that lack them,
  below their leading lines of the same kind (``blocks.header_site``).

**Example.** Deleting ``print("debug", x)`` from one function offers deleting the same line in
the function below it.

The examples are the newest edits across documents (``examples``). A block must be specific (at
least ``blocks.MIN_BLOCK_CHARS`` non-blank characters) and, when inserted, short
(``MAX_INSERTED_LINES``: a longer one is new code for its place); a block standing at more than
``nextEdit.repeatMaxSites`` places (inserted lines: ``MAX_INSERTION_SITES``) is too common to
mean the user's intent and is not offered.
"""

from __future__ import annotations

import re

from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import (
    LINES_OTHER_DOCUMENT_PENALTY,
    REPEAT_AGE_PENALTY,
    REPEATED_LINES,
)
from mercury_lsp.next_edit.rules.follow.extracted_value import BINDING
from mercury_lsp.next_edit.rules.lines.blocks import (
    block_sites,
    header_site,
    is_header,
    line_changes,
    written_just_now,
)
from mercury_lsp.next_edit.scopes import local_only_scopes, scope_of, word_in
from mercury_lsp.next_edit.text import IMPORT_LINE, KEYWORDS
from mercury_lsp.next_edit.tree import ParsedDoc

EXAMPLES = 3  # the newest edits read as examples (as the token rules)
# Lines that could be inserted at more places than this are boilerplate the user adds where it is
# needed, not one change to repeat everywhere (on the real-history benchmark's dev cases, this cap
# kept every hit of line insertions and removed 14 of their 27 false positives).
MAX_INSERTION_SITES = 2
# Inserted blocks of more non-blank lines than this are new code written for their place (a new
# method, a loop and its body): on the five real-history tuning sets, every one of the 9 sites
# offered for such blocks was a false positive, and every hit had at most 3 lines.
MAX_INSERTED_LINES = 3
# Words of an import line that name no imported thing.
QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`")  # a module's path, which names nothing of the code
# An import of the project's own modules: relative (Python, ECMAScript) or from the crate (Rust).
OWN_MODULE = re.compile(r"^\s*from\s+\.|['\"]\.\.?/|\b(?:crate|super|self)::")
USED_NAME = re.compile(r"(?<![\w$.])[A-Za-z_$][\w$]*")  # a name of its own, no attribute
IMPORT_WORDS = frozenset(("import", "from", "as", "use", "pub", "extern", "crate", "self", "super", "type", "include"))


def run(ctx: RuleContext) -> list[Prediction]:
    """Whole-line deletions and insertions of the newest edits, offered where the same lines stand."""
    opts, query = ctx.options, ctx.query
    out: list[Prediction] = []
    seen: set[tuple[str, int, int]] = set()
    examples = ctx.examples[:EXAMPLES]
    fresh = written_just_now(examples)
    for ex in examples:
        for change in line_changes(ex.before, ex.after):
            if sum(1 for x in change.inserted if x.strip()) > MAX_INSERTED_LINES:
                continue
            if is_header(change):  # a file's header: at the top of its siblings that lack it
                found = [(d, s) for d in ctx.same_language(ex.doc) if d.uri != ex.doc.uri and _siblings(d.uri, ex.doc.uri)
                         and (s := header_site(change, d)) is not None]
                limit = opts.repeat_max_sites
            else:
                names: dict[str, list[str]] = {}  # per document: the inserted lines' function-only names
                found = [(d, s) for d in ctx.same_language(ex.doc) for s in block_sites(change, d)
                         if not (change.deleted and any(s[0] < hi and lo < s[1] for lo, hi in fresh.get(d.uri, ())))
                         and (d.uri == ex.doc.uri or not change.inserted or _uses_import(change.inserted, d.text))
                         and (not change.inserted or _bound_at(change.inserted, ctx.by_uri.get(d.uri), s[0], names))
                         and not (change.deleted and _imports_used(change.deleted, d.text))]
                limit = opts.repeat_max_sites if change.deleted else MAX_INSERTION_SITES
            if not found or len(found) > limit:
                continue
            for d, (s, e, new) in found:
                if (d.uri, s, e) in seen:
                    continue
                seen.add((d.uri, s, e))
                conf = REPEATED_LINES.value - REPEAT_AGE_PENALTY.value * ex.age
                where = ""
                if d.uri != query.cursor_uri:
                    conf -= LINES_OTHER_DOCUMENT_PENALTY.value
                    where = " (another document)"
                what = "deleted" if change.deleted else "inserted"
                out.append(Prediction(d.uri, s, e, new, round(max(conf, 0.0), 6),
                                      f"repeated edit: the same lines {what} here{where}", RULE.kind, "syntax",
                                      d.text[s:e]))
    out.sort(key=lambda p: (-p.confidence, abs(p.start - query.cursor)))
    return out[: opts.repeat_max_results]


def _bound_at(inserted: tuple[str, ...], parsed: ParsedDoc | None, at: int, names: dict[str, list[str]]) -> bool:
    """Every name the inserted lines use that only some functions of the document bind (a
    parameter: ``self.option_name = option_name`` in the ``__init__`` that takes it) stands in
    the function where they would go (bound there, or at least used: a Go type switch's ``s`` is
    bound in a way the scopes do not read); the names the lines bind themselves aside (``let diff
    = ...`` binds ``diff`` wherever it goes). ``names`` keeps each document's such names for the
    change's other sites."""
    if parsed is None:
        return True
    local = names.get(parsed.doc.uri)
    if local is None:
        own = {m.group("name") for line in inserted if (m := BINDING.match(line)) is not None}
        used = {m.group() for m in USED_NAME.finditer(QUOTED.sub('""', "\n".join(inserted)))} - own - KEYWORDS
        local = names[parsed.doc.uri] = [n for n in sorted(used) if local_only_scopes(parsed, n)]
    if not local:
        return True
    lo, hi = scope_of(parsed, at) or (0, len(parsed.doc.text))
    return all(word_in(n, parsed.doc.text[lo:hi]) for n in local)


def _siblings(a: str, b: str) -> bool:
    """Two documents of one folder."""
    return a.rsplit("/", 1)[0] == b.rsplit("/", 1)[0]


def _imports_used(deleted: tuple[str, ...], text: str) -> bool:
    """Deleted lines that are all imports of other libraries, of which the document's code still
    uses a name: the import stays where it is still needed (``from pathlib import Path`` deleted
    from a module that no longer uses ``Path`` is no deletion for a module that does — it would
    break it). An import of the project's own module (``from .errors import ExpiredError``) goes
    with the user removing that name from the project, its uses next (on heldout4, 1 hit)."""
    lines = [x for x in deleted if x.strip()]
    return (bool(lines) and all(IMPORT_LINE.match(x) and not OWN_MODULE.search(x) for x in lines)
            and _uses_import(deleted, text))


def _uses_import(inserted: tuple[str, ...], text: str) -> bool:
    """Inserted lines that are imports go into another document only where its code (its lines
    that import nothing) uses a name they bring: ``import hashlib`` written in one module is no
    change for the next module to repeat unless that module uses ``hashlib`` (then its import is
    missing; an unused import is a lint error). Lines that are not all imports always go (on
    the six real-history sets, the 7 imports inserted into another document that used none of
    their names were all false positives; the 2 into one that used it, a hit and a later hunk)."""
    lines = [x for x in inserted if x.strip()]
    if not lines or not all(IMPORT_LINE.match(x) for x in lines):
        return True
    names = {w for x in lines for w in re.findall(r"[A-Za-z_$][\w$]*", QUOTED.sub("", x))} - IMPORT_WORDS
    code = "\n".join(x for x in text.split("\n") if not IMPORT_LINE.match(x))
    return any(word_in(n, code) for n in names)


RULE = Rule("NE301", "repeated-lines", "line-repeat", REPEATED_LINES.value, run, __doc__)
