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

# v1's 18 packages and 33 more. Versions pinned; licences verified from each wheel.
PYPI_PACKAGES_V2 = [*PYPI_PACKAGES]
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
