"""The training pipeline end to end on a toy corpus (prepare -> fit -> export, the flow through
mercury_train/corpus.py, tokens.py, bpe.py, budget.py, recipe.py and runs.py; the modules' own
tests are test_<module>.py beside this file): corpus rules, tokenizer, and `train fit` (the
budgeted trainer) with its resume, export and --init-from."""

from __future__ import annotations

import gzip
import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from mercury_engine import Engine
from mercury_lsp import cli
from mercury_train.budget import BudgetTrainer, TokenCorpus
from mercury_train.corpus import read_documents
from mercury_train.corpus_v2 import build_corpus
from mercury_train.recipe import ARMS, DEFAULT_ARM
from mercury_train.runs import load_run_config
from mercury_train.tokens import load_tokenizer, load_tokens, prepare_tokens

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


TINY = ["--hidden-size", "32", "--layers", "1", "--heads", "2", "--kv-heads", "1", "--ffn", "64",
        "--max-positions", "128", "--seq-len", "64", "--batch-size", "4", "--device", "cpu", "--log-every", "2",
        "--compile", "off"]  # a 64-token toy step gains nothing compiled; the default is measured in the run


def _fit(corpus: Path, run: Path, *extra: str) -> int:
    return cli.main(["train", "fit", "--data", str(corpus), "--run", str(run), *TINY, *extra])


def _weights(run: Path) -> dict:
    return torch.load(run / "state.pt", map_location="cpu", weights_only=False)


@pytest.fixture(scope="module")
def fitted(corpus, tmp_path_factory) -> Path:
    """`train fit` with the default recipe, uninterrupted: 3 000 tokens."""
    run = tmp_path_factory.mktemp("fit") / "run"
    assert _fit(corpus, run, "--total-tokens", "3000") == 0
    return run


def test_fit_trains_the_default_recipe_and_logs_a_learning_curve(fitted):
    run = load_run_config(fitted)
    assert run.recipe == ARMS[DEFAULT_ARM] and run.device == "cpu" and run.max_tokens == 3000
    log = [json.loads(line) for line in (fitted / "log.jsonl").read_text().splitlines()]
    losses = [r["loss"] for r in log if "loss" in r]
    assert losses and all(np.isfinite(v) for v in losses)
    assert any(r.get("causal") for r in log if "loss" in r)  # ar_mdlm: the autoregressive phase ran ...
    assert not [r for r in log if "loss" in r][-1]["causal"]  # ... then masked diffusion
    evals = [r for r in log if r.get("event") == "eval"]
    assert len(evals) >= 2 and all(np.isfinite(r["heldout_span_ce"]) for r in evals)
    assert _weights(fitted)["tokens"] >= 3000


def test_an_interrupted_fit_resumes_to_the_same_weights(corpus, fitted, tmp_path):
    run = tmp_path / "run"
    # Interrupted after a checkpoint at 1 500 tokens, with the settings `train fit` saved ...
    BudgetTrainer(replace(load_run_config(fitted), run_dir=str(run)), TokenCorpus.load(corpus)).fit(until_tokens=1500)
    assert 1500 <= _weights(run)["tokens"] < 3000
    # ... then run again: the saved settings win over the command line's (another arm here).
    assert _fit(corpus, run, "--arm", "opt", "--total-tokens", "9999") == 0
    log = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    assert [r for r in log if r.get("event") == "resumed"]
    done, ref = _weights(run), _weights(fitted)
    assert (done["step"], done["tokens"]) == (ref["step"], ref["tokens"])
    for name, value in ref["model"].items():
        assert torch.allclose(done["model"][name], value, atol=1e-6), name


