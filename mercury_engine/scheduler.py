"""One queue per engine: requests from every client are batched per denoising step.

A worker thread owns the fast decoder. Each loop iteration admits waiting requests (up to
``max_batch`` in flight), advances every request in flight by one denoising step — requests at
different phases share the step's forwards (mercury_engine/fast_sampler.py) — and resolves the ones
that finished. Every request carries a cancel token and an optional deadline, checked before
each step: a cancelled request stops costing compute at the next step and its future raises
``CancelledError``.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass

from mercury_engine.canvas import Canvas
from mercury_engine.errors import CancelledError, EngineError
from mercury_engine.fast_sampler import DecodeState, FastDecoder
from mercury_engine.options import InfillOptions
from mercury_engine.types import CancelToken, StepEvent

MAX_BATCH = 16  # requests in flight per step: keeps one padded step's forward small enough to stay interactive
CLOSE_TIMEOUT_S = 5  # close() waits this long for the worker thread to end


@dataclass
class _Job:
    canvas: Canvas
    opts: InfillOptions
    cancel: CancelToken | None
    callback: Callable[[StepEvent], None] | None
    future: Future


class Scheduler:
    def __init__(self, decoder: FastDecoder, max_batch: int = MAX_BATCH) -> None:
        self.decoder = decoder
        self.max_batch = max_batch
        self._queue: queue.Queue[_Job | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._closed = False
        self.steps_run = 0  # observable: denoising iterations executed (tests, benchmarks)

    def submit(self, canvas: Canvas, opts: InfillOptions, cancel: CancelToken | None = None,
               callback: Callable[[StepEvent], None] | None = None) -> Future:
        if self._closed:
            raise EngineError("the engine's scheduler is closed")
        fut: Future = Future()
        self._ensure_thread()
        self._queue.put(_Job(canvas, opts, cancel, callback, fut))
        return fut

    def close(self) -> None:
        self._closed = True
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join(timeout=CLOSE_TIMEOUT_S)

    # ------------------------------------------------------------------ worker
    def _ensure_thread(self) -> None:
        with self._start_lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="mercury-engine", daemon=True)
                self._thread.start()

    def _loop(self) -> None:
        active: list[tuple[DecodeState, _Job]] = []
        while True:
            stop = self._admit(active, block=not active)
            if stop:
                for _, job in active:
                    job.future.set_exception(CancelledError("engine shut down"))
                return
            if not active:
                continue
            states = [s for s, _ in active]
            try:
                self.decoder.step(states)
            except Exception as exc:  # a bug or OOM must not kill the worker: fail the batch
                for _, job in active:
                    job.future.set_exception(exc if isinstance(exc, EngineError)
                                             else EngineError(f"decoding failed: {exc!r}"))
                active.clear()
                continue
            self.steps_run += 1
            still = []
            for s, job in active:
                if not s.done:
                    still.append((s, job))
                elif s.error is not None:
                    job.future.set_exception(s.error)
                else:
                    job.future.set_result(self.decoder.result(s))
            active[:] = still

    def _admit(self, active: list[tuple[DecodeState, _Job]], block: bool) -> bool:
        """Move waiting jobs into ``active``; True when the scheduler is closing."""
        while len(active) < self.max_batch:
            try:
                job = self._queue.get(block=block)
            except queue.Empty:
                return False
            block = False
            if job is None:
                return True
            if job.future.set_running_or_notify_cancel():
                try:
                    active.append((self.decoder.start(job.canvas, job.opts, job.cancel, job.callback), job))
                except Exception as exc:
                    job.future.set_exception(exc)
        return False

