"""Install without cloning, as docs/install.md says: the sdist is built, the wheel is built from
it (``python -m build``, isolated, as pip builds one), and installed into a fresh virtual
environment (no system site-packages) with the CPU build of torch installed first. Then, from a
directory outside the repository, every command a new user runs first: ``--version``, ``serve``
(an initialize round trip), ``infill``, ``next-edit``, ``http`` (a health check), ``editors``
and ``doctor`` — all on the files the wheel carries (the embedded model, the next-edit queries,
the corpus lock, the editor clients).

The fresh environment reaches only the registries (pip's index and find-links as this machine
configures them); pip's cache makes a second run cheap. ``--no-compile`` skips byte-compiling
torch's thousands of modules (seconds a run, and nothing the test reads).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import subprocess
import sys
import urllib.request
import venv
from pathlib import Path

import pytest

from benchmarks.common.jsonrpc import LspProcess

ROOT = Path(__file__).resolve().parents[2]
TORCH = f"torch=={importlib.metadata.version('torch').split('+')[0]}"  # the build this suite runs on
PIP_TIMEOUT_S = 900  # torch's wheel is ~200 MB; a cold pip cache downloads the rest
COMMAND_TIMEOUT_S = 300
LISTENING = re.compile(r"listening on (http://\S+)")
# Files a command reads from the installed packages (beside the Python modules).
DATA_FILES = ("mercury_engine/models/mercury-coder-tiny/model.safetensors",
              "mercury_engine/models/mercury-coder-tiny/tokenizer.json",
              "mercury_engine/models/mercury-coder-tiny/config.json",
              "mercury_lsp/next_edit/queries/python.scm", "mercury_lsp/next_edit/queries/tsx.scm",
              "mercury_lsp/completion/ranker.json", "mercury_lsp/completion/ranker_trees.json",
              "mercury_train/corpus_v2.lock.json", "mercury_train/GPU.md")
EDITOR_FILES = ("neovim/lua/mercury/init.lua", "neovim/plugin/mercury.lua", "emacs/mercury.el",
                "helix/languages.toml", "vscode/package.json", "zed/extension.toml")

# What a user's shell has: none of this test run's own paths (a PYTHONPATH naming the checkout
# would make pip take its egg-info for an installed mercury-lsp and skip the wheel).
CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the venv layout below is POSIX")


def _run(argv: list[str], cwd: Path, timeout: float = COMMAND_TIMEOUT_S, env: dict | None = None,
         ) -> subprocess.CompletedProcess:
    r = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env or CLEAN_ENV)
    assert r.returncode == 0, f"{argv[:4]} exited {r.returncode}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    r = _run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], cwd=out, timeout=PIP_TIMEOUT_S)
    assert "SetuptoolsDeprecationWarning" not in r.stdout + r.stderr  # no licence-metadata noise
    return out


@pytest.fixture(scope="module")
def installed(dist, tmp_path_factory) -> Path:
    """A fresh venv holding torch (CPU) and the wheel; returns its bin/ folder."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(env_dir)
    pip = [str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", "--no-compile",
           "--disable-pip-version-check"]
    _run([*pip, TORCH], cwd=env_dir, timeout=PIP_TIMEOUT_S)
    [wheel] = dist.glob("*.whl")
    _run([*pip, str(wheel)], cwd=env_dir, timeout=PIP_TIMEOUT_S)
    return env_dir / "bin"


@pytest.fixture
def elsewhere(tmp_path) -> Path:
    """A project directory outside the repository: what the commands run in."""
    work = tmp_path / "project"
    work.mkdir()
    (work / "sample.py").write_text("import math\n\n\ndef circle_area(radius):\n    return \n")
    return work


def test_the_sdist_and_the_wheel_carry_every_data_file(dist):
    import tarfile
    import zipfile

    [wheel], [sdist] = dist.glob("*.whl"), dist.glob("*.tar.gz")
    names = set(zipfile.ZipFile(wheel).namelist())
    for path in DATA_FILES:
        assert path in names, path
    data = f"mercury_lsp-{_version()}.data/data/share/mercury-lsp/editors/"
    for path in EDITOR_FILES:
        assert data + path in names, path
    assert any(n.endswith("licenses/LICENSE") for n in names)
    members = {m.split("/", 1)[1] for m in tarfile.open(sdist).getnames() if "/" in m}
    for path in (*DATA_FILES, *(f"editors/{p}" for p in EDITOR_FILES), "LICENSE", "pyproject.toml"):
        assert path in members, path


