"""Applying the user's first edit (a unified diff) to one text, for callers that have the text in
hand. ``mercury-lsp next-edit`` itself resolves the patch both ways (the file may already contain
it) and shares the output and ``--apply`` of ``refactor`` (``mercury_lsp.cli.refactor``)."""

from __future__ import annotations

from mercury_lsp.refactor.patch import PatchError, apply_hunks, parse_patch

__all__ = ["PatchError", "apply_unified_diff"]


def apply_unified_diff(text: str, patch: str, name: str | None = None) -> str:
    """``text`` with the hunks of ``patch`` applied (exact match; a patch touching several files
    uses the one whose path ends with ``name``). Raises ``PatchError``."""
    files = parse_patch(patch)
    if len(files) > 1:
        files = [f for f in files if name and f.path.endswith(name)]
        if len(files) != 1:
            raise PatchError(f"the patch touches several files; none (or several) match {name!r}")
    return apply_hunks(text, files[0].hunks)[0]
