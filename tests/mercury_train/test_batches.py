"""Device-side training batches: what is masked, where padding goes, the shifted and the
autoregressive layouts."""

from __future__ import annotations

import torch

from mercury_train.batches import BatchSpec, DeviceBatcher

PAD, MASK, EOT, NL = 0, 1, 2, 3
L = 96


def _batcher(**kw) -> DeviceBatcher:
    gen = torch.Generator().manual_seed(0)
    stream = torch.randint(4, 50, (20_000,), generator=gen)
    stream[torch.rand(20_000, generator=gen) < 0.1] = NL  # a line break every ~10 tokens
    newline = torch.zeros(50, dtype=torch.bool)
    newline[NL] = True
    return DeviceBatcher(stream, newline, BatchSpec(L, MASK, PAD, EOT, max_pad=16, **kw), seed=1)


def test_masked_diffusion_rows_mask_everywhere_with_weights_on_masks_only():
    b = _batcher().diffusion(64, infill_frac=0.0)
    masked = b.inputs == MASK
    assert masked.any(1).all()
    assert (b.weight[~masked] == 0).all() and (b.weight[masked] > 0).all()
    assert (b.tokens[masked] != MASK).all() and (b.tokens == PAD).sum() == 0
    # The 1/t weights, capped at 1/0.05, over L positions: each row's weight sums to about 1.
    assert (b.weight.sum(1) < 20 * L / L + 1e-4).all()


def test_infill_rows_hold_a_span_then_padding_and_mask_only_there():
    bt = _batcher(tail_frac=0.0)
    b = bt.diffusion(128, infill_frac=1.0, t=1.0)
    for row in range(128):
        masked = torch.nonzero(b.inputs[row] == MASK).flatten()
        assert masked.numel() >= 1 and (masked.diff() == 1).all()  # the span, fully masked, contiguous
        span = b.tokens[row, masked]
        pads = span == PAD
        # Padding, if any, comes after the span's content and fills the rest of the span.
        if pads.any():
            first = int(pads.nonzero()[0])
            assert pads[first:].all()
        assert masked.numel() <= L // 2


def test_tail_rows_mask_from_a_cut_to_the_span_end():
    b = _batcher(tail_frac=1.0).diffusion(64, infill_frac=1.0)
    for row in range(64):
        masked = torch.nonzero(b.inputs[row] == MASK).flatten()
        assert (masked.diff() == 1).all()
        w = b.weight[row, masked]
        assert torch.allclose(w, w[0].expand_as(w))


def test_shifted_batches_never_mask_position_zero():
    b = _batcher(shift=True).diffusion(256, infill_frac=0.5)
    assert (b.inputs[:, 0] != MASK).all() and (b.weight[:, 0] == 0).all()


def test_autoregressive_rows_are_suffix_sentinel_prefix_span():
    bt = _batcher()
    b = bt.autoregressive(32)
    assert torch.equal(b.tokens, b.inputs)
    assert ((b.tokens == EOT).sum(1) >= 1).all()  # the sentinel between suffix and prefix
    assert torch.allclose(b.weight.sum(1), torch.ones(32))


def test_same_seed_same_batches():
    a, b = _batcher().diffusion(8, 0.5), _batcher().diffusion(8, 0.5)
    assert torch.equal(a.inputs, b.inputs) and torch.equal(a.weight, b.weight)
