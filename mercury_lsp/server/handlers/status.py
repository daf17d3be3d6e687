"""``mercury/stats``: the engine's state, the completion counters and latency percentiles."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from mercury_lsp.schema import StatsResult

if TYPE_CHECKING:
    from mercury_lsp.server.app import MercuryServer


def stats(ls: MercuryServer) -> StatsResult:
    p50, p95 = ls.completions.latency_percentiles()
    return StatsResult(state=ls.engine.state, counters=ls.completions.counters,
                       engine_ms_p50=p50, engine_ms_p95=p95, engine=ls.engine.info)


def stats_request(ls: MercuryServer, params: Any) -> dict:
    return msgspec.to_builtins(stats(ls))
