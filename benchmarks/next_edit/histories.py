"""Next-edit benchmark v2: real edit histories replayed against the real daemon.

    python -m benchmarks.next_edit.histories [--set dev] [--mirrors /work/.mirror] [--limit N]
        [--every N] [--model DIR] [--threads N] [--out benchmarks/results/next_edit_v2[_SET].json]

A set is named by its committed manifest, ``benchmarks/data/next_edit_v2/SET.json`` (its
repositories, each pinned to a commit, with its licence); ``benchmarks/next_edit/history_cases.py``
builds its cases from the git mirrors into ``$XDG_CACHE_HOME/mercury-lsp-bench/next_edit/`` (the
runner does so first when the file is absent or stale; a missing mirror is named, with the fetch
tool's source that brings it); ``--cases FILE`` runs a built file instead. The sets, what each was
used for and their figures: ``docs/benchmarks/next-edit.md``. A sealed set (heldout6, heldout7: the
final scores of issue 26's rounds) runs only with ``--unseal``.

The cases are commits split into hunks; each carries its repository, commit, path and licence.
For case (commit, k) the client opens the commit's files as they were in the
parent, replays hunks ``1..k-1`` as ``didChange`` (ranged edits, in order), and asks
``mercury/nextEdit`` with the cursor at the end of hunk ``k-1``. The daemon is ``mercury-lsp serve``
over stdio, started once and warm (the model is loaded, and one untimed request made, before the
first timed one); the client (``benchmarks/common/jsonrpc.py``) shares no code with it.

Scores, per case:

* **location hit** — a predicted edit in the target hunk's file touches one of its lines (for an
  insertion, the line before or the line at the insertion point);
* **exact** — applying the predicted edits that touch the target hunk gives exactly the text the
  commit has after the hunk;
* **false positives** — predicted edits that touch none of the hunks still to come (``k..n``);
* **latency** — from sending the request to its response (the daemon's ``didChange`` handling
  of the replayed hunks happens before and is not timed), and the daemon's **CPU time** over the
  same span (user + system of its process, ``/proc``; 10 ms steps): on a shared machine the wall
  time grows with the load average, the CPU time much less, so a load-independent figure sits
  beside the one a user waits for.

Reported overall, per language, per edit kind (rules in ``history_cases``), per repository and
per next-edit rule (the ``rule`` code each predicted edit carries, ``docs/next-edit.md``: its
edits, the cases where one of them touches the target hunk, the cases its own edits there make
exact, and its edits that touch no hunk still to come): a table, JSON (``--out``), a PNG beside
it, and one JSON line of headline figures at the end. ``--edits FILE`` also writes every
predicted edit, case by case (JSON lines, outside the repository: they quote the cases' code),
so that two runs can be compared edit for edit.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import platform
import re
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import RESULTS as RESULTS_DIR
from benchmarks.common.jsonrpc import LspProcess, RpcError
from benchmarks.common.mirrors import DEFAULT_MIRRORS, MirrorError
from benchmarks.common.report import pyplot
from benchmarks.next_edit import history_cases, manifest

DEFAULT_SET = "dev"
LANGUAGE_IDS = {".py": "python", ".ts": "typescript", ".tsx": "typescriptreact", ".js": "javascript",
                ".mjs": "javascript", ".cjs": "javascript", ".go": "go", ".rs": "rust"}
LOAD_TIMEOUT_S = 600.0
REQUEST_TIMEOUT_S = 120.0
KINDS = ("rename", "signature", "repeat", "complete-line", "import", "other")


# ---------------------------------------------------------------------------- text bookkeeping
def line_starts(text: str) -> list[int]:
    return [0, *(m.end() for m in re.finditer("\n", text))]


def position(text: str, offset: int) -> dict:
    """LSP position of a code-point offset (the benchmark negotiates UTF-32: characters = code points)."""
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return {"line": line, "character": offset - start}


def offset_of(starts: list[int], text: str, line: int, character: int) -> int:
    if line >= len(starts):
        return len(text)
    return min(starts[line] + character, len(text))


def hunk_span(text: str, hunk: dict) -> tuple[int, int]:
    """(start, end) code-point offsets of the hunk's old lines in ``text``; ValueError if they differ."""
    starts = line_starts(text)
    if hunk["line"] > len(starts) - (0 if text.endswith("\n") or not text else 1) + 1:
        raise ValueError("hunk beyond the end of the text")
    start = starts[hunk["line"]] if hunk["line"] < len(starts) else len(text)
    end = start + len(hunk["old"])
    if text[start:end] != hunk["old"]:
        raise ValueError("hunk does not apply")
    return start, end


def apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    out, pos = [], 0
    for s, e, new in sorted(edits):
        out += [text[pos:s], new]
        pos = e
    return "".join(out + [text[pos:]])


@dataclass
class Target:
    path: str
    lines: tuple[int, int]  # first, last line (inclusive) an edit must touch
    span: tuple[int, int]
    new: str


def target_of(text: str, hunk: dict, shift: int = 0) -> Target:
    """``shift``: lines to subtract (hunks between the current state and this one's)."""
    line = hunk["line"] - shift
    n_old = hunk["old"].count("\n") + (0 if hunk["old"].endswith("\n") or not hunk["old"] else 1)
    lines = (line, line + n_old - 1) if n_old else (max(line - 1, 0), line)
    try:
        span = hunk_span(text, {**hunk, "line": line})
    except ValueError:
        span = (-1, -1)
    return Target(hunk["path"], lines, span, hunk["new"])


def edit_lines(text: str, s: int, e: int) -> tuple[int, int]:
    first = text.count("\n", 0, s)
    last = text.count("\n", 0, e)
    if e > s and e > 0 and text[e - 1] == "\n":
        last -= 1
    return first, max(first, last)


# ---------------------------------------------------------------------------- scoring
@dataclass
class CaseResult:
    repo: str
    commit: str
    language: str
    kind: str
    variant: str
    hit: bool
    exact: bool
    false_positives: int
    predicted: int
    latency_ms: float
    top1_hit: bool
    # per rule code of the predicted edits: [edits, touches the target, exact alone, false positives]
    rules: dict[str, list[int]] = field(default_factory=dict)
    cpu_ms: float | None = None  # the daemon's CPU time while it answered (None: not readable here)


NO_RULE = "-"  # an edit that names no rule (a daemon from before the rule registry)


def score(files: dict[str, str], hunks: list[dict], k: int, edits: list[dict], uri_of: dict[str, str]):
    path_of = {u: p for p, u in uri_of.items()}
    target = target_of(files[hunks[k]["path"]], hunks[k])
    future = [target]
    for j in range(k + 1, len(hunks)):
        h = hunks[j]
        shift = sum(hunks[i]["new"].count("\n") - hunks[i]["old"].count("\n")
                    for i in range(k, j) if hunks[i]["path"] == h["path"])
        future.append(target_of(files[h["path"]], h, shift))
    preds = []
    for e in edits:
        path = path_of.get(e["uri"])
        if path is None:
            preds.append((None, 0, 0, "", (0, 0)))
            continue
        text = files[path]
        starts = line_starts(text)
        r = e["range"]
        s = offset_of(starts, text, r["start"]["line"], r["start"]["character"])
        en = offset_of(starts, text, r["end"]["line"], r["end"]["character"])
        preds.append((path, s, en, e["newText"] if "newText" in e else e.get("new_text", ""), edit_lines(text, s, en)))

    def touches(p, t: Target) -> bool:
        return p[0] == t.path and p[4][0] <= t.lines[1] and p[4][1] >= t.lines[0]

    def makes_exact(hits: list) -> bool:
        if not hits or target.span[0] < 0:
            return False
        text = files[target.path]
        want = text[:target.span[0]] + target.new + text[target.span[1]:]
        try:
            return apply(text, [(s, e, n) for _, s, e, n, _ in hits]) == want
        except (ValueError, TypeError):
            return False

    hits = [p for p in preds if touches(p, target)]
    false = [not any(touches(p, t) for t in future) for p in preds]
    rules: dict[str, list[int]] = {}
    for code in dict.fromkeys(e.get("rule") or NO_RULE for e in edits):
        mine = [p for p, e in zip(preds, edits, strict=True) if (e.get("rule") or NO_RULE) == code]
        own_hits = [p for p in mine if touches(p, target)]
        rules[code] = [len(mine), int(bool(own_hits)), int(makes_exact(own_hits)),
                       sum(f for f, e in zip(false, edits, strict=True) if (e.get("rule") or NO_RULE) == code)]
    return bool(hits), makes_exact(hits), sum(false), bool(preds) and touches(preds[0], target), rules


