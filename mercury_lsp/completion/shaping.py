"""Shaping a raw infill into a suggestion: undecodable bytes cut, multi-line spans cut to their
kind (single-line spans are cut by the engine), a repeat of the text after the cursor trimmed."""

from __future__ import annotations

from mercury_lsp.context import CLOSERS, Window, leading_ws

OVERLAP_MAX_CHARS = 256  # longest repeat of the suffix looked for
OVERLAP_MIN_CHARS = 3  # shorter repeats count only when made of closing punctuation
OVERLAP_PUNCT = CLOSERS + "\"'`;:,>"
STATEMENT_CONTINUATIONS = ("else", "elif", "except", "finally", "catch")
DEL = 127  # the ASCII delete control character


def sanitize(text: str) -> str:
    """Cut at the first undecodable byte (U+FFFD) or control character (tab/newline allowed)."""
    for i, ch in enumerate(text):
        if ch == "\ufffd" or (ord(ch) < 32 and ch not in "\t\n\r") or ord(ch) == DEL:
            return text[:i]
    return text


def limit_lines(text: str, window: Window, max_lines: int) -> str:
    """A multi-line suggestion cut to its span: at most ``max_lines`` lines, and only the lines
    deeper than the span's base indentation (plus one closing bracket line, and ``else``-like
    continuations of a statement). Single-line spans come cut by the engine (``single_line``)."""
    if window.kind == "line":
        return text
    lines = text.split("\n")
    if window.kind == "block" and window.header_indent is not None:
        base, closer_ok = len(window.header_indent), True
    else:
        base, closer_ok = len(window.indent), True
    kept = [lines[0]]
    for ln in lines[1:]:
        if len(kept) >= max_lines:
            break
        if not ln.strip():
            kept.append(ln)
            continue
        ind = len(leading_ws(ln))
        body = ln.strip()
        if ind > base:
            kept.append(ln)
        elif ind == base and closer_ok and body[0] in CLOSERS:
            kept.append(ln)
            break
        elif ind == base and window.kind == "statement" and body.startswith(STATEMENT_CONTINUATIONS):
            kept.append(ln)
        else:
            break
    return "\n".join(kept)


def shape(raw: str, window: Window, max_lines: int) -> str:
    text = sanitize(raw).replace("\r\n", "\n")
    text = limit_lines(text, window, max_lines).rstrip()
    if window.kind == "line":
        text = text.rstrip()
    return text if text.strip() else ""


def suffix_overlap(text: str, after: str) -> str | None:
    """``text`` without its tail when that tail repeats the start of ``after``; else None."""
    t = text.rstrip()
    n = min(len(t), len(after), OVERLAP_MAX_CHARS)
    for k in range(n, 0, -1):
        piece = after[:k]
        if not piece.strip() or not t.endswith(piece):
            continue
        core = piece.strip()
        if len(core) >= OVERLAP_MIN_CHARS or all(c in OVERLAP_PUNCT for c in core):
            return t[: len(t) - k].rstrip(" \t") if k < len(t) else ""
    return None


def bracket_imbalance(s: str) -> int:
    depth = bad = 0
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth:
                depth -= 1
            else:
                bad += 1
    return bad + depth
