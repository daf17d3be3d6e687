"""A token rule (``tokens.TokenRule``) as a pattern over a document: its regex (tokens in order, any
spacing between them; ``WILD`` any identifier, ``EOL`` / ``BOL`` a line's end and start), the
places it matches (``Site``: the span and the new text, re-indented there) and its backed-off
variants with shorter anchors. The family's rules decide which token rules and which sites to offer."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from mercury_lsp.next_edit.prose import inserts_into_prose, non_code
from mercury_lsp.next_edit.query import DocState
from mercury_lsp.next_edit.rules.repeat.tokens import BOL, CONTEXT_TOKENS, EOL, WILD, TokenRule
from mercury_lsp.next_edit.text import indent_of
from mercury_lsp.next_edit.tree import ParsedDoc

# A deleted run this long (tokens and characters) is distinctive without an anchor: the same
# type spelt out in a declaration elsewhere ('func(cmd *Command, args []string) ...').
ANCHORLESS_MIN_TOKENS = 4
ANCHORLESS_MIN_CHARS = 16
IDENTIFIER = r"[A-Za-z_$][\w$]*"


@dataclass
class Site:
    doc: DocState
    start: int
    end: int
    new_text: str
    anchor: int  # anchor tokens matched (wildcards not counted)
    rename: bool
    age: int = 0  # the example's age (0: the newest edit)
    code: str = ""  # the rule of the family that found it (``search``)


def reindent(text: str, example_indent: str, site_indent: str) -> str:
    if "\n" not in text or example_indent == site_indent:
        return text
    lines = text.split("\n")
    fixed = [lines[0]]
    for ln in lines[1:]:
        fixed.append(site_indent + ln[len(example_indent):] if ln.startswith(example_indent) else ln)
    return "\n".join(fixed)


def pattern_regex(lead: tuple[str, ...], deleted: tuple[str, ...], trail: tuple[str, ...],
                   one_line: bool) -> re.Pattern:
    """Tokens in order, any spacing between them (none inside a line when ``one_line``); ``WILD``
    matches any identifier, ``EOL`` the end of the line, ``BOL`` its start and indentation;
    groups: lead, deleted, trail."""
    gap = r"[ \t]*" if one_line else r"\s*"

    def seq(tokens: tuple[str, ...], prev: str) -> str:
        out = []
        for t in tokens:
            if t == EOL:
                out.append(r"[ \t]*(?=\r?\n|\Z)")
                break
            if t == BOL:
                out.append(r"(?:(?<=\n)|(?<![\s\S]))[ \t]*")
                prev = " "
                continue
            sep = gap if out or prev else ""
            if prev and word_char(prev[-1]) and word_char(_edge(t)[0]):
                sep = r"[ \t]+" if one_line else r"\s+"
            out.append(sep + (IDENTIFIER if t == WILD else re.escape(t)))
            prev = "a" if t == WILD else t
        return "".join(out)

    first = _edge((lead + deleted + trail)[0])[0]
    head = r"(?<![\w$])" if word_char(first) else ""
    last = _edge((lead + deleted + trail)[-1])[-1]
    tail = r"(?![\w$])" if word_char(last) else ""
    lead_re = seq(lead, "")
    del_re = seq(deleted, _edge(lead[-1]) if lead else "")
    trail_re = seq(trail, _edge((deleted or lead)[-1]) if deleted or lead else "")
    return re.compile(f"{head}({lead_re})({del_re})({trail_re}){tail}")


def word_char(ch: str) -> bool:
    return ch.isalnum() or ch in "_$"


def _edge(token: str) -> str:
    """What a token shows at its edges (a wildcard is a word, the line's ends nothing)."""
    return "a" if token == WILD else " " if token in (EOL, BOL) else token


def match_sites(rule: TokenRule, doc: DocState, parsed: ParsedDoc | None, in_code: bool) -> list[Site]:
    one_line = "\n" not in rule.inserted and not rule.layout  # a layout rule joins lines too
    rx = pattern_regex(rule.lead, rule.deleted, rule.trail, one_line)
    text = doc.text
    out = []
    for m in rx.finditer(text):
        s = m.end(1) if rule.lead else m.start(2) + (len(m.group(2)) - len(m.group(2).lstrip()))
        e = m.start(3) + len(m.group(3)) - len(m.group(3).lstrip()) if rule.trail else m.end(2)
        # where code or comment is told: the deleted run, else the lead's last character (an
        # insertion at a line's end stands past the comment it extends)
        prose = (non_code(parsed, m.start(2) + (len(m.group(2)) - len(m.group(2).lstrip())))
                 if rule.deleted and not rule.quote_flip else inserts_into_prose(parsed, s))
        if prose == in_code:
            continue
        line_start = text.rfind("\n", 0, s) + 1
        line = text[line_start:text.find("\n", line_start) if "\n" in text[line_start:] else len(text)]
        out.append(Site(doc, s, e, reindent(rule.inserted, rule.indent, indent_of(line)),
                        sum(t != WILD for t in rule.lead + rule.trail), False))
    return out


def backed_off(rule: TokenRule):
    """The rule with shorter anchors, longest first (both sides kept for an insertion and a
    deletion; a replacement also under one side's anchor alone); last, for
    a long deleted run, no anchor at all. (Identifiers are abstracted only where two examples
    disagree, ``rules.generalise``: abstracting one example's anchors matched unrelated sites —
    every ``import x from`` for one import's new names.)"""
    seen = set()
    # a lead longer than CONTEXT_TOKENS reached back to a name (``tokens.NAMED_LEAD_TOKENS``): it is
    # kept whole while the trail backs off
    whole = (rule.lead,) if len(rule.lead) > CONTEXT_TOKENS and not rule.layout else ()
    for n in range(max(CONTEXT_TOKENS, len(rule.lead), len(rule.trail)), 0, -1):
        # a replacement also under its anchor of one side (the other differs: ``2010-2018`` then
        # ``, B.`` or `` B.``); a deletion needs both, the spacing it took is the trail's to say
        one_sided = ((rule.lead[-n:], ()), ((), rule.trail[:n])) if rule.deleted and rule.inserted.strip() else ()
        for lead, trail in ((rule.lead[-n:], rule.trail[:n]), *((w, rule.trail[:n]) for w in whole),
                            (rule.lead[-n:], rule.trail[:n - 1]),
                            (rule.lead[len(rule.lead) - n + 1:] if n > 1 else (), rule.trail[:n]), *one_sided):
            if (not rule.deleted and not (lead and trail)) or not (lead or trail):
                continue
            if (lead, trail) not in seen:
                seen.add((lead, trail))
                # the inserted text runs from the lead's end to the trail's start: without the
                # anchor of a side, the spacing on that side stays the site's own
                inserted = rule.inserted.rstrip(" \t") if rule.trail and not trail else rule.inserted
                inserted = inserted.lstrip(" \t") if rule.lead and not lead else inserted
                yield replace(rule, lead=lead, trail=trail,
                              inserted=inserted if rule.deleted and rule.inserted.strip() else rule.inserted)
    if len(rule.deleted) >= ANCHORLESS_MIN_TOKENS and rule.pattern_chars >= ANCHORLESS_MIN_CHARS:
        yield replace(rule, lead=(), trail=(), inserted=rule.inserted.strip())
