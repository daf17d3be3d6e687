"""Every confidence and penalty of the next-edit rules, with the reason beside each (one table).

Confidences rank the edits of one answer (highest first) and tell a client how sure the daemon
is; they are not calibrated probabilities. Unless a reason quotes a measurement, a level was set
by hand from the order the rules should rank in: the user's own text at a place the syntax ties
first, then what the syntax rebuilds, then repeated patterns, then guesses. The model's own
edits carry the model's confidence (``refill``), not a level of this table.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Level:
    value: float
    reason: str


# ---------------------------------------------------------------------------- follow-ups (NE1xx)
TIED_RENAME = Level(0.8, "the user's own new name at an occurrence the syntax ties to the renamed binding")
RENAMED_MENTION = Level(0.5, "the old name in a comment or docstring of a renamed definition's document: "
                        "prose may speak of the old thing on purpose (a changelog, a deprecation note)")
SIGNATURE_CALL = Level(0.6, "a call's arguments rebuilt from the syntax: the argument copied from the "
                            "user's call may not fit every call")
SIGNATURE_PLACEHOLDER = Level(0.3, "a call the signature change reaches, its new argument a placeholder "
                                   "named after its parameter, for the user to fill")
DROPPED_ARGUMENT = Level(0.5, "the argument names a parameter or local the edit removed; the call may "
                              "have meant another thing of that name")
EXTRACTED_VALUE = Level(0.55, "the expression, token for token, that the user just bound to a new name")
REMOVED_USE = Level(0.45, "a statement using a name the user deleted: below the other rules, the user "
                          "may be moving the definition rather than deleting it")
REMOVED_IMPORT_NAME = Level(0.45, "a deleted name left in another document's import list (as REMOVED_USE)")
REMOVED_EXPORT = Level(0.5, "a deleted or no longer imported name left in its own module's export list: "
                           "every importer breaks")
EXTRACTED_FUNCTION = Level(0.55, "code token for token the body of the helper the user just wrote, its "
                                  "parameters bound to what the copy has in their place (as EXTRACTED_VALUE)")
ADOPTED_NAME = Level(0.5, "a use of the name the user switched away from at one place, switched too: the "
                          "user may mean the old name to stay at some")
IMPLEMENTED_MEMBER = Level(0.45, "a stub of the member an interface gained, in a type that implements it: the "
                                  "user fills it in (or the member gets a default instead)")
NAMED_FIELDS = Level(0.6, "a positional use of a type whose fields the user just named: the position's name "
                          "is read from the new definition")
DOCUMENTED_PARAMETER = Level(0.5, "the parameter a documentation tag names, renamed as the user renamed the tag: "
                                  "the user may have fixed the documentation alone")
SIBLING_ENTRY = Level(0.5, "a list of the new member's siblings, its entry respelt from a sibling's: the list "
                           "may be one the member is meant to stay out of")
THREADED_PARAMETER = Level(0.4, "the call in a function's body passing its other parameters along, given the "
                               "parameter the user added: the user may mean it for other code")
SIBLING_OTHER_DOCUMENT_PENALTY = Level(0.15, "a sibling list in another document than the cursor's: less often "
                                             "the user's next stop than one in the same file")

# ---------------------------------------------------------------------------- repeated edits (NE2xx)
REPEAT_RENAME = Level(0.8, "a repeated rename ranks as the syntax's renames: the same new name, at the "
                           "occurrences of the same binding's scope")
PATTERN = Level(0.5, "a pattern site with no anchor matched; each anchor token it matched adds "
                     "PATTERN_ANCHOR_BONUS")
PATTERN_ANCHOR_BONUS = Level(0.05, "per anchor token matched: a longer shared context is a closer "
                                   "likeness to the example (structural similarity)")
PATTERN_CAP = Level(0.95, "however long its anchor, a repeated pattern stays a generalisation of the "
                          "user's edit, never certain")
HOLE_REPEAT = Level(0.45, "the last change repeated where the same tokens stand but for the one name, string or "
                         "number it carried: the place's own is filled in")
NEXT_PATTERN_SITE = Level(0.35, "the next place below the cursor of a change that matches too many places: "
                                "a guess at where the user goes next")
GROUPED_PARAMETERS = Level(0.5, "another signature spelling one type for each of consecutive parameters, grouped "
                                "as the user grouped one: the user may mean some signatures to stay as they are")
SHAPED_REPEAT = Level(0.45, "the next lines below that read as the ones the user rewrote, a name or two "
                            "apart: a sibling the user may mean to leave as it is")
EXTENDED_LIST = Level(0.5, "the names the user added to one list of a definition's names (derives, bases), "
                           "appended where a sibling list lacks them: some siblings may be meant to differ")
COPIED_STRING = Level(0.6, "a string literal whose whole text is the one the user just rewrote: a copy (an "
                           "asserted message), unless the two were meant to differ")
REPEAT_AGE_PENALTY = Level(0.1, "per example older than the newest edit: the user's latest intent ranks first "
                                "(repeated edits, lines, named values)")
REPEAT_OTHER_DOCUMENT_PENALTY = Level(0.3, "a repeated token edit in another document than the cursor's: "
                                           "a public rename across files ranks below in-file edits")

# ---------------------------------------------------------------------------- lines (NE3xx)
REPEATED_LINES = Level(0.5, "the same whole lines deleted or inserted where the same lines stand")
MOVED_LINES = Level(0.5, "the one other copy of lines the user just wrote again elsewhere")
SUPERSEDED_LINE = Level(0.55, "a nearby line assigning the same target in the same block: the user wrote its "
                              "new version")
SIBLING_ATTRIBUTE = Level(0.5, "the user's attribute line above a sibling definition of the same shape: the user "
                               "may mean it for some of them only")
LINES_OTHER_DOCUMENT_PENALTY = Level(0.2, "repeated or moved lines in another document than the cursor's")
WHITESPACE = Level(0.5, "the next lines re-indented, stripped or converted as the user's edit did above them")
RESPACED_TOKENS = Level(0.5, "two tokens spaced as the user just respaced them elsewhere: a reformat is "
                             "made everywhere, but the user may have fixed the one place alone")

# ---------------------------------------------------------------------------- imports (NE4xx)
UNUSED_IMPORT = Level(0.6, "the edit removed the last use of the imported name, rewriting lines in place")
MISSING_IMPORT = Level(0.5, "the statement another open document uses to import the same name")
JOIN_IMPORT = Level(0.5, "a name joining the list of a statement that already imports from its module")
UNIMPORTED_RENAME = Level(0.6, "the name's import was replaced by one of the same name with an affix "
                               "dropped or added: its uses follow")
UNIMPORTED_USE = Level(0.5, "a use of a name whose import the user removed, unwrapped or deleted with its "
                            "statement")
RELOCATED_IMPORT = Level(0.5, "an import following a definition that moved to another module")

# ---------------------------------------------------------------------------- the cursor's line (NE5xx)
CUT_SHORT_NAME = Level(0.7, "the one name of the document that extends the identifier cut short at the cursor")
IMPLIED_NAME = Level(0.6, "the one name of the first tier (new in the edits, the qualifier's members, the other "
                          "documents' names) that extends the word at the cursor: wider than the document's own")
IMPLIED_RENAME = Level(0.5, "a use of the identifier the user is retyping as the finished name: the user may "
                            "mean to keep it at some")
LINE_LEFTOVER = Level(0.7, "the keyword of the very argument the user renamed, its owner renamed too: the edit's "
                           "own half left undone")
LIKE_LINE_ENDING = Level(0.6, "the ending of the document's lines that start like the half-typed one, "
                              "checked by the parse")
CLOSING_BRACKET = Level(0.6, "the closer of a bracket the edit opened before a block, after that block, "
                             "checked by the parse")

TABLE: dict[str, Level] = {name: value for name, value in dict(globals()).items() if isinstance(value, Level)}


def markdown_table() -> str:
    """The levels as a Markdown table, in the order above (the one in docs/next-edit.md)."""
    rows = ["| level | value | why |", "| --- | --- | --- |"]
    rows += [f"| `{name}` | {level.value:g} | {level.reason} |" for name, level in TABLE.items()]
    return "\n".join(rows)
