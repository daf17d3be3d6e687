"""Helpers shared by the kernel tests (tests/test_kernel_*.py): the interpreter skip mark and a
tolerance check that reports the worst element.

Import this after ``TRITON_INTERPRET`` is set; it imports no Triton itself.
"""

from __future__ import annotations

import pytest
import torch


def interpreter_only(kernel: object) -> pytest.MarkDecorator:
    """Skip unless ``kernel`` (a ``@triton.jit`` function) runs in the Triton interpreter.

    Without Triton the kernel modules define their kernels as plain functions, so this also
    skips when Triton is not installed.
    """
    return pytest.mark.skipif(
        type(kernel).__name__ != "InterpretedFunction",
        reason="needs triton with TRITON_INTERPRET=1 set before triton is imported (./dev test sets it)")


def assert_close(name: str, actual: torch.Tensor, expected: torch.Tensor, *, atol: float, rtol: float) -> None:
    """allclose with NaN == NaN, and a report of the worst element on failure."""
    a, e = actual.detach().double().cpu(), expected.detach().double().cpu()
    assert a.shape == e.shape, f"{name}: shape {tuple(a.shape)} != reference {tuple(e.shape)}"
    nan_a, nan_e = a.isnan(), e.isnan()
    if not torch.equal(nan_a, nan_e):
        i = int((nan_a != nan_e).flatten().nonzero()[0, 0])
        idx = tuple(int(k) for k in torch.unravel_index(torch.tensor(i), a.shape))
        where = f"row {idx[0]}" if a.dim() == 1 else f"index {idx}"
        raise AssertionError(f"{name}: NaN pattern differs ({int(nan_a.sum())} NaN in kernel output, "
                             f"{int(nan_e.sum())} in reference); first at {where}: kernel "
                             f"{a[idx].item()!r} vs reference {e[idx].item()!r}")
    same = (a == e) | (nan_a & nan_e)  # covers equal infinities
    diff = torch.where(same, 0.0, (a - e).abs())
    excess = diff - (atol + rtol * e.abs().nan_to_num(0.0, 0.0, 0.0))
    if bool((excess > 0).any()):
        i = int(excess.flatten().argmax())
        idx = tuple(int(k) for k in torch.unravel_index(torch.tensor(i), a.shape))
        raise AssertionError(
            f"{name}: {int((excess > 0).sum())} of {a.numel()} elements out of tolerance "
            f"(atol={atol:g}, rtol={rtol:g}); max abs diff {float(diff.max()):.3e}; worst at index "
            f"{idx}: kernel {a[idx].item()!r} vs reference {e[idx].item()!r}")
