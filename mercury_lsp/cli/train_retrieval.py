"""The retrieval rows of ``train fit --retrieval-share`` (mercury_train/retrieval.py), built with
the daemon's own parts so that training sees what the embedded model is served:

* the corpus's training documents (licence read from package metadata and decontaminated by
  ``train prepare``), grouped by the package they came from, each package written to a folder
  of its own (only its kept training files: nothing the corpus dropped can be retrieved);
* the real repository memory over that folder (``Memory``, persist off), asked as the
  completion pipeline asks it (``Memory.retrieve(Context, ...)``: definitions, then chunks of
  other files like the code around the cursor), with chunks of the file being completed left
  out — in the daemon that file's own lines are the prefix and suffix already, and here its
  copy on disk holds the answer;
* the backend's ``comment_block`` (one format: the chunks as comments before the prefix, most
  relevant nearest to it) in the room the window leaves, as ``backend.local`` fits it.

A row's span is the rest of a line after a cursor (at the line's indentation: the whole line),
like the completion benchmark's cases; its prefix and suffix share the window as the daemon's
window builder shares it (the suffix a quarter of what retrieval leaves).
"""

from __future__ import annotations

import hashlib
import random
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from mercury_lsp.backend.retrieved import comment_block
from mercury_lsp.completion.retrieved import seam_chunks
from mercury_lsp.memory import Memory
from mercury_lsp.memory.query import Context
from mercury_lsp.memory.service import MemoryOptions
from mercury_train.bpe import PAD_TOKEN
from mercury_train.corpus import read_documents
from mercury_train.retrieval import RetrievalRows, lay_out, stack

# The window's share that retrieval takes: the completion benchmark's retrieving arms'
# (benchmarks/completion/arms.py RETRIEVAL_SHARE, "room for two chunks").
RETRIEVAL_SHARE = 0.25
SUFFIX_SHARE = 0.25  # of the rest: the daemon's ``context.suffixShare`` default
# What the daemon retrieves by default (``memory.chunks`` / ``memory.definitions``).
CHUNKS, DEFINITIONS = 2, 4
MAX_FILES_PER_PACKAGE = 200  # a package's folder: its memory builds in about a second
MIN_LINE_CHARS = 8  # a span of at least this many characters (no bare `)` or `else:`)
MAX_PAD = 64  # padding tokens after the span, as the batcher's infill rows (recipe max_pad)
BUILD_TIMEOUT_S = 120.0
STDLIB = "stdlib"


@dataclass
class RowSource:
    """Where a row came from (tests and the build's report): its package, file and the files
    of the chunks in its block."""

    package: str
    path: str
    chunk_paths: tuple[str, ...]


def _packages(train: Path) -> dict[str, list[dict]]:
    by: dict[str, list[dict]] = defaultdict(list)
    for doc in read_documents(train):
        by[doc["source"]].append(doc)
    return {name: docs for name, docs in by.items() if len(docs) >= 2}


def _relative(doc: dict) -> str:
    """The file's path inside its package (the corpus path less ``stdlib/`` or ``site/NAME/``)."""
    parts = doc["path"].split("/")
    return "/".join(parts[1:] if parts[0] == STDLIB else parts[2:])


def _cursor(text: str, rng: random.Random) -> tuple[int, int] | None:
    """(cursor, end of its line): a line span (at the indentation) or the rest of a line."""
    lines = text.split("\n")
    starts, pos = [], 0
    for line in lines:
        starts.append(pos)
        pos += len(line) + 1
    eligible = [i for i, line in enumerate(lines[1:], 1) if len(line.strip()) >= MIN_LINE_CHARS]
    if not eligible:
        return None
    i = rng.choice(eligible)
    line = lines[i]
    indent = len(line) - len(line.lstrip())
    cut = indent if rng.random() < 0.5 else rng.randrange(indent, len(line.rstrip()))
    return starts[i] + cut, starts[i] + len(line)


