"""Inception's edit prompt, read back: the tagged sections of ``/v1/edit/completions``.

``<|current_file_content|>`` holds ``current_file_path: P`` and the file, with the region to
rewrite between ``<|code_to_edit|>`` and ``<|/code_to_edit|>`` and ``<|cursor|>`` in it (Zed
nests the region in the file; other clients send it as its own section after the file).
``<|edit_diff_history|>`` holds the user's recent edits as unified-diff hunks; undoing them on
the current text gives the text before them, which is what next-edit prediction compares.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mercury_lsp.http.errors import ApiError

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
    if end < 0:
        raise ApiError(400, f"the {open_} section is not closed with {close}", param="messages",
                       code="invalid_edit_prompt")
    return start, end


def _strip_close(content: str, tag: str, end: int) -> int:
    """Offset after ``<|/tag|>`` at ``end`` and the newline that follows it."""
    after = end + len(f"<|/{tag}|>")
    return after + 1 if content.startswith("\n", after) else after


def parse_edit_prompt(content: str) -> EditPrompt:
    file_span = section(content, "current_file_content")
    edit_span = section(content, "code_to_edit")
    if edit_span is None:
        raise ApiError(400, "the message has no <|code_to_edit|> section", param="messages",
                       code="invalid_edit_prompt")
    region_raw = content[edit_span[0]:edit_span[1]]
    if region_raw.count(CURSOR) != 1:
        raise ApiError(400, "<|code_to_edit|> must contain <|cursor|> exactly once", param="messages",
                       code="invalid_edit_prompt")
    at = region_raw.index(CURSOR)
    region = region_raw.replace(CURSOR, "")
    path = ""
    if file_span is None:
        text, start = region, 0
    else:
        body_start, body_end = file_span
        body = content[body_start:body_end]
        if body.startswith("current_file_path:"):
            line, _, body = body.partition("\n")
            path = line.removeprefix("current_file_path:").strip()
            body_start = body_end - len(body)
        if body_start <= edit_span[0] < body_end:  # nested (Zed): the file around the region
            tail = content[_strip_close(content, "code_to_edit", edit_span[1]):body_end]
            head = content[body_start:content.rfind("<|code_to_edit|>", body_start, edit_span[0])]
            text, start = head + region + tail, len(head)
        else:  # the region as its own section: find it in the file
            found = body.find(region)
            text, start = (body, found) if found >= 0 else (region, 0)
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
