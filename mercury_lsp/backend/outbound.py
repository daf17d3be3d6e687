"""What may leave this machine: the one check before text goes to a remote backend.

A remote session (``backend.remote_session``) passes every request through ``Outbound`` before
sending it. A request for an excluded document is not sent at all (the session answers "no
suggestion"); retrieved chunks and next-edit documents from excluded files are dropped from the
request. ``excluded`` says whether a document (an LSP uri, or a retrieved chunk's path) is
excluded: the ``exclude`` setting's globs (``mercury_lsp.exclusion``; the language server binds
it to the connection's settings and roots); by default nothing is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import msgspec

from mercury_lsp.schema import InfillOutcome, InfillSpec

if TYPE_CHECKING:
    from mercury_lsp.next_edit import NextEditQuery

Excluded = Callable[[str], bool]
EXCLUDED_STOP = "excluded"  # InfillOutcome.stop_reason of a request that was not sent


def nothing_excluded(path: str) -> bool:
    return False


class Outbound:
    def __init__(self, excluded: Excluded = nothing_excluded) -> None:
        self.excluded = excluded

    def infill(self, spec: InfillSpec) -> InfillSpec | None:
        """``spec`` without excluded chunks; None when its document is excluded (nothing is sent)."""
        if spec.uri is not None and self.excluded(spec.uri):
            return None
        kept = tuple(c for c in spec.retrieved if not self.excluded(c.path))
        return spec if len(kept) == len(spec.retrieved) else msgspec.structs.replace(spec, retrieved=kept)

    def next_edit(self, query: NextEditQuery) -> NextEditQuery | None:
        """``query`` without excluded documents; None when the cursor's document is excluded."""
        if self.excluded(query.cursor_uri):
            return None
        kept = tuple(d for d in query.docs if not self.excluded(d.uri))
        return query if len(kept) == len(query.docs) else replace(query, docs=kept)


def not_sent() -> InfillOutcome:
    """The answer to a request that was not sent: no suggestion."""
    return InfillOutcome(text="", tokens=0, mean_confidence=0.0, stop_reason=EXCLUDED_STOP, steps=0, forwards=0,
                         prompt_tokens=0, trimmed=False, elapsed_ms=0.0)
