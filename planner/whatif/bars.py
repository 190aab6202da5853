"""The tornado's bars that no closed form gives: the plan's Results evaluated again with one input group scaled.

The input-token, output-token and hit-rate bars (and the average-to-peak bar when a route names a profile) change
every fleet's request mix, hence the serving model's latency, KV in flight and sustainable rate, and TPM / ITPM /
OTPM under each provider's counting rules. Their highest utilization and first breach are THE plan method again:
the plan's input tables with the group scaled (:func:`planner.whatif.levers.scaled`, as ``planner size`` and
``planner sweep`` scale it), evaluated through the template's own expressions (compiled once per process,
:mod:`planner.template.fast`), but only the cells Results' ``max_util`` and ``months_to_breach`` depend on
(:func:`planner.template.cone_cells`: Results, the route profiles, the Forecast route table's columns that
BACKEND_MONTHS_TO_BREACH reads, its declared ``Arg.reads``; the Options, Forecast and What-if sheets are not read),
with the Specs as the plan computed them (no fleet changes). A bar end that scales one column starts from the plan's
own values (the base: computed once per plan, as its bar ends read them, each cell on its first read: a branch an IF
does not take is never computed) and computes again, in the template's order, the cells of the cone that read that
column (a Plan setting's end computes its whole cone as its targets read it); its store starts as a copy of the
base's store, so the base's cells it reads are found without a call each. Inside the fast path's evaluation of the
whole plan the base starts with that evaluation's values of the cone cells that read only columns the bar's tables
give as the plan holds them (:func:`_plan_cone_values`). A cell that calls :func:`bar_figures` therefore shows what
the whole plan re-evaluated shows (tests/test_whatif.py checks it against :func:`planner.template.evaluate_plan`).
Pure.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from operator import itemgetter
from typing import Any

from planner import template as ts
from planner.coerce import SharedRows
from planner.decision import MONTHS_NEVER
from planner.errors import ArgumentError
from planner.excel.expr import HashedTuple, ValueStore, block_sheet
from planner.registry import load as load_functions
from planner.template.fast import MEMO, WHOLE_PLAN, FastEvaluator, compiled_cells, evaluator, reads
from planner.template.sensitivity import BAR_TABLES
from planner.whatif import levers

TABLES = tuple(name for name, _t in BAR_TABLES)
"""The tables a bar reads, in the sheet function's argument order (each whole, header row included)."""

_TARGETS = ((ts.RESULTS.name, "max_util"), (ts.RESULTS.name, "months_to_breach"))
_GIVEN = (ts.SPECS.name,)


@dataclass(frozen=True, kw_only=True)
class BarFigures:
    """One bar end: the plan's highest utilization (Summary's ``MAX`` of Results' ``max_util``: a number, or the
    error it holds) and the fewest months until a route's binding constraint reaches 1 (9,999: never)."""

    max_util: Any
    breach_months: float


def cells(blocks: Mapping[str, Sequence[Sequence[Any]]]) -> dict[tuple[str, str], Any]:
    """The plan's cells ``{(sheet, cell): value}`` from its tables as blocks: a header row, then the data rows from
    the table's first row. Columns are read by their header (a block may carry fewer columns, in any order: the rest
    read as blank); the Plan's rows by their setting name. A header or setting the template does not have is
    refused, naming it."""
    out: dict[tuple[str, str], Any] = {}
    for name, t in BAR_TABLES:
        rows = blocks.get(name)
        if not rows:
            continue
        by_header = {c.header.lower(): c for c in t.columns}
        columns = []
        for h in rows[0]:
            c = by_header.get(str(h or "").strip().lower())
            if c is None:
                raise ArgumentError(name, h, f"a header of the {t.sheet} sheet's table ({t.columns[0].header}, "
                                    f"{t.columns[1].header}, ...)")
            columns.append(c)
        at = _addresses(t)
        for i, row in enumerate(rows[1 : t.rows + 1]):
            cells_ = dict(zip((c.key for c in columns), row))
            if t is ts.PLAN:  # a setting's value, found by its name
                setting = str(cells_.get("setting") or "").strip()
                if setting and cells_.get("value") is not None:
                    try:
                        out[(t.sheet, ts.plan_value_cell(setting))] = cells_["value"]
                    except KeyError:
                        raise ArgumentError("plan", setting, "a Plan setting ("
                                            + ", ".join(s[0] for s in ts.PLAN_SETTINGS) + ")") from None
                continue
            for key, v in cells_.items():
                if v is not None:
                    out[at[key][i]] = v
    return out


