"""Fakes of the engine's surfaces the daemon uses: a ``Session`` returning a fixed infill, and a
next-edit ``EditModel`` with scripted likelihoods and refills."""

from __future__ import annotations

from mercury_lsp.backend.session import Capabilities
from mercury_lsp.schema import EngineInfo, InfillOutcome


class FakeSession:
    """A ``backend.session.Session`` that returns a fixed text and records the requests.

    Like the engine, it ends a ``single_line`` request's text at its first line break (the
    engine owns that cut; the daemon shapes only multi-line spans)."""
    capabilities = Capabilities()
    edit_model = None

    def __init__(self, text: str, context_tokens: int = 256, chars_per_token: float = 3.0) -> None:
        self.text, self.context_tokens, self.chars_per_token = text, context_tokens, chars_per_token
        self.info = EngineInfo(model="fake", device="cpu", dtype="float32", context_tokens=context_tokens,
                               chars_per_token=chars_per_token, load_ms=0.0)
        self.specs = []

    def count_tokens(self, text: str) -> int:
        return max(1, round(len(text) / self.chars_per_token))

    def infill(self, spec, cancel):
        self.specs.append(spec)
        text = self.text.split("\n", 1)[0] if spec.options.single_line else self.text
        return InfillOutcome(text=text, tokens=len(text), mean_confidence=0.5, stop_reason="stop",
                             steps=1, forwards=1, prompt_tokens=0, trimmed=False, elapsed_ms=0.0)

    def next_edit(self, query, cancel):
        return None

    def close(self) -> None:
        return None


class ScriptedModel:
    """A fake model: every token is likely except ``fade`` after the edit; refills say ``fill``."""
    context_tokens = 256

    def __init__(self, fade: str, fill: str, confidence: float) -> None:
        self.fade, self.fill, self.confidence = fade, fill, confidence
        self.calls: list[str] = []

    def count_tokens(self, text):
        return max(1, len(text) // 3)

    def token_probs(self, text, stride, cancel):
        self.calls.append("scores")
        out, i = [], 0
        for word in text.split(" "):
            low = word.startswith(self.fade) and "edited" in text
            out.append((i, i + len(word), 0.001 if low else 0.9))
            i += len(word) + 1
        return out

    def refill(self, text, spans, max_tokens, steps, cancel):
        self.calls.append("refill")
        return [(self.fill, self.confidence) for _ in spans]

    def score(self, text, candidates, cancel):
        return [0.5 for _ in candidates]
