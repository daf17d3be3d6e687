"""Typed messages shared by the server, HTTP, CLI, benchmarks and tests (msgspec Structs).

Custom LSP notifications/requests (``mercury/...``), the typed engine result the daemon sees,
and the edit history records. JSON Schema: ``msgspec.json.schema(Struct)``.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from mercury_engine.options import InfillOptions
from mercury_lsp.config import NextEditRule

SpanKind = Literal["line", "statement", "block"]
EngineState = Literal["idle", "loading", "ready", "error"]

# Custom methods.
STATUS_NOTIFICATION = "mercury/status"
STATS_REQUEST = "mercury/stats"
DOCUMENT_STATE_REQUEST = "mercury/documentState"


class EngineInfo(msgspec.Struct, rename="camel", kw_only=True, frozen=True):
    """What was loaded: reported in ``mercury/status`` and by ``mercury/stats``."""
    model: str
    device: str
    dtype: str
    context_tokens: int
    chars_per_token: float
    load_ms: float


class StatusNotification(msgspec.Struct, rename="camel", kw_only=True, frozen=True):
    """``mercury/status``: the model's state, for status lines and for tests to wait on."""
    state: EngineState
    message: str = ""
    engine: EngineInfo | None = None


class DocumentRef(msgspec.Struct, rename="camel", kw_only=True, frozen=True):
    uri: str


class DocumentStateParams(msgspec.Struct, rename="camel", kw_only=True, frozen=True):
    text_document: DocumentRef


class DocumentState(msgspec.Struct, rename="camel", kw_only=True, frozen=True):
    """``mercury/documentState``: what the server holds of an open document, for a client (or a
    test) to check that both sides agree without sending the text back (null: not open)."""
    uri: str
    version: int
    in_sync: bool  # False after an edit that could not be applied, until a whole text comes
    utf16_length: int
    sha256: str  # of the text as UTF-8 (lone surrogates are held as U+FFFD)


class RetrievedChunk(msgspec.Struct, kw_only=True, frozen=True):
    """Code retrieved for a request from elsewhere in the repository (another file's text, or a
    part of it): the local engine puts it in the model's window, a remote backend in its prompt."""
    path: str  # the file it comes from, as the user knows it (relative to the workspace root)
    text: str


class InfillSpec(msgspec.Struct, kw_only=True, frozen=True):
    """One infill, in the daemon's terms: what crosses the backend seam (``backend.session``).

    ``options`` are the engine's typed decoding options, validated once, where the engine takes
    them; a remote backend reads the ones its protocol carries (preset, temperature, seed,
    single-line mode)."""
    prefix: str
    suffix: str
    max_tokens: int
    options: InfillOptions = InfillOptions()
    # The document the request is for (an LSP uri; None when no file is known, as over HTTP):
    # the one place a request names its file, so what may leave the machine is decided here.
    uri: str | None = None
    # Retrieved context, most relevant first; what does not fit the budget is left out from the end.
    retrieved: tuple[RetrievedChunk, ...] = ()


class InfillOutcome(msgspec.Struct, kw_only=True, frozen=True):
    """The engine's answer, converted from ``engine.InfillResult`` (no tensors)."""
    text: str
    tokens: int
    mean_confidence: float
    stop_reason: str
    steps: int
    forwards: int
    prompt_tokens: int
    trimmed: bool
    elapsed_ms: float
    # Per generated token: the model's confidence and where the token ends in ``text`` (chars).
    confidences: tuple[float, ...] = ()
    token_ends: tuple[int, ...] = ()


class EditRecord(msgspec.Struct, kw_only=True):
    """One coalesced edit of an open document (the edit history next-edit reads).

    Positions are (line, column) in Unicode code points of the document *before* the edit;
    ``offset`` is the code-point offset of the start. Texts longer than the history's cap are
    cut and ``clipped`` is set.
    """
    uri: str
    version: int
    start_line: int
    start_col: int
    end_line: int
    end_col: int
    offset: int
    old_text: str
    new_text: str
    time: float  # time.time() of the last keystroke merged into this record
    clipped: bool = False


class Counters(msgspec.Struct, rename="camel", kw_only=True):
    requests: int = 0
    served: int = 0  # non-empty answers for the current version
    empty: int = 0  # nothing to suggest (model, guard, empty text, not ready...)
    cache_hits: int = 0
    superseded: int = 0
    cancelled: int = 0  # by $/cancelRequest
    stale: int = 0  # finished after the document moved on: dropped
    timeouts: int = 0
    errors: int = 0
    guard_dropped: int = 0  # completions (requests and prefetches) the syntax guard left empty
    guard_prefix: int = 0  # completions it cut to a prefix of their first line (``syntaxGuard: "prefix"``)
    prefetches: int = 0  # speculative runs started after a didChange (setting ``prefetch``)
    prefetch_used: int = 0  # requests answered by the speculative run made for them
    accepted: int = 0  # suggestions the user accepted (the client ran mercury.accepted)
    accepted_confident: int = 0  # of them, only the confident part


class StatsResult(msgspec.Struct, rename="camel", kw_only=True):
    """``mercury/stats``: counters and engine latency percentiles since start."""
    state: EngineState
    counters: Counters
    engine_ms_p50: float | None
    engine_ms_p95: float | None
    engine: EngineInfo | None = None


