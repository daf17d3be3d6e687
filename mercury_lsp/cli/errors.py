"""``UsageError`` (a command-line mistake) and reading the files commands are given."""

from __future__ import annotations

from pathlib import Path


class UsageError(Exception):
    """A command-line mistake: printed without a traceback, exit status 2."""


def read_text(path: Path, what: str) -> str:
    """A UTF-8 file's text; a missing or unreadable file is a ``UsageError`` (``what``: how the
    message names the file, e.g. "patch"; empty: just its path)."""
    name = f"{what} {path}" if what else str(path)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{name}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{name}: cannot read as UTF-8 text ({exc})") from None
