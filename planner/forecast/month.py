"""One forecast month: the plan's backends with demand scaled, what binds, and the step that relieves it.

Each backend carries, from the evaluated plan (month 1):

- ``linear_util``: its highest utilization linear in demand (RPM ... COMPUTE, LOAD), with its label ``binding``;
- for a fleet, what the serving model needs to recompute TTFT and TPOT at another load (``latency``).

In month ``m`` with demand multiple ``x``:

- a linear utilization is ``u * x``, except BURST with a Poisson burst factor, recomputed at the scaled rate
  (:func:`linear_util`);
- a fleet's TTFT / TPOT utilization is the serving model's TTFT / TPOT at ``fleet_qps * x / replicas`` over the
  tightest SLO of its routes (a saturated replica counts as its load utilization, at least 1, as on Results);
- a fleet's KV utilization is not linear in demand: the KV in flight is Little's law, requests/s x E2E, and E2E
  grows with the load (:func:`kv_util`); the prefixes kept warm on every replica do not move;
- routes with their own growth rate (Routes, template 2.6.0): a backend whose routes all carry one multiple is scaled
  by it as above; one whose routes grow apart is re-derived for the month from its routes' parts
  (:func:`regrown`: every limit, the request mix, the sustainable rate, compute and KV in flight), exactly what
  Results gives for the plan with each route's QPS times its own multiple;
- the month's utilization is the highest of these (the plan as it stands); above the policy threshold the relieving
  step is sized: ``units_needed`` keys where the provider's scope multiplies the limit by keys, else the ways to
  raise the limit (a higher tier, another region, provisioned throughput: not priced); for a fleet the replicas that
  bring both the linear and the latency utilizations under the threshold, at ``step_usd`` per replica-month.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from planner.decision import UTIL_INFINITE, scale_utilization
from planner.forecast.growth import units_needed
from planner.limits import MULTIPLYING_SCOPES, poisson_burst_factor

LatencyFn = Callable[["Backend", float], "tuple[float, float] | None"]
"""``(backend, requests/s per replica) -> (ttft_s, tpot_s)``, or None where the replica saturates. The fleet's
request mix is the backend's (``mix_*``)."""

SustainableFn = Callable[["Backend", "RoutePart"], float]
"""``(backend, route) -> requests/s per replica`` the fleet sustains for that route at the backend's request mix:
the offline maximum for a bulk route, else the highest rate within the route's SLOs (Q5, Results'
``sustainable_rate``); 0 where no rate meets them."""

LIMITS = ("RPM", "TPM", "ITPM", "OTPM", "RPD", "TPD")
"""The provider limits per minute and per day, in the order of :attr:`RoutePart.limit_shares`."""

MAX_REPLICA_FACTOR = 8
"""The replica search stops at 8 times the fleet (a step beyond it is reported as such)."""


@dataclass(frozen=True, kw_only=True)
class Backend:
    name: str
    kind: str  # "provider" | "fleet"
    top_route: str
    linear_util: float
    binding: str
    units: int  # keys (provider) or replicas (fleet)
    scope: str = ""
    multiplied_by: str = ""
    raise_by: str = ""
    step_usd: float = 0.0  # fleet: cost of one more replica per month
    fleet_qps: float = 0.0
    ttft_slo_s: float | None = None
    tpot_slo_s: float | None = None
    load_util: float = 0.0
    limit_util: float = 0.0  # provider: the highest of RPM ... TPD (linear in demand)
    limit_binding: str = ""
    burst_util: float = 0.0  # provider: the limit in its enforcement window (BURST)
    burst_rpm: float = 0.0  # > 0: the burst factor is Poisson at this RPM (it changes with demand); 0: a fixed factor
    window_s: float = 0.0
    # fleet, KV through the serving model (kv_util); kv_rate_s None: no KV split given, KV scales linearly
    compute_util: float = 0.0
    kv_prefix_util: float = 0.0  # the prefixes kept warm on every replica / the KV budget
    kv_rate_s: float | None = None  # sum over routes of in-flight KV share / E2E: the in-flight share per second of E2E
    kv_tpot_rate_s: float = 0.0  # the same, each route's weighted by its output tokens - 1
    kv_slo_util: float = 0.0  # the in-flight share with each route's E2E at its SLOs (a saturated replica)
    # fleet: the request mix the serving model is called with (Results' mix_* columns)
    mix_input_tokens: float = 0.0
    mix_output_tokens: float = 1.0
    mix_cache_hit_rate: float = 0.0


