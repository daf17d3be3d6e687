"""Block spans from the repository memory, on the dev repositories: how often the memory's body
for a block header passes the precision gate, and how often its first line is the right one.

    python -m benchmarks.memory.blocks [--cases-dir DIR] [--per-repo 40]

Cases: in each dev checkout of ``fit_ranker``'s cases folder, lines that open a block (ending
with ``:`` or ``{``) followed by a deeper line; the cursor at the end of the header, the
document without the body's first line (the user has not written it yet). The memory is asked
as the pipeline asks it for a block span; a suggestion counts as right when its first line is
the body's first line (blanks aside). Prints the figures and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from benchmarks.memory.fit_ranker import default_cases_dir
from mercury_lsp.completion.rank import DocNames, rank
from mercury_lsp.config import Settings
from mercury_lsp.memory import Context, Memory, MemoryOptions
from mercury_lsp.memory.sources import is_test_path
from mercury_lsp.syntax import EXTENSIONS

PER_REPO = 40
FILES_PER_REPO = 60
SEED = 0


def headers(path: Path) -> list[int]:
    lines = path.read_text(encoding="utf-8").split("\n")
    out = []
    for i in range(len(lines) - 1):
        a, b = lines[i], lines[i + 1]
        if a.rstrip().endswith((":", "{")) and b.strip() and len(b) - len(b.lstrip()) > len(a) - len(a.lstrip()):
            out.append(i)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases-dir", type=Path, default=None)
    ap.add_argument("--per-repo", type=int, default=PER_REPO)
    args = ap.parse_args(argv)
    root = args.cases_dir or default_cases_dir()
    dev = {json.loads(line)["repo"] for line in (root / "cases.dev.jsonl").read_text().splitlines() if line.strip()}
    gate = Settings().completion.min_probability
    rng = random.Random(SEED)
    n = shown = right = oracle = 0
    for repo in sorted(dev):
        checkout = root / repo.replace("/", "+")
        mem = Memory([checkout], MemoryOptions(persist=False))
        mem.start()
        mem.wait_built()
        files = sorted(Path(p) for p in mem.stores[0].where if Path(p).suffix in EXTENSIONS)
        cases = [(f, i) for f in rng.sample(files, min(FILES_PER_REPO, len(files))) for i in headers(f)]
        rng.shuffle(cases)
        for f, i in cases[:args.per_repo]:
            text = f.read_text(encoding="utf-8")
            lines = text.split("\n")
            start = sum(len(x) + 1 for x in lines[:i])
            cursor = start + len(lines[i].rstrip())
            body = start + len(lines[i]) + 1
            doc = text[:cursor] + "\n" + text[body + len(lines[i + 1]) + 1:]
            ctx = Context(f.as_uri(), doc, cursor, EXTENSIONS.get(f.suffix, ""), is_test_path(str(f)), None, True)
            ranked = [s for s in rank(mem.candidates(ctx), None, lines[i][:len(lines[i].rstrip())],
                                      doc=DocNames.of(doc, cursor, ctx.language)) if s.text.startswith("\n")]
            want = lines[i + 1].strip()
            n += 1
            oracle += any(s.text.split("\n")[1].strip() == want for s in ranked)
            if ranked and ranked[0].probability >= gate:
                shown += 1
                right += ranked[0].text.split("\n")[1].strip() == want
        mem.close()
        print(f"{repo}: {n} cases so far", file=sys.stderr, flush=True)
    print(f"{n} block headers: shown {shown / n:.1%}, first line right {right / max(1, shown):.1%} of shown, "
          f"{right / n:.1%} of all; right among the candidates {oracle / n:.1%}")
    print(json.dumps({"memory_blocks": {"cases": n, "shown": round(shown / n, 4),
                                        "precision": round(right / max(1, shown), 4), "oracle": round(oracle / n, 4)}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
