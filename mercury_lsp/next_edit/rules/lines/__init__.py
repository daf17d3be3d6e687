"""NE3xx: edits read as whole lines — lines deleted or inserted again where the same lines stand
(NE301), the old copy of moved lines (NE302), the old version of a line written again (NE303),
a whitespace change continued (NE304). ``blocks`` reads an edit's whole lines."""
