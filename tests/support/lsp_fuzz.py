"""Protocol fuzzing support: hypothesis strategies for LSP messages and byte-level frames, and a
reference model of document text. The client is the tests' one wire client
(``benchmarks.common.jsonrpc.LspConnection``: it counts responses per id, to find unanswered and
duplicate responses, and works over a process's pipes or a TCP socket)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from benchmarks.common.jsonrpc import frame

# ---------------------------------------------------------------------------- text model
LINE_BREAK = re.compile("\n")


def utf16_units(s: str) -> int:
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def position(text: str, offset: int) -> dict:
    """LSP position (UTF-16) of a code-point offset."""
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return {"line": line, "character": utf16_units(text[start:offset])}


def text_hash(text: str) -> str:
    clean = re.sub("[\ud800-\udfff]", "\ufffd", text)
    return hashlib.sha256(clean.encode("utf-8")).hexdigest()


@dataclass
class DocModel:
    """The reference: what the server must hold for a document, by the rules of issue 18."""
    uri: str
    text: str = ""
    version: int = 0
    open: bool = False
    in_sync: bool = True

    def state(self) -> dict | None:
        if not self.open:
            return None
        return {"version": self.version, "inSync": self.in_sync, "sha256": text_hash(self.text)}


@dataclass
class FuzzTotals:
    cases: int = 0
    messages: int = 0
    typed_messages: int = 0  # of them: valid messages with field types and values mutated
    frames_mutated: int = 0
    requests_expected: int = 0
    crashes: int = 0
    hangs: int = 0
    unanswered: int = 0
    duplicate_responses: int = 0
    health_checks: int = 0
    document_checks: int = 0
    document_mismatches: int = 0
    transports: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------- strategies
TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\r") | st.sampled_from(["\n", "😀", "é", "\t"]),
               max_size=40)
SURROGATE_TEXT = st.builds(lambda a, b: a + "\ud800" + b, TEXT, TEXT)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8)
REQUESTS = ["textDocument/inlineCompletion", "textDocument/completion", "mercury/stats", "mercury/nextEdit",
            "mercury/documentState", "textDocument/hover", "initialize", "workspace/executeCommand", "no/such"]
NOTIFICATIONS = ["textDocument/didOpen", "textDocument/didChange", "textDocument/didClose", "$/cancelRequest",
                 "workspace/didChangeConfiguration", "$/setTrace", "initialized", "no/such/notification"]
CHAOS_URIS = ["file:///fuzz/chaos.py", "file:///fuzz/chaos.txt", "untitled:x", ""]


def _position_json():
    return st.fixed_dictionaries({"line": st.integers(-3, 2**31 + 5), "character": st.integers(-3, 2**31 + 5)})


def _plausible_params():
    doc = st.fixed_dictionaries({"uri": st.sampled_from(CHAOS_URIS)})
    return st.one_of(
        JSON,
        st.fixed_dictionaries({"textDocument": doc, "position": _position_json(),
                               "context": st.fixed_dictionaries({"triggerKind": st.integers(-1, 3)})}),
        st.fixed_dictionaries({"textDocument": st.fixed_dictionaries({
            "uri": st.sampled_from(CHAOS_URIS), "languageId": st.sampled_from(["python", "plaintext", ""]),
            "version": st.integers(-(2**33), 2**33), "text": TEXT | SURROGATE_TEXT})}),
        st.fixed_dictionaries({"textDocument": st.fixed_dictionaries({"uri": st.sampled_from(CHAOS_URIS),
                                                                      "version": st.integers(-5, 2**33)}),
                               "contentChanges": st.lists(st.fixed_dictionaries(
                                   {"range": st.fixed_dictionaries({"start": _position_json(),
                                                                    "end": _position_json()}),
                                    "text": TEXT | SURROGATE_TEXT}), max_size=3)}),
        st.fixed_dictionaries({"settings": JSON}),
        st.fixed_dictionaries({"id": st.integers(0, 100) | st.text(max_size=4)}),
    )


@st.composite
def chaos_message(draw) -> tuple[dict | list | Any, bool]:
    """(message, is_request_with_our_id): well-formed LSP-ish messages with odd contents."""
    kind = draw(st.sampled_from(["request", "notification", "odd"]))
    params = draw(_plausible_params())
    if kind == "request":
        return {"jsonrpc": "2.0", "id": None, "method": draw(st.sampled_from(REQUESTS)), "params": params}, True
    if kind == "notification":
        return {"jsonrpc": "2.0", "method": draw(st.sampled_from(NOTIFICATIONS)), "params": params}, False
    odd = draw(st.sampled_from(["notification_with_id", "method_type", "batch", "scalar", "no_method",
                                "bad_id", "bad_version"]))
    if odd == "notification_with_id":
        return {"jsonrpc": "2.0", "id": None, "method": draw(st.sampled_from(NOTIFICATIONS)), "params": params}, True
    if odd == "method_type":
        return {"jsonrpc": "2.0", "id": None, "method": draw(JSON.filter(lambda v: not isinstance(v, str)))}, True
    if odd == "batch":
        return [{"jsonrpc": "2.0", "id": 0, "method": "mercury/stats"}, draw(JSON)], False
    if odd == "scalar":
        return draw(JSON.filter(lambda v: not isinstance(v, dict | list))), False
    if odd == "no_method":
        return {"jsonrpc": "2.0", "params": params}, False
    if odd == "bad_id":
        return {"jsonrpc": "2.0", "id": draw(st.floats() | st.booleans() | st.lists(st.integers(), max_size=2)),
                "method": "mercury/stats"}, False
    return {"jsonrpc": draw(st.sampled_from(["1.0", 2, None])), "id": None, "method": "mercury/stats"}, True


MUTATIONS = ["none", "length+", "length-", "length_text", "no_header", "junk_header", "garbage_prefix",
             "truncated_at_end", "bad_utf8", "deep", "long_header", "two_lengths"]


@st.composite
def mutated_frame(draw, body: bytes) -> tuple[bytes, str]:
    """A frame for ``body``, broken at the byte level (or not: "none")."""
    how = draw(st.sampled_from(MUTATIONS))
    n = len(body)
    if how == "none":
        return frame(body), how
    if how == "length+":
        return frame(body, n + draw(st.integers(1, 300))), how
    if how == "length-":
        return frame(body, max(0, n - draw(st.integers(1, max(1, n)))), ), how
    if how == "length_text":
        value = draw(st.sampled_from([b"abc", b"-5", b"4.0e1", b"", b" ", b"0x10", b"1e3", b"99999999999999999999"]))
        return b"Content-Length: " + value + b"\r\n\r\n" + body, how
    if how == "no_header":
        return body, how
    if how == "junk_header":
        junk = draw(st.binary(max_size=40).filter(lambda b: b"\n" not in b and b"ength" not in b.lower()))
        return b"X-" + junk + b"\r\n" + frame(body), how
    if how == "garbage_prefix":
        junk = draw(st.binary(max_size=60).filter(lambda b: b"ength" not in b.lower()))
        return junk + frame(body), how
    if how == "truncated_at_end":  # the rest of the body never comes: the next frame follows
        return frame(body, n)[: -max(1, n // 2)], how
    if how == "bad_utf8":
        return frame(body.replace(b'"2.0"', b'"2.0\xff\xfe"', 1)), how
    if how == "deep":
        depth = draw(st.sampled_from([65, 1000, 5000]))
        return frame(b"[" * depth + b"]" * depth), how
    if how == "long_header":
        return b"X-Long: " + b"a" * draw(st.sampled_from([9000, 70_000])) + b"\r\n" + frame(body), how
    return b"Content-Length: %d\r\nContent-Length: %d\r\n\r\n" % (n, n + 1) + body, how


@st.composite
def document_ops(draw, uris: list[str]) -> list[tuple[str, dict]]:
    """Text-sync operations on the model documents: (uri, op), op applied to the model later."""
    ops = []
    for _ in range(draw(st.integers(1, 4))):
        uri = draw(st.sampled_from(uris))
        kind = draw(st.sampled_from(["open", "change", "change", "change", "full", "bad", "stale", "close"]))
        ops.append((uri, {"kind": kind, "text": draw(TEXT | SURROGATE_TEXT),
                          "edits": draw(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1), TEXT | SURROGATE_TEXT),
                                                 min_size=1, max_size=3)),
                          "bad": draw(st.sampled_from(["negative", "reversed"])),
                          "jump": draw(st.integers(1, 3) | st.just(2**31))}))
    return ops


def op_message(model: DocModel, op: dict) -> dict | None:
    """The LSP message for ``op`` on the model's current state; updates the model as the server
    must (all or nothing, versions forward only, U+FFFD for lone surrogates)."""
    kind = op["kind"]
    if kind == "open":
        model.text, model.version, model.open, model.in_sync = op["text"], op["jump"], True, True
        return {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": model.uri, "languageId": "python", "version": model.version, "text": model.text}}}
    if not model.open:
        return None
    if kind == "close":
        model.open = False
        return {"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": model.uri}}}
    version = model.version + op["jump"] if kind != "stale" else model.version - 1
    doc = {"uri": model.uri, "version": version}
    if kind == "full":
        model.text, model.version, model.in_sync = op["text"], version, True
        return {"jsonrpc": "2.0", "method": "textDocument/didChange",
                "params": {"textDocument": doc, "contentChanges": [{"text": op["text"]}]}}
    changes, text = [], model.text
    for a, b, new in op["edits"]:
        lo, hi = sorted((round(a * len(text)), round(b * len(text))))
        lo, hi = _boundary(text, lo), _boundary(text, hi)
        changes.append({"range": {"start": position(text, lo), "end": position(text, hi)}, "text": new})
        text = text[:lo] + new + text[hi:]
    if kind == "bad":
        rng = changes[-1]["range"]
        if op["bad"] == "negative":
            rng["start"]["character"] = -1
        else:
            rng["start"], rng["end"] = {"line": rng["end"]["line"], "character": rng["end"]["character"] + 1}, \
                rng["start"]
    if kind in ("bad", "stale"):
        model.in_sync = False  # refused whole: the editor's text is unknown from here
    elif model.in_sync:
        model.text = text
    if kind != "stale" and kind != "bad":
        model.version = version
    return {"jsonrpc": "2.0", "method": "textDocument/didChange",
            "params": {"textDocument": doc, "contentChanges": changes}}


def _boundary(text: str, offset: int) -> int:
    """Never between a lone-surrogate-free pair's halves (text holds code points: always fine)."""
    return max(0, min(offset, len(text)))


