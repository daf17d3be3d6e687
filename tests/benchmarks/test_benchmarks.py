"""Smoke tests of the benchmark commands on the tiny model: they run, print one JSON line, write files."""

from __future__ import annotations

import json

import pytest

from benchmarks.engine.ar_baseline import ARDecoder
from benchmarks.humaneval import tasks as humaneval
from mercury_engine import Engine
from mercury_train.testing import make_tiny_checkpoint


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return make_tiny_checkpoint(tmp_path_factory.mktemp("tiny"), seed=2)


def _last_json(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1])


def test_ar_baseline_decodes_exactly_n_tokens_one_forward_each(tiny):
    engine = Engine.load(tiny, dtype="float32")
    result = ARDecoder(engine.model).generate(engine.tokenizer.encode("def f(x):\n"), 7)
    assert len(result.tokens) == 7 and result.forwards == 7
    again = ARDecoder(engine.model).generate(engine.tokenizer.encode("def f(x):\n"), 7)
    assert again.tokens == result.tokens  # greedy: deterministic


def test_engine_speed_runs_every_row(tiny, tmp_path, capsys):
    if humaneval.data_unavailable_reason():
        pytest.skip(humaneval.data_unavailable_reason())
    from benchmarks.engine import speed as engine_speed

    out = tmp_path / "speed.json"
    assert engine_speed.main(["--model", str(tiny), "--lengths", "8", "--requests", "2", "--quality-limit", "2",
                              "--settings", "reference,balanced", "--out", str(out)]) == 0
    head = _last_json(capsys.readouterr().out)
    assert head["balanced_vs_reference_tokens_per_s_32"] is None  # only length 8 was timed
    data = json.loads(out.read_text())
    assert set(data["rows"]) == {"reference", "balanced", "autoregressive"}
    assert data["rows"]["balanced"]["quality"]["tasks"] == 2
    assert out.with_suffix(".png").stat().st_size > 0


def test_engine_ab_runs_two_revisions_interleaved(tiny, tmp_path, capsys):
    if humaneval.data_unavailable_reason():
        pytest.skip(humaneval.data_unavailable_reason())
    from benchmarks.engine import ab as engine_ab

    out = tmp_path / "ab.json"
    assert engine_ab.main(["--model", str(tiny), "--base", "HEAD", "--tasks", "2", "--max-tokens", "4",
                           "--workers", "1", "--out", str(out)]) == 0
    head = _last_json(capsys.readouterr().out)
    data = json.loads(out.read_text())
    assert [a["requests"] for a in data["arms"]] == [2, 2]
    assert 0.0 <= head["same_text"] <= 1.0 and head["ratio"] > 0
    assert all(a["mean_forwards"] >= 1 for a in data["arms"])


def test_engine_profile_times_every_forward_of_a_request(tiny, tmp_path, capsys):
    if humaneval.data_unavailable_reason():
        pytest.skip(humaneval.data_unavailable_reason())
    from benchmarks.engine import profile as engine_profile

    out = tmp_path / "profile.json"
    assert engine_profile.main(["--model", str(tiny), "--tasks", "3", "--max-tokens", "4", "--out", str(out)]) == 0
    head = _last_json(capsys.readouterr().out)
    data = json.loads(out.read_text())
    assert data["tasks"] == 3 and head["forwards_per_request"] >= 1
    first = data["forwards"][0]
    assert first["requests"] == 3 and first["positions"] > 4 and first["ms"] > 0  # a full step over the canvas
    assert sum(f["requests"] for f in data["forwards"]) == round(3 * data["forwards_per_request"])
    assert head["forward_ms"] <= head["mean_ms"]


def test_heldout_benchmark_runs(tiny, tmp_path, capsys):
    from benchmarks.train import heldout

    out = tmp_path / "heldout.json"
    assert heldout.main(["--model", str(tiny), "--spans", "2", "--out", str(out)]) == 0
    head = _last_json(capsys.readouterr().out)
    assert set(head) == {"heldout_line_exact", "heldout_rest_of_line_exact"}
    assert json.loads(out.read_text())["results"]["line"]["spans"] == 2


