"""`planner recalc` and `planner validate` on the fast path: template plans, edited formulas, formulas the template
does not know, the isolated child's output handling and its messages."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from planner import template as ts
from planner.ooxml import Limits, WorkbookError, read_workbook, write_cached_values
from planner.recalc import compute, recalc_file, recalc_file_isolated
from planner.validate import validate_file

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "seed.xlsm"
R = ts.RESULTS
RPM = R.cell("rpm_demand", 0)  # =IF(Results!$A4="","",CAPACITY_RPM(Routes!$C4))
PEAK = ts.ROUTES.cell("peak_qps", 0)


def _sheet_part(path: Path, sheet: str) -> str:
    return read_workbook(path).sheet(sheet).part


def _edit_formula(src: Path, dst: Path, sheet: str, cell: str, edit: object, *, add: str | None = None) -> None:
    """Copy ``src`` with the formula of ``sheet!cell`` rewritten by ``edit(text)`` (its cached value kept), and
    optionally ``add`` (a ``<c>`` element) appended to the sheet's last row."""
    part = _sheet_part(src, sheet)
    with zipfile.ZipFile(src) as zi, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zo:
        for info in zi.infolist():
            data = zi.read(info.filename)
            if info.filename == part:
                text = data.decode()
                if cell:
                    text, n = re.subn(rf'(<c r="{cell}"[^>]*><f>)(.*?)(</f>)',
                                      lambda m: m.group(1) + edit(m.group(2)) + m.group(3), text)
                    assert n == 1
                if add:
                    i = text.rindex("</row>")
                    text = text[:i] + add + text[i:]
                data = text.encode()
            zo.writestr(info, data)


def test_template_plan_is_recomputed_on_the_fast_path(tmp_path: Path) -> None:
    """An input changed without recomputing: recalc on the fast path puts fresh values everywhere, and validation
    finds nothing stale afterwards. The new rpm_demand is CAPACITY_RPM(new peak) called directly."""
    from planner.coerce import call_sheet_function
    from planner.registry import load

    stale = tmp_path / "stale.xlsm"
    peak = read_workbook(SAMPLE).sheet("Routes").cells[PEAK].value
    write_cached_values(SAMPLE, stale, {("Routes", PEAK): peak * 0.5})
    assert any(f.code == "input-changed-since-recalc" for f in validate_file(str(stale)).findings)
    out = tmp_path / "fresh.xlsm"
    result = recalc_file(stale, out)
    assert result.engine == "fast" and not result.findings
    assert len(result.values) == len(ts.all_formulas())
    want = call_sheet_function(load()["CAPACITY_RPM"], peak * 0.5)
    assert read_workbook(out).sheet(R.sheet).cells[RPM].value == pytest.approx(want)
    assert {f.code for f in validate_file(str(out)).findings} <= {"utilization-over-threshold", "kv-does-not-fit",
                                                                  "slo-not-met", "no-failover-headroom"}


def test_edited_formula_is_computed_alone_and_its_dependents_follow(tmp_path: Path) -> None:
    """``rpm_demand*2`` on one row: the edited cell is twice its old value, the Summary cell mirroring the route's
    RPM utilization moves with it, and validation (fast path + formulas for the one cell) finds only the edit."""
    before = read_workbook(SAMPLE).sheet(R.sheet).cells
    i = next(i for i in range(R.rows) if (before[R.cell("rpm_util", i)].value or 0) > 0)  # a route on a provider
    rpm, util = R.cell("rpm_demand", i), R.cell("rpm_util", i)
    edited = tmp_path / "edited.xlsm"
    _edit_formula(SAMPLE, edited, R.sheet, rpm, lambda f: f"({f})*2")
    result = recalc_file(edited, tmp_path / "out.xlsm")
    assert result.engine == "fast"
    assert result.values[(R.sheet, rpm)] == pytest.approx(2 * before[rpm].value)
    assert result.values[(R.sheet, util)] > before[util].value
    summary = ts.SUMMARY.cell("rpm_util", i)
    assert result.values[(ts.SUMMARY.sheet, summary)] == pytest.approx(result.values[(R.sheet, util)])
    report = validate_file(str(tmp_path / "out.xlsm"))
    assert report.engine == "fast+formulas"
    assert {(f.code, f.cell) for f in report.findings if f.code.startswith("formula")} == {("formula-changed", rpm)}
    assert not [f for f in report.findings if f.code == "stale-value"]
    stale_report = validate_file(str(edited))  # the edited file itself: its cached values predate the edit
    assert {(f.code, f.cell) for f in stale_report.findings if f.code == "stale-value"} == {("stale-value", rpm)}


