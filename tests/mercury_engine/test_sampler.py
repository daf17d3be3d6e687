"""The reference sampler (mercury_engine/sampler.py) and the canvas (mercury_engine/canvas.py).

The first tests train a tiny diffusion model inside the test on a pattern whose masked span can
only be filled right by reading the *suffix* (and a second pattern whose two span tokens must
agree, which only a one-token-per-step schedule gets right when sampling): they fail if the
sampler drops the suffix or ignores the step schedule. The rest use a random tiny checkpoint,
wrapped where a test needs the model to prefer something (padding, no padding).
"""

from __future__ import annotations

import math
import random

import pytest
import torch

from mercury_engine import Engine, InvalidRequestError
from mercury_engine.canvas import Canvas, build_canvas, first_line
from mercury_engine.config import ModelConfig
from mercury_engine.decode import commit_count
from mercury_engine.model import Transformer
from mercury_engine.options import CONFIDENCE_KINDS, InfillOptions
from mercury_engine.sampler import reference_infill
from mercury_engine.tokenizer import Tokenizer
from mercury_train.testing import make_tiny_checkpoint
from tests.support.toy_model import toy_vocab, train_toy

COPY = "abcdefgh"  # copy task: "c:" X <pad> "|" X "."  (X appears only in the suffix)
PAIR = "wxyz"  # pair task: "p:" X X "|."  (the two span tokens must agree)
SEQ_LEN = 7


pytestmark = pytest.mark.usefixtures("one_torch_thread")


# ---------------------------------------------------------------------------- trained toy model
def _toy_samples(hf, pad: int):
    enc = lambda s: hf.encode(s).ids  # noqa: E731 - byte-level, no merges: one token per char

    def sample(rng: random.Random) -> tuple[list[int], tuple[int, int]]:
        r = rng.random()
        if r < 0.45:  # copy, suffix present
            x = rng.choice(COPY)
            return enc("c:") + [enc(x)[0], pad] + enc(f"|{x}."), (2, 5)
        if r < 0.65:  # copy, no suffix: X is free
            x = rng.choice(COPY)
            return enc("c:") + [enc(x)[0], pad], (2, 2)
        x = rng.choice(PAIR)
        return enc(f"p:{x}{x}|."), (2, 3)
    return sample


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """A tiny masked-diffusion model trained for a few hundred steps; returns its Engine."""
    vocab = toy_vocab()
    pad = vocab.tok.pad_id
    sample = _toy_samples(vocab.hf, pad)
    rng = random.Random(0)
    batch = 128

    def make_batch():
        ids = torch.full((batch, SEQ_LEN), pad)
        keep = torch.zeros(batch, SEQ_LEN, dtype=torch.bool)  # real (non-trailing) positions
        content = torch.zeros(batch, 2, dtype=torch.long)
        for i in range(batch):
            seq, pair = sample(rng)
            ids[i, : len(seq)] = torch.tensor(seq)
            keep[i, : len(seq)] = True
            content[i] = torch.tensor(pair)
        t = torch.rand(batch, 1) * 0.95 + 0.05
        masked = (torch.rand(batch, SEQ_LEN) < t) & keep
        # When both content tokens are masked, usually reveal one: the informative case.
        rows = torch.arange(batch)
        a, b = content[:, 0], content[:, 1]
        both = masked[rows, a] & masked[rows, b] & (a != b) & (torch.rand(batch) < 0.7)
        side = torch.rand(batch) < 0.5
        masked[rows[both & side], a[both & side]] = False
        masked[rows[both & ~side], b[both & ~side]] = False
        masked[rows, a] |= ~masked.any(1)
        return ids, masked, keep

    return train_toy(vocab, make_batch, 300, tmp_path_factory.mktemp("toy"))


def test_infill_reads_the_suffix(toy):
    """The span's answer is written only in the suffix: every letter must be copied from it."""
    for x in COPY:
        result = toy.infill("c:", f"|{x}.", options=InfillOptions(sampler="reference"), max_tokens=2)
        assert result.text == x, f"suffix '|{x}.': got {result.text!r}"
        assert result.stop_reason == "stop"  # the span's second position is padding
        assert result.confidences[-1] > 0.5


