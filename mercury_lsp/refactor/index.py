"""A persistent word index of a repository's files: ``next-edit`` and ``refactor propagate`` read
(and then parse) only the files that mention a word the edit changed, and a second call on an
unchanged repository reads none but those.

For each file the index keeps its size and modification time and the set of its words (maximal
runs of word characters, ``\\w+``: a file holds ``\\bname\\b`` exactly when ``name`` is one of
them, so the index selects what ``propagate.mentions`` would find, never less). Each call
``stat``s the listed files and re-reads only those whose size or time changed (or that are new,
or were written less than ``RACY_NS`` before they were indexed: a second write in the same tick
of the clock keeps the time);
files the reader would skip (binary, huge, not UTF-8, unreadable) are not indexed and always pass
through, so the reader still reports them. The index is one SQLite database per repository root
under ``cache_root()`` (``$XDG_CACHE_HOME/mercury-lsp/index``, ``~/.cache`` when unset); an index that cannot be
opened or written is rebuilt once, then left out (the files are read as before): it only ever
saves work.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from mercury_lsp.refactor.files import BINARY_SNIFF_BYTES, MAX_FILE_BYTES

INDEX_VERSION = "1"
WORDS = re.compile(r"\w+")
# A file modified this recently when indexed may be modified again within the file system's time
# resolution without its size or time changing (git's "racy" files): it is read again next call.
RACY_NS = 2_000_000_000
LOCK_TIMEOUT_S = 30.0  # another call updating the same index: wait this long for it
SQL_VARIABLES = 500  # words per query (SQLite limits the variables of one statement)
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files (id INTEGER PRIMARY KEY, path TEXT UNIQUE, mtime_ns INTEGER, size INTEGER,
                                  indexed INTEGER);
CREATE TABLE IF NOT EXISTS words (word TEXT, file INTEGER);
CREATE INDEX IF NOT EXISTS words_word ON words (word);
CREATE INDEX IF NOT EXISTS words_file ON words (file);
"""


@dataclass
class IndexStats:
    listed: int = 0
    read: int = 0  # files (re)indexed by this call
    selected: int = 0  # files handed on: they mention a word, or are not indexable


def cache_root() -> Path:
    """``$MERCURY_LSP_CACHE/index``, else ``$XDG_CACHE_HOME/mercury-lsp/index`` (``~/.cache``)."""
    own = os.environ.get("MERCURY_LSP_CACHE")
    if own:
        return Path(own) / "index"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mercury-lsp" / "index"


def index_path(root: Path) -> Path:
    key = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
    return cache_root() / f"{key}.sqlite"


def file_words(path: Path) -> set[str] | None:
    """The words of a text file the reader would read; None for one it skips."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if len(data) > MAX_FILE_BYTES or b"\0" in data[:BINARY_SNIFF_BYTES]:
        return None
    try:
        return set(WORDS.findall(data.decode("utf-8")))
    except UnicodeDecodeError:
        return None


class WordIndex:
    def __init__(self, db: Path) -> None:
        self.db = db
        self.conn = self._open()

    def _open(self) -> sqlite3.Connection:
        self.db.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.db, timeout=LOCK_TIMEOUT_S, isolation_level=None)
        conn.executescript(SCHEMA)
        row = conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
        if row is None:
            conn.execute("INSERT INTO meta VALUES ('version', ?)", (INDEX_VERSION,))
        elif row[0] != INDEX_VERSION:
            conn.close()
            self.db.unlink()
            return self._open()
        return conn

    def close(self) -> None:
        self.conn.close()

    def select(self, files: list[Path], words: set[str]) -> tuple[list[Path], IndexStats]:
        """The files of ``files`` that may mention one of ``words`` (a superset of those that do),
        in their order; the index brought up to date with them first."""
        stats = IndexStats(listed=len(files))
        known = {p: (i, m, s, x) for i, p, m, s, x in self.conn.execute(
            "SELECT id, path, mtime_ns, size, indexed FROM files")}
        current: dict[Path, tuple[int, int] | None] = {}
        for f in files:
            try:
                st = f.stat()
                current[f] = (st.st_mtime_ns, st.st_size)
            except OSError:
                current[f] = None
        stale = [f for f in files if current[f] is not None
                 and (str(f) not in known or known[str(f)][1:3] != current[f])]
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            for f in stale:
                row = known.get(str(f))
                if row is not None:
                    self.conn.execute("DELETE FROM words WHERE file = ?", (row[0],))
                    self.conn.execute("DELETE FROM files WHERE id = ?", (row[0],))
                found = file_words(f)
                mtime, size = current[f]
                if time.time_ns() - mtime < RACY_NS:
                    mtime = -1  # written just now: the same time may hide a second write, read it again
                cur = self.conn.execute("INSERT INTO files (path, mtime_ns, size, indexed) VALUES (?, ?, ?, ?)",
                                        (str(f), mtime, size, int(found is not None)))
                if found:
                    self.conn.executemany("INSERT INTO words VALUES (?, ?)", ((w, cur.lastrowid) for w in found))
                stats.read += 1
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        hits: set[str] = set()
        wanted = sorted(words)
        for i in range(0, len(wanted), SQL_VARIABLES):
            chunk = wanted[i:i + SQL_VARIABLES]
            hits.update(p for (p,) in self.conn.execute(
                "SELECT DISTINCT files.path FROM words JOIN files ON files.id = words.file "
                f"WHERE words.word IN ({','.join('?' * len(chunk))})", chunk))
        passing = {p for (p,) in self.conn.execute("SELECT path FROM files WHERE indexed = 0")}
        out = [f for f in files if current[f] is None or str(f) in hits or str(f) in passing]
        stats.selected = len(out)
        return out, stats


def select_files(root: Path, files: list[Path], words: set[str]) -> tuple[list[Path], IndexStats | None]:
    """``WordIndex.select`` on the index of ``root``; the files unchanged (and no stats) when the
    index cannot be used (it is rebuilt once first)."""
    db = index_path(root)
    for attempt in range(2):
        index = None
        try:
            index = WordIndex(db)
            return index.select(files, words)
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc):  # another call holds it past the timeout: read everything this once
                return files, None
            if attempt == 0:
                with contextlib.suppress(OSError):
                    db.unlink()
        except (sqlite3.Error, OSError):
            if attempt == 0:
                with contextlib.suppress(OSError):
                    db.unlink()
        finally:
            if index is not None:
                index.close()
    return files, None
