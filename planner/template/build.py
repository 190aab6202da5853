"""Build the capacity-plan template and filled sample plans: spec -> xlsx (via :mod:`planner.xlsx_writer`) -> cached
values (evaluated by :func:`planner.template.evaluate_plan`, written by :func:`planner.ooxml.write_cached_values`).

- :func:`build_template` writes ``capacity-plan.xlsm``: empty input tables, catalog sheets filled from the bundled
  catalog, every formula with its cached value;
- :func:`build_sample` writes a filled plan from a scenario TOML file (:mod:`planner.scenario`).

Output is reproducible byte for byte.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from planner import template as ts
from planner.errors import ArgumentError
from planner.readme_text import with_addin_section
from planner.template import styling
from planner.template.inputs import catalog_inputs, scenario_inputs
from planner.xlsx_writer import (
    CellSpec,
    ChartSpec,
    CondFormatSpec,
    SheetSpec,
    TableSpec,
    ValidationSpec,
    WorkbookSpec,
    normalize_zip,
    write_workbook,
)

TEMPLATE_FILENAME = "capacity-plan.xlsm"

INPUT_FILL = "FFF2CC"  # light yellow: type here
FORMULA_FILL = "EDEDED"  # grey: computed, locked
RED = "F8CBAD"
AMBER = "FFE699"
ORANGE = "F4B183"
GREEN = "C6EFCE"
README_WIDTH = 85
README_CHARS_PER_LINE = 80  # of README_WIDTH characters' width (proportional text runs a little wider)

README_LINES: tuple[tuple[str, str], ...] = (
    ("title", "LLM inference capacity plan"),
    ("", f"Template {ts.TEMPLATE_ID}, version {ts.TEMPLATE_VERSION} (defined names PLANNER_TEMPLATE_ID, "
         "PLANNER_TEMPLATE_VERSION)."),
    ("", "Yellow cells are inputs. Grey cells are formulas: they are locked (sheet protection without password)."),
    ("head", "How to fill it"),
    ("", "1. Plan: name, policy utilization threshold, monthly growth, average-to-peak ratio for monthly cost."),
    ("", "2. Providers: one row per provider API backend (provider, tier, model): rate limits per key, counting "
         "rules, prices per million tokens, number of keys or deployments."),
    ("", "3. Fleet: one row per self-hosted fleet: model and GPU from the catalog sheets, TP, replicas, "
         "gpu_memory_utilization, KV dtype, engine."),
    ("", "4. Routes: one row per route or surface: kind, peak QPS, average input/output tokens, p95 context, "
         "max_tokens, prefix-cache hit rate, TTFT/TPOT SLO, backend and failover backend."),
    ("", "5. Read Results and Summary. Formulas call the planner functions (xlwings add-in in Excel, the same "
         "Python functions headless in CI); values are cached in the file, so any reader shows numbers."),
    ("head", "What each section means (the method)"),
    ("", "Demand (D1-D4): requests and tokens per minute at peak; counted input tokens depend on prefix caching "
         "and the provider's counting rule; reserved max_tokens count where the provider reserves them."),
    ("", "Provider limits: utilization = demand / (limit x keys) for RPM, TPM, ITPM, OTPM."),
    ("", "GPU memory (M2-M11): KV bytes per request at p95 context, requests that fit one replica; KV util = "
         "in-flight requests at peak (Little's law, P7) / (max concurrency x replicas)."),
    ("", "Decode time (P1-P2): TPOT at the peak batch per replica, against the TPOT SLO."),
    ("", "Cost (C1): monthly API cost with and without prefix caching; fleet cost from GPU-hours."),
    ("", "Decision (C7-C8): the binding constraint is the highest utilization; headroom multiple = how much demand "
         "may grow before it reaches 1; months to breach at the plan's growth; failover moves the route onto its "
         "failover backend and checks it stays <= 1."),
    ("", "A utilization above 1 is red; the binding constraint of each route is highlighted on Summary."),
    ("head", "Where the method comes from"),
    ("", "Formula IDs refer to docs/functions.md and the project's sizing-formula reference (vLLM V1 memory "
         "accounting, provider rate-limit documentation, Little's law, memory-bound decode)."),
    ("", "Catalog sheets (GPUs, Models) are editable facts with source and as-of; dropdowns are fed from them."),
)


def _fmt_validation(col: ts.Column) -> tuple[str, str, str | None, str] | None:
    """(type, formula1, formula2, operator) for a numeric column."""
    if col.kind != "number" or (col.minimum is None and col.maximum is None):
        return None
    kind = "whole" if col.integer else "decimal"

    def fmt(x: float | None) -> str:
        assert x is not None  # each call below is guarded by its bound's test
        return str(int(x)) if float(x).is_integer() else repr(float(x))

    if col.minimum is not None and col.maximum is not None:
        return kind, fmt(col.minimum), fmt(col.maximum), "between"
    if col.minimum is not None:
        return kind, fmt(col.minimum), None, "greaterThanOrEqual"
    return kind, fmt(col.maximum), None, "lessThanOrEqual"


def _choices_ref(choices: str) -> str:
    if choices in ts.LISTS:
        t = ts.LISTS_TABLE
        c = t.letter(choices)
        return f"Lists!${c}${t.first_row}:${c}${t.first_row + len(ts.LISTS[choices]) - 1}"
    table_name, key = choices.split(".")
    t = ts.table(table_name)
    c = t.letter(key)
    return f"{t.sheet}!${c}${t.first_row}:${c}${t.last_row}"


def _filled_rows(t: ts.Table, cached: Mapping[tuple[str, str], Any]) -> list[int]:
    """Sheet rows of ``t`` whose first (name) column shows a value."""
    key = t.columns[0].key
    return [t.first_row + i for i in range(t.rows) if cached.get((t.sheet, t.cell(key, i))) not in (None, "")]


def _add_table(sheet: SheetSpec, t: ts.Table, values: Mapping[tuple[str, str], Any],
               cached: Mapping[tuple[str, str], Any]) -> None:
    if t.title:
        sheet.cells[f"{ts.col_letter(t.first_col)}1"] = CellSpec(value=t.title, bold=True, size=14)
    if t.note:
        sheet.cells[f"{ts.col_letter(t.first_col)}2"] = CellSpec(value=t.note, italic=True)
    fixed = ts.fixed_cells()
    for j, col in enumerate(t.columns):
        letter = ts.col_letter(t.first_col + j)
        fmt = styling.display_format(col)
        sheet.cells[f"{letter}{t.header_row}"] = CellSpec(value=col.header, bold=True, wrap=True)
        # tables stacked on one sheet share its columns: each column as wide as its widest cell needs
        sheet.widths[letter] = max(sheet.widths.get(letter, 0), styling.display_width(col))
        for i in range(t.rows):
            addr = f"{letter}{t.first_row + i}"
            if col.formula is not None:
                sheet.cells[addr] = CellSpec(value=ts.formula_text(t.sheet, col.formula, i),
                                             number_format=fmt, fill=FORMULA_FILL)
                continue
            key = (t.sheet, addr)
            is_fixed = key in fixed
            v = fixed[key] if is_fixed else values.get(key)
            sheet.cells[addr] = CellSpec(
                value=v,
                number_format=fmt,
                locked=is_fixed,
                fill=None if is_fixed else INPUT_FILL,
            )
        if col.formula is None and t is not ts.LISTS_TABLE:
            rng = f"{letter}{t.first_row}:{letter}{t.last_row}"
            if t is ts.PLAN and col.key != "value":
                continue
            if col.choices:
                sheet.validations.append(ValidationSpec(
                    sqref=rng, type="list", formula1=_choices_ref(col.choices),
                    prompt=col.help, error=f"{col.header}: pick a value from the list"))
            else:
                numeric = _fmt_validation(col)
                if numeric:
                    kind, f1, f2, op = numeric
                    allowed = f"between {f1} and {f2}" if f2 else f"{'>=' if op.startswith('greater') else '<='} {f1}"
                    sheet.validations.append(ValidationSpec(
                        sqref=rng, type=kind, formula1=f1, formula2=f2, operator=op, prompt=col.help,
                        error=f"{col.header}: a {'whole ' if col.integer else ''}number {allowed}"))
    # wrapped headers: tall enough for the longest (a bold character is about 1.1 width units; 12.5 pt a line)
    lines = max(_wrapped_lines(col.header, styling.display_width(col)) for col in t.columns)
    sheet.heights[t.header_row] = max(45, sheet.heights.get(t.header_row, 0), 12.5 * lines + 5)
    _add_status_formats(sheet, t)
    sheet.tables.append(TableSpec(name=t.name, ref=t.ref))


def _hide_empty_rows(sheet: SheetSpec, tables: list[ts.Table], cached: Mapping[tuple[str, str], Any],
                     companions: set[int]) -> None:
    """Hide the empty rows of the sheet's name-keyed formula tables (:func:`styling.filters_empty_rows`) once the
    plan fills at least one of them (the template, with nothing filled, hides nothing).

    A row that also holds something else (Summary's plan totals beside its first route rows) stays shown. A table
    none of whose rows holds anything else gets a non-blank filter on its name column, stored with its result: after
    adding a route, Excel's Data > Reapply shows it. A filter hides whole rows, so a table sharing its rows with other
    content gets no filter (reapplying it would hide the totals); its hidden rows are unhidden by hand (Format >
    Unhide rows, allowed on the protected sheet). ``companions``: columns that belong with the table's rows (the
    chart's 100% line), not "something else"."""
    from planner.a1 import split_cell

    for t in tables:
        filled = _filled_rows(t, cached) if styling.filters_empty_rows(t) else []
        if not filled:
            continue
        last_col = t.first_col + len(t.columns) - 1
        other = {row for row, col in map(split_cell, sheet.cells)
                 if not t.first_col <= col <= last_col and col not in companions}
        rows = set(range(t.first_row, t.last_row + 1))
        sheet.hidden_rows |= rows - set(filled) - other
        if not rows & other:
            i = sheet.tables.index(next(x for x in sheet.tables if x.name == t.name))
            sheet.tables[i] = TableSpec(name=t.name, ref=t.ref, style=sheet.tables[i].style, nonblank_filter_col=0)


def _wrapped_lines(text: str, width_chars: float) -> int:
    """Lines ``text`` takes wrapped at word boundaries in a column ``width_chars`` wide (bold: 1.1 units a char)."""
    per_line = max(1, int((width_chars - 1) / 1.1))
    lines, used = 1, 0
    for word in text.split():
        n = len(word)
        if used and used + 1 + n > per_line:
            lines, used = lines + 1, n
        else:
            used = used + 1 + n if used else n
        lines += (n - 1) // per_line  # a word longer than a line breaks inside it
    return lines


def _add_status_formats(sheet: SheetSpec, t: ts.Table) -> None:
    """Utilizations red above 1 (100%); status words coloured: BREACH red, WARN amber, OK green."""
    r0 = t.first_row
    for col in t.columns:
        c = t.letter(col.key)
        rng = f"{c}{r0}:{c}{t.last_row}"
        if styling.is_utilization(col):
            sheet.cond_formats.append(CondFormatSpec(
                sqref=rng, formula=f"AND(ISNUMBER({c}{r0}),{c}{r0}>1)", fill=RED, color="9C0006"))
        if styling.is_status(col):
            for word, fill, color, bold in (("BREACH", RED, "9C0006", True), ("WARN", AMBER, "7F6000", True),
                                            ("OK", GREEN, "006100", False)):
                sheet.cond_formats.append(CondFormatSpec(sqref=rng, formula=f'{c}{r0}="{word}"', fill=fill,
                                                         color=color, bold=bold))


def _column_cm(width_chars: float) -> float:
    """A column's printed width: Excel's width unit is a character of the default font, 7 px + 5 px padding at
    96 px per inch."""
    return (width_chars * 7 + 5) / 96 * 2.54


def _extent(sheet: SheetSpec) -> tuple[int, int]:
    """(last column, last row) of a sheet's cells and charts (a chart counted in default 15 pt rows)."""
    from planner.a1 import split_cell

    last_col = last_row = 1
    for addr in sheet.cells:
        row, col = split_cell(addr)
        last_col, last_row = max(last_col, col), max(last_row, row)
    for ch in sheet.charts:
        row, col = split_cell(ch.anchor)
        bottom, cm = row, 0.0
        while cm < ch.height_cm:  # hidden rows take no height: the chart reaches further down past them
            cm += 0.0 if bottom in sheet.hidden_rows else sheet.heights.get(bottom, 15) / 72 * 2.54
            bottom += 1
        last_row = max(last_row, bottom)
        right, cm = col, 0.0
        while cm < ch.width_cm:
            letter = ts.col_letter(right)
            cm += 0.0 if letter in sheet.hidden_cols else _column_cm(sheet.widths.get(letter, 8.43))
            right += 1
        last_col = max(last_col, right - 1)
    return last_col, last_row


PRINTABLE_CM = {True: 25.9, False: 19.6}
"""Printable width of a landscape (True) and portrait page: Letter less 1 cm margins (A4 is wider and shorter)."""
MIN_PRINT_SCALE = 0.6
"""A sheet is printed one page wide unless that shrinks it below this scale; then as many pages across as keep it
at least this large, the name column repeated on each."""


def _page_setup(sheet: SheetSpec, header_row: int | None) -> None:
    """Print area over the sheet's content, pages across by :data:`MIN_PRINT_SCALE`, title and header rows
    repeated on every page. Summary is set to one page by its caller (``fit_height = 1``) and stays one page wide."""
    last_col, last_row = _extent(sheet)
    sheet.print_area = f"A1:{ts.col_letter(last_col)}{last_row}"
    if header_row:
        sheet.print_title_rows = f"1:{header_row}"
    width_cm = sum(_column_cm(sheet.widths.get(ts.col_letter(c), 8.43)) for c in range(1, last_col + 1)
                   if ts.col_letter(c) not in sheet.hidden_cols)  # hidden columns do not print
    pages = max(1, math.ceil(width_cm * MIN_PRINT_SCALE / PRINTABLE_CM[sheet.landscape]))
    if sheet.fit_height != 1 and pages > 1:
        sheet.fit_width = pages
        sheet.print_title_cols = "A:A"


def _summary_chart(summ: ts.Table, res: ts.Table, sheets: dict[str, SheetSpec]) -> ChartSpec:
    """Highest utilization per route and its failover's in an outage, against a dashed 100% line.

    The series read Results (max_util has no column on Summary) and skip its hidden rows, so the chart shows the
    filled routes only. The 100% line is a column of 1s beside the Results table, labelled, one per route row."""
    line_col = res.first_col + len(res.columns) + 1
    letter = ts.col_letter(line_col)
    # beside the Outages table, one empty column between, as wide as the columns up to the plan totals' values
    anchor_col = ts.OUTAGES.first_col + len(ts.OUTAGES.columns) + 1
    from planner.a1 import col_to_index

    width_cm = sum(_column_cm(sheets[summ.sheet].widths.get(ts.col_letter(c), 8.43))
                   for c in range(anchor_col, col_to_index(ts.TOTALS_COL_VALUE) + 1))
    sheets[res.sheet].cells[f"{letter}{res.header_row}"] = CellSpec(
        value="Chart line: the limit [x]", bold=True, wrap=True, color="808080")
    sheets[res.sheet].widths[letter] = 10
    for r in range(res.first_row, res.last_row + 1):
        sheets[res.sheet].cells[f"{letter}{r}"] = CellSpec(value=1, number_format=styling.PERCENT, color="808080")
    return ChartSpec(
        title="Highest utilization per route (100% = at the limit)",
        anchor=f"{ts.col_letter(anchor_col)}{ts.OUTAGES.header_row}",
        data_sheet=res.sheet,
        direction="col",
        categories=(res.first_col, res.first_row, res.last_row),
        series=tuple((res.first_col + res.index(k), res.first_row, res.last_row)
                     for k in ("max_util", "failover_util")),
        series_titles=("Highest utilization (its binding constraint on the left)",
                       "Failover backend with this route's backend down"),
        series_colors=("2F5597", "A5A5A5"),
        lines=((line_col, res.first_row, res.last_row, "Limit (100%)", "C00000"),),
        y_number_format=styling.UTIL_AXIS,
        label_number_format=styling.util_format(styling.PERCENT),
        y_min=0,
        data_labels=True,
        legend="b",
        width_cm=width_cm,
        height_cm=11.0,
    )


def workbook_spec(values: Mapping[tuple[str, str], Any], cached: Mapping[tuple[str, str], Any]) -> WorkbookSpec:
    """The workbook description: template layout, input ``values`` and (for the totals) formulas."""
    sheets: dict[str, SheetSpec] = {name: SheetSpec(name=name) for name in ts.SHEET_ORDER}
    readme = sheets["ReadMe"]
    for i, (style, text) in enumerate(with_addin_section(README_LINES), start=1):
        readme.cells[f"A{i}"] = CellSpec(value=text, bold=style in ("title", "head"),
                                         size=16 if style == "title" else (12 if style == "head" else None),
                                         wrap=True)
        lines = math.ceil(len(text) / README_CHARS_PER_LINE)
        if lines > 1:  # a reader does not grow a wrapped row on open: give it the height of its lines
            readme.heights[i] = 15 * lines
    readme.widths["A"] = README_WIDTH
    readme.tab_color = "1F4E78"
    readme.landscape = False
    for t in ts.TABLES:
        _add_table(sheets[t.sheet], t, values, cached)
    header_rows: dict[str, int] = {}
    for t in ts.TABLES:  # the first table of a sheet: its header row is repeated on every page and frozen
        header_rows.setdefault(t.sheet, t.header_row)
        if t.sheet != "Plan" and sheets[t.sheet].freeze is None:
            sheets[t.sheet].freeze = f"{ts.col_letter(t.first_col + 1)}{t.first_row}"
    for name in ("Plan", "Routes", "Providers", "Fleet", "GPUs", "Models"):
        sheets[name].tab_color = "FFC000"
    for name in ("Results", "Summary", "Failover", "Specs"):
        sheets[name].tab_color = "70AD47"
    outages = ts.OUTAGES
    sheets["Summary"].cells[f"{ts.col_letter(outages.first_col)}{outages.header_row - 1}"] = CellSpec(
        value=ts.OUTAGES_TITLE, bold=True, size=14)
    # Plan settings: numeric validation and display format per setting row
    plan = sheets["Plan"]
    plan.validations = []
    for i, (name, unit, help_text, opts) in enumerate(ts.PLAN_SETTINGS):
        addr = ts.PLAN.cell("value", i)
        fmt = styling.plan_setting_format(unit)
        if fmt != "General":
            old = plan.cells[addr]
            plan.cells[addr] = CellSpec(value=old.value, number_format=fmt, locked=old.locked, fill=old.fill)
        if "minimum" in opts:
            plan.validations.append(ValidationSpec(
                sqref=addr, type="decimal", formula1=repr(float(opts["minimum"])),
                formula2=repr(float(opts["maximum"])), operator="between", prompt=help_text,
                error=f"{name}: a number between {opts['minimum']} and {opts['maximum']}"))
    # Summary: the binding constraint of each route highlighted
    res, summ = ts.RESULTS, ts.SUMMARY
    first_u, last_u = summ.letter(ts.UTILIZATION_KEYS[0]), summ.letter(ts.UTILIZATION_KEYS[-1])
    r0 = summ.first_row
    for k in ts.UTILIZATION_KEYS:
        c = summ.letter(k)
        sheets["Summary"].cond_formats.append(CondFormatSpec(
            sqref=f"{c}{r0}:{c}{summ.last_row}",
            formula=f"AND(ISNUMBER({c}{r0}),{c}{r0}>0,{c}{r0}<=1,{c}{r0}=MAX(${first_u}{r0}:${last_u}{r0}))",
            fill=ORANGE))
    c = summ.letter("binding_constraint")
    sheets["Summary"].cond_formats.append(CondFormatSpec(
        sqref=f"{c}{r0}:{c}{summ.last_row}", formula=f'{c}{r0}<>""', fill=ORANGE))
    # Summary totals and chart
    s = sheets["Summary"]
    s.cells[f"{ts.TOTALS_COL_LABEL}{ts.TOTALS_FIRST_ROW - 1}"] = CellSpec(value="Plan totals", bold=True)
    for i, (label, _key, expr, fmt) in enumerate(ts.TOTALS):
        row = ts.TOTALS_FIRST_ROW + i
        s.cells[f"{ts.TOTALS_COL_LABEL}{row}"] = CellSpec(value=label, bold=True)
        s.cells[f"{ts.TOTALS_COL_VALUE}{row}"] = CellSpec(value=ts.formula_text(ts.SUMMARY.sheet, expr, 0),
                                                          number_format=styling.total_format(label, fmt),
                                                          fill=FORMULA_FILL)
    s.widths[ts.TOTALS_COL_LABEL] = 34
    s.widths[ts.TOTALS_COL_VALUE] = 16
    from planner.template.forecast_sheet import add_forecast_extras  # issue 14: Forecast and Profiles sheets

    add_forecast_extras(sheets, cached)
    s.cells["A2"] = CellSpec(value=f"Template {ts.TEMPLATE_ID} v{ts.TEMPLATE_VERSION}. Red: utilization over 100%. "
                             "Orange: the binding constraint of the route. Rows of empty routes are hidden (after "
                             "adding routes: Format > Unhide rows here, Data > Reapply on Results).", italic=True)
    s.charts.append(_summary_chart(summ, res, sheets))
    s.fit_height = 1  # Summary: one page
    line_col = res.first_col + len(res.columns) + 1
    for name, sheet in sheets.items():
        _hide_empty_rows(sheet, [t for t in ts.TABLES if t.sheet == name], cached,
                         {line_col} if name == res.sheet else set())
    for name, sheet in sheets.items():
        _page_setup(sheet, header_rows.get(name))
    # The Forecast's pages across (months per route) with its tables and charts on one page high: its bottom rows
    # (the per-route block) would otherwise take a second row of pages of their own.
    sheets["Forecast"].fit_height = 1
    for name in ("ReadMe",):
        sheets[name].protect = True
    return WorkbookSpec(
        sheets=[sheets[n] for n in ts.SHEET_ORDER],
        defined_names={k: f'"{v}"' for k, v in ts.TEMPLATE_NAMES.items()},
        title=f"{ts.TEMPLATE_ID} {ts.TEMPLATE_VERSION}",
    )


# --------------------------------------------------------------------------------------------------------------
# Writing


def write_plan(inputs: Mapping[tuple[str, str], Any], path: str | Path) -> Path:
    """Write a plan workbook (template layout + ``inputs``) with cached values for every formula."""
    import tempfile

    from planner.ooxml import write_cached_values

    values = {**catalog_inputs(), **inputs}
    cached = ts.evaluate_plan(values)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        bare = write_workbook(workbook_spec(values, cached), Path(tmp) / out.name, macro_enabled=True)
        write_cached_values(bare, out, cached)
    out.write_bytes(normalize_zip(out.read_bytes()))
    return out


def build_template(directory: str | Path = "templates") -> Path:
    """Write the empty template ``capacity-plan.xlsm`` into ``directory``."""
    return write_plan({(ts.PLAN.sheet, ts.PLAN.cell("value", i)): opts.get("default")
                       for i, (_n, _u, _h, opts) in enumerate(ts.PLAN_SETTINGS) if "default" in opts},
                      Path(directory) / TEMPLATE_FILENAME)


def build_sample(scenario_path: str | Path, out: str | Path) -> Path:
    """Write the filled plan of a scenario TOML file to ``out``."""
    from planner.scenario import load_scenario

    return write_plan(scenario_inputs(load_scenario(scenario_path)), out)


def render_summary_png(workbook: str | Path, png: str | Path, *, dpi: int = 80) -> Path:
    """Render the Summary sheet of ``workbook`` as it prints (:mod:`planner.template.render`: LibreOffice headless,
    then pdftoppm) into ``png``, cropped to its content."""
    import tempfile

    from planner.template.render import page_png, render

    with tempfile.TemporaryDirectory() as tmp:
        rendered = render(workbook, tmp)
        pages = rendered.pages.get(ts.SUMMARY.sheet)
        if not pages:
            raise ArgumentError("render", str(workbook), "a printed Summary sheet")
        return page_png(rendered.pdf, pages[0], png, dpi=dpi)
