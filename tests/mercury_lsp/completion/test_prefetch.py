"""Speculative prefetch: a didChange starts the request the editor is about to make; the request
for exactly that text and cursor takes its answer, anything else runs on its own."""

from __future__ import annotations

import asyncio

from mercury_lsp.completion import CompletionService
from mercury_lsp.documents import DocumentStore, PositionEncoding
from mercury_lsp.server.handlers.documents import prefetch_after
from mercury_lsp.syntax import Grammars, grammar_for
from tests.mercury_lsp.completion.test_typeahead import RecordingEngine, position
from tests.support.settings import drafts

GRAMMARS = Grammars()
UTF16 = PositionEncoding.UTF16
URI = "file:///prefetch.py"


def make_service(prefetch: bool = True):
    store = DocumentStore(grammar_for)
    engine = RecordingEngine()
    config = drafts(prefetch=prefetch)
    return CompletionService(engine, store, GRAMMARS, lambda: config), store, engine


def test_the_request_after_a_prefetch_takes_its_answer_without_the_engine():
    service, store, engine = make_service()
    text = "def f(x):\n    return \n"
    store.open(URI, "python", 1, text)
    cursor = text.index("return ") + len("return ")

    async def drive():
        await service.prefetch(URI, cursor)
        assert engine.calls == 1 and service.counters.prefetches == 1
        return await service.suggest(URI, *position(text, cursor), UTF16)

    s = asyncio.run(drive())
    assert s is not None and engine.calls == 1 and s.text == engine.answers[-1][2]


def test_a_request_waits_for_the_prefetch_running_for_it():
    service, store, engine = make_service()
    text = "x = \n"
    store.open(URI, "python", 1, text)
    gate = asyncio.Event

    class SlowEngine(RecordingEngine):
        async def run(self, job, token):
            await self.release.wait()
            return await super().run(job, token)

    slow = SlowEngine()
    service.engine = slow

    async def drive():
        slow.release = gate()
        ahead = asyncio.ensure_future(service.prefetch(URI, 4))
        await asyncio.sleep(0)  # the prefetch is now waiting on the engine
        asked = asyncio.ensure_future(service.suggest(URI, 0, 4, UTF16))
        await asyncio.sleep(0)
        slow.release.set()
        await ahead
        return await asked

    s = asyncio.run(drive())
    assert s is not None and slow.calls == 1 and service.counters.prefetch_used == 1


def test_an_edit_after_the_prefetch_runs_the_engine_again_and_off_never_prefetches():
    service, store, engine = make_service()
    store.open(URI, "python", 1, "y = \n")
    asyncio.run(service.prefetch(URI, 4))
    store.change(URI, 2, [((0, 4, 0, 4), "1 + ")], UTF16)
    s = asyncio.run(service.suggest(URI, 0, 8, UTF16))
    assert s is not None and engine.calls == 2
    off, store2, engine2 = make_service(prefetch=False)
    store2.open(URI, "python", 1, "y = \n")
    asyncio.run(off.prefetch(URI, 4))
    assert engine2.calls == 0 and off.counters.prefetches == 0


def test_the_prefetch_cursor_is_the_end_of_the_inserted_text():
    store = DocumentStore(grammar_for)
    store.open(URI, "python", 1, "a😀b\n")
    store.change(URI, 2, [((0, 3, 0, 3), "xé")], UTF16)  # after the astral character (2 UTF-16 units)
    started = []

    class Server:
        docs, position_encoding = store, UTF16

        class completions:
            @staticmethod
            def prefetch(uri, cursor):
                return (uri, cursor)

        @staticmethod
        def spawn(job):
            started.append(job)

    prefetch_after(Server, URI, ((0, 3, 0, 3), "xé"))
    assert started == [(URI, 4)] and store.get(URI).text[:4] == "a😀xé"[:4]
    prefetch_after(Server, URI, ((9, 0, 9, 0), "z"))  # a position past the end: nothing starts
    assert len(started) == 1