@dataclass(frozen=True, kw_only=True)
class RoutePart:
    """One route's part of its backend at month 1, and the demand multiple it carries in the month.

    ``limit_shares``: its part of each provider limit's utilization (RPM ... TPD, :data:`LIMITS`), so that the
    backend's utilization of a limit is their sum; ``rpm`` its requests per minute (the burst window's rate);
    ``compute_share`` and the ``kv_*`` parts as Results and the Forecast route table give them for a fleet."""

    backend: str
    multiple: float
    qps: float = 0.0
    input_tokens: float = 0.0
    output_tokens: float = 0.0
    cache_hit_rate: float = 0.0
    limit_shares: tuple[float, ...] = (0.0,) * len(LIMITS)
    rpm: float = 0.0
    compute_share: float = 0.0
    kv_rate_s: float = 0.0
    kv_tpot_rate_s: float = 0.0
    kv_slo_util: float = 0.0
    bulk: bool = False
    ttft_slo_s: float | None = None
    tpot_slo_s: float | None = None


@dataclass(frozen=True, kw_only=True)
class Month:
    max_util: float
    binding: str  # "backend CONSTRAINT"
    route: str
    action: str  # "none" when every backend is within the threshold (never "": a cached "" is recomputed by readers)
    action_usd: float
    util_after: float
    headroom_util: float = 0.0  # the highest utilization linear in demand (RPM ... LOAD): 1 / C7's headroom
    backends: tuple[BackendMonth, ...] = ()  # each backend's own figures in the month (the per-route forecast)

    def backend(self, name: str) -> BackendMonth | None:
        """The first of :attr:`backends` whose name, stripped and in lower case, is ``name``'s (None: none is), by
        :func:`_backends_by_name` (a month's names lowered once, not once a call)."""
        return _backends_by_name(self).get(name.strip().lower())


_BY_NAME: dict[int, tuple[Month, dict[str, BackendMonth]]] = {}
BY_NAME_KEPT = 256
"""Months :func:`_backends_by_name` keeps (then emptied): a 20-route plan has about 15 months, each asked about 20
times (FORECAST_BACKEND_MONTH, FORECAST_ROUTE_MONTH)."""


def _backends_by_name(month: Month) -> dict[str, BackendMonth]:
    """``month``'s backends by name (stripped, lower case), the first of a name in :attr:`Month.backends`' order,
    kept per month object (:data:`_BY_NAME`, the month held, so its ``id`` is not reused; a frozen dataclass whose
    backends are a tuple, so the same answer). Callers only read it."""
    hit = _BY_NAME.get(id(month))
    if hit is not None and hit[0] is month:
        return hit[1]
    out: dict[str, BackendMonth] = {}
    for b in month.backends:
        out.setdefault(b.name.strip().lower(), b)
    if len(_BY_NAME) >= BY_NAME_KEPT:
        _BY_NAME.clear()
    _BY_NAME[id(month)] = (month, out)
    return out


@dataclass(frozen=True, kw_only=True)
class BackendMonth:
    """One backend in a forecast month: its highest utilization and constraint, its own step ("none" within the
    threshold) and the step's monthly cost (added replicas; keys and tiers are not priced)."""

    name: str
    max_util: float
    binding: str
    action: str
    action_usd: float


def _burst(b: Backend, x: float) -> float:
    """BURST at demand multiple ``x``: linear at a fixed burst factor; with a Poisson factor the busiest window's
    count is the Poisson quantile at the scaled rate, ``u_x = u_1 x b(r x) / b(r)`` (:func:`poisson_burst_factor`)."""
    if b.burst_rpm <= 0 or b.window_s <= 0 or b.burst_util <= 0:
        return b.burst_util * x
    if x == 0:
        return 0.0
    return b.burst_util * x * (poisson_burst_factor(b.burst_rpm * x, window_s=b.window_s)
                               / _base_burst_factor(b.burst_rpm, b.window_s))


