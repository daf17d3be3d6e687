"""Imports that follow the user's edit (``imports``)."""

from __future__ import annotations

from mercury_lsp.next_edit import DocState, NextEditQuery
from mercury_lsp.next_edit.imports import import_edits
from mercury_lsp.next_edit.tree import parse_all
from mercury_lsp.syntax import Grammars

G = Grammars()


def edits(*docs: DocState):
    return import_edits(NextEditQuery(docs, docs[0].uri, 0), parse_all(docs, G), G)


def test_a_name_used_and_imported_elsewhere_is_imported_but_not_a_module_being_typed():
    other = DocState("file:///b.py", "from datetime import datetime\n\nprint(datetime.now())\n", "python", 1)
    src = "import os\n\n\ndef f():\n    return os.getcwd()\n"
    used = src.replace("    return os.getcwd()\n", "    return datetime.now()\n")
    got = edits(DocState("file:///a.py", used, "python", 1, (src,), 1.0, (1.0,)), other)
    assert [(p.new_text, p.start) for p in got if p.new_text] == [("from datetime import datetime\n", len("import os\n"))]
    typing = src.replace("import os\n", "import os\nfrom datetime import\n")
    assert edits(DocState("file:///a.py", typing, "python", 1, (src,), 1.0, (1.0,)), other) == []
