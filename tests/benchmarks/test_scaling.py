"""benchmarks/train/scaling.py: the power-law fit and its extrapolation from `benchmarks.train.heldout` JSON."""

from __future__ import annotations

import json

import pytest

from benchmarks.train import scaling


def _heldout(path, line: float, rest: float) -> str:
    path.write_text(json.dumps({"model": "m", "results": {"line": {"l2r_ce": line}, "rest_of_line": {"l2r_ce": rest}}}))
    return str(path)


def test_fit_recovers_a_power_law():
    tokens = [1e6, 4e6, 2e7]
    a, b = scaling.fit_power_law(tokens, [7.0 * t ** -0.2 for t in tokens])
    assert a == pytest.approx(7.0) and b == pytest.approx(0.2)


def test_extrapolates_to_the_compute_factor(tmp_path, capsys):
    # line: 4 -> 3 over 2x tokens (b = log2(4/3)); 10x the last point's tokens.
    points = [f"1e6={_heldout(tmp_path / 'a.json', 4.0, 5.0)}", f"2e6={_heldout(tmp_path / 'b.json', 3.0, 5.0)}"]
    out = tmp_path / "scaling.json"
    assert scaling.main([*sum((["--point", p] for p in reversed(points)), []), "--out", str(out)]) == 0
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert last["target_tokens"] == 2e7
    assert last["line_predicted"] == pytest.approx(3.0 * 10 ** -0.415, abs=1e-3)  # b = 0.415
    assert last["rest_of_line_predicted"] == pytest.approx(5.0)  # flat stays flat
    assert json.loads(out.read_text())["points"][0]["tokens"] == 1e6  # sorted by tokens


def test_one_point_is_refused(tmp_path):
    assert scaling.main(["--point", f"1e6={_heldout(tmp_path / 'a.json', 4.0, 5.0)}",
                         "--out", str(tmp_path / "s.json")]) == 2
