"""Protocol fuzzing against a long-lived server, over stdio and over TCP on loopback.

Each hypothesis case sends a few LSP messages with odd contents (some broken at the byte level)
interleaved with text-sync operations on model documents. Properties, checked after every case:
* the server never exits;
* every request sent in an intact frame with a valid id is answered exactly once, and no id is
  ever answered twice;
* a health request (``mercury/stats``) is answered after every case and every 100 messages;
* each model document equals the reference model of its text (``mercury/documentState``).

Typed cases (issue 27) send valid messages of every method with field types and values mutated
(``lsp_fuzz.typed_message``: lone surrogates, wrong types, NaN, huge integers, nested nulls),
``TYPED_BATCH`` at a time: the same properties but the documents'.

The default suite runs ``DEFAULT_CASES`` cases and ``DEFAULT_TYPED`` typed messages; ``-m slow``
runs ``SLOW_CASES`` and ``SLOW_TYPED`` and writes the totals to ``benchmarks/results/fuzz.json``.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import asdict
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from benchmarks.common.jsonrpc import LspConnection
from tests.support.lsp_fuzz import (
    DocModel,
    FuzzTotals,
    chaos_message,
    document_ops,
    frame,
    mutated_frame,
    op_message,
    typed_message,
)
from tests.support.server import TcpDaemon, serve_command

DEFAULT_CASES = {"stdio": int(os.environ.get("FUZZ_CASES", 1500)), "tcp": 500}  # 2,000 in the default suite
SLOW_CASES = {"stdio": 10_000, "tcp": 2_000}
TYPED_BATCH = 20  # typed messages per case, sent at once
DEFAULT_TYPED = {"stdio": int(os.environ.get("FUZZ_TYPED", 2400)), "tcp": 600}  # messages
SLOW_TYPED = {"stdio": 16_000, "tcp": 4_000}  # 20,000 in all
HEALTH_EVERY = 100  # messages
DAMAGE_PAD = 400  # more than any length a mutation adds
ANSWER_TIMEOUT_S = 60.0
MODEL_URIS = [f"file:///fuzz/model-{i}.py" for i in range(3)]
RESULTS = Path(__file__).resolve().parents[3] / "benchmarks" / "results" / "fuzz.json"


def _log_file():
    """Where the server's log goes (FUZZ_SERVER_LOG: a file, to debug a failure)."""
    path = os.environ.get("FUZZ_SERVER_LOG")
    return open(path, "ab") if path else subprocess.DEVNULL  # noqa: SIM115


