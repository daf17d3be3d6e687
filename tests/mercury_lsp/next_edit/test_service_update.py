"""The second, versioned update of ``NextEditService`` (workspace files that are not open): sent
once after the answer, for the request's document version, and not at all once that document
moved on or a newer request superseded the old one. A gated fake engine decides when the
background part runs."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from types import SimpleNamespace

import pytest

from mercury_lsp.backend.session import Capabilities
from mercury_lsp.config import Settings
from mercury_lsp.documents import DocumentStore, PositionEncoding
from mercury_lsp.next_edit.query import DocState, EngineEdits, NextEditQuery
from mercury_lsp.next_edit.service import NextEditService
from mercury_lsp.syntax import Grammars, grammar_for

URI, DISK = "file:///ws/shapes.py", "file:///ws/uses.py"
SHAPES = "def area(width, height):\n    return width * height\n\n\nprint(area(1, 2))\n"
USES = "from shapes import area\n\nprint(area(3, 4))\n"
SESSION = SimpleNamespace(capabilities=Capabilities(edit_model=True), info=SimpleNamespace(model="fake"),
                          edit_model=EngineEdits(SimpleNamespace(context_tokens=256, path="")))


class GatedEngine:
    """Runs the answer at once; a background update (its token is one of the service's update
    tokens) waits for ``release``."""
    ready = True

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.service: NextEditService | None = None

    async def run(self, job, token):
        if any(token is t for t in self.service._update_slots.values()):
            await self.release.wait()
        return job(SESSION)


def with_disk_file(query: NextEditQuery) -> NextEditQuery:
    """The workspace: one file on disk that uses the renamed function."""
    return replace(query, docs=(*query.docs, DocState(DISK, USES, "python", None)))


@pytest.fixture
def setup():
    engine, sent = GatedEngine(), []
    docs = DocumentStore(grammar_for)
    docs.open(URI, "python", 1, SHAPES)
    docs.change(URI, 2, [((0, 4, 0, 8), "surface")], PositionEncoding.UTF16)
    service = NextEditService(engine, docs, Grammars(), Settings, lambda: PositionEncoding.UTF16,
                              with_disk_file, sent.append)
    engine.service = service
    return engine, docs, service, sent


async def settle(service: NextEditService) -> None:
    """Wait for the background updates to end."""
    await asyncio.gather(*list(service._update_tasks))


async def predict(service, version):
    return await service.predict(URI, version, 0, 11, update=True)


@pytest.mark.asyncio
async def test_the_update_follows_the_answer_with_the_files_that_are_not_open(setup):
    engine, docs, service, sent = setup
    result = await predict(service, 2)
    assert result.update_pending and {e.uri for e in result.edits} == {URI}
    assert sent == []
    engine.release.set()
    await settle(service)
    update, = sent
    assert (update.text_document.uri, update.text_document.version, update.update) == (URI, 2, 2)
    assert [(e.uri, e.document_version, e.new_text) for e in update.result.edits] == [(DISK, None, "surface")] * 2


@pytest.mark.asyncio
async def test_no_update_once_the_document_moved_on_or_a_newer_request_came(setup):
    engine, docs, service, sent = setup
    await predict(service, 2)
    docs.change(URI, 3, [((4, 0, 4, 0), "# note\n")], PositionEncoding.UTF16)
    engine.release.set()
    await settle(service)
    assert sent == []  # the document moved on: its update would be stale
    engine.release.clear()
    await predict(service, 3)
    await predict(service, 3)  # the same version again: the cached answer, a new update supersedes
    engine.release.set()
    await settle(service)
    assert [u.text_document.version for u in sent] == [3]


@pytest.mark.asyncio
async def test_the_update_carries_the_notes_of_the_files_that_are_not_open():
    engine, sent = GatedEngine(), []
    docs = DocumentStore(grammar_for)
    docs.open(URI, "python", 1, SHAPES)
    docs.change(URI, 2, [((0, 4, 0, 8), "surface")], PositionEncoding.UTF16)
    looked_up = 'import shapes\n\nf = getattr(shapes, "area")\n'

    def workspace(query: NextEditQuery) -> NextEditQuery:
        return replace(query, docs=(*query.docs, DocState(DISK, looked_up, "python", None)))

    service = NextEditService(engine, docs, Grammars(), Settings, lambda: PositionEncoding.UTF16, workspace,
                              sent.append)
    engine.service = service
    engine.release.set()
    result = await predict(service, 2)
    await settle(service)
    assert result.notes == []
    (update,) = sent
    assert update.result.edits == []
    assert [(n.uri, n.document_version, n.range.start.line) for n in update.result.notes] == [(DISK, None, 2)]


def test_a_prediction_reads_the_open_documents_of_its_languages_family():
    docs = DocumentStore(grammar_for)
    docs.open("file:///ws/src/encrypt.ts", "typescript", 1, "export const a = 1\n")
    docs.open("file:///ws/test/encrypt.test.mjs", "javascript", 1, "test('a', () => {})\n")
    docs.open("file:///ws/tools/gen.py", "python", 1, "print(1)\n")
    service = NextEditService(GatedEngine(), docs, Grammars(), Settings, lambda: PositionEncoding.UTF16)
    read = {d.uri for d in service._read(docs.get("file:///ws/src/encrypt.ts"))}
    # a TypeScript library's JavaScript tests are read with it; another language's files are not
    assert read == {"file:///ws/src/encrypt.ts", "file:///ws/test/encrypt.test.mjs"}
