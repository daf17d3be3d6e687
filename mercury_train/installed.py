"""An offline corpus: the Python source installed on the machine that builds it.

Sources are the running interpreter's standard library (PSF-2.0) and every installed
distribution (``importlib.metadata``) whose licence, read from its own metadata, is on the
permissive allow-list and names no copyleft or proprietary licence. The manifest records each
source as ``name==version`` with its licence, files and bytes; refused distributions are
listed with their licence. No network is used.

``build_offline`` is the one filter run of every corpus builder (this one, and the pinned
PyPI archives of mercury_train/corpus_v2.py), with the rules of mercury_train/corpus.py: test
files, huge and generated files dropped; files sharing a 13-gram with the evaluation data
dropped (mercury_train/decontam.py); exact duplicates (normalised content hash) dropped; the
held-out split by path hash.
Reading, filtering and the contamination check run in worker processes, one source per task.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import multiprocessing as mp
import sys
import sysconfig
import time
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path

from mercury_train.corpus import (
    MAX_FILE_BYTES,
    MIN_FILE_CHARS,
    SKIP_STDLIB,
    CorpusReport,
    heldout,
    is_permissive,
    is_test_path,
    license_text,
    looks_generated,
    normalise,
)
from mercury_train.decontam import NGRAM, ContaminationIndex

HELDOUT_FRAC = 0.03  # as the PyPI corpus (benchmarks/train/heldout.py rebuilds the stdlib share)


@dataclass
class Source:
    name: str  # "stdlib" or "name==version"
    license: str
    root: str
    files: list[str]  # paths relative to root


@dataclass
class OfflineReport(CorpusReport):
    contamination_check: str = "none"  # where the evaluation n-grams came from ("none": not run)
    seconds: float = 0.0
    heldout_frac: float = HELDOUT_FRAC
    refused: dict[str, str] = field(default_factory=dict)  # name==version -> its licence


def stdlib_source(root: Path | None = None) -> Source:
    root = root or Path(sysconfig.get_paths()["stdlib"])
    files = [p.relative_to(root).as_posix() for p in sorted(root.rglob("*.py"))]
    return Source("stdlib", "PSF-2.0", str(root), [f for f in files if not any(s in f for s in SKIP_STDLIB)])


def installed_sources(paths: list[str] | None = None) -> tuple[list[Source], dict[str, str]]:
    """Permissive installed distributions (first of each name on ``paths``/``sys.path``) and
    the refused ones with their licence."""
    keep: list[Source] = []
    refused: dict[str, str] = {}
    seen: set[str] = set()
    for dist in metadata.distributions(path=paths if paths is not None else sys.path):
        name = (dist.metadata.get("Name") or "").lower().replace("_", "-")
        if not name or name in seen:
            continue
        seen.add(name)
        spec = f"{name}=={dist.version}"
        lic = license_text(dist.metadata)
        if not is_permissive(lic):
            refused[spec] = lic
            continue
        files = sorted(str(f) for f in dist.files or [] if str(f).endswith(".py") and not str(f).startswith(".."))
        if files:
            keep.append(Source(spec, lic, str(dist.locate_file("")), files))
    keep.sort(key=lambda s: s.name)
    return keep, refused


# ---------------------------------------------------------------------------- workers
_INDEX: ContaminationIndex | None = None  # set in the parent before the pool forks


def _scan(source: Source) -> dict:
    """Read and filter one source's files (in a worker): kept documents and counters."""
    out = {"name": source.name, "license": source.license, "docs": [], "seen": 0, "tests": 0,
           "size": 0, "contaminated": []}
    root = Path(source.root)
    for rel in source.files:
        out["seen"] += 1
        if is_test_path(rel):
            out["tests"] += 1
            continue
        try:
            raw = (root / rel).read_bytes()
            text = raw.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if len(raw) > MAX_FILE_BYTES or len(text) < MIN_FILE_CHARS or looks_generated(text):
            out["size"] += 1
            continue
        path = f"{'stdlib' if source.name == 'stdlib' else 'site/' + source.name}/{rel}"
        if _INDEX is not None and _INDEX.contaminated(text):
            out["contaminated"].append(path)
            continue
        digest = hashlib.sha256(normalise(text).encode()).hexdigest()
        out["docs"].append((path, digest, text))
    return out


