"""Repeated edits learnt from the recent history (``examples``, ``repeat``, ``rules``; whole lines
repeated and moved: ``test_line_repeat``), on small cases shaped like the real-history benchmark's,
plus their bad input:
histories that do not chain, binary and huge documents, a cursor outside the document."""

from __future__ import annotations

from mercury_lsp.next_edit import DocState, NextEditQuery, apply_edits, predict
from mercury_lsp.next_edit.examples import recent_edits, to_current
from mercury_lsp.next_edit.rules.repeat.tokens import EOL, WILD, generalise, rules_from_edit
from mercury_lsp.syntax import Grammars

G = Grammars()


def doc(uri: str, text: str, history: tuple[str, ...] = (), times: tuple[float, ...] = (), grammar="python"):
    return DocState(uri, text, grammar, 1, history, max(times, default=0.0), times)


def ask(*docs: DocState, cursor_uri: str | None = None, cursor: int = 0):
    q = NextEditQuery(docs, cursor_uri or docs[0].uri, cursor)
    return predict(q, None, G).predictions


def applied(text: str, preds, uri: str) -> str:
    return apply_edits(text, [(p.start, p.end, p.new_text) for p in preds if p.uri == uri])


# ---------------------------------------------------------------------------- examples
def test_recent_edits_are_ordered_by_record_time_across_documents():
    a0, a1, a2 = "v = 1\n", "v = 2\n", "v = 2\nw = 3\n"
    b0, b1 = "x = 1\n", "x = 5\n"
    a = doc("file:///a.py", a2, (a1, a0), (3.0, 1.0))
    b = doc("file:///b.py", b1, (b0,), (2.0,))
    got = recent_edits(NextEditQuery((a, b), a.uri, 0), 3)
    assert [(e.doc.uri, e.before, e.after, e.age) for e in got] == [
        (a.uri, a1, a2, 0), (b.uri, b0, b1, 1), (a.uri, a0, a1, 2)]


def test_an_offset_of_an_older_record_follows_the_newer_records():
    a0, a1, a2 = "aa\nbb\ncc\n", "aa\nBB\ncc\n", "zz\naa\nBB\ncc\n"
    ex = recent_edits(NextEditQuery((doc("file:///a.py", a2, (a1, a0), (2.0, 1.0)),), "file:///a.py", 0), 2)[1]
    assert ex.after == a1
    assert to_current(ex, a1.index("BB")) == a2.index("BB")
    rewritten = recent_edits(NextEditQuery((doc("file:///a.py", "aa\nCC\ncc\n", (a1, a0), (2.0, 1.0)),),
                                           "file:///a.py", 0), 2)[1]
    assert to_current(rewritten, a1.index("BB") + 1) is None  # a newer record rewrote that place


# ---------------------------------------------------------------------------- token rules
def test_examples_that_differ_in_an_identifier_generalise_to_a_wildcard():
    src = ("try:\n    f()\nexcept BadSignature, e:\n    pass\ntry:\n    g()\nexcept Exception, e:\n    pass\n"
           "try:\n    h()\nexcept ValueError, e:\n    pass\n")
    one = src.replace("except BadSignature, e:", "except BadSignature as e:")
    two = one.replace("except Exception, e:", "except Exception as e:")
    rule, = generalise(rules_from_edit(one, two), rules_from_edit(src, one))
    assert rule.lead == ("except", WILD) and rule.trail == ("e", ":")
    preds = ask(doc("file:///a.py", two, (one, src), (2.0, 1.0)))
    assert applied(two, preds, "file:///a.py") == two.replace("except ValueError, e:", "except ValueError as e:")


def test_one_example_does_not_abstract_its_anchor():
    """``import fetch from`` gaining ``, {Headers}`` is not a change for every ``import x from``."""
    src = "import test from 'ava';\nimport delay from 'delay';\nimport fetch from 'node-fetch';\n"
    after = src.replace("import fetch from", "import fetch, {Headers} from")
    assert ask(doc("file:///t.js", after, (src,), (1.0,), grammar="javascript")) == []


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


