"""Choosing the suggestion: the precision gate, a memory line whole or nothing, the identifier
check on drafts, and drafts of a model the ranker was not fitted on."""

from __future__ import annotations

from mercury_lsp.completion.choose import choose
from mercury_lsp.completion.rank import Scored
from mercury_lsp.config import BackendSettings, CompletionOptions, Settings

GATE = CompletionOptions(min_probability=0.3)


def scored(text: str, p: float, source: str) -> Scored:
    return Scored(text, p, {}, source)


def keep(text: str, source: str) -> tuple[str, bool, bool]:
    return text, False, False


def test_the_gate_shows_the_best_only_when_likely():
    ranked = [scored("a + b", 0.6, "memory"), scored("a - b", 0.2, "memory")]
    assert choose(ranked, Settings(completion=GATE), keep, None).text == "a + b"
    low = [scored("a + b", 0.25, "memory")]
    got = choose(low, Settings(completion=GATE), keep, None)
    assert (got.text, got.gated) == ("", True)


def test_a_memory_line_cut_by_the_guard_gives_way_to_the_next():
    ranked = [scored("f(x, ", 0.9, "memory"), scored("f(x)", 0.8, "memory")]
    cut = lambda text, source: (text[:2], False, True) if text.endswith(" ") else (text, False, False)  # noqa: E731
    assert choose(ranked, Settings(completion=GATE), cut, None).text == "f(x)"


def test_drafts_of_the_embedded_model_are_gated_and_others_follow_the_memory():
    ranked = [scored("value()", 0.1, "model"), scored("a + b", 0.2, "memory")]
    assert choose(ranked, Settings(completion=GATE), keep, None).text == ""  # the embedded model's: gated
    remote = Settings(completion=GATE, backend=BackendSettings(url="http://gpu:8000"))
    checked = choose(ranked, remote, keep, lambda t: t.replace("value", "values"))
    assert (checked.text, checked.source) == ("values()", "model")  # shown, name-checked
    assert Settings().model_drafts() == "never" and remote.model_drafts() == "fallback"
    assert Settings(model="some/dir").model_drafts() == "fallback"
