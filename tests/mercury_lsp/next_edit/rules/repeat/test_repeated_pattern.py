"""NE204 repeated-pattern: the user's change repeated where the same tokens stand, and where it is
not (type words alone, an unknown local, another function's list)."""

from __future__ import annotations

from mercury_lsp.next_edit.rules.repeat.tokens import EOL, rules_from_edit
from mercury_lsp.syntax import Grammars
from tests.support.next_edit import applied, ask, doc, run

G = Grammars()


def test_an_item_added_to_one_functions_list_is_not_repeated_in_another_functions_lists():
    src = ("def show(args, kwargs):\n    return args\n\n\ndef other(args, kwargs):\n    return kwargs\n\n\n"
           "x = show(args, kwargs)\ny = other(args, kwargs)\n")
    after = src.replace("x = show(args, kwargs)", "x = show(args, kwargs, None)")
    assert run(after, src)[0].predictions == []  # other(args, kwargs) is another function's call


def test_an_older_examples_change_is_repeated_in_another_document():
    """A version bumped in docs/conf.py, then an unrelated fix in setup.py: setup.py's version
    gets the same bump."""
    conf0 = "project = 'more'\nversion = '4.0.0'\n"
    setup0 = "setup(\n    name='more',\n    version='4.0.0',\n    pattern=r'[a-z_]+',\n)\n"
    conf1 = conf0.replace("'4.0.0'", "'4.0.1'")
    setup1 = setup0.replace("[a-z_]+", "[a-z._]+")
    conf = doc("file:///docs/conf.py", conf1, (conf0,), (1.0,))
    setup = doc("file:///setup.py", setup1, (setup0,), (2.0,))
    preds = ask(setup, conf, cursor=setup1.index("pattern"))
    assert applied(setup1, preds, setup.uri) == setup1.replace("'4.0.0'", "'4.0.1'")


def test_an_insertion_at_the_end_of_a_line_is_anchored_on_the_lines_end():
    line = "// eslint-disable-next-line no-invalid-void-type\n"
    src = line + "expectType<void>(a());\n" + line + "expectType<void>(b());\n"
    new = line.replace("void-type", "void-type, no-confusing-void-expression")
    after = src.replace(line, new, 1)
    rule, = rules_from_edit(src, after)
    assert rule.trail == (EOL,) and rule.inserted == ", no-confusing-void-expression"
    preds = ask(doc("file:///t.ts", after, (src,), (1.0,), grammar="typescript"))
    assert applied(after, preds, "file:///t.ts") == new + "expectType<void>(a());\n" + new + "expectType<void>(b());\n"


def test_a_long_deleted_run_is_repeated_without_an_anchor():
    sig = "func(cmd *Command, args []string, toComplete string) ([]string, ShellCompDirective)"
    src = f"package cobra\n\ntype Command struct {{\n\tValidArgsFunction {sig}\n}}\n"
    other = f"package cobra\n\nvar flagCompletionFunctions = map[*Flag]{sig}{{}}\n"
    after = src.replace(sig, "CompletionFunc")
    preds = ask(doc("file:///command.go", after, (src,), (1.0,), grammar="go"),
                doc("file:///completions.go", other, grammar="go"))
    assert applied(other, preds, "file:///completions.go") == other.replace(sig, "CompletionFunc")


def test_one_replacement_in_a_keyword_statement_repeats_at_statements_of_the_same_shape():
    """``except BadSignature, e:`` -> ``as e``: every ``except X, e:`` follows, one example is enough."""
    src = ("try:\n    f()\nexcept BadSignature, e:\n    pass\ntry:\n    g()\nexcept Exception, e:\n    pass\n"
           "import fetch\nimport delay\n")
    after = src.replace("except BadSignature, e:", "except BadSignature as e:")
    preds = ask(doc("file:///a.py", after, (src,), (1.0,)))
    assert applied(after, preds, "file:///a.py") == after.replace("except Exception, e:", "except Exception as e:")


