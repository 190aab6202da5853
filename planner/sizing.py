"""``planner size``: a view of the one plan method.

A scenario becomes the template's input cells (:func:`planner.template.inputs.scenario_inputs`, with the bundled
catalog on the GPUs and Models sheets), the template evaluates them (:func:`planner.template.evaluate_plan`, the
same evaluation that writes a workbook's cached values and that the validator checks submitted plans against), and
this module reads the Results, Outages and Summary cells back into a report. Nothing here computes a figure: every
number the report shows is the value of a workbook cell, so ``planner size`` and the workbook cannot disagree.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from planner import template as ts
from planner.decision import INFINITE_TEXT, MONTHS_NEVER, UTIL_INFINITE, utilization_text
from planner.excel.values import XlError
from planner.scenario import Scenario
from planner.template.inputs import catalog_inputs, scenario_inputs

CellValue = float | str | bool | None
"""A cell as the report carries it: a number, text (an error cell holds its error text), a flag, or empty."""


@dataclass(frozen=True, kw_only=True)
class Constraint:
    """One ceiling of a route's backend: ``label`` is ``"<backend> <CONSTRAINT>"`` (``"chat-api TPM"``)."""

    label: str
    utilization: CellValue
    cell: str


@dataclass(frozen=True, kw_only=True)
class RouteSizing:
    """One route's row of Results, read back: ``results`` holds every Results cell of the row by column key."""

    route: str
    kind: str
    backend: str
    backend_type: str
    constraints: tuple[Constraint, ...]
    binding: CellValue
    max_utilization: CellValue
    headroom_multiple: CellValue
    months_to_breach: CellValue
    status: CellValue
    monthly_cost_usd: CellValue
    monthly_cost_no_cache_usd: CellValue
    failover_backend: str | None
    failover_utilization: CellValue
    failover_check: CellValue
    errors: tuple[str, ...] = ()
    results: dict[str, CellValue] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Outage:
    """One backend down (a row of Summary's Outages table): its worst receiver, what binds there, and for a fleet
    its utilization with one replica lost (N+1)."""

    backend: str
    receiver: CellValue
    constraint: CellValue
    utilization: CellValue
    n_plus_one_utilization: CellValue
    status: CellValue


@dataclass(frozen=True, kw_only=True)
class FleetOption:
    """One row of the Options sheet, read back: a fleet the plan's fleet could run on instead (``rank`` 1 = the
    cheapest; ``only_gpu`` set: the cheapest on the fleet's own GPU). ``cells`` holds every Options cell of the row
    by column key."""

    fleet: str
    rank: CellValue
    only_gpu: CellValue
    gpu: CellValue
    tp: CellValue
    pp: CellValue
    weight_dtype: CellValue
    kv_cache_dtype: CellValue
    replicas: CellValue
    gpus: CellValue
    monthly_cost_usd: CellValue
    usd_per_mtok: CellValue
    saving_monthly_usd: CellValue
    binding: CellValue
    disaggregated: bool | None
    prefill_replicas: CellValue
    decode_replicas: CellValue
    kv_transfer_gb_s: CellValue
    kv_bytes_per_token: CellValue
    cell: str
    cells: dict[str, CellValue] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class SizingReport:
    scenario: str
    path: str
    utilization_threshold: float
    routes: tuple[RouteSizing, ...]
    totals: dict[str, CellValue] = field(default_factory=dict)
    outages: tuple[Outage, ...] = ()
    fleet_options: tuple[FleetOption, ...] = ()
    cache_hit_lever: Any = None
    """W5 (:func:`planner.whatif.levers.cache_hit_lever`): one point of hit rate per route and for all at once."""
    selfhost_vs_api: tuple[Any, ...] = ()
    """W1-W4 per route, the What-if sheet's cells."""
    sensitivity: Any = None
    """The tornado and the low / base / high demand cases (:func:`planner.whatif.levers.sensitivity`)."""
    forecast: tuple[dict[str, Any], ...] | None = None  # planner size --months N: per route per month
    """``{month, route, backend, monthly_cost_usd, binding, max_utilization, action}`` (tblForecastByRoute)."""
    forecast_months: tuple[dict[str, Any], ...] | None = None  # planner size --months N: the plan-wide months
    commitments: dict[str, Any] | None = None  # planner size --months N: the Forecast sheet's commitment tables

    @property
    def has_errors(self) -> bool:
        """True when any Results cell of a route holds an error (the plan cannot be sized as written)."""
        return any(r.errors for r in self.routes)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for key in ("forecast", "forecast_months", "commitments"):
            if out[key] is None:
                out.pop(key)
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, default=_json_default, allow_nan=False)


