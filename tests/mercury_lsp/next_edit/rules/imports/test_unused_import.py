"""NE401 unused-import: an import whose last use the edit rewrote goes."""

from __future__ import annotations

from mercury_lsp.next_edit import (
    DocState,
)
from tests.support.next_edit import renamed, run


def test_an_import_whose_last_use_the_edit_rewrote_goes_and_a_missing_one_is_copied():
    src = "package p\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc f() string {\n\treturn fmt.Sprint(os.Args)\n}\n"
    after = src.replace("fmt.Sprint(os.Args)", "os.Args[0]")
    out, _ = run(after, src, uri="file:///a.go")
    assert [(p.old_text, p.new_text, p.kind) for p in out.predictions] == [("\t\"fmt\"\n", "", "import")]
    other = DocState("file:///b.go", "package p\n\nimport (\n\t\"net/http\"\n)\n", "go", 1)
    after = src.replace("return fmt.Sprint(os.Args)", "return fmt.Sprint(os.Args, http.StatusOK)")
    out, _ = run(after, src, other, uri="file:///a.go")
    assert [(p.new_text, p.kind) for p in out.predictions] == [("\t\"net/http\"\n", "import")]
    assert renamed(after, out.predictions).count('"net/http"') == 1
