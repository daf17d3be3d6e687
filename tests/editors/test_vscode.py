"""The VS Code extension (editors/vscode): its node tests against the real server, its settings
mirroring mercury_lsp.config, and the .vsix build.

The node tests run the extension's client logic with the `vscode` module stubbed (settings sync,
next-edit rendering model) and a vscode-languageserver-protocol client doing inline-completion and
next-edit round trips, all against `mercury-lsp serve` on the tests' tiny model.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support.server import serve_command

ROOT = Path(__file__).resolve().parents[2]
EXT = ROOT / "editors" / "vscode"
NPM = shutil.which("npm")
NODE = shutil.which("node")
VSIX_MAX_BYTES = 1 << 20  # the bundled extension is ~110 KB; a megabyte means node_modules slipped in

pytestmark = pytest.mark.skipif(NPM is None or NODE is None,
                                reason="node and npm are not installed (needed for the VS Code extension)")


def _npm(*args: str, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([NPM, *args], cwd=EXT, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def node_modules() -> Path:
    """``npm ci`` when node_modules is missing or older than package-lock.json (./dev setup does it too)."""
    marker = EXT / "node_modules" / ".package-lock.json"
    lock = EXT / "package-lock.json"
    if not marker.exists() or marker.stat().st_mtime < lock.stat().st_mtime:
        r = _npm("ci", "--no-audit", "--no-fund")
        if r.returncode != 0:
            pytest.fail(f"npm ci failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return EXT / "node_modules"


def test_settings_mirror_the_server():
    r = subprocess.run([sys.executable, str(EXT / "scripts" / "settings_schema.py")], capture_output=True,
                       text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    props = json.loads((EXT / "package.json").read_text())["contributes"]["configuration"]["properties"]
    assert props["mercury.maxTokens"]["default"] == 96 and props["mercury.maxTokens"]["minimum"] == 1
    assert props["mercury.nextEdit.maxDocuments"]["default"] == 2
    assert props["mercury.preset"]["enum"] == ["balanced", "fast", "quality"]


def test_node_client_against_the_real_server(tiny_model, node_modules):
    env = {**os.environ, "MERCURY_SERVER_CMD": json.dumps(serve_command())}
    r = _npm("test", env=env)
    assert r.returncode == 0, f"{r.stdout[-6000:]}\n{r.stderr[-3000:]}"
    assert "fail 0" in r.stdout and "pass 15" in r.stdout, r.stdout[-3000:]


def test_vsix_builds(node_modules):
    vsix = EXT / "mercury-lsp.vsix"
    vsix.unlink(missing_ok=True)
    r = _npm("run", "package")
    assert r.returncode == 0, f"{r.stdout[-4000:]}\n{r.stderr[-3000:]}"
    size = vsix.stat().st_size
    print(f"\nmercury-lsp.vsix: {size} bytes")
    assert 0 < size < VSIX_MAX_BYTES
    with zipfile.ZipFile(vsix) as z:
        names = set(z.namelist())
        manifest = json.loads(z.read("extension/package.json"))
    assert {"extension/dist/extension.js", "extension/package.json", "extension/LICENSE.txt",
            "extension/readme.md"} <= names
    assert not any("node_modules" in n or "/src/" in n or "/test/" in n for n in names)
    assert manifest["main"] == "./dist/extension.js"
    assert manifest["dependencies"]["vscode-languageclient"].startswith("10.")
    assert manifest["engines"]["vscode"] == "^1.91.0"
    # Activation only for the configured languages (the default of mercury.languages).
    languages = manifest["contributes"]["configuration"]["properties"]["mercury.languages"]["default"]
    assert manifest["activationEvents"] == [f"onLanguage:{lang}" for lang in languages]
    # The keys: the confident part while ghost text shows; next edit.
    keys = {(k["command"], k["key"]) for k in manifest["contributes"]["keybindings"]}
    assert {("mercury.acceptConfident", "alt+right"), ("mercury.nextEdit", "alt+n"), ("mercury.applyNextEdit", "tab"),
            ("mercury.dismissNextEdit", "escape")} <= keys
