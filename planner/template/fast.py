"""The template's compiled evaluation: every formula cell's expression compiled once per process
(:func:`planner.excel.compiled.compile_fast`) and an evaluator that reads whole columns once per plan.

The What-if sheet's ``SENSITIVITY_BAR`` evaluates part of the template again through it (:mod:`planner.whatif.bars`),
so it lives with the template and imports nothing outside the function layer (xlwings Lite runs it). Values are the
interpreter's (:meth:`planner.excel.expr.Expr.evaluate`), bit for bit (tests/test_compiled_expr.py). Pure.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from functools import lru_cache
from operator import itemgetter
from typing import Any

from planner import template as ts
from planner.excel.compiled import Compiled
from planner.excel.expr import ValueStore

Key = tuple[str, str]

MEMO: dict[tuple[Any, ...], Any] = {}
"""Registry calls with scalar arguments, shared by the evaluations of one process (pure functions: the same
arguments give the same value; bounded by the evaluator's MEMO_LIMIT)."""

WHOLE_PLAN: ContextVar[tuple[Mapping[Key, Any], Mapping[Key, Any]] | None] = ContextVar("WHOLE_PLAN", default=None)
"""While :func:`evaluate_cells` computes every template formula cell of a plan in the template's order (and only
then): ``(store, computed)``, the evaluation's cell values and the template cells it has computed so far. The
What-if sheet's bars (:mod:`planner.whatif.bars`) take from it the plan's own values of the cells of their cone that
read nothing their tables give differently, instead of computing them again. ``None`` outside such an evaluation
(a cone's, Excel's, xlwings Lite's)."""

_COLUMN_CELLS: dict[tuple[str, str], Callable[[Mapping[Key, Any]], tuple[Any, ...]]] = {}
"""Each table column's reader (its cells' values from a store, in row order), built once per process."""


@lru_cache(maxsize=1)
def computed_sheets() -> frozenset[str]:
    return frozenset(sheet for sheet, _c, _e, _r in ts.formula_cells())


@lru_cache(maxsize=1)
def compiled_cells() -> dict[Key, Compiled]:
    """Per process, once: every template formula cell's expression compiled for its row, in the template's
    evaluation order."""
    from planner.excel.compiled import compile_fast, register
    from planner.template.layout import PerRow, PlanValue

    register(PerRow, lambda e, row: compile_fast(_settings_as_cells(e.exprs[row]), row))
    register(PlanValue, lambda e, row: (lambda key: lambda ev: ev.values[key])(
        (ts.PLAN.sheet, ts.plan_value_cell(e.setting))))
    return {(s, c): compile_fast(_settings_as_cells(e), r) for s, c, e, r in ts.formula_cells()}


def _settings_as_cells(e: Any) -> Any:
    """``e`` with each Plan setting (:class:`~planner.template.layout.PlanValue`) written as the absolute reference
    to its value cell it renders as (``At(PLAN, "value", i)``: ``Plan!$B$6``), which the generated code reads inline
    (``_v[key]``) where a setting was a closure called per read (about 2,200 reads a plan, most of them the Forecast
    sheet's). Both read ``ev.values[(PLAN.sheet, plan_value_cell(setting))]``: the same value. Other nodes are
    rebuilt only when a child changed.

    >>> from planner.template.layout import PlanValue
    >>> _settings_as_cells(PlanValue("monthly_growth")).render(0) == PlanValue("monthly_growth").render(0)
    True
    """
    from dataclasses import replace

    from planner.excel.expr import At, Bin, Fn, Udf
    from planner.template.layout import PlanValue, plan_setting_row

    t = type(e)
    if t is PlanValue:
        return At(ts.PLAN, "value", plan_setting_row(e.setting))
    if t is Bin:
        a, b = _settings_as_cells(e.a), _settings_as_cells(e.b)
        return e if a is e.a and b is e.b else replace(e, a=a, b=b)
    if t is Fn or t is Udf:
        args = tuple(map(_settings_as_cells, e.args))
        return e if all(map(operator.is_, args, e.args)) else replace(e, args=args)
    return e  # (a PerRow's row is rewritten when it is compiled)


@lru_cache(maxsize=1)
def topological() -> bool:
    """Per process, once: every template formula cell that reads a whole column of a table (a ``Cells`` range, the
    only reads :meth:`FastEvaluator.column` serves) comes after every template formula cell of that column in the
    template's evaluation order. Then a column of a computed sheet is complete when a formula first reads it and no
    later cell changes it, so :class:`FastEvaluator` reads it once per plan, as it reads the columns of input
    sheets. ``False``, and no computed column is kept, if an expression type other than the template's own is
    found. Any order that keeps every cell after its precedents (a cone of the template's, an order with edited
    formulas) keeps the property."""
    from planner.excel.expr import At, Bin, Block, Cells, Fn, Lit, Ref, Udf
    from planner.template.layout import PerRow, PlanValue

    known = (At, Bin, Block, Fn, Lit, Ref, Udf, PerRow, PlanValue)
    cells = ts.formula_cells()
    pos = {(s, c): i for i, (s, c, _e, _r) in enumerate(cells)}
    last: dict[tuple[str, str], int] = {}  # (table, column key) -> position of its last formula cell
    for i, (_s, _c, e, _r) in enumerate(cells):
        todo = [e]
        while todo:
            x = todo.pop()
            if type(x) is Cells:
                if x.last is None:
                    t = x.table
                    col = (t.name, x.first)
                    end = last.get(col)
                    if end is None:
                        end = last[col] = max((pos.get((t.sheet, t.cell(x.first, j)), -1) for j in range(t.rows)),
                                              default=-1)
                    if end >= i:
                        return False
                continue
            if type(x) not in known:
                return False
            todo.extend(x.children())
    return True


class FastEvaluator(ts.Evaluator):
    """The template's evaluator with the addresses of whole columns computed once per process, and the columns of
    input sheets (which no formula writes) read once per plan."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._inputs: dict[tuple[str, str], list[Any]] = {}
        self._last: dict[str, tuple[ts.Table, list[Any]]] = {}
        """The column kept in ``_inputs`` last read under each column key, with its table: the compiled cells pass
        the template's own table objects, so a read is one look-up of a text (its hash kept in the object) and one
        identity test, instead of a tuple built and hashed (about 5,000 reads a plan)."""
        self.column_args: dict[int, Any] = {}
        """Input columns as registry calls take them (:func:`planner.excel.compiled.column_arg`), by ``id``: the list
        itself until a registry call first receives it (many columns only reach INDEX, MATCH or SUMIFS), then what
        :func:`~planner.excel.compiled.column_arg` makes of it."""

    def get(self, sheet: str, cell: str) -> Any:  # the base class's, without its no-op "" normalisation
        return self.values[(sheet, cell)]

    def column(self, table: ts.Table, key: str) -> list[Any]:
        last = self._last.get(key)
        if last is not None and last[0] is table:
            return last[1]
        cached = self._inputs.get((table.name, key))
        if cached is not None:
            self._last[key] = (table, cached)
            return cached
        read = _COLUMN_CELLS.get((table.name, key))
        if read is None:
            cells = tuple((table.sheet, table.cell(key, i)) for i in range(table.rows))
            # the column's cells read in one C call, in order, each a subscript (a store's __missing__ answers a
            # cell not there); a one-row table's getter would return the value itself, not a 1-tuple
            read = _COLUMN_CELLS[(table.name, key)] = (itemgetter(*cells) if len(cells) > 1 else
                                                       lambda store: tuple(store[k] for k in cells))
        values = list(read(self.values))
        if "" in values:  # a text equal to "" is "" itself (the base class's normalisation), found in C first
            values = [("" if v == "" else v) for v in values]
        if table.sheet not in computed_sheets() or topological():  # callers only read the list
            self._inputs[(table.name, key)] = values
            self._last[key] = (table, values)
            self.column_args[id(values)] = values  # prepared when a registry call first receives it
        return values


@lru_cache(maxsize=1)
def _fixed() -> dict[Key, Any]:
    return ts.fixed_cells()


def evaluator(inputs: Mapping[Key, Any], functions: Mapping[str, Any] | None = None, *,
              memo: dict[tuple[Any, ...], Any] | None = MEMO,
              values: ValueStore | None = None) -> FastEvaluator:
    """A :class:`FastEvaluator` over the template's fixed cells and ``inputs``, in ``values`` (a new
    :class:`~planner.excel.expr.ValueStore` by default; a subclass may compute cells as they are read,
    :mod:`planner.whatif.bars`). ``functions``: the registry by default; ``memo``: the registry-call memo (None:
    none)."""
    if functions is None:
        from planner.registry import load

        functions = load()
    store: dict[Key, Any] = ValueStore() if values is None else values
    store.update(_fixed())
    store.update(inputs)
    ev = FastEvaluator({}, functions, memo=memo)
    ev.values = store  # (the base class would copy it)
    return ev


def evaluate_cells(inputs: Mapping[Key, Any], keys: Iterable[Key], functions: Mapping[str, Any] | None = None, *,
                   memo: dict[tuple[Any, ...], Any] | None = MEMO) -> dict[Key, Any]:
    """The template formula cells ``keys`` (in an order that keeps every cell after its precedents: the template's,
    or a cone of it, :func:`planner.template.cone_cells`) computed from ``inputs`` (input cells, and the values of
    any formula cell not in ``keys`` that they read). Returns ``{cell: value}`` of those cells. ``memo``: the
    registry-call memo (None: none)."""
    ev = evaluator(inputs, functions, memo=memo)
    values = ev.values
    code = compiled_cells()
    out: dict[Key, Any] = {}
    if keys is code:  # every template cell in the template's order (the fast path's common case): no look-up
        token = WHOLE_PLAN.set((values, out))
        try:
            for key, f in code.items():
                values[key] = out[key] = f(ev)
        finally:
            WHOLE_PLAN.reset(token)
        return out
    for key in keys:
        values[key] = out[key] = code[key](ev)
    return out


def reads(expr: Any, row: int) -> frozenset[Key] | None:
    """Every cell ``expr`` (a template formula's expression, or part of one) may read when evaluated for data row
    ``row``: a reference's cell, a range's or a whole column's cells, a table block's cells (header row included),
    a Plan setting's value cell; ``None`` if a node of a kind not listed here is found (its reads are not known). A
    superset of what one evaluation reads (both branches of an IF; every column of a block a function reads only
    some of); for a template formula cell, the precedents of its rendered formula (tests/test_speed23.py).

    >>> from planner.excel.expr import Ref, fn
    >>> sorted(reads(fn("IF", Ref(ts.RESULTS, "route").eq(""), "", Ref(ts.ROUTES, "avg_input_tokens")), 0))
    [('Results', 'A4'), ('Routes', 'D4')]
    """
    from planner.excel.expr import At, Bin, Block, Cells, Fn, Lit, Ref, Udf
    from planner.template.layout import PerRow, PlanValue

    out: set[Key] = set()
    todo = [expr]
    while todo:
        e = todo.pop()
        t = type(e)
        if t is Lit:
            continue
        if t is Ref:
            tb = e.table
            out.add(e._addresses[row] if 0 <= row < tb.rows else (tb.sheet, tb.cell(e.key, row)))
        elif t is At:
            out.add((e.table.sheet, e.table.cell(e.key, e.row_index)))
        elif t is Cells:
            tb = e.table
            if e.last is None:
                out.update((tb.sheet, tb.cell(e.first, i)) for i in range(tb.rows))
            else:
                r = row if e.fixed_row is None else e.fixed_row
                i, j = tb.index(e.first), tb.index(e.last)
                out.update((tb.sheet, tb.cell(c.key, r)) for c in tb.columns[i : j + 1])
        elif t is Block:
            tb = e.table
            out.update((tb.sheet, tb.cell(c.key, i)) for c in tb.columns for i in range(tb.rows))
            out.update((tb.sheet, f"{tb.letter(c.key)}{tb.header_row}") for c in tb.columns)  # its header row
        elif t is PlanValue:
            out.add((ts.PLAN.sheet, ts.plan_value_cell(e.setting)))
        elif t is PerRow:
            todo.append(e.exprs[row])
        elif t in (Bin, Fn, Udf):
            todo.extend(e.children())
        else:
            return None
    return frozenset(out)
