"""The next-edit rules, as ruff has lint rules: one rule a file, each exporting a ``Rule`` (a
stable code, a name, the kind its edits report, its base confidence, ``run(ctx)`` and its
docstring: what it does, why, an example), and one registry (``REGISTRY``) in priority order.

Codes group the rules in families by the hundreds (``docs/next-edit.md`` has the table, made by
``markdown_table``):

* ``NE1xx`` (``follow``) — a changed definition followed: a renamed binding's other occurrences,
  a changed signature's calls, arguments and statements using what the edit removed, a value
  the user named;
* ``NE2xx`` (``repeat``) — the user's token-level change repeated where the same tokens stand;
* ``NE3xx`` (``lines``) — whole lines repeated, moved, superseded, whitespace continued;
* ``NE4xx`` (``imports``) — imports that follow the edit;
* ``NE5xx`` (``complete``) — the line at the cursor finished, or the half of the edit still to write;
* ``NE9xx`` (``model``) — the model alone, where no rule ties a location.

The registry's order is the priority: where two rules' edits overlap, the earlier rule's edit is
kept (``resolve``). Confidences and penalties live in one table (``confidence``); the user turns
rules off by code (``nextEdit.disabledRules``).
"""

from __future__ import annotations

from typing import get_args

from mercury_lsp.config import NextEditRule
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.complete import (
    closing_bracket,
    cut_short_name,
    implied_name,
    like_line_ending,
    line_leftover,
    model_line_ending,
)
from mercury_lsp.next_edit.rules.follow import (
    adopted_name,
    changed_signature,
    documented_parameter,
    dropped_argument,
    extracted_function,
    extracted_value,
    implemented_member,
    named_fields,
    removed_export,
    removed_import_name,
    removed_use,
    renamed_binding,
    renamed_mention,
    sibling_entry,
    threaded_parameter,
)
from mercury_lsp.next_edit.rules.imports import (
    missing_import,
    relocated_import,
    unimported_rename,
    unimported_use,
    unused_import,
)
from mercury_lsp.next_edit.rules.lines import (
    moved_lines,
    repeated_lines,
    respaced_tokens,
    sibling_attribute,
    superseded_line,
    whitespace_continued,
)
from mercury_lsp.next_edit.rules.model import likelihood_drop
from mercury_lsp.next_edit.rules.repeat import (
    affix_rename,
    copied_string,
    extended_list,
    grouped_parameters,
    hole_repeat,
    next_pattern_site,
    prose_word_rename,
    repeated_pattern,
    repeated_rename,
    shaped_repeat,
)
from mercury_lsp.next_edit.rules.repeat.search import family_edits
from mercury_lsp.next_edit.rules.repeat.tokens import FAMILY as REPEAT_FAMILY

__all__ = ["BY_CODE", "CODES", "FAMILIES", "REGISTRY", "Rule", "RuleContext", "markdown_table"]

# Priority order: the edits the syntax ties to the user's edit first (the user's own text), then
# the line at the cursor, the repeated edits, the line rules, the imports and the rest; the
# model's fallbacks last (they run only when nothing before them offered an edit). NE207 comes
# before NE204: where both change one line, its rewrite carries every change of the example and
# NE204's one token change (on the tuning sets: 3 more exact, no hit lost).
REGISTRY: tuple[Rule, ...] = (
    renamed_binding.RULE,
    changed_signature.RULE,
    line_leftover.RULE,
    implied_name.RULE,
    cut_short_name.RULE,
    like_line_ending.RULE,
    closing_bracket.RULE,
    repeated_rename.RULE,
    prose_word_rename.RULE,
    affix_rename.RULE,
    shaped_repeat.RULE,
    extended_list.RULE,
    copied_string.RULE,
    repeated_pattern.RULE,
    next_pattern_site.RULE,
    hole_repeat.RULE,
    grouped_parameters.RULE,
    superseded_line.RULE,
    moved_lines.RULE,
    repeated_lines.RULE,
    sibling_attribute.RULE,
    unused_import.RULE,
    missing_import.RULE,
    dropped_argument.RULE,
    extracted_value.RULE,
    extracted_function.RULE,
    adopted_name.RULE,
    sibling_entry.RULE,
    implemented_member.RULE,
    named_fields.RULE,
    documented_parameter.RULE,
    threaded_parameter.RULE,
    renamed_mention.RULE,
    unimported_rename.RULE,
    unimported_use.RULE,
    removed_use.RULE,
    removed_import_name.RULE,
    removed_export.RULE,
    relocated_import.RULE,
    whitespace_continued.RULE,
    respaced_tokens.RULE,
    likelihood_drop.RULE,
    model_line_ending.RULE,
)
BY_CODE: dict[str, Rule] = {r.code: r for r in REGISTRY}
# The families' shared searches (``RuleContext.family``).
FAMILIES = {REPEAT_FAMILY: family_edits}
# The codes the settings accept (``nextEdit.disabledRules``): the registry's, one each (the
# rules' tests check it).
CODES: tuple[str, ...] = get_args(NextEditRule)


def markdown_table() -> str:
    """The rules as a Markdown table, by code (the one in docs/next-edit.md)."""
    rows = ["| code | name | kind | confidence | what it does |", "| --- | --- | --- | --- | --- |"]
    for r in sorted(REGISTRY, key=lambda r: r.code):
        conf = "the model's" if r.confidence is None else f"{r.confidence:g}"
        what = r.summary.split(": ", 1)[1] if ": " in r.summary else r.summary
        rows.append(f"| {r.code} | `{r.name}` | {r.kind} | {conf} | {what.replace('|', '¦')} |")
    return "\n".join(rows)