def build_offline(index: ContaminationIndex, workers: int, *, sources: list[Source] | None = None,
                  refused: dict[str, str] | None = None, max_bytes: int = 0,
                  heldout_frac: float = HELDOUT_FRAC) -> tuple[list[dict], list[dict], OfflineReport]:
    """(train documents, held-out documents, report); documents are dicts like the PyPI
    corpus's lines: path, source, license, text. ``max_bytes`` (0: no cap) stops adding
    training files past that many bytes, sources in name order."""
    global _INDEX
    t0 = time.perf_counter()
    if sources is None:
        found, refused = installed_sources()
        sources = [stdlib_source(), *found]
    report = OfflineReport(contamination_check=index.source if index.active else "none",
                           refused=dict(refused or {}), heldout_frac=heldout_frac)
    _INDEX = index
    try:
        ctx = mp.get_context("fork")
        with ctx.Pool(max(1, workers)) as pool:
            # Largest sources first so that no worker is left with a big one at the end.
            order = sorted(sources, key=lambda s: -len(s.files))
            results = {r["name"]: r for r in pool.imap_unordered(_scan, order)}
    finally:
        _INDEX = None
    seen: set[str] = set()
    train: list[dict] = []
    held: list[dict] = []
    for source in sources:  # a fixed order: which copy of a duplicate is kept is deterministic
        r = results[source.name]
        report.files_seen += r["seen"]
        report.dropped_tests += r["tests"]
        report.dropped_size_or_generated += r["size"]
        report.dropped_contaminated += len(r["contaminated"])
        report.contaminated_examples.extend(r["contaminated"][: max(0, 20 - len(report.contaminated_examples))])
        stats = {"license": r["license"], "files": 0, "bytes": 0}
        for path, digest, text in r["docs"]:
            if digest in seen:
                report.dropped_duplicates += 1
                continue
            seen.add(digest)
            size = len(text.encode())
            is_held = heldout(path, heldout_frac)
            if not is_held and max_bytes and report.train_bytes >= max_bytes:
                continue
            doc = {"path": path, "source": r["name"], "license": r["license"], "text": text}
            (held if is_held else train).append(doc)
            if is_held:
                report.heldout_files += 1
                report.heldout_bytes += size
            else:
                report.train_files += 1
                report.train_bytes += size
            stats["files"] += 1
            stats["bytes"] += size
        report.sources[r["name"]] = stats
    report.seconds = time.perf_counter() - t0
    return train, held, report


def manifest(report: OfflineReport, builder: str = "installed", **extra) -> dict:
    """Provenance: the builder, every kept source as name==version with its licence (in
    ``report.sources``), the refused ones with theirs, and ``extra`` (e.g. the pinned files)."""
    return {"builder": builder, "python": sys.version.split()[0], "heldout_frac": report.heldout_frac,
            "ngram": NGRAM, "packages": sorted(k for k in report.sources if k != "stdlib"), **extra,
            "report": asdict(report)}


def write_documents(out: Path, train: list[dict], held: list[dict], report: OfflineReport,
                    builder: str = "installed", **extra) -> None:
    """train/heldout.jsonl.gz and manifest.json (the layout ``train prepare`` writes and
    tokenizes), whichever builder made the documents."""
    out.mkdir(parents=True, exist_ok=True)
    for split, docs in (("train", train), ("heldout", held)):
        tmp = out / f"{split}.jsonl.gz.tmp"
        with gzip.open(tmp, "wt", encoding="utf-8", compresslevel=1) as fh:
            for doc in docs:
                fh.write(json.dumps(doc) + "\n")
        tmp.replace(out / f"{split}.jsonl.gz")
    (out / "manifest.json").write_text(json.dumps(manifest(report, builder, **extra), indent=2) + "\n")
