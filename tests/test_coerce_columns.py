"""A column argument that keeps its coerced cells (planner.coerce.Column) and a table's shared rows
(planner.coerce.SharedRows, planner.sheet.plan._row) give exactly what the plain lists give, call after call.

The expected values are the same calls with plain lists (the path every other adapter takes), not figures of the
code under test."""

from __future__ import annotations

from typing import Any

import pytest

from planner.coerce import Column, SharedRows, _table, call_sheet_function, prepare_args
from planner.errors import ArgumentError, PlannerError, Refusal
from planner.excel.expr import HashedTuple
from planner.registry import REGISTRY, load

load()


def _answer(spec: Any, *raw: Any) -> tuple[str, Any]:
    """A call's result, or its error's type and message (errors as text off, so a refusal stays an exception)."""
    try:
        return "ok", call_sheet_function(spec, *raw, errors_as_text=False)
    except PlannerError as exc:
        return type(exc).__name__, str(exc)


BACKENDS = ["api-a", "fleet-b", "api-a", "", "fleet-b"]
COLUMNS = [
    [1.0, 2.0, 3.0, None, 4.0],                    # numbers, a blank row
    [1.0, "#N/A", 3.0, None, 4.0],                 # an Excel error as text in a row
    [1.0, "12%", "1,000", None, "x"],              # numbers typed as text, and one that is not a number
    [None, None, None, None, None],                # all blank
    [2.0, 2.0, 2.0, 2.0, 2.0],
]


@pytest.mark.parametrize("values", COLUMNS)
@pytest.mark.parametrize("name", ["BACKEND_SUM", "BACKEND_MAX", "BACKEND_ARGMAX"])
def test_column_answers_as_plain_lists(name: str, values: list[Any]) -> None:
    spec = REGISTRY[name]
    backends, vals = Column(list(BACKENDS)), Column(list(values))
    labels = Column([f"r{i}" for i in range(len(values))])
    for backend in ("api-a", "fleet-b", "nobody"):
        plain = [backend, [[b] for b in BACKENDS], [[v] for v in values], [[f"r{i}"] for i in range(len(values))]]
        kept = [backend, backends, vals, labels]
        n = len(spec.args)
        for _ in range(3):  # the second and third calls read the kept coerced cells
            assert _answer(spec, *kept[:n]) == _answer(spec, *plain[:n])


def test_column_is_the_plain_rows() -> None:
    c = Column([1.0, None, "a"])
    assert c == [[1.0], [None], ["a"]] and c.cells == [1.0, None, "a"]
    vals = Column([1.0, None, 2.0])
    assert prepare_args(REGISTRY["BACKEND_SUM"], ["a", Column(["a", "b", "a"]), vals]) == \
        prepare_args(REGISTRY["BACKEND_SUM"], ["a", [["a"], ["b"], ["a"]], [[1.0], [None], [2.0]]])


def test_a_function_that_changes_its_list_does_not_change_the_next_call() -> None:
    """prepare_args hands each call a copy of the kept coerced cells."""
    spec = REGISTRY["BACKEND_SUM"]
    vals = Column([1.0, 2.0, 3.0])
    first = prepare_args(spec, ["a", Column(["a", "a", "b"]), vals])
    first[2].append(99.0)
    first[2][0] = -1.0
    again = prepare_args(spec, ["a", Column(["a", "a", "b"]), vals])
    assert again[2] == [1.0, 2.0, 3.0]


def test_refusals_in_rows_are_not_shared() -> None:
    """An Arg.row_errors column with an error keeps it in place as a Refusal; such a list is not kept."""
    spec = REGISTRY["BACKEND_SUM"]
    vals = Column([1.0, "#DIV/0!", 3.0])
    a = prepare_args(spec, ["a", Column(["a", "b", "a"]), vals])
    b = prepare_args(spec, ["a", Column(["a", "b", "a"]), vals])
    assert isinstance(a[2][1], Refusal) and str(a[2][1]) == str(b[2][1]) == "#DIV/0!"
    assert ("numbers", True) not in vals.coerced


def test_an_error_in_a_plain_column_is_the_result_each_time() -> None:
    spec = REGISTRY["LINEAR_BINDING_CONSTRAINT"]
    col = Column([0.5, "#VALUE!", 0.2])
    for _ in range(2):
        with pytest.raises(Refusal, match="#VALUE!"):
            prepare_args(spec, [col])


def test_a_bad_cell_names_the_argument_each_time() -> None:
    """A coercion error is not kept: each call raises it for its own argument."""
    spec = REGISTRY["LINEAR_BINDING_CONSTRAINT"]
    col = Column([0.5, "not a number"])
    for _ in range(2):
        with pytest.raises(ArgumentError, match="utilizations"):
            prepare_args(spec, [col])
    assert not col.coerced


PROVIDERS = HashedTuple((
    ("Backend [name]", "Input [USD/Mtok]", "Output [USD/Mtok]"),
    ("p", 3.0, 15.0),
    ("q", 1.0, 2.0),
))


@pytest.mark.parametrize("provider", ["p", "Q ", "nobody"])
def test_shared_rows_answer_as_plain_rows(provider: str) -> None:
    spec = REGISTRY["PROVIDER_API_COST_MONTHLY"]
    rows = _table(PROVIDERS)[1]
    assert type(rows) is SharedRows
    plain = [list(r) for r in PROVIDERS]
    for _ in range(3):
        assert _answer(spec, provider, PROVIDERS, 1.0, 1000.0, 100.0) == \
            _answer(spec, provider, plain, 1.0, 1000.0, 100.0)


def test_shared_row_callers_get_their_own_dictionary() -> None:
    from planner.sheet.plan import PROVIDER_HEADERS, _row

    rows = _table(PROVIDERS)[1]
    first = _row("p", rows, "provider", PROVIDER_HEADERS)
    first["usd_per_mtok_input"] = -1.0
    assert _row("p", rows, "provider", PROVIDER_HEADERS)["usd_per_mtok_input"] == 3.0
