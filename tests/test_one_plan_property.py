"""One plan method: every surface gives the same value for every computed cell, on random plans.

The surfaces: the template evaluator (what writes a workbook's cached values, the validator's fast path and
``planner size``), ``planner recalc``'s general engine (the ``formulas`` library computing the formula text the
workbook holds, with the registry's functions), and ``planner size``'s report. Random plans start from the seed
scenario and get random edits: other valid values, blanks, text where a number belongs, numbers out of range,
unknown backend names. The expected values never come from the evaluator: the general engine computes the written
formula text on its own, and the ``planner size`` check reads the values back from a workbook file.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner import template as ts
from planner.excel.values import XlError
from planner.scenario import load_scenario
from planner.sizing import bundled_scenario_path, size_scenario
from planner.template.build import write_plan
from planner.template.inputs import catalog_inputs, scenario_inputs

pytestmark = pytest.mark.slow

SEED = load_scenario(bundled_scenario_path())
BASE = scenario_inputs(SEED)

# cells a planner edits, with the kinds of wrong value each may get
_ROUTE_NUMBERS = ("peak_qps", "avg_input_tokens", "avg_output_tokens", "p95_context_tokens", "max_tokens",
                  "cache_hit_rate", "ttft_slo_s", "tpot_slo_s")
_EDITABLE = [(ts.ROUTES, k, i) for k in _ROUTE_NUMBERS for i in range(len(SEED.routes))]
_EDITABLE += [(ts.PROVIDERS, k, i) for k in ("keys", "rpm", "itpm", "usd_per_mtok_input", "window_s",
                                             "pt_usd_per_unit_hour", "pt_input_tpm_per_unit",
                                             "pt_output_tpm_per_unit")  # a provisioned-throughput quote
              for i in range(len(SEED.providers))]
_EDITABLE += [(ts.FLEET, k, i) for k in ("replicas", "tp", "gpu_memory_utilization", "mfu")
              for i in range(len(SEED.fleets))]
_EDITABLE += [(ts.ROUTES, "backend", 0), (ts.ROUTES, "failover", 1)]
_EDITABLE += [(ts.ROUTES, "monthly_growth", i) for i in range(len(SEED.routes))]  # routes growing apart
_EDITABLE += [(ts.ROUTE_DEMAND, f"m{m:02d}", i) for m in (1, 2, 3) for i in range(len(SEED.routes))]  # typed

_values = st.one_of(
    st.none(),  # a blank cell
    st.sampled_from(["abc", "", "TRUE", "nowhere"]),  # text where a number or a name belongs
    st.floats(min_value=-5, max_value=5e4, allow_nan=False, allow_infinity=False),  # in or out of range
    st.integers(min_value=-2, max_value=64).map(float),
    st.floats(min_value=-0.4, max_value=0.5, allow_nan=False),  # a plausible growth rate (or hit rate)
)
_edits = st.lists(st.tuples(st.sampled_from(_EDITABLE), _values), min_size=1, max_size=4)


def _apply(edits: list[tuple[tuple[ts.Table, str, int], Any]]) -> dict[tuple[str, str], Any]:
    cells = dict(BASE)
    for (table, key, row), value in edits:
        addr = (table.sheet, table.cell(key, row))
        if value is None:
            cells.pop(addr, None)
        else:
            cells[addr] = value
    return cells


def _same(mine: Any, theirs: Any) -> bool:
    """One value on two surfaces: errors by their text, an empty formula result as "", numbers to 1e-9."""
    if isinstance(mine, XlError) or isinstance(theirs, XlError) or type(theirs).__name__ == "XlError":
        return str(mine) == str(theirs)
    if mine in (None, "") or theirs in (None, ""):
        return mine in (None, "") and theirs in (None, "")
    if isinstance(mine, bool) or isinstance(theirs, bool):
        return mine == theirs
    if isinstance(mine, (int, float)) and isinstance(theirs, (int, float)):
        return math.isclose(float(mine), float(theirs), rel_tol=1e-9, abs_tol=1e-9)
    return str(mine) == str(theirs)


@settings(max_examples=3, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(edits=_edits)
def test_evaluator_and_general_engine_agree_on_every_cell(tmp_path: Path, edits) -> None:
    from planner.recalc import compute

    cells = _apply(edits)
    path = write_plan(cells, tmp_path / "plan.xlsm")
    mine = ts.evaluate_plan({**catalog_inputs(), **cells})
    theirs = compute(path).values
    compared = 0
    seen = set()
    for (sheet, cell), value in mine.items():
        other = theirs.get((sheet, cell))
        if other is None and (sheet, cell) not in theirs:
            continue
        assert _same(value, other), f"{sheet}!{cell}: evaluator {value!r}, general engine {other!r} after {edits}"
        compared += 1
        seen.add((sheet, cell))
    assert compared >= 0.95 * len(mine)
    # template 2.3.0's tables: the tornado, the demand cases and the forecast per route, every formula cell
    new = {(t.sheet, t.cell(c.key, i)) for t in (ts.TORNADO, ts.DEMAND_CASES, ts.SENSITIVITY_ROUTES,
                                                ts.FORECAST_BY_ROUTE)
           for c in t.columns if c.formula is not None for i in range(t.rows)}
    assert new <= seen, sorted(new - seen)[:5]


def test_an_error_input_reads_the_same_on_every_surface(tmp_path: Path) -> None:
    """A route whose TP cannot split the model: the function's refusal, unchanged, in the evaluator, the general
    engine and ``planner size`` (never ``#VALUE!`` on one surface and the message on another)."""
    from planner.recalc import compute

    cells = dict(BASE)
    cells[(ts.FLEET.sheet, ts.FLEET.cell("tp", 0))] = 3.0  # 64 attention heads: TP 3 cannot split them
    path = write_plan(cells, tmp_path / "tp3.xlsm")
    mine = ts.evaluate_plan({**catalog_inputs(), **cells})
    theirs = compute(path).values
    kv = (ts.RESULTS.sheet, ts.RESULTS.cell("kv_share", 0))
    assert isinstance(mine[kv], str) and mine[kv].startswith("tp: got 3")
    assert theirs[kv] == mine[kv]
    util = (ts.RESULTS.sheet, ts.RESULTS.cell("kv_util", 0))
    assert mine[util] == mine[kv] == theirs[util]  # BACKEND_SUM passes the refusal on, it does not sum it away


@pytest.mark.parametrize("sample", ["seed", "bulk-tpm", "classifier-rpm", "selfhost-kv"])
def test_planner_size_reports_the_cells_of_the_written_workbook(tmp_path: Path, sample: str) -> None:
    """``planner size`` on a scenario and the workbook built from it, read back from the file: every Results cell."""
    from planner.ooxml import read_workbook
    from planner.template.build import build_sample

    root = Path(__file__).resolve().parents[1] / "samples"
    report = size_scenario(load_scenario(root / f"{sample}.toml"))
    book = read_workbook(build_sample(root / f"{sample}.toml", tmp_path / f"{sample}.xlsm"))
    sheet = book.sheet("Results").cells
    for i, route in enumerate(report.routes):
        for key in ts.RESULT_KEYS:
            cached = sheet[ts.RESULTS.cell(key, i)].value
            assert _same(route.results[key], "" if cached is None else cached), (sample, route.route, key)


@pytest.mark.parametrize("sample", ["seed", "classifier-rpm"])
def test_planner_size_sensitivity_is_the_written_workbooks_tornado(tmp_path: Path, sample: str) -> None:
    """``planner size``'s tornado and demand cases against tblTornado / tblDemandCases read back from the file."""
    from planner.ooxml import read_workbook
    from planner.template import sensitivity as sv
    from planner.template.build import build_sample

    root = Path(__file__).resolve().parents[1] / "samples"
    report = size_scenario(load_scenario(root / f"{sample}.toml"))
    cells = read_workbook(build_sample(root / f"{sample}.toml", tmp_path / f"{sample}.xlsm")).sheet("What-if").cells
    t, d = ts.TORNADO, ts.DEMAND_CASES
    bars = {b.input: b for b in report.sensitivity.tornado}
    for i, (name, _label) in enumerate(sv.GROUPS):
        for side, fig in (("lo", bars[name].low), ("hi", bars[name].high)):
            assert _same(fig.monthly_cost_usd, cells[t.cell(f"bill_{side}_usd", i)].value), (name, side)
            assert _same(fig.highest_utilization, cells[t.cell(f"util_{side}", i)].value), (name, side)
            breach = cells[t.cell(f"breach_{side}_months", i)].value
            assert _same(fig.first_breach_months, breach) or (fig.first_breach_months is None and breach == "never")
    for i, case in enumerate(sv.CASES):
        assert _same(report.sensitivity.cases[case].monthly_cost_usd, cells[d.cell("bill_usd", i)].value)
        assert _same(report.sensitivity.cases[case].highest_utilization, cells[d.cell("max_util", i)].value)


@pytest.mark.parametrize("sample", ["seed", "selfhost-kv"])
def test_fleet_options_read_the_same_on_every_surface(tmp_path: Path, sample: str) -> None:
    """The Options sheet (each fleet's cheapest alternatives): ``planner size``'s ``fleet_options``, the cached
    values of the workbook built from the scenario, and the general engine's recompute of its formula text."""
    from planner.ooxml import read_workbook
    from planner.recalc import compute
    from planner.template.build import build_sample

    root = Path(__file__).resolve().parents[1] / "samples"
    report = size_scenario(load_scenario(root / f"{sample}.toml"))
    path = build_sample(root / f"{sample}.toml", tmp_path / f"{sample}.xlsm")
    cached = read_workbook(path).sheet(ts.OPTIONS.sheet).cells
    theirs = compute(path).values
    assert len(report.fleet_options) == 8  # two fleets, four rows each
    for option in report.fleet_options:
        row = int(option.cell.rsplit("!", 1)[1].lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ")) - ts.OPTIONS.first_row
        for key in ts.OPTION_KEYS:
            addr = ts.OPTIONS.cell(key, row)
            value = cached[addr].value
            assert _same(option.cells[key], "" if value is None else value), (sample, addr, key)
            assert _same(option.cells[key], theirs[(ts.OPTIONS.sheet, addr)]), (sample, addr, key)
