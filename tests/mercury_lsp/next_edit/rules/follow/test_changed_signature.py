"""NE102 changed-signature: the calls of a changed signature follow it, in Python, Go, Rust,
TypeScript and JavaScript; an added parameter no edited call shows is a hole the model fills."""

from __future__ import annotations

from mercury_lsp.next_edit import (
    DocState,
    NextEditQuery,
    apply_edits,
    predict,
)
from mercury_lsp.syntax import Grammars, grammar_for
from tests.support.fakes import ScriptedModel
from tests.support.next_edit import run

G = Grammars()


def follow(uri: str, before: str, after: str, *others: DocState, model=None) -> tuple[str, list]:
    """The text after the signature edits the syntax (or ``model``) predicts for ``uri``, and the
    predictions."""
    doc = DocState(uri, after, grammar_for("", uri), 7, (before,), 1.0)
    out = predict(NextEditQuery((doc, *others), uri, 0), model, G)
    mine = [p for p in out.predictions if p.uri == uri and p.kind == "signature"]
    return apply_edits(after, [(p.start, p.end, p.new_text) for p in mine]), out.predictions


GO = """package p

func preamble(out io.Writer) error { return nil }

func (s *Srv) Run(a int, b string) {}

func use(w io.Writer, s *Srv, run func(int, string)) {
	preamble(w)
	preamble(os.Stdout)
	s.Run(1, "x")
	run(2, "y")
}
"""


RUST = """struct Job;
impl Job {
    fn generate(&self, command: &mut String, input: &Path) -> u8 {
        0
    }
    fn new(size: usize, name: &str) -> Job {
        Job
    }
}
fn run(j: &Job, c: &mut String, p: PathBuf) {
    j.generate(c, &p);
    j.generate(&mut String::new(), &p);
    let k = Job::new(4, "x");
    let m = Mutex::new(4, "y");
}
"""


def test_go_calls_follow_an_added_and_a_removed_parameter():
    after = GO.replace("preamble(out io.Writer)", "preamble(out io.Writer, name string)") \
        .replace("preamble(w)", "preamble(w, cmd.Name())")
    got, _ = follow("file:///a.go", GO, after)
    assert got == after.replace("preamble(os.Stdout)", "preamble(os.Stdout, cmd.Name())")
    # a method (receiver, not a parameter): ``s.Run`` follows, a bare ``run`` (another thing) does not
    after = GO.replace("Run(a int, b string)", "Run(b string)")
    got, _ = follow("file:///a.go", GO, after)
    assert got == after.replace('s.Run(1, "x")', 's.Run("x")')


def test_go_grouped_parameters_reordered_and_package_calls_in_another_document():
    src = "package geo\n\nfunc Scale(x, y int, f float64) int { return 0 }\n"
    other = DocState("file:///b.go", "package main\n\nfunc main() {\n\tgeo.Scale(1, 2, 0.5)\n}\n", "go", 1)
    after = src.replace("Scale(x, y int, f float64)", "Scale(f float64, x, y int)")
    _, preds = follow("file:///a.go", src, after, other)
    assert [(p.uri, p.old_text, p.new_text) for p in preds] == [("file:///b.go", "1, 2, 0.5", "0.5, 1, 2")]


def test_rust_self_is_no_argument_and_path_calls_follow():
    after = RUST.replace("input: &Path)", "input: &Path, out: Arc<Mutex<()>>)") \
        .replace("j.generate(c, &p);", "j.generate(c, &p, out.clone());")
    got, _ = follow("file:///a.rs", RUST, after)
    assert got == after.replace("j.generate(&mut String::new(), &p)", "j.generate(&mut String::new(), &p, out.clone())")
    after = RUST.replace("fn new(size: usize, name: &str)", "fn new(name: &str, size: usize)")
    got, _ = follow("file:///a.rs", RUST, after)
    assert got == after.replace('Job::new(4, "x")', 'Job::new("x", 4)')


def test_typescript_a_removed_parameter_and_one_added_with_a_default():
    src = ("export function request(url: string, timeout: number, retry?: boolean) {}\n\n"
           "request('/a', 10, true);\nrequest('/b', 20);\n")
    after = src.replace("timeout: number, ", "")
    got, _ = follow("file:///a.ts", src, after)
    assert got == after.replace("request('/a', 10, true)", "request('/a', true)").replace("'/b', 20", "'/b'")
    after = src.replace("retry?: boolean", "retry?: boolean, signal: AbortSignal = none()")
    assert follow("file:///a.ts", src, after)[1] == []  # a default: the calls are right as they are
    tsx = DocState("file:///c.tsx", "const el = <Row onClick={() => request('/c', 5)} />;\n", "tsx", 1)
    _, preds = follow("file:///a.ts", src, src.replace("timeout: number, ", ""), tsx)
    assert [(p.uri, p.new_text) for p in preds if p.uri == tsx.uri] == [(tsx.uri, "'/c'")]


