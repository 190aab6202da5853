"""How the workbook reads and prints (issue 14 item 7): display formats by column kind, page setup, empty rows hidden,
the Summary chart. Structure read from the committed files with openpyxl and the chart XML; what LibreOffice makes of
it is tests/test_render.py."""

from __future__ import annotations

import doctest
import re
import zipfile
from pathlib import Path

import openpyxl
import pytest

from planner import template as ts
from planner.template import styling
from planner.validate.checks import validate_file

UTIL = '[>=1000000000]"\u221e";0%'  # a utilization: infinity at UTIL_INFINITE (10^9), a percentage below

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "samples" / "seed.xlsm"
TEMPLATE = ROOT / "templates" / "capacity-plan.xlsm"


@pytest.fixture(scope="module")
def seed() -> openpyxl.Workbook:
    return openpyxl.load_workbook(SEED)


@pytest.fixture(scope="module")
def template() -> openpyxl.Workbook:
    return openpyxl.load_workbook(TEMPLATE)


def _seed_routes() -> list[str]:
    ws = openpyxl.load_workbook(SEED, data_only=True)["Routes"]
    return [ws[ts.ROUTES.cell("name", i)].value for i in range(ts.ROUTES.rows)]


def test_styling_worked_examples_hold() -> None:
    result = doctest.testmod(styling)
    assert result.attempted >= 10 and result.failed == 0


def test_every_computed_utilization_shows_as_a_percentage(seed: openpyxl.Workbook) -> None:
    seen = 0
    for t in ts.TABLES:
        for col in t.columns:
            if col.formula is not None and col.key.endswith(("_util", "_share")):
                cell = seed[t.sheet][t.cell(col.key, 0)]
                # a utilization can hold UTIL_INFINITE (10^9, a fleet whose SLOs no load meets): shown as infinity
                want = UTIL if col.key.endswith("_util") else "0%"
                assert cell.number_format == want, (t.name, col.key, cell.number_format)
                seen += 1
    assert seen >= 12 + 9 + 2  # Results' constraints, Failover's outage ones, Outages' worst and N+1


def test_money_shows_dollars_with_thousands_and_the_declared_decimals(seed: openpyxl.Workbook) -> None:
    assert seed["Results"][ts.RESULTS.cell("cost_monthly_usd", 0)].number_format == "$#,##0"
    assert seed["Summary"][ts.SUMMARY.cell("cost_monthly_usd", 0)].number_format == "$#,##0"
    assert seed["Providers"][ts.PROVIDERS.cell("usd_per_mtok_input", 0)].number_format == "$#,##0.000"
    assert seed["Specs"][ts.SPECS.cell("usd_per_gpu_hour", 0)].number_format == "$#,##0.00"
    # months, seconds and tokens keep their declared formats
    assert seed["Results"][ts.RESULTS.cell("months_to_breach", 0)].number_format == "0.0"
    assert seed["Results"][ts.RESULTS.cell("ttft_at_load_s", 0)].number_format == "0.000"
    assert seed["Results"][ts.RESULTS.cell("rpm_demand", 0)].number_format == "#,##0"


def test_plan_totals_and_settings_by_their_units(seed: openpyxl.Workbook) -> None:
    s = seed["Summary"]
    formats = {s[f"{ts.TOTALS_COL_LABEL}{ts.TOTALS_FIRST_ROW + i}"].value:
               s[f"{ts.TOTALS_COL_VALUE}{ts.TOTALS_FIRST_ROW + i}"].number_format for i in range(len(ts.TOTALS))}
    assert formats["Total cost with cache [USD/month]"] == "$#,##0"
    assert formats["Highest utilization [x]"] == UTIL
    assert formats["Worst outage [x]"] == UTIL
    assert formats["Routes in breach [count]"] == "0"
    plan = seed["Plan"]
    assert plan[ts.plan_value_cell("utilization_threshold")].number_format == "0%"
    assert plan[ts.plan_value_cell("monthly_growth")].number_format == "0.0%"
    assert plan[ts.plan_value_cell("name")].number_format == "General"


