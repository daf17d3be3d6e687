"""Zed (editors/zed): extension.toml agrees with the crate, the crate's source parses, the
command it starts (`mercury-lsp serve` from PATH) serves completions with the README's
initialization options, the crate builds where cargo can reach crates.io, and the README's
`edit_predictions` settings work against a live `mercury-lsp http` with the request bodies Zed
builds for each prompt format."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import httpx
import pytest

from benchmarks.common.jsonrpc import LspProcess
from mercury_engine.loader import EMBEDDED_DIR
from tests.support.http import LiveServer
from tests.support.server import PROBE_TEXT, TINY_MODEL_DIR, configuration_answers, probe_positions

ROOT = Path(__file__).resolve().parents[2]  # the repository

ZED = ROOT / "editors" / "zed"
AREA = "def area(width, height):\n    total = width * height\n    return total + width\n"
SOURCE = (ZED / "src" / "lib.rs").read_text()
CARGO = shutil.which("cargo")
RUSTFMT = shutil.which("rustfmt")
# Zed's names of the languages mercury-lsp completes (the server's grammars).
ZED_LANGUAGES = {"Python", "JavaScript", "TypeScript", "TSX", "Go", "Rust", "C", "C++", "Java", "Lua",
                 "Shell Script"}


def _const(name: str) -> str:
    m = re.search(rf"const {name}: &str = \"([^\"]+)\";", SOURCE)
    assert m, name
    return m.group(1)


def _args() -> list[str]:
    m = re.search(r"const SERVER_ARGS: &\[&str\] = &\[([^\]]*)\];", SOURCE)
    assert m
    return re.findall(r"\"([^\"]+)\"", m.group(1))


def _readme_json(key: str) -> dict:
    for block in re.findall(r"```json\n(.*?)```", (ZED / "README.md").read_text(), re.S):
        data = json.loads(block)
        if key in data:
            return data
    raise AssertionError(f"no README block with {key}")


def test_extension_toml_matches_the_crate():
    ext = tomllib.loads((ZED / "extension.toml").read_text())
    cargo = tomllib.loads((ZED / "Cargo.toml").read_text())
    assert ext["schema_version"] == 1 and ext["id"] == "mercury-lsp"
    servers = ext["language_servers"]
    assert list(servers) == [_const("SERVER_ID")]
    assert set(servers[_const("SERVER_ID")]["languages"]) == ZED_LANGUAGES
    assert cargo["lib"]["crate-type"] == ["cdylib"]
    assert cargo["dependencies"]["zed_extension_api"] == "0.7.0"
    assert ext["version"] == cargo["package"]["version"]
    # The README's settings use the same server id.
    assert _const("SERVER_ID") in _readme_json("lsp")["lsp"]


@pytest.mark.skipif(RUSTFMT is None, reason="rustfmt is not installed")
def test_crate_source_parses():
    r = subprocess.run([RUSTFMT, "--edition", "2021", "--check", str(ZED / "src" / "lib.rs")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.skipif(CARGO is None, reason="cargo is not installed")
def test_crate_builds(tmp_path):
    work = tmp_path / "zed"
    shutil.copytree(ZED, work, ignore=shutil.ignore_patterns("target"))
    r = subprocess.run([CARGO, "build", "--release", "--target", "wasm32-wasip1"], cwd=work, capture_output=True,
                       text=True, timeout=600)
    if r.returncode != 0 and re.search(r"index\.crates\.io|failed to download|Could not resolve host|"
                                       r"wasm32-wasip1.*(not installed|may not be installed)", r.stderr):
        pytest.skip("cannot build the Zed extension here: crates.io or the wasm32-wasip1 target is unreachable")
    assert r.returncode == 0, r.stderr[-4000:]
    assert list((work / "target" / "wasm32-wasip1" / "release").glob("*.wasm"))


def test_the_command_it_starts_serves_completions(tiny_model, tmp_path):
    """What Zed runs: SERVER_BINARY found on PATH (the virtualenv's bin), with SERVER_ARGS, and the
    README's initialization_options (plus the tests' tiny model)."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    binary = shutil.which(_const("SERVER_BINARY"), path=path)
    if binary is None:
        pytest.skip("mercury-lsp is not installed next to this Python (pip install -e .)")
    options = _readme_json("lsp")["lsp"][_const("SERVER_ID")]["initialization_options"]
    options = {**options, "model": str(TINY_MODEL_DIR), "dtype": "float32", "threads": 1, "syntaxGuard": "off",
               "maxTokens": 16}
    wire = LspProcess([binary, *_args()], on_request=configuration_answers(options))
    try:
        init = wire.request("initialize", {
            "processId": os.getpid(), "rootUri": tmp_path.as_uri(), "initializationOptions": options,
            "capabilities": {"textDocument": {"completion": {"completionItem": {"snippetSupport": True}},
                                              "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {
                                                  "valueSet": ["", "quickfix", "refactor", "source"]}}}},
                             "workspace": {"configuration": True, "workspaceEdit": {"documentChanges": True}}}})
        assert "completionProvider" in init["capabilities"]
        wire.notify("initialized", {})
        uri = (tmp_path / "demo.py").as_uri()
        wire.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                               "text": PROBE_TEXT}})
        wire.wait_notification("mercury/status", lambda p: p["state"] in ("ready", "error"))
        for line, col in probe_positions():
            result = wire.request("textDocument/completion", {"textDocument": {"uri": uri},
                                                             "position": {"line": line, "character": col}})
            if result["items"]:
                break
        assert result["items"] and result["items"][0]["detail"] == "mercury"
        # Next edit in Zed: the "Apply predicted edits" code action after a renamed parameter.
        area = (tmp_path / "area.py").as_uri()
        wire.notify("textDocument/didOpen", {"textDocument": {"uri": area, "languageId": "python", "version": 0,
                                                               "text": AREA}})
        wire.notify("textDocument/didChange", {"textDocument": {"uri": area, "version": 1}, "contentChanges": [
            {"range": {"start": {"line": 0, "character": 9}, "end": {"line": 0, "character": 14}}, "text": "w"}]})
        at = {"line": 0, "character": 10}
        actions = wire.request("textDocument/codeAction", {"textDocument": {"uri": area}, "range": {"start": at, "end": at},
                                                            "context": {"diagnostics": [], "triggerKind": 1}})
        (action,) = [a for a in actions if a["title"].startswith("Apply predicted edits")]
        (change,) = action["edit"]["documentChanges"]
        assert change["textDocument"] == {"uri": area, "version": 1}
        assert sorted((e["range"]["start"]["line"], e["newText"]) for e in change["edits"]) == [(1, "w"), (2, "w")]
        assert not wire.notifications["window/showMessage"]
    finally:
        wire.close()


