"""Inline completion (``textDocument/inlineCompletion``, LSP 3.18) and the ``textDocument/completion``
fallback share one service per connection:

    snapshot (event loop) -> [worker: ``pipeline.run_pipeline``] -> version check

* A newer request for a document supersedes older ones: they are cancelled (a queued one never
  runs, a running one stops at its next denoising step) and answer empty.
* A result whose document moved on is dropped (never stale text) but cached: the cache answers
  the next request without the engine when the user has typed the start of the suggestion, or
  returns to a state already seen.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from mercury_lsp.completion.cache import SuggestionCache
from mercury_lsp.completion.choose import MemoryRequest
from mercury_lsp.completion.pipeline import PipelineResult, run_pipeline
from mercury_lsp.config import Settings
from mercury_lsp.documents import Document, DocumentStore, PositionEncoding
from mercury_lsp.engine_client import CancelToken, EngineCancelled, EngineClient, EngineError
from mercury_lsp.exclusion import Exclusion
from mercury_lsp.memory import Memory, OpenDoc
from mercury_lsp.memory.service import uri_path
from mercury_lsp.memory.sources import is_test_path
from mercury_lsp.schema import Counters, SpanKind
from mercury_lsp.syntax import Grammars

log = logging.getLogger(__name__)

LATENCY_SAMPLES = 2048  # engine latencies kept for the p50/p95 of ``mercury/stats``
# The text the newest edits removed is memory too (a line cut here is often typed again there):
# this many edit records, as one pseudo-document.
REMOVED_RECORDS = 32
REMOVED_URI = "mercury-memory:removed"
REMOVED_CONTEXT_CHARS = 400  # of the document on each side of a removal: the lines around it
P95 = 0.95


@dataclass(frozen=True)
class Suggestion:
    text: str  # inserted at ``cursor``, replacing ``doc.text[cursor:replace_end]``
    cursor: int
    replace_end: int
    kind: SpanKind
    version: int
    cached: bool
    confident: int | None = None  # chars of ``text`` before its first low-confidence token


def recent_removals(docs: DocumentStore, excluded) -> tuple[OpenDoc, ...]:
    """The text the newest edits removed (of documents not excluded), each between the lines that
    stood around it (the document's text before and after the edit: a removed line is found by
    what led to it and followed it), as one pseudo-document."""
    parts = []
    for r in docs.history.recent(limit=REMOVED_RECORDS):
        if not r.old_text.strip() or excluded(r.uri):
            continue
        doc = docs.get(r.uri)
        before = doc.text[max(0, r.offset - REMOVED_CONTEXT_CHARS):min(r.offset, len(doc.text))] if doc else ""
        before = before[before.find("\n") + 1:] if "\n" in before else before
        after = doc.text[r.offset:r.offset + REMOVED_CONTEXT_CHARS] if doc else ""
        after = after[:after.rfind("\n") + 1] if "\n" in after else ""
        parts.append(before + r.old_text + after)
    if not parts:
        return ()
    text = "\n".join(reversed(parts)) + "\n"
    return (OpenDoc(REMOVED_URI, hash(text), text),)


class _Slot:
    def __init__(self, timeout_s: float, prefetch: tuple[str, int] | None = None) -> None:
        self.token = CancelToken(deadline=time.monotonic() + timeout_s)
        self.superseded = False
        self.prefetch = prefetch  # (document text, cursor) a speculative run is for
        self.done = asyncio.Event()


class CompletionService:
    """One per client connection: supersede slots, cache, counters."""

    def __init__(self, engine: EngineClient, docs: DocumentStore, grammars: Grammars,
                 settings: Callable[[], Settings], memory: Callable[[], Memory | None] = lambda: None) -> None:
        self.engine = engine
        self.memory = memory
        self.docs = docs
        self.grammars = grammars
        self.settings = settings
        self.cache = SuggestionCache(settings().cache_size)
        self.counters = Counters()
        self.latencies: deque[float] = deque(maxlen=LATENCY_SAMPLES)
        self._slots: dict[str, _Slot] = {}
        # Content exclusion (the server sets one that knows the workspace roots).
        self.exclusion: Callable[[], Exclusion] = lambda: Exclusion.from_settings(self.settings())

    def settings_changed(self, settings: Settings, model_changed: bool) -> None:
        self.cache.size = settings.cache_size
        if model_changed:
            self.cache.clear()

    def cancel_all(self) -> None:
        for slot in self._slots.values():
            slot.superseded = True
            slot.token.cancel()

    def cancel(self, uri: str) -> None:
        """Supersede the request running for ``uri`` (it answers empty)."""
        old = self._slots.pop(uri, None)
        if old is not None:
            old.superseded = True
            old.token.cancel()

    def eligible(self, doc: Document, settings: Settings) -> bool:
        """Suggestions here: an enabled language, not excluded (its text goes nowhere), not too
        large, not binary."""
        return (settings.language_enabled(doc.language_id) and len(doc.text) <= settings.max_file_bytes
                and not doc.binary and self.exclusion().enabled(doc.uri, doc.language_id))

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
        ahead = self._slots.get(uri)
        if ahead is not None and ahead.prefetch is not None and ahead.prefetch == (doc.text, cursor):
            await ahead.done.wait()  # the speculative run for exactly this request: its answer is cached
            if self.docs.get(uri) is not doc:
                c.stale += 1
                return None
            c.prefetch_used += 1
        self.cancel(uri)
        scope = self.scope(doc, settings)
        hit = self.cache.get(uri, doc.text, cursor, settings.typeahead, scope)
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
                          grammars=self.grammars, cancel=slot.token, memory=self.memory_request(doc, settings))
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
        self._count_guard(result)
        if settings.debug_log_user_code:  # the only place suggestions are logged
            log.info("%s v%d %s: %r (raw %r)", uri, snap.version, result.kind, result.text,
                     result.outcome.text if result.outcome else "")
        if result.text:
            self.cache.put(uri, snap.text, cursor, result.replace_end, result.text, result.kind, scope)
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

    async def prefetch(self, uri: str, cursor: int) -> None:
        """Speculative prefetch (setting ``prefetch``): after a ``didChange`` whose edit ends at
        ``cursor``, start the request the editor is about to make; its answer goes to the
        suggestion cache, and a request for the same text and cursor waits for it instead of
        starting again. The next edit or request supersedes it at once (its cancel token)."""
        settings = self.settings()
        doc = self.docs.get(uri)
        if (not settings.prefetch or doc is None or not self.eligible(doc, settings) or not self.engine.ready
                or not 0 <= cursor <= len(doc.text)):
            return
        self.cancel(uri)
        scope = self.scope(doc, settings)
        if self.cache.get(uri, doc.text, cursor, settings.typeahead, scope) is not None:
            return  # typeahead or a repeat answers it already
        snap = doc.snapshot(settings.syntax_max_bytes)
        slot = _Slot(settings.request_timeout_ms / 1000, prefetch=(snap.text, cursor))
        self._slots[uri] = slot
        self.counters.prefetches += 1
        try:
            job = partial(run_pipeline, snap=snap, cursor=cursor, settings=settings,
                          grammars=self.grammars, cancel=slot.token, memory=self.memory_request(doc, settings))
            result: PipelineResult = await self.engine.run(job, slot.token)
            if result.tree is not None and self.docs.get(uri) is doc:
                doc.adopt_tree(result.tree, result.seq)
            self._count_guard(result)
            if result.text:
                self.cache.put(uri, snap.text, cursor, result.replace_end, result.text, result.kind, scope)
        except (EngineCancelled, EngineError):
            pass  # superseded, timed out or failed: the request (if any) runs on its own
        finally:
            slot.done.set()
            if self._slots.get(uri) is slot:
                del self._slots[uri]

    def scope(self, doc: Document, settings: Settings) -> int:
        """The state of the rest of the workspace a suggestion for ``doc`` depends on: the memory's
        changes and the other open documents' versions (0 without the memory)."""
        memory = self.memory()
        if memory is None or not settings.memory.enabled:
            return 0
        return hash((memory.generation, *((d.uri, d.version) for d in self.docs if d.uri != doc.uri)))

    def memory_request(self, doc: Document, settings: Settings) -> MemoryRequest | None:
        """The memory and the connection's other open documents as they are now (on the event
        loop, with the snapshot: the job sees the open texts of the request's moment)."""
        memory = self.memory()
        if memory is None or not settings.memory.enabled:
            return None
        excluded = self.exclusion().excludes
        others = tuple(OpenDoc(d.uri, d.version, d.text, d.grammar or "") for d in self.docs
                       if d.uri != doc.uri and not d.binary and self.docs.get(d.uri) is d and not excluded(d.uri))
        removed = recent_removals(self.docs, excluded)
        return MemoryRequest(memory, others + removed, doc.grammar or "", is_test_path(uri_path(doc.uri) or doc.uri))

    def _count_guard(self, result: PipelineResult) -> None:
        """The syntax guard's work, for requests and prefetches alike (a prefetch's answer is the
        request's)."""
        self.counters.guard_dropped += result.guard_dropped
        self.counters.guard_prefix += result.guard_prefix

    def latency_percentiles(self) -> tuple[float | None, float | None]:
        if not self.latencies:
            return None, None
        data = sorted(self.latencies)
        return data[len(data) // 2], data[min(len(data) - 1, int(len(data) * P95))]
