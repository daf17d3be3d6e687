"""``mercury-lsp refactor propagate|fill`` and ``mercury-lsp next-edit`` (its parser is added by
``cli.next_edit``): arguments, the model, output and ``--apply``; the work is in ``refactor``.

Machine output (the diff, the JSON, the summary) goes to stdout only; notes, warnings, the
progress bar (tqdm, shown for runs over a second on a terminal) and errors go to stderr (the
edits' notes — a string naming a renamed definition — are in the JSON and the summary, and on
stderr beside a diff).
Exit status: 0 done; 1 ``--check`` found edits to make; 2 bad input (a one-line error), including
files ``--apply`` could not write.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from mercury_lsp.cli.errors import UsageError
from mercury_lsp.refactor import apply as applying
from mercury_lsp.refactor.changes import FORMATS, FileChange, Report, display_path, note_lines, render
from mercury_lsp.refactor.files import InputError, git_root, list_files, read_source

DEFAULT_JOBS = 8  # requests in flight: enough to fill the scheduler's batches on a laptop
PROGRESS_DELAY_S = 1.0  # the bar appears only for runs longer than this
FILL_MAX_TOKENS = 64  # per stub: a short function body


def _usage(msg: str) -> Exception:
    return UsageError(msg)


# ---------------------------------------------------------------------------- arguments
def _add_output(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=FORMATS, default="diff",
                   help="stdout: a unified diff (default), the JSON edit schema, or a per-file summary")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--apply", action="store_true", help="write the edits (atomically, each file checked)")
    mode.add_argument("--check", action="store_true", help="exit 1 when there are edits to make (CI)")
    p.add_argument("--atomic-all", action="store_true",
                   help="with --apply: if any file cannot be written, write none")
    p.add_argument("--jobs", "-j", type=int, default=DEFAULT_JOBS, help="parallel reads / model requests")
    p.add_argument("--model", default=None, help="model directory or hub id (default: embedded)")
    p.add_argument("--device", default="auto")
    p.add_argument("--dtype", default="auto")
    p.add_argument("--threads", type=int, default=None, help="CPU threads for the model (default: torch's)")


def _add_first_edit(p: argparse.ArgumentParser, flag: str) -> None:
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument(flag, type=Path, metavar="PATCH", dest="patch",
                   help="unified diff of the first edit; the files may or may not contain it already")
    g.add_argument("--git", nargs="?", const="HEAD", default=None, metavar="REV",
                   help="the first edit is the working tree's diff against REV (default HEAD)")


def _add_no_model(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-model", action="store_true",
                   help="syntax only: the locations tree-sitter ties to the edit, with the user's text "
                        "(no model is loaded; confidence 0)")
    p.add_argument("--no-index", action="store_true",
                   help="read every file instead of those the repository's persistent word index "
                        "(under $XDG_CACHE_HOME/mercury-lsp) says mention what the edit changed")


def add_subcommand(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser("refactor", help="batch refactors over files and repositories")
    rsub = r.add_subparsers(dest="refactor_command", required=True)
    p = rsub.add_parser("propagate", help="predict the follow-up edits of a first edit across files")
    p.add_argument("paths", nargs="*", type=Path, help="files/directories to edit (default: the repository)")
    _add_first_edit(p, "--diff")
    _add_no_model(p)
    _add_output(p)
    p.set_defaults(func=run_propagate)
    f = rsub.add_parser("fill", help="complete every stub (..., pass # TODO, raise NotImplementedError, TODO:)")
    f.add_argument("paths", nargs="+", type=Path)
    f.add_argument("--min-confidence", type=float, default=0.0, help="drop fills less confident than this")
    f.add_argument("--max-tokens", type=int, default=FILL_MAX_TOKENS)
    f.add_argument("--preset", choices=("fast", "balanced", "quality"), default="quality",
                   help="decoding preset (default quality: a batch run favours accuracy over latency)")
    f.add_argument("--verbose", "-v", action="store_true", help="say why each dropped fill was dropped")
    f.add_argument("--retrieval-share", type=float, default=None, metavar="SHARE",
                   help="share of the model's window for the repository memory's definitions and similar "
                        "code (default: the memory.retrievalShare setting's: 0 with the embedded model, a quarter "
                        "with another; 0: no memory)")
    _add_output(f)
    f.set_defaults(func=run_fill)


def add_next_edit(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("next-edit", help="predict the edits that follow a first edit (a unified diff)")
    p.add_argument("file", type=Path)
    _add_first_edit(p, "--after-diff")
    p.add_argument("--also", type=Path, action="append", default=[], metavar="FILE",
                   help="another file to look for occurrences in (repeatable)")
    p.add_argument("--json", action="store_true", help="same as --format json")
    _add_no_model(p)
    _add_output(p)
    p.set_defaults(func=run_next_edit)


# ---------------------------------------------------------------------------- shared
def _note(args: argparse.Namespace, msg: str) -> None:
    print(f"mercury-lsp {_name(args)}: {msg}", file=sys.stderr)


def _name(args: argparse.Namespace) -> str:
    sub = getattr(args, "refactor_command", None)
    return f"refactor {sub}" if sub else args.command


@contextlib.contextmanager
def _progress(total: int, unit: str) -> Iterator:
    from tqdm import tqdm

    bar = tqdm(total=total, unit=unit, file=sys.stderr, delay=PROGRESS_DELAY_S, disable=None, leave=False)
    try:
        yield bar.update
    finally:
        bar.close()


def _check_args(args: argparse.Namespace) -> None:
    if args.jobs < 1:
        raise _usage(f"--jobs must be at least 1, got {args.jobs}")
    if args.atomic_all and not args.apply:
        raise _usage("--atomic-all only makes sense with --apply")


def _read_patch(args: argparse.Namespace, root: Path) -> str:
    from mercury_lsp.refactor.propagate import git_diff

    if args.git is not None:
        if git_root(root) is None:
            raise _usage(f"--git: {root} is not inside a git work tree")
        return git_diff(root, args.git)
    path: Path = args.patch
    if path.is_dir():
        raise _usage(f"{path}: is a directory, expected a patch file")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise _usage(f"{path}: no such file") from None
    except OSError as exc:
        raise _usage(f"{path}: cannot read ({exc.strerror})") from None
    if b"\0" in data:
        raise _usage(f"{path}: a binary file, not a patch")
    return data.decode("utf-8", "replace")


def _load_model(args: argparse.Namespace):
    """(EditModel or None, session or None, model name)."""
    if getattr(args, "no_model", False):
        return None, None, "none (syntax only)"
    from mercury_lsp.backend.local import load_session
    from mercury_lsp.engine_client import LoadSpec

    session = load_session(LoadSpec(args.model, args.device, args.dtype, threads=args.threads))
    return session.edit_model, session, session.info.model


def finish(args: argparse.Namespace, report: Report) -> int:
    for n in report.notes:
        _note(args, "note: " + n)
    if args.format == "diff":  # the other formats print them with the edits
        for line in note_lines(report):
            _note(args, "note: " + line)
    sys.stdout.write(render(report, args.format))
    sys.stdout.flush()
    changed = [c for c in report.changes if c.changed]
    if args.check:
        return 1 if changed else 0
    if not args.apply or not changed:
        return 0
    applying.sweep([c.source.path.parent for c in changed])
    res = applying.apply_changes(changed, atomic_all=args.atomic_all, root=_roots()[0])
    for path, why in res.skipped:
        _note(args, f"warning: {display_path(path)}: {why}; not replaced")
    _note(args, f"applied {len(res.applied)} file(s)" + (
        f"; {len(res.not_applied)} held back by --atomic-all" if res.not_applied else ""))
    if res.refused:
        held = ("nothing applied: --atomic-all" if args.atomic_all and not res.applied
                else f"{len(res.applied)} other file(s) applied")
        for path, why in res.refused[1:]:
            _note(args, f"error: {display_path(path)}: {why}")
        path, why = res.refused[0]
        raise _usage(f"{display_path(path)}: {why} ({held})")
    return 0


def _roots() -> list[Path]:
    cwd = Path.cwd()
    root = git_root(cwd)
    return [root, cwd] if root is not None and root != cwd else [cwd]


# ---------------------------------------------------------------------------- commands
def run_propagate(args: argparse.Namespace) -> int:
    from mercury_lsp.refactor.propagate import propagate
    from mercury_lsp.syntax import Grammars

    _check_args(args)
    roots = _roots()
    for p in args.paths:
        if not p.exists():
            raise _usage(f"{p}: no such file or directory")
    paths = args.paths or [roots[0]]
    try:
        for p in args.paths:
            if p.is_file():
                read_source(p, explicit=True)  # a named binary / huge / generated file: an error
        patch = _read_patch(args, roots[0])
        files, _ = list_files(paths)
        model, _, name = _load_model(args)
        with _progress(len(files), "file") as tick:
            report = propagate(patch, paths, roots, model, Grammars(), jobs=args.jobs, progress=tick,
                               index=not args.no_index)
    except InputError as exc:
        raise _usage(str(exc)) from None
    report.model = name
    return finish(args, report)


def run_next_edit(args: argparse.Namespace) -> int:
    from mercury_lsp.refactor.patch import PatchError, parse_patch
    from mercury_lsp.refactor.propagate import propagate_edits, resolve_edit
    from mercury_lsp.syntax import Grammars

    if args.json:
        args.format = "json"
    _check_args(args)
    file: Path = args.file
    if not file.exists():
        raise _usage(f"{file}: no such file")
    if file.is_dir():
        raise _usage(f"{file}: is a directory, expected a file")
    try:
        read_source(file, explicit=True)  # a binary / huge / generated file: refused before the patch
        patch = _read_patch(args, file.resolve().parent)
        try:
            patches = parse_patch(patch)
        except PatchError as exc:
            raise InputError(f"malformed patch: {exc}") from None
        named = [fp for fp in patches if fp.path]
        mine = [fp for fp in patches if any(_same_file(file, c) for c in fp.candidates())]
        if not mine and not named and len(patches) == 1:
            mine = patches  # bare hunks: they are for FILE
        if not mine:
            raise InputError(f"the patch changes {', '.join(fp.display for fp in named)}, not {file}")
        edited, note = resolve_edit(mine[0], file)
        for extra in args.also:
            read_source(extra, explicit=True)
        model, _, name = _load_model(args)
        report = propagate_edits([edited], [note], list(args.also), model, Grammars(), jobs=args.jobs,
                                 index=not args.no_index)
    except InputError as exc:
        raise _usage(str(exc)) from None
    report.model = name
    return finish(args, report)


def _same_file(file: Path, patch_path: str) -> bool:
    rel = Path(patch_path)
    full = file.resolve()
    return full.parts[-len(rel.parts):] == rel.parts if len(rel.parts) <= len(full.parts) else False


def fill_settings(args: argparse.Namespace):
    """The settings a fill runs under: the defaults, with the model the command line names."""
    from mercury_lsp.config import Settings

    return Settings(model=args.model) if getattr(args, "model", None) else Settings()


def run_fill(args: argparse.Namespace) -> int:
    from mercury_lsp.refactor.fill import FillStats, fill
    from mercury_lsp.refactor.fill_memory import MAX_RETRIEVAL_SHARE, fill_memory
    from mercury_lsp.syntax import Grammars

    _check_args(args)
    if not 0.0 <= args.min_confidence <= 1.0:
        raise _usage(f"--min-confidence must be between 0 and 1, got {args.min_confidence}")
    if args.max_tokens < 1:
        raise _usage(f"--max-tokens must be at least 1, got {args.max_tokens}")
    notes: list[str] = []
    try:
        files, _ = list_files(args.paths, notes)
        explicit = {p.resolve() for p in args.paths if p.is_file()}
        sources = []
        for f in files:
            src, note = read_source(f, explicit=f in explicit)
            if note:
                notes.append(note)
            if src is not None and src.grammar is not None:
                sources.append(src)
    except InputError as exc:
        raise _usage(str(exc)) from None
    t0 = time.perf_counter()
    _, session, name = _load_model(args)
    stats = FillStats()
    grammars = Grammars()
    from mercury_lsp.refactor.fill import find_stubs

    total = sum(len(find_stubs(s, grammars)) for s in sources)
    share = fill_settings(args).retrieval_share() if args.retrieval_share is None else args.retrieval_share
    if not 0.0 <= share <= MAX_RETRIEVAL_SHARE:
        raise _usage(f"--retrieval-share must be between 0 and {MAX_RETRIEVAL_SHARE}, got {share}")
    memory = fill_memory(sources) if share > 0 and sources else None
    try:
        with _progress(total, "stub") as tick:
            changes: list[FileChange] = fill(sources, session, grammars, max_tokens=args.max_tokens,
                                             min_confidence=args.min_confidence, jobs=args.jobs,
                                             preset=args.preset, progress=tick, stats=stats,
                                             retrieved=memory.chunks if memory else None, retrieval_share=share)
    finally:
        if memory is not None:
            memory.close()
    notes.append(f"{stats.stubs} stub(s); {stats.completions} non-empty fill(s), {stats.guard_passed} passed "
                 f"the syntax guard, {stats.kept} kept")
    if args.verbose:
        notes.extend(stats.dropped)
    report = Report(changes, notes, files_read=len(sources), model=name)
    report.timings.model_ms = report.timings.total_ms = round((time.perf_counter() - t0) * 1000, 2)
    return finish(args, report)
