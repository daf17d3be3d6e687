"""LSP handlers of next-edit suggestions; the work is in the connection's ``NextEditService``
(``ls.next_edits``, ``next_edit.service``) and the pipeline.

* ``mercury/nextEdit`` — params ``{textDocument: {uri, version?}, position}``; result: the
  structured ``NextEditResult`` (schema.py), ranges in the session's position encoding: the open
  documents' edits at once; with ``updatePending``, the edits of workspace files that are not
  open follow as one ``mercury/nextEditUpdate`` notification (``NextEditUpdate``) for the
  request's document and version.
* ``textDocument/copilotInlineEdit`` — Copilot's request and result shape
  (``{edits: [{text, range, textDocument: {uri, version}}]}``), edits of the requested document,
  so next-edit clients written for Copilot (sidekick.nvim) can use this server.
* ``textDocument/codeAction`` — "Apply predicted edits": one ``WorkspaceEdit`` with every
  location, ``documentChanges`` carrying each document's version, so a client refuses it once a
  document moved on.
* ``mercury.applyEdits`` (``workspace/executeCommand``) — applies structured edits after checking
  all of them (open document, current version, range inside the document, no overlaps); any
  problem refuses the whole request with a clear error and nothing is applied.

A request whose document moved on while the model worked answers no edits (never stale ones).
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from mercury_lsp.schema import (
    ApplyEditsParams,
    NextEditParams,
)

CODE_ACTION_TITLE = "Apply predicted edits"
CODE_ACTION_KIND = lsp.CodeActionKind.RefactorRewrite
CODE_ACTION_OPTIONS = lsp.CodeActionOptions(code_action_kinds=[CODE_ACTION_KIND], resolve_provider=False)
# Notifications Copilot clients send about inline edits: accepted and ignored.
COPILOT_NOTIFICATIONS = ("textDocument/didShowInlineEdit", "textDocument/didFocus")


def params_as(raw: Any, cls: type) -> Any:
    """pygls hands custom params over as plain objects; convert (InvalidParams when malformed)."""
    if not isinstance(raw, dict | list):
        raw = _builtins(raw)
    try:
        return msgspec.convert(raw, cls)
    except msgspec.ValidationError as exc:
        raise JsonRpcInvalidParams(f"invalid params: {exc}") from None


def _builtins(obj: Any) -> Any:
    if obj is None or isinstance(obj, str | int | float | bool):
        return obj
    if isinstance(obj, dict):
        return {k: _builtins(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple) and not hasattr(obj, "_fields"):
        return [_builtins(v) for v in obj]
    if hasattr(obj, "_asdict"):
        return {k: _builtins(v) for k, v in obj._asdict().items()}
    if hasattr(obj, "__dict__"):
        return {k: _builtins(v) for k, v in vars(obj).items()}
    return obj


def ignored(ls, params) -> None:
    """A notification this server accepts and has nothing to do for."""


async def next_edit(ls, params) -> dict:
    p = params_as(params, NextEditParams)
    result = await ls.next_edits.predict(p.text_document.uri, p.text_document.version,
                                   p.position.line, p.position.character, update=True)
    return msgspec.to_builtins(result)


async def copilot_inline_edit(ls, params) -> dict:
    p = params_as(params, NextEditParams)
    result = await ls.next_edits.predict(p.text_document.uri, p.text_document.version,
                                   p.position.line, p.position.character)
    edits = []
    for e in result.edits:
        if e.uri != p.text_document.uri:
            continue
        edits.append({"text": e.new_text, "range": msgspec.to_builtins(e.range),
                      "textDocument": {"uri": e.uri, "version": e.document_version}})
    return {"edits": edits}


async def code_action(ls, params: lsp.CodeActionParams):
    only = params.context.only if params.context is not None else None
    if only and not any(CODE_ACTION_KIND.value.startswith(k.value if hasattr(k, "value") else str(k))
                        for k in only):
        return []
    doc = ls.docs.get(params.text_document.uri)
    if doc is None or len(ls.docs.history) == 0:  # nothing edited yet: no model work
        return []
    pos = params.range.start
    try:
        result = await ls.next_edits.predict(doc.uri, None, pos.line, pos.character)
    except JsonRpcException:
        return []
    if not result.edits:
        return []
    uris = {e.uri for e in result.edits}
    where = f"{len(result.edits)} location{'s' if len(result.edits) != 1 else ''}"
    if len(uris) > 1:
        where += f" in {len(uris)} files"
    return [lsp.CodeAction(title=f"{CODE_ACTION_TITLE} ({where})", kind=CODE_ACTION_KIND,
                           edit=ls.next_edits.workspace_edit(result.edits))]


async def apply_edits(ls, *args):
    raw = args[0] if len(args) == 1 else list(args)
    if isinstance(raw, list | tuple) and len(raw) == 1:
        raw = raw[0]
    raw = _builtins(raw)
    if isinstance(raw, list):
        raw = {"edits": raw}
    p = params_as(raw, ApplyEditsParams)
    ls.next_edits.validate(p.edits)
    if not p.edits:
        return {"applied": True}
    resp = await asyncio.wait_for(ls.workspace_apply_edit_async(lsp.ApplyWorkspaceEditParams(
        edit=ls.next_edits.workspace_edit(p.edits), label=CODE_ACTION_TITLE)), ls.next_edits.options.timeout_ms / 1000)
    return {"applied": bool(getattr(resp, "applied", False)),
            "failureReason": getattr(resp, "failure_reason", None)}
