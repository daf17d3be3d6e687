"""Typed settings of the language server, validated at the edge.

Settings come, in increasing precedence, from the defaults below, the ``serve`` command line,
``initializationOptions`` and ``workspace/didChangeConfiguration``. Each layer is parsed field
by field: a bad value keeps the value of the layer below and is reported (one message naming
every bad field), an unknown field is reported and ignored. Names are camelCase on the wire
(``maxTokens``), the Python names are accepted too.
"""

from __future__ import annotations

import logging
import os
from dataclasses import replace
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from mercury_engine.options import InfillOptions, Preset

log = logging.getLogger(__name__)

# Keys editor clients keep in the same "mercury" section for themselves (the VS Code client's
# `serverPath`, `languages` and `trace.server`, an `enable` switch): ignored with a quiet log
# line, never a warning shown to the user.
CLIENT_ONLY_KEYS = frozenset({"serverPath", "serverArgs", "enable", "languages", "autoNextEdit", "trace"})

Sampler = Literal["auto", "reference", "fast"]  # "auto": the engine's default (the fast sampler)
LogLevel = Literal["error", "warning", "info", "debug"]
# "prefix": a candidate that adds parse errors is cut to its last valid line, else to the longest
# valid prefix of its first line (at a word boundary); "drop": whole lines only, else dropped.
SyntaxGuard = Literal["prefix", "drop", "off"]
CompletionFallback = Literal["auto", "always", "never"]
ModelDrafts = Literal["auto", "always", "fallback", "never"]
RankerKind = Literal["trees", "linear"]  # mercury_lsp/completion/rank.py (the same names)

PositiveTokens = Annotated[int, Meta(ge=1, le=4096)]


class SpanTokens(msgspec.Struct, rename="camel", kw_only=True, frozen=True, forbid_unknown_fields=True):
    """Token budget of the masked span for each kind of span (capped by ``maxTokens``)."""
    line: PositiveTokens = 24
    statement: PositiveTokens = 48
    block: PositiveTokens = 96


class ContextOptions(msgspec.Struct, rename="camel", kw_only=True, frozen=True, forbid_unknown_fields=True):
    """How the prefix/suffix windows share the model's context budget."""
    suffix_share: Annotated[float, Meta(ge=0.0, le=0.9)] = 0.25  # of the budget, for text after the cursor
    safety_margin: Annotated[float, Meta(ge=0.5, le=1.0)] = 0.9  # of the estimated chars, against estimate error
    reserved_tokens: Annotated[int, Meta(ge=0, le=256)] = 8  # kept free for boundary healing / specials
    # None: the model's own budget; at most 2^20 tokens, past every supported model's context.
    max_context_tokens: Annotated[int, Meta(ge=32, le=1 << 20)] | None = None
    max_lines: Annotated[int, Meta(ge=1, le=200)] = 16  # most lines a multi-line suggestion may have


UnitFloat = Annotated[float, Meta(ge=0.0, le=1.0)]


# The codes of the next-edit rules (``mercury_lsp.next_edit.rules.REGISTRY``; its tests check that
# the two agree; docs/next-edit.md describes each): the values ``nextEdit.disabledRules`` takes.
NextEditRule = Literal["NE101", "NE102", "NE103", "NE104", "NE105", "NE106", "NE107",
                       "NE110", "NE111", "NE112", "NE113", "NE114", "NE115", "NE116", "NE117",
                       "NE201", "NE202", "NE203", "NE204", "NE205", "NE206", "NE207", "NE208", "NE209", "NE210",
                       "NE301", "NE302", "NE303", "NE304", "NE305", "NE306",
                       "NE401", "NE402", "NE403", "NE404", "NE405",
                       "NE501", "NE502", "NE503", "NE504", "NE505", "NE506",
                       "NE901"]


