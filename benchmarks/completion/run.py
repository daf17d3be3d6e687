"""Run the real-repository completion benchmark: arms of the daemon, and the no-model baselines,
on the cases of one split.

    python -m benchmarks.completion.run --split dev [--limit N] [--arm NAME ...] [--repo OWNER/NAME ...]
        [--out benchmarks/results/completion_repos.json] [--model DIR] [--threads N]

Before: the mirrors fetched and ``python -m benchmarks.completion.cases`` run (it exports the
checkouts and writes the cases; both stay in ``$XDG_CACHE_HOME/mercury-lsp-bench/completion/``).

For each repository and server arm (``arms.py``) a fresh ``mercury-lsp serve`` (this tree's, over
stdio; ``session.py``) gets the checkout as its workspace and the arm's settings as
``initializationOptions``; the runner waits until it is ready, makes one untimed request in a
file no case uses, then runs the cases one by one: the cut text on disk and in ``didOpen``, one
automatic ``textDocument/inlineCompletion`` at the cursor, its first item applied to the cut
document (``text.score_item``), the file restored. Baseline arms are computed here on the same
cases. ``--limit N`` takes N cases of each repository in a stable pseudo-random order (sha256 of
the case's place), the same N for every arm.

Prints a table per group (all cases, test files, other files, each language, each repository;
a row per arm), writes the figures as JSON to ``--out`` and a PNG beside it, each case's result
(one JSON line per arm and case) to ``<cache>/results/<out's stem>.cases.jsonl`` (outside git:
it quotes the suggestions), and ends with one JSON line of headline figures. Every held-out split (``heldout``, ``heldout2``, ...: all but ``dev``) runs server arms only with ``--final`` (each is
scored once, at the end).
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.completion import report
from benchmarks.completion.arms import ARMS, Arm, resolve
from benchmarks.completion.baselines import MIN_MATCH_30, RepoIndex
from benchmarks.completion.client import ServerGone
from benchmarks.completion.session import (
    INDEX_TIMEOUT_S,
    LOAD_TIMEOUT_S,
    REPO_ROOT,
    REQUEST_TIMEOUT_S,
    Session,
    server_argv,
)
from benchmarks.completion.sources import (
    FINAL_SPLITS,
    SPLITS,
    BenchmarkError,
    Repo,
    cache_dir,
    checkout_lock,
    load_repos,
    sha1,
    source_files,
)
from benchmarks.completion.text import cut, score_item

RESULTS = REPO_ROOT / "benchmarks" / "results"
PROGRESS_EVERY = 25


def default_out(split: str) -> Path:
    return RESULTS / ("completion_repos.json" if split == "dev" else f"completion_repos_{split}.json")


def load_cases(root: Path, split: str) -> list[dict]:
    path = root / f"cases.{split}.jsonl"
    if not path.is_file():
        raise BenchmarkError(f"no cases at {path}: build them with `python -m benchmarks.completion.cases` "
                             "(after fetching the mirrors; see docs/benchmarks/completion.md)")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def limited(cases: list[dict], limit: int | None) -> list[dict]:
    if limit is None:
        return cases
    order = sorted(cases, key=lambda c: hashlib.sha256(
        f"{c['repo']}:{c['path']}:{c['line']}:{c['character']}".encode()).hexdigest())
    keep = {id(c) for c in order[:limit]}
    return [c for c in cases if id(c) in keep]


def baseline(arm: Arm, index: RepoIndex, files: dict[str, str], case: dict, novel: bool) -> dict:
    c = cut(files[case["path"]], case["line"], case["character"])
    original = case["prefix_line_text"] + case["target"]
    if arm.name == "line_copy":
        g = index.line_copy(case["prefix_line_text"], original)
    else:
        g = index.longest_suffix(case["path"], c)
        if arm.name == "longest_suffix_30" and g.match_chars < MIN_MATCH_30:
            g = type(g)("", g.match_chars, g.count, g.occurrences)
    item = {"insertText": g.continuation} if g.continuation else None
    out = score_item(c, case["line"], case["character"], item, "utf-32")
    return report.case_result(case, out, None, novel, match_chars=g.match_chars, count=g.count)


def warm_up_file(files: dict[str, str], cases: list[dict]) -> str | None:
    """A source file no case uses, of the first case's extension when there is one."""
    used = {c["path"] for c in cases}
    spare = [p for p in files if p not in used]
    ext = Path(cases[0]["path"]).suffix if cases else ""
    same = [p for p in spare if Path(p).suffix == ext]
    return (same or spare or [None])[0]


