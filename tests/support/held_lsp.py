"""A scripted language server for the editor tests of stale ghost text: it holds each
``textDocument/inlineCompletion`` until the next message arrives (the client's
``$/cancelRequest``, a ``didChange``, a ``didOpen`` — whatever the user's action sent), then
answers it anyway, as a server does whose answer crossed the cancel on the wire. A
``test/release`` notification answers the held request while it is still fresh.

It tells the client what it did: ``test/held`` {id} when it holds a request, ``test/answered``
{id} right after the answer (the client processes messages in order, so its handler runs after
the answer's). Run as ``python -m tests.support.held_lsp``; full document sync; the suggestion
is the cursor's line followed by ``GHOST``.
"""

from __future__ import annotations

import json
import sys

GHOST = "_GHOST_(x)"


def _read() -> dict | None:
    length = None
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(sys.stdin.buffer.read(length or 0))


def _send(msg: dict) -> None:
    body = json.dumps({"jsonrpc": "2.0", **msg}).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def main() -> int:
    texts: dict[str, str] = {}
    held: dict | None = None

    def answer() -> None:
        nonlocal held
        if held is None:
            return
        p = held["params"]
        line = p["position"]["line"]
        lines = texts.get(p["textDocument"]["uri"], "").split("\n")
        text = lines[line] if line < len(lines) else ""
        item = {"insertText": text + GHOST,
                "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": len(text)}}}
        _send({"id": held["id"], "result": {"items": [item]}})
        _send({"method": "test/answered", "params": {"id": held["id"]}})
        held = None

    while (msg := _read()) is not None:
        method = msg.get("method")
        if held is not None and method != "test/release":
            answer()  # the user's action reached the server after its answer was on its way
        if method == "initialize":
            _send({"id": msg["id"], "result": {
                "capabilities": {"textDocumentSync": 1, "inlineCompletionProvider": True,
                                 "executeCommandProvider": {"commands": ["mercury.accepted"]}},
                "serverInfo": {"name": "held-lsp"}}})
        elif method == "initialized":
            _send({"method": "mercury/status", "params": {"state": "ready", "message": ""}})
        elif method in ("textDocument/didOpen", "textDocument/didChange"):
            doc = msg["params"]["textDocument"]
            text = doc.get("text")
            if text is None:
                text = msg["params"]["contentChanges"][-1]["text"]
            texts[doc["uri"]] = text
        elif method == "textDocument/inlineCompletion":
            held = msg
            _send({"method": "test/held", "params": {"id": msg["id"]}})
        elif method == "test/release":
            answer()
        elif method == "shutdown":
            _send({"id": msg["id"], "result": None})
        elif method == "exit":
            return 0
        elif "id" in msg and method is not None:
            _send({"id": msg["id"], "result": None})
    return 0


if __name__ == "__main__":
    sys.exit(main())
