"""The HTTP API's shared backend on a real (tiny) local engine: concurrent requests share
denoising steps, a cancelled request leaves the batch within one step, the queue is bounded,
deadlines hold."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from mercury_engine.options import InfillOptions
from mercury_lsp.backend.base import DeadlineExceeded, Overloaded, QueueLimits
from mercury_lsp.backend.local import local_client
from mercury_lsp.backend.shared import SharedBackend
from mercury_lsp.engine_client import CancelToken, LoadSpec
from mercury_lsp.schema import InfillSpec

pytestmark = pytest.mark.asyncio
# A free-length span (no length prior): a random tiny model then runs it long.
LONG = InfillSpec(prefix="def add(a, b):\n    return ", suffix="\n", max_tokens=120,
                  options=InfillOptions(preset="quality", length="off"))
SHORT = InfillSpec(prefix="x = ", suffix="\n", max_tokens=4)


class StepLog:
    """Wraps the scheduler's decoder: the states of every step, and an event per step."""

    def __init__(self, scheduler) -> None:
        self.steps: list[list] = []
        self.live: list[list] = []  # per step: the states not cancelled when the step began
        self.stepped = threading.Event()
        inner = scheduler.decoder.step

        def step(states):
            live = [s for s in states if s.cancel is None or not s.cancel.cancelled]
            inner(states)
            self.steps.append(list(states))
            self.live.append(live)
            self.stepped.set()

        scheduler.decoder.step = step

    async def next_step(self) -> None:
        self.stepped.clear()
        assert await asyncio.to_thread(self.stepped.wait, 60)


async def started(tiny_model, limits: QueueLimits = QueueLimits()) -> tuple[SharedBackend, StepLog]:
    backend = SharedBackend(local_client(), LoadSpec(str(tiny_model), dtype="float32", threads=1), limits)
    await backend.start()
    assert backend.status().state == "ready"
    scheduler = await backend.client.run(lambda s: s.engine.scheduler, CancelToken())
    return backend, StepLog(scheduler)


async def test_concurrent_requests_share_steps_and_cancel_within_one_step(tiny_model):
    backend, log = await started(tiny_model)
    try:
        token = CancelToken()
        first = asyncio.ensure_future(backend.infill(LONG, token))
        await log.next_step()
        first_state = log.steps[0][0]
        second = await backend.infill(SHORT, CancelToken())  # joins the running batch
        assert second.steps >= 1
        assert any(len(states) == 2 for states in log.steps), "the two requests never shared a step"
        # The client goes away (as a disconnect does): the request leaves within one step.
        at_cancel = len(log.steps)
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        assert token.cancelled
        await backend.infill(SHORT, CancelToken())  # runs after the cancelled one is gone
        # Computed for after the cancel: at most the step already running then.
        computed = [live for live in log.live[at_cancel:] if first_state in live]
        assert len(computed) <= 1
    finally:
        await backend.close()


async def test_bounded_queue_and_deadline(tiny_model):
    backend, log = await started(tiny_model, QueueLimits(max_running=1, max_waiting=0))
    try:
        token = CancelToken()
        first = asyncio.ensure_future(backend.infill(LONG, token))
        await log.next_step()
        with pytest.raises(Overloaded):
            await backend.infill(SHORT, CancelToken())
        assert backend.status().running == 1
        token.cancel()
        with pytest.raises(Exception):  # noqa: B017 - cancelled by its token: Cancelled
            await first
        with pytest.raises(DeadlineExceeded):  # a deadline already past: refused, no work done
            await backend.infill(LONG, CancelToken(deadline=time.monotonic() - 1))
    finally:
        await backend.close()