def build_rows(corpus: Path, tokenizer_json: str, seq_len: int, rows: int, seed: int = 0,
               log=print, split: str = "train") -> tuple[RetrievalRows, list[RowSource]]:
    """About ``rows`` rows from the corpus's ``split`` (``train``; ``heldout`` for a probe),
    spread over its packages by their (capped) file counts; only rows whose block holds at
    least one chunk are kept."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_str(tokenizer_json)
    pad_id = tok.token_to_id(PAD_TOKEN)

    rng = random.Random(seed)
    packages = _packages(corpus / f"{split}.jsonl.gz")
    sizes = {n: min(len(d), MAX_FILES_PER_PACKAGE) for n, d in packages.items()}
    total = sum(sizes.values()) or 1
    built: list[tuple[list[int], int, int, int, int]] = []
    sources: list[RowSource] = []
    t0 = time.perf_counter()
    context = int(seq_len * (1 - RETRIEVAL_SHARE))
    for name in sorted(packages):
        docs = sorted(packages[name], key=lambda d: hashlib.sha256(d["path"].encode()).hexdigest())
        docs = docs[:MAX_FILES_PER_PACKAGE]
        want = max(1, round(rows * sizes[name] / total))
        with tempfile.TemporaryDirectory(prefix="mercury-retrieval-") as tmp:
            root = Path(tmp).resolve() / "pkg"
            for doc in docs:
                target = root / _relative(doc)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(doc["text"], encoding="utf-8")
            memory = Memory([root], MemoryOptions(persist=False))
            memory.start()
            try:
                if not memory.wait_built(BUILD_TIMEOUT_S):
                    log(f"retrieval rows: {name}: the memory did not build in {BUILD_TIMEOUT_S:.0f} s; skipped")
                    continue
                for _ in range(want * 2):  # rows without a chunk are dropped: try twice as many
                    if want <= 0:
                        break
                    doc = rng.choice(docs)
                    row = _row(doc, root / _relative(doc), memory, rng, tok, context, seq_len, pad_id)
                    if row is None:
                        continue
                    built.append(row[0])
                    sources.append(RowSource(name, _relative(doc), row[1]))
                    want -= 1
            finally:
                memory.close()
        log(f"retrieval rows: {name}: {len(built)} rows so far, {time.perf_counter() - t0:.0f} s")
    log(f"retrieval rows: {len(built)} from {len(packages)} packages in {time.perf_counter() - t0:.0f} s")
    return stack(built), sources


def _row(doc: dict, path: Path, memory: Memory, rng: random.Random, tok, context: int, seq_len: int,
         pad_id: int):
    """One row for a cursor in ``doc`` (at ``path`` in the package's folder), or None when the
    memory found nothing in the package's other files."""

    def ids(text: str) -> list[int]:
        return tok.encode(text, add_special_tokens=False).ids

    def count(text: str) -> int:
        return len(ids(text))

    text = doc["text"]
    at = _cursor(text, rng)
    if at is None:
        return None
    cursor, line_end = at
    uri = path.as_uri()
    found = memory.retrieve(Context(uri, text, cursor, "python", False, line_end), (), CHUNKS, DEFINITIONS)
    own = str(path)
    found = [c for c in found if c.path not in (own, uri)]
    if not found:
        return None
    span = ids(text[cursor:line_end])
    pads = rng.randint(0, MAX_PAD)
    window = context - len(span) - pads  # the span's region (span and padding) is the engine's, not the window's
    suffix = ids(text[line_end:])[: int(window * SUFFIX_SHARE)]
    before = tok.encode(text[:cursor], add_special_tokens=False)
    keep = max(1, window - len(suffix))
    start = before.offsets[-keep][0] if len(before.ids) > keep else 0
    prefix = text[start:cursor]
    room = seq_len - count(prefix) - len(span) - pads - len(suffix)
    chunks = seam_chunks(found, memory.roots)
    block = comment_block(chunks, uri, room, count) if room > 0 else ""
    if not block:
        return None
    laid = lay_out(ids(block + prefix), count(block), span, suffix, pads, seq_len, pad_id)
    if laid is None:
        return None
    return laid, tuple(c.path for c in chunks)
