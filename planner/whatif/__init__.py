"""What-if analysis of a plan: the cache-hit lever, self-host vs API per route, sensitivity and uncertainty, sweeps
and plan diffs (issue #14 items 4-6).

- :mod:`planner.whatif.rules`: the per-route formulas (self-host $/Mtok at load, break-even rate and hit rate, the
  self-host-or-API rule), pure;
- :mod:`planner.whatif.levers`: every figure that needs the plan re-evaluated with an input changed: the lever of one
  point of cache hit rate, the tornado, the demand cases, sweeps and diffs. They call THE plan method,
  :func:`planner.template.evaluate_plan`, with the input cells edited: no parallel formula set;
- :mod:`planner.whatif.source`: a plan's input cells from a scenario TOML or a workbook (the only I/O).
"""

from __future__ import annotations

from planner.whatif.rules import (
    SPIKY_BURST_FACTOR,
    SPIKY_PEAK_TO_AVERAGE,
    Recommendation,
    breakeven_hit_rate,
    breakeven_qps,
    peak_to_average,
    recommend,
    selfhost_usd_per_mtok_at_load,
)

__all__ = [
    "SPIKY_BURST_FACTOR",
    "SPIKY_PEAK_TO_AVERAGE",
    "Recommendation",
    "breakeven_hit_rate",
    "breakeven_qps",
    "peak_to_average",
    "recommend",
    "selfhost_usd_per_mtok_at_load",
]
