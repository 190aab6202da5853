"""The capacity-plan template's contract, defined once: sheets, tables, columns (with units), input constraints and
every formula column as an expression (:mod:`planner.excel.expr`).

- :mod:`planner.template.layout`: the input tables and the Lists sheet;
- :mod:`planner.template.results`: the Results and Summary formulas;
- :mod:`planner.template.whatif`: the What-if sheet (the cache-hit lever, self-host vs API per route);
- :mod:`planner.template.inputs`: a scenario and the bundled catalog as input cells;
- :mod:`planner.template.contract`: the contract as Markdown (docs/template.md);
- :mod:`planner.template.build`: writing the template and sample workbooks (the only part that does I/O).

:func:`evaluate_plan` evaluates every formula cell of a plan from its input cells: it is THE plan method. The template
builder uses it for the cached values, the validator as its fast path, ``planner size`` as its whole computation.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from planner.excel.expr import ALLOWED_BUILTINS, At, Block, Cells, Evaluator, Expr, Ref, Udf
from planner.excel.tables import Column, Table, col_letter, sheet_ref
from planner.excel.values import NA, VALUE, XlError, is_error
from planner.template.forecast import (  # noqa: I001  issue 14: the Forecast sheet
    COMMITMENTS,
    FORECAST,
    FORECAST_BACKENDS,
    FORECAST_BY_ROUTE,
    FORECAST_ROUTES,
    PROVISIONED,
    RESERVED_QUOTES,
    ROUTE_DEMAND,
)
from planner.template.forecast import fixed_cells as _forecast_fixed_cells
from planner.template.layout import (
    CONSTRAINTS,
    ENGINES,
    FLEET,
    FLEET_ROWS,
    GPU_ROWS,
    GPUS,
    KV_DTYPES,
    LISTS,
    LISTS_TABLE,
    MODEL_ROWS,
    MODELS,
    PLAN,
    PLAN_SETTINGS,
    PROVIDER_ROWS,
    PROVIDERS,
    ROUTE_KINDS,
    ROUTE_ROWS,
    ROUTES,
    SPECS,
    WEIGHT_DTYPES,
    plan_value_cell,
)
from planner.template.options import OPTION_KEYS, OPTIONS
from planner.template.profiles import PROFILES, ROUTE_PROFILE  # issue 14: demand over the day
from planner.template.results import (
    FAILOVER,
    FAILOVER_KEYS,
    OUTAGES,
    OUTAGES_TITLE,
    RESULT_KEYS,
    RESULTS,
    SUMMARY,
    TOTALS,
    TOTALS_COL_LABEL,
    TOTALS_COL_VALUE,
    TOTALS_FIRST_ROW,
    UTILIZATION_KEYS,
)
from planner.template.sensitivity import (  # issue 14: sensitivity
    DEMAND_CASES,
    SENSITIVITY_BARS,
    SENSITIVITY_ROUTES,
    TORNADO,
)
from planner.template.sensitivity import fixed_cells as _sensitivity_fixed_cells
from planner.template.whatif import WHATIF, WHATIF_KEYS

__all__ = [
    "ALLOWED_BUILTINS",
    "At",
    "CONSTRAINTS",
    "Cells",
    "Column",
    "ENGINES",
    "FAILOVER",
    "FAILOVER_KEYS",
    "FORECAST",
    "FORECAST_TABLES",
    "ROUTE_DEMAND",
    "SENSITIVITY_BARS",
    "SENSITIVITY_TABLES",
    "TORNADO",
    "DEMAND_CASES",
    "SENSITIVITY_ROUTES",
    "PROFILES",
    "ROUTE_PROFILE",
    "OUTAGES",
    "OUTAGES_TITLE",
    "OPTIONS",
    "OPTION_KEYS",
    "Evaluator",
    "Expr",
    "FLEET",
    "FLEET_ROWS",
    "FORMULA_TABLES",
    "GPUS",
    "GPU_ROWS",
    "INPUT_TABLES",
    "KV_DTYPES",
    "LISTS",
    "LISTS_TABLE",
    "MODELS",
    "MODEL_ROWS",
    "NA",
    "PLAN",
    "PLAN_SETTINGS",
    "PROVIDERS",
    "PROVIDER_ROWS",
    "RESULTS",
    "RESULT_KEYS",
    "ROUTES",
    "ROUTE_KINDS",
    "ROUTE_ROWS",
    "Ref",
    "SHEET_ORDER",
    "SPECS",
    "SUMMARY",
    "TABLES",
    "TEMPLATE_ID",
    "TEMPLATE_NAMES",
    "TEMPLATE_VERSION",
    "TOTALS",
    "TOTALS_COL_LABEL",
    "TOTALS_COL_VALUE",
    "TOTALS_FIRST_ROW",
    "Table",
    "UTILIZATION_KEYS",
    "VALUE",
    "WEIGHT_DTYPES",
    "WHATIF",
    "WHATIF_KEYS",
    "XlError",
    "all_formulas",
    "col_letter",
    "cone_cells",
    "cone_reads",
    "evaluate_plan",
    "fixed_cells",
    "formula_cells",
    "formula_text",
    "functions_used",
    "is_error",
    "plan_value_cell",
    "table",
]

TEMPLATE_ID = "llm-capacity-planner/capacity-plan"
TEMPLATE_VERSION = "2.8.0"
TEMPLATE_NAMES = {"PLANNER_TEMPLATE_ID": TEMPLATE_ID, "PLANNER_TEMPLATE_VERSION": TEMPLATE_VERSION}
"""Global defined names (constant strings) that identify the template."""

FORECAST_TABLES = (FORECAST, ROUTE_DEMAND, FORECAST_ROUTES, FORECAST_BACKENDS, COMMITMENTS, PROVISIONED,
                   RESERVED_QUOTES, FORECAST_BY_ROUTE)
INPUT_TABLES = (PLAN, ROUTES, PROVIDERS, FLEET, GPUS, MODELS, PROFILES)
SENSITIVITY_TABLES = (TORNADO, DEMAND_CASES, SENSITIVITY_ROUTES, SENSITIVITY_BARS)
FORMULA_TABLES = (LISTS_TABLE, SPECS, RESULTS, FAILOVER, SUMMARY, OUTAGES, OPTIONS, WHATIF, ROUTE_PROFILE,
                  *FORECAST_TABLES, *SENSITIVITY_TABLES)
TABLES = (PLAN, ROUTES, PROVIDERS, FLEET, SPECS, RESULTS, FAILOVER, WHATIF, OPTIONS, SUMMARY, OUTAGES, GPUS, MODELS,
          LISTS_TABLE, PROFILES, ROUTE_PROFILE, *FORECAST_TABLES, *SENSITIVITY_TABLES)
SHEET_ORDER = (
    "ReadMe", "Summary", "Forecast", "Plan", "Routes", "Profiles", "Providers", "Fleet", "Specs", "Results",
    "Failover", "What-if", "Options", "GPUs", "Models", "Lists",
)


def table(name: str) -> Table:
    for t in TABLES:
        if t.name == name:
            return t
    raise KeyError(name)


def _references(expr: Expr, reads: Mapping[str, Mapping[int, tuple[str, ...]]] | None = None
                ) -> set[tuple[str, str]]:
    """(table name, column key) pairs an expression reads. ``reads`` (``{function: {argument position: column
    keys}}``, the registry's ``Arg.reads``): a whole table passed to such an argument reads only those columns (a key
    that is not a column of that table is refused: a declaration out of step with the template)."""
    if isinstance(expr, (Ref, Cells)):
        keys = {expr.first, expr.last} if isinstance(expr, Cells) else {expr.key}
        if isinstance(expr, Cells) and expr.last is not None:
            t = expr.table
            i, j = t.index(expr.first), t.index(expr.last)
            keys = {c.key for c in t.columns[i : j + 1]}
        return {(expr.table.name, k) for k in keys if k is not None}
    if isinstance(expr, At):
        return {(expr.table.name, expr.key)}
    if isinstance(expr, Block):  # a whole table (FORECAST_MONTH reads the Forecast sheet's backend table)
        return {(expr.table.name, c.key) for c in expr.table.columns}
    name = expr.name if isinstance(expr, Udf) else ""
    declared = reads.get(name, {}) if reads else {}
    out: set[Any] = set()
    for i, a in enumerate(expr.children()):
        only = declared.get(i)
        if only is not None and isinstance(a, Block):
            unknown = [k for k in only if k not in {c.key for c in a.table.columns}]
            if unknown:
                raise ValueError(f"{name} argument {i + 1} reads {unknown}: not columns of {a.table.name}")
            out |= {(a.table.name, k) for k in only}
        else:
            out |= _references(a, reads)
    return out


@functools.cache
def _column_order() -> tuple[tuple[Table, Column], ...]:
    """Formula columns in dependency order (a column after every column it reads). The template is fixed: worked out
    once per process (the formula cells and every cone read it)."""
    nodes = {(t.name, c.key): (t, c) for t in FORMULA_TABLES for c in t.columns if c.formula is not None}
    order: list[tuple[Table, Column]] = []
    state: dict[tuple[str, str], int] = {}

    def visit(node: tuple[str, str]) -> None:
        if state.get(node) == 2:
            return
        if state.get(node) == 1:
            raise ValueError(f"circular reference through {node}")
        state[node] = 1
        t, c = nodes[node]
        assert c.formula is not None
        for dep in sorted(_references(c.formula)):
            if dep in nodes and dep != node:
                visit(dep)
        state[node] = 2
        order.append((t, c))

    for node in nodes:
        visit(node)
    return tuple(order)


def formula_cells() -> list[tuple[str, str, Expr, int]]:
    """Every formula cell of the template, in evaluation order: ``(sheet, cell, expr, data_row)``.

    Columns come in dependency order and each column is evaluated for all rows, so a column may use whole
    columns computed before it (SUMIFS for failover). The template is fixed, so the order is worked out once per
    process (a new list each call).
    """
    return list(_formula_cells())


@functools.cache
def _formula_cells() -> tuple[tuple[str, str, Expr, int], ...]:
    out: list[tuple[str, str, Expr, int]] = []
    for t, c in _column_order():
        assert c.formula is not None
        for i in range(t.rows):
            out.append((t.sheet, t.cell(c.key, i), c.formula, i))
    for i, (_label, _key, expr, _fmt) in enumerate(TOTALS):
        out.append((SUMMARY.sheet, f"{TOTALS_COL_VALUE}{TOTALS_FIRST_ROW + i}", expr, 0))
    return tuple(out)


def formula_text(sheet: str, expr: Expr, row: int) -> str:
    """The formula text of ``expr`` written on ``sheet`` (data row ``row``): references to the formula's own sheet
    drop the sheet name, as Excel writes them, so each formula reads as short as it can."""
    return "=" + expr.render(row).replace(f"{sheet_ref(sheet)}!", "")


def all_formulas() -> dict[tuple[str, str], str]:
    """``{(sheet, cell): "=formula"}`` for every formula cell of the template."""
    return {(sheet, cell): formula_text(sheet, expr, row) for sheet, cell, expr, row in formula_cells()}


def functions_used() -> set[str]:
    """Every function name (built-in and registry) the template's formulas call."""
    return set().union(*(expr.functions() for _s, _c, expr, _r in formula_cells()))


