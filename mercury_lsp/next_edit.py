"""Next-edit suggestions: after the user's edit, the other places that must follow.

Pipeline (runs on the engine worker; no LSP types here):

1. **What changed** — each recently edited document comes with the texts before its last few
   edit records (newest first). The smallest diff between one of them and the current text that
   turns one identifier into another is a *rename* (``foo`` -> ``bar``); a function whose
   parameter count differs between the oldest of them and now is a *signature change*.
2. **Where** (tree-sitter decides) — for a rename, the remaining occurrences of the old name tied
   to the edited one: scope-aware for parameters and locals (nested scopes that rebind the name
   are skipped; attribute names and keyword-argument names are not variables), module-wide plus
   importing documents for module-level functions and classes, every ``x.name`` across the open
   documents for attributes and methods. For a signature change, the calls whose argument count
   matched the old signature and no longer matches the new one. When syntax ties nothing, the
   model-only path scores every token around the edit before and after it (batched masked
   passes) and takes the identifiers whose likelihood dropped.
3. **What** (the model decides) — the candidate spans are masked together on one canvas per
   window (the user's edit in view) and refilled jointly. For a rename, when the model's refill
   is not the identifier the user typed, the user's identifier is *scored* at that location (its
   tokens masked) and that score ranks it: the model never invents a third name. For a call, the
   refill is kept when it parses with the right argument count and the model is confident;
   otherwise the argument the user added at the call site they edited is inserted and scored.
4. **Check** — edits that add parse errors are dropped; the rest are ranked by confidence.
"""

from __future__ import annotations

import keyword
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec

from mercury_lsp import __version__
from mercury_lsp.documents import PositionEncoding, units_len
from mercury_lsp.engine_client import EngineCancelled
from mercury_lsp.schema import (
    EditKind,
    EditSource,
    NextEditResult,
    NextEditTimings,
    PredictedEdit,
    TextPosition,
    TextRange,
)
from mercury_lsp.syntax import Grammars, count_errors

# Scopes of Python that bind their own names.
PY_FUNCTION_SCOPES = ("function_definition", "lambda")
PY_COMPREHENSIONS = ("list_comprehension", "set_comprehension", "dictionary_comprehension",
                     "generator_expression")
PY_PARAM_WRAPPERS = ("default_parameter", "typed_parameter", "typed_default_parameter",
                     "list_splat_pattern", "dictionary_splat_pattern")
PY_PATTERNS = ("pattern_list", "tuple_pattern", "list_pattern", "parenthesized_expression",
               "list_splat_pattern")
REASON_TEXT_CHARS = 40  # of the model's refill quoted in a reason
# Identifier node types of other grammars (generic, syntax-only scoping).
GENERIC_IDENTIFIERS = ("identifier", "field_identifier", "property_identifier", "type_identifier",
                       "shorthand_property_identifier", "shorthand_property_identifier_pattern")


