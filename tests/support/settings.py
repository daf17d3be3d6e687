"""Settings for tests of the model's drafts: the completion tests drive the model path (shaping,
the syntax guard, the confident part, the cache, prefetch) with fake sessions and the tiny
model, whose drafts the shipped precision gate would hold back and whose names the identifier
check would cut. They get the drafts as the model writes them, with no repository memory (the
memory's own tests, tests/mercury_lsp/memory and tests/mercury_lsp/completion/test_memory_*,
turn it on)."""

from __future__ import annotations

from mercury_lsp.config import CompletionOptions, MemorySettings, Settings

MODEL_DRAFTS_RAW = {"completion": {"minProbability": 0, "identifierCheck": False, "modelDrafts": "fallback"},
                    "memory": {"enabled": False}}


def drafts(**fields) -> Settings:
    """``Settings(**fields)`` with the model's drafts shown ungated and no memory."""
    return Settings(completion=CompletionOptions(min_probability=0.0, identifier_check=False, model_drafts="fallback"),
                    memory=MemorySettings(enabled=False), **fields)
