"""Muon's orthogonalisation and the EMA of weights."""

from __future__ import annotations

import torch
from torch import nn

from mercury_train.optim import EMA, Muon, orthogonalise


def test_orthogonalise_pushes_singular_values_towards_one():
    g = torch.randn(3, 32, 64, generator=torch.Generator().manual_seed(0))
    s = torch.linalg.svdvals(orthogonalise(g).float())
    assert (s > 0.5).all() and (s < 1.3).all()


def test_muon_fits_a_linear_map():
    gen = torch.Generator().manual_seed(0)
    target = torch.randn(16, 16, generator=gen)
    layer = nn.Linear(16, 16, bias=False)
    opt = Muon(layer.parameters(), lr=0.5)
    x = torch.randn(256, 16, generator=gen)
    first = None
    for i in range(300):
        opt.param_groups[0]["lr"] = 0.5 * (1 - i / 300)  # a decaying step: Muon's steps have a fixed size
        loss = ((layer(x) - x @ target.T) ** 2).mean()
        first = first if first is not None else float(loss.detach())
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert float(loss.detach()) < 0.05 * first


def test_ema_follows_the_weights_and_exports_them():
    layer = nn.Linear(4, 4)
    ema = EMA(layer, 0.9)
    with torch.no_grad():
        layer.weight.fill_(1.0)
    for _ in range(200):
        ema.update()
    state = ema.state_dict(layer)
    assert torch.allclose(state["weight"], torch.ones(4, 4), atol=1e-3)
