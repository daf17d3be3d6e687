"""NE303 superseded-line: a line written again next to its old version: the old one goes."""

from __future__ import annotations

from tests.support.next_edit import applied, ask, doc, renamed, run


def test_a_doctest_line_written_again_next_to_its_old_version_leaves_the_old_one_to_delete():
    src = '    """\n        >>> f = open(path)\n        >>> after = lambda: f.close()\n    """\n'
    after = src.replace("        >>> after = lambda", "        >>> after = f.close\n        >>> after = lambda")
    preds = ask(doc("file:///d.py", after, (src,), (1.0,)), cursor=after.index("f.close\n") + 7)
    assert applied(after, preds, "file:///d.py") == src.replace("lambda: f.close()", "f.close")


def test_a_line_written_again_supersedes_its_old_version_in_the_same_block_only():
    src = "setup(\n    name='x',\n    version='0.24',\n    zip_safe=False,\n)\n"
    after = src.replace("    name='x',\n", "    name='x',\n    version=version,\n")
    out, _ = run(after, src)
    assert renamed(after, out.predictions) == after.replace("    version='0.24',\n", "")
    assert out.predictions[0].old_text == "    version='0.24',\n"
    # the same local in the function above is another statement; an in-place edit supersedes nothing
    src = "def a():\n    key = 1\n    return key\n\n\ndef b():\n    return 2\n"
    after = src.replace("def b():\n", "def b():\n    key = 2\n")
    assert run(after, src)[0].predictions == []
    assert run(src.replace("key = 1", "key = 3"), src)[0].predictions == []
