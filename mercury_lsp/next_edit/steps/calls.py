"""Signature changes followed to their calls (``signature_candidates``, steps 1-2 for them).

A function whose parameters differ between the text before the edit history and now
(``detect.signatures``, in every grammar with a query file) is looked for at its calls, found
through the query file's ``@call`` captures: ``x.f(...)``, ``pkg.F(...)`` and ``T::f(...)`` for
any function, a bare ``f(...)`` for a free function only (or ``g(...)`` where a document imports
it as ``g``: ``exports``), and not where ``f`` is a parameter of
the enclosing function or another document defines its own ``f``. The calls whose arguments
fitted the old signature and no longer fit the new one (or fit both, for a reordering) are the
locations; each call's argument list is rebuilt from the syntax where it can be, else left a
hole for the model (an added parameter no edited call shows a value for).

The arguments of the old call are bound to the old signature's parameters (positional ones in
order, keywords by name) and written out again in the new signature's order:

* **added** parameter — the value the user passed at the call they edited (the example), as a
  positional argument where the new parameter sits; without an example the call is a hole the
  model refills (``rebind`` answers None);
* **removed** parameter — its argument, positional or keyword, is dropped;
* **reordered** parameters — the positional arguments are permuted; an argument that can no
  longer be positional (a parameter before it is not passed) becomes ``name=value``;
* **renamed** parameters (names replaced in place by fresh ones) — ``old=`` keywords become
  ``new=``; positional arguments stay.

Keyword arguments exist in Python only (``KEYWORD_ARGUMENTS``); elsewhere every argument goes
by position.

The original spacing and line breaks are kept: a permutation replaces each argument in its own
slot, one argument added or dropped is spliced in or out with its separator; anything else is
written as ``a, b, c``.
"""

from __future__ import annotations

from typing import Any

from mercury_lsp.next_edit.exports import reach
from mercury_lsp.next_edit.query import Candidate
from mercury_lsp.next_edit.scopes import scope_of
from mercury_lsp.next_edit.steps.detect import Signature, inserted_index, signatures
from mercury_lsp.next_edit.symbols import captures, parsed_before
from mercury_lsp.next_edit.text import diff_region
from mercury_lsp.next_edit.tree import ParsedDoc
from mercury_lsp.syntax import Grammars
from mercury_lsp.text import TextIndex

# Calls (any grammar): argument list node types, arguments that spread a sequence (a call with
# one cannot be rebound), keyword arguments (Python's; elsewhere arguments go by position only).
ARGUMENT_LISTS = ("argument_list", "arguments")
SPREAD_ARGUMENTS = ("list_splat", "dictionary_splat", "parenthesized_list_splat", "spread_element",
                    "variadic_argument")
KEYWORD_ARGUMENTS = ("keyword_argument",)
MAX_CALLEE_DEPTH = 2  # a callee is the name or one access above it (``x.f``, ``pkg.F``, ``T::f``)
PATH_FIELD = "path"  # of a path callee: the type or module before ``::f`` (Rust)
SELF_TYPE = "Self"  # a path naming the enclosing impl's own type
LANGUAGE_OF = {"tsx": "typescript"}  # grammars of one language: their documents call each other


ArgSpan = tuple[int, int]  # an argument's span, relative to the argument list's inside


def renamed_parameters(old: Signature, new: Signature) -> dict[str, str]:
    """{old name: new name} when ``new`` renames parameters of ``old`` in place (same count, the
    new names all fresh); else empty."""
    a, c = [n for n, _ in old.params], [n for n, _ in new.params]
    if len(a) != len(c):
        return {}
    diff = {x: y for x, y in zip(a, c, strict=True) if x != y}
    return diff if diff and not set(diff.values()) & set(a) else {}


def is_reorder(old: Signature, new: Signature) -> bool:
    a, c = [n for n, _ in old.params], [n for n, _ in new.params]
    return a != c and sorted(a) == sorted(c)


def rebind(old: Signature, new: Signature, positional: list[str], keywords: list[tuple[str, str]],
           example: str | None, placeholders: bool = False) -> list[str] | None:
    """The new call's argument texts (``keywords``: (name, whole ``name=value`` text)); None when
    the call cannot be rewritten from the syntax alone (an added parameter with no example), or,
    with ``placeholders``, such a parameter's name standing for its argument."""
    old_names = [n for n, _ in old.params]
    if len(positional) > len(old_names):
        return None
    renames = renamed_parameters(old, new)
    by_position = {renames.get(n, n): v for n, v in zip(old_names, positional, strict=False)}
    keyword_names = {renames.get(k, k) for k, _ in keywords}
    out: list[str] = []
    named: list[str] = []  # arguments that can no longer be positional: after the keywords
    for name, has_default in new.params:
        value = by_position.get(name)
        added = name not in old_names and name not in renames.values()
        if value is None and added and not has_default and name not in keyword_names:
            if example is None and not placeholders:
                return None
            value = name if example is None else example
        if value is None:  # not passed here (a default, or a keyword): the rest go by name
            named.append("")
        elif named:
            named.append(f"{name}={value}")
        else:
            out.append(value)
    new_names = {n for n, _ in new.params}
    for k, text in keywords:
        if k in renames:
            out.append(renames[k] + text[text.index("="):])
        elif k in new_names:
            out.append(text)
    return out + [t for t in named if t]


