"""NE201 repeated-rename: a rename in code repeated in its binding's scope, and where it is none."""

from __future__ import annotations

from mercury_lsp.config import NextEditOptions
from mercury_lsp.next_edit import NextEditQuery, predict
from tests.support.next_edit import G, applied, ask, doc


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


def test_a_repeated_rename_of_a_go_loop_variable_leaves_struct_field_keys_alone():
    """With the rename search off (NE101), the token rename keeps to the loop's function and skips
    the struct literal's key of the same name (Go); a Rust ``for`` loop's variable likewise."""
    src = ("package r\n\ntype R struct{ title string }\n\nfunc build(items []string) (out []R) {\n"
           "\tfor _, title := range items {\n\t\tout = append(out, R{title: title})\n\t}\n\treturn out\n}\n\n"
           "func other() R { return R{title: \"x\"} }\n")
    after = src.replace("for _, title := range", "for _, name := range")
    off = NextEditOptions(disabled_rules=["NE101"])
    preds = [p for p in predict(NextEditQuery((doc("file:///r.go", after, (src,), (1.0,), grammar="go"),),
                                              "file:///r.go", after.index("name"), options=off), None, G).predictions]
    assert {p.rule for p in preds} == {"NE201"}
    assert applied(after, preds, "file:///r.go") == after.replace("R{title: title}", "R{title: name}")
    src = ("struct R { title: String }\n\nfn build(items: Vec<String>) -> Vec<R> {\n    let mut out = vec![];\n"
           "    for title in items {\n        out.push(R { title: title });\n    }\n    out\n}\n")
    after = src.replace("for title in items", "for name in items")
    preds = predict(NextEditQuery((doc("file:///r.rs", after, (src,), (1.0,), grammar="rust"),), "file:///r.rs",
                                  after.index("name"), options=off), None, G).predictions
    assert applied(after, preds, "file:///r.rs") == after.replace("R { title: title }", "R { title: name }")


def test_a_parameter_renamed_with_its_uses_stays_in_its_function():
    """One edit renames a parameter and its uses (``def loads(payload)`` -> ``def loads(s)``): the
    rename is that parameter's, never repeated at another document's ``payload`` (Python,
    TypeScript); a keyword argument's name there is no variable either."""
    src = "def loads(payload):\n    return decode(payload)\n"
    other = "def verify(key):\n    payload = read(key)\n    return check(payload=payload, key=key)\n"
    after = src.replace("payload", "s")
    preds = ask(doc("file:///j.py", after, (src,), (1.0,)), doc("file:///v.py", other), cursor=after.index("(s)\n"))
    assert [p for p in preds if p.uri == "file:///v.py"] == []
    src = "export function loads(payload: string) {\n  return decode(payload);\n}\n"
    other = "export function verify(key: string) {\n  payload = read(key);\n  return check(payload, key);\n}\n"
    after = src.replace("payload", "s")
    preds = ask(doc("file:///j.ts", after, (src,), (1.0,), grammar="typescript"),
                doc("file:///v.ts", other, grammar="typescript"), cursor=after.index("(s);"))
    assert [p for p in preds if p.uri == "file:///v.ts"] == []
