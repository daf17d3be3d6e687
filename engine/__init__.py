"""mercury-lsp's diffusion engine: model, checkpoints, tokenizer, samplers. No editor code."""

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
from engine.types import CancelToken, InfillResult, StepEvent

__all__ = [
    "CancelToken", "CancelledError", "CheckpointError", "Engine", "EngineError", "InfillRequest",
    "InfillResult", "InvalidRequestError", "ModelConfig", "StepEvent", "TokenizerError",
    "UnsupportedModelError",
]