def test_sites_found_only_in_other_documents_do_not_stop_the_search_in_the_examples_own():
    """A specific anchor matches only other files; a broader one finds the example's sibling."""
    body = "\tawait t.{}(() => ky.post(\n\t\tserver.url,\n\t));\n"
    src = body.format("notThrowsAsync") + body.format("throwsAsync")
    after = src.replace("notThrowsAsync(() => ky.post(", "notThrowsAsync(ky.post(")
    other = "\tawait t.notThrowsAsync(() => ky(server.url));\n"
    preds = ask(doc("file:///hooks.js", after, (src,), (1.0,), grammar="javascript"),
                doc("file:///methods.js", other, grammar="javascript"))
    assert applied(after, preds, "file:///hooks.js") == after.replace("throwsAsync(() => ky.post(", "throwsAsync(ky.post(")
    assert applied(other, preds, "file:///methods.js") == "\tawait t.notThrowsAsync(ky(server.url));\n"


def test_an_insertion_using_a_local_of_its_function_is_not_repeated_where_the_name_is_unknown():
    src = ("export class Ky {\n\tconstructor() {\n\t\tconst originalSignal = this.options.signal;\n"
           "\t\tsignal.addEventListener('abort', () => {\n\t\t\tthis.abortController.abort();\n\t\t});\n\t}\n}\n")
    after = src.replace("abortController.abort();", "abortController.abort(originalSignal.reason);")
    other = "export function stop(controller) {\n\tcontroller.abortController.abort();\n}\n"
    preds = ask(doc("file:///Ky.ts", after, (src,), (1.0,), grammar="typescript"),
                doc("file:///stop.ts", other, grammar="typescript"))
    assert [p for p in preds if p.uri == "file:///stop.ts"] == []


def test_the_lower_of_two_identical_lines_changed_repeats_at_the_lower_of_each_pair():
    pair = "        self.assertIs(w[0].category, DeprecationWarning)\n"
    test = "    def test_{}(self):\n        run()\n" + pair + pair + "\n"
    src = "class T:\n" + "".join(test.format(n) for n in ("a", "b", "c"))
    lower = src.index(pair) + len(pair)  # the second line of the first pair
    after = src[:lower] + pair.replace("w[0]", "w[1]") + src[lower + len(pair):]
    preds = ask(doc("file:///t.py", after, (src,), (1.0,)), cursor=lower)
    got = applied(after, preds, "file:///t.py")
    assert got == src.replace(pair + pair, pair + pair.replace("w[0]", "w[1]"))


def test_a_word_changed_inside_a_string_and_comment_repeats_under_its_whole_anchor():
    src = ('package mux\n\n// Only matches if domain is "www.domain.com".\nfunc a(r *Router) {\n'
           '\tr.Host("www.domain.com")\n}\n\n// The host is "www.domain.com" here too.\n'
           'func b(r *Router) {\n\ts := r.Host("www.domain.com").Subrouter()\n\t_ = s\n}\n')
    first = src.index("// Only")
    end = src.index("}\n", first)
    after = src[:first] + src[first:end].replace("domain.com", "example.com") + src[end:]
    preds = ask(doc("file:///doc.go", after, (src,), (1.0,), grammar="go"), cursor=end)
    assert applied(after, preds, "file:///doc.go") == src.replace("www.domain.com", "www.example.com")


def test_a_replacement_naming_a_local_is_not_repeated_in_a_function_without_it():
    src = ("function parse(option) {\n  var name = camelcase(option.name());\n  emit(option.name());\n}\n\n"
           "function help(option) {\n  return pad(option.name());\n}\n")
    after = src.replace("  var name = camelcase(option.name());\n",
                        "  var oname = option.name();\n  var name = camelcase(oname);\n")
    preds = ask(doc("file:///c.js", after, (src,), (1.0,), grammar="javascript"), cursor=after.index("camelcase"))
    assert applied(after, preds, "file:///c.js") == after.replace("emit(option.name())", "emit(oname)")


def test_an_insertion_anchored_on_type_words_alone_is_not_repeated():
    src = ("export type Options = {\n\treadonly cwd?: string;\n\treadonly execPath?: string;\n"
           "\treadonly shell?: string;\n};\n")
    after = src.replace("execPath?: string;", "execPath?: string | URL;")
    preds = ask(doc("file:///index.d.ts", after, (src,), (1.0,), grammar="typescript"), cursor=after.index("URL"))
    assert not [p for p in preds if "URL" in p.new_text]  # not every '?: string' field


