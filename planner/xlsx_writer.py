"""Write a workbook described by plain values (:class:`WorkbookSpec`) with openpyxl: the only module importing it.

The description carries cells (values or formula text), Excel Tables (with an optional non-blank filter), data
validations, conditional formats, bar charts (with line series overlaid), page setup (print area, title rows, fit to
pages), hidden rows, sheet protection and global defined names. Output is reproducible: fixed document properties
and fixed zip timestamps, so the same description always gives the same bytes.

``macro_enabled=True`` writes the macro-enabled workbook content type (``.xlsm``), which the classic xlwings UDF
flow needs: *Import Functions* adds a VBA module to the workbook, and only an ``.xlsm`` keeps it.
"""

from __future__ import annotations

import datetime as _dt
import io
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openpyxl import Workbook
from openpyxl.chart import BarChart, LineChart, Reference, Series
from openpyxl.chart.axis import ChartLines
from openpyxl.chart.data_source import AxDataSource, StrRef
from openpyxl.chart.label import DataLabelList
from openpyxl.chart.legend import Legend
from openpyxl.formatting.rule import FormulaRule
from openpyxl.styles import Alignment, Font, PatternFill, Protection
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.datavalidation import DataValidation
from openpyxl.worksheet.filters import AutoFilter, CustomFilter, CustomFilters, FilterColumn
from openpyxl.worksheet.properties import PageSetupProperties
from openpyxl.worksheet.table import Table as XlTable
from openpyxl.worksheet.table import TableStyleInfo
from openpyxl.xml.constants import XLSM

FIXED_TIME = _dt.datetime(2026, 1, 1, 0, 0, 0)
ZIP_TIME = (2026, 1, 1, 0, 0, 0)


@dataclass(frozen=True, kw_only=True)
class CellSpec:
    value: Any  # a number, text, bool, or formula text starting with "="
    number_format: str = "General"
    bold: bool = False
    italic: bool = False
    size: float | None = None
    locked: bool = True
    fill: str | None = None  # RGB hex, e.g. "FFF2CC"
    wrap: bool = False
    color: str | None = None


@dataclass(frozen=True, kw_only=True)
class TableSpec:
    name: str
    ref: str
    style: str = "TableStyleMedium2"
    nonblank_filter_col: int | None = None  # 0-based column of the table filtered to non-blank cells (the rows it
    # hides are SheetSpec.hidden_rows: a file stores a filter's result, no reader reapplies it on open)


@dataclass(frozen=True, kw_only=True)
class ValidationSpec:
    sqref: str
    type: str  # "list" | "decimal" | "whole"
    formula1: str
    formula2: str | None = None
    operator: str | None = None  # "between" (default) | "greaterThanOrEqual" | ...
    prompt: str = ""
    error: str = ""


@dataclass(frozen=True, kw_only=True)
class CondFormatSpec:
    sqref: str
    formula: str  # relative to the top-left cell of sqref
    fill: str
    bold: bool = True
    color: str | None = None


@dataclass(frozen=True, kw_only=True)
class ChartSpec:
    title: str
    anchor: str
    categories: tuple[int, int, int]  # (column, first row, last row) on the same sheet
    series: tuple[tuple[int, int, int], ...]  # (column, header row, last row): header gives the series name
    y_title: str = ""
    x_title: str = ""
    width_cm: float = 24.0
    height_cm: float = 11.0
    data_sheet: str | None = None  # the sheet categories and series are read from (default: the chart's own)
    direction: str = "bar"  # "bar": horizontal bars; "col": vertical columns
    series_titles: tuple[str, ...] = ()  # literal series names (then a series' range starts at its first value)
    series_colors: tuple[str, ...] = ()  # RGB hex per series
    lines: tuple[tuple[int, int, int, str, str], ...] = ()  # (column, first row, last row, name, RGB): line series
    y_number_format: str | None = None  # value axis and data labels, e.g. "0%"
    label_number_format: str | None = None  # data labels, where they differ from the axis
    y_min: float | None = None
    y_major_unit: float | None = None
    data_labels: bool = False
    legend: str = "r"  # "r", "b", "t" or "" for none
    kind: str = "bar"  # "bar" (clustered; direction picks bars or columns), "stacked" (stacked columns), "line"
    overlap: int | None = None  # clustered bars: 100 draws a category's series on one line (a tornado's two sides)
    category_labels: str | None = None  # "low": category labels at the plot's edge, clear of bars either side of 0


