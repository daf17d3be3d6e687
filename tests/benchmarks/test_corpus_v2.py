"""The corpus v2 benchmark's sampled token count: its estimate and interval against the exact
count of a small corpus made here."""

from __future__ import annotations

import json

import pytest
from tokenizers import Tokenizer

from benchmarks.train import corpus_v2 as bench
from mercury_train.installed import OfflineReport, write_documents


def _corpus(out, n_files: int) -> int:
    """A written corpus of varied files; returns its exact token count (with one EOT each)."""
    tok = Tokenizer.from_file(str(bench.TOKENIZER))
    docs = []
    for i in range(n_files):
        body = "".join(f"def f_{i}_{j}(x):\n    return x * {j} + {i}  # step {j}\n" for j in range(5 + i % 37))
        docs.append({"path": f"site/p==1/m{i}.py", "source": "p==1", "license": "MIT", "text": body})
    report = OfflineReport(train_files=n_files, train_bytes=sum(len(d["text"].encode()) for d in docs),
                           sources={"p==1": {"license": "MIT", "files": n_files, "bytes": 0}})
    write_documents(out, docs, [], report, "pypi-v2")
    return sum(len(e.ids) + 1 for e in tok.encode_batch([d["text"] for d in docs], add_special_tokens=False))


def test_sampled_count_brackets_the_exact_count(tmp_path):
    exact = _corpus(tmp_path, 400)
    result = bench.sample_estimate(tmp_path, 0.25, None)
    t = result["totals"]
    lo, hi = t["unique_tokens_ci95"]
    assert 0.05 * 400 < t["sample_files"] < 0.5 * 400
    assert lo <= exact <= hi and lo < t["unique_tokens"] < hi
    assert hi - lo < 0.1 * exact  # the interval says something
    assert json.loads(json.dumps(result))["sources"][0]["tokens"] is None  # per source: bytes only


def test_a_sample_too_small_is_refused(tmp_path):
    _corpus(tmp_path, 3)
    with pytest.raises(SystemExit, match="larger fraction"):
        bench.sample_estimate(tmp_path, 1e-6, None)
