"""``refactor fill``: complete every stub through infill.

Stubs (tree-sitter, Python): a function body that is only ``...``, ``pass  # TODO...`` or
``raise NotImplementedError`` (after an optional docstring), and in any grammar a comment line
``TODO: ...``. Abstract methods, ``@overload`` signatures, ``Protocol`` classes and ``.pyi``
stubs are left alone: there ``...`` is the intended body.

Each stub becomes one infill request (the code before it as prefix, after it as suffix); the
requests go to the engine ``jobs`` at a time from as many threads, so they meet in the engine's
scheduler and share its denoising steps. A fill is kept when it is not empty, passes the syntax
guard (no new parse errors in its lines, ``syntax.SyntaxGuard``) and its mean confidence is at
least ``min_confidence``; kept fills are ranked by confidence. A ``TODO:`` line is kept as a
plain comment above its fill, so a second run finds nothing left to do.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import msgspec

from mercury_engine.options import InfillOptions
from mercury_lsp.documents import Document
from mercury_lsp.next_edit.tree import walk
from mercury_lsp.refactor.changes import Edit, FileChange
from mercury_lsp.refactor.files import Source
from mercury_lsp.schema import InfillSpec, RetrievedChunk
from mercury_lsp.syntax import Grammars, Replacement, SyntaxGuard, count_errors

if TYPE_CHECKING:
    from mercury_lsp.backend.session import Session

TODO_COMMENT = re.compile(r"^(\s*)(#|//|/\*|--)\s*TODO:\s?(.*)$")
# Decorators and bases under which ``...`` / ``raise NotImplementedError`` is the real body.
INTENDED_STUB_MARKS = ("abstractmethod", "overload", "abstractproperty")
PROTOCOL_BASES = ("Protocol",)
COMMENT_STARTS = ("#", "//", "/*", "*", "--")
FILE_ERROR_LIMIT = 1 << 20  # count every parse error of a file
# Share of the model's context (in characters) given to each side of a stub.
CONTEXT_SHARE = 0.75


@dataclass(frozen=True)
class Stub:
    start: int  # code-point span replaced by the fill
    end: int
    prefix_end: int  # the model sees text[:prefix_end] before and text[end:] after the span
    indent: str
    kind: str  # "ellipsis" | "pass-todo" | "not-implemented" | "todo-comment"
    keep: str = ""  # text put back before the fill (a TODO comment without its marker)


@dataclass
class FillStats:
    stubs: int = 0
    completions: int = 0  # non-empty fills returned by the engine
    guard_passed: int = 0
    kept: int = 0  # also above --min-confidence
    dropped: list[str] = field(default_factory=list)


def _line_bounds(text: str, offset: int) -> tuple[int, int]:
    lo = text.rfind("\n", 0, offset) + 1
    hi = text.find("\n", offset)
    return lo, len(text) if hi < 0 else hi


def _intended(fn, data: bytes) -> bool:
    parent = fn.parent
    if parent is not None and parent.type == "decorated_definition":
        for d in parent.named_children:
            if d.type == "decorator" and any(m in data[d.start_byte:d.end_byte].decode("utf-8", "replace")
                                             for m in INTENDED_STUB_MARKS):
                return True
    node = fn.parent
    while node is not None and node.type != "class_definition":
        node = node.parent
    if node is not None:
        bases = node.child_by_field_name("superclasses")
        if bases is not None and any(b in data[bases.start_byte:bases.end_byte].decode("utf-8", "replace")
                                     for b in PROTOCOL_BASES):
            return True
    return False


def _body_stub(stmt, data: bytes) -> str | None:
    t = data[stmt.start_byte:stmt.end_byte].decode("utf-8", "replace")
    if stmt.type == "expression_statement" and t.strip() == "...":
        return "ellipsis"
    if stmt.type == "raise_statement" and re.fullmatch(r"raise\s+NotImplementedError\b.*", t.strip(), re.S):
        return "not-implemented"
    if stmt.type == "pass_statement":
        nxt = stmt.next_sibling
        if nxt is not None and nxt.type == "comment" and nxt.start_point[0] == stmt.start_point[0] \
                and "TODO" in data[nxt.start_byte:nxt.end_byte].decode("utf-8", "replace"):
            return "pass-todo"
    return None


def find_stubs(src: Source, grammars: Grammars) -> list[Stub]:
    text = src.text
    stubs: list[Stub] = []
    taken: set[int] = set()
    if src.grammar == "python" and not src.path.name.endswith(".pyi"):
        parser = grammars.parser("python")
        data = text.encode("utf-8")
        tree = parser.parse(data)
        ascii_text = len(data) == len(text)

        def char(b: int) -> int:
            return b if ascii_text else len(data[:b].decode("utf-8", "replace"))

        for fn in walk(tree.root_node):
            if fn.type != "function_definition" or _intended(fn, data):
                continue
            body = fn.child_by_field_name("body")
            if body is None:
                continue
            stmts = [s for s in body.named_children if s.type != "comment"]
            if stmts and stmts[0].type == "expression_statement" and stmts[0].named_child_count == 1 \
                    and stmts[0].named_children[0].type == "string":
                stmts = stmts[1:]  # the docstring stays
            if len(stmts) != 1 or (kind := _body_stub(stmts[0], data)) is None:
                continue
            s = char(stmts[0].start_byte)
            lo, hi = _line_bounds(text, s)
            if text[lo:s].strip():  # "def f(): ..." on one line: the body has no line of its own
                continue
            stubs.append(Stub(s, hi, s, text[lo:s], kind))
            taken.add(lo)
    pos = 0
    for line in text.splitlines(keepends=True):
        m = TODO_COMMENT.match(line.rstrip("\r\n"))
        if m is not None and pos not in taken:
            indent, mark, rest = m.groups()
            end = pos + len(line.rstrip("\r\n"))
            keep = f"{indent}{mark} {rest}".rstrip() if rest.strip() else ""
            stubs.append(Stub(pos, end, end, indent, "todo-comment", keep))
        pos += len(line)
    return stubs


def _request(src: Source, stub: Stub, max_tokens: int, context_chars: int, preset: str) -> InfillSpec:
    text = src.text
    if stub.kind == "todo-comment":  # the comment stays in view; the fill starts on the next line
        prefix = text[max(0, stub.prefix_end - context_chars):stub.prefix_end] + "\n" + stub.indent
    else:
        prefix = text[max(0, stub.start - context_chars):stub.start]
    suffix = text[stub.end:stub.end + context_chars]
    return InfillSpec(prefix=prefix, suffix=suffix, max_tokens=max_tokens, options=InfillOptions(preset=preset, seed=0),
                      uri=src.uri)


def _clean(fill: str, stub: Stub) -> str:
    """The fill up to the end of the stub's block: the first line indented less than the stub
    ends it (the model wrote past the body, e.g. the next function)."""
    lines = [ln.rstrip() for ln in fill.rstrip().split("\n")]
    while lines and not lines[0].strip():
        lines.pop(0)
    for i, ln in enumerate(lines[1:], 1):
        if ln.strip() and len(ln) - len(ln.lstrip()) < len(stub.indent):
            lines = lines[:i]
            break
    body = "\n".join(lines).strip("\n")
    if stub.kind == "todo-comment":
        return (stub.keep + "\n" if stub.keep else "") + stub.indent + body.lstrip() if body.strip() else ""
    return body.lstrip() if body.strip() else ""


def _has_code(new: str, stub: Stub) -> bool:
    body = new[len(stub.keep):] if stub.keep and new.startswith(stub.keep) else new
    return any(ln.strip() and not ln.lstrip().startswith(COMMENT_STARTS) for ln in body.splitlines())


def _file_parses(src: Source, tree, stub: Stub, new: str, grammars: Grammars) -> bool:
    """No new parse errors anywhere in the file (an empty body breaks the parse past its lines)."""
    parser = grammars.parser(src.grammar) if src.grammar else None
    if parser is None:
        return True
    text = src.text[:stub.start] + new + src.text[stub.end:]
    data = text.encode("utf-8")
    before = count_errors(tree.root_node, 0, tree.root_node.end_byte, limit=FILE_ERROR_LIMIT)
    if count_errors(parser.parse(data).root_node, 0, len(data), limit=FILE_ERROR_LIMIT) > before:
        return False
    if src.grammar == "python" and before == 0:  # tree-sitter accepts more (``f() = 1``): Python decides
        try:
            ast.parse(text)
        except (SyntaxError, ValueError):
            return False
    return True


def fill(sources: list[Source], session: Session, grammars: Grammars, *, max_tokens: int,
         min_confidence: float, jobs: int, preset: str = "quality", progress: Callable[[int], None] | None = None,
         stats: FillStats | None = None, retrieved: Callable[[Source, int], tuple[RetrievedChunk, ...]] | None = None,
         retrieval_share: float = 0.0) -> list[FileChange]:
    """``retrieved(src, offset)``: the repository memory's context for a stub (its definitions and
    similar code, ``memory.retrieve``), given ``retrieval_share`` of the window (the stub's own
    text takes the rest; the backend fits the chunks in it)."""
    stats = stats if stats is not None else FillStats()
    window_chars = session.context_tokens * session.chars_per_token
    context_chars = int(window_chars * CONTEXT_SHARE * (1 - retrieval_share))
    work = [(src, stub) for src in sources for stub in find_stubs(src, grammars)]
    stats.stubs += len(work)

    def run(item: tuple[Source, Stub]):
        src, stub = item
        spec = _request(src, stub, max_tokens, context_chars, preset)
        if retrieved is not None and retrieval_share > 0:
            spec = msgspec.structs.replace(spec, retrieved=retrieved(src, stub.start))
        out = session.infill(spec, None)
        if progress is not None:
            progress(1)
        return out

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        outcomes = list(pool.map(run, work))
    guard = SyntaxGuard(grammars)
    parsed: dict[str, tuple] = {}
    changes: dict[str, FileChange] = {}
    for (src, stub), out in zip(work, outcomes, strict=True):
        new = _clean(out.text, stub)
        if not new or new.strip() in ("...", "pass") or new.strip() == stub.keep.strip():
            stats.dropped.append(f"{src.path}:{src.text.count(chr(10), 0, stub.start) + 1}: empty fill")
            continue
        stats.completions += 1
        if src.uri not in parsed:
            doc = Document(src.uri, src.grammar or "", 0, src.text, src.grammar)
            snap = doc.snapshot(len(src.text) + 1)
            data = src.text.encode("utf-8")
            parsed[src.uri] = (snap, grammars.parse(snap, data) if snap.syntax else None, data)
        snap, tree, data = parsed[src.uri]
        line = src.text.count("\n", 0, stub.start) + 1
        if not _has_code(new, stub):
            stats.dropped.append(f"{src.path}:{line}: the fill has no code (comments only)")
            continue
        if tree is not None and not (guard.accepts(snap, tree, data, Replacement(stub.start, stub.end, new))
                                     and _file_parses(src, tree, stub, new, grammars)):
            stats.dropped.append(f"{src.path}:{line}: the fill does not parse")
            continue
        stats.guard_passed += 1
        if out.mean_confidence < min_confidence:
            stats.dropped.append(f"{src.path}:{line}: confidence {out.mean_confidence:.3f} < {min_confidence}")
            continue
        stats.kept += 1
        old = src.text[stub.start:stub.end]
        edit = Edit(src.uri, stub.start, stub.end, new, float(out.mean_confidence),
                    f"{stub.kind} stub filled by the model ({out.tokens} tokens)", "fill", "model", old)
        changes.setdefault(src.uri, FileChange(src)).edits.append(edit)
    for c in changes.values():
        c.edits.sort(key=lambda e: (-e.confidence, e.start))
    return sorted(changes.values(), key=lambda c: (-max(e.confidence for e in c.edits), str(c.source.path)))
