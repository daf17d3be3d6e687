"""NE304 whitespace-continued: an edit that changed only whitespace, continued on the lines below.

**Why.** The token rules (``rules.repeat``) read edits as tokens, so an edit that changed only
spacing gives them nothing; a dedent, a strip or a conversion is rarely made on one line alone.

**Example.** Dedenting the first lines of a docstring by four spaces offers the same dedent for
the rest of it. The three shapes:

* **dedented lines** — the newest edit took the same indentation off each of its lines (``P`` ->
  ``Q``, ``Q`` a prefix of ``P``: a docstring dedented, a block's first lines dedented after its
  ``if`` went; an indentation added has no such end): the lines below that still start with ``P`` get ``Q`` instead, up to the first line
  indented less (a blank line does not stop it), one edit per paragraph (lines between blank
  lines), at most ``MAX_PARAGRAPHS`` paragraphs and ``MAX_LINES`` lines;
* **trailing whitespace removed** — the newest edit only stripped whitespace from the ends of its
  lines: the nearest lines below the cursor still ending in whitespace are stripped
  (``MAX_STRIPPED`` of them);
* **indentation converted** — the newest edit re-indented its lines from spaces to tabs (``w``
  spaces a tab, the same ``w`` for every line) or back: the next run of lines below it still
  indented the old way is converted (the unchanged lines between runs — top-level, blank or
  already converted — are what a commit's hunks are split by), at most ``MAX_RUNS`` runs.
"""

from __future__ import annotations

from mercury_lsp.next_edit.examples import to_current
from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import WHITESPACE
from mercury_lsp.next_edit.text import changed_lines, indent_of

MAX_PARAGRAPHS = 3
MAX_LINES = 40
MAX_STRIPPED = 2
MAX_RUNS = 1  # the next block only: the one after it is the next request's (its text moves)
MAX_EDIT_LINES = 40  # a larger edit is a reformat of its own, not an example to continue


def _changed_lines(before: str, after: str) -> tuple[list[str], list[str], int] | None:
    """The edit's whole lines before and after it, and the offset of their end in ``after``."""
    lines = changed_lines(before, after)
    if lines is None:
        return None
    lo, hb, ha = lines
    old, new = before[lo:hb].split("\n"), after[lo:ha].split("\n")
    if len(old) != len(new) or len(old) > MAX_EDIT_LINES:
        return None
    return old, new, ha


def _reindent(text: str, start: int, p: str, q: str) -> list[tuple[int, int, str]]:
    """(start, end, new text) per paragraph of the lines from ``start`` on that start with ``p``."""
    out: list[tuple[int, int, str]] = []
    para: list[tuple[int, str]] = []
    pos, lines = start, 0

    def flush() -> None:
        if para:
            s, e = para[0][0], para[-1][0] + len(para[-1][1])
            out.append((s, e, "\n".join(q + line[len(p):] for _, line in para)))
            para.clear()

    while pos < len(text) and lines < MAX_LINES and len(out) < MAX_PARAGRAPHS:
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        line = text[pos:end]
        if not line.strip():
            flush()
        elif line.startswith(p):
            para.append((pos, line))
        else:
            break
        pos, lines = end + 1, lines + 1
    if len(out) < MAX_PARAGRAPHS:
        flush()
    return out


def _unit_change(pairs: set[tuple[str, str]]):
    """A function converting an indentation the way every (old, new) pair was (spaces to tabs, ``w``
    spaces a tab, or back); None when the pairs are no such conversion."""
    for old_ch, new_ch in ((" ", "\t"), ("\t", " ")):
        if not pairs or not all(set(a) == {old_ch} and set(b) == {new_ch} for a, b in pairs):
            continue
        widths = {len(a) / len(b) if old_ch == " " else len(b) / len(a) for a, b in pairs}  # spaces a tab
        if len(widths) != 1 or not (w := widths.pop()).is_integer() or w < 1:
            return None
        w = int(w)
        if old_ch == " ":
            return lambda ind: "\t" * (len(ind) // w) if ind and set(ind) == {" "} and len(ind) % w == 0 else None
        return lambda ind: " " * (len(ind) * w) if ind and set(ind) == {"\t"} else None
    return None


def _converted_runs(text: str, start: int, convert) -> list[tuple[int, int, str]]:
    """(start, end, new text) of the next ``MAX_RUNS`` runs of lines from ``start`` on whose
    indentation ``convert`` changes."""
    out: list[tuple[int, int, str]] = []
    run: list[tuple[int, str, str]] = []
    pos, lines = start, 0
    while pos < len(text) and lines < MAX_LINES and len(out) < MAX_RUNS:
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        line = text[pos:end]
        new = convert(indent_of(line)) if line.strip() else None
        if new is not None:
            run.append((pos, line, new + line.lstrip(" \t")))
        elif run:
            out.append((run[0][0], run[-1][0] + len(run[-1][1]), "\n".join(n for _, _, n in run)))
            run = []
        pos, lines = end + 1, lines + 1
    if run and len(out) < MAX_RUNS:
        out.append((run[0][0], run[-1][0] + len(run[-1][1]), "\n".join(n for _, _, n in run)))
    return out


def run(ctx: RuleContext) -> list[Prediction]:
    """The newest edit's whitespace change continued below it (module docstring)."""
    if not ctx.examples:
        return []
    ex = ctx.examples[0]
    got = _changed_lines(ex.before, ex.after)
    if got is None:
        return []
    old, new, end = got
    if any(a.split() != b.split() for a, b in zip(old, new, strict=True)):
        return []
    doc, text = ex.doc, ex.doc.text
    end = to_current(ex, end)
    if end is None:
        return []
    pairs = {(indent_of(a), indent_of(b)) for a, b in zip(old, new, strict=True) if a.strip() and a != b}
    convert = _unit_change(pairs)
    if convert is not None:
        return [Prediction(doc.uri, s, e, t, WHITESPACE.value, "indentation converted like the lines above", RULE.kind,
                           "syntax", text[s:e]) for s, e, t in _converted_runs(text, end + 1, convert)]
    if len(pairs) == 1 and next(iter(pairs))[0].startswith(next(iter(pairs))[1]) and all(a.rstrip() == a and b.rstrip() == b for a, b in zip(old, new, strict=True)):
        (p, q), = pairs
        return [Prediction(doc.uri, s, e, t, WHITESPACE.value, "re-indented like the lines above", RULE.kind, "syntax",
                           text[s:e]) for s, e, t in _reindent(text, end + 1, p, q)]
    if all(a.rstrip() == b for a, b in zip(old, new, strict=True)):
        out: list[Prediction] = []
        pos = end + 1
        while pos < len(text) and len(out) < MAX_STRIPPED:
            stop = text.find("\n", pos)
            stop = len(text) if stop < 0 else stop
            line = text[pos:stop]
            if line != line.rstrip():
                s = pos + len(line.rstrip())
                out.append(Prediction(doc.uri, s, stop, "", WHITESPACE.value, "trailing whitespace goes, as above",
                                      RULE.kind, "syntax", text[s:stop]))
            pos = stop + 1
        return out
    return []


RULE = Rule("NE304", "whitespace-continued", "repeat", WHITESPACE.value, run, __doc__)
