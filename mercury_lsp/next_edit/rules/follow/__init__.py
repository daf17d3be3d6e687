"""NE1xx: a changed definition followed to the places it reaches — a renamed binding's other
occurrences (NE101), a changed signature's calls (NE102), arguments naming what the edit
removed (NE103), a value the user named (NE104), statements, imports and export lists naming
what the user deleted (NE105, NE106, NE107; ``deleted`` finds those names)."""