class NextEditOptions(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """Tuning of next-edit prediction (typed; defaults are the shipped behaviour)."""
    max_history_records: int = 8  # edit records per document looked at (newest first)
    max_documents: int = 2  # most recently edited documents whose edits drive predictions
    max_candidates: int = 2000  # locations returned per request (syntax-tied)
    max_model_candidates: int = 64  # of them, the nearest to the cursor are refilled and scored
    refill_slack_tokens: int = 4  # mask positions beyond the expected text's length
    window_fill: float = 0.8  # share of the model's context a refill window may use
    model_min_confidence: float = 0.6  # a free model refill (not the user's text) needs this
    drop_min_confidence: float = 0.5  # model-only path: keep a refill this confident
    drop_ratio: float = 0.2  # model-only path: p(after) < drop_ratio * p(before) ...
    drop_max_probability: float = 0.05  # ... and p(after) below this
    drop_max_candidates: int = 6
    drop_window_chars: int = 1200  # text scored around the edit (each side)
    score_stride: int = 8  # token_scores: tokens masked together are this far apart


# ---------------------------------------------------------------------------- inputs / outputs
@dataclass(frozen=True)
class DocState:
    """One document as next-edit sees it (immutable; built on the event loop)."""
    uri: str
    text: str
    grammar: str | None
    version: int | None
    history: tuple[str, ...] = ()  # texts before the newest 1, 2, ... edit records
    edited_at: float = 0.0  # time of the newest edit (ranks documents)


@dataclass(frozen=True)
class NextEditQuery:
    docs: tuple[DocState, ...]
    cursor_uri: str
    cursor: int  # code-point offset in the cursor's document
    encoding: PositionEncoding = PositionEncoding.UTF16
    options: NextEditOptions = NextEditOptions()


@dataclass
class Candidate:
    uri: str
    start: int  # code-point offsets in the current text
    end: int
    old_text: str
    kind: EditKind
    expected: str | None  # the syntax-obvious new text (the user's identifier / argument list)
    reason: str
    arg_count: int | None = None  # signature: arguments the new text must have


@dataclass
class Prediction:
    uri: str
    start: int
    end: int
    new_text: str
    confidence: float
    reason: str
    kind: EditKind
    source: EditSource
    old_text: str
    model_text: str = ""  # what the model's refill said (for reports)


@dataclass
class Outcome:
    """Predictions plus what the benchmark reports (not sent to clients)."""
    predictions: list[Prediction]
    candidates: list[Candidate]
    timings: NextEditTimings = field(default_factory=NextEditTimings)


class EditModel(Protocol):
    """What next-edit needs from the engine (``EngineEdits`` adapts ``engine.Engine``)."""
    context_tokens: int

    def count_tokens(self, text: str) -> int: ...
    def refill(self, text: str, spans: list[tuple[int, int]], max_tokens: list[int], steps: int,
               cancel: Any) -> list[tuple[str, float]]: ...
    def score(self, text: str, candidates: list[tuple[int, int, str]], cancel: Any) -> list[float]: ...
    def token_probs(self, text: str, stride: int, cancel: Any) -> list[tuple[int, int, float]]: ...


class EngineEdits:
    """Adapts ``engine.Engine`` (or anything with its edit methods) to ``EditModel``: plain
    tuples out; a mercury CancelToken is linked to the engine's own."""

    def __init__(self, engine: Any) -> None:
        self._engine = engine
        self.context_tokens = int(engine.context_tokens)
        self.model_name = str(getattr(engine, "path", "") or "")

    @staticmethod
    def _token(cancel: Any) -> Any:
        return cancel.engine_token() if cancel is not None and hasattr(cancel, "engine_token") else cancel

    def count_tokens(self, text: str) -> int:
        return self._engine.count_tokens(text)

    def refill(self, text, spans, max_tokens, steps, cancel):
        r = self._engine.refill(text, spans, max_tokens, steps=steps, cancel=self._token(cancel))
        return [(s.text, float(s.confidence)) for s in r.spans]

    def score(self, text, candidates, cancel):
        return [float(v) for v in self._engine.score_spans(text, candidates, cancel=self._token(cancel))]

    def token_probs(self, text, stride, cancel):
        return [(s.start, s.end, float(s.probability))
                for s in self._engine.token_scores(text, stride, cancel=self._token(cancel))]


def _check(cancel: Any) -> None:
    if cancel is not None and cancel.cancelled:
        raise EngineCancelled("next-edit request cancelled")


# ---------------------------------------------------------------------------- text helpers
def is_identifier(s: str) -> bool:
    return s.isidentifier() and not keyword.iskeyword(s)


def _ident_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def diff_region(before: str, after: str) -> tuple[int, int, int]:
    """(start, end in ``before``, end in ``after``) of the smallest changed region."""
    n = min(len(before), len(after))
    p = 0
    while p < n and before[p] == after[p]:
        p += 1
    s = 0
    while s < n - p and before[len(before) - 1 - s] == after[len(after) - 1 - s]:
        s += 1
    return p, len(before) - s, len(after) - s


def identifier_change(before: str, after: str) -> tuple[int, str, str] | None:
    """(start in ``after``, old identifier, new identifier) when the diff renames one identifier."""
    p, eb, ea = diff_region(before, after)
    if p == eb == ea:
        return None
    lo = p
    while lo > 0 and _ident_char(after[lo - 1]):
        lo -= 1
    hb, ha = eb, ea
    while ha < len(after) and _ident_char(after[ha]):
        ha += 1
        hb += 1
    old, new = before[lo:hb], after[lo:ha]
    if old != new and is_identifier(old) and is_identifier(new):
        return lo, old, new
    return None


class LineIndex:
    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0]
        for i, ch in enumerate(text):
            if ch == "\n":
                self.starts.append(i + 1)

    def line_of(self, offset: int) -> int:
        import bisect

        return bisect.bisect_right(self.starts, offset) - 1

    def line_start(self, offset: int) -> int:
        return self.starts[self.line_of(offset)]

    def line_end(self, offset: int) -> int:
        line = self.line_of(offset)
        return self.starts[line + 1] - 1 if line + 1 < len(self.starts) else len(self.text)

    def position(self, offset: int, enc: PositionEncoding) -> TextPosition:
        line = self.line_of(offset)
        start = self.starts[line]
        return TextPosition(line, units_len(self.text[start:offset], enc))


