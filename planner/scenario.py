"""Plans written as small TOML scenario files: routes, provider backends and self-hosted fleets.

A scenario is the text form of the template's inputs; ``planner size`` evaluates one, the template builder
turns one into a filled workbook. Loading validates every field and raises :class:`~planner.errors.ArgumentError`
naming the file and the field (``routes[2].peak_qps``), never a traceback.

Format (see ``samples/seed.toml``)::

    [plan]
    name = "seed"
    utilization_threshold = 0.8     # policy: utilizations above this are findings
    monthly_growth = 0.08           # demand growth per month, for months-to-breach

    [[providers]]                   # a provider API backend
    name = "anthropic-sonnet"
    provider = "anthropic"
    tier = "tier-4"
    model = "claude-sonnet-4.5"
    keys = 2                        # keys / deployments / regions sharing the load
    # any limit or price may be overridden: rpm, tpm, itpm, otpm, usd_per_mtok_input, ...
    # a provisioned-throughput quote: pt_usd_per_unit_hour, pt_input_tpm_per_unit, pt_output_tpm_per_unit

    [[fleets]]                      # a self-hosted fleet
    name = "llama70b-h100"
    model = "llama-3.1-70b"
    gpu = "h100-sxm"
    tp = 4
    replicas = 6

    [[routes]]
    name = "completion"
    kind = "latency-critical"       # or "bulk"
    peak_qps = 400
    avg_input_tokens = 1500
    avg_output_tokens = 60
    backend = "llama70b-h100"
    failover = "anthropic-sonnet"
    monthly_growth = 0.15           # optional: this route's own growth per month (blank: the plan's)
    demand_index = [1, 1, 1.5]      # optional: its own demand multiple month by month (before its growth)
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from planner.defaults import DEFAULT_GPU_MEMORY_UTILIZATION, DEFAULT_MBU
from planner.errors import ArgumentError, PlannerError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROUTE_KINDS = ("latency-critical", "bulk", "interactive")


@dataclass(frozen=True, kw_only=True)
class Plan:
    name: str = "plan"
    utilization_threshold: float = 0.8
    monthly_growth: float = 0.0
    avg_to_peak_ratio: float = 0.5  # average QPS over the month / peak QPS, for monthly cost
    burst_factor: float | None = None  # busiest window / average window; None: Poisson at p99
    notes: str = ""
    forecast_months: int = 12  # months the forecast covers (12-36)
    sensitivity_spread: float = 0.2  # the tornado's and the demand cases' +- fraction (What-if sheet)
    demand_index: Any = None  # optional list: the demand multiple of months 1, 2, ... (blank: compound growth)


@dataclass(frozen=True, kw_only=True)
class ProviderBackend:
    name: str
    provider: str
    tier: str
    model: str
    keys: int = 1
    rpm: float | None = None
    tpm: float | None = None
    itpm: float | None = None
    otpm: float | None = None
    rpd: float | None = None
    tpd: float | None = None
    cached_reads_count_itpm: bool | None = None
    reserves_max_tokens: bool | None = None
    window_s: float | None = None
    scope: str | None = None
    output_token_weight: float | None = None
    usd_per_mtok_input: float | None = None
    usd_per_mtok_cached_input: float | None = None
    usd_per_mtok_cache_write: float | None = None
    usd_per_mtok_output: float | None = None
    # a provisioned-throughput quote (the Forecast's tblProvisioned; Bedrock publishes none)
    pt_usd_per_unit_hour: float | None = None
    pt_input_tpm_per_unit: float | None = None
    pt_output_tpm_per_unit: float | None = None


@dataclass(frozen=True, kw_only=True)
class Fleet:
    name: str
    model: str
    gpu: str
    tp: int = 1
    pp: int = 1
    replicas: int = 1
    gpu_memory_utilization: float = DEFAULT_GPU_MEMORY_UTILIZATION
    kv_dtype: str = "auto"
    weight_dtype: str = "auto"
    engine: str = "vllm"
    usd_per_gpu_hour: float | None = None
    mbu: float = DEFAULT_MBU
    mfu: float = 0.4


@dataclass(frozen=True, kw_only=True)
class Route:
    name: str
    kind: str = "latency-critical"
    peak_qps: float
    avg_input_tokens: float
    avg_output_tokens: float
    p95_context_tokens: float | None = None
    max_tokens: float | None = None
    cache_hit_rate: float = 0.0
    cache_write_tokens: float = 0.0
    ttft_slo_s: float | None = None
    tpot_slo_s: float | None = None
    backend: str
    failover: str | None = None
    prefix_tokens: float | None = None
    distinct_prefixes: float | None = None
    new: bool = False  # a new model or product (demand not yet known): the What-if sheet recommends an API
    profile: Any = None  # a profile name (Profiles sheet) or 24 hourly multipliers, or {weekday=[24], weekend=[24]}
    monthly_growth: float | None = None  # the route's own demand growth per month (None: the plan's)
    demand_index: Any = None  # optional list: the route's own demand multiple of months 1, 2, ... (Forecast)


@dataclass(frozen=True, kw_only=True)
class Scenario:
    plan: Plan
    providers: tuple[ProviderBackend, ...] = ()
    fleets: tuple[Fleet, ...] = ()
    routes: tuple[Route, ...] = ()
    path: str = ""

    def backend(self, name: str) -> ProviderBackend | Fleet:
        backends: tuple[ProviderBackend | Fleet, ...] = (*self.providers, *self.fleets)
        for b in backends:
            if b.name.lower() == name.lower():
                return b
        raise ArgumentError("backend", name, "the name of a [[providers]] or [[fleets]] entry")


def _build(cls: type, table: Any, where: str) -> Any:
    if not isinstance(table, dict):
        raise ArgumentError(where, table, "a TOML table")
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise ArgumentError(f"{where}.{unknown[0]}", table[unknown[0]], f"one of the fields {', '.join(known)}")
    values: dict[str, Any] = {}
    for name, f in known.items():
        if name not in table:
            continue
        value = table[name]
        expected = str(f.type)
        if ("float" in expected or "int" in expected) and "str" not in expected:
            if isinstance(value, bool) and "bool" not in expected:
                raise ArgumentError(f"{where}.{name}", value, "a number")
            if not isinstance(value, (int, float)):
                raise ArgumentError(f"{where}.{name}", value, "a number")
            if "int" in expected and "float" not in expected and value != int(value):
                raise ArgumentError(f"{where}.{name}", value, "a whole number")
        elif expected.startswith("str") and not isinstance(value, str):
            raise ArgumentError(f"{where}.{name}", value, "text")
        elif expected == "bool" and not isinstance(value, bool):
            raise ArgumentError(f"{where}.{name}", value, "true or false")
        values[name] = value
    try:
        return cls(**values)
    except TypeError as exc:  # a required field is missing
        missing = str(exc).split("'")[1] if "'" in str(exc) else "?"
        raise ArgumentError(f"{where}.{missing}", None, "a value (required)") from None


def parse_scenario(data: dict[str, Any], *, path: str = "<scenario>") -> Scenario:
    """Build a :class:`Scenario` from parsed TOML, checking names, kinds and references."""
    try:
        plan = _build(Plan, data.get("plan", {}), "plan")
        providers = tuple(
            _build(ProviderBackend, t, f"providers[{i}]") for i, t in enumerate(data.get("providers", []))
        )
        fleets = tuple(_build(Fleet, t, f"fleets[{i}]") for i, t in enumerate(data.get("fleets", [])))
        routes = tuple(_build(Route, t, f"routes[{i}]") for i, t in enumerate(data.get("routes", [])))
        unknown = sorted(set(data) - {"plan", "providers", "fleets", "routes"})
        if unknown:
            raise ArgumentError(unknown[0], "...", "one of the sections plan, providers, fleets, routes")
        names = [b.name.lower() for b in (*providers, *fleets)]
        if len(names) != len(set(names)):
            dup = next(n for n in names if names.count(n) > 1)
            raise ArgumentError("backend names", dup, "unique names across [[providers]] and [[fleets]]")
        if not routes:
            raise ArgumentError("routes", [], "at least one [[routes]] entry")
        for i, r in enumerate(routes):
            if r.kind not in ROUTE_KINDS:
                raise ArgumentError(f"routes[{i}].kind", r.kind, f"one of {', '.join(ROUTE_KINDS)}")
            for attr in ("backend", "failover"):
                ref = getattr(r, attr)
                if ref is not None and ref.lower() not in names:
                    raise ArgumentError(f"routes[{i}].{attr}", ref, "the name of a [[providers]] or [[fleets]] entry")
    except ArgumentError as exc:
        raise ArgumentError(f"{path}: {exc.argument}", exc.given, exc.allowed) from None
    return Scenario(plan=plan, providers=providers, fleets=fleets, routes=routes, path=path)


def load_scenario(path: str | Path) -> Scenario:
    """Read and parse a scenario TOML file."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ArgumentError("scenario", str(p), "an existing TOML file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise PlannerError(f"{p}: not valid TOML ({exc})") from None
    return parse_scenario(data, path=str(p))


__all__ = ["Scenario", "Plan", "ProviderBackend", "Fleet", "Route", "load_scenario", "parse_scenario"]
