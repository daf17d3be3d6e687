"""The typing traces of benchmarks/lsp_latency: replaying every key rebuilds the real file."""

from __future__ import annotations

import inspect
import textwrap

from benchmarks.lsp.typing_trace import TextModel, make_trace


def test_replaying_the_trace_rebuilds_the_file_with_pauses_typos_and_jumps():
    source = inspect.getsource(textwrap)
    doc, keys = make_trace(source, seconds=10_000, rate=10, seed=3)
    assert len(doc) < len(source)
    model = TextModel(doc)
    for key in keys:
        model.apply(key.start, key.end, key.insert)
    assert model.text == source
    assert sum(k.pause for k in keys) > 10
    assert any(k.end > k.start and not k.insert for k in keys)  # backspaces
    assert sum(k.jump for k in keys) > 2  # cursor jumps between regions
    assert make_trace(source, 10_000, 10, 3) == (doc, keys)  # deterministic


def test_time_budget_and_positions_in_utf16():
    doc, keys = make_trace("    value = compute(x)\n" * 400, seconds=2, rate=10, seed=0)
    assert 0 < sum(k.delay_s for k in keys) <= 2 + 1.5  # the budget, plus at most one word pause
    m = TextModel("a😀b\nc")
    assert m.position(3) == {"line": 0, "character": 4} and m.position(4) == {"line": 1, "character": 0}
    change = m.apply(1, 2, "é")
    assert change["range"]["end"] == {"line": 0, "character": 3} and m.text == "aéb\nc"
