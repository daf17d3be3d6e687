"""The memory-scale benchmark's workspaces: the files the memory itself would index, in order."""

from __future__ import annotations

from benchmarks.memory import scale


def _tree(root, files):
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def test_a_workspace_holds_only_what_the_memory_would_index(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    src = tmp_path / "src"
    _tree(src, {"a.py": "x = 1\n", "b.py": "\0binary\0\n", "node_modules/m.js": "let y = 2;\n",
                "pkg/c.go": "package pkg\n", "pkg/d.rs": "fn main() {}\n"})
    root = scale.materialize(2, [src])
    copied = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    assert copied == ["s0/a.py", "s0/pkg/c.go"]  # nothing binary, nothing under node_modules, first N


def test_a_workspace_is_made_again_when_its_folders_change(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    one, two = tmp_path / "one", tmp_path / "two"
    _tree(one, {"a.py": "x = 1\n"})
    _tree(two, {"b.py": "y = 2\n", "c.py": "z = 3\n"})
    assert sum(1 for p in scale.materialize(3, [one]).rglob("*.py")) == 1
    root = scale.materialize(3, [one, two])
    assert sorted(p.name for p in root.rglob("*.py")) == ["a.py", "b.py", "c.py"]
