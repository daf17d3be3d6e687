"""Output of the quality harness: headline figures, the table, the steps plot, atomic writes and
the git state recorded with every result (shared by the other benchmarks that write results)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from benchmarks.humaneval.tasks import REPO_ROOT


# ---------------------------------------------------------------------------- output
def headline(summary: dict[str, dict]) -> dict[str, float]:
    out = {}
    for name, s in summary.items():
        key = name.replace("-", "_")
        out[f"{key}_pass@1"] = round(s["pass@1"], 4)
        out[f"{key}_exact"] = round(s["exact_match"], 4)
    return out


def format_table(title: str, summary: dict[str, dict]) -> str:
    head = (f"{'benchmark':<18}{'tasks':>7}{'pass@1':>9}{'exact':>9}{'failed':>8}{'timeout':>8}"
            f"{'error':>7}{'tok/s':>9}{'gen s':>9}{'exec s':>9}")
    lines = [title, head, "-" * len(head)]
    for name, s in summary.items():
        gen = s["generation"] or {}
        tps = gen.get("tokens_per_s")
        lines.append(
            f"{name:<18}{s['tasks']:>7}{s['pass@1'] * 100:>8.1f}%{s['exact_match'] * 100:>8.1f}%"
            f"{s['statuses']['failed']:>8}{s['statuses']['timeout']:>8}{s['statuses']['error']:>7}"
            f"{(f'{tps:.1f}' if tps is not None else '-'):>9}"
            f"{(format(gen['seconds'], '.1f') if gen else '-'):>9}{s['execution_s']:>9.1f}")
    return "\n".join(lines)


def pyplot():
    """matplotlib's pyplot on the file-only Agg backend, or None without matplotlib (the
    ``bench`` extra): a benchmark then writes its JSON and table and skips its PNG."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def plot_steps(path: Path, grid: list[dict], names: list[str], title: str) -> None:
    plt = pyplot()
    if plt is None:
        return
    steps = [g["steps"] for g in grid]
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=120)
    for i, name in enumerate(names):
        color = f"C{i}"
        n = grid[0]["benchmarks"][name]["tasks"]
        ax.plot(steps, [g["benchmarks"][name]["pass@1"] * 100 for g in grid], "o-", color=color,
                label=f"{name} pass@1 (n={n})")
        ax.plot(steps, [g["benchmarks"][name]["exact_match"] * 100 for g in grid], "x:", color=color,
                alpha=0.7, label=f"{name} exact")
    ax.set_xscale("log", base=2)
    ax.set_xticks(steps, [str(s) for s in steps])
    ax.set_xlabel("denoising steps")
    ax.set_ylim(-2, 102)
    ax.set_ylabel("% of tasks")
    ax.set_title(title, fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    tmp = path.with_name(path.name + ".tmp")
    fig.savefig(tmp, format="png")
    plt.close(fig)
    os.replace(tmp, path)


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def git_state() -> dict[str, object]:
    def git(*cmd: str) -> str | None:
        try:
            r = subprocess.run(["git", *cmd], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        return r.stdout.strip() if r.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": None if status is None else bool(status)}