def test_typescripts_string_type_keyword_is_code_not_a_string():
    from mercury_lsp.next_edit.prose import non_code
    from mercury_lsp.next_edit.tree import parse_all
    text = "let a: string = 'x';\n"
    parsed = parse_all((doc("file:///a.ts", text, grammar="typescript"),), G)[0]
    assert not non_code(parsed, text.index("string")) and non_code(parsed, text.index("'x'") + 1)


GENERIC_PY = '''def load(path):
    failed = check(path)
    if failed:
        return None
    data, failed = read(path)
    if failed:
        return None
    parsed, failed = parse(data)
    if failed: log("parse failed", path, data, parsed)
    size, failed = measure(parsed)
    if failed:
        return None
    return parsed, failed, size
'''
GENERIC_JS = '''function load(opts) {
  if (!opts) {
    return null;
  }
  const a = read(opts.path, opts);
  if (!opts) {
    return a;
  }
  if (!opts) { warn("no options given", a, opts.path, opts.mode); }
  const b = parse(a, opts);
  if (!opts) {
    return b;
  }
  return [a, b, opts.size, opts];
}
'''


def test_a_condition_of_a_generic_shape_repeats_only_where_the_line_reads_like_the_example():
    """A condition extended on one ``if`` of a shape the document repeats everywhere (a name it
    uses at every line) goes to the ``if`` lines like it, not to the one-line ``if`` that does
    something else (Python, JavaScript); a distinctive name keeps every place."""
    after = GENERIC_PY.replace("    if failed:\n        return None\n    data", "    if failed is not None:\n        return None\n    data")
    preds = ask(doc("file:///l.py", after, (GENERIC_PY,), (1.0,)), cursor=after.index("is not None"))
    assert sorted(after.count("\n", 0, p.start) for p in preds) == [5, 10]  # not the one-liner (line 9)
    after = GENERIC_JS.replace("  if (!opts) {\n    return null;", "  if (!opts || opts.skip) {\n    return null;")
    preds = ask(doc("file:///l.js", after, (GENERIC_JS,), (1.0,), grammar="javascript"), cursor=after.index("opts.skip"))
    assert sorted(after.count("\n", 0, p.start) for p in preds) == [5, 10]
    rare = GENERIC_JS.replace("opts", "conf").replace("read(conf.path, conf)", "read(path)") \
        .replace("parse(a, conf)", "parse(a)").replace("return [a, b, conf.size, conf]", "return [a, b]") \
        .replace("a, conf.path, conf.mode", "a").replace("function load(conf)", "function load(conf, path)")
    after = rare.replace("  if (!conf) {\n    return null;", "  if (!conf || conf.skip) {\n    return null;")
    preds = ask(doc("file:///l.js", after, (rare,), (1.0,), grammar="javascript"), cursor=after.index("conf.skip"))
    assert sorted(after.count("\n", 0, p.start) for p in preds) == [5, 8, 10]  # 'conf' is used at few places


def test_an_insertion_after_punctuation_is_anchored_on_the_nearest_name_of_its_line():
    """``basename(argv[1])`` -> ``basename(argv[1], '.js')``: the three tokens before the insertion
    (``[1]``) name nothing; the lead reaches back to ``argv``, and the other ``basename(argv[1])``
    gets the argument — not the ``dirname(path[1])`` whose punctuation reads the same."""
    src = ("function a(argv) {\n  this.name = basename(argv[1]);\n}\n\n"
           "function b(argv, args) {\n  var bin = basename(argv[1]) + '-' + args[0];\n"
           "  var dir = dirname(path[1]) + '-';\n}\n")
    after = src.replace("basename(argv[1]);", "basename(argv[1], '.js');")
    rule, = rules_from_edit(src, after)
    assert rule.lead[0] == "argv" and rule.inserted == ", '.js'"
    preds = ask(doc("file:///i.js", after, (src,), (1.0,), grammar="javascript"))
    assert applied(after, preds, "file:///i.js") == after.replace(
        "basename(argv[1]) + '-'", "basename(argv[1], '.js') + '-'")