def test_only_the_cpu_build_of_torch(installed):
    python = str(installed / "python")
    r = _run([python, "-c", "import torch, json; print(json.dumps([torch.__version__, torch.version.cuda]))"],
             cwd=installed)
    version, cuda = json.loads(r.stdout)
    assert cuda is None, f"a CUDA build of torch was installed: {version}"
    listed = _run([python, "-m", "pip", "list", "--format=json"], cwd=installed).stdout
    nvidia = [p["name"] for p in json.loads(listed) if p["name"].lower().startswith("nvidia-")]
    assert nvidia == []


def test_version_and_help(installed, elsewhere):
    out = _run([str(installed / "mercury-lsp"), "--version"], cwd=elsewhere).stdout
    assert out == f"mercury-lsp {_version()}\n"
    assert "mercury-lsp doctor" in _run([str(installed / "mercury-lsp"), "--help"], cwd=elsewhere).stdout


def test_serve_answers_initialize(installed, elsewhere, monkeypatch):
    monkeypatch.chdir(elsewhere)
    lsp = LspProcess([str(installed / "mercury-lsp"), "serve", "--threads", "1"], env=CLEAN_ENV)
    try:
        result = lsp.request("initialize", {"processId": None, "rootUri": elsewhere.as_uri(), "capabilities": {}})
        assert result["serverInfo"]["name"] == "mercury-lsp"
        assert "inlineCompletionProvider" in result["capabilities"]
        lsp.notify("initialized", {})
    finally:
        lsp.close()
    assert lsp.proc.returncode == 0


def test_infill_on_the_embedded_model(installed, elsewhere):
    r = _run([str(installed / "mercury-lsp"), "infill", "sample.py", "--line", "5", "--col", "12",
              "--max-tokens", "8"], cwd=elsewhere)
    assert r.stderr.startswith("sample.py:5:12: ")


def test_next_edit_reads_the_installed_queries(installed, elsewhere):
    (elsewhere / "area.py").write_text("def area(w, height):\n    return width * height\n")
    patch = ("--- a/area.py\n+++ b/area.py\n@@ -1,2 +1,2 @@\n-def area(width, height):\n+def area(w, height):\n"
             "     return width * height\n")
    (elsewhere / "rename.diff").write_text(patch)
    r = _run([str(installed / "mercury-lsp"), "next-edit", "area.py", "--after-diff", "rename.diff"], cwd=elsewhere)
    assert "+    return w * height" in r.stdout


def test_http_health(installed, elsewhere):
    proc = subprocess.Popen([str(installed / "mercury-lsp"), "http", "--port", "0", "--threads", "1"],
                            cwd=elsewhere, stderr=subprocess.PIPE, text=True, env=CLEAN_ENV)
    try:
        url = None
        for line in proc.stderr:
            if m := LISTENING.search(line):
                url = m.group(1)
                break
        assert url, "mercury-lsp http did not say where it listens"
        loaded = next((line for line in proc.stderr if "ready" in line or "failed" in line), "")
        assert "ready" in loaded, loaded  # /health answers 503 "loading" until then
        with urllib.request.urlopen(url + "/health", timeout=30) as r:
            health = json.loads(r.read())
        assert r.status == 200 and health["status"] == "ready", health
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def test_editors_and_doctor(installed, elsewhere):
    folder = Path(_run([str(installed / "mercury-lsp"), "editors"], cwd=elsewhere).stdout.strip())
    assert folder.is_relative_to(installed.parent)  # <venv>/share/mercury-lsp/editors
    for path in EDITOR_FILES:
        assert (folder / path).is_file(), path
    r = subprocess.run([str(installed / "mercury-lsp"), "doctor"], cwd=elsewhere, capture_output=True, text=True,
                       timeout=COMMAND_TIMEOUT_S, env={"PATH": str(installed), "HOME": str(elsewhere)})
    assert "FAIL" not in r.stdout and r.returncode == 0, r.stdout + r.stderr
    assert "ok    model: " in r.stdout and f"ok    editor files: {folder}" in r.stdout


def _version() -> str:
    text = (ROOT / "mercury_lsp" / "__init__.py").read_text()
    return re.search(r'__version__ = "([^"]+)"', text).group(1)
