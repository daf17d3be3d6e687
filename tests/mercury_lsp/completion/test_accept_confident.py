"""Accept the confident part: the inline item's ``mercury.accepted`` command carries the item cut
before the model's first low-confidence token (indentation fitted like the suggestion)."""

from __future__ import annotations

import msgspec

from mercury_lsp.completion import Suggestion, inline_items, run_pipeline
from mercury_lsp.completion.accept import ACCEPTED_COMMAND, confident_length
from mercury_lsp.documents import DocumentStore, PositionEncoding
from mercury_lsp.schema import InfillOutcome
from mercury_lsp.syntax import Grammars, grammar_for
from tests.support.settings import drafts

GRAMMARS = Grammars()


class ScoredSession:
    """Stands in for EngineSession: a fixed text made of tokens with given confidences."""

    def __init__(self, tokens: list[tuple[str, float]], context_tokens: int = 256) -> None:
        self.tokens, self.context_tokens, self.chars_per_token = tokens, context_tokens, 3.0

    def infill(self, spec, cancel):
        text = "".join(t for t, _ in self.tokens)
        ends, n = [], 0
        for t, _ in self.tokens:
            n += len(t)
            ends.append(n)
        return InfillOutcome(text=text, tokens=len(self.tokens), mean_confidence=0.5, stop_reason="stop",
                             steps=1, forwards=1, prompt_tokens=0, trimmed=False, elapsed_ms=0.0,
                             confidences=tuple(c for _, c in self.tokens), token_ends=tuple(ends))


def _item(marked: str, tokens):
    cursor = marked.index("|")
    doc = DocumentStore(grammar_for).open("file:///a.py", "python", 1, marked.replace("|", "", 1))
    result = run_pipeline(ScoredSession(tokens), doc.snapshot(1 << 20), cursor, drafts(), GRAMMARS, None)
    s = Suggestion(result.text, cursor, result.replace_end, result.kind, 1, cached=False, confident=result.confident)
    return inline_items(doc, s, PositionEncoding.UTF16).items[0]


def test_confident_text_stops_before_the_first_unsure_token():
    item = _item("total = compute(|)\n", [("values", 0.9), (", ", 0.8), ("scale", 0.2), ("=2", 0.9)])
    assert item.insert_text == "total = compute(values, scale=2)"
    assert item.command.command == ACCEPTED_COMMAND
    assert msgspec.to_builtins(item.command.arguments) == [{"confidentText": "total = compute(values, )"}]


def test_confident_part_on_a_fresh_indented_line_is_indented_once():
    item = _item("def add(a, b):\n    |\n", [("    return", 0.9), (" a", 0.9), (" +", 0.3), (" b", 0.9)])
    assert item.insert_text == "    return a + b"
    assert item.command.arguments == [{"confidentText": "    return a"}]


def test_no_confident_text_when_all_or_nothing_is_confident():
    item = _item("x = |\n", [("1", 0.9), (" + 2", 0.9)])
    assert item.command.arguments == [{}]
    item = _item("x = |\n", [("1", 0.1), (" + 2", 0.9)])
    assert item.command.arguments == [{}]


def test_confident_length_unknown_without_token_ends():
    out = InfillOutcome(text="abc", tokens=1, mean_confidence=0.1, stop_reason="stop", steps=1, forwards=1,
                        prompt_tokens=0, trimmed=False, elapsed_ms=0.0)
    assert confident_length(out, 0.5, 0) is None
