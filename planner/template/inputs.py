"""A plan's input cells: the bundled catalog (GPUs and Models sheets) and a scenario (Plan, Providers, Fleet, Routes).

``planner size`` evaluates ``{**catalog_inputs(), **scenario_inputs(s)}`` through
:func:`planner.template.evaluate_plan`,
exactly what the template builder writes into a sample workbook. Pure: the catalog is read through
:mod:`planner.catalog` (package data), nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from planner import template as ts
from planner.errors import ArgumentError


def catalog_inputs() -> dict[tuple[str, str], Any]:
    """GPUs and Models sheets filled from the bundled catalog (each row exactly as :mod:`planner.catalog_sheet`
    reads it back: a bundled row's spec token gives the bundled spec unchanged)."""
    from planner import catalog, catalog_sheet

    out: dict[tuple[str, str], Any] = {}
    sheets: tuple[tuple[ts.Table, tuple[catalog.GpuSpec | catalog.ModelSpec, ...]], ...] = (
        (ts.GPUS, catalog.gpus()[: ts.GPU_ROWS]), (ts.MODELS, catalog.models()[: ts.MODEL_ROWS]))
    for table, specs in sheets:
        for i, spec in enumerate(specs):
            for k, v in catalog_sheet.catalog_row(spec).items():
                if v is not None:
                    out[(table.sheet, table.cell(k, i))] = float(v) if isinstance(v, int) else v
    out.update(profile_inputs())
    return out


def profile_inputs(custom: tuple[tuple[str, Any], ...] = ()) -> dict[tuple[str, str], Any]:
    """The Profiles sheet: the bundled profiles (planner/data/demand_profiles.json), then ``custom`` ones
    ``(name, {"weekday": [24], "weekend": [24] | None, "source": str})``; one row per day type."""
    from planner.forecast import data
    from planner.template.profiles import HOUR_KEYS, PROFILE_ROWS, PROFILES

    rows: list[dict[str, Any]] = []
    for name, p in (*((p["name"], p) for p in data.profiles()), *custom):
        for days in ("weekday", "weekend"):
            hours = p.get(days)
            if hours is None:
                continue
            row = {"name": name, "days": days if p.get("weekend") is not None else "all",
                   "source": p.get("source")}
            row.update({k: float(v) for k, v in zip(HOUR_KEYS, hours)})
            rows.append(row)
    if len(rows) > PROFILE_ROWS:
        raise ArgumentError("profiles", len(rows), f"at most {PROFILE_ROWS} profile rows (template rows)")
    out: dict[tuple[str, str], Any] = {}
    for i, row in enumerate(rows):
        _put(out, PROFILES, i, row)
    return out


def _route_profile(scenario: Any, i: int, r: Any) -> tuple[str | None, tuple[str, Any] | None]:
    """A route's profile: a name (bundled or custom), or 24 numbers / a weekday-weekend table -> a custom profile."""
    from planner.forecast import data
    from planner.forecast.profile import check_profile

    where = f"{scenario.path}: routes[{i}].profile"
    p = r.profile
    if p is None:
        return None, None
    if isinstance(p, str):
        if data.profile(p) is None:
            names = ", ".join(x["name"] for x in data.profiles())
            raise ArgumentError(where, p, f"a bundled profile ({names}) or 24 hourly multipliers")
        return p, None
    table = {"weekday": p, "weekend": None} if isinstance(p, list) else p
    if not isinstance(table, dict) or set(table) - {"weekday", "weekend"} or "weekday" not in table:
        raise ArgumentError(where, p, "a profile name, a list of 24 multipliers or {weekday = [24], weekend = [24]}")
    try:
        weekday = check_profile("weekday", table["weekday"])
        weekend = None if table.get("weekend") is None else check_profile("weekend", table["weekend"])
    except ArgumentError as exc:
        raise ArgumentError(f"{where}.{exc.argument}", exc.given, exc.allowed) from None
    name = f"{r.name} (own)"
    return name, (name, {"weekday": weekday, "weekend": weekend, "source": f"Entered for route {r.name} in "
                         f"{scenario.path}"})


def _put(out: dict, t: ts.Table, i: int, row: Mapping[str, Any]) -> None:
    for k, v in row.items():
        if v is not None:
            out[(t.sheet, t.cell(k, i))] = float(v) if isinstance(v, int) and not isinstance(v, bool) else v


def scenario_inputs(scenario: Any) -> dict[tuple[str, str], Any]:
    """The template's input cells for a :class:`planner.scenario.Scenario` (provider limits from the catalog
    unless the scenario overrides them)."""
    from planner import catalog

    for name, n, limit in (("routes", len(scenario.routes), ts.ROUTE_ROWS),
                           ("providers", len(scenario.providers), ts.PROVIDER_ROWS),
                           ("fleets", len(scenario.fleets), ts.FLEET_ROWS)):
        if n > limit:
            raise ArgumentError(f"{scenario.path}: {name}", n, f"at most {limit} entries (template rows)")
    out: dict[tuple[str, str], Any] = {}
    p = scenario.plan
    settings = {"name": p.name, "utilization_threshold": p.utilization_threshold,
                "monthly_growth": p.monthly_growth, "avg_to_peak_ratio": p.avg_to_peak_ratio,
                "burst_factor": getattr(p, "burst_factor", None), "forecast_months": p.forecast_months,
                "sensitivity_spread": p.sensitivity_spread}
    for i, (name, *_rest) in enumerate(ts.PLAN_SETTINGS):
        if settings[name] is not None:
            out[(ts.PLAN.sheet, ts.PLAN.cell("value", i))] = settings[name]
    for i, b in enumerate(scenario.providers):
        lim = catalog.get_provider_limits(b.provider, b.tier, b.model)
        row: dict[str, Any] = {"name": b.name, "provider": b.provider, "tier": b.tier, "model": b.model,
                               "keys": b.keys}
        for k in ("rpm", "tpm", "itpm", "otpm", "rpd", "tpd", "window_s", "cached_reads_count_itpm",
                  "reserves_max_tokens", "output_token_weight", "usd_per_mtok_input", "usd_per_mtok_cached_input",
                  "usd_per_mtok_cache_write", "usd_per_mtok_output", "scope", "multiplied_by", "source", "as_of"):
            own = getattr(b, k, None)
            row[k] = own if own is not None else getattr(lim, k)
        row["raise_by"] = "; ".join(lim.raise_by) or None
        for k in ("pt_usd_per_unit_hour", "pt_input_tpm_per_unit", "pt_output_tpm_per_unit"):
            row[k] = getattr(b, k, None)
        _put(out, ts.PROVIDERS, i, row)
    for i, f in enumerate(scenario.fleets):
        _put(out, ts.FLEET, i, {
            "name": f.name, "model": f.model, "gpu": f.gpu, "tp": f.tp, "pp": f.pp, "replicas": f.replicas,
            "gpu_memory_utilization": f.gpu_memory_utilization, "kv_dtype": f.kv_dtype,
            "weight_dtype": f.weight_dtype, "engine": f.engine, "usd_per_gpu_hour": f.usd_per_gpu_hour,
            "mbu": f.mbu, "mfu": f.mfu,
        })
    custom = []
    for i, r in enumerate(scenario.routes):
        profile, own = _route_profile(scenario, i, r)
        if own is not None:
            custom.append(own)
        if profile is not None:
            out[(ts.ROUTES.sheet, ts.ROUTES.cell("profile", i))] = profile
        ctx = r.p95_context_tokens if r.p95_context_tokens is not None else r.avg_input_tokens + r.avg_output_tokens
        _put(out, ts.ROUTES, i, {
            "name": r.name, "kind": r.kind, "peak_qps": r.peak_qps, "avg_input_tokens": r.avg_input_tokens,
            "avg_output_tokens": r.avg_output_tokens, "p95_context_tokens": ctx,
            "max_tokens": r.max_tokens if r.max_tokens is not None else r.avg_output_tokens * 4,
            "cache_hit_rate": r.cache_hit_rate, "cache_write_tokens": r.cache_write_tokens,
            "ttft_slo_s": r.ttft_slo_s if r.ttft_slo_s is not None else 2.0,
            "tpot_slo_s": r.tpot_slo_s if r.tpot_slo_s is not None else 0.1,
            "backend": r.backend, "failover": r.failover, "prefix_tokens": r.prefix_tokens,
            "distinct_prefixes": r.distinct_prefixes,
            "new_route": True if getattr(r, "new", False) else None, "monthly_growth": r.monthly_growth,
        })
        for m, v in enumerate(_demand_index(r.demand_index, f"{scenario.path}: routes[{i}].demand_index"), start=1):
            out[(ts.ROUTE_DEMAND.sheet, ts.ROUTE_DEMAND.cell(f"m{m:02d}", i))] = v
    if custom:
        out.update(profile_inputs(tuple(custom)))
    for i, v in enumerate(_demand_index(p.demand_index, f"{scenario.path}: plan.demand_index")):
        out[(ts.FORECAST.sheet, ts.FORECAST.cell("demand_index", i))] = v
    return out


def _demand_index(values: Any, where: str) -> list[float]:
    """A scenario's demand index (the plan's, or a route's own): at most one multiple >= 0 per forecast month."""
    if values is None:
        return []
    if not isinstance(values, list) or len(values) > ts.FORECAST.rows or any(
            isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0 for v in values):
        raise ArgumentError(where, values, f"a list of at most {ts.FORECAST.rows} demand multiples >= 0 (month 1, "
                            "2, ...)")
    return [float(v) for v in values]
