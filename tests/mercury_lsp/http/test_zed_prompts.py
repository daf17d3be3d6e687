"""Zed's edit-prediction requests, byte for byte, read back into prefix and suffix.

The bodies are what Zed's ``open_ai_compatible_api`` provider posts to ``/v1/completions``
(crates/edit_prediction/src/fim.rs: ``format_fim_prompt`` and ``fim_stop_tokens``;
``RawCompletionRequest``: model, prompt, max_tokens, stop; temperature left out). They are
written out here literally, not built with the server's own table.
"""

from __future__ import annotations

import httpx
import pytest

from mercury_lsp.backend.prompts import FORMATS, build_prompt, clean_completion, parse_prompt
from mercury_lsp.http.app import build_app
from mercury_lsp.http.settings import HttpSettings
from tests.support.http import RecordingBackend, recording

PREFIX = "def area(r):\n    return 3.14 * "
SUFFIX = "\n\n\nprint(area(2))\n"

ZED_BODIES = {
    "codellama": {"prompt": f"<PRE> {PREFIX} <SUF>{SUFFIX} <MID>", "stop": ["<PRE>", "<SUF>", "<MID>"]},
    "starcoder": {"prompt": f"<fim_prefix>{PREFIX}<fim_suffix>{SUFFIX}<fim_middle>",
                  "stop": ["<|endoftext|>", "<fim_prefix>", "<fim_middle>", "<fim_suffix>"]},
    "deepseek": {"prompt": f"<｜fim▁begin｜>{PREFIX}<｜fim▁hole｜>{SUFFIX}<｜fim▁end｜>",
                 "stop": ["<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"]},
    "qwen": {"prompt": f"<|fim_prefix|>{PREFIX}<|fim_suffix|>{SUFFIX}<|fim_middle|>",
             "stop": ["<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"]},
    "codegemma": {"prompt": f"<|fim_prefix|>{PREFIX}<|fim_suffix|>{SUFFIX}<|fim_middle|>",
                  "stop": ["<|file_separator|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"]},
    "codestral": {"prompt": f"[SUFFIX]{SUFFIX}[PREFIX]{PREFIX}", "stop": ["[PREFIX]", "[SUFFIX]"]},
    "glm": {"prompt": f"<|code_prefix|>{PREFIX}<|code_suffix|>{SUFFIX}<|code_middle|>",
            "stop": ["<|endoftext|>", "<|code_prefix|>", "<|code_suffix|>", "<|code_middle|>"]},
}


def client(backend: RecordingBackend) -> httpx.AsyncClient:
    app = build_app(backend, HttpSettings())
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


@pytest.mark.asyncio
@pytest.mark.parametrize("fmt", sorted(ZED_BODIES))
async def test_zed_request_body_is_read_back(fmt: str):
    backend = await recording(text="r * r")
    body = {"model": "test-model", "max_tokens": 256, **ZED_BODIES[fmt]}
    async with client(backend) as c:
        r = await c.post("/v1/completions", json=body)
    assert r.status_code == 200, r.text
    (spec,) = backend.specs
    assert (spec.prefix, spec.suffix, spec.max_tokens) == (PREFIX, SUFFIX, 256)
    answer = r.json()  # the fields Zed's RawCompletionResponse reads
    assert answer["choices"][0]["text"] == "r * r"
    assert {"id", "object", "created", "model", "choices", "usage"} <= set(answer)
    assert set(answer["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens"}


def test_server_table_writes_what_zed_writes():
    for fmt, body in ZED_BODIES.items():
        assert build_prompt(fmt, PREFIX, SUFFIX) == body["prompt"]
        assert list(FORMATS[fmt].stop) == body["stop"]


def test_plain_prompt_and_edge_cases():
    assert parse_prompt("x = ").format is None and parse_prompt("x = ").prefix == "x = "
    # Markers inside the code do not confuse the reader: the first hole marker splits.
    p = parse_prompt("<fim_prefix>a<fim_suffix>b<fim_suffix>c<fim_middle>")
    assert (p.prefix, p.suffix) == ("a", "b<fim_suffix>c")
    assert parse_prompt("<fim_prefix>unterminated").format is None
    assert clean_completion("x + 1<|endoftext|>junk") == "x + 1"


@pytest.mark.asyncio
async def test_prompt_and_suffix_and_ambiguity():
    backend = await recording()
    async with client(backend) as c:
        ok = await c.post("/v1/completions", json={"prompt": "a = ", "suffix": "\nb = 2\n", "max_tokens": 8})
        both = await c.post("/v1/completions", json={"prompt": ZED_BODIES["starcoder"]["prompt"], "suffix": "x"})
    assert ok.status_code == 200 and (backend.specs[0].prefix, backend.specs[0].suffix) == ("a = ", "\nb = 2\n")
    assert both.status_code == 400 and both.json()["error"]["param"] == "suffix"


@pytest.mark.asyncio
async def test_stop_sequences_cut_the_text():
    backend = await recording(text="r * r\nprint(1)")
    async with client(backend) as c:
        r = await c.post("/v1/completions", json={"prompt": "x", "stop": "\n"})
    assert r.json()["choices"][0] == {"text": "r * r", "index": 0, "finish_reason": "stop", "logprobs": None}
