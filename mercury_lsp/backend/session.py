"""The one seam between the daemon and wherever the model is: a ``Session``.

Every feature that needs the model (inline completion, next edit, batch refactors, the HTTP
API) reaches it through a ``Session``, on a worker thread (``engine_client.EngineClient.run``
hands it to the job). The in-process engine (``backend.local.LocalSession``) and every remote
backend (``backend.remote_session.RemoteSession``: a shared ``mercury-lsp http``, an
OpenAI-compatible FIM server, Inception's API) implement it; what one cannot do is said by its
``Capabilities``, never found out by its type or by an attribute that raises.

The request (``schema.InfillSpec``) is the one place a request's document is named (``uri``)
and where its retrieved context travels (``retrieved``): the local engine puts those chunks in
the model's window, a remote FIM backend in its prompt (``backend.retrieved``,
``backend.prompts``); what leaves the machine passes ``backend.outbound`` first.

Errors: a session raises ``engine_client.EngineCancelled`` when the request was cancelled or ran
past its deadline, ``mercury_engine.errors.InvalidRequestError`` for input the model refuses, and
``engine_client.EngineError`` (a message for the user, no user code) for every other failure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import msgspec

if TYPE_CHECKING:
    from mercury_engine.types import CancelToken
    from mercury_lsp.engine_client import LoadSpec
    from mercury_lsp.next_edit.query import EditModel, NextEditQuery
    from mercury_lsp.schema import EngineInfo, InfillOutcome, InfillSpec, NextEditResult


class Capabilities(msgspec.Struct, rename="camel", kw_only=True, frozen=True):
    """What a session can do beyond an infill (which every session does)."""
    # Masked spans: refill several spans at once, score replacements, token probabilities (the
    # model steps of next edit: ``Session.edit_model`` is not None exactly when this is set).
    edit_model: bool = False
    # Predicts next edits itself, every location at once (``Session.next_edit`` answers).
    next_edit: bool = False
    # An infill's tokens come with the model's confidences ("accept the confident part").
    token_confidence: bool = False
    # ``count_tokens`` is the model's own tokenizer (else an estimate from ``chars_per_token``).
    exact_tokens: bool = False


class Session(Protocol):
    """A model, loaded here or reached over the network; its methods run on a worker thread."""
    info: EngineInfo
    capabilities: Capabilities

    @property
    def context_tokens(self) -> int:
        """The model's context budget in tokens (windows are sized to it)."""
        ...

    @property
    def chars_per_token(self) -> float:
        """Characters per token of real code (turns a token budget into characters)."""
        ...

    def count_tokens(self, text: str) -> int: ...

    def infill(self, spec: InfillSpec, cancel: CancelToken | None) -> InfillOutcome:
        """The span between ``spec.prefix`` and ``spec.suffix``, with ``spec.retrieved`` in view."""
        ...

    @property
    def edit_model(self) -> EditModel | None:
        """Next edit's model steps (refill, span scoring, token probabilities); None without
        ``capabilities.edit_model`` (next edit then answers from the syntax alone)."""
        ...

    def next_edit(self, query: NextEditQuery, cancel: CancelToken | None) -> NextEditResult | None:
        """The backend's own prediction; None without ``capabilities.next_edit``, or when it has
        none (the caller then predicts here, with ``edit_model``)."""
        ...

    def close(self) -> None:
        """Free what the session holds (the model, connections); called once, on a worker."""
        ...


class Budget:
    """The context budget as the session's ``info`` reports it (what the sessions share)."""
    info: EngineInfo

    @property
    def context_tokens(self) -> int:
        return self.info.context_tokens

    @property
    def chars_per_token(self) -> float:
        return self.info.chars_per_token


# Tells the user something about the backend (an outage, its end); thread-safe.
Report = Callable[[str], None]


class Opener(Protocol):
    """Opens the session ``EngineClient`` serves (on its load worker thread)."""

    def open(self, spec: LoadSpec, report: Report) -> Session: ...
