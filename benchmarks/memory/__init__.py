"""Measurements of the repository memory (``mercury_lsp/memory``) in process: fitting the ranker
on the completion benchmark's dev cases (``fit_ranker``, with the model's features from
``model_features``), the memory's structures side by side (``structures``), its scale at 1k / 10k /
50k files (``scale``) and its block spans (``blocks``). They import the daemon's code, unlike the
completion benchmark (``benchmarks/completion``), which sees the server only on the wire.
docs/memory.md has their figures and commands.
"""
