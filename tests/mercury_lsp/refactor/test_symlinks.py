"""Refactors never write through a symbolic link, nor to a file that resolves outside the
repository (issue 27, F4: ``refactor propagate --apply`` wrote through a tracked symlink to a
file outside the repository). Such files are skipped with a note, listing and applying alike."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mercury_lsp.refactor import apply as applying
from mercury_lsp.refactor.changes import Edit, FileChange
from mercury_lsp.refactor.files import list_files, read_source

GIT = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "commit.gpgsign=false"]
CALLER = "from lib import echo\n\n\ndef shout(x):\n    return echo(x)\n"


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, Path]:
    """A git repository whose tracked ``linked.py`` is a symlink to a file outside it."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.py").write_text(CALLER)
    (outside / "other.py").write_text(CALLER)
    root = tmp_path / "repo"
    root.mkdir()
    (root / "lib.py").write_text("def echo(x):\n    return x\n")
    (root / "user.py").write_text(CALLER)
    (root / "linked.py").symlink_to(outside / "victim.py")
    (root / "elsewhere").symlink_to(outside, target_is_directory=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*GIT, "-C", str(root), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(root), "commit", "-qm", "init"], check=True)
    (root / "lib.py").write_text("def print_out(x):\n    return x\n")  # the user's edit
    return root, outside


def test_propagate_apply_never_writes_through_a_tracked_symlink(repo, run, monkeypatch):
    root, outside = repo
    monkeypatch.chdir(root)
    rc, _, err = run("refactor", "propagate", "--git", "--no-model", "--apply")
    assert rc == 0, err
    assert "print_out" in (root / "user.py").read_text()  # the repository's own file follows
    assert (outside / "victim.py").read_text() == CALLER  # it was rewritten through linked.py
    assert (root / "linked.py").is_symlink()
    assert "linked.py" in err and "symbolic link" in err


def test_propagate_apply_never_writes_outside_the_repository(repo, run, monkeypatch):
    root, outside = repo
    monkeypatch.chdir(root)
    rc, _, err = run("refactor", "propagate", "--git", "--no-model", "--apply", str(root / "elsewhere"))
    assert rc == 0, err
    assert (outside / "other.py").read_text() == CALLER  # a directory symlink led outside
    assert "outside the repository" in err or "symbolic link" in err


def test_listing_skips_symlinks_with_a_note(repo):
    root, outside = repo
    notes: list[str] = []
    files, _ = list_files([root], notes)
    assert root / "user.py" in files and root / "lib.py" in files
    assert not any(f == outside / "victim.py" or f.name == "linked.py" for f in files), files
    assert any("linked.py" in n and "symbolic link" in n for n in notes), notes


def _change(path: Path, new: str) -> FileChange:
    src, _ = read_source(path)
    return FileChange(src, [Edit(src.uri, 0, len(src.text), new, 1.0, "test", "model", "model", src.text)])


def test_apply_skips_a_symlink_and_a_path_outside_the_root(repo):
    root, outside = repo
    link = _change(root / "linked.py", "changed = 1\n")
    through = _change(root / "elsewhere" / "other.py", "changed = 1\n")
    own = _change(root / "user.py", "changed = 1\n")
    res = applying.apply_changes([link, through, own], root=root)
    assert res.applied == [root / "user.py"]
    reasons = dict(res.skipped)
    assert "symbolic link" in reasons[root / "linked.py"]
    assert "outside" in reasons[root / "elsewhere" / "other.py"]
    assert (outside / "victim.py").read_text() == CALLER and (outside / "other.py").read_text() == CALLER
