"""A configured remote backend: can this machine reach it, and does it serve the model asked for."""

from __future__ import annotations

import httpx
import msgspec

from mercury_lsp.cli.doctor.report import Finding
from mercury_lsp.config import BackendSettings

PROBE_TIMEOUT_S = 5.0
# What each API answers without spending a completion: the model list (mercury-lsp http, vLLM,
# SGLang, llama.cpp's server and Inception's API all serve it).
MODELS_PATH = "/v1/models"


class _Card(msgspec.Struct):
    id: str


class _Models(msgspec.Struct):
    data: list[_Card]


def backend(settings: BackendSettings | None) -> Finding:
    if settings is None:
        return Finding("ok", "backend", "none: completions come from the local model")
    from mercury_lsp.backend.remote import INCEPTION_URL

    url = (settings.url or (INCEPTION_URL if settings.api == "inception" else "")).rstrip("/")
    if not url:
        return Finding("fail", "backend", f"api {settings.api!r} without a url", 'set "url" in the backend setting')
    headers = {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}
    try:
        r = httpx.get(url + MODELS_PATH, headers=headers, timeout=PROBE_TIMEOUT_S)
    except httpx.HTTPError as exc:
        return Finding("fail", "backend", f"{settings.api} at {url}: cannot reach it ({type(exc).__name__}: {exc})",
                       "start the server, or fix the url (and any proxy between)")
    if r.status_code in (401, 403):
        return Finding("fail", "backend", f"{settings.api} at {url}: {r.status_code}, the key was refused",
                       'set "apiKey" to a key the server accepts')
    if r.status_code >= 400:
        return Finding("fail", "backend", f"{settings.api} at {url}{MODELS_PATH} answered {r.status_code}",
                       "is this the server's base url (without /v1)?")
    try:
        served = [m.id for m in msgspec.json.decode(r.content, type=_Models).data]
    except (msgspec.DecodeError, msgspec.ValidationError):
        return Finding("warn", "backend", f"{settings.api} at {url}: reachable, but {MODELS_PATH} is no model list",
                       "check that the server speaks the OpenAI API")
    if settings.model and served and settings.model not in served:
        return Finding("fail", "backend", f"{settings.api} at {url} does not serve {settings.model!r} "
                       f"(it serves {', '.join(served)})", 'set "model" to one it serves')
    model = settings.model or (served[0] if served else "its default model")
    return Finding("ok", "backend", f"{settings.api} at {url}, serving {model}")
