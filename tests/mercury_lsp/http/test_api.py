"""``mercury-lsp http`` in another process, driven by real clients (the ``openai`` package,
httpx, raw sockets): answers, streaming, errors in OpenAI's shape, limits, slow clients."""

from __future__ import annotations

import json
import socket
import subprocess

import httpx
import openai
import pytest

from tests.support.http import MERCURY, LiveServer

LIMITS = {"headerTimeoutS": 1.0, "bodyTimeoutS": 1.0, "maxBodyBytes": 65536, "maxTokens": 64}
PROMPT, SUFFIX = "def add(a, b):\n    return ", "\n\n\nprint(add(1, 2))\n"


@pytest.fixture(scope="module")
def server(tiny_model):
    srv = LiveServer("--limits", json.dumps(LIMITS), model=tiny_model).start().ready()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def oai(server):
    # Closed here, not by the garbage collector: an SDK client's __del__ runs its transport's
    # close (and logging) whenever a collection happens, which once fell inside another test's
    # ast.parse and hit CPython 3.11.7's shared AST state (gh-106905).
    with openai.OpenAI(base_url=server.url + "/v1", api_key="unused-on-loopback", max_retries=0) as client:
        yield client


def model_id(oai: openai.OpenAI) -> str:
    (card,) = oai.models.list().data
    return card.id


def test_openai_client_completion(oai):
    model = model_id(oai)
    r = oai.completions.create(model=model, prompt=PROMPT, suffix=SUFFIX, max_tokens=8, temperature=0)
    assert r.object == "text_completion" and r.model == model
    assert isinstance(r.choices[0].text, str) and r.choices[0].finish_reason in ("stop", "length")
    assert r.usage.prompt_tokens > 0
    again = oai.completions.create(model=model, prompt=PROMPT, suffix=SUFFIX, max_tokens=8, temperature=0)
    assert again.choices[0].text == r.choices[0].text  # greedy: deterministic


def test_openai_client_streaming(oai):
    model = model_id(oai)
    whole = oai.completions.create(model=model, prompt=PROMPT, suffix=SUFFIX, max_tokens=8)
    chunks = list(oai.completions.create(model=model, prompt=PROMPT, suffix=SUFFIX, max_tokens=8, stream=True))
    assert chunks and all(c.object == "text_completion" for c in chunks)
    assert "".join(c.choices[0].text for c in chunks) == whole.choices[0].text
    assert chunks[-1].choices[0].finish_reason in ("stop", "length")


def test_openai_client_errors(oai):
    with pytest.raises(openai.NotFoundError) as err:
        oai.completions.create(model="gpt-4", prompt="x")
    assert err.value.body["code"] == "model_not_found"
    with pytest.raises(openai.BadRequestError):
        oai.completions.create(model=model_id(oai), prompt="x", max_tokens=-1)


@pytest.mark.parametrize(("body", "param"), [
    ({"prompt": 3}, "prompt"),
    ({"prompt": "x", "max_tokens": 0}, "max_tokens"),
    ({"prompt": "x", "max_tokens": 10**9}, "max_tokens"),
    ({"prompt": "x", "max_tokens": "lots"}, "max_tokens"),
    ({"prompt": "x", "temperature": -1}, "temperature"),
    ({"prompt": "x", "stop": ["a", "b", "c", "d", "e"]}, "stop"),
    ({"prompt": ["a", "b"]}, "prompt"),
    ({"prompt": "x", "n": 2}, "n"),
    ({"prompt": "x", "stream": "yes"}, "stream"),
    ({"suffix": "x"}, None),
])
def test_bad_fields_get_400_naming_them(server, body, param):
    r = httpx.post(server.url + "/v1/completions", json=body)
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["type"] == "invalid_request_error" and err["message"]
    if param:
        assert err["param"] == param