_ADDRESSES: dict[str, tuple[ts.Table, dict[str, tuple[tuple[str, str], ...]]]] = {}


def _addresses(t: ts.Table) -> dict[str, tuple[tuple[str, str], ...]]:
    """Each column's ``(sheet, cell)`` addresses by data row, ``t.cell(key, i)`` computed once per process for each
    of the bars' tables (six, the template's own: :data:`TABLES`) instead of once per plan and cell (a plan's blocks
    hold about 1,200 cells). Kept by table name with the table held: another table of that name is computed anew."""
    hit = _ADDRESSES.get(t.name)
    if hit is None or hit[0] is not t:
        hit = _ADDRESSES[t.name] = (t, {c.key: tuple((t.sheet, t.cell(c.key, i)) for i in range(t.rows))
                                        for c in t.columns})
    return hit[1]


def bar_figures(blocks: Mapping[str, Sequence[Sequence[Any]]], *, group: str, factor: float) -> BarFigures:
    """The plan of ``blocks`` with input group ``group`` times ``factor``: its highest utilization and first breach.

    Formula: the plan method (Results, C7) on the scaled inputs; ``max_util = MAX(Results[max_util])``, ``breach =
    min over routes of Results[months_to_breach]``. Reference: issue 14 item 6 (a tornado computed through the real
    functions); :func:`planner.whatif.levers.scaled` (what scales, the hit-rate ceiling).

    Worked example: samples/seed.toml with input tokens at 0.8 gives 61.8 % and 6.6 months (docs/whatif.md's table,
    where ``planner size`` re-evaluated the whole plan)."""
    key = tuple(_frozen(blocks.get(name)) for name in TABLES)
    return _bar(key, str(group), float(factor))


def _frozen(rows: Sequence[Sequence[Any]] | None) -> tuple | None:
    """A block as a tuple of row tuples (the evaluation cache's key, its hash computed once: a
    :class:`~planner.excel.expr.HashedTuple`); one row given flat is that one row. The registry hands every
    ``SENSITIVITY_BAR`` call of a plan the same :class:`~planner.coerce.SharedRows` of each table (coerced once,
    never changed after): its tuple is kept by identity (:data:`_FROZEN`), so a plan's twelve bar cells convert
    and hash each of the six tables once, and their cache keys hold the same objects (compared by identity)."""
    if rows is None:
        return None
    if type(rows) is SharedRows:
        hit = _FROZEN.get(id(rows))
        if hit is not None and hit[0] is rows:
            return hit[1]
        out = _freeze(rows)
        if len(_FROZEN) >= _FROZEN_SIZE:
            del _FROZEN[next(iter(_FROZEN))]  # the oldest (a dict keeps insertion order)
        _FROZEN[id(rows)] = (rows, out)
        return out
    return _freeze(rows)


def _freeze(rows: Sequence[Sequence[Any]]) -> HashedTuple:
    """``rows`` as a :class:`~planner.excel.expr.HashedTuple` of row tuples (equal to, and hashed like, the plain
    tuple of row tuples). ``_freeze([[1.0, "a"]]) == ((1.0, "a"),)``; ``_freeze([1.0, "a"]) == ((1.0, "a"),)``."""
    if type(rows) is HashedTuple and all(type(r) is tuple for r in rows):
        return rows
    if rows and not isinstance(rows[0], (list, tuple)):
        return HashedTuple((tuple(rows),))
    return HashedTuple(map(tuple, rows))


