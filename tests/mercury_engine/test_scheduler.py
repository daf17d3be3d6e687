"""The scheduler on its own, with a scripted decoder: batching, cancellation, failures, close."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import pytest

from mercury_engine.errors import CancelledError, EngineError
from mercury_engine.options import InfillOptions
from mercury_engine.scheduler import Scheduler
from mercury_engine.types import CancelToken


@dataclass
class FakeState:
    name: str
    steps_needed: int
    cancel: CancelToken | None
    steps: int = 0
    done: bool = False
    error: Exception | None = None


@dataclass
class FakeDecoder:
    """Each canvas is ``(name, steps)``; ``step`` advances all states and records batch sizes."""
    batches: list[list[str]] = field(default_factory=list)
    fail_on: str | None = None
    gate: threading.Event | None = None

    def start(self, canvas, opts, cancel=None, callback=None) -> FakeState:
        name, steps = canvas
        return FakeState(name, steps, cancel)

    def step(self, states: list[FakeState]) -> None:
        if self.gate is not None:
            self.gate.wait(timeout=30)
        live = []
        for s in states:
            if s.cancel is not None and s.cancel.cancelled:
                s.error, s.done = CancelledError("request cancelled"), True
                continue
            live.append(s)
        self.batches.append([s.name for s in live])
        if self.fail_on in {s.name for s in live}:
            raise RuntimeError("boom")
        for s in live:
            s.steps += 1
            s.done = s.steps >= s.steps_needed

    def result(self, s: FakeState) -> str:
        return f"{s.name}:{s.steps}"


def test_requests_in_flight_share_steps():
    gate = threading.Event()
    dec = FakeDecoder(gate=gate)
    sched = Scheduler(dec)
    try:
        futs = [sched.submit(("a", 3), InfillOptions()), sched.submit(("b", 1), InfillOptions())]
        gate.set()
        assert [f.result(timeout=30) for f in futs] == ["a:3", "b:1"]
        assert ["a", "b"] in dec.batches  # one step advanced both
        assert sched.steps_run == len(dec.batches)
    finally:
        sched.close()


def test_max_batch_bounds_requests_in_flight():
    gate = threading.Event()
    dec = FakeDecoder(gate=gate)
    sched = Scheduler(dec, max_batch=2)
    try:
        futs = [sched.submit((n, 2), InfillOptions()) for n in "abcde"]
        gate.set()
        assert [f.result(timeout=30) for f in futs] == [f"{n}:2" for n in "abcde"]
        assert max(len(b) for b in dec.batches) <= 2
    finally:
        sched.close()


def test_cancelled_request_fails_alone():
    gate = threading.Event()
    dec = FakeDecoder(gate=gate)
    sched = Scheduler(dec)
    try:
        token = CancelToken()
        token.cancel()
        doomed = sched.submit(("x", 5), InfillOptions(), cancel=token)
        fine = sched.submit(("y", 2), InfillOptions())
        gate.set()
        with pytest.raises(CancelledError):
            doomed.result(timeout=30)
        assert fine.result(timeout=30) == "y:2"
    finally:
        sched.close()


def test_a_failing_step_fails_its_batch_and_the_worker_survives():
    dec = FakeDecoder(fail_on="bad")
    sched = Scheduler(dec)
    try:
        with pytest.raises(EngineError, match="decoding failed"):
            sched.submit(("bad", 2), InfillOptions()).result(timeout=30)
        dec.fail_on = None
        assert sched.submit(("ok", 1), InfillOptions()).result(timeout=30) == "ok:1"
    finally:
        sched.close()


def test_a_closed_scheduler_refuses_work():
    """(Invalid options never reach it: the engine's entry resolves them, tests/mercury_engine/test_options.py.)"""
    sched = Scheduler(FakeDecoder())
    sched.close()
    with pytest.raises(EngineError, match="closed"):
        sched.submit(("a", 1), InfillOptions())