def test_without_suffix_the_answer_is_not_determined(toy):
    # The canvas is "c" [":" X pad] (healing puts ':' into the span): X has no evidence.
    canvas = build_canvas(toy.tokenizer, "c:", "", 2, toy.context_tokens)
    assert canvas.heal_bytes == b":" and canvas.suffix_ids == []
    ids = torch.tensor([canvas.ids(toy.tokenizer.mask_id)])
    with torch.no_grad():
        probs = torch.softmax(toy.model(ids)[0, canvas.span_start + 1], -1)
    letters = [toy.tokenizer.token_to_id(c) for c in COPY]
    assert probs[letters].sum() > 0.8  # it knows a letter goes there ...
    assert probs[letters].max() < 0.5  # ... but not which
    sampled = {toy.infill("c:", "", options=InfillOptions(sampler="reference", temperature=1.0, seed=s), max_tokens=2).text for s in range(16)}
    assert len(sampled & set(COPY)) >= 3, sampled


def test_one_token_per_step_keeps_dependent_tokens_consistent(toy):
    """'p:' X X: each X alone is uniform over PAIR, jointly they agree. Decoding one token per
    step conditions the second X on the first; decoding both in one step samples them
    independently. A sampler that ignores ``steps`` fails one of the two checks."""
    def outcomes(steps: int) -> list[str]:
        return [toy.infill("p:", "|.", options=InfillOptions(sampler="reference", steps=steps, temperature=0.7, seed=s), max_tokens=2).text
                for s in range(16)]
    sequential = outcomes(3)  # span = [':', X, X]: one per step
    assert all(len(t) == 2 and t[0] == t[1] and t[0] in PAIR for t in sequential), sequential
    assert len(set(sequential)) >= 2  # and it really samples
    parallel = outcomes(1)
    assert any(len(t) != 2 or t[0] != t[1] for t in parallel), parallel


# ---------------------------------------------------------------------------- random tiny model
@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return Engine.load(make_tiny_checkpoint(tmp_path_factory.mktemp("tiny")), device="cpu", dtype="float32")


class _Adjust(torch.nn.Module):
    """Wraps a model and edits its logits: ``no_stop`` forbids stop tokens; ``pad_from`` makes
    padding the most confident guess at every canvas position >= pad_from (and forbids stop
    tokens before it)."""

    def __init__(self, inner: Transformer, tok: Tokenizer, *, no_stop: bool = False,
                 pad_from: int | None = None) -> None:
        super().__init__()
        self.inner, self.config, self.tok = inner, inner.config, tok
        self.no_stop, self.pad_from = no_stop, pad_from

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = self.inner(x).clone()
        if self.no_stop:
            logits[..., list(self.tok.stop_ids)] = float("-inf")
        if self.pad_from is not None:
            logits[:, : self.pad_from, list(self.tok.stop_ids)] = float("-inf")
            logits[:, self.pad_from:, self.tok.pad_id] += 50.0
        return logits


def _canvas(tok: Tokenizer, n: int) -> Canvas:
    return build_canvas(tok, "def add(a, b):\n    return a", " + b\n", n, 256, heal=False)


def test_temperature_zero_is_deterministic(tiny):
    a = tiny.infill("def add(a, b):\n    ret", "\n", options=InfillOptions(sampler="reference", temperature=0.0, seed=1), max_tokens=8)
    b = tiny.infill("def add(a, b):\n    ret", "\n", options=InfillOptions(sampler="reference", temperature=0.0, seed=2), max_tokens=8)
    assert (a.text, a.token_ids, a.confidences) == (b.text, b.token_ids, b.confidences)


def test_seeded_sampling_is_reproducible(tiny):
    run = lambda seed: tiny.infill("import o", "\n", options=InfillOptions(sampler="reference", temperature=1.0, seed=seed), max_tokens=8)  # noqa: E731
    first, again = run(7), run(7)
    assert (first.token_ids, first.confidences) == (again.token_ids, again.confidences)
    assert len({tuple(run(s).token_ids) for s in range(6)}) > 1  # the seed matters


@pytest.mark.parametrize("steps", [1, 2, 3, 5, 8])
def test_steps_and_tokens_per_step_are_honoured(tiny, steps):
    tok = tiny.tokenizer
    model = _Adjust(tiny.model, tok, no_stop=True)  # no early end: every position is content
    canvas = _canvas(tok, 8)
    events = []
    result = reference_infill(model, tok, canvas, InfillOptions(sampler="reference", steps=steps), callback=events.append)
    assert result.steps == steps == len(events) == result.forwards
    left, expected = 8, []
    for i in range(steps):
        expected.append(commit_count(left, steps - i))
        left -= expected[-1]
    assert [len(e.committed) for e in events] == expected
    assert sum(expected) == 8 and len(result.token_ids) == 8
    assert result.stop_reason == "length"


