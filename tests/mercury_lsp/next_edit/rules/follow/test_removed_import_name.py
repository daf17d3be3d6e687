"""NE106 removed-import-name: a deleted name leaves the other documents' import lists."""

from __future__ import annotations

from mercury_lsp.next_edit import DocState, NextEditQuery, predict
from mercury_lsp.syntax import Grammars

G = Grammars()


def doc(uri: str, text: str, history: tuple[str, ...] = (), grammar="go") -> DocState:
    return DocState(uri, text, grammar, 1, history, 1.0 if history else 0.0, (1.0,) * len(history))


def ask(*docs: DocState):
    return predict(NextEditQuery(docs, docs[0].uri, 0), None, G).predictions


def test_a_deleted_interface_leaves_the_import_lists_of_the_other_documents():
    src = "export interface Ky {\n\textend(options: Options): Ky;\n}\n\ndeclare const ky: Ky;\nexport default ky;\n"
    after = src.replace("export interface Ky {\n\textend(options: Options): Ky;\n}\n\ndeclare const ky: Ky;\n",
                        "declare const ky: {\n\textend(options: Options): typeof ky;\n};\n")
    test = "import ky, {Ky, HTTPError} from '.';\n\nexpectType<typeof ky>(ky);\n"
    preds = ask(doc("file:///index.d.ts", after, (src,), grammar="typescript"),
                doc("file:///index.test-d.ts", test, grammar="typescript"))
    assert [(p.uri, p.old_text, p.new_text) for p in preds] == [("file:///index.test-d.ts", "Ky, ", "")]