# ---------------------------------------------------------------------------- next edit
# (issue #6: the structured JSON edit format; every output path — LSP, CLI, HTTP — emits it)
NEXT_EDIT_REQUEST = "mercury/nextEdit"
# Sent once after a ``mercury/nextEdit`` result marked ``updatePending``: the edits of workspace
# files that are not open (found in the background, after the answer).
NEXT_EDIT_UPDATE_NOTIFICATION = "mercury/nextEditUpdate"
COPILOT_INLINE_EDIT_REQUEST = "textDocument/copilotInlineEdit"
APPLY_EDITS_COMMAND = "mercury.applyEdits"
# What an edit does: "rename" (an identifier renamed), "signature" (a call's arguments follow a
# signature), "model" (the model's own rewrite), "repeat" (the user's edit repeated elsewhere),
# "line-repeat" (whole lines deleted or inserted again), "move" (the old copy of moved lines
# goes), "supersede" (the old version of a line written again goes), "complete" (the line at the
# cursor finished), "import", "fill" (a stub completed: refactor fill).
EditKind = Literal["rename", "signature", "model", "repeat", "line-repeat", "move", "supersede", "complete",
                   "import", "fill"]
EditSource = Literal["model", "scored", "syntax"]


class TextPosition(msgspec.Struct, frozen=True):
    """0-based line and character (in ``positionEncoding`` units; UTF-16 unless negotiated)."""
    line: Annotated[int, Meta(ge=0)]
    character: Annotated[int, Meta(ge=0)]


class TextRange(msgspec.Struct, frozen=True):
    start: TextPosition
    end: TextPosition


class VersionedDocument(msgspec.Struct, frozen=True):
    uri: str
    version: int | None = None


class NextEditParams(msgspec.Struct, rename="camel", kw_only=True, frozen=True):
    """``mercury/nextEdit`` and ``textDocument/copilotInlineEdit`` params."""
    text_document: VersionedDocument
    position: TextPosition


class PredictedEdit(msgspec.Struct, rename="camel", kw_only=True, frozen=True):
    """One predicted edit: replace ``range`` of ``uri`` with ``newText``."""
    uri: str
    range: TextRange
    new_text: str
    confidence: Annotated[float, Meta(ge=0.0, le=1.0)]
    reason: str  # human-readable: why this location, and where the text came from
    kind: EditKind = "rename"
    # "model": the model's refill; "scored": the user's text, scored by the model; "syntax": the
    # user's text at a location the model did not check (confidence 0)
    source: EditSource = "model"
    old_text: str = ""
    document_version: int | None = None  # the version the range refers to (None: a file on disk)
    # The next-edit rule that predicted it (docs/next-edit.md: "NE101" a renamed binding's other
    # occurrences, ...); None for edits no rule made (refactor's mentions in docs, filled stubs).
    rule: NextEditRule | None = None


class NextEditNote(msgspec.Struct, rename="camel", kw_only=True, frozen=True):
    """A place the edits may have to reach that none is offered for: a string that names the
    renamed definition (``getattr(module, "old")``, ``v.MethodByName("Old")``, ``"pkg.m.old"``),
    which the syntax cannot tie to it. For the user to read; never applied."""
    uri: str
    range: TextRange  # the string's text
    message: str
    rule: NextEditRule | None = None  # the rule whose edits it accompanies ("NE101": a rename)
    document_version: int | None = None  # the version the range refers to (None: a file on disk)


class NextEditTimings(msgspec.Struct, kw_only=True):
    """Milliseconds."""
    candidates_ms: float = 0.0
    model_ms: float = 0.0
    total_ms: float = 0.0


class NextEditResult(msgspec.Struct, rename="camel", kw_only=True):
    """The structured next-edit answer (``mercury/nextEdit``, ``mercury-lsp next-edit --json``)."""
    edits: list[PredictedEdit]
    model: str = ""
    version: str = ""  # mercury-lsp's version
    position_encoding: Literal["utf-8", "utf-16", "utf-32"] = "utf-16"
    timings: NextEditTimings = msgspec.field(default_factory=NextEditTimings)
    # True: one ``mercury/nextEditUpdate`` follows with the edits of workspace files that are not
    # open (possibly none), unless the document moves on or a newer request supersedes this one.
    update_pending: bool = False
    # Places the edits may have to reach that none is offered for (a string naming a renamed
    # definition): shown, never applied.
    notes: list[NextEditNote] = msgspec.field(default_factory=list)


class NextEditUpdate(msgspec.Struct, rename="camel", kw_only=True):
    """``mercury/nextEditUpdate``: the second, versioned part of a ``mercury/nextEdit`` answer —
    for the request's document at ``textDocument.version``; ``update`` counts the parts (the
    answer is 1); ``result.edits`` are edits of files that are not open (``documentVersion``
    null: checked against the file on disk when applied)."""
    text_document: VersionedDocument
    update: int
    result: NextEditResult


class ApplyEditsParams(msgspec.Struct, rename="camel", kw_only=True):
    """Arguments of the ``mercury.applyEdits`` command: edits to validate and apply atomically."""
    edits: list[PredictedEdit]
