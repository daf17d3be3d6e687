"""``refactor propagate``: the follow-up edits of a first edit, across files.

The first edit is a patch (``--diff``, or ``git diff REV`` for ``--git``). Each file it names is
resolved both ways (``patch.resolve``): already edited or not, and the run says which it
assumed. The edited files enter next-edit with their texts before each hunk as their edit
history (newest first), so next-edit's detection sees the newest hunk as the last edit; every
other file under the given paths that mentions an identifier of the changed lines joins as a
plain document. ``next_edit.predict`` then finds the locations (tree-sitter) and fills them
(the model, or the syntax alone with no model), and the predictions become ``FileChange``s.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import msgspec

from mercury_lsp.config import NextEditOptions
from mercury_lsp.next_edit import DocState, NextEditQuery, diff_region, predict
from mercury_lsp.next_edit.query import REPEAT_KINDS, EditModel, Prediction
from mercury_lsp.next_edit.steps.detect import signatures
from mercury_lsp.next_edit.tree import parse_all
from mercury_lsp.refactor.changes import FileChange, Report
from mercury_lsp.refactor.files import GIT_TIMEOUT_S, InputError, Source, list_files, read_source
from mercury_lsp.refactor.index import select_files
from mercury_lsp.refactor.mentions import DOC_SUFFIXES, mention_edits, renamed_symbol
from mercury_lsp.refactor.patch import FilePatch, PatchError, apply_hunks, parse_patch, resolve
from mercury_lsp.syntax import Grammars
from mercury_lsp.text import PositionEncoding

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Identifiers of the changed lines that say nothing about where the edit must follow.
COMMON_WORDS = frozenset({"self", "cls", "None", "True", "False", "def", "class", "return", "import", "from",
                          "if", "else", "for", "in", "not", "and", "or", "is", "pass", "lambda", "with", "as"})
# Documents the batch tool lets next-edit look at: all of the ones it passes.
BATCH_MAX_CANDIDATES = 100_000
# The analogous edit at similar sites: every site of the broadest anchor that stays this
# specific (a rule matching more places than this in a repository is not the user's intent).
BATCH_REPEAT_SITES = 64


@dataclass(frozen=True)
class EditedFile:
    source: Source
    before: str
    after: str
    history: tuple[str, ...]  # texts before the newest, second newest... hunk
    state: str  # "applied" | "not applied"


def git_diff(root: Path, rev: str) -> str:
    """The working tree's diff against ``rev`` (tracked files), as ``git diff REV`` prints it."""
    args = ["git", "-C", str(root), "diff", "--no-color", "--no-ext-diff", "--no-renames",
            "--src-prefix=a/", "--dst-prefix=b/", rev, "--"]
    try:
        out = subprocess.run(args, capture_output=True, timeout=GIT_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InputError(f"git diff {rev} failed: {exc}") from None
    if out.returncode != 0:
        msg = out.stderr.decode(errors="replace").strip().splitlines()
        raise InputError(f"git diff {rev} failed: {msg[0] if msg else 'exit ' + str(out.returncode)}")
    text = out.stdout.decode("utf-8", "replace")
    if not text.strip():
        raise InputError(f"the working tree does not differ from {rev}: no first edit to propagate")
    return text


def locate(fp: FilePatch, roots: list[Path]) -> Path | None:
    for root in roots:
        for cand in fp.candidates():
            p = root / cand
            if p.is_file():
                return p
    return None


def resolve_edit(fp: FilePatch, path: Path, explicit: bool = True) -> tuple[EditedFile, str]:
    """The edited file (both texts and its per-hunk history) and a note saying what was assumed."""
    src, _ = read_source(path, explicit=explicit)
    assert src is not None
    try:
        before, after, state = resolve(src.text, fp)
    except PatchError as exc:
        raise InputError(f"{path}: the patch does not apply: {exc}") from None
    if before == after:
        raise InputError(f"{path}: the patch changes nothing")
    history = []
    for k in range(len(fp.hunks) - 1, -1, -1):
        history.append(apply_hunks(before, fp.hunks[:k])[0] if k else before)
    note = (f"{path}: the file already contains the patch (taken as the edited text)" if state == "applied"
            else f"{path}: the file does not contain the patch yet (applied in memory)")
    return EditedFile(src, before, after, tuple(history), state), note


def edited_files(patch_text: str, roots: list[Path]) -> tuple[list[EditedFile], list[str]]:
    try:
        patches = parse_patch(patch_text)
    except PatchError as exc:
        raise InputError(f"malformed patch: {exc}") from None
    out, notes = [], []
    for fp in patches:
        if fp.new_path is None:
            notes.append(f"{fp.old_path}: deleted by the patch (ignored)")
            continue
        path = locate(fp, roots)
        if path is None:
            where = ", ".join(str(r) for r in roots)
            raise InputError(f"the patch changes {fp.display}, which is not a file under {where}")
        ef, note = resolve_edit(fp, path)
        out.append(ef)
        notes.append(note)
    return out, notes


def changed_identifiers(before: str, after: str) -> set[str]:
    """Identifiers on the lines an edit changed (either side), common keywords left out: other
    files matter to the edit only if they mention one of them."""
    p, eb, ea = diff_region(before, after)
    lo = before.rfind("\n", 0, p) + 1
    words: set[str] = set()
    for text, end in ((before, eb), (after, ea)):
        hi = text.find("\n", end)
        words.update(IDENT.findall(text[lo:len(text) if hi < 0 else hi]))
    return words - COMMON_WORDS


def mentions_of(edited: list[EditedFile], others: list[Source], taken: list[Prediction]) -> list[Prediction]:
    """The renamed symbol's mentions in tests and docs (``refactor.mentions``) that next-edit's
    edits do not already cover."""
    out: list[Prediction] = []
    for ef in edited:
        texts = (ef.after, *ef.history)
        for before, after in zip(texts[1:], texts, strict=False):
            r = renamed_symbol(before, after, ef.source.path)
            if r is None:
                continue
            files = [(ef.source.uri, ef.after, ef.source.path) for ef in edited]
            files += [(s.uri, s.text, s.path) for s in others]
            spans = [(p.uri, p.start, p.end) for p in taken + out]
            for uri, text, path in files:
                out += [m for m in mention_edits(uri, text, path, r)
                        if not any(u == uri and s < m.end and m.start < e for u, s, e in spans)]
            break
    return out


def signature_changed(ef: EditedFile, grammars: Grammars) -> bool:
    """Did the edit change the parameter names of a function (any grammar with a query file)?"""
    if ef.source.grammar is None:
        return False
    sigs = []
    for text in (ef.before, ef.after):
        parsed = parse_all([DocState(ef.source.uri, text, ef.source.grammar, None)], grammars)
        if not parsed:
            return False
        sigs.append({k: [n for n, _ in s.params] for k, s in signatures(parsed[0], grammars).items()})
    return any(k in sigs[1] and sigs[1][k] != v for k, v in sigs[0].items())


def mentions(words: set[str]) -> re.Pattern | None:
    return re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, words))) + r")\b") if words else None


