"""NE202 prose-word-rename: a word of a docstring or comment renamed in the rest of it."""

from __future__ import annotations

from tests.support.next_edit import applied, ask, doc


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


def test_a_docstring_rename_two_edits_back_is_still_followed():
    src = ('def sort_together(iterables):\n    """Sort.\n\n        >>> data = [[1, 2], [3, 4]]\n\n'
           '    order of the first iterable only.\n\n        >>> sort_together(data)\n    """\n    return iterables\n')
    one = src.replace(">>> data = [[", ">>> iterables = [[")
    two = one.replace("iterable only.", "iterable only:")
    preds = ask(doc("file:///m.py", two, (one, src), (2.0, 1.0)), cursor=two.index("only:"))
    assert applied(two, preds, "file:///m.py") == two.replace("sort_together(data)", "sort_together(iterables)")


def test_a_doc_comments_first_word_renamed_renames_the_declaration_below():
    """Go: ``// Batch creates ...`` -> ``// Buffer creates ...`` above ``func Batch[T any]`` renames
    the function; Rust ``/// Parse ...`` above ``pub fn parse`` is another word (case), left."""
    go = ("package lo\n\n// Batch creates a slice of n elements from a channel.\n// Returns the slice.\n"
          "func Batch[T any](ch <-chan T, size int) []T {\n\treturn nil\n}\n\nfunc use() {\n\tBatch(nil, 1)\n}\n")
    after = go.replace("// Batch creates", "// Buffer creates")
    preds = [p for p in ask(doc("file:///channel.go", after, (go,), (1.0,), grammar="go")) if p.rule == "NE202"]
    assert applied(after, preds, "file:///channel.go") == after.replace("func Batch[", "func Buffer[")
    rs = "/// Parse reads a version.\npub fn parse(s: &str) -> u8 {\n    0\n}\n"
    after = rs.replace("/// Parse reads", "/// Read reads")
    assert [p for p in ask(doc("file:///v.rs", after, (rs,), (1.0,), grammar="rust")) if p.rule == "NE202"] == []
    rs = "/// Version of the crate.\npub struct Version {\n    major: u8,\n}\n"
    after = rs.replace("/// Version of", "/// Release of")
    preds = [p for p in ask(doc("file:///v.rs", after, (rs,), (1.0,), grammar="rust")) if p.rule == "NE202"]
    assert applied(after, preds, "file:///v.rs") == after.replace("pub struct Version", "pub struct Release")