def _json_default(value: object) -> object:
    raise TypeError(type(value))


def _plain(value: Any) -> CellValue:
    """A cell value as JSON carries it: errors as their text, non-finite numbers as their Excel error."""
    if isinstance(value, XlError):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return "#NUM!"
    return value


def _is_error(value: Any) -> bool:
    """An Excel error, or a registry function's refusal (its one-line message where a number belongs)."""
    return isinstance(value, XlError) or (isinstance(value, str) and ": got " in value)


def evaluate_scenario(scenario: Scenario) -> dict[tuple[str, str], Any]:
    """Every formula cell of the scenario's plan, as the template computes it: ``{(sheet, cell): value}``."""
    return ts.evaluate_plan({**catalog_inputs(), **scenario_inputs(scenario)})


def _route_sizing(scenario: Scenario, i: int, values: Mapping[tuple[str, str], Any]) -> RouteSizing:
    route = scenario.routes[i]
    res = ts.RESULTS

    def cell(key: str) -> CellValue:
        return _plain(values[(res.sheet, res.cell(key, i))])

    results = {key: cell(key) for key in ts.RESULT_KEYS}
    backend_type = str(results["backend_type"])
    constraints = []
    for label, key in zip(ts.CONSTRAINTS, ts.UTILIZATION_KEYS):
        u = results[key]
        if u == 0 or u == "":  # a ceiling this backend does not have (Results shows 0)
            continue
        constraints.append(Constraint(label=f"{route.backend} {label}", utilization=u,
                                      cell=f"{res.sheet}!{res.cell(key, i)}"))
    errors = tuple(f"{res.sheet}!{res.cell(k, i)}: {v}" for k, v in results.items() if _is_error(v))
    return RouteSizing(
        route=route.name, kind=route.kind, backend=route.backend, backend_type=backend_type,
        constraints=tuple(constraints),
        binding=results["binding_constraint"], max_utilization=results["max_util"],
        headroom_multiple=results["headroom_multiple"], months_to_breach=results["months_to_breach"],
        status=results["status"],
        monthly_cost_usd=results["cost_monthly_usd"], monthly_cost_no_cache_usd=results["cost_monthly_no_cache_usd"],
        failover_backend=route.failover, failover_utilization=results["failover_util"],
        failover_check=results["failover_ok"], errors=errors, results=results,
    )


def _fleet_options(values: Mapping[tuple[str, str], Any]) -> tuple[FleetOption, ...]:
    """The Options sheet's rows that carry a fleet with load, as the template computed them."""
    t = ts.OPTIONS
    out = []
    for i in range(t.rows):
        cells = {key: _plain(values[(t.sheet, t.cell(key, i))]) for key in ts.OPTION_KEYS}
        if cells["fleet"] in ("", None) or cells["load_qps"] in ("", None, 0, 0.0):
            continue
        mode = cells["mode"]
        out.append(FleetOption(
            fleet=str(cells["fleet"]), rank=cells["rank"], only_gpu=cells["only_gpu"], gpu=cells["gpu"],
            tp=cells["tp"], pp=cells["pp"], weight_dtype=cells["weight_dtype"],
            kv_cache_dtype=cells["kv_cache_dtype"], replicas=cells["replicas"], gpus=cells["gpus"],
            monthly_cost_usd=cells["cost_monthly_usd"], usd_per_mtok=cells["usd_per_mtok"],
            saving_monthly_usd=cells["saving_monthly_usd"], binding=cells["binding"],
            disaggregated=None if mode not in ("aggregated", "disaggregated") else mode == "disaggregated",
            prefill_replicas=cells["prefill_replicas"], decode_replicas=cells["decode_replicas"],
            kv_transfer_gb_s=cells["kv_transfer_gb_s"], kv_bytes_per_token=cells["kv_bytes_per_token"],
            cell=f"{t.sheet}!{t.cell('fleet', i)}", cells=cells))
    return tuple(out)