# What Zed's open_ai_compatible_api provider sends, written out from its source (crates/
# edit_prediction/src/fim.rs: format_fim_prompt and fim_stop_tokens, keyed by the settings' names
# of EditPredictionPromptFormat), not from the server's own table.
ZED_FORMATS = {
    "code_llama": ("<PRE> {p} <SUF>{s} <MID>", ["<PRE>", "<SUF>", "<MID>"]),
    "star_coder": ("<fim_prefix>{p}<fim_suffix>{s}<fim_middle>",
                   ["<|endoftext|>", "<fim_prefix>", "<fim_middle>", "<fim_suffix>"]),
    "deepseek_coder": ("<｜fim▁begin｜>{p}<｜fim▁hole｜>{s}<｜fim▁end｜>", ["<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"]),
    "qwen": ("<|fim_prefix|>{p}<|fim_suffix|>{s}<|fim_middle|>",
             ["<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"]),
    "code_gemma": ("<|fim_prefix|>{p}<|fim_suffix|>{s}<|fim_middle|>",
                   ["<|file_separator|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"]),
    "codestral": ("[SUFFIX]{s}[PREFIX]{p}", ["[PREFIX]", "[SUFFIX]"]),
    "glm": ("<|code_prefix|>{p}<|code_suffix|>{s}<|code_middle|>",
            ["<|endoftext|>", "<|code_prefix|>", "<|code_suffix|>", "<|code_middle|>"]),
}
# clean_fim_completion: Zed cuts the answer at the first of these.
ZED_END_TOKENS = ["<|endoftext|>", "<|file_separator|>", "<|fim_pad|>", "<|fim_prefix|>", "<|fim_middle|>",
                  "<|fim_suffix|>", "<fim_prefix>", "<fim_middle>", "<fim_suffix>", "<PRE>", "<SUF>", "<MID>",
                  "[PREFIX]", "[SUFFIX]"]


