"""Workspace files for next edit in the language server: the files of the workspace folders that
are not open but mention an identifier the user's edit changed join the next-edit query as
documents on disk (version ``None``; of the edited documents' grammars, or of their family:
JavaScript, TypeScript and TSX import each other), so predicted edits reach them too and the code action's
``WorkspaceEdit`` covers every file. Runs on the engine worker (it reads files), never on the
event loop. File lists come from ``files.list_files`` (git-aware, ``.gitignore`` honoured) and
are kept for ``LIST_TTL_S``; of them, only the files the workspace's persistent word index
(``refactor.index``, shared with ``refactor propagate``) says mention a changed word are read.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mercury_lsp.next_edit import DocState, NextEditQuery
from mercury_lsp.next_edit.exports import family
from mercury_lsp.refactor.files import InputError, list_files, read_source
from mercury_lsp.refactor.index import select_files
from mercury_lsp.refactor.propagate import changed_identifiers, mentions

if TYPE_CHECKING:
    from mercury_lsp.server.access import AllowedRoots

LIST_TTL_S = 30.0  # a workspace's file list is listed again after this long
SCAN_FILES = 5000  # most files read per request (a bound on the work for huge workspaces)


class WorkspaceFiles:
    def __init__(self) -> None:
        self._lists: dict[tuple, tuple[float, list[Path]]] = {}
        self._lock = threading.Lock()

    def _files(self, root: Path, allowed: AllowedRoots | None) -> list[Path]:
        """The listing of ``root``, the files ``allowed`` does not contain left out (resolved
        once a listing: kept for ``LIST_TTL_S`` like it)."""
        now = time.monotonic()
        key = (root, allowed.roots if allowed is not None else None)
        with self._lock:
            hit = self._lists.get(key)
        if hit is not None and now - hit[0] < LIST_TTL_S:
            return hit[1]
        try:
            files = list_files([root])[0]
        except (InputError, OSError):
            files = []
        if allowed is not None:
            files = [f for f in files if allowed.contains(f)]
        with self._lock:
            self._lists[key] = (now, files)
        return files

    def extend(self, query: NextEditQuery, roots: list[Path], limit: int,
               excluded: Callable[[Path], bool] | None = None,
               allowed: AllowedRoots | None = None) -> NextEditQuery:
        """``query`` plus up to ``limit`` workspace files under ``roots`` that mention what the
        edits changed; ``excluded`` files (content exclusion) are never read, nor indexed, nor
        are files ``allowed`` does not contain (``server.access``: what the connection may read;
        a file whose real location is outside it is not)."""
        edited = [d for d in query.docs if d.history]
        if not roots or limit <= 0 or not edited:
            return query
        words: set[str] = set()
        for d in edited:
            words |= changed_identifiers(d.history[-1], d.text)
        pattern = mentions(words)
        if pattern is None:
            return query
        grammars = set().union(*(family(d.grammar) for d in edited))  # a .ts edit reaches .js importers
        have = {d.uri for d in query.docs}
        extra: list[DocState] = []
        scanned = 0
        for root in roots:
            listing = self._files(root, allowed)
            files = [f for f in listing if not excluded(f)] if excluded else listing
            listed, _ = select_files(root, files, words)  # the files that mention a word
            for f in listed:
                if len(extra) >= limit or scanned >= SCAN_FILES:
                    break
                uri = f.as_uri()
                if uri in have:
                    continue
                try:
                    src, _ = read_source(f)
                except InputError:
                    continue
                scanned += 1
                if src is None or src.grammar not in grammars or not pattern.search(src.text):
                    continue
                have.add(uri)
                extra.append(DocState(uri, src.text, src.grammar, None))
        if not extra:
            return query
        return NextEditQuery(query.docs + tuple(extra), query.cursor_uri, query.cursor, query.encoding,
                             query.options)


def workspace_roots(workspace) -> list[Path]:
    """Local directories of a pygls workspace (its folders, else its root)."""
    from urllib.parse import unquote, urlparse

    uris = [f.uri for f in getattr(workspace, "folders", {}).values()] or [getattr(workspace, "root_uri", None)]
    out = []
    for uri in uris:
        if not uri:
            continue
        parsed = urlparse(uri)
        if parsed.scheme == "file" and Path(unquote(parsed.path)).is_dir():
            out.append(Path(unquote(parsed.path)))
    return out
