"""A bare JSON-RPC client over a language server's stdio (no code shared with the server), for
the tests that play an editor on the wire (Helix, Zed)."""

from __future__ import annotations

import json
import subprocess


class Wire:
    """A bare JSON-RPC client over the server's stdio (no code shared with the server)."""

    def __init__(self, cmd: list[str], config: dict) -> None:
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.config = config
        self.next_id = 0
        self.notifications: list[dict] = []

    def send(self, msg: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **msg}).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def read(self) -> dict:
        length = None
        while True:
            line = self.proc.stdout.readline()
            assert line, "server closed its output"
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(self.proc.stdout.read(length))

    def request(self, method: str, params) -> dict:
        self.next_id += 1
        rid = self.next_id
        self.send({"id": rid, "method": method, "params": params})
        while True:
            msg = self.read()
            if msg.get("id") == rid and "method" not in msg:
                assert "error" not in msg, msg
                return msg["result"]
            self.answer(msg)

    def answer(self, msg: dict) -> None:
        """Requests from the server answered like Helix (workspace/configuration: the config's section)."""
        if "id" in msg and "method" in msg:
            if msg["method"] == "workspace/configuration":
                result = []
                for item in msg["params"]["items"]:
                    value = self.config
                    for part in (item.get("section") or "").split("."):
                        value = value.get(part) if part and isinstance(value, dict) else value
                    result.append(value)
                self.send({"id": msg["id"], "result": result})
            else:
                self.send({"id": msg["id"], "result": None})
        else:
            self.notifications.append(msg)

    def notify(self, method: str, params) -> None:
        self.send({"method": method, "params": params})

    def close(self) -> None:
        self.request("shutdown", None)
        self.notify("exit", None)
        self.proc.wait(timeout=30)
