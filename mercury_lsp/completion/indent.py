"""Fit a suggestion's indentation to where it is inserted.

On a fresh, auto-indented line (the editor already wrote the indentation and the cursor sits at
its end) the model often writes the line's indentation again, from column 0: after
``def add(a, b):<CR>`` at column 4 it suggests ``"    return a + b"``. Inserted at the cursor
that is indented twice. Here the suggestion's first-line indentation is read as the line's
absolute indentation (what the model means: its later lines are absolute too), and only the part
the line does not have yet is kept.
"""

from __future__ import annotations

from mercury_lsp.context import leading_ws


def fit_indent(text: str, line_before: str) -> str:
    """``text`` (inserted after ``line_before``, the cursor line's text before the cursor) with
    its first line's indentation fitted to the indentation already on the line.

    Only when ``line_before`` is non-empty whitespace and the suggestion's first line starts with
    whitespace: the line ends up indented as the model wrote it when that is deeper than the
    editor's indentation and extends it, else as the editor indented it.
    """
    if not line_before or line_before.strip() or not text:
        return text
    first, nl, rest = text.partition("\n")
    ws = leading_ws(first)
    if not ws or not first.strip():
        return text
    keep = ws[len(line_before):] if len(ws) > len(line_before) and ws.startswith(line_before) else ""
    return keep + first[len(ws):] + nl + rest
