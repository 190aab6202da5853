"""Evaluate a scenario: per route, demand, the utilization of every limit, KV fit, the binding constraint, headroom.

This is the method of the product in one call (:func:`size_scenario`):

1. demand at peak (D1-D4) per route;
2. provider limits: routes that share a provider backend share its limits, so utilization is the backend's total
   counted demand over its limit times its keys (C7), for every limit the tier sets (RPM, TPM, ITPM, OTPM, daily);
3. self-hosted fleets: Little's-law concurrency of every route on the fleet times KV bytes per request against the
   fleet's KV budget (M8-M11, P7), and decode throughput at the TPOT SLO (P1, P8);
4. the binding constraint (argmax utilization), headroom, headroom multiple and months to breach (C7), plus the
   failover check (C8): with the route's primary backend down, the failover backend's utilization after it takes
   the route's load on top of its own.

Everything is computed by the core modules; this module only wires a scenario to them.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field

from planner import catalog, cost, decision, demand, limits
from planner.errors import ArgumentError
from planner.scenario import Fleet, ProviderBackend, Route, Scenario
from planner.specs import ProviderLimits


@dataclass(frozen=True, kw_only=True)
class Constraint:
    """One ceiling a route runs against: ``utilization = demand / capacity`` (both in ``unit``)."""

    label: str
    demand: float
    capacity: float
    unit: str
    utilization: float


@dataclass(frozen=True, kw_only=True)
class RouteSizing:
    route: str
    kind: str
    backend: str
    rpm: float
    tpm: float
    itpm: float
    otpm: float
    constraints: tuple[Constraint, ...]
    binding: str
    max_utilization: float
    headroom: float
    headroom_multiple: float
    months_to_breach: float | None
    over_threshold: tuple[str, ...] = ()
    kv_bytes_per_request: float | None = None
    max_concurrency_per_replica: float | None = None
    kv_fit: float | None = None
    tpot_s: float | None = None
    tpot_slo_s: float | None = None
    ttft_s: float | None = None
    monthly_cost_usd: float | None = None
    monthly_cost_no_cache_usd: float | None = None
    failover_backend: str | None = None
    failover_utilization: float | None = None
    failover_binding: str | None = None
    notes: tuple[str, ...] = field(default=())


@dataclass(frozen=True, kw_only=True)
class SizingReport:
    scenario: str
    path: str
    utilization_threshold: float
    routes: tuple[RouteSizing, ...]

    def to_dict(self) -> dict:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, default=_json_default)


def _json_default(value: object) -> object:
    if isinstance(value, float) and math.isinf(value):
        return None
    raise TypeError(type(value))


# --- provider backends -------------------------------------------------------------------------------------------


def provider_limits_for(backend: ProviderBackend) -> ProviderLimits:
    """The catalog tier for a provider backend, with the scenario's overrides applied."""
    base = catalog.get_provider_limits(backend.provider, backend.tier, backend.model)
    overrides = {
        name: getattr(backend, name)
        for name in (
            "rpm", "tpm", "itpm", "otpm", "rpd", "tpd", "cached_reads_count_itpm", "reserves_max_tokens", "window_s",
            "usd_per_mtok_input", "usd_per_mtok_cached_input", "usd_per_mtok_cache_write", "usd_per_mtok_output",
        )
        if getattr(backend, name) is not None
    }
    if not overrides:
        return base
    from dataclasses import replace

    return replace(base, **overrides, source=f"{base.source}; overridden in scenario: {', '.join(sorted(overrides))}")


def _provider_demand(route: Route, tier: ProviderLimits, avg_to_peak: float = 1.0) -> dict[str, float]:
    """Per-minute demand of one route as this provider counts it (D1-D4), plus daily volume at the average rate
    (``avg_to_peak`` x peak: a day holds one peak, not 1,440 of them)."""
    out = {
        "rpm": demand.rpm(route.peak_qps),
        "otpm": demand.otpm(route.peak_qps, route.avg_output_tokens),
    }
    itpm = demand.itpm_counted(
        route.peak_qps, route.avg_input_tokens, route.cache_hit_rate, cached_reads_count=tier.cached_reads_count_itpm
    )
    out["itpm"] = itpm
    if tier.reserves_max_tokens:
        max_tokens = route.max_tokens if route.max_tokens is not None else route.avg_output_tokens
        weight = getattr(tier, "output_token_weight", 1.0) or 1.0
        out["tpm"] = itpm + demand.rpm(route.peak_qps) * max_tokens * weight
    else:
        out["tpm"] = itpm + out["otpm"]
    out["rpd"] = demand.requests_per_day(route.peak_qps * avg_to_peak)
    out["tpd"] = out["tpm"] * avg_to_peak * demand.MINUTES_PER_DAY
    return out


