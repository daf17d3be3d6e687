"""NE5xx: the line at the cursor, finished (a cursor-region rewrite).

When the user stopped mid-line, the next edit is often the rest of that line: a name cut short
(``cut-short-name``, NE501), an ending like the document's lines that start the same way
(``like-line-ending``, NE502), or, with ``nextEdit.completeLineModel``, the model's refill of the
rest of the line (``model-line-ending``, NE503, only when nothing else is offered). Their edits
passed their own syntax check: the pipeline's guard runs on the other edits without them, so
that a completion's repair cannot cover for another edit that breaks the parse (a copy of the
half-typed line). The cursor's line is read once (``cursor.cursor_line``).
"""
