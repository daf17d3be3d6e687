"""The retrieval rows of ``train fit --retrieval-share``: built with the real memory over each
package's training files and the backend's comment block; a row's block holds chunks of other
files of its own package, never of its own file or of another package."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from mercury_lsp.backend.retrieved import HEADER
from mercury_lsp.cli.train_retrieval import build_rows
from mercury_train.testing import tiny_tokenizer

L = 512


def _doc(package: str, rel: str, text: str) -> dict:
    return {"path": f"site/{package}/{rel}", "source": package, "license": "MIT", "text": text}


def _module(name: str, helper: str, n: int) -> str:
    lines = [f"from {name}.util import {helper}_value", "", ""]
    for i in range(n):
        lines += [f"def {name}_step_{i}(items):", f"    total = {helper}_value(items, {i})",
                  f"    return total + {helper}_value(items, {i + 1})", "", ""]
    return "\n".join(lines)


def _corpus(tmp_path: Path) -> Path:
    docs = []
    for pkg, helper in (("alpha", "scale"), ("beta", "shift")):
        docs.append(_doc(pkg, f"{pkg}/util.py",
                         f"def {helper}_value(items, k):\n    return sum(items) * k + len(items)\n"))
        for j in range(3):
            docs.append(_doc(pkg, f"{pkg}/mod{j}.py", _module(pkg, helper, 6)))
    docs.append(_doc("gamma", "gamma/only.py", _module("gamma", "lonely", 3)))  # one file: nothing to retrieve from
    with gzip.open(tmp_path / "train.jsonl.gz", "wt", encoding="utf-8") as fh:
        for d in docs:
            fh.write(json.dumps(d) + "\n")
    return tmp_path


def test_rows_carry_chunks_of_their_own_package_and_never_of_their_own_file(tmp_path):
    tok = tiny_tokenizer()
    rows, sources = build_rows(_corpus(tmp_path), tok.to_str(), L, rows=24, seed=3, log=lambda *_: None)
    assert len(rows) == len(sources) >= 8
    assert {s.package for s in sources} == {"alpha", "beta"}
    marker = HEADER.split("{")[0]
    for i, src in enumerate(sources):
        assert src.chunk_paths and src.path not in src.chunk_paths
        assert all(p.startswith(f"{src.package}/") for p in src.chunk_paths)
        block = tok.decode(rows.tokens[i, : int(rows.block[i])].tolist(), skip_special_tokens=False)
        assert block.startswith("#") and marker in block and src.path not in block
        other = "beta" if src.package == "alpha" else "alpha"
        assert f"{other}/" not in block
        start, span = int(rows.start[i]), int(rows.span[i])
        assert span > 0 and start + span + int(rows.pads[i]) <= L
