"""Emacs (editors/emacs/mercury.el) through eglot, in batch mode with the real Emacs from Debian:
a silent start-up, completion at point, next edit previewed and accepted with TAB at two
locations, and the "Apply predicted edits" code action. The checks are in mercury_test.el."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.server import PROBE_TEXT, serve_command

ROOT = Path(__file__).resolve().parents[2]  # the repository

EMACS = shutil.which("emacs")
DRIVER = ROOT / "tests" / "editors" / "mercury_test.el"
AREA = "def area(width, height):\n    total = width * height\n    return total + width\n"


def _has_eglot() -> bool:
    if EMACS is None:
        return False
    r = subprocess.run([EMACS, "--batch", "--eval", "(kill-emacs (if (require 'eglot nil t) 0 1))"],
                       capture_output=True, timeout=60)
    return r.returncode == 0


pytestmark = pytest.mark.skipif(not _has_eglot(), reason="emacs with eglot is not installed "
                                "(./dev setup installs emacs-nox and elpa-eglot with apt-get when run as root)")


def _run_driver(tmp_path: Path, **extra: str) -> tuple[subprocess.CompletedProcess, str]:
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "demo.py").write_text(PROBE_TEXT)
    (proj / "area.py").write_text(AREA)
    (proj / "area2.py").write_text(AREA)
    env = {**os.environ, "MERCURY_SERVER_CMD": json.dumps(serve_command()),
           "MERCURY_DEMO": str(proj / "demo.py"), "MERCURY_AREA": str(proj / "area.py"),
           "MERCURY_AREA2": str(proj / "area2.py"), "HOME": str(tmp_path), **extra}
    r = subprocess.run([EMACS, "--batch", "-L", str(ROOT / "editors" / "emacs"), "-l", str(DRIVER)],
                       cwd=proj, env=env, capture_output=True, text=True, timeout=300)
    return r, r.stdout + r.stderr


def test_emacs_start_up_with_default_settings_is_silent(tiny_model, tmp_path):
    r, out = _run_driver(tmp_path, MERCURY_START_UP_ONLY="1")
    assert r.returncode == 0, out[-6000:]
    assert "PASS ready\n" in r.stdout and "PASS silent start-up\n" in r.stdout, out[-6000:]


def test_emacs_eglot_completion_and_next_edit(tiny_model, tmp_path):
    r, out = _run_driver(tmp_path)
    assert r.returncode == 0, out[-6000:]
    for check in ("ready", "silent start-up", "completion inserted", "two predicted edits", "jumps and accepts",
                  "versioned per document", "only the renamed document", "confident part inserted",
                  "point before the rest of the line", "confident round trip", "counted as accepted",
                  "renamed", "renamed by the code action", "no errors"):
        assert f"PASS {check}\n" in r.stdout, out[-6000:]


SHAPES = "def area(width, height):\n    return width * height\n\n\ndef square(side):\n    return area(side, side)\n"
USES = "from shapes import area\n\n\ndef total(rects):\n    return sum(area(w, h) for w, h in rects)\n"


def test_emacs_next_edit_update_from_files_that_are_not_open(tiny_model, tmp_path):
    """The workspace files' edits arrive after the answer (mercury/nextEditUpdate) and join the
    preview; TAB opens uses.py and accepts them (the workspace of test_workspace_lsp.py)."""
    proj = tmp_path / "ws"
    proj.mkdir()
    (proj / "shapes.py").write_text(SHAPES)
    (proj / "uses.py").write_text(USES)
    (proj / "circle.py").write_text("def area_of_circle(r):\n    return 3.14 * r * r\n")
    env = {**os.environ, "MERCURY_SERVER_CMD": json.dumps(serve_command()), "MERCURY_DEMO": str(proj / "shapes.py"),
           "MERCURY_USES": str(proj / "uses.py"), "HOME": str(tmp_path)}
    r = subprocess.run([EMACS, "--batch", "-L", str(ROOT / "editors" / "emacs"), "-l", str(DRIVER)],
                       cwd=proj, env=env, capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    for check in ("ready", "silent start-up", "the open document's edit at once", "update merged", "not visited yet",
                  "stale updates dropped", "TAB visits every file", "uses.py renamed", "shapes.py renamed",
                  "preview closed", "no errors"):
        assert f"PASS {check}\n" in r.stdout, out[-6000:]


README = ROOT / "editors" / "emacs" / "README.md"
README_DRIVER = ROOT / "tests" / "editors" / "mercury_readme_test.el"


def _readme() -> tuple[str, list[list[str]]]:
    """The README's set-up snippet and its key rows ([key, command])."""
    text = README.read_text()
    snippet = re.search(r"```elisp\n(.*?)```", text, re.S).group(1)
    keys = [[k, c] for k, c in re.findall(r"^\| `([^`]+)` \| `([^`]+)` \|", text, re.M)]
    return snippet, keys


def test_the_readme_snippet_and_every_documented_key(tiny_model, tmp_path):
    """The snippet as written (load-path from `mercury-lsp editors emacs` on PATH; eglot started by
    the hook; mercury-mode turned on) and each key of the README's tables doing what it says."""
    snippet, keys = _readme()
    assert len(keys) == 7 and "mercury-mode" in snippet
    (tmp_path / "snippet.el").write_text(snippet)
    bindir = tmp_path / "bin"  # `mercury-lsp` on PATH, as after an install
    bindir.mkdir()
    launcher = bindir / "mercury-lsp"
    launcher.write_text(f"#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} -m mercury_lsp.cli \"$@\"\n")
    launcher.chmod(0o755)
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "demo.py").write_text(PROBE_TEXT)
    (proj / "area.py").write_text(AREA)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path),
           "MERCURY_SNIPPET": str(tmp_path / "snippet.el"), "MERCURY_KEYS": json.dumps(keys),
           "MERCURY_SERVER_CMD": json.dumps(serve_command()), "MERCURY_DEMO": str(proj / "demo.py"),
           "MERCURY_AREA": str(proj / "area.py")}
    r = subprocess.run([EMACS, "--batch", "-l", str(README_DRIVER)], cwd=proj, env=env, capture_output=True,
                       text=True, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    for check in ("eglot started by the hook", "mercury-mode on", "C-c m w inserts the next word",
                  "C-c m l inserts the line", "C-c m c inserts the confident part", "C-c m n previews the edits",
                  "TAB jumps and accepts", "C-g dismisses, leaving the buffer", "C-c m a applies them all"):
        assert f"PASS {check}\n" in r.stdout, out[-6000:]
