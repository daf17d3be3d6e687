"""What the syntax guard shows at the pause points of the lsp_latency trace, per guard setting.

    nice -n 10 python -m benchmarks.lsp.guard_fallback                 # embedded model, 160 s trace
    python -m benchmarks.lsp.guard_fallback --model tiny --seconds 10

No daemon and no timing: the typing trace of ``benchmarks/lsp/latency`` (same files, seed and
length) is replayed into a document, and at every word pause the completion pipeline
(``mercury_lsp.completion.run_pipeline``: window, infill, shaping, syntax guard) runs on the
document as it stands. The model answers each point once (temperature 0); every ``syntaxGuard``
setting then shapes and guards that same answer, so the columns differ by the guard alone.

Reported per setting: answers left empty (and of them, by the guard), answers the guard cut to
a prefix of their first line, and **typed next**: shown answers whose first line the user then
typed exactly (the trace's next keys, typos and their backspaces applied, up to the line's end
or the next cursor jump) — the share of shown text that was right, so a fallback showing more
but worse text shows up as a lower share.

Prints a table, writes benchmarks/results/guard_fallback.json and ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from benchmarks import RESULTS as RESULTS_DIR
from benchmarks.lsp.latency import TRACE_SECONDS, load_traces
from benchmarks.lsp.typing_trace import Key, TextModel

RESULTS = RESULTS_DIR / "guard_fallback.json"
GUARDS = ("drop", "prefix")  # the old rule, the default


class OnceSession:
    """An engine session that answers each (prefix, suffix) once: every guard setting shapes the
    same model answer."""

    def __init__(self, session) -> None:
        self.session = session
        self.context_tokens = session.context_tokens
        self.chars_per_token = session.chars_per_token
        self.answers: dict = {}

    def infill(self, spec, cancel):
        key = (spec.prefix, spec.suffix, spec.max_tokens, spec.options.single_line)
        if key not in self.answers:
            self.answers[key] = self.session.infill(spec, cancel)
        return self.answers[key]


def typed_next(keys: list[Key], i: int) -> str:
    """What the user types after key ``i`` up to the end of the line or the next cursor jump."""
    out: list[str] = []
    for key in keys[i + 1:]:
        if key.jump:
            break
        if key.insert:
            if key.insert == "\n":
                break
            out.append(key.insert)
        elif out:
            out.pop()  # the backspace after a typo
    return "".join(out)


def replay(session, traces, settings_for) -> dict[str, dict]:
    from mercury_lsp.completion import run_pipeline
    from mercury_lsp.documents import DocumentStore
    from mercury_lsp.syntax import Grammars, grammar_for

    grammars = Grammars()
    stats = {g: dict(points=0, empty=0, guard_dropped=0, guard_prefix=0, shown=0, typed_next=0) for g in GUARDS}
    for uri, doc, keys in traces:
        model = TextModel(doc)
        for i, key in enumerate(keys):
            model.apply(key.start, key.end, key.insert)
            if not key.pause:
                continue
            cursor = key.start + len(key.insert)
            truth = typed_next(keys, i)
            for guard in GUARDS:
                settings = settings_for(guard)
                snap = DocumentStore(grammar_for).open(uri, "python", 1, model.text).snapshot(settings.syntax_max_bytes)
                r = run_pipeline(session, snap, cursor, settings, grammars, None)
                s = stats[guard]
                s["points"] += 1
                s["empty"] += not r.text
                s["guard_dropped"] += r.guard_dropped
                s["guard_prefix"] += r.guard_prefix
                if r.text:
                    s["shown"] += 1
                    first = r.text.split("\n", 1)[0]
                    s["typed_next"] += bool(first.strip()) and truth.startswith(first)
    for s in stats.values():
        s["typed_next_share"] = round(s["typed_next"] / s["shown"], 3) if s["shown"] else None
    return stats


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default=None, help="'tiny' (random weights), a checkpoint directory (default: embedded)")
    p.add_argument("--seconds", type=float, default=TRACE_SECONDS, help="typing time (lsp_latency's default)")
    p.add_argument("--rate", type=float, default=8.0)
    p.add_argument("--seed", type=int, default=17)
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args(argv)
    args.files = None
    from mercury_lsp.backend.local import load_session
    from mercury_lsp.config import CompletionOptions, MemorySettings, Settings
    from mercury_lsp.engine_client import LoadSpec

    tmp = None
    model = args.model
    if model == "tiny":
        from mercury_train.testing import make_tiny_checkpoint

        tmp = tempfile.TemporaryDirectory()
        model = str(make_tiny_checkpoint(Path(tmp.name) / "tiny"))
    session = load_session(LoadSpec(model, threads=1))
    traces = load_traces(args)
    # The guards judge the model's drafts: shown ungated, with no repository memory in front of them.
    drafts = CompletionOptions(min_probability=0.0, identifier_check=False, model_drafts="fallback")
    stats = replay(OnceSession(session), traces,
                   lambda g: Settings(syntax_guard=g, completion=drafts, memory=MemorySettings(enabled=False)))
    session.close()
    if tmp is not None:
        tmp.cleanup()
    result = {"model": args.model or "embedded", "seconds": args.seconds, "seed": args.seed,
              "files": [Path(t[0]).name for t in traces], "guards": stats}
    print(f"guard_fallback: model={result['model']} files={','.join(result['files'])}")
    print(f"  {'syntaxGuard':<24}" + "".join(f"{g:>10}" for g in GUARDS))
    for label, key in (("pause points", "points"), ("empty answers", "empty"), ("  left empty by the guard", "guard_dropped"),
                       ("cut to a prefix", "guard_prefix"), ("shown", "shown"), ("typed next (exact)", "typed_next"),
                       ("typed next / shown", "typed_next_share")):
        print(f"  {label:<24}" + "".join(f"{str(stats[g][key]):>10}" for g in GUARDS))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
