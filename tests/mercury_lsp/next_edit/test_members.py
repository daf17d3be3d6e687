"""A renamed member follows only the occurrences tied to its own type once another type declares a
member of the same name (``members``); alone, every ``x.old`` follows as before."""

from __future__ import annotations

from tests.support.next_edit import ask, edited, renamed

GO = '''package toml

type Decoder struct {
	maxNest int
}

type parser struct {
	maxNest int
}

func (d *Decoder) Depth() int {
	return d.maxNest
}

func (p *parser) Depth() int {
	return p.maxNest
}

func New() *Decoder {
	return &Decoder{maxNest: 8}
}
'''


def test_go_field_rename_keeps_another_structs_field():
    after = GO.replace("struct {\n\tmaxNest int", "struct {\n\tmaxDepth int", 1)
    got = renamed(after, ask(edited("file:///d.go", after, (GO,), "go")))
    assert "return d.maxDepth" in got
    assert "&Decoder{maxDepth: 8}" in got  # a struct literal's key is the field's name too
    assert "maxNest int" in got and "return p.maxNest" in got  # parser's own field


def test_go_field_rename_alone_reaches_every_selector_and_literal_key():
    before = GO.replace("type parser struct {\n\tmaxNest int\n}\n\n", "").replace(
        "func (p *parser) Depth() int {\n\treturn p.maxNest\n}\n\n", "")
    before += "\nfunc use(x *Decoder) int {\n\treturn x.maxNest\n}\n"
    after = before.replace("maxNest int", "maxDepth int")
    got = renamed(after, ask(edited("file:///d.go", after, (before,), "go")))
    assert "maxNest" not in got


PY = '''class Base:
    def __init__(self):
        self.count = 0

    def bump(self):
        self.count += 1


class Child(Base):
    def show(self):
        return self.count


class Other:
    def __init__(self):
        self.count = 5

    def show(self):
        return self.count
'''


def test_python_attribute_rename_follows_class_and_subclass_not_a_namesake():
    after = PY.replace("self.count = 0", "self.total = 0")
    got = renamed(after, ask(edited("file:///m.py", after, (PY,))))
    assert "self.total += 1" in got
    assert got.count("return self.total") == 1  # Child's
    assert "self.count = 5" in got and got.count("return self.count") == 1  # Other's own


RUST = '''struct Config {
    name: String,
}

struct Other {
    name: String,
}

impl Config {
    fn new() -> Config {
        Config { name: String::new() }
    }

    fn get(&self) -> &str {
        &self.name
    }
}

impl Other {
    fn get(&self) -> &str {
        &self.name
    }
}
'''


def test_rust_field_rename_follows_impl_and_literal_not_another_struct():
    after = RUST.replace("struct Config {\n    name", "struct Config {\n    title", 1)
    got = renamed(after, ask(edited("file:///c.rs", after, (RUST,), "rust")))
    assert "Config { title: String::new() }" in got
    assert got.count("&self.title") == 1
    assert "struct Other {\n    name: String" in got and got.count("&self.name") == 1


JS = '''class Queue {
  constructor() {
    this.size = 0;
  }

  push() {
    this.size += 1;
  }
}

class Stack {
  constructor() {
    this.size = 0;
  }

  peek() {
    return this.size;
  }
}
'''


def test_javascript_property_rename_keeps_another_class_own_property():
    after = JS.replace("this.size = 0;", "this.length = 0;", 1)
    got = renamed(after, ask(edited("file:///q.js", after, (JS,), "javascript")))
    assert "this.length += 1;" in got
    assert "return this.size;" in got and got.count("this.size = 0;") == 1


def test_interface_member_rename_is_not_restricted():
    before = '''interface Shape {
  area(): number;
}

class Square implements Shape {
  area(): number {
    return 1;
  }
}

function total(s: Shape): number {
  return s.area();
}
'''
    after = before.replace("  area(): number;", "  surface(): number;")
    got = renamed(after, ask(edited("file:///s.ts", after, (before,), "typescript")))
    assert "s.surface()" in got
