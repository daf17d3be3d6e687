"""Optimisers of the budgeted trainer: AdamW, or Muon for the blocks' matrices; an EMA of weights.

Muon (Jordan et al. 2024, "Muon: MomentUm Orthogonalized by Newton-schulz") updates each
hidden weight matrix with the orthogonalised Nesterov momentum of its gradient: five
Newton-Schulz iterations in bf16 push the update's singular values towards 1. Matrices of the
same shape are orthogonalised together as one batched product (no loop over layers). The
embedding (tied with the output head), norms and biases stay on AdamW, as in the reference
recipe. The update is scaled by sqrt(max(1, rows / cols)) * 0.2 so that its RMS matches
AdamW's and one learning rate serves both (Moonshot's "Muon is scalable" scaling).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

# Newton-Schulz quintic coefficients tuned for fast convergence of the singular values
# (from the Muon reference implementation).
NS_COEFFS = (3.4445, -4.7750, 2.0315)
NS_STEPS = 5
MUON_RMS_MATCH = 0.2  # AdamW's typical update RMS (Moonshot's scaling)


def orthogonalise(g: Tensor) -> Tensor:
    """[N, R, C] -> the nearest semi-orthogonal matrices (approximately), in bf16."""
    a, b, c = NS_COEFFS
    x = g.bfloat16()
    transposed = x.shape[-2] > x.shape[-1]
    if transposed:
        x = x.mT
    x = x / (x.norm(dim=(-2, -1), keepdim=True) + 1e-7)
    for _ in range(NS_STEPS):
        m = x @ x.mT
        x = a * x + (b * m + c * m @ m) @ x
    return x.mT if transposed else x


class Muon(torch.optim.Optimizer):
    def __init__(self, params, lr: float, momentum: float = 0.95, weight_decay: float = 0.0) -> None:
        super().__init__(list(params), dict(lr=lr, momentum=momentum, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None) -> None:
        for group in self.param_groups:
            by_shape: dict[tuple[int, ...], list[Tensor]] = {}
            for p in group["params"]:
                if p.grad is not None:
                    by_shape.setdefault(tuple(p.shape), []).append(p)
            for shape, params in by_shape.items():
                grads = torch.stack([p.grad for p in params])  # [N, R, C]
                bufs = [self.state[p].setdefault("momentum", torch.zeros_like(p)) for p in params]
                buf = torch.stack(bufs)
                buf.lerp_(grads, 1 - group["momentum"])
                update = orthogonalise(grads.lerp(buf, group["momentum"]))  # Nesterov
                scale = group["lr"] * MUON_RMS_MATCH * max(1.0, shape[0] / shape[1]) ** 0.5
                for i, p in enumerate(params):
                    bufs[i].copy_(buf[i])
                    if group["weight_decay"]:
                        p.mul_(1 - group["lr"] * group["weight_decay"])
                    p.add_(update[i].to(p.dtype), alpha=-scale)


def make_optimizers(model: nn.Module, kind: str, lr: float, weight_decay: float,
                    fused: bool) -> list[torch.optim.Optimizer]:
    """AdamW on everything (``adamw``), or Muon on the blocks' matrices + AdamW on the rest."""
    matrices = [p for n, p in model.named_parameters() if p.dim() == 2 and n.startswith("layers.")]
    others_2d = [p for n, p in model.named_parameters() if p.dim() >= 2 and not n.startswith("layers.")]
    vectors = [p for p in model.parameters() if p.dim() < 2]
    adam_kw = dict(lr=lr, betas=(0.9, 0.95), eps=1e-8, fused=fused)
    if kind == "adamw":
        return [torch.optim.AdamW([{"params": matrices + others_2d, "weight_decay": weight_decay},
                                   {"params": vectors, "weight_decay": 0.0}], **adam_kw)]
    if kind == "muon":
        return [Muon(matrices, lr=lr, weight_decay=weight_decay),
                torch.optim.AdamW([{"params": others_2d, "weight_decay": weight_decay},
                                   {"params": vectors, "weight_decay": 0.0}], **adam_kw)]
    raise ValueError(f"unknown optimiser {kind!r} (adamw or muon)")


class EMA:
    """An exponential moving average of the parameters (fp32), updated with foreach ops."""

    def __init__(self, model: nn.Module, decay: float) -> None:
        self.decay = decay
        self.updates = 0
        self.params = [p for p in model.parameters()]
        self.shadow = [p.detach().float().clone() for p in self.params]

    @torch.no_grad()
    def update(self) -> None:
        """Decay min(decay, (1 + n) / (10 + n)) at update n: early updates follow the weights
        closely, so that a short run's average is not dominated by its initialisation."""
        decay = min(self.decay, (1 + self.updates) / (10 + self.updates))
        self.updates += 1
        torch._foreach_lerp_(self.shadow, [p.detach().float() for p in self.params], 1 - decay)

    def state_dict(self, model: nn.Module) -> dict[str, Tensor]:
        """The model's state dict with the averaged values in place of the parameters."""
        ids = {id(p): s for p, s in zip(self.params, self.shadow, strict=True)}
        named = dict(model.named_parameters(remove_duplicate=False))
        return {k: ids[id(named[k])].clone() if k in named else v.clone()
                for k, v in model.state_dict(keep_vars=False).items()}

    def load(self, shadow: list[Tensor], updates: int) -> None:
        self.updates = updates
        for s, v in zip(self.shadow, shadow, strict=True):
            s.copy_(v)
