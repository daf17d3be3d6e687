"""``initialize`` (position encoding, client capabilities, initialization options; on stdio the
client process is watched, ``server.lifetime``), ``initialized`` (starts the model load and the repository memory, registers the file watcher) and
``shutdown`` (cancels outstanding work)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from mercury_lsp.config import parse_settings, problems_message
from mercury_lsp.documents import PositionEncoding
from mercury_lsp.server.handlers.files import register_watcher

if TYPE_CHECKING:
    from mercury_lsp.server.app import MercuryServer

# Preferred first: UTF-8 and UTF-32 avoid surrogate arithmetic; UTF-16 is the LSP default.
ENCODING_PREFERENCE = (PositionEncoding.UTF8, PositionEncoding.UTF32, PositionEncoding.UTF16)


def choose_encoding(caps: lsp.ClientCapabilities) -> PositionEncoding:
    offered = (caps.general.position_encodings if caps.general is not None else None) or []
    values = {str(getattr(e, "value", e)) for e in offered}
    for enc in ENCODING_PREFERENCE:
        if enc.value in values:
            return enc
    return PositionEncoding.UTF16


def initialize(ls: MercuryServer, params: lsp.InitializeParams) -> None:
    ls.position_encoding = choose_encoding(params.capabilities)
    td = params.capabilities.text_document
    ls.inline_supported = td is not None and td.inline_completion is not None
    item_caps = td.completion.completion_item if td is not None and td.completion is not None else None
    formats = (item_caps.documentation_format if item_caps is not None else None) or []
    ls.markdown_docs = lsp.MarkupKind.Markdown in formats
    if ls.watch_client is not None and params.process_id is not None:
        ls.watch_client(params.process_id)
    settings, problems = parse_settings(params.initialization_options, ls.base_settings)
    ls.init_settings = settings
    ls.apply_settings(settings)
    if problems:
        ls.warn(problems_message(problems))


def initialized(ls: MercuryServer, params: lsp.InitializedParams) -> None:
    ls.spawn(ls.load_model())
    ls.spawn(register_watcher(ls))
    ls.memory_host.start()


def shutdown(ls: MercuryServer, params: Any) -> None:
    ls.close()
