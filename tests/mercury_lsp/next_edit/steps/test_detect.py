"""What changed (``steps.detect``): a renamed identifier, every grammar's signatures."""

from __future__ import annotations

import pytest

from mercury_lsp.next_edit import (
    DocState,
    identifier_change,
)
from mercury_lsp.next_edit.steps.detect import signatures
from mercury_lsp.next_edit.tree import parse_all
from mercury_lsp.syntax import Grammars

G = Grammars()


def sigs(grammar: str, src: str) -> dict[tuple[str, str], tuple]:
    parsed, = parse_all([DocState(f"file:///a.{grammar}", src, grammar, 1)], G)
    return {k: (s.params, s.splat) for k, s in signatures(parsed, G).items()}


@pytest.mark.parametrize(("grammar", "src", "want"), [
    ("go", "package p\nfunc (s *Srv) Route(header, match string, h func(next int) int) error { return nil }\n"
           "func Log(format string, args ...any) {}\n",
     {("Srv", "Route"): ((("header", False), ("match", False), ("h", False)), False),
      ("", "Log"): ((("format", False), ("args ...any", False)), True)}),
    ("rust", "struct Job;\nimpl Job {\n    fn generate<'a>(&self, mut command: &'a mut String, input: &Path) -> u8 { 0 }\n"
             "    fn new(size: usize) -> Job { Job }\n}\nfn free((a, b): (u8, u8)) {}\n",
     {("Job", "generate"): ((("command", False), ("input", False)), False),
      ("Job", "new"): ((("size", False),), False),
      ("", "free"): ((("(a, b): (u8, u8)", False),), False)}),
    ("typescript", "function get(url: string, timeout: number = 1, retry?: boolean, cb: (x: number) => void) {}\n"
                   "class Ky { send(body: string, ...rest: string[]) {} }\nconst add = (a: number, b: number) => a + b;\n",
     {("", "get"): ((("url", False), ("timeout", True), ("retry", True), ("cb", False)), False),
      ("Ky", "send"): ((("body", False), ("...rest: string[]", False)), True),
      ("", "add"): ((("a", False), ("b", False)), False)}),
    ("tsx", "function Row(props: Props, key = 0) { return <div />; }\n",
     {("", "Row"): ((("props", False), ("key", True)), False)}),
    ("javascript", "function wrap(text, width = 80, {indent}) {}\nconst log = function (msg) {};\n"
                   "class Command { option(flags, description) {} }\nCommand.prototype.help = function (cb) {};\n",
     {("", "wrap"): ((("text", False), ("width", True), ("{indent}", False)), False),
      ("", "log"): ((("msg", False),), False),
      ("Command", "option"): ((("flags", False), ("description", False)), False),
      ("Command.prototype", "help"): ((("cb", False),), False)}),
    ("python", "class A:\n    def m(self, a, b=1):\n        pass\n\n    @staticmethod\n    def s(a, *, k):\n        pass\n\n"
               "def f(a, *args: int, **kw):\n    pass\n",
     {("A", "m"): ((("a", False), ("b", True)), False), ("A", "s"): ((("a", False), ("k", False)), False),
      ("", "f"): ((("a", False), ("*args: int", False), ("**kw", False)), True)}),
    ("java", "class K { int m(int a, String b) { return 0; } K(int size) {} }\n",
     {("K", "m"): ((("a", False), ("b", False)), False), ("K", "K"): ((("size", False),), False)}),
    ("c", "int f(int a, char *b) { return 0; }\nint v(const char *fmt, ...) { return 0; }\n",
     {("", "f"): ((("a", False), ("b", False)), False), ("", "v"): ((("fmt", False), ("...", False)), True)}),
])
def test_signatures_in_every_grammar(grammar, src, want):
    assert sigs(grammar, src) == want


def test_a_function_defined_twice_is_ambiguous():
    got = sigs("typescript", "function f(a: string): void;\nfunction f(a: string) {}\nfunction f(a: number) {}\n")
    assert got[("", "f")] == ((), True)


def test_identifier_change_finds_the_whole_identifier():
    assert identifier_change("x = width + 1", "x = w + 1") == (4, "width", "w")
    assert identifier_change("x = width + 1", "x = widths + 1") == (4, "width", "widths")
    assert identifier_change("x = 1", "x = 2") is None
    assert identifier_change("a = b", "a = if") is None  # a keyword is no identifier
