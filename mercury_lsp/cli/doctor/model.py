"""The model (loaded, and one infill run through it) and the tree-sitter grammars and queries."""

from __future__ import annotations

import time

from mercury_lsp.cli.doctor.report import Finding

# A fill small enough to take milliseconds on the embedded model: proves the weights, the
# tokenizer and the sampler work together, not what the model knows.
PROBE_PREFIX, PROBE_SUFFIX, PROBE_TOKENS = "def add(a, b):\n    return ", "\n", 8
GRAMMAR_PROBE = b"x"  # any text parses (with errors) in every grammar: the parser itself is tested
MS = 1000


def model(name: str | None, device: str, dtype: str) -> Finding:
    from mercury_engine import Engine
    from mercury_engine.errors import EngineError

    what = name or "the embedded model"
    t0 = time.perf_counter()
    try:
        engine = Engine.load(name, device=device, dtype=dtype)
    except (EngineError, OSError) as exc:
        fix = ("pass a model directory or a cached hub id (--model)" if name
               else "the wheel's model files are missing: reinstall mercury-lsp")
        return Finding("fail", "model", f"{what}: {exc}", fix)
    loaded = time.perf_counter()
    try:
        engine.infill(PROBE_PREFIX, PROBE_SUFFIX, PROBE_TOKENS)
    except EngineError as exc:
        return Finding("fail", "model", f"{what} loaded, but an infill failed: {exc}",
                       "report this with `mercury-lsp doctor` output")
    done = time.perf_counter()
    path = engine.path or what
    return Finding("ok", "model", f"{path} ({engine.device}, {engine.context_tokens}-token context): "
                   f"loaded in {(loaded - t0) * MS:.0f} ms, an infill in {(done - loaded) * MS:.0f} ms")


def grammars() -> list[Finding]:
    """Every tree-sitter grammar parses, and every next-edit query file compiles against it."""
    from tree_sitter import Query

    from mercury_lsp.next_edit.symbols import query_source
    from mercury_lsp.syntax import GRAMMARS, Grammars

    loaded = Grammars()
    parsed, missing, queries, broken = [], [], 0, []
    for name in GRAMMARS:
        parser = loaded.parser(name)
        if parser is None or parser.parse(GRAMMAR_PROBE).root_node is None:
            missing.append(name)
            continue
        parsed.append(name)
        try:
            source = query_source(name)
            if source is not None:
                Query(loaded.language(name), source)
                queries += 1
        except (OSError, ValueError, SyntaxError) as exc:  # tree-sitter raises QueryError (a ValueError)
            broken.append(f"{name} ({exc})")
    out = []
    if missing:
        out.append(Finding("fail", "grammars", f"cannot load {', '.join(missing)}: those files get "
                           "line-based windows and no next edits",
                           "pip install --force-reinstall mercury-lsp (its tree-sitter-* dependencies)"))
    else:
        out.append(Finding("ok", "grammars", f"{len(parsed)} tree-sitter grammars ({', '.join(parsed)})"))
    if broken:
        out.append(Finding("fail", "queries", f"next-edit queries that do not compile: {'; '.join(broken)}",
                           "reinstall mercury-lsp (the .scm files are package data)"))
    else:
        out.append(Finding("ok", "queries", f"{queries} next-edit query files compile"))
    return out
