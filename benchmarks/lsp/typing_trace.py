"""Typing traces of real source files, for ``benchmarks/lsp/latency``.

A trace types back regions removed from a file the model never trained on (the held-out
standard-library files of ``benchmarks/train/heldout``) the way a person does: a key every
``1/rate`` seconds with jitter, a pause after each word, now and then a wrong key followed by a
backspace, and a cursor jump to another region of the file. It is deterministic for a seed.

The client side of the benchmark keeps its own copy of the document (``TextModel``): offsets
in code points, LSP positions in UTF-16 — no code shared with the daemon.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

KEY_JITTER = 0.4  # each inter-key delay is 1/rate * U(1 - j, 1 + j): people are not metronomes
WORD_PAUSE_S = (0.35, 0.9)  # pause after a word (reading, thinking): where a suggestion matters
TYPO_RATE = 0.03  # chance per letter of a wrong key, seen and deleted with a backspace
TYPO_NOTICE_S = 0.25  # time to notice a typo before the backspace
REGION_LINES = 3  # lines removed and typed back per cursor position (then the cursor jumps)
MIN_LINE_CHARS = 12  # regions start on lines with at least this much code


@dataclass(frozen=True)
class Key:
    """One keystroke: replace ``text[start:end]`` with ``insert``, then wait ``delay_s``.

    ``pause`` marks a word pause after it (a point where the user reads a suggestion)."""

    start: int
    end: int
    insert: str
    delay_s: float
    pause: bool
    jump: bool  # the first key after a cursor jump


def _regions(text: str, rng: random.Random, n: int) -> list[tuple[int, int]]:
    """``n`` non-overlapping regions of REGION_LINES lines that start on a line of real code."""
    starts = []
    offset = 0
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        body = line.strip()
        if len(body) >= MIN_LINE_CHARS and not body.startswith(("#", '"', "'")) and i + REGION_LINES < len(lines):
            starts.append((offset + len(line) - len(line.lstrip()), i))
        offset += len(line)
    rng.shuffle(starts)
    chosen: list[tuple[int, int]] = []
    taken: set[int] = set()
    line_ends = [0]
    for line in lines:
        line_ends.append(line_ends[-1] + len(line))
    for start, i in starts:
        if len(chosen) >= n:
            break
        if any(j in taken for j in range(i - 1, i + REGION_LINES + 1)):
            continue
        end = line_ends[i + REGION_LINES] - 1  # keep the last newline: the suffix stays on its line
        chosen.append((start, end))
        taken.update(range(i, i + REGION_LINES))
    return chosen


def make_trace(text: str, seconds: float, rate: float, seed: int) -> tuple[str, list[Key]]:
    """(initial document, keys): the regions are removed and typed back, later regions first so
    earlier offsets never move; the cursor jumps between them."""
    rng = random.Random(seed)
    mean_chars = REGION_LINES * 40
    regions = sorted(_regions(text, rng, max(1, int(seconds * rate / mean_chars) + 1)), reverse=True)
    doc = text
    for start, end in regions:
        doc = doc[:start] + doc[end:]
    keys: list[Key] = []
    elapsed = 0.0
    for start, end in regions:
        region = text[start:end]
        # the regions before this one are still missing from the document
        pos = start - sum(e - s for s, e in regions if s < start)
        for k, ch in enumerate(region):
            if elapsed >= seconds:
                return doc, keys
            delay = rng.uniform(1 - KEY_JITTER, 1 + KEY_JITTER) / rate
            if ch.isalpha() and rng.random() < TYPO_RATE:
                wrong = chr(ord("a") + (ord(ch.lower()) - ord("a") + 1) % 26) if ch.isascii() else "x"
                keys.append(Key(pos, pos, wrong, TYPO_NOTICE_S, False, k == 0))
                keys.append(Key(pos, pos + 1, "", delay, False, False))
                elapsed += TYPO_NOTICE_S + delay
            nxt = region[k + 1] if k + 1 < len(region) else ""
            word_end = (ch.isalnum() or ch == "_") and not (nxt.isalnum() or nxt == "_")
            pause = word_end or ch in ",:(\n"
            if pause:
                delay += rng.uniform(*WORD_PAUSE_S)
            keys.append(Key(pos, pos, ch, delay, pause, k == 0 and not (keys and keys[-1].start == pos)))
            elapsed += delay
            pos += 1
    return doc, keys


class TextModel:
    """The client's document: code-point offsets <-> LSP (line, UTF-16 character)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def apply(self, start: int, end: int, insert: str) -> dict:
        """Apply an edit; returns its LSP ``contentChanges`` entry (positions before the edit)."""
        change = {"range": {"start": self.position(start), "end": self.position(end)}, "text": insert}
        self.text = self.text[:start] + insert + self.text[end:]
        return change

    def position(self, offset: int) -> dict:
        line = self.text.count("\n", 0, offset)
        ls = self.text.rfind("\n", 0, offset) + 1
        return {"line": line, "character": utf16_len(self.text[ls:offset])}

    def line_span(self, offset: int) -> tuple[int, int]:
        ls = self.text.rfind("\n", 0, offset) + 1
        le = self.text.find("\n", offset)
        return ls, len(self.text) if le < 0 else le


def utf16_len(s: str) -> int:
    return len(s) + sum(1 for c in s if ord(c) > 0xFFFF)
