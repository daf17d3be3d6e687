"""NE505 line-leftover: a value renamed in the line just edited takes its keyword with it."""

from __future__ import annotations

from mercury_lsp.next_edit.rules.complete import line_leftover
from tests.support import next_edit as ne

PY = "class Mailer:\n    def send(self, name):\n        return name\n\n    def run(self, name):\n        self.send(name=name)\n"


def edits(*docs):
    return ne.rule_edits(line_leftover.RULE, *docs)


def test_a_keyword_follows_its_value_when_the_called_function_has_the_new_parameter():
    renamed = PY.replace("def send(self, name):\n        return name", "def send(self, label):\n        return label")
    after = renamed.replace("self.send(name=name)", "self.send(name=label)")
    d = ne.doc("file:///m.py", after, (renamed, PY), (2.0, 1.0))
    assert ne.applied(after, edits(d), d.uri) == after.replace("self.send(name=label)", "self.send(label=label)")


def test_a_keyword_stays_when_the_function_still_takes_the_old_name():
    after = PY.replace("self.send(name=name)", "self.send(name=label)")
    d = ne.doc("file:///m.py", after, (PY,), (1.0,))
    assert edits(d) == []


RS = "struct Mail {\n    label: String,\n}\n\nfn make(label: String) -> Mail {\n    Mail { name: name }\n}\n"


def test_a_rust_field_initializer_becomes_the_shorthand_of_the_renamed_field():
    after = RS.replace("Mail { name: name }", "Mail { name: label }")
    d = ne.doc("file:///m.rs", after, (RS,), (1.0,), grammar="rust")
    assert ne.applied(after, edits(d), d.uri) == after.replace("Mail { name: label }", "Mail { label }")


def test_a_parameter_renamed_by_a_recent_edit_is_evidence_enough():
    src = ("class Mail:\n    def __init__(self, name):\n        self.to = name\n\n\n"
           "def make(name):\n    return Mail(name=name)\n")
    renamed = src.replace("def __init__(self, name):", "def __init__(self, label):")
    after = renamed.replace("return Mail(name=name)", "return Mail(name=label)")
    d = ne.doc("file:///m.py", after, (renamed, src), (2.0, 1.0))
    assert ne.applied(after, edits(d), d.uri) == after.replace("Mail(name=label)", "Mail(label=label)")


def test_an_object_key_with_no_owner_in_view_stays():
    src = "function send(opts) {\n  post({name: name, body: opts.body})\n}\n"
    typed = src.replace("post({name: name", "post({name: label")
    d = ne.doc("file:///a.js", typed, (src,), (1.0,), grammar="javascript")
    assert edits(d) == []
