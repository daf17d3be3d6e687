"""Edits read as token rules (``rules.repeat.tokens``) as the repeat family applies them: anchors
generalised by two examples, a path replaced at once, an insertion anchored on a line's start, a
re-spacing of tokens (layout rules)."""

from __future__ import annotations

from mercury_lsp.next_edit.rules.repeat.tokens import BOL, WILD, generalise, rules_from_edit
from tests.support.next_edit import applied, ask, doc


def test_examples_that_differ_in_an_identifier_generalise_to_a_wildcard():
    src = ("try:\n    f()\nexcept BadSignature, e:\n    pass\ntry:\n    g()\nexcept Exception, e:\n    pass\n"
           "try:\n    h()\nexcept ValueError, e:\n    pass\n")
    one = src.replace("except BadSignature, e:", "except BadSignature as e:")
    two = one.replace("except Exception, e:", "except Exception as e:")
    rule, = generalise(rules_from_edit(one, two), rules_from_edit(src, one))
    assert rule.lead == ("except", WILD) and rule.trail == ("e", ":")
    preds = ask(doc("file:///a.py", two, (one, src), (2.0, 1.0)))
    assert applied(two, preds, "file:///a.py") == two.replace("except ValueError, e:", "except ValueError as e:")


def test_two_examples_sharing_no_anchor_keep_the_newest_ones_javascript():
    """``||`` -> ``??`` after ``process || {env: {}}`` and then in ``getListeners(this, name) ||
    new Set()``: the two anchors share nothing, so the newest keeps its own, and the same line in
    the next method follows (cut to nothing, the rule was too short to search at all)."""
    line = "\t\tconst listeners = getListeners(this, eventName) || new Set();\n"
    src = ("class E {\n\tconstructor(options) {\n\t\tconst {env} = globalThis.process || {env: {}};\n\t}\n\n"
           f"\temit(eventName) {{\n{line}\t\treturn listeners;\n\t}}\n\n"
           f"\temitSerial(eventName) {{\n{line}\t\treturn listeners;\n\t}}\n}}\n")
    one = src.replace("globalThis.process || {", "globalThis.process ?? {")
    two = one.replace(line, line.replace("||", "??"), 1)
    rule, = generalise(rules_from_edit(one, two), rules_from_edit(src, one))
    assert rule.lead == (",", "eventName", ")") and rule.trail == ("new", "Set", "(")
    preds = ask(doc("file:///index.js", two, (one, src), (2.0, 1.0), grammar="javascript"),
                cursor=two.index("emit(eventName)"))
    assert applied(two, preds, "file:///index.js") == two.replace("|| new Set()", "?? new Set()")


def test_two_examples_sharing_no_anchor_keep_the_newest_ones_python():
    """Python 2's ``<>`` -> ``!=`` after ``if (a) <> [1]:`` and then ``while n <> m:``: the
    identical ``while`` line below follows."""
    src = ("def f(a, n, m):\n    if (a) <> [1]:\n        pass\n    while n <> m:\n        n += 1\n"
           "    g()\n    while n <> m:\n        n -= 1\n")
    one = src.replace("if (a) <> [1]:", "if (a) != [1]:")
    two = one.replace("while n <> m:", "while n != m:", 1)
    rule, = generalise(rules_from_edit(one, two), rules_from_edit(src, one))
    assert rule.lead == ("while", "n") and rule.trail == ("m", ":")
    preds = ask(doc("file:///a.py", two, (one, src), (2.0, 1.0)), cursor=two.index("n += 1"))
    assert applied(two, preds, "file:///a.py") == two.replace("while n <> m:", "while n != m:")


def test_one_example_does_not_abstract_its_anchor():
    """``import fetch from`` gaining ``, {Headers}`` is not a change for every ``import x from``."""
    src = "import test from 'ava';\nimport delay from 'delay';\nimport fetch from 'node-fetch';\n"
    after = src.replace("import fetch from", "import fetch, {Headers} from")
    assert ask(doc("file:///t.js", after, (src,), (1.0,), grammar="javascript")) == []


def test_a_path_replaced_at_once_is_one_change_not_two_renames():
    """``log.Printf`` -> ``t.Logf`` (a test's logger) repeats at the other ``log.Printf`` calls;
    neither ``log`` -> ``t`` nor ``Printf`` -> ``Logf`` alone is a rename (``fmt.Printf`` stays)."""
    src = ("package cli\n\nfunc TestA(t *testing.T) {\n\tlog.Printf(\"a %v\", x)\n\tfmt.Printf(\"b\")\n}\n\n"
           "func TestB(t *testing.T) {\n\tlog.Printf(\"c %v\", y)\n}\n")
    after = src.replace('log.Printf("a', 't.Logf("a', 1)
    rule, = rules_from_edit(src, after)
    assert rule.deleted == ("log", ".", "Printf") and rule.inserted == "t.Logf"
    preds = ask(doc("file:///a_test.go", after, (src,), (1.0,), grammar="go"))
    assert applied(after, preds, "file:///a_test.go") == after.replace('log.Printf("c', 't.Logf("c')


