"""Retrieved context: the chunks of other files most like the code around the cursor, and the
definitions of the names near it, for the model's window and every remote backend's prompt.

* **Similar chunks**: BM25 (``chunks.bm25``) of every chunk of every live file against the words
  of the lines around the cursor; the document itself is left out (it is in the window already).
* **Definitions**: for the names on the cursor's line and the lines just above it, the places
  where a definition keyword precedes the name (``def name``, ``class name``, ``func name``,
  ``fn name``, ``function name``, ...), found in the suffix arrays like any other context; the
  definition's first line (its signature) is what the model gets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from mercury_lsp.memory.chunks import bm25
from mercury_lsp.memory.corpus import Corpus
from mercury_lsp.memory.query import Query
from mercury_lsp.memory.tokens import NEWLINE, SEP, token_id, word_mask
from mercury_lsp.syntax import KEYWORDS, VALUE_WORDS

CONTEXT_BEFORE_TOKENS = 200  # words around the cursor a chunk is compared with: a dozen lines ...
CONTEXT_AFTER_TOKENS = 50  # ... and a few after
NAME_LINES = 3  # the names of the cursor's line and of this many lines above it get definitions
MAX_NAMES = 8  # names looked up per request (nearest the cursor first)
DEF_KEYWORDS = ("def", "class", "func", "fn", "function", "struct", "interface", "type", "enum", "trait",
                "const", "let", "var", "val", "impl", "record", "module", "macro_rules")
DEF_IDS = np.array([token_id(k) for k in DEF_KEYWORDS], np.uint32)
# Words that may come before a definition keyword on its line (``pub fn``, ``export function``).
MODIFIERS = ("pub", "export", "async", "public", "private", "protected", "static", "abstract", "final",
             "default", "extern", "unsafe", "inline", "override", "open", "internal", "declare", "sealed", "data")
MODIFIER_IDS = np.array([token_id(k) for k in MODIFIERS], np.uint32)
# Words that are never a definition's name (the grammars' keywords and literals).
NOT_NAMES = KEYWORDS | VALUE_WORDS
NAME = re.compile(r"[A-Za-z_$][\w$]*")
PER_NAME = 256  # places of a name looked at per corpus for its definition (a definition is rarely rarer)
MAX_SIGNATURE_LINES = 4  # a signature split over more lines is cut here


@dataclass(frozen=True)
class Chunk:
    path: str  # the file's path (or an open document's URI)
    text: str
    score: float
    kind: str  # "similar" | "definition"
    name: str = ""  # the name defined (definitions)


def _words_near(query: Query) -> np.ndarray:
    doc = query.doc
    lo = max(1, query.cursor_end - CONTEXT_BEFORE_TOKENS)
    hi = min(len(doc.ids) - 1, query.cursor_end + CONTEXT_AFTER_TOKENS)
    ids = doc.ids[lo:hi]
    return np.unique(ids[word_mask(doc.blob, doc.starts[lo:hi])])


def _chunk_text(corpus: Corpus, c: int) -> str:
    first = int(corpus.chunk_tok[c])
    f = int(corpus.chunk_file[c])
    same_file = c + 1 < len(corpus.chunk_tok) and int(corpus.chunk_file[c + 1]) == f
    end = int(corpus.starts[int(corpus.chunk_tok[c + 1])]) if same_file else int(corpus.file_byte[f + 1])
    start = int(corpus.starts[first])
    line_start = int(corpus.file_byte[f]) + bytes(corpus.blob[corpus.file_byte[f]:start]).rfind(b"\n") + 1
    return corpus.text(line_start, end).rstrip() + "\n"


def similar(query: Query, corpora: list[tuple[Corpus, np.ndarray | None]], limit: int) -> list[Chunk]:
    """The ``limit`` best chunks of ``corpora`` (``live``: per file, None: all) by BM25."""
    words = _words_near(query)
    best: list[tuple[float, Corpus, int]] = []
    for corpus, live in corpora:
        chunks, scores = bm25(corpus.post_ids, corpus.post_chunks, corpus.chunk_words, words)
        if live is not None and len(chunks):
            scores = np.where(live[corpus.chunk_file[chunks]], scores, 0.0)
        top = np.argsort(-scores)[:limit]
        best += [(float(scores[i]), corpus, int(chunks[i])) for i in top if scores[i] > 0]
    best.sort(key=lambda t: -t[0])
    out = []
    for score, corpus, c in best[:limit]:
        out.append(Chunk(corpus.files[int(corpus.chunk_file[c])].path, _chunk_text(corpus, c), score, "similar"))
    return out


def names_near(query: Query) -> list[str]:
    """Names on the cursor's line and the ``NAME_LINES`` lines above it, nearest first."""
    text = query.context.text
    start = query.context.cursor
    for _ in range(NAME_LINES + 1):
        start = text.rfind("\n", 0, max(0, start - 1)) + 1 if start > 0 else 0
    seen: dict[str, None] = {}
    for m in reversed(list(NAME.finditer(text, start, query.context.cursor))):
        if m.group() not in DEF_KEYWORDS and m.group() not in NOT_NAMES and m.group() not in MODIFIERS:
            seen.setdefault(m.group(), None)
    return list(seen)[:MAX_NAMES]


