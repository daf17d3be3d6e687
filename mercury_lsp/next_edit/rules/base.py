"""What a next-edit rule is (``Rule``) and what it reads (``RuleContext``, built once per query).

A rule reads the context and returns the edits it predicts; the pipeline (``pipeline.predict``)
stamps each with the rule's code, resolves overlaps between them in the registry's order
(``resolve``) and checks their syntax. Rules never see each other's edits, except that a
*fallback* rule runs only when no rule before it offered any edit (the model's costly paths).
The rules of a *family* share one search (the repeat family's token rules, ranked together):
the family's search runs once per query (``RuleContext.family``) and each member's ``run``
(``family_member``) returns the edits of it that name the member.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mercury_lsp.config import NextEditOptions, NextEditRule
from mercury_lsp.engine_client import CancelToken, EngineCancelled
from mercury_lsp.next_edit.examples import Example, recent_edits
from mercury_lsp.next_edit.query import Candidate, DocState, EditModel, NextEditQuery, Note, Prediction
from mercury_lsp.next_edit.recall import Recall
from mercury_lsp.next_edit.tree import ParsedDoc, newest_edited
from mercury_lsp.schema import EditKind
from mercury_lsp.syntax import Grammars

# The newest edits (across documents, ``examples``) any rule reads as examples; each rule takes
# as many of them as it needs (``ctx.examples[:n]``): the most any rule takes (NE114's).
MAX_EXAMPLES = 5

T = TypeVar("T")


@dataclass(frozen=True)
class Rule:
    """One next-edit rule: its stable code (``NE101``: the family in the hundreds, see
    ``docs/next-edit.md``), a kebab-case name, the kind its edits report, its base confidence
    (``rules.confidence``: None for the model's own), ``run`` and ``doc`` (its module's
    docstring: what, why, an example). ``self_checked``: its edits passed their own syntax check
    (the pipeline's guard leaves them out: their repair must not cover for another edit that
    breaks the parse); ``fallback``: it runs only when no rule before it offered an edit."""
    code: NextEditRule
    name: str
    kind: EditKind
    confidence: float | None
    run: Callable[[RuleContext], list[Prediction]]
    doc: str
    self_checked: bool = False
    fallback: bool = False

    @property
    def summary(self) -> str:
        """The first paragraph of the rule's docstring, on one line: what it does."""
        return " ".join(self.doc.strip().split("\n\n", 1)[0].split())


class TimeBox(CancelToken):
    """A child of the request's token that also gives up ``seconds`` from now: model work that
    overruns its time box ends early, the request itself goes on (with the syntax's edits)."""

    def __init__(self, parent, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        parent_deadline = getattr(parent, "deadline", None)
        super().__init__(deadline if parent_deadline is None else min(deadline, parent_deadline))
        self.parent = parent

    @property
    def cancelled(self) -> bool:
        return super().cancelled or (self.parent is not None and self.parent.cancelled)

    def check(self) -> None:
        if self.parent is not None:
            self.parent.check()
        super().check()


@dataclass
class RuleContext:
    """Everything a rule reads, built once per query: the parsed documents (and by URI), the
    edited ones newest first, the newest edits as examples, the locations the syntax ties
    (``steps.candidates``), the grammars, the model session if any, the request's cancel token,
    the model's time box (started by the first model work: ``nextEdit.modelBudgetMs``) and the
    repository memory when it is built (``recall.Recall``)."""
    query: NextEditQuery
    grammars: Grammars
    parsed: list[ParsedDoc]
    candidates: list[Candidate]
    model: EditModel | None = None
    cancel: Any = None
    # the families' shared searches by name (the registry's ``FAMILIES``)
    families: dict[str, Callable[[RuleContext], list[Prediction]]] = field(default_factory=dict)
    # where only a string names a renamed definition (``exports``): sent as notes, not edits
    notes: list[Note] = field(default_factory=list)
    # the repository memory as this request may ask it (``recall``); None: off or not built yet
    memory: Recall | None = None
    by_uri: dict[str, ParsedDoc] = field(init=False)
    edited: list[ParsedDoc] = field(init=False)  # documents with a history, the newest edited first
    examples: list[Example] = field(init=False)  # the newest MAX_EXAMPLES edits, newest first
    _box: TimeBox | None = field(default=None, init=False)
    _shared: dict = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self.by_uri = {p.doc.uri: p for p in self.parsed}
        self.edited = newest_edited(self.parsed)
        self.examples = recent_edits(self.query, MAX_EXAMPLES)

    @property
    def newest(self) -> Example | None:
        """The newest edit when its document has not been edited since (its record is the
        document's newest), else None: a rule repeating "the edit just made" reads this one."""
        return self.examples[0] if self.examples and self.examples[0].index == 0 else None

    @property
    def options(self) -> NextEditOptions:
        return self.query.options

    def enabled(self, code: str) -> bool:
        return code not in self.options.disabled_rules

    def same_language(self, doc: DocState) -> list[DocState]:
        """``doc`` and the query's documents of its grammar, in query order."""
        return [d for d in self.query.docs if d is doc or (doc.grammar is not None and d.grammar == doc.grammar)]

    def shared(self, work: Callable[[RuleContext], T]) -> T:
        """``work(self)``, computed once per query for the rules that share it (a family's search)."""
        if work not in self._shared:
            self._shared[work] = work(self)
        return self._shared[work]

    def family(self, name: str) -> list[Prediction]:
        """The edits of the family ``name``'s shared search (computed once per query)."""
        return self.shared(self.families[name])

    def time_box(self) -> TimeBox:
        """The model's time box of this query (one for all model work, started at its first use)."""
        if self._box is None:
            self._box = TimeBox(self.cancel, self.options.model_budget_ms / 1000)
        return self._box

    def boxed(self, work: Callable[[TimeBox], list[Prediction]]) -> list[Prediction]:
        """``work(box)``, or nothing when it overran the time box; the request's own cancel raises."""
        try:
            return work(self.time_box())
        except EngineCancelled:
            if self.cancel is not None and self.cancel.cancelled:
                raise
            return []


def family_member(family: str, code: str) -> Callable[[RuleContext], list[Prediction]]:
    """The ``run`` of a family's member rule: its own edits of the family's shared search."""
    def run(ctx: RuleContext) -> list[Prediction]:
        return [p for p in ctx.family(family) if p.rule == code]

    run.__doc__ = f"The edits of the {family} family's search that name {code}."
    return run