def test_heldout_span_ce_probe_matches_one_canvas_at_a_time(tiny, tmp_path, capsys):
    import torch
    import torch.nn.functional as F

    from benchmarks.train import heldout
    from mercury_engine import Engine
    from mercury_engine.canvas import build_canvas

    out = tmp_path / "heldout.json"
    assert heldout.main(["--model", str(tiny), "--spans", "2", "--ce", "--out", str(out)]) == 0
    head = _last_json(capsys.readouterr().out)
    assert head["heldout_line_l2r_ce"] > 0 and head["heldout_rest_of_line_l2r_ce"] > 0
    # The batched probe (padded canvases of different lengths) equals a plain loop, one canvas
    # per forward, on spans whose prefixes differ in length.
    eng = Engine.load(tiny, dtype="float32")
    text = "def add(a, b):\n    total = a + b\n    return total\n\nprint(add(1, 2))\n"
    spans = [{"text": text, "start": text.index("    total"), "end": text.index("    return")},
             {"text": text, "start": text.index("a + b"), "end": text.index("    return")}]
    got = heldout.span_ce(eng, spans, max_tokens=12)
    tok, total, n = eng.tokenizer, 0.0, 0
    for s in spans:
        prefix, middle, suffix = text[: s["start"]], text[s["start"]: s["end"]], text[s["end"]:]
        heal = build_canvas(tok, prefix, suffix, 1, eng.context_tokens).heal_bytes
        target = tok.encode(heal.decode() + middle) + [tok.pad_id]
        canvas = build_canvas(tok, prefix, suffix, max(12, len(target)) - (1 if heal else 0), eng.context_tokens)
        for k, t in enumerate(target):
            ids = canvas.ids(tok.mask_id)
            ids[canvas.span_start: canvas.span_start + k] = target[:k]
            with torch.inference_mode():
                logits = eng.model(torch.tensor([ids]))[0, canvas.span_start + k].float().clone()
                logits[tok.mask_id] = float("-inf")
                total += float(F.cross_entropy(logits[None], torch.tensor([t])))
            n += 1
    assert got["l2r_tokens"] == n
    assert got["l2r_ce"] == pytest.approx(total / n, rel=1e-4)
    eng.close()


def test_length_cost_times_every_variant_interleaved(tiny, tmp_path, capsys):
    if humaneval.data_unavailable_reason():
        pytest.skip(humaneval.data_unavailable_reason())
    from benchmarks.engine import length_cost

    out = tmp_path / "cost.json"
    assert length_cost.main(["--model", str(tiny), "--requests", "2", "--max-tokens", "6", "--out", str(out),
                             "--variant", "off=off", "--variant", "two=search:2,4"]) == 0
    head = _last_json(capsys.readouterr().out)
    assert set(head) == {"off_p50_ms", "two_p50_ms", "two_p50_vs_off"}
    rows = json.loads(out.read_text())["rows"]
    assert rows["two"]["options"] == {"length": "search", "length_candidates": [2, 4]}
    assert rows["off"]["forwards_per_request"] >= 1 and rows["two"]["forwards_per_request"] >= 2  # a forward per candidate


def test_quality_empty_baseline_runs_no_model(tmp_path, capsys):
    if humaneval.data_unavailable_reason():
        pytest.skip(humaneval.data_unavailable_reason())
    from benchmarks.humaneval import quality

    out = tmp_path / "empty.json"
    assert quality.main(["--empty", "--benchmarks", "single-line", "--limit", "6", "--out", str(out)]) == 0
    head = _last_json(capsys.readouterr().out)
    assert head["single_line_exact"] == 0.0
    data = json.loads(out.read_text())
    assert data["mode"] == "empty" and data["model"] is None
    lines = [json.loads(x) for x in out.with_name("empty.tasks.jsonl").read_text().splitlines()]
    assert len(lines) == 6 and all(x["completion"] == "" for x in lines)
    assert quality.main(["--empty", "--canonical", "--out", str(out)]) == 2
    assert "two different runs" in capsys.readouterr().err


def test_http_load_runs_both_modes(tiny, tmp_path, capsys):
    if humaneval.data_unavailable_reason():
        pytest.skip(humaneval.data_unavailable_reason())
    from benchmarks.http_api import load as http_load

    out = tmp_path / "load.json"
    assert http_load.main(["--model", str(tiny), "--clients", "1,2", "--requests", "3", "--max-tokens", "4",
                           "--threads", "1", "--repeats", "2", "--out", str(out)]) == 0
    head = _last_json(capsys.readouterr().out)
    assert set(head["levels"]) == {"on@1", "on@2", "off@1", "off@2"}
    report = json.loads(out.read_text())
    assert [m["batch"] for m in report["modes"]] == [16, 1]
    assert all(r["requests"] >= 6 and not r["errors"] for m in report["modes"] for r in m["levels"])
    assert all(len(m["runs"]) == 2 and r["tokens_per_cpu_s"] for m in report["modes"] for r in m["levels"])


def test_batch_forward_measures_both_curves(tiny, tmp_path, capsys):
    if humaneval.data_unavailable_reason():
        pytest.skip(humaneval.data_unavailable_reason())
    from benchmarks.engine import batch_forward

    out = tmp_path / "bf.json"
    assert batch_forward.main(["--model", str(tiny), "--batches", "1,2", "--decode-batches", "1,2",
                               "--requests", "2", "--repeats", "1", "--quantize", "none",
                               "--out", str(out)]) == 0
    head = _last_json(capsys.readouterr().out)
    assert head["none_decode_ceiling_at_1"] == 1.0 and head["none_decode_ceiling_at_2"] > 0
    (mode,) = json.loads(out.read_text())["modes"]
    assert [r["batch"] for r in mode["forward"]] == [1, 2] and mode["forward"][1]["block_ms"] > 0
    assert mode["decode"][1]["differ_from_alone"] == 0  # float32: batching changes no result


