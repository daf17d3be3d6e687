"""Helix (editors/helix/languages.toml). No `hx` can be installed from the registries this project
uses (not in Debian 12, PyPI or npm), so the test plays Helix on the wire: a raw JSON-RPC client
sending Helix's exact initialize request (helix-lsp/src/client.rs at helix-editor/helix 079a789e,
2026-07-23), `initialized`, the didChangeConfiguration Helix sends with the server's `config`, and
answering workspace/configuration as Helix does. Helix advertises no inline completion, so the
suggestion must come through the completion menu, in UTF-8 columns (Helix's first encoding)."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from benchmarks.common.jsonrpc import LspProcess
from tests.support.server import PROBE_TEXT, configuration_answers, probe_positions, serve_command

ROOT = Path(__file__).resolve().parents[2]  # the repository

CONFIG = ROOT / "editors" / "helix" / "languages.toml"

# Helix's default `language-servers` per language (languages.toml at the same commit).
HELIX_DEFAULTS = {
    "python": ["ty", "ruff", "jedi", "pylsp", "zuban"], "rust": ["rust-analyzer"],
    "go": ["gopls", "golangci-lint-lsp"], "javascript": ["typescript-language-server"],
    "typescript": ["typescript-language-server"], "tsx": ["typescript-language-server"],
    "jsx": ["typescript-language-server"], "c": ["clangd"], "cpp": ["clangd"], "java": ["jdtls"],
}


def helix_initialize(root: Path, config: dict) -> dict:
    """Helix's InitializeParams, field for field (None fields are not serialized by Helix)."""
    uri = root.as_uri()
    return {
        "processId": os.getpid(), "workspaceFolders": [{"uri": uri, "name": root.name}], "rootPath": str(root),
        "rootUri": uri, "initializationOptions": config,
        "capabilities": {
            "workspace": {
                "configuration": True, "didChangeConfiguration": {"dynamicRegistration": False},
                "workspaceFolders": True, "applyEdit": True, "symbol": {"dynamicRegistration": False},
                "executeCommand": {"dynamicRegistration": False}, "inlayHint": {"refreshSupport": False},
                "workspaceEdit": {"documentChanges": True, "resourceOperations": ["create", "rename", "delete"],
                                  "failureHandling": "abort", "normalizesLineEndings": False},
                "didChangeWatchedFiles": {"dynamicRegistration": True, "relativePatternSupport": False},
                "fileOperations": {"willRename": True, "didRename": True},
            },
            "textDocument": {
                "completion": {
                    "completionItem": {
                        "snippetSupport": True,
                        "resolveSupport": {"properties": ["documentation", "detail", "additionalTextEdits"]},
                        "insertReplaceSupport": True, "deprecatedSupport": True, "tagSupport": {"valueSet": [1]},
                    },
                    "completionItemKind": {},
                },
                "hover": {"contentFormat": ["markdown"]},
                "signatureHelp": {"signatureInformation": {
                    "documentationFormat": ["markdown"], "parameterInformation": {"labelOffsetSupport": True},
                    "activeParameterSupport": True}},
                "rename": {"dynamicRegistration": False, "prepareSupport": True, "honorsChangeAnnotations": False},
                "formatting": {"dynamicRegistration": False},
                "codeAction": {
                    "codeActionLiteralSupport": {"codeActionKind": {"valueSet": [
                        "", "quickfix", "refactor", "refactor.extract", "refactor.inline", "refactor.rewrite",
                        "source", "source.organizeImports"]}},
                    "isPreferredSupport": True, "disabledSupport": True, "dataSupport": True,
                    "resolveSupport": {"properties": ["edit", "command"]},
                },
                "publishDiagnostics": {"versionSupport": True, "tagSupport": {"valueSet": [1, 2]}},
                "inlayHint": {"dynamicRegistration": False},
            },
            "window": {"workDoneProgress": True},
            "general": {"positionEncodings": ["utf-8", "utf-32", "utf-16"]},
        },
        "clientInfo": {"name": "helix", "version": "25.07.1 (079a789e)"},
    }


def test_languages_toml_adds_mercury_beside_helix_defaults():
    data = tomllib.loads(CONFIG.read_text())
    assert data["language-server"]["mercury"]["command"] == "mercury-lsp"
    assert data["language-server"]["mercury"]["args"] == ["serve"]
    langs = {entry["name"]: entry["language-servers"] for entry in data["language"]}
    assert set(langs) == set(HELIX_DEFAULTS)
    for name, servers in langs.items():
        assert servers == HELIX_DEFAULTS[name] + ["mercury"], name


