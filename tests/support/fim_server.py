"""A recording backend server on loopback, in a thread: ``/v1/models``, ``/v1/completions`` (an
OpenAI-compatible FIM server, or a ``mercury-lsp http``) and ``/v1/next-edit`` (no edits). Every
request body it receives is kept, so a test can say what reached the backend."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class RecordingFimServer:
    """``with RecordingFimServer(model="m") as srv: srv.url``; ``srv.bodies``: what was posted."""

    def __init__(self, model: str = "fim-model", completion: str = "x + 1") -> None:
        self.model, self.completion = model, completion
        self.bodies: list[str] = []
        self.paths: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def _answer(self, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                owner.paths.append(self.path)
                self._answer({"object": "list", "data": [{"id": owner.model, "object": "model"}]})

            def do_POST(self) -> None:
                owner.paths.append(self.path)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode("utf-8", "replace")
                owner.bodies.append(body)
                if self.path.startswith("/v1/next-edit"):
                    self._answer({"edits": [], "model": owner.model, "positionEncoding": "utf-16"})
                    return
                self._answer({"choices": [{"text": owner.completion, "finish_reason": "stop", "index": 0}],
                              "usage": {"prompt_tokens": 1, "completion_tokens": 1}})

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def sent(self) -> str:
        """Everything posted so far, as one text (to search for what must never be sent)."""
        return "\n".join(self.bodies)

    def __enter__(self) -> RecordingFimServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
