"""A table block's coercion (planner.coerce._table, coerce_table) gives what the cell-by-cell rule gives: the first
Excel error in row order, and every row's cells converted one by one (a float itself, an empty or blank text None,
another text itself, an int a float, a bool itself, an Excel error itself).

The expected values come from the rule written out cell by cell below (what both functions did before the block's
distinct texts were looked at in C, session 20), not from the code under test. Types are compared as well as
values: ``1.0 == True``, and the functions that read the rows tell them apart."""

from __future__ import annotations

import random
from typing import Any

import pytest

from planner.coerce import _table, coerce_scalar, coerce_sequence, coerce_table
from planner.excel.expr import HashedTuple
from planner.excel.values import ERROR_VALUES

ERRORS = frozenset(ERROR_VALUES)


def _cell(v: Any) -> Any:
    if type(v) is float:
        return v
    if isinstance(v, str):
        return None if v.strip() == "" else v
    if v is None:
        return None
    if isinstance(v, int) and not isinstance(v, bool):
        return float(v)
    return v


def _expected(block: tuple[tuple[Any, ...], ...]) -> tuple[str | None, list[list[Any]]]:
    rows = [[_cell(v) for v in r] for r in block]
    for r in block:
        for v in r:
            if isinstance(v, str) and v.strip() in ERRORS:
                return v.strip(), rows
    return None, rows


def _typed(rows: list[list[Any]]) -> list[list[tuple[type, Any]]]:
    return [[(type(v), v) for v in r] for r in rows]


class _XlError(str):
    """A str subclass, as planner.excel.values' errors are."""


CELLS = [1.0, 0.0, -2.5, 3, True, False, None, "", " ", "\t", "api-a", " fleet ", "#N/A", " #DIV/0! ", "#REF!x",
         _XlError("#VALUE!"), _XlError(""), "ITPM"]


def _block(rng: random.Random, *, cells: list[Any] = CELLS) -> tuple[tuple[Any, ...], ...]:
    width = rng.randint(1, 6)
    return HashedTuple(tuple(rng.choice(cells) for _ in range(width)) for _ in range(rng.randint(1, 6)))


@pytest.mark.parametrize("seed", range(300))
def test_table_matches_the_cell_by_cell_rule(seed: int) -> None:
    rng = random.Random(seed)
    # half the blocks without errors or odd types (the path that keeps rows as they are)
    block = _block(rng, cells=CELLS if seed % 2 else [1.0, 0.0, None, "api-a", "", " ", "ITPM"])
    error, rows = _table.__wrapped__(block)
    want_error, want_rows = _expected(block)
    assert error == want_error
    assert _typed(rows) == _typed(want_rows)
    assert _typed(coerce_table(block)) == _typed(want_rows)


def test_rows_are_new_lists() -> None:
    """The rows handed out are the function's own: changing the block's source cannot change them."""
    source = [[1.0, "a"], [None, 2.0]]
    _err, rows = _table.__wrapped__(tuple(map(tuple, source)))
    assert rows == [[1.0, "a"], [None, 2.0]] and all(type(r) is list for r in rows)


def test_unhashable_cell_is_looked_at_one_by_one() -> None:
    """A cell that cannot be hashed (a list, where a caller passes one) is coerced as before, not refused."""
    block = ((1.0, ["x"]), ("#N/A", None))
    error, rows = _table.__wrapped__(block)
    assert error == "#N/A"
    assert rows == [[1.0, ["x"]], [None if False else "#N/A", None]]


def test_first_error_in_row_order() -> None:
    """Two errors: the first in row order is the block's, whatever order a set would give."""
    for _ in range(20):
        block = (("ok", " #REF! "), ("#N/A", 1.0))
        assert _table.__wrapped__(block)[0] == "#REF!"
        assert _table.__wrapped__(tuple(reversed(block)))[0] == "#N/A"


NUMBER_CELLS = [1.0, 0.0, -0.0, 2.5, 3.0e15, 2.0**53, -(2.0**53) + 1, float("inf"), float("nan"), None]


@pytest.mark.parametrize("seed", range(200))
def test_number_sequence_matches_each_cell(seed: int) -> None:
    """A numbers range is each cell as coerce_scalar gives it (a whole float below 2**53 an int, any other float
    itself, a blank None), also when the range holds only floats and blanks (converted in one comprehension)."""
    rng = random.Random(seed)
    cells = [rng.choice(NUMBER_CELLS + ([3, "4", " "] if seed % 3 == 0 else [])) for _ in range(rng.randint(0, 25))]
    column = [[c] for c in cells]
    want = [coerce_scalar("number", "values", c) for c in cells]
    got = coerce_sequence("numbers", "values", column)
    assert [(type(v), repr(v)) for v in got] == [(type(v), repr(v)) for v in want]
    assert [(type(v), repr(v)) for v in coerce_sequence("numbers", "values", column, row_errors=True)] == \
        [(type(v), repr(v)) for v in want]


@pytest.mark.parametrize("seed", range(100))
def test_block_error_is_the_first_in_row_order(seed: int) -> None:
    """planner.excel.expr.block_error: the first Excel error of a block row by row (the cells' types are looked at
    first, in C), None without one; a plain text that reads like an error is not an Excel error."""
    from planner.excel.expr import Evaluator, block_error
    from planner.excel.values import DIV0, NA, XlError

    rng = random.Random(seed)
    cells = [1.0, None, "x", "#N/A", True] + ([NA, DIV0] if seed % 2 else [])
    block = tuple(tuple(rng.choice(cells) for _ in range(rng.randint(1, 5))) for _ in range(rng.randint(1, 5)))
    want = next((x for r in block for x in r if isinstance(x, XlError)), None)
    got = block_error(Evaluator({}, {}), block)
    assert got is want