def _provider_constraints(name: str, tier: ProviderLimits, keys: int, totals: dict[str, float]) -> list[Constraint]:
    found = []
    for limit_name in limits.LIMIT_NAMES:
        cap = getattr(tier, limit_name)
        if cap is None:
            continue
        u = limits.utilization(totals[limit_name], cap, keys)
        unit = "per day" if limit_name.endswith("d") else "per min"
        found.append(
            Constraint(label=f"{name} {limit_name.upper()}", demand=totals[limit_name], capacity=cap * keys,
                       unit=unit, utilization=u)
        )
    return found


def _route_cost(route: Route, tier: ProviderLimits, avg_to_peak: float) -> tuple[float, float] | None:
    if tier.usd_per_mtok_input is None or tier.usd_per_mtok_output is None:
        return None
    avg_qps = route.peak_qps * avg_to_peak
    with_cache = cost.api_cost_per_request_usd(
        route.avg_input_tokens, avg_output_tokens=route.avg_output_tokens, usd_per_mtok_input=tier.usd_per_mtok_input,
        usd_per_mtok_output=tier.usd_per_mtok_output, cache_hit_rate=route.cache_hit_rate,
        usd_per_mtok_cached_input=tier.usd_per_mtok_cached_input, cache_write_tokens=route.cache_write_tokens,
        usd_per_mtok_cache_write=tier.usd_per_mtok_cache_write,
    )
    without = cost.api_cost_per_request_usd(
        route.avg_input_tokens, avg_output_tokens=route.avg_output_tokens, usd_per_mtok_input=tier.usd_per_mtok_input,
        usd_per_mtok_output=tier.usd_per_mtok_output,
    )
    return cost.monthly_cost_usd(with_cache, avg_qps=avg_qps), cost.monthly_cost_usd(without, avg_qps=avg_qps)


# --- the whole scenario ------------------------------------------------------------------------------------------


def _sum(dicts: list[dict[str, float]]) -> dict[str, float]:
    keys = set().union(*dicts) if dicts else set()
    return {k: sum(d.get(k, 0.0) for d in dicts) for k in keys}


def size_scenario(scenario: Scenario) -> SizingReport:
    """Size every route of ``scenario`` (see the module docstring for the method)."""
    tiers = {b.name: provider_limits_for(b) for b in scenario.providers}
    providers = {b.name: b for b in scenario.providers}
    fleets = {f.name: f for f in scenario.fleets}
    by_backend: dict[str, list[Route]] = {}
    for r in scenario.routes:
        by_backend.setdefault(scenario.backend(r.backend).name, []).append(r)

    def backend_load(name: str, extra: list[Route]) -> list[Constraint]:
        routes = by_backend.get(name, []) + extra
        if name in tiers:
            totals = _sum([_provider_demand(r, tiers[name], scenario.plan.avg_to_peak_ratio) for r in routes])
            return _provider_constraints(name, tiers[name], providers[name].keys, totals)
        return fleet_constraints(fleets[name], routes)

    threshold = scenario.plan.utilization_threshold
    results = []
    for r in scenario.routes:
        backend = scenario.backend(r.backend)
        constraints = backend_load(backend.name, [])
        notes: list[str] = []
        kv: dict[str, float | None] = {}
        costs = None
        if isinstance(backend, ProviderBackend):
            costs = _route_cost(r, tiers[backend.name], scenario.plan.avg_to_peak_ratio)
        else:
            kv = fleet_route_details(backend, r)
        if not constraints:
            raise ArgumentError(f"backend {backend.name}", "no limits", "a backend with at least one limit")
        labels = [c.label for c in constraints]
        utils = [c.utilization for c in constraints]
        peak = decision.max_utilization(utils)
        months = (
            decision.months_to_breach(peak, scenario.plan.monthly_growth) if scenario.plan.monthly_growth > 0 else None
        )
        fo_backend = fo_util = fo_binding = None
        if r.failover:
            fo = scenario.backend(r.failover)
            fo_constraints = backend_load(fo.name, [r])
            fo_backend = fo.name
            fo_util = decision.max_utilization([c.utilization for c in fo_constraints])
            fo_binding = decision.binding_constraint(
                [c.label for c in fo_constraints], [c.utilization for c in fo_constraints]
            )
            if fo_util > 1:
                notes.append(f"failover to {fo.name} does not absorb this route: {fo_binding} at {fo_util:.0%}")
        else:
            notes.append("no failover backend")
        results.append(
            RouteSizing(
                route=r.name, kind=r.kind, backend=backend.name,
                rpm=demand.rpm(r.peak_qps),
                tpm=demand.tpm(r.peak_qps, r.avg_input_tokens, r.avg_output_tokens),
                itpm=demand.itpm(r.peak_qps, r.avg_input_tokens),
                otpm=demand.otpm(r.peak_qps, r.avg_output_tokens),
                constraints=tuple(constraints),
                binding=decision.binding_constraint(labels, utils),
                max_utilization=peak,
                headroom=decision.headroom(utils),
                headroom_multiple=decision.headroom_multiple(utils) if peak > 0 else math.inf,
                months_to_breach=months,
                over_threshold=tuple(c.label for c in constraints if c.utilization > threshold),
                monthly_cost_usd=costs[0] if costs else kv.get("monthly_cost_usd"),
                monthly_cost_no_cache_usd=costs[1] if costs else kv.get("monthly_cost_usd"),
                kv_bytes_per_request=kv.get("kv_bytes_per_request"),
                max_concurrency_per_replica=kv.get("max_concurrency_per_replica"),
                kv_fit=kv.get("kv_fit"),
                tpot_s=kv.get("tpot_s"),
                tpot_slo_s=r.tpot_slo_s,
                ttft_s=kv.get("ttft_s"),
                failover_backend=fo_backend, failover_utilization=fo_util, failover_binding=fo_binding,
                notes=tuple(notes),
            )
        )
    return SizingReport(
        scenario=scenario.plan.name, path=scenario.path, utilization_threshold=threshold, routes=tuple(results)
    )