@dataclass(kw_only=True)
class SheetSpec:
    name: str
    cells: dict[str, CellSpec] = field(default_factory=dict)
    widths: dict[str, float] = field(default_factory=dict)
    heights: dict[int, float] = field(default_factory=dict)
    tables: list[TableSpec] = field(default_factory=list)
    validations: list[ValidationSpec] = field(default_factory=list)
    cond_formats: list[CondFormatSpec] = field(default_factory=list)
    charts: list[ChartSpec] = field(default_factory=list)
    protect: bool = True
    freeze: str | None = None
    tab_color: str | None = None
    hidden_rows: set[int] = field(default_factory=set)
    hidden_cols: set[str] = field(default_factory=set)  # column letters (the Forecast's months past the horizon)
    print_area: str | None = None  # "A1:V40"
    print_title_rows: str | None = None  # "1:4": repeated at the top of every printed page
    print_title_cols: str | None = None  # "A:A": repeated at the left of every printed page
    landscape: bool = True
    fit_width: int = 1  # pages wide (0: as many as needed)
    fit_height: int = 0  # pages tall (0: as many as needed)


@dataclass(kw_only=True)
class WorkbookSpec:
    sheets: list[SheetSpec]
    defined_names: dict[str, str] = field(default_factory=dict)  # name -> attr text (formula without "=")
    title: str = ""
    creator: str = "llm-capacity-planner"


def _build(spec: WorkbookSpec, macro_enabled: bool) -> Workbook:
    wb = Workbook()
    wb.remove(wb.active)
    for s in spec.sheets:  # every sheet first: a chart may read a sheet that comes after its own
        wb.create_sheet(s.name)
    for s in spec.sheets:
        ws = wb[s.name]
        if s.tab_color:
            ws.sheet_properties.tabColor = s.tab_color
        for addr, c in s.cells.items():
            cell = ws[addr]
            cell.value = c.value
            if c.number_format != "General":
                cell.number_format = c.number_format
            if c.bold or c.italic or c.size or c.color:
                cell.font = Font(bold=c.bold, italic=c.italic, size=c.size, color=c.color)
            if c.fill:
                cell.fill = PatternFill("solid", start_color=c.fill, end_color=c.fill)
            if c.wrap:
                cell.alignment = Alignment(wrap_text=True, vertical="top")
            if not c.locked:
                cell.protection = Protection(locked=False)
        for col, width in s.widths.items():
            ws.column_dimensions[col].width = width
        for row, height in s.heights.items():
            ws.row_dimensions[row].height = height
        for row in sorted(s.hidden_rows):
            ws.row_dimensions[row].hidden = True
        for col in sorted(s.hidden_cols):
            ws.column_dimensions[col].hidden = True
        for t in s.tables:
            xt = XlTable(displayName=t.name, ref=t.ref)
            xt.tableStyleInfo = TableStyleInfo(name=t.style, showRowStripes=True)
            if t.nonblank_filter_col is not None:
                # Excel's "does not equal (blank)": a formula's "" counts as blank, so it keeps the filled rows
                xt.autoFilter = AutoFilter(ref=t.ref, filterColumn=[FilterColumn(
                    colId=t.nonblank_filter_col,
                    customFilters=CustomFilters(customFilter=[CustomFilter(operator="notEqual", val=" ")]))])
            ws.add_table(xt)
        for v in s.validations:
            dv = DataValidation(
                type=v.type,
                formula1=v.formula1,
                formula2=v.formula2,
                operator=v.operator,
                allow_blank=True,
                showErrorMessage=True,
                showInputMessage=bool(v.prompt),
                errorTitle="Not allowed",
                error=v.error or None,
                promptTitle=None,
                prompt=v.prompt or None,
            )
            dv.add(v.sqref)
            ws.add_data_validation(dv)
        for cf in s.cond_formats:
            ws.conditional_formatting.add(
                cf.sqref,
                FormulaRule(
                    formula=[cf.formula],
                    fill=PatternFill("solid", start_color=cf.fill, end_color=cf.fill, bgColor=cf.fill),
                    font=Font(bold=cf.bold, color=cf.color),
                ),
            )
        for ch in s.charts:
            ws.add_chart(_chart(ch, wb[ch.data_sheet] if ch.data_sheet else ws), ch.anchor)
        if s.freeze:
            ws.freeze_panes = s.freeze
        _page_setup(ws, s)
        if s.protect:
            ws.protection.sheet = True  # no password: protection guards against accidents, not people
            ws.protection.formatColumns = False
            ws.protection.formatRows = False  # unhiding a hidden row (an empty route's, once filled) is allowed
            ws.protection.autoFilter = False
            ws.protection.sort = False
    for name, text in spec.defined_names.items():
        wb.defined_names[name] = DefinedName(name, attr_text=text)
    wb.properties.creator = spec.creator
    wb.properties.lastModifiedBy = spec.creator
    wb.properties.title = spec.title
    wb.properties.created = FIXED_TIME
    return wb


