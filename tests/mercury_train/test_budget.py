"""mercury_train/budget.py: the hidden states of its two training phases."""

from __future__ import annotations

import torch

from mercury_engine.model import Transformer
from mercury_train.budget import autocast_dtype, forward_hidden, weighted_ce
from mercury_train.testing import tiny_config


def test_causal_phase_hides_later_tokens_and_the_diffusion_phase_is_the_models_forward():
    torch.manual_seed(0)
    model = Transformer(tiny_config(97)).eval()
    ids = torch.randint(0, 97, (2, 12), generator=torch.Generator().manual_seed(3))
    changed = ids.clone()
    changed[:, -1] = (changed[:, -1] + 1) % 97
    with torch.inference_mode():
        causal, causal_changed = forward_hidden(model, ids, True), forward_hidden(model, changed, True)
        full, full_changed = forward_hidden(model, ids, False), forward_hidden(model, changed, False)
        assert torch.equal(full, model.forward_hidden(ids)[0])
        alone = model.forward_hidden(ids[:, :1])[0][:, 0]  # position 0 by itself
    assert torch.allclose(causal[:, :-1], causal_changed[:, :-1], atol=1e-6)  # no position sees a later one
    assert not torch.allclose(full[:, :-1], full_changed[:, :-1], atol=1e-4)  # bidirectional: every one does
    assert torch.allclose(causal[:, 0], alone, atol=1e-5)  # causal position 0 sees itself only


def test_train_fit_defaults_measure_compile_and_take_native_bf16():
    from mercury_lsp.cli import build_parser

    args = build_parser().parse_args(["train", "fit", "--data", "d", "--run", "r", "--minutes", "1"])
    assert (args.compile, args.precision) == ("auto", "auto")


def test_autocast_dtype_follows_the_device_and_the_setting(monkeypatch):
    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    assert autocast_dtype(cuda, "auto") is torch.bfloat16 and autocast_dtype(cuda, "fp32") is None
    assert autocast_dtype(cpu, "bf16") is torch.bfloat16 and autocast_dtype(cpu, "fp32") is None
    for native in (True, False):
        monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda native=native: native)
        assert autocast_dtype(cpu, "auto") is (torch.bfloat16 if native else None)


def test_bf16_autocast_loss_is_close_to_fp32():
    from mercury_train.batches import TensorBatch

    torch.manual_seed(0)
    model = Transformer(tiny_config(97))
    gen = torch.Generator().manual_seed(5)
    tokens = torch.randint(0, 97, (2, 16), generator=gen)
    weight = (torch.rand(2, 16, generator=gen) < 0.5).float()
    batch = TensorBatch(tokens, torch.where(weight > 0, 0, tokens), weight)
    with torch.no_grad():
        fp32 = weighted_ce(model, batch, False, False, None)
        bf16 = weighted_ce(model, batch, False, False, torch.bfloat16)
    assert torch.isfinite(bf16) and abs(float(bf16) - float(fp32)) < 0.05 * float(fp32)


def test_train_prepare_checks_the_evaluation_data_the_benchmarks_read():
    from benchmarks.humaneval.tasks import DEFAULT_DATA_DIR
    from mercury_lsp.cli.train import DEFAULT_EVAL

    assert DEFAULT_EVAL == DEFAULT_DATA_DIR  # <repo>/../shared/data/human-eval-infilling
