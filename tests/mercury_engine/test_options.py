"""Typed options, the one preset table, lazy exports and the product-path default."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest

from mercury_engine.errors import InvalidRequestError
from mercury_engine.options import PRESETS, InfillOptions, Preset, Sampler, exact_options

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("module", ["mercury_engine.errors", "mercury_engine.types", "mercury_engine.options"])
def test_light_engine_modules_do_not_import_torch(module):
    code = f"import sys, {module}; sys.exit(1 if 'torch' in sys.modules else 0)"
    assert subprocess.run([sys.executable, "-c", code], cwd=REPO).returncode == 0


def test_engine_package_exports_lazily():
    code = ("import sys, mercury_engine; from mercury_engine import CancelToken, EngineError, InfillOptions; "
            "assert 'torch' not in sys.modules; from mercury_engine import Engine; assert 'torch' in sys.modules")
    assert subprocess.run([sys.executable, "-c", code], cwd=REPO).returncode == 0
    import mercury_engine

    with pytest.raises(AttributeError):
        mercury_engine.NoSuchThing  # noqa: B018


def test_defaults_are_the_product_path():
    opts = InfillOptions()
    assert (opts.sampler, opts.preset) == ("fast", "balanced")
    assert opts.schedule() == PRESETS["balanced"]


def test_preset_table_covers_the_literal_and_feeds_argparse_choices():
    assert set(PRESETS) == set(get_args(Preset))
    assert set(get_args(Sampler)) == {"fast", "reference"}
    p = argparse.ArgumentParser()
    p.add_argument("--preset", choices=get_args(Preset))
    assert p.parse_args(["--preset", "quality"]).preset == "quality"
    with pytest.raises(SystemExit):
        p.parse_args(["--preset", "turbo"])


def test_overrides_and_fixed_count_schedule():
    sched = InfillOptions(preset="fast", block_size=4, min_per_step=2).schedule()
    assert (sched.block_size, sched.min_per_step, sched.threshold) == (4, 2, PRESETS["fast"].threshold)
    fixed = InfillOptions(steps=3).schedule()
    assert fixed.threshold is None and fixed.steps_per_block == 3
    exact = exact_options().schedule()
    assert exact.initial_span == 0 and exact.threshold is None


@pytest.mark.parametrize("bad", [
    {"sampler": "auto"}, {"preset": "turbo"}, {"steps": True}, {"initial_span": -1}, {"refresh_every": -2},
    {"temperature": float("inf")},
])
def test_bad_fields_are_refused(bad):
    with pytest.raises(InvalidRequestError):
        InfillOptions(**bad).validate()
    with pytest.raises(InvalidRequestError):
        InfillOptions(**bad).resolve()


@pytest.mark.parametrize("opts", [InfillOptions(), InfillOptions(preset="fast", block_size=4), InfillOptions(steps=3),
                                  exact_options()])
def test_resolved_options_fill_in_the_schedule_and_decode_the_same(opts):
    resolved = opts.resolve()
    assert resolved.schedule() == opts.schedule()  # the samplers below the entry see the same schedule
    assert None not in (resolved.block_size, resolved.min_per_step, resolved.initial_span, resolved.refresh_every)
    assert resolved.resolve() == resolved


def test_the_engine_validates_a_requests_options_once(tmp_path, monkeypatch):
    from mercury_engine import Engine
    from mercury_train.testing import make_tiny_checkpoint

    engine = Engine.load(make_tiny_checkpoint(tmp_path / "m"), device="cpu", dtype="float32")
    calls = []
    real = InfillOptions.validate
    monkeypatch.setattr(InfillOptions, "validate", lambda self: (calls.append(1), real(self))[1])
    engine.infill("x = ", "\n", 4)
    engine.infill("x = ", "\n", 4, InfillOptions(sampler="reference"))
    assert len(calls) == 2
    engine.close()


def test_infill_without_options_uses_the_fast_path(tmp_path, monkeypatch):
    from mercury_engine import Engine, api
    from mercury_train.testing import make_tiny_checkpoint

    eng = Engine.load(make_tiny_checkpoint(tmp_path / "tiny"), device="cpu", dtype="float32")
    try:
        def no_reference(*args, **kwargs):
            raise AssertionError("the reference sampler ran without being asked for")

        monkeypatch.setattr(api, "reference_infill", no_reference)
        before = eng.scheduler.steps_run
        got = eng.infill("def add(a, b):\n    return", "\n")
        assert eng.scheduler.steps_run > before  # decoded by the fast sampler's scheduler
        want = eng.infill("def add(a, b):\n    return", "\n", options=InfillOptions(sampler="fast", preset="balanced"))
        assert got.token_ids == want.token_ids
        with pytest.raises(InvalidRequestError, match="options must be"):
            eng.infill("x", "", 4, {"sampler": "fast"})
    finally:
        eng.close()
