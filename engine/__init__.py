"""mercury-lsp's diffusion engine: model, checkpoints, tokenizer, samplers. No editor code.

Exports are lazy (PEP 562): ``import engine.errors``, ``engine.types`` or ``engine.options``
does not import torch; ``engine.Engine`` does, on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "Engine": "engine.api", "InfillRequest": "engine.api", "ModelConfig": "engine.config",
    "CancelledError": "engine.errors", "CheckpointError": "engine.errors", "EngineError": "engine.errors",
    "InvalidRequestError": "engine.errors", "TokenizerError": "engine.errors",
    "UnsupportedModelError": "engine.errors", "CancelToken": "engine.types", "InfillResult": "engine.types",
    "StepEvent": "engine.types", "InfillOptions": "engine.options", "Preset": "engine.options",
    "Sampler": "engine.options", "PRESETS": "engine.options",
}
__all__ = [
    "PRESETS", "CancelToken", "CancelledError", "CheckpointError", "Engine", "EngineError", "InfillOptions",
    "InfillRequest", "InfillResult", "InvalidRequestError", "ModelConfig", "Preset", "Sampler", "StepEvent",
    "TokenizerError", "UnsupportedModelError",
]

if TYPE_CHECKING:
    from engine.api import Engine, InfillRequest
    from engine.config import ModelConfig
    from engine.errors import (
        CancelledError,
        CheckpointError,
        EngineError,
        InvalidRequestError,
        TokenizerError,
        UnsupportedModelError,
    )
    from engine.options import PRESETS, InfillOptions, Preset, Sampler
    from engine.types import CancelToken, InfillResult, StepEvent


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
