"""The embedded model's pipeline on a toy corpus: corpus rules, tokenizer, training, resume, export."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from engine import Engine
from engine.train.config import ModelShape, TrainConfig
from engine.train.corpus import read_documents
from engine.train.corpus_v2 import build_corpus
from engine.train.examples import ExampleMaker
from engine.train.tokens import load_tokenizer, load_tokens, prepare_tokens
from engine.train.trainer import Trainer, export_run, infill_share

SOLUTION = "    return sorted(set(numbers_list_with_duplicates_that_we_need))[::-1]\n"


def _fake_stdlib(root: Path) -> None:
    (root / "pkg").mkdir(parents=True)
    (root / "test").mkdir()
    body = "".join(f"def function_{i}(value):\n    return value * {i} + {i % 7}\n\n" for i in range(40))
    (root / "pkg" / "a.py").write_text("import os\n\n" + body)
    (root / "pkg" / "b.py").write_text("import sys\n\n" + body.replace("value", "item"))
    (root / "pkg" / "dup.py").write_text("import os\n\n" + body + "   \n")  # same file, trailing blanks
    (root / "test" / "test_a.py").write_text("def test_x():\n    assert True\n" * 10)
    (root / "pkg" / "leak.py").write_text("def unique(numbers_list_with_duplicates_that_we_need):\n" + SOLUTION * 3)
    for i in range(30):
        (root / "pkg" / f"mod{i}.py").write_text(f"class Thing{i}:\n" + "".join(
            f"    def method_{j}(self, x):\n        return x + {i * j}\n\n" for j in range(20)))


def _fake_eval(root: Path) -> Path:
    root.mkdir(parents=True)
    problem = {"task_id": "T/0", "entry_point": "unique", "prompt": "def unique(x):\n",
               "suffix": "", "canonical_solution": SOLUTION, "test": ""}
    with gzip.open(root / "Fake.jsonl.gz", "wt") as fh:
        fh.write(json.dumps(problem) + "\n")
    return root


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("pipeline")
    _fake_stdlib(base / "stdlib")
    out = base / "corpus"
    report = build_corpus(out, packages=[], eval_dir=_fake_eval(base / "eval"), stdlib_root=base / "stdlib",
                          heldout_frac=0.1)
    assert report.dropped_tests == 1
    assert report.dropped_duplicates == 1
    assert report.dropped_contaminated == 1 and report.contaminated_examples == ["stdlib/pkg/leak.py"]
    prepare_tokens(out, vocab_size=400)
    return out


def test_corpus_rules_and_provenance(corpus):
    paths = [d["path"] for split in ("train", "heldout") for d in read_documents(corpus / f"{split}.jsonl.gz")]
    assert "stdlib/pkg/leak.py" not in paths and "stdlib/test/test_a.py" not in paths
    assert len(paths) == len(set(paths)) == 32
    manifest = json.loads((corpus / "manifest.json").read_text())
    assert manifest["report"]["sources"]["stdlib"]["license"] == "PSF-2.0"
    held = [d["path"] for d in read_documents(corpus / "heldout.jsonl.gz")]
    assert 0 < len(held) < len(paths)  # a deterministic held-out split by path hash


def test_tokenizer_has_the_sampler_specials(corpus):
    tok = load_tokenizer(corpus)
    for name in ("<|pad|>", "<|mask|>", "<|endoftext|>"):
        assert tok.token_to_id(name) is not None
    stream = load_tokens(corpus, "train")
    assert stream.dtype == np.uint16 and stream.size > 1000


def test_infill_examples_mask_only_the_span(corpus):
    tok = load_tokenizer(corpus)
    docs = [d["text"] for d in read_documents(corpus / "train.jsonl.gz")]
    maker = ExampleMaker(tok, load_tokens(corpus, "train"), docs, 64, tok.token_to_id("<|mask|>"),
                         tok.token_to_id("<|pad|>"), seed=0)
    batch = maker.batch(8, infill_frac=1.0)
    assert batch.masked.any(axis=1).all()
    assert (batch.inputs[batch.masked] == tok.token_to_id("<|mask|>")).all()
    assert (batch.weight[~batch.masked] == 0).all()


def _maker(corpus: Path, **kw) -> ExampleMaker:
    tok = load_tokenizer(corpus)
    docs = [d["text"] for d in read_documents(corpus / "train.jsonl.gz")]
    return ExampleMaker(tok, load_tokens(corpus, "train"), docs, 64, tok.token_to_id("<|mask|>"),
                        tok.token_to_id("<|pad|>"), seed=0, **kw)


def test_pad_weight_and_weight_floor_change_only_what_they_name(corpus):
    pad = load_tokenizer(corpus).token_to_id("<|pad|>")
    plain = _maker(corpus).batch(16, infill_frac=1.0, t=0.01)
    tuned = _maker(corpus, pad_weight=0.25, weight_t_floor=0.05).batch(16, infill_frac=1.0, t=0.01)
    assert (plain.masked == tuned.masked).all()  # same draws: only the weights differ
    m = plain.masked
    is_pad = (plain.tokens == pad) & m
    content = m & ~is_pad
    assert is_pad.any() and content.any()
    # 1/t = 100 capped at 1/0.05 = 20 everywhere; padding targets then weighted 0.25 more.
    np.testing.assert_allclose(tuned.weight[content], plain.weight[content] * 0.2, rtol=1e-5)
    np.testing.assert_allclose(tuned.weight[is_pad], plain.weight[is_pad] * 0.2 * 0.25, rtol=1e-5)


def test_fixed_rate_batches_mask_about_that_share(corpus):
    batch = _maker(corpus).batch(32, infill_frac=0.0, t=0.15)
    assert abs(batch.masked.mean() - 0.15) < 0.03
    full = _maker(corpus).batch(8, infill_frac=1.0, t=1.0)
    span = full.masked.sum(1)
    assert (span > 0).all() and (full.inputs[full.masked] == load_tokenizer(corpus).token_to_id("<|mask|>")).all()


def test_tail_rows_mask_from_a_cut_to_the_span_end(corpus):
    mask = load_tokenizer(corpus).token_to_id("<|mask|>")
    maker = _maker(corpus, tail_frac=1.0, weight_t_floor=0.05)
    batch = maker.batch(16, infill_frac=1.0)
    for row in range(16):
        idx = np.flatnonzero(batch.masked[row])
        assert idx.size and (np.diff(idx) == 1).all()  # one contiguous run ...
        after = batch.key_mask[row].copy()
        after[: idx[-1] + 1] = False
        # ... that reaches the span's end: what follows is the visible suffix or filler, never a mask.
        assert (batch.inputs[row][after] != mask).all()
        # Each row's loss is the mean over its masked tokens (t = the masked share of the span),
        # less when the share is under the weight floor: equal weights summing to at most 1.
        w = batch.weight[row][idx]
        assert np.allclose(w, w[0]) and 0 < w.sum() <= 1 + 1e-5
    # Plain windows and fixed-rate probes never take the tail shape.
    probe = maker.batch(8, infill_frac=1.0, t=0.5)
    assert not all((np.diff(np.flatnonzero(r)) == 1).all() for r in probe.masked)


def test_infill_share_ramps_over_the_run():
    cfg = TrainConfig(total_tokens=1000, infill_frac=0.5, infill_frac_start=0.1)
    assert infill_share(cfg, 0) == pytest.approx(0.1)
    assert infill_share(cfg, 500) == pytest.approx(0.3)
    assert infill_share(cfg, 5000) == pytest.approx(0.5)
    assert infill_share(TrainConfig(infill_frac=0.4), 123) == 0.4


def test_train_resume_and_export(corpus, tmp_path):
    shape = ModelShape(hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=1, intermediate_size=64,
                       max_position_embeddings=128)
    cfg = TrainConfig(data=str(corpus), run_dir=str(tmp_path / "run"), shape=shape, seq_len=64, batch_size=4,
                      total_tokens=2_000, warmup_steps=2, log_every=2, eval_every=4, compile=False)
    first = Trainer(cfg).fit()
    assert first["tokens"] >= 2_000
    log = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    assert log and all(np.isfinite(r["loss"]) for r in log) and any("heldout_loss" in r for r in log)
    evals = [r for r in log if "heldout_loss" in r]
    assert all(np.isfinite(r["heldout_context_ce"]) and np.isfinite(r["heldout_middle_ce"]) for r in evals)
    more = Trainer(TrainConfig(**{**cfg.__dict__, "total_tokens": 3_000})).fit()  # resumes
    assert more["step"] > first["step"] and more["tokens"] >= 3_000
    # A new run continues this one under other settings: weights, optimiser and tokens carry over.
    fork = Trainer(TrainConfig(**{**cfg.__dict__, "run_dir": str(tmp_path / "fork"), "tail_frac": 0.5,
                                  "total_tokens": 3_500, "init_from": str(tmp_path / "run")}))
    assert (fork.step, fork.tokens) == (more["step"], more["tokens"])
    assert json.loads((tmp_path / "fork" / "train_config.json").read_text())["tail_frac"] == 0.5
    assert fork.fit()["tokens"] >= 3_500
    out = export_run(tmp_path / "run", corpus, tmp_path / "model", "# card\n")
    engine = Engine.load(out, dtype="float32")
    assert engine.config.context_tokens == int(64 * 1.2)
    assert (out / "MODEL_CARD.md").read_text() == "# card\n"
    result = engine.infill("def f(x):\n    return ", "\n", 4)
    assert result.steps >= 1