_FROZEN: dict[int, tuple[Any, HashedTuple]] = {}
""":func:`_frozen`'s tables by the ``id`` of the registry's rows, each entry holding the rows (so that the ``id`` is
not reused while the entry lives) and their tuple. At most :data:`_FROZEN_SIZE` entries, the oldest dropped first."""
_FROZEN_SIZE = 24
"""Four plans' six tables (a batch evaluates one plan at a time: its twelve bar cells read the same six)."""


class _Lazy(ValueStore):
    """Cell values computed when a formula first reads them: a cell of ``code`` is evaluated (by ``ev``) on its
    first read and kept; any other cell absent here is ``fallback``'s (the plan's own values: a cell the base had
    not read when this store was copied from it, :func:`_end`), else blank. Reading
    on demand, a bar end computes only what its targets read: a provider route's fleet columns, a blank row's cells
    and the shares of a backend whose routes grow alike are never computed (an IF's branch not taken, a function's
    argument it does not read). Every computed cell is complete when read (its own precedents are read first), so
    the values are those of the template's evaluation order. A read is a subscript (``values[key]``, as compiled
    expressions read): a cell already here is found in C, only a first read calls :meth:`__missing__`."""

    __slots__ = ("code", "ev", "fallback")
    code: dict[tuple[str, str], Any]
    ev: weakref.ReferenceType[FastEvaluator]
    """The evaluator whose ``values`` this store is, held weakly: a strong reference both ways would make every
    store a reference cycle (a plan's bar ends, each a dictionary of a few thousand cells, then waited for the
    cyclic collector instead of going when their bar end returns). Whoever uses the store holds the evaluator."""
    fallback: _Lazy | None

    def __missing__(self, key: Any) -> Any:
        f = self.code.get(key)
        if f is not None:
            v = self[key] = f(self.ev())
            return v
        # a cell outside the cone: the plan's own value (or blank), which no later read changes; kept, so the next
        # read of it (a row's route name, its backend kind: every cell of the row reads them) is found in C
        v = self[key] = self.fallback[key] if self.fallback is not None else None
        return v

    def get(self, key: Any, default: Any = None) -> Any:  # type: ignore[override]
        """``self[key]``: a cell computed on its first read, like every other read (``default`` is not used: a
        cell not there reads as blank, ``None``)."""
        return self[key]


def _end(base: _Lazy, edits: Mapping[tuple[str, str], Any],
         changed: tuple[tuple[str, str], ...] | None) -> tuple[_Lazy, FastEvaluator]:
    """A bar end's store and evaluator: the base's store as it is now (a copy made in C: the fixed cells, the plan's
    inputs, every cell of the base's cone computed so far and every blank read so far) without the cone of
    ``changed`` (:func:`_cone`: computed again on first reads), with the scaled cells ``edits``; a cell the base
    has not read yet is read from the base on first read (:class:`_Lazy`'s fallback). The values are those of the
    plan's inputs with ``edits`` evaluated in full: a cell outside the cone of ``changed`` does not depend on
    it."""
    values = _Lazy(base)
    pop = values.pop
    for k in _cone(changed):  # re-evaluated here: not the base's value
        pop(k, None)
    values.update(edits)
    values.code = _cone_code(changed)
    values.fallback = base
    ev = FastEvaluator({}, load_functions(), memo=MEMO)
    ev.values = values  # (the base class would copy it)
    values.ev = weakref.ref(ev)
    base_ev = base.ev()
    if base_ev is not None:
        _seed_blocks(ev, base_ev, _cone_sheets(changed) | {k[0] for k in edits})
    return values, ev


def _seed_blocks(ev: FastEvaluator, base_ev: FastEvaluator, changed_sheets: frozenset[str | None]) -> None:
    """Give a bar end's evaluator the table blocks its base's evaluator has read (each with its first error, as the
    generated registry calls keep them) of the tables on sheets where the end changes nothing: no scaled cell and
    no cell of the cone is on them (the Fleet, Specs and Providers tables), so the end's block would hold the same
    cells, and every end would otherwise read them again (a Providers block is 243 cells)."""
    for name in ("_blocks", "_block_args"):
        kept = base_ev.__dict__.get(name)
        if kept:
            ev.__dict__[name] = {k: b for k, b in kept.items() if block_sheet(k) not in changed_sheets}


