"""NE303 superseded-line: the user wrote a new version of a line next to the old one; the old
one goes.

**Example.** Writing ``version=version,`` a few lines from ``version='0.24',``, ``max_depth: Option<usize>,``
beside ``max_depth: usize,``, or a statement moved into a block above its old place, leaves the
old line behind; the next edit deletes it. A line *supersedes* another when both assign to, or
key, the same target (the same left-hand side and the same ``=``, ``:=`` or ``:``) at the same
indentation; the old one is within ``NEAR_LINES`` of the lines the newest edit wrote, outside
them and in the same block (no less indented line between), and the edit did not rewrite that
target in place (then it is an edit of the line, not a new version of it).
The whole old line is deleted (its line break included).

**Why.** Writing the new version first and deleting the old one after is how a line is most
often replaced; the old line left behind would assign the target twice.
"""

from __future__ import annotations

import re

from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import SUPERSEDED_LINE
from mercury_lsp.next_edit.text import diff_region, indent_of, shared_ends

NEAR_LINES = 8  # an old version further away than this is another statement, not the same one
MAX_WRITTEN_LINES = 12  # a larger edit is a rewrite: its lines are not read one by one
MIN_TARGET_CHARS = 2  # 'x = ...' next to 'x = ...' is too common to mean one replaced the other
# left-hand side (names, attributes, subscripts, quoted keys, lists of them; in a doctest too,
# after '>>> ') and the operator
TARGET = re.compile(r"^\s*(?:(?:>>>|\.\.\.)\s+)?((?:[\w$.\[\]'\"]+\s*,\s*)*[\w$.\[\]'\"]+)\s*(:=|=(?![=>])|:(?![:=]))")
RESERVED = frozenset(("else", "default", "try", "finally", "do", "case", "return", "if", "for", "while"))


def _target(line: str) -> tuple[str, str] | None:
    m = TARGET.match(line)
    if m is None:
        return None
    lhs = re.sub(r"\s+", "", m.group(1))
    if len(lhs.strip("'\"")) < MIN_TARGET_CHARS or lhs in RESERVED or lhs.isdigit():
        return None
    return lhs, m.group(2)


def run(ctx: RuleContext) -> list[Prediction]:
    """The old versions of the lines the newest edit wrote (module docstring)."""
    edited = sorted((d for d in ctx.query.docs if d.history), key=lambda d: -d.edited_at)
    if not edited:
        return []
    home = edited[0]
    before, text = home.history[0], home.text
    p, eb, ea = diff_region(before, text)
    lo = text.rfind("\n", 0, p) + 1
    ends = [x.find("\n", max(e - 1, lo)) for x, e in ((before, eb), (text, ea))]
    old_lines, new_lines = (x[lo:len(x) if e < 0 else e].split("\n") for x, e in zip((before, text), ends, strict=True))
    k, m = shared_ends(old_lines, new_lines)  # whole lines the region shares are not written
    written, replaced_lines = new_lines[k:len(new_lines) - m], old_lines[k:len(old_lines) - m]
    if not written or len(written) > MAX_WRITTEN_LINES:
        return []
    replaced = {_target(x) for x in replaced_lines}
    # a target the edit rewrote in place is not written again
    targets = {(indent_of(w), *t) for w in written if (t := _target(w)) is not None and t not in replaced}
    if not targets:
        return []
    first = text.count("\n", 0, lo) + k
    last = first + len(written) - 1
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    out = []
    for step, stop in ((-1, max(-1, first - NEAR_LINES - 1)), (1, min(len(lines), last + NEAR_LINES + 1))):
        i = first - 1 if step < 0 else last + 1
        between = None  # the least indentation of the lines passed (another block ends the search)
        while i != stop:
            line = lines[i]
            t = _target(line)
            indent = indent_of(line)
            if t is not None and (indent, *t) in targets and (between is None or between >= len(indent)):
                end = min(len(text), starts[i] + len(line) + 1)
                out.append(Prediction(home.uri, starts[i], end, "", SUPERSEDED_LINE.value,
                                      f"'{t[0]}' was written again just now: its old line goes", RULE.kind,
                                      "syntax", text[starts[i]:end]))
            if line.strip():
                between = len(indent) if between is None else min(between, len(indent))
            i += step
    return out


RULE = Rule("NE303", "superseded-line", "supersede", SUPERSEDED_LINE.value, run, __doc__)