# --- self-hosted fleets ------------------------------------------------------------------------------------------


def fleet_constraints(fleet: Fleet, routes: list[Route]) -> list[Constraint]:
    """KV memory and decode-compute utilization of a fleet carrying ``routes``."""
    from planner import selfhosted

    return selfhosted.fleet_constraints(fleet, routes)


def fleet_route_details(fleet: Fleet, route: Route) -> dict[str, float | None]:
    from planner import selfhosted

    return selfhosted.route_details(fleet, route)


# --- text rendering ----------------------------------------------------------------------------------------------


def _fmt(x: float | None, pct: bool = False) -> str:
    if x is None:
        return "-"
    if math.isinf(x):
        return "inf"
    if pct:
        return f"{x:.1%}"
    for scale, suffix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M")):  # FLOP/s reach 1e16
        if abs(x) >= scale:
            return f"{x / scale:,.2f}{suffix}"
    if abs(x) >= 1e4:
        return f"{x:,.0f}"
    return f"{x:,.3g}" if abs(x) < 10 else f"{x:,.1f}"


def render_text(report: SizingReport) -> str:
    """The human report of ``planner size``."""
    lines = [f"plan {report.scenario} ({report.path}); policy threshold {report.utilization_threshold:.0%}", ""]
    for r in report.routes:
        lines.append(f"route {r.route} [{r.kind}] on {r.backend}")
        lines.append(
            f"  demand: {_fmt(r.rpm)} RPM, {_fmt(r.tpm)} TPM (input {_fmt(r.itpm)}, output {_fmt(r.otpm)})"
        )
        for c in r.constraints:
            flag = "  <-- binding" if c.label == r.binding else ""
            over = "  OVER THRESHOLD" if c.label in r.over_threshold else ""
            lines.append(
                f"  {c.label:<34} {_fmt(c.demand):>10} / {_fmt(c.capacity):>10} {c.unit:<8} "
                f"{_fmt(c.utilization, pct=True):>7}{flag}{over}"
            )
        if r.kv_fit is not None:
            lines.append(
                f"  KV: {_fmt(r.kv_bytes_per_request)} B/request, max concurrency/replica "
                f"{_fmt(r.max_concurrency_per_replica)}, KV fit {_fmt(r.kv_fit, pct=True)}"
            )
        if r.tpot_s is not None:
            slo = f" (SLO {r.tpot_slo_s * 1000:.0f} ms)" if r.tpot_slo_s else ""
            lines.append(f"  TPOT at peak batch {r.tpot_s * 1000:.1f} ms{slo}")
        if r.monthly_cost_usd is not None:
            lines.append(
                f"  monthly cost ${_fmt(r.monthly_cost_usd)} (without caching ${_fmt(r.monthly_cost_no_cache_usd)})"
            )
        months = "never (no growth)" if r.months_to_breach is None else f"{_fmt(r.months_to_breach)} months"
        lines.append(
            f"  binding: {r.binding} at {_fmt(r.max_utilization, pct=True)}; headroom {_fmt(r.headroom, pct=True)}"
            f" ({_fmt(r.headroom_multiple)}x demand); breach in {months}"
        )
        if r.failover_backend:
            lines.append(
                f"  failover to {r.failover_backend}: {r.failover_binding} at "
                f"{_fmt(r.failover_utilization, pct=True)}"
            )
        for note in r.notes:
            lines.append(f"  note: {note}")
        lines.append("")
    return "\n".join(lines)


def bundled_scenario_path() -> str:
    """Path of the bundled seed scenario (``planner/data/scenarios/seed.toml``)."""
    from importlib import resources

    return str(resources.files("planner") / "data" / "scenarios" / "seed.toml")
