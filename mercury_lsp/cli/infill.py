"""``mercury-lsp infill FILE --line L --col C``: fill in code at a position of a file (one shot)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
from pathlib import Path

from mercury_lsp.cli.errors import UsageError, read_text

DEFAULT_MAX_TOKENS = 32  # one statement or so: what a one-shot infill usually asks for


def add_subcommand(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("infill", help="fill in code at a position of a file (one shot)")
    p.add_argument("file", type=Path)
    p.add_argument("--line", type=int, required=True, help="1-based line of the cursor")
    p.add_argument("--col", type=int, required=True, help="1-based column (character) of the cursor")
    p.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS)
    p.add_argument("--steps", type=int, default=None, help="denoising steps per block (default: the preset's confidence threshold)")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--model", default=None, help="model directory or hub id (default: embedded)")
    p.add_argument("--device", default="auto")
    p.add_argument("--dtype", default="auto")
    p.add_argument("--backend", default=None, metavar="JSON",
                   help='a remote backend instead of a local model, e.g. \'{"url": "http://gpu-box:8000"}\' '
                        "(the serve setting's fields: url, apiKey, api, model, promptFormat, timeoutMs)")
    p.add_argument("--json", action="store_true", help="print the structured result as JSON")
    p.add_argument("--no-memory", dest="memory", action="store_false",
                   help="do not suggest from the repository memory (by default the file's repository is "
                        "indexed, or its saved index read, and a line it already holds is answered first)")
    p.set_defaults(func=run)


def split_at(text: str, line: int, col: int) -> tuple[str, str]:
    """Split ``text`` at a 1-based (line, column); a column past the line's end is refused.

    Lines end at ``\n``, ``\r\n`` or ``\r`` only, as in editors and LSP (not at the form feeds
    and other separators ``str.splitlines`` also breaks on).
    """
    lines = re.split(r"(?<=\n)|(?<=\r)(?!\n)", text)
    if not 1 <= line <= len(lines):
        raise UsageError(f"--line {line} is outside the file (1..{len(lines)})")
    body = lines[line - 1].rstrip("\r\n")
    if not 1 <= col <= len(body) + 1:
        raise UsageError(f"--col {col} is outside line {line} (1..{len(body) + 1})")
    offset = sum(len(s) for s in lines[: line - 1]) + col - 1
    return text[:offset], text[offset:]


def from_memory(path: Path, text: str, cursor: int) -> tuple[str, float] | None:
    """The repository memory's line at the cursor, when the precision gate would show it:
    (text, probability). The memory of the file's repository (its git root, else its folder) is
    built, or read from the saved index, first."""
    from mercury_lsp.completion.choose import MemoryRequest, memory_lines
    from mercury_lsp.completion.rank import shipped_ranker
    from mercury_lsp.config import Settings
    from mercury_lsp.memory import Memory
    from mercury_lsp.memory.sources import git_root, is_test_path
    from mercury_lsp.syntax import grammar_for

    real = path.resolve()
    root = git_root(real.parent) or real.parent
    memory = Memory([root])
    memory.start()
    memory.wait_built()
    opts = Settings().completion
    try:
        request = MemoryRequest(memory, (), grammar_for("", real.as_uri()) or "", is_test_path(str(real)))
        ranked = memory_lines(request, real.as_uri(), text, cursor, opts.length_weight, shipped_ranker(opts.ranker))
    finally:
        memory.close()
    return (ranked[0].text, ranked[0].probability) if ranked and ranked[0].score >= opts.min_probability else None


def run(args: argparse.Namespace) -> int:
    from mercury_engine import Engine, InfillOptions

    text = read_text(args.file, "")
    prefix, suffix = split_at(text, args.line, args.col)
    if args.memory:
        found = from_memory(args.file, text, len(prefix))
        if found is not None:
            if args.json:
                print(json.dumps({"text": found[0], "source": "memory", "probability": round(found[1], 4)}, indent=2))
            else:
                sys.stdout.write(found[0] + "\n")
            return 0
    if args.backend is not None:
        return run_remote(args, prefix, suffix)
    engine = Engine.load(args.model, device=args.device, dtype=args.dtype)
    options = InfillOptions(steps=args.steps, temperature=args.temperature, seed=args.seed)
    result = engine.infill(prefix, suffix, args.max_tokens, options)
    if args.json:
        print(json.dumps(dataclasses.asdict(result), indent=2))
    else:
        show(args, result.text)
    return 0


def show(args: argparse.Namespace, text: str) -> None:
    """Where the fill goes on stderr (``FILE:LINE:COL``, as compilers point at a place), then the
    fill itself on stdout, alone (for scripts and pipes)."""
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    what = f"{len(text)} characters on {lines} line{'s' if lines != 1 else ''}" if text else "nothing to fill here"
    print(f"{args.file}:{args.line}:{args.col}: {what}{':' if text else ''}", file=sys.stderr, flush=True)
    if text:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def run_remote(args: argparse.Namespace, prefix: str, suffix: str) -> int:
    """The same infill from a remote backend (``--backend``); nothing is loaded here."""
    import msgspec

    from mercury_engine import InfillOptions
    from mercury_lsp.backend.remote_session import RemoteSession
    from mercury_lsp.config import BackendSettings
    from mercury_lsp.engine_client import CancelToken, EngineError
    from mercury_lsp.schema import InfillSpec

    try:
        settings = msgspec.json.decode(args.backend, type=BackendSettings)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise UsageError(f"--backend: {exc}") from None
    spec = InfillSpec(prefix=prefix, suffix=suffix, max_tokens=args.max_tokens,
                      options=InfillOptions(temperature=args.temperature, seed=args.seed or 0),
                      uri=args.file.resolve().as_uri())
    session = RemoteSession(settings, report=lambda message: None)  # a failure is this command's error
    try:
        outcome = session.infill(spec, CancelToken())
    except EngineError as exc:
        raise UsageError(f"--backend: {exc}") from None
    finally:
        session.close()
    if args.json:
        print(msgspec.json.encode(outcome).decode())
    else:
        show(args, outcome.text)
    return 0