@lru_cache(maxsize=256, typed=True)
def _base_burst_factor(per_min_rate: float, window_s: float) -> float:
    """``poisson_burst_factor(per_min_rate, window_s=window_s)`` kept per (rate, window): a backend's month-1 factor,
    the same in each of a plan's 15 months. 256 entries (a plan has one per bursty provider backend); a refusal is
    not kept."""
    return poisson_burst_factor(per_min_rate, window_s=window_s)


def linear_util(b: Backend, x: float) -> tuple[float, str]:
    """The backend's highest utilization linear in demand at multiple ``x`` and its label: ``u x``, except that a
    Poisson burst factor is recomputed at the scaled rate (a busier backend is relatively less bursty).

    60 requests a minute checked per second (Poisson: 4 in the 99th-percentile second, 4x the mean) at 80 % of
    the window's limit; demand doubled: 6 in that second (3x the mean of 2), so 120 %, not 160 %:

    >>> b = Backend(name="api", kind="provider", top_route="r", linear_util=0.8, binding="BURST", units=1,
    ...             limit_util=0.3, limit_binding="RPM", burst_util=0.8, burst_rpm=60, window_s=1)
    >>> u, label = linear_util(b, 2.0)
    >>> round(u, 6), label
    (1.2, 'BURST')
    """
    if b.burst_rpm <= 0 or b.burst_util <= 0:
        return scale_utilization(b.linear_util, factor=x), b.binding
    burst = _burst(b, x)
    rest = b.limit_util * x
    return (burst, "BURST") if burst > rest else (rest, b.limit_binding or b.binding)


@dataclass(frozen=True, kw_only=True)
class FleetAt:
    """A fleet at one demand multiple and replica count: its KV utilization (None where no KV split is given, so
    KV scales with the month-1 highest) and its latency utilization with the SLO that sets it."""

    kv_util: float | None
    latency_util: float
    latency_label: str  # "TTFT" | "TPOT" | "" (no latency SLO)


def _fleet_at(b: Backend, x: float, replicas: int, latency: LatencyFn) -> FleetAt:
    """A fleet at demand multiple ``x`` on ``replicas``, from one serving-model call."""
    if b.kind != "fleet" or b.fleet_qps <= 0:
        return FleetAt(kv_util=None, latency_util=0.0, latency_label="")
    slo = b.ttft_slo_s is not None or b.tpot_slo_s is not None
    got = latency(b, b.fleet_qps * x / replicas) if (slo or b.kv_rate_s is not None) else None
    kv = kv_util(b, x, replicas, got) if b.kv_rate_s is not None else None
    if not slo:
        return FleetAt(kv_util=kv, latency_util=0.0, latency_label="")
    if got is None:  # saturated: the load utilization, at least 1 (Results' rule)
        u = max(scale_utilization(b.load_util, factor=x * b.units / replicas), 1.0)
        return FleetAt(kv_util=kv, latency_util=u, latency_label="TTFT")
    ttft, tpot = got
    u_ttft = ttft / b.ttft_slo_s if b.ttft_slo_s else 0.0
    u_tpot = tpot / b.tpot_slo_s if b.tpot_slo_s else 0.0
    if u_ttft >= u_tpot:
        return FleetAt(kv_util=kv, latency_util=u_ttft, latency_label="TTFT")
    return FleetAt(kv_util=kv, latency_util=u_tpot, latency_label="TPOT")


def _fleet_linear(b: Backend, x: float, replicas: int, kv: float | None) -> tuple[float, str]:
    """A fleet's highest utilization of KV, COMPUTE and LOAD (Results' order): KV through :func:`kv_util`, the
    others linear in demand and in 1 / replicas. Without a KV split: the month-1 highest, linear."""
    if kv is None:
        return scale_utilization(b.linear_util, factor=x * b.units / replicas), b.binding
    best = (kv, "KV")
    for u, label in ((b.compute_util, "COMPUTE"), (b.load_util, "LOAD")):
        scaled = scale_utilization(u, factor=x * b.units / replicas)
        if scaled > best[0]:
            best = (scaled, label)
    return best


def _fleet_max(b: Backend, x: float, replicas: int, latency: LatencyFn) -> float:
    """A fleet's highest utilization (KV, COMPUTE, LOAD, TTFT, TPOT) at demand multiple ``x`` on ``replicas``."""
    at = _fleet_at(b, x, replicas, latency)
    return max(_fleet_linear(b, x, replicas, at.kv_util)[0], at.latency_util)


