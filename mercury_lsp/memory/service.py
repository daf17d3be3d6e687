"""``Memory``: the repository memory of one server (or one CLI call), over the roots it may read.

    memory = Memory(roots, options, exclude=is_secret)   # nothing read yet
    memory.start()                                       # background: load or build, then keep current
    memory.changed(path)                                 # a file changed on disk (or deleted=True)
    memory.candidates(context, open_docs)                # rest-of-line continuations, with features

Every method is safe from any thread and never waits for the indexer: before the first shard is
published the memory answers from the open documents alone. Each query unmaps the shard pages it
touched when it returns (``RootMemory.release``): its random probes map 64 KB around each one,
and a few hundred queries would otherwise leave the whole index (hundreds of MB at 10k files) in
the daemon's RSS; the pages stay in the kernel's page cache, so the next query's faults are minor
(0.1-2 ms a release, p50/p95 unchanged at 10k files). An open document always overrides
its file on disk: while a document is open (it is among ``open_docs``, or it is the queried one),
the file's indexed text and any copy read from disk are not consulted, whatever their age.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import wraps
from pathlib import Path
from urllib.parse import unquote, urlparse

import numpy as np

from mercury_lsp.memory.candidates import Candidate, gather, with_parallels
from mercury_lsp.memory.corpus import FileInfo
from mercury_lsp.memory.indexer import BuildSummary, Indexer, Limits, Progress
from mercury_lsp.memory.query import Context, build_query
from mercury_lsp.memory.retrieve import Chunk, definition_of, definitions, similar
from mercury_lsp.memory.scan import Loose
from mercury_lsp.memory.shard import Shard
from mercury_lsp.memory.sources import Exclude, inside, is_test_path
from mercury_lsp.memory.store import RootMemory
from mercury_lsp.memory.tokens import tokenize

log = logging.getLogger(__name__)

FOLDER_FORMAT = "1"  # part of a root's folder name: a new layout starts in a new folder
OPEN_CACHE = 32  # tokenized open documents kept (by URI and version)
MIN_LEVEL = 2  # a context of one token ("(", "=") says too little to suggest from
LEVEL_RATIO = 0.6  # each back-off level keeps this share of the previous level's tokens
# Time a request's candidate search may take before it answers from the corpora it has read: the
# memory's part of the 100 ms completion p95 (issue #24), with room for the ranker and the guard.
SEARCH_BUDGET_S = 0.05
PER_LEVEL = 16  # places looked at per level (shared out by corpus, evenly spread): 48 found no more right lines on dev


@dataclass(frozen=True)
class MemoryOptions:
    max_files: int = 50_000
    max_megabytes: int = 1024
    persist: bool = True


@dataclass(frozen=True)
class OpenDoc:
    uri: str
    version: int
    text: str
    language: str = ""


def uri_path(uri: str) -> str | None:
    """The local path of a ``file:`` URI, else None."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else None


def cache_folder(root: Path) -> Path | None:
    """Where a root's memory is saved: beside the refactor word index (``$MERCURY_LSP_CACHE``,
    ``$XDG_CACHE_HOME/mercury-lsp`` or ``~/.cache/mercury-lsp``), else a private folder under the
    temporary directory; None when neither can be written."""
    from mercury_lsp.refactor.index import cache_root

    key = hashlib.sha256(str(root).encode()).hexdigest()[:16]
    for base in (cache_root().parent / "memory", Path(tempfile.gettempdir()) / f"mercury-lsp-{os.getuid()}" / "memory"):
        folder = base / f"{key}-{FOLDER_FORMAT}"
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            probe = folder / ".write-test"
            probe.write_bytes(b"")
            probe.unlink()
            return folder
        except OSError:
            continue
    return None


def levels_for(longest: int, line_tokens: int) -> list[int]:
    """Back-off levels, longest first: the longest match, then shorter contexts by
    ``LEVEL_RATIO`` down to ``MIN_LEVEL``, with the context that reaches just past the start
    of the cursor's line among them."""
    out = {longest}
    lv = longest
    while lv > MIN_LEVEL:
        lv = max(MIN_LEVEL, int(lv * LEVEL_RATIO))
        out.add(lv)
    if MIN_LEVEL <= line_tokens + 1 < longest:
        out.add(line_tokens + 1)
    return sorted((x for x in out if x >= MIN_LEVEL), reverse=True)


def shares(budget: int, sizes: list[list[int]]) -> list[list[int]]:
    """Each corpus's part of ``budget`` places per level, by the places it has there (every one
    that has some gets at least one): the work of a request is bounded by the levels, not by how
    many shards the workspace fills."""
    if not sizes:
        return []
    totals = [sum(col) for col in zip(*sizes, strict=True)]
    return [[min(n, max(1, math.ceil(budget * n / t))) if n else 0 for n, t in zip(row, totals, strict=True)]
            for row in sizes]


