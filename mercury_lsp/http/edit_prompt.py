"""Inception's edit prompt, read back: the tagged sections of ``/v1/edit/completions``.

``<|current_file_content|>`` holds ``current_file_path: P`` and the file, with the region to
rewrite between ``<|code_to_edit|>`` and ``<|/code_to_edit|>`` and ``<|cursor|>`` in it (Zed
nests the region in the file; other clients send it as its own section after the file).
``<|edit_diff_history|>`` holds the user's recent edits as unified-diff hunks; undoing them on
the current text gives the text before them, which is what next-edit prediction compares.

Every string is a prompt (the OpenAPI document promises no more): a message without
``<|code_to_edit|>`` is all code to edit (the file's body when it has one), a region without
``<|cursor|>`` has the cursor at its end (with several, at the first; the others are dropped),
and a section left open runs to the end of the message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CURSOR = "<|cursor|>"
HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")


@dataclass(frozen=True)
class EditPrompt:
    path: str
    text: str  # the current file (tags and cursor removed)
    region: tuple[int, int]  # code_to_edit, offsets in ``text``
    cursor: int  # offset in ``text``
    before: str | None  # ``text`` with the history's hunks undone (None: no usable history)


def section(content: str, tag: str) -> tuple[int, int] | None:
    """(start, end) of the body between ``<|tag|>`` and ``<|/tag|>`` (one newline after the
    opening tag is part of the tag)."""
    open_, close = f"<|{tag}|>", f"<|/{tag}|>"
    i = content.find(open_)
    if i < 0:
        return None
    start = i + len(open_)
    if content.startswith("\n", start):
        start += 1
    end = content.find(close, start)
    return start, end if end >= 0 else len(content)


def _strip_close(content: str, tag: str, end: int) -> int:
    """Offset after ``<|/tag|>`` at ``end`` and the newline that follows it."""
    after = end + len(f"<|/{tag}|>")
    return after + 1 if content.startswith("\n", after) else after


def _file_body(content: str, file_span: tuple[int, int] | None) -> tuple[str, tuple[int, int] | None]:
    """The file's path and where its text lies (after the ``current_file_path:`` line)."""
    if file_span is None:
        return "", None
    start, end = file_span
    if not content.startswith("current_file_path:", start):
        return "", file_span
    line_end = content.find("\n", start, end)
    line_end = end if line_end < 0 else line_end
    path = content[start:line_end].removeprefix("current_file_path:").strip()
    return path, (min(end, line_end + 1), end)


def _cursor(raw: str) -> tuple[str, int]:
    """The region without ``<|cursor|>`` marks, and the cursor (the first mark, else the end)."""
    at = raw.find(CURSOR)
    region = raw.replace(CURSOR, "")
    return region, at if at >= 0 else len(region)


def parse_edit_prompt(content: str) -> EditPrompt:
    path, body = _file_body(content, section(content, "current_file_content"))
    tagged = section(content, "code_to_edit")
    if tagged is None:  # all of it is the code to edit
        span = body or (0, len(content))
        region, at = _cursor(content[span[0]:span[1]])
        text, start = region, 0
    else:
        region, at = _cursor(content[tagged[0]:tagged[1]])
        if body is None:
            text, start = region, 0
        elif (opened := content.rfind("<|code_to_edit|>", body[0], tagged[0])) >= 0 and tagged[0] < body[1]:
            # nested (Zed): the file around the region
            head = _cursor(content[body[0]:opened])[0]
            tail = _cursor(content[_strip_close(content, "code_to_edit", tagged[1]):body[1]])[0] \
                if tagged[1] < body[1] else ""
            text, start = head + region + tail, len(head)
        else:  # the region as its own section: find it in the file
            file_text = _cursor(content[body[0]:body[1]])[0]
            found = file_text.find(region)
            text, start = (file_text, found) if found >= 0 else (region, 0)
    history = section(content, "edit_diff_history")
    before = undo_hunks(text, content[history[0]:history[1]]) if history else None
    return EditPrompt(path=path, text=text, region=(start, start + len(region)), cursor=start + at,
                      before=before if before != text else None)


def undo_hunks(text: str, history: str) -> str | None:
    """``text`` with the history's hunks undone, newest first; hunks whose new side is not found
    in ``text`` are skipped. None when the history has no hunk."""
    hunks: list[tuple[str, str]] = []
    old: list[str] | None = None
    new: list[str] = []
    for line in history.split("\n"):
        if HUNK.match(line):
            if old is not None:
                hunks.append(("".join(old), "".join(new)))
            old, new = [], []
        elif old is not None and line[:1] in (" ", "-", "+"):
            if line[0] != "+":
                old.append(line[1:] + "\n")
            if line[0] != "-":
                new.append(line[1:] + "\n")
        elif old is not None:  # the hunk ended (a fence, prose, the next event)
            hunks.append(("".join(old), "".join(new)))
            old, new = None, []
    if old is not None:
        hunks.append(("".join(old), "".join(new)))
    if not hunks:
        return None
    for old_text, new_text in reversed(hunks):
        if old_text == new_text:
            continue
        i = text.rfind(new_text) if new_text else -1
        if i < 0:
            continue
        text = text[:i] + old_text + text[i + len(new_text):]
    return text
