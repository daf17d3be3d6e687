"""The OpenAPI 3.1 document, made from the same msgspec Structs that validate the requests
(``transport.decode`` converts with the types it states, strictly), the statuses the server
and its HTTP protocol answer, and the events of a stream."""

from __future__ import annotations

from typing import Any

import msgspec

from mercury_lsp import __version__
from mercury_lsp.http.completions import DONE
from mercury_lsp.http.wire import (
    CompletionRequest,
    CompletionResponse,
    EditRequest,
    EditResponse,
    ErrorResponse,
    Health,
    ModelList,
    NextEditRequest,
    NextEditResult,
)

REF = "#/components/schemas/{name}"
ERRORS = {
    "400": "invalid request (malformed JSON, wrong types, bad values)",
    "401": "missing or wrong API key",
    "404": "unknown model (or, for a next edit, a cursorUri naming none of the files)",
    "408": "the body arrived too slowly",
    "413": "the body is too large",
    "414": "the request line is too long",
    "415": "not JSON",
    "431": "the request's headers are too large",
    "429": "the queue is full",
    "499": "the client disconnected",
    "503": "the model is loading or failed to load",
    "504": "the request ran past its deadline",
}


def _json(ref: dict[str, Any]) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": ref}}}


def sse_event(chunk: dict[str, Any]) -> dict[str, Any]:
    """One server-sent event of a stream (OpenAPI 3.1: ``schema`` describes each event)."""
    return {"type": "object", "required": ["data"], "properties": {"data": {
        "anyOf": [{"type": "string", "contentMediaType": "application/json", "contentSchema": chunk},
                  {"const": DONE.decode()}],
        "description": "a chunk (the text, then an empty text with finish_reason and usage) as JSON; "
                       f"the last event is {DONE.decode()}"}}}


def _post(summary: str, req: dict, resp: dict, security: list, stream: bool = False) -> dict[str, Any]:
    ok: dict[str, Any] = {"description": "OK", **_json(resp)}
    if stream:
        ok["description"] = "OK: one JSON body, or with stream: true server-sent events"
        ok["content"]["text/event-stream"] = {"schema": sse_event(resp)}
    responses = {"200": ok, **{code: {"description": d, **_json({"$ref": REF.format(name="ErrorResponse")})}
                               for code, d in ERRORS.items()}}
    return {"post": {"summary": summary, "requestBody": {"required": True, **_json(req)},
                     "responses": responses, "security": security}}


def _get(summary: str, resp: dict, security: list, extra: dict[str, str] | None = None) -> dict[str, Any]:
    responses = {"200": {"description": "OK", **_json(resp)}}
    for code, d in (extra or {}).items():
        responses[code] = {"description": d, **_json(resp if code == "503" else
                                                      {"$ref": REF.format(name="ErrorResponse")})}
    return {"get": {"summary": summary, "responses": responses, "security": security}}


def _limit_max_tokens(schema: dict[str, Any], limit: int) -> None:
    """State the server's own ``max_tokens`` limit in the document (it is a setting, not a type)."""
    prop = schema.get("properties", {}).get("max_tokens")
    for option in (prop or {}).get("anyOf", [prop] if prop else []):
        if option.get("type") == "integer":
            option["maximum"] = limit


def openapi_document(max_tokens: int | None = None, key_required: bool = False) -> dict[str, Any]:
    """The document of a server whose largest ``max_tokens`` is ``max_tokens`` and that wants
    its API key (``--api-key-file``) on every path but ``/health`` when ``key_required``."""
    (comp_req, comp_resp, edit_req, edit_resp, ne_req, ne_resp, models, health, _err), components = \
        msgspec.json.schema_components([CompletionRequest, CompletionResponse, EditRequest, EditResponse,
                                        NextEditRequest, NextEditResult, ModelList, Health, ErrorResponse],
                                       ref_template=REF)
    auth = {"401": "missing or wrong API key"}
    if max_tokens is not None:
        for name in ("CompletionRequest", "EditRequest"):
            _limit_max_tokens(components[name], max_tokens)
    keyed: list = [{"bearer": []}] if key_required else []  # OpenAPI: [] is "no security"
    return {
        "openapi": "3.1.0",
        "info": {"title": "mercury-lsp HTTP API", "version": __version__,
                 "description": "OpenAI- and Inception-compatible completions on a masked diffusion model."},
        "paths": {
            "/v1/completions": _post("OpenAI completions: prompt + suffix, or a FIM prompt in Zed's formats",
                                     comp_req, comp_resp, keyed, stream=True),
            "/v1/fim/completions": _post("Inception FIM completions", comp_req, comp_resp, keyed, stream=True),
            "/v1/edit/completions": _post("Inception edit completions (next-edit engine)", edit_req, edit_resp,
                                          keyed),
            "/v1/next-edit": _post("Structured multi-location next edit", ne_req, ne_resp, keyed),
            "/v1/models": _get("The served model", models, keyed, auth),
            "/health": _get("Model state and queue depth", health, [], {"503": "loading or failed to load"}),
        },
        "components": {"schemas": components,
                       "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    }