def kv_util(b: Backend, x: float, replicas: int, latency: tuple[float, float] | None) -> float:
    """A fleet's KV utilization at demand multiple ``x`` on ``replicas``: the prefixes kept warm, plus the KV in
    flight, which is requests/s x E2E (Little's law, P7) with E2E = TTFT + (O - 1) TPOT at the month's load
    (M10/M11 as Results computes it, route by route):

    ``kv = prefix + (units / replicas) x (R_ttft TTFT_x + R_tpot TPOT_x)``, with ``R_ttft = sum k_r``,
    ``R_tpot = sum k_r (O_r - 1)`` and ``k_r`` route r's in-flight KV share over its E2E at month 1 (KV per second
    of E2E). Where the serving model saturates, Results holds a request for the E2E at its SLOs:
    ``prefix + (units / replicas) x kv_slo_util``. Reference: Little's law (P7), M10, M11.

    A fleet with 10 % of its KV budget in warm prefixes and 20 % in flight (one route, 400 output tokens, TTFT
    0.5 s, TPOT 25 ms: E2E 10.475 s, so k = 0.2 / 10.475); demand doubled on the same replicas, TPOT 40 ms and
    TTFT 0.6 s: E2E 16.56 s, KV 0.1 + 2 x 0.2 x 16.56 / 10.475 = 73.2 %, not 50 %:

    >>> k = 0.2 / 10.475
    >>> b = Backend(name="f", kind="fleet", top_route="r", linear_util=0.3, binding="KV", units=2,
    ...             kv_prefix_util=0.1, kv_rate_s=k, kv_tpot_rate_s=k * 399, kv_slo_util=0.2)
    >>> round(kv_util(b, 2.0, 2, (0.6, 0.04)), 4)
    0.7324
    """
    assert b.kv_rate_s is not None  # a backend without a KV split scales month 1's KV linearly (_fleet_linear)
    flight = b.kv_slo_util if latency is None else b.kv_rate_s * latency[0] + b.kv_tpot_rate_s * latency[1]
    return b.kv_prefix_util + b.units / replicas * x * flight


def _weighted(values: Sequence[tuple[float, float]]) -> float:
    """``sum w v / sum w`` over ``(weight, value)`` pairs; 0 where the weights add up to 0 (Results' IFERROR)."""
    total = sum(w for w, _ in values)
    return sum(w * v for w, v in values) / total if total > 0 else 0.0