def test_a_lead_reaching_back_to_a_name_stays_on_its_line():
    """Python: ``wait(timeout[0])`` -> ``wait(timeout[0], 5)`` repeats where ``timeout[0]``
    stands again; a lead never reaches back past its line's start (``(1 + 2)`` + ``, 3``
    is anchored on the line's own tokens only)."""
    src = "def f(timeout):\n    wait(timeout[0])\n    step()\n    wait(timeout[0])\n"
    after = src.replace("wait(timeout[0])", "wait(timeout[0], 5)", 1)
    preds = ask(doc("file:///w.py", after, (src,), (1.0,)))
    assert applied(after, preds, "file:///w.py") == src.replace("wait(timeout[0])", "wait(timeout[0], 5)")
    pair = "total = f(x)\ny = (1 + 2)\n"
    rule, = rules_from_edit(pair, pair.replace("(1 + 2)", "(1 + 2, 3)"))
    assert rule.lead == ("y", "=", "(", "1", "+", "2")
    rule, = rules_from_edit("f(x)\n(1 + 2)\n", "f(x)\n(1 + 2, 3)\n")
    assert rule.lead == ("1", "+", "2")  # no name on its line: the three tokens before it


def test_a_sentence_rewritten_in_a_comment_is_not_repeated_in_other_comments_go():
    """``applied to the Router.`` -> ``applied to the Route. Route middleware run after...``: that
    comment's own sentence; the other comments ending the same way are left (a word is still
    repeated: ``Router`` -> ``Mux`` in prose follows)."""
    src = ("package mux\n\n// Use appends a middleware, applied to the Router.\nfunc (r *Router) Use() {}\n\n"
           "// use appends an interface, applied to the Router.\nfunc (r *Router) use() {}\n")
    after = src.replace("// Use appends a middleware, applied to the Router.",
                        "// Use appends a middleware, applied to the Route. Route middleware run after the Router's.", 1)
    preds = ask(doc("file:///m.go", after, (src,), (1.0,), grammar="go"))
    assert not [p for p in preds if p.rule in ("NE204", "NE205")]


def test_a_sentence_rewritten_in_a_comment_is_not_repeated_python_but_a_word_is():
    src = "# the first queue, flushed by the worker.\nA = 1\n# the second queue, flushed by the worker.\nB = 2\n"
    rewritten = src.replace("flushed by the worker.", "flushed by the worker once the lock is taken.", 1)
    assert not [p for p in ask(doc("file:///q.py", rewritten, (src,), (1.0,))) if p.rule in ("NE204", "NE205")]
    one_word = src.replace("flushed by the worker.", "drained by the worker.", 1)
    preds = ask(doc("file:///q.py", one_word, (src,), (1.0,)))
    assert applied(one_word, preds, "file:///q.py") == src.replace("flushed", "drained")


def test_code_written_into_a_string_still_repeats_javascript():
    """``'option encode is invalid'`` -> ``'option encode is invalid: ' + enc``: code's punctuation
    in the new text — no sentence of prose — so the other messages of the same shape follow."""
    src = ("function a(enc) {\n  if (!enc) throw new TypeError('option encode is invalid');\n}\n"
           "function b(enc) {\n  if (!enc) throw new TypeError('argument name is invalid');\n}\n")
    after = src.replace("'option encode is invalid'", "'option encode is invalid: ' + enc")
    preds = [p for p in ask(doc("file:///i.js", after, (src,), (1.0,), grammar="javascript")) if p.rule == "NE204"]
    assert [after[:p.start].count("\n") for p in preds] == [4]


def test_an_insertion_is_not_repeated_where_its_text_already_stands_python():
    """``*args: t.Any`` inserted in one signature: the place the user just wrote it (its anchor
    matches again there) and a signature that already has it are left alone."""
    src = ("def dumps(obj: t.Any, **kwargs: t.Any) -> str:\n    pass\n\n\n"
           "def loads(obj: t.Any, *args: t.Any, **kwargs: t.Any) -> str:\n    pass\n")
    after = src.replace("dumps(obj: t.Any, **kwargs", "dumps(obj: t.Any, *args: t.Any, **kwargs")
    assert ask(doc("file:///a.py", after, (src,), (1.0,))) == []