def _query(method):
    """A query method: the shard pages it mapped are unmapped when it returns (module doc)."""
    @wraps(method)
    def run(self: Memory, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        finally:
            for store in self.stores:
                store.release()
    return run


class Memory:
    def __init__(self, roots: Sequence[Path], options: MemoryOptions = MemoryOptions(), *,
                 exclude: Exclude | None = None, on_progress: Progress | None = None,
                 on_done: Callable[[BuildSummary], None] | None = None) -> None:
        self.roots = [Path(r).resolve() for r in roots if Path(r).is_dir()]
        self.exclude = exclude
        self.options = options
        folders = {r: cache_folder(r) if options.persist else None for r in self.roots}
        if options.persist and any(f is None for f in folders.values()):
            log.warning("memory: no writable cache folder; the memory lives in memory only")
        self.stores = [RootMemory(r, folders[r]) for r in self.roots]
        skip = next((f.parent for f in folders.values() if f is not None), None)
        self.indexer = Indexer(self.stores, Limits(options.max_files, options.max_megabytes << 20), exclude,
                               self.roots, on_progress, on_done, skip)
        self._open: OrderedDict[tuple[str, int], Loose] = OrderedDict()
        self._lock = threading.Lock()
        self._started = False
        self.generation = 0  # files changed so far (a completion cached before a change is not reused)

    # ------------------------------------------------------------------ life
    def start(self) -> None:
        if not self._started:
            self._started = True
            self.indexer.start()

    def close(self) -> None:
        self.indexer.stop()

    @property
    def ready(self) -> bool:
        """The first build finished (until then only the open documents answer)."""
        return self.indexer.built.is_set()

    def wait_built(self, timeout: float | None = None) -> bool:
        return self.indexer.built.wait(timeout)

    def settle(self, timeout: float | None = None) -> bool:
        """Wait until every change notified so far is indexed (tests, the CLI)."""
        return self.indexer.settle(timeout)

    # ------------------------------------------------------------------ events
    def changed(self, path: str | Path, deleted: bool = False) -> None:
        """A file changed on disk (or was deleted): its old text is never read again."""
        p = Path(path)
        self.generation += 1
        for store in self.stores:
            if inside(p, [store.root]):
                store.changed(str(p), deleted)
        self.indexer.wake()

    def allowed(self, path: str | None) -> bool:
        """May the memory read this file (under a root, not excluded)?"""
        if path is None:
            return False
        p = Path(path)
        return inside(p, self.roots) and not (self.exclude is not None and self.exclude(p))

    # ------------------------------------------------------------------ queries
    def _loose_open(self, doc: OpenDoc) -> Loose:
        key = (doc.uri, doc.version)
        with self._lock:
            hit = self._open.get(key)
            if hit is not None and len(hit.data) == len(doc.text.encode("utf-8")):
                self._open.move_to_end(key)
                return hit
        path = uri_path(doc.uri) or doc.uri
        loose = Loose(FileInfo(doc.uri, doc.language, is_test_path(path)), doc.text.encode("utf-8"))
        with self._lock:
            self._open[key] = loose
            while len(self._open) > OPEN_CACHE:
                self._open.popitem(last=False)
        return loose

    def _corpora(self, ctx: Context, query, open_docs: Sequence[OpenDoc]) -> list[tuple[Shard | Loose, np.ndarray | None, str, int | None]]:
        """(corpus, live flags per file or None, kind, the place to skip) for every corpus the
        query may read: the document, the other open documents, then the files on disk (open
        ones hidden: an open document overrides its file)."""
        open_paths = {p for d in open_docs if (p := uri_path(d.uri)) is not None}
        if (own := uri_path(ctx.uri)) is not None:
            open_paths.add(own)
        corpora: list[tuple[Shard | Loose, np.ndarray | None, str, int | None]] = [
            (query.doc, None, "document", query.cursor_end)]
        for d in open_docs:
            if d.uri != ctx.uri and (uri_path(d.uri) is None or self.allowed(uri_path(d.uri))):
                corpora.append((self._loose_open(d), None, "open", None))
        for store in self.stores:
            view = store.view()
            hidden = store.locate(open_paths)
            for shard, live in view.shards:
                mask = live
                for name, index in hidden:
                    if name == shard.name:
                        mask = mask.copy() if mask is live else mask
                        mask[index] = False
                corpora.append((shard, mask, "disk", None))
            for loose in view.loose:
                if loose.files[0].path not in open_paths:
                    corpora.append((loose, None, "disk", None))
        return corpora

    @_query
    def candidates(self, ctx: Context, open_docs: Sequence[OpenDoc] = ()) -> list[Candidate]:
        """Continuations of the longest left context that matches, to the end of the line."""
        query = build_query(ctx)
        if query.empty:
            return []
        deadline = time.monotonic() + SEARCH_BUDGET_S
        corpora, longest = self._reached(self._corpora(ctx, query, open_docs), query.q, deadline)
        out = self._search(query, query.q, longest, corpora, None) if longest >= MIN_LEVEL else []
        # When the match does not reach back to the line's start, the word where it stops (or the
        # last word typed) may be a new name: any word stands for it.
        if longest <= query.line_tokens and time.monotonic() < deadline:
            for j in sorted({0, longest} if longest < query.line_tokens else {0}):
                if not query.name_at(j):  # a keyword is never a new name
                    continue
                q = query.q[j + 1:]
                moved = [(c, live, kind, None if skip is None else skip - j - 1) for c, live, kind, skip in corpora]
                wide = max(c.longest(q, live, skip) for c, live, _, skip in moved)
                if wide >= MIN_LEVEL:
                    out += self._search(query, q, wide, moved, j)
        return with_parallels(query, out)

    @staticmethod
    def _reached(corpora, q: np.ndarray, deadline: float) -> tuple[list, int]:
        """The corpora searched before ``deadline`` (the documents always, then the files on
        disk in turn) and the longest match among them: past the budget a request answers from
        what it has read, never waits for the rest of a large workspace."""
        out, longest = [], 0
        for c in corpora:
            if c[2] == "disk" and out and time.monotonic() >= deadline:
                log.debug("memory: search budget spent after %d of %d corpora", len(out), len(corpora))
                break
            longest = max(longest, c[0].longest(q, c[1], c[3]))
            out.append(c)
        return out, longest

    def _search(self, query, q: np.ndarray, longest: int, corpora, wildcard: int | None) -> list[Candidate]:
        levels = levels_for(longest, query.line_tokens - (0 if wildcard is None else wildcard + 1))
        disk = [i for i, c in enumerate(corpora) if c[2] == "disk"]
        shared = iter(shares(PER_LEVEL, [corpora[i][0].sizes(q, levels, corpora[i][1], corpora[i][3]) for i in disk]))
        quotas = [next(shared) if c[2] == "disk" else PER_LEVEL for c in corpora]  # documents: their own
        found = [(corpus, corpus.matches(q, levels, quota, live, skip), kind)
                 for (corpus, live, kind, skip), quota in zip(corpora, quotas, strict=True)]
        return gather(query, found, levels, wildcard)

    @_query
    def retrieve(self, ctx: Context, open_docs: Sequence[OpenDoc] = (), chunks: int = 2,
                 defs: int = 4) -> list[Chunk]:
        """Definitions of the names near the cursor, then the chunks of other files most like
        the code around it (``retrieve``)."""
        query = build_query(ctx)
        if query.empty:
            return []
        corpora = self._corpora(ctx, query, open_docs)
        everywhere = [(c, live) for c, live, _, _ in corpora]
        others = [(c, live) for c, live, kind, _ in corpora if kind != "document"]
        found = definitions(query, everywhere, defs) if defs else []
        return found + (similar(query, others, chunks) if chunks else [])

    @_query
    def definition(self, name: str, open_docs: Sequence[OpenDoc] = ()) -> Chunk | None:
        """Where ``name`` (one word) is defined — the first place a definition keyword precedes
        it, in the open documents, then the files on disk — and its signature; None when nowhere."""
        t = tokenize(name.encode("utf-8"))
        if len(t) != 1:
            return None
        corpora: list = [(self._loose_open(d), None) for d in open_docs]
        for store in self.stores:
            view = store.view()
            corpora += list(view.shards) + [(x, None) for x in view.loose]
        return definition_of(corpora, name, int(t.ids[0]))

    @_query
    def knows(self, names: set[str], open_docs: Sequence[OpenDoc] = ()) -> set[str]:
        """Which of ``names`` (single words) occur in a live file or an open document."""
        out: set[str] = set()
        ids = {}
        for name in names:
            t = tokenize(name.encode("utf-8"))
            if len(t) == 1:
                ids[name] = t.ids[:1]
        corpora = [(self._loose_open(d), None) for d in open_docs]
        for store in self.stores:
            view = store.view()
            corpora += list(view.shards) + [(x, None) for x in view.loose]
        for name, q in ids.items():
            if any(c.longest(q, live) for c, live in corpora):
                out.add(name)
        return out

    def stats(self) -> dict:
        files = sum(len(s.where) for s in self.stores)
        return {"files": files, "megabytes": round(sum(s.text_bytes for s in self.stores) / 2**20, 1),
                "shards": sum(len(s.shards) for s in self.stores), "built": self.indexer.built.is_set()}