class NextEditOptions(msgspec.Struct, rename="camel", kw_only=True, frozen=True, forbid_unknown_fields=True):
    """Tuning of next-edit prediction (typed; defaults are the shipped behaviour)."""
    # Edit records per document looked at (newest first).
    max_history_records: Annotated[int, Meta(ge=1, le=256)] = 8
    # Most recently edited documents whose edits drive predictions.
    max_documents: Annotated[int, Meta(ge=1, le=64)] = 2
    max_candidates: Annotated[int, Meta(ge=1, le=100_000)] = 2000  # locations per request (syntax-tied)
    # Of them, the holes (new text the syntax cannot tell) nearest the cursor are refilled by the model.
    max_model_candidates: Annotated[int, Meta(ge=0, le=4096)] = 64
    # Model work per request (holes the syntax cannot fill) stops after this; the syntax's edits
    # are answered anyway. Keeps a warm request within the 300 ms target on 2 CPU cores.
    model_budget_ms: Annotated[int, Meta(ge=0, le=600_000)] = 150
    refill_slack_tokens: Annotated[int, Meta(ge=0, le=64)] = 4  # mask positions beyond the expected text
    window_fill: Annotated[float, Meta(gt=0.0, le=1.0)] = 0.8  # share of the context a refill window may use
    model_min_confidence: UnitFloat = 0.6  # a free model refill (not the user's text) needs this
    # Model-only path when no rule or syntax ties a location: off by default — on the real-history
    # benchmark (benchmarks/next_edit/histories.py) it found no location in 61 cases and cost seconds each.
    model_fallback: bool = False
    # Finish a half-typed line at the cursor with the model (a refill past the cursor, kept when
    # it repairs the line's parse): off by default — on 2 loaded CPU cores one refill took 1-6 s
    # and none of them was kept on the real-history benchmark; an accelerator affords it.
    complete_line_model: bool = False
    drop_min_confidence: UnitFloat = 0.5  # model-only path: keep a refill this confident
    drop_ratio: UnitFloat = 0.2  # model-only path: p(after) < drop_ratio * p(before) ...
    drop_max_probability: UnitFloat = 0.05  # ... and p(after) below this
    drop_max_candidates: Annotated[int, Meta(ge=0, le=256)] = 6
    drop_window_chars: Annotated[int, Meta(ge=1, le=100_000)] = 1200  # text scored around the edit (each side)
    score_stride: Annotated[int, Meta(ge=1, le=64)] = 8  # token_scores: spacing of tokens masked together
    # Language server: workspace files that are not open but mention what the edit changed join
    # the prediction (edits there come with version null); 0 keeps it to open documents.
    max_workspace_files: Annotated[int, Meta(ge=0, le=10_000)] = 200
    # Repeated edits: a rule matching more places than this is too generic to offer; at most
    # repeat_max_results of its sites are offered per request; repeat_all_sites also offers the
    # sites of broader anchors (every similar site, not only the most similar: batch refactors)
    # and leaves renames to the scope-aware rename search.
    repeat_max_sites: Annotated[int, Meta(ge=1, le=100_000)] = 6
    repeat_max_results: Annotated[int, Meta(ge=1, le=100_000)] = 8
    repeat_all_sites: bool = False
    # A document larger than this (generated code, a data dump) gets no next edits: a rule learnt
    # there matches at thousands of places, and every parse of it costs the whole request.
    max_document_chars: Annotated[int, Meta(ge=1, le=1_000_000_000)] = 1_000_000
    # A request (and the client applying its edits) gives up after this; a cold CPU model
    # refilling dozens of locations takes seconds, never this long.
    timeout_ms: Annotated[int, Meta(ge=50, le=600_000)] = 30_000
    # Rules whose edits are never offered, by code (docs/next-edit.md lists them: "NE204" the
    # repeated patterns, ...); an unknown code is reported like any bad setting.
    disabled_rules: list[NextEditRule] = msgspec.field(default_factory=list)


# The window share of retrieved context for a model other than the embedded one: room for a
# definition or two and a similar chunk beside the document's own code.
OTHER_MODEL_RETRIEVAL_SHARE = 0.25