def test_an_insertion_is_not_repeated_where_its_text_already_stands_typescript():
    src = "import {escape, soft} from './a';\nimport {escape, escapeSilent, soft} from './b';\n"
    after = src.replace("{escape, soft} from './a'", "{escape, escapeSilent, soft} from './a'")
    preds = ask(doc("file:///a.ts", after, (src,), (1.0,), grammar="typescript"))
    assert "escapeSilent, escapeSilent" not in applied(after, preds, "file:///a.ts")
    assert preds == []


def test_a_closing_bracket_inserted_beside_another_still_repeats():
    """Punctuation doubles rightly: ``assertIsInstance(x, M)`` -> ``assertTrue(isinstance(x, M))``."""
    src = ("class T:\n    def test(self):\n        self.assertIsInstance(escape('a'), Markup)\n"
           "        self.assertIsInstance(escape(Foo()), Markup)\n")
    after = src.replace("self.assertIsInstance(escape('a'), Markup)", "self.assertTrue(isinstance(escape('a'), Markup))")
    preds = ask(doc("file:///t.py", after, (src,), (1.0,)))
    assert applied(after, preds, "file:///t.py") == after.replace(
        "self.assertIsInstance(escape(Foo()), Markup)", "self.assertTrue(isinstance(escape(Foo()), Markup))")


def test_a_string_replaced_by_code_repeats_where_the_same_string_stands_javascript():
    """``.replace('#', 't')`` -> ``.replace(/#/g, 't')``: the deleted run is a string where the
    new text is code; the other calls' strings follow."""
    call = "  r.expect(400, parseError('#rue').replace('#', 't'), done)\n"
    src = f"it('x', function (done) {{\n{call}}})\nit('y', function (done) {{\n{call}}})\n"
    after = src.replace("replace('#', 't')", "replace(/#/g, 't')", 1)
    preds = ask(doc("file:///t.js", after, (src,), (1.0,), grammar="javascript"))
    assert applied(after, preds, "file:///t.js") == src.replace("replace('#', 't')", "replace(/#/g, 't')")


def test_a_string_replaced_by_a_name_repeats_where_the_same_string_stands_python():
    src = ("import os\n\n\ndef home():\n    return os.environ.get('HOME', '/')\n\n\n"
           "def base():\n    return os.environ.get('HOME', '/') + '/base'\n")
    after = src.replace("get('HOME', '/')", "get(HOME_VARIABLE, '/')", 1)
    preds = ask(doc("file:///a.py", after, (src,), (1.0,)))
    assert applied(after, preds, "file:///a.py") == src.replace("get('HOME', '/')", "get(HOME_VARIABLE, '/')")


def repeated_everywhere(src: str, old: str, new: str, uri: str, grammar: str) -> bool:
    """``old`` -> ``new`` at its first place in ``src``: the edits offered make it at every place."""
    after = src.replace(old, new, 1)
    d = doc(uri, after, (src,), (1.0,), grammar=grammar)
    return applied(after, ask(d), uri) == src.replace(old, new)


def test_string_arguments_appended_after_a_string_repeat_at_the_same_calls():
    """``runpytest('-v')`` -> ``runpytest('-v', '-p', 'no:asyncio')``: the anchor inside the string
    (``- v '``) is too short, so the lead reaches back to the callee; and text inserted right after
    a string closes is code, not the string's prose (a sentence, which would not be repeated)."""
    src = ("def test_a(testdir):\n    result = testdir.runpytest('-v')\n    result.ok()\n\n\n"
           "def test_b(testdir):\n    result = testdir.runpytest('-v')\n    result.ok()\n")
    assert repeated_everywhere(src, "runpytest('-v')", "runpytest('-v', '-p', 'no:asyncio')", "file:///a.py", "python")


def test_an_argument_appended_after_a_string_repeats_in_javascript():
    src = "test('a', () => {\n  run(\"-x\");\n});\n\ntest('b', () => {\n  run(\"-x\");\n});\n"
    assert repeated_everywhere(src, 'run("-x")', 'run("-x", "--no-color", opts)', "file:///t.js", "javascript")


