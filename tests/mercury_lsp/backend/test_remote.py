"""The remote backend's three protocols, each against this project's own HTTP app (which reads
every FIM format back), in process: what goes over the wire and what comes back."""

from __future__ import annotations

import httpx
import msgspec
import pytest

from mercury_engine.options import InfillOptions
from mercury_lsp.backend.base import Unavailable
from mercury_lsp.backend.prompts import FORMATS
from mercury_lsp.backend.remote import RemoteApi
from mercury_lsp.backend.retrieved import comment_block
from mercury_lsp.config import BackendSettings
from mercury_lsp.engine_client import CancelToken
from mercury_lsp.http.app import build_app
from mercury_lsp.http.settings import HttpSettings
from mercury_lsp.next_edit import DocState, NextEditQuery
from mercury_lsp.schema import InfillSpec, RetrievedChunk
from tests.support.http import RecordingBackend, recording

pytestmark = pytest.mark.asyncio
SPEC = InfillSpec(prefix="def f(x):\n    return ", suffix="\n\nf(1)\n", max_tokens=12,
                  options=InfillOptions(single_line=True))


def remote(settings: BackendSettings, served: RecordingBackend) -> RemoteApi:
    app = build_app(served, HttpSettings())
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://remote")
    return RemoteApi(settings, client=client)


@pytest.mark.parametrize("api,fmt", [("mercury", "starcoder"), ("openai-fim", "qwen"), ("openai-fim", "codestral"),
                                     ("openai-fim", "codellama"), ("inception", "starcoder")])
async def test_each_protocol_round_trips(api: str, fmt: str):
    served = await recording(text="x * 2<|endoftext|>" if api != "mercury" else "x * 2")
    backend = remote(BackendSettings(url="http://remote", api=api, prompt_format=fmt,
                                     model="test-model" if api != "mercury" else None), served)
    await backend.start()
    assert backend.model == "test-model"
    out = await backend.infill(SPEC, CancelToken())
    assert out.text == "x * 2"
    (seen,) = served.specs
    assert (seen.prefix, seen.suffix, seen.max_tokens) == (SPEC.prefix, SPEC.suffix, 12)
    assert seen.options.single_line == (api == "mercury")  # only our own server knows the extension


async def test_next_edit_goes_to_a_mercury_server_and_errors_are_typed():
    served = await recording()
    backend = remote(BackendSettings(url="http://remote", api="mercury"), served)
    doc = DocState("file:///a.py", "def f(total):\n    return count\n", "python", 3,
                   ("def f(count):\n    return count\n",), 1.0)
    result = await backend.next_edit(NextEditQuery((doc,), doc.uri, 11), CancelToken())
    assert result.model == "test-model"
    wrong = remote(BackendSettings(url="http://remote", api="mercury", model="other"), served)
    with pytest.raises(Unavailable, match="404"):
        await wrong.infill(SPEC, CancelToken())


async def test_fim_servers_have_no_next_edit_and_unreachable_is_typed():
    backend = RemoteApi(BackendSettings(url="http://127.0.0.1:9", api="openai-fim", model="m"))
    doc = DocState("file:///a.py", "def f(total):\n    return count + 1\n", "python", 3,
                   ("def f(count):\n    return count + 1\n",), 1.0)
    assert await backend.next_edit(NextEditQuery((doc,), doc.uri, 11), CancelToken()) is None
    with pytest.raises(Unavailable, match="cannot reach"):
        await backend.infill(SPEC, CancelToken())
    await backend.close()


CHUNKS = (RetrievedChunk(path="util/io.py", text="def read(p):\n    return p\n"),
          RetrievedChunk(path="const.py", text="LIMIT = 10\n"))


@pytest.mark.parametrize("api,fmt", [("mercury", "starcoder"), ("openai-fim", "qwen"), ("openai-fim", "starcoder"),
                                     ("openai-fim", "codegemma"), ("openai-fim", "codellama"),
                                     ("openai-fim", "codestral"), ("inception", "starcoder")])
async def test_retrieved_context_reaches_the_server_in_each_protocols_way(api: str, fmt: str):
    served = await recording()
    backend = remote(BackendSettings(url="http://remote", api=api, prompt_format=fmt,
                                     model="test-model" if api != "mercury" else None), served)
    spec = msgspec.structs.replace(SPEC, uri="file:///home/me/src/main.py", retrieved=CHUNKS)
    await backend.infill(spec, CancelToken())
    (seen,) = served.specs
    if api == "mercury" or (api == "openai-fim" and FORMATS[fmt].file_sep is not None):  # a field, or files
        assert seen.retrieved == CHUNKS and seen.prefix == SPEC.prefix
    else:  # comments of the current file's language, before the prefix
        assert seen.retrieved == () and seen.prefix == comment_block(CHUNKS, spec.uri) + SPEC.prefix
    assert "/home/me" not in seen.prefix  # the user's directories are never sent

