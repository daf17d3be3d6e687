"""A remote backend's wire: completions and next edits from another server, over HTTP (httpx).

``RemoteApi`` is the asynchronous client ``backend.remote_session.RemoteSession`` drives. ``api``
says which protocol the server speaks:

- ``mercury``: a shared ``mercury-lsp http`` — ``/v1/completions`` (prompt + suffix, with the
  engine's preset and single-line mode, and the retrieved chunks in the ``retrieved`` field) and
  ``/v1/next-edit`` (every location at once);
- ``openai-fim``: an OpenAI-compatible server for a fill-in-the-middle model (vLLM, SGLang,
  llama.cpp's server) — ``/v1/completions`` with the prompt written in ``promptFormat`` (the
  retrieved chunks in it, as that model family reads other files: ``backend.prompts``);
- ``inception``: Inception's API — ``/v1/fim/completions`` (prompt + suffix; the retrieved
  chunks as comments before the prompt).

For ``openai-fim`` and ``inception``, ``next_edit`` answers None: those servers cannot score
masked spans, so the caller keeps the syntax's locations with the user's own text. Every
request carries the caller's deadline; a cancelled request is abandoned (its connection closed).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import httpx
import msgspec

from mercury_lsp.backend.base import (
    BackendError,
    Cancelled,
    DeadlineExceeded,
    Overloaded,
    Unavailable,
)
from mercury_lsp.backend.prompts import FORMATS, apply_stop, build_prompt, clean_completion
from mercury_lsp.backend.retrieved import comment_block
from mercury_lsp.config import BackendSettings
from mercury_lsp.documents import units_len
from mercury_lsp.engine_client import CancelToken
from mercury_lsp.schema import InfillOutcome, InfillSpec, NextEditResult, TextPosition

if TYPE_CHECKING:
    from mercury_lsp.next_edit import NextEditQuery

INCEPTION_URL = "https://api.inceptionlabs.ai"
INCEPTION_MODEL = "mercury-coder"
# Characters per token when the server does not say (code in BPE vocabularies: 3-4).
DEFAULT_CHARS_PER_TOKEN = 3.5
INFO_TIMEOUT_S = 5.0  # GET /v1/models at start


class _Choice(msgspec.Struct):
    text: str
    finish_reason: str | None = None


class _Usage(msgspec.Struct):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class _Completion(msgspec.Struct):
    choices: list[_Choice]
    usage: _Usage | None = None


class _Card(msgspec.Struct):
    id: str
    context_tokens: int | None = None
    chars_per_token: float | None = None


class _Models(msgspec.Struct):
    data: list[_Card]


class RemoteApi:
    def __init__(self, settings: BackendSettings, client: httpx.AsyncClient | None = None) -> None:
        self.settings = settings
        self.url = (settings.url or (INCEPTION_URL if settings.api == "inception" else "")).rstrip("/")
        headers = {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}
        self._client = client or httpx.AsyncClient(base_url=self.url, headers=headers,
                                                   timeout=settings.timeout_ms / 1000)
        self.model = settings.model or (INCEPTION_MODEL if settings.api == "inception" else "")
        self.context_tokens = settings.context_tokens
        self.chars_per_token = DEFAULT_CHARS_PER_TOKEN
        self.error = ""  # why the start-up probe failed ("": it did not)

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        """Ask the server what it serves (``/v1/models``); a server that is down now is not an
        error yet: requests report it when they fail."""
        if self.settings.api == "inception":
            return
        try:
            r = await self._client.get("/v1/models", timeout=INFO_TIMEOUT_S)
            r.raise_for_status()
            models = msgspec.json.decode(r.content, type=_Models)
        except (httpx.HTTPError, msgspec.DecodeError, msgspec.ValidationError) as exc:
            self.error = f"{self.url}/v1/models: {_describe(exc)}"
            return
        card = next((m for m in models.data if not self.model or m.id == self.model), None)
        if card is None:
            return
        self.model = self.model or card.id
        if card.context_tokens:
            self.context_tokens = card.context_tokens
        if card.chars_per_token:
            self.chars_per_token = card.chars_per_token

    async def close(self) -> None:
        await self._client.aclose()

    # ------------------------------------------------------------------ requests
    async def _post(self, path: str, body: dict, cancel: CancelToken) -> bytes:
        timeout = self.settings.timeout_ms / 1000
        if cancel.deadline is not None:
            timeout = min(timeout, cancel.deadline - time.monotonic())
        if cancel.cancelled or timeout <= 0:
            raise Cancelled("cancelled before it was sent")
        try:
            r = await self._client.post(path, json=body, timeout=timeout)
        except httpx.TimeoutException:
            raise DeadlineExceeded(f"{self.url} did not answer within {timeout:.1f} s") from None
        except httpx.HTTPError as exc:
            raise Unavailable(f"cannot reach {self.url}: {_describe(exc)}") from None
        if r.status_code == 429:
            raise Overloaded(f"{self.url} is busy (429)")
        if r.status_code >= 400:
            raise Unavailable(f"{self.url}{path} answered {r.status_code}: {_error_message(r)}")
        return r.content

    async def infill(self, spec: InfillSpec, cancel: CancelToken) -> InfillOutcome:
        t0 = time.perf_counter()
        api = self.settings.api
        opts = spec.options
        body: dict = {"max_tokens": spec.max_tokens, "temperature": opts.temperature}
        if self.model:
            body["model"] = self.model
        stop: list[str] = []
        if api == "mercury":
            path = "/v1/completions"
            body.update(prompt=spec.prefix, suffix=spec.suffix, seed=opts.seed or 0, preset=opts.preset,
                        single_line=opts.single_line)
            if spec.retrieved:
                body["retrieved"] = msgspec.to_builtins(spec.retrieved)
        elif api == "inception":
            path = "/v1/fim/completions"
            body.update(prompt=comment_block(spec.retrieved, spec.uri) + spec.prefix, suffix=spec.suffix)
        else:
            path = "/v1/completions"
            fmt = self.settings.prompt_format
            stop = list(FORMATS[fmt].stop)
            body.update(prompt=build_prompt(fmt, spec.prefix, spec.suffix, spec.retrieved, spec.uri), stop=stop)
        try:
            answer = msgspec.json.decode(await self._post(path, body, cancel), type=_Completion)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise Unavailable(f"{self.url}{path} answered something that is not a completion ({exc})") from None
        if not answer.choices:
            raise Unavailable(f"{self.url}{path} answered no choice")
        choice = answer.choices[0]
        text = clean_completion(choice.text) if api != "mercury" else choice.text
        text, _ = apply_stop(text, stop)
        usage = answer.usage or _Usage()
        return InfillOutcome(text=text, tokens=usage.completion_tokens, mean_confidence=0.0,
                             stop_reason="stop" if choice.finish_reason == "stop" else "length", steps=0,
                             forwards=0, prompt_tokens=usage.prompt_tokens, trimmed=False,
                             elapsed_ms=(time.perf_counter() - t0) * 1000)

    async def next_edit(self, query: NextEditQuery, cancel: CancelToken) -> NextEditResult | None:
        """The server's prediction; None from a server that has none (``openai-fim``, ``inception``)."""
        if self.settings.api != "mercury":
            return None
        cursor_doc = next(d for d in query.docs if d.uri == query.cursor_uri)
        head = cursor_doc.text[:query.cursor]
        line_start = head.rfind("\n") + 1
        pos = TextPosition(head.count("\n"), units_len(head[line_start:], query.encoding))
        body = {"files": [{"uri": d.uri, "text": d.text, "previousTexts": list(d.history),
                           "version": d.version} for d in query.docs],
                "cursorUri": query.cursor_uri, "cursor": {"line": pos.line, "character": pos.character},
                "positionEncoding": query.encoding.value, "options": msgspec.to_builtins(query.options)}
        raw = await self._post("/v1/next-edit", body, cancel)
        try:
            return msgspec.json.decode(raw, type=NextEditResult)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise Unavailable(f"{self.url}/v1/next-edit answered something unexpected ({exc})") from None


def _describe(exc: Exception) -> str:
    return str(exc) or type(exc).__name__


def _error_message(r: httpx.Response) -> str:
    try:
        return str(r.json()["error"]["message"])[:300]
    except (ValueError, KeyError, TypeError):
        return r.reason_phrase


__all__ = ["BackendError", "RemoteApi"]