def propagate(patch_text: str, paths: list[Path], roots: list[Path], model: EditModel | None,
              grammars: Grammars, options: NextEditOptions | None = None, jobs: int = 1,
              progress: Callable[[int], None] | None = None, index: bool = True) -> Report:
    """The follow-ups of ``patch_text`` in every file under ``paths`` (the patch's files are
    looked up under ``roots``)."""
    edited, notes = edited_files(patch_text, roots)
    return propagate_edits(edited, notes, paths, model, grammars, options, jobs, progress, index)


def propagate_edits(edited: list[EditedFile], notes: list[str], paths: list[Path], model: EditModel | None,
                    grammars: Grammars, options: NextEditOptions | None = None, jobs: int = 1,
                    progress: Callable[[int], None] | None = None, index: bool = True) -> Report:
    """``index``: read only the files the repository's persistent word index says mention a word
    the edits changed (``refactor.index``); without it, every listed file is read."""
    t0 = time.perf_counter()
    edited_paths = {ef.source.path.resolve() for ef in edited}
    files, root = list_files(paths, notes) if paths else ([], None)
    files = [f for f in files if f not in edited_paths]
    words = set().union(*(changed_identifiers(ef.before, ef.after) for ef in edited))
    pattern = mentions(words)
    reads = len(files)
    if index and files and words:
        base = root or (paths[0] if paths[0].is_dir() else paths[0].parent)
        files, stats = select_files(base, files, words)
        if stats is not None:
            reads = stats.read + stats.selected

    def load(path: Path) -> tuple[Source | None, str | None]:
        try:
            src, note = read_source(path)
        except InputError as exc:  # vanished or became a directory while listing
            return None, f"{exc} (skipped)"
        if progress is not None:
            progress(1)
        if src is None or (src.grammar is None and path.suffix not in DOC_SUFFIXES):
            return None, note
        if pattern is None or not pattern.search(src.text):
            return None, None
        return src, None

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        loaded = list(pool.map(load, files))
    others = [s for s, _ in loaded if s is not None and s.grammar is not None]
    docs_only = [s for s, _ in loaded if s is not None and s.grammar is None]
    notes += [n for _, n in loaded if n]
    docs = [DocState(ef.source.uri, ef.after, ef.source.grammar, None, ef.history, 1.0 + i)
            for i, ef in enumerate(reversed(edited))]
    docs += [DocState(s.uri, s.text, s.grammar, None) for s in others]
    opts = msgspec.structs.replace(options or NextEditOptions(), max_documents=max(1, min(64, len(edited))),
                                   max_candidates=BATCH_MAX_CANDIDATES, repeat_max_sites=BATCH_REPEAT_SITES,
                                   repeat_max_results=BATCH_REPEAT_SITES, repeat_all_sites=True)
    first = edited[0]
    _, _, cursor = diff_region(first.before, first.after)
    query = NextEditQuery(tuple(docs), first.source.uri, cursor, PositionEncoding.UTF16, opts)
    outcome = predict(query, model, grammars)
    if any(c.kind == "signature" for c in outcome.candidates) or any(
            signature_changed(ef, grammars) for ef in edited):
        # the edit is to one function's parameters: the same change elsewhere would be another
        # function's signature, never a follow-up
        outcome.predictions = [p for p in outcome.predictions if p.kind not in REPEAT_KINDS]
    by_uri: dict[str, FileChange] = {}
    for ef in edited:
        base = None if ef.state == "applied" else ef.after
        by_uri[ef.source.uri] = FileChange(ef.source, [], base)
    for s in others:
        by_uri[s.uri] = FileChange(s, [])
    for p in outcome.predictions + mentions_of(edited, others + docs_only, outcome.predictions):
        if p.uri not in by_uri:
            by_uri[p.uri] = FileChange(next(s for s in docs_only if s.uri == p.uri), [])
        by_uri[p.uri].edits.append(p)
    for c in by_uri.values():
        c.edits.sort(key=lambda e: e.start)
    changes = sorted((c for c in by_uri.values() if c.changed), key=lambda c: str(c.source.path))
    # a note's offsets are in the text next-edit read (an edited file's: after the first edit)
    read = {ef.source.uri: dataclasses.replace(ef.source, text=ef.after) for ef in edited} | {s.uri: s for s in others}
    edit_notes = [(read[n.uri], n) for n in outcome.notes if n.uri in read]
    report = Report(changes, notes, files_read=reads + len(edited), timings=outcome.timings, edit_notes=edit_notes)
    report.timings.total_ms = round((time.perf_counter() - t0) * 1000, 2)
    return report
