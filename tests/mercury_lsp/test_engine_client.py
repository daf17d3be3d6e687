"""EngineClient: a reload frees the model it replaces (issue 18: the daemon's RSS grew by about
one model per reload, because the replaced engine's scheduler thread kept the model alive)."""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
import weakref
from pathlib import Path

import pytest

from mercury_engine.options import InfillOptions
from mercury_lsp.backend.local import local_client
from mercury_lsp.engine_client import CancelToken, EngineError, LoadSpec
from mercury_lsp.schema import InfillSpec
from mercury_train.testing import make_tiny_checkpoint

pytestmark = pytest.mark.usefixtures("one_torch_thread")

RELOADS = 6
# Two context sizes: switching between them is a reload (``Settings.model_key``).
CONTEXTS = (192, 224)
# A model large enough to see in RSS: about 32 MB of float32 weights (the leak kept one per reload).
MODEL_SHAPE = dict(hidden_size=512, intermediate_size=2048, num_layers=2, num_heads=8, num_kv_heads=4, head_dim=64)
MODEL_MB = 32
# A kept model per reload moves RSS by (RELOADS - 2) * MODEL_MB = 128 MB over the reloads; allocator
# noise moved it by up to 39 MB on a loaded 2-core machine (the weak references above are the
# exact check; this one sees the memory itself), so the line is drawn at half the leak.
RSS_TOLERANCE_MB = (RELOADS - 2) * MODEL_MB / 2
SPEC = InfillSpec(prefix="def add(a, b):\n    return ", suffix="\n", max_tokens=4, options=InfillOptions(single_line=True))


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


@pytest.fixture(scope="module")
def large_model(tmp_path_factory) -> Path:
    return make_tiny_checkpoint(tmp_path_factory.mktemp("large") / "model", **MODEL_SHAPE)


async def _reloads(model: Path) -> tuple[list[weakref.ref], list[float], list[int]]:
    client = local_client()
    models, rss, schedulers = [], [], []
    try:
        for i in range(RELOADS):
            await client.load(LoadSpec(str(model), "cpu", "float32", 1, CONTEXTS[i % 2]))
            models.append(await client.run(lambda s: weakref.ref(s.engine.model), CancelToken()))
            await client.run(lambda s: s.infill(SPEC, None), CancelToken())  # starts its scheduler thread
            await client.run(lambda s: gc.collect(), CancelToken())  # the retired engine's job has run
            rss.append(rss_mb())
            schedulers.append(sum(t.name == "mercury-engine" for t in threading.enumerate()))
    finally:
        client.close()
    return models, rss, schedulers


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_a_reload_frees_the_model_it_replaces(large_model):
    models, rss, threads = asyncio.run(_reloads(large_model))
    assert [m() is None for m in models] == [True] * (RELOADS - 1) + [False]  # only the current one lives
    assert threads == [threads[0]] * RELOADS  # one worker and one scheduler, however many reloads
    assert rss[-1] - rss[1] < RSS_TOLERANCE_MB, rss  # reload 1 warms up the allocator


def test_a_failed_reload_frees_the_model_it_replaces(large_model, tmp_path):
    async def run() -> tuple[weakref.ref, str, bool]:
        client = local_client()
        try:
            await client.load(LoadSpec(str(large_model), "cpu", "float32", 1, CONTEXTS[0]))
            old = await client.run(lambda s: weakref.ref(s.engine.model), CancelToken())
            await client.run(lambda s: s.infill(SPEC, None), CancelToken())
            with pytest.raises(EngineError):
                await client.load(LoadSpec(str(tmp_path / "missing"), "cpu", "float32", 1, None))
            state = client.state
            await client.load(LoadSpec(str(large_model), "cpu", "float32", 1, CONTEXTS[1]))  # loads again
            new = await client.run(lambda s: weakref.ref(s.engine.model), CancelToken())
            await client.run(lambda s: gc.collect(), CancelToken())
            return old, state, new() is not None
        finally:
            client.close()

    old, state, current_alive = asyncio.run(run())
    assert state == "error" and old() is None and current_alive


@pytest.mark.asyncio
async def test_requests_from_several_editors_share_denoising_steps(tmp_path):
    """Request jobs run at once (not one after another on one worker), so the infills of several
    editors connected to one daemon join the engine scheduler's batches."""
    model = make_tiny_checkpoint(tmp_path / "model")
    client = local_client()
    try:
        await client.load(LoadSpec(str(model), "cpu", "float32", 1))
        engine = await client.run(lambda s: s.engine, CancelToken())
        decoder = engine.scheduler.decoder
        sizes: list[int] = []
        step = decoder.step
        decoder.step = lambda states: (sizes.append(len(states)), step(states))[1]
        together = threading.Barrier(3, timeout=60)  # three jobs in flight at the same time

        def job(session, prefix: str):
            together.wait()
            spec = InfillSpec(prefix=prefix, suffix="\n", max_tokens=16, options=InfillOptions(preset="quality"))
            return session.infill(spec, None)

        prefixes = ("def add(a, b):\n    return ", "for i in range(3):\n    ", "class A:\n    x = ")
        results = await asyncio.gather(*(client.run(lambda s, p=p: job(s, p), CancelToken()) for p in prefixes))
        assert len(results) == 3
        assert max(sizes) >= 2, sizes  # at least one step advanced two editors' requests together
    finally:
        client.close()