def test_helix_wire_completion_fallback(tiny_model, tmp_path):
    config = tomllib.loads(CONFIG.read_text())["language-server"]["mercury"]["config"]
    config = {**config, "syntaxGuard": "off", "maxTokens": 16}  # the tests' tiny model: short, unguarded
    wire = LspProcess(serve_command(), on_request=configuration_answers(config))
    try:
        init = wire.request("initialize", helix_initialize(tmp_path, config))
        caps = init["capabilities"]
        assert caps["positionEncoding"] == "utf-8"
        assert caps["completionProvider"]["triggerCharacters"]
        wire.notify("initialized", {})
        wire.notify("workspace/didChangeConfiguration", {"settings": config})
        uri = (tmp_path / "demo.py").as_uri()
        wire.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 0,
                                                               "text": PROBE_TEXT}})
        wire.wait_notification("mercury/status", lambda p: p["state"] == "ready")
        found = None
        for line, col in probe_positions():
            result = wire.request("textDocument/completion", {"textDocument": {"uri": uri},
                                                             "position": {"line": line, "character": col}})
            if result and result["items"]:
                found = (line, col, result)
                break
        assert found, "no completion item at any probe position"
        line, col, result = found
        item = result["items"][0]
        assert result["isIncomplete"] is True and item["detail"] == "mercury"
        edit = item["textEdit"]
        assert edit["range"]["start"]["line"] == line and edit["range"]["end"] == {"line": line, "character": col}
        typed = PROBE_TEXT.split("\n")[line][edit["range"]["start"]["character"]:col]
        assert edit["newText"].startswith(typed) and len(edit["newText"]) > len(typed)
        assert item["filterText"].startswith(typed)
        # Nothing shown to the user at start-up (no window/showMessage).
        assert not wire.notifications["window/showMessage"]
    finally:
        wire.close()


def _apply_utf8(text: str, edits: list[dict]) -> str:
    """Apply LSP TextEdits whose columns are UTF-8 bytes (the encoding Helix negotiated)."""
    lines = text.encode().split(b"\n")

    def offset(pos: dict) -> int:
        return sum(len(x) + 1 for x in lines[:pos["line"]]) + pos["character"]

    data = text.encode()
    for e in sorted(edits, key=lambda e: offset(e["range"]["start"]), reverse=True):
        data = data[:offset(e["range"]["start"])] + e["newText"].encode() + data[offset(e["range"]["end"]):]
    return data.decode()


def test_helix_next_edit_code_action(tiny_model, tmp_path):
    """The README's next edit in Helix: after renaming a parameter, `space a` lists "Apply predicted
    edits"; Helix applies its WorkspaceEdit (documentChanges, UTF-8 columns)."""
    config = tomllib.loads(CONFIG.read_text())["language-server"]["mercury"]["config"]
    wire = LspProcess(serve_command(), on_request=configuration_answers(config))
    source = "def label(width, height):\n    s = 'é→' * width\n    return s + str(height * width)\n"
    renamed = source.replace("label(width", "label(w", 1)
    try:
        wire.request("initialize", helix_initialize(tmp_path, config))
        wire.notify("initialized", {})
        wire.notify("workspace/didChangeConfiguration", {"settings": config})
        uri = (tmp_path / "label.py").as_uri()
        wire.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 0,
                                                               "text": source}})
        wire.wait_notification("mercury/status", lambda p: p["state"] == "ready")
        # Helix sends the whole change as a range edit with its next version.
        wire.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 1}, "contentChanges": [
            {"range": {"start": {"line": 0, "character": 10}, "end": {"line": 0, "character": 15}}, "text": "w"}]})
        cursor = {"line": 0, "character": 11}
        actions = wire.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": {"start": cursor, "end": cursor},
            "context": {"diagnostics": [], "triggerKind": 1}})
        (action,) = [a for a in actions if a["title"].startswith("Apply predicted edits")]
        (change,) = action["edit"]["documentChanges"]
        assert change["textDocument"] == {"uri": uri, "version": 1}
        assert _apply_utf8(renamed, change["edits"]) == source.replace("width", "w")
        assert not wire.notifications["window/showMessage"]
    finally:
        wire.close()