@pytest.mark.parametrize("steps", [None, 1, 2, 3])
def test_padding_never_precedes_undecided_content(tiny, steps):
    """Padding is the most confident guess right of offset 3; it must still wait until every
    position to its left is decided, and it never costs extra steps."""
    tok = tiny.tokenizer
    canvas = _canvas(tok, 8)
    model = _Adjust(tiny.model, tok, pad_from=canvas.span_start + 3)
    events = []
    result = reference_infill(model, tok, canvas, InfillOptions(sampler="reference", steps=steps), callback=events.append)
    stops = set(tok.stop_ids)
    for e in events:
        for i, t in enumerate(e.span_ids):
            if t in stops:
                assert all(u != tok.mask_id for u in e.span_ids[:i]), f"step {e.step}: {e.span_ids}"
        assert all(math.isfinite(c) for c in e.confidences)
    assert events[-1].span_ids.count(tok.mask_id) == 0
    assert result.steps <= (steps or 8)
    # padding is removed: three content tokens, the text is exactly theirs
    assert len(result.token_ids) == 3 and not stops & set(result.token_ids)
    assert result.text == tok.decode(result.token_ids)
    assert result.stop_reason == "stop"
    assert len(result.confidences) == 3


def test_padding_removed_from_engine_text(tiny):
    tok = tiny.tokenizer
    canvas = build_canvas(tok, "x = ", "\n", 6, tiny.context_tokens)
    tiny.model, inner = _Adjust(tiny.model, tok, pad_from=canvas.span_start + 2), tiny.model
    try:
        result = tiny.infill("x = ", "\n", options=InfillOptions(sampler="reference"), max_tokens=6)
    finally:
        tiny.model = inner
    assert result.stop_reason == "stop"
    assert "<|pad|>" not in result.text and "<|endoftext|>" not in result.text
    assert not set(tok.stop_ids) & set(result.token_ids)


@pytest.mark.parametrize("prefix", ["def add(a, b):\n    ret", "def add(a, b):\n", "for i in ra",
                                    "class Point:\n    def __init__(self, x, y):\n        self.x = x\n  "])
def test_boundary_healing(tiny, prefix):
    tok = tiny.tokenizer
    canvas = build_canvas(tok, prefix, "", 6, tiny.context_tokens)
    heal = canvas.heal_bytes
    assert heal, "the prefix's last token is healed"
    assert tok.decode_bytes(canvas.prefix_ids) + heal == prefix.encode()
    assert canvas.span_len == 6 + 1
    events = []
    result = tiny.infill(prefix, "", options=InfillOptions(sampler="reference"), max_tokens=6, callback=events.append)
    first = [e.span_ids[0] for e in events if 0 in e.committed][0]
    raw = tok.decode_bytes(result.token_ids)
    assert tok.token_bytes[first].startswith(heal)
    assert raw.startswith(heal)
    # the healed bytes are not returned again: prefix + text is the cursor text + the new bytes
    assert result.text == raw[len(heal):].decode("utf-8", errors="replace")
    assert prefix + result.text == (prefix.encode()[: -len(heal)] + raw).decode("utf-8", errors="replace")


def test_no_healing_when_disabled(tiny):
    canvas = build_canvas(tiny.tokenizer, "for i in ra", "", 6, tiny.context_tokens, heal=False)
    assert canvas.heal_bytes == b"" and canvas.span_len == 6
    assert tiny.tokenizer.decode(canvas.prefix_ids) == "for i in ra"


@pytest.mark.parametrize("kind", CONFIDENCE_KINDS)
def test_confidence_kinds(tiny, kind):
    result = tiny.infill("def add(a, b):\n    return a", "\n", options=InfillOptions(sampler="reference", confidence=kind), max_tokens=6)
    assert result.steps >= 1 and len(result.confidences) == len(result.token_ids)
    for c in result.confidences:
        if kind == "neg_entropy":
            assert c <= 0 and math.isfinite(c)
        else:
            assert 0 <= c <= 1 + 1e-6
    with pytest.raises(InvalidRequestError, match="confidence"):
        tiny.infill("x", "", options=InfillOptions(sampler="reference", confidence="bogus"), max_tokens=2)


