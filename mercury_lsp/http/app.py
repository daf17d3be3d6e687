"""The ASGI application (Starlette): routes, the key check, and errors in OpenAI's shape."""

from __future__ import annotations

import logging
import time

import msgspec
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from mercury_lsp.backend.shared import SharedBackend
from mercury_lsp.http.completions import completions
from mercury_lsp.http.context import ApiContext
from mercury_lsp.http.edits import edit_completions, next_edit
from mercury_lsp.http.errors import ApiError, error_response
from mercury_lsp.http.openapi import openapi_document
from mercury_lsp.http.security import BearerAuth
from mercury_lsp.http.settings import HttpSettings
from mercury_lsp.http.wire import Health, ModelCard, ModelList, QueueState

log = logging.getLogger(__name__)
STARTED = int(time.time())


def _json(obj, status: int = 200) -> Response:
    return Response(msgspec.json.encode(obj), status_code=status, media_type="application/json")


async def models(request: Request) -> Response:
    st = request.app.state.ctx.backend.status()
    return _json(ModelList(data=[ModelCard(id=st.model, created=STARTED, context_tokens=st.context_tokens,
                                           chars_per_token=st.chars_per_token)]))


async def health(request: Request) -> Response:
    st = request.app.state.ctx.backend.status()
    state = st.state if st.state in ("ready", "error") else "loading"
    body = Health(status=state, model=st.model, message=st.message,
                  queue=QueueState(running=st.running, waiting=st.waiting, max_running=st.max_running,
                                   max_waiting=st.max_waiting))
    return _json(body, 200 if state == "ready" else 503)


async def openapi(request: Request) -> Response:
    return _json(request.app.state.openapi)


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return exc.response()


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = {404: f"no route {request.url.path[:200]!r}", 405: f"method {request.method} is not allowed here"}
    return error_response(exc.status_code, message.get(exc.status_code, str(exc.detail)),
                          code="not_found" if exc.status_code == 404 else None, headers=exc.headers)


async def _internal_error(request: Request, exc: Exception) -> Response:
    log.error("internal error on %s: %s", request.url.path, type(exc).__name__)  # no user data
    return error_response(500, "internal server error", "server_error")


def build_app(backend: SharedBackend, settings: HttpSettings) -> Starlette:
    routes = [
        Route("/v1/completions", completions, methods=["POST"]),
        Route("/v1/fim/completions", completions, methods=["POST"]),
        Route("/v1/edit/completions", edit_completions, methods=["POST"]),
        Route("/v1/next-edit", next_edit, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
        Route("/openapi.json", openapi, methods=["GET"]),
    ]
    middleware = [Middleware(BearerAuth, key=settings.api_key)] if settings.api_key else []
    app = Starlette(routes=routes, middleware=middleware, exception_handlers={
        ApiError: _api_error, HTTPException: _http_error, Exception: _internal_error})
    app.state.ctx = ApiContext(backend, settings)
    app.state.openapi = openapi_document(settings.limits.max_tokens, key_required=settings.api_key is not None)
    return app
