"""The incremental context cache (mercury_engine/context_cache.py): the policy, exactness when the
cached context is the request's own, and a property test over random edits — the cache never
serves keys/values of text that is no longer in the document."""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mercury_engine import Engine
from mercury_engine.canvas import build_canvas
from mercury_engine.context_cache import CachePolicy, ContextCache, common_prefix
from mercury_engine.fast_sampler import FastDecoder
from mercury_engine.model import apply_rotary
from mercury_engine.options import WHOLE_SPAN, InfillOptions
from mercury_train.testing import make_tiny_checkpoint

pytestmark = pytest.mark.usefixtures("one_torch_thread")

ALPHABET = "ab_ (:\n=é€😀"  # ASCII, 2- and 3-byte UTF-8, an astral character
MAX_TOKENS = 6
# One block over the whole span of free length: one full step per request (the cached context
# is then exactly the one a fresh full step computes when the canvas repeats).
ONE_BLOCK = InfillOptions(initial_span=WHOLE_SPAN, block_size=64, length="off")


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:
    eng = Engine.load(make_tiny_checkpoint(tmp_path_factory.mktemp("tiny"), seed=5), dtype="float32")
    yield eng
    eng.close()


def fake_kv(ids: list[int], layers: int = 2) -> list[tuple[torch.Tensor, torch.Tensor]]:
    t = torch.tensor(ids, dtype=torch.float32).view(1, 1, -1, 1)
    return [(t.clone(), t.clone()) for _ in range(layers)]


def layer0_keys(model, ids: list[int]) -> torch.Tensor:
    """Layer 0's keys depend only on each token and its position: the cache's must equal these."""
    block, att = model.layers[0], model.layers[0].self_attn
    x = block.input_layernorm(model.embed_tokens(torch.tensor([ids])))
    k = att.k_proj(x).view(1, len(ids), att.n_kv, att.head_dim).transpose(1, 2)
    return apply_rotary(k, model.rotary(torch.arange(len(ids))[None], k.dtype))  # [1, K, P, E]


# ---------------------------------------------------------------------------- the policy
def test_lookup_reuses_the_longest_common_prefix_only():
    cache = ContextCache(CachePolicy(min_reuse=2, margin=0))
    cache.store([1, 2, 3, 4, 5], fake_kv([1, 2, 3, 4, 5]), reuses=0)
    hit = cache.lookup([1, 2, 3, 9], limit=10)
    assert hit is not None and hit.length == 3
    assert hit.kv[0][0].flatten().tolist() == [1, 2, 3]
    assert cache.lookup([7, 2, 3], limit=10) is None  # differs at position 0
    assert cache.lookup([1, 2, 3, 4], limit=1) is None  # under min_reuse once limited


def test_refresh_after_n_reuses_and_on_far_edits():
    cache = ContextCache(CachePolicy(min_reuse=2, refresh_every=2, max_tail=3, margin=0))
    ids = list(range(10))
    cache.store(ids, fake_kv(ids), reuses=2)
    assert cache.lookup(ids, limit=10) is None and cache.stats.refreshes == 1  # reused twice: refresh
    cache.store(ids, fake_kv(ids), reuses=0)
    assert cache.lookup(ids, limit=10) is not None
    far = ids[:5] + [99] * 5  # the change starts 5 tokens before the end: a far edit
    assert cache.lookup(far, limit=10) is None


def test_one_entry_per_document_and_lru_bound():
    cache = ContextCache(CachePolicy(min_reuse=2, max_entries=2))
    cache.store([1, 2, 3], fake_kv([1, 2, 3]), 0)
    cache.store([1, 2, 3, 4], fake_kv([1, 2, 3, 4]), 0)  # the same document, typed further
    assert [e.ids for e in cache.entries] == [[1, 2, 3, 4]]
    cache.store([5, 6, 7], fake_kv([5, 6, 7]), 0)
    cache.store([8, 9, 10], fake_kv([8, 9, 10]), 0)
    assert [e.ids for e in cache.entries] == [[5, 6, 7], [8, 9, 10]]
    assert common_prefix([1, 2], [1, 2, 3]) == 2


def test_the_margin_recomputes_the_tokens_just_before_a_change():
    cache = ContextCache(CachePolicy(min_reuse=2, margin=2))
    cache.store(list(range(10)), fake_kv(list(range(10))), 0)
    hit = cache.lookup([*range(8), 99], limit=20)
    assert hit is not None and hit.length == 6