def test_status_words_are_coloured_on_every_status_column(seed: openpyxl.Workbook) -> None:
    for t in ts.TABLES:
        for col in t.columns:
            if not styling.is_status(col):
                continue
            c = t.letter(col.key)
            rules = [r.formula[0] for rng in seed[t.sheet].conditional_formatting
                     for r in rng.rules if str(rng.sqref).startswith(f"{c}{t.first_row}:")]
            for word in ("BREACH", "WARN", "OK"):
                assert f'{c}{t.first_row}="{word}"' in rules, (t.name, col.key, word)


def test_every_sheet_prints_landscape_with_a_print_area_and_summary_on_one_page(seed: openpyxl.Workbook) -> None:
    for name in ts.SHEET_ORDER:
        ws = seed[name]
        assert ws.print_area, name
        assert ws.sheet_properties.pageSetUpPr.fitToPage, name
        assert ws.page_setup.orientation == ("portrait" if name == "ReadMe" else "landscape"), name
    s = seed["Summary"]
    assert (s.page_setup.fitToWidth, s.page_setup.fitToHeight) == (1, 1)
    assert s.print_title_rows == f"$1:${ts.SUMMARY.header_row}"
    # Results is too wide for one page at a readable scale: several pages across, the route column on each
    r = seed["Results"]
    assert int(r.page_setup.fitToWidth) > 1 and r.print_title_cols == "$A:$A"


def test_empty_route_rows_hidden_in_a_filled_plan_and_none_in_the_template(
        seed: openpyxl.Workbook, template: openpyxl.Workbook) -> None:
    routes = _seed_routes()
    filled = {ts.RESULTS.first_row + i for i, name in enumerate(routes) if name}
    empty = set(range(ts.RESULTS.first_row, ts.RESULTS.last_row + 1)) - filled
    assert len(filled) == 3
    hidden = {r for r, d in seed["Results"].row_dimensions.items() if d.hidden}
    assert hidden == empty
    # Summary keeps the rows that also carry the plan totals
    totals = set(range(ts.TOTALS_FIRST_ROW, ts.TOTALS_FIRST_ROW + len(ts.TOTALS)))
    summary_hidden = {r for r, d in seed["Summary"].row_dimensions.items() if d.hidden}
    route_rows = set(range(ts.SUMMARY.first_row, ts.SUMMARY.last_row + 1))
    assert summary_hidden & route_rows == {r + (ts.SUMMARY.first_row - ts.RESULTS.first_row) for r in empty} - totals
    for name in ts.SHEET_ORDER:
        assert not [r for r, d in template[name].row_dimensions.items() if d.hidden], name


def test_results_filter_keeps_non_blank_routes_and_summary_has_none(seed: openpyxl.Workbook) -> None:
    f = seed["Results"].tables[ts.RESULTS.name].autoFilter
    (column,) = f.filterColumn
    assert column.colId == 0
    assert [(c.operator, c.val) for c in column.customFilters.customFilter] == [("notEqual", " ")]
    # a filter hides whole rows, so the table beside the plan totals has none (reapplying it would hide them)
    assert not seed["Summary"].tables[ts.SUMMARY.name].autoFilter.filterColumn


def test_summary_chart_is_one_series_set_per_route_with_the_limit_line() -> None:
    with zipfile.ZipFile(SEED) as z:
        charts = [z.read(n).decode() for n in z.namelist() if n.startswith("xl/charts/chart")]
        summary = [x for x in charts if "Highest utilization per route" in x or "'Results'!" in x]
        assert len(summary) == 1  # the Forecast sheet's two charts read the Forecast sheet
        xml = summary[0]
    assert xml.count("<ser>") == 3  # highest utilization, failover, the 100% line
    assert "<lineChart>" in xml and "<barChart>" in xml
    max_util = ts.RESULTS.letter("max_util")
    assert f"<val><numRef><f>'Results'!${max_util}${ts.RESULTS.first_row}:${max_util}${ts.RESULTS.last_row}</f>" in xml
    # route names as text categories on every series, percentages on the axis
    assert xml.count(f"<cat><strRef><f>'Results'!$A${ts.RESULTS.first_row}:$A${ts.RESULTS.last_row}</f>") == 3
    axis = '[&gt;=1000000000]&quot;\u221e&quot;;[&gt;=100]&quot;&quot;;0%'  # infinity at 10^9, no label from 10,000%
    assert re.search(r'<valAx>.*<numFmt formatCode="' + re.escape(axis) + '" sourceLinked="0" />', xml), xml[-3000:]
    assert '<plotVisOnly val="1" />' in xml  # hidden (empty) route rows are not plotted