class Session:
    """One server process and one client, kept for a whole run of cases."""

    def __init__(self, transport: str) -> None:
        self.transport = transport
        if transport == "stdio":
            self.proc = subprocess.Popen(serve_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=_log_file())
            self.client = LspConnection.over_pipes(self.proc)
        else:
            daemon = TcpDaemon()
            self.proc, self.client = daemon.proc, daemon.connect()
        self.totals = FuzzTotals(transports=[transport])
        self.models = {uri: DocModel(uri) for uri in MODEL_URIS}
        self.since_health = 0
        init = self.client.request_message("initialize", {"processId": os.getpid(), "rootUri": None, "capabilities": {
            "general": {"positionEncodings": ["utf-16"]}, "textDocument": {"inlineCompletion": {}},
            "window": {"workDoneProgress": True}}, "initializationOptions": {"maxTokens": 8}})
        assert "result" in init
        self.client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def close(self) -> int | None:
        try:
            if self.proc.poll() is None:
                self.client.request_message("shutdown", timeout=30)
                self.client.send({"jsonrpc": "2.0", "method": "exit"})
                if self.transport == "tcp":
                    self.client.close()
                    self.proc.terminate()
                return self.proc.wait(30)
            return self.proc.returncode
        finally:
            if self.proc.poll() is None:
                self.proc.kill()

    # ------------------------------------------------------------------ one case
    def run_case(self, data: st.DataObject) -> None:
        c, t = self.client, self.totals
        t.cases += 1
        expected: list = []
        sent: dict = {}
        frames: list[bytes] = []
        chaos = data.draw(st.lists(chaos_message(), max_size=4), label="chaos")
        ops = data.draw(document_ops(MODEL_URIS), label="documents")
        touched = {uri for uri, _ in ops}
        for message, is_request in chaos:
            if is_request:
                message["id"] = c.next_id() if data.draw(st.booleans()) else f"s{c.next_id()}"
            raw, how = data.draw(mutated_frame(json.dumps(message).encode()), label="frame")
            if how != "none":
                t.frames_mutated += 1
                # A frame whose length lies eats the bytes after it: whitespace (skipped between
                # frames) takes the damage, so the next frame's fate is known to the model.
                raw += b" " * (len(raw) + DAMAGE_PAD)
            elif is_request and isinstance(message, dict) and "id" in message:
                expected.append(message["id"])
                sent[message["id"]] = message
            c.write(raw)
            frames.append(raw[:300])
            self._sent()
        for uri, op in ops:
            if (message := op_message(self.models[uri], op)) is not None:
                c.send(message)
                self._sent()
        t.requests_expected += len(expected)
        self._health()
        if not c.wait_for(expected, ANSWER_TIMEOUT_S):
            missing = [sent[i] for i in expected if i not in c.responses_seen]
            t.unanswered += len(missing)
            raise AssertionError(f"unanswered: {missing}; frames of the case: {frames}")
        t.duplicate_responses = sum(1 for n in c.responses_seen.values() if n > 1)
        if t.duplicate_responses:
            twice = {i: c.history[i] for i, n in c.responses_seen.items() if n > 1}
            raise AssertionError(f"answered twice: {twice}")
        for uri in sorted(touched):
            t.document_checks += 1
            got = c.request_message("mercury/documentState", {"textDocument": {"uri": uri}})["result"]
            want = self.models[uri].state()
            if (None if got is None else {k: got[k] for k in ("version", "inSync", "sha256")}) != want:
                t.document_mismatches += 1
                raise AssertionError(f"{uri}: server {got} != model {want}")
        assert c.alive(), "the server exited"
        assert t.unanswered == 0 and t.duplicate_responses == 0, asdict(t)

    def run_typed_case(self, data: st.DataObject) -> None:
        c, t = self.client, self.totals
        t.cases += 1
        expected, sent = [], {}
        for message, is_request in data.draw(st.lists(typed_message(), min_size=TYPED_BATCH, max_size=TYPED_BATCH),
                                             label="typed"):
            if is_request:
                message["id"] = c.next_id() if data.draw(st.booleans()) else f"t{c.next_id()}"
                expected.append(message["id"])
                sent[message["id"]] = message
            c.write(frame(json.dumps(message).encode()))
            t.typed_messages += 1
            self._sent()
        t.requests_expected += len(expected)
        self._health()
        if not c.wait_for(expected, ANSWER_TIMEOUT_S):
            missing = [sent[i] for i in expected if i not in c.responses_seen]
            t.unanswered += len(missing)
            raise AssertionError(f"unanswered: {json.dumps(missing)[:4000]}")
        t.duplicate_responses = sum(1 for n in c.responses_seen.values() if n > 1)
        assert t.duplicate_responses == 0, {i: c.history[i] for i, n in c.responses_seen.items() if n > 1}
        assert c.alive(), "the server exited"

    def _sent(self) -> None:
        self.totals.messages += 1
        self.since_health += 1
        if self.since_health >= HEALTH_EVERY:
            self._health()

    def _health(self) -> None:
        self.since_health = 0
        self.totals.health_checks += 1
        if not self.client.alive():
            self.totals.crashes += 1
            raise AssertionError("the server exited")
        try:
            assert "result" in self.client.request_message("mercury/stats", timeout=ANSWER_TIMEOUT_S)
        except TimeoutError:
            self.totals.hangs += 1
            raise


def fuzz(transport: str, cases: int, typed: int = 0) -> FuzzTotals:
    """``cases`` chaos cases, then ``typed`` typed messages, against one session."""
    session = Session(transport)

    def run(case_fn, n: int) -> None:
        @settings(max_examples=n, deadline=None, derandomize=True, database=None,
                  phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
        @given(data=st.data())
        def case(data):
            case_fn(data)

        case()

    try:
        if cases:
            run(session.run_case, cases)
        if typed:
            run(session.run_typed_case, max(1, typed // TYPED_BATCH))
    finally:
        code = session.close()
    if transport == "stdio":
        assert code == 0  # alive to the end, and a clean shutdown
    return session.totals


@pytest.mark.parametrize("transport", ["stdio", "tcp"])
def test_fuzz_protocol(tiny_model, transport):
    totals = fuzz(transport, DEFAULT_CASES[transport])
    assert totals.cases >= DEFAULT_CASES[transport] and totals.crashes == totals.hangs == 0


@pytest.mark.parametrize("transport", ["stdio", "tcp"])
def test_fuzz_field_types_and_values(tiny_model, transport):
    totals = fuzz(transport, 0, DEFAULT_TYPED[transport])
    assert totals.typed_messages >= DEFAULT_TYPED[transport] and totals.crashes == totals.hangs == 0


@pytest.mark.slow
def test_fuzz_protocol_long_run(tiny_model):
    runs = [fuzz(transport, n, SLOW_TYPED[transport]) for transport, n in SLOW_CASES.items()]
    total = FuzzTotals(transports=[t for r in runs for t in r.transports])
    for r in runs:
        for key, value in asdict(r).items():
            if isinstance(value, int):
                setattr(total, key, getattr(total, key) + value)
    out = {"total": asdict(total), "by_transport": {r.transports[0]: asdict(r) for r in runs}}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(asdict(total)))
    assert total.cases >= sum(SLOW_CASES.values()) and total.typed_messages >= sum(SLOW_TYPED.values())
    assert total.crashes == total.hangs == total.unanswered == total.duplicate_responses == 0
