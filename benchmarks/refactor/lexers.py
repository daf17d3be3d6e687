"""Comments and string literals of Python, Rust, Go, JavaScript and TypeScript source, found by a
lexer of their own (the standard library's ``tokenize`` for Python, a small state machine for the
others) — independent of the tree-sitter analysis the refactor benchmark measures.

``prose_spans`` gives the (start, end) code-point spans of comments and strings; ``code_only``
the text with them blanked (newlines kept, so offsets and lines stay); ``occurrences`` the
offsets of a name as a whole identifier in the code.
"""

from __future__ import annotations

import io
import re
import tokenize

LANGUAGES = ("python", "rust", "go", "javascript", "typescript")
RUST_CHAR = re.compile(r"'(?:[^'\\\n]|\\(?:[nrt0\\'\"]|x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]{1,6}\}))'")
RUST_RAW = re.compile(r'b?r(#*)"')
GO_RUNE = re.compile(r"'(?:[^'\\\n]|\\(?:[abfnrtv\\'\"]|[0-7]{3}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}))'")
# Before a '/' that starts a JavaScript regular expression rather than a division: punctuation
# or a keyword (the usual heuristic; a division follows a name, a number or a closing bracket).
REGEX_AFTER = set("(,=:[!&|?{};+-*%<>~^") | {""}
REGEX_KEYWORDS = ("return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw")


def _python(text: str) -> list[tuple[int, int]]:
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in (tokenize.STRING, tokenize.COMMENT) or tok.type == getattr(tokenize, "FSTRING_START", -1):
                out.append((starts[tok.start[0] - 1] + tok.start[1], starts[tok.end[0] - 1] + tok.end[1]))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return out


def _string_end(text: str, i: int, quote: str) -> int:
    """The offset after a quoted literal opening at ``i`` (backslash escapes; ends at the line's
    end for an unterminated one)."""
    j = i + 1
    while j < len(text):
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == quote:
            return j + 1
        if c == "\n" and quote != "`":
            return j
        j += 1
    return len(text)


def _block_comment(text: str, i: int, nested: bool) -> int:
    depth, j = 1, i + 2
    while j < len(text) and depth:
        if nested and text.startswith("/*", j):
            depth, j = depth + 1, j + 2
        elif text.startswith("*/", j):
            depth, j = depth - 1, j + 2
        else:
            j += 1
    return j


def _template_part(text: str, i: int, out: list[tuple[int, int]], templates: list[int]) -> int:
    """A template literal's text from ``i`` (its opening backquote, or the ``}`` closing an
    expression) to its end or to the next ``${`` (an expression opens: ``templates`` counts its
    braces); the span goes to ``out``, the offset after it is returned."""
    j, n = i + 1, len(text)
    while j < n and text[j] != "`" and not text.startswith("${", j):
        j += 2 if text[j] == "\\" else 1
    out.append((i, min(n, j + 1) if not text.startswith("${", j) else j))
    if text.startswith("${", j):
        templates.append(0)
        return j + 2
    return j + 1


def _brace_language(text: str, language: str) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    i, n = 0, len(text)
    templates: list[int] = []  # brace depth inside each open template literal's ${...}
    last = ""  # the last significant character or word before i (JavaScript regexes)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append((i, j))
            i = j
            continue
        if text.startswith("/*", i):
            j = _block_comment(text, i, nested=language == "rust")
            out.append((i, j))
            i = j
            continue
        if language == "rust":
            raw = RUST_RAW.match(text, i) if c in "br" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")) else None
            if raw is not None:
                close = '"' + raw.group(1)
                j = text.find(close, raw.end())
                j = n if j < 0 else j + len(close)
                out.append((i, j))
                i = j
                continue
            if c == "'":
                m = RUST_CHAR.match(text, i)
                if m is not None:
                    out.append((i, m.end()))
                    i = m.end()
                else:
                    i += 1  # a lifetime
                continue
        if language == "go" and c == "'":
            m = GO_RUNE.match(text, i)
            j = m.end() if m is not None else i + 1
            out.append((i, j))
            i = j
            continue
        if c == '"' or (c == "'" and language in ("javascript", "typescript")) or (c == "`" and language != "rust"):
            if c == "`" and language in ("javascript", "typescript"):
                i = _template_part(text, i, out, templates)
                last = "{"
                continue
            j = _string_end(text, i, c)
            out.append((i, j))
            i, last = j, '"'
            continue
        if language in ("javascript", "typescript"):
            if templates and c == "{":
                templates[-1] += 1
            elif templates and c == "}":
                if templates[-1] == 0:  # back in the template literal
                    templates.pop()
                    i = _template_part(text, i, out, templates)
                    continue
                templates[-1] -= 1
            if c == "/" and (last in REGEX_AFTER or last in REGEX_KEYWORDS):
                j = i + 1
                klass = False
                while j < n and text[j] != "\n" and (klass or text[j] != "/"):
                    if text[j] == "\\":
                        j += 1
                    elif text[j] == "[":
                        klass = True
                    elif text[j] == "]":
                        klass = False
                    j += 1
                if j < n and text[j] == "/":
                    j += 1
                    while j < n and text[j].isalpha():  # its flags
                        j += 1
                    out.append((i, j))
                    i, last = j, '"'
                    continue
        if c.isalnum() or c in "_$":
            j = i
            while j < n and (text[j].isalnum() or text[j] in "_$"):
                j += 1
            last = text[i:j]
            i = j
            continue
        if not c.isspace():
            last = c
        i += 1
    return out


def prose_spans(text: str, language: str) -> list[tuple[int, int]]:
    """(start, end) of the comments and string literals of ``text``, in order."""
    return _python(text) if language == "python" else _brace_language(text, language)


def code_only(text: str, language: str) -> str:
    """``text`` with its comments and strings blanked (newlines kept)."""
    chars = list(text)
    for s, e in prose_spans(text, language):
        for k in range(s, e):
            if chars[k] != "\n":
                chars[k] = " "
    return "".join(chars)


def occurrences(code: str, name: str) -> list[int]:
    """Offsets of ``name`` as a whole identifier in ``code`` (a ``code_only`` text)."""
    return [m.start() for m in re.finditer(rf"(?<![\w$]){re.escape(name)}(?![\w$])", code)]
