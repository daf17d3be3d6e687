"""Code completion: one suggestion at the cursor, for inline completion and the completion
fallback.

Modules: ``service`` (``CompletionService``: supersede, cache, counters; runs on the event
loop), ``pipeline`` (parse, window, infill, shape, guard; runs on the engine worker), ``shaping``
(cuts and trims), ``cache`` (``SuggestionCache``), ``items`` (the LSP shapes).
"""

from mercury_lsp.completion.cache import SuggestionCache
from mercury_lsp.completion.items import completion_items, inline_items
from mercury_lsp.completion.pipeline import PipelineResult, run_pipeline
from mercury_lsp.completion.service import CompletionService, Suggestion
from mercury_lsp.completion.shaping import limit_lines, sanitize, shape, suffix_overlap

__all__ = ["CompletionService", "PipelineResult", "Suggestion", "SuggestionCache", "completion_items",
           "inline_items", "limit_lines", "run_pipeline", "sanitize", "shape", "suffix_overlap"]