class _PositionOracle(torch.nn.Module):
    """Position i predicts token ``table[i]`` with certainty."""

    def __init__(self, config: ModelConfig, table: list[int]) -> None:
        super().__init__()
        self.config, self.table = config, table
        self.dummy = torch.nn.Parameter(torch.zeros(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = x.shape[1]
        logits = torch.full((x.shape[0], t, self.config.vocab_size), -20.0)
        logits[:, torch.arange(t), torch.tensor(self.table[:t])] = 20.0
        return logits


@pytest.mark.parametrize("shift", [False, True])
def test_logit_shift(tiny, shift):
    tok = tiny.tokenizer
    table = list(range(40, 240))
    oracle = _PositionOracle(tiny.config.replace(logits_shift=shift), table)
    canvas = _canvas(tok, 4)
    start = canvas.span_start
    result = reference_infill(oracle, tok, canvas, InfillOptions(sampler="reference"))
    assert result.token_ids == (table[start - 1: start + 3] if shift else table[start: start + 4])


@pytest.mark.parametrize(("text", "want"), [
    ("    return x\n    y = 1\n", "    return x\n"),
    ("\n   \n    return x\nmore", "\n   \n    return x\n"),  # leading blank lines are kept
    ("x + 1)", "x + 1)"),  # no line break: unchanged
    ("", ""),
])
def test_first_line_cuts_after_the_first_nonblank_line(tiny, text, want):
    tok = tiny.tokenizer
    heal = b"ret"
    ids = tok.encode("ret" + text)
    got, n = first_line(tok, text, ids, heal)
    assert got == want
    # the kept tokens cover exactly the kept text (and the healed bytes before it)
    covered = tok.decode_bytes(ids[:n])
    assert covered.startswith(heal + want.encode())
    assert n == len(ids) or not tok.decode_bytes(ids[:n - 1]).startswith(heal + want.encode())


def test_single_line_is_a_prefix_of_the_full_completion(tiny):
    full = tiny.infill("def f(x):\n", "\n", options=InfillOptions(sampler="reference", allow_stop=False), max_tokens=24)
    one = tiny.infill("def f(x):\n", "\n", options=InfillOptions(sampler="reference", allow_stop=False, single_line=True), max_tokens=24)
    assert full.text.startswith(one.text)
    assert one.text == first_line(tiny.tokenizer, full.text, full.token_ids, b"\n")[0] or "\n" not in full.text
    assert len(one.token_ids) == len(one.confidences) <= len(full.token_ids)


@pytest.mark.parametrize(("text", "decided_upto", "ends_after"), [
    ("    return x\n    y = 2\n", "    return x", None),  # the line break is not decided yet
    ("    return x\n    y = 2\n", "    return x\n", "    return x\n"),
    ("    return x\n    y = 2\n", "    return x\n    y", "    return x\n"),
    ("\n\n    x\n    y\n", "\n\n", None),  # blank lines alone do not end the span
    ("\n\n    x\n    y\n", "\n\n    x\n", "\n\n    x\n"),
])
def test_end_at_line_pads_after_the_first_text_line(tiny, text, decided_upto, ends_after):
    tok = tiny.tokenizer
    heal = b"\n"  # the healed bytes (a prefix ending in a line break) do not count as a line
    ids = tok.encode("\n" + text)
    span = torch.tensor(ids + [tok.mask_id] * 3)
    n_decided = next(n for n in range(len(ids) + 1) if tok.decode_bytes(ids[:n]).startswith(
        b"\n" + decided_upto.encode()))
    decided = torch.zeros(span.numel(), dtype=torch.bool)
    decided[:n_decided] = True
    decided[-1] = True  # a token decided out of order, after the gap
    from mercury_engine.decode import end_at_line
    ended = end_at_line(tok, span, decided, heal)
    assert ended == (ends_after is not None)
    if ended:
        kept = span.tolist().index(tok.pad_id)
        assert tok.decode_bytes(ids[:kept]).startswith(b"\n" + ends_after.encode())
        assert not tok.decode_bytes(ids[:kept - 1]).startswith(b"\n" + ends_after.encode())  # no later
        assert bool(decided.all()) and (span[kept:] == tok.pad_id).all()
    else:
        assert span.tolist()[:len(ids)] == ids
