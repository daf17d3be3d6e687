"""NE503 model-line-ending: the model finishes a half-typed line only when it repairs the parse."""

from __future__ import annotations

from mercury_lsp.next_edit import (
    NextEditOptions,
)
from tests.support.fakes import ScriptedModel
from tests.support.next_edit import run


def test_the_model_finishes_a_half_typed_line_only_when_it_repairs_the_parse():
    src = "def f(a, b):\n    return a\n\n\n"
    after = src + "y = f(1,\nz = 2\n"
    cursor = after.index("f(1,") + len("f(1,")
    on = NextEditOptions(complete_line_model=True)
    out, _ = run(after, src, model=ScriptedModel("x", " 2)", 0.9), cursor=cursor, options=on)
    assert [(p.start, p.new_text, p.kind, p.source) for p in out.predictions] == [(cursor, " 2)", "complete", "model")]
    assert run(after, src, model=ScriptedModel("x", " 2", 0.9), cursor=cursor, options=on)[0].predictions == []
    assert run(after, src, model=ScriptedModel("x", " 2)", 0.2), cursor=cursor, options=on)[0].predictions == []
    model = ScriptedModel("x", " 2)", 0.9)  # off by default: the model is not asked
    assert run(after, src, model=model, cursor=cursor)[0].predictions == [] and model.calls == []
