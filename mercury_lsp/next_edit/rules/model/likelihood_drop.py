"""NE901 likelihood-drop: identifiers near the edit that the model finds much less likely after it
are remasked and refilled by the model (``nextEdit.modelFallback``, off by default).

**What.** The text around the newest edit is scored token by token before and after it (batched
masked passes, ``steps.locate.drop_candidates``); an identifier whose likelihood fell below
``nextEdit.dropRatio`` of its old one (and under ``nextEdit.dropMaxProbability``) is a location;
the model refills them together (``steps.refill``) and a refill at least
``nextEdit.dropMinConfidence`` sure is offered. A fallback: it runs only when no other rule
offered an edit, within the model's time box.

**Why.** The diffusion model reads the whole window both ways: after a change, tokens elsewhere
that no longer fit become unlikely even where no syntax rule ties them.

**Example.** After ``total = width * height`` is changed to ``area = width * height``, a later
``return total`` scores low and is refilled as ``return area``. (On the real-history benchmark
it found no location in 61 cases and cost seconds each: ``nextEdit.modelFallback``.)
"""

from __future__ import annotations

from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.steps.locate import drop_candidates
from mercury_lsp.next_edit.steps.refill import predict_with_model


def run(ctx: RuleContext) -> list[Prediction]:
    model = ctx.model
    if model is None or not ctx.options.model_fallback:
        return []

    def work(box) -> list[Prediction]:
        checked = drop_candidates(model, ctx.query, ctx.parsed, ctx.edited, box)
        return predict_with_model(model, ctx.query, checked, ctx.by_uri, ctx.edited, ctx.grammars, box) if checked else []

    return ctx.boxed(work)


RULE = Rule("NE901", "likelihood-drop", "model", None, run, __doc__, fallback=True)