def test_javascript_methods_arrow_functions_and_scope():
    src = ("class Client {\n  send(msg) {}\n  ping() { this.send('ping'); }\n}\n"
           "const add = (a, b) => a + b;\nadd(1, 2);\nfunction twice(add) { return add(3, 4); }\n")
    after = src.replace("send(msg)", "send(msg, opts)").replace("this.send('ping')", "this.send('ping', {retry: 1})")
    other = DocState("file:///b.js", "client.send('hi');\nfunction send(x) {}\nsend(1);\n", "javascript", 1)
    got, preds = follow("file:///a.js", src, after, other)
    assert got == after  # the edited call was the only one here
    assert [(p.uri, p.old_text, p.new_text) for p in preds] == [("file:///b.js", "'hi'", "'hi', {retry: 1}")]
    # a method assigned to a prototype: ``x.f(...)`` calls follow, a bare ``f(...)`` is another thing
    proto = "Command.prototype.help = function (cb, code) {};\nthis.help(log, 1);\nhelp(log, 1);\n"
    got, _ = follow("file:///p.js", proto, proto.replace("(cb, code)", "(code, cb)"))
    assert got == proto.replace("(cb, code)", "(code, cb)").replace("this.help(log, 1)", "this.help(1, log)")
    # an arrow function's parameters reordered: its calls follow, not a parameter that shadows it
    after = src.replace("(a, b) =>", "(b, a) =>")
    got, _ = follow("file:///a.js", src, after)
    assert got == after.replace("add(1, 2)", "add(2, 1)")


def test_an_added_parameter_no_edited_call_shows_is_a_hole_the_model_fills():
    after = GO.replace("preamble(out io.Writer)", "preamble(out io.Writer, name string)")
    got, preds = follow("file:///a.go", GO, after)
    # the syntax cannot know the value: no literal invented, the parameter's name stands in
    assert [(p.old_text, p.new_text, p.confidence) for p in preds] == [("w", "w, name", 0.3),
                                                                       ("os.Stdout", "os.Stdout, name", 0.3)]
    model = ScriptedModel("x", "w, cmd.Name()", 0.9)
    got, preds = follow("file:///a.go", GO, after, model=model)
    assert model.calls == ["refill"]
    assert [(p.old_text, p.new_text, p.source) for p in preds] == [("w", "w, cmd.Name()", "model"),
                                                                   ("os.Stdout", "w, cmd.Name()", "model")]
    model = ScriptedModel("x", "w, not ok", 0.9)  # Python arguments, not Go ones: not the model's
    assert [p.new_text for p in follow("file:///a.go", GO, after, model=model)[1]] == ["w, name", "os.Stdout, name"]


def test_a_parent_class_init_called_through_its_class_is_not_a_call_of_the_changed_init():
    old = ("class UsageError(Exception):\n    def __init__(self, message, ctx=None):\n"
           "        Exception.__init__(self, message)\n\n\n"
           "class BadOptionUsage(UsageError):\n    def __init__(self, message, ctx=None):\n"
           "        UsageError.__init__(self, message, ctx)\n\n\n"
           "def fail(opt):\n    raise BadOptionUsage.__init__(self, 'no value')\n")
    new = old.replace("    def __init__(self, message, ctx=None):\n        UsageError",
                      "    def __init__(self, option_name, message, ctx=None):\n        UsageError")
    new = new.replace("BadOptionUsage.__init__(self, 'no value')", "BadOptionUsage.__init__(self, opt, 'no value')")
    doc = DocState("file:///e.py", new, "python", 1, (old,), 1.0)
    preds = predict(NextEditQuery((doc,), doc.uri, new.index("option_name")), None, Grammars()).predictions
    assert not [p for p in preds if "__init__" in p.reason]  # neither Exception's nor UsageError's


def test_signature_change_finds_calls_that_no_longer_match():
    src = "def area(w, h):\n    return w * h\n\n\nx = area(1, 2)\ny = area(3,\n         4)\nz = area(w=1, h=2)\n"
    after = src.replace("def area(w, h)", "def area(w, h, d)").replace("area(1, 2)", "area(1, 2, 9)")
    out, _ = run(after, src)
    assert [(p.old_text, p.new_text, p.kind) for p in out.predictions] == [
        ("3,\n         4", "3,\n         4, 9", "signature"), ("w=1, h=2", "w=1, h=2, d=9", "signature")]
    assert "signature now has 3 parameter(s)" in out.predictions[0].reason
    # a parameter removed: the argument goes
    after = src.replace("def area(w, h)", "def area(w)").replace("area(1, 2)", "area(1)")
    out, _ = run(after, src)
    assert [(p.old_text, p.new_text) for p in out.predictions] == [("3,\n         4", "3"), ("w=1, h=2", "w=1")]


def test_no_placeholder_where_calls_may_leave_the_argument_out_or_at_calls_all_over_javascript_and_python():
    src = "function next() {\n  return read();\n}\nnext();\nif (x) next();\n"
    after = src.replace("function next()", "function next(forceRegexp)")
    text, preds = follow("file:///l.js", src, after)
    assert text == after and [p for p in preds if p.kind == "signature"] == []  # JS: a missing argument is undefined
    calls = "".join(f"print(area({i}, 2))\n" for i in range(7))
    src = "def area(w, h):\n    return w * h\n\n\n" + calls
    after = src.replace("def area(w, h)", "def area(w, h, d)")
    text, _ = follow("file:///a.py", src, after)
    assert text == after  # seven calls, one name guessed at each: none offered
    src = "def area(w, h):\n    return w * h\n\n\nprint(area(1, 2))\n"
    after = src.replace("def area(w, h)", "def area(w, h, d)")
    assert follow("file:///a.py", src, after)[0] == after.replace("area(1, 2)", "area(1, 2, d)")
