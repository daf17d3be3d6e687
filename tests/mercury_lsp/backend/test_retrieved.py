"""Retrieved context through the seam: written as the current file's comments, kept whole within
the budget, and placed in the local engine's window before the prefix (never at its cost)."""

from __future__ import annotations

import httpx
import msgspec
import pytest

from mercury_engine import Engine
from mercury_lsp.backend.local import load_session
from mercury_lsp.backend.prompts import build_prompt, parse_prompt
from mercury_lsp.backend.retrieved import HEADER, comment_block, fit, line_comment
from mercury_lsp.engine_client import LoadSpec
from mercury_lsp.http.app import build_app
from mercury_lsp.http.settings import HttpLimits, HttpSettings
from mercury_lsp.schema import InfillSpec, RetrievedChunk
from tests.support.http import recording

pytestmark = pytest.mark.usefixtures("one_torch_thread")
IO = RetrievedChunk(path="util/io.py", text="def read(path):\n    return open(path).read()\n")
CONST = RetrievedChunk(path="const.py", text="LIMIT = 10")
CHUNKS = (RetrievedChunk(path="util/io.py", text="def read(p):\n    return p\n"),
          RetrievedChunk(path="const.py", text="LIMIT = 10\n"))


def test_chunks_are_comments_of_the_current_language_most_relevant_nearest_the_prefix():
    block = comment_block((IO, CONST), "file:///src/main.py")
    assert block.splitlines() == [f"# {HEADER.format(path='const.py')}", "# LIMIT = 10",
                                  f"# {HEADER.format(path='util/io.py')}", "# def read(path):",
                                  "#     return open(path).read()"]
    assert comment_block((IO,), "file:///src/main.ts").startswith("// Compare this snippet from util/io.py:\n")
    assert line_comment("file:///notes.unknown") is None and comment_block((IO,), "file:///a.unknown") == ""
    assert comment_block((IO,), None) == comment_block((IO,), "file:///x.py")  # no document: the chunks' language
    assert comment_block((RetrievedChunk(path="notes", text="x"),), None) == ""  # none known: left out


def test_the_budget_keeps_leading_chunks_whole():
    blocks = ["a" * 30, "b" * 50, "c" * 3]
    count = len  # one token a character
    assert fit(blocks, 100, count) == blocks
    assert fit(blocks, 42, count) == blocks[:1]  # the third would fit, but never after a dropped one
    assert fit(blocks, 10, count) == []


def test_file_separator_prompts_name_only_the_current_files_name():
    prompt = build_prompt("qwen", "a = ", "\n", CHUNKS, "file:///home/me/src/main.py")
    assert prompt.startswith("<|file_sep|>const.py\nLIMIT = 10\n<|file_sep|>util/io.py\n")
    assert "<|file_sep|>main.py\n<|fim_prefix|>a = " in prompt and "/home/me" not in prompt
    assert parse_prompt(prompt).retrieved == CHUNKS  # most relevant first again


@pytest.mark.asyncio
async def test_the_http_api_takes_retrieved_chunks_and_counts_them_in_its_limit():
    """A chunk past the prompt's character limit is left out (the schema cannot state a limit on
    a sum, so a request the schema allows is answered: issue 27, F10)."""
    backend = await recording()
    app = build_app(backend, HttpSettings(limits=HttpLimits(max_prompt_chars=200)))
    body = {"prompt": "a = ", "retrieved": [msgspec.to_builtins(c) for c in CHUNKS]}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        ok = await c.post("/v1/completions", json=body)
        big = await c.post("/v1/completions", json={**body, "retrieved": [{"path": "b.py", "text": "x" * 300}]})
    assert ok.status_code == 200 and backend.specs[0].retrieved == CHUNKS
    assert big.status_code == 200 and backend.specs[1].retrieved == ()


@pytest.fixture(scope="module")
def session(tiny_model):
    s = load_session(LoadSpec(str(tiny_model), "cpu", "float32", threads=1, context_tokens=192))
    yield s
    s.close()


def prompt_tokens(session, spec: InfillSpec) -> int:
    return session.infill(spec, None).prompt_tokens


def test_the_local_engine_reads_the_chunks_before_the_prefix_within_its_window(session, monkeypatch):
    seen: list[str] = []
    real = Engine.infill

    def spy(self, prefix, *args, **kwargs):
        seen.append(prefix)
        return real(self, prefix, *args, **kwargs)

    monkeypatch.setattr(Engine, "infill", spy)
    base = InfillSpec(prefix="def main():\n    x = ", suffix="\n", max_tokens=4, uri="file:///src/main.py")
    plain = prompt_tokens(session, base)
    with_io = InfillSpec(prefix=base.prefix, suffix=base.suffix, max_tokens=4, uri=base.uri, retrieved=(IO,))
    assert prompt_tokens(session, with_io) > plain
    assert seen[-1] == comment_block((IO,), base.uri) + base.prefix
    huge = RetrievedChunk(path="big.py", text="y = 1\n" * 400)  # past the whole window: left out
    with_huge = InfillSpec(prefix=base.prefix, suffix=base.suffix, max_tokens=4, uri=base.uri, retrieved=(huge,))
    assert prompt_tokens(session, with_huge) == plain and seen[-1] == base.prefix
    long_prefix = "# a comment line of the file itself\n" * 60  # the window is full: no room for chunks
    full = InfillSpec(prefix=long_prefix, suffix="\n", max_tokens=4, uri=base.uri, retrieved=(CONST,))
    session.infill(full, None)
    assert seen[-1] == long_prefix