class MemorySettings(msgspec.Struct, rename="camel", kw_only=True, frozen=True, forbid_unknown_fields=True):
    """The repository memory (mercury_lsp/memory, docs/memory.md): the workspace's code indexed in
    the background, its continuations and retrieved context offered to completions."""
    enabled: bool = True  # index the workspace folders and suggest from them
    # Files indexed per workspace folder (past it the memory says so once and holds the first ones).
    max_files: Annotated[int, Meta(ge=0, le=10_000_000)] = 50_000
    max_megabytes: Annotated[int, Meta(ge=1, le=1_000_000)] = 1024  # text indexed per workspace folder
    persist: bool = True  # keep the index in the cache folder, so a restart is warm
    # Retrieved context in the model's window and every remote backend's prompt: the definitions
    # of the names near the cursor and the chunks of other files most like the code around it, in
    # at most this share of the window (0: none). null: 0 with the embedded model (on the
    # benchmark's dev repositories its drafts were no better with it), a quarter with any other
    # model or a remote backend (as Copilot's neighbouring tabs and RepoCoder's retrieval do).
    retrieval_share: Annotated[float, Meta(ge=0.0, le=0.75)] | None = None
    definitions: Annotated[int, Meta(ge=0, le=16)] = 4  # definitions retrieved at most
    chunks: Annotated[int, Meta(ge=0, le=16)] = 2  # similar chunks retrieved at most


class CompletionOptions(msgspec.Struct, rename="camel", kw_only=True, frozen=True, forbid_unknown_fields=True):
    """How a suggestion is chosen among the memory's candidates and the model's draft
    (mercury_lsp/completion/rank.py, docs/memory.md)."""
    # When the model writes a draft: "fallback" only when no memory candidate passes the gate (a
    # likely memory line is answered without a model call), "always" for every request, "never".
    # "auto": "never" with the embedded model (on the benchmark's dev repositories its drafts
    # never passed the gate and cost a model call each), "fallback" with any other model or a
    # remote backend, whose drafts the shipped ranker was not fitted on: they are shown, still
    # name-checked, when no memory candidate passes the gate.
    model_drafts: ModelDrafts = "auto"
    # The model scores the memory's candidates in their two-sided context (one batched pass).
    model_scores: bool = False
    # Which fitted model gives each candidate its probability: "trees" (boosted trees,
    # completion/ranker_trees.json) or "linear" (the logistic model, completion/ranker.json).
    # The trees save more characters at the same precision on the dev repositories (docs/memory.md).
    ranker: RankerKind = "trees"
    # The precision gate: a suggestion is shown only when the ranker's probability that it is
    # exactly right, weighed by its length (lengthWeight), reaches this (0: always show the
    # best). Chosen on the benchmark's dev repositories for 71 % precision with the trees
    # (benchmarks/memory/fit_ranker.py; the linear ranker's own is 0.16).
    min_probability: UnitFloat = 0.14
    # The gate and the order weigh the ranker's probability by what a suggestion saves when right:
    # probability * (characters / 16) ** lengthWeight (completion/rank.py gate_score; 0: the
    # probability alone). Chosen with minProbability for the most characters saved at 70 %
    # precision on the dev repositories (memory-fit cases, each repository left out, at 0.16:
    # 0.25 saved 30.6 % at 71.0 % precision, 0.4 30.8 % at 71.7 %, 0.5 31.0 % at 71.8 % but
    # 1 point fewer exactly right; on the benchmark's dev cases, before the last two memory
    # changes, 0.25 saved 31.3 % and 0.4 32.0 %).
    length_weight: Annotated[float, Meta(ge=0.0, le=2.0)] = 0.4
    # An identifier the model writes that exists nowhere in the document, the open documents or
    # the repository (and is not being defined) is replaced by a known one it starts, or the
    # suggestion is cut before it.
    identifier_check: bool = True
    candidates: Annotated[int, Meta(ge=1, le=16)] = 3  # best candidates tried against the syntax guard