# ---------------------------------------------------------------------------- bad input
def test_histories_that_do_not_chain_give_no_crash_and_no_overlaps():
    src = "x = compute(1)\ny = compute(1)\nprint('debugging here')\nz = 2\nprint('debugging here')\n"
    after = src.replace("x = compute(1)", "x = compute(2)").replace("print('debugging here')\n", "", 1)
    other = doc("file:///b.py", "print('debugging here')\n", ("unrelated\n", ""), (5.0, 9.0))
    for history, times in (((src, "unrelated = 1\n"), (2.0, 1.0)), ((after, after), (1.0, 1.0)), (("",), (1.0,)),
                           ((src, src), (3.0, 3.0)), ((src,), ())):
        preds = ask(doc("file:///a.py", after, history, times), other, cursor=len(after) + 50)
        for uri, text in (("file:///a.py", after), ("file:///b.py", other.text)):
            spans = sorted((p.start, p.end) for p in preds if p.uri == uri)
            assert all(e0 <= s1 for (_, e0), (s1, _) in zip(spans, spans[1:], strict=False))
            assert all(0 <= s <= e <= len(text) for s, e in spans)


def test_binary_and_huge_documents_give_no_line_repeats():
    binary = "\x00\x01ID\x00garbage line here\x00\n" * 50
    assert ask(doc("file:///a.py", binary[40:], (binary,), (1.0,))) == []
    huge_src = "    log.debug('value')\n" * 60_000  # ~1.4 MB: the deleted line stands everywhere
    huge = huge_src.replace("    log.debug('value')\n", "", 1)
    assert ask(doc("file:///a.py", huge, (huge_src,), (1.0,))) == []


# ---------------------------------------------------------------------------- history-read lines
def test_a_half_typed_line_is_finished_like_the_lines_that_start_the_same_way():
    src = ("export type BeforeError = {\n\tresponse: Response;\n\toptions: Options;\n};\n\n"
           "export type BeforeRetry = {\n\trequest: Request;\n\toptions: Options;\n};\n\n"
           "export function f(request: Request, init: Init) {}\n\n"
           "export type AfterResponse = {\n\toptions: Options;\n};\n")
    after = src.replace("export type AfterResponse = {\n", "export type AfterResponse = {\n\trequest:\n")
    cursor = after.index("\trequest:\n\toptions") + len("\trequest:")
    preds = ask(doc("file:///h.ts", after, (src,), (1.0,), grammar="typescript"), cursor=cursor)
    assert [(p.start, p.new_text, p.kind) for p in preds] == [(cursor, " Request;", "complete")]


def test_a_renamed_parameter_is_followed_past_comment_lines_that_change_other_words():
    src = ("def _sorted_window(iterator, k):\n    # two O(k) steps\n    window = []\n"
           "    if len(window) > k:\n        pass\n")
    one = src.replace("iterator, k)", "iterator, maxlen)")
    two = one.replace("O(k)", "O(n)")
    preds = ask(doc("file:///r.py", two, (one, src), (2.0, 1.0)), cursor=two.index("O(n)"))
    assert applied(two, preds, "file:///r.py") == two.replace("> k:", "> maxlen:")


# ---------------------------------------------------------------------------- prose renames
def test_a_word_renamed_in_a_docstring_follows_in_the_rest_of_that_docstring():
    src = ('def sort_together(iterables, key_list=(0,)):\n    """Sort.\n\n        >>> data = [[1, 2], [3, 4]]\n'
           '        >>> sort_together(data, key_list=(0,))\n        [(1, 2)]\n\n    More text.\n\n'
           '        >>> sort_together(data)\n    """\n    data = 1\n    return data\n')
    after = src.replace(">>> data = [[", ">>> iterables = [[")
    preds = ask(doc("file:///m.py", after, (src,), (1.0,)), cursor=after.index("iterables = [["))
    assert applied(after, preds, "file:///m.py") == after.replace("sort_together(data", "sort_together(iterables")


def test_a_prose_word_changed_to_a_word_the_code_does_not_use_is_not_followed():
    src = '"""A guide.\n\nUse that command, then that one.\n"""\n\nx = 1\n'
    after = src.replace("Use that command", "Use a command")
    assert ask(doc("file:///g.py", after, (src,), (1.0,)), cursor=after.index("a command")) == []


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


def test_a_docstring_rename_two_edits_back_is_still_followed():
    src = ('def sort_together(iterables):\n    """Sort.\n\n        >>> data = [[1, 2], [3, 4]]\n\n'
           '    order of the first iterable only.\n\n        >>> sort_together(data)\n    """\n    return iterables\n')
    one = src.replace(">>> data = [[", ">>> iterables = [[")
    two = one.replace("iterable only.", "iterable only:")
    preds = ask(doc("file:///m.py", two, (one, src), (2.0, 1.0)), cursor=two.index("only:"))
    assert applied(two, preds, "file:///m.py") == two.replace("sort_together(data)", "sort_together(iterables)")


