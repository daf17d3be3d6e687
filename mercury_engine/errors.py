"""Typed errors of the engine. Each carries a message meant for the user, no traceback needed."""


class EngineError(Exception):
    """Base class: something the user can fix (a path, a setting, an input)."""


class CheckpointError(EngineError):
    """A checkpoint directory that is missing, incomplete or corrupt."""


class UnsupportedModelError(EngineError):
    """A checkpoint of a model family this engine cannot run."""


class TokenizerError(EngineError):
    """A tokenizer that lacks what the sampler needs (a mask token, a padding token)."""


class InvalidRequestError(EngineError):
    """A request with bad arguments (max_tokens <= 0, unknown confidence, ...)."""


class CancelledError(EngineError):
    """The request was cancelled or ran past its deadline."""
