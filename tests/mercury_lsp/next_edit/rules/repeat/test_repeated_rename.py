"""NE201 repeated-rename: a rename in code repeated in its binding's scope, and where it is none."""

from __future__ import annotations

from tests.support.next_edit import applied, ask, doc


def test_a_member_renamed_at_its_uses_is_renamed_where_another_document_declares_it():
    main0 = 'package main\n\nfunc main() {\n\th := chi.WithBaseContext(r, ctx)\n\t_ = h\n}\n'
    main1 = main0.replace("chi.WithBaseContext", "chi.ServerBaseContext")
    ctx = ("package chi\n\n// WithBaseContext wraps an http.Handler.\nfunc WithBaseContext(h Handler, ctx Context) Handler {\n"
           "\treturn h\n}\n")
    preds = ask(doc("file:///main.go", main1, (main0,), (1.0,), grammar="go"),
                doc("file:///context.go", ctx, grammar="go"))
    assert applied(ctx, preds, "file:///context.go") == ctx.replace("WithBaseContext", "ServerBaseContext")


def test_a_keyword_swapped_is_no_rename_of_the_keyword_everywhere():
    body = "function f{n}(xs) {{\n  for (const x of xs) {{\n    if (!x) {{\n      return;\n    }}\n    use(x);\n  }}\n}}\n\n"
    src = "".join(body.format(n=n) for n in range(4))
    at = src.index("return;")
    after = src[:at] + "continue;" + src[at + len("return;"):]
    preds = ask(doc("file:///i.js", after, (src,), (1.0,), grammar="javascript"), cursor=at)
    assert not [p for p in preds if p.kind == "rename"]
    assert len([p for p in preds if p.new_text == "continue"]) <= 1  # at most the next place, as a guess


def test_a_document_wide_rename_skips_the_functions_that_bind_the_name_themselves():
    """``cb`` -> ``done`` where the edited test's ``var cb`` was deleted: the other tests' own
    ``var cb`` and its uses are other bindings (a real-history case renamed 213 of them)."""
    test = ("  it('{n}', function (done) {{\n    var cb = after(2, done)\n    request(server)\n"
            "      .get('/')\n      .expect(200, cb)\n  }})\n")
    src = "describe('x', function () {\n" + "".join(test.format(n=n) for n in "abc") + "})\n"
    # the first test rewritten from its title on (its 'done' is then all new text), 'var cb' gone
    mid = src.replace("  it('a', function (done) {\n    var cb = after(2, done)\n",
                      "  it('a2', function (done) {\n    var writes = []\n", 1)
    after = mid.replace(".expect(200, cb)", ".expect(200, done)", 1)
    preds = ask(doc("file:///test.js", after, (mid, src), (2.0, 1.0), grammar="javascript"))
    assert not [p for p in preds if p.old_text == "cb"]