BackendApi = Literal["mercury", "openai-fim", "inception"]
FimPromptFormat = Literal["starcoder", "codellama", "deepseek", "qwen", "codegemma", "codestral", "glm"]


class BackendSettings(msgspec.Struct, rename="camel", kw_only=True, frozen=True, forbid_unknown_fields=True):
    """A remote backend: ``serve`` loads no model and sends completions and next edits here."""
    url: str | None = None  # e.g. http://gpu-box:8000 (Inception's API: may be left out)
    api_key: str | None = None  # sent as Authorization: Bearer
    api: BackendApi = "mercury"  # a mercury-lsp http | an OpenAI-compatible FIM server | Inception's API
    model: str | None = None  # the model to ask for (openai-fim: required by vLLM / SGLang)
    prompt_format: FimPromptFormat = "starcoder"  # openai-fim: the served model's FIM tokens
    timeout_ms: Annotated[int, Meta(ge=50, le=600_000)] = 5000
    context_tokens: Annotated[int, Meta(ge=64, le=1_048_576)] = 2048  # window budget when the server does not say


# Files that are secret by nature: never read, sent to a backend, indexed or logged (the
# ``exclude`` setting; mercury_lsp/exclusion.py matches them, with .gitignore's rules). Drawn from
# what the tools in the field keep out by default — Zed's edit_predictions.disabled_globs (.env*,
# *.pem, *.key, *.cert, *.crt, .dev.vars, secrets.yml), Continue's security ignore list (keys,
# keystores, certificates, .env files) and Cursor's .cursorignore advice — kept to names that
# hold secrets whatever the project, so that no ordinary source file is caught.
DEFAULT_EXCLUDE = (
    # environment files (.env, .env.local, prod.env, direnv, Cloudflare's .dev.vars)
    ".env*", "*.env", ".envrc", ".dev.vars",
    # private keys, certificates and keystores
    "*.pem", "*.key", "*.crt", "*.cer", "*.cert", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.ppk",
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "*.gpg", "*.asc",
    # password databases and credential files
    "*.kdbx", "*.kdb", ".netrc", ".npmrc", ".pypirc", ".git-credentials", ".htpasswd", ".pgpass",
    "credentials", "credentials.json", "**/.aws/credentials", "**/.docker/config.json", "**/.ssh/**",
    # anything named for a secret (secrets.yml, client_secret.json, a secrets/ folder), and
    # Terraform state and variables (they hold provider credentials in clear)
    "*secret*", "*.tfstate", "*.tfstate.*", "*.tfvars",
)
# Where suggestions are off unless the user's ``suggestIn`` says otherwise (it overlays this): prose
# and commit messages, as Copilot ships ("plaintext", "markdown", "scminput": false).
DEFAULT_SUGGEST_IN: dict[str, bool] = {"plaintext": False, "markdown": False, "scminput": False}


# The daemon's share of the CPU cores when ``threads`` is unset: it runs beside the editor, which
# needs cores of its own while the user types. On 2 cores one torch thread gave the better
# suggestion latency and half the daemon CPU of torch's default of one thread per core
# (benchmarks/lsp_latency, arms ``after`` and ``after_all_threads``): OpenMP threads spin-wait
# for a core the editor or the OS holds.
DAEMON_CORE_SHARE = 2  # one torch thread per this many cores


