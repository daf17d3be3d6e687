"""Retrieval rows: their layout (block and prefix, span, padding, suffix in one window) and how
the batcher mixes them in and masks only their span."""

from __future__ import annotations

import torch

from mercury_train.batches import BatchSpec, DeviceBatcher
from mercury_train.retrieval import RetrievalRows, lay_out, stack

PAD, MASK, EOT, NL = 0, 1, 2, 3
L = 32


def test_a_row_is_block_prefix_span_pads_suffix_and_the_block_is_cut_first():
    head = [10] * 20 + [11] * 6  # a 20-token block, then a 6-token prefix
    row, start, span, pads, block = lay_out(head, 20, [12, 12], [13] * 10, 3, L, PAD)
    assert len(row) == L and row[start:start + span] == [12, 12] and row[start + span:start + span + pads] == [PAD] * 3
    assert row[start - 6:start] == [11] * 6  # the prefix whole, nearest the span
    assert block == start - 6 and 0 < block < 20  # the block's head was cut to make room
    assert row[start + span + pads:] == [13] * 10


def test_a_row_that_cannot_hold_its_span_is_refused():
    assert lay_out([5, 5], 0, [6] * (L - 1), [], 4, L, PAD) is None


def test_rows_survive_a_save_and_load(tmp_path):
    rows = stack([lay_out([10] * 8 + [11] * 4, 8, [12], [13] * 4, 2, L, PAD)] * 3)
    rows.save(tmp_path / "r.npz")
    back = RetrievalRows.load(tmp_path / "r.npz")
    assert torch.equal(back.tokens, rows.tokens) and torch.equal(back.block, rows.block) and len(back) == 3


def test_the_batcher_mixes_retrieval_rows_in_and_masks_only_their_span():
    rows = stack([lay_out([20 + i] * 10 + [30] * 5, 10, [40, 41, 42], [43] * 6, 2, L, PAD) for i in range(4)])
    gen = torch.Generator().manual_seed(0)
    stream = torch.randint(4, 19, (5_000,), generator=gen)
    stream[torch.rand(5_000, generator=gen) < 0.1] = NL
    newline = torch.zeros(50, dtype=torch.bool)
    newline[NL] = True
    batcher = DeviceBatcher(stream, newline, BatchSpec(L, MASK, PAD, EOT, max_pad=4, tail_frac=0.0), 1, rows)
    b = batcher.diffusion(256, infill_frac=0.0, t=1.0, retrieval_frac=0.5)
    carried = (b.tokens >= 20).any(1) & (b.tokens < 30).any(1)  # a block's tokens: a retrieval row
    assert 0.3 < carried.float().mean() < 0.7
    for r in torch.nonzero(carried).flatten():
        masked = b.inputs[r] == MASK
        assert b.tokens[r, masked].tolist() == [40, 41, 42, PAD, PAD]  # the span and its padding, nothing else
    plain = b.inputs[~carried]
    assert (plain == MASK).float().mean() > 0.9  # the other rows: plain windows, fully masked at t = 1
    none = batcher.diffusion(64, infill_frac=0.0, retrieval_frac=0.0)
    assert not ((none.tokens >= 20) & (none.tokens < 30)).any()


def _corpus(rows: RetrievalRows | None):
    from mercury_train.budget import TokenCorpus

    gen = torch.Generator().manual_seed(0)
    stream = torch.randint(4, 50, (4_000,), generator=gen, dtype=torch.int32)
    newline = torch.zeros(64, dtype=torch.bool)
    newline[NL] = True
    return TokenCorpus(stream, stream[:1_000], newline, 64, {"mask": MASK, "pad": PAD, "eot": EOT}, "{}", rows)


def _run(tmp_path, share: float):
    from dataclasses import replace

    from mercury_train.recipe import ARMS, SMOKE_SHAPE, RunConfig

    return RunConfig(run_dir=str(tmp_path / "run"), recipe=replace(ARMS["mdlm"], retrieval_share=share),
                     shape=SMOKE_SHAPE, seq_len=L, batch_size=8, max_tokens=L * 8 * 2, device="cpu",
                     compile="off", precision="fp32", eval_batches=1)


def test_train_fit_takes_a_retrieval_share_and_trains_on_the_rows(tmp_path):
    import pytest

    from mercury_engine.errors import CheckpointError
    from mercury_lsp.cli import build_parser
    from mercury_lsp.cli.train import _run_config
    from mercury_train.budget import BudgetTrainer

    args = build_parser().parse_args(["train", "fit", "--data", "d", "--run", str(tmp_path / "r"), "--minutes", "1",
                                      "--arm", "mdlm", "--retrieval-share", "0.5"])
    assert _run_config(args).recipe.retrieval_share == 0.5
    with pytest.raises(CheckpointError, match="no retrieval rows"):
        BudgetTrainer(_run(tmp_path, 0.5), _corpus(None))
    rows = stack([lay_out([20] * 10 + [30] * 5, 10, [40, 41], [43] * 6, 2, L, PAD)] * 4)
    trainer = BudgetTrainer(_run(tmp_path, 0.5), _corpus(rows))
    stats = trainer.fit()
    assert stats["step"] == 2 and trainer.batcher.retrieval is not None