def fixed_cells() -> dict[tuple[str, str], Any]:
    """Cells whose content is part of the template itself (list values, plan setting names and units)."""
    out: dict[tuple[str, str], Any] = {}
    for key, values in LISTS.items():
        for i, v in enumerate(values):
            out[(LISTS_TABLE.sheet, LISTS_TABLE.cell(key, i))] = v
    for i, (name, unit, help, _opts) in enumerate(PLAN_SETTINGS):
        out[(PLAN.sheet, PLAN.cell("setting", i))] = name
        out[(PLAN.sheet, PLAN.cell("unit", i))] = unit
        out[(PLAN.sheet, PLAN.cell("help", i))] = help
    out.update(_forecast_fixed_cells())
    out.update(_sensitivity_fixed_cells())
    return out


def evaluate_plan(
    inputs: Mapping[tuple[str, str], Any], functions: Mapping[str, Any] | None = None
) -> dict[tuple[str, str], Any]:
    """Evaluate every formula cell of a plan from its input cells, in Python.

    ``inputs`` maps ``(sheet, cell)`` (``("Routes", "C4")``) to the cell's value (``None`` or absent: empty).
    Returns ``{(sheet, cell): value}`` for every formula cell: numbers as ``float``, text as ``str``, errors as
    :class:`XlError`, ``""`` on unused rows. ``functions`` defaults to the registry (:func:`planner.registry.load`).
    """
    values = dict(fixed_cells())
    values.update(inputs)
    ev = Evaluator(values, functions)
    out: dict[tuple[str, str], Any] = {}
    for sheet, cell, expr, row in formula_cells():
        v = expr.evaluate(ev, row)
        ev.values[(sheet, cell)] = v
        out[(sheet, cell)] = v
    return out


