"""Decisions (formulas C7 and C8 of the reference set): binding constraint, headroom, time to breach, failover.

Utilizations are demand / limit for any resource: provider limits (RPM, TPM, ITPM, OTPM, RPD, TPD), KV memory,
compute. 1.0 is the ceiling. A utilization given as ``None`` (a blank cell) means "no such limit" and is skipped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

from planner.errors import ArgumentError, check_number, read_row

MONTHS_NEVER = 9999.0
"""What :func:`months_to_breach` returns when the ceiling is never reached (no growth, or nothing in use).
It is also the largest value it returns: 9,999 months is over 800 years, i.e. "not a planning concern"."""

UTIL_INFINITE = 1e9
"""An infinite utilization: demand on no capacity. A fleet whose latency SLOs are missed even at light load has a
sustainable rate of 0, so its LOAD, ``rate / sustainable rate``, has no finite value; a fleet of one replica has
nothing left when it is lost (N+1). A number, not a refusal, so that every figure built on it stays a figure: MAX
and the binding constraint pick it, the headroom ``1 / u`` is 0 to display precision, the breach month is 0 and
the status BREACH; a workbook cell shows :data:`INFINITE_CELL` (a number format with a condition) and the text
reports :data:`INFINITE_TEXT`. No real utilization comes near it (a billion times a limit)."""
INFINITE_TEXT = "infinite"
"""How :data:`UTIL_INFINITE` reads in ``planner size`` and the other text reports."""
INFINITE_CELL = "\u221e"
"""How it reads in a workbook cell: the infinity sign (the word does not fit a utilization column)."""


def utilization_text(utilization: float, *, decimals: int = 1) -> str:
    """A utilization as a percentage, or :data:`INFINITE_TEXT` at :data:`UTIL_INFINITE` and above.

    >>> utilization_text(0.4731), utilization_text(2e9), utilization_text(1.2, decimals=0)
    ('47.3%', 'infinite', '120%')
    """
    return INFINITE_TEXT if utilization >= UTIL_INFINITE else f"{utilization:.{decimals}%}"


def scale_utilization(utilization: float, *, factor: float) -> float:
    """A utilization with demand (or capacity) scaled by ``factor``; :data:`UTIL_INFINITE` stays as it is (demand
    on no capacity, more or less of it).

    >>> scale_utilization(0.5, factor=2.0), scale_utilization(UTIL_INFINITE, factor=0.5) == UTIL_INFINITE
    (1.0, True)
    """
    return utilization if utilization >= UTIL_INFINITE else utilization * factor


def _utilizations(utilizations: Sequence[float | None], argument: str = "utilizations") -> list[float | None]:
    values = list(utilizations)
    return [None if u is None else check_number(argument, u, minimum=0) for u in values]


def _present(utilizations: Sequence[float | None], argument: str = "utilizations") -> list[float]:
    values = []
    for u in utilizations:  # _utilizations' checks in its order, the blanks left out
        if u is None:
            continue
        if type(u) is float and 0.0 <= u < math.inf:  # check_number's answer for it (NaN fails the test): u
            values.append(u)
        else:
            values.append(check_number(argument, u, minimum=0))
    if not values:
        raise ArgumentError(argument, list(utilizations), "at least one utilization")
    return values


def binding_constraint(labels: Sequence[str], *, utilizations: Sequence[float | None]) -> str:
    """The label of the highest utilization: the constraint that binds first (C7, ``argmax_j u_j``).

    Ties go to the first label in order. Blank utilizations (``None``) are skipped.

    Reference: C7; legitlads "fleet = max(compute GPUs, memory GPUs)"; BentoML llm-optimizer
    ("theoretical overall limit = min of ceilings").

    >>> binding_constraint(["RPM", "ITPM", "OTPM", "KV"], utilizations=[0.42, 0.91, 0.35, 0.88])
    'ITPM'
    >>> binding_constraint(["RPM", "TPM"], utilizations=[0.5, 0.5])
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