# ---------------------------------------------------------------------------- driving the daemon
def load_records(path: Path) -> tuple[dict, list[dict]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        lines = [json.loads(line) for line in f]
    return lines[0]["header"], lines[1:]


def set_file(name: str, mirrors: Path, unseal: bool = False) -> Path:
    """The built cases of the set ``name`` (built from its manifest first when absent); SystemExit
    with the reason when it cannot be had, or when the set is sealed and ``unseal`` is false."""
    try:
        man = manifest.load(manifest.path_of(name))
        if man.sealed and not unseal:
            raise SystemExit(f"next-edit set {name} is sealed: {man.sealed} (--unseal runs it)")
        return history_cases.cached_set(man, mirrors)
    except (manifest.ManifestError, MirrorError, history_cases.SetMismatch) as e:
        raise SystemExit(f"next-edit set {name}: {e}") from None


def start_daemon(args) -> LspProcess:
    argv = [sys.executable, "-m", "mercury_lsp.cli", "serve"]
    if args.model:
        argv += ["--model", args.model]
    if args.threads:
        argv += ["--threads", str(args.threads)]
    if args.device:
        argv += ["--device", args.device]
    stderr = open(args.log, "w") if args.log else None  # noqa: SIM115 (closed with the process)
    ls = LspProcess(argv, env=dict(os.environ), stderr=stderr)
    ls.request("initialize", {"processId": os.getpid(), "rootUri": None, "capabilities": {
        "general": {"positionEncodings": ["utf-32"]},
        "textDocument": {"synchronization": {"dynamicRegistration": False}}}}, timeout=LOAD_TIMEOUT_S)
    ls.notify("initialized", {})
    ls.wait_notification("mercury/status", lambda p: p and p.get("state") in ("ready", "error"), LOAD_TIMEOUT_S)
    status = [p for p in ls.notifications["mercury/status"] if p.get("state") in ("ready", "error")][-1]
    if status["state"] != "ready":
        raise SystemExit(f"the daemon could not load its model: {status.get('message')}")
    return ls


def process_cpu_ms(pid: int) -> float | None:
    """User + system CPU time of process ``pid`` so far (Linux ``/proc``), None where unreadable."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")  # utime, stime


def run_case(ls: LspProcess, rec: dict, k: int, tag: str) -> tuple[dict, list[dict], float, dict[str, str], float | None]:
    """Open, replay hunks 1..k-1, ask; returns (files now, edits, latency ms, uri per path, the
    daemon's CPU ms over the request)."""
    files = dict(rec["files"])
    uri_of = {p: f"file:///bench/{tag}/{p}" for p in files}
    versions = dict.fromkeys(files, 1)
    for p, text in files.items():
        ls.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri_of[p], "languageId": LANGUAGE_IDS.get(Path(p).suffix, "plaintext"),
            "version": 1, "text": text}})
    hunks = rec["hunks"]
    for h in hunks[:k]:
        text = files[h["path"]]
        s, e = hunk_span(text, h)
        versions[h["path"]] += 1
        ls.notify("textDocument/didChange", {
            "textDocument": {"uri": uri_of[h["path"]], "version": versions[h["path"]]},
            "contentChanges": [{"range": {"start": position(text, s), "end": position(text, e)},
                                "text": h["new"]}]})
        files[h["path"]] = text[:s] + h["new"] + text[e:]
    last = hunks[k - 1]
    text = files[last["path"]]
    s, _ = hunk_span(files[last["path"]], {**last, "old": last["new"]})
    cursor = position(text, s + len(last["new"].rstrip("\n")) if last["new"] else s)
    cpu0 = process_cpu_ms(ls.proc.pid)
    t0 = time.perf_counter()
    try:
        result = ls.request("mercury/nextEdit", {
            "textDocument": {"uri": uri_of[last["path"]], "version": versions[last["path"]]},
            "position": cursor}, timeout=REQUEST_TIMEOUT_S)
        edits = (result or {}).get("edits", [])
    except RpcError:
        edits = []
    ms = (time.perf_counter() - t0) * 1000
    cpu1 = process_cpu_ms(ls.proc.pid)
    cpu = None if cpu0 is None or cpu1 is None else cpu1 - cpu0
    for p in files:
        ls.notify("textDocument/didClose", {"textDocument": {"uri": uri_of[p]}})
    return files, edits, ms, uri_of, cpu


