"""Accepting suggestions: the ``mercury.accepted`` command every inline item carries (handled in
``server.handlers.completion``).

Clients run an inline item's command after inserting it (LSP 3.18), so the server counts
accepted suggestions (``mercury/stats``). Its argument also carries ``confidentText``, the item's
text cut before the first token the model was unsure of (``minTokenConfidence``), for a client key
that accepts only the confident part; the client then runs the command with ``partial: true``.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types as lsp

from mercury_lsp.schema import InfillOutcome

ACCEPTED_COMMAND = "mercury.accepted"


def confident_length(outcome: InfillOutcome, min_confidence: float, removed_indent: int) -> int | None:
    """Characters of the suggestion before its first token under ``min_confidence`` (None: all
    confident, or unknown). ``removed_indent``: characters ``fit_indent`` took off its start."""
    if not outcome.token_ends or len(outcome.token_ends) != len(outcome.confidences):
        return None
    for i, conf in enumerate(outcome.confidences):
        if conf < min_confidence:
            end = outcome.token_ends[i - 1] if i else 0
            return max(0, end - removed_indent)
    return None


def accepted_command(line_before: str, text: str, confident: int | None, line_after: str) -> lsp.Command:
    """The command of an inline item replacing the cursor's line (``line_before`` + ``text`` +
    the rest); ``confidentText`` is that item cut to its confident part, the rest of the line kept."""
    args: dict[str, Any] = {}
    if confident is not None and 0 < confident < len(text):
        args["confidentText"] = line_before + text[:confident] + line_after
    return lsp.Command(title="mercury: suggestion accepted", command=ACCEPTED_COMMAND, arguments=[args])