def test_edited_formula_reading_a_later_cell_is_ordered(tmp_path: Path) -> None:
    """An edited rpm_demand that reads a cell the template computes after it (and not from it)."""
    order = [(s, c) for s, c, _e, _r in ts.formula_cells()]
    later = R.cell("cost_monthly_usd", 0)
    assert order.index((R.sheet, later)) > order.index((R.sheet, RPM))
    edited = tmp_path / "later.xlsm"
    _edit_formula(SAMPLE, edited, R.sheet, RPM, lambda f: f"{f}+{later}")
    result = recalc_file(edited, tmp_path / "out.xlsm")
    before = read_workbook(SAMPLE).sheet(R.sheet).cells
    assert result.engine == "fast"
    assert result.values[(R.sheet, RPM)] == pytest.approx(before[RPM].value + before[later].value)


def test_formula_outside_the_template_uses_the_general_engine_for_itself_only(tmp_path: Path) -> None:
    extra = tmp_path / "extra.xlsm"
    cell = f'<c r="CZ{R.first_row}"><f>{R.sheet}!{RPM}*3</f><v>0</v></c>'
    _edit_formula(SAMPLE, extra, R.sheet, "", None, add=cell)
    result = compute(extra)
    assert result.engine == "fast"
    want = read_workbook(SAMPLE).sheet(R.sheet).cells[RPM].value * 3
    assert result.values[(R.sheet, f"CZ{R.first_row}")] == pytest.approx(want)


def test_isolated_recalc_writes_only_on_success_and_names_the_time_limit_option(tmp_path: Path) -> None:
    out = tmp_path / "out.xlsm"
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    out.symlink_to(victim)  # an existing link at OUT: replaced, never written through
    result = recalc_file_isolated(SAMPLE, out, limits=Limits(time_limit_s=120))
    assert result.engine == "fast" and not out.is_symlink() and victim.read_text() == "keep"
    assert read_workbook(out).sheet(R.sheet).cells[RPM].value == read_workbook(SAMPLE).sheet(R.sheet).cells[RPM].value
    late = tmp_path / "late.xlsm"
    with pytest.raises(WorkbookError, match="--time-limit"):
        recalc_file_isolated(SAMPLE, late, limits=Limits(time_limit_s=0.01))
    assert sorted(os.listdir(tmp_path)) == ["out.xlsm", "victim.txt"]  # no output, no temporary file
    refused = tmp_path / "refused.xlsm"
    with pytest.raises(WorkbookError):
        recalc_file_isolated(tmp_path / "victim.txt", refused)
    assert sorted(os.listdir(tmp_path)) == ["out.xlsm", "victim.txt"]


def test_cli_recalc_time_limit_message(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "planner.cli", "recalc", str(SAMPLE), "-o", str(tmp_path / "o.xlsm"),
                           "--time-limit", "0.01"], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "--time-limit" in proc.stderr + proc.stdout
    assert not (tmp_path / "o.xlsm").exists() and os.listdir(tmp_path) == []


@pytest.mark.slow
def test_fast_path_agrees_with_the_general_engine(tmp_path: Path) -> None:
    """The oracle: a stale plan recomputed on the fast path and by formulas over the whole workbook."""
    from planner import recalc

    stale = tmp_path / "stale.xlsm"
    peak = read_workbook(SAMPLE).sheet("Routes").cells[PEAK].value
    write_cached_values(SAMPLE, stale, {("Routes", PEAK): peak * 0.5})
    fast = compute(stale)
    general = recalc._compute_general(stale, read_workbook(stale))
    assert fast.engine == "fast" and general.engine == "formulas"
    for key, v in fast.values.items():
        g = general.values.get(key)
        if isinstance(v, float):
            assert g == pytest.approx(v, rel=1e-9, abs=1e-9), key
        else:
            assert (g if g is not None else "") == v, key


def test_a_value_that_cannot_be_written_is_a_finding(tmp_path: Path) -> None:
    """An array formula whose other cells have no <c> elements: the anchor is written, the rest reported."""
    import sys as _sys

    _sys.path.insert(0, str(Path(__file__).parent))
    from xlsx_craft import write_xlsx

    src = write_xlsx(tmp_path / "arr.xlsx", ['<c r="A1"><v>1</v></c>', '<c r="B1"><v>2</v></c>',
                                            '<c r="C1"><f t="array" ref="C1:D1">A1:B1*10</f><v>0</v></c>'])
    result = recalc_file(src, tmp_path / "out.xlsx")
    assert result.values[("S", "D1")] == 20
    assert [(f.code, f.cell) for f in result.findings] == [("value-not-written", "D1")]
    assert read_workbook(tmp_path / "out.xlsx").sheet("S").cells["C1"].value == 10


