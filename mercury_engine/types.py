"""Plain result and control types of the engine (no tensors cross this boundary)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from mercury_engine.errors import CancelledError


class CancelToken:
    """Set by a client to stop a request; checked by samplers between denoising steps.

    A deadline (``time.monotonic()`` seconds) cancels the request once it has passed.
    """

    def __init__(self, deadline: float | None = None) -> None:
        self._event = threading.Event()
        self.deadline = deadline

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set() or (self.deadline is not None and time.monotonic() >= self.deadline)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until cancelled or past the deadline (or ``timeout`` seconds); True if cancelled."""
        if self.deadline is not None:
            left = max(0.0, self.deadline - time.monotonic())
            timeout = left if timeout is None else min(timeout, left)
        self._event.wait(timeout)
        return self.cancelled

    def check(self) -> None:
        if self._event.is_set():
            raise CancelledError("request cancelled")
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise CancelledError("request ran past its deadline")


@dataclass
class StepEvent:
    """What one denoising step did; passed to the per-step callback."""
    step: int
    committed: list[int]  # span offsets committed this step
    span_ids: list[int]  # the span after this step (mask id where undecided)
    confidences: list[float]  # confidence of each committed token


@dataclass
class InfillResult:
    text: str
    token_ids: list[int]  # generated tokens of the span, stop tokens removed
    confidences: list[float]  # one per token in token_ids
    steps: int  # denoising steps taken
    forwards: int  # model forward passes (a step may need one; a cached step fewer tokens)
    trimmed: bool  # prefix/suffix were cut to fit the context budget
    prompt_tokens: int  # prefix + suffix tokens the model saw
    stop_reason: str  # "stop" (padding/EOS ended the span) or "length"
    timings: dict[str, float] = field(default_factory=dict)  # milliseconds

    @property
    def mean_confidence(self) -> float:
        return sum(self.confidences) / len(self.confidences) if self.confidences else 0.0