def _with_spread(scenario: Scenario, spread: float | None) -> Scenario:
    import dataclasses

    if spread is None:
        return scenario
    return dataclasses.replace(scenario, plan=dataclasses.replace(scenario.plan, sensitivity_spread=spread))


def size_scenario(scenario: Scenario, *, values: Mapping[tuple[str, str], Any] | None = None, whatif: bool = True,
                  spread: float | None = None) -> SizingReport:
    """Evaluate ``scenario`` through the template and read every route's Results row back; with ``whatif``, also
    the cache-hit lever (a re-evaluation per route), self-host vs API and the sensitivity (the What-if sheet's
    tornado and demand cases, a view of their cells; ``spread`` replaces the Plan's ``sensitivity_spread``) of
    :mod:`planner.whatif.levers`. ``values``: the evaluated plan, where the caller has it (with the spread applied)."""
    if values is None:
        scenario = _with_spread(scenario, spread)
        values = evaluate_scenario(scenario)
    totals = {key_label: _plain(values[(ts.SUMMARY.sheet, f"{ts.TOTALS_COL_VALUE}{ts.TOTALS_FIRST_ROW + j}")])
              for j, (key_label, _key, _expr, _fmt) in enumerate(ts.TOTALS)}
    out = ts.OUTAGES

    def cell(key: str, i: int) -> CellValue:
        return _plain(values[(out.sheet, out.cell(key, i))])

    outages = tuple(
        Outage(backend=str(cell("backend", i)), receiver=cell("receiver", i), constraint=cell("binding", i),
               utilization=cell("worst_util", i), n_plus_one_utilization=cell("n_plus_one_util", i),
               status=cell("status", i))
        for i in range(out.rows) if cell("backend", i) not in ("", None)
    )
    return SizingReport(
        scenario=scenario.plan.name, path=scenario.path,
        utilization_threshold=scenario.plan.utilization_threshold,
        routes=tuple(_route_sizing(scenario, i, values) for i in range(len(scenario.routes))),
        totals=totals, outages=outages, fleet_options=_fleet_options(values),
        **(_whatif(scenario, values) if whatif else {}),
    )


def _whatif(scenario: Scenario, values: Mapping[tuple[str, str], Any]) -> dict[str, Any]:
    from planner.whatif import levers

    inputs = {**catalog_inputs(), **scenario_inputs(scenario)}
    return {"cache_hit_lever": levers.cache_hit_lever(inputs),
            "selfhost_vs_api": levers.selfhost_vs_api(values, inputs),
            "sensitivity": levers.sensitivity_view(values, inputs)}


def with_forecast(scenario: Scenario, months: int, *, spread: float | None = None,
                  whatif: bool = True) -> SizingReport:
    """:func:`size_scenario` plus the Forecast sheet's months 1..``months`` (issue 14), from the same evaluation:
    ``forecast`` per route per month (tblForecastByRoute), ``forecast_months`` plan-wide (tblForecast)."""
    import dataclasses

    from planner.template.forecast import commitment_rows, forecast_by_route, forecast_rows

    s = _with_spread(scenario, spread)
    s = dataclasses.replace(s, plan=dataclasses.replace(s.plan, forecast_months=months))
    values = evaluate_scenario(s)
    return dataclasses.replace(size_scenario(s, values=values, whatif=whatif),
                               forecast=forecast_by_route(dict(values)), forecast_months=forecast_rows(dict(values)),
                               commitments=commitment_rows(dict(values)))


# --- text rendering ----------------------------------------------------------------------------------------------


