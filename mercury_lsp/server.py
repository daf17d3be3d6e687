"""The language server: pygls 2 on uvloop, over stdio or TCP. Handlers stay thin.

Protocol guarantees on top of pygls (``MercuryProtocol``):
* every request gets exactly one response: requests before ``initialize`` answer
  ServerNotInitialized, after ``shutdown`` InvalidRequest, with malformed params InvalidParams;
* messages are handled strictly in arrival order, and a request's handler takes its document
  snapshot before the next message is read (see ``serve_stream``);
* pygls' own copy of open documents is bypassed: ``documents`` is the only store.

The model loads on the engine's worker after ``initialized`` (work-done progress and a
``mercury/status`` notification report it); until then requests answer empty.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import threading
import uuid
from dataclasses import dataclass
from typing import Any

import msgspec
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from mercury_lsp import __version__, sync_lsp
from mercury_lsp.completion import CompletionService, completion_items, inline_items
from mercury_lsp.config import Settings, parse_settings, problems_message
from mercury_lsp.documents import DocumentStore, PositionEncoding, PositionError
from mercury_lsp.engine_client import EngineClient, EngineError, LoadSpec
from mercury_lsp.framing import FrameLimits, FrameReader
from mercury_lsp.jsonrpc import Reject, check_message, public_error
from mercury_lsp.schema import (
    STATS_REQUEST,
    STATUS_NOTIFICATION,
    EngineInfo,
    StatsResult,
    StatusNotification,
)
from mercury_lsp.syntax import Grammars, grammar_for

log = logging.getLogger("mercury_lsp")

ENCODING_PREFERENCE = (PositionEncoding.UTF8, PositionEncoding.UTF32, PositionEncoding.UTF16)
COMPLETION_TRIGGERS = [".", "(", "[", "{", ",", ":", "=", " "]
PROGRESS_CREATE_TIMEOUT_S = 10.0
READ_CHUNK = 1 << 16


# ---------------------------------------------------------------------------- protocol
@dataclass(frozen=True)
class _BadRequest:
    """A request whose params could not be read: answered with InvalidParams."""
    id: Any
    method: str


class MercuryProtocol(LanguageServerProtocol):
    def __init__(self, server, converter) -> None:
        super().__init__(server, converter)
        self.initialize_seen = False
        self.exit_code: int | None = None

    def structure_message(self, data):
        try:
            return super().structure_message(data)
        except JsonRpcException:
            if isinstance(data, dict) and "id" in data and "method" in data:
                return _BadRequest(data["id"], str(data["method"]))
            raise

    def _send_response(self, msg_id, result=None, error=None) -> None:
        super()._send_response(msg_id, result, public_error(error, msg_id) if error is not None else None)

    def bad_notification(self, data: dict, exc: Exception) -> None:
        """A notification whose params could not be read (requests get InvalidParams instead)."""
        method = data.get("method")
        log.warning("unreadable %s notification dropped: %s", method, type(exc).__name__)
        if self.initialize_seen:
            self._server.unreadable_notification(method, data.get("params"))

    def _error(self, msg_id, code: int, message: str) -> None:
        self._send_response(msg_id, error=lsp.ResponseError(code=code, message=message))

    def handle_message(self, message) -> None:
        if isinstance(message, _BadRequest):
            self._error(message.id, lsp.ErrorCodes.InvalidParams, f"invalid params for {message.method}")
            return
        method = getattr(message, "method", None)
        is_request = method is not None and hasattr(message, "id")
        if method is not None and not self.initialize_seen and method not in (lsp.INITIALIZE, lsp.EXIT):
            if is_request:
                self._error(message.id, lsp.ErrorCodes.ServerNotInitialized, "server not initialized")
            return
        if method == lsp.INITIALIZE and is_request:
            if self.initialize_seen:
                self._error(message.id, lsp.ErrorCodes.InvalidRequest, "already initialized")
                return
            self.initialize_seen = True
        if self._shutdown and is_request and method != lsp.EXIT:
            self._error(message.id, lsp.ErrorCodes.InvalidRequest, "server is shutting down")
            return
        super().handle_message(message)

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(self, params: lsp.InitializeParams):
        result = yield from super().lsp_initialize(params)
        result.capabilities.position_encoding = self._server.position_encoding.value
        return result

    # Documents live in mercury_lsp.documents only (no second copy in pygls' workspace).
    def _user(self, method: str, params):
        if (handler := self.fm.features.get(method)) is not None:
            yield handler, (params,), None

    @lsp_method(lsp.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params):
        yield from self._user(lsp.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params):
        yield from self._user(lsp.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params):
        yield from self._user(lsp.TEXT_DOCUMENT_DID_CLOSE, params)

    @lsp_method(lsp.EXIT)
    def lsp_exit(self, *args):
        yield from self._user(lsp.EXIT, None)
        self.exit_code = 0 if self._shutdown else 1


# ---------------------------------------------------------------------------- server
class MercuryServer(LanguageServer):
    """One client connection: its settings, documents and completion service."""

    protocol: MercuryProtocol

    def __init__(self, base: Settings, engine: EngineClient, grammars: Grammars) -> None:
        super().__init__("mercury-lsp", __version__, protocol_cls=MercuryProtocol,
                         text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        self.base_settings = base
        self.init_settings = base
        self.current = base
        self.engine = engine
        self.grammars = grammars
        self.position_encoding = PositionEncoding.UTF16
        self.docs = DocumentStore(grammar_for)
        self.docs.syntax_max_bytes = base.syntax_max_bytes
        self.completions = CompletionService(engine, self.docs, grammars, lambda: self.current)
        self.inline_supported = False
        self.markdown_docs = False
        self._tasks: set[asyncio.Task] = set()
        self._load_generation = 0

    # ------------------------------------------------------------------ helpers
    def spawn(self, coro) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def status(self, state: str, message: str = "", engine: EngineInfo | None = None) -> None:
        self.protocol.notify(STATUS_NOTIFICATION,
                             msgspec.to_builtins(StatusNotification(state=state, message=message,
                                                                    engine=engine)))

    def warn(self, message: str, kind: lsp.MessageType = lsp.MessageType.Warning) -> None:
        self.window_show_message(lsp.ShowMessageParams(type=kind, message=message))

    def unreadable_notification(self, method: str | None, params: Any) -> None:
        sync_lsp.unreadable_notification(self, method, params)

    def report_server_error(self, error: Exception, source) -> None:
        log.error("internal error (%s): %s", getattr(source, "__name__", source), type(error).__name__)

    def apply_settings(self, settings: Settings) -> None:
        old = self.current
        self.current = settings
        self.docs.syntax_max_bytes = settings.syntax_max_bytes
        set_log_level(settings)
        model_changed = old.model_key != settings.model_key
        self.completions.settings_changed(settings, model_changed or old.preset != settings.preset)
        if model_changed and self.engine.spec is not None:
            self.spawn(self.load_model())

    # ------------------------------------------------------------------ model
    async def load_model(self) -> None:
        s = self.current
        self._load_generation += 1
        gen = self._load_generation
        spec = LoadSpec(s.model, s.device, s.dtype, s.threads, s.context.max_context_tokens)
        loading = asyncio.ensure_future(self.engine.load(spec))
        self.status("loading", f"loading {s.model or 'the embedded model'}")
        token = None
        caps = self.client_capabilities
        if caps.window is not None and caps.window.work_done_progress:
            token = f"mercury-load-{uuid.uuid4().hex[:8]}"
            try:
                await asyncio.wait_for(self.work_done_progress.create_async(token),
                                       PROGRESS_CREATE_TIMEOUT_S)
                self.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(
                    title="mercury-lsp", message="loading model", cancellable=False))
            except (TimeoutError, JsonRpcException, RuntimeError) as exc:
                log.info("client refused work-done progress (%s)", type(exc).__name__)
                token = None
        try:
            info = await loading
        except EngineError as exc:
            if token is not None:
                self.work_done_progress.end(token, lsp.WorkDoneProgressEnd(message="failed"))
            if gen == self._load_generation:
                log.error("model failed to load: %s", exc)
                self.warn(f"mercury-lsp: could not load the model: {exc}", lsp.MessageType.Error)
                self.status("error", str(exc))
            return
        if token is not None:
            self.work_done_progress.end(token, lsp.WorkDoneProgressEnd(
                message=f"ready ({info.device}, {info.load_ms:.0f} ms)"))
        if gen == self._load_generation:
            log.info("model ready: %s on %s/%s, context %d tokens, loaded in %.0f ms",
                     info.model, info.device, info.dtype, info.context_tokens, info.load_ms)
            self.status("ready", "ready", info)

    # ------------------------------------------------------------------ features
    async def inline_completion(self, params: lsp.InlineCompletionParams):
        empty = lsp.InlineCompletionList(items=[])
        s = await self._suggest(params.text_document.uri, params.position)
        doc = self.docs.get(params.text_document.uri)
        if s is None or doc is None or doc.version != s.version:
            return empty
        return inline_items(doc, s, self.position_encoding)

    async def completion(self, params: lsp.CompletionParams):
        empty = lsp.CompletionList(is_incomplete=True, items=[])
        mode = self.current.completion_fallback
        if mode == "never" or (mode == "auto" and self.inline_supported):
            return lsp.CompletionList(is_incomplete=False, items=[])
        s = await self._suggest(params.text_document.uri, params.position)
        doc = self.docs.get(params.text_document.uri)
        if s is None or doc is None or doc.version != s.version:
            return empty
        return completion_items(doc, s, self.position_encoding, self.markdown_docs)

    async def _suggest(self, uri: str, pos: lsp.Position):
        try:
            return await self.completions.suggest(uri, pos.line, pos.character, self.position_encoding)
        except PositionError as exc:
            raise JsonRpcInvalidParams(str(exc)) from None

    def stats(self) -> dict:
        p50, p95 = self.completions.latency_percentiles()
        return msgspec.to_builtins(StatsResult(state=self.engine.state, counters=self.completions.counters,
                                               engine_ms_p50=p50, engine_ms_p95=p95, engine=self.engine.info))


def _choose_encoding(caps: lsp.ClientCapabilities) -> PositionEncoding:
    offered = (caps.general.position_encodings if caps.general is not None else None) or []
    values = {str(getattr(e, "value", e)) for e in offered}
    for enc in ENCODING_PREFERENCE:
        if enc.value in values:
            return enc
    return PositionEncoding.UTF16


def build_server(base: Settings, engine: EngineClient, grammars: Grammars) -> MercuryServer:
    server = MercuryServer(base, engine, grammars)

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: MercuryServer, params: lsp.InitializeParams) -> None:
        ls.position_encoding = _choose_encoding(params.capabilities)
        td = params.capabilities.text_document
        ls.inline_supported = td is not None and td.inline_completion is not None
        item_caps = td.completion.completion_item if td is not None and td.completion is not None else None
        formats = (item_caps.documentation_format if item_caps is not None else None) or []
        ls.markdown_docs = lsp.MarkupKind.Markdown in formats
        settings, problems = parse_settings(params.initialization_options, ls.base_settings)
        ls.init_settings = settings
        ls.apply_settings(settings)
        if problems:
            ls.warn(problems_message(problems))

    @server.feature(lsp.INITIALIZED)
    def initialized(ls: MercuryServer, params: lsp.InitializedParams) -> None:
        ls.spawn(ls.load_model())

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: MercuryServer, params: lsp.DidOpenTextDocumentParams) -> None:
        d = params.text_document
        ls.docs.open(d.uri, d.language_id, d.version, d.text)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: MercuryServer, params: lsp.DidChangeTextDocumentParams) -> None:
        changes = []
        for ch in params.content_changes:
            rng = getattr(ch, "range", None)
            key = None if rng is None else (rng.start.line, rng.start.character, rng.end.line, rng.end.character)
            changes.append((key, ch.text))
        sync_lsp.apply_change(ls, params.text_document.uri, params.text_document.version, changes,
                              ls.position_encoding)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: MercuryServer, params: lsp.DidCloseTextDocumentParams) -> None:
        ls.completions._supersede(params.text_document.uri)
        ls.docs.close(params.text_document.uri)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: MercuryServer, params: lsp.DidChangeConfigurationParams) -> None:
        raw = params.settings
        caps = ls.client_capabilities.workspace
        if (raw is None or raw == {}) and caps is not None and caps.configuration:
            ls.spawn(_pull_configuration(ls))
            return
        _apply_raw(ls, raw)

    @server.feature(lsp.TEXT_DOCUMENT_INLINE_COMPLETION, lsp.InlineCompletionOptions())
    async def inline_completion(ls: MercuryServer, params: lsp.InlineCompletionParams):
        return await ls.inline_completion(params)

    @server.feature(lsp.TEXT_DOCUMENT_COMPLETION,
                    lsp.CompletionOptions(trigger_characters=COMPLETION_TRIGGERS, resolve_provider=False))
    async def completion(ls: MercuryServer, params: lsp.CompletionParams):
        return await ls.completion(params)

    @server.feature(STATS_REQUEST)
    def stats(ls: MercuryServer, params: Any) -> dict:
        return ls.stats()

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: MercuryServer, params: Any) -> None:
        ls.completions.cancel_all()

    from mercury_lsp import next_edit_lsp  # next-edit suggestions (issue #6)
    next_edit_lsp.register(server)
    sync_lsp.register(server)
    return server


def _apply_raw(ls: MercuryServer, raw: Any) -> None:
    settings, problems = parse_settings(raw, ls.init_settings)
    ls.apply_settings(settings)
    if problems:
        ls.warn(problems_message(problems))


async def _pull_configuration(ls: MercuryServer) -> None:
    try:
        result = await ls.workspace_configuration_async(
            lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section="mercury")]))
    except JsonRpcException as exc:
        log.info("workspace/configuration failed: %s", exc)
        return
    _apply_raw(ls, result[0] if result else None)


# ---------------------------------------------------------------------------- logging
class _RedactFilter(logging.Filter):
    """Drops the arguments of pygls' log records (they carry message bodies: user code) unless
    the user turned on ``debugLogUserCode``."""

    def __init__(self) -> None:
        super().__init__()
        self.allow_user_code = False

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.allow_user_code and record.name.startswith("pygls") and record.args:
            record.msg = f"{record.msg} [arguments hidden: enable debugLogUserCode to see them]"
            record.args = None
        return True


_LEVELS = {"error": logging.ERROR, "warning": logging.WARNING, "info": logging.INFO, "debug": logging.DEBUG}


def configure_logging(settings: Settings, log_file: str | None) -> None:
    handler: logging.Handler = logging.FileHandler(log_file) if log_file else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    redact = _RedactFilter()
    handler.addFilter(redact)
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    set_log_level(settings)


def set_log_level(settings: Settings) -> None:
    level = _LEVELS[settings.log_level]
    logging.getLogger("mercury_lsp").setLevel(level)
    logging.getLogger("pygls").setLevel(level if settings.debug_log_user_code else max(level, logging.WARNING))
    for noisy in ("asyncio", "urllib3", "filelock", "huggingface_hub"):
        logging.getLogger(noisy).setLevel(max(level, logging.WARNING))
    for handler in logging.getLogger().handlers:
        for f in handler.filters:
            if isinstance(f, _RedactFilter):
                f.allow_user_code = settings.debug_log_user_code


# ---------------------------------------------------------------------------- transport
async def serve_stream(reader: asyncio.StreamReader, protocol: MercuryProtocol,
                       limits: FrameLimits | None = None) -> int:
    """Read framed JSON-RPC messages and handle them in order until ``exit`` or end of input.

    No input ends the loop but ``exit`` or the end of input: bad frames and bad messages are
    answered with one error each (``framing``, ``jsonrpc``) and the stream goes on.
    """
    frames = FrameReader(reader, limits)
    while protocol.exit_code is None:
        data = await frames.next()
        if data is None:
            return 0 if protocol._shutdown else 1
        reject = data if isinstance(data, Reject) else check_message(data)
        if reject is not None:
            log.warning("message refused (%d): %s", reject.code, reject.message)
            protocol._send_data(reject.response())
            continue
        try:
            message = protocol.structure_message(data)
        except JsonRpcException as exc:
            protocol.bad_notification(data, exc)
            continue
        except Exception as exc:  # a converter failure must not end the stream
            log.warning("message could not be read: %s", type(exc).__name__)
            continue
        try:
            protocol.handle_message(message)
        except Exception:
            log.exception("failed to handle a message")
        # Let a request's handler start (it takes its document snapshot synchronously) before
        # the next message, e.g. a didChange already buffered, is applied.
        await asyncio.sleep(0)
    return protocol.exit_code


async def _stdin_reader() -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=READ_CHUNK)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
        return reader
    except (ValueError, OSError, NotImplementedError):
        pass
    fd = sys.stdin.fileno()

    def pump() -> None:  # daemon thread: never keeps the process alive
        while True:
            try:
                chunk = os.read(fd, READ_CHUNK)
            except OSError:
                chunk = b""
            if not chunk:
                loop.call_soon_threadsafe(reader.feed_eof)
                return
            loop.call_soon_threadsafe(reader.feed_data, chunk)

    threading.Thread(target=pump, name="mercury-stdin", daemon=True).start()
    return reader


async def run_stdio(base: Settings) -> int:
    out = sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but protocol messages may reach the client's pipe
    engine, grammars = EngineClient(), Grammars()
    server = build_server(base, engine, grammars)
    server.protocol.set_writer(StdoutWriter(out))
    try:
        return await serve_stream(await _stdin_reader(), server.protocol)
    finally:
        server.completions.cancel_all()
        engine.close()


async def run_tcp(base: Settings, host: str, port: int) -> int:
    engine, grammars = EngineClient(), Grammars()  # one model for every connection

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        server = build_server(base, engine, grammars)
        server.protocol.set_writer(writer)
        try:
            await serve_stream(reader, server.protocol)
        finally:
            server.completions.cancel_all()
            writer.close()

    srv = await asyncio.start_server(connection, host, port)
    addr = srv.sockets[0].getsockname()
    print(f"mercury-lsp: listening on {addr[0]}:{addr[1]}", file=sys.stderr, flush=True)
    async with srv:
        await srv.serve_forever()
    return 0


def _run(coro) -> int:
    try:
        import uvloop
    except ImportError:  # Windows
        return asyncio.run(coro)
    return uvloop.run(coro)


# ---------------------------------------------------------------------------- CLI
def add_subcommand(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="run the language server (stdio by default)")
    p.add_argument("--stdio", action="store_true", help="serve over stdin/stdout (the default)")
    p.add_argument("--tcp", metavar="HOST:PORT", default=None, help="serve over TCP (port 0: any free port)")
    p.add_argument("--model", default=None, help="model directory or hub id (default: embedded)")
    p.add_argument("--device", default=None)
    p.add_argument("--dtype", default=None)
    p.add_argument("--threads", type=int, default=None, help="CPU threads for the model")
    p.add_argument("--preset", default=None, choices=["fast", "balanced", "quality"])
    p.add_argument("--log-level", default=None, choices=["error", "warning", "info", "debug"])
    p.add_argument("--log-file", default=None, help="write logs here instead of stderr")
    p.add_argument("--settings", default=None, metavar="JSON",
                   help="base settings as JSON (same fields as initializationOptions)")
    p.add_argument("--debug-log-user-code", action="store_true",
                   help="allow user code (requests, suggestions) into the logs")
    p.set_defaults(func=_run_serve)


def _run_serve(args: argparse.Namespace) -> int:
    from mercury_lsp.cli import UsageError

    raw: dict[str, Any] = {}
    if args.settings:
        try:
            raw.update(json.loads(args.settings))
        except (json.JSONDecodeError, TypeError) as exc:
            raise UsageError(f"--settings is not a JSON object ({exc})") from None
    for key, value in (("model", args.model), ("device", args.device), ("dtype", args.dtype),
                       ("threads", args.threads), ("preset", args.preset), ("logLevel", args.log_level)):
        if value is not None:
            raw[key] = value
    if args.debug_log_user_code:
        raw["debugLogUserCode"] = True
    base, problems = parse_settings(raw)
    if problems:
        raise UsageError(problems_message(problems))
    configure_logging(base, args.log_file)
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not host or not port.isdigit():
            raise UsageError(f"--tcp expects HOST:PORT, got {args.tcp!r}")
        return _run(run_tcp(base, host, int(port)))
    return _run(run_stdio(base))
