"""The corpora built from pinned PyPI archives, and corpus v2's tokenization.

    mercury-lsp train prepare [--out DIR]             corpus v1: 18 pinned packages, its own BPE
    mercury-lsp train prepare --v2 [--out DIR]        every pinned package (network: PyPI only)
    mercury-lsp train prepare --offline [--out DIR]   what is installed here (no network)

The packages, their files and SHA-256 are pinned in ``corpus_v2.lock.json``
(mercury_train/pins.py). Each archive's licence is read again from its own metadata when the
corpus is built and checked against the allow-list (mercury_train/corpus.py); its ``.py`` files
are extracted once into the cache. Filters, contamination check, dedup and the held-out split
are ``build_offline``'s (mercury_train/installed.py), run in worker processes. Corpus v2 is
tokenized with the embedded model's tokenizer, so that token counts and models compare with
the shipped one; ``tokens.json`` holds the exact token count of every source.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from dataclasses import asdict
from pathlib import Path

import numpy as np

from mercury_train.corpus import PYPI_PACKAGES, is_permissive, license_text
from mercury_train.decontam import ContaminationIndex
from mercury_train.installed import (
    HELDOUT_FRAC,
    OfflineReport,
    Source,
    build_offline,
    installed_sources,
    stdlib_source,
    write_documents,
)
from mercury_train.pins import Pin, PinError, archive_metadata, fetch, load_lock, python_members

TOKENIZER = Path(__file__).resolve().parents[1] / "mercury_engine" / "models" / "mercury-coder-tiny" / "tokenizer.json"
TOKENIZE_CHUNK = 2048  # documents per encode_batch call (the Rust tokenizer's threads)


def select_pins(specs: list[str] | None, lock: list[Pin] | None = None) -> list[Pin]:
    """The lock's pins for ``specs`` (name==version), or the whole lock for None."""
    lock = load_lock() if lock is None else lock
    if specs is None:
        return lock
    by_spec = {p.spec.lower(): p for p in lock}
    missing = [s for s in specs if s.lower() not in by_spec]
    if missing:
        raise PinError(f"not in the lock (python -m mercury_train.pins adds them): {', '.join(missing)}")
    return [by_spec[s.lower()] for s in specs]


def archive_source(pin: Pin, cache: Path) -> tuple[Source | None, str]:
    """(the archive's extracted ``.py`` files as a Source, or None when refused; its licence)."""
    path = fetch(pin, cache)
    lic = license_text(archive_metadata(path))
    if not is_permissive(lic):
        return None, lic
    root = cache / "extracted" / pin.file
    if not (root / ".done").exists():
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        for rel, raw in python_members(path).items():
            target = root / rel
            if root.resolve() not in target.resolve().parents:  # a hostile member name
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(raw)
        (root / ".done").touch()
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py") if p.is_file())
    return Source(pin.spec, lic, str(root), files), lic


def build_pinned(out: Path, index: ContaminationIndex, workers: int, pins: list[Pin], cache: Path, *,
                 builder: str, stdlib_root: Path | None = None,
                 heldout_frac: float = HELDOUT_FRAC) -> tuple[list[dict], list[dict], OfflineReport]:
    """The standard library and the pinned archives through ``build_offline``, written to
    ``out`` (train/heldout.jsonl.gz; manifest.json with each kept pin's file and SHA-256)."""
    found, refused = [], {}
    for pin in pins:
        src, lic = archive_source(pin, cache)
        if src is None:
            refused[pin.spec] = lic
        else:
            found.append(src)
    train, held, report = build_offline(index, workers, sources=[stdlib_source(stdlib_root), *found],
                                        refused=refused, heldout_frac=heldout_frac)
    kept = [asdict(p) for p in pins if p.spec in report.sources]
    write_documents(out, train, held, report, builder, pins=kept)
    return train, held, report


def build_corpus(out: Path, *, packages: list[str] = PYPI_PACKAGES, eval_dir: Path | None = None,
                 cache: Path | None = None, heldout_frac: float = HELDOUT_FRAC,
                 stdlib_root: Path | None = None, workers: int = 1) -> OfflineReport:
    """Corpus v1's documents (``train prepare`` then trains its own tokenizer on them)."""
    _, _, report = build_pinned(out, ContaminationIndex.load(eval_dir), workers, select_pins(packages),
                                cache or out / "wheels", builder="pypi", stdlib_root=stdlib_root,
                                heldout_frac=heldout_frac)
    return report


def tokenize(docs: list[dict], tokenizer_json: str, per_source: Counter | None = None) -> np.ndarray:
    """Every document's tokens followed by ``<|endoftext|>``, as one uint16 stream;
    ``per_source`` (when given) gains each document's token count under its source."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_str(tokenizer_json)
    eot = tok.token_to_id("<|endoftext|>")
    parts = []
    for i in range(0, len(docs), TOKENIZE_CHUNK):
        chunk = docs[i:i + TOKENIZE_CHUNK]
        encs = tok.encode_batch([d["text"] for d in chunk], add_special_tokens=False)
        parts.extend(np.asarray([*e.ids, eot], dtype=np.uint16) for e in encs)
        if per_source is not None:
            for d, e in zip(chunk, encs, strict=True):
                per_source[d["source"]] += len(e.ids) + 1
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint16)


def build_v2(out: Path, index: ContaminationIndex, workers: int, *, offline: bool = False,
             pins: list[Pin] | None = None, cache: Path | None = None) -> dict:
    """Build, tokenize and write the corpus into ``out`` (train/heldout.jsonl.gz, manifest.json,
    tokens.json, and what ``train fit`` reads: train/heldout.bin and tokenizer.json).
    The returned (and written) counts are exact: every kept document is tokenized."""
    if offline:
        found, refused = installed_sources()
        train, held, report = build_offline(index, workers, sources=[stdlib_source(), *found], refused=refused)
        write_documents(out, train, held, report, "installed")
    else:
        train, held, report = build_pinned(out, index, workers, pins if pins is not None else load_lock(),
                                           cache or out / "wheels", builder="pypi-v2")
    tok_json = TOKENIZER.read_text(encoding="utf-8")
    (out / "tokenizer.json").write_text(tok_json, encoding="utf-8")
    stats = {"builder": "installed" if offline else "pypi-v2", "tokenizer": "mercury_engine/models/mercury-coder-tiny"}
    per_source: Counter = Counter()
    for split, docs in (("train", train), ("heldout", held)):
        arr = tokenize(docs, tok_json, per_source)
        arr.tofile(out / f"{split}.bin")
        stats[f"{split}_tokens"] = int(arr.size)
    stats.update(unique_tokens=stats["train_tokens"] + stats["heldout_tokens"],
                 sources=len(report.sources), files=report.train_files + report.heldout_files,
                 bytes=report.train_bytes + report.heldout_bytes, build_s=round(report.seconds, 1),
                 contamination_check=report.contamination_check,
                 dropped_contaminated=report.dropped_contaminated, dropped_duplicates=report.dropped_duplicates,
                 refused=report.refused, source_tokens=dict(per_source.most_common()))
    (out / "tokens.json").write_text(json.dumps(stats, indent=2) + "\n")
    return stats
