"""Unified diffs: parse one (several files), and apply it forwards or backwards.

A user's first edit arrives as a patch, and the files it names may or may not contain the edit
yet (``git diff > p.patch`` is taken *after* editing). ``resolve`` tries both directions and
says which one held: ``"applied"`` (the file already has the edit: its text is the after side
and the before side is the patch undone) or ``"not applied"`` (the file is the before side).
Hunks must match exactly (no fuzz); a hunk may sit at another line than its header says, the
nearest match wins, as with ``patch``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
NULL_PATH = "/dev/null"
PatchState = Literal["applied", "not applied"]


class PatchError(ValueError):
    """A diff that cannot be read or does not apply (message for the user)."""


@dataclass
class Line:
    tag: str  # " ", "-" or "+"
    text: str  # without its line ending
    eol: bool = True  # False after "\ No newline at end of file"


@dataclass
class Hunk:
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    lines: list[Line] = field(default_factory=list)

    def side(self, tag: str) -> list[Line]:
        return [ln for ln in self.lines if ln.tag in (" ", tag)]


@dataclass
class FilePatch:
    old_path: str | None  # None: a new file
    new_path: str | None  # None: a deleted file
    hunks: list[Hunk] = field(default_factory=list)
    git: bool = False  # "diff --git" headers: paths carry a/ and b/ prefixes

    @property
    def path(self) -> str:
        p = self.new_path if self.new_path is not None else self.old_path
        return p or ""

    @property
    def display(self) -> str:
        """The path without git's a/ or b/ prefix."""
        p = self.path
        return p[2:] if self.git and p[:2] in ("a/", "b/") else p

    def candidates(self) -> list[str]:
        """Relative paths this patch may name (with and without a leading a/ or b/ component)."""
        out = []
        for p in (self.new_path, self.old_path):
            if not p:
                continue
            out.append(p)
            head, sep, rest = p.partition("/")
            if sep and rest:
                out.append(rest)
        return list(dict.fromkeys(out))


def _path(raw: str) -> str | None:
    p = raw.strip().split("\t")[0]
    if p.startswith('"') and p.endswith('"'):
        p = p[1:-1]
    return None if p == NULL_PATH else p


def _count(group: str | None) -> int:
    return 1 if group is None else int(group)  # "@@ -3 +3 @@": one line


def parse_patch(text: str) -> list[FilePatch]:
    """Every file of a unified diff (git or plain). Raises PatchError when it is not one."""
    files: list[FilePatch] = []
    cur: FilePatch | None = None
    hunk: Hunk | None = None
    rem_old = rem_new = 0
    git = False
    pending_old: str | None = None
    lines = text.splitlines()
    for n, raw in enumerate(lines, 1):
        if hunk is not None and (rem_old > 0 or rem_new > 0):
            tag = raw[:1]
            if raw == "":  # an empty context line whose leading space was stripped
                tag, body = " ", ""
            else:
                body = raw[1:]
            if tag == " ":
                rem_old, rem_new = rem_old - 1, rem_new - 1
            elif tag == "-":
                rem_old -= 1
            elif tag == "+":
                rem_new -= 1
            elif tag == "\\":
                if hunk.lines:
                    hunk.lines[-1].eol = False
                continue
            else:
                raise PatchError(f"line {n}: malformed hunk line {raw[:60]!r} (the hunk expects {rem_old} "
                                 f"more old and {rem_new} more new lines)")
            if rem_old < 0 or rem_new < 0:
                raise PatchError(f"line {n}: the hunk has more lines than its header says")
            hunk.lines.append(Line(tag, body))
            continue
        if raw.startswith("\\") and hunk is not None:
            if hunk.lines:
                hunk.lines[-1].eol = False
            continue
        if raw.startswith("diff --git "):
            git = True
            cur, hunk = None, None
            continue
        if raw.startswith("--- "):
            pending_old = _path(raw[4:]) or NULL_PATH
            continue
        if raw.startswith("+++ "):
            old = None if pending_old in (None, NULL_PATH) else pending_old
            cur = FilePatch(old, _path(raw[4:]), git=git)
            files.append(cur)
            hunk, pending_old = None, None
            continue
        m = HUNK.match(raw)
        if m is not None:
            if cur is None:
                cur = FilePatch(None, None)
                files.append(cur)
            hunk = Hunk(int(m.group(1)), _count(m.group(2)), int(m.group(3)), _count(m.group(4)))
            cur.hunks.append(hunk)
            rem_old, rem_new = hunk.old_len, hunk.new_len
            continue
        # anything else ("index ...", "new file mode", prose between files) is a header
    if hunk is not None and (rem_old > 0 or rem_new > 0):
        raise PatchError(f"the last hunk is truncated (expected {rem_old} more old and {rem_new} more new lines)")
    files = [f for f in files if f.hunks]
    if not files:
        raise PatchError("no hunks found (expected a unified diff with @@ ... @@ lines)")
    return files


def _reverse(h: Hunk) -> Hunk:
    flip = {"-": "+", "+": "-", " ": " "}
    return Hunk(h.new_start, h.new_len, h.old_start, h.old_len,
                [Line(flip[ln.tag], ln.text, ln.eol) for ln in h.lines])


def _matches(src: list[str], at: int, old: list[Line]) -> bool:
    if at < 0 or at + len(old) > len(src):
        return False
    return all(src[at + i].rstrip("\r\n") == ln.text for i, ln in enumerate(old))


def apply_hunks(text: str, hunks: list[Hunk], reverse: bool = False) -> tuple[str, bool]:
    """(``text`` with the hunks applied, whether every hunk sat where its header says).

    Raises PatchError naming the first hunk that does not match."""
    src = text.splitlines(keepends=True)
    newline = "\r\n" if src and src[0].endswith("\r\n") else "\n"
    out: list[str] = []
    pos = 0
    exact = True
    for i, h in enumerate(hunks, 1):
        h = _reverse(h) if reverse else h
        old = h.side("-")
        want = h.old_start - 1 if h.old_len else h.old_start
        found = None
        for delta in range(0, len(src) + 1):
            for at in ((want + delta, want - delta) if delta else (want,)):
                if at >= pos and _matches(src, at, old):
                    found = at
                    break
            if found is not None:
                break
        if found is None:
            raise PatchError(f"hunk {i} (line {h.old_start}) does not apply")
        exact = exact and found == want
        out.extend(src[pos:found])
        taken = src[found:found + len(old)]
        k = 0
        for ln in h.lines:
            if ln.tag == "+":
                out.append(ln.text + (newline if ln.eol else ""))
            elif ln.tag == " ":
                kept = taken[k]
                out.append(kept if ln.eol or not kept.endswith("\n") else kept.rstrip("\r\n"))
                k += 1
            else:
                k += 1
        pos = found + len(old)
    out.extend(src[pos:])
    return "".join(out), exact


def resolve(text: str, fp: FilePatch) -> tuple[str, str, PatchState]:
    """(before, after, state) for a file's current ``text`` and its patch, whichever way it holds."""
    forward = backward = None
    try:
        forward = apply_hunks(text, fp.hunks)
    except PatchError as exc:
        err = exc
    try:
        backward = apply_hunks(text, fp.hunks, reverse=True)
    except PatchError:
        pass
    if forward is None and backward is None:
        raise PatchError(f"{err}, and the file does not contain the edit either") from None
    if backward is not None and (forward is None or backward[1] or not forward[1]):
        return backward[0], text, "applied"
    assert forward is not None
    return text, forward[0], "not applied"
