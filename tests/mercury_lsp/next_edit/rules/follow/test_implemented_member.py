"""NE112 implemented-member: a member added to an interface gets a stub in each implementation."""

from __future__ import annotations

from mercury_lsp.next_edit.rules.follow import implemented_member
from tests.support import next_edit as ne


def edits(*docs):
    return ne.rule_edits(implemented_member.RULE, *docs)


SINK = "pub trait Sink {\n    fn write(&mut self, buf: &[u8]) -> io::Result<usize>;\n}\n"
FILE_SINK = ("use crate::sink::Sink;\n\npub struct FileSink;\n\nimpl Sink for FileSink {\n"
             "    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {\n        Ok(buf.len())\n    }\n}\n\n"
             "struct Null;\n\nimpl crate::sink::Sink for Null {}\n\nimpl Drop for Null {\n    fn drop(&mut self) {}\n}\n")


def test_a_trait_method_gets_a_todo_in_every_impl_of_the_trait():
    after = SINK.replace("usize>;\n}", "usize>;\n    fn flush(&mut self) -> io::Result<()>;\n}")
    d = ne.doc("file:///src/sink.rs", after, (SINK,), (1.0,), grammar="rust")
    files = ne.doc("file:///src/file.rs", FILE_SINK, grammar="rust")
    out = ne.applied(FILE_SINK, edits(d, files), files.uri)
    assert ("        Ok(buf.len())\n    }\n\n    fn flush(&mut self) -> io::Result<()> {\n        todo!()\n    }\n}"
            in out)
    assert "impl crate::sink::Sink for Null {\n    fn flush(&mut self) -> io::Result<()> {\n        todo!()\n    }\n}" in out
    assert "impl Drop for Null {\n    fn drop(&mut self) {}\n}" in out


GO_STORE = "package store\n\ntype Store interface {\n\tGet(key string) (string, error)\n}\n"
GO_MEM = ("package store\n\nvar _ Store = (*memStore)(nil)\n\ntype memStore struct{ m map[string]string }\n\n"
          "func (s *memStore) Get(key string) (string, error) {\n\treturn s.m[key], nil\n}\n\n"
          "type other struct{}\n\nfunc (o other) Close() error { return nil }\n")


def test_a_go_interface_method_reaches_the_types_whose_methods_cover_the_others():
    after = GO_STORE.replace("error)\n}", "error)\n\tPut(key, value string) error\n}")
    d = ne.doc("file:///store/store.go", after, (GO_STORE,), (1.0,), grammar="go")
    mem = ne.doc("file:///store/mem_test.go", GO_MEM, grammar="go")
    out = ne.applied(GO_MEM, edits(d, mem), mem.uri)
    assert ("return s.m[key], nil\n}\n\nfunc (s *memStore) Put(key, value string) error {\n"
            "\tpanic(\"unimplemented\")\n}\n") in out
    assert out.count("unimplemented") == 1  # 'other' implements nothing of Store
    unnamed = GO_MEM.replace("var _ Store = (*memStore)(nil)\n\n", "")
    mem = ne.doc("file:///store/mem_test.go", unnamed, grammar="go")
    assert edits(d, mem) == []  # one method in common ('Get') and no word of Store: no evidence


TS = ("export interface Store {\n  get(key: string): string;\n}\n\n"
      "export class Mem implements Store {\n  get(key: string): string {\n    return \"\";\n  }\n}\n")


def test_a_typescript_interface_method_and_an_abstract_method_get_stubs():
    after = TS.replace("string;\n}", "string;\n  put(key: string, value: string): void;\n}")
    d = ne.doc("file:///store.ts", after, (TS,), (1.0,), grammar="typescript")
    out = ne.applied(after, edits(d), d.uri)
    assert ("    return \"\";\n  }\n\n  put(key: string, value: string): void {\n"
            "    throw new Error(\"Method not implemented.\");\n  }\n}") in out


PY = ("class Store(ABC):\n    @abstractmethod\n    def get(self, key: str) -> str:\n        ...\n\n\n"
      "class Mem(Store):\n    def get(self, key: str) -> str:\n        return ''\n\n\nclass Other:\n    pass\n")


def test_a_python_abstract_method_gets_a_stub_in_the_subclasses():
    after = PY.replace("        ...\n\n\nclass Mem", "        ...\n\n    @abstractmethod\n    def put(self, key: str, "
                       "value: str) -> None:\n        ...\n\n\nclass Mem")
    d = ne.doc("file:///store.py", after, (PY,), (1.0,))
    out = ne.applied(after, edits(d), d.uri)
    assert ("        return ''\n\n    def put(self, key: str, value: str) -> None:\n"
            "        raise NotImplementedError\n\n\nclass Other:") in out


def test_a_method_with_a_default_body_needs_no_stub():
    after = SINK.replace("usize>;\n}", "usize>;\n    fn flush(&mut self) -> io::Result<()> {\n        Ok(())\n    }\n}")
    d = ne.doc("file:///src/sink.rs", after, (SINK,), (1.0,), grammar="rust")
    files = ne.doc("file:///src/file.rs", FILE_SINK, grammar="rust")
    assert edits(d, files) == []
