"""The measurements behind the repository memory's structures (docs/memory.md), side by side on
the same data:

    python -m benchmarks.memory.structures [--files 10000] [--cases-dir DIR]
        [--out benchmarks/results/memory_structures.json]

1. **Longest matching left context -> continuations**, over the same token ids of the first
   ``--files`` files of ``memory_scale``'s workspace: the suffix array the memory uses
   (``memory.shard``) against an n-gram table (for each order in ``NGRAM_ORDERS``, the sorted
   64-bit hashes of every n-gram with the position after it: the usual "hash of the last n
   tokens" index). Build seconds, bytes, and per query the longest match and its places (p50 /
   p95 ms over random cursors). The table answers only at its fixed orders (a 40-token context
   matches as its longest order) and grows with every order added.
2. **Chunk retrieval** on the completion benchmark's dev fitting cases (``fit_ranker``'s): the
   memory's BM25 over word postings, SQLite FTS5's bm25 over the same chunks, and Jaccard
   similarity of identifier sets (RepoCoder's sparse retriever). Quality: how often one of the
   2 chunks retrieved for a case (its own file left out) holds the case's whole line, among the
   cases whose line occurs in another file; build seconds (BM25: the postings from a shard's
   tokens, as the memory builds them; FTS5: inserting the chunks' text; Jaccard: the name sets)
   and query p95.

Prints both tables, writes the JSON, ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sqlite3
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from benchmarks.memory.fit_ranker import cut_case, default_cases_dir, load_cases
from benchmarks.memory.scale import RESULTS, materialize, percentile, workspace_folders
from mercury_lsp.memory.chunks import bm25, chunk_arrays
from mercury_lsp.memory.shard import Shard
from mercury_lsp.memory.sources import read_source
from mercury_lsp.memory.tokens import tokenize, word_mask

NGRAM_ORDERS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)
QUERY_TOKENS = 96
QUERIES = 300
TOP_CHUNKS = 2
NAME = re.compile(r"[A-Za-z_$][\w$]*")
SEED = 0


# ---------------------------------------------------------------------------- 1. continuations
class NgramTable:
    """For each order n: sorted hashes of the n tokens before every position, and the position."""

    def __init__(self, ids: np.ndarray) -> None:
        self.ids = ids
        n = len(ids)
        x = ids.astype(np.uint64)
        self.tables = {}
        with np.errstate(over="ignore"):
            h = np.zeros(n, np.uint64)
            order = 0
            for target in NGRAM_ORDERS:
                while order < target:  # h[i]: hash of ids[i - order : i]
                    shifted = np.zeros(n, np.uint64)
                    shifted[order + 1:] = x[:n - order - 1]
                    h = h * np.uint64(0x100000001B3) ^ shifted
                    order += 1
                keys = h[target:]
                pos = np.arange(target, n, dtype=np.int64)
                o = np.argsort(keys)
                self.tables[target] = (keys[o], pos[o])

    @property
    def nbytes(self) -> int:
        return sum(k.nbytes + p.nbytes for k, p in self.tables.values())

    def query(self, fwd: np.ndarray) -> tuple[int, np.ndarray]:
        """(longest order matched, positions after it) for the tokens ``fwd`` before a cursor."""
        with np.errstate(over="ignore"):
            best, where = 0, np.zeros(0, np.int64)
            x = fwd.astype(np.uint64)
            for target in NGRAM_ORDERS:
                if target > len(x):
                    break
                h = np.uint64(0)
                for t in x[len(x) - target:][::-1]:  # the same recurrence, newest token first
                    h = h * np.uint64(0x100000001B3) ^ t
                keys, pos = self.tables[target]
                lo, hi = np.searchsorted(keys, h, "left"), np.searchsorted(keys, h, "right")
                if lo == hi:
                    break
                best, where = target, pos[lo:hi]
            return best, where


def continuations(root: Path, queries: int) -> dict:
    entries = []
    for p in sorted(root.rglob("*")):
        if p.is_file() and (got := read_source(p)) is not None:
            entries.append(got)
    t0 = time.perf_counter()
    shard = Shard.build(entries)
    sa_s = time.perf_counter() - t0
    sa_bytes = sum(getattr(shard, k).nbytes for k in ("ids", "sa", "starts"))
    t0 = time.perf_counter()
    table = NgramTable(np.asarray(shard.ids))
    ng_s = time.perf_counter() - t0
    rng = random.Random(SEED)
    sa_ms, ng_ms, agree = [], [], 0
    for _ in range(queries):
        info, data = rng.choice(entries)
        t = tokenize(data)
        if len(t) < 4:
            continue
        cut = rng.randrange(2, len(t))
        fwd = t.ids[max(0, cut - QUERY_TOKENS):cut]
        q = fwd[::-1].copy()
        t1 = time.perf_counter()
        longest = shard.longest(q)
        m = shard.matches(q, [longest], 64) if longest else None
        sa_ms.append((time.perf_counter() - t1) * 1000)
        t1 = time.perf_counter()
        order, _ = table.query(fwd)
        ng_ms.append((time.perf_counter() - t1) * 1000)
        agree += m is not None and order == max((o for o in NGRAM_ORDERS if o <= longest), default=0)
    n = len(sa_ms)
    return {"files": len(entries), "tokens": int(len(shard.ids)),
            "suffix_array": {"build_s": round(sa_s, 2), "megabytes": round(sa_bytes / 2**20, 1),
                             "query_p50_ms": round(percentile(sa_ms, 0.5), 2),
                             "query_p95_ms": round(percentile(sa_ms, 0.95), 2), "any_length": True},
            "ngram_table": {"build_s": round(ng_s, 2), "megabytes": round(table.nbytes / 2**20, 1),
                            "orders": list(NGRAM_ORDERS), "query_p50_ms": round(percentile(ng_ms, 0.5), 2),
                            "query_p95_ms": round(percentile(ng_ms, 0.95), 2), "any_length": False},
            "same_longest_order": round(agree / max(1, n), 3), "queries": n}


# ---------------------------------------------------------------------------- 2. retrieval
def _chunk_texts(shard: Shard) -> tuple[list[str], list[int]]:
    """The memory's chunks (text, file index) of a shard."""
    texts, owner = [], []
    for c in range(len(shard.chunk_tok)):
        f = int(shard.chunk_file[c])
        first = int(shard.starts[int(shard.chunk_tok[c])])
        same = c + 1 < len(shard.chunk_tok) and int(shard.chunk_file[c + 1]) == f
        end = int(shard.starts[int(shard.chunk_tok[c + 1])]) if same else int(shard.file_byte[f + 1])
        texts.append(shard.text(first, end))
        owner.append(f)
    return texts, owner


