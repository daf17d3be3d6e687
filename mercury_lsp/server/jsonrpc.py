"""JSON-RPC message checks that no input can get past: decoding with a depth limit, the shape of
a message, and the errors a client may see (a short message, never a traceback or a local path).

Pure functions (no I/O): the framing reader (``mercury_lsp.server.framing``) calls ``decode_body`` on
each frame, and the transport calls ``check_message`` before pygls sees a message.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from dataclasses import dataclass
from typing import Any

from lsprotocol import types as lsp

log = logging.getLogger("mercury_lsp.server.jsonrpc")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

# LSP messages nest about 10 deep (capabilities); settings objects a few more. Anything deeper is
# refused before any recursive code (structuring, settings, encoding) sees it.
MAX_JSON_DEPTH = 64
# The id of a frame that does not decode is looked for in its first bytes only.
ID_SCAN_BYTES = 64 * 1024


@dataclass(frozen=True)
class Reject:
    """A message answered with an error (``id`` None: not readable) and not handled further."""
    code: int
    message: str
    id: int | str | None = None

    def response(self) -> dict:
        return {"jsonrpc": "2.0", "id": self.id, "error": {"code": self.code, "message": self.message}}


# ---------------------------------------------------------------------------- decoding
def decode_body(body: bytes) -> dict | list | Reject:
    """A frame's body as JSON, or a Reject (parse error) with the id when one can be read."""
    try:
        data = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError:
        return Reject(PARSE_ERROR, "parse error: the body is not UTF-8", scan_id(body))
    except RecursionError:
        return Reject(PARSE_ERROR, f"parse error: JSON nested deeper than {MAX_JSON_DEPTH} levels",
                      scan_id(body))
    except ValueError:  # JSONDecodeError, and integers past Python's digit limit
        return Reject(PARSE_ERROR, "parse error: the body is not valid JSON", scan_id(body))
    if not isinstance(data, dict | list):  # (also: JSON null must not read as "end of input")
        return Reject(INVALID_REQUEST, "a message must be a JSON object")
    if json_depth(data) > MAX_JSON_DEPTH:
        msg_id = data.get("id") if isinstance(data, dict) else None
        return Reject(INVALID_REQUEST, f"JSON nested deeper than {MAX_JSON_DEPTH} levels",
                      msg_id if valid_id(msg_id) else None)
    return data


def is_complete_json(data: bytes) -> bool:
    """Whether ``data`` holds exactly one JSON value (used to end a frame whose length lied)."""
    text = data.strip()
    if not text:
        return False
    try:
        json.loads(text.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return False
    return True


def json_depth(value: Any) -> int:
    """Nesting depth of decoded JSON, without recursion (stops counting past the limit)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, depth)
        if depth > MAX_JSON_DEPTH:
            return depth
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return deepest


_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}\[\]]')
# A value must be followed by its delimiter: in a cut body, "id": 4 may be the start of 4779.
_ID_VALUE = re.compile(rb'\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,256}")(?=\s*[,}])')


def scan_id(raw: bytes) -> int | str | None:
    """The top-level ``"id"`` of a JSON object that may be truncated or broken, if readable."""
    depth = 0
    head = raw[:ID_SCAN_BYTES]
    for m in _TOKEN.finditer(head):
        token = m.group()
        if token in (b"{", b"["):
            depth += 1
        elif token in (b"}", b"]"):
            depth -= 1
        elif depth == 1 and token == b'"id"' and (v := _ID_VALUE.match(head, m.end())) is not None:
            try:
                value = json.loads(v.group(1))
            except ValueError:
                return None
            return value if valid_id(value) else None
    return None


# ---------------------------------------------------------------------------- strings
# A JSON string may hold a lone UTF-16 surrogate ("\\ud800"), which no UTF-8 encoder, msgspec
# or tree-sitter accepts. In the document texts an editor sends it is the user's (JavaScript
# strings hold them): those become U+FFFD (``edits.clean_text``). Anywhere else it is invalid.
DOCUMENT_TEXTS = {
    "textDocument/didOpen": ("params", "textDocument", "text"),
    "textDocument/didChange": ("params", "contentChanges", None, "text"),  # None: any list index
}


def _encodable(s: str) -> bool:
    if s.isascii():
        return True
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def unencodable(message: dict) -> str | None:
    """Where ``message`` holds a string (or key) UTF-8 cannot encode outside the document texts:
    its JSON path (``params.textDocument.version``; safe to show, no values), else None."""
    text_path = DOCUMENT_TEXTS.get(message.get("method")) if isinstance(message.get("method"), str) else None
    stack: list[tuple[Any, tuple]] = [(message, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, str):
            if not _encodable(node) and not _is_text(path, text_path):
                return _shown(path)
        elif isinstance(node, dict):
            for key, value in node.items():
                if not _encodable(key):
                    return _shown(path) or "a key"
                stack.append((value, (*path, key)))
        elif isinstance(node, list):
            stack.extend((value, (*path, i)) for i, value in enumerate(node))
    return None


def _is_text(path: tuple, text_path: tuple | None) -> bool:
    return (text_path is not None and len(path) == len(text_path)
            and all(want is None and isinstance(got, int) or want == got for got, want in zip(path, text_path, strict=True)))


def _shown(path: tuple) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


# ---------------------------------------------------------------------------- shape
def valid_id(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def _is_notification_method(method: str) -> bool:
    """LSP notifications (no response type), e.g. didOpen, exit, $/cancelRequest."""
    types = lsp.METHOD_TO_TYPES.get(method)
    return types is not None and types[1] is None


def check_message(data: Any) -> Reject | None:
    """A Reject for a decoded message JSON-RPC 2.0 / LSP does not allow, else None."""
    if isinstance(data, list):
        return Reject(INVALID_REQUEST, "batch messages are not supported (LSP sends one message per frame)")
    if not isinstance(data, dict):
        return Reject(INVALID_REQUEST, "a message must be a JSON object")
    has_id = "id" in data
    msg_id = data.get("id")
    readable_id = msg_id if valid_id(msg_id) else None
    if has_id and msg_id is not None and readable_id is None:
        return Reject(INVALID_REQUEST, "id must be an integer or a string")
    if data.get("jsonrpc") != "2.0":
        return Reject(INVALID_REQUEST, 'jsonrpc must be "2.0"', readable_id)
    if "method" in data:
        method = data["method"]
        if not isinstance(method, str) or not method:
            return Reject(INVALID_REQUEST, "method must be a non-empty string", readable_id)
        if has_id and _is_notification_method(method):
            return Reject(INVALID_REQUEST, f"{method} is a notification: it takes no id", readable_id)
        return None
    if not has_id:
        return Reject(INVALID_REQUEST, "a message needs a method or an id")
    return None  # a response from the client


# ---------------------------------------------------------------------------- errors
def public_error(error: lsp.ResponseError, msg_id: Any) -> lsp.ResponseError:
    """What a client sees of an error: internal errors become a short message with an incident
    id; the details (exception type and traceback, never its arguments) go to the log only."""
    data = error.data if isinstance(error.data, dict) else {}
    if error.code != INTERNAL_ERROR and "traceback" not in data:
        return error
    incident = uuid.uuid4().hex[:12]
    kind = str(error.message).split(":", 1)[0].strip()[:80]
    frames = "".join(data.get("traceback") or [])
    log.error("internal error %s (request %r): %s\n%s", incident, msg_id, kind, frames)
    return lsp.ResponseError(code=INTERNAL_ERROR,
                             message=f"internal error (incident {incident}; details in the server log)")