def summarize(results: list[CaseResult]) -> dict:
    if not results:
        return {"cases": 0}
    lat = sorted(r.latency_ms for r in results)
    cpu = sorted(r.cpu_ms for r in results if r.cpu_ms is not None)
    return {
        "cases": len(results),
        "location_hit": round(sum(r.hit for r in results) / len(results), 4),
        "top1_hit": round(sum(r.top1_hit for r in results) / len(results), 4),
        "exact": round(sum(r.exact for r in results) / len(results), 4),
        "false_positives_per_case": round(sum(r.false_positives for r in results) / len(results), 3),
        "predicted_per_case": round(sum(r.predicted for r in results) / len(results), 3),
        "latency_p50_ms": round(statistics.median(lat), 1),
        "latency_p95_ms": round(lat[min(len(lat) - 1, int(0.95 * len(lat)))], 1),
        "cpu_p50_ms": round(statistics.median(cpu), 1) if cpu else None,
        "cpu_p95_ms": round(cpu[min(len(cpu) - 1, int(0.95 * len(cpu)))], 1) if cpu else None,
    }


def table(title: str, groups: dict[str, dict]) -> str:
    head = f"{title:<16}{'cases':>6}{'hit':>8}{'top1':>8}{'exact':>8}{'FP/case':>9}{'p50 ms':>9}{'p95 ms':>9}"
    rows = [head, "-" * len(head)]
    for name, s in groups.items():
        if not s.get("cases"):
            continue
        rows.append(f"{name:<16}{s['cases']:>6}{s['location_hit']:>8.1%}{s['top1_hit']:>8.1%}{s['exact']:>8.1%}"
                    f"{s['false_positives_per_case']:>9.2f}{s['latency_p50_ms']:>9.0f}{s['latency_p95_ms']:>9.0f}")
    return "\n".join(rows)


def rule_rows(results: list[CaseResult]) -> dict[str, dict]:
    """Per rule code: its edits, the cases it touched the target in, the cases its own edits made
    exact, and its edits that touched no hunk still to come (all cases counted)."""
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for r in results:
        for code, counts in r.rules.items():
            totals[code] = [a + b for a, b in zip(totals[code], counts, strict=True)]
    n = max(1, len(results))
    return {code: {"predictions": t[0], "hit_cases": t[1], "exact_cases": t[2], "false_positives": t[3],
                   "false_positives_per_case": round(t[3] / n, 3)}
            for code, t in sorted(totals.items())}


def rule_table(rows: dict[str, dict], names: dict[str, str]) -> str:
    head = f"{'rule':<8}{'name':<26}{'edits':>7}{'hit':>6}{'exact':>7}{'FP':>6}"
    out = [head, "-" * len(head)]
    for code, r in rows.items():
        out.append(f"{code:<8}{names.get(code, '')[:25]:<26}{r['predictions']:>7}{r['hit_cases']:>6}"
                   f"{r['exact_cases']:>7}{r['false_positives']:>6}")
    return "\n".join(out)


def rule_names() -> dict[str, str]:
    """Code -> name of the daemon's next-edit rules (empty when this checkout has no registry)."""
    try:
        from mercury_lsp.next_edit.rules import REGISTRY
    except ImportError:
        return {}
    return {r.code: r.name for r in REGISTRY}


