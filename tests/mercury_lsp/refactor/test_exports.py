"""``refactor propagate --apply`` of a function renamed at its ``def`` leaves a package that still
imports: ``__all__`` (list, tuple, ``+=``), a star re-export in ``__init__``, ``as`` aliases and
module attributes follow, and Python itself runs ``from m import *`` on the result. Strings that
name the function are notes (stderr beside a diff, ``notes`` in the JSON, lines in the summary),
never edits."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.refactor.cases import GIT

FILES = {
    "pkg/__init__.py": "from .core import *\nfrom .helpers import shout as loud, whisper\n\n"
                       '__all__ = ["greet", "Greeter", "loud", "whisper"]\n',
    "pkg/core.py": '__all__ = ["greet", "Greeter"]\n\n\ndef greet(name):\n    return f"hello {name}"\n\n\n'
                   "class Greeter:\n    def __call__(self, name):\n        return greet(name)\n",
    "pkg/helpers.py": "from .core import greet\n\n__all__ = (\"shout\", \"whisper\")\n__all__ += (\"greet\",)\n\n\n"
                      "def shout(name):\n    return greet(name).upper()\n\n\ndef whisper(name):\n    return greet(name).lower()\n",
    "app/__init__.py": "",
    "app/main.py": "import pkg.core\nfrom pkg import *\nfrom pkg.core import greet as hello\n\n"
                   'LOOKUP = lambda: getattr(pkg.core, "greet")  # noqa: E731\n\n\ndef run():\n'
                   '    return [greet("a"), hello("b"), pkg.core.greet("c"), loud("d"), Greeter()("e")]\n',
}
CHECK = ("from pkg import *\nfrom pkg.core import *\nfrom pkg.helpers import *\nimport app.main\n"
         "assert welcome('x') == 'hello x' and 'greet' not in dir()\n"
         "print(app.main.run())\n")


@pytest.fixture
def package(tmp_path, monkeypatch) -> Path:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run([*GIT, "-C", str(tmp_path), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(tmp_path), "commit", "-qm", "package"], check=True)
    core = tmp_path / "pkg/core.py"
    core.write_text(core.read_text().replace("def greet(", "def welcome("), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def python(cwd: Path, code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                          env={"PYTHONDONTWRITEBYTECODE": "1"})


def test_the_broken_package_is_what_the_rename_alone_leaves(package):
    got = python(package, CHECK)
    assert got.returncode != 0 and "greet" in got.stderr


def test_apply_leaves_a_package_that_star_imports(package, run):
    rc, _, err = run("refactor", "propagate", "--git", "--no-model", "--apply")
    assert rc == 0, err
    got = python(package, CHECK)
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip() == "['hello a', 'hello b', 'hello c', 'HELLO D', 'hello e']"
    assert (package / "pkg/__init__.py").read_text().startswith(
        'from .core import *\nfrom .helpers import shout as loud, whisper\n\n__all__ = ["welcome",')
    assert '__all__ += ("welcome",)' in (package / "pkg/helpers.py").read_text()
    main = (package / "app/main.py").read_text()
    assert "import welcome as hello" in main and 'getattr(pkg.core, "greet")' in main
    assert 'app/main.py:5:37  a string names \'greet\'' in err


def test_the_notes_are_in_the_json_and_the_summary(package, run):
    rc, out, _ = run("refactor", "propagate", "--git", "--no-model", "--format", "json")
    assert rc == 0
    (note,) = json.loads(out)["notes"]
    assert note["uri"].endswith("/app/main.py") and note["rule"] == "NE101"
    assert note["range"]["start"] == {"line": 4, "character": 36}
    rc, out, _ = run("refactor", "propagate", "--git", "--no-model", "--format", "summary")
    assert "app/main.py:5:37  a string names 'greet' (renamed to 'welcome')" in out
    assert "1 note(s)" in out.splitlines()[-1]