def daemon_threads(threads: int | None) -> int:
    """The torch threads of the language server: ``threads`` when set, else half the cores."""
    return threads if threads is not None else max(1, (os.cpu_count() or 1) // DAEMON_CORE_SHARE)


class Settings(msgspec.Struct, rename="camel", kw_only=True, frozen=True, forbid_unknown_fields=True):
    # The model (changing one of these reloads it in the background).
    model: str | None = None  # None: the embedded default; else a directory or a hub id
    device: str = "auto"
    dtype: str = "auto"
    threads: Annotated[int, Meta(ge=1, le=256)] | None = None  # CPU threads for torch (None: daemon_threads())
    # Decoding.
    preset: Preset = "balanced"
    sampler: Sampler = "auto"
    temperature: Annotated[float, Meta(ge=0.0, le=2.0)] = 0.0
    max_tokens: PositiveTokens = 96  # hard cap on any span
    span_tokens: SpanTokens = SpanTokens()
    context: ContextOptions = ContextOptions()
    request_timeout_ms: Annotated[int, Meta(ge=50, le=60_000)] = 5000
    # Behaviour.
    debounce_ms: Annotated[int, Meta(ge=0, le=5000)] = 0
    enabled_languages: list[str] = msgspec.field(default_factory=lambda: ["*"])
    disabled_languages: list[str] = msgspec.field(default_factory=list)
    # Content exclusion (mercury_lsp/exclusion.py): files never read, sent, indexed or logged
    # (gitignore-style globs; replaces the defaults when set), and where suggestions are shown, by
    # language id or glob, as `suggestIn` ({"markdown": false, "**/*.md": false, "*": true}; overlays DEFAULT_SUGGEST_IN).
    exclude: list[str] = msgspec.field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    suggest_in: dict[str, bool] = msgspec.field(default_factory=lambda: dict(DEFAULT_SUGGEST_IN))
    syntax_guard: SyntaxGuard = "prefix"
    completion_fallback: CompletionFallback = "auto"
    # "Accept the confident part" stops before the first token the model gave less than this
    # probability (0.5: the model preferred that token over all others together).
    min_token_confidence: UnitFloat = 0.5
    next_edit: NextEditOptions = NextEditOptions()  # next-edit suggestions (mercury/nextEdit)
    memory: MemorySettings = MemorySettings()  # the repository memory
    completion: CompletionOptions = CompletionOptions()  # ranking, the precision gate, the identifier check
    cache_size: Annotated[int, Meta(ge=0, le=10_000)] = 128
    # Typeahead: while the user types the start of the shown suggestion, answer with its rest at
    # once (no model call), as Copilot and Tabby do; off, the cache answers only exact repeats.
    typeahead: bool = True
    # Incremental context cache: the engine reuses the keys/values of the context's unchanged
    # beginning across keystrokes (refreshed every few requests and on far edits; mercury_engine/context_cache.py).
    context_cache: bool = True
    # Speculative prefetch: a didChange starts the completion for the cursor the edit leaves
    # before the editor asks (superseded by the next edit). On: in benchmarks/lsp/latency it showed
    # more suggestions, a lower p95 and a larger share of pauses within 100 ms at less daemon CPU.
    prefetch: bool = True
    max_file_bytes: Annotated[int, Meta(ge=1)] = 8 * 1024 * 1024  # larger documents get no suggestions
    # Largest JSON-RPC message the daemon reads (from its command line; bad frames past it are refused).
    max_message_bytes: Annotated[int, Meta(ge=1024 * 1024, le=1024 * 1024 * 1024)] = 64 * 1024 * 1024
    syntax_max_bytes: Annotated[int, Meta(ge=0)] = 1024 * 1024  # larger documents: line-based windows
    backend: BackendSettings | None = None  # a remote backend instead of the local model
    # Logging.
    log_level: LogLevel = "info"
    debug_log_user_code: bool = False  # the only switch that lets user code into logs

    def language_enabled(self, language_id: str) -> bool:
        if language_id in self.disabled_languages:
            return False
        return "*" in self.enabled_languages or language_id in self.enabled_languages

    def infill_options(self, *, single_line: bool, context_scope: str | None) -> InfillOptions:
        """The engine's decoding options for one completion under these settings (greedy and
        seeded: the same text and cursor give the same suggestion)."""
        options = InfillOptions(preset=self.preset, temperature=self.temperature, seed=0, single_line=single_line,
                                context_reuse=self.context_cache, context_scope=context_scope)
        if self.sampler != "auto":  # the user asked for a sampler; otherwise the engine's default
            options = replace(options, sampler=self.sampler)
        return options

    @property
    def calibrated_model(self) -> bool:
        """The model is the embedded one, whose drafts the shipped ranker's weights were fitted on."""
        return self.model is None and self.backend is None

    def model_drafts(self) -> ModelDrafts:
        """``completion.modelDrafts`` with "auto" decided (see its comment)."""
        drafts = self.completion.model_drafts
        if drafts == "auto":
            return "never" if self.calibrated_model else "fallback"
        return drafts

    def retrieval_share(self) -> float:
        """``memory.retrievalShare`` with null decided (see its comment)."""
        share = self.memory.retrieval_share
        if share is None:
            return 0.0 if self.calibrated_model else OTHER_MODEL_RETRIEVAL_SHARE
        return share

    def span_budget(self, kind: str) -> int:
        return min(self.max_tokens, getattr(self.span_tokens, kind))

    @property
    def model_key(self) -> tuple:
        """The fields whose change requires loading the model again."""
        return (self.model, self.device, self.dtype, self.threads, self.context.max_context_tokens)


def _names(cls: type[msgspec.Struct]) -> dict[str, msgspec.structs.FieldInfo]:
    out: dict[str, msgspec.structs.FieldInfo] = {}
    for f in msgspec.structs.fields(cls):
        out[f.encode_name] = f
        out[f.name] = f
    return out


def _merge(base: msgspec.Struct, raw: Any, path: str, problems: list[str]) -> msgspec.Struct:
    """``base`` overlaid with the valid fields of the mapping ``raw``; problems appended."""
    if not isinstance(raw, dict):
        problems.append(f"{path or 'settings'} (expected an object, got {type(raw).__name__})")
        return base
    fields = _names(type(base))
    updates: dict[str, Any] = {}
    for key, value in raw.items():
        name = f"{path}.{key}" if path else str(key)
        info = fields.get(key) if isinstance(key, str) else None
        if info is None:
            if not path and key in CLIENT_ONLY_KEYS:
                log.info("ignored the client-side setting %s", name)
            else:
                problems.append(f"{name} (unknown setting)")
            continue
        current = getattr(base, info.name)
        if isinstance(current, msgspec.Struct) and _empty(value):
            continue  # an empty section (Lua encodes `{}` as `[]`): nothing to change
        if isinstance(current, msgspec.Struct) and isinstance(value, dict):
            updates[info.name] = _merge(current, value, name, problems)
            continue
        try:
            updates[info.name] = msgspec.convert(value, info.type)
        except msgspec.ValidationError as exc:
            problems.append(f"{name} ({_short(exc)})")
    return msgspec.structs.replace(base, **updates) if updates else base


def _empty(raw: Any) -> bool:
    """No settings: null, or an empty object/array (Lua's `{}` is sent as `[]`)."""
    return raw is None or (isinstance(raw, dict | list) and not raw)


def _short(exc: msgspec.ValidationError) -> str:
    text = str(exc)
    return text.split(" - at ", 1)[0]


def parse_settings(raw: Any, base: Settings | None = None) -> tuple[Settings, list[str]]:
    """``base`` (default: the defaults) overlaid with ``raw``; returns (settings, problems).

    ``raw`` may be the settings object itself or ``{"mercury": {...}}`` (the section name
    editors use for workspace configuration). ``None``, an empty object or array, and an empty
    ``mercury`` section mean "no settings" (accepted silently).
    """
    base = base or Settings()
    section = raw.get("mercury", raw) if isinstance(raw, dict) else raw
    if section is not raw and (_empty(section) or isinstance(section, dict)):
        raw = section
    if _empty(raw):
        return base, []
    problems: list[str] = []
    merged = _merge(base, raw, "", problems)
    assert isinstance(merged, Settings)
    return merged, problems


def problems_message(problems: list[str]) -> str:
    return ("mercury-lsp: ignored invalid settings (their previous values are kept): "
            + "; ".join(problems))
