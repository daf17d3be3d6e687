"""Reproducible training corpus for the embedded model.

Sources (each file's provenance and licence recorded in ``manifest.json``):

* the Python standard library of the running interpreter (PSF licence), test directories
  excluded;
* a fixed, pinned list of permissively licensed packages from PyPI (wheels: their ``.py``
  files), each licence read from the wheel's metadata and checked against an allow-list.

Steps: collect -> drop tests, huge and generated files -> exact de-duplication (normalised
content hash) -> contamination check (13-gram overlap with the evaluation data; overlapping
files are dropped and reported) -> a deterministic held-out split by path hash.
Nothing here is committed: the output directory is git-ignored.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from email.parser import Parser
from pathlib import Path

# Pinned packages: name==version. Licences are verified from each wheel's metadata.
PYPI_PACKAGES = [
    "attrs==26.1.0", "black==26.10.1", "click==8.5.1", "django==5.2.19", "flask==3.1.3",
    "httpx==0.28.1", "jinja2==3.1.6", "mypy==2.4.1", "networkx==3.6.1", "pandas==3.1.1",
    "pygments==2.21.0", "pytest==9.2.0", "requests==2.34.2", "rich==15.0.0",
    "scikit-learn==1.9.1", "sqlalchemy==2.1.9", "sympy==1.14.0", "werkzeug==3.1.9",
]
PERMISSIVE = re.compile(r"\b(MIT|BSD|Apache|PSF|Python Software Foundation|ISC|0BSD|Unlicense)\b", re.I)
TEST_DIR = re.compile(r"(^|/)(tests?|testing|test_\w+|\w+_tests?|idle_test|testsuite)(/|$)")
SKIP_STDLIB = ("site-packages/", "ensurepip/_bundled", "lib2to3/tests", "__phello__", "config-3")
MAX_FILE_BYTES = 200_000
NGRAM = 13


@dataclass
class Document:
    path: str  # e.g. "stdlib/json/decoder.py" or "pypi/requests==2.34.2/requests/api.py"
    source: str  # "stdlib" or the pinned package
    license: str
    text: str


@dataclass
class CorpusReport:
    files_seen: int = 0
    dropped_tests: int = 0
    dropped_size_or_generated: int = 0
    dropped_duplicates: int = 0
    dropped_contaminated: int = 0
    contaminated_examples: list[str] = field(default_factory=list)
    train_files: int = 0
    heldout_files: int = 0
    train_bytes: int = 0
    heldout_bytes: int = 0
    sources: dict[str, dict] = field(default_factory=dict)


# ---------------------------------------------------------------------------- sources
def stdlib_documents(root: Path | None = None) -> Iterator[Document]:
    root = root or Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if any(s in rel for s in SKIP_STDLIB):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        yield Document(f"stdlib/{rel}", "stdlib", "PSF-2.0", text)


def download_wheel(spec: str, cache: Path) -> Path:
    cache.mkdir(parents=True, exist_ok=True)
    name = spec.split("==")[0].replace("-", "_").lower()
    version = spec.split("==")[1]
    for whl in cache.glob("*.whl"):
        stem = whl.name.lower()
        if stem.startswith(f"{name}-{version}-"):
            return whl
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:",
                    spec, "-d", str(cache)], check=True)
    return download_wheel(spec, cache)


def wheel_license(zf: zipfile.ZipFile) -> str:
    meta_name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
    meta = Parser().parsestr(zf.read(meta_name).decode("utf-8", "replace"))
    found = [meta.get("License-Expression") or "", meta.get("License") or ""]
    found += [c.split("::")[-1].strip() for c in meta.get_all("Classifier") or [] if c.startswith("License")]
    text = "; ".join(f.strip().splitlines()[0] for f in found if f.strip())
    return text or "unknown"


def wheel_documents(spec: str, cache: Path) -> tuple[str, Iterator[Document]]:
    whl = download_wheel(spec, cache)
    zf = zipfile.ZipFile(whl)
    lic = wheel_license(zf)

    def docs() -> Iterator[Document]:
        for name in sorted(zf.namelist()):
            if not name.endswith(".py") or ".dist-info/" in name:
                continue
            try:
                text = zf.read(name).decode("utf-8")
            except UnicodeDecodeError:
                continue
            yield Document(f"pypi/{spec}/{name}", spec, lic, text)

    return lic, docs()


# ---------------------------------------------------------------------------- filters
def is_test_path(path: str) -> bool:
    rel = path.split("/", 2)[-1] if path.startswith("pypi/") else path
    base = rel.rsplit("/", 1)[-1]
    return bool(TEST_DIR.search(rel)) or base.startswith("test_") or base.endswith("_test.py") \
        or base == "conftest.py"


def looks_generated(text: str) -> bool:
    lines = text.splitlines()
    if not lines:
        return True
    long_lines = sum(len(line) > 300 for line in lines)
    return long_lines > 5 or "auto-generated" in text[:2000].lower() or "autogenerated" in text[:2000].lower()


def normalise(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def words(text: str) -> list[str]:
    return re.findall(r"\w+|[^\w\s]", text)


def ngrams(tokens: list[str], n: int = NGRAM) -> Iterator[tuple[str, ...]]:
    for i in range(len(tokens) - n + 1):
        yield tuple(tokens[i:i + n])


def eval_ngrams(eval_dir: Path | None) -> set[int]:
    """Hashes of 13-grams of every evaluation problem (prompt, solution, suffix, tests)."""
    grams: set[int] = set()
    if eval_dir is None or not eval_dir.is_dir():
        return grams
    for f in sorted(eval_dir.glob("*.jsonl.gz")):
        with gzip.open(f, "rt", encoding="utf-8") as fh:
            for line in fh:
                p = json.loads(line)
                text = p["prompt"] + p["canonical_solution"] + p["suffix"]
                grams.update(hash(g) for g in ngrams(words(text)))
    return grams


def heldout(path: str, frac: float) -> bool:
    h = int.from_bytes(hashlib.sha256(path.encode()).digest()[:4], "big")
    return h / 2**32 < frac


# ---------------------------------------------------------------------------- build
def build_corpus(out: Path, *, packages: Iterable[str] = PYPI_PACKAGES, eval_dir: Path | None = None,
                 cache: Path | None = None, heldout_frac: float = 0.03,
                 stdlib_root: Path | None = None) -> CorpusReport:
    out.mkdir(parents=True, exist_ok=True)
    cache = cache or out / "wheels"
    report = CorpusReport()
    contamination = eval_ngrams(eval_dir)
    seen: set[str] = set()
    train_f = gzip.open(out / "train.jsonl.gz.tmp", "wt", encoding="utf-8")
    held_f = gzip.open(out / "heldout.jsonl.gz.tmp", "wt", encoding="utf-8")

    sources: list[tuple[str, str, Iterator[Document]]] = [("stdlib", "PSF-2.0", stdlib_documents(stdlib_root))]
    for spec in packages:
        lic, docs = wheel_documents(spec, cache)
        if not PERMISSIVE.search(lic):
            print(f"corpus: skipping {spec}: licence {lic!r} is not on the permissive allow-list",
                  file=sys.stderr)
            continue
        sources.append((spec, lic, docs))

    for name, lic, docs in sources:
        stats = {"license": lic, "files": 0, "bytes": 0}
        for doc in docs:
            report.files_seen += 1
            if is_test_path(doc.path):
                report.dropped_tests += 1
                continue
            if len(doc.text.encode()) > MAX_FILE_BYTES or len(doc.text) < 64 or looks_generated(doc.text):
                report.dropped_size_or_generated += 1
                continue
            digest = hashlib.sha256(normalise(doc.text).encode()).hexdigest()
            if digest in seen:
                report.dropped_duplicates += 1
                continue
            seen.add(digest)
            if contamination and any(hash(g) in contamination for g in ngrams(words(doc.text))):
                report.dropped_contaminated += 1
                if len(report.contaminated_examples) < 20:
                    report.contaminated_examples.append(doc.path)
                continue
            is_held = heldout(doc.path, heldout_frac)
            (held_f if is_held else train_f).write(json.dumps(asdict(doc)) + "\n")
            size = len(doc.text.encode())
            if is_held:
                report.heldout_files += 1
                report.heldout_bytes += size
            else:
                report.train_files += 1
                report.train_bytes += size
            stats["files"] += 1
            stats["bytes"] += size
        report.sources[name] = stats
    train_f.close()
    held_f.close()
    (out / "train.jsonl.gz.tmp").replace(out / "train.jsonl.gz")
    (out / "heldout.jsonl.gz.tmp").replace(out / "heldout.jsonl.gz")
    manifest = {"packages": list(packages), "python": sys.version.split()[0],
                "heldout_frac": heldout_frac, "ngram": NGRAM,
                "eval_dir": str(eval_dir) if eval_dir else None, "report": asdict(report)}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return report


def read_documents(path: Path) -> Iterator[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            yield json.loads(line)


def iter_text(path: Path) -> Iterator[str]:
    for doc in read_documents(path):
        yield doc["text"]