# ---------------------------------------------------------------------------- typed mutations
# Issue 27: valid messages of every method the server handles, with field types and values
# mutated (lone surrogates, wrong types, NaN, huge integers, nested nulls). The documents they
# name are not the model documents (their text is the reference's).
TYPED_URIS = ["file:///fuzz/typed.py", "file:///fuzz/typed.txt", "untitled:typed"]


def _pos(line: int = 0, character: int = 0) -> dict:
    return {"line": line, "character": character}


def _range() -> dict:
    return {"start": _pos(0, 0), "end": _pos(0, 1)}


def _edit(uri: str) -> dict:
    return {"uri": uri, "range": _range(), "newText": "x", "confidence": 0.5, "reason": "fuzz", "kind": "rename",
            "source": "model", "oldText": "a", "documentVersion": 1}


def method_templates(uri: str) -> list[tuple[str, bool, Any]]:
    """(method, is_request, valid params) for every method the server handles (``shutdown`` and
    ``exit`` aside: they end the session)."""
    doc = {"uri": uri}
    at = {"textDocument": doc, "position": _pos(0, 1)}
    return [
        ("initialize", True, {"processId": None, "rootUri": None, "capabilities": {}, "initializationOptions": {}}),
        ("textDocument/inlineCompletion", True, {**at, "context": {"triggerKind": 1}}),
        ("textDocument/completion", True, {**at, "context": {"triggerKind": 1}}),
        ("textDocument/codeAction", True, {"textDocument": doc, "range": _range(), "context": {"diagnostics": []}}),
        ("mercury/nextEdit", True, {"textDocument": {"uri": uri, "version": 1}, "position": _pos(0, 1)}),
        ("textDocument/copilotInlineEdit", True, {"textDocument": {"uri": uri, "version": 1}, "position": _pos(0, 1)}),
        ("mercury/documentState", True, {"textDocument": doc}),
        ("mercury/stats", True, None),
        ("workspace/executeCommand", True, {"command": "mercury.applyEdits", "arguments": [{"edits": [_edit(uri)]}]}),
        ("workspace/executeCommand", True, {"command": "mercury.accepted", "arguments": [{"partial": True}]}),
        ("textDocument/didOpen", False, {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                          "text": "a = 1\n"}}),
        ("textDocument/didChange", False, {"textDocument": {"uri": uri, "version": 2},
                                           "contentChanges": [{"range": _range(), "text": "b"}]}),
        ("textDocument/didClose", False, {"textDocument": doc}),
        ("workspace/didChangeConfiguration", False, {"settings": {"mercury": {"maxTokens": 8, "preset": "fast"}}}),
        ("$/cancelRequest", False, {"id": 1}),
        ("$/setTrace", False, {"value": "off"}),
        ("initialized", False, {}),
        ("textDocument/didShowInlineEdit", False, {"item": {"command": None}}),
        ("textDocument/didFocus", False, {"textDocument": doc}),
    ]


