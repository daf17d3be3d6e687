"""The user's recent edits as examples, newest first, across every document of the query.

Repeated-edit rules (``repeat``, ``line_repeat``) learn from the last few edits. A commit's
repeated change is often not the very last edit: a version bumped in ``docs/conf.py``, then a
regex fixed in ``setup.py``, then the same version bump in ``setup.py``; an import added in one
test file, then the call it serves, then the same two edits in the next test file. So the
examples are the newest ``limit`` edit records of all the documents, ordered by the time of each
record (``DocState.edit_times``; a document without them has all its records at ``edited_at``).

Each example is one record: the document's text before and after it. ``to_current`` maps an
offset of the text after the record to the document's current text through the newer records of
that document (None when a newer record rewrote that place).
"""

from __future__ import annotations

from dataclasses import dataclass

from mercury_lsp.next_edit.query import DocState, NextEditQuery
from mercury_lsp.next_edit.text import diff_region


@dataclass(frozen=True)
class Example:
    doc: DocState
    before: str
    after: str
    index: int  # 0: the document's newest record
    age: int  # 0: the newest edit of all


def recent_edits(query: NextEditQuery, limit: int) -> list[Example]:
    """The newest ``limit`` edit records across the query's documents, newest first."""
    records = []
    for d in query.docs:
        texts = (d.text, *d.history)
        for i in range(len(texts) - 1):
            when = d.edit_times[i] if i < len(d.edit_times) else d.edited_at
            records.append((-when, i, d, texts[i + 1], texts[i]))
    records.sort(key=lambda r: (r[0], r[1]))
    return [Example(d, before, after, i, age) for age, (_, i, d, before, after) in enumerate(records[:limit])]


def to_current(ex: Example, offset: int) -> int | None:
    """``offset`` in ``ex.after`` as an offset in the document's current text (None: rewritten)."""
    texts = (ex.doc.text, *ex.doc.history)
    for j in range(ex.index - 1, -1, -1):
        p, eb, ea = diff_region(texts[j + 1], texts[j])
        if offset <= p:
            continue
        if offset < eb:
            return None
        offset += ea - eb
    return offset
