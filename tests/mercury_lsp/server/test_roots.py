"""A shared daemon reads files only under the roots its command line allows (issue 27, F3: a TCP
client that initialized with any ``rootUri`` got lines of that directory's files back in
``mercury/nextEditUpdate``). ``serve --tcp ... --root DIR`` (repeatable); no ``--root``: open
documents only. Over stdio the editor's own workspace folders stay readable."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchmarks.common.jsonrpc import LspConnection
from tests.support.server import TcpDaemon

LOAD_TIMEOUT_S = 60
SHAPES = "def area(width, height):\n    return width * height\n"
USES = "from shapes import area\n\n\ndef total(rects):\n    return sum(area(w, h) for w, h in rects)\n"
SECRET = "from shapes import area\n\nSECRET_TOKEN = area(4, 2)\n"


def workspace(d: Path) -> Path:
    d.mkdir()
    (d / "shapes.py").write_text(SHAPES)
    (d / "uses.py").write_text(USES)
    return d


def renamed(daemon: TcpDaemon, root: Path) -> tuple[LspConnection, list[dict]]:
    """A client of ``root`` renames ``area`` in shapes.py; every edit it was sent (the answer and
    the update of workspace files)."""
    c = daemon.connect()
    reply = c.request_message("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(),
                                     "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}],
                                     "capabilities": {}, "initializationOptions": {}})
    assert "result" in reply, reply
    c.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    assert c.wait_notification("mercury/status", lambda p: p["state"] == "ready", LOAD_TIMEOUT_S)
    uri = (root / "shapes.py").as_uri()
    c.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": SHAPES}}})
    c.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": {
            "start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 8}}, "text": "surface"}]}})
    result = c.request("mercury/nextEdit", {"textDocument": {"uri": uri, "version": 2},
                                            "position": {"line": 0, "character": 11}}, timeout=LOAD_TIMEOUT_S)
    edits = list(result["edits"])
    if result["updatePending"]:
        edits += c.wait_notification("mercury/nextEditUpdate", timeout=LOAD_TIMEOUT_S)["result"]["edits"]
    return c, edits


def disk_edits(edits: list[dict], root: Path) -> set[str]:
    return {e["uri"].rsplit("/", 1)[1] for e in edits if e["uri"] != (root / "shapes.py").as_uri()}


def test_a_shared_daemon_without_roots_reads_no_file(tiny_model, tmp_path):
    root = workspace(tmp_path / "anywhere")
    daemon = TcpDaemon()
    try:
        c, edits = renamed(daemon, root)
        assert disk_edits(edits, root) == set()  # uses.py's lines came back
        c.close()
    finally:
        daemon.close()


def test_a_shared_daemon_reads_only_under_its_roots(tiny_model, tmp_path):
    allowed = workspace(tmp_path / "allowed")
    other = workspace(tmp_path / "other")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text(SECRET)
    (allowed / "linked.py").symlink_to(outside / "secret.py")  # a link inside a root to a file outside it
    daemon = TcpDaemon("--root", str(allowed))
    try:
        c, edits = renamed(daemon, allowed)
        assert disk_edits(edits, allowed) == {"uses.py"}  # an allowed root: as before
        assert not any("linked.py" in e["uri"] or "SECRET" in e["newText"] for e in edits)
        c.close()
        c, edits = renamed(daemon, other)
        assert disk_edits(edits, other) == set()  # a root the command line did not allow
        c.close()
    finally:
        daemon.close()


def test_root_must_be_a_directory(tiny_model, tmp_path):
    import subprocess

    from tests.support.server import serve_command

    for extra in (["--tcp", "127.0.0.1:0", "--root", str(tmp_path / "missing")], ["--root", str(tmp_path)]):
        r = subprocess.run(serve_command(*extra), capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL)
        assert r.returncode == 2 and "--root" in r.stderr, r.stderr


def test_allowed_roots(tmp_path):
    from mercury_lsp.server.access import AllowedRoots

    root = tmp_path / "root"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("a = 1\n")
    (tmp_path / "out.py").write_text("b = 2\n")
    (root / "link.py").symlink_to(tmp_path / "out.py")
    (root / "up").symlink_to(tmp_path, target_is_directory=True)
    allowed = AllowedRoots([root])
    assert allowed.contains(root / "pkg" / "a.py") and allowed.contains(root)
    assert not allowed.contains(root / "link.py")  # resolved first: it is outside
    assert not allowed.contains(root / "up" / "out.py") and not allowed.contains(tmp_path / "out.py")
    assert not allowed.contains(root / ".." / "out.py")
    assert allowed.within([root / "pkg"]) == [root / "pkg"]  # a folder inside a root: itself
    assert allowed.within([tmp_path]) == [root]  # a folder around a root: the root
    assert allowed.within([tmp_path / "elsewhere"]) == []
    assert AllowedRoots([]).within([root]) == [] and not AllowedRoots([]).contains(root)


@pytest.mark.parametrize("bad", ["", "relative/dir"])
def test_allowed_roots_are_absolute(bad, tmp_path, monkeypatch):
    from mercury_lsp.server.access import AllowedRoots

    monkeypatch.chdir(tmp_path)
    (tmp_path / "relative" / "dir").mkdir(parents=True)
    allowed = AllowedRoots([bad]) if bad else AllowedRoots([])
    assert all(r.is_absolute() for r in allowed.roots)