def _keep_blocks(ev: FastEvaluator, base_ev: FastEvaluator | None, changed_sheets: frozenset[str | None]) -> None:
    """Give the base's evaluator the blocks a bar end's evaluator has read (with their first errors and tokens, as
    the generated registry calls keep them) of the tables on sheets where the end changes nothing, which the base
    has not read itself: such a block holds the base's own cells (:func:`_seed_blocks`), so the plan's next bar ends
    are given it instead of each reading it again (the Fleet and Providers blocks, 100 and 243 cells, read by every
    fleet and provider call; the base, seeded with the whole plan's values, reads none). Kept with the base (a few
    plans, :func:`_base`'s cache)."""
    if base_ev is None:
        return
    for name in ("_blocks", "_block_args"):
        read = ev.__dict__.get(name)
        if read:
            kept = base_ev.__dict__.setdefault(name, {})
            for k, b in read.items():
                if k not in kept and block_sheet(k) not in changed_sheets:
                    kept[k] = b


@cache
def _cone_sheets(changed: tuple[tuple[str, str], ...] | None) -> frozenset[str | None]:
    """The sheets of :func:`_cone`'s cells for ``changed`` (and None, so that a block of no known sheet is never
    taken as unchanged)."""
    return frozenset({k[0] for k in _cone(changed)} | {None})


@cache
def _cone_code(changed: tuple[tuple[str, str], ...] | None) -> dict[tuple[str, str], Any]:
    """The compiled cells of :func:`_cone`'s cone of ``changed`` (a handful per process, as :func:`_cone`: one per
    input group's column and the whole cone), built once instead of once per bar end; :class:`_Lazy` only reads
    it."""
    code = compiled_cells()
    return {k: code[k] for k in _cone(changed)}


@lru_cache(maxsize=8)  # the keys hold a plan's tables: a few plans' worth (a batch's memory stays flat)
def _base(key: tuple) -> tuple[dict[tuple[str, str], Any], _Lazy, FastEvaluator]:
    """The plan's cells from its tables, and its own values of the cone, computed as its six bar ends read them
    (with the evaluator that computes them, which the store holds weakly)."""
    inputs = cells(dict(zip(TABLES, key)))
    values = _Lazy(_blanks())  # (the fixed cells and the inputs written over them: none of them is there)
    ev = evaluator(inputs, load_functions(), values=values)
    for k in _cone(None):  # computed: not a value the tables gave
        values.pop(k, None)
    values.update(_plan_cone_values(inputs))
    values.code = _cone_code(None)
    values.fallback = None
    values.ev = weakref.ref(ev)
    return inputs, values, ev


def _plan_cone_values(inputs: Mapping[tuple[str, str], Any]) -> dict[tuple[str, str], Any]:
    """The cells of the whole cone that the evaluation of the whole plan running now has computed
    (:data:`planner.template.fast.WHOLE_PLAN`) and that read, directly or through other cells of the cone, no
    column the bar's tables give otherwise than the plan holds it (a value, or only its type: the registry hands the
    bar a text "" of a computed table as a blank). Those cells are the template's formulas over the same cells
    (the cone reads only the six tables' columns and the Plan's settings, :func:`planner.template.cone_reads`), so
    their plan values are the ones the base would compute. Empty outside such an evaluation (a bar in Excel or
    xlwings Lite), when a Plan setting differs, or when the tables are not the plan's (more than a few columns
    differ): the base then computes its cells itself."""
    plan = WHOLE_PLAN.get()
    if plan is None:
        return {}
    store, computed = plan
    settings, columns = _cone_inputs()
    if _differ(store, inputs, settings):
        return {}  # a setting is read by every cell of the cone
    differ = _differing_columns(store, inputs)
    if len(differ) > _MAX_DIFFERING_COLUMNS:
        return {}
    keys, getter = _untainted(differ)
    if getter is not None:
        try:  # every cell computed (the What-if sheet comes after the cone's sheets): read in one C call
            return dict(zip(keys, getter(computed)))
        except KeyError:
            pass
    return {k: computed[k] for k in keys if k in computed}