def _fmt(x: CellValue, pct: bool = False) -> str:
    if x is None or x == "":
        return "-"
    if isinstance(x, str):
        return x
    if isinstance(x, bool):
        return "TRUE" if x else "FALSE"
    if pct:
        return utilization_text(x)
    for scale, suffix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M")):
        if abs(x) >= scale:
            return f"{x / scale:,.2f}{suffix}"
    if abs(x) >= 1e4:
        return f"{x:,.0f}"
    return f"{x:,.3g}" if abs(x) < 10 else f"{x:,.1f}"


def _months(x: CellValue) -> str:
    if isinstance(x, (int, float)) and not isinstance(x, bool) and x >= MONTHS_NEVER:
        return "never at this growth"
    return f"{_fmt(x)} months" if isinstance(x, (int, float)) else _fmt(x)


def _breakeven_hit(h: Any) -> str:
    """W3's break-even hit rate as a planner reads it: above 100 % no cache makes the API as cheap as self-hosting,
    below 0 the API is cheaper even without one."""
    if isinstance(h, float) and h > 1:
        return f"self-host is cheaper at any API hit rate (break-even {h:.1%})"
    if isinstance(h, float) and h < 0:
        return f"the API is cheaper even uncached (break-even {h:.1%})"
    return f"self-host breaks even at API hit {_fmt(h, pct=True)}"


def render_text(report: SizingReport) -> str:
    """The human report of ``planner size``: each figure is a Results cell of the evaluated plan."""
    lines = [f"plan {report.scenario} ({report.path}); policy threshold {report.utilization_threshold:.0%}", ""]
    for r in report.routes:
        res = r.results
        lines.append(f"route {r.route} [{r.kind}] on {r.backend} ({r.backend_type}): {_fmt(r.status)}")
        lines.append(f"  demand as {r.backend} counts it: {_fmt(res['rpm_demand'])} RPM, {_fmt(res['tpm_demand'])} "
                     f"TPM (input {_fmt(res['itpm_demand'])}, output {_fmt(res['otpm_demand'])})")
        for c in r.constraints:
            flag = "  <-- binding" if c.label.endswith(f" {r.binding}") else ""
            lines.append(f"  {c.label:<34} {_fmt(c.utilization, pct=True):>8}   {c.cell}{flag}")
        if r.backend_type == "fleet":
            lines.append(f"  KV: {_fmt(res['kv_bytes_per_request'])} B/request, max concurrency/replica "
                         f"{_fmt(res['max_concurrency'])}, peak batch/replica {_fmt(res['batch_per_replica'])}")
            lines.append(f"  prefix retention: {_fmt(res['prefix_tokens'])} tokens kept warm on every replica, "
                         f"{_fmt(res['prefix_kv_share'], pct=True)} of the KV budget (counted in KV)")
            ttft, tpot = res["ttft_at_load_s"], res["tpot_at_load_s"]
            ttft_text = f"{ttft * 1000:.0f} ms" if isinstance(ttft, float) else _fmt(ttft)
            tpot_text = f"{tpot * 1000:.1f} ms" if isinstance(tpot, float) else _fmt(tpot)
            lines.append(f"  at {_fmt(res['replica_rate'])} req/s per replica: TTFT {ttft_text}, TPOT {tpot_text}; "
                         f"sustainable {_fmt(res['sustainable_rate'])} req/s per replica")
        lines.append(f"  monthly cost ${_fmt(r.monthly_cost_usd)} "
                     f"(without caching ${_fmt(r.monthly_cost_no_cache_usd)})")
        if isinstance(r.max_utilization, float) and r.max_utilization >= UTIL_INFINITE:
            lines.append(f"  binding: {_fmt(r.binding)} {INFINITE_TEXT}: the latency SLOs are missed even at "
                         "light load on this fleet, so no replica count meets them (see Fleet options)")
        else:
            lines.append(f"  binding: {_fmt(r.binding)} at {_fmt(r.max_utilization, pct=True)}; headroom "
                         f"{_fmt(r.headroom_multiple)}x demand; breach in {_months(r.months_to_breach)}")
        if r.failover_backend:
            lines.append(f"  failover to {r.failover_backend}: {_fmt(r.failover_utilization, pct=True)} "
                         f"({_fmt(r.failover_check)})")
        for e in r.errors:
            lines.append(f"  error: {e}")
        lines.append("")
    for o in report.outages:
        fleet = "" if o.n_plus_one_utilization in ("", None) else f"; N+1 {_fmt(o.n_plus_one_utilization, pct=True)}"
        worst = f"{o.receiver} {o.constraint} at {_fmt(o.utilization, pct=True)}" if o.receiver else "nothing moves"
        lines.append(f"outage of {o.backend}: {worst}{fleet} ({_fmt(o.status)})")
    lines.append("")
    lines += _render_options(report.fleet_options)
    for label, v in report.totals.items():
        infinite = isinstance(v, float) and v >= UTIL_INFINITE
        lines.append(f"{label}: {INFINITE_TEXT if infinite else _fmt(v)}")
    lines.extend(render_whatif(report))
    return "\n".join(lines)