def test_malformed_json_oversized_body_and_media_type(server):
    url = server.url + "/v1/completions"
    for raw in (b"{bad", b"", b"[1, 2]", b"\xff\xfe", b'{"prompt": "x"'):
        r = httpx.post(url, content=raw, headers={"Content-Type": "application/json"})
        assert r.status_code == 400 and r.json()["error"]["code"] in ("invalid_json", "invalid_value"), raw
    r = httpx.post(url, json={"prompt": "x" * (LIMITS["maxBodyBytes"] + 1)})
    assert r.status_code == 413 and r.json()["error"]["code"] == "body_too_large"
    r = httpx.post(url, content=b"prompt=x", headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 415
    assert httpx.get(url).status_code == 405
    assert httpx.get(server.url + "/nope").json()["error"]["code"] == "not_found"
    assert httpx.get(server.url + "/health").json()["status"] == "ready"


def test_models_health_openapi(server):
    health = httpx.get(server.url + "/health").json()
    assert health["status"] == "ready" and health["queue"]["running"] == 0
    doc = httpx.get(server.url + "/openapi.json").json()
    assert doc["openapi"].startswith("3.1") and "/v1/completions" in doc["paths"]
    assert "/v1/next-edit" in doc["paths"] and "/v1/edit/completions" in doc["paths"]


def test_fim_and_edit_and_next_edit(server):
    fim = httpx.post(server.url + "/v1/fim/completions", json={"prompt": PROMPT, "suffix": SUFFIX, "max_tokens": 8})
    assert fim.status_code == 200 and fim.json()["object"] == "text_completion"
    content = ("<|recently_viewed_code_snippets|>\n<|/recently_viewed_code_snippets|>\n<|current_file_content|>\n"
               "current_file_path: calc.py\ndef scale(total, k):\n<|code_to_edit|>\n    y = count * k\n"
               "    return y<|cursor|>\n<|/code_to_edit|>\nprint(scale(3, 2))\n<|/current_file_content|>\n"
               "<|edit_diff_history|>\nUser edited \"calc.py\":\n```diff\n@@ -1,2 +1,2 @@\n-def scale(count, k):\n"
               "+def scale(total, k):\n     y = count * k\n```\n<|/edit_diff_history|>\n")
    r = httpx.post(server.url + "/v1/edit/completions", json={"messages": [{"role": "user", "content": content}]})
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["object"] == "chat.completion"
    assert answer["choices"][0]["message"]["content"] == "    y = total * k\n    return y\n"
    ne = httpx.post(server.url + "/v1/next-edit", json={"files": [{
        "uri": "file:///w/a.py", "text": "def f(total):\n    return count + 1\n",
        "previousTexts": ["def f(count):\n    return count + 1\n"]}]})
    assert ne.status_code == 200
    (edit,) = ne.json()["edits"]
    assert edit["newText"] == "total" and edit["range"]["start"] == {"line": 1, "character": 11}
    plain = httpx.post(server.url + "/v1/edit/completions", json={"messages": [{"role": "user", "content": "hi"}]})
    assert plain.status_code == 200  # any text is a prompt: all of it the code, the cursor at its end
    bad = httpx.post(server.url + "/v1/edit/completions", json={"messages": [{"role": "system", "content": "hi"}]})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_edit_prompt"


def _raw(server) -> socket.socket:
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=30)


def _read_all(s: socket.socket) -> bytes:
    parts = []
    while chunk := s.recv(4096):
        parts.append(chunk)
    return b"".join(parts)


def test_slow_client_headers_and_body(server):
    with _raw(server) as s:  # headers never finished: the connection is closed
        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n")
        assert s.recv(4096) == b""
    with _raw(server) as s:  # a body that stops half-way: 408
        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 100\r\n\r\n{\"prompt\": ")
        answer = _read_all(s)
        assert answer.startswith(b"HTTP/1.1 408") and b"body_timeout" in answer
    assert server.alive and httpx.get(server.url + "/health").status_code == 200


def test_disconnect_mid_stream_keeps_the_server_up(server):
    body = json.dumps({"prompt": PROMPT, "suffix": SUFFIX, "max_tokens": 64, "stream": True}).encode()
    for _ in range(3):
        with _raw(server) as s:
            s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
            assert s.recv(12).startswith(b"HTTP/1.1 200")  # the stream has started; hang up
    r = httpx.post(server.url + "/v1/completions", json={"prompt": PROMPT, "max_tokens": 4})
    assert r.status_code == 200 and server.alive


def test_cli_infill_through_the_server(server, tmp_path):
    f = tmp_path / "calc.py"
    f.write_text(PROMPT + SUFFIX)
    backend = json.dumps({"url": server.url})
    out = subprocess.run([MERCURY, "infill", str(f), "--line", "2", "--col", "12", "--max-tokens", "8",
                          "--backend", backend, "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    direct = httpx.post(server.url + "/v1/completions", json={"prompt": PROMPT, "suffix": SUFFIX, "max_tokens": 8})
    assert json.loads(out.stdout)["text"] == direct.json()["choices"][0]["text"]
    down = subprocess.run([MERCURY, "infill", str(f), "--line", "2", "--col", "12", "--backend",
                           json.dumps({"url": "http://127.0.0.1:9"})], capture_output=True, text=True, timeout=120)
    assert down.returncode == 2 and "cannot reach" in down.stderr
