"""benchmarks/guard_fallback: what the user typed next, and the guard settings side by side."""

from __future__ import annotations

from benchmarks.lsp.guard_fallback import GUARDS, OnceSession, replay, typed_next
from benchmarks.lsp.typing_trace import Key, make_trace
from tests.support.fakes import FakeSession
from tests.support.settings import drafts


def test_typed_next_applies_backspaces_and_stops_at_line_end_or_jump():
    keys = [Key(0, 0, "a", 0.1, True, True), Key(1, 1, "b", 0.1, False, False), Key(2, 2, "x", 0.2, False, False),
            Key(2, 3, "", 0.1, False, False), Key(2, 2, "c", 0.1, False, False), Key(3, 3, "\n", 0.1, True, False),
            Key(4, 4, "d", 0.1, False, False)]
    assert typed_next(keys, 0) == "bc"
    assert typed_next(keys, 5) == "d"
    jumped = [*keys[:2], Key(9, 9, "z", 0.1, False, True)]
    assert typed_next(jumped, 0) == "b"


def test_replay_shapes_one_answer_per_point_under_each_guard():
    text = "".join(f"def function_{i}(argument):\n    value = compute(argument, {i})\n    return value\n\n"
                   for i in range(12))
    doc, keys = make_trace(text, 6.0, 8.0, seed=3)
    fake = FakeSession(" func(args")
    session = OnceSession(fake)
    stats = replay(session, [("file:///t.py", doc, keys)], lambda g: drafts(syntax_guard=g))
    points = sum(k.pause for k in keys)
    assert points and all(stats[g]["points"] == points for g in GUARDS)
    assert len(fake.specs) == len(session.answers) <= points  # the model answered each point once
    drop, prefix = stats["drop"], stats["prefix"]
    assert prefix["guard_prefix"] > 0 and drop["guard_prefix"] == 0
    assert prefix["shown"] == drop["shown"] + prefix["guard_prefix"]
    assert prefix["empty"] == drop["empty"] - prefix["guard_prefix"]
