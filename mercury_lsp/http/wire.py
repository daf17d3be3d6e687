"""The HTTP API's request and response bodies (msgspec Structs; the OpenAPI document is made
from them, so what is validated is what is documented).

OpenAI's legacy completions (``/v1/completions``), Inception's FIM and edit completions
(``/v1/fim/completions``, ``/v1/edit/completions``), the structured next edit
(``/v1/next-edit``), the model list, health and OpenAI's error object. Unknown request fields
are ignored (clients send ``n``, ``top_p``, ``logprobs``, Zed's ``environment`` ...); the fields
below are checked.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from mercury_lsp.config import NextEditOptions
from mercury_lsp.schema import NextEditResult, RetrievedChunk, TextPosition

# OpenAI allows at most 4 stop sequences (vLLM enforces it; Zed keeps within it).
MAX_STOP_SEQUENCES = 4
MAX_STOP_CHARS = 64
# Retrieved chunks one completion may carry: far more than a window holds (their text counts
# toward the prompt's character limit too).
MAX_RETRIEVED_CHUNKS = 64

Temperature = Annotated[float, Meta(ge=0.0, le=2.0)]
Stop = Annotated[str, Meta(max_length=MAX_STOP_CHARS)]
MaxTokens = Annotated[int, Meta(ge=1)]  # the upper bound is a server limit (HttpLimits), checked at run time


class CompletionRequest(msgspec.Struct, kw_only=True, frozen=True):
    """OpenAI legacy completions (and Inception's ``/v1/fim/completions``).

    ``prompt`` is either plain text before the cursor (then ``suffix`` is the text after it) or
    one of the fill-in-the-middle prompts Zed sends (StarCoder ``<fim_prefix>...``, CodeLlama,
    DeepSeek, Qwen/CodeGemma, Codestral, GLM), read back into prefix and suffix.
    """
    prompt: str | Annotated[list[str], Meta(min_length=1, max_length=1)]
    model: str | None = None  # None: the served model
    suffix: str | None = None
    max_tokens: MaxTokens | None = None  # None: DEFAULT_MAX_TOKENS
    temperature: Temperature | None = None
    stop: Stop | Annotated[list[Stop], Meta(max_length=MAX_STOP_SEQUENCES)] | None = None
    stream: bool = False
    seed: Annotated[int, Meta(ge=0, le=2**63 - 1)] | None = None
    n: Annotated[int, Meta(ge=1, le=1)] = 1  # one choice per request
    echo: Literal[False] = False
    user: str | None = None  # scopes the reuse of cached context (http/completions.py context_scope)
    # Extensions (what the language server's remote backend sends): the engine's preset, its
    # single-line mode (end the completion after its first line of text), and code retrieved from
    # other files of the repository (most relevant first; the model reads what fits its window).
    preset: Literal["fast", "balanced", "quality"] | None = None
    single_line: bool = False
    retrieved: Annotated[list[RetrievedChunk], Meta(max_length=MAX_RETRIEVED_CHUNKS)] = []


class ChatMessage(msgspec.Struct, kw_only=True, frozen=True):
    role: Literal["system", "user", "assistant"]
    content: str


# What the handler reads: the newest user message (a request without one is refused).
USER_MESSAGE = {"contains": {"type": "object", "properties": {"role": {"const": "user"}}, "required": ["role"]},
                "minContains": 1}


class EditRequest(msgspec.Struct, kw_only=True, frozen=True):
    """Inception's ``/v1/edit/completions``: the newest user message carries the tagged sections
    ``<|recently_viewed_code_snippets|>``, ``<|current_file_content|>`` (with
    ``<|code_to_edit|>`` and ``<|cursor|>`` inside), ``<|edit_diff_history|>``. Any text is a
    prompt: without ``<|code_to_edit|>`` all of it is the code to edit, without ``<|cursor|>`` the
    cursor is at its end."""
    messages: Annotated[list[ChatMessage], Meta(min_length=1, max_length=8, extra_json_schema=USER_MESSAGE)]
    model: str | None = None
    max_tokens: MaxTokens | None = None
    temperature: Temperature | None = None
    stream: Literal[False] = False  # as Inception's: no streaming on this endpoint


class NextEditFile(msgspec.Struct, rename="camel", kw_only=True, frozen=True):
    """One file: its current text and, for edited files, its texts before the newest edits
    (newest first; the first one is enough)."""
    uri: Annotated[str, Meta(min_length=1, max_length=4096)]
    text: str
    previous_texts: Annotated[list[str], Meta(max_length=16)] = []
    language_id: str = ""
    version: int | None = None


class NextEditRequest(msgspec.Struct, rename="camel", kw_only=True, frozen=True):
    """``/v1/next-edit``: the edits that follow the user's last one, every location at once.

    ``cursor`` defaults to the end of the change in the first edited file (a position past a
    line's or the file's end is clamped to it); with no file edited (no ``previousTexts``) and
    no cursor, nothing follows: no edits. ``cursorUri`` must name one of the files (404). Files
    sharing a uri: the last one counts.
    """
    files: Annotated[list[NextEditFile], Meta(min_length=1, max_length=64)]
    cursor_uri: str | None = None
    cursor: TextPosition | None = None
    position_encoding: Literal["utf-8", "utf-16", "utf-32"] = "utf-16"
    model: str | None = None
    options: NextEditOptions = NextEditOptions()  # the tuning (the language server's nextEdit settings)


# ---------------------------------------------------------------------------- responses
class Usage(msgspec.Struct, kw_only=True):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class CompletionChoice(msgspec.Struct, kw_only=True):
    text: str
    index: int = 0
    finish_reason: Literal["stop", "length"] | None = None
    logprobs: None = None


class CompletionResponse(msgspec.Struct, kw_only=True):
    id: str
    created: int
    model: str
    choices: list[CompletionChoice]
    object: Literal["text_completion"] = "text_completion"
    usage: Usage | None = None


class AssistantMessage(msgspec.Struct, kw_only=True):
    content: str
    role: Literal["assistant"] = "assistant"


class ChatChoice(msgspec.Struct, kw_only=True):
    message: AssistantMessage
    index: int = 0
    finish_reason: Literal["stop", "length"] = "stop"


class EditResponse(msgspec.Struct, kw_only=True):
    id: str
    created: int
    model: str
    choices: list[ChatChoice]
    usage: Usage
    object: Literal["chat.completion"] = "chat.completion"


class ModelCard(msgspec.Struct, kw_only=True):
    id: str
    created: int
    object: Literal["model"] = "model"
    owned_by: str = "mercury-lsp"
    # Extension: what the language server's remote backend needs to size its windows.
    context_tokens: int | None = None
    chars_per_token: float | None = None


class ModelList(msgspec.Struct, kw_only=True):
    data: list[ModelCard]
    object: Literal["list"] = "list"


class QueueState(msgspec.Struct, kw_only=True):
    running: int
    waiting: int
    max_running: int
    max_waiting: int


class Health(msgspec.Struct, kw_only=True):
    status: Literal["loading", "ready", "error"]
    model: str
    queue: QueueState
    message: str = ""


class ErrorDetail(msgspec.Struct, kw_only=True):
    message: str
    type: str
    param: str | None = None
    code: str | None = None


class ErrorResponse(msgspec.Struct, kw_only=True):
    """OpenAI's error object."""
    error: ErrorDetail


__all__ = ["ChatMessage", "CompletionChoice", "CompletionRequest", "CompletionResponse", "EditRequest",
           "EditResponse", "ErrorDetail", "ErrorResponse", "Health", "ModelCard", "ModelList",
           "NextEditFile", "NextEditRequest", "NextEditResult", "QueueState", "Usage"]
