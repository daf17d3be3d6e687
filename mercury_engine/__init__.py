"""mercury-lsp's diffusion engine: model, checkpoints, tokenizer, samplers. No editor code.

Exports are lazy (PEP 562): ``import mercury_engine.errors``, ``mercury_engine.types`` or ``mercury_engine.options``
does not import torch; ``mercury_engine.Engine`` does, on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "Engine": "mercury_engine.api", "InfillRequest": "mercury_engine.api", "ModelConfig": "mercury_engine.config",
    "CancelledError": "mercury_engine.errors", "CheckpointError": "mercury_engine.errors", "EngineError": "mercury_engine.errors",
    "InvalidRequestError": "mercury_engine.errors", "TokenizerError": "mercury_engine.errors",
    "UnsupportedModelError": "mercury_engine.errors", "CancelToken": "mercury_engine.types", "InfillResult": "mercury_engine.types",
    "StepEvent": "mercury_engine.types", "InfillOptions": "mercury_engine.options", "Preset": "mercury_engine.options",
    "Sampler": "mercury_engine.options", "PRESETS": "mercury_engine.options",
}
__all__ = [
    "PRESETS", "CancelToken", "CancelledError", "CheckpointError", "Engine", "EngineError", "InfillOptions",
    "InfillRequest", "InfillResult", "InvalidRequestError", "ModelConfig", "Preset", "Sampler", "StepEvent",
    "TokenizerError", "UnsupportedModelError",
]

if TYPE_CHECKING:
    from mercury_engine.api import Engine, InfillRequest
    from mercury_engine.config import ModelConfig
    from mercury_engine.errors import (
        CancelledError,
        CheckpointError,
        EngineError,
        InvalidRequestError,
        TokenizerError,
        UnsupportedModelError,
    )
    from mercury_engine.options import PRESETS, InfillOptions, Preset, Sampler
    from mercury_engine.types import CancelToken, InfillResult, StepEvent


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mercury_engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