def _differing_columns(a: Mapping[tuple[str, str], Any], b: Mapping[tuple[str, str], Any]) -> tuple[Any, ...]:
    """The columns of :func:`_cone_inputs` whose cells :func:`_differ` between ``a`` and ``b``, in its order: every
    column's cells read from each mapping once, in C, and compared a column's slice at a time (the same lists
    :func:`_differ` compares), where a call per column built its four lists (85 columns, once per plan)."""
    _settings, columns = _cone_inputs()
    every, bounds = _cone_input_cells()
    va, vb = list(map(a.get, every)), list(map(b.get, every))
    ta, tb = list(map(type, va)), list(map(type, vb))
    if va == vb and ta == tb:
        return ()
    return tuple(c for (c, _keys), (i, j) in zip(columns, bounds) if va[i:j] != vb[i:j] or ta[i:j] != tb[i:j])


@lru_cache(maxsize=1)
def _cone_input_cells() -> tuple[tuple[tuple[str, str], ...], tuple[tuple[int, int], ...]]:
    """The cells of :func:`_cone_inputs`' columns one after the other, and each column's ``(start, end)`` in them."""
    every: list[tuple[str, str]] = []
    bounds = []
    for _column, keys in _cone_inputs()[1]:
        bounds.append((len(every), len(every) + len(keys)))
        every.extend(keys)
    return tuple(every), tuple(bounds)


@lru_cache(maxsize=16)  # one per set of differing columns: a plan's computed Specs give one, a handful at most
def _untainted(differ: tuple[Any, ...]) -> tuple[tuple[tuple[str, str], ...], Any]:
    """The cells of the whole cone, in its order, outside the cone of the columns ``differ`` (none: all of them),
    and a getter reading them from a mapping in one C call (None for fewer than two cells)."""
    tainted = set(_cone(differ)) if differ else set()
    keys = tuple(k for k in _cone(None) if k not in tainted)
    return keys, (itemgetter(*keys) if len(keys) > 1 else None)


def _differ(a: Mapping[tuple[str, str], Any], b: Mapping[tuple[str, str], Any],
            keys: tuple[tuple[str, str], ...]) -> bool:
    """Whether a cell of ``keys`` holds in ``a`` another value than in ``b``, or one of another type (a missing
    cell reads as blank): the cells compared as lists, in C (a list's ``==`` takes the same object as equal
    before comparing values), then their types.

    >>> k = (("S", "A1"),)
    >>> _differ({k[0]: 1.0}, {k[0]: True}, k), _differ({}, {k[0]: None}, k)
    (True, False)
    """
    va, vb = list(map(a.get, keys)), list(map(b.get, keys))
    return va != vb or list(map(type, va)) != list(map(type, vb))


_MAX_DIFFERING_COLUMNS = 8
"""Input columns of the cone whose cells may differ between a bar's tables and its plan's cells before the bar stops
looking for the plan's values (a plan's computed Specs give "" where the bar's table gives a blank: up to the 3
Specs columns the cone reads; each distinct set is one cone, computed and kept once per process)."""


@lru_cache(maxsize=1)
def _cone_inputs() -> tuple[tuple[tuple[str, str], ...],
                            tuple[tuple[tuple[str, str], tuple[tuple[str, str], ...]], ...]]:
    """The Plan settings' value cells, and ``((table name, column key), its cells)`` for every column the cone reads
    and does not compute (:func:`planner.template.cone_reads`: all of them columns of the bar's six tables)."""
    tables = {t.name: t for _name, t in BAR_TABLES}
    settings = tuple((ts.PLAN.sheet, ts.plan_value_cell(s[0])) for s in ts.PLAN_SETTINGS)
    columns = []
    for name, key in ts.cone_reads(_TARGETS, _GIVEN, reads=_reads()):
        t = tables[name]  # a KeyError here: the cone reads a table the bar is not given (its values would be wrong)
        columns.append(((name, key), _addresses(t)[key]))
    return settings, tuple(columns)