def _page_setup(ws: Any, s: SheetSpec) -> None:
    """Orientation, fit to pages, print area and repeated title rows of one sheet."""
    ws.page_setup.orientation = "landscape" if s.landscape else "portrait"
    ws.page_setup.fitToWidth = s.fit_width
    ws.page_setup.fitToHeight = s.fit_height
    ws.sheet_properties.pageSetUpPr = PageSetupProperties(fitToPage=True)
    ws.print_options.gridLines = False
    ws.page_margins.left = ws.page_margins.right = 0.4
    ws.page_margins.top = ws.page_margins.bottom = 0.5
    ws.oddFooter.center.text = "&A - page &P of &N"  # sheet name, page numbers
    if s.print_area:
        ws.print_area = s.print_area
    if s.print_title_rows:
        ws.print_title_rows = s.print_title_rows
    if s.print_title_cols:
        ws.print_title_cols = s.print_title_cols


def _text_categories(chart: Any, cats: Reference) -> None:
    """Category labels as text (``strRef``): openpyxl writes ``numRef``, which Excel shows as 1, 2, 3 for names."""
    for series in chart.series:
        series.cat = AxDataSource(strRef=StrRef(f=str(cats)))


def _chart(ch: ChartSpec, data_ws: Any) -> Any:
    """A clustered bar (or column) chart of ``ch``'s series on ``data_ws``, with its line series overlaid."""
    if ch.kind == "line":
        chart = LineChart()
    else:
        chart = BarChart()
        chart.type = "col" if ch.kind == "stacked" else ch.direction
        chart.grouping = "stacked" if ch.kind == "stacked" else "clustered"
        if ch.kind == "stacked":
            chart.overlap = 100
    chart.title = ch.title
    chart.y_axis.title = ch.y_title or None
    chart.x_axis.title = ch.x_title or None
    chart.width, chart.height = ch.width_cm, ch.height_cm
    chart.x_axis.delete = False  # openpyxl 3.1 hides both axes unless told
    chart.y_axis.delete = False
    # categories along the bottom for columns, on the left for bars (openpyxl writes "l" for both)
    vertical = ch.direction == "col" or ch.kind in ("stacked", "line")
    chart.x_axis.axPos, chart.y_axis.axPos = ("b", "l") if vertical else ("l", "b")
    chart.y_axis.majorGridlines = ChartLines()
    if ch.y_number_format:
        chart.y_axis.number_format = ch.y_number_format
        chart.y_axis.numFmt.sourceLinked = False  # type: ignore[union-attr]
    if ch.y_min is not None:
        chart.y_axis.scaling.min = ch.y_min
    if ch.y_major_unit is not None:
        chart.y_axis.majorUnit = ch.y_major_unit
    ccol, first, last = ch.categories
    cats = Reference(data_ws, min_col=ccol, min_row=first, max_row=last)
    for i, (col, start_row, last_row) in enumerate(ch.series):
        if i < len(ch.series_titles):
            series = Series(Reference(data_ws, min_col=col, min_row=start_row, max_row=last_row),
                            title=ch.series_titles[i])
        else:
            series = Series(Reference(data_ws, min_col=col, min_row=start_row, max_row=last_row),
                            title_from_data=True)
        if i < len(ch.series_colors):
            series.graphicalProperties.solidFill = ch.series_colors[i]
            series.graphicalProperties.line.solidFill = ch.series_colors[i]
        chart.series.append(series)
    _text_categories(chart, cats)
    if ch.data_labels:
        chart.dataLabels = DataLabelList(showVal=True, numFmt=ch.label_number_format or ch.y_number_format)
        for flag in ("showSerName", "showCatName", "showLegendKey", "showPercent", "showBubbleSize"):
            setattr(chart.dataLabels, flag, False)
    if ch.kind != "line":
        chart.gapWidth = 60
    if ch.overlap is not None and ch.kind == "bar":
        chart.overlap = ch.overlap
    if ch.category_labels:
        chart.x_axis.tickLblPos = ch.category_labels
    chart.legend = Legend(legendPos=ch.legend) if ch.legend else None
    if ch.lines:
        line = LineChart()
        for col, first_row, last_row, name, color in ch.lines:
            series = Series(Reference(data_ws, min_col=col, min_row=first_row, max_row=last_row), title=name)
            series.graphicalProperties.line.solidFill = color
            series.graphicalProperties.line.width = 28575  # 2.25 pt
            series.graphicalProperties.line.prstDash = "dash"
            series.marker.symbol = "none"
            series.smooth = False
            line.series.append(series)
        _text_categories(line, cats)
        chart += line
    return chart


