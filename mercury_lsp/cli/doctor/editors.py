"""Each editor found on PATH: its version against what the client needs, and where its set-up is."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from mercury_lsp.cli.doctor.report import Finding

VERSION_TIMEOUT_S = 20  # an editor printing its version (Emacs loading eglot takes a second or two)
NVIM_CORE_GHOST_TEXT = (0, 12)  # vim.lsp.inline_completion: Neovim's own ghost text
NVIM_MIN = (0, 11)  # vim.lsp.config / vim.lsp.enable: the plugin draws ghost text itself
EMACS_MIN = (28, 1)  # mercury.el's Package-Requires
EMACS_EGLOT_BUILT_IN = (29, 1)
VSCODE_EXTENSION = "mercury-lsp.mercury-lsp"  # publisher.name of editors/vscode/package.json
HELIX_SERVER = "mercury-lsp"  # the command editors/helix/languages.toml names
ZED_COMMANDS = ("zed", "zeditor", "zedit")  # Linux packages name it differently


def _run(argv: list[str]) -> str | None:
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=VERSION_TIMEOUT_S,
                           stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (r.stdout + r.stderr).strip() if r.returncode == 0 else None


class Version(tuple):
    """A version as numbers (compared) that prints as the editor wrote it (Helix's 24.07)."""

    text: str

    def __str__(self) -> str:
        return self.text


def _version(text: str | None) -> Version | None:
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text or "")
    if not m:
        return None
    v = Version(int(g) for g in m.groups() if g is not None)
    v.text = m.group(0)
    return v


def _dotted(v: tuple[int, ...]) -> str:
    return str(v) if isinstance(v, Version) else ".".join(map(str, v))


def neovim(exe: str, setup: Path | None) -> Finding:
    out = _run([exe, "--version"])
    first = (out or "").splitlines()[0] if out else ""
    v = _version(first)
    where = f"set-up: {setup / 'neovim' / 'README.md'}" if setup else "set-up: editors/neovim/README.md"
    if v is None:
        return Finding("fail", "nvim", f"{exe} did not print its version", "reinstall Neovim (>= 0.11)")
    name = first.removeprefix("NVIM ").strip()
    if v[:2] < NVIM_MIN:
        return Finding("fail", "nvim", f"{name}: the plugin needs >= {_dotted(NVIM_MIN)} (vim.lsp.config)",
                       "upgrade Neovim (0.12 for its own ghost text)")
    if v[:2] < NVIM_CORE_GHOST_TEXT:
        return Finding("ok", "nvim", f"{name}: ghost text drawn by the plugin (0.11 has no "
                       "vim.lsp.inline_completion)", where)
    return Finding("ok", "nvim", f"{name}: ghost text through vim.lsp.inline_completion", where)


EMACS_EGLOT_PROBE = ("(progn (require 'package) (package-initialize) "
                     "(princ (if (require 'eglot nil t) \"eglot=yes\" \"eglot=no\")))")


def emacs(exe: str, setup: Path | None) -> Finding:
    out = _run([exe, "--version"])
    v = _version(out)
    where = f"set-up: {setup / 'emacs' / 'README.md'}" if setup else "set-up: editors/emacs/README.md"
    if v is None:
        return Finding("fail", "emacs", f"{exe} did not print its version", "reinstall Emacs (>= 28.1)")
    name = f"Emacs {_dotted(v)}"
    if v[:2] < EMACS_MIN:
        return Finding("fail", "emacs", f"{name}: mercury.el needs >= {_dotted(EMACS_MIN)}", "upgrade Emacs")
    probe = _run([exe, "--batch", "--eval", EMACS_EGLOT_PROBE]) or ""
    if "eglot=yes" not in probe:
        return Finding("fail", "emacs", f"{name} without eglot",
                       "M-x package-install RET eglot (Debian/Ubuntu: apt install elpa-eglot), or Emacs >= "
                       f"{_dotted(EMACS_EGLOT_BUILT_IN)} where it is built in")
    return Finding("ok", "emacs", f"{name} with eglot", where)


def vscode(exe: str, setup: Path | None) -> Finding:
    out = _run([exe, "--version"])
    v = _version(out)
    readme = setup / "vscode" / "README.md" if setup else Path("editors/vscode/README.md")
    if v is None:
        return Finding("warn", "code", f"{exe} did not print its version", f"see {readme}")
    installed = (_run([exe, "--list-extensions"]) or "").lower().split()
    if VSCODE_EXTENSION not in installed:
        return Finding("warn", "code", f"VS Code {_dotted(v)} without the mercury-lsp extension",
                       f"build and install it: {readme}")
    return Finding("ok", "code", f"VS Code {_dotted(v)} with the mercury-lsp extension")


def _helix_config() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "helix" / "languages.toml"


def helix(exe: str, setup: Path | None) -> Finding:
    v = _version(_run([exe, "--version"]))
    if v is None:
        return Finding("warn", "hx", f"{exe} did not print its version", "reinstall Helix")
    config = _helix_config()
    try:
        configured = HELIX_SERVER in config.read_text(encoding="utf-8")
    except OSError:
        configured = False
    source = setup / "helix" / "languages.toml" if setup else Path("editors/helix/languages.toml")
    if not configured:
        return Finding("warn", "hx", f"Helix {_dotted(v)}: {config} does not name {HELIX_SERVER}",
                       f"merge {source} into it")
    return Finding("ok", "hx", f"Helix {_dotted(v)}, configured in {config}")


def zed(exe: str, setup: Path | None) -> Finding:
    v = _version(_run([exe, "--version"]))
    readme = setup / "zed" / "README.md" if setup else Path("editors/zed/README.md")
    if v is None:
        return Finding("warn", "zed", f"{exe} did not print its version", "reinstall Zed")
    return Finding("ok", "zed", f"Zed {_dotted(v)}: edit predictions over `mercury-lsp http`", f"set-up: {readme}")


CHECKS: tuple[tuple[tuple[str, ...], Callable[[str, Path | None], Finding]], ...] = (
    (("nvim",), neovim), (("emacs",), emacs), (("code", "codium"), vscode), (("hx", "helix"), helix),
    (ZED_COMMANDS, zed),
)


def editors(setup: Path | None) -> list[Finding]:
    """One finding per editor on PATH; one line for those that are not."""
    out, absent = [], []
    for names, check in CHECKS:
        exe = next((found for n in names if (found := shutil.which(n))), None)
        if exe is None:
            absent.append(names[0])
        else:
            out.append(check(exe, setup))
    if absent:
        out.append(Finding("skip", "not on PATH", ", ".join(absent)))
    return out

