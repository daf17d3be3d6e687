"""``WorkspaceFiles.extend``: the workspace files that mention what the edit changed join the query,
of the edited document's grammar or of its family (a TypeScript edit reaches JavaScript importers)."""

from __future__ import annotations

import subprocess

from benchmarks.refactor.cases import GIT
from mercury_lsp.next_edit import DocState, NextEditQuery
from mercury_lsp.refactor.workspace import WorkspaceFiles


def test_a_typescript_edit_reads_the_javascript_and_tsx_files_that_mention_it(tmp_path):
    files = {"src/atom.ts": "export function atom() {}\n", "lib/use.js": "const { atom } = require('../src/atom')\n",
             "ui/View.tsx": "import { atom } from '../src/atom'\n", "app.py": "atom = 1\n",
             "other.js": "const unrelated = 2\n"}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run([*GIT, "-C", str(tmp_path), "add", "-A"], check=True)
    home = (tmp_path / "src/atom.ts").as_uri()
    edited = DocState(home, "export function createAtom() {}\n", "typescript", 2, (files["src/atom.ts"],), 1.0)
    got = WorkspaceFiles().extend(NextEditQuery((edited,), home, 0), [tmp_path], limit=10)
    assert sorted(d.uri.rsplit("/", 2)[-2] + "/" + d.uri.rsplit("/", 1)[-1] for d in got.docs[1:]) == [
        "lib/use.js", "ui/View.tsx"]
