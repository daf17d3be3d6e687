"""The LSP shapes of a suggestion: an inline completion item, or one completion item for clients
without ghost text."""

from __future__ import annotations

from lsprotocol import types as lsp

from mercury_lsp.completion.service import Suggestion
from mercury_lsp.context import is_word_char
from mercury_lsp.documents import Document, PositionEncoding, units_len

LABEL_CHARS = 60  # longest completion label shown (the rest is elided)


def inline_items(doc: Document, s: Suggestion, enc: PositionEncoding) -> lsp.InlineCompletionList:
    """One item replacing the cursor's whole line (Copilot style): the range starts at the line's
    start so typed text keeps matching, and ends at its end so text after the cursor is kept
    (or absorbed) exactly."""
    line = doc.line_of(s.cursor)
    ls = doc.line_starts[line]
    le = ls + len(doc.line_text(line))
    text = doc.text
    insert = text[ls:s.cursor] + s.text + text[s.replace_end:le]
    rng = lsp.Range(lsp.Position(line, 0), lsp.Position(line, units_len(text[ls:le], enc)))
    return lsp.InlineCompletionList(items=[lsp.InlineCompletionItem(insert_text=insert, range=rng)])


def completion_items(doc: Document, s: Suggestion, enc: PositionEncoding, markdown: bool) -> lsp.CompletionList:
    """A single item for clients without ghost text: shows the suggestion, inserts it through a
    ``textEdit`` from the start of the word at the cursor, and ``filterText`` starts with that word
    so it stays visible while the user types."""
    line = doc.line_of(s.cursor)
    ls = doc.line_starts[line]
    le = ls + len(doc.line_text(line))
    text = doc.text
    ws = s.cursor
    while ws > ls and is_word_char(text[ws - 1]):
        ws -= 1
    typed = text[ws:s.cursor]
    first = s.text.split("\n", 1)[0].replace("\r", "")
    label = (typed + first).strip() or s.text.strip().split("\n", 1)[0]
    if len(label) > LABEL_CHARS:
        label = label[: LABEL_CHARS - 1] + "\u2026"
    new_text = typed + s.text + text[s.replace_end:le]
    rng = lsp.Range(lsp.Position(line, units_len(text[ls:ws], enc)),
                    lsp.Position(line, units_len(text[ls:le], enc)))
    item = lsp.CompletionItem(
        label=label, kind=lsp.CompletionItemKind.Text, detail="mercury", filter_text=typed + first,
        sort_text="0", preselect=True, insert_text_format=lsp.InsertTextFormat.PlainText,
        text_edit=lsp.TextEdit(range=rng, new_text=new_text),
        documentation=(lsp.MarkupContent(kind=lsp.MarkupKind.Markdown,
                                         value=f"```{doc.language_id}\n{typed + s.text}\n```")
                       if markdown else typed + s.text))
    return lsp.CompletionList(is_incomplete=True, items=[item])
