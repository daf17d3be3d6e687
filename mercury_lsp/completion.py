"""Inline completion (``textDocument/inlineCompletion``, LSP 3.18) and the ``textDocument/completion``
fallback, on one pipeline:

    snapshot (event loop) -> [worker: parse, window, infill, shape, trim, guard] -> version check

* A newer request for a document supersedes older ones: they are cancelled (a queued one never
  runs, a running one stops at its next denoising step) and answer empty.
* A result whose document moved on is dropped (never stale text) but cached: the cache answers
  the next request without the engine when the user has typed the start of the suggestion, or
  returns to a state already seen.
* Suggestions are cut to their span kind, cleaned of undecodable bytes, trimmed where they repeat
  the text after the cursor, and checked by the syntax guard (a candidate that adds parse errors
  to its lines is cut back to its last valid line, or dropped).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from lsprotocol import types as lsp

from mercury_lsp.accept import accepted_command, confident_length
from mercury_lsp.config import Settings
from mercury_lsp.context import CLOSERS, Budget, Window, build_window, is_word_char, leading_ws
from mercury_lsp.documents import Document, DocumentSnapshot, DocumentStore, PositionEncoding, units_len
from mercury_lsp.engine_client import CancelToken, EngineCancelled, EngineClient, EngineError, EngineSession
from mercury_lsp.indent import fit_indent
from mercury_lsp.schema import Counters, InfillOutcome, InfillSpec, SpanKind
from mercury_lsp.syntax import Grammars, Replacement, SyntaxGuard

log = logging.getLogger(__name__)

CACHE_KEY_CHARS = 2048  # prefix tail / suffix head compared by the cache
OVERLAP_MAX_CHARS = 256  # longest repeat of the suffix looked for
OVERLAP_MIN_CHARS = 3  # shorter repeats count only when made of closing punctuation
OVERLAP_PUNCT = CLOSERS + "\"'`;:,>"
GUARD_MAX_TRIES = 6  # parses the guard may spend on one suggestion
STATEMENT_CONTINUATIONS = ("else", "elif", "except", "finally", "catch")
LABEL_CHARS = 60
LATENCY_SAMPLES = 2048


# ---------------------------------------------------------------------------- shaping
def sanitize(text: str) -> str:
    """Cut at the first undecodable byte (U+FFFD) or control character (tab/newline allowed)."""
    for i, ch in enumerate(text):
        if ch == "\ufffd" or (ord(ch) < 32 and ch not in "\t\n\r") or ord(ch) == 127:
            return text[:i]
    return text


def limit_lines(text: str, window: Window, max_lines: int) -> str:
    lines = text.split("\n")
    if window.kind == "line":
        return lines[0]
    if window.kind == "block" and window.header_indent is not None:
        base, closer_ok = len(window.header_indent), True
    else:
        base, closer_ok = len(window.indent), True
    kept = [lines[0]]
    for ln in lines[1:]:
        if len(kept) >= max_lines:
            break
        if not ln.strip():
            kept.append(ln)
            continue
        ind = len(leading_ws(ln))
        body = ln.strip()
        if ind > base:
            kept.append(ln)
        elif ind == base and closer_ok and body[0] in CLOSERS:
            kept.append(ln)
            break
        elif ind == base and window.kind == "statement" and body.startswith(STATEMENT_CONTINUATIONS):
            kept.append(ln)
        else:
            break
    return "\n".join(kept)


def shape(raw: str, window: Window, max_lines: int) -> str:
    text = sanitize(raw).replace("\r\n", "\n")
    text = limit_lines(text, window, max_lines).rstrip()
    if window.kind == "line":
        text = text.rstrip()
    return text if text.strip() else ""


def suffix_overlap(text: str, after: str) -> str | None:
    """``text`` without its tail when that tail repeats the start of ``after``; else None."""
    t = text.rstrip()
    n = min(len(t), len(after), OVERLAP_MAX_CHARS)
    for k in range(n, 0, -1):
        piece = after[:k]
        if not piece.strip() or not t.endswith(piece):
            continue
        core = piece.strip()
        if len(core) >= OVERLAP_MIN_CHARS or all(c in OVERLAP_PUNCT for c in core):
            return t[: len(t) - k].rstrip(" \t") if k < len(t) else ""
    return None


def bracket_imbalance(s: str) -> int:
    depth = bad = 0
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth:
                depth -= 1
            else:
                bad += 1
    return bad + depth


# ---------------------------------------------------------------------------- pipeline
@dataclass(frozen=True)
class PipelineResult:
    text: str
    kind: SpanKind
    replace_end: int
    outcome: InfillOutcome | None
    tree: object | None
    seq: int
    guard_dropped: bool
    confident: int | None = None  # chars of ``text`` before its first low-confidence token


def run_pipeline(session: EngineSession, snap: DocumentSnapshot, cursor: int, settings: Settings,
                 grammars: Grammars, cancel: CancelToken | None) -> PipelineResult:
    """Runs on the engine worker thread: parse, window, infill, shape, trim, guard."""
    data = None
    tree = None
    seq = 0
    if snap.syntax is not None:
        data = snap.text.encode("utf-8")
        tree = grammars.parse(snap, data)
        seq = snap.syntax.seq
    window = build_window(snap, tree, cursor, settings,
                          Budget(session.context_tokens, session.chars_per_token))
    spec = InfillSpec(prefix=window.prefix, suffix=window.suffix, max_tokens=window.max_tokens,
                      preset=settings.preset, sampler=settings.sampler, temperature=settings.temperature,
                      single_line=window.kind == "line")
    outcome = session.infill(spec, cancel)
    shaped = shape(outcome.text, window, settings.context.max_lines)
    text = fit_indent(shaped, snap.text[snap.line_start(snap.line_of(cursor)):cursor])
    confident = confident_length(outcome, settings.min_token_confidence, len(shaped) - len(text))
    dropped = False
    if text:
        text, dropped = _finish(text, snap, tree, data, window, settings, grammars)
    if text and snap.crlf:
        confident = None if confident is None else confident + text[:confident].count("\n")
        text = text.replace("\n", "\r\n")
    if confident is not None and (confident >= len(text) or not text[:confident].strip()):
        confident = None
    return PipelineResult(text, window.kind, window.replace_end, outcome, tree, seq, dropped, confident)


def _finish(text: str, snap: DocumentSnapshot, tree, data: bytes | None, window: Window,
            settings: Settings, grammars: Grammars) -> tuple[str, bool]:
    """Trim a repeat of the suffix, then apply the syntax guard. Returns (text, dropped)."""
    doc_text = snap.text
    line = snap.line_of(window.cursor)
    line_before = doc_text[snap.line_start(line):window.cursor]
    rest = doc_text[window.replace_end:snap.line_end(line)]
    after = doc_text[window.replace_end:window.replace_end + OVERLAP_MAX_CHARS]
    candidates = [text]
    trimmed = suffix_overlap(text, after)
    guard = SyntaxGuard(grammars) if tree is not None and data is not None else None
    tries = 0
    if trimmed is not None:
        if guard is not None:
            scored = []
            for cand in (trimmed, text):
                before, after_errors = guard.errors(snap, tree, data, _rep(window, cand))
                tries += 1
                scored.append((after_errors - before, cand is text, cand))
            candidates = [c for _, _, c in sorted(scored, key=lambda s: (s[0], s[1]))]
        else:
            full = bracket_imbalance(line_before + text + rest)
            cut = bracket_imbalance(line_before + trimmed + rest)
            candidates = [trimmed, text] if cut <= full else [text, trimmed]
    if guard is None or settings.syntax_guard == "off":
        return candidates[0], False
    for cand in candidates:
        lines = cand.split("\n")
        for n in range(len(lines), 0, -1):
            if tries >= GUARD_MAX_TRIES:
                return "", True
            attempt = "\n".join(lines[:n]).rstrip()
            if not attempt.strip():
                break
            tries += 1
            if guard.accepts(snap, tree, data, _rep(window, attempt)):
                return attempt, False
    return "", True


def _rep(window: Window, text: str) -> Replacement:
    return Replacement(window.cursor, window.replace_end, text)


# ---------------------------------------------------------------------------- cache
@dataclass
class _Entry:
    uri: str
    prefix_len: int
    prefix_tail: str
    suffix_len: int
    suffix_head: str
    text: str
    replace_len: int
    kind: SpanKind


class SuggestionCache:
    """LRU of suggestions keyed by the text around the cursor (not by version).

    ``get`` answers when the text after the cursor is unchanged and the text before it equals a
    cached prefix followed by the start of that entry's suggestion (typed along), or exactly.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[tuple, _Entry] = OrderedDict()

    def clear(self) -> None:
        self._entries.clear()

    def put(self, uri: str, text: str, cursor: int, replace_end: int, suggestion: str, kind: SpanKind) -> None:
        if self.size <= 0 or not suggestion:
            return
        e = _Entry(uri, cursor, text[max(0, cursor - CACHE_KEY_CHARS):cursor], len(text) - cursor,
                   text[cursor:cursor + CACHE_KEY_CHARS], suggestion, replace_end - cursor, kind)
        key = (uri, e.prefix_len, e.prefix_tail, e.suffix_len, e.suffix_head)
        self._entries[key] = e
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

    def get(self, uri: str, text: str, cursor: int) -> tuple[str, int, SpanKind] | None:
        suffix_len = len(text) - cursor
        head = None
        for key in reversed(self._entries):
            e = self._entries[key]
            if e.uri != uri or e.suffix_len != suffix_len or e.prefix_len > cursor:
                continue
            typed = cursor - e.prefix_len
            if typed >= len(e.text):
                continue
            if head is None:
                head = text[cursor:cursor + CACHE_KEY_CHARS]
            if head != e.suffix_head:
                continue
            if text[e.prefix_len:cursor] != e.text[:typed]:
                continue
            if text[max(0, e.prefix_len - len(e.prefix_tail)):e.prefix_len] != e.prefix_tail:
                continue
            rest = e.text[typed:]
            if not rest.strip():
                continue
            self._entries.move_to_end(key)
            return rest, cursor + e.replace_len, e.kind
        return None