# ---------------------------------------------------------------------------- the decoder
def test_reusing_the_same_context_reproduces_the_uncached_answer(engine):
    dec = FastDecoder(engine.model, engine.tokenizer)
    dec.context_cache.policy = CachePolicy(margin=0)
    prefix, suffix = "class Point:\n    def __init__(self, x, y):\n        self.x = x\n        self.", "\n"
    canvas = build_canvas(engine.tokenizer, prefix, suffix, MAX_TOKENS, engine.context_tokens)
    plain = dec.run([dec.start(canvas, ONE_BLOCK)])[0]
    computed = dec.context_cache.stats.computed_tokens
    again = dec.run([dec.start(canvas, ONE_BLOCK)])[0]
    assert dec.context_cache.stats.hits == 1
    assert again.token_ids == plain.token_ids
    assert dec.context_cache.stats.computed_tokens - computed < computed  # the prefix was not recomputed
    off = dec.run([dec.start(canvas, InfillOptions(initial_span=WHOLE_SPAN, block_size=64, context_reuse=False, length="off"))])[0]
    assert off.token_ids == plain.token_ids


def test_typing_on_reuses_the_prefix_and_off_never_touches_the_cache(engine):
    dec = FastDecoder(engine.model, engine.tokenizer)
    dec.context_cache.policy = CachePolicy(min_reuse=4, margin=0)
    stats = dec.context_cache.stats
    text = "for i in range(10):\n    print(i)\n" * 2
    for n in range(len(text) - 6, len(text)):
        canvas = build_canvas(engine.tokenizer, text[:n], "", MAX_TOKENS, engine.context_tokens)
        dec.run([dec.start(canvas, InfillOptions())])
        before = (stats.as_dict(), [(e.ids, e.reuses) for e in dec.context_cache.entries])
        dec.run([dec.start(canvas, InfillOptions(context_reuse=False))])
        after = {**stats.as_dict(), "computed_tokens": before[0]["computed_tokens"]}
        assert (after, [(e.ids, e.reuses) for e in dec.context_cache.entries]) == before
    assert stats.hits >= 3
    assert len(dec.context_cache.entries) == 1  # one document, one entry


# ---------------------------------------------------------------------------- random edits
edit = st.one_of(
    st.tuples(st.just("type"), st.text(ALPHABET, min_size=1, max_size=3), st.just(0.0)),
    st.tuples(st.just("insert"), st.text(ALPHABET, min_size=1, max_size=4), st.floats(0, 1)),
    st.tuples(st.just("delete"), st.integers(1, 4).map(str), st.floats(0, 1)),
    st.tuples(st.just("replace_all"), st.text(ALPHABET, max_size=40), st.just(0.0)),
    st.tuples(st.just("old_version"), st.just(""), st.floats(0, 1)),
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(start=st.text(ALPHABET, min_size=10, max_size=60), edits=st.lists(edit, min_size=1, max_size=12))
def test_the_cache_only_ever_holds_and_serves_the_documents_current_tokens(engine, start, edits):
    tok, model = engine.tokenizer, engine.model
    dec = FastDecoder(model, tok)
    cache = dec.context_cache
    cache.policy = CachePolicy(min_reuse=2, refresh_every=3, max_tail=12, margin=1)
    served = []
    lookup = cache.lookup

    def recording_lookup(prefix_ids, limit, scope=None):
        reuse = lookup(prefix_ids, limit, scope)
        served.append((list(prefix_ids), reuse))
        return reuse

    cache.lookup = recording_lookup
    text, cursor, history = start, len(start), [(start, len(start))]
    for op, arg, where in edits:
        if op == "type":
            text, cursor = text[:cursor] + arg + text[cursor:], cursor + len(arg)
        elif op == "insert":
            at = round(where * len(text))
            text, cursor = text[:at] + arg + text[at:], at + len(arg)
        elif op == "delete":
            at = round(where * len(text))
            text, cursor = text[:at] + text[at + int(arg):], at
        elif op == "replace_all":
            text, cursor = arg, len(arg)
        else:  # an older version of the document comes back (out of order)
            text, cursor = history[min(len(history) - 1, int(where * len(history)))]
        history.append((text, cursor))
        canvas = build_canvas(tok, text[:cursor], text[cursor:], MAX_TOKENS, engine.context_tokens)
        served.clear()
        dec.run([dec.start(canvas, InfillOptions())])
        fresh = build_canvas(tok, text[:cursor], text[cursor:], MAX_TOKENS, engine.context_tokens).prefix_ids
        for asked, reuse in served:
            assert asked == fresh
            if reuse is not None:  # served keys are those of the document's tokens at their positions
                assert reuse.length <= len(fresh)
                torch.testing.assert_close(reuse.kv[0][0], layer0_keys(model, fresh[: reuse.length]))
        if len(fresh) >= cache.policy.min_reuse:  # the document's entry holds exactly its current prefix
            entry = cache.entries[-1]
            assert entry.ids == fresh
            torch.testing.assert_close(entry.kv[0][0], layer0_keys(model, fresh))