def months_to_breach(utilization: float, *, monthly_growth_rate: float) -> float:
    """Months until a utilization reaches 1.0 under compound monthly growth ``g``:
    ``m = log(1/u) / log(1 + g)``, so that ``u * (1 + g)**m = 1``.

    Returns 0 when ``u >= 1`` (already at or over the ceiling) and :data:`MONTHS_NEVER` (9,999) when the ceiling is
    never reached (``u = 0``, or ``g <= 0`` with ``u < 1``); results above 9,999 are capped to it.

    Reference: C7 headroom under growth. ***Derived.***

    At 60 % utilization and 10 % growth a month, the limit is hit in 5.4 months:

    >>> round(months_to_breach(0.6, monthly_growth_rate=0.10), 2)
    5.36
    >>> months_to_breach(1.2, monthly_growth_rate=0.10), months_to_breach(0.5, monthly_growth_rate=0.0)
    (0.0, 9999.0)
    """
    u = check_number("utilization", utilization, minimum=0)
    g = check_number("monthly_growth_rate", monthly_growth_rate, minimum=-1, exclusive_minimum=True)
    if u >= 1.0:
        return 0.0
    if u == 0.0 or g <= 0.0:
        return MONTHS_NEVER
    return min(MONTHS_NEVER, math.log(1.0 / u) / math.log1p(g))


def months_to_breach_mixed(shares: Sequence[tuple[float, float]], *, tolerance_months: float = 1e-6) -> float:
    """Months until a utilization made of parts that grow at their own rates reaches 1.0:
    the first ``t >= 0`` with ``sum u_r (1 + g_r)^t = 1`` for ``(u_r, g_r)`` pairs (each route's share of one
    constraint and its monthly growth).

    Each term is convex in ``t``, so their sum is: the months below 1 form one interval from 0, and the crossing is
    found by doubling an upper bound and bisecting to ``tolerance_months``. 0 when the sum is already at or over 1,
    :data:`MONTHS_NEVER` (9,999) when it never gets there (no part with positive growth, or not within 9,999
    months). With one growth rate it is :func:`months_to_breach` of the sum.

    Reference: C7 headroom under growth, per route. ***Derived.***

    30 % of a limit growing 10 % a month beside 30 % that does not grow: ``0.3 x 1.1^t = 0.7``, 8.9 months (one
    route's growth alone; the plan-wide 10 % would say 5.4):

    >>> round(months_to_breach_mixed([(0.3, 0.10), (0.3, 0.0)]), 3)
    8.89
    >>> round(months_to_breach_mixed([(0.6, 0.10)]), 2) == round(months_to_breach(0.6, monthly_growth_rate=0.10), 2)
    True
    >>> months_to_breach_mixed([(0.5, 0.0), (0.2, -0.1)])
    9999.0
    """
    parts = [(check_number("share", u, minimum=0),
              check_number("monthly_growth_rate", g, minimum=-1, exclusive_minimum=True)) for u, g in shares]

    def total(t: float) -> float:
        # capped exponent: past e^700 the sum is over 1 anyway (and float would overflow)
        return sum(u * math.exp(min(700.0, t * math.log1p(g))) for u, g in parts if u > 0)

    if total(0.0) >= 1.0:
        return 0.0
    if not any(u > 0 and g > 0 for u, g in parts) or total(MONTHS_NEVER) < 1.0:
        return MONTHS_NEVER
    lo, hi = 0.0, 1.0
    while total(hi) < 1.0:
        lo, hi = hi, hi * 2
    while hi - lo > tolerance_months:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if total(mid) < 1.0 else (lo, mid)
    return min(MONTHS_NEVER, hi)


