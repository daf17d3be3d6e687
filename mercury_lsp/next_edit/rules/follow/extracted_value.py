"""NE104 extracted-value: a value the user just named — the same expression elsewhere becomes
the name.

**Example.** Writing ``number_types = (int, long, float)`` leaves ``isinstance(x, (int, long, float))`` to read
``isinstance(x, number_types)``; ``const text = await response.text();`` leaves
``parseJson(await response.text())`` to read ``parseJson(text)``. An expression the edit replaced
by the new name on another of its lines, and which the new value refines, follows too: ``if
dent.is_dir() {`` -> ``if is_normal_dir {`` under ``let is_normal_dir = !dent.file_type().is_symlink()
&& dent.is_dir();`` makes the function's next ``dent.is_dir()`` read ``is_normal_dir``. The newest edits (``examples``)
are read for lines they wrote that bind a *new* name (absent from the text before the edit) to an
expression: ``name = expr``, ``name := expr``, ``const|let|var name[: type] = expr`` (a string
spelling the name, ``bench("duplicates", ...)``, does not make it old). Every other
occurrence of the expression (token for token, any spacing) in code of the same document is
replaced by the name: inside the enclosing function and after the binding for a local, anywhere in
the document for a binding at the top level.

An expression must be specific: at least ``MIN_EXPR_CHARS`` non-blank characters (or a regular
expression literal, ``/; */``) and more than a bare name or number (those are renames, or values that merely agree). More than
``nextEdit.repeatMaxSites`` occurrences: the name is not meant for all of them, none is offered.

**Why.** Naming a value is half of an extract-variable refactoring; the other half is using the
name where the value was spelt out.
"""

from __future__ import annotations

import re

from mercury_lsp.next_edit.examples import to_current
from mercury_lsp.next_edit.prose import non_code
from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import EXTRACTED_VALUE, REPEAT_AGE_PENALTY
from mercury_lsp.next_edit.scopes import scope_of
from mercury_lsp.next_edit.text import QUOTED, TOKEN, diff_region, line_bounds

EXAMPLES = 3  # the newest edits read (as the token rules)
MIN_EXPR_CHARS = 8  # a shorter expression ('x + 1', '[]') agrees with unrelated code by chance
BINDING = re.compile(
    r"^[ \t]*(?:(?:export\s+)?(?:const|let|var|final|auto)\s+(?:mut\s+)?)?"
    r"(?P<name>[A-Za-z_$][\w$]*)\s*(?::\s*[^=\n]+?)?\s*(?::=|=(?![=>]))\s*(?P<expr>[^\n]+?)\s*;?\s*$")
# A regular expression literal (JavaScript's ``/; */``) is specific however short: no other code
# spells it by chance.
REGEX_LITERAL = re.compile(r"/(?![*/])(?:[^/\\\n\[]|\\.|\[(?:[^\]\\\n]|\\.)*\])+/[dgimsuvy]*\Z")
BARE = re.compile(r"[\w$.]+\Z")  # a name, an attribute chain or a number: not an expression worth naming


def stands(name: str, text: str) -> bool:
    """``name`` stands in ``text`` as a name of its own, not as an attribute (``text`` is a new
    name beside ``response.text()``)."""
    return re.search(rf"(?<![\w$.]){re.escape(name)}(?![\w$])", text) is not None


def _expr_regex(expr: str) -> re.Pattern | None:
    """The expression's tokens in order, any spacing between them, whole tokens at the ends."""
    toks = TOKEN.findall(expr)
    if not toks:
        return None
    parts = [re.escape(toks[0])]
    for a, b in zip(toks, toks[1:], strict=False):
        word = (a[-1].isalnum() or a[-1] in "_$") and (b[0].isalnum() or b[0] in "_$")
        parts.append((r"\s+" if word else r"\s*") + re.escape(b))
    head = r"(?<![\w$.])" if toks[0][0].isalnum() or toks[0][0] in "_$" else ""
    tail = r"(?![\w$])" if toks[-1][-1].isalnum() or toks[-1][-1] in "_$" else ""
    return re.compile(head + "".join(parts) + tail)


def bindings(before: str, after: str) -> list[tuple[str, str, int]]:
    """(name, expression, offset of the line in ``after``) of the new bindings an edit wrote."""
    p, eb, ea = diff_region(before, after)
    if p == eb == ea:
        return []
    lo, hi = line_bounds(after, p, ea)
    replaced = before[line_bounds(before, p, eb)[0]:line_bounds(before, p, eb)[1]]
    out = []
    pos = lo
    for line in after[lo:hi].split("\n"):
        m = BINDING.match(line)
        if m is not None:
            name, expr = m.group("name"), m.group("expr").rstrip(";").strip()
            if ((len(re.sub(r"\s", "", expr)) >= MIN_EXPR_CHARS or REGEX_LITERAL.match(expr)) and not BARE.match(expr)
                    and not stands(name, QUOTED.sub('""', before)) and not stands(name, expr)
                    and re.sub(r"\s", "", expr) not in re.sub(r"\s", "", replaced)):  # a renamed binding is no new value
                out.append((name, expr, pos))
                out += [(name, old, pos) for old in _stood_for(name, expr, replaced, after[lo:hi])]
        pos += len(line) + 1
    return out


def _stood_for(name: str, expr: str, old: str, new: str) -> list[str]:
    """The expressions the edit replaced by ``name`` in its other lines, when the new value
    refines them (``if dent.is_dir() {`` -> ``if is_normal_dir {`` under ``let is_normal_dir =
    !dent.file_type().is_symlink() && dent.is_dir();``): their other occurrences mean the new
    value too."""
    out = []
    olds = old.split("\n")
    for line in new.split("\n"):
        if not stands(name, line) or BINDING.match(line):
            continue
        for was in olds:
            head, was_end, line_end = diff_region(was, line)
            cut, put = was[head:was_end], line[head:line_end]
            if put == name and len(re.sub(r"\s", "", cut)) >= MIN_EXPR_CHARS and not BARE.match(cut) \
                    and re.sub(r"\s", "", cut) in re.sub(r"\s", "", expr) and cut not in out:
                out.append(cut)
    return out


def run(ctx: RuleContext) -> list[Prediction]:
    """The other occurrences of the values the newest edits named (module docstring)."""
    out: list[Prediction] = []
    seen: set[tuple[str, int]] = set()
    for ex in ctx.examples[:EXAMPLES]:
        doc, home = ex.doc, ctx.by_uri.get(ex.doc.uri)
        text = doc.text
        for name, expr, at in bindings(ex.before, ex.after):
            line = to_current(ex, at)
            rx = _expr_regex(expr)
            if line is None or rx is None:
                continue
            line_end = line_bounds(text, line, line)[1]
            scope = scope_of(home, line)
            lo, hi = (line_end, scope[1]) if scope is not None else (0, len(text))
            sites = [(m.start(), m.end()) for m in rx.finditer(text, lo, hi)
                     if not line <= m.start() < line_end and not non_code(home, m.start())]
            if not sites or len(sites) > ctx.options.repeat_max_sites:
                continue
            for s, e in sites:
                if (doc.uri, s) in seen:
                    continue
                seen.add((doc.uri, s))
                conf = EXTRACTED_VALUE.value - REPEAT_AGE_PENALTY.value * ex.age
                out.append(Prediction(doc.uri, s, e, name, round(max(conf, 0.0), 6),
                                      f"'{name}' names this value now", RULE.kind, "syntax", text[s:e]))
    return out


RULE = Rule("NE104", "extracted-value", "repeat", EXTRACTED_VALUE.value, run, __doc__)