def plot(path: Path, by_language: dict[str, dict], by_kind: dict[str, dict]) -> None:
    plt = pyplot()
    if plt is None:
        return
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, (title, groups) in zip(axes, (("per language", by_language), ("per edit kind", by_kind)), strict=True):
        names = [n for n, s in groups.items() if s.get("cases")]
        xs = range(len(names))
        width = 0.27
        for i, (key, label) in enumerate((("location_hit", "location hit"), ("exact", "exact"),
                                          ("false_positives_per_case", "false positives / case"))):
            ax.bar([x + (i - 1) * width for x in xs], [groups[n][key] for n in names], width, label=label)
        ax.set_xticks(list(xs), [f"{n}\n({groups[n]['cases']})" for n in names], fontsize=8)
        ax.set_title(f"next edit v2, {title}")
        ax.set_ylim(0, 1.05)
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", default=DEFAULT_SET, help=f"a set by name ({', '.join(manifest.available())}), "
                    "built from its manifest first when absent; default %(default)s")
    ap.add_argument("--cases", type=Path, default=None, help="a built cases file instead of --set")
    ap.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS,
                    help="folder of git mirrors a set is built from, default %(default)s")
    ap.add_argument("--unseal", action="store_true",
                    help="run a sealed set (kept unseen until its one final score)")
    ap.add_argument("--limit", type=int, default=None, help="the first N cases only")
    ap.add_argument("--every", type=int, default=1, metavar="N",
                    help="every N-th case only (a stable subsample spanning every repository)")
    ap.add_argument("--model", default=None)
    ap.add_argument("--device", default=None)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--log", default=None, help="the daemon's stderr goes here")
    ap.add_argument("--out", type=Path, default=None,
                    help="default benchmarks/results/next_edit_v2.json (dev), next_edit_v2_SET.json (other sets)")
    ap.add_argument("--edits", type=Path, default=None,
                    help="also write every predicted edit here, case by case (JSON lines; keep it out of git)")
    args = ap.parse_args(argv)
    if args.out is None:
        args.out = RESULTS_DIR / ("next_edit_v2.json" if args.set == DEFAULT_SET else f"next_edit_v2_{args.set}.json")
    if args.cases is None:
        args.cases = set_file(args.set, args.mirrors, args.unseal)
    header, records = load_records(args.cases)
    work = [(rec, c) for rec in records for c in rec["cases"]][:: args.every][: args.limit]
    load0 = os.getloadavg()
    ls = start_daemon(args)
    results: list[CaseResult] = []
    dump = args.edits.open("w", encoding="utf-8") if args.edits else None  # noqa: SIM115 (closed below)
    try:
        rec, c = work[0]
        run_case(ls, rec, c["k"], "warmup")  # untimed: the first request pays one-off costs
        for i, (rec, c) in enumerate(work):
            files, edits, ms, uri_of, cpu = run_case(ls, rec, c["k"], f"case{i}")
            hit, exact, fps, top1, rules = score(files, rec["hunks"], c["k"], edits, uri_of)
            results.append(CaseResult(rec["repo"], rec["commit"], rec["language"], c["kind"], rec["variant"],
                                      hit, exact, fps, len(edits), round(ms, 2), top1, rules,
                                      None if cpu is None else round(cpu, 1)))
            if dump is not None:
                dump.write(json.dumps({"case": i, "commit": rec["commit"], "k": c["k"], "edits": [
                    {key: e.get(key) for key in ("uri", "range", "newText", "kind", "source", "confidence",
                                                 "rule", "reason")} for e in edits]}) + "\n")
            if (i + 1) % 25 == 0:
                print(f"  {i + 1}/{len(work)} cases", file=sys.stderr, flush=True)
        duplicates = {rid: n for rid, n in ls.responses_seen.items() if n != 1}
    finally:
        ls.close()
        if dump is not None:
            dump.close()
    by_language: dict[str, list[CaseResult]] = defaultdict(list)
    by_kind: dict[str, list[CaseResult]] = defaultdict(list)
    by_repo: dict[str, list[CaseResult]] = defaultdict(list)
    for r in results:
        by_language[r.language].append(r)
        by_kind[r.kind].append(r)
        by_repo[r.repo].append(r)
    overall = summarize(results)
    langs = {k: summarize(v) for k, v in sorted(by_language.items())}
    kinds = {k: summarize(by_kind[k]) for k in KINDS if k in by_kind}
    repos = {k: summarize(v) for k, v in sorted(by_repo.items())}
    print(table("language", {**langs, "all": overall}))
    print()
    print(table("edit kind", {**kinds, "all": overall}))
    print()
    print(table("repository", {k.split("/")[-1][:15]: v for k, v in repos.items()}))
    rules = rule_rows(results)
    print()
    print(rule_table(rules, rule_names()))
    data = {
        "benchmark": "next_edit_v2",
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "threads": args.threads,
                    "load_average": [load0, os.getloadavg()]},
        "model": args.model or "embedded", "set": header.get("set"), "cases_file": str(args.cases),
        "content_sha256": header.get("content_sha256"), "every": args.every, "source_repos": header.get("repos"),
        "overall": overall, "by_language": langs, "by_kind": kinds, "by_repo": repos, "by_rule": rules,
        "responses_not_exactly_one": duplicates,
        "cases": [r.__dict__ for r in results],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=1) + "\n")
    plot(args.out.with_suffix(".png"), langs, kinds)
    print(json.dumps({"next_edit_v2_location_hit": overall["location_hit"], "next_edit_v2_exact": overall["exact"],
                      "next_edit_v2_fp_per_case": overall["false_positives_per_case"],
                      "next_edit_v2_p50_ms": overall["latency_p50_ms"],
                      "next_edit_v2_p95_ms": overall["latency_p95_ms"],
                      "next_edit_v2_cpu_p95_ms": overall["cpu_p95_ms"], "cases": overall["cases"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
