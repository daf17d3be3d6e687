"""End healing (mercury_engine/canvas.py, mercury_engine/decode.py): the suffix's leading indentation, which the
joint tokenization merges with the span's last line break, is healed off the suffix."""

from __future__ import annotations

import pytest

from mercury_engine import Engine
from mercury_engine.canvas import build_canvas, heal_end, strip_tail
from mercury_engine.options import InfillOptions

pytestmark = pytest.mark.usefixtures("one_torch_thread")

# A whole-line span (HumanEval single-line shape): the prefix ends a line, the suffix starts with
# the next line's indentation ("       " + " print" with this tokenizer).
PREFIX = "def show(xs):\n    for x in xs:\n"
SUFFIX = "        print(x)\n    return len(xs)\n"


@pytest.fixture(scope="module")
def engine():
    eng = Engine.load(device="cpu", dtype="float32")  # the embedded model: its real BPE merges
    yield eng
    eng.close()


def test_the_suffix_indentation_is_healed_off_when_the_span_is_whole_lines(engine):
    tok = engine.tokenizer
    canvas = build_canvas(tok, PREFIX, SUFFIX, 8, engine.context_tokens)
    full = tok.encode(SUFFIX)
    assert canvas.tail_bytes == tok.token_bytes[full[0]] and not canvas.tail_bytes.strip(b" ")
    assert canvas.suffix_ids == full[1:]
    assert len(tok.encode("\n" + canvas.tail_bytes.decode())) == 1  # the merge it stands for


@pytest.mark.parametrize("prefix, suffix", [
    ("x = ", "        print(x)\n"),  # the prefix does not end a line: the span need not end one
    (PREFIX, "\n        print(x)\n"),  # the suffix starts with a line break already
    (PREFIX, "print(x)\n"),  # no indentation
    (PREFIX, "    "),  # nothing after the indentation
])
def test_no_end_healing_elsewhere(engine, prefix, suffix):
    tok = engine.tokenizer
    ids = tok.encode(suffix)
    assert heal_end(tok, prefix, ids) == (ids, b"")
    assert build_canvas(tok, prefix, suffix, 8, engine.context_tokens).tail_bytes == b""


def test_end_healing_follows_the_options(engine):
    tok = engine.tokenizer
    assert build_canvas(tok, PREFIX, SUFFIX, 8, engine.context_tokens, heal_tail=False).tail_bytes == b""
    assert build_canvas(tok, PREFIX, SUFFIX, 8, engine.context_tokens, heal=False).tail_bytes == b""


def test_strip_tail():
    assert strip_tail("    y = x\n       ", b"       ") == "    y = x\n"
    assert strip_tail("    y = x\n", b"       ") == "    y = x\n"
    assert strip_tail("    y = x   ", b"   ") == "    y = x   "  # only after a line break
    assert strip_tail("    y = x\n   ", b"") == "    y = x\n   "


@pytest.mark.parametrize("sampler", ["fast", "reference"])
def test_a_fixed_length_fill_ends_with_the_line_break_and_the_indentation(engine, sampler):
    tok = engine.tokenizer
    tail = build_canvas(tok, PREFIX, SUFFIX, 8, engine.context_tokens).tail_bytes
    opts = InfillOptions(sampler=sampler, allow_stop=False, initial_span=0, steps=8)
    r = engine.infill(PREFIX, SUFFIX, 6, opts)
    assert tok.token_bytes[r.token_ids[-1]].endswith(b"\n" + tail)
    assert r.text.endswith("\n") and not r.text.endswith("\n" + tail.decode())


def test_a_growing_fixed_length_fill_is_constrained_only_at_its_final_end(engine):
    tok = engine.tokenizer
    tail = build_canvas(tok, PREFIX, SUFFIX, 8, engine.context_tokens).tail_bytes
    # balanced starts with 32 masks (+1 healed token) and grows in blocks of 16 up to 40
    r = engine.infill(PREFIX, SUFFIX, 40, InfillOptions(allow_stop=False))
    assert len(r.token_ids) == 41
    assert tok.token_bytes[r.token_ids[-1]].endswith(b"\n" + tail)


def test_length_search_candidates_end_lines(engine):
    r = engine.infill(PREFIX, SUFFIX, 16, InfillOptions(length="search", length_candidates=(3, 6, 9)))
    assert r.text.endswith("\n")