def run_server_arm(arm: Arm, repo: Repo, checkout: Path, files: dict[str, str], cases: list[dict],
                   novel: list[bool], args) -> tuple[list[dict], dict]:
    log = (args.log_dir or cache_dir() / "logs") / report.key(arm.name) / f"{repo.slug}.log"
    t0 = time.monotonic()
    argv = shlex.split(args.server_cmd) if args.server_cmd else server_argv(args.model, args.threads, args.device)
    s = Session(arm, checkout, argv, log,
                args.load_timeout, args.index_timeout)
    stats: dict = {"ready_s": round(s.ready_s, 1), "encoding": s.encoding, "log": str(log)}
    results: list[dict] = []
    try:
        for m in s.client.messages:
            print(f"  [{arm.name} {repo.name}] showMessage: {m.get('message')}", file=sys.stderr, flush=True)
        problems = s.settings_problems()
        if problems and not args.allow_setting_problems:
            raise BenchmarkError(f"arm {arm.name}: the server ignored settings ({problems[0]}); fix the arm in "
                                 "benchmarks/completion/arms.py, or pass --allow-setting-problems")
        shown_before = len(s.client.messages)
        if (w := warm_up_file(files, cases)) is not None:
            s.warm_up(w)
        t1 = time.monotonic()
        for i, (case, nov) in enumerate(zip(cases, novel, strict=True)):
            _, out, ms, err = s.run_case(case, args.request_timeout)
            results.append(report.case_result(case, out, ms, nov, **({"error": err} if err else {})))
            if (i + 1) % PROGRESS_EVERY == 0:
                print(f"  [{arm.name} {repo.name}] {i + 1}/{len(cases)}", file=sys.stderr, flush=True)
        stats["seconds_per_case"] = round((time.monotonic() - t1) / max(1, len(cases)), 3)
        stats["rss_mb"] = round(s.client.rss_mb(), 1)
        stats["peak_mb"] = round(s.client.peak_mb(), 1)
        stats["messages"] = [m.get("message") for m in s.client.messages]
        stats["responses_not_exactly_one"] = {k: v for k, v in s.client.responses_seen.items() if v != 1}
        for m in s.client.messages[shown_before:]:
            print(f"  [{arm.name} {repo.name}] showMessage: {m.get('message')}", file=sys.stderr, flush=True)
    finally:
        s.close()
    stats["wall_s"] = round(time.monotonic() - t0, 1)
    return results, stats


