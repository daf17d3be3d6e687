"""The one-call GPU training command, run on the CPU: the smoke run (the same code path as the
GPU call on a tiny shape), its shards exported into a loadable model, the CUDA refusal, and an
interrupted run that resumes."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from mercury_engine import Engine
from mercury_train import gpu_run
from mercury_train.gpu_args import TOKENIZER
from mercury_train.shards import export_shards

REPO = Path(__file__).resolve().parents[2]
# A few standard-library files: enough tokens for windows of 64, built in seconds.
SMOKE = ["--smoke", "--include", "^stdlib$", "--max-files", "100", "--workers", "2"]


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("gpu-smoke")
    rc = gpu_run.main([*SMOKE, "--work", str(base / "work"), "--out", str(base / "out"), "--max-tokens", "3000"])
    assert rc == 0
    return base


def test_smoke_run_writes_shards_and_a_log(smoke_run):
    out = smoke_run / "out"
    log = json.loads((out / "train_log.json").read_text())
    assert log["stats"]["tokens"] >= 3000 and log["median_tokens_per_s"] > 0
    losses = [r["loss"] for r in log["log"] if "loss" in r]
    assert losses and all(v == v and v < 20 for v in losses)  # finite
    evals = [r for r in log["log"] if r.get("event") == "eval"]
    assert len(evals) >= 2 and evals[-1]["heldout_ce"] < evals[0]["heldout_ce"]  # it learned something
    corpus = json.loads((out / "corpus.json").read_text())
    assert corpus["report"]["contamination_check"] != "" and corpus["train_tokens"] > 10_000
    assert corpus["report"]["sources"]["stdlib"]["license"] == "PSF-2.0"
    index = json.loads((out / "model.safetensors.index.json").read_text())
    assert index["metadata"]["ema"] is True and index["metadata"]["config"]["model_type"] == "mercury"
    assert len(list(out.iterdir())) <= 8  # what one call may bring back


def test_smoke_shards_export_into_a_loadable_model(smoke_run):
    model = export_shards(smoke_run / "out", TOKENIZER, smoke_run / "model")
    engine = Engine.load(model, dtype="float32")
    result = engine.infill("def add(a, b):\n    return ", "\n", 4)
    assert result.steps >= 1 and isinstance(result.text, str)


def test_refuses_to_start_without_cuda(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert gpu_run.main(["--work", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no CUDA device" in err and "--smoke" in err
    assert not (tmp_path / "corpus").exists()  # refused before doing any work


def test_interrupted_run_resumes(smoke_run, tmp_path):
    work, out = tmp_path / "work", tmp_path / "out"
    shutil.copytree(smoke_run / "work" / "corpus", work / "corpus")  # the same settings: reused, not rebuilt
    cmd = [sys.executable, "-m", "mercury_train.gpu_run", *SMOKE, "--work", str(work), "--out", str(out)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([*cmd, "--max-tokens", "10000000"], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    saved = None
    try:
        for line in proc.stdout:  # wait for the first checkpoint, then kill the run hard
            rec = json.loads(line) if line.startswith("{") else {}
            if rec.get("event") == "saved" and rec["step"] >= 2:
                saved = rec
                break
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert saved is not None, "the run never saved a checkpoint"
    target = saved["tokens"] + 1024
    done = subprocess.run([*cmd, "--max-tokens", str(target)], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    records = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
    resumed = [r for r in records if r.get("event") == "resumed"]
    assert resumed and resumed[0]["step"] >= saved["step"]
    final = json.loads((out / "train_log.json").read_text())["stats"]
    assert final["tokens"] >= target and final["step"] > resumed[0]["step"]
