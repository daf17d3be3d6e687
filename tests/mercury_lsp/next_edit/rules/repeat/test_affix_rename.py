"""NE203 affix-rename: a definition renamed by dropping a prefix renames its siblings."""

from __future__ import annotations

from tests.support.next_edit import applied, ask, doc


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