def splice(inner: str, spans: list[ArgSpan], old: list[str], new: list[str]) -> str | None:
    """The argument list's inside with ``old`` arguments (at ``spans``) replaced by ``new``,
    keeping the original layout where it can (module docstring); None when nothing changes."""
    if new == old:
        return None
    if len(new) == len(old):
        out = inner
        for (s, e), text in sorted(zip(spans, new, strict=True), reverse=True):
            out = out[:s] + text + out[e:]
        return out
    if len(new) == len(old) - 1:
        i = next((k for k in range(len(new)) if new[k] != old[k]), len(new))
        if new[i:] == old[i + 1:]:
            if i + 1 < len(spans):
                return inner[:spans[i][0]] + inner[spans[i + 1][0]:]
            prev = spans[i - 1][1] if i > 0 else 0
            return inner[:prev] + inner[spans[i][1]:]
    if len(new) == len(old) + 1:
        i = next((k for k in range(len(old)) if new[k] != old[k]), len(old))
        if new[i + 1:] == old[i:]:
            if i < len(spans):
                return inner[:spans[i][0]] + new[i] + ", " + inner[spans[i][0]:]
            if spans:
                return inner[:spans[-1][1]] + ", " + new[i] + inner[spans[-1][1]:]
            return new[i]
    return ", ".join(new)


# ---------------------------------------------------------------------------- the calls
def call_arguments(call, b: TextIndex) -> tuple[Any, list, list[str]] | None:
    """(argument list node, positional argument nodes, keyword names), None when unanalysable
    (a spread argument)."""
    args = call.child_by_field_name("arguments")
    if args is None or args.type not in ARGUMENT_LISTS:
        return None
    positional, keywords = [], []
    for a in args.named_children:
        if a.type == "comment":
            continue
        if a.type in SPREAD_ARGUMENTS:
            return None
        if a.type in KEYWORD_ARGUMENTS:
            k = a.child_by_field_name("name")
            keywords.append(b.node_text(k) if k is not None else "")
        else:
            positional.append(a)
    return args, positional, keywords


def _call_of(name, b: TextIndex) -> tuple[Any, bool, str | None] | None:
    """(call, bare, type path) for a callee name the query file captured (``@call``): the call it
    names, whether the callee is the bare name (``f(...)``) rather than ``x.f`` / ``pkg.F`` /
    ``T::f``, and the type or module a path call names (``T`` of ``a::T::f``; else None)."""
    node = name.parent
    for _ in range(MAX_CALLEE_DEPTH):
        if node is None:
            return None
        if node.child_by_field_name("arguments") is not None:
            callee = node.child_by_field_name("function")
            bare = (callee.start_byte, callee.end_byte) == (name.start_byte, name.end_byte) if callee is not None \
                else node.child_by_field_name("object") is None  # Java: ``f(...)`` or ``x.f(...)``
            path = callee.child_by_field_name(PATH_FIELD) if callee is not None else None
            return node, bare, None if path is None else _type_name(b.node_text(path))
        node = node.parent
    return None


def _type_name(text: str) -> str:
    """``Job`` of ``crate::exec::Job``, ``Job<'a>``, ``*Job``."""
    return text.split("<")[0].split("::")[-1].lstrip("*&").strip()


def _calls_to(p: ParsedDoc, sig: Signature, grammars: Grammars, home: ParsedDoc,
              aliases: frozenset[str] = frozenset()) -> list:
    """Calls of ``sig`` in ``p``: ``x.f(...)`` / ``pkg.F(...)`` / ``T::f(...)`` for any function
    (``T`` being the method's own type, or ``Self``, when it is one), ``f(...)`` for a free one —
    or under a name ``p`` imports it by (``aliases``: ``import { f as g }``, ``from m import f as
    g``) — unless ``f`` there is another binding (a parameter of the enclosing function, or
    another document's own definition of a function ``f``)."""
    got = captures(grammars, p)
    out = []
    local_def = p is not home and any(p.b.node_text(n) == sig.name for n in got["definition"])
    owner = _type_name(sig.cls)
    for name in got["call"]:
        text = p.b.node_text(name)
        if text != sig.name and text not in aliases:
            continue
        found = _call_of(name, p.b)
        if found is None:
            continue
        call, bare, path = found
        if text != sig.name and not bare:
            continue  # an alias is a bare name; ``x.g(...)`` is another thing's
        if bare and (sig.cls or (local_def and text == sig.name) or _parameter_named(p, got, call, text)):
            continue
        if sig.cls and path is not None and path not in (owner, SELF_TYPE):  # ``Vec::new`` for ``Job::new``
            continue
        if sig.cls and _other_class(call, owner, p.b):
            continue
        out.append(call)
    return out