def retrieval(cases_dir: Path) -> dict:
    cases = load_cases(cases_dir)
    by_repo: dict[str, list[dict]] = defaultdict(list)
    for c in cases:
        by_repo[c["repo"]].append(c)
    hits = defaultdict(int)
    times = defaultdict(list)
    builds = defaultdict(float)
    counted = 0
    for repo, rc in by_repo.items():
        checkout = cases_dir / repo.replace("/", "+")
        entries = [got for p in sorted(checkout.rglob("*")) if p.is_file() and (got := read_source(p))]
        paths = [Path(f.path) for f, _ in entries]
        shard = Shard.build(entries)
        texts, owner = _chunk_texts(shard)
        t0 = time.perf_counter()  # the postings as a shard builds them (its tokens exist already)
        arrays = chunk_arrays(np.asarray(shard.ids), np.asarray(shard.starts), np.asarray(shard.blob),
                              np.asarray(shard.file_tok))
        builds["bm25"] += time.perf_counter() - t0
        post_ids, post_chunks, chunk_words = arrays["post_ids"], arrays["post_chunks"], arrays["chunk_words"]
        own_chunks = defaultdict(list)
        for i, f in enumerate(owner):
            own_chunks[f].append(i)
        t0 = time.perf_counter()
        db = sqlite3.connect(":memory:")
        db.execute("CREATE VIRTUAL TABLE c USING fts5(body, tokenize='unicode61')")
        db.executemany("INSERT INTO c(rowid, body) VALUES (?, ?)", enumerate(texts))
        builds["fts5"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        sets = [set(NAME.findall(t)) for t in texts]
        builds["jaccard"] += time.perf_counter() - t0
        for c in rc:
            path, doc, cursor, line = cut_case(checkout, c)
            whole = line.strip()
            others = [i for i, t in enumerate(texts) if whole in t and paths[owner[i]] != path]
            if not others:
                continue
            counted += 1
            context = doc[max(0, cursor - 1500):cursor + 400]
            own = paths.index(path) if path in paths else -1
            data = context.encode()
            t = tokenize(data)
            qwords = np.unique(t.ids[word_mask(np.frombuffer(data, np.uint8), t.starts)])
            t1 = time.perf_counter()
            hit, sc = bm25(post_ids, post_chunks, chunk_words, qwords)
            sc[np.isin(hit, own_chunks.get(own, []))] = 0
            top = [int(hit[i]) for i in np.argsort(-sc)[:TOP_CHUNKS]]
            times["bm25"].append((time.perf_counter() - t1) * 1000)
            hits["bm25"] += any(whole in texts[i] for i in top)
            terms = " OR ".join(f'"{w}"' for w in sorted(set(NAME.findall(context)))[:200])
            t1 = time.perf_counter()
            rows = db.execute("SELECT rowid FROM c WHERE c MATCH ? ORDER BY bm25(c) LIMIT ?",
                              (terms, TOP_CHUNKS + 8)).fetchall() if terms else []
            top = [r for (r,) in rows if owner[r] != own][:TOP_CHUNKS]
            times["fts5"].append((time.perf_counter() - t1) * 1000)
            hits["fts5"] += any(whole in texts[i] for i in top)
            qset = set(NAME.findall(context))
            t1 = time.perf_counter()
            scores = [len(qset & st) / max(1, len(qset | st)) if owner[i] != own else -1 for i, st in enumerate(sets)]
            top = list(np.argsort(-np.array(scores))[:TOP_CHUNKS])
            times["jaccard"].append((time.perf_counter() - t1) * 1000)
            hits["jaccard"] += any(whole in texts[i] for i in top)
        db.close()
    return {"cases": counted, **{k: {"hit_at_2": round(hits[k] / max(1, counted), 3), "build_s": round(builds[k], 2),
                                      "query_p95_ms": round(percentile(times[k], 0.95), 2)}
                                  for k in ("bm25", "fts5", "jaccard")}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=QUERIES)
    ap.add_argument("--cases-dir", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=RESULTS / "memory_structures.json")
    args = ap.parse_args(argv)
    cont = continuations(materialize(args.files, workspace_folders()), args.queries)
    ret = retrieval(args.cases_dir or default_cases_dir())
    print(f"continuations over {cont['files']} files, {cont['tokens']} tokens:")
    print(f"{'':16}{'build s':>9}{'MB':>8}{'q p50 ms':>10}{'q p95 ms':>10}")
    for k in ("suffix_array", "ngram_table"):
        r = cont[k]
        print(f"{k:16}{r['build_s']:>9.1f}{r['megabytes']:>8.0f}{r['query_p50_ms']:>10.2f}{r['query_p95_ms']:>10.2f}")
    print(f"\nchunk retrieval on {ret['cases']} dev cases whose line is in another file:")
    print(f"{'':10}{'hit@2':>8}{'build s':>9}{'q p95 ms':>10}")
    for k in ("bm25", "fts5", "jaccard"):
        r = ret[k]
        print(f"{k:10}{r['hit_at_2']:>8.1%}{r['build_s']:>9.2f}{r['query_p95_ms']:>10.2f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"benchmark": "memory_structures", "continuations": cont, "retrieval": ret},
                                   indent=1) + "\n")
    print(json.dumps({"memory_structures": {"sa_query_p95_ms": cont["suffix_array"]["query_p95_ms"],
                                            "ngram_query_p95_ms": cont["ngram_table"]["query_p95_ms"],
                                            "sa_mb": cont["suffix_array"]["megabytes"],
                                            "ngram_mb": cont["ngram_table"]["megabytes"],
                                            "bm25_hit": ret["bm25"]["hit_at_2"], "fts5_hit": ret["fts5"]["hit_at_2"],
                                            "jaccard_hit": ret["jaccard"]["hit_at_2"]}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