def test_a_member_renamed_at_its_uses_is_renamed_where_another_document_declares_it():
    main0 = 'package main\n\nfunc main() {\n\th := chi.WithBaseContext(r, ctx)\n\t_ = h\n}\n'
    main1 = main0.replace("chi.WithBaseContext", "chi.ServerBaseContext")
    ctx = ("package chi\n\n// WithBaseContext wraps an http.Handler.\nfunc WithBaseContext(h Handler, ctx Context) Handler {\n"
           "\treturn h\n}\n")
    preds = ask(doc("file:///main.go", main1, (main0,), (1.0,), grammar="go"),
                doc("file:///context.go", ctx, grammar="go"))
    assert applied(ctx, preds, "file:///context.go") == ctx.replace("WithBaseContext", "ServerBaseContext")


def test_a_name_renamed_by_dropping_a_prefix_renames_its_siblings_under_the_same_anchor():
    src = ("package cobra\n\nfunc (c *Command) getOutOrStdout() io.Writer {\n\treturn c.out\n}\n\n"
           "func (c *Command) getOutOrStderr() io.Writer {\n\treturn c.err\n}\n\nfunc (c *Command) getName() string {\n"
           "\treturn c.name\n}\n\nfunc (c *Command) getOutOrStdin() {\n}\n")
    after = src.replace("getOutOrStdout()", "OutOrStdout()")
    preds = ask(doc("file:///command.go", after, (src,), (1.0,), grammar="go"), cursor=after.index("OutOrStdout"))
    got = applied(after, preds, "file:///command.go")
    assert "func (c *Command) OutOrStderr() io.Writer {" in got and "getName() string" in got  # another anchor
    assert "func (c *Command) getOutOrStdin() {" in got  # the trail differs: not a sibling


def test_a_prefix_added_to_one_parameter_or_method_is_no_convention_for_its_siblings():
    src = ("class T:\n    def inc(self, stmt, number):\n        return stmt\n\n"
           "    def dec(self, setup, number):\n        return setup\n")
    for old, new in (("stmt, number", "new_stmt, number"), ("def inc(", "def new_inc(")):
        after = src.replace(old, new, 1)
        preds = ask(doc("file:///t.py", after, (src,), (1.0,)), cursor=after.index("new_"))
        assert "new_setup" not in applied(after, preds, "file:///t.py")
        assert "def new_dec" not in applied(after, preds, "file:///t.py")


def test_a_renamed_binding_is_no_new_value_to_name_elsewhere():
    src = "def f():\n    transport = mock.Mock()\n    other = mock.Mock()\n    return transport, other\n"
    after = src.replace("    transport = mock.Mock()", "    new_transport = mock.Mock()")
    preds = ask(doc("file:///t.py", after, (src,), (1.0,)), cursor=after.index("new_transport"))
    assert "other = mock.Mock()" in applied(after, preds, "file:///t.py")


def test_an_insertion_using_a_local_of_its_function_is_not_repeated_where_the_name_is_unknown():
    src = ("export class Ky {\n\tconstructor() {\n\t\tconst originalSignal = this.options.signal;\n"
           "\t\tsignal.addEventListener('abort', () => {\n\t\t\tthis.abortController.abort();\n\t\t});\n\t}\n}\n")
    after = src.replace("abortController.abort();", "abortController.abort(originalSignal.reason);")
    other = "export function stop(controller) {\n\tcontroller.abortController.abort();\n}\n"
    preds = ask(doc("file:///Ky.ts", after, (src,), (1.0,), grammar="typescript"),
                doc("file:///stop.ts", other, grammar="typescript"))
    assert [p for p in preds if p.uri == "file:///stop.ts"] == []



# ---------------------------------------------------------------------------- precision (round 6)
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


def test_a_keyword_swapped_is_no_rename_of_the_keyword_everywhere():
    body = "function f{n}(xs) {{\n  for (const x of xs) {{\n    if (!x) {{\n      return;\n    }}\n    use(x);\n  }}\n}}\n\n"
    src = "".join(body.format(n=n) for n in range(4))
    at = src.index("return;")
    after = src[:at] + "continue;" + src[at + len("return;"):]
    preds = ask(doc("file:///i.js", after, (src,), (1.0,), grammar="javascript"), cursor=at)
    assert not [p for p in preds if p.kind == "rename"]
    assert len([p for p in preds if p.new_text == "continue"]) <= 1  # at most the next place, as a guess
