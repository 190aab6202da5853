"""A table argument's declared reads (``Arg.reads``) are what its function reads: any value in another column (a
number, a text, an Excel error, a blank) leaves every answer as it is. The tornado's bars rely on it
(:func:`planner.template.cone_cells` with ``reads`` leaves those columns out of the cone they evaluate again)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from planner import template as ts
from planner.coerce import call_sheet_function
from planner.registry import Arg, load
from planner.whatif.source import load_inputs

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ("seed", "bulk-tpm", "classifier-rpm", "selfhost-kv")
JUNK = (0.0, -1.0, 1e9, 0.37, "", None, "fleet", "#DIV/0!", "#N/A", "#VALUE!", "no price: quote on Providers")


def declared() -> list[tuple[str, int, Arg]]:
    return [(name, i, a) for name, spec in sorted(load().items()) for i, a in enumerate(spec.args)
            if a.reads is not None]


def test_some_function_declares_its_reads() -> None:
    # BACKEND_MONTHS_TO_BREACH reads route, backend, growth and the ten shares of the Forecast route table
    assert [(n, i) for n, i, _a in declared()] == [("BACKEND_MONTHS_TO_BREACH", 1)]


def _block(values: dict, table: ts.Table) -> list[list]:
    rows = [[c.key for c in table.columns]]
    rows += [[values.get((table.sheet, table.cell(c.key, i))) for c in table.columns] for i in range(table.rows)]
    return rows


def _calls(name: str, values: dict) -> list[tuple]:
    """The plan's own calls of ``name``: its Results rows' arguments, as the template passes them."""
    if name != "BACKEND_MONTHS_TO_BREACH":
        raise AssertionError(f"no call recipe for {name}: add one")
    routes = _block(values, ts.FORECAST_ROUTES)
    growth = values[(ts.PLAN.sheet, ts.plan_value_cell("monthly_growth"))]
    out = []
    for i in range(ts.ROUTES.rows):
        backend = values.get((ts.ROUTES.sheet, ts.ROUTES.cell("backend", i)))
        util = values.get((ts.RESULTS.sheet, ts.RESULTS.cell("headroom_multiple", i)))
        if isinstance(backend, str) and backend.strip() and isinstance(util, float) and util > 0:
            out.append((backend, routes, growth, 1 / util))
    return out


@pytest.mark.parametrize("sample", SAMPLES)
def test_unread_columns_change_no_answer(sample: str) -> None:
    rng = random.Random(sample)
    inputs = load_inputs(ROOT / "samples" / f"{sample}.toml")
    for own_growth in (False, True):  # routes growing alike (closed form) and apart (the shares are read)
        edited = dict(inputs)
        if own_growth:
            for i in range(ts.ROUTES.rows):
                edited[(ts.ROUTES.sheet, ts.ROUTES.cell("monthly_growth", i))] = rng.choice((0.01, 0.05, 0.12))
        values = {**edited, **ts.evaluate_plan(edited)}
        for name, position, arg in declared():
            spec = load()[name]
            calls = _calls(name, values)
            assert calls, "the sample has no call to check"
            for call in calls:
                table = call[position]
                header = table[0]
                unread = [j for j, key in enumerate(header) if key not in arg.reads]
                assert unread, "every column is declared read: nothing to check"
                want = call_sheet_function(spec, *call)
                for _ in range(5):
                    junk = [list(r) for r in table]
                    for row in junk[1:]:
                        for j in unread:
                            row[j] = rng.choice(JUNK)
                    again = call_sheet_function(spec, *(junk if k == position else v for k, v in enumerate(call)))
                    assert again == want, (name, call[0], own_growth)
                # and a read column does matter (the check could fail): growth or a share moved on every row
                moved = [list(r) for r in table]
                share = header.index("itpm_share")
                for row in moved[1:]:
                    row[share] = (row[share] or 0) + 0.5 if isinstance(row[share], float) else 0.5
                    row[header.index("growth")] = 0.3
                changed = call_sheet_function(spec, *(moved if k == position else v for k, v in enumerate(call)))
                assert changed != want


def test_a_declared_read_that_is_not_a_column_is_refused() -> None:
    targets = ((ts.RESULTS.name, "months_to_breach"),)
    with pytest.raises(ValueError, match="not columns of tblForecastRoutes"):
        ts.cone_cells(targets, (ts.SPECS.name,), reads=(("BACKEND_MONTHS_TO_BREACH", 1, ("route", "no_such")),))


def test_declared_reads_narrow_the_cone() -> None:
    targets = ((ts.RESULTS.name, "months_to_breach"),)
    reads = tuple((n, i, a.reads) for n, i, a in declared())
    full = set(ts.cone_cells(targets, (ts.SPECS.name,)))
    narrow = set(ts.cone_cells(targets, (ts.SPECS.name,), reads=reads))
    cost = {(ts.FORECAST_ROUTES.sheet, ts.FORECAST_ROUTES.cell("input_usd", i)) for i in range(ts.ROUTES.rows)}
    assert narrow < full and cost <= full and not cost & narrow


def test_reads_is_only_for_a_row_errors_table() -> None:
    with pytest.raises(ValueError, match="reads names the columns"):
        Arg(name="t", unit="table", kind="table", help="x", reads=("a",))  # a table without row_errors
    with pytest.raises(ValueError, match="reads names the columns"):
        Arg(name="n", unit="x", kind="numbers", help="x", row_errors=True, reads=("a",))