def test_compare_tasks_counts_identical_and_one_sided_passes(tmp_path, capsys):
    from benchmarks.humaneval import compare_tasks

    def row(task, completion, passed):
        return json.dumps({"run": "main", "benchmark": "single-line", "task_id": task, "completion": completion,
                           "passed": passed, "exact": False})

    a, b = tmp_path / "a.tasks.jsonl", tmp_path / "b.tasks.jsonl"
    a.write_text("\n".join([row("t1", "x\n", True), row("t2", "y\n", False), row("t3", "z\n", False)]) + "\n")
    b.write_text("\n".join([row("t1", "x\n", False), row("t2", "w\n", True)]) + "\n")
    assert compare_tasks.main([str(a), str(b), "--out", str(tmp_path / "c.json")]) == 0
    head = _last_json(capsys.readouterr().out)
    assert (head["tasks"], head["identical"], head["a_passed"], head["b_passed"]) == (2, 1, 1, 1)
    assert head["only_a_passed"] == ["t1"] and head["only_b_passed"] == ["t2"]
    assert compare_tasks.main([str(a), str(tmp_path / "missing.jsonl")]) == 2


def test_length_select_records_every_candidate_and_scores_the_policies(tiny, tmp_path, capsys):
    if humaneval.data_unavailable_reason():
        pytest.skip(humaneval.data_unavailable_reason())
    from benchmarks.engine import length_select

    out = tmp_path / "select.json"
    assert length_select.main(["--model", str(tiny), "--limit", "2", "--lengths", "1-3", "--max-tokens", "8",
                               "--out", str(out)]) == 0
    rows = [json.loads(line) for line in (tmp_path / "select.rows.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all([c["n"] for c in r["cands"]] == [1, 2, 3] for r in rows)
    assert all(len(r["stop_curve"]) == 8 + r["heal"] for r in rows)
    policies = json.loads(out.read_text())["policies"]
    assert policies["prior0.3"]["candidates"] == 1 and policies["search_all_join1"]["candidates"] == 3
    assert set(_last_json(capsys.readouterr().out)) == {"oracle", "search7_join1", "prior0.3"}
    prior = tmp_path / "prior.json"
    assert length_select.main(["--model", str(tiny), "--limit", "2", "--prior-only", "8,4", "--out", str(prior)]) == 0
    levels = json.loads(prior.read_text())["levels"]
    assert {"budget8_rel0.3", "budget4_abs0.3"} <= set(levels)
    assert all(0 <= v["hit"] <= v["within1"] <= v["within2"] <= 1 for v in levels.values())


def test_length_table_puts_quality_runs_side_by_side(tmp_path, capsys):
    if humaneval.data_unavailable_reason():
        pytest.skip(humaneval.data_unavailable_reason())
    from benchmarks.engine import length_table

    probs = humaneval.load_benchmark("single-line")[:2]

    def run(name: str, completions: list[str], passed: list[bool]) -> str:
        summary = {"command": [name], "git": {}, "decode": {}, "benchmarks": {"single-line": {
            "tasks": 2, "passed": sum(passed), "pass@1": sum(passed) / 2, "exact_match": 0.0}}}
        (tmp_path / f"{name}.json").write_text(json.dumps(summary))
        (tmp_path / f"{name}.tasks.jsonl").write_text("".join(
            json.dumps({"run": "main", "benchmark": "single-line", "task_id": p.task_id, "passed": ok,
                        "completion": c, "ms": 10.0}) + "\n" for p, c, ok in zip(probs, completions, passed, strict=True)))
        return f"{name}={tmp_path / name}.json"

    oracle = run("oracle", [p.canonical_solution for p in probs], [True, True])
    prior = run("prior", [probs[0].canonical_solution, ""], [True, False])
    out = tmp_path / "table.json"
    assert length_table.main(["--row", oracle, "--row", prior, "--out", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert rows["prior"]["share_of_ceiling"] == 0.5 and rows["prior"]["passed_also_by_ceiling"] == 1
    assert rows["oracle"]["edit_sim"] == 1.0 and rows["prior"]["blank"] == 1
    assert [(h["passed"], h["share_of_ceiling"]) for h in rows["prior"]["halves"]] == [(1, 1.0), (0, 0.0)]
    assert rows["prior"]["halves"][0]["edit_sim"] == 1.0 > rows["prior"]["halves"][1]["edit_sim"]
    assert (tmp_path / "table.md").read_text().startswith("| length |")
    assert _last_json(capsys.readouterr().out)["prior_share_of_oracle"] == 0.5
