"""The real-repository completion benchmark (issue #24's "Benchmark" section).

Public, permissively licensed repositories (``repos.json``: split, pinned commit, licence,
language) are exported from local git mirrors, rest-of-line cases are sampled at token
boundaries (``cases``), and an outside LSP client (``client``) drives ``mercury-lsp serve`` with
each repository as its workspace, one arm of settings at a time (``arms``), beside two no-model
baselines the benchmark computes itself (``baselines``). ``run`` scores and reports.

Nothing here imports the daemon (``mercury_lsp``) or the model: the benchmark sees the server
only on the wire. ``docs/benchmarks/completion.md`` has the commands and the definitions.
"""
