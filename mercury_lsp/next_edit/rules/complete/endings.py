"""Endings for a half-typed line: how the lines that start like it go on (``complete`` uses them).

Two kinds of lines lend their ending, the first kind first:

* **the same start** — a line of the document, or of its text before the recent edits, that
  starts with the typed text (``err = cmd.execute`` typed where ``err = cmd.execute(flags)`` was
  just removed; ``request:`` among ``request: Request;`` members);
* **the same shape** — a sibling line (same indentation, within ``SHAPE_WINDOW_LINES`` of the
  cursor) whose tokens start like the typed ones with at most ``MAX_ABSTRACTED`` identifiers or
  literals in other places, consistently (``this._execs`` among ``this._args = [];`` lines
  gives `` = [];``; ``const FormData = getGlobal`` under ``const Headers = getGlobal('Headers');``
  gives ``('FormData');``: the ending's words are renamed the same way, in strings too, and an
  ending naming something else of the sibling's own is no ending for a renamed line;
  ``name='x',`` gives ',' to ``version=version``; a string typed half, ``name: 'TimeoutError``,
  is matched as if closed, and its quote leads the ending: ``',`` among ``message: '...',``).
  The grammar's keywords (its anonymous node types) never stand for one another: ``return x`` is
  not ``const x``.

Before both, **the parameter it is named after**: ``self.environment`` (or ``this.name``) typed
alone in a function taking a parameter of that name that no ``self.environment =`` of the
function assigns yet gives `` = environment`` (`` = name;`` where the line above ends with ';'):
a constructor storing what it is given (``parameter_ending``).

Within each kind: endings that end like the line above first (';' among members ending ';', ','
among arguments), then the most frequent, then the nearest.
"""

from __future__ import annotations

import re

from mercury_lsp.next_edit.scopes import scope_of
from mercury_lsp.next_edit.text import QUOTED
from mercury_lsp.next_edit.tree import ParsedDoc

MIN_LINE_PREFIX_CHARS = 6  # a typed line shorter than this ('x = ', 'if (') starts too many lines
MIN_SHAPE_TOKENS = 3  # 'this . _execs': fewer tokens ('x', 'x =') have the shape of anything
MAX_ABSTRACTED = 2  # identifiers that may differ between the typed line and a sibling (a name, its value)
LONE_STRING_TOKENS = 2  # a sibling of a string typed alone on its line: a string and its terminator
MIN_SHARED_TOKENS = 1  # tokens the typed line and a sibling must share as written ('.', ':', 'const')
# Siblings are looked for this many lines either way of the cursor: a block of members or
# statements; farther lines of the same indentation belong to other blocks.
SHAPE_WINDOW_LINES = 40
TOKEN = re.compile(r"[A-Za-z_$][\w$]*|\d[\w.]*|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|`[^`\n]*`|\S")
WORD = re.compile(r"^[A-Za-z_$][\w$]*$")
FREE_NAME = re.compile(r"(?<![\w$.])[A-Za-z_$][\w$]*")  # a name not after a '.' (no member)
# A line whose last string is left open: closed strings and other text, then a quote and no other
# (backquoted strings, Go's raw strings and JavaScript's templates, span lines as they are).
OPEN_STRING = re.compile(r"""(?:[^'"`\\\n]|\\.|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`[^`\n]*`)*(['"])(?:[^'"\\\n]|\\.)*\Z""")
LITERAL_STARTS = "0123456789\"'`"  # the first character of a number or a string token
COMMENT_CHARS = "#/-"  # the first character of a comment in the project's grammars: checked with the tree


def _code(home: ParsedDoc, at: int, body: str, tokens: list[tuple[str, int]], start: int) -> str:
    """``body`` (a line's text from offset ``at`` of the document) from token ``start`` on, up to a
    trailing comment (a token that starts a comment node of the tree); tokens: (text, end in body)."""
    lo = tokens[start - 1][1]
    for tok, end in tokens[start:]:
        if tok[0] in COMMENT_CHARS:
            b = home.b.byte(at + end - len(tok))
            node = home.tree.root_node.descendant_for_byte_range(b, b + 1)
            if node is not None and node.type.endswith("comment"):
                return body[lo:end - len(tok)].rstrip()
    return body[lo:].rstrip()


# ``self.name`` / ``this.name`` typed alone, maybe with its `` = `` (``parameter_ending``).
MEMBER_ALONE = re.compile(r"[ \t]*(?:self|this)\.([A-Za-z_$][\w$]*)[ \t]*(=[ \t]*)?")


def parameter_ending(home: ParsedDoc, parameters: list, line: tuple[int, int], cursor: int) -> str | None:
    """`` = name`` for ``self.name`` typed alone in a function taking ``name`` that does not store
    it yet (module docstring); ``parameters``: the document's parameter nodes (``symbols``)."""
    text = home.doc.text
    m = MEMBER_ALONE.fullmatch(text, line[0], cursor)
    scope = scope_of(home, line[0]) if m is not None and not text[cursor:line[1]].strip() else None
    if scope is None:
        return None
    name = m.group(1)
    if not any(home.b.node_text(n) == name and scope[0] <= home.b.char(n.start_byte) < line[0] for n in parameters):
        return None
    stored = re.compile(rf"(?:self|this)\.{re.escape(name)}[ \t]*=(?!=)")
    if stored.search(text[scope[0]:line[0]] + text[line[1]:scope[1]]):
        return None
    semicolon = ";" if text[:line[0]].rstrip().endswith(";") else ""
    return ("" if m.group(2) else " = ") + name + semicolon


def _rank(found: dict[str, list[int]], above: str) -> list[str]:
    return sorted(found, key=lambda e: (e[-1:] != above, -len(found[e]), min(found[e])))