def regrown(b: Backend, parts: Sequence[RoutePart], sustainable: SustainableFn) -> Backend:
    """The backend in a month whose routes carry different demand multiples, re-derived from its routes' parts as
    Results derives it for the plan with each route's QPS times its multiple ``x_r`` (evaluate the result at
    multiple 1):

    - provider: each limit's utilization ``u_L = sum c_rL x_r`` (its binding the highest, RPM ... TPD in Results'
      order); the burst window's rate ``s = sum rpm_r x_r / sum rpm_r`` times month 1's, BURST through
      :func:`linear_util`'s rule at ``s`` (a Poisson factor recomputed at that rate, a fixed one linear);
    - fleet: the load ``sum q_r x_r``; the request mix weighted by it (input and output tokens per request, the
      cached share of input, as Results' ``mix_*``); COMPUTE ``sum c_r x_r``; the KV in flight per second of E2E
      ``sum k_r x_r`` (and its TPOT and SLO parts); LOAD ``(load / replicas) / sustainable_r`` at its highest over
      the routes, each route's sustainable rate at the new mix (:data:`SustainableFn`; infinite where it is 0, as
      Results).

    Reference: C7 (utilization = demand / limit, summed over the routes on a backend), Q5, Q6, M10/M11, P2/P4.

    Two routes on one provider, 30 % and 20 % of its ITPM, the first doubled: 80 % (not 100 % for a doubled plan,
    nor 50 % for a flat one):

    >>> b = Backend(name="api", kind="provider", top_route="a", linear_util=0.5, binding="ITPM", units=1,
    ...             limit_util=0.5, limit_binding="ITPM")
    >>> parts = [RoutePart(backend="api", multiple=2.0, limit_shares=(0.1, 0, 0.3, 0, 0, 0)),
    ...          RoutePart(backend="api", multiple=1.0, limit_shares=(0.05, 0, 0.2, 0, 0, 0))]
    >>> m = regrown(b, parts, lambda b, r: 0.0)
    >>> round(m.limit_util, 6), m.limit_binding
    (0.8, 'ITPM')
    """
    if b.kind != "fleet":
        shares = [sum(p.limit_shares[i] * p.multiple for p in parts) for i in range(len(LIMITS))]
        top = max(range(len(LIMITS)), key=lambda i: (shares[i], -i))
        limit, limit_label = shares[top], LIMITS[top]
        rpm = sum(p.rpm for p in parts)
        s = sum(p.rpm * p.multiple for p in parts) / rpm if rpm > 0 else 0.0
        burst = _burst(b, s)
        burst_rpm = b.burst_rpm * s if b.burst_rpm > 0 else 0.0
        linear, label = (burst, "BURST") if burst > limit else (limit, limit_label)
        return replace(b, linear_util=linear, binding=label, limit_util=limit, limit_binding=limit_label,
                       burst_util=burst, burst_rpm=burst_rpm)
    qps = [(p.qps * p.multiple, p) for p in parts]
    load = sum(q for q, _ in qps)
    mixed = replace(
        b, fleet_qps=load,
        mix_input_tokens=_weighted([(q, p.input_tokens) for q, p in qps]),
        mix_output_tokens=_weighted([(q, p.output_tokens) for q, p in qps]),
        mix_cache_hit_rate=_weighted([(q * p.input_tokens, p.cache_hit_rate) for q, p in qps]),
        compute_util=sum(p.compute_share * p.multiple for p in parts),
        kv_rate_s=sum(p.kv_rate_s * p.multiple for p in parts),
        kv_tpot_rate_s=sum(p.kv_tpot_rate_s * p.multiple for p in parts),
        kv_slo_util=sum(p.kv_slo_util * p.multiple for p in parts))
    rate = load / b.units
    load_util = 0.0
    for p in parts:
        sustained = sustainable(mixed, p)
        load_util = max(load_util, rate / sustained if sustained > 0 else UTIL_INFINITE)
    linear, label = (mixed.compute_util, "COMPUTE") if mixed.compute_util >= load_util else (load_util, "LOAD")
    return replace(mixed, load_util=load_util, linear_util=linear, binding=label)


def month_backend(b: Backend, parts: Sequence[RoutePart], *, multiplier: float,
                  sustainable: SustainableFn | None) -> tuple[Backend, float]:
    """The backend as a month evaluates it and the multiple it is scaled by: ``(b, x)`` where its routes carry one
    multiple ``x`` (or it has no route parts: the month's ``multiplier``), else ``(regrown(b), 1)``."""
    multiples = {p.multiple for p in parts}
    if not multiples:
        return b, multiplier
    if len(multiples) == 1:
        return b, multiples.pop()
    if sustainable is None:
        raise ValueError(f"backend {b.name}: its routes grow apart and no sustainable-rate function was given")
    return regrown(b, parts, sustainable), 1.0