def test_formats_change_no_value_and_the_validator_accepts_the_sample() -> None:
    cached = openpyxl.load_workbook(SEED, data_only=True)
    from planner.scenario import load_scenario
    from planner.template.inputs import catalog_inputs, scenario_inputs

    expected = ts.evaluate_plan({**catalog_inputs(), **scenario_inputs(load_scenario(ROOT / "samples/seed.toml"))})
    for (sheet, cell), v in expected.items():
        got = cached[sheet][cell].value
        if isinstance(v, float):
            assert got == pytest.approx(v, rel=1e-12, abs=1e-12), (sheet, cell)
    report = validate_file(str(SEED))
    assert report.valid(strict=True), [f.code for f in report.findings]


def test_a_table_declared_later_is_formatted_by_its_columns_alone() -> None:
    """Another sheet's table (a forecast, say) gets percentages, dollars, status colours and hidden empty rows
    from its column declarations, with no line of its own in the builder."""
    from planner.excel.expr import Ref
    from planner.excel.tables import Column, Table
    from planner.template.build import _add_table, _hide_empty_rows
    from planner.xlsx_writer import SheetSpec

    t = Table(name="tblForecast", sheet="Forecast", rows=4, columns=(
        Column(key="route", header="Route [name]", help="", kind="text", formula=Ref(ts.RESULTS, "route")),
        Column(key="bill_usd", header="Bill [USD/month]", help="", formula=Ref(ts.RESULTS, "cost_monthly_usd"),
               number_format="#,##0"),
        Column(key="max_util", header="Max util [x]", help="", formula=Ref(ts.RESULTS, "max_util"),
               number_format="0.00"),
        Column(key="status", header="Status", help="", kind="text", formula=Ref(ts.RESULTS, "status")),
    ))
    sheet = SheetSpec(name="Forecast")
    cached = {("Forecast", "A4"): "chat", ("Forecast", "A5"): "agent", ("Forecast", "A6"): "", ("Forecast", "A7"): ""}
    _add_table(sheet, t, {}, cached)
    _hide_empty_rows(sheet, [t], cached, set())
    assert sheet.cells["B4"].number_format == "$#,##0"
    assert sheet.cells["C7"].number_format == UTIL
    assert {cf.formula for cf in sheet.cond_formats} >= {'D4="BREACH"', 'D4="WARN"', 'D4="OK"',
                                                          "AND(ISNUMBER(C4),C4>1)"}
    assert sheet.hidden_rows == {6, 7}
    assert sheet.tables[0].nonblank_filter_col == 0


def test_forecast_hides_the_months_past_the_horizon_and_prints_one_page_high(
        seed: openpyxl.Workbook, template: openpyxl.Workbook) -> None:
    """The seed plans 12 months (samples/seed.toml): the per-route block's columns and the month rows from 13 on are
    blank, hidden and not printed; the template (36 months possible, nothing filled) hides none of them."""
    from planner.template.forecast import FORECAST, FORECAST_BY_ROUTE

    ws, t = seed["Forecast"], FORECAST_BY_ROUTE
    shown = {t.letter(f"m{m:02d}_{k}") for m in range(1, 13) for k in ("usd", "util", "binds")}
    past = {t.letter(f"m{m:02d}_{k}") for m in range(13, 37) for k in ("usd", "util", "binds")}
    hidden = {c for c, d in ws.column_dimensions.items() if d.hidden}
    assert past <= hidden and not shown & hidden
    rows = {r for r, d in ws.row_dimensions.items() if d.hidden}
    assert set(range(FORECAST.first_row + 12, FORECAST.last_row + 1)) <= rows
    assert FORECAST.first_row + 11 not in rows
    assert ws.page_setup.fitToHeight == 1 and int(ws.page_setup.fitToWidth) > 1
    assert not [c for c, d in template["Forecast"].column_dimensions.items() if d.hidden]
