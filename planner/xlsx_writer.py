"""Write a workbook described by plain values (:class:`WorkbookSpec`) with openpyxl: the only module importing it.

The description carries cells (values or formula text), Excel Tables, data validations, conditional formats, a
bar chart, sheet protection and global defined names. Output is reproducible: fixed document properties and fixed
zip timestamps, so the same description always gives the same bytes.

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
from openpyxl.chart import BarChart, LineChart, Reference
from openpyxl.formatting.rule import FormulaRule
from openpyxl.styles import Alignment, Font, PatternFill, Protection
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.datavalidation import DataValidation
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
    kind: str = "bar"  # "bar" (clustered, horizontal), "stacked" (stacked columns) or "line"


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


@dataclass(kw_only=True)
class WorkbookSpec:
    sheets: list[SheetSpec]
    defined_names: dict[str, str] = field(default_factory=dict)  # name -> attr text (formula without "=")
    title: str = ""
    creator: str = "llm-capacity-planner"


def _build(spec: WorkbookSpec, macro_enabled: bool) -> Workbook:
    wb = Workbook()
    wb.remove(wb.active)
    for s in spec.sheets:
        ws = wb.create_sheet(s.name)
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
        for t in s.tables:
            xt = XlTable(displayName=t.name, ref=t.ref)
            xt.tableStyleInfo = TableStyleInfo(name=t.style, showRowStripes=True)
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
            chart = LineChart() if ch.kind == "line" else BarChart()
            if ch.kind == "stacked":
                chart.type, chart.grouping, chart.overlap = "col", "stacked", 100
            elif ch.kind == "bar":
                chart.type = "bar"
                chart.grouping = "clustered"
            chart.title = ch.title
            chart.y_axis.title = ch.y_title
            chart.x_axis.title = ch.x_title
            chart.width, chart.height = ch.width_cm, ch.height_cm
            for col, header_row, last_row in ch.series:
                data = Reference(ws, min_col=col, min_row=header_row, max_row=last_row)
                chart.add_data(data, titles_from_data=True)
            ccol, first, last = ch.categories
            chart.set_categories(Reference(ws, min_col=ccol, min_row=first, max_row=last))
            ws.add_chart(chart, ch.anchor)
        if s.freeze:
            ws.freeze_panes = s.freeze
        if s.protect:
            ws.protection.sheet = True  # no password: protection guards against accidents, not people
            ws.protection.formatColumns = False
            ws.protection.autoFilter = False
            ws.protection.sort = False
    for name, text in spec.defined_names.items():
        wb.defined_names[name] = DefinedName(name, attr_text=text)
    wb.properties.creator = spec.creator
    wb.properties.lastModifiedBy = spec.creator
    wb.properties.title = spec.title
    wb.properties.created = FIXED_TIME
    return wb


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
