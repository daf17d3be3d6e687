"""The embedded model's part in the ranker's features, for ``fit_ranker --model``: its draft at the
case's cursor (the daemon's own pipeline, memory off and no gate, so the draft is what the daemon
would rank) and its likelihood of each of the memory's best candidates in their two-sided context
(``Engine.score_spans``: the candidate's tokens masked, the window around them visible — the
decode core's likelihood pass that next edit uses)."""

from __future__ import annotations

from pathlib import Path

from mercury_lsp.backend.local import load_session
from mercury_lsp.completion.pipeline import run_pipeline
from mercury_lsp.completion.rank import Draft
from mercury_lsp.config import CompletionOptions, MemorySettings, Settings
from mercury_lsp.context import Budget, build_window
from mercury_lsp.documents import DocumentStore
from mercury_lsp.engine_client import LoadSpec
from mercury_lsp.syntax import Grammars, grammar_for

SCORED = 4  # the memory's best candidates the model scores (the ranker's candidates beyond rarely win)
DRAFTS = Settings(completion=CompletionOptions(min_probability=0.0, identifier_check=False, model_drafts="always"),
                  memory=MemorySettings(enabled=False))


class ModelFeatures:
    def __init__(self, model: str | None = None, threads: int = 1) -> None:
        self.session = load_session(LoadSpec(model, threads=threads))
        self.grammars = Grammars()

    def __call__(self, path: Path, doc: str, cursor: int, texts: list[str]) -> tuple[Draft | None, dict[str, float]]:
        store = DocumentStore(grammar_for)
        opened = store.open(path.as_uri(), "", 1, doc)
        snap = opened.snapshot(DRAFTS.syntax_max_bytes)
        result = run_pipeline(self.session, snap, cursor, DRAFTS, self.grammars, None)
        draft = Draft(result.text, result.outcome.mean_confidence) if result.outcome is not None and result.text else None
        tree = self.grammars.parse(snap) if snap.syntax is not None else None
        window = build_window(snap, tree, cursor, DRAFTS, Budget(self.session.context_tokens,
                                                                  self.session.chars_per_token))
        scored = [t for t in texts[:SCORED] if t.strip()]
        if draft is not None and draft.text not in scored:
            scored.append(draft.text)
        text = window.prefix + window.suffix
        at = len(window.prefix)
        scores = self.session.edit_model.score(text, [(at, at, t) for t in scored], None) if scored else []
        return draft, dict(zip(scored, scores, strict=True))
