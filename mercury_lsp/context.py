"""Edit-aware context windows: which span to mask, and which prefix/suffix the model sees.

* **Span kind** (by syntax, line heuristics without a grammar): the rest of the line when the
  cursor is mid-line or inside a comment/string; a *block* at the end of a line that opens one
  (``:`` / ``{``) or on an empty line right under such a header; a *statement* on an empty line
  in a body. The kind decides ``max_tokens`` and whether multi-line output is kept.
* **Cursor inside an identifier**: the rest of the identifier is part of the span (it is
  replaced), so the suffix starts at a token boundary; the engine heals the prefix side.
* **Windows** are cut at syntax-node boundaries within a character budget derived from the
  token budget (chars-per-token calibrated once per model): the largest enclosing node that
  fits, the headers of the enclosing scopes that do not, then whole top-level nodes before it,
  preferring recently edited ones and imports. The suffix is the rest of the enclosing node plus
  following whole nodes; without a tree both sides are whole lines.
"""

from __future__ import annotations

from dataclasses import dataclass

from mercury_lsp.config import Settings
from mercury_lsp.documents import DocumentSnapshot
from mercury_lsp.schema import SpanKind
from mercury_lsp.syntax import BLOCK_OPENERS, IMPORT_NODE_PARTS, is_textual
from mercury_lsp.text import TextIndex, utf8_len

CLOSERS = ")]}"
CONTINUATION_OPENERS = ("(", "[", ",")
# Without a grammar, a hot spot contributes this many lines around it.
HOT_SPOT_LINES = 6
# A span takes at most this share of the context; the rest is prefix/suffix for it to read.
SPAN_CONTEXT_DIVISOR = 2
# How far span detection looks up/down for a non-blank line (a header, the next statement):
# further away, the lines no longer describe the cursor's block.
NONBLANK_LOOKAROUND_LINES = 50


def is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch in "_$"


@dataclass(frozen=True)
class Window:
    prefix: str
    suffix: str
    kind: SpanKind
    max_tokens: int
    multiline: bool
    cursor: int  # offset of the cursor in the document
    replace_end: int  # the span replaces text[cursor:replace_end] (rest of an identifier)
    indent: str  # indentation of the cursor's line
    header_indent: str | None  # indentation of the block header (kind == "block")
    prefix_chars_budget: int
    suffix_chars_budget: int


@dataclass(frozen=True)
class Budget:
    context_tokens: int  # the model's context budget
    chars_per_token: float


def leading_ws(s: str) -> str:
    return s[: len(s) - len(s.lstrip(" \t"))]


# ---------------------------------------------------------------------------- span kind
def choose_span(snap: DocumentSnapshot, tree, cursor: int) -> tuple[SpanKind, int, str | None]:
    """(kind, replace_end, header_indent)."""
    text = snap.text
    line = snap.line_of(cursor)
    ls, le = snap.line_start(line), snap.line_end(line)
    replace_end = cursor
    if 0 < cursor < le and is_word_char(text[cursor - 1]) and is_word_char(text[cursor]):
        while replace_end < le and is_word_char(text[replace_end]):
            replace_end += 1
    before, after = text[ls:cursor], text[replace_end:le]
    node = None
    if tree is not None:
        b = utf8_len(text[:cursor])
        node = tree.root_node.descendant_for_byte_range(max(0, b - 1), max(0, b - 1))
    if after.strip():
        return "line", replace_end, None
    if node is not None and before.strip() and is_textual(node):
        return "line", replace_end, None
    stripped = before.rstrip()
    if not stripped.strip():
        header = _previous_nonblank(snap, line)
        if header is not None:
            h_text = text[snap.line_start(header):snap.line_end(header)]
            if h_text.rstrip().endswith(BLOCK_OPENERS) and len(before) > len(leading_ws(h_text)):
                if not _next_nonblank_is_deeper(snap, line, len(leading_ws(h_text))):
                    return "block", replace_end, leading_ws(h_text)
        return "statement", replace_end, None
    if stripped.endswith(BLOCK_OPENERS):
        return "block", replace_end, leading_ws(before)
    if stripped.endswith(CONTINUATION_OPENERS):
        return "statement", replace_end, None
    return "line", replace_end, None


def _previous_nonblank(snap: DocumentSnapshot, line: int) -> int | None:
    for i in range(line - 1, max(-1, line - NONBLANK_LOOKAROUND_LINES), -1):
        if snap.text[snap.line_start(i):snap.line_end(i)].strip():
            return i
    return None