# ---------------------------------------------------------------------------- service
@dataclass(frozen=True)
class Suggestion:
    text: str  # inserted at ``cursor``, replacing ``doc.text[cursor:replace_end]``
    cursor: int
    replace_end: int
    kind: SpanKind
    version: int
    cached: bool
    confident: int | None = None  # chars of ``text`` before its first low-confidence token


class _Slot:
    def __init__(self, timeout_s: float) -> None:
        self.token = CancelToken(deadline=time.monotonic() + timeout_s)
        self.superseded = False


class CompletionService:
    """One per client connection: supersede slots, cache, counters."""

    def __init__(self, engine: EngineClient, docs: DocumentStore, grammars: Grammars,
                 settings: Callable[[], Settings]) -> None:
        self.engine = engine
        self.docs = docs
        self.grammars = grammars
        self.settings = settings
        self.cache = SuggestionCache(settings().cache_size)
        self.counters = Counters()
        self.latencies: deque[float] = deque(maxlen=LATENCY_SAMPLES)
        self._slots: dict[str, _Slot] = {}

    def settings_changed(self, settings: Settings, model_changed: bool) -> None:
        self.cache.size = settings.cache_size
        if model_changed:
            self.cache.clear()

    def cancel_all(self) -> None:
        for slot in self._slots.values():
            slot.superseded = True
            slot.token.cancel()

    def _supersede(self, uri: str) -> None:
        old = self._slots.pop(uri, None)
        if old is not None:
            old.superseded = True
            old.token.cancel()

    def eligible(self, doc: Document, settings: Settings) -> bool:
        return (settings.language_enabled(doc.language_id) and len(doc.text) <= settings.max_file_bytes
                and not doc.binary)

    async def suggest(self, uri: str, line: int, character: int, enc: PositionEncoding) -> Suggestion | None:
        """The suggestion at a position, or None. Raises PositionError for impossible positions.

        Everything before the first ``await`` runs when the request arrives (the server
        processes no other message in between), so the snapshot matches the request.
        """
        settings = self.settings()
        c = self.counters
        c.requests += 1
        doc = self.docs.get(uri)
        if doc is None or not self.eligible(doc, settings):
            c.empty += 1
            return None
        cursor = doc.offset_at(line, character, enc, strict=True)
        self._supersede(uri)
        hit = self.cache.get(uri, doc.text, cursor)
        if hit is not None:
            c.cache_hits += 1
            c.served += 1
            return Suggestion(hit[0], cursor, hit[1], hit[2], doc.version, cached=True)
        if not self.engine.ready:
            c.empty += 1
            return None
        snap = doc.snapshot(settings.syntax_max_bytes)
        slot = _Slot(settings.request_timeout_ms / 1000)
        self._slots[uri] = slot
        t0 = time.perf_counter()
        try:
            if settings.debounce_ms:
                await asyncio.sleep(settings.debounce_ms / 1000)
                if slot.superseded:
                    c.superseded += 1
                    return None
            job = partial(run_pipeline, snap=snap, cursor=cursor, settings=settings,
                          grammars=self.grammars, cancel=slot.token)
            result: PipelineResult = await self.engine.run(job, slot.token)
        except EngineCancelled:
            if slot.superseded:
                c.superseded += 1
            else:
                c.timeouts += 1
            return None
        except asyncio.CancelledError:
            c.cancelled += 1
            raise
        except EngineError as exc:
            c.errors += 1
            log.warning("completion failed: %s", exc)
            return None
        finally:
            if self._slots.get(uri) is slot:
                del self._slots[uri]
        self.latencies.append((time.perf_counter() - t0) * 1000)
        if result.tree is not None and self.docs.get(uri) is doc:
            doc.adopt_tree(result.tree, result.seq)
        if result.guard_dropped:
            c.guard_dropped += 1
        if settings.debug_log_user_code:  # the only place suggestions are logged
            log.info("%s v%d %s: %r (raw %r)", uri, snap.version, result.kind, result.text,
                     result.outcome.text if result.outcome else "")
        if result.text:
            self.cache.put(uri, snap.text, cursor, result.replace_end, result.text, result.kind)
        if slot.superseded:
            c.superseded += 1
            return None
        if self.docs.get(uri) is not doc or doc.version != snap.version or doc.text is not snap.text:
            c.stale += 1
            return None
        if not result.text:
            c.empty += 1
            return None
        c.served += 1
        return Suggestion(result.text, cursor, result.replace_end, result.kind, snap.version, cached=False,
                          confident=result.confident)

    def latency_percentiles(self) -> tuple[float | None, float | None]:
        if not self.latencies:
            return None, None
        data = sorted(self.latencies)
        return data[len(data) // 2], data[min(len(data) - 1, int(len(data) * 0.95))]


# ---------------------------------------------------------------------------- LSP shapes
def inline_items(doc: Document, s: Suggestion, enc: PositionEncoding) -> lsp.InlineCompletionList:
    """One item replacing the cursor's whole line (Copilot style): the range starts at the line's
    start so typed text keeps matching, and ends at its end so text after the cursor is kept
    (or absorbed) exactly."""
    line = doc.line_of(s.cursor)
    ls = doc.line_starts[line]
    le = ls + len(doc.line_text(line))
    text = doc.text
    insert = text[ls:s.cursor] + s.text + text[s.replace_end:le]
    rng = lsp.Range(lsp.Position(line, 0), lsp.Position(line, units_len(text[ls:le], enc)))
    return lsp.InlineCompletionList(items=[lsp.InlineCompletionItem(
        insert_text=insert, range=rng, command=accepted_command(text[ls:s.cursor], s.text, s.confident, text[s.cursor:le]))])


def completion_items(doc: Document, s: Suggestion, enc: PositionEncoding, markdown: bool) -> lsp.CompletionList:
    """A single item for clients without ghost text: shows the suggestion, inserts it through a
    ``textEdit`` from the start of the word at the cursor, and ``filterText`` starts with that word
    so it stays visible while the user types."""
    line = doc.line_of(s.cursor)
    ls = doc.line_starts[line]
    le = ls + len(doc.line_text(line))
    text = doc.text
    ws = s.cursor
    while ws > ls and is_word_char(text[ws - 1]):
        ws -= 1
    typed = text[ws:s.cursor]
    first = s.text.split("\n", 1)[0].replace("\r", "")
    label = (typed + first).strip() or s.text.strip().split("\n", 1)[0]
    if len(label) > LABEL_CHARS:
        label = label[: LABEL_CHARS - 1] + "\u2026"
    new_text = typed + s.text + text[s.replace_end:le]
    rng = lsp.Range(lsp.Position(line, units_len(text[ls:ws], enc)),
                    lsp.Position(line, units_len(text[ls:le], enc)))
    item = lsp.CompletionItem(
        label=label, kind=lsp.CompletionItemKind.Text, detail="mercury", filter_text=typed + first,
        sort_text="0", preselect=True, insert_text_format=lsp.InsertTextFormat.PlainText,
        text_edit=lsp.TextEdit(range=rng, new_text=new_text),
        documentation=(lsp.MarkupContent(kind=lsp.MarkupKind.Markdown,
                                         value=f"```{doc.language_id}\n{typed + s.text}\n```")
                       if markdown else typed + s.text))
    return lsp.CompletionList(is_incomplete=True, items=[item])
