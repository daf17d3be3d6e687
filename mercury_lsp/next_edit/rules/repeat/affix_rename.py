"""NE203 affix-rename: a definition renamed by dropping a prefix or suffix renames its siblings
under the same whole anchor.

**What.** A function, method or type renamed at its definition (a definition's keyword just
before the name, ``DEFINED_HERE``) by a prefix or suffix of at least
``tokens.MIN_AFFIX_CHARS`` characters dropped: the names of the document under the same whole
anchor (both sides of the change) that carry the same affix lose it too. Added affixes are left
alone (``new_`` added to one method is no convention for its siblings), and so are parameters,
locals and attributes. Counted with ``repeated-rename``'s sites against
``nextEdit.repeatMaxSites``.

**Why.** Dropping a naming convention (``get``) is made at every sibling, one definition at a
time.

**Example.** ``func (c *Command) getOutOrStdout()`` -> ``func (c *Command) OutOrStdout()``:
``func (c *Command) getOutOrStderr()`` becomes ``func (c *Command) OutOrStderr()``.
"""

from __future__ import annotations

import re

from mercury_lsp.next_edit.prose import non_code
from mercury_lsp.next_edit.query import DocState
from mercury_lsp.next_edit.rules.base import Rule, family_member
from mercury_lsp.next_edit.rules.confidence import PATTERN
from mercury_lsp.next_edit.rules.repeat.patterns import Site, pattern_regex
from mercury_lsp.next_edit.rules.repeat.tokens import FAMILY, WILD, TokenRule, affix_change
from mercury_lsp.next_edit.tree import ParsedDoc

# A definition's keyword just before a name (``func (c *Command) name``, ``def name``).
DEFINED_HERE = re.compile(r"\b(?:func|def|fn|function|class|struct|type|interface|enum|trait)\s+(?:\([^)\n]*\)\s*)?\Z")


def sites(rule: TokenRule, home: DocState, parsed: ParsedDoc | None) -> list[Site]:
    """A function, method or type renamed at its definition by a prefix or suffix dropped
    (``getOutOrStdout`` -> ``OutOrStdout``): the names under the same whole anchor in the document
    (``func (c *Command) getOutOrStderr()``) get the same change. (Added affixes are left alone:
    ``new_`` added to one method is no convention for its siblings.)"""
    old, new = rule.deleted[0], rule.inserted.strip()
    change = affix_change(old, new) if len(new) < len(old) else None  # a convention dropped ('get')
    at = rule.edit_span[0] + len(rule.inserted) - len(rule.inserted.lstrip())
    if change is None or not (rule.lead and rule.trail) or not DEFINED_HERE.search(home.text, 0, at):
        return []  # only a definition's name: a parameter, local or attribute says nothing of its siblings
    out = []
    for m in pattern_regex(rule.lead, (WILD,), rule.trail, True).finditer(home.text):
        name = m.group(2).strip()
        new = change(name) if name != rule.inserted.strip() else None
        if new is not None and not non_code(parsed, m.start(2)):
            s = m.end(1) + len(m.group(2)) - len(m.group(2).lstrip())
            out.append(Site(home, s, s + len(name), new, len(rule.lead) + len(rule.trail), False, code=RULE.code))
    return out


RULE = Rule("NE203", "affix-rename", "repeat", PATTERN.value, family_member(FAMILY, "NE203"),
            __doc__)
