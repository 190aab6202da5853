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
from planner.decision import MONTHS_NEVER
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
class SizingReport:
    scenario: str
    path: str
    utilization_threshold: float
    routes: tuple[RouteSizing, ...]
    totals: dict[str, CellValue] = field(default_factory=dict)
    outages: tuple[Outage, ...] = ()
    forecast: tuple[dict[str, Any], ...] | None = None  # planner size --months N: the Forecast sheet's months
    commitments: dict[str, Any] | None = None  # planner size --months N: the Forecast sheet's commitment tables

    @property
    def has_errors(self) -> bool:
        """True when any Results cell of a route holds an error (the plan cannot be sized as written)."""
        return any(r.errors for r in self.routes)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for key in ("forecast", "commitments"):
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


def size_scenario(scenario: Scenario, values: Mapping[tuple[str, str], Any] | None = None) -> SizingReport:
    """Evaluate ``scenario`` through the template and read every route's Results row back."""
    values = evaluate_scenario(scenario) if values is None else values
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
        totals=totals, outages=outages,
    )


def with_forecast(scenario: Scenario, months: int) -> SizingReport:
    """:func:`size_scenario` plus the Forecast sheet's months 1..``months`` (issue 14), from the same evaluation."""
    import dataclasses

    from planner.template.forecast import commitment_rows, forecast_rows

    s = dataclasses.replace(scenario, plan=dataclasses.replace(scenario.plan, forecast_months=months))
    values = evaluate_scenario(s)
    return dataclasses.replace(size_scenario(s, values), forecast=forecast_rows(dict(values)),
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
        return f"{x:.1%}"
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
            ttft, tpot = res["ttft_at_load_s"], res["tpot_at_load_s"]
            ttft_text = f"{ttft * 1000:.0f} ms" if isinstance(ttft, float) else _fmt(ttft)
            tpot_text = f"{tpot * 1000:.1f} ms" if isinstance(tpot, float) else _fmt(tpot)
            lines.append(f"  at {_fmt(res['replica_rate'])} req/s per replica: TTFT {ttft_text}, TPOT {tpot_text}; "
                         f"sustainable {_fmt(res['sustainable_rate'])} req/s per replica")
        lines.append(f"  monthly cost ${_fmt(r.monthly_cost_usd)} "
                     f"(without caching ${_fmt(r.monthly_cost_no_cache_usd)})")
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
    for label, v in report.totals.items():
        lines.append(f"{label}: {_fmt(v)}")
    return "\n".join(lines)


def bundled_scenario_path() -> str:
    """Path of the bundled seed scenario (``planner/data/scenarios/seed.toml``)."""
    from importlib import resources

    return str(resources.files("planner") / "data" / "scenarios" / "seed.toml")