class _Bytes:
    """Byte <-> code-point offsets of one text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.data = text.encode("utf-8")
        self.ascii = len(self.data) == len(text)
        if not self.ascii:
            self._char_of: list[int] = []
            for i, ch in enumerate(text):
                self._char_of.extend([i] * len(ch.encode("utf-8")))
            self._char_of.append(len(text))

    def char(self, b: int) -> int:
        return b if self.ascii else self._char_of[b]

    def byte(self, c: int) -> int:
        return c if self.ascii else len(self.text[:c].encode("utf-8"))

    def node_text(self, node) -> str:
        return self.data[node.start_byte:node.end_byte].decode("utf-8", errors="replace")


@dataclass
class _Parsed:
    doc: DocState
    tree: Any
    b: _Bytes
    lines: LineIndex


# ---------------------------------------------------------------------------- python scoping
def _walk(node, prune=None) -> Iterable:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if prune is not None and n is not node and prune(n):
            continue
        stack.extend(reversed(n.children))


def _field_is(parent, name: str, node) -> bool:
    child = parent.child_by_field_name(name)
    return child is not None and child.start_byte == node.start_byte and child.end_byte == node.end_byte


def _param_nodes(params) -> list[tuple[Any, bool, bool]]:
    """(identifier node, has default, is splat) per parameter of a parameters node."""
    out = []
    for ch in params.named_children:
        if ch.type == "identifier":
            out.append((ch, False, False))
        elif ch.type in PY_PARAM_WRAPPERS:
            ident = ch.child_by_field_name("name")
            if ident is None:
                ident = next((c for c in ch.named_children if c.type == "identifier"), None)
            if ident is not None:
                out.append((ident, "default" in ch.type, "splat" in ch.type))
        elif ch.type in ("keyword_separator", "positional_separator"):
            continue
    return out


def _binding_position(node) -> bool:
    """An identifier assigned to (assignment/for/with/comprehension targets, imports, walrus)."""
    child, parent = node, node.parent
    while parent is not None and parent.type in PY_PATTERNS:
        child, parent = parent, parent.parent
    if parent is None:
        return False
    if parent.type in ("assignment", "augmented_assignment", "for_statement", "for_in_clause"):
        return _field_is(parent, "left", child)
    if parent.type in ("as_pattern_target", "aliased_import", "named_expression", "global_statement",
                       "nonlocal_statement"):
        return True
    if parent.type == "dotted_name" and parent.parent is not None and parent.parent.type == "import_statement":
        return True
    return False


def _is_variable(node) -> bool:
    """An identifier node naming a variable (not ``x.attr``'s attr, not ``f(kw=...)``'s kw)."""
    parent = node.parent
    if parent is None:
        return True
    if parent.type == "attribute" and _field_is(parent, "attribute", node):
        return False
    if parent.type == "keyword_argument" and _field_is(parent, "name", node):
        return False
    return True


def _scope_binds(scope, name: str, b: _Bytes) -> bool:
    """Does a nested function/lambda/comprehension bind ``name`` itself (shadowing the outer)?"""
    if scope.type in PY_FUNCTION_SCOPES:
        params = scope.child_by_field_name("parameters")
        if params is not None and any(b.node_text(n) == name for n, _, _ in _param_nodes(params)):
            return True
        body = scope.child_by_field_name("body")
        if body is None:
            return False
        for n in _walk(body, prune=lambda x: x.type in PY_FUNCTION_SCOPES + PY_COMPREHENSIONS + ("class_definition",)):
            if n.type in ("global_statement", "nonlocal_statement") and any(
                    b.node_text(c) == name for c in n.named_children):
                return False
            if n.type == "identifier" and b.node_text(n) == name and _binding_position(n):
                return True
        return False
    if scope.type in PY_COMPREHENSIONS:
        for clause in scope.named_children:
            if clause.type == "for_in_clause":
                left = clause.child_by_field_name("left")
                if left is not None and any(n.type == "identifier" and b.node_text(n) == name
                                            for n in _walk(left)):
                    return True
    return False


def _variable_occurrences(scope, name: str, b: _Bytes) -> list:
    """Identifiers naming variable ``name`` in ``scope``, skipping nested scopes that rebind it."""
    out = []
    own_name = scope.child_by_field_name("name") if scope.type == "function_definition" else None

    def prune(n) -> bool:
        return n.type in PY_FUNCTION_SCOPES + PY_COMPREHENSIONS and _scope_binds(n, name, b)

    for n in _walk(scope, prune=prune):
        if n.type in PY_FUNCTION_SCOPES + PY_COMPREHENSIONS and n is not scope and prune(n):
            continue
        if n.type != "identifier" or b.node_text(n) != name or not _is_variable(n):
            continue
        if own_name is not None and n.start_byte == own_name.start_byte:
            continue
        out.append(n)
    return out


def _in_class_body(funcdef) -> bool:
    p = funcdef.parent
    if p is not None and p.type == "decorated_definition":
        p = p.parent
    return p is not None and p.type == "block" and p.parent is not None and p.parent.type == "class_definition"


def _enclosing(node, types: tuple[str, ...]):
    n = node.parent
    while n is not None and n.type not in types:
        n = n.parent
    return n


def _attribute_occurrences(root, name: str, b: _Bytes) -> list:
    out = []
    for n in _walk(root):
        if n.type == "attribute":
            attr = n.child_by_field_name("attribute")
            if attr is not None and b.node_text(attr) == name:
                out.append(attr)
    return out


def _imports_name(root, name: str, b: _Bytes) -> bool:
    for n in _walk(root, prune=lambda x: x.type not in ("module", "import_from_statement", "dotted_name",
                                                         "aliased_import")):
        if n.type == "import_from_statement":
            for c in n.children_by_field_name("name"):
                target = c.child_by_field_name("name") if c.type == "aliased_import" else c
                if target is not None and b.node_text(target) == name:
                    return True
    return False


def _rename_sites_python(parsed: list[_Parsed], home: _Parsed, node, old: str) -> tuple[list, str]:
    """(list of (parsed doc, identifier node), role) for renaming ``old`` at edited ``node``."""
    b = home.b
    parent = node.parent
    role = "variable"
    scope = None
    if parent is not None and (parent.type in ("parameters", "lambda_parameters")
                               or (parent.type in PY_PARAM_WRAPPERS and parent.parent is not None
                                   and parent.parent.type in ("parameters", "lambda_parameters"))):
        params = parent if parent.type in ("parameters", "lambda_parameters") else parent.parent
        role, scope = "parameter", params.parent
    elif parent is not None and parent.type == "function_definition" and _field_is(parent, "name", node):
        if _in_class_body(parent):
            role = "method"
        else:
            role, scope = "function", _enclosing(parent, PY_FUNCTION_SCOPES)
    elif parent is not None and parent.type == "class_definition" and _field_is(parent, "name", node):
        role, scope = "class", _enclosing(parent, PY_FUNCTION_SCOPES)
    elif parent is not None and parent.type == "attribute" and _field_is(parent, "attribute", node):
        role = "attribute"
    elif parent is not None and parent.type == "keyword_argument" and _field_is(parent, "name", node):
        return [], "keyword"
    else:
        scope = _enclosing(node, PY_FUNCTION_SCOPES + PY_COMPREHENSIONS)
        if _binding_position(node):
            role = "local" if scope is not None else "global"
        else:  # a use: the innermost enclosing scope that still binds the old name, else module
            while scope is not None and not _scope_binds(scope, old, b):
                scope = _enclosing(scope, PY_FUNCTION_SCOPES + PY_COMPREHENSIONS)
            role = "local" if scope is not None else "global"
    sites: list = []
    if role in ("method", "attribute"):
        for p in parsed:
            if p.doc.grammar == home.doc.grammar:
                sites.extend((p, n) for n in _attribute_occurrences(p.tree.root_node, old, p.b))
        return sites, role
    if scope is not None:
        return [(home, n) for n in _variable_occurrences(scope, old, b)], role
    sites = [(home, n) for n in _variable_occurrences(home.tree.root_node, old, b)]
    for p in parsed:  # module-level names: also documents that import them
        if p is not home and p.doc.grammar == home.doc.grammar and _imports_name(p.tree.root_node, old, p.b):
            sites.extend((p, n) for n in _variable_occurrences(p.tree.root_node, old, p.b))
    return sites, "module-level " + role


def _rename_sites_generic(parsed: list[_Parsed], home: _Parsed, node, old: str) -> tuple[list, str]:
    """Other grammars: same identifier type; inside the enclosing function when the edited name is
    declared there (a parameter/declaration ancestor), else the document (and, for members, the
    other documents of the grammar)."""
    kind = node.type
    func = node.parent
    declared = False
    while func is not None and not (("function" in func.type or "method" in func.type) and "call" not in func.type):
        if any(w in func.type for w in ("parameter", "declarat", "declarator")):
            declared = True
        func = func.parent
    if kind in ("field_identifier", "property_identifier"):
        docs = [p for p in parsed if p.doc.grammar == home.doc.grammar]
        return [(p, n) for p in docs for n in _walk(p.tree.root_node)
                if n.type == kind and p.b.node_text(n) == old], "member"
    scope = func if declared and func is not None else home.tree.root_node
    return [(home, n) for n in _walk(scope) if n.type == kind and home.b.node_text(n) == old], \
        ("local" if scope is func else "document")


# ---------------------------------------------------------------------------- signatures
@dataclass(frozen=True)
class _Sig:
    name: str
    cls: str
    params: tuple[tuple[str, bool], ...]  # (name, has default)
    splat: bool

    @property
    def required(self) -> int:
        return sum(1 for _, d in self.params if not d)

    def accepts(self, positional: int, keywords: Sequence[str]) -> bool:
        names = [n for n, _ in self.params]
        if positional > len(names) or any(k not in names[positional:] for k in keywords):
            return False
        bound = set(names[:positional]) | set(keywords)
        return all(n in bound for n, d in self.params if not d)


def _signatures(tree, b: _Bytes) -> dict[tuple[str, str], _Sig]:
    out: dict[tuple[str, str], _Sig] = {}
    for n in _walk(tree.root_node):
        if n.type != "function_definition":
            continue
        name_node, params = n.child_by_field_name("name"), n.child_by_field_name("parameters")
        if name_node is None or params is None:
            continue
        plist = _param_nodes(params)
        cls = ""
        if _in_class_body(n):
            klass = _enclosing(n, ("class_definition",))
            cname = klass.child_by_field_name("name") if klass is not None else None
            cls = b.node_text(cname) if cname is not None else "?"
            decorators = n.parent.named_children if n.parent is not None and n.parent.type == "decorated_definition" else []
            if not any("staticmethod" in b.node_text(d) for d in decorators) and plist:
                plist = plist[1:]  # self / cls
        key = (cls, b.node_text(name_node))
        if key in out:  # redefined: ambiguous
            out[key] = _Sig(key[1], cls, (), True)
            continue
        out[key] = _Sig(key[1], cls, tuple((b.node_text(p), d) for p, d, _ in plist),
                        any(s for _, _, s in plist))
    return out


def _call_args(call, b: _Bytes) -> tuple[Any, list, list[str]] | None:
    """(argument_list node, positional arg nodes, keyword names), None when unanalysable."""
    args = call.child_by_field_name("arguments")
    if args is None or args.type != "argument_list":
        return None
    positional, keywords = [], []
    for a in args.named_children:
        if a.type == "comment":
            continue
        if a.type in ("list_splat", "dictionary_splat", "parenthesized_list_splat"):
            return None
        if a.type == "keyword_argument":
            k = a.child_by_field_name("name")
            keywords.append(b.node_text(k) if k is not None else "")
        else:
            positional.append(a)
    return args, positional, keywords


def _calls_to(root, sig: _Sig, b: _Bytes) -> list:
    out = []
    for n in _walk(root):
        if n.type != "call":
            continue
        fn = n.child_by_field_name("function")
        if fn is None:
            continue
        if fn.type == "identifier" and not sig.cls and b.node_text(fn) == sig.name:
            out.append(n)
        elif fn.type == "attribute":
            attr = fn.child_by_field_name("attribute")
            if attr is not None and b.node_text(attr) == sig.name:
                out.append(n)
    return out


def _inserted_index(old: _Sig, new: _Sig) -> int:
    a, c = [n for n, _ in old.params], [n for n, _ in new.params]
    i = 0
    while i < min(len(a), len(c)) and a[i] == c[i]:
        i += 1
    return i


def _signature_candidates(parsed: list[_Parsed], home: _Parsed, before_text: str,
                          grammars: Grammars) -> list[Candidate]:
    parser = grammars.parser(home.doc.grammar)
    if parser is None or home.doc.grammar != "python":
        return []
    bb = _Bytes(before_text)
    old_sigs = _signatures(parser.parse(bb.data), bb)
    new_sigs = _signatures(home.tree, home.b)
    p0, _, pe = diff_region(before_text, home.doc.text)
    cands: list[Candidate] = []
    for key, new in new_sigs.items():
        old = old_sigs.get(key)
        if old is None or old.splat or new.splat or len(old.params) == len(new.params):
            continue
        idx = _inserted_index(old, new)
        added = len(new.params) > len(old.params)
        calls = [(p, c) for p in parsed if p.doc.grammar == home.doc.grammar
                 for c in _calls_to(p.tree.root_node, new, p.b)]
        example: str | None = None
        targets = []
        for p, call in calls:
            got = _call_args(call, p.b)
            if got is None:
                continue
            args, positional, keywords = got
            ok_new, ok_old = new.accepts(len(positional), keywords), old.accepts(len(positional), keywords)
            in_edit = p is home and p.b.char(call.start_byte) <= pe and p.b.char(call.end_byte) >= p0
            if ok_new and not ok_old and in_edit and example is None and added and len(positional) > idx:
                example = p.b.node_text(positional[idx])
            elif ok_old and not ok_new:
                targets.append((p, args, positional, keywords))
        for p, args, positional, keywords in targets:
            s, e = p.b.char(args.start_byte) + 1, p.b.char(args.end_byte) - 1
            inner = p.doc.text[s:e]
            expected = None
            if not keywords:
                rel = [(p.b.char(a.start_byte) - s, p.b.char(a.end_byte) - s) for a in positional]
                if added and example is not None:
                    if idx >= len(rel):
                        expected = (inner[: rel[-1][1]] + ", " + example + inner[rel[-1][1]:]) if rel else example
                    else:
                        expected = inner[: rel[idx][0]] + example + ", " + inner[rel[idx][0]:]
                elif not added and idx < len(rel):
                    a0, a1 = rel[idx]
                    nxt = rel[idx + 1][0] if idx + 1 < len(rel) else None
                    if nxt is not None:
                        expected = inner[:a0] + inner[nxt:]
                    else:
                        prev = rel[idx - 1][1] if idx > 0 else 0
                        expected = inner[:prev] + inner[a1:]
            label = f"{new.cls}.{new.name}" if new.cls else new.name
            cands.append(Candidate(
                p.doc.uri, s, e, inner, "signature", expected,
                f"call of {label}() passes {len(positional) + len(keywords)} argument(s); "
                f"its signature now has {len(new.params)} parameter(s)",
                arg_count=len(positional) + len(keywords) + (1 if added else -1)))
    return cands


# ---------------------------------------------------------------------------- candidates
def _parse_all(docs: Sequence[DocState], grammars: Grammars) -> list[_Parsed]:
    out = []
    for d in docs:
        if d.grammar is None:
            continue
        parser = grammars.parser(d.grammar)
        if parser is None:
            continue
        b = _Bytes(d.text)
        out.append(_Parsed(d, parser.parse(b.data), b, LineIndex(d.text)))
    return out


def _rename_candidates(parsed: list[_Parsed], home: _Parsed) -> list[Candidate]:
    text = home.doc.text
    for before in home.doc.history:
        change = identifier_change(before, text)
        if change is None:
            continue
        start, old, new = change
        bs = home.b.byte(start)
        node = home.tree.root_node.descendant_for_byte_range(bs, bs + len(new.encode("utf-8")))
        if node is None or home.b.node_text(node) != new:
            continue
        if home.doc.grammar == "python":
            sites, role = _rename_sites_python(parsed, home, node, old)
        else:
            sites, role = _rename_sites_generic(parsed, home, node, old)
        out = []
        for p, n in sites:
            s, e = p.b.char(n.start_byte), p.b.char(n.end_byte)
            where = "" if p is home else " (another document)"
            out.append(Candidate(p.doc.uri, s, e, old, "rename", new,
                                 f"{role} '{old}' was renamed to '{new}'{where}"))
        return out
    return []


def find_candidates(query: NextEditQuery, grammars: Grammars) -> tuple[list[Candidate], list[_Parsed]]:
    parsed = _parse_all(query.docs, grammars)
    by_uri = {p.doc.uri: p for p in parsed}
    edited = sorted((p for p in parsed if p.doc.history), key=lambda p: -p.doc.edited_at)
    edited = edited[: query.options.max_documents]
    cands: list[Candidate] = []
    for home in edited:
        cands.extend(_rename_candidates(parsed, home))
        cands.extend(_signature_candidates(parsed, home, home.doc.history[-1], grammars))
    seen: set[tuple[str, int, int]] = set()
    unique = []
    for c in cands:
        key = (c.uri, c.start, c.end)
        if key not in seen and c.uri in by_uri:
            seen.add(key)
            unique.append(c)
    return unique, parsed


# ---------------------------------------------------------------------------- model
@dataclass
class _Window:
    text: str
    spans: list[tuple[int, int]]
    cands: list[Candidate]


def _anchor_text(doc: DocState, lines: LineIndex) -> tuple[int, int] | None:
    """Line range (offsets) of the newest edit in ``doc``."""
    if not doc.history:
        return None
    p, _, e = diff_region(doc.history[0], doc.text)
    return lines.line_start(p), lines.line_end(max(p, e))


def _windows(model: EditModel, doc: _Parsed, cands: list[Candidate], anchor: tuple[str, str] | None,
             opts: NextEditOptions) -> list[_Window]:
    """Group candidates of one document into windows that fit the model's context; each shows
    the user's edit (its lines are put first when they are not inside the window)."""
    text = doc.doc.text
    sample = text[:4000] or " "
    cpt = max(1.0, len(sample) / max(1, model.count_tokens(sample)))
    budget = int(model.context_tokens * opts.window_fill * cpt)
    anchor_range = None
    header_src = ""
    if anchor is not None:
        if anchor[0] == doc.doc.uri:
            anchor_range = _anchor_text(doc.doc, doc.lines)
            if anchor_range is not None:
                header_src = text[anchor_range[0]:anchor_range[1]]
        else:
            header_src = anchor[1]
    header_src = header_src[: budget // 4]
    groups: list[list[Candidate]] = []
    for c in sorted(cands, key=lambda c: c.start):
        if groups and c.end - groups[-1][0].start <= budget // 2:
            groups[-1].append(c)
        else:
            groups.append([c])
    out = []
    for g in groups:
        g0, g1 = g[0].start, g[-1].end
        lo, hi = g0, g1
        if anchor_range is not None and max(g1, anchor_range[1]) - min(g0, anchor_range[0]) <= budget * 3 // 4:
            lo, hi = min(lo, anchor_range[0]), max(hi, anchor_range[1])
        rem = max(0, budget - (hi - lo))
        lo = doc.lines.line_start(max(0, lo - rem * 3 // 5))
        hi = doc.lines.line_end(min(len(text), hi + rem * 2 // 5))
        header = ""
        if header_src and not (anchor_range is not None and lo <= anchor_range[0] and anchor_range[1] <= hi):
            header = header_src + "\n"
        shift = len(header) - lo
        out.append(_Window(header + text[lo:hi], [(c.start + shift, c.end + shift) for c in g], g))
    return out


def _refill_window(model: EditModel, w: _Window, opts: NextEditOptions, cancel) -> list[tuple[str, float]]:
    budgets = [model.count_tokens(c.expected if c.expected is not None else c.old_text) + opts.refill_slack_tokens
               for c in w.cands]
    budgets = [max(1, min(b, 64)) for b in budgets]
    try:
        return model.refill(w.text, w.spans, budgets, max(budgets) + 1, cancel)
    except EngineCancelled:
        raise
    except Exception as exc:  # the spans do not fit together: refill halves
        if len(w.cands) == 1 or type(exc).__name__ not in ("InvalidRequestError", "EngineError"):
            raise
        half = len(w.cands) // 2
        a = _Window(w.text, w.spans[:half], w.cands[:half])
        b = _Window(w.text, w.spans[half:], w.cands[half:])
        return _refill_window(model, a, opts, cancel) + _refill_window(model, b, opts, cancel)


def _arg_count(text: str, grammars: Grammars) -> int | None:
    parser = grammars.parser("python")
    if parser is None:
        return None
    src = ("f(" + text + ")").encode("utf-8")
    tree = parser.parse(src)
    if tree.root_node.has_error:
        return None
    for n in _walk(tree.root_node):
        if n.type == "argument_list":
            return sum(1 for a in n.named_children if a.type != "comment")
    return None


def _decide(c: Candidate, model_text: str, model_conf: float, opts: NextEditOptions,
            grammars: Grammars) -> tuple[str, EditSource, float] | None:
    """(new text, source, confidence before scoring); confidence < 0: score ``expected``."""
    if c.kind == "rename":
        if model_text.strip() == c.expected:
            return c.expected, "model", model_conf
        return c.expected, "scored", -1.0
    if c.kind == "signature":
        if c.expected is not None and model_text.strip() == c.expected.strip():
            return c.expected, "model", model_conf
        if (model_conf >= opts.model_min_confidence and model_text.strip()
                and _arg_count(model_text, grammars) == c.arg_count):
            return model_text, "model", model_conf
        if c.expected is not None:
            return c.expected, "scored", -1.0
        return None
    if model_conf >= opts.drop_min_confidence and model_text.strip() and model_text != c.old_text:
        return model_text, "model", model_conf
    return None


def _predict_with_model(model: EditModel, query: NextEditQuery, cands: list[Candidate],
                        parsed: list[_Parsed], grammars: Grammars, cancel) -> list[Prediction]:
    opts = query.options
    by_uri = {p.doc.uri: p for p in parsed}
    edited = sorted((p for p in parsed if p.doc.history), key=lambda p: -p.doc.edited_at)
    anchor = None
    if edited:
        d = edited[0]
        rng = _anchor_text(d.doc, d.lines)
        if rng is not None:
            anchor = (d.doc.uri, d.doc.text[rng[0]:rng[1]])
    preds: list[Prediction] = []
    for uri in dict.fromkeys(c.uri for c in cands):
        doc = by_uri[uri]
        for w in _windows(model, doc, [c for c in cands if c.uri == uri], anchor, opts):
            _check(cancel)
            fills = _refill_window(model, w, opts, cancel)
            decided = []
            to_score = []
            for i, (c, (text, conf)) in enumerate(zip(w.cands, fills, strict=True)):
                d = _decide(c, text, conf, opts, grammars)
                if d is None:
                    continue
                decided.append((i, c, d, text))
                if d[2] < 0:
                    s, e = w.spans[i]
                    to_score.append((s, e, d[0]))
            scores = model.score(w.text, to_score, cancel) if to_score else []
            it = iter(scores)
            for _, c, (new_text, source, conf), text in decided:
                if conf < 0:
                    conf = next(it)
                    shown = "".join(ch for ch in text.strip() if ch.isprintable() and ch != "\ufffd")[:REASON_TEXT_CHARS]
                    reason = f"{c.reason}; the model's refill was {shown!r}, the user's text scored"
                else:
                    reason = f"{c.reason}; refilled by the model"
                preds.append(Prediction(c.uri, c.start, c.end, new_text, min(1.0, max(0.0, conf)), reason,
                                        c.kind, source, c.old_text, text))
    return preds


def _drop_candidates(model: EditModel, query: NextEditQuery, parsed: list[_Parsed], cancel) -> list[Candidate]:
    """Model-only: identifiers near the newest edit whose likelihood dropped because of it."""
    opts = query.options
    edited = sorted((p for p in parsed if p.doc.history), key=lambda p: -p.doc.edited_at)
    docs = edited or [p for p in parsed if p.doc.uri == query.cursor_uri]
    if not docs or not docs[0].doc.history:
        return []
    doc = docs[0].doc
    before, after = doc.history[0], doc.text
    p, eb, ea = diff_region(before, after)
    lo_b, hi_b = max(0, p - opts.drop_window_chars), min(len(before), eb + opts.drop_window_chars)
    lo_a, hi_a = lo_b, min(len(after), ea + opts.drop_window_chars)
    old = model.token_probs(before[lo_b:hi_b], opts.score_stride, cancel)
    _check(cancel)
    new = model.token_probs(after[lo_a:hi_a], opts.score_stride, cancel)
    delta = ea - eb
    old_at = {}
    for s, e, pr in old:
        s, e = s + lo_b, e + lo_b
        if e <= p:
            old_at[(s, e)] = pr
        elif s >= eb:
            old_at[(s + delta, e + delta)] = pr
    drops = []
    for s, e, pr in new:
        s, e = s + lo_a, e + lo_a
        if p <= e and s <= ea:  # the edit itself
            continue
        prev = old_at.get((s, e))
        if prev is None or pr >= opts.drop_max_probability or pr >= opts.drop_ratio * prev:
            continue
        drops.append((pr / max(prev, 1e-9), s, e))
    cands: list[Candidate] = []
    taken: list[tuple[int, int]] = []
    for ratio, s, e in sorted(drops):
        while s > 0 and _ident_char(after[s - 1]) and _ident_char(after[s]):
            s -= 1
        while e < len(after) and _ident_char(after[e]) and e > 0 and _ident_char(after[e - 1]):
            e += 1
        word = after[s:e]
        if not word.strip() or any(s < b and a < e for a, b in taken):
            continue
        taken.append((s, e))
        cands.append(Candidate(doc.uri, s, e, word, "model", None,
                               f"'{word.strip()}' became unlikely after the edit "
                               f"(likelihood x{ratio:.2g})"))
        if len(cands) >= opts.drop_max_candidates:
            break
    return cands


# ---------------------------------------------------------------------------- checks / output
def _keep_parsing(preds: list[Prediction], parsed: list[_Parsed], grammars: Grammars) -> list[Prediction]:
    """Drop edits that add parse errors (all of a document's edits at once; one by one if needed)."""
    by_uri = {p.doc.uri: p for p in parsed}
    out = []
    for uri in dict.fromkeys(p.uri for p in preds):
        doc = by_uri.get(uri)
        mine = [p for p in preds if p.uri == uri]
        if doc is None:
            out.extend(mine)
            continue
        parser = grammars.parser(doc.doc.grammar)
        base = count_errors(doc.tree.root_node, 0, len(doc.b.data), limit=1 << 20)

        def errors(edits: list[Prediction], doc: _Parsed = doc, parser=parser) -> int:
            text = apply_edits(doc.doc.text, [(p.start, p.end, p.new_text) for p in edits])
            data = text.encode("utf-8")
            return count_errors(parser.parse(data).root_node, 0, len(data), limit=1 << 20)

        if errors(mine) <= base:
            out.extend(mine)
        else:
            out.extend(p for p in mine if errors([p]) <= base)
    return out


def apply_edits(text: str, edits: Iterable[tuple[int, int, str]]) -> str:
    """Apply non-overlapping (start, end, new) replacements (code-point offsets)."""
    out, pos = [], 0
    for s, e, new in sorted(edits, key=lambda x: (x[0], x[1])):
        if s < pos:
            raise ValueError("overlapping edits")
        out.append(text[pos:s])
        out.append(new)
        pos = e
    out.append(text[pos:])
    return "".join(out)


def predict(query: NextEditQuery, model: EditModel | None, grammars: Grammars, cancel=None) -> Outcome:
    """Candidates (syntax), refill and scores (model), checks and ranking. ``model=None`` (and
    locations beyond ``max_model_candidates``): the syntax-tied text, source "syntax",
    confidence 0."""
    t0 = time.perf_counter()
    cands, parsed = find_candidates(query, grammars)
    opts = query.options
    cands.sort(key=lambda c: (c.uri != query.cursor_uri, abs(c.start - query.cursor)))
    cands = cands[: opts.max_candidates]
    t1 = time.perf_counter()
    _check(cancel)
    checked, rest = cands[: opts.max_model_candidates], cands[opts.max_model_candidates:]
    if model is None:
        checked, rest = [], cands
    elif not cands:
        checked = _drop_candidates(model, query, parsed, cancel)
    preds = _predict_with_model(model, query, checked, parsed, grammars, cancel) if checked else []
    preds += [Prediction(c.uri, c.start, c.end, c.expected, 0.0,
                         f"{c.reason}; not checked by the model (beyond the {opts.max_model_candidates} "
                         f"nearest locations)" if model is not None else c.reason,
                         c.kind, "syntax", c.old_text)
              for c in rest if c.expected is not None]
    preds = [p for p in preds if p.new_text != p.old_text]
    preds = _keep_parsing(preds, parsed, grammars)
    cursor_doc = query.cursor_uri
    preds.sort(key=lambda p: (-round(p.confidence, 6), p.uri != cursor_doc, abs(p.start - query.cursor)))
    t2 = time.perf_counter()
    return Outcome(preds, cands, NextEditTimings(candidates_ms=round((t1 - t0) * 1000, 2),
                                                 model_ms=round((t2 - t1) * 1000, 2),
                                                 total_ms=round((t2 - t0) * 1000, 2)))


def to_result(outcome: Outcome, query: NextEditQuery, model_name: str) -> NextEditResult:
    docs = {d.uri: d for d in query.docs}
    lines: dict[str, LineIndex] = {}
    edits = []
    for p in outcome.predictions:
        d = docs[p.uri]
        li = lines.setdefault(p.uri, LineIndex(d.text))
        rng = TextRange(li.position(p.start, query.encoding), li.position(p.end, query.encoding))
        edits.append(PredictedEdit(uri=p.uri, range=rng, new_text=p.new_text,
                                   confidence=round(p.confidence, 6), reason=p.reason, kind=p.kind,
                                   source=p.source, old_text=p.old_text, document_version=d.version))
    return NextEditResult(edits=edits, model=model_name, version=__version__,
                          position_encoding=query.encoding.value, timings=outcome.timings)
