"""The steps of the next-edit pipeline that tie locations to the user's edit (no rule of their
own: the rules of ``rules.follow`` turn their locations into edits).

1. ``detect`` — **what changed**: a renamed identifier, a function's signatures before and after.
2. ``candidates`` — the locations the history ties (``find_candidates``: renames and signature
   changes), through ``locate`` (**where**: scope-aware occurrences of a renamed binding; the
   model-only path's likelihood drop), ``exports`` (a renamed definition in the documents that
   import or re-export it; the notes for strings) and ``calls`` (a changed signature's calls,
   their arguments rebuilt).
3. ``refill`` — **what** the model writes at the holes the syntax leaves.
"""
