"""NE503 model-line-ending: the model finishes a half-typed line that does not parse, when no other
rule offers anything (``nextEdit.completeLineModel``, off by default).

**What.** The rest of the cursor's line is masked at the cursor and refilled by the model
(``LINE_TOKENS`` at most, one line), with the text around the cursor in view (the user's edit is
just before it), within the model's time box. The fill is kept only when it passes the syntax
check (the line has fewer parse errors with it than without), the model is confident in it
(``nextEdit.modelMinConfidence``, the mean confidence of its tokens) and it is not empty:
leaving the line as it is must lose to it on the model's own terms.

**Why.** A line no like line ends is the model's to finish; a refill costs most of a request's
time on a CPU, so it runs only when nothing else is offered (on 2 loaded CPU cores one refill
took 1-6 s and none was kept on the real-history benchmark; an accelerator affords it).

**Example.** ``err = f(`` finished as ``err = f(ctx)`` from the model.
"""

from __future__ import annotations

from mercury_engine.errors import EngineError, InvalidRequestError
from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.complete.cursor import cursor_line

LINE_TOKENS = 12  # tokens the model may add to finish a line (a call's arguments, a type, a name)
# Text in view before the cursor (the user's edit and the lines above) and after the line: small,
# so that one refill fits the request's model time box on a CPU.
CONTEXT_BEFORE_CHARS = 600
CONTEXT_AFTER_CHARS = 200


def run(ctx: RuleContext) -> list[Prediction]:
    model, opts = ctx.model, ctx.options
    at = ctx.shared(cursor_line) if model is not None and opts.complete_line_model else None
    if at is None or not at.errors:
        return []
    text, cursor, line = at.home.doc.text, ctx.query.cursor, at.line

    def work(box) -> list[Prediction]:
        lo = max(0, cursor - CONTEXT_BEFORE_CHARS)
        window = text[lo: min(len(text), line[1] + CONTEXT_AFTER_CHARS)]
        try:
            (fill, conf), = model.refill(window, [(cursor - lo, cursor - lo)], [LINE_TOKENS], LINE_TOKENS, box)
        except (InvalidRequestError, EngineError):  # the window does not fit this model: no fill
            return []
        fill = fill.split("\n", 1)[0].rstrip()
        if conf < opts.model_min_confidence or not fill.strip():
            return []
        if at.errors_with(text[:cursor] + fill + text[cursor:], len(fill)) >= at.errors:
            return []
        return [Prediction(at.home.doc.uri, cursor, cursor, fill, conf, "finishes the line at the cursor",
                           RULE.kind, "model", "")]

    return ctx.boxed(work)


RULE = Rule("NE503", "model-line-ending", "complete", None, run, __doc__, self_checked=True, fallback=True)
