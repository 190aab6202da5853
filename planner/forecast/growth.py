"""The forecast's two steps: the demand multiple of a month, and the units that bring a utilization under the policy.

Month 1 is the plan as entered. With compound growth ``g`` per month, month ``m`` carries ``(1 + g)^(m - 1)`` times
the plan's demand; an explicit demand index (a planner's own monthly table) replaces it month by month. Every
utilization linear in demand (RPM ... COMPUTE, the load on a fleet) scales by that multiple; TTFT and TPOT do not and
are recomputed by the serving model at the month's load.
"""

from __future__ import annotations

import math

from planner.errors import check_number


def demand_multiplier(month: float, *, monthly_growth: float, demand_index: float | None = None) -> float:
    """The demand multiple of forecast month ``month`` (1 = the plan as entered).

    ``x_m = demand_index`` when the planner gives one for the month, else ``(1 + g)^(m - 1)``.

    Reference: compound growth, as C7's months to breach (``ln(1/u) / ln(1 + g)``) assumes.

    8 % a month: month 13 carries 2.52 times month 1's demand.

    >>> round(demand_multiplier(13, monthly_growth=0.08), 4)
    2.5182
    >>> demand_multiplier(4, monthly_growth=0.08, demand_index=1.5)
    1.5
    """
    m = check_number("month", month, minimum=1, integer=True)
    if demand_index is not None:
        return check_number("demand_index", demand_index, minimum=0)
    g = check_number("monthly_growth", monthly_growth, minimum=-0.99)
    return (1.0 + g) ** (m - 1)


def units_needed(units: float, *, utilization: float, threshold: float) -> int:
    """Units (keys, deployments, replicas) that bring a linear utilization back to the policy threshold.

    ``n = max(N, ceil(N * u / u_max))``: ``u`` is the utilization with ``N`` units, and the limit grows in proportion
    to the units (keys where the provider's scope multiplies the limit, replicas of a fleet).

    Reference: C7 (utilization = demand / (limit x units)); the plan threshold is the policy (docs/method.md).

    22 replicas at 103 % of a linear limit with an 80 % policy need 29:

    >>> units_needed(22, utilization=1.03, threshold=0.8)
    29
    >>> units_needed(2, utilization=0.5, threshold=0.8)
    2
    """
    n = check_number("units", units, minimum=1, integer=True)
    u = check_number("utilization", utilization, minimum=0)
    t = check_number("threshold", threshold, minimum=0, exclusive_minimum=True)
    # a tiny tolerance so that 0.8 x 10 / 0.8 stays 10 in floating point
    return int(max(n, math.ceil(n * u / t - 1e-9)))


__all__ = ["demand_multiplier", "units_needed"]
