"""Checks a ``didChange`` passes before any of it touches a document (all or nothing).

Every check here needs only the message, not the text, so a change is refused whole or applied
whole. Messages are safe to show: they never quote user text.
"""

from __future__ import annotations

import re

Range = tuple[int, int, int, int]  # start line, start column, end line, end column
REPLACEMENT = "\ufffd"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class EditRejected(ValueError):
    """A didChange that cannot be applied: nothing of it was, and the document is out of sync
    with its editor until the full text comes again."""


def clean_text(text: str) -> str:
    """``text`` with lone UTF-16 surrogates (JSON allows them, UTF-8 cannot encode them) replaced
    by U+FFFD: one code unit for one, so every later position still matches the editor's."""
    if text.isascii():
        return text
    return _LONE_SURROGATE.sub(REPLACEMENT, text)


def checked_changes(current: int, version: int,
                    changes: list[tuple[Range | None, str]]) -> list[tuple[Range | None, str]]:
    """The changes to apply (texts cleaned), or EditRejected: a version that does not move
    forward, a negative position, a reversed range."""
    if version <= current:
        raise EditRejected(f"version {version} does not follow the document's version {current}")
    out = []
    for rng, text in changes:
        if rng is not None:
            if min(rng) < 0:
                raise EditRejected("negative position in a change's range")
            if (rng[0], rng[1]) > (rng[2], rng[3]):
                raise EditRejected("a change's range ends before it starts")
        out.append((rng, clean_text(text)))
    return out
