"""engine/train/budget.py: the hidden states of its two training phases."""

from __future__ import annotations

import torch

from engine.model import Transformer
from engine.testing import tiny_config
from engine.train.budget import forward_hidden


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
