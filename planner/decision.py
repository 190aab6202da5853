"""Decisions (formulas C7 and C8 of the reference set): binding constraint, headroom, time to breach, failover.

Utilizations are demand / limit for any resource: provider limits (RPM, TPM, ITPM, OTPM, RPD, TPD), KV memory,
compute. 1.0 is the ceiling. A utilization given as ``None`` (a blank cell) means "no such limit" and is skipped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from planner.errors import ArgumentError, check_number

MONTHS_NEVER = 9999.0
"""What :func:`months_to_breach` returns when the ceiling is never reached (no growth, or nothing in use).
It is also the largest value it returns: 9,999 months is over 800 years, i.e. "not a planning concern"."""


def _utilizations(utilizations: Sequence[float | None], argument: str = "utilizations") -> list[float | None]:
    values = list(utilizations)
    return [None if u is None else check_number(argument, u, minimum=0) for u in values]


def _present(utilizations: Sequence[float | None], argument: str = "utilizations") -> list[float]:
    values = [u for u in _utilizations(utilizations, argument) if u is not None]
    if not values:
        raise ArgumentError(argument, list(utilizations), "at least one utilization")
    return values


def binding_constraint(labels: Sequence[str], utilizations: Sequence[float | None]) -> str:
    """The label of the highest utilization: the constraint that binds first (C7, ``argmax_j u_j``).

    Ties go to the first label in order. Blank utilizations (``None``) are skipped.

    Reference: C7; legitlads "fleet = max(compute GPUs, memory GPUs)"; BentoML llm-optimizer
    ("theoretical overall limit = min of ceilings").

    >>> binding_constraint(["RPM", "ITPM", "OTPM", "KV"], [0.42, 0.91, 0.35, 0.88])
    'ITPM'
    >>> binding_constraint(["RPM", "TPM"], [0.5, 0.5])
    'RPM'
    """
    names = list(labels)
    values = _utilizations(utilizations)
    if not names:
        raise ArgumentError("labels", names, "at least one label")
    if len(values) != len(names):
        raise ArgumentError("utilizations", f"{len(values)} values", f"{len(names)} values, one per label")
    best: int | None = None
    for index, u in enumerate(values):
        if u is not None and (best is None or u > values[best]):  # type: ignore[operator]
            best = index
    if best is None:
        raise ArgumentError("utilizations", list(utilizations), "at least one utilization")
    label = names[best]
    if label is None or str(label).strip() == "":
        raise ArgumentError("labels", label, f"a label for utilization {values[best]:g} (position {best + 1})")
    return str(label)


def max_utilization(utilizations: Sequence[float | None]) -> float:
    """The highest utilization (C7, ``max_j u_j``).

    >>> max_utilization([0.42, 0.91, 0.35])
    0.91
    """
    return max(_present(utilizations))


def headroom(utilizations: Sequence[float | None]) -> float:
    """Headroom before the first ceiling (C7): ``1 - max_j u_j``; negative when a limit is already exceeded.

    Reference: C7.

    >>> round(headroom([0.42, 0.8, 0.35]), 10)
    0.2
    """
    return 1.0 - max_utilization(utilizations)


def headroom_multiple(utilizations: Sequence[float | None]) -> float:
    """How many times demand can grow (uniformly) before the first ceiling: ``1 / max_j u_j``.

    Below 1 the route is already over a limit (0.8 means demand must shrink by 20 %). Raises when every utilization
    is 0 (unbounded growth).

    Reference: C7 (utilization is linear in demand, so ``u_j * m = 1`` at the first ceiling). ***Derived.***

    >>> headroom_multiple([0.25, 0.5])
    2.0
    """
    top = max_utilization(utilizations)
    if top == 0:
        allowed = "at least one utilization > 0 (else growth is unbounded)"
        raise ArgumentError("utilizations", list(utilizations), allowed)
    return 1.0 / top


def months_to_breach(utilization: float, monthly_growth_rate: float) -> float:
    """Months until a utilization reaches 1.0 under compound monthly growth ``g``:
    ``m = log(1/u) / log(1 + g)``, so that ``u * (1 + g)**m = 1``.

    Returns 0 when ``u >= 1`` (already at or over the ceiling) and :data:`MONTHS_NEVER` (9,999) when the ceiling is
    never reached (``u = 0``, or ``g <= 0`` with ``u < 1``); results above 9,999 are capped to it.

    Reference: C7 headroom under growth. ***Derived.***

    At 60 % utilization and 10 % growth a month, the limit is hit in 5.4 months:

    >>> round(months_to_breach(0.6, 0.10), 2)
    5.36
    >>> months_to_breach(1.2, 0.10), months_to_breach(0.5, 0.0)
    (0.0, 9999.0)
    """
    u = check_number("utilization", utilization, minimum=0)
    g = check_number("monthly_growth_rate", monthly_growth_rate, minimum=-1, exclusive_minimum=True)
    if u >= 1.0:
        return 0.0
    if u == 0.0 or g <= 0.0:
        return MONTHS_NEVER
    return min(MONTHS_NEVER, math.log(1.0 / u) / math.log1p(g))


def failover_utilization(peak_demand: float, capacities: Sequence[float], failed: int = 0) -> float:
    """Utilization of the surviving backends when one is down and its traffic is rerouted (C8).

    ``u_survivors = peak_demand / (sum(capacities) - capacity_failed)``: the whole peak spread over the survivors in
    proportion to their capacity (a capacity-weighted router). ``failed`` is the 1-based position of the failed
    backend; 0 (default) takes the worst case, the largest backend down. Feasible when the result is <= 1.
    ``capacities`` share the unit of ``peak_demand`` (e.g. RPM limits, or requests/s each replica sustains at SLO).

    Reference: C8 (``sum_{i != k} capacity_i >= lambda_peak``). ***Derived;*** LiteLLM fallbacks execute this at
    runtime but do not size it.

    Three backends of 1,000 RPM carrying 1,500 RPM: with one down the other two run at 75 %.

    >>> failover_utilization(1500, [1000, 1000, 1000])
    0.75
    >>> failover_utilization(1500, [2000, 1000], failed=2)
    0.75
    """
    d = check_number("peak_demand", peak_demand, minimum=0)
    caps = [check_number("capacities", c, minimum=0) for c in capacities]
    if len(caps) < 2:
        raise ArgumentError("capacities", list(capacities), "at least two backends (one of them may fail)")
    k = int(check_number("failed", failed, minimum=0, maximum=len(caps), integer=True))
    lost = max(caps) if k == 0 else caps[k - 1]
    remaining = sum(caps) - lost
    if remaining <= 0:
        raise ArgumentError("capacities", list(capacities), "surviving backends with capacity > 0")
    return d / remaining


def spillover(demand: float, primary_limit: float, buffer: float = 0.0) -> float:
    """Demand that overflows a primary backend kept under a safety buffer (C8):
    ``spill = max(0, demand - limit * (1 - buffer))``.

    Reference: C8. ***Derived.***

    >>> spillover(1500, 1000, 0.2)  # 1,500 RPM against 1,000 RPM kept at 80 %: 700 RPM must go elsewhere
    700.0
    """
    d = check_number("demand", demand, minimum=0)
    lim = check_number("primary_limit", primary_limit, minimum=0)
    b = check_number("buffer", buffer, minimum=0, maximum=1)
    return max(0.0, d - lim * (1.0 - b))
