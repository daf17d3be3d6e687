"""The ranker's inputs that compare a candidate with the request's others, and the gate score
that weighs a probability by what the suggestion would save."""

from __future__ import annotations

import pytest

from mercury_lsp.completion.choose import choose
from mercury_lsp.completion.rank import FEATURES, REFERENCE_CHARS, among, gate_score, rank
from mercury_lsp.config import CompletionOptions, Settings
from mercury_lsp.memory.candidates import Candidate, Features


def keep(text: str, source: str) -> tuple[str, bool, bool]:
    return text, False, False


def test_standing_among_the_candidates():
    texts = ["foo(a", "foo(a, b)", "bar"]
    rows = among(texts, [3, 1, 4])
    assert rows[0]["prefix_of"] > 0 and rows[0]["extends"] == 0  # "foo(a, b)" goes on from it
    assert rows[1]["extends"] > 0 and rows[1]["prefix_of"] == 0
    assert rows[2]["count_share"] == pytest.approx(0.5)
    assert rows[0]["first_token_share"] == pytest.approx(0.5)  # foo: 3 + 1 of 8 places
    assert rows[1]["longest_ratio"] == 0 and rows[2]["longest_ratio"] < rows[0]["longest_ratio"] < 0


def test_every_feature_is_computed_for_memory_lines_and_drafts():
    cands = [Candidate("foo(a)", Features(match_tokens=4, count=2, count_top=2, share_top=1.0))]
    from mercury_lsp.completion.rank import Draft, candidate_rows

    rows = candidate_rows(cands, Draft("bar()", 0.5), "x = ")
    assert [set(x) for _, x, _ in rows] == [set(FEATURES)] * 2
    assert rows[0][1]["match_x_share"] == pytest.approx(rows[0][1]["match_tokens"])


def test_the_gate_score_is_the_probability_at_the_reference_length():
    assert gate_score(0.3, "x" * REFERENCE_CHARS, 0.25) == pytest.approx(0.3)
    assert gate_score(0.3, "x" * (16 * REFERENCE_CHARS), 0.25) == pytest.approx(0.6)
    assert gate_score(0.3, "x" * 200, 0.0) == 0.3


def test_a_long_line_passes_the_gate_where_a_short_one_as_likely_does_not():
    long_line = "assert_eq!(parse(input), Ok(expected_value));"
    opts = CompletionOptions(min_probability=0.3, length_weight=0.25)
    ranked = rank([Candidate(long_line, Features(match_tokens=3, count=1)),
                   Candidate(");", Features(match_tokens=3, count=1))], None, "    ")
    for s in ranked:  # the same probability for both, by construction
        s.probability = 0.25
        s.score = gate_score(0.25, s.text, opts.length_weight)
    ranked.sort(key=lambda s: -s.score)
    assert choose(ranked, Settings(completion=opts), keep, None).text == long_line
    flat = Settings(completion=CompletionOptions(min_probability=0.3, length_weight=0.0))
    for s in ranked:
        s.score = gate_score(s.probability, s.text, 0.0)
    assert choose(ranked, flat, keep, None).text == ""  # the probability alone: gated


def test_rank_orders_by_the_gate_score():
    cands = [Candidate(t, Features(match_tokens=3, count=1, count_top=1, share_top=0.5)) for t in (")", "x" * 40)]
    by_score = rank(cands, None, "f(", length_weight=1.0)
    assert [s.score for s in by_score] == sorted((s.score for s in by_score), reverse=True)
    assert all(s.score == pytest.approx(gate_score(s.probability, s.text, 1.0)) for s in by_score)


def test_leads_compare_a_candidate_with_the_requests_others():
    from mercury_lsp.completion.rank import DocNames, candidate_rows

    cands = [Candidate("foo(a)", Features(match_tokens=4, count=2, next_agree=6)),
             Candidate("foo(b)", Features(match_tokens=2, count=1, next_agree=1)),
             Candidate("zzz(q)", Features(match_tokens=2, count=1, next_agree=0))]
    doc = DocNames.of("a = 1\nfoo(a)\n", 6)
    rows = [x for _, x, _ in candidate_rows(cands, None, "", doc=doc)]
    assert rows[0]["next_agree_lead"] > 0 > rows[1]["next_agree_lead"]
    assert rows[0]["match_lead"] > 0 and rows[1]["match_lead"] < 0 and rows[2]["match_lead"] < 0
    assert rows[0]["unseen_excess"] < 0 < rows[2]["unseen_excess"]  # "zzz", "q" appear nowhere; "b" neither
    alone = [x for _, x, _ in candidate_rows(cands[:1], None, "", doc=doc)]
    assert alone[0]["next_agree_lead"] == alone[0]["match_lead"] == alone[0]["unseen_excess"] == 0.0


def test_a_candidate_closing_what_is_not_open_is_marked():
    from mercury_lsp.completion.rank import DocNames, candidate_rows

    doc_text = "fn main() {\n    let v = vec![1, 2];\n    run(v, |x| {\n        x\n    }"
    doc = DocNames.of(doc_text, len(doc_text), "rust")
    rows = {t: x for t, x, _ in candidate_rows([Candidate(");"), Candidate("];")], None, "    }", doc=doc)}
    assert rows[");"]["open_mismatch"] == 0.0 and rows["];"]["open_mismatch"] == 1.0
