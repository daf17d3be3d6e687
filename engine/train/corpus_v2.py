"""Corpus v2: the standard library plus a longer list of pinned, permissively licensed wheels,
or (``offline``) the packages installed on the machine. Tokenized with the embedded model's
tokenizer, so that token counts and models compare with the shipped one.

    mercury-lsp train prepare --v2 [--out DIR]        pinned wheels (network: PyPI only)
    mercury-lsp train prepare --offline [--out DIR]   what is installed here (no network)

Each wheel's licence is read from its METADATA and checked against the allow-list (a licence
naming a copyleft or proprietary one is refused: engine/train/installed.py); its ``.py`` files
are extracted once into the cache. Filters, dedup, contamination check and held-out split are
the offline builder's (``build_offline``), run in worker processes.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import numpy as np

from engine.train.corpus import PYPI_PACKAGES, download_wheel, wheel_license
from engine.train.decontam import ContaminationIndex
from engine.train.installed import (
    Source,
    build_offline,
    installed_sources,
    is_permissive,
    stdlib_source,
    write_documents,
)

# v1's 18 packages and 52 more. Versions pinned; licences verified from each wheel.
PYPI_PACKAGES_V2 = [*PYPI_PACKAGES,
    "alembic==1.20.1", "apache-airflow==3.3.2", "astropy==8.0.2", "bokeh==3.10.2", "celery==5.7.0",
    "cinder==29.0.0", "cirq-core==1.7.0", "dagster==1.13.29", "dask==2026.8.0", "diffusers==0.42.1",
    "distributed==2026.8.0", "fastapi==0.165.0", "flax==0.12.12", "great-expectations==1.24.1",
    "holoviews==1.23.2", "homeassistant==2025.1.4", "ipython==9.18.1", "jax==0.12.0.1", "keras==3.15.1",
    "kombu==5.7.0", "langchain-community==0.4.2", "matplotlib==3.11.2", "mlflow==3.18.0", "mne==1.13.2",
    "neutron==29.0.0", "nltk==3.10.4", "nova==34.0.0", "numba==0.68.1", "openpyxl==3.1.5", "optuna==5.0.0",
    "pennylane==0.45.1", "pip==26.3", "prefect==3.9.1", "pydantic==2.14.4", "pymc==6.4.0",
    "pyro-ppl==1.9.2", "qiskit==2.6.2", "ray==2.60.0", "scikit-image==0.26.0", "scipy==1.18.1",
    "setuptools==84.2.1", "spacy==3.8.18", "sphinx==9.1.1", "sqlglot==30.30.0", "starlette==1.10.0",
    "statsmodels==0.15.0", "streamlit==1.67.0", "tensorflow-probability==0.25.0", "tornado==6.6.1",
    "transformers==5.24.0", "twisted==26.10.0", "xarray==2026.9.0",
]
TOKENIZER = Path(__file__).resolve().parents[1] / "models" / "mercury-coder-tiny" / "tokenizer.json"
TOKENIZE_CHUNK = 2048  # documents per encode_batch call (the Rust tokenizer's threads)


def wheel_source(spec: str, cache: Path) -> tuple[Source | None, str]:
    """(the wheel's extracted ``.py`` files as a Source, or None when refused; its licence)."""
    whl = download_wheel(spec, cache)
    with zipfile.ZipFile(whl) as zf:
        lic = wheel_license(zf)
        if not is_permissive(lic):
            return None, lic
        root = cache / "extracted" / spec
        names = sorted(n for n in zf.namelist() if n.endswith(".py") and ".dist-info/" not in n)
        if not (root / ".done").exists():
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir(parents=True)
            for n in names:
                target = root / n
                if root.resolve() not in target.resolve().parents:  # a hostile member name
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(zf.read(n))
            (root / ".done").touch()
    return Source(spec, lic, str(root), [n for n in names if (root / n).is_file()]), lic


def tokenize(docs: list[dict], tokenizer_json: str) -> np.ndarray:
    """Every document's tokens followed by ``<|endoftext|>``, as one uint16 stream."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_str(tokenizer_json)
    eot = tok.token_to_id("<|endoftext|>")
    parts = []
    for i in range(0, len(docs), TOKENIZE_CHUNK):
        encs = tok.encode_batch([d["text"] for d in docs[i:i + TOKENIZE_CHUNK]], add_special_tokens=False)
        parts.extend(np.asarray([*e.ids, eot], dtype=np.uint16) for e in encs)
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint16)


def build_v2(out: Path, index: ContaminationIndex, workers: int, *, offline: bool = False,
             packages: list[str] | None = None, cache: Path | None = None) -> dict:
    """Build, tokenize and write the corpus into ``out`` (the layout ``train fit`` reads:
    train/heldout.jsonl.gz, train/heldout.bin, tokenizer.json, manifest.json, tokens.json)."""
    if offline:
        found, refused = installed_sources()
    else:
        found, refused = [], {}
        for spec in packages or PYPI_PACKAGES_V2:
            src, lic = wheel_source(spec, cache or out / "wheels")
            if src is None:
                refused[spec] = lic
            else:
                found.append(src)
    train, held, report = build_offline(index, workers, sources=[stdlib_source(), *found], refused=refused)
    write_documents(out, train, held, report)
    tok_json = TOKENIZER.read_text(encoding="utf-8")
    (out / "tokenizer.json").write_text(tok_json, encoding="utf-8")
    stats = {"builder": "installed" if offline else "pypi-v2", "tokenizer": "engine/models/mercury-coder-tiny"}
    for split, docs in (("train", train), ("heldout", held)):
        arr = tokenize(docs, tok_json)
        arr.tofile(out / f"{split}.bin")
        stats[f"{split}_tokens"] = int(arr.size)
    stats.update(files=report.train_files + report.heldout_files, train_bytes=report.train_bytes,
                 build_s=round(report.seconds, 1), contamination_check=report.contamination_check,
                 dropped_contaminated=report.dropped_contaminated, dropped_duplicates=report.dropped_duplicates,
                 refused=report.refused)
    (out / "tokens.json").write_text(json.dumps(stats, indent=2) + "\n")
    return stats