def same_start(home: ParsedDoc, line: tuple[int, int], cursor: int, strict: bool = False) -> list[str]:
    """Endings of the lines that start with the typed text (the document's, and its text before
    the recent edits); ``strict`` (a line that parses): none when a line of the document is
    the typed text alone (it is a whole line as it stands)."""
    text = home.doc.text
    typed = text[line[0]:cursor].strip()
    if len(typed) < MIN_LINE_PREFIX_CHARS:
        return []
    found: dict[str, list[int]] = {}
    for source in (text[:line[0]] + text[line[1]:], *home.doc.history[-1:]):
        pos = 0
        for raw in source.split("\n"):
            stripped = raw.strip()
            if strict and stripped == typed and source is not home.doc.history[-1]:
                return []
            if stripped.startswith(typed) and len(stripped) > len(typed):
                found.setdefault(stripped[len(typed):], []).append(abs(pos - line[0]))
            pos += len(raw) + 1
    return _rank(found, text[:line[0]].rstrip()[-1:])


def _is_keyword(language, word: str) -> bool:
    return language is not None and language.id_for_node_kind(word, False) is not None


def _slot(token: str, language) -> str | None:
    """The class of a token that may stand for another ("name": an identifier that is no keyword;
    "literal": a number or a string); None for any other token."""
    if WORD.match(token):
        return None if _is_keyword(language, token) else "name"
    return "literal" if token[0] in LITERAL_STARTS else None


def _matched(typed: list[str], tokens: list[str], language, strict: bool) -> dict[str, str] | None:
    """The sibling's identifiers and literals -> the typed line's that differ, when the sibling's
    tokens start like the typed ones up to that renaming (each sibling token always renamed the
    same way; ``strict``: one-to-one, a name only for a name, a literal for a literal); None otherwise."""
    if len(tokens) < len(typed):
        return None
    pairs: dict[str, str] = {}
    shared = 0
    for t, s in zip(typed, tokens, strict=False):
        if t == s:
            shared += 1
        else:
            ct, cs = _slot(t, language), _slot(s, language)
            if ct is None or cs is None or (strict and ct != cs):
                return None
        if pairs.setdefault(s, t) != t:
            return None
    rename = {s: t for s, t in pairs.items() if s != t}
    if shared < MIN_SHARED_TOKENS or len(rename) > MAX_ABSTRACTED:
        return None
    if strict and len(set(pairs.values())) != len(pairs):  # one typed name for two of the sibling's
        return None
    return rename


def same_shape(home: ParsedDoc, line: tuple[int, int], cursor: int, language, strict: bool = False) -> list[str]:
    """Endings of the sibling lines whose tokens start like the typed ones, up to a renaming of
    identifiers and literals (renamed the same way in the ending; ``strict``, for a line that
    parses: of the same class, a string never stands for a callee; and none at all when a like
    line ends where the typed one does)."""
    text = home.doc.text
    start = line[0]
    indent = text[start:cursor][: len(text[start:cursor]) - len(text[start:cursor].lstrip())]
    quote = open_quote(text[start:cursor])  # a string typed half: matched as if closed
    typed = TOKEN.findall(text[start:cursor] + (quote or ""))
    lone = quote is not None and len(typed) == 1  # an item of a list of strings ('"notfound.extension')
    if len(typed) < MIN_SHAPE_TOKENS and not lone:
        return []
    lo, hi = start, line[1]
    for _ in range(SHAPE_WINDOW_LINES):
        lo = text.rfind("\n", 0, lo - 1) + 1 if lo > 0 else 0
        nxt = text.find("\n", hi + 1) if hi < len(text) else -1
        hi = len(text) if nxt < 0 else nxt
    found: dict[str, list[int]] = {}
    pos = lo
    for raw in text[lo:hi].split("\n"):
        here, pos = pos, pos + len(raw) + 1
        body = raw[len(indent):]
        if here == start or not raw.startswith(indent) or not body or body[0].isspace():
            continue
        tokens = [(m.group(), m.end()) for m in TOKEN.finditer(body)]
        if lone:  # among lines holding one string and what ends them
            rename = {} if len(tokens) <= LONE_STRING_TOKENS and tokens[0][0][0] == quote else None
        else:
            rename = _matched(typed, [t for t, _ in tokens], language, strict)
        if rename is None:
            continue
        ending = _code(home, here + len(indent), body, tokens, len(typed))
        if not ending and strict:  # a like line ends where the typed one does: it may be whole
            return []
        if not ending:
            continue
        if rename:
            words = "|".join(re.escape(w) for w in rename)
            ending = re.sub(rf"(?<![\w$])(?:{words})(?![\w$])", lambda m, r=rename: r[m.group()], ending)
            if _foreign(ending, rename, typed, language):
                continue
        found.setdefault((quote or "") + ending, []).append(abs(here - start))
    return _rank(found, text[:start].rstrip()[-1:])


def _foreign(ending: str, rename: dict[str, str], typed: list[str], language) -> bool:
    """The ending names a free name of the sibling's own that the renaming does not carry over:
    ``from functools import partial`` lends `` partial`` to nothing typed as ``from datetime
    import``. Punctuation (`` = [];``), literals, members (``.strip()``) and the renamed or typed
    names travel."""
    known = set(rename.values()) | set(typed)
    return any(m.group() not in known and not _is_keyword(language, m.group())
               for m in FREE_NAME.finditer(_without_strings(ending)))


def _without_strings(text: str) -> str:
    return QUOTED.sub('""', text)


def open_quote(typed: str) -> str | None:
    """The quote of a string literal ``typed`` leaves open at its end (``name: 'TimeoutError``),
    None when every string of it is closed."""
    m = OPEN_STRING.match(typed)
    return m.group(1) if m is not None else None
