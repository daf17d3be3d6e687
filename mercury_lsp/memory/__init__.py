"""The repository memory: the workspace's code (files, open documents, recent edits) indexed in
the background, persisted per root, kept current; it proposes continuations of the longest
left context that matches (with counts and match lengths) and retrieves similar chunks and
definitions for the model's window. It never blocks a request and degrades to nothing rather
than fail.

Modules: ``tokens`` (code as 32-bit token ids), ``shard`` (suffix arrays over files, saved and
memory-mapped), ``scan`` (open documents and changed files, scanned directly), ``sources``
(which files, git- and ``.gitignore``-aware), ``store`` (one root: shards, dead files, the saved
manifest), ``indexer`` (the background thread), ``query``/``places``/``candidates`` (from a cursor
to continuations with features), ``parallel`` (the document's lines shaped like the typed one),
``chunks``/``retrieve`` (BM25 chunks and definitions), ``service`` (``Memory``: the API the daemon and the CLI call).
"""

from mercury_lsp.memory.candidates import Candidate, Features
from mercury_lsp.memory.query import Context
from mercury_lsp.memory.retrieve import Chunk
from mercury_lsp.memory.service import Memory, MemoryOptions, OpenDoc

__all__ = ["Candidate", "Chunk", "Context", "Features", "Memory", "MemoryOptions", "OpenDoc"]
