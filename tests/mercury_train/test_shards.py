"""Shard sets (what a GPU run brings back) and their export: verified, or a clear error."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from mercury_engine import Engine
from mercury_engine.errors import CheckpointError
from mercury_engine.model import Transformer
from mercury_train.gpu_args import TOKENIZER
from mercury_train.recipe import SMOKE_SHAPE, RunConfig
from mercury_train.runs import model_config
from mercury_train.shards import INDEX, export_shards, read_shards, write_shards

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture()
def shards(tmp_path) -> Path:
    cfg = model_config(RunConfig(run_dir=str(tmp_path), shape=SMOKE_SHAPE, seq_len=64), 8192, shift=False)
    model = Transformer(cfg)
    state = {k: v for k, v in model.state_dict().items() if k != "lm_head.weight"}
    sha = hashlib.sha256(TOKENIZER.read_text(encoding="utf-8").encode()).hexdigest()
    files = write_shards(state, tmp_path / "out", cfg.to_hf_dict(), sha, max_bytes=530_000)
    assert len(files) >= 2  # small shards: the set really is split
    return tmp_path / "out"


def test_shards_round_trip_and_export(shards, tmp_path):
    state, meta = read_shards(shards)
    assert all(t.dtype == torch.bfloat16 for t in state.values())
    out = export_shards(shards, TOKENIZER, tmp_path / "model", "# card\n")
    engine = Engine.load(out, dtype="float32")
    assert engine.infill("x = ", "\n", 3).steps >= 1
    assert (out / "MODEL_CARD.md").read_text() == "# card\n"


def test_missing_shard_is_named(shards, tmp_path):
    victim = sorted(shards.glob("model-*.safetensors"))[1]
    victim.unlink()
    with pytest.raises(CheckpointError, match=f"missing shard.*{victim.name}"):
        export_shards(shards, TOKENIZER, tmp_path / "model")
    assert not (tmp_path / "model").exists()  # nothing half-written


def test_corrupt_shard_is_named(shards, tmp_path):
    victim = sorted(shards.glob("model-*.safetensors"))[0]
    data = bytearray(victim.read_bytes())
    data[-10] ^= 0xFF
    victim.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=f"{victim.name}: corrupt shard"):
        export_shards(shards, TOKENIZER, tmp_path / "model")


def test_missing_index_and_wrong_tokenizer(shards, tmp_path):
    other = tmp_path / "tok.json"
    other.write_text(TOKENIZER.read_text(encoding="utf-8").replace("<|mask|>", "<|MASK|>"), encoding="utf-8")
    with pytest.raises(CheckpointError, match="not the tokenizer"):
        export_shards(shards, other, tmp_path / "model")
    (shards / INDEX).write_text("{not json")
    with pytest.raises(CheckpointError, match="not a shard index"):
        export_shards(shards, TOKENIZER, tmp_path / "model")
    (shards / INDEX).unlink()
    with pytest.raises(CheckpointError, match="no model.safetensors.index.json"):
        export_shards(shards, TOKENIZER, tmp_path / "model")


def test_cli_export_reports_a_bad_shard_in_one_line(shards, tmp_path):
    sorted(shards.glob("model-*.safetensors"))[0].unlink()
    done = subprocess.run([sys.executable, "-m", "mercury_lsp.cli", "train", "export", "--shards", str(shards),
                           "--out", str(tmp_path / "model")], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert done.stderr.strip().startswith("train export:") and "missing shard" in done.stderr
    assert "Traceback" not in done.stderr
    json.dumps(done.stderr)  # printable