def _nested_nulls(depth: int, kind: str) -> Any:
    value: Any = None
    for _ in range(depth):
        value = [value, None] if kind == "list" else {"a": value, "b": None}
    return value


ODD_VALUES = st.one_of(
    st.sampled_from(["\ud800", "\udc00", "a\udfffb", "\udbff\ud800", "", "\x00", "😀", "x" * 20_000]),
    st.sampled_from([float("nan"), float("inf"), float("-inf"), -0.0, 1e308, 0.5, -1.5]),
    st.sampled_from([-1, 2**31 - 1, 2**31, -(2**31) - 1, 2**53 + 1, 2**63, 2**64, 10**30, -(10**30)]),
    st.sampled_from([None, [None], {"a": None}, [[None]], {}, [], True, False, 0, "0", "true"]),
    st.builds(_nested_nulls, st.sampled_from([3, 20, 63, 70]), st.sampled_from(["list", "dict"])),
    JSON,
)


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every place in a JSON value (the value itself included)."""
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


def _replaced(value: Any, path: tuple, new: Any, drop: bool) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        out = dict(value)
        if drop and not rest:
            out.pop(head, None)
        else:
            out[head] = _replaced(value[head], rest, new, drop)
        return out
    out = list(value)
    out[head] = _replaced(value[head], rest, new, drop)
    return out


@st.composite
def typed_message(draw) -> tuple[dict, bool]:
    """(message, is_request): a valid message of some method with one to three of its fields'
    types or values mutated (or a field dropped, or an unknown one added); its id stays valid."""
    method, is_request, params = draw(st.sampled_from(method_templates(draw(st.sampled_from(TYPED_URIS)))))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(params)))
        how = draw(st.sampled_from(["value", "value", "value", "drop", "extra"]))
        if how == "extra" and isinstance(params, dict):
            params = {**params, draw(st.sampled_from(["\ud800", "extra", ""])): draw(ODD_VALUES)}
        else:
            params = _replaced(params, path, draw(ODD_VALUES), how == "drop" and bool(path))
    message = {"jsonrpc": "2.0", "method": method, "params": params}
    return message, is_request
