"""The refactor CLI's persistent word index (``refactor.index``): it selects every file that
mentions a word (never fewer than reading them all would), re-reads only what changed, passes
unindexable files through to the reader, survives a broken database, and leaves the CLI's
output as it was."""

from __future__ import annotations

import json
import os

from mercury_lsp.refactor.index import RACY_NS, WordIndex, index_path, select_files


def settle(*paths) -> None:
    """Date files back past the racy window, as if written a while ago."""
    for p in paths:
        t = p.stat().st_mtime_ns - 2 * RACY_NS
        os.utime(p, ns=(t, t))


def tree(tmp_path):
    files = {"a.py": "def render(x):\n    return x\n", "b.py": "from a import render\nrender(1)\n",
             "c.py": "value = 3  # renders nothing\n", "d.md": "Call `render` to draw.\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "e.bin").write_bytes(b"render\0\x01")
    paths = sorted(p.resolve() for p in tmp_path.iterdir())
    settle(*paths)
    return paths


def names(paths) -> list[str]:
    return [p.name for p in paths]


def test_the_index_selects_the_files_that_mention_a_word_and_rereads_only_changes(tmp_path):
    files = tree(tmp_path)
    got, stats = select_files(tmp_path, files, {"render"})
    assert names(got) == ["a.py", "b.py", "d.md", "e.bin"]  # 'renders' is another word; binary passes
    assert (stats.read, stats.selected) == (5, 4)
    got, stats = select_files(tmp_path, files, {"render"})
    assert names(got) == ["a.py", "b.py", "d.md", "e.bin"] and stats.read == 0  # nothing changed
    (tmp_path / "c.py").write_text("value = render(3)\n")
    got, stats = select_files(tmp_path, files, {"render"})
    assert "c.py" in names(got) and stats.read == 1
    (tmp_path / "b.py").unlink()
    got, _ = select_files(tmp_path, files, {"render"})
    assert "b.py" in names(got)  # gone since: the reader says so


def test_a_file_written_just_now_is_read_again_next_time(tmp_path):
    f = tmp_path / "a.py"
    f.write_text("x = 1\n")
    files = [f.resolve()]
    assert select_files(tmp_path, files, {"y"})[0] == []
    st = f.stat()
    f.write_text("y = 1\n")  # same size; the clock may not have moved
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert select_files(tmp_path, files, {"y"})[0] == files  # racy when indexed: read again


def test_a_broken_index_is_rebuilt(tmp_path):
    files = tree(tmp_path)
    db = index_path(tmp_path)
    db.parent.mkdir(parents=True, exist_ok=True)
    db.write_bytes(b"not a database" * 100)
    got, stats = select_files(tmp_path, files, {"render"})
    assert names(got) == ["a.py", "b.py", "d.md", "e.bin"] and stats is not None
    WordIndex(db).close()  # a sound database again


def test_propagate_reads_only_the_mentioning_files_and_answers_the_same(tmp_path, monkeypatch, capsys):
    from mercury_lsp import cli
    from mercury_lsp.refactor.propagate import edited_files, propagate_edits
    from mercury_lsp.syntax import Grammars

    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "util.py").write_text("def echo(x):\n    return x\n")
    for i in range(8):
        (lib / f"m{i}.py").write_text(f"from util import echo\n\necho({i})\n" if i < 2 else f"y = {i}\n")
    settle(*lib.iterdir())
    patch = "--- a/lib/util.py\n+++ b/lib/util.py\n@@ -1,2 +1,2 @@\n-def echo(x):\n+def say(x):\n     return x\n"
    (tmp_path / "p.diff").write_text(patch)
    monkeypatch.chdir(tmp_path)
    outs = []
    for flags in (["--no-index"], [], []):
        assert cli.main(["refactor", "propagate", "lib", "--diff", "p.diff", "--no-model", "--format", "json",
                         *flags]) == 0
        outs.append(json.loads(capsys.readouterr().out)["edits"])
    assert outs[0] == outs[1] == outs[2] and "say" in str(outs[0])  # the same follow-ups, index or not
    reports = []
    for index in (False, True):
        edited, notes = edited_files(patch, [tmp_path])
        reports.append(propagate_edits(edited, notes, [lib], None, Grammars(), index=index))
    assert reports[0].files_read == 9 and reports[1].files_read == 3  # warm: util.py and the 2 mentioning 'echo'


def test_the_language_servers_workspace_scan_reads_only_the_files_the_index_selects(tmp_path, monkeypatch):
    from mercury_lsp.next_edit import DocState, NextEditQuery
    from mercury_lsp.refactor import workspace

    for i in range(6):
        (tmp_path / f"m{i}.py").write_text("from util import echo\necho(1)\n" if i < 2 else f"y = {i}\n")
    settle(*tmp_path.iterdir())
    reads = []
    real = workspace.read_source
    monkeypatch.setattr(workspace, "read_source", lambda p, *a: (reads.append(p.name), real(p, *a))[1])
    before, after = "def echo(x):\n    return x\n", "def say(x):\n    return x\n"
    doc = DocState("file:///open/util.py", after, "python", 1, (before,), 1.0)
    query = workspace.WorkspaceFiles().extend(NextEditQuery((doc,), doc.uri, 0), [tmp_path], limit=10)
    assert sorted(d.uri.rsplit("/", 1)[1] for d in query.docs[1:]) == ["m0.py", "m1.py"]
    assert sorted(reads) == ["m0.py", "m1.py"]  # not the four files that never name 'echo'


def test_an_index_another_call_holds_is_left_out_not_deleted(tmp_path, monkeypatch):
    import sqlite3

    from mercury_lsp.refactor import index

    files = tree(tmp_path)
    select_files(tmp_path, files, {"render"})
    db = index_path(tmp_path)
    monkeypatch.setattr(index, "LOCK_TIMEOUT_S", 0.05)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        got, stats = select_files(tmp_path, files, {"render"})
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert got == files and stats is None and db.exists()  # every file read; the index kept