class _MacroWorkbook(Workbook):
    """openpyxl writes the macro-enabled content type only with a VBA project; an ``.xlsm`` without one is valid
    (Excel saves the same for a macro-enabled workbook that has no module yet)."""

    @property
    def mime_type(self) -> str:  # type: ignore[override]
        return XLSM


def write_workbook(spec: WorkbookSpec, path: str | Path, *, macro_enabled: bool = True) -> Path:
    """Write ``spec`` to ``path`` reproducibly and return the path."""
    wb = _build(spec, macro_enabled=False)
    if macro_enabled:
        wb.__class__ = _MacroWorkbook
    buf = io.BytesIO()
    # openpyxl's save stamps "modified" with the current time; write with our own fixed stamp instead.
    from openpyxl.writer.excel import ExcelWriter

    archive = zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, allowZip64=True)
    wb.properties.modified = FIXED_TIME
    ExcelWriter(wb, archive).save()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(normalize_zip(buf.getvalue()))
    return out


def normalize_zip(data: bytes) -> bytes:
    """The same zip with fixed member timestamps and attributes, in the original member order (and without the
    empty ``<v />`` openpyxl writes into formula cells)."""
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            member = zipfile.ZipInfo(info.filename, date_time=ZIP_TIME)
            member.compress_type = zipfile.ZIP_DEFLATED
            member.external_attr = 0o600 << 16
            body = src.read(info.filename)
            if info.filename.startswith("xl/worksheets/"):
                # openpyxl writes an empty cached value as "<v />"; drop it, a formula cell needs no <v> at all
                body = body.replace(b"<v />", b"")
            dst.writestr(member, body)
    return buf.getvalue()