def _next_nonblank_is_deeper(snap: DocumentSnapshot, line: int, indent: int) -> bool:
    """The body already has code below the cursor: fill one statement, not a whole block."""
    n = len(snap.line_starts)
    for i in range(line + 1, min(n, line + NONBLANK_LOOKAROUND_LINES)):
        t = snap.text[snap.line_start(i):snap.line_end(i)]
        if t.strip():
            return len(leading_ws(t)) > indent
    return False


# ---------------------------------------------------------------------------- windows
def build_window(snap: DocumentSnapshot, tree, cursor: int, settings: Settings, budget: Budget) -> Window:
    kind, replace_end, header_indent = choose_span(snap, tree, cursor)
    max_tokens = settings.span_budget(kind)
    ctx = settings.context
    limit = budget.context_tokens
    if ctx.max_context_tokens is not None:
        limit = min(limit, ctx.max_context_tokens)
    span = min(max_tokens, limit // SPAN_CONTEXT_DIVISOR)
    room_tokens = max(0, limit - span - 1 - ctx.reserved_tokens)
    room_chars = int(room_tokens * budget.chars_per_token * ctx.safety_margin)
    suffix_chars = int(room_chars * ctx.suffix_share)
    prefix_chars = room_chars - suffix_chars
    text = snap.text
    # Give the other side what one side cannot use.
    avail_suffix = len(text) - replace_end
    if avail_suffix < suffix_chars:
        prefix_chars += suffix_chars - avail_suffix
        suffix_chars = avail_suffix
    if cursor < prefix_chars:
        suffix_chars += prefix_chars - cursor
        prefix_chars = cursor
    if tree is not None:
        prefix = _tree_prefix(snap, tree, cursor, prefix_chars)
        suffix = _tree_suffix(snap, tree, replace_end, suffix_chars)
    else:
        prefix = _line_prefix(snap, cursor, prefix_chars)
        suffix = _line_suffix(snap, replace_end, suffix_chars)
    line = snap.line_of(cursor)
    indent = leading_ws(text[snap.line_start(line):snap.line_end(line)])
    return Window(prefix=prefix, suffix=suffix, kind=kind, max_tokens=span, multiline=kind != "line",
                  cursor=cursor, replace_end=replace_end, indent=indent, header_indent=header_indent,
                  prefix_chars_budget=prefix_chars, suffix_chars_budget=suffix_chars)


def _line_prefix(snap: DocumentSnapshot, cursor: int, budget: int) -> str:
    """Whole lines before the cursor within ``budget`` (plus lines around recent edits)."""
    line = snap.line_of(cursor)
    start = snap.line_start(line)
    first = line
    while first > 0 and cursor - snap.line_start(first - 1) <= budget:
        first -= 1
    core_start = snap.line_start(first) if cursor - snap.line_start(first) <= budget else start
    if cursor - core_start > budget:  # one very long line: keep its end
        core_start = cursor - budget
    segments: list[tuple[int, int]] = []
    left = budget - (cursor - core_start)
    for spot in snap.hot_spots:
        if spot >= core_start or left <= 0:
            continue
        sl = snap.line_of(spot)
        a = snap.line_start(max(0, sl - HOT_SPOT_LINES // 2))
        b = snap.line_start(min(snap.line_of(core_start), sl + HOT_SPOT_LINES // 2 + 1))
        if 0 < b - a <= left:
            segments.append((a, b))
            left -= b - a
    return _join(snap.text, _merge(segments), core_start, cursor)


def _line_suffix(snap: DocumentSnapshot, start: int, budget: int) -> str:
    text = snap.text
    end = start
    line = snap.line_of(start)
    n = len(snap.line_starts)
    while line < n:
        nxt = snap.line_starts[line + 1] if line + 1 < n else len(text)
        if nxt - start > budget:
            break
        end = nxt
        line += 1
    if end == start:  # the rest of the line alone is too long: cut after a word
        end = _word_cut(text, start, start + budget)
    return text[start:end]


def _word_cut(text: str, start: int, limit: int) -> int:
    limit = min(limit, len(text))
    end = limit
    while end > start and end < len(text) and is_word_char(text[end - 1]) and is_word_char(text[end]):
        end -= 1
    return end


def _ancestors(tree, text: str, offset: int) -> list:
    b = utf8_len(text[:offset])
    node = tree.root_node.descendant_for_byte_range(b, b)
    chain = []
    while node is not None and node.parent is not None:
        if node.is_named:
            chain.append(node)
        node = node.parent
    return chain  # innermost first, excluding the root


class _Offsets:
    """Tree-sitter node -> code-point offsets of one snapshot."""

    def __init__(self, snap: DocumentSnapshot) -> None:
        self.index = TextIndex(snap.text, snap.line_starts)

    def start(self, node) -> int:
        return self.index.offset_of_point(node.start_point)

    def end(self, node) -> int:
        return self.index.offset_of_point(node.end_point)


def _tree_prefix(snap: DocumentSnapshot, tree, cursor: int, budget: int) -> str:
    text = snap.text
    offs = _Offsets(snap)
    chain = _ancestors(tree, text, cursor)
    line_start = snap.line_start(snap.line_of(cursor))
    core_start = None
    outer: list = []
    for node in chain:
        start = snap.line_start(snap.line_of(offs.start(node)))
        if start < line_start and cursor - start <= budget:
            core_start = start
        elif start < line_start:
            outer.append(node)
    if core_start is None:  # the innermost scope does not fit: whole lines up to the budget
        core_start = line_start
        first = snap.line_of(cursor)
        while first > 0 and cursor - snap.line_start(first - 1) <= budget:
            first -= 1
            core_start = snap.line_start(first)
        if cursor - core_start > budget:
            core_start = cursor - budget
    left = budget - (cursor - core_start)
    segments: list[tuple[int, int]] = []
    # Headers of enclosing scopes that did not fit (outermost first).
    for node in reversed(outer):
        h0 = snap.line_start(snap.line_of(offs.start(node)))
        h1 = min(snap.line_end(snap.line_of(h0)) + 1, core_start)
        if h0 < core_start and 0 < h1 - h0 <= left:
            segments.append((h0, h1))
            left -= h1 - h0
    # Whole top-level nodes before the core: recently edited first, then imports, then nearest.
    top = [c for c in tree.root_node.children if offs.end(c) <= core_start]
    hot = set()
    for spot in snap.hot_spots:
        for i, c in enumerate(top):
            if offs.start(c) <= spot <= offs.end(c):
                hot.add(i)
    order = sorted(range(len(top)), key=lambda i: (i not in hot, not _is_import(top[i]), -i))
    for i in order:
        a = snap.line_start(snap.line_of(offs.start(top[i])))
        b = min(_line_after(snap, offs.end(top[i])), core_start)
        if 0 < b - a <= left:
            segments.append((a, b))
            left -= b - a
        elif left <= 0:
            break
    return _join(text, _merge(segments), core_start, cursor)


def _is_import(node) -> bool:
    return any(p in node.type for p in IMPORT_NODE_PARTS)


def _line_after(snap: DocumentSnapshot, offset: int) -> int:
    """Offset just past the line ending of the line containing ``offset``."""
    line = snap.line_of(offset)
    return snap.line_starts[line + 1] if line + 1 < len(snap.line_starts) else len(snap.text)


def _tree_suffix(snap: DocumentSnapshot, tree, start: int, budget: int) -> str:
    text = snap.text
    offs = _Offsets(snap)
    end = None
    for node in _ancestors(tree, text, start):
        node_end = _line_after(snap, offs.end(node))
        if node_end - start <= budget:
            end = node_end
        else:
            break
    if end is None:
        return _line_suffix(snap, start, budget)
    # Following whole top-level nodes, contiguously.
    for c in tree.root_node.children:
        c_start = offs.start(c)
        if c_start < end:
            continue
        c_end = _line_after(snap, offs.end(c))
        if c_end - start > budget:
            break
        end = c_end
    if end - start < budget:  # fill what is left with whole lines
        rest = _line_suffix(snap, end, budget - (end - start))
        end += len(rest)
    return text[start:end]


def _merge(segments: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(segments):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _join(text: str, segments: list[tuple[int, int]], core_start: int, cursor: int) -> str:
    parts: list[str] = []
    prev_end = None
    for a, b in segments:
        if prev_end is not None and a > prev_end and parts and not parts[-1].endswith("\n\n"):
            parts.append("\n")
        parts.append(text[a:b])
        prev_end = b
    if prev_end is not None and core_start > prev_end and parts and not parts[-1].endswith("\n\n"):
        parts.append("\n")
    parts.append(text[core_start:cursor])
    return "".join(parts)