def evaluate_month(backends: Sequence[Backend], *, multiplier: float, threshold: float,
                   latency: LatencyFn, routes: Sequence[RoutePart] = (),
                   sustainable: SustainableFn | None = None) -> Month:
    """The month's highest utilization, what binds, and the steps that bring every backend under ``threshold``.

    Reference: C7 (utilization, binding constraint) applied to the plan with demand times ``multiplier``; the
    serving model (Q2/Q4) for TTFT and TPOT; :func:`planner.forecast.growth.units_needed` for keys and replicas.
    ``routes``: each route's part and own multiple in the month (a backend whose routes grow apart is re-derived,
    :func:`month_backend`); without them every backend carries ``multiplier``.

    A provider at 60 % of a per-key limit with 2 keys, demand doubled, policy 80 %: 120 %, two more keys.

    >>> b = Backend(name="api", kind="provider", top_route="chat", linear_util=0.6, binding="ITPM", units=2,
    ...             scope="key", multiplied_by="key")
    >>> m = evaluate_month([b], multiplier=2.0, threshold=0.8, latency=lambda b, r: None)
    >>> m.max_util, m.binding, m.action, round(m.util_after, 6)
    (1.2, 'api ITPM', 'api: keys 2 -> 3 (ITPM 120% -> 80%)', 0.8)

    A fleet whose SLOs no load meets (LOAD at :data:`planner.decision.UTIL_INFINITE`): no step sizes replicas.

    >>> f = Backend(name="gpu", kind="fleet", top_route="chat", linear_util=1e9, binding="LOAD", units=4,
    ...             load_util=1e9, step_usd=9000.0)
    >>> m = evaluate_month([f], multiplier=1.0, threshold=0.8, latency=lambda b, r: None)
    >>> m.binding, m.action_usd, m.action.startswith("gpu: its latency SLOs are missed at any load")
    ('gpu LOAD', 0.0, True)
    """
    worst = (-1.0, "none", "none")
    after_worst = 0.0
    steps: list[str] = []
    cost = 0.0
    headroom = 0.0
    per_backend: list[BackendMonth] = []
    for plan_b in backends:
        key = plan_b.name.strip().lower()
        # the multiple this backend carries: the month's, its routes' one, or 1 for a backend re-derived from them
        b, x = month_backend(plan_b, [p for p in routes if p.backend.strip().lower() == key], multiplier=multiplier,
                             sustainable=sustainable)
        before = (len(steps), cost)
        at = _fleet_at(b, x, b.units, latency)
        kv, lat, lat_label = at.kv_util, at.latency_util, at.latency_label
        lin, lin_label = (_fleet_linear(b, x, b.units, kv) if b.kind == "fleet"
                          else linear_util(b, x))
        headroom = max(headroom, lin)
        u, label = (lin, lin_label) if lin >= lat else (lat, lat_label)
        if u > worst[0]:
            worst = (u, f"{b.name} {label}", b.top_route)
        if u <= threshold:
            after_worst = max(after_worst, u)
            per_backend.append(BackendMonth(name=b.name, max_util=u, binding=label, action="none", action_usd=0.0))
            continue
        if b.kind == "fleet" and b.load_util >= UTIL_INFINITE:
            # the SLOs are missed even at light load: replicas lower the load, never the latency of a lone request
            steps.append(f"{b.name}: its latency SLOs are missed at any load (LOAD infinite), so no replica "
                         "count relieves it: another fleet (Options) or looser SLOs")
            after_worst = max(after_worst, u)
        elif b.kind == "fleet":
            # linear in 1 / replicas first (COMPUTE, LOAD; KV too without a split), then one replica at a time
            # while KV or a latency SLO is still above the threshold
            flat = lin if kv is None else max(b.compute_util, b.load_util) * x
            n = max(units_needed(b.units, utilization=flat, threshold=threshold), b.units)
            limit = b.units * MAX_REPLICA_FACTOR
            after = _fleet_max(b, x, n, latency)
            while after > threshold and n < limit:
                n += 1
                after = _fleet_max(b, x, n, latency)
            steps.append(f"{b.name}: replicas {b.units} -> {n} ({label} {u:.0%} -> {after:.0%})"
                         + (" (search stopped at 8x)" if after > threshold else ""))
            cost += (n - b.units) * b.step_usd
            after_worst = max(after_worst, after)
        elif b.scope in MULTIPLYING_SCOPES:
            n = units_needed(b.units, utilization=lin, threshold=threshold)
            after = lin * b.units / n
            what = b.multiplied_by or b.scope
            noun = "keys" if what == "key" else f"{what}s"
            steps.append(f"{b.name}: {noun} {b.units} -> {n} ({label} {u:.0%} -> {after:.0%})")
            after_worst = max(after_worst, after)
        else:
            ways = b.raise_by or "a higher tier or a quota increase"
            steps.append(f"{b.name}: {label} {u:.0%} is per {b.scope or 'organization'}, keys do not add to it; "
                         f"raise it: {ways} (not priced)")
            after_worst = max(after_worst, u)
        per_backend.append(BackendMonth(name=b.name, max_util=u, binding=label,
                                        action="; ".join(steps[before[0]:]) or "none", action_usd=cost - before[1]))
    return Month(max_util=max(worst[0], 0.0), binding=worst[1], route=worst[2], action="; ".join(steps) or "none",
                 action_usd=cost, util_after=after_worst, headroom_util=headroom,
                 backends=tuple(per_backend))


__all__ = ["LIMITS", "Backend", "BackendMonth", "Month", "RoutePart", "evaluate_month", "kv_util", "linear_util",
           "month_backend", "regrown"]
