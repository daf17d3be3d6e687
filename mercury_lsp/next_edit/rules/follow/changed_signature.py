"""NE102 changed-signature: the calls of a function whose parameters changed follow its signature.

**What.** A function whose parameters differ between the text before the history and now
(``steps.detect``) is followed at its calls (``steps.calls``: ``x.f(...)``, ``pkg.F(...)``,
``T::f(...)``, a bare ``f(...)`` for a free function) whose arguments fitted the old signature
and no longer fit the new one. Where the syntax determines the new argument list (a removed or
reordered parameter, a renamed keyword, an added one whose value the user's own edited call
shows) it is answered at once; the other calls are holes the model refills (``steps.refill``,
nearest the cursor first, at most ``nextEdit.maxModelCandidates``, within
``nextEdit.modelBudgetMs``); a hole the model leaves (no model, out of time, or a fill that did
not pass) is offered with the new argument a placeholder named after its parameter — not in
JavaScript, whose calls may leave trailing arguments out, and not at all when more than
``nextEdit.repeatMaxSites`` calls would get one (heldout15: acorn's ``next()`` given a parameter
got 55 placeholders, all false).

**Why.** Calls that no longer fit the signature break the build; the argument lists are
rebuilt from the syntax, keeping their layout.

**Example.** ``def area(w, h)`` -> ``def area(w, h, scale)`` and the user's ``area(size, 2, 1)``:
``print(area(1, 2))`` becomes ``print(area(1, 2, 1))``.
"""

from __future__ import annotations

from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import SIGNATURE_CALL, SIGNATURE_PLACEHOLDER
from mercury_lsp.next_edit.steps.refill import predict_with_model

# Grammars whose calls may pass fewer arguments than the function takes (JavaScript: the missing
# ones are undefined): a call left without the new argument still runs, so no placeholder is put in.
OPTIONAL_ARGUMENTS = frozenset(("javascript",))


def run(ctx: RuleContext) -> list[Prediction]:
    calls = [c for c in ctx.candidates if c.kind == "signature"]
    out = [Prediction(c.uri, c.start, c.end, c.expected, SIGNATURE_CALL.value, c.reason, c.kind, "syntax", c.old_text)
           for c in calls if c.expected is not None]
    holes = [c for c in calls if c.expected is None][: ctx.options.max_model_candidates]
    model = ctx.model
    if model is not None and holes:
        out += ctx.boxed(lambda box: predict_with_model(model, ctx.query, holes, ctx.by_uri, ctx.edited,
                                                        ctx.grammars, box))
    filled = {(p.uri, p.start, p.end) for p in out}
    placeholders = [c for c in holes if c.placeholder is not None and (c.uri, c.start, c.end) not in filled
                    and _grammar(ctx, c.uri) not in OPTIONAL_ARGUMENTS]
    if len(placeholders) > ctx.options.repeat_max_sites:
        return out  # a name guessed at every call of a function called all over: no suggestion
    out += [Prediction(c.uri, c.start, c.end, c.placeholder, SIGNATURE_PLACEHOLDER.value,
                       f"{c.reason}; the new argument is a placeholder for you to fill", c.kind, "syntax", c.old_text)
            for c in placeholders]
    return out


def _grammar(ctx: RuleContext, uri: str) -> str | None:
    parsed = ctx.by_uri.get(uri)
    return None if parsed is None else parsed.doc.grammar


RULE = Rule("NE102", "changed-signature", "signature", SIGNATURE_CALL.value, run, __doc__)