def test_words_appended_inside_a_string_are_still_prose():
    """Inserted before the closing quote, the words extend the string: a sentence of its own, no
    token change NE204 repeats (the same whole line is NE207's, a rewrite of lines)."""
    src = "a = log('could not read')\nb = log('could not read')\n"
    after = src.replace("'could not read'", "'could not read the whole file'", 1)
    assert [p.rule for p in run(after, src)[0].predictions] == ["NE207"]


def test_a_trailing_comment_deleted_is_deleted_where_it_stands_again():
    """``  # type: ignore[call-arg]`` removed from one call: where the comment was is code in the
    current text, but what was deleted is a comment, and the same comment goes at the other call."""
    src = ("def open_queue():\n    q = queues.create(2, FMT, UNBOUND)  # type: ignore[call-arg]\n    return q\n\n\n"
           "def put(q, payload):\n    queues.put(q, payload, FMT, UNBOUND)  # type: ignore[call-arg]\n")
    assert repeated_everywhere(src, "  # type: ignore[call-arg]", "", "file:///a.py", "python")


def test_a_trailing_line_comment_deleted_repeats_in_go():
    src = ("package q\n\nfunc a() int {\n\treturn parse(2, mode) // nolint:gosec\n}\n\n"
           "func b() int {\n\treturn parse(3, mode) // nolint:gosec\n}\n")
    assert repeated_everywhere(src, " // nolint:gosec", "", "file:///q.go", "go")


def test_a_value_replaced_by_its_new_name_is_not_replaced_in_the_assignment_defining_it():
    """``config.getini("roots")`` -> ``config_roots`` after ``config_roots = config.getini("roots")``
    was written: the other reads change, the definition does not become ``config_roots =
    config_roots`` (Python, JavaScript)."""
    src = 'def roots(config):\n    rootdirs = [Path(r) for r in config.getini("roots")]\n    return rootdirs\n'
    after = src.replace('    rootdirs = [Path(r) for r in config.getini("roots")]',
                        '    config_roots = config.getini("roots")\n    if not config_roots:\n        config_roots = [cwd]\n'
                        '    rootdirs = [Path(r) for r in config_roots]')
    got = applied(after, ask(doc("file:///p.py", after, (src,), (1.0,))), "file:///p.py")
    assert 'config_roots = config.getini("roots")' in got
    js = "function a(opts) {\n  const n = use(opts.items.length);\n  return n;\n}\n"
    after = js.replace("  const n = use(opts.items.length);",
                       "  const count = opts.items.length;\n  if (!count) {\n    return 0;\n  }\n  const n = use(count);")
    got = applied(after, ask(doc("file:///a.js", after, (js,), (1.0,), grammar="javascript")), "file:///a.js")
    assert "const count = opts.items.length;" in got


def test_a_module_of_an_import_path_renamed_repeats_at_the_other_imports_only():
    """Rust: ``use crate::progress::{..}`` -> ``crate::state`` moves the other ``use
    crate::progress::X`` lines, never the field ``progress:``; Python: ``from pkg.old import a``."""
    lib = "use crate::progress::{Bar, Draw};\n\nfn f(b: Bar) -> Iter {\n    Iter { progress: b }\n}\n"
    after = lib.replace("crate::progress::", "crate::state::")
    style = "use crate::progress::ProgressState;\n\nfn g(s: ProgressState) -> u8 {\n    s.progress\n}\n"
    preds = ask(doc("file:///src/bar.rs", after, (lib,), (1.0,), grammar="rust"),
                doc("file:///src/style.rs", style, grammar="rust"))
    assert applied(style, preds, "file:///src/style.rs") == style.replace("crate::progress::", "crate::state::")
    assert applied(after, preds, "file:///src/bar.rs") == after  # 'progress: b' is a field
    py = "from pkg.old import a\nfrom pkg.old import b\n\n\ndef f(old):\n    return old\n"
    after = py.replace("from pkg.old import a", "from pkg.new import a")
    got = applied(after, ask(doc("file:///m.py", after, (py,), (1.0,))), "file:///m.py")
    assert got == after.replace("from pkg.old import b", "from pkg.new import b")