def failover_utilization(peak_demand: float, *, capacities: Sequence[float], failed: int = 0) -> float:
    """Utilization of the surviving backends when one is down and its traffic is rerouted (C8).

    ``u_survivors = peak_demand / (sum(capacities) - capacity_failed)``: the whole peak spread over the survivors in
    proportion to their capacity (a capacity-weighted router). ``failed`` is the 1-based position of the failed
    backend; 0 (default) takes the worst case, the largest backend down. Feasible when the result is <= 1.
    ``capacities`` share the unit of ``peak_demand`` (e.g. RPM limits, or requests/s each replica sustains at SLO).

    Reference: C8 (``sum_{i != k} capacity_i >= lambda_peak``). ***Derived;*** LiteLLM fallbacks execute this at
    runtime but do not size it.

    Three backends of 1,000 RPM carrying 1,500 RPM: with one down the other two run at 75 %.

    >>> failover_utilization(1500, capacities=[1000, 1000, 1000])
    0.75
    >>> failover_utilization(1500, capacities=[2000, 1000], failed=2)
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


def spillover(demand: float, *, primary_limit: float, buffer: float = 0.0) -> float:
    """Demand that overflows a primary backend kept under a safety buffer (C8):
    ``spill = max(0, demand - limit * (1 - buffer))``.

    Reference: C8. ***Derived.***

    >>> spillover(1500, primary_limit=1000,
    ...           buffer=0.2)  # 1,500 RPM against 1,000 RPM kept at 80 %: 700 RPM must go elsewhere
    700.0
    """
    d = check_number("demand", demand, minimum=0)
    lim = check_number("primary_limit", primary_limit, minimum=0)
    b = check_number("buffer", buffer, minimum=0, maximum=1)
    return max(0.0, d - lim * (1.0 - b))


def backend_sum(backend: str, *, backends: Sequence[str | None], values: Sequence[float | None]) -> float:
    """Sum of ``values`` over the rows whose backend is ``backend`` (case-insensitive; empty rows skipped).

    Routes on one backend share its limits, KV cache and FLOP/s (C7), so a backend's utilization is the sum of its
    routes' demands over its capacity: ``D_backend = sum(D_r for r with backend(r) = b)``.

    Reference: C7 (docs/method.md); Excel's ``SUMIFS(values, backends, backend)`` on numbers.

    Two chat routes on backend ``a`` with 1,200 and 800 RPM, one on ``b`` with 500:

    >>> backend_sum("a", backends=["a", "b", "A"], values=[1200, 500, 800])
    2000.0
    """
    key = (backend or "").strip().lower()
    if not key:
        raise ArgumentError("backend", backend, "a backend name")
    if len(backends) != len(values):
        raise ArgumentError("values", len(values), f"one value per route ({len(backends)} backends)")
    total = 0.0
    rows = _rows_on(backends, key)
    if rows is not None:  # the same rows in the same order as the loop below: the same sum
        for i in rows:
            v = values[i]
            if v is not None:
                total += float(read_row(v))
        return total
    for b, v in zip(backends, values):
        if b is not None and str(b).strip().lower() == key and v is not None:
            total += float(read_row(v))
    return total


BACKEND_ROWS_KEPT = 256
"""Backend columns :func:`_backend_rows` keeps (a 20-route plan's per-backend sums read one: the routes' backend
column)."""


@lru_cache(maxsize=BACKEND_ROWS_KEPT)
def _backend_rows(backends: tuple[str | None, ...]) -> dict[str, tuple[int, ...]] | None:
    """Each backend name of a column (stripped, lower case) -> the positions of its rows, in order; None cells
    skipped. None (no answer) when a cell is neither a text nor None: the callers then compare ``str(b)`` row by row
    as before (``1`` and ``1.0`` would be one key here and two texts there). Kept per column (the tuple of its cells:
    only texts and None, so an equal key is the same column), :data:`BACKEND_ROWS_KEPT` columns; a 20-route plan's
    BACKEND_SUM, BACKEND_MAX, BACKEND_ARGMAX and OUTAGE_SUM (about 150 calls) read one column, scanned once instead
    of once a call. Callers only read it.

    >>> _backend_rows(("a", None, " A", "b")), _backend_rows(("a", 1.0))
    ({'a': (0, 2), 'b': (3,)}, None)
    """
    out: dict[str, list[int]] = {}
    for i, b in enumerate(backends):
        if b is None:
            continue
        if type(b) is not str:
            return None
        out.setdefault(b.strip().lower(), []).append(i)
    return {k: tuple(v) for k, v in out.items()}


def _rows_on(backends: Sequence[str | None], key: str) -> tuple[int, ...] | None:
    """The positions of the rows of ``backends`` whose name (stripped, lower case) is ``key``, in order, or None
    where :func:`_backend_rows` gives no answer (the caller compares row by row)."""
    try:
        found = _backend_rows(tuple(backends))
    except TypeError:  # an unhashable cell
        return None
    return None if found is None else found.get(key, ())


def outage_sum(
    failed: str, *, receiver: str, backends: Sequence[str | None], failovers: Sequence[str | None],
    values: Sequence[float | None],
) -> float:
    """Sum of ``values`` over the routes that move from ``failed`` to ``receiver`` when ``failed`` is down (C8).

    In an outage every route of the failed backend moves to its failover at once, so the receiver carries its own
    routes plus all of them: ``D_outage(b -> f) = D_f + sum(D'_r for r with backend(r) = b and failover(r) = f)``,
    each moved route counted by the receiver's rules (``D'_r``). This returns the sum.

    Reference: C8 (docs/method.md).

    Two routes of ``a`` fail over to ``c``, one to ``d``:

    >>> outage_sum("a", receiver="c", backends=["a", "a", "a", "b"], failovers=["c", "C", "d", "c"],
    ...            values=[600, 600, 100, 50])
    1200.0
    """
    f, r = (failed or "").strip().lower(), (receiver or "").strip().lower()
    if not f or not r:
        raise ArgumentError("backend", failed if not f else receiver, "a backend name")
    if not len(backends) == len(failovers) == len(values):
        raise ArgumentError("values", len(values), "one backend, failover and value per route")
    total = 0.0
    rows = _rows_on(backends, f)
    if rows is not None:  # the failed backend's rows in order, then the loop's other tests: the same sum
        for i in rows:
            fo, v = failovers[i], values[i]
            if v is not None and fo is not None and str(fo).strip().lower() == r:
                total += float(read_row(v))
        return total
    for b, fo, v in zip(backends, failovers, values):
        if v is not None and b is not None and fo is not None and str(b).strip().lower() == f \
                and str(fo).strip().lower() == r:
            total += float(read_row(v))
    return total


def backend_max(backend: str, *, backends: Sequence[str | None], values: Sequence[float | None]) -> float:
    """The highest of ``values`` over the routes on ``backend`` (0 when it has none): the worst outage a backend's
    failure causes, over the receivers of its routes.

    >>> backend_max("a", backends=["a", "b", "a"], values=[0.6, 2.0, 1.2])
    1.2
    """
    key = (backend or "").strip().lower()
    rows = _rows_on(backends, key)
    if rows is not None:  # zip's rows: those of both sequences
        n = min(len(backends), len(values))
        found = [float(read_row(v)) for i in rows if i < n and (v := values[i]) is not None]
    else:
        found = [float(read_row(v)) for b, v in zip(backends, values)
                 if b is not None and v is not None and str(b).strip().lower() == key]
    return max(found, default=0.0)


def backend_argmax(
    backend: str, *, backends: Sequence[str | None], values: Sequence[float | None], labels: Sequence[str | None]
) -> str:
    """The label on the row of :func:`backend_max` (the first such row); ``""`` when the backend has no routes.

    >>> backend_argmax("a", backends=["a", "b", "a"], values=[0.6, 2.0, 1.2], labels=["c TPM", "x", "d KV"])
    'd KV'
    """
    key = (backend or "").strip().lower()
    best, label = None, ""
    rows = _rows_on(backends, key)
    if rows is not None:  # zip's rows of this backend, in order
        n = min(len(backends), len(values), len(labels))
        for i in rows:
            if i >= n:
                break
            v = values[i]
            if v is None:
                continue
            x = float(read_row(v))
            if best is None or x > best:
                lab = labels[i]
                best, label = x, "" if lab is None else str(read_row(lab))
        return label
    for b, v, lab in zip(backends, values, labels):
        if b is None or v is None or str(b).strip().lower() != key:
            continue
        x = float(read_row(v))
        if best is None or x > best:
            best, label = x, "" if lab is None else str(read_row(lab))
    return label


def n_plus_one_utilization(utilization: float, *, replicas: float) -> float:
    """A fleet's utilization with one replica lost (N+1): ``u * R / (R - 1)`` for load spread evenly over replicas.

    Reference: C8 (docs/method.md); N+1 redundancy: the fleet must carry its peak on ``R - 1`` replicas.

    A fleet of 4 replicas at 70 % KV runs at 93 % with one down:

    >>> round(n_plus_one_utilization(0.7, replicas=4), 4)
    0.9333

    A fleet whose SLOs no load meets stays at :data:`UTIL_INFINITE`:

    >>> n_plus_one_utilization(UTIL_INFINITE, replicas=4) == UTIL_INFINITE
    True

    One replica: losing it leaves no capacity, an infinite utilization (:data:`UTIL_INFINITE`) unless it is idle.

    >>> n_plus_one_utilization(0.3, replicas=1) == UTIL_INFINITE, n_plus_one_utilization(0.0, replicas=1)
    (True, 0.0)
    """
    u = check_number("utilization", utilization, minimum=0)
    r = check_number("replicas", replicas, minimum=1, integer=True)
    if r < 2:
        return UTIL_INFINITE if u > 0 else 0.0
    return scale_utilization(u, factor=r / (r - 1))
