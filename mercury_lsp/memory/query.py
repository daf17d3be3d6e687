"""What the memory is asked: a document at a version and a cursor in it, read as tokens.

``Query`` holds the reversed tokens before the cursor (across lines, at most
``MAX_QUERY_TOKENS``), the whitespace typed after the last of them, the tokens of the lines
after the cursor's line (for suffix agreement), and the document itself as a loose corpus (its
own earlier and later lines are the closest memory there is).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mercury_lsp.memory.corpus import FileInfo
from mercury_lsp.memory.scan import Loose
from mercury_lsp.memory.tokens import NEWLINE, SEP, is_word_byte
from mercury_lsp.syntax import KEYWORDS

# Context tokens looked at before the cursor: a match longer than this says nothing more (two
# places that agree on 96 tokens are copies of each other).
MAX_QUERY_TOKENS = 96
NEXT_TOKENS = 16  # tokens of the lines after the cursor's line compared with a match's next line


@dataclass(frozen=True)
class Context:
    """A document and a cursor (code-point offset)."""
    uri: str
    text: str
    cursor: int
    language: str = ""  # grammar name ("" for plain text)
    test: bool = False  # the document is a test file
    line_rest_end: int | None = None  # where the suggestion's span ends on the cursor's line
    block: bool = False  # a block span (the cursor ends a line that opens one): places give their body


@dataclass
class Query:
    context: Context
    doc: Loose  # the document as a loose corpus
    q: np.ndarray  # reversed ids of the tokens before the cursor (uint32)
    q_chars: np.ndarray  # characters from the start of the k-th token back to the cursor, per k
    cursor_end: int  # the doc token index a match at the cursor would end at (skipped)
    last_len: int  # bytes of the last token before the cursor
    typed_tail: str  # what follows that token up to the cursor (spaces, or a line break and indent)
    line_tokens: int  # tokens of the cursor's line before the cursor
    after_line: str  # the rest of the cursor's line after the span (repeat of it is trimmed)
    next_ids: np.ndarray  # the first tokens after the cursor's line
    line_before: str = field(default="")  # the cursor's line up to the cursor
    next_at: int = -1  # the doc token index ``next_ids`` start at
    cursor_byte: int = -1  # the cursor's offset in the document's UTF-8 bytes

    def word_at(self, k: int) -> bool:
        """Is the k-th token back from the cursor a word (a name, a number)?"""
        if k >= len(self.q) or self.q[k] in (NEWLINE, SEP):
            return False
        return is_word_byte(self.doc.data[int(self.doc.starts[self.cursor_end - 1 - k])])

    def name_at(self, k: int) -> bool:
        """Is the k-th token back from the cursor a word that can be a name (not a keyword)?"""
        return self.word_at(k) and self.token_text(self.cursor_end - 1 - k) not in KEYWORDS

    def token_text(self, i: int) -> str:
        """The document's token ``i`` as text."""
        doc = self.doc
        return doc.data[int(doc.starts[i]):int(doc.ends[i])].decode("utf-8", "replace")

    @property
    def empty(self) -> bool:
        return len(self.q) == 0


def build_query(ctx: Context) -> Query:
    text = ctx.text
    data = text.encode("utf-8")
    cursor_byte = len(text[:ctx.cursor].encode("utf-8"))
    doc = Loose(FileInfo(ctx.uri, ctx.language, ctx.test), data)
    cursor_end = doc.end_at(cursor_byte)
    first = max(0, cursor_end - MAX_QUERY_TOKENS)
    fwd = doc.ids[first:cursor_end]
    q = fwd[::-1].copy()
    starts = doc.starts[first:cursor_end][::-1].astype(np.int64)
    q_chars = cursor_byte - starts  # bytes; the context's characters in UTF-8 units
    if len(q):
        last = cursor_end - 1
        last_end = int(doc.ends[last])
        last_len = last_end - int(doc.starts[last])
        typed_tail = data[last_end:cursor_byte].decode("utf-8", errors="replace")
    else:
        last_len, typed_tail = 0, ""
    nl = np.flatnonzero((q == NEWLINE) | (q == SEP))
    line_tokens = int(nl[0]) if len(nl) else len(q)
    ls = text.rfind("\n", 0, ctx.cursor) + 1
    le = text.find("\n", ctx.cursor)
    le = len(text) if le < 0 else le
    rest_from = ctx.line_rest_end if ctx.line_rest_end is not None else ctx.cursor
    after_nl = doc.end_at(len(text[:le].encode("utf-8")))
    next_ids = doc.ids[after_nl + 1:after_nl + 1 + NEXT_TOKENS] if after_nl < len(doc.ids) else doc.ids[:0]
    return Query(ctx, doc, q, q_chars, cursor_end, last_len, typed_tail, line_tokens,
                 text[rest_from:le], np.asarray(next_ids), text[ls:ctx.cursor], after_nl + 1, cursor_byte)