def _signature(corpus: Corpus, e: int) -> str:
    """The definition's line(s) starting at the line of token ``e - 1`` (its name)."""
    name_start = int(corpus.starts[e - 1])
    f = int(corpus.file_of(np.array([e - 1]))[0])
    file_start = int(corpus.file_byte[f])
    line_start = file_start + bytes(corpus.blob[file_start:name_start]).rfind(b"\n") + 1
    end = line_start
    file_end = int(corpus.file_byte[f + 1])
    for _ in range(MAX_SIGNATURE_LINES):
        nl = bytes(corpus.blob[end:file_end]).find(b"\n")
        end = file_end if nl < 0 else end + nl + 1
        line = bytes(corpus.blob[line_start:end]).rstrip()
        if not line or line.endswith((b":", b"{", b";", b")")) or b"=" in line or nl < 0:
            break
    return corpus.text(line_start, end).rstrip() + "\n"


def definitions(query: Query, corpora: list[tuple[Corpus, np.ndarray | None]], limit: int) -> list[Chunk]:
    """Signatures of the names near the cursor, where a definition keyword precedes them."""
    out: list[Chunk] = []
    for name in names_near(query):
        if len(out) >= limit:
            break
        found = definition_of(corpora, name, token_id(name))
        if found is not None:
            out.append(found)
    return out


def definition_of(corpora: list[tuple[Corpus, np.ndarray | None]], name: str, name_id: int) -> Chunk | None:
    """The signature of ``name`` where it is first defined in ``corpora`` (``_definition``)."""
    found = _definition(corpora, name_id)
    if found is None:
        return None
    corpus, e = found
    return Chunk(corpus.files[int(corpus.file_of(np.array([e - 1]))[0])].path, _signature(corpus, e), 1.0,
                 "definition", name)


def _definition(corpora: list[tuple[Corpus, np.ndarray | None]], name_id: int) -> tuple[Corpus, int] | None:
    """The first place, in corpus order, where ``keyword name`` starts a line (after modifiers):
    the places of the name (one search) whose previous token is a definition keyword."""
    q = np.array([name_id], np.uint32)
    for corpus, live in corpora:
        m = corpus.matches(q, [1], PER_NAME, live)
        ends = m.ends[m.ends >= 3]
        hits = ends[(corpus.ids[ends - 2][:, None] == DEF_IDS[None, :]).any(axis=1)]  # a keyword before it
        for e in hits:
            i = int(e) - 3
            while i > 0 and corpus.ids[i] in MODIFIER_IDS:
                i -= 1
            if i <= 0 or corpus.ids[i] in (SEP, NEWLINE):
                return corpus, int(e)
    return None
