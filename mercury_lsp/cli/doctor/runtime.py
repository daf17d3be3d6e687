"""The Python side: the interpreter, this installation, the ``mercury-lsp`` editors start, torch."""

from __future__ import annotations

import importlib.metadata
import shutil
import sys
from pathlib import Path

import mercury_lsp
from mercury_lsp.cli.doctor.report import Finding

MIN_PYTHON = (3, 11)
COMMAND = "mercury-lsp"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
CPU_TORCH = f"pip install --force-reinstall torch --index-url {CPU_INDEX}"
NVIDIA_PREFIX = "nvidia-"  # the CUDA runtime wheels a CUDA build of torch pulls (nvidia-cublas-cu12, ...)


def python() -> Finding:
    version = ".".join(map(str, sys.version_info[:3]))
    if sys.version_info[:2] < MIN_PYTHON:
        return Finding("fail", "Python", f"{version} ({sys.executable})",
                       f"mercury-lsp needs Python >= {'.'.join(map(str, MIN_PYTHON))}")
    return Finding("ok", "Python", f"{version} ({sys.executable})")


def installation() -> Finding:
    where = Path(mercury_lsp.__file__).resolve().parent
    return Finding("ok", "mercury-lsp", f"{mercury_lsp.__version__} ({where})")


def command_on_path() -> Finding:
    """Editors start ``mercury-lsp serve`` by name: is that this installation's command?"""
    found = shutil.which(COMMAND)
    ours = Path(sys.argv[0]).resolve() if Path(sys.argv[0]).name == COMMAND else None
    bindir = Path(sys.executable).parent
    if found is None:
        return Finding("warn", "PATH", f"no {COMMAND} on PATH: editors cannot start it by name",
                       f"add {bindir} to PATH, or give the editor the full command "
                       f"{bindir / COMMAND} serve (pipx: `pipx ensurepath`)")
    if ours is not None and Path(found).resolve() != ours:
        return Finding("warn", "PATH", f"{found} comes first on PATH, not this one ({ours})",
                       "editors would start the other installation: reorder PATH or give them the full command")
    return Finding("ok", "PATH", f"editors start {found}")


def torch_build() -> list[Finding]:
    """The build of torch (CPU, CUDA, ROCm) against the machine's devices."""
    try:
        import torch
    except ImportError as exc:
        return [Finding("fail", "torch", f"cannot import it ({exc})",
                        f"pip install torch --index-url {CPU_INDEX} (CPU) or pip install torch (CUDA)")]
    cuda, hip = torch.version.cuda, getattr(torch.version, "hip", None)
    build = f"CUDA {cuda} build" if cuda else f"ROCm {hip} build" if hip else "CPU build"
    threads = torch.get_num_threads()
    if torch.cuda.is_available():
        name = torch.cuda.get_device_name(0)
        return [Finding("ok", "torch", f"{torch.__version__}, {build}; device cuda ({name})"), _triton()]
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return [Finding("ok", "torch", f"{torch.__version__}, {build}; device mps ({threads} CPU threads)")]
    detail = f"{torch.__version__}, {build}; device cpu ({threads} threads)"
    if cuda or hip:
        nvidia = [d.metadata["Name"] for d in importlib.metadata.distributions()
                  if (d.metadata["Name"] or "").lower().startswith(NVIDIA_PREFIX)]
        size = f" and {len(nvidia)} nvidia-* packages" if nvidia else ""
        return [Finding("warn", "torch", f"{detail}: a GPU build{size} on a machine with no usable GPU",
                        f"the CPU build is ~1 GB smaller and as fast here: {CPU_TORCH}")]
    if shutil.which("nvidia-smi"):
        return [Finding("warn", "torch", f"{detail}, but this machine has an NVIDIA GPU",
                        "pip install --force-reinstall torch (the CUDA build) to run the model on it")]
    return [Finding("ok", "torch", detail)]


def _triton() -> Finding:
    try:
        import triton
    except ImportError:
        return Finding("warn", "triton", "not installed: the fused GPU kernels fall back to torch",
                       "pip install 'mercury-lsp[kernels]'")
    return Finding("ok", "triton", f"{triton.__version__} (fused GPU kernels)")

