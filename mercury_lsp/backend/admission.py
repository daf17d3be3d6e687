"""A bounded queue in front of the engine: at most ``max_running`` requests decode at once
(they share the scheduler's denoising steps), at most ``max_waiting`` wait for a slot; beyond
that a request is refused at once (``Overloaded``), never queued without bound."""

from __future__ import annotations

import asyncio
import time

from mercury_lsp.backend.base import DeadlineExceeded, Overloaded


class Admission:
    def __init__(self, max_running: int, max_waiting: int) -> None:
        self.max_running = max_running
        self.max_waiting = max_waiting
        self.running = 0
        self.waiting = 0
        self._sem = asyncio.Semaphore(max_running)

    async def acquire(self, deadline: float | None) -> None:
        """Take a slot, waiting until ``deadline`` (``time.monotonic()`` seconds) at most."""
        if self._sem.locked() and self.waiting >= self.max_waiting:
            raise Overloaded(f"the server is busy ({self.running} running, {self.waiting} waiting); "
                             f"retry shortly")
        self.waiting += 1
        try:
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            await asyncio.wait_for(self._sem.acquire(), timeout)
        except TimeoutError:
            raise DeadlineExceeded("the request waited past its deadline for a free slot") from None
        finally:
            self.waiting -= 1
        self.running += 1

    def release(self) -> None:
        self.running -= 1
        self._sem.release()
