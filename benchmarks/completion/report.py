"""Figures of the completion benchmark: per-case results summed per group (overall, language,
test files vs the rest, repository), the printed tables, the PNG and the headline line."""

from __future__ import annotations

import os
import re
import statistics
from pathlib import Path

from benchmarks.completion.text import target_chars

GROUPS = ("overall", "by_test", "by_language", "by_repo")


def summarize(results: list[dict]) -> dict:
    """Figures of a list of per-case results (keys: shown, exact, first_token, target_chars,
    novel, latency_ms (None for baselines))."""
    n = len(results)
    if not n:
        return {"cases": 0}
    shown = sum(r["shown"] for r in results)
    exact = sum(r["exact"] for r in results)
    chars = sum(r["target_chars"] for r in results)
    novel = [r for r in results if r["novel"]]
    out = {
        "cases": n,
        "shown": round(shown / n, 4),
        "exact": round(exact / n, 4),
        "precision": round(exact / shown, 4) if shown else None,
        "chars_saved": round(sum(r["target_chars"] for r in results if r["exact"]) / chars, 4) if chars else None,
        "first_token": round(sum(r["first_token"] for r in results) / n, 4),
        "novel_cases": len(novel),
        "exact_novel": round(sum(r["exact"] for r in novel) / len(novel), 4) if novel else None,
    }
    lat = sorted(r["latency_ms"] for r in results if r.get("latency_ms") is not None)
    if lat:
        out["latency_p50_ms"] = round(statistics.median(lat), 1)
        out["latency_p95_ms"] = round(lat[min(len(lat) - 1, int(0.95 * len(lat)))], 1)
    out["multi_line"] = round(sum(r.get("multi_line", False) for r in results) / n, 4)
    errors = sum(bool(r.get("error")) for r in results)
    if errors:
        out["errors"] = errors
    return out


def grouped(results: list[dict]) -> dict:
    def by(key) -> dict:
        groups: dict[str, list[dict]] = {}
        for r in results:
            groups.setdefault(key(r), []).append(r)
        return {k: summarize(v) for k, v in sorted(groups.items())}

    return {
        "overall": summarize(results),
        "by_test": by(lambda r: "test files" if r["test_file"] else "other files"),
        "by_language": by(lambda r: r["language"]),
        "by_repo": by(lambda r: r["repo"]),
    }


def case_result(case: dict, outcome, latency_ms: float | None, novel: bool, **extra) -> dict:
    return {"repo": case["repo"], "path": case["path"], "line": case["line"], "character": case["character"],
            "language": case["language"], "test_file": case["test_file"], "target_chars": target_chars(case["target"]),
            "novel": novel, "shown": outcome.shown, "exact": outcome.exact, "first_token": outcome.first_token,
            "latency_ms": None if latency_ms is None else round(latency_ms, 2),
            "suggestion": outcome.inserted[:160], "multi_line": outcome.multi_line, **extra}


def _pct(x) -> str:
    return "-" if x is None else f"{x:.1%}"


def table(title: str, rows: dict[str, dict]) -> str:
    head = (f"{title:<34}{'cases':>6}{'shown':>8}{'exact':>8}{'prec.':>8}{'saved':>8}{'1st tok':>8}"
            f"{'p50 ms':>8}{'p95 ms':>8}{'RSS MB':>8}")
    out = [head, "-" * len(head)]
    for name, s in rows.items():
        if not s.get("cases"):
            continue
        lat = (f"{s['latency_p50_ms']:>8.0f}{s['latency_p95_ms']:>8.0f}" if "latency_p50_ms" in s else f"{'-':>8}{'-':>8}")
        rss = f"{s['rss_mb']:>8.0f}" if s.get("rss_mb") else f"{'-':>8}"
        out.append(f"{name[:34]:<34}{s['cases']:>6}{_pct(s['shown']):>8}{_pct(s['exact']):>8}{_pct(s['precision']):>8}"
                   f"{_pct(s['chars_saved']):>8}{_pct(s['first_token']):>8}{lat}{rss}")
    return "\n".join(out)


def tables(arms: dict[str, dict]) -> str:
    """One table per group value (overall, test files, other files, each language, each
    repository), a row per arm."""
    blocks = [table("all cases", {a: g["overall"] for a, g in arms.items()})]
    for group in GROUPS[1:]:
        keys = sorted({k for g in arms.values() for k in g[group]})
        for k in keys:
            blocks.append(table(k, {a: g[group].get(k, {}) for a, g in arms.items()}))
    return "\n\n".join(blocks)


def key(name: str) -> str:
    return re.sub(r"\W+", "_", name.replace("+", "plus_")).strip("_")


def headline(split: str, arms: dict[str, dict]) -> dict:
    out: dict = {"benchmark": "completion_repos", "split": split}
    for name, g in arms.items():
        o, k = g["overall"], key(name)
        out["cases"] = o["cases"]
        for f in ("exact", "precision", "shown", "chars_saved"):
            out[f"{k}_{f}"] = o[f]
        out[f"{k}_exact_test"] = g["by_test"].get("test files", {}).get("exact")
        out[f"{k}_exact_other"] = g["by_test"].get("other files", {}).get("exact")
        if "latency_p95_ms" in o:
            out[f"{k}_p95_ms"] = o["latency_p95_ms"]
    return out


def plot(path: Path, arms: dict[str, dict], title: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # matplotlib is the bench extra: no PNG without it
        return
    names = list(arms)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))
    xs = range(len(names))
    w = 0.27
    for i, (f, label) in enumerate((("exact", "exact"), ("precision", "precision (exact / shown)"),
                                    ("shown", "shown"))):
        axes[0].bar([x + (i - 1) * w for x in xs], [arms[n]["overall"][f] or 0 for n in names], w, label=label)
    axes[0].set_title(f"{title}: all cases ({arms[names[0]]['overall']['cases']})", fontsize=9)
    for i, g in enumerate(("test files", "other files")):
        axes[1].bar([x + (i - 0.5) * w for x in xs],
                    [(arms[n]["by_test"].get(g, {}).get("exact") or 0) for n in names], w, label=f"exact, {g}")
    axes[1].set_title(f"{title}: exact, test files vs the rest", fontsize=9)
    for ax in axes:
        ax.set_xticks(list(xs), names, fontsize=8, rotation=15)
        ax.set_ylim(0, 1.05)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    tmp = path.with_name(path.name + ".tmp")
    fig.savefig(tmp, format="png", dpi=110)
    plt.close(fig)
    os.replace(tmp, path)
