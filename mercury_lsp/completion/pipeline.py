"""The completion pipeline, run on the engine's worker thread for one request:

    parse (incremental) -> context window -> memory candidates -> [infill with retrieved context]
        -> rank -> gate -> identifier check -> shape -> trim a repeat -> syntax guard

(``choose`` has the ranking, gate and identifier check.)

The syntax guard keeps a candidate only if it adds no parse errors to its lines; one that does
is cut back to its last valid line. When not even its first line passes, the default guard
(``syntaxGuard: "prefix"``) falls back to the longest prefix of that line, cut at a word
boundary, that passes and keeps at least ``PREFIX_MIN_CHARS`` characters (``return func(args``
becomes ``return func``); ``"drop"`` drops it. The guard decides every text shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mercury_lsp.completion.accept import confident_length
from mercury_lsp.completion.choose import MemoryRequest, choose, memory_candidates, name_checker
from mercury_lsp.completion.indent import fit_indent
from mercury_lsp.completion.rank import NO_NAMES, DocNames, Draft, rank, shipped_ranker
from mercury_lsp.completion.retrieved import seam_chunks
from mercury_lsp.completion.shaping import OVERLAP_MAX_CHARS, bracket_imbalance, shape, suffix_overlap
from mercury_lsp.config import Settings
from mercury_lsp.context import Budget, Window, build_window
from mercury_lsp.documents import DocumentSnapshot
from mercury_lsp.engine_client import CancelToken
from mercury_lsp.schema import InfillOutcome, InfillSpec, RetrievedChunk, SpanKind
from mercury_lsp.syntax import Grammars, Replacement, SyntaxGuard

if TYPE_CHECKING:
    from mercury_lsp.backend.session import Session

GUARD_MAX_TRIES = 6  # parses the guard may spend on one suggestion (each costs a re-parse)
# The prefix fallback's own parse budget, longest prefix first. In the lsp_latency trace (160 s,
# 81 pause points) every prefix it recovered passed within its first 3 tries.
PREFIX_MAX_TRIES = 4
PREFIX_MIN_CHARS = 2  # non-blank characters a fallback prefix keeps: one bracket or letter says nothing


@dataclass(frozen=True)
class PipelineResult:
    text: str
    kind: SpanKind
    replace_end: int
    outcome: InfillOutcome | None
    tree: object | None
    seq: int
    guard_dropped: bool
    confident: int | None = None  # chars of ``text`` before its first low-confidence token
    guard_prefix: bool = False  # the guard's prefix fallback cut ``text`` inside its first line
    source: str = ""  # "memory" | "model" | "both" (the draft is a memory continuation too) | ""
    probability: float | None = None  # the ranker's, of the text shown (or of the best when none)
    gated: bool = False  # the precision gate held back the best candidate


def run_pipeline(session: Session, snap: DocumentSnapshot, cursor: int, settings: Settings,
                 grammars: Grammars, cancel: CancelToken | None, memory: MemoryRequest | None = None) -> PipelineResult:
    """Runs on the engine worker thread: parse, window, memory candidates, (infill), rank, gate,
    shape, trim, guard."""
    data = None
    tree = None
    seq = 0
    if snap.syntax is not None:
        data = snap.text.encode("utf-8")
        tree = grammars.parse(snap, data)
        seq = snap.syntax.seq
    share = settings.retrieval_share() if memory is not None and settings.memory.enabled else 0.0
    window = build_window(snap, tree, cursor, settings,
                          Budget(int(session.context_tokens * (1 - share)), session.chars_per_token))
    line_before = snap.text[snap.line_start(snap.line_of(cursor)):cursor]
    cands = memory_candidates(memory, settings, snap.uri, snap.text, cursor, window.replace_end,
                              block=window.kind == "block")
    names = DocNames.of(snap.text, cursor, memory.grammar) if memory is not None else NO_NAMES
    weigh = settings.completion.length_weight
    ranker = shipped_ranker(settings.completion.ranker)
    ranked = rank(cands, None, line_before, ranker, doc=names, length_weight=weigh)
    outcome = None
    confident = None
    drafts = settings.model_drafts()
    if drafts == "always" or (drafts == "fallback" and (not ranked or ranked[0].score
                                                         < settings.completion.min_probability)):
        # a daemon shared by editors: each document reuses its own context
        options = settings.infill_options(single_line=window.kind == "line", context_scope=snap.uri)
        spec = InfillSpec(prefix=window.prefix, suffix=window.suffix, max_tokens=window.max_tokens, options=options,
                          uri=snap.uri, retrieved=_retrieved(memory, settings, snap, cursor, window, share))
        outcome = session.infill(spec, cancel)
        shaped = shape(outcome.text, window, settings.context.max_lines)
        draft = fit_indent(shaped, line_before)
        confident = confident_length(outcome, settings.min_token_confidence, len(shaped) - len(draft))
        ranked = rank(cands, Draft(draft, outcome.mean_confidence), line_before, ranker, doc=names,
                      length_weight=weigh)
    checker = name_checker(memory, snap.text, line_before) if settings.completion.identifier_check else None
    verdict: dict[str, bool] = {}

    def finished(text: str, source: str) -> tuple[str, bool, bool]:
        out, dropped, cut = finish(text, snap, tree, data, window, settings, grammars)
        verdict.update(dropped=dropped, cut=cut)
        return out, dropped, cut

    choice = choose(ranked, settings, finished, checker)
    text = choice.text
    if choice.source != "model":
        confident = None
    if text and snap.crlf:
        confident = None if confident is None else confident + text[:confident].count("\n")
        text = text.replace("\n", "\r\n")
    if confident is not None and (confident >= len(text) or not text[:confident].strip()):
        confident = None
    return PipelineResult(text, window.kind, window.replace_end, outcome, tree, seq,
                          verdict.get("dropped", False) and not text, confident, verdict.get("cut", False) and bool(text),
                          choice.source, choice.probability, choice.gated)


def _retrieved(memory: MemoryRequest | None, settings: Settings, snap: DocumentSnapshot, cursor: int, window: Window,
               share: float) -> tuple[RetrievedChunk, ...]:
    """The memory's retrieved context for the model (none without the memory or a share; the
    window was built smaller by that share, and the backend fits the chunks in what is left)."""
    if memory is None or share <= 0:
        return ()
    opts = settings.memory
    chunks = memory.memory.retrieve(memory.context(snap.uri, snap.text, cursor, window.replace_end),
                                    memory.open_docs, opts.chunks, opts.definitions)
    return seam_chunks(chunks, memory.memory.roots)


def finish(text: str, snap: DocumentSnapshot, tree, data: bytes | None, window: Window,
            settings: Settings, grammars: Grammars) -> tuple[str, bool, bool]:
    """Trim a repeat of the suffix, then apply the syntax guard. Returns (text, dropped, cut to
    a prefix of its first line)."""
    doc_text = snap.text
    line = snap.line_of(window.cursor)
    line_before = doc_text[snap.line_start(line):window.cursor]
    rest = doc_text[window.replace_end:snap.line_end(line)]
    after = doc_text[window.replace_end:window.replace_end + OVERLAP_MAX_CHARS]
    candidates = [text]
    trimmed = suffix_overlap(text, after)
    guard = SyntaxGuard(grammars) if tree is not None and data is not None else None
    tries = 0
    if trimmed is not None:
        if guard is not None:
            scored = []
            for cand in (trimmed, text):
                before, after_errors = guard.errors(snap, tree, data, _rep(window, cand))
                tries += 1
                scored.append((after_errors - before, cand is text, cand))
            candidates = [c for _, _, c in sorted(scored, key=lambda s: (s[0], s[1]))]
        else:
            full = bracket_imbalance(line_before + text + rest)
            cut = bracket_imbalance(line_before + trimmed + rest)
            candidates = [trimmed, text] if cut <= full else [text, trimmed]
    if guard is None or settings.syntax_guard == "off":
        return candidates[0], False, False
    for cand in candidates:
        lines = cand.split("\n")
        for n in range(len(lines), 0, -1):
            if tries >= GUARD_MAX_TRIES:
                break
            attempt = "\n".join(lines[:n]).rstrip()
            if not attempt.strip():
                break
            tries += 1
            if guard.accepts(snap, tree, data, _rep(window, attempt)):
                return attempt, False, False
    if settings.syntax_guard == "prefix":
        first = candidates[0].split("\n", 1)[0]
        for attempt in word_prefixes(first)[:PREFIX_MAX_TRIES]:
            if guard.accepts(snap, tree, data, _rep(window, attempt)):
                return attempt, False, True
    return "", True, False


def word_prefixes(line: str) -> list[str]:
    """Proper prefixes of ``line`` cut at word boundaries (never inside an identifier or number),
    trailing blanks removed, longest first, each with at least ``PREFIX_MIN_CHARS`` non-blank
    characters and no string it leaves open (a parser in error recovery may accept ``'. None``
    after an open bracket; the fallback never offers half a literal)."""
    out: list[str] = []
    for i in range(len(line) - 1, 0, -1):
        if _word(line[i - 1]) and _word(line[i]):
            continue
        cut = line[:i].rstrip()
        if len(cut) < len(line.rstrip()) and (not out or cut != out[-1]) \
                and sum(not c.isspace() for c in cut) >= PREFIX_MIN_CHARS and not _open_quote(cut):
            out.append(cut)
    return out


def _open_quote(s: str) -> bool:
    """Does ``s`` end inside a ``'`` or ``"`` string it opened (backslash escapes honoured)?"""
    quote = None
    escaped = False
    for ch in s:
        if escaped:
            escaped = False
        elif ch == "\\" and quote:
            escaped = True
        elif quote is None and ch in "'\"":
            quote = ch
        elif ch == quote:
            quote = None
    return quote is not None


def _word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _rep(window: Window, text: str) -> Replacement:
    return Replacement(window.cursor, window.replace_end, text)
