"""The memory of one workspace root: its files in shards, the files changed since, and the
persisted copy that makes a restart warm.

* **Where a file's text is.** Every indexed file lives in one shard (``where``). A file that
  changed on disk, was deleted, or stopped being eligible is *dead* in its shard from the moment
  the change is known (``changed``, called on the event loop): its old text is never read again.
  A changed file is read again on the indexer thread into a ``Loose`` corpus; when the loose
  files grow past ``LOOSE_MAX_BYTES`` they become a new shard. A shard with a large dead share
  is rebuilt from its live files.
* **Persistence.** Shards are folders of ``.npy`` arrays (memory-mapped when opened) under
  ``folder``; ``manifest.json`` lists the shards and, per file, its shard, index, size and
  modification time. A start opens the manifest and its shards, ``stat``s every listed file and
  re-reads the ones whose size or time changed (or that were written so recently when indexed
  that a second write could hide behind the same time: git's "racy" files). A manifest or shard
  that cannot be read, or belongs to another format or root, is discarded and rebuilt (one log
  line). Without a writable folder the memory lives in this process only and holds at most
  ``MEMORY_ONLY_BYTES`` of text.

Readers (request threads) take a ``View``: the shards with their live flags and the loose
files, all safe to read while the indexer works.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mercury_lsp.heap import release_free_memory
from mercury_lsp.memory.corpus import FileInfo
from mercury_lsp.memory.scan import Loose
from mercury_lsp.memory.shard import Shard
from mercury_lsp.memory.sources import read_source

log = logging.getLogger(__name__)

MANIFEST_FORMAT = 1
SHARD_BYTES = 8 * 1024 * 1024  # text per shard: a 2M-token suffix array builds in about a second
LOOSE_MAX_BYTES = 4 * 1024 * 1024  # changed files kept loose (scanned per query) before a new shard
REBUILD_DEAD_SHARE = 0.5  # a shard with more dead text than this is rebuilt from its live files
MEMORY_ONLY_BYTES = 32 * 1024 * 1024  # text kept without a folder to persist to (about 150 MB of arrays)
# A file modified this recently when read may change again within the file system's time
# resolution without its size or time changing: it is read again at the next start.
RACY_NS = 2_000_000_000


@dataclass
class Located:
    shard: str | None  # None: loose (read since the last shard was built)
    index: int
    mtime_ns: int  # -1: read it again at the next start
    size: int


@dataclass(frozen=True)
class View:
    shards: tuple[tuple[Shard, np.ndarray], ...]  # with each file's live flag
    loose: tuple[Loose, ...]


class RootMemory:
    def __init__(self, root: Path, folder: Path | None) -> None:
        self.root = root
        self.folder = folder
        self._lock = threading.RLock()
        self.shards: dict[str, Shard] = {}
        self.live: dict[str, np.ndarray] = {}
        self.where: dict[str, Located] = {}
        self.loose: dict[str, Loose] = {}
        self.pending: set[str] = set()
        self.text_bytes = 0  # live text indexed
        self._view: View | None = None
        self._read = False  # a view was taken since the last ``release``

    # ------------------------------------------------------------------ readers
    def view(self) -> View:
        with self._lock:
            self._read = True
            if self._view is None:
                self._view = View(tuple((s, self.live[n]) for n, s in self.shards.items()), tuple(self.loose.values()))
            return self._view

    def locate(self, paths: set[str]) -> list[tuple[str | None, int]]:
        """(shard name or None, index) of those of ``paths`` that are indexed."""
        with self._lock:
            return [(loc.shard, loc.index) for p in paths if (loc := self.where.get(p)) is not None]

    def release(self) -> bool:
        """Unmap the shards' file pages that queries touched since the last call (``Shard.release``);
        False when nothing was read since."""
        with self._lock:
            if not self._read:
                return False
            self._read = False
            shards = list(self.shards.values())
        for shard in shards:
            shard.release()
        return True

    def _changed_view(self) -> None:
        self._view = None

    # ------------------------------------------------------------------ events (event loop)
    def changed(self, path: str, deleted: bool = False) -> None:
        """The file at ``path`` changed (or is gone): its indexed text is dead now; it is read
        again on the indexer thread unless deleted."""
        with self._lock:
            self._kill(path)
            if not deleted:
                self.pending.add(path)
            self._changed_view()

    def _kill(self, path: str) -> None:
        loc = self.where.pop(path, None)
        if loc is None:
            return
        if loc.shard is None:
            gone = self.loose.pop(path, None)
            if gone is not None:
                self.text_bytes -= len(gone.data)
        elif loc.shard in self.live:
            self.live[loc.shard][loc.index] = False
            shard = self.shards[loc.shard]
            self.text_bytes -= int(shard.file_byte[loc.index + 1] - shard.file_byte[loc.index])

    # ------------------------------------------------------------------ persistence (indexer thread)
    def load(self) -> int:
        """Open the persisted memory; returns the files it holds (0 when there is none or it was
        discarded)."""
        if self.folder is None:
            return 0
        manifest = self.folder / "manifest.json"
        if not manifest.is_file():
            return 0
        try:
            meta = json.loads(manifest.read_text(encoding="utf-8"))
            if meta.get("format") != MANIFEST_FORMAT or meta.get("root") != str(self.root):
                raise ValueError("another format or root")
            shards = {name: Shard.open(self.folder / name) for name in meta["shards"]}
            where = {}
            for path, (shard, index, mtime, size) in meta["files"].items():
                if shard not in shards or not 0 <= index < len(shards[shard].files):
                    raise ValueError("a file in no shard")
                where[path] = Located(shard, int(index), int(mtime), int(size))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("memory: the saved index of a workspace folder is unusable (%s); building it again",
                        type(exc).__name__)
            self.discard()
            return 0
        with self._lock:
            self.shards = shards
            self.live = {n: np.zeros(len(s.files), dtype=bool) for n, s in shards.items()}
            for loc in where.values():
                self.live[loc.shard][loc.index] = True
            self.where = where
            self.text_bytes = sum(int(self.shards[loc.shard].file_byte[loc.index + 1]
                                      - self.shards[loc.shard].file_byte[loc.index]) for loc in where.values())
            self._changed_view()
        return len(where)

    def discard(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)

    def save(self) -> None:
        """Write the manifest (atomically) and remove shard folders it no longer lists."""
        if self.folder is None:
            return
        with self._lock:
            files = {p: [loc.shard, loc.index, loc.mtime_ns, loc.size] for p, loc in self.where.items()
                     if loc.shard is not None}
            meta = {"format": MANIFEST_FORMAT, "root": str(self.root), "shards": list(self.shards), "files": files}
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            tmp = self.folder / "manifest.json.tmp"
            tmp.write_text(json.dumps(meta), encoding="utf-8")
            os.replace(tmp, self.folder / "manifest.json")
            for child in self.folder.iterdir():
                if child.is_dir() and child.name not in meta["shards"]:
                    shutil.rmtree(child, ignore_errors=True)
        except OSError as exc:
            log.warning("memory: cannot save the index (%s); it lives in memory only", exc.strerror or exc)
            self.folder = None

    # ------------------------------------------------------------------ indexing (indexer thread)
    def stale(self, paths: list[Path]) -> list[Path]:
        """Of the files listed now, those to read: new, changed, or racy when read. Indexed
        files no longer listed are dead."""
        listed = {str(p) for p in paths}
        out = []
        with self._lock:
            for gone in [p for p in self.where if p not in listed]:
                self._kill(gone)
            for p in paths:
                loc = self.where.get(str(p))
                if loc is None or loc.mtime_ns < 0:
                    out.append(p)
                    continue
                try:
                    st = p.stat()
                except OSError:
                    self._kill(str(p))
                    continue
                if (st.st_mtime_ns, st.st_size) != (loc.mtime_ns, loc.size):
                    self._kill(str(p))
                    out.append(p)
            self._changed_view()
        return out

    def read(self, path: Path) -> tuple[FileInfo, bytes, int, int] | None:
        """(file, bytes, mtime, size) of a file to index; None when it is not kept or changed
        while read (it is then pending again)."""
        try:
            before = path.stat()
        except OSError:
            return None
        got = read_source(path, self.root)
        if got is None:
            return None
        try:
            after = path.stat()
        except OSError:
            return None
        if (before.st_mtime_ns, before.st_size) != (after.st_mtime_ns, after.st_size) or after.st_size != len(got[1]):
            with self._lock:
                self.pending.add(str(path))
            return None
        mtime = after.st_mtime_ns if time.time_ns() - after.st_mtime_ns >= RACY_NS else -1
        return got[0], got[1], mtime, after.st_size

    def add_shard(self, entries: list[tuple[FileInfo, bytes, int, int]]) -> Shard:
        """A new shard of ``entries`` (saved when there is a folder), published at once."""
        shard = Shard.build([(f, d) for f, d, _, _ in entries])
        if self.folder is not None:
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
                shard = Shard.open(shard.save(self.folder))
            except OSError as exc:
                log.warning("memory: cannot save the index (%s); it lives in memory only", exc.strerror or exc)
                self.folder = None
        with self._lock:
            live = np.ones(len(entries), dtype=bool)
            for i, (f, data, mtime, size) in enumerate(entries):
                self._kill(f.path)
                if f.path in self.pending:  # changed again meanwhile: this text is dead already
                    live[i] = False
                    continue
                self.where[f.path] = Located(shard.name, i, mtime, size)
                self.text_bytes += len(data)
            self.shards[shard.name] = shard
            self.live[shard.name] = live
            self._changed_view()
        release_free_memory()  # the build's arrays are gone: their pages go back to the system
        return shard

    def add_loose(self, info: FileInfo, data: bytes, mtime: int, size: int) -> None:
        with self._lock:
            self._kill(info.path)
            if info.path in self.pending:
                return
            self.loose[info.path] = Loose(info, data)
            self.where[info.path] = Located(None, 0, mtime, size)
            self.text_bytes += len(data)
            self._changed_view()

    def take_pending(self) -> list[Path]:
        with self._lock:
            out, self.pending = sorted(self.pending), set()
        return [Path(p) for p in out]

    def loose_bytes(self) -> int:
        return sum(len(x.data) for x in self.loose.values())

    def to_rebuild(self) -> list[str]:
        """Shards whose dead share passed ``REBUILD_DEAD_SHARE``."""
        out = []
        with self._lock:
            for name, shard in self.shards.items():
                sizes = np.diff(shard.file_byte)
                total = int(sizes.sum())
                dead = int(sizes[~self.live[name]].sum())
                if total and dead / total > REBUILD_DEAD_SHARE:
                    out.append(name)
        return out

    def drop_shard(self, name: str) -> list[Path]:
        """Remove a shard; returns its live files (to be read again)."""
        with self._lock:
            shard = self.shards.pop(name, None)
            live = self.live.pop(name, None)
            if shard is None or live is None:
                return []
            out = [Path(shard.files[i].path) for i in np.flatnonzero(live)]
            for p in out:
                loc = self.where.pop(str(p), None)
                if loc is not None:
                    self.text_bytes -= int(shard.file_byte[loc.index + 1] - shard.file_byte[loc.index])
            self._changed_view()
        return out
