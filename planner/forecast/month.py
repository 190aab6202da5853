"""One forecast month: the plan's backends with demand scaled, what binds, and the step that relieves it.

Each backend carries, from the evaluated plan (month 1):

- ``linear_util``: its highest utilization linear in demand (RPM ... COMPUTE, LOAD), with its label ``binding``;
- for a fleet, what the serving model needs to recompute TTFT and TPOT at another load (``latency``).

In month ``m`` with demand multiple ``x``:

- a linear utilization is ``u * x``, except BURST with a Poisson burst factor, recomputed at the scaled rate
  (:func:`linear_util`);
- a fleet's TTFT / TPOT utilization is the serving model's TTFT / TPOT at ``fleet_qps * x / replicas`` over the
  tightest SLO of its routes (a saturated replica counts as its load utilization, at least 1, as on Results);
- the month's utilization is the highest of these (the plan as it stands); above the policy threshold the relieving
  step is sized: ``units_needed`` keys where the provider's scope multiplies the limit by keys, else the ways to
  raise the limit (a higher tier, another region, provisioned throughput: not priced); for a fleet the replicas that
  bring both the linear and the latency utilizations under the threshold, at ``step_usd`` per replica-month.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from planner.forecast.growth import units_needed
from planner.limits import MULTIPLYING_SCOPES, poisson_burst_factor

LatencyFn = Callable[["Backend", float], "tuple[float, float] | None"]
"""``(backend, requests/s per replica) -> (ttft_s, tpot_s)``, or None where the replica saturates."""

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
        for b in self.backends:
            if b.name.strip().lower() == name.strip().lower():
                return b
        return None


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
                               / poisson_burst_factor(b.burst_rpm, window_s=b.window_s))


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
        return b.linear_util * x, b.binding
    burst = _burst(b, x)
    rest = b.limit_util * x
    return (burst, "BURST") if burst > rest else (rest, b.limit_binding or b.binding)


def _latency_util(b: Backend, x: float, replicas: int, latency: LatencyFn) -> tuple[float, str]:
    if b.kind != "fleet" or (b.ttft_slo_s is None and b.tpot_slo_s is None) or b.fleet_qps <= 0:
        return 0.0, ""
    got = latency(b, b.fleet_qps * x / replicas)
    if got is None:  # saturated: the load utilization, at least 1 (Results' rule)
        return max(b.load_util * x * b.units / replicas, 1.0), "TTFT"
    ttft, tpot = got
    u_ttft = ttft / b.ttft_slo_s if b.ttft_slo_s else 0.0
    u_tpot = tpot / b.tpot_slo_s if b.tpot_slo_s else 0.0
    return (u_ttft, "TTFT") if u_ttft >= u_tpot else (u_tpot, "TPOT")


def evaluate_month(backends: Sequence[Backend], *, multiplier: float, threshold: float,
                   latency: LatencyFn) -> Month:
    """The month's highest utilization, what binds, and the steps that bring every backend under ``threshold``.

    Reference: C7 (utilization, binding constraint) applied to the plan with demand times ``multiplier``; the
    serving model (Q2/Q4) for TTFT and TPOT; :func:`planner.forecast.growth.units_needed` for keys and replicas.

    A provider at 60 % of a per-key limit with 2 keys, demand doubled, policy 80 %: 120 %, two more keys.

    >>> b = Backend(name="api", kind="provider", top_route="chat", linear_util=0.6, binding="ITPM", units=2,
    ...             scope="key", multiplied_by="key")
    >>> m = evaluate_month([b], multiplier=2.0, threshold=0.8, latency=lambda b, r: None)
    >>> m.max_util, m.binding, m.action, round(m.util_after, 6)
    (1.2, 'api ITPM', 'api: keys 2 -> 3 (ITPM 120% -> 80%)', 0.8)
    """
    worst = (-1.0, "none", "none")
    after_worst = 0.0
    steps: list[str] = []
    cost = 0.0
    headroom = 0.0
    per_backend: list[BackendMonth] = []
    for b in backends:
        before = (len(steps), cost)
        lin, lin_label = linear_util(b, multiplier)
        headroom = max(headroom, lin)
        lat, lat_label = _latency_util(b, multiplier, b.units, latency)
        u, label = (lin, lin_label) if lin >= lat else (lat, lat_label)
        if u > worst[0]:
            worst = (u, f"{b.name} {label}", b.top_route)
        if u <= threshold:
            after_worst = max(after_worst, u)
            per_backend.append(BackendMonth(name=b.name, max_util=u, binding=label, action="none", action_usd=0.0))
            continue
        if b.kind == "fleet":
            n = units_needed(b.units, utilization=lin, threshold=threshold)
            limit = b.units * MAX_REPLICA_FACTOR
            lat_n, _ = _latency_util(b, multiplier, n, latency)
            while lat_n > threshold and n < limit:
                n += 1
                lat_n, _ = _latency_util(b, multiplier, n, latency)
            after = max(lin * b.units / n, lat_n)
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


__all__ = ["Backend", "BackendMonth", "Month", "evaluate_month", "linear_util"]