@functools.cache
def cone_reads(targets: tuple[tuple[str, str], ...], given: tuple[str, ...] = (), *,
               reads: tuple[tuple[str, int, tuple[str, ...]], ...] = ()) -> tuple[tuple[str, str], ...]:
    """The columns ``(table name, column key)`` that the formula cells of :func:`cone_cells`'s whole cone read and
    that are not themselves cells of the cone (input columns, the ``given`` tables', any other table's), sorted;
    ``reads`` as :func:`cone_cells` takes it (a whole table passed to a declared argument reads only those
    columns). A Plan setting (:class:`PlanValue`) is not a column: not here."""
    by_function: dict[str, dict[int, tuple[str, ...]]] = {}
    for name, i, keys in reads:
        by_function.setdefault(name, {})[i] = keys
    cells = set(cone_cells(targets, given, reads=reads))  # whole columns: a column is in it with its first row
    members = [(t, c) for t, c in _column_order() if (t.sheet, t.cell(c.key, 0)) in cells]
    inside = {(t.name, c.key) for t, c in members}
    out: set[tuple[str, str]] = set()
    for _t, c in members:
        assert c.formula is not None
        out |= _references(c.formula, by_function) - inside
    return tuple(sorted(out))


@functools.cache
def cone_cells(targets: tuple[tuple[str, str], ...], given: tuple[str, ...] = (),
               changed: tuple[tuple[str, str], ...] | None = None, *,
               reads: tuple[tuple[str, int, tuple[str, ...]], ...] = ()) -> tuple[tuple[str, str], ...]:
    """The formula cells the columns ``targets`` (``(table name, column key)``) depend on, themselves included, in
    the template's evaluation order: what a cell that asks "the plan with this input changed" evaluates again
    (:func:`planner.template.fast.evaluate_cells`), without the sheets it does not read. The tables in ``given``
    are read as they are (their cells are inputs of the cone: the Specs of a plan whose fleets do not change).
    ``changed`` (input columns, ``(table name, column key)``): only the cells of the cone that read one of them,
    directly or through other cells; the rest keep the values of the plan as it is. (A Plan setting is not a
    column: a change of one needs the whole cone.) ``reads`` (``(function, argument position, column keys)``, the
    registry's ``Arg.reads``): a whole table passed as that argument depends only on those columns, so the cone
    leaves out the others (the cells outside it may then hold any value: no cell of it reads them)."""
    by_function: dict[str, dict[int, tuple[str, ...]]] = {}
    for name, i, keys in reads:
        by_function.setdefault(name, {})[i] = keys

    known: dict[int, set[tuple[str, str]]] = {}

    def refs(formula: Expr) -> set[tuple[str, str]]:  # each column's once per cone (the walk and the pass below)
        r = known.get(id(formula))
        if r is None:
            r = known[id(formula)] = _references(formula, by_function)
        return r

    nodes = {(t.name, c.key): (t, c) for t, c in _column_order() if t.name not in given}
    need: set[tuple[str, str]] = set()
    stack = list(targets)
    while stack:
        node = stack.pop()
        if node in need or node not in nodes:
            continue
        need.add(node)
        formula = nodes[node][1].formula
        assert formula is not None
        stack.extend(d for d in refs(formula) if d in nodes)
    if changed is not None:
        moved = set(changed)
        for t, c in _column_order():  # dependency order: a column's precedents are decided before it
            assert c.formula is not None
            if (t.name, c.key) in need and refs(c.formula) & moved:
                moved.add((t.name, c.key))
        need &= moved
    return tuple((t.sheet, t.cell(c.key, i)) for t, c in _column_order() if (t.name, c.key) in need
                 for i in range(t.rows))