def _other_class(call, owner: str, b: TextIndex) -> bool:
    """The call names another class's method through the class (``UsageError.__init__(self, m)``
    is not a call of ``BadOptionUsage.__init__``): its receiver is a capitalised name, not the
    method's own class."""
    callee = call.child_by_field_name("function")
    receiver = callee.child_by_field_name("object") if callee is not None else None
    if receiver is None or receiver.type != "identifier":
        return False
    name = b.node_text(receiver)
    return name[:1].isupper() and name != owner


def _parameter_named(p: ParsedDoc, got: dict, node, name: str) -> bool:
    scope = scope_of(p, p.b.char(node.start_byte))
    if scope is None:
        return False
    lo, hi = p.b.byte(scope[0]), p.b.byte(scope[1])
    return any(lo <= n.start_byte < hi and p.b.node_text(n) == name for n in got["parameter"])


def _imported_as(parsed: list[ParsedDoc], home: ParsedDoc, sig: Signature, grammars: Grammars) -> dict[str, set[str]]:
    """The names the free function ``sig`` is imported by in each document (``exports``)."""
    if sig.cls:
        return {}
    node = next((n for n in captures(grammars, home)["definition"] if home.b.node_text(n) == sig.name), None)
    return {} if node is None else reach(parsed, home, node, sig.name, sig.name, grammars).bound


def same_language(a: str | None, b: str | None) -> bool:
    return a is not None and LANGUAGE_OF.get(a, a) == LANGUAGE_OF.get(b or "", b)


def signature_candidates(parsed: list[ParsedDoc], home: ParsedDoc, before_text: str,
                          grammars: Grammars) -> list[Candidate]:
    before = parsed_before(grammars, home.doc, before_text)
    if before is None:
        return []
    old_sigs = signatures(before, grammars)
    new_sigs = signatures(home, grammars)
    edited = {p.doc.uri: diff_region(p.doc.history[-1], p.doc.text) for p in parsed if p.doc.history}
    edited[home.doc.uri] = diff_region(before_text, home.doc.text)
    cands: list[Candidate] = []
    for key, new in new_sigs.items():
        old = old_sigs.get(key)
        if old is None or old.splat or new.splat or [n for n, _ in old.params] == [n for n, _ in new.params]:
            continue
        idx = inserted_index(old, new)
        added = len(new.params) > len(old.params)
        aliases = _imported_as(parsed, home, new, grammars)
        calls = [(p, c) for p in parsed if same_language(p.doc.grammar, home.doc.grammar)
                 for c in _calls_to(p, new, grammars, home, frozenset(aliases.get(p.doc.uri, ())) - {new.name})]
        example: str | None = None
        targets = []
        for p, call in calls:
            got = call_arguments(call, p.b)
            if got is None:
                continue
            args, positional, keywords = got
            ok_new, ok_old = new.accepts(len(positional), keywords), old.accepts(len(positional), keywords)
            region = edited.get(p.doc.uri)  # a call the user edited (in any document): the example
            in_edit = region is not None and p.b.char(call.start_byte) <= region[2] \
                and p.b.char(call.end_byte) >= region[0]
            if ok_new and not ok_old and in_edit and example is None and added and len(positional) > idx:
                example = p.b.node_text(positional[idx])
            elif ok_old and (not ok_new or not in_edit):  # fits both: rebinding decides (reordered, removed)
                targets.append((p, args, positional, keywords))
        for p, args, positional, keywords in targets:
            s, e = p.b.char(args.start_byte) + 1, p.b.char(args.end_byte) - 1
            inner = p.doc.text[s:e]
            items = [a for a in args.named_children if a.type != "comment"]
            texts = [p.b.node_text(a) for a in items]
            kw = [(k, p.b.node_text(a)) for k, a in zip(keywords, (a for a in items if a.type in KEYWORD_ARGUMENTS),
                                                        strict=True)]
            spans = [(p.b.char(a.start_byte) - s, p.b.char(a.end_byte) - s) for a in items]
            new_args = rebind(old, new, [p.b.node_text(a) for a in positional], kw, example)
            expected = None if new_args is None else splice(inner, spans, texts, new_args)
            if new_args is not None and expected is None:
                continue  # the call is right as it is
            placeholder = None
            if new_args is None:  # a hole: the model's to fill, else the parameter's name stands in
                named = rebind(old, new, [p.b.node_text(a) for a in positional], kw, None, placeholders=True)
                placeholder = None if named is None else splice(inner, spans, texts, named)
            label = f"{new.cls}.{new.name}" if new.cls else new.name
            cands.append(Candidate(
                p.doc.uri, s, e, inner, "signature", expected,
                f"call of {label}() passes {len(positional) + len(keywords)} argument(s); "
                f"its signature now has {len(new.params)} parameter(s)",
                arg_count=len(positional) + len(keywords) + len(new.params) - len(old.params),
                placeholder=placeholder))
    return cands
