"""What-if figures that need the plan re-evaluated with an input changed: the cache-hit lever, the tornado, the
low / base / high demand cases, sweeps and diffs.

Each one edits the plan's input cells (``{(sheet, cell): value}``, what :func:`planner.template.evaluate_plan`
takes) and calls THE plan method again: no figure here has a formula of its own, every number is a cell of an
evaluated plan (Summary's totals, Results' rows). Pure: no I/O (:mod:`planner.whatif.source` reads files).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from planner import template as ts
from planner.decision import MONTHS_NEVER
from planner.errors import ArgumentError, UnknownNameError
from planner.excel.values import XlError

Inputs = Mapping[tuple[str, str], Any]
Values = Mapping[tuple[str, str], Any]
Evaluate = Callable[[Inputs], Values]

HIT_STEP = 0.01
"""One point of prefix-cache hit rate (absolute)."""

DEFAULT_SPREAD = 0.2
"""The tornado's and the demand cases' default spread: each input at -20 % and +20 %."""


def evaluate(inputs: Inputs) -> dict[tuple[str, str], Any]:
    """The plan method: every formula cell from the input cells (:func:`planner.template.evaluate_plan`)."""
    return ts.evaluate_plan(inputs)


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def _plain(v: Any) -> Any:
    if isinstance(v, XlError):
        return str(v)
    if isinstance(v, float) and not math.isfinite(v):
        return "#NUM!"
    return v


def route_rows(inputs: Inputs) -> list[tuple[int, str]]:
    """``(row index, route name)`` of every route in use."""
    out = []
    for i, cell in enumerate(column_cells(ts.ROUTES, "name")):
        name = inputs.get(cell)
        if isinstance(name, str) and name.strip():
            out.append((i, name))
    return out


def column_cells(t: ts.Table, key: str) -> tuple[tuple[str, str], ...]:
    """The ``(sheet, cell)`` of column ``key`` of ``t`` on each data row (``t.cell(key, i)``), computed once per
    table object and column (the tornado's six bar ends a plan read about 700 of them: route names, scaled cells,
    breach months). Kept in :data:`_COLUMN_CELLS` by ``(id(t), key)`` with the table held (its ``id`` is not
    reused while the entry lives); emptied past 256 entries (the template has about 400 columns in all, a bar reads
    a handful).

    >>> column_cells(ts.ROUTES, "name")[:2]
    (('Routes', 'A4'), ('Routes', 'A5'))
    """
    hit = _COLUMN_CELLS.get((id(t), key))
    if hit is not None and hit[0] is t:
        return hit[1]
    cells = tuple((t.sheet, t.cell(key, i)) for i in range(t.rows))
    if len(_COLUMN_CELLS) >= 256:
        _COLUMN_CELLS.clear()
    _COLUMN_CELLS[(id(t), key)] = (t, cells)
    return cells


_COLUMN_CELLS: dict[tuple[int, str], tuple[ts.Table, tuple[tuple[str, str], ...]]] = {}


def _total(values: Values, label: str) -> Any:
    for j, (key_label, _key, _expr, _fmt) in enumerate(ts.TOTALS):
        if key_label == label:
            return _plain(values[(ts.SUMMARY.sheet, f"{ts.TOTALS_COL_VALUE}{ts.TOTALS_FIRST_ROW + j}")])
    raise KeyError(label)


def _res(values: Values, key: str, i: int) -> Any:
    return _plain(values[(ts.RESULTS.sheet, ts.RESULTS.cell(key, i))])


@dataclass(frozen=True, kw_only=True)
class PlanFigures:
    """The figures a what-if compares, read from an evaluated plan: the monthly bill (Summary's total with cache),
    the highest utilization and the route it is on, and the first breach: the fewest months until a route's
    binding constraint reaches 1 at the plan's growth (``None``: never at this growth)."""

    monthly_cost_usd: Any
    highest_utilization: Any
    worst_route: str
    binding: Any
    first_breach_months: float | None
    routes_in_breach: Any


def figures(values: Values, inputs: Inputs) -> PlanFigures:
    """:class:`PlanFigures` of an evaluated plan (``values``) with its ``inputs``."""
    worst, worst_u, binding = "", None, ""
    months: list[float] = []
    for i, name in route_rows(inputs):
        u = _num(_res(values, "max_util", i))
        if u is not None and (worst_u is None or u > worst_u):
            worst, worst_u, binding = name, u, _res(values, "binding_constraint", i)
        m = _num(_res(values, "months_to_breach", i))
        if m is not None and m < MONTHS_NEVER:
            months.append(m)
    return PlanFigures(
        monthly_cost_usd=_total(values, "Total cost with cache [USD/month]"),
        highest_utilization=_total(values, "Highest utilization [x]"), worst_route=worst, binding=binding,
        first_breach_months=min(months) if months else None,
        routes_in_breach=_total(values, "Routes in breach [count]"),
    )


# --- editing inputs -------------------------------------------------------------------------------------------------


def _edited(inputs: Inputs, edits: Mapping[tuple[str, str], Any]) -> dict[tuple[str, str], Any]:
    out = dict(inputs)
    out.update(edits)
    return out


def _hit_ceiling(inputs: Inputs, i: int) -> float:
    """The highest hit rate route ``i``'s cache writes leave room for: ``1 - writes / input`` (C1's bound)."""
    t = ts.ROUTES
    w = _num(inputs.get((t.sheet, t.cell("cache_write_tokens", i)))) or 0.0
    n = _num(inputs.get((t.sheet, t.cell("avg_input_tokens", i))))
    return 1.0 if not n else max(0.0, 1.0 - w / n)


def _tornado_hit_ceiling(inputs: Inputs, i: int) -> float:
    """The tornado's ceiling on route ``i``'s hit rate: ``1 - max(writes, 1) / input``: the cache writes fill the
    rest, and at least the last prompt token is computed (a hit rate of 1 is refused by the serving model: on
    samples/selfhost-kv the +20 % bar would read 0.85 x 1.2 = 1.02, clipped to 1, and give #VALUE!)."""
    t = ts.ROUTES
    w = _num(inputs.get(column_cells(t, "cache_write_tokens")[i])) or 0.0
    n = _num(inputs.get(column_cells(t, "avg_input_tokens")[i]))
    return 1.0 if not n else max(0.0, 1.0 - max(w, 1.0) / n)


def _hit_cell(i: int) -> tuple[str, str]:
    return (ts.ROUTES.sheet, ts.ROUTES.cell("cache_hit_rate", i))


# --- the cache-hit lever ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class RouteLever:
    """One route's hit rate one point higher, everything else unchanged: the plan's bill before minus after
    (``saving_usd_per_month``), and before/after pairs of the route's backend's ITPM utilization (blank: no ITPM
    limit), its TTFT at load and KV utilization (fleets), its highest utilization and binding constraint."""

    route: str
    hit_rate: Any
    hit_after: Any
    saving_usd_per_month: Any
    itpm_util: tuple[Any, Any]
    ttft_s: tuple[Any, Any]
    kv_util: tuple[Any, Any]
    max_util: tuple[Any, Any]
    binding: tuple[Any, Any]
    breakeven_hit_rate: Any
    cells: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class CacheHitLever:
    """W5 for every route and for all routes at once (``total_*``)."""

    step: float
    routes: tuple[RouteLever, ...]
    total_saving_usd_per_month: Any
    highest_utilization: tuple[Any, Any]


def _saving(before: Any, after: Any) -> Any:
    b, a = _num(before), _num(after)
    return b - a if b is not None and a is not None else (after if b is not None else before)


def cache_hit_lever(inputs: Inputs, *, step: float = HIT_STEP, run: Evaluate = evaluate) -> CacheHitLever:
    """The value of one point of prefix-cache hit rate (W5), through the plan method: each route's Routes hit-rate
    cell set to ``min(1, h + step, 1 - writes / input)`` (the cache writes fill the rest) and the plan evaluated
    again; then every route's at once.

    ``saving = bill(h) - bill(h + step)`` (Summary's total with cache: a fleet's GPU-hours do not change, so a
    self-hosted route's point is worth its headroom, not dollars); the ITPM, TTFT and KV columns are the Results
    cells before and after. The What-if sheet's lever columns are the same figures computed in the workbook.
    """
    base = run(inputs)
    base_fig = figures(base, inputs)
    rows: list[RouteLever] = []
    every: dict[tuple[str, str], Any] = {}
    for i, name in route_rows(inputs):
        h = _num(inputs.get(_hit_cell(i)))
        if h is None:
            continue
        after_h = min(1.0, h + step, max(h, _hit_ceiling(inputs, i)))
        every[_hit_cell(i)] = after_h
        after = run(_edited(inputs, {_hit_cell(i): after_h}))
        def pair(key: str, i: int = i, after: Values = after) -> tuple[Any, Any]:
            return (_res(base, key, i), _res(after, key, i))

        itpm = pair("itpm_util") if _res(base, "backend_type", i) == "provider" and _res(base, "itpm_util", i) \
            else ("", "")
        w = ts.WHATIF
        saving = _saving(_total(base, "Total cost with cache [USD/month]"),
                         _total(after, "Total cost with cache [USD/month]"))
        refused = _res(after, "cost_monthly_usd", i)
        if _num(refused) is None and _num(_res(base, "cost_monthly_usd", i)) is not None:
            saving = refused  # the route's cost is refused at the new hit rate: Summary's SUM would skip it
        rows.append(RouteLever(
            route=name, hit_rate=h, hit_after=after_h, saving_usd_per_month=saving,
            itpm_util=itpm, ttft_s=pair("ttft_at_load_s"), kv_util=pair("kv_util"), max_util=pair("max_util"),
            binding=pair("binding_constraint"),
            breakeven_hit_rate=_plain(base[(w.sheet, w.cell("breakeven_hit_rate", i))]),
            cells={"hit_rate": f"{ts.ROUTES.sheet}!{ts.ROUTES.cell('cache_hit_rate', i)}",
                   "saving": f"'{w.sheet}'!{w.cell('saving_per_point_usd', i)}"},
        ))
    all_after = run(_edited(inputs, every)) if every else base
    return CacheHitLever(
        step=step, routes=tuple(rows),
        total_saving_usd_per_month=_saving(base_fig.monthly_cost_usd,
                                           _total(all_after, "Total cost with cache [USD/month]")),
        highest_utilization=(base_fig.highest_utilization, _total(all_after, "Highest utilization [x]")),
    )


# --- self-host vs API (read from the What-if sheet) -------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SelfhostVsApi:
    """One route's row of the What-if sheet's self-host vs API columns (W1-W4)."""

    route: str
    api_backend: Any
    fleet_backend: Any
    api_usd_per_mtok: Any
    selfhost_usd_per_mtok: Any
    breakeven_qps: Any
    avg_qps: Any
    breakeven_hit_rate: Any
    recommendation: Any
    reasons: Any


def selfhost_vs_api(values: Values, inputs: Inputs) -> tuple[SelfhostVsApi, ...]:
    """Self-host vs API per route, as the What-if sheet of the evaluated plan shows it."""
    w = ts.WHATIF
    out = []
    for i, name in route_rows(inputs):
        def cell(key: str, i: int = i) -> Any:
            return _plain(values[(w.sheet, w.cell(key, i))])

        out.append(SelfhostVsApi(
            route=name, api_backend=cell("api_backend"), fleet_backend=cell("fleet_backend"),
            api_usd_per_mtok=cell("api_usd_per_mtok"), selfhost_usd_per_mtok=cell("selfhost_usd_per_mtok"),
            breakeven_qps=cell("breakeven_qps"),
            avg_qps=_plain(values.get((ts.ROUTE_PROFILE.sheet, ts.ROUTE_PROFILE.cell("avg_qps", i)), "")),
            breakeven_hit_rate=cell("breakeven_hit_rate"), recommendation=cell("recommendation"),
            reasons=cell("reasons"),
        ))
    return tuple(out)


# --- inputs by name: groups (multipliers) and cells (values) ---------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class InputGroup:
    """Inputs the tornado moves together by one factor: a column of an input table (every row in use) or a Plan
    setting. ``ceiling`` caps the scaled value (fractions stay <= 1); ``routes_key``: a Routes column that is each
    route's own value of a Plan setting, moved with it (a route's own growth rate)."""

    name: str
    label: str
    table: str
    key: str
    ceiling: float | None = None
    routes_key: str = ""


GROUPS: tuple[InputGroup, ...] = (
    InputGroup(name="peak_qps", label="peak QPS (every route)", table="Routes", key="peak_qps"),
    InputGroup(name="input_tokens", label="input tokens per request", table="Routes", key="avg_input_tokens"),
    InputGroup(name="output_tokens", label="output tokens per request", table="Routes", key="avg_output_tokens"),
    InputGroup(name="cache_hit_rate", label="prefix-cache hit rate", table="Routes", key="cache_hit_rate",
               ceiling=1.0),
    InputGroup(name="monthly_growth", label="monthly growth (Plan's, routes' own)", table="Plan",
               key="monthly_growth", routes_key="monthly_growth"),
    InputGroup(name="avg_to_peak_ratio", label="average-to-peak ratio", table="Plan", key="avg_to_peak_ratio",
               ceiling=1.0),
    InputGroup(name="mfu", label="MFU (every fleet)", table="Fleet", key="mfu", ceiling=1.0),
)
"""The inputs that matter (issue #14 item 6): demand, tokens, hit rate, growth, the monthly shape, efficiency."""


def group(name: str) -> InputGroup:
    for g in GROUPS:
        if g.name == name:
            return g
    raise UnknownNameError("input group", name, [g.name for g in GROUPS])


def scaled(inputs: Inputs, g: InputGroup, factor: float) -> dict[tuple[str, str], Any]:
    """``inputs`` with every cell of group ``g`` multiplied by ``factor`` (capped at ``g.ceiling``; a route's hit
    rate also at ``1 - max(writes, 1) / input``: its cache writes fill the rest and the last prompt token is always
    computed; a rate already above it stays). Blank or text cells stay."""
    return _edited(inputs, scaled_cells(inputs, g, factor))


def scaled_cells(inputs: Inputs, g: InputGroup, factor: float) -> dict[tuple[str, str], Any]:
    """Only the cells :func:`scaled` changes: ``{cell: new value}`` (``scaled(inputs, g, factor)`` is ``inputs``
    updated with them; a bar end writes only these over the plan's own cells, :mod:`planner.whatif.bars`).

    >>> scaled_cells({("Routes", "A4"): "chat", ("Routes", "D4"): 1000.0}, group("input_tokens"), 0.8)
    {('Routes', 'D4'): 800.0}
    """
    def in_use(t: ts.Table, key: str) -> list[tuple[int, tuple[str, str]]]:
        return [(i, cell) for i, (cell, name) in enumerate(zip(column_cells(t, key), column_cells(t, "name")))
                if isinstance(inputs.get(name), str) and inputs[name].strip()]

    edits: dict[tuple[str, str], Any] = {}
    if g.table == "Plan":
        cells = [(-1, (ts.PLAN.sheet, ts.plan_value_cell(g.key)))]
    else:
        cells = in_use(ts.ROUTES if g.table == "Routes" else ts.FLEET, g.key)
    if g.routes_key:  # each route's own value of the setting moves with it
        cells += in_use(ts.ROUTES, g.routes_key)
    for row, addr in cells:
        v = _num(inputs.get(addr))
        if v is None:
            continue
        new = v * factor
        if g.ceiling is not None:
            new = min(new, g.ceiling)
        if g.key == "cache_hit_rate":  # the last prompt token is always computed: below 1 (the serving model refuses 1)
            new = min(new, max(v, _tornado_hit_ceiling(inputs, row)))
        edits[addr] = new
    return edits


def cell_path(inputs: Inputs, path: str) -> tuple[str, str]:
    """The input cell a name stands for: ``plan.SETTING``, ``routes.NAME.COLUMN``, ``providers.NAME.COLUMN``,
    ``fleet.NAME.COLUMN`` (column keys as in docs/template.md), or an address ``Sheet!A1`` of an input sheet.

    >>> cell_path({}, "plan.monthly_growth")
    ('Plan', 'B6')
    """
    if "!" in path:
        sheet, cell = path.split("!", 1)
        sheet = sheet.strip("'")
        for t in ts.INPUT_TABLES:
            if t.sheet.lower() == sheet.lower():
                return (t.sheet, cell.replace("$", "").upper())
        raise UnknownNameError("input sheet", sheet, [t.sheet for t in ts.INPUT_TABLES])
    parts = path.split(".")
    if parts[0].lower() == "plan" and len(parts) == 2:
        try:
            return (ts.PLAN.sheet, ts.plan_value_cell(parts[1]))
        except KeyError:
            raise UnknownNameError("plan setting", parts[1], [s[0] for s in ts.PLAN_SETTINGS]) from None
    tables = {"routes": ts.ROUTES, "providers": ts.PROVIDERS, "fleet": ts.FLEET, "fleets": ts.FLEET}
    if len(parts) != 3 or parts[0].lower() not in tables:
        raise ArgumentError("--vary", path, "plan.SETTING, routes.NAME.COLUMN, providers.NAME.COLUMN, "
                                            "fleet.NAME.COLUMN, Sheet!A1 or an input group "
                                            f"({', '.join(g.name for g in GROUPS)})")
    t = tables[parts[0].lower()]
    keys = [c.key for c in t.columns]
    if parts[2] not in keys:
        raise UnknownNameError(f"{t.sheet} column", parts[2], keys)
    names = []
    for i in range(t.rows):
        n = inputs.get((t.sheet, t.cell("name", i)))
        if isinstance(n, str) and n.strip():
            names.append(n)
            if n.strip().lower() == parts[1].lower():
                return (t.sheet, t.cell(parts[2], i))
    raise UnknownNameError(f"{t.sheet} name", parts[1], names)


# --- sensitivity: the tornado and the demand cases ------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class TornadoBar:
    """One input group at ``1 - spread`` and ``1 + spread``: the plan's figures at each end."""

    input: str
    label: str
    low: PlanFigures
    high: PlanFigures
    reevaluated: bool = False
    """True where the utilization and breach month are the plan's Results evaluated again with the input scaled
    (``SENSITIVITY_BAR`` on the What-if sheet), not a closed form."""

    @property
    def cost_swing_usd(self) -> float:
        lo, hi = _num(self.low.monthly_cost_usd), _num(self.high.monthly_cost_usd)
        return abs(hi - lo) if lo is not None and hi is not None else 0.0

    @property
    def utilization_swing(self) -> float:
        lo, hi = _num(self.low.highest_utilization), _num(self.high.highest_utilization)
        return abs(hi - lo) if lo is not None and hi is not None else 0.0


@dataclass(frozen=True, kw_only=True)
class Sensitivity:
    """The tornado (bars sorted by their swing of the monthly bill, then of the highest utilization) and the
    low / base / high demand cases (peak QPS and monthly growth both at ``1 - spread``, 1, ``1 + spread``)."""

    spread: float
    base: PlanFigures
    tornado: tuple[TornadoBar, ...]
    cases: dict[str, PlanFigures]


def sensitivity(inputs: Inputs, *, spread: float = DEFAULT_SPREAD, run: Evaluate = evaluate) -> Sensitivity:
    """The tornado of the monthly bill and of the highest utilization against +-``spread`` on every input group
    (:data:`GROUPS`), and the low / base / high demand cases: each a re-evaluation of the whole plan.

    Growth moves neither the bill nor today's utilization: its bar shows in the first breach month.
    """
    if not 0 < spread < 1:
        raise ArgumentError("spread", spread, "a fraction 0 < x < 1")
    base = figures(run(inputs), inputs)
    bars = []
    for g in GROUPS:
        lo = figures(run(scaled(inputs, g, 1 - spread)), inputs)
        hi = figures(run(scaled(inputs, g, 1 + spread)), inputs)
        bars.append(TornadoBar(input=g.name, label=g.label, low=lo, high=hi))
    bars.sort(key=lambda b: (-b.cost_swing_usd, -b.utilization_swing))
    cases = {"base": base}
    for name, factor in (("low", 1 - spread), ("high", 1 + spread)):
        edited = scaled(scaled(inputs, group("peak_qps"), factor), group("monthly_growth"), factor)
        cases[name] = figures(run(edited), inputs)
    return Sensitivity(spread=spread, base=base, tornado=tuple(bars), cases={k: cases[k] for k in
                                                                           ("low", "base", "high")})


def _cell_figures(bill: Any, util: Any, breach: Any, route: str = "", binding: Any = "") -> PlanFigures:
    m = _num(breach)
    return PlanFigures(monthly_cost_usd=_plain(bill), highest_utilization=_plain(util), worst_route=route,
                       binding=_plain(binding), first_breach_months=m if m is not None and m < MONTHS_NEVER else None,
                       routes_in_breach=None)


def sensitivity_view(values: Values, inputs: Inputs) -> Sensitivity:
    """The What-if sheet's tornado and demand cases (``tblTornado``, ``tblDemandCases``) of an evaluated plan: a view
    of its cells. Every bar end is a cell; the tokens and hit-rate bars (and the ratio bar when a route names a
    profile) are the plan's Results evaluated again with the input scaled (``SENSITIVITY_BAR``,
    :mod:`planner.whatif.bars`), marked ``reevaluated``."""
    from planner.template import sensitivity as sv

    t, d = ts.TORNADO, ts.DEMAND_CASES

    def cell(table: ts.Table, key: str, i: int) -> Any:
        return values.get((table.sheet, table.cell(key, i)))

    spread = _num(cell(t, "factor_hi", 0))
    spread = DEFAULT_SPREAD if spread is None else round(spread - 1, 12)
    base = figures(values, inputs)
    bars = []
    for i, (name, label) in enumerate(sv.GROUPS):
        ends = [_cell_figures(cell(t, f"bill_{side}_usd", i), cell(t, f"util_{side}", i),
                              cell(t, f"breach_{side}_months", i)) for side in ("lo", "hi")]
        bars.append(TornadoBar(input=name, label=label, low=ends[0], high=ends[1],
                               reevaluated=cell(ts.SENSITIVITY_BARS, "reevaluated", i) == 1))
    bars.sort(key=lambda b: (-b.cost_swing_usd, -b.utilization_swing))
    cases = {}
    for i, name in enumerate(sv.CASES):
        cases[name] = _cell_figures(cell(d, "bill_usd", i), cell(d, "max_util", i), cell(d, "breach_months", i),
                                    route=_plain(cell(d, "route", i)) or "", binding=cell(d, "binding", i))
    return Sensitivity(spread=spread, base=base, tornado=tuple(bars), cases=cases)


# --- sweep and diff ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SweepStep:
    value: float
    figures: PlanFigures
    routes: dict[str, dict[str, Any]]


def steps_between(lo: float, hi: float, n: int) -> list[float]:
    """``n`` evenly spaced values from ``lo`` to ``hi`` (both included).

    >>> steps_between(0.5, 0.9, 5)
    [0.5, 0.6, 0.7, 0.8, 0.9]
    """
    if n < 2:
        raise ArgumentError("--steps", n, "at least 2")
    return [round(lo + (hi - lo) * k / (n - 1), 12) for k in range(n)]


def sweep(inputs: Inputs, name: str, values: Sequence[float], *, run: Evaluate = evaluate) -> list[SweepStep]:
    """The plan at each of ``values`` of one input: a cell path (:func:`cell_path`, the value itself) or an input
    group (:data:`GROUPS`, the value is a multiplier of every cell of the group)."""
    names = {g.name for g in GROUPS}
    out = []
    addr = None if name in names else cell_path(inputs, name)
    for v in values:
        edited = scaled(inputs, group(name), v) if addr is None else _edited(inputs, {addr: v})
        values_ = run(edited)
        routes = {r: {"max_util": _res(values_, "max_util", i), "binding": _res(values_, "binding_constraint", i),
                      "monthly_cost_usd": _res(values_, "cost_monthly_usd", i), "status": _res(values_, "status", i)}
                  for i, r in route_rows(edited)}
        out.append(SweepStep(value=v, figures=figures(values_, edited), routes=routes))
    return out


@dataclass(frozen=True, kw_only=True)
class CellChange:
    """One cell that differs between two plans, in planner terms: the table, the row's name (route, backend,
    setting), the column header, the value before and after, and the address."""

    sheet: str
    cell: str
    row: str
    column: str
    before: Any
    after: Any
    is_input: bool


@dataclass(frozen=True, kw_only=True)
class PlanDiff:
    changes: tuple[CellChange, ...]
    binding_changes: tuple[tuple[str, Any, Any], ...]
    figures: tuple[PlanFigures, PlanFigures]


def _same(a: Any, b: Any) -> bool:
    if a in (None, "") and b in (None, ""):
        return True
    na, nb = _num(a), _num(b)
    if na is not None and nb is not None:
        return math.isclose(na, nb, rel_tol=1e-9, abs_tol=1e-12)
    return _plain(a) == _plain(b)


def _labels() -> dict[tuple[str, str], tuple[ts.Table, str, int]]:
    """Every table cell's (table, column key, data row)."""
    out = {}
    for t in (*ts.INPUT_TABLES, *ts.FORMULA_TABLES):
        for c in t.columns:
            for i in range(t.rows):
                out[(t.sheet, t.cell(c.key, i))] = (t, c.key, i)
    return out


def _row_name(t: ts.Table, i: int, cells: Mapping[tuple[str, str], Any]) -> str:
    if t is ts.PLAN:
        return ts.PLAN_SETTINGS[i][0] if i < len(ts.PLAN_SETTINGS) else f"row {i + 1}"
    first = t.columns[0].key
    v = cells.get((t.sheet, t.cell(first, i)))
    return str(v) if v not in (None, "") else f"row {i + 1}"


def diff(inputs_a: Inputs, inputs_b: Inputs, *, run: Evaluate = evaluate,
         skip_sheets: Iterable[str] = ("GPUs", "Models", "Lists")) -> PlanDiff:
    """Two plans cell by cell: the input cells that differ, then every formula cell whose value differs, each
    named by its table, row (route, backend or setting) and column header; and the routes whose binding
    constraint changed. The catalog sheets are compared as inputs only where they differ (``skip_sheets`` hides
    their formula echoes)."""
    va, vb = run(inputs_a), run(inputs_b)
    labels = _labels()
    skip = set(skip_sheets)
    changes = []
    all_a = {**inputs_a, **va}
    all_b = {**inputs_b, **vb}
    for is_input, keys in ((True, sorted(set(inputs_a) | set(inputs_b))), (False, sorted(set(va) | set(vb)))):
        for key in keys:
            a, b = all_a.get(key), all_b.get(key)
            if _same(a, b) or (not is_input and key[0] in skip):
                continue
            where = labels.get(key)
            if where is None:
                row, column = "", key[1]
            else:
                t, col, i = where
                row = _row_name(t, i, all_b)
                row = _row_name(t, i, all_a) if row.startswith("row ") else row
                column = t.column(col).header
            changes.append(CellChange(sheet=key[0], cell=key[1], row=row, column=column, before=_plain(a),
                                      after=_plain(b), is_input=is_input))
    binding = []
    names = {**dict((i, n) for i, n in route_rows(inputs_a)), **dict((i, n) for i, n in route_rows(inputs_b))}
    for i, name in sorted(names.items()):
        a, b = _res(va, "binding_constraint", i), _res(vb, "binding_constraint", i)
        if not _same(a, b):
            binding.append((name, a, b))
    return PlanDiff(changes=tuple(changes), binding_changes=tuple(binding),
                    figures=(figures(va, inputs_a), figures(vb, inputs_b)))
