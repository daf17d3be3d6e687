"""NE113 named-fields: a tuple type given named fields takes its positional uses with it."""

from __future__ import annotations

from mercury_lsp.next_edit.rules.follow import named_fields
from tests.support import next_edit as ne


def edits(*docs):
    return ne.rule_edits(named_fields.RULE, *docs)


RS = """struct Span(usize, usize);

impl Span {
    fn len(&self) -> usize {
        self.1 - self.0
    }
}

fn make(start: usize, n: usize) -> Span {
    Span(start, start + n)
}

fn first(s: &Span, t: (usize, usize)) -> usize {
    let Span(a, _b) = s;
    s.0 + t.0 + a
}
"""


def test_a_tuple_struct_given_names_takes_its_positions_with_it():
    after = RS.replace("struct Span(usize, usize);", "struct Span {\n    start: usize,\n    end: usize,\n}")
    d = ne.doc("file:///span.rs", after, (RS,), (1.0,), grammar="rust")
    out = ne.applied(after, edits(d), d.uri)
    assert "        self.end - self.start\n" in out
    assert "    Span { start, end: start + n }\n" in out
    assert "    let Span { start: a, end: _b } = s;\n    s.start + t.0 + a\n" in out  # a tuple's .0 stays


def test_a_struct_that_was_named_already_or_changed_its_arity_is_not_this_rule_s():
    named = RS.replace("struct Span(usize, usize);", "struct Span {\n    start: usize,\n    end: usize,\n}")
    after = named.replace("    end: usize,\n", "    end: usize,\n    step: usize,\n")
    d = ne.doc("file:///span.rs", after, (named,), (1.0,), grammar="rust")
    assert edits(d) == []
    three = RS.replace("struct Span(usize, usize);", "struct Span {\n    start: usize,\n    end: usize,\n    step: usize,\n}")
    d = ne.doc("file:///span.rs", three, (RS,), (1.0,), grammar="rust")
    assert edits(d) == []


TS = """type Pair = [string, number];

function label(p: Pair): string {
  return p[0] + ": " + p[1];
}

function other(q: string[]): string {
  return q[0];
}
"""


def test_a_typescript_tuple_type_given_names_turns_indexes_into_fields():
    after = TS.replace("type Pair = [string, number];", "type Pair = { name: string; count: number };")
    d = ne.doc("file:///pair.ts", after, (TS,), (1.0,), grammar="typescript")
    out = ne.applied(after, edits(d), d.uri)
    assert '  return p.name + ": " + p.count;\n' in out
    assert "  return q[0];\n" in out
