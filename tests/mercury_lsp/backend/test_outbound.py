"""What may leave the machine: a remote session sends nothing for an excluded document, and no
excluded file's text among the retrieved chunks or the next-edit documents. The server is this
project's own HTTP app, in process, recording what reached it."""

from __future__ import annotations

import asyncio

import httpx
import msgspec
import pytest

from mercury_engine.options import InfillOptions
from mercury_lsp.backend.outbound import EXCLUDED_STOP, Outbound
from mercury_lsp.backend.remote import RemoteApi
from mercury_lsp.backend.remote_session import RemoteSession
from mercury_lsp.config import BackendSettings
from mercury_lsp.engine_client import CancelToken
from mercury_lsp.http.app import build_app
from mercury_lsp.http.settings import HttpSettings
from mercury_lsp.next_edit import DocState, NextEditQuery
from mercury_lsp.schema import InfillSpec, RetrievedChunk
from tests.support.http import recording

SECRET = "file:///work/secrets/keys.py"
SETTINGS = BackendSettings(url="http://remote", api="mercury")


def excluded(path: str) -> bool:
    return "secrets/" in path


@pytest.fixture
def remote():
    served = asyncio.run(recording())
    app = build_app(served, HttpSettings())
    api = RemoteApi(SETTINGS, client=httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://remote"))
    session = RemoteSession(SETTINGS, report=lambda message: None, outbound=Outbound(excluded), api=api)
    yield session, served
    session.close()


def test_an_excluded_document_is_never_sent(remote):
    session, served = remote
    spec = InfillSpec(prefix="KEY = ", suffix="\n", max_tokens=8, options=InfillOptions(single_line=True), uri=SECRET)
    out = session.infill(spec, CancelToken())
    assert out.text == "" and out.stop_reason == EXCLUDED_STOP and served.specs == []
    doc = DocState(SECRET, "KEY = 2\n", "python", 1, ("KEY = 1\n",), 1.0)
    assert session.next_edit(NextEditQuery((doc,), SECRET, 3), CancelToken()) is None


def test_excluded_chunks_and_documents_are_left_out_of_what_is_sent(remote):
    session, served = remote
    chunks = (RetrievedChunk(path="secrets/keys.py", text="KEY = 'hunter2'\n"),
              RetrievedChunk(path="util.py", text="def f(): pass\n"))
    spec = InfillSpec(prefix="x = ", suffix="\n", max_tokens=8, uri="file:///work/main.py", retrieved=chunks)
    session.infill(spec, CancelToken())
    (seen,) = served.specs
    assert seen.retrieved == chunks[1:]
    sent: list[dict] = []
    real = session.api.next_edit

    async def spy(query, cancel):
        sent.append(msgspec.to_builtins([d.uri for d in query.docs]))
        return await real(query, cancel)

    session.api.next_edit = spy
    main = DocState("file:///work/main.py", "def g(total):\n    return count\n", "python", 2,
                    ("def g(count):\n    return count\n",), 1.0)
    secret = DocState(SECRET, "KEY = 2\n", "python", 1, (), 0.0)
    assert session.next_edit(NextEditQuery((main, secret), main.uri, 10), CancelToken()) is not None
    assert sent == [[main.uri]]