def _count(x: CellValue) -> str:
    """A count (replicas, GPUs, TP) as a whole number where it is one."""
    if isinstance(x, float) and x.is_integer():
        return f"{int(x):,}"
    return _fmt(x)


def _render_options(options: tuple[FleetOption, ...]) -> list[str]:
    """The "Fleet options" section: per fleet, the cheapest fleets meeting its SLOs (Options sheet cells)."""
    lines: list[str] = []
    fleets = list(dict.fromkeys(o.fleet for o in options))
    for name in fleets:
        rows = [o for o in options if o.fleet == name]
        now = rows[0].cells
        ttft, tpot = now["ttft_slo_s"], now["tpot_slo_s"]
        # 0: no latency SLO on the fleet (bulk routes only), sized at its throughput
        within = ("at the offline maximum (bulk: no latency SLO)" if ttft == 0 and tpot == 0
                  else f"within TTFT {_fmt(ttft)} s, TPOT {_fmt(tpot)} s")
        lines.append(f"Fleet options for {name} (now {_count(now['gpus_now'])} GPUs, "
                     f"${_fmt(now['cost_now_monthly_usd'])}/month; sized for {_fmt(now['sized_qps'])} req/s "
                     f"{within}):")
        for o in rows:
            label = f"on {o.only_gpu}" if o.only_gpu else f"#{_fmt(o.rank)}"
            if isinstance(o.gpu, str) and o.disaggregated is not None:
                shape = (f"{_count(o.prefill_replicas)} prefill + {_count(o.decode_replicas)} decode" if o.disaggregated
                         else f"{_count(o.replicas)} x")
                pp = f" PP{_count(o.pp)}" if o.pp not in (1, 1.0) else ""
                kv = f", KV transfer {_fmt(o.kv_transfer_gb_s)} GB/s" if o.disaggregated else ""
                lines.append(f"  {label:<13} {shape} {o.gpu} TP{_count(o.tp)}{pp} (weights {o.weight_dtype}, KV "
                             f"{o.kv_cache_dtype}): {_count(o.gpus)} GPUs, ${_fmt(o.monthly_cost_usd)}/month, "
                             f"${_fmt(o.usd_per_mtok)}/Mtok; binds {_fmt(o.binding)}{kv}; saves "
                             f"${_fmt(o.saving_monthly_usd)}/month   {o.cell}")
            else:
                lines.append(f"  {label:<13} {_fmt(o.gpu)}   {o.cell}")
        lines.append("")
    return lines


def _usd(x: Any) -> str:
    return f"${x:,.0f}" if isinstance(x, (int, float)) and not isinstance(x, bool) else _fmt(x)


def _pair(p: tuple[Any, Any], pct: bool = True) -> str:
    return f"{_fmt(p[0], pct=pct)} -> {_fmt(p[1], pct=pct)}"


def _breach(m: Any) -> str:
    return "never" if m is None else f"{m:.1f} months"


