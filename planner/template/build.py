"""Build the capacity-plan template and filled sample plans: spec -> xlsx (via :mod:`planner.xlsx_writer`) -> cached
values (evaluated by :func:`planner.template.evaluate_plan`, written by :func:`planner.ooxml.write_cached_values`).

- :func:`build_template` writes ``capacity-plan.xlsm``: empty input tables, catalog sheets filled from the bundled
  catalog, every formula with its cached value;
- :func:`build_sample` writes a filled plan from a scenario TOML file (:mod:`planner.scenario`).

Output is reproducible byte for byte.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from planner import template as ts
from planner.errors import ArgumentError
from planner.readme_text import with_addin_section
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


def _fmt_validation(col: ts.Column) -> tuple[str, str, str | None, str | None] | None:
    """(type, formula1, formula2, operator) for a numeric column."""
    if col.kind != "number" or (col.minimum is None and col.maximum is None):
        return None
    kind = "whole" if col.integer else "decimal"

    def fmt(x: float) -> str:
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


def _add_table(sheet: SheetSpec, t: ts.Table, values: Mapping[tuple[str, str], Any]) -> None:
    if t.title:
        sheet.cells[f"{ts.col_letter(t.first_col)}1"] = CellSpec(value=t.title, bold=True, size=14)
    if t.note:
        sheet.cells[f"{ts.col_letter(t.first_col)}2"] = CellSpec(value=t.note, italic=True)
    fixed = ts.fixed_cells()
    for j, col in enumerate(t.columns):
        letter = ts.col_letter(t.first_col + j)
        sheet.cells[f"{letter}{t.header_row}"] = CellSpec(value=col.header, bold=True, wrap=True)
        sheet.widths[letter] = col.width
        for i in range(t.rows):
            addr = f"{letter}{t.first_row + i}"
            if col.formula is not None:
                sheet.cells[addr] = CellSpec(value=ts.formula_text(t.sheet, col.formula, i),
                                             number_format=col.number_format, fill=FORMULA_FILL)
                continue
            key = (t.sheet, addr)
            is_fixed = key in fixed
            v = fixed[key] if is_fixed else values.get(key)
            sheet.cells[addr] = CellSpec(
                value=v,
                number_format=col.number_format,
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
    sheet.heights[t.header_row] = 45
    sheet.tables.append(TableSpec(name=t.name, ref=t.ref))


def workbook_spec(values: Mapping[tuple[str, str], Any], cached: Mapping[tuple[str, str], Any]) -> WorkbookSpec:
    """The workbook description: template layout, input ``values`` and (for the totals) formulas."""
    sheets: dict[str, SheetSpec] = {name: SheetSpec(name=name) for name in ts.SHEET_ORDER}
    readme = sheets["ReadMe"]
    for i, (style, text) in enumerate(with_addin_section(README_LINES), start=1):
        readme.cells[f"A{i}"] = CellSpec(value=text, bold=style in ("title", "head"),
                                         size=16 if style == "title" else (12 if style == "head" else None))
    readme.widths["A"] = 140
    readme.tab_color = "1F4E78"
    for t in ts.TABLES:
        _add_table(sheets[t.sheet], t, values)
    for name in ("Plan", "Routes", "Providers", "Fleet", "GPUs", "Models"):
        sheets[name].tab_color = "FFC000"
        sheets[name].freeze = "B4" if name != "Plan" else None
    for name in ("Results", "Summary", "Failover", "Specs"):
        sheets[name].tab_color = "70AD47"
    sheets["Results"].freeze = "B4"
    sheets["Failover"].freeze = "B4"
    outages = ts.OUTAGES
    sheets["Summary"].cells[f"{ts.col_letter(outages.first_col)}{outages.header_row - 1}"] = CellSpec(
        value=ts.OUTAGES_TITLE, bold=True, size=14)
    # Plan settings: numeric validation per setting row
    plan = sheets["Plan"]
    plan.validations = []
    for i, (name, _unit, help_text, opts) in enumerate(ts.PLAN_SETTINGS):
        if "minimum" in opts:
            addr = ts.PLAN.cell("value", i)
            plan.validations.append(ValidationSpec(
                sqref=addr, type="decimal", formula1=repr(float(opts["minimum"])),
                formula2=repr(float(opts["maximum"])), operator="between", prompt=help_text,
                error=f"{name}: a number between {opts['minimum']} and {opts['maximum']}"))
    # Results and Summary: red over 1, status colours, binding constraint highlighted
    res = ts.RESULTS
    util_cols = [res.letter(k) for k in (*ts.UTILIZATION_KEYS, "failover_util", "max_util")]
    for c in util_cols:
        sheets["Results"].cond_formats.append(CondFormatSpec(
            sqref=f"{c}{res.first_row}:{c}{res.last_row}", formula=f'AND(ISNUMBER({c}{res.first_row}),'
            f'{c}{res.first_row}>1)', fill=RED, color="9C0006"))
    summ = ts.SUMMARY
    first_u, last_u = summ.letter(ts.UTILIZATION_KEYS[0]), summ.letter(ts.UTILIZATION_KEYS[-1])
    r0 = summ.first_row
    for k in ts.UTILIZATION_KEYS:
        c = summ.letter(k)
        rng = f"{c}{r0}:{c}{summ.last_row}"
        sheets["Summary"].cond_formats.append(CondFormatSpec(
            sqref=rng, formula=f"AND(ISNUMBER({c}{r0}),{c}{r0}>1)", fill=RED, color="9C0006"))
        sheets["Summary"].cond_formats.append(CondFormatSpec(
            sqref=rng, formula=f"AND(ISNUMBER({c}{r0}),{c}{r0}>0,{c}{r0}=MAX(${first_u}{r0}:${last_u}{r0}))",
            fill=ORANGE))
    for sheet_name, t in (("Results", res), ("Summary", summ)):
        c = t.letter("status")
        rng = f"{c}{t.first_row}:{c}{t.last_row}"
        sheets[sheet_name].cond_formats.append(CondFormatSpec(sqref=rng, formula=f'{c}{t.first_row}="BREACH"',
                                                              fill=RED, color="9C0006"))
        sheets[sheet_name].cond_formats.append(CondFormatSpec(sqref=rng, formula=f'{c}{t.first_row}="WARN"',
                                                              fill=AMBER))
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
                                                          number_format=fmt, fill=FORMULA_FILL)
    s.widths[ts.TOTALS_COL_LABEL] = 34
    s.widths[ts.TOTALS_COL_VALUE] = 16
    s.cells["A2"] = CellSpec(value=f"Template {ts.TEMPLATE_ID} v{ts.TEMPLATE_VERSION}. Red: utilization over 1. "
                             "Orange: the binding constraint of the route.", italic=True)
    n_routes = sum(1 for i in range(ts.ROUTE_ROWS) if cached.get(("Results", res.cell("route", i))) not in
                   (None, "")) or ts.ROUTE_ROWS
    s.charts.append(ChartSpec(
        title="Utilization per constraint per route (1.0 = at the limit)",
        anchor=f"A{summ.last_row + 3}",
        categories=(summ.first_col, r0, r0 + n_routes - 1),
        series=tuple((summ.first_col + summ.index(k), summ.header_row, r0 + n_routes - 1)
                     for k in ts.UTILIZATION_KEYS),
        y_title="utilization [x]",
    ))
    from planner.template.forecast_sheet import add_forecast_extras  # issue 14: Forecast and Profiles sheets

    add_forecast_extras(sheets, cached)
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
    """Render the Summary sheet of ``workbook`` through LibreOffice headless (PDF, one page per sheet) and
    pdftoppm into ``png``. Needs ``soffice`` and ``pdftoppm`` on PATH."""
    import shutil
    import subprocess
    import tempfile

    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    pdftoppm = shutil.which("pdftoppm")
    if soffice is None or pdftoppm is None:
        raise ArgumentError("render", "soffice/pdftoppm", "LibreOffice and poppler-utils installed")
    page = ts.SHEET_ORDER.index(ts.SUMMARY.sheet) + 1
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [soffice, "--headless", "--norestore", f"-env:UserInstallation=file://{tmp}/profile", "--convert-to",
             'pdf:calc_pdf_Export:{"SinglePageSheets":{"type":"boolean","value":"true"}}', "--outdir", tmp,
             str(workbook)],
            check=True, capture_output=True, timeout=180,
        )
        pdf = Path(tmp) / (Path(workbook).stem + ".pdf")
        stem = Path(tmp) / "page"
        subprocess.run([pdftoppm, "-f", str(page), "-l", str(page), "-r", str(dpi), "-png", "-singlefile",
                        str(pdf), str(stem)], check=True, capture_output=True, timeout=120)
        out = Path(png)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(stem.with_suffix(".png"), out)
    return out
