"""NE205 next-pattern-site: of a repeated change that matches too many places, its next place below
the cursor alone.

**What.** When the most specific variant of a ``repeated-pattern`` rule (NE204) matches more
than ``nextEdit.repeatMaxSites`` places and no variant gives a specific set, the first of its
places below the cursor in the cursor's document is offered alone, ranked low
(``confidence.NEXT_PATTERN_SITE``).

**Why.** A change the user makes at many places is made top to bottom, so its next place is the
likeliest next edit even when the change is too common to offer everywhere.

**Example.** ``None`` -> ``false`` typed in one of forty ``return None`` lines: only the next
``return None`` below the cursor is offered.
"""

from __future__ import annotations

from mercury_lsp.next_edit.query import NextEditQuery
from mercury_lsp.next_edit.rules.base import Rule, family_member
from mercury_lsp.next_edit.rules.confidence import NEXT_PATTERN_SITE
from mercury_lsp.next_edit.rules.repeat.patterns import Site
from mercury_lsp.next_edit.rules.repeat.tokens import FAMILY


def pick(found: list[Site], query: NextEditQuery, age: int) -> Site | None:
    """Of a rule's too many sites, the first below the cursor in its document (module docstring)."""
    below = [s for s in found if s.doc.uri == query.cursor_uri and s.start >= query.cursor]
    if not below:
        return None
    site = min(below, key=lambda s: s.start)
    site.age, site.code = age, RULE.code
    return site


RULE = Rule("NE205", "next-pattern-site", "repeat", NEXT_PATTERN_SITE.value, family_member(FAMILY, "NE205"),
            __doc__)
