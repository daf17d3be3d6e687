"""NE116 threaded-parameter: a parameter the user added to a function is passed on by the call in
its body that already passes the function's other parameters along.

**What.** A function of an edited document gained one parameter over the edit history (the
signatures before and after, ``steps.detect``), and its body does not use it yet. Among the calls
in its body, the one passing the most of the function's other parameters as bare arguments (at
least one; ``MAX_TIED_CALLS`` at most tie for it, else nothing is offered) gets the new parameter
too: before the parameter that follows it in the signature, or after the one before it, when the
call passes that one; else last of the call's positional arguments. A call whose arguments are
keywords naming themselves (``f(a=a, b=b)``) gets ``p=p`` after them. Only a call of code the open
documents define counts (``Ticket::new``, ``CodeGenerator``; never ``re.sub``, whose signature the
user did not change: a parameter added to ``strip_ansi(value)`` is not for ``_ansi_re.sub("",
value)``); the function's own recursive calls are NE102's.

**Why.** A parameter is added to reach something the function calls: ``generate(..., out_perm)``
is written to hand ``out_perm`` to ``CommandTicket::new(command)``, ``generate(node,
environment, filename)`` to give ``environment`` to ``CodeGenerator(is_child, filename)``. The call
that threads the function's other parameters through is where the new one goes.

**Example.** ``def render(node, filename)`` -> ``def render(node, env, filename)`` with ``gen =
Generator(node, filename)`` in its body: ``gen = Generator(node, env, filename)``.
"""

from __future__ import annotations

import re

from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import THREADED_PARAMETER
from mercury_lsp.next_edit.scopes import FUNCTION_SCOPES, word_in
from mercury_lsp.next_edit.steps.calls import KEYWORD_ARGUMENTS, call_arguments
from mercury_lsp.next_edit.steps.detect import Signature, functions
from mercury_lsp.next_edit.symbols import captures, parsed_before
from mercury_lsp.next_edit.tree import ParsedDoc, walk

MAX_TIED_CALLS = 1  # two calls passing as many of the parameters: no telling which one it is for
BODY_FIELDS = ("body", "value")  # a definition's body (an arrow function's expression body)
MAX_BODY_DEPTH = 3  # a variable or member holding the function (``const f = (a) => ...``): a few levels
IDENTIFIERS = ("identifier",)
CALLEE_PATH = re.compile(r"[\w$]+$")  # the callee's own name: ``new`` of ``Ticket::new``, ``sub`` of ``re.sub``


def _added(old: Signature, new: Signature) -> str | None:
    """The one parameter ``new`` has that ``old`` lacks, the others kept in order; else None."""
    a, b = [n for n, _ in old.params], [n for n, _ in new.params]
    extra = [n for n in b if n not in a]
    if old.splat or new.splat or len(b) != len(a) + 1 or len(extra) != 1 or [n for n in b if n != extra[0]] != a:
        return None
    return extra[0]


def _body(func):
    node = func
    for _ in range(MAX_BODY_DEPTH):
        body = next((c for f in BODY_FIELDS if (c := node.child_by_field_name(f)) is not None), None)
        if body is None:
            return None
        if body.type not in FUNCTION_SCOPES:
            return body
        node = body
    return None


def _calls(body, doc: ParsedDoc):
    """The calls in ``body`` outside nested functions: (call, argument list, positional, keywords)."""
    for node in walk(body, prune=lambda n: n.type in FUNCTION_SCOPES):
        if node.child_by_field_name("arguments") is None:
            continue
        got = call_arguments(node, doc.b)
        if got is not None:
            yield (node, *got)


def _insertion(doc: ParsedDoc, args, positional, keywords, names: list[str], added: str) -> tuple[int, str] | None:
    """(offset, text) putting ``added`` into the argument list ``args`` (module docstring)."""
    b = doc.b
    passed = [b.node_text(a) for a in positional]
    items = [a for a in args.named_children if a.type != "comment"]
    i = names.index(added)
    after, before = names[i + 1] if i + 1 < len(names) else None, names[i - 1] if i > 0 else None
    if keywords and all(a.type not in KEYWORD_ARGUMENTS or _self_named(a, b) for a in items) and not positional:
        return b.char(items[-1].end_byte), f", {added}={added}"
    if after in passed:
        return b.char(positional[passed.index(after)].start_byte), f"{added}, "
    if before in passed:
        return b.char(positional[passed.index(before)].end_byte), f", {added}"
    if keywords:
        return None  # positional arguments end before the keywords: no place is clear
    if not positional:
        return b.char(args.start_byte) + 1, added
    return b.char(positional[-1].end_byte), f", {added}"


def _self_named(arg, b) -> bool:
    name, value = arg.child_by_field_name("name"), arg.child_by_field_name("value")
    return name is not None and value is not None and b.node_text(name) == b.node_text(value)


def _passed(doc: ParsedDoc, positional, keywords_items, names: set[str]) -> int:
    bare = sum(1 for a in positional if a.type in IDENTIFIERS and doc.b.node_text(a) in names)
    return bare + sum(1 for a in keywords_items if _self_named(a, doc.b)
                      and doc.b.node_text(a.child_by_field_name("name")) in names)


def run(ctx: RuleContext) -> list[Prediction]:
    out: list[Prediction] = []
    defined: dict[str | None, set[str]] = {}
    for home in ctx.edited[: ctx.options.max_documents]:
        before = parsed_before(ctx.grammars, home.doc, home.doc.history[-1])
        if before is None:
            continue
        old_sigs = functions(before, ctx.grammars)
        for key, (new, func) in functions(home, ctx.grammars).items():
            old = old_sigs.get(key)
            added = _added(old[0], new) if old is not None else None
            body = _body(func) if added is not None else None
            if body is None or word_in(added, home.b.node_text(body)):
                continue
            names = [n for n, _ in new.params]
            others = set(names) - {added}
            ranked = []
            if home.doc.grammar not in defined:
                defined[home.doc.grammar] = {p.b.node_text(n) for p in ctx.parsed if p.doc.grammar == home.doc.grammar
                                             for n in captures(ctx.grammars, p)["definition"]}
            for call, args, positional, keywords in _calls(body, home):
                callee = call.child_by_field_name("function")
                name = CALLEE_PATH.search(home.b.node_text(callee)) if callee is not None else None
                if name is None or name.group() == new.name or name.group() not in defined[home.doc.grammar]:
                    continue  # a recursive call (NE102's), or one to code the user does not have open
                kw_items = [a for a in args.named_children if a.type in KEYWORD_ARGUMENTS]
                n = _passed(home, positional, kw_items, others)
                if n:
                    ranked.append((n, call, args, positional, keywords))
            if not ranked:
                continue
            best = max(r[0] for r in ranked)
            tied = [r for r in ranked if r[0] == best]
            if len(tied) > MAX_TIED_CALLS:
                continue
            _, call, args, positional, keywords = tied[0]
            put = _insertion(home, args, positional, keywords, names, added)
            if put is None:
                continue
            at, text = put
            out.append(Prediction(home.doc.uri, at, at, text, THREADED_PARAMETER.value,
                                  f"passes on the parameter {added} the user added to {new.name}",
                                  RULE.kind, "syntax", ""))
    return out


RULE = Rule("NE116", "threaded-parameter", "signature", THREADED_PARAMETER.value, run, __doc__)
