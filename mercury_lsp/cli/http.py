"""``mercury-lsp http``: the HTTP API on uvicorn (uvloop, httptools), one engine for every client."""

from __future__ import annotations

import argparse
import asyncio
import logging
import socket
import sys
from pathlib import Path

from mercury_lsp.cli.daemon import exit_daemon
from mercury_lsp.cli.errors import UsageError
from mercury_lsp.cli.serve import MAX_PORT
from mercury_lsp.heap import configure_allocator
from mercury_lsp.http.settings import DEFAULT_HOST, DEFAULT_PORT, HttpLimits, HttpSettings

log = logging.getLogger(__name__)
LISTEN_BACKLOG = 128  # pending connections the kernel holds (the queue limits are the app's)


def add_subcommand(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("http", help="serve the OpenAI/Inception-compatible HTTP API (one shared engine)")
    p.add_argument("--host", default=DEFAULT_HOST, help="address to bind (default: loopback only)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help="port (0: any free port)")
    p.add_argument("--model", default=None, help="model directory or hub id (default: embedded)")
    p.add_argument("--device", default="auto")
    p.add_argument("--dtype", default="auto")
    p.add_argument("--threads", type=int, default=None, help="CPU threads for the model")
    p.add_argument("--preset", default="balanced", choices=["fast", "balanced", "quality"])
    p.add_argument("--api-key-file", type=Path, default=None,
                   help="file holding the API key clients must send (Authorization: Bearer); "
                        "required to bind a non-loopback address")
    p.add_argument("--batch", type=int, default=None,
                   help="requests that share one denoising step (default 16; 1 turns batching off)")
    p.add_argument("--max-running", type=int, default=None, help="requests decoding at once")
    p.add_argument("--max-waiting", type=int, default=None, help="requests waiting; more get 429")
    p.add_argument("--limits", default=None, metavar="JSON",
                   help="limits as JSON (HttpLimits: maxBodyBytes, maxPromptChars, maxTokens, "
                        "headerTimeoutS, bodyTimeoutS, requestTimeoutS, ...)")
    p.add_argument("--lsp", default=None, metavar="HOST:PORT",
                   help="also serve LSP over TCP here, sharing the engine (and its batches) with HTTP "
                        "clients; loopback only")
    p.add_argument("--log-level", default="info", choices=["error", "warning", "info", "debug"])
    p.add_argument("--debug-log-user-code", action="store_true",
                   help="allow user code (prompts, suggestions) into the logs")
    p.set_defaults(func=_run_http)


def _settings(args: argparse.Namespace) -> HttpSettings:
    import msgspec

    from mercury_lsp.backend.base import QueueLimits
    from mercury_lsp.http.security import StartupError, check_bind, read_api_key

    try:
        limits = msgspec.json.decode(args.limits, type=HttpLimits) if args.limits else HttpLimits()
        q = QueueLimits()
        queue = QueueLimits(max_running=args.max_running or q.max_running,
                            max_waiting=args.max_waiting if args.max_waiting is not None else q.max_waiting)
        if not 0 <= args.port <= MAX_PORT:
            raise UsageError(f"--port {args.port} is out of range (0..{MAX_PORT}; 0: any free port)")
        if queue.max_running < 1 or queue.max_waiting < 0:
            raise UsageError("--max-running must be >= 1 and --max-waiting >= 0")
        key = read_api_key(args.api_key_file) if args.api_key_file else None
        check_bind(args.host, key)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise UsageError(f"--limits: {exc}") from None
    except StartupError as exc:
        raise UsageError(str(exc)) from None
    return HttpSettings(host=args.host, port=args.port, api_key=key, limits=limits, queue=queue,
                        preset=args.preset, debug_log_user_code=args.debug_log_user_code)


def _lsp_address(spec: str | None) -> tuple[str, int] | None:
    from mercury_lsp.http.security import is_loopback

    if spec is None:
        return None
    host, _, port = spec.rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(f"--lsp expects HOST:PORT, got {spec!r}")
    if int(port) > MAX_PORT:
        raise UsageError(f"--lsp {spec}: port {port} is out of range (0..{MAX_PORT}; 0: any free port)")
    if not is_loopback(host):
        raise UsageError("--lsp binds loopback only: the LSP connection has no API key")
    return host, int(port)


def _run_http(args: argparse.Namespace) -> int:

    settings = _settings(args)
    _lsp_address(args.lsp)
    if args.batch is not None and args.batch < 1:
        raise UsageError("--batch must be >= 1")
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    configure_allocator()  # before the engine's threads (mercury_lsp/heap.py)
    try:
        import uvloop
    except ImportError:  # Windows
        exit_daemon(asyncio.run(serve(settings, args)))
    exit_daemon(uvloop.run(serve(settings, args)))


async def serve(settings: HttpSettings, args: argparse.Namespace) -> int:
    import uvicorn

    from mercury_lsp.backend.local import local_client
    from mercury_lsp.backend.shared import SharedBackend
    from mercury_lsp.engine_client import LoadSpec
    from mercury_lsp.http.app import build_app
    from mercury_lsp.http.security import bounded_protocol

    spec = LoadSpec(args.model, args.device, args.dtype, args.threads)
    backend = SharedBackend(local_client(batch=args.batch), spec, settings.queue)
    app = build_app(backend, settings)
    limits = settings.limits
    config = uvicorn.Config(app, host=settings.host, port=settings.port, loop="none",
                            http=bounded_protocol(limits, settings.api_key),
                            timeout_keep_alive=int(limits.keep_alive_s), log_level=args.log_level,
                            access_log=False, server_header=False, lifespan="off")
    server = uvicorn.Server(config)
    family = socket.AF_INET6 if ":" in settings.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((settings.host, settings.port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {settings.host}:{settings.port}: {exc.strerror or exc}") from None
    sock.listen(LISTEN_BACKLOG)
    host, port = sock.getsockname()[:2]
    lsp = _lsp_address(args.lsp)
    lsp_task: asyncio.Task | None = None

    def loaded(st) -> None:
        nonlocal lsp_task
        if st.state == "ready":
            if lsp is not None:  # the language server shares this engine: its infills join the batches
                lsp_task = asyncio.ensure_future(_serve_lsp(args, lsp, backend.client))
            print(f"mercury-lsp http: model {st.model} ready", file=sys.stderr, flush=True)
        else:
            print(f"mercury-lsp http: the model failed to load: {st.message}", file=sys.stderr, flush=True)

    backend.start_background(loaded)  # /health says "loading" until the model is ready
    print(f"mercury-lsp http: listening on http://{host}:{port}", file=sys.stderr, flush=True)
    try:
        await server.serve(sockets=[sock])
    finally:
        if lsp_task is not None:
            lsp_task.cancel()
        await backend.close()
        sock.close()
    return 0


async def _serve_lsp(args: argparse.Namespace, address: tuple[str, int], client) -> None:
    from mercury_lsp.config import Settings
    from mercury_lsp.server import run_tcp

    base = Settings(model=args.model, device=args.device, dtype=args.dtype, threads=args.threads,
                    preset=args.preset)  # the same LoadSpec as the HTTP backend's: no second load
    await run_tcp(base, address[0], address[1], engine=client)