@lru_cache(maxsize=1)
def _blanks() -> dict[tuple[str, str], None]:
    """The cells the cone's formulas may read (:func:`planner.template.fast.reads`) that are neither cells of the
    cone nor fixed cells, each blank (None): what a base reads for such a cell that its plan's tables do not give
    (:class:`_Lazy`: outside the cone, no fallback), written into the base's store before the plan's inputs (which
    replace the ones they give) instead of on first read through ``__missing__`` twice (a bar end, then its base):
    about 650 reads a plan (the blank cells of the input tables, the columns of the Forecast route block that
    BACKEND_MONTHS_TO_BREACH does not read)."""
    cone = set(_cone(None))
    code = _cell_exprs()
    read: set[tuple[str, str]] = set()
    for k in cone:
        r = reads(*code[k])
        assert r is not None  # (the template's own expressions: every node's reads are known)
        read |= r
    fixed = ts.fixed_cells()
    return dict.fromkeys(sorted(k for k in read - cone if k not in fixed))


@lru_cache(maxsize=1)
def _cell_exprs() -> dict[tuple[str, str], tuple[Any, int]]:
    """Each template formula cell's expression and data row."""
    return {(s, c): (e, r) for s, c, e, r in ts.formula_cells()}


@cache
def _cone(changed: tuple[tuple[str, str], ...] | None) -> tuple[tuple[str, str], ...]:
    return ts.cone_cells(_TARGETS, _GIVEN, changed, reads=_reads())


@lru_cache(maxsize=8)
def _bar(key: tuple, group: str, factor: float) -> BarFigures:
    """One bar end, evaluated once for both of its cells (utilization and breach). A group that scales a column of
    an input table re-evaluates only the cells of the cone that read it, all of them in the template's order (the
    rest are the plan's own values, which do not depend on it); a Plan setting re-evaluates the whole cone, each
    cell as the targets first read it."""
    inputs, base, _base_ev = _base(key)  # the base's evaluator held while its store computes cells
    g = levers.group(group)
    edits = levers.scaled_cells(inputs, g, factor)
    table = {"Routes": ts.ROUTES, "Fleet": ts.FLEET}.get(g.table)
    changed = ((table.name, g.key),) if table is not None and not g.routes_key else None
    values, ev = _end(base, edits, changed)
    figures = _figures(inputs, values, ev, changed)
    _keep_blocks(ev, base.ev(), _cone_sheets(changed) | {k[0] for k in edits})
    return figures


def _figures(inputs: Mapping[tuple[str, str], Any], values: _Lazy, ev: FastEvaluator,
             changed: tuple[tuple[str, str], ...] | None) -> BarFigures:
    """A bar end's figures from its store and evaluator (:func:`_end`), computing the cells its targets read."""
    if changed is not None:
        # the column's cone computed in the template's order (each cell after its precedents) rather than on first
        # read: the same values for every cell the targets read, and no lookup and call per cell through the
        # store's __missing__; the few cells no target would read (a provider route's fleet columns: cheap, their
        # IF decides at once) cost less than those calls (-1 ms a plan of six bar ends, measured 2026-12-06)
        for k, f in values.code.items():
            if k not in values:
                values[k] = f(ev)
    total = next(expr for _label, k, expr, _fmt in ts.TOTALS if k == "max_util")
    breach = levers.column_cells(ts.RESULTS, "months_to_breach")
    months = [m for i, _name in levers.route_rows(inputs) for m in (values.get(breach[i]),)
              if isinstance(m, (int, float)) and not isinstance(m, bool) and m < MONTHS_NEVER]
    return BarFigures(max_util=total.evaluate(ev, 0), breach_months=min(months) if months else MONTHS_NEVER)


@lru_cache(maxsize=1)
def _reads() -> tuple[tuple[str, int, tuple[str, ...]], ...]:
    """The registry's declared reads (``Arg.reads``): ``(function, argument position, column keys)``."""
    return tuple((name, i, a.reads) for name, spec in sorted(load_functions().items())
                 for i, a in enumerate(spec.args) if a.reads is not None)


__all__ = ["TABLES", "BarFigures", "bar_figures", "cells"]
