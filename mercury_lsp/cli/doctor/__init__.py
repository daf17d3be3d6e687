"""``mercury-lsp doctor``: is everything mercury-lsp needs here, and what to fix if not.

Checks Python, this installation and the ``mercury-lsp`` on PATH, the torch build against the
machine's devices, the model (loaded, and one infill run), the tree-sitter grammars and
next-edit queries, the editor clients' files, each editor found on PATH, and a configured
backend's reachability. Prints one line per finding and, under a problem, what to do; exits 1
when something is broken.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator

import msgspec

from mercury_lsp.cli.doctor import backend, editors, model, runtime
from mercury_lsp.cli.doctor.report import Finding, summary
from mercury_lsp.cli.editors import editors_dir
from mercury_lsp.cli.errors import UsageError
from mercury_lsp.config import BackendSettings, Settings, parse_settings

FAILED_EXIT = 1


def add_subcommand(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("doctor", help="check the installation, the model, the editors and the backend",
                       description=__doc__.split("\n\n")[1].replace("\n", " "))
    p.add_argument("--settings", default=None, metavar="JSON",
                   help="the settings your editor sends (serve's --settings): their model and backend are checked")
    p.add_argument("--backend", default=None, metavar="JSON",
                   help='a remote backend to check, e.g. \'{"api": "openai-fim", "url": "http://gpu-box:8080"}\'')
    p.add_argument("--model", default=None, help="model directory or hub id (default: the settings', else embedded)")
    p.add_argument("--no-model", action="store_true", help="do not load the model (a quicker check)")
    p.set_defaults(func=run)


def _settings(args: argparse.Namespace) -> tuple[Settings, list[Finding]]:
    raw = {}
    if args.settings:
        try:
            raw = json.loads(args.settings)
        except ValueError as exc:
            raise UsageError(f"--settings is not JSON ({exc})") from None
    settings, problems = parse_settings(raw)
    found = [Finding("warn", "settings", "; ".join(problems), "fix them as docs/settings.md says")] if problems else []
    if args.backend:
        try:
            settings = msgspec.structs.replace(settings, backend=msgspec.json.decode(args.backend, type=BackendSettings))
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise UsageError(f"--backend: {exc}") from None
    return settings, found


def findings(args: argparse.Namespace) -> Iterator[Finding]:
    """The findings in report order, each as soon as it is known (the model load takes seconds)."""
    settings, problems = _settings(args)
    yield from problems
    yield from (runtime.python(), runtime.installation(), runtime.command_on_path())
    yield from runtime.torch_build()
    if args.no_model:
        yield Finding("skip", "model", "not loaded (--no-model)")
    elif settings.backend is None:
        yield model.model(args.model or settings.model, settings.device, settings.dtype)
    else:
        yield Finding("skip", "model", "none loaded: a remote backend serves completions")
    yield from model.grammars()
    setup = editors_dir()
    if setup is None:
        yield Finding("fail", "editor files", "not installed with this copy of mercury-lsp",
                      "reinstall it from its wheel or sdist")
    else:
        yield Finding("ok", "editor files", str(setup), "`mercury-lsp editors NAME` prints one editor's folder")
    yield from editors.editors(setup)
    yield backend.backend(settings.backend)


def run(args: argparse.Namespace) -> int:
    print("mercury-lsp doctor")
    found: list[Finding] = []
    for finding in findings(args):
        found.append(finding)
        for line in finding.lines():
            print(line, flush=True)
    print(summary(found))
    sys.stdout.flush()
    return FAILED_EXIT if any(f.status == "fail" for f in found) else 0
