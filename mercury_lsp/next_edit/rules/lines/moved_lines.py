"""NE302 moved-lines: lines the user just wrote again elsewhere leave their old copy behind.

**Example.** Pasting ``process.stdout.write(this.helpInformation());`` two lines up, ``wd, err := os.Getwd()``
and its error check out of the block they were in, or a function into another file (a Rust
``is_executable`` moved to ``fshelper.rs``): the next edit deletes the old copy. An edit that
inserted a block of lines (compared without indentation) that stands at exactly one other place
— in its document or an open document of its language — offers deleting that other copy. The
block must be specific (``MIN_MOVED_CHARS`` non-blank characters): a copied ``}`` or ``return
nil`` is not a move, nor is a block right next to its copy (the editor's "duplicate line": the
user is about to change the copy). A copy in another document must be a block of lines and no
imports (every file of a package imports the same things; an import written again in its own
document is moved: ``import EventEmitter = require(...)`` above, the old one below goes). One line
is moved within its function only (``self.option_name = option_name`` written in one class's
``__init__`` leaves another class's alone). Two copies elsewhere, or none, give nothing (which
one would go?), and a copy the newest edits wrote is none (the user wrote the same lines at two
places: a change repeated, ``@pytest.mark.benchmark()`` above two tests).

**Why.** A move is written as a copy first; the old copy left behind would be a duplicate the
user deletes next. ``superseded-line`` (NE303) covers a line written again *changed* (the same
assignment target).
"""

from __future__ import annotations

from mercury_lsp.next_edit.examples import to_current
from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import LINES_OTHER_DOCUMENT_PENALTY, MOVED_LINES
from mercury_lsp.next_edit.rules.lines.blocks import LineChange, block_sites, line_changes, written_just_now
from mercury_lsp.next_edit.scopes import scope_of
from mercury_lsp.next_edit.statements import widen_deletion
from mercury_lsp.next_edit.text import IMPORT_LINE

EXAMPLES = 2  # a block pasted, then its old copy's neighbour edited first: both newest edits count
# shorter lines ('return nil', '}') stand at many places for other reasons; at 16 an import moved
# up its file counts ('use std::result;'): on the six tuning sets 24 -> 16 found one more move
# (heldout3), no false positive, and 10 found the same
MIN_MOVED_CHARS = 16
# A copy in another document must be this many non-blank lines: one line standing in two files
# is common (a call, a constant); a function or a block of them moved between files is not.
MIN_LINES_ACROSS = 2
# The newest edits whose text is the user's own: a copy there is no old copy (the same decorator
# written above two tests is a change repeated, not a move) — as repeated-lines' deletions.
FRESH_EXAMPLES = 3


def run(ctx: RuleContext) -> list[Prediction]:
    """Deleting the old copy of a block the newest edits wrote again (module docstring)."""
    trees = ctx.by_uri
    out: list[Prediction] = []
    fresh = written_just_now(ctx.examples[:FRESH_EXAMPLES])
    for ex in ctx.examples[:EXAMPLES]:
        docs = ctx.same_language(ex.doc)
        for change in line_changes(ex.before, ex.after):
            block = tuple(x.strip() for x in change.inserted)
            while block and not block[-1]:
                block = block[:-1]
            while block and not block[0]:
                block = block[1:]
            if sum(len(x) for x in block) < MIN_MOVED_CHARS:
                continue  # too short
            imports = all(IMPORT_LINE.match(x) for x in block if x)  # every file of a package imports them
            new = to_current(ex, change.at)
            if new is None:  # a newer edit rewrote the pasted lines
                continue
            new_end = new + sum(len(x) + 1 for x in change.inserted)
            copies = [(d, s, e) for d in docs for s, e, _ in block_sites(LineChange(block, (), "", "", ""), d)
                      if not (d is ex.doc and s <= new_end and new <= e)  # itself, or a line duplicated
                      and (d is ex.doc or (sum(1 for x in block if x) >= MIN_LINES_ACROSS and not imports))]
            if len(copies) != 1 or any(s < hi and lo < e for d, s, e in copies for lo, hi in fresh.get(d.uri, ())):
                continue  # none, two (which would go?), or one the user wrote just now: a change repeated
            d, s, e = copies[0]
            if sum(1 for x in block if x) == 1 and d is ex.doc and ex.doc.uri in trees \
                    and scope_of(trees[d.uri], s) != scope_of(trees[d.uri], new):
                continue  # one line written in another function: the same statement twice, not a move
            s, e = widen_deletion(d.text, s, e)
            where = "" if d.uri == ctx.query.cursor_uri else " (another document)"
            conf = MOVED_LINES.value - (LINES_OTHER_DOCUMENT_PENALTY.value if where else 0.0)
            out.append(Prediction(d.uri, s, e, "", conf, f"these lines were written again just now: the old copy goes{where}",
                                  RULE.kind, "syntax", d.text[s:e]))
    return out


RULE = Rule("NE302", "moved-lines", "move", MOVED_LINES.value, run, __doc__)

