"""The compiled evaluation's cell reads and comparisons (session 19): a row range and a whole column read in one C call
(``operator.itemgetter``), and comparisons of a number or a blank against a text answered inline. Each must give
what the interpreter gives (planner.excel.expr, planner.excel.values.compare): the same values in the same order, a
store's ``__missing__`` asked for the same cells in the same order, the same comparison results and types."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from planner import template as ts
from planner.excel import compiled, expr
from planner.excel.expr import ValueStore
from planner.excel.values import _COMPARISONS, DIV0, NA, XlError, compare
from planner.template import fast

OPERANDS: list[Any] = [None, 0.0, 2.0, -1.5, float("inf"), "", "a", "ABC", "3", " TRUE ", True, False, NA, DIV0]


@pytest.mark.parametrize("op", sorted(_COMPARISONS))
def test_comparison_helper_equals_compare_on_every_operand_pair(op: str) -> None:
    """The generated code's comparison (compiled._cmp_helper) against values.compare, every operand pair."""
    cmp = compiled._cmp_helper(op)
    for a, b in itertools.product(OPERANDS, OPERANDS):
        got, want = cmp(a, b), compare(op, a, b)
        assert type(got) is type(want) and repr(got) == repr(want), (op, a, b, got, want)


@pytest.mark.parametrize("op", sorted(_COMPARISONS))
def test_comparison_closure_equals_interpreter_on_every_operand_pair(op: str) -> None:
    """compile_expr's closure for a comparison (not the generated code) against Bin.evaluate."""
    ev = expr.Evaluator({}, memo=None)
    for a, b in itertools.product(OPERANDS, OPERANDS):
        e = expr.Bin(op, expr.Lit(a), expr.Lit(b))
        got, want = compiled.compile_expr(e, 0)(ev), e.evaluate(ev, 0)
        assert type(got) is type(want) and repr(got) == repr(want), (op, a, b, got, want)


class _Recording(ValueStore):
    """A store that computes a cell on its first read (as a bar's store does) and records the order of those reads."""

    __slots__ = ("asked",)

    def __missing__(self, key: Any) -> Any:
        self.asked.append(key)
        v = self[key] = f"computed {key[1]}"
        return v


def _store(values: dict[tuple[str, str], Any]) -> _Recording:
    s = _Recording(values)
    s.asked = []
    return s


@pytest.mark.parametrize("width", [1, 2, 5])
def test_row_range_reads_the_cells_in_order_as_the_interpreter(width: int) -> None:
    """A row range (Cells with ``last``) compiled reads its cells left to right, a cell not in the store asked of
    the store's ``__missing__`` in that order, and gives the interpreter's list (one cell: a one-element list)."""
    t = ts.ROUTES
    first, last = t.columns[1].key, t.columns[width].key
    e = expr.Cells(t, first, last)
    row = 3
    keys = [(t.sheet, t.cell(c.key, row)) for c in t.columns[1 : width + 1]]
    given = {k: float(i) for i, k in enumerate(keys) if i % 2 == 0}  # every other cell absent
    a, b = _store(dict(given)), _store(dict(given))
    ev_a, ev_b = expr.Evaluator({}, memo=None), expr.Evaluator({}, memo=None)
    ev_a.values, ev_b.values = a, b
    got = compiled.compile_expr(e, row)(ev_a)
    want = e.evaluate(ev_b, row)
    assert type(got) is list and got == want
    assert a.asked == b.asked == [k for i, k in enumerate(keys) if i % 2 == 1]


def test_whole_column_reads_in_order_and_keeps_the_text_normalisation() -> None:
    """FastEvaluator.column: the column's cells in row order, absent cells asked of the store in that order, and a
    text equal to "" (a str subclass: an XlError("")) given as the plain "" the base class's read gives."""
    t = ts.ROUTES
    key = t.columns[0].key
    cells = [(t.sheet, t.cell(key, i)) for i in range(t.rows)]
    odd = XlError("")
    given: dict[tuple[str, str], Any] = {cells[0]: "chat", cells[1]: "", cells[2]: odd, cells[3]: 4.0, cells[5]: None}
    store = _store(dict(given))
    ev = fast.FastEvaluator({}, {}, memo=None)
    ev.values = store
    got = ev.column(t, key)
    assert got[:4] == ["chat", "", "", 4.0] and type(got[2]) is str and got[5] is None
    assert store.asked == [k for i, k in enumerate(cells) if i not in (0, 1, 2, 3, 5)]
    assert got[4] == f"computed {cells[4][1]}"
    # read once per plan for an input sheet: the same list again, no new reads
    assert ev.column(t, key) is got and len(store.asked) == t.rows - 5


