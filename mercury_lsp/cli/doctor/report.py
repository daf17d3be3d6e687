"""One finding of ``mercury-lsp doctor`` and how the report prints."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# ok: works; warn: works, but not as it should (the fix says how); fail: broken (doctor exits 1);
# skip: not there, and nothing needs it (an editor not installed).
Status = Literal["ok", "warn", "fail", "skip"]
MARKS: dict[Status, str] = {"ok": "ok  ", "warn": "warn", "fail": "FAIL", "skip": "--  "}
FIX_INDENT = " " * 8
PROBLEMS = ("warn", "fail")


@dataclass(frozen=True)
class Finding:
    status: Status
    subject: str  # what was checked: "torch", "nvim", ...
    detail: str  # what was found
    fix: str = ""  # warn/fail: what to do about it; ok/skip: where to go next (no arrow)

    def lines(self) -> list[str]:
        out = [f"  {MARKS[self.status]}  {self.subject}: {self.detail}"]
        if self.fix:  # what to do about a problem; beside a finding that is fine, where to go next
            out.append(f"{FIX_INDENT}{'-> ' if self.status in PROBLEMS else ''}{self.fix}")
        return out


def summary(findings: list[Finding]) -> str:
    fails = sum(f.status == "fail" for f in findings)
    warns = sum(f.status == "warn" for f in findings)
    if not fails and not warns:
        return "Everything mercury-lsp needs is in place."
    parts = [f"{n} {word}{'s' if n != 1 else ''}" for n, word in ((fails, "problem"), (warns, "warning")) if n]
    return " and ".join(parts) + ": see the -> lines above."
