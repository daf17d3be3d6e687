"""A call's argument list rebuilt for a changed signature (for ``locate``'s signature step).

The arguments of the old call are bound to the old signature's parameters (positional ones in
order, keywords by name) and written out again in the new signature's order:

* **added** parameter — the value the user passed at the call they edited (the example), as a
  positional argument where the new parameter sits; without an example, nothing is predicted;
* **removed** parameter — its argument, positional or keyword, is dropped;
* **reordered** parameters — the positional arguments are permuted; an argument that can no
  longer be positional (a parameter before it is not passed) becomes ``name=value``;
* **renamed** parameter (one name replaced, the others in place) — ``old=`` keywords become
  ``new=``; positional arguments stay.

The original spacing and line breaks are kept: a permutation replaces each argument in its own
slot, one argument added or dropped is spliced in or out with its separator; anything else is
written as ``a, b, c``.
"""

from __future__ import annotations

from mercury_lsp.next_edit.detect import Signature

ArgSpan = tuple[int, int]  # an argument's span, relative to the argument list's inside


def renamed_parameter(old: Signature, new: Signature) -> tuple[str, str] | None:
    """(old name, new name) when ``new`` renames exactly one parameter of ``old`` in place."""
    a, c = [n for n, _ in old.params], [n for n, _ in new.params]
    if len(a) != len(c):
        return None
    diff = [(x, y) for x, y in zip(a, c, strict=True) if x != y]
    if len(diff) == 1 and diff[0][1] not in a:
        return diff[0]
    return None


def is_reorder(old: Signature, new: Signature) -> bool:
    a, c = [n for n, _ in old.params], [n for n, _ in new.params]
    return a != c and sorted(a) == sorted(c)


def rebind(old: Signature, new: Signature, positional: list[str], keywords: list[tuple[str, str]],
           example: str | None) -> list[str] | None:
    """The new call's argument texts (``keywords``: (name, whole ``name=value`` text)); None when
    the call cannot be rewritten from the syntax alone (an added parameter with no example)."""
    old_names = [n for n, _ in old.params]
    if len(positional) > len(old_names):
        return None
    rename = renamed_parameter(old, new)
    by_position = dict(zip(old_names, positional, strict=False))
    if rename is not None and rename[0] in by_position:
        by_position[rename[1]] = by_position.pop(rename[0])
    keyword_names = {rename[1] if rename and k == rename[0] else k for k, _ in keywords}
    out: list[str] = []
    named: list[str] = []  # arguments that can no longer be positional: after the keywords
    for name, has_default in new.params:
        value = by_position.get(name)
        added = name not in old_names and (rename is None or name != rename[1])
        if value is None and added and not has_default and name not in keyword_names:
            if example is None:
                return None
            value = example
        if value is None:  # not passed here (a default, or a keyword): the rest go by name
            named.append("")
        elif named:
            named.append(f"{name}={value}")
        else:
            out.append(value)
    new_names = {n for n, _ in new.params}
    for k, text in keywords:
        if rename is not None and k == rename[0]:
            out.append(rename[1] + text[text.index("="):])
        elif k in new_names:
            out.append(text)
    return out + [t for t in named if t]


def splice(inner: str, spans: list[ArgSpan], old: list[str], new: list[str]) -> str | None:
    """The argument list's inside with ``old`` arguments (at ``spans``) replaced by ``new``,
    keeping the original layout where it can (module docstring); None when nothing changes."""
    if new == old:
        return None
    if len(new) == len(old):
        out = inner
        for (s, e), text in sorted(zip(spans, new, strict=True), reverse=True):
            out = out[:s] + text + out[e:]
        return out
    if len(new) == len(old) - 1:
        i = next((k for k in range(len(new)) if new[k] != old[k]), len(new))
        if new[i:] == old[i + 1:]:
            if i + 1 < len(spans):
                return inner[:spans[i][0]] + inner[spans[i + 1][0]:]
            prev = spans[i - 1][1] if i > 0 else 0
            return inner[:prev] + inner[spans[i][1]:]
    if len(new) == len(old) + 1:
        i = next((k for k in range(len(old)) if new[k] != old[k]), len(old))
        if new[i + 1:] == old[i:]:
            if i < len(spans):
                return inner[:spans[i][0]] + new[i] + ", " + inner[spans[i][0]:]
            if spans:
                return inner[:spans[-1][1]] + ", " + new[i] + inner[spans[-1][1]:]
            return new[i]
    return ", ".join(new)
