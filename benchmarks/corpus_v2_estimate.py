"""Estimate of corpus v2's size without the full build.

    python -m benchmarks.corpus_v2_estimate

Counts the ``.py`` bytes of the standard library and of the pinned wheels already extracted by
``mercury-lsp train prepare --v2`` (``~/.cache/mercury-lsp/wheels-v2/extracted``), after the
corpus's test/size/generated filters and exact (byte) de-duplication, and converts them to
tokens at the embedded tokenizer's measured 3.486 bytes/token (35.07 MB -> 10.06 M tokens on
the corpus of benchmarks/results/recipes.md). Licence refusals and the contamination check,
which only remove files, are not applied. Ends with one JSON line.
"""

from __future__ import annotations

import hashlib
import json
import sysconfig
from pathlib import Path

from engine.train.corpus import MAX_FILE_BYTES, SKIP_STDLIB, is_test_path, looks_generated
from engine.train.corpus_v2 import PYPI_PACKAGES_V2

BYTES_PER_TOKEN = 3.486
EXTRACTED = Path.home() / ".cache" / "mercury-lsp" / "wheels-v2" / "extracted"


def kept_bytes(root: Path, name: str, seen: set[bytes]) -> tuple[int, int]:
    files = size = 0
    for p in root.rglob("*.py"):
        rel = p.relative_to(root).as_posix()
        if (name == "stdlib" and any(s in rel for s in SKIP_STDLIB)) or is_test_path(rel):
            continue
        try:
            raw = p.read_bytes()
            text = raw.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        digest = hashlib.sha256(raw).digest()
        if len(raw) > MAX_FILE_BYTES or len(text) < 64 or looks_generated(text) or digest in seen:
            continue
        seen.add(digest)
        files += 1
        size += len(raw)
    return files, size


def main() -> int:
    seen: set[bytes] = set()
    dirs = [(Path(sysconfig.get_paths()["stdlib"]), "stdlib")]
    dirs += [(EXTRACTED / s, s) for s in PYPI_PACKAGES_V2 if (EXTRACTED / s).is_dir()]
    per = {name: kept_bytes(root, name, seen) for root, name in dirs}
    total = sum(b for _, b in per.values())
    for name, (files, size) in sorted(per.items(), key=lambda kv: -kv[1][1])[:15]:
        print(f"{name:<36}{files:>7}{size / 1e6:>9.1f} MB")
    print(json.dumps({"sources": len(dirs), "files": sum(f for f, _ in per.values()), "bytes": total,
                      "estimated_tokens": int(total / BYTES_PER_TOKEN),
                      "missing": [s for s in PYPI_PACKAGES_V2 if not (EXTRACTED / s).is_dir()]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