def test_whole_column_without_empty_text_is_the_store_values() -> None:
    t = ts.PROVIDERS
    key = t.columns[0].key
    cells = [(t.sheet, t.cell(key, i)) for i in range(t.rows)]
    store = _store({k: float(i) for i, k in enumerate(cells)})
    ev = fast.FastEvaluator({}, {}, memo=None)
    ev.values = store
    assert ev.column(t, key) == [float(i) for i in range(t.rows)] and store.asked == []


def _fleet_store(**override: Any) -> dict[tuple[str, str], Any]:
    t = ts.FLEET
    out: dict[tuple[str, str], Any] = {}
    for i in range(t.rows):
        for j, c in enumerate(t.columns):
            out[(t.sheet, t.cell(c.key, i))] = float(i * 100 + j) if j else f"fleet-{i}"
    if "x" in override:  # the first data row's second column
        out[(t.sheet, t.cell(t.columns[1].key, 0))] = override["x"]
    return out


def test_equal_blocks_of_two_evaluators_are_one_object() -> None:
    """A table read as a block by two evaluators whose cells are equal in value and type (a tornado bar end's Fleet
    and its plan's) is the same object, so a memo key holding it compares by identity; the values are the cells'."""
    b = expr.Block(ts.FLEET)
    one = b.evaluate(expr.Evaluator(_fleet_store(), memo=None), 0)
    two = b.evaluate(expr.Evaluator(_fleet_store(), memo=None), 0)
    assert two is one and two[1][0] == "fleet-0" and two[2][1] == 101.0


def test_blocks_that_differ_in_a_value_or_only_in_type_stay_apart() -> None:
    """1.0 == True in Python, but a registry call tells them apart (its memo keys carry the types): a block whose
    cell is True where the last block's is 1.0 is its own object, holding True; a changed value likewise."""
    b = expr.Block(ts.FLEET)
    base = b.evaluate(expr.Evaluator(_fleet_store(x=1.0), memo=None), 0)
    as_bool = b.evaluate(expr.Evaluator(_fleet_store(x=True), memo=None), 0)
    assert as_bool == base and as_bool is not base and as_bool[1][1] is True and base[1][1] == 1.0
    changed = b.evaluate(expr.Evaluator(_fleet_store(x=2.0), memo=None), 0)
    assert changed is not base and changed[1][1] == 2.0


def test_a_block_key_is_one_object_per_table() -> None:
    keys = {expr.block_key(t) for t in (ts.ROUTES, ts.FLEET, ts.SPECS, ts.PROVIDERS, ts.PLAN)}
    assert len(keys) == 5 and expr.block_key(ts.FLEET) is expr.block_key(ts.FLEET)


def test_the_cells_the_fast_path_computes_are_the_template_formula_cells() -> None:
    """planner.recalc takes a plan whose formulas equal the template's without comparing the computed cells' keys
    with the plan's formulas again: the compiled cells (what the fast path computes) are exactly the template's
    formula cells (what such a plan's formulas are keyed by)."""
    from planner.validate import fastpath

    assert fast.compiled_cells().keys() == fastpath.compiled()[1].keys()
    assert [(s, c) for s, c, _e, _r in ts.formula_cells()] == list(fast.compiled_cells())


def test_a_memo_hands_the_template_formula_texts_themselves() -> None:
    """Read through a SheetMemo, a template plan's formula texts are the template's own objects (what makes the
    comparison of its formulas with the template's an identity check), in the first book and in the next plan's,
    and every book equals the one read without a memo."""
    from planner.ooxml import SheetMemo
    from planner.validate import fastpath
    from planner.validate.checks import read_book

    root = Path(__file__).resolve().parents[1]
    plans = sorted((root / "samples").glob("*.xlsm")) + sorted((root / "samples").glob("*.xlsx"))
    assert len(plans) >= 2
    expected = fastpath.compiled()[1]
    memo = SheetMemo()
    for p in plans[:3]:
        with_memo, without = read_book(str(p), memo=memo), read_book(str(p))
        assert with_memo.formulas == without.formulas and with_memo.values == without.values
        same = [k for k, t in with_memo.formulas.items() if expected.get(k) == t]
        assert same and all(with_memo.formulas[k] is expected[k] for k in same)