def test_export_writes_a_loadable_model(corpus, fitted, tmp_path):
    (tmp_path / "card.md").write_text("# card\n")
    assert cli.main(["train", "export", "--data", str(corpus), "--run", str(fitted), "--out", str(tmp_path / "model"),
                     "--model-card", str(tmp_path / "card.md")]) == 0
    engine = Engine.load(tmp_path / "model", dtype="float32")
    assert engine.config.context_tokens == int(64 * 1.2) and engine.config.logits_shift  # ar_mdlm's layout
    assert (tmp_path / "model" / "MODEL_CARD.md").read_text() == "# card\n"
    assert engine.infill("def f(x):\n    return ", "\n", 4).steps >= 1


def test_init_from_continues_the_weights_under_new_settings_and_exports_the_ema(corpus, fitted, tmp_path, capsys):
    fork = tmp_path / "fork"
    # Another objective lays out the logits differently: refused, one line.
    assert _fit(corpus, fork, "--init-from", str(fitted), "--arm", "mdlm", "--total-tokens", "1000") == 2
    assert "shifted" in capsys.readouterr().err
    assert _fit(corpus, tmp_path / "fork2", "--init-from", str(fitted), "--ema-decay", "0.9", "--tail-frac", "1",
                "--layers", "3", "--total-tokens", "1000") == 0
    fork = tmp_path / "fork2"
    run = load_run_config(fork)
    assert run.shape == load_run_config(fitted).shape  # the source's shape, not --layers 3
    assert (run.recipe.ema_decay, run.recipe.tail_frac, run.init_from) == (0.9, 1.0, str(fitted))
    log = [json.loads(line) for line in (fork / "log.jsonl").read_text().splitlines()]
    assert [r for r in log if r.get("event") == "init_from"]
    state = _weights(fork)
    assert state["ema"] is not None and 1000 <= state["tokens"] < 3000  # its own budget
    assert cli.main(["train", "export", "--data", str(corpus), "--run", str(fork), "--out", str(tmp_path / "m")]) == 0
    engine = Engine.load(tmp_path / "m", dtype="float32", quantize="none")
    shipped = dict(zip([n for n, _ in engine.model.named_parameters()], state["ema"], strict=True))
    assert torch.allclose(engine.model.embed_tokens.weight, shipped["embed_tokens.weight"])
    assert not torch.allclose(engine.model.embed_tokens.weight, state["model"]["embed_tokens.weight"])


def test_init_from_a_model_directory_continues_its_weights(corpus, fitted, tmp_path, capsys):
    """The embedded model is a model directory, not a run: `--init-from` takes one too, when its
    tokenizer is the corpus's and its logit layout the recipe's."""
    model = tmp_path / "model"
    assert cli.main(["train", "export", "--data", str(corpus), "--run", str(fitted), "--out", str(model)]) == 0
    assert _fit(corpus, tmp_path / "bad", "--init-from", str(model), "--arm", "mdlm", "--total-tokens", "300") == 2
    assert "shifted" in capsys.readouterr().err
    other = tmp_path / "other"
    shutil.copytree(model, other)
    (other / "tokenizer.json").write_text((model / "tokenizer.json").read_text().replace("<|mask|>", "<|MASK|>"))
    assert _fit(corpus, tmp_path / "bad2", "--init-from", str(other), "--total-tokens", "300") == 2
    assert "another tokenizer" in capsys.readouterr().err
    run = tmp_path / "cont"
    cfg = _run_config_for(corpus, run, model)
    trainer = BudgetTrainer(cfg, TokenCorpus.load(corpus))
    exported = Engine.load(model, dtype="float32", quantize="none").model.state_dict()
    for name, value in trainer.model.state_dict().items():
        assert torch.equal(value, exported[name]), name
    assert cfg.shape == load_run_config(fitted).shape


def _run_config_for(corpus: Path, run: Path, init: Path):
    from mercury_lsp.cli.train import _run_config

    args = cli.build_parser().parse_args(["train", "fit", "--data", str(corpus), "--run", str(run), *TINY,
                                          "--init-from", str(init), "--total-tokens", "300"])
    return _run_config(args)