def test_an_insertion_before_a_lines_code_is_anchored_on_the_lines_start():
    """``await `` put before one ``t.throwsAsync(`` line goes before the others; not before the
    same call inside an expression, where the line's start is not its anchor."""
    src = ("test('a', async t => {\n\tt.throwsAsync(queue.add(a));\n});\n\n"
           "test('b', async t => {\n\tt.throwsAsync(\n\t\tqueue.add(b),\n\t);\n"
           "\tconst p = t.throwsAsync(queue.add(c));\n});\n")
    after = src.replace("\tt.throwsAsync(queue.add(a))", "\tawait t.throwsAsync(queue.add(a))")
    rule, = rules_from_edit(src, after)
    assert rule.lead == (BOL,) and rule.inserted == "await "
    preds = ask(doc("file:///test.ts", after, (src,), (1.0,), grammar="typescript"))
    assert applied(after, preds, "file:///test.ts") == after.replace("\tt.throwsAsync(\n", "\tawait t.throwsAsync(\n")


def test_a_whole_line_inserted_above_another_is_not_put_before_every_line_like_it():
    src = "from a import b\nfrom c import d\n\nx = b(d)\n"
    after = "import sys\n" + src
    assert not [r for r in rules_from_edit(src, after) if r.lead == (BOL,)]


def test_a_respacing_of_tokens_repeats_where_the_same_tokens_stand():
    """Only the spacing changed (``{write: writeLog}`` -> ``{ write: writeLog }``): the same tokens
    elsewhere get the same spacing; places spaced so already are left alone."""
    src = ("var a = createServer({\n  stream: {write: writeLog}\n})\nvar b = createServer({\n"
           "  stream: {write: writeLog}\n})\nvar c = createServer({\n  stream: { write: writeLog }\n})\n")
    after = src.replace("{write: writeLog}", "{ write: writeLog }", 1)
    rule, = rules_from_edit(src, after)
    assert rule.layout and rule.deleted == ("{", "write", ":", "writeLog", "}")
    preds = ask(doc("file:///test.js", after, (src,), (1.0,), grammar="javascript"))
    assert applied(after, preds, "file:///test.js") == src.replace("{write: writeLog}", "{ write: writeLog }")


def test_a_body_joined_to_its_line_is_joined_at_the_siblings_of_two_examples():
    """``-> str:\\n    ...`` -> ``-> str: ...`` then the same for ``-> Markup``: the generalised
    layout rule joins every ``) -> X:`` stub, in this document and another."""
    stub = "    def {n}(self, s: t.Any) -> {r}:\n        ...\n"
    src = "class HasHTML(t.Protocol):\n" + stub.format(n="html", r="str") + stub.format(n="call", r="Markup")
    other = "class Esc(t.Protocol):\n" + stub.format(n="__call__", r="Markup")
    one = src.replace("-> str:\n        ...", "-> str: ...")
    two = one.replace("-> Markup:\n        ...", "-> Markup: ...")
    preds = ask(doc("file:///a.py", two, (one, src), (2.0, 1.0)), doc("file:///b.py", other))
    assert applied(other, preds, "file:///b.py") == other.replace("Markup:\n        ...", "Markup: ...")


def test_a_docstring_rewrapped_is_no_layout_to_repeat():
    src = ('def f(x):\n    """Check x.\n\n    :raises TypeError: if the value\n        is wrong.\n    """\n\n\n'
           'def g(x):\n    """Check x.\n\n    :raises TypeError: if the value\n        is wrong.\n    """\n')
    after = src.replace("if the value\n        is wrong.", "if the value is\n        wrong.", 1)
    assert ask(doc("file:///v.py", after, (src,), (1.0,))) == []


def test_brackets_replaced_on_both_sides_of_a_long_run_are_one_change_rust():
    src = ("struct VTable {\n    object_ref: unsafe fn(Ref<ErrorImpl>) -> &(dyn StdError + Send + Sync + 'static),\n}\n\n"
           "unsafe fn object_ref<E>(e: Ref<ErrorImpl>) -> &(dyn StdError + Send + Sync + 'static)\nwhere\n"
           "    E: StdError,\n{\n    &e.cast::<ErrorImpl<E>>().deref()._object\n}\n")
    after = src.replace("-> &(dyn StdError + Send + Sync + 'static),", "-> Ref<dyn StdError + Send + Sync + 'static>,")
    rule, = rules_from_edit(src, after)  # each half alone leaves a bracket open
    assert rule.deleted[0] == "&" and rule.deleted[-1] == ")"
    preds = ask(doc("file:///error.rs", after, (src,), (1.0,), grammar="rust"))
    assert applied(after, preds, "file:///error.rs") == after.replace(
        "-> &(dyn StdError + Send + Sync + 'static)\n", "-> Ref<dyn StdError + Send + Sync + 'static>\n")


def test_brackets_replaced_around_a_union_are_one_change_typescript():
    src = "let a: Array<string | number | undefined | null> = [];\nlet b: Array<string | number | undefined | null>;\n"
    after = src.replace("a: Array<string | number | undefined | null>", "a: (string | number | undefined | null)[]")
    rule, = rules_from_edit(src, after)
    assert rule.inserted.strip() == "(string | number | undefined | null)[]"


def test_a_long_expression_wrapped_stays_two_changes_javascript():
    src = "const t = !process.env.TERM.toLowerCase();\nprocess.env.TERM = 'xterm';\n"
    after = src.replace("!process.env.TERM.toLowerCase()", "!(process.env.TERM || '').toLowerCase()")
    assert len(rules_from_edit(src, after)) == 2  # as one, it would wrap the assignment's target too
