"""NE403 unimported-rename: a name whose import was replaced by an import of the same name with an
affix dropped or added, or by an import of its module, is renamed at its uses.

**What.** The imports of the newest edited document (``stale``) no longer bring a name they
brought before the history, and now bring one that is the old name with a prefix or suffix
dropped or added: each use in code becomes the new name (at most ``stale.MAX_SITES`` uses). Where
they bring its module instead (``from .keys import hashkey as _defaultkey`` -> ``from . import
keys``; ``import {parse} from './url'`` -> ``import * as url from './url'``), each use is
qualified: ``keys.hashkey``, ``url.parse``.

**Why.** Switching a compatibility import is done at the import line; the uses must follow or
they name nothing.

**Example.** ``from itertools import izip`` -> ``from six.moves import zip``: ``izip(a, b)``
becomes ``zip(a, b)``.
"""

from __future__ import annotations

from mercury_lsp.next_edit.query import Prediction
from mercury_lsp.next_edit.rules.base import Rule, RuleContext
from mercury_lsp.next_edit.rules.confidence import UNIMPORTED_RENAME
from mercury_lsp.next_edit.rules.imports.stale import stale_uses


def run(ctx: RuleContext) -> list[Prediction]:
    return [p for p in ctx.shared(stale_uses) if p.kind == RULE.kind]


RULE = Rule("NE403", "unimported-rename", "rename", UNIMPORTED_RENAME.value, run, __doc__)