def test_input_holding_a_formula_is_recomputed_first(tmp_path: Path) -> None:
    """Routes' peak as ``=x*2`` with a stale cached value (red team: trusted at its cached value): recalc computes
    the input formula first, then the template from it."""
    from planner.coerce import call_sheet_function
    from planner.registry import load

    peak = read_workbook(SAMPLE).sheet("Routes").cells[PEAK].value
    src = tmp_path / "formula-input.xlsm"
    part = _sheet_part(SAMPLE, "Routes")
    with zipfile.ZipFile(SAMPLE) as zi, zipfile.ZipFile(src, "w", zipfile.ZIP_DEFLATED) as zo:
        for info in zi.infolist():
            data = zi.read(info.filename)
            if info.filename == part:
                data, n = re.subn(rf'<c r="{PEAK}"([^>]*)><v>[^<]*</v></c>'.encode(),
                                  f'<c r="{PEAK}"><f>{peak}*2</f><v>{peak}</v></c>'.encode(), data)
                assert n == 1
            zo.writestr(info, data)
    result = compute(src)
    assert result.engine == "fast"
    assert result.values[("Routes", PEAK)] == pytest.approx(2 * peak)
    assert result.values[(R.sheet, RPM)] == pytest.approx(call_sheet_function(load()["CAPACITY_RPM"], 2 * peak))


def test_every_code_recalc_emits_is_in_the_one_catalogue() -> None:
    """``planner recalc`` and ``planner validate`` share planner/codes.py: every code recalc can emit is a catalogue
    code (read from its source, so a new code cannot bypass the catalogue), and each is documented in
    docs/findings.md."""
    import re

    from planner.codes import CODES

    source = (ROOT / "planner" / "recalc.py").read_text(encoding="utf-8")
    emitted = set(re.findall(r'code="([a-z0-9-]+)"', source)) | set(re.findall(r'"([a-z0-9-]+)" if ext', source))
    assert {"circular-reference", "value-not-written", "external-link", "dde-formula"} <= emitted
    assert emitted <= set(CODES), emitted - set(CODES)
    docs = (ROOT / "docs" / "findings.md").read_text(encoding="utf-8")
    assert all(f"`{c}`" in docs for c in emitted)
    # the batch (planner recalc --output-dir): its own reasons for a plan not recomputed, and the reader's codes
    batch = (ROOT / "planner" / "recalc_batch.py").read_text(encoding="utf-8")
    emitted = set(re.findall(r'"code": "([a-z0-9-]+)"', batch))
    assert {"timeout", "memory-limit", "validator-crash", "oversized-part"} <= emitted
    from planner.validate.checks import READ_CODES

    assert emitted | set(READ_CODES.values()) <= set(CODES), emitted - set(CODES)
    assert all(f"`{c}`" in docs for c in emitted | set(READ_CODES.values()))


def test_the_template_order_puts_every_cell_after_the_cells_it_reads() -> None:
    """The fast path evaluates every template formula cell in the template's order with the plan's cached values
    still in the store (``fastpath.evaluate`` takes the plan's cells whole): that is right only if no cell reads a
    formula cell that comes later. Checked on the rendered formulas' references (a range reads each of its cells)."""
    from planner.validate import fastpath

    precedents, _dependents = fastpath.template_graph()
    position = {(s, c): i for i, (s, c, _e, _r) in enumerate(ts.formula_cells())}
    later = [(k, p) for k, ps in precedents.items() for p in ps if p in position and position[p] >= position[k]]
    assert not later, later[:5]


def test_cached_values_of_formula_cells_are_never_read() -> None:
    """Every formula cell's cached value replaced by a number nobody computes: the recomputed values are those of
    the plan as saved (the cached values are overwritten before any cell reads them)."""
    from planner.validate import fastpath
    from planner.validate.checks import read_book

    sample = Path(__file__).resolve().parents[1] / "samples" / "seed.xlsm"
    book = read_book(str(sample))
    clean = fastpath.plan_values(book)
    assert clean is not None
    garbled = read_book(str(sample))
    for key in fastpath.compiled()[1]:
        garbled.values[key] = 123456.789
    got = fastpath.plan_values(garbled)
    assert got is not None
    show = lambda vs: {k: (type(v).__name__, repr(v)) for k, v in vs.items()}  # noqa: E731
    assert show(got[0]) == show(clean[0])