def test_a_replacement_anchored_on_one_side_alone_when_the_other_differs():
    """``2010-2018`` -> ``2010-2019`` in a string, then the same years in another file's comment,
    where the anchor after the change differs (``,`` / `` Benjamin``): the lead alone places it
    (Python, JavaScript)."""
    conf = 'copyright = u"2010-2018, Benjamin Peterson"\n'
    after = conf.replace("2018", "2019")
    setup = "# Copyright (c) 2010-2018 Benjamin Peterson\nimport os\n"
    preds = ask(doc("file:///docs/conf.py", after, (conf,), (1.0,)), doc("file:///setup.py", setup))
    assert applied(setup, preds, "file:///setup.py") == setup.replace("2018", "2019")
    js = "const banner = 'v1.4.2 (c) 2015-2020 someone';\n"
    after = js.replace("2015-2020", "2015-2021")
    other = "// (c) 2015-2020 Someone Else\nexport default 1;\n"
    preds = ask(doc("file:///a.js", after, (js,), (1.0,), grammar="javascript"),
                doc("file:///b.js", other, grammar="javascript"))
    assert applied(other, preds, "file:///b.js") == other.replace("2020", "2021")


JINJA = """def handle_call(self, n):
    raise TemplateSyntaxError('bad call',
                              n.lineno)


def handle_filter(self, n):
    raise TemplateSyntaxError('bad filter',
                                  n.lineno)
"""


def test_an_argument_added_on_a_line_of_its_own_aligned_repeats_reindented_python():
    after = JINJA.replace("                              n.lineno)",
                          "                              n.lineno,\n                              n.filename)", 1)
    preds = ask(doc("file:///t.py", after, (JINJA,), (1.0,)), cursor=after.index("n.filename)") + 11)
    assert applied(after, preds, "file:///t.py") == after.replace(
        "                                  n.lineno)", "                                  n.lineno,\n"
        "                                  n.filename)")


GO = """package m

func a() {
\tcheck(t,
\t\tresp.Body)
\tcheck(t,
\t\tresp.Header)
}

func b() {
\tcheck(t,
\t\tresp.Body)
}
"""


def test_an_aligned_line_repeats_but_a_line_broken_first_does_not_go():
    after = GO.replace("\tcheck(t,\n\t\tresp.Body)\n\tcheck", "\tcheck(t,\n\t\tresp.Body,\n\t\t\"in a\")\n\tcheck", 1)
    preds = ask(doc("file:///m.go", after, (GO,), (1.0,), grammar="go"), cursor=after.index('"in a")') + 7)
    assert applied(after, preds, "file:///m.go").endswith('\tcheck(t,\n\t\tresp.Body,\n\t\t"in a")\n}\n')
    # ``resp.Body)`` broken onto a new line before ``)``: the site's lines are its own to break
    broken = GO.replace("\t\tresp.Body)\n\tcheck", "\t\tresp.Body,\n\t)\n\tcheck", 1)
    preds = ask(doc("file:///m.go", broken, (GO,), (1.0,), grammar="go"), cursor=broken.index("\t)") + 2)
    assert not any(p.rule == "NE204" and "\n" in p.new_text for p in preds)


def test_a_module_switched_inside_a_path_repeats_under_its_anchor_rust_but_not_an_attribute_python():
    src = ("fn a() -> Vec<u8> {\n    ::std::iter::repeat(0).take(3).collect()\n}\n\n"
           "fn b() -> Vec<u8> {\n    ::std::iter::repeat(1).take(3).collect()\n}\n")
    after = src.replace("::std::iter", "::core::iter", 1)
    preds = ask(doc("file:///lib.rs", after, (src,), (1.0,), grammar="rust"), cursor=after.index("::core") + 6)
    assert applied(after, preds, "file:///lib.rs") == src.replace("::std::iter", "::core::iter")
    py = "def a(x):\n    return x.items.keys()\n\n\ndef b(y):\n    return y.items.keys()\n"
    switched = py.replace("x.items.keys()", "x.values.keys()")
    preds = ask(doc("file:///m.py", switched, (py,), (1.0,)), cursor=switched.index("values") + 6)
    assert not any(p.rule == "NE204" for p in preds)  # an attribute path is the rename rules' (NE201)
