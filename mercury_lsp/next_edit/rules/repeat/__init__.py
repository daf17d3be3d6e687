"""NE2xx: repeated-edit synthesis — the user's last edit(s) generalised and offered at matching sites.

After the after-the-fact style of IntelliCode's repeated edits (Miltner et al., OOPSLA 2019):
the newest ``search.EXAMPLES`` edits of all the open documents (``examples``: a change repeated
in a commit is often not the very last edit) are read as token-level changes — each a run of
deleted tokens replaced by a run of inserted ones, with up to ``tokens.CONTEXT_TOKENS``
unchanged tokens of the same line on each side as its anchor (``tokens.TokenRule``). Tokens are
words (identifiers, numbers) and single punctuation characters, so a rule does not depend on
spacing. Each token rule goes to the family's rules (``search``):

* ``repeated-rename`` (NE201) — one identifier replaced by another in code: its other
  occurrences in the edited binding's scope;
* ``prose-word-rename`` (NE202) — a word of a docstring or comment renamed to a name the code
  uses: the same word in the rest of that string or comment run;
* ``affix-rename`` (NE203) — a definition renamed by dropping a prefix or suffix: its siblings
  under the same whole anchor;
* ``repeated-pattern`` (NE204) — anything else: every other place whose tokens read
  ``anchor-before + deleted + anchor-after``;
* ``next-pattern-site`` (NE205) — a pattern matching too many places: its next place below the
  cursor only.

Their sites are ranked together (``search``: the age of their example, the cursor's document
first, the length of the anchor they matched — structural similarity —, then the distance to the
cursor), taken once per place, and at most ``nextEdit.repeatMaxResults`` of them are offered.
``grouped-parameters`` (NE206) is of the family's codes but not of its token search: it reads a
grouping of parameters from the syntax (``a T, b T`` -> ``a, b T``) and finds its places in the
parameter lists. ``shaped-repeat`` (NE207) is not of the token search either: the newest
rewrite of whole lines at the nearest lines below that read as its old ones but for a name or
two (its own ``holes``). ``patterns`` turns a token rule into a regex over a document and its backed-off variants.
"""
