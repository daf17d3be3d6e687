"""``mercury-lsp next-edit FILE --after-diff PATCH | --git [REV] [--also FILE]...``: predict the
edits that follow a first edit, whether or not FILE already contains it (the work, the output
formats and ``--apply``: ``cli.refactor``, shared with ``refactor propagate``)."""

from __future__ import annotations

import argparse

from mercury_lsp.cli.refactor import add_next_edit


def add_subcommand(sub: argparse._SubParsersAction) -> None:
    add_next_edit(sub)
