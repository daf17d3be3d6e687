"""NE901 likelihood-drop: the model-only path (off by default)."""

from __future__ import annotations

from mercury_lsp.next_edit import (
    NextEditOptions,
)
from tests.support.fakes import ScriptedModel
from tests.support.next_edit import run


def test_model_only_path_takes_tokens_whose_likelihood_dropped():
    src = "x = 1  # plain\nvalue = old_thing + 2\n"
    after = src.replace("plain", "edited")
    model = ScriptedModel("old_thing", "new_thing", 0.9)
    assert run(after, src, model=model)[0].predictions == [] and model.calls == []  # off by default
    fallback = NextEditOptions(model_fallback=True)
    out, _ = run(after, src, model=model, options=fallback)
    assert model.calls == ["scores", "scores", "refill"]
    assert [(p.old_text, p.new_text, p.kind, p.source) for p in out.predictions] == [
        ("old_thing", "new_thing", "model", "model")]
    assert "became unlikely" in out.predictions[0].reason
    unsure = ScriptedModel("old_thing", "new_thing", 0.2)  # not confident: nothing suggested
    assert run(after, src, model=unsure, options=fallback)[0].predictions == []
