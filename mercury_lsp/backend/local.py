"""The in-process engine as a ``Session``: ``LocalSession`` (one loaded ``mercury_engine.Engine``)
and ``LocalOpener``, which loads it on the ``EngineClient``'s worker.

Everything the engine can do, it does here: infill with per-token confidences, and next edit's
model steps (``edit_model``: masked refill, span scoring, token probabilities). Retrieved
context goes in the model's window before the prefix (as comments of the document's language,
``backend.retrieved``), within what the window leaves: the chunks that do not fit are left out
whole, the prefix and suffix are never cut for them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mercury_lsp.backend.retrieved import comment_block
from mercury_lsp.backend.session import Budget, Capabilities, Report
from mercury_lsp.engine_client import CancelToken, EngineClient, LoadSpec
from mercury_lsp.next_edit import EngineEdits
from mercury_lsp.schema import EngineInfo, InfillOutcome, InfillSpec, NextEditResult

if TYPE_CHECKING:
    from mercury_engine import Engine, InfillResult
    from mercury_lsp.next_edit import NextEditQuery

CALIBRATION_CHARS = 16_000  # of real code, to estimate characters per token once per model
LOCAL = Capabilities(edit_model=True, next_edit=False, token_confidence=True, exact_tokens=True)


class LocalSession(Budget):
    """One loaded engine (worker threads only)."""
    capabilities = LOCAL

    def __init__(self, engine: Engine, info: EngineInfo) -> None:
        self.engine = engine  # for feature jobs and tests that need more than the session
        self.info = info
        self.edit_model = EngineEdits(engine)

    def count_tokens(self, text: str) -> int:
        return self.engine.count_tokens(text)

    def close(self) -> None:
        """Stop the engine's scheduler thread (it holds the model) so the model can be freed."""
        self.engine.close()

    def next_edit(self, query: NextEditQuery, cancel: CancelToken | None) -> NextEditResult | None:
        return None  # predicted in the daemon, with ``edit_model``

    def infill(self, spec: InfillSpec, cancel: CancelToken | None) -> InfillOutcome:
        t0 = time.perf_counter()
        prefix = self._retrieved(spec) + spec.prefix
        result: InfillResult = self.engine.infill(prefix, spec.suffix, spec.max_tokens, spec.options, cancel=cancel)
        return InfillOutcome(
            text=result.text, tokens=len(result.token_ids), mean_confidence=result.mean_confidence,
            stop_reason=result.stop_reason, steps=result.steps, forwards=result.forwards,
            prompt_tokens=result.prompt_tokens, trimmed=result.trimmed,
            elapsed_ms=(time.perf_counter() - t0) * 1000, confidences=tuple(result.confidences),
            token_ends=self._token_ends(result.token_ids, result.text))

    def _retrieved(self, spec: InfillSpec) -> str:
        """The chunks that fit beside the prefix, span and suffix in the model's window."""
        if not spec.retrieved:
            return ""
        from mercury_engine.canvas import MAX_SPAN_SHARE  # torch: imported on the worker, with the engine

        span = min(spec.max_tokens + 1, self.context_tokens // MAX_SPAN_SHARE)  # + 1: a healed boundary token
        room = self.context_tokens - span - self.count_tokens(spec.prefix) - self.count_tokens(spec.suffix)
        return comment_block(spec.retrieved, spec.uri, room, self.count_tokens) if room > 0 else ""

    def _token_ends(self, ids: list[int], text: str) -> tuple[int, ...]:
        """Where each token ends in ``text`` (empty when the decoded tokens do not spell it). A
        healed boundary token starts with the prompt's last characters, which ``text`` does not
        repeat: ends count from after them (that token's end is 0 when it only re-spells them)."""
        tok = self.engine.tokenizer
        if not ids:
            return ()
        full = tok.decode(ids)
        first = len(tok.decode(ids[:1]))
        skip = next((k for k in range(first + 1) if full.startswith(text, k)), None)
        if skip is None:
            return ()
        return tuple(max(0, len(tok.decode(ids[: i + 1])) - skip) for i in range(len(ids)))


class LocalOpener:
    """Loads the engine a ``LoadSpec`` names (``loader``: ``Engine.load`` unless a test gives one);
    ``batch``: requests sharing one denoising step (None: the scheduler's default)."""

    def __init__(self, loader: Callable[..., Engine] | None = None, batch: int | None = None) -> None:
        self.loader = loader
        self.batch = batch

    def open(self, spec: LoadSpec, report: Report) -> LocalSession:
        return load_session(spec, self.loader, self.batch)


def local_client(loader: Callable[..., Engine] | None = None, batch: int | None = None) -> EngineClient:
    """An ``EngineClient`` serving the in-process engine."""
    return EngineClient(LocalOpener(loader, batch))


def load_session(spec: LoadSpec, loader: Callable[..., Engine] | None = None,
                 batch: int | None = None) -> LocalSession:
    """Load the engine in this thread (the CLI's batch commands; the daemon uses ``EngineClient``)."""
    t0 = time.perf_counter()
    if loader is None:
        from mercury_engine import Engine

        loader = Engine.load
    engine = loader(spec.model, device=spec.device, dtype=spec.dtype,
                    context_tokens=spec.context_tokens, threads=spec.threads)
    if batch is not None:
        engine.scheduler.max_batch = batch
    sample = _calibration_text()
    cpt = len(sample) / max(1, engine.count_tokens(sample))
    info = EngineInfo(model=str(engine.path or spec.model or "embedded"), device=str(engine.device),
                      dtype=str(engine.dtype).removeprefix("torch."),
                      context_tokens=int(engine.context_tokens), chars_per_token=round(cpt, 3),
                      load_ms=round((time.perf_counter() - t0) * 1000, 1))
    return LocalSession(engine, info)


def _calibration_text() -> str:
    here = Path(__file__).parents[1]
    parts = []
    for name in ("context.py", "documents.py", "completion/service.py"):
        try:
            parts.append((here / name).read_text(encoding="utf-8"))
        except OSError:
            continue
    text = "".join(parts)[:CALIBRATION_CHARS]
    return text or "def add(a, b):\n    return a + b\n" * 64