def zed_body(settings: dict, prompt_format: str, prefix: str, suffix: str) -> dict:
    """RawCompletionRequest as Zed serializes it: temperature and environment are None, so left out."""
    template, stop = ZED_FORMATS[prompt_format]
    return {"model": settings["model"], "prompt": template.replace("{p}", prefix).replace("{s}", suffix),
            "max_tokens": settings["max_output_tokens"], "stop": stop}


def zed_reads(answer: dict) -> str:
    """What Zed takes from the answer: serde's RawCompletionResponse (these fields, these types),
    the first choice's text, cut at the first FIM marker (clean_fim_completion)."""
    assert isinstance(answer["id"], str) and isinstance(answer["object"], str) and isinstance(answer["model"], str)
    assert isinstance(answer["created"], int) and answer["created"] >= 0
    assert all(isinstance(answer["usage"][k], int) for k in ("prompt_tokens", "completion_tokens", "total_tokens"))
    choice = answer["choices"][0]
    assert isinstance(choice["text"], str) and (choice["finish_reason"] is None or isinstance(choice["finish_reason"], str))
    text = choice["text"]
    for token in ZED_END_TOKENS:
        text = text.split(token, 1)[0]
    return text


def test_readme_edit_predictions_settings():
    ep = _readme_json("edit_predictions")["edit_predictions"]
    settings = ep["open_ai_compatible_api"]
    assert ep["provider"] == "open_ai_compatible_api"
    assert settings["prompt_format"] in ZED_FORMATS  # "infer" would not work: Zed knows no such model family
    assert settings["model"] == EMBEDDED_DIR.name  # the id `mercury-lsp http` serves the embedded model under
    assert settings["api_url"] == "http://127.0.0.1:8000/v1/completions"  # `mercury-lsp http`'s default address
    # The HTTP API's documentation gives the same settings.
    main = (ROOT / "docs" / "http.md").read_text()
    for key in ("provider", "open_ai_compatible_api"):
        assert f'"{key}"' in main
    assert f'"model": "{settings["model"]}"' in main and f'"prompt_format": "{settings["prompt_format"]}"' in main


def test_edit_predictions_against_the_http_server(tiny_model):
    """Every prompt format gets the prediction a plain prompt + suffix request gets, read as Zed reads it."""
    readme = _readme_json("edit_predictions")["edit_predictions"]["open_ai_compatible_api"]
    srv = LiveServer(model=tiny_model).start().ready()
    try:
        with httpx.Client(base_url=srv.url, timeout=120) as http:
            (served,) = [m["id"] for m in http.get("/v1/models").json()["data"]]
            settings = {**readme, "model": served}  # the tests' tiny model instead of the embedded one
            url = settings["api_url"].replace("http://127.0.0.1:8000", srv.url)
            found = None
            for line, col in probe_positions():
                # Zed's editable region of a file this short is the whole file, split at the cursor.
                lines = PROBE_TEXT.split("\n")
                prefix = "\n".join(lines[:line] + [lines[line][:col]])
                suffix = PROBE_TEXT[len(prefix):]
                plain = http.post(url, json={"model": served, "prompt": prefix, "suffix": suffix,
                                             "max_tokens": settings["max_output_tokens"]})
                assert plain.status_code == 200, plain.text
                if zed_reads(plain.json()).strip():
                    found = (prefix, suffix, zed_reads(plain.json()))
                    break
            assert found, "no position got a suggestion"
            prefix, suffix, expected = found
            for fmt in ZED_FORMATS:
                r = http.post(url, json=zed_body(settings, fmt, prefix, suffix),
                              headers={"Content-Type": "application/json"})
                assert r.status_code == 200, (fmt, r.text)
                assert zed_reads(r.json()) == expected, fmt
            # Older Zed releases sent "temperature": 0.2 as well: still an answer Zed can read.
            r = http.post(url, json={**zed_body(settings, "star_coder", prefix, suffix), "temperature": 0.2})
            assert r.status_code == 200 and isinstance(zed_reads(r.json()), str), r.text
            # A model name that is not the served one is refused with OpenAI's error (Zed shows the body).
            r = http.post(url, json=zed_body({**settings, "model": "other"}, "star_coder", prefix, suffix))
            assert r.status_code == 404 and r.json()["error"]["code"] == "model_not_found"
        assert srv.alive
    finally:
        srv.stop()