def render_whatif(report: SizingReport) -> list[str]:
    """The What-if sections of the text report: the cache-hit lever, self-host vs API, the tornado and the demand
    cases (empty when the report was made without them)."""
    lines: list[str] = []
    lev = report.cache_hit_lever
    if lev is not None:
        lines += ["", f"cache-hit lever: +{lev.step * 100:g} point of prefix-cache hit rate, each route alone (the "
                  "plan "
                  "re-evaluated with its Routes cell changed)"]
        for r in lev.routes:
            parts = [f"saves {_usd(r.saving_usd_per_month)}/month"]
            if r.itpm_util[0] not in ("", None):
                parts.append(f"ITPM {_pair(r.itpm_util)}")
            if isinstance(r.ttft_s[0], float):
                after = f"{r.ttft_s[1] * 1000:.1f} ms" if isinstance(r.ttft_s[1], float) else _fmt(r.ttft_s[1])
                parts.append(f"TTFT {r.ttft_s[0] * 1000:.1f} -> {after}")
                parts.append(f"KV {_pair(r.kv_util)}")
            parts.append(f"max util {_pair(r.max_util)} ({_fmt(r.binding[1])})")
            lines.append(f"  {r.route}: hit {r.hit_rate:.0%} -> {r.hit_after:.0%}: " + "; ".join(parts)
                         + f"; {_breakeven_hit(r.breakeven_hit_rate)}")
        lines.append(f"  every route at once: saves {_usd(lev.total_saving_usd_per_month)}/month; highest "
                     f"utilization {_pair(lev.highest_utilization)}")
    if report.selfhost_vs_api:
        lines += ["", "self-host vs API per route (What-if sheet; USD per million total tokens at the plan's "
                  "utilization)"]
        for r in report.selfhost_vs_api:
            lines.append(f"  {r.route}: {_fmt(r.recommendation)} (API {_fmt(r.api_backend)} "
                         f"{_fmt(r.api_usd_per_mtok)}, self-host {_fmt(r.fleet_backend)} "
                         f"{_fmt(r.selfhost_usd_per_mtok)}; break-even {_fmt(r.breakeven_qps)} req/s avg)")
            lines.append(f"    why: {_fmt(r.reasons)}")
    sen = report.sensitivity
    if sen is not None:
        lines += ["", f"sensitivity: each input at -{sen.spread:.0%} / +{sen.spread:.0%} (the What-if sheet's "
                  "tornado; * utilization and breach: the plan's Results evaluated again, SENSITIVITY_BAR), largest "
                  "swing of the bill first",
                  f"  {'input':<28} {'bill low':>12} {'bill high':>12} {'util low':>9} {'util high':>9} "
                  f"{'breach low':>12} {'breach high':>12}"]
        for b in sen.tornado:
            label = (b.label.split(" (")[0] + (" *" if b.reevaluated else ""))[:28]
            lines.append(f"  {label:<28} {_usd(b.low.monthly_cost_usd):>12} {_usd(b.high.monthly_cost_usd):>12} "
                         f"{_fmt(b.low.highest_utilization, pct=True):>9} "
                         f"{_fmt(b.high.highest_utilization, pct=True):>9} {_breach(b.low.first_breach_months):>12} "
                         f"{_breach(b.high.first_breach_months):>12}")
        lines.append(f"demand cases (peak QPS and growth x{1 - sen.spread:g} / x1 / x{1 + sen.spread:g}):")
        for name, f in sen.cases.items():
            lines.append(f"  {name:<5} bill {_usd(f.monthly_cost_usd)}/month; highest utilization "
                         f"{_fmt(f.highest_utilization, pct=True)} ({f.worst_route}: {_fmt(f.binding)}); first "
                         f"breach in {_breach(f.first_breach_months)}")
    return lines


def bundled_scenario_path() -> str:
    """Path of the bundled seed scenario (``planner/data/scenarios/seed.toml``)."""
    from importlib import resources

    return str(resources.files("planner") / "data" / "scenarios" / "seed.toml")