def git_state() -> dict:
    def git(*a: str) -> str:
        r = subprocess.run(["git", "-C", str(REPO_ROOT), *a], capture_output=True, text=True)
        return r.stdout.strip()

    return {"commit": git("rev-parse", "HEAD"), "dirty": bool(git("status", "--porcelain", "--", "mercury_lsp"))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=SPLITS, default="dev")
    ap.add_argument("--limit", type=int, default=None, help="N cases per repository (a stable subsample)")
    ap.add_argument("--arm", action="append", default=None, metavar="NAME",
                    help=f"an arm of arms.py (repeatable; default: daemon and the baselines); one of {', '.join(ARMS)}")
    ap.add_argument("--repo", action="append", default=None, metavar="OWNER/NAME", help="only these repositories")
    ap.add_argument("--repos", type=Path, default=None, help="repos.json to use (default: the committed one)")
    ap.add_argument("--cases-dir", type=Path, default=None, help="cases and checkouts (default: the cache folder)")
    ap.add_argument("--out", type=Path, default=None, help="results JSON (default: benchmarks/results/completion_repos*.json)")
    ap.add_argument("--model", default=None, help="serve --model (default: the embedded model)")
    ap.add_argument("--threads", type=int, default=None, help="serve --threads (default: the daemon's own choice)")
    ap.add_argument("--device", default=None)
    ap.add_argument("--server-cmd", default=None, metavar="COMMAND",
                    help="the whole server command line instead, one string (split as a shell would)")
    ap.add_argument("--request-timeout", type=float, default=REQUEST_TIMEOUT_S, help="seconds, per request")
    ap.add_argument("--load-timeout", type=float, default=LOAD_TIMEOUT_S, help="seconds until mercury/status ready")
    ap.add_argument("--index-timeout", type=float, default=INDEX_TIMEOUT_S,
                    help="seconds until the server's work-done progress (e.g. indexing) has ended")
    ap.add_argument("--log-dir", type=Path, default=None, help="the servers' stderr (default: <cache>/logs)")
    ap.add_argument("--allow-setting-problems", action="store_true")
    ap.add_argument("--final", action="store_true", help="allow server arms on a held-out split (every split but dev: once, at the end)")
    args = ap.parse_args(argv)
    try:
        arms = resolve(args.arm)
        if args.split in FINAL_SPLITS and not args.final and any(a.kind == "server" for a in arms):
            raise BenchmarkError(f"the {args.split} split is scored once, at the end: server arms need --final")
        root = args.cases_dir or cache_dir()
        repos = [r for r in load_repos(*([args.repos] if args.repos else []), split=args.split)
                 if not args.repo or r.name in args.repo]
        if args.repo and len(repos) != len(set(args.repo)):
            raise BenchmarkError(f"not repositories of the {args.split} split: "
                                 f"{sorted(set(args.repo) - {r.name for r in repos})}")
        all_cases = load_cases(root, args.split)
        data, per_case = run(arms, repos, root, all_cases, args)
    except (BenchmarkError, ValueError, ServerGone, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = args.out or default_out(args.split)
    print(report.tables(data["arms"]))
    details = (args.cases_dir or cache_dir()) / "results" / f"{out.stem}.cases.jsonl"
    details.parent.mkdir(parents=True, exist_ok=True)
    details.write_text("".join(json.dumps({"arm": a, **r}, ensure_ascii=False) + "\n"
                               for a, rs in per_case.items() for r in rs), encoding="utf-8")
    data["case_results"] = str(details)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(tmp, out)
    report.plot(out.with_suffix(".png"), data["arms"], f"completion, {args.split} split")
    print(f"\n-> {out} (each case's result: {details})")
    print(json.dumps(report.headline(args.split, data["arms"])))
    return 0


def run_repo(arms: list[Arm], repo: Repo, checkout: Path, cases: list[dict], args,
             per_arm: dict[str, list[dict]], repo_stats: dict[str, dict[str, dict]]) -> None:
    """Every arm on one repository's cases (results appended to ``per_arm`` and ``repo_stats``)."""
    if not checkout.is_dir():
        raise BenchmarkError(f"no checkout of {repo.name} at {checkout}: run `python -m benchmarks.completion.cases`")
    files, _ = source_files(checkout)
    for c in cases:
        if c["path"] not in files or sha1(files[c["path"]].encode("utf-8")) != c["sha1"]:
            raise BenchmarkError(f"{checkout / c['path']} is not the file its case was built from: run "
                                 "`python -m benchmarks.completion.cases` again (it exports modified checkouts again)")
    t0 = time.monotonic()
    index = RepoIndex(files)
    novel = [index.line_occurrences(c["prefix_line_text"] + c["target"]) <= 1 for c in cases]
    print(f"{repo.name}: {len(cases)} cases, {len(files)} files, index {time.monotonic() - t0:.1f} s",
          file=sys.stderr, flush=True)
    for arm in arms:
        if arm.kind == "baseline":
            t1 = time.monotonic()
            per_arm[arm.name] += [baseline(arm, index, files, c, n) for c, n in zip(cases, novel, strict=True)]
            repo_stats[arm.name][repo.name] = {"wall_s": round(time.monotonic() - t1, 2)}
            continue
        results, stats = run_server_arm(arm, repo, checkout, files, cases, novel, args)
        per_arm[arm.name] += results
        repo_stats[arm.name][repo.name] = stats
        print(f"  [{arm.name} {repo.name}] {stats['wall_s']} s, {stats['seconds_per_case']} s/case, "
              f"RSS {stats['rss_mb']} MB", file=sys.stderr, flush=True)


def run(arms: list[Arm], repos: list[Repo], root: Path, all_cases: list[dict], args) -> tuple[dict, dict]:
    """(the results: figures per arm and group, run facts; the per-case results of each arm)."""
    per_arm: dict[str, list[dict]] = {a.name: [] for a in arms}
    repo_stats: dict[str, dict[str, dict]] = {a.name: {} for a in arms}
    t_start, load_start = time.monotonic(), os.getloadavg()
    for repo in repos:
        cases = limited([c for c in all_cases if c["repo"] == repo.name], args.limit)
        if not cases:
            raise BenchmarkError(f"no cases of {repo.name} in {root}: build them again with "
                                 "`python -m benchmarks.completion.cases`")
        with checkout_lock(root, repo):
            run_repo(arms, repo, root / repo.slug, cases, args, per_arm, repo_stats)
    out_arms = {}
    for arm in arms:
        g = report.grouped(per_arm[arm.name])
        for name, st in repo_stats[arm.name].items():
            g["by_repo"][name].update({k: v for k, v in st.items() if k in ("rss_mb", "peak_mb", "seconds_per_case")})
        rss = [st["rss_mb"] for st in repo_stats[arm.name].values() if "rss_mb" in st]
        if rss:
            g["overall"]["rss_mb"] = max(rss)
        out_arms[arm.name] = {**g, "kind": arm.kind, "settings": arm.settings, "about": arm.about,
                              "repos": repo_stats[arm.name]}
    return {
        "benchmark": "completion_repos", "split": args.split, "limit_per_repo": args.limit,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "threads": args.threads,
                    "load_avg_start": load_start, "load_avg_end": os.getloadavg()},
        "cases_sha1": sha1((root / f"cases.{args.split}.jsonl").read_bytes()),
        "tree": git_state(), "model": args.model or "embedded", "wall_s": round(time.monotonic() - t_start, 1),
        "repos": {r.name: {"commit": r.commit, "language": r.language, "licence": r.licence} for r in repos},
        "arms": out_arms,
    }, per_arm


if __name__ == "__main__":
    sys.exit(main())
