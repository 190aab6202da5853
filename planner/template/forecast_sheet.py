"""The Forecast, Profiles and What-if sheets' extras in the workbook: table titles, the stacked bill chart and the
utilization chart, the What-if sheet's tornado chart (issue 14). Pure: it fills the workbook description
(:mod:`planner.xlsx_writer` specs); build.py calls it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from planner.template import styling
from planner.template.forecast import BY_ROUTE_FIELDS, FORECAST, FORECAST_BY_ROUTE, SHEET, TITLES
from planner.template.profiles import ROUTE_PROFILE, ROUTE_PROFILE_TITLE
from planner.template.sensitivity import TITLES as SENSITIVITY_TITLES
from planner.template.sensitivity import TORNADO
from planner.xlsx_writer import CellSpec, ChartSpec, SheetSpec

BILL_KEYS = ("input_usd", "cache_read_usd", "cache_write_usd", "output_usd", "gpu_usd")


def add_forecast_extras(sheets: Mapping[str, SheetSpec], cached: Mapping[tuple[str, str], Any]) -> None:
    """Titles of the tables below the first on each sheet, and the Forecast sheet's two charts."""
    for table, title in ((ROUTE_PROFILE, ROUTE_PROFILE_TITLE), *TITLES, *SENSITIVITY_TITLES):
        sheets[table.sheet].cells[f"A{table.header_row - 1}"] = CellSpec(value=title, bold=True, size=14)
    months = sum(1 for i in range(FORECAST.rows) if cached.get((SHEET, FORECAST.cell("multiplier", i))) not in
                 (None, "")) or FORECAST.rows
    f = FORECAST
    last = f.first_row + months - 1
    by_route = FORECAST_BY_ROUTE
    if any(cached.get((SHEET, by_route.cell("route", i))) not in (None, "") for i in range(by_route.rows)):
        # a filled plan (the template hides nothing): the months past its horizon are blank, so their rows and the
        # per-route block's columns are hidden and not printed
        sheets[SHEET].hidden_rows |= set(range(last + 1, f.last_row + 1))
        sheets[SHEET].hidden_cols |= {by_route.letter(f"m{m:02d}_{k}") for m in range(months + 1, f.rows + 1)
                                      for k in BY_ROUTE_FIELDS}
    anchor_col = f.letter("util_after")
    s = sheets[SHEET]
    s.tab_color = "70AD47"
    s.freeze = "B5"
    col = lambda k: f.first_col + f.index(k)  # noqa: E731
    s.charts.append(ChartSpec(
        title="Monthly bill by token class and GPUs [USD/month]", kind="stacked",
        anchor=f"{chr(ord(anchor_col) + 2)}4", categories=(col("month"), f.first_row, last),
        series=tuple((col(k), f.header_row, last) for k in BILL_KEYS), y_title="USD/month", x_title="month",
        width_cm=20.0, height_cm=9.0))
    s.charts.append(ChartSpec(
        title="Highest utilization before and after the step (100% = at the limit)", kind="line",
        anchor=f"{chr(ord(anchor_col) + 2)}24", categories=(col("month"), f.first_row, last),
        series=((col("max_util"), f.header_row, last), (col("util_after"), f.header_row, last)),
        y_title="utilization", x_title="month", y_number_format=styling.UTIL_AXIS, width_cm=20.0, height_cm=9.0))
    sheets["Profiles"].tab_color = "FFC000"
    _tornado_chart(sheets[TORNADO.sheet])


def _tornado_chart(s: SheetSpec) -> None:
    """The tornado: per input group, how far its low and its high side move the monthly bill from the base (bars on
    one line, left of the axis: cheaper; right: dearer), to the right of ``tblTornado``."""
    t = TORNADO
    col = lambda k: t.first_col + t.index(k)  # noqa: E731
    right = chr(ord(t.letter(t.columns[-1].key)) + 2)
    s.charts.append(ChartSpec(
        title="Tornado: bill change, each input at -x / +x", kind="bar",
        direction="bar", overlap=100, category_labels="low", anchor=f"{right}{t.header_row - 1}",
        categories=(col("label"), t.first_row, t.last_row),
        series=tuple((col(f"bill_{side}_change_usd"), t.header_row, t.last_row) for side in ("lo", "hi")),
        series_colors=("5B9BD5", "ED7D31"), y_title="USD/month", y_number_format='"$"#,##0', legend="b",
        width_cm=20.0, height_cm=7.5))
