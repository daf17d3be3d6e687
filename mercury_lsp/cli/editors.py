"""``mercury-lsp editors [NAME]``: where this installation's editor clients are.

A checkout has them in ``editors/`` beside the packages; a wheel installs them under
``<prefix>/share/mercury-lsp/editors/`` (pyproject's ``data-files``), wherever the install
scheme puts ``<prefix>`` (a venv, ``pipx``, ``pip install --user``): the distribution's own
record of its files says where.
"""

from __future__ import annotations

import argparse
import importlib.metadata
from pathlib import Path

from mercury_lsp.cli.errors import UsageError

DISTRIBUTION = "mercury-lsp"
EDITORS = ("neovim", "emacs", "vscode", "helix", "zed")
# A file every copy of the clients has: where the folder is found from.
MARKER = Path("neovim") / "lua" / "mercury" / "init.lua"
INSTALLED = Path("share") / "mercury-lsp" / "editors"


def editors_dir() -> Path | None:
    """The folder holding the editor clients (``neovim/``, ``emacs/``, ...), or None."""
    checkout = Path(__file__).resolve().parents[2] / "editors"
    if (checkout / MARKER).is_file():
        return checkout
    try:
        files = importlib.metadata.files(DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:
        return None
    suffix = (INSTALLED / MARKER).parts
    for f in files:
        if f.parts[-len(suffix):] == suffix:
            path = Path(str(f.locate())).resolve()
            if path.is_file():
                return path.parents[len(MARKER.parts) - 1]
    return None


def add_subcommand(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("editors", help="print where the editor clients (Neovim, Emacs, VS Code, ...) are",
                       description="Print the folder holding the editor clients, or one editor's "
                                   "folder (its README.md says how to set the editor up from there).")
    p.add_argument("name", nargs="?", choices=EDITORS, help="one editor's folder")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    root = editors_dir()
    if root is None:
        raise UsageError("the editor clients are not installed with this copy of mercury-lsp "
                         "(reinstall it from its wheel or sdist, or use a checkout's editors/)")
    path = root / args.name if args.name else root
    if not path.is_dir():
        raise UsageError(f"{path}: missing from this installation (reinstall mercury-lsp)")
    print(path)
    return 0
