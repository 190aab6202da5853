"""The catalogue is closed, documented, and every code is produced by a real workbook on disk."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from validate_support import (
    ROOT,
    add_part,
    cell_xml,
    plan_bytes,
    replace_cell,
    sheet_part,
    table_part,
    write,
)

from planner import template as ts
from planner.registry import load
from planner.validate.batch import Limits, validate_paths
from planner.validate.checks import validate_file
from planner.validate.findings import CATALOGUE, catalogue_markdown, parse_severity_overrides
from planner.validate.make_invalid import edit_part

R = ts.RESULTS
ROUTE = ts.ROUTES


def test_docs_findings_md_is_the_catalogue() -> None:
    assert (ROOT / "docs" / "findings.md").read_text() == catalogue_markdown()


def test_codes_are_kebab_case_with_known_family_and_severity() -> None:
    for code, k in CATALOGUE.items():
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", code), code
        assert k.severity in ("error", "warning", "info")
        assert k.family in ("file", "template", "structure", "input", "formula", "output", "policy", "hostile")


def test_every_code_has_a_title_a_template_and_a_description() -> None:
    from planner.codes import TEMPLATE_FIELDS

    for code, k in CATALOGUE.items():
        assert k.title and k.template and len(k.description) > 40, code
        assert k.fields() <= TEMPLATE_FIELDS, (code, k.fields() - TEMPLATE_FIELDS)
        assert k.code not in k.template  # the code is shown next to the message, never inside it


def test_finding_of_renders_the_template() -> None:
    from planner.validate.report import Finding

    f = Finding.of("stale-value", sheet="Results", cell="H4", expected=400.0, actual=4)
    assert (f.severity, f.message) == ("error", "cached value 4 differs from the recompute 400")
    from planner.validate.report import Report

    g = Finding.of("stale-value", sheet="Results", cell="H4", expected=400.0, actual=4, dependents=41)
    report = Report(path="p.xlsm", findings=(g,))
    assert Report.from_wire(report.to_wire()) == report  # the context survives the worker pipe
    assert report.as_dict()["findings"][0]["context"] == {"dependents": 41}
    assert Finding.of("hostile-function", expected="WEBSERVICE").message == (
        "formula calls \"WEBSERVICE\"; never evaluated")


def test_severity_overrides_are_checked() -> None:
    assert parse_severity_overrides(["stale-value=WARNING"]) == {"stale-value": "warning"}
    with pytest.raises(ValueError, match="no-such-code"):
        parse_severity_overrides(["no-such-code=error"])
    with pytest.raises(ValueError, match="fatal"):
        parse_severity_overrides(["stale-value=fatal"])


def rows(path: str) -> set[tuple[str, str, str]]:
    """``(sheet, cell, code)`` rows of a workbook's report: compared as data, not prose."""
    return {(f.sheet or "", f.cell or "", f.code) for f in validate_file(path).findings}


def codes(path: str) -> set[str]:
    return {c for _s, _c, c in rows(path)}


def test_valid_plan_has_no_findings(tmp_path: Path) -> None:
    report = validate_file(write(tmp_path, "ok.xlsm", plan_bytes()))
    assert report.findings == () and report.valid() and report.template_version == ts.TEMPLATE_VERSION


def test_unreadable(tmp_path: Path) -> None:
    (tmp_path / "folder.xlsx").mkdir()
    assert codes(str(tmp_path / "folder.xlsx")) == {"unreadable"}
    assert codes(str(tmp_path / "absent.xlsx")) == {"unreadable"}


def test_not_a_workbook(tmp_path: Path) -> None:
    assert codes(write(tmp_path, "a.xlsx", b"route,qps\nchat,1\n")) == {"not-a-workbook"}
    assert codes(write(tmp_path, "b.xlsx", _zip_without_workbook())) == {"not-a-workbook"}


def _zip_without_workbook() -> bytes:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("word/document.xml", "<w/>")
    return buf.getvalue()


def test_not_our_template(tmp_path: Path) -> None:
    data = edit_part(plan_bytes(), "xl/workbook.xml", lambda x: x.replace(ts.TEMPLATE_ID, "other/budget"))
    assert codes(write(tmp_path, "t.xlsm", data)) == {"not-our-template"}


def test_unsupported_template_version(tmp_path: Path) -> None:
    data = edit_part(plan_bytes(), "xl/workbook.xml", lambda x: x.replace(f'"{ts.TEMPLATE_VERSION}"', '"9.9.9"'))
    report = validate_file(write(tmp_path, "v.xlsm", data))
    assert {f.code for f in report.findings} == {"unsupported-template-version"}
    assert report.template_version == "9.9.9"


def test_missing_sheet(tmp_path: Path) -> None:
    data = edit_part(plan_bytes(), "xl/workbook.xml", lambda x: x.replace('name="Fleet"', 'name="Fleet2"'))
    assert ("Fleet", "", "missing-sheet") in rows(write(tmp_path, "s.xlsm", data))


def test_missing_table(tmp_path: Path) -> None:
    data = plan_bytes()
    part = table_part(data, ROUTE.name)
    data = edit_part(data, part, lambda x: x.replace(f'ref="{ROUTE.ref}"', 'ref="A3:M5"'))
    assert rows(write(tmp_path, "t.xlsm", data)) == {(ROUTE.sheet, ROUTE.ref.split(":")[0], "missing-table")}


def test_missing_column(tmp_path: Path) -> None:
    addr = f"{ROUTE.letter('peak_qps')}{ROUTE.header_row}"
    data = replace_cell(plan_bytes(), ROUTE.sheet, addr, f'<c r="{addr}" t="inlineStr"><is><t>QPS</t></is></c>')
    assert rows(write(tmp_path, "c.xlsm", data)) == {(ROUTE.sheet, addr, "missing-column")}


def test_input_missing(tmp_path: Path) -> None:
    key = (ROUTE.sheet, ROUTE.cell("kind", 0))
    assert (key[0], key[1], "input-missing") in rows(write(tmp_path, "m.xlsm", plan_bytes(drop=(key,))))


def test_input_wrong_type(tmp_path: Path) -> None:
    key = (ROUTE.sheet, ROUTE.cell("peak_qps", 1))
    found = rows(write(tmp_path, "w.xlsm", plan_bytes({key: "lots"})))
    assert (key[0], key[1], "input-wrong-type") in found
    kind = (ROUTE.sheet, ROUTE.cell("kind", 0))
    assert (kind[0], kind[1], "input-wrong-type") in rows(write(tmp_path, "k.xlsm", plan_bytes({kind: "urgent"})))


def test_a_flag_holding_other_text_is_a_wrong_type_not_a_crash(tmp_path: Path) -> None:
    """A TRUE/FALSE input holding text (a script wrote "yes"): input-wrong-type at the cell. The check read a name
    the template package does not export and crashed (validator-crash: AttributeError), found by mypy."""
    from planner import template as ts

    key = (ts.PROVIDERS.sheet, ts.PROVIDERS.cell("cached_reads_count_itpm", 0))
    found = rows(write(tmp_path, "f.xlsm", plan_bytes({key: "yes"})))
    assert (key[0], key[1], "input-wrong-type") in found
    assert not any(code == "validator-crash" for _s, _c, code in found)
    assert (key[0], key[1], "input-wrong-type") not in rows(write(tmp_path, "t.xlsm", plan_bytes({key: "TRUE"})))


def test_input_out_of_range_and_excel_error_value(tmp_path: Path) -> None:
    key = (ROUTE.sheet, ROUTE.cell("cache_hit_rate", 0))
    found = rows(write(tmp_path, "r.xlsm", plan_bytes({key: 1.5})))
    assert (key[0], key[1], "input-out-of-range") in found
    assert any(code == "excel-error-value" and sheet == R.sheet for sheet, _c, code in found)


def test_formula_overwritten(tmp_path: Path) -> None:
    addr = R.cell("rpm_demand", 0)
    data = plan_bytes()
    xml = cell_xml(data, R.sheet, addr)
    data = replace_cell(data, R.sheet, addr, re.sub(r"<f>.*?</f>", "", xml))
    assert rows(write(tmp_path, "o.xlsm", data)) == {(R.sheet, addr, "formula-overwritten")}


def test_formula_changed(tmp_path: Path) -> None:
    addr = R.cell("rpm_demand", 0)
    data = plan_bytes()
    xml = cell_xml(data, R.sheet, addr)
    data = replace_cell(data, R.sheet, addr, re.sub(r"</f>", "*1</f>", xml))
    assert rows(write(tmp_path, "f.xlsm", data)) == {(R.sheet, addr, "formula-changed")}


@pytest.mark.parametrize("spelling", ["_xldudf_XLWINGS_CAPACITY_RPM", "_xldudf_CAPACITY_RPM", "XLWINGS.capacity_rpm"])
def test_formula_respelled_is_not_changed(tmp_path: Path, spelling: str) -> None:
    """Office.js spellings (namespaced, and namespace-less as xlwings Lite's) and blanks do not change the
    fingerprint."""
    addr = R.cell("rpm_demand", 0)
    data = plan_bytes()
    xml = cell_xml(data, R.sheet, addr)
    data = replace_cell(data, R.sheet, addr, xml.replace("CAPACITY_RPM(", f"{spelling}( "))
    assert rows(write(tmp_path, "f.xlsm", data)) == set()


def test_stale_value(tmp_path: Path) -> None:
    addr = R.cell("cost_monthly_usd", 0)
    data = plan_bytes()
    xml = cell_xml(data, R.sheet, addr)
    data = replace_cell(data, R.sheet, addr, re.sub(r"<v>[^<]*</v>", "<v>1234.5</v>", xml))
    report = validate_file(write(tmp_path, "s.xlsm", data))
    assert {(f.sheet, f.cell, f.code) for f in report.findings} == {(R.sheet, addr, "stale-value")}
    assert report.findings[0].actual == 1234.5


def test_within_tolerance_is_not_stale(tmp_path: Path) -> None:
    from planner.validate.checks import values_equal

    assert values_equal(1e6 * (1 + 5e-10), 1e6) and not values_equal(1e6 * (1 + 5e-9), 1e6)
    assert values_equal(None, "") and not values_equal("OK", "ok") and not values_equal(True, 1.0)


def test_missing_cached_value(tmp_path: Path) -> None:
    addr = R.cell("rpm_demand", 0)
    data = plan_bytes()
    xml = cell_xml(data, R.sheet, addr)
    data = replace_cell(data, R.sheet, addr, re.sub(r"<v>[^<]*</v>", "", xml))
    assert rows(write(tmp_path, "m.xlsm", data)) == {(R.sheet, addr, "missing-cached-value")}


def test_utilization_over_threshold_and_no_failover_headroom(tmp_path: Path) -> None:
    key = (ROUTE.sheet, ROUTE.cell("peak_qps", 0))
    itpm = (ts.PROVIDERS.sheet, ts.PROVIDERS.cell("itpm", 1))  # the failover provider, at half its ITPM limit
    found = rows(write(tmp_path, "p.xlsm", plan_bytes({key: float(_base(key)) * 1.4, itpm: _base(itpm) / 2})))
    # both routes share the busy backend, so both are over the threshold; only the first one fails over
    assert found == {(R.sheet, R.cell("max_util", 0), "utilization-over-threshold"),
                     (R.sheet, R.cell("max_util", 1), "utilization-over-threshold"),
                     (R.sheet, R.cell("failover_util", 0), "no-failover-headroom")}


def _base(key: tuple[str, str]) -> float:
    from validate_support import base_inputs

    return base_inputs()[key]


FLEET_FUNCTIONS = {"KV_BYTES_PER_REQUEST", "MAX_CONCURRENCY", "TPOT_S"}
needs_fleet = pytest.mark.skipif(not FLEET_FUNCTIONS <= set(load()),
                                 reason="the KV/decode spreadsheet functions are not registered yet")


@needs_fleet
def test_kv_does_not_fit_and_slo_not_met(tmp_path: Path) -> None:
    from planner.scenario import load_scenario
    from planner.template.build import write_plan
    from planner.template.inputs import scenario_inputs

    inputs = scenario_inputs(load_scenario(ROOT / "samples" / "selfhost-kv.toml"))
    inputs[(ROUTE.sheet, ROUTE.cell("peak_qps", 0))] = float(inputs[(ROUTE.sheet, ROUTE.cell("peak_qps", 0))]) * 50
    path = write_plan(inputs, tmp_path / "kv.xlsm")
    found = rows(str(path))
    assert (R.sheet, R.cell("kv_util", 0), "kv-does-not-fit") in found
    assert (R.sheet, R.cell("tpot_util", 0), "slo-not-met") in found  # 50x the load saturates the fleet


def test_a_vba_project_that_is_not_one_is_not_allowed(tmp_path: Path) -> None:
    """Four bytes of OLE signature are not a VBA project: an error, no longer an info (the accepted xlwings
    wrapper, ``macro-present``, is tested in test_gate_hostile.py)."""
    report = validate_file(write(tmp_path, "m.xlsm", add_part(plan_bytes(), "xl/vbaProject.bin", b"\xd0\xcf\x11\xe0")))
    assert [(f.code, f.severity) for f in report.findings] == [("macro-not-allowed", "error")]
    assert not report.valid()


def _set_formula(tmp_path: Path, name: str, formula: str) -> set[tuple[str, str, str]]:
    addr = R.cell("rpm_demand", 0)
    data = plan_bytes()
    xml = cell_xml(data, R.sheet, addr)
    data = replace_cell(data, R.sheet, addr, re.sub(r"<f>.*?</f>", f"<f>{formula}</f>", xml))
    return rows(write(tmp_path, name, data))


def test_external_link(tmp_path: Path) -> None:
    assert (R.sheet, R.cell("rpm_demand", 0), "external-link") in _set_formula(
        tmp_path, "e.xlsm", "'[budget.xlsx]Sheet1'!A1")
    data = edit_part(plan_bytes(), "xl/_rels/workbook.xml.rels", lambda x: x.replace(
        "</Relationships>", '<Relationship Id="rIdX" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        'relationships/externalLink" Target="externalLinks/externalLink1.xml"/></Relationships>'))
    assert ("", "", "external-link") in rows(write(tmp_path, "e2.xlsm", data))


def test_dde_formula(tmp_path: Path) -> None:
    assert (R.sheet, R.cell("rpm_demand", 0), "dde-formula") in _set_formula(tmp_path, "d.xlsm", "cmd|'/c calc'!A1")


def test_unparsable_formula(tmp_path: Path) -> None:
    assert (R.sheet, R.cell("rpm_demand", 0), "unparsable-formula") in _set_formula(tmp_path, "u.xlsm", "SUM((1,2)")


def test_whole_column_range_is_oversized(tmp_path: Path) -> None:
    assert (R.sheet, R.cell("rpm_demand", 0), "oversized-part") in _set_formula(tmp_path, "w.xlsm", "SUM(A:A)")


def test_zip_bomb(tmp_path: Path) -> None:
    data = add_part(plan_bytes(), "xl/media/blob.bin", b"\0" * (4 * 1024 * 1024))
    assert codes(write(tmp_path, "z.xlsm", data)) == {"zip-bomb"}


def test_xml_attack(tmp_path: Path) -> None:
    bomb = ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]>'
            '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
            '<row r="1"><c r="A1" t="str"><v>&lol2;</v></c></row></sheetData></worksheet>')
    data = edit_part(plan_bytes(), sheet_part("ReadMe"), lambda _x: bomb)
    assert ("ReadMe", "", "xml-attack") in rows(write(tmp_path, "x.xlsm", data))


def test_bad_cell_reference_is_a_precise_finding(tmp_path: Path) -> None:
    """A corrupt shared formula (a cell reference that is not one) ends in a precise finding naming the sheet,
    no longer in ``validator-crash``."""
    addr = R.cell("rpm_demand", 0)
    data = plan_bytes()
    xml = cell_xml(data, R.sheet, addr)
    bad = xml.replace(f'r="{addr}"', 'r="C0x"').replace("<f>", '<f t="shared" si="0">')
    nxt = R.cell("rpm_demand", 1)
    data = replace_cell(data, R.sheet, addr, bad)
    data = replace_cell(data, R.sheet, nxt, f'<c r="{nxt}"><f t="shared" si="0"/><v>1</v></c>')
    report = validate_file(write(tmp_path, "c.xlsm", data))
    assert [(f.code, f.sheet) for f in report.findings] == [("malformed-part", R.sheet)]
    assert "r='C0x'" in report.findings[0].message


def test_validator_crash_names_the_signal() -> None:
    """A worker that dies is reported by how it died: a real process killed by SIGSEGV is a validator-crash naming
    it, one killed by SIGKILL (the kernel's out-of-memory killer) a memory-limit."""
    import multiprocessing as mp
    import os
    import signal

    from planner.validate.batch import died_report

    def suicide(sig: int) -> None:
        import faulthandler

        faulthandler.disable()  # no crash dump from the child: the exit code is the point
        os.kill(os.getpid(), sig)

    def die(sig: int) -> int | None:
        p = mp.get_context("fork").Process(target=suicide, args=(sig,))
        p.start()
        p.join()
        return p.exitcode

    segv = died_report("a.xlsm", die(signal.SIGSEGV), 1024).findings
    assert [f.code for f in segv] == ["validator-crash"] and "SIGSEGV" in segv[0].message
    killed = died_report("a.xlsm", die(signal.SIGKILL), 1024).findings
    assert [f.code for f in killed] == ["memory-limit"] and "SIGKILL" in killed[0].message
    exited = died_report("a.xlsm", 3, 1024).findings
    assert [f.code for f in exited] == ["validator-crash"] and "exited with code 3" in exited[0].message


def test_timeout_and_memory_limit(tmp_path: Path) -> None:
    path = write(tmp_path, "ok.xlsm", plan_bytes())
    slow = validate_paths([path], limits=Limits(timeout_s=0.0001, memory_mib=1024))
    assert [f.code for f in slow.reports[0].findings] == ["timeout"]
    cells = "".join(f'<row r="{r}"><c r="A{r}"><v>{r}</v></c><c r="B{r}"><v>{r}</v></c></row>'
                    for r in range(1, 200_001))
    big = ('<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
           f"{cells}</sheetData></worksheet>")
    hungry = write(tmp_path, "big.xlsm", edit_part(plan_bytes(), sheet_part("ReadMe"), lambda _x: big))
    tight = validate_paths([hungry, path, hungry, path], limits=Limits(timeout_s=60, memory_mib=40))
    assert [[f.code for f in r.findings] for r in tight.reports] == [["memory-limit"], [], ["memory-limit"], []]


@pytest.mark.parametrize("memory_mib", [64, 128, 160])
def test_memory_limit_through_the_cli_however_the_allocation_fails(tmp_path: Path, memory_mib: int) -> None:
    """Under the address-space cap an allocation fails as a MemoryError, or inside a C extension as a SystemError
    ("error return without exception set"), or while the report is built: each is ``memory-limit`` (these limits
    gave ``validator-crash`` or a worker exit code 1 before), and the worker after it starts fresh."""
    import json
    import subprocess
    import sys

    ok = write(tmp_path, "ok.xlsm", plan_bytes())
    cells = "".join(f'<row r="{r}"><c r="A{r}"><v>{r}</v></c><c r="B{r}"><v>{r}</v></c></row>'
                    for r in range(1, 200_001))
    big = ('<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
           f"{cells}</sheetData></worksheet>")
    hungry = write(tmp_path, "big.xlsm", edit_part(plan_bytes(), sheet_part("ReadMe"), lambda _x: big))
    planner = str(Path(sys.executable).with_name("planner"))  # the real CLI, in a fresh process
    out = subprocess.run([planner, "validate", "--memory", str(memory_mib), "--format",
                          "json", hungry, ok, hungry, ok], capture_output=True, text=True, timeout=300)
    assert out.returncode == 1, out.stderr
    codes = [[f["code"] for f in r["findings"]] for r in json.loads(out.stdout)["reports"]]
    assert codes == [["memory-limit"], [], ["memory-limit"], []]


def test_a_threaded_caller_gets_workers_from_a_clean_server(tmp_path: Path) -> None:
    """A fork of a threaded process can inherit a held lock and hang (the flaky ``timeout`` where ``memory-limit``
    was due): with another thread running, workers come from the forkserver, and the limits still hold."""
    import threading

    from planner.validate.batch import _context

    ok = write(tmp_path, "ok.xlsm", plan_bytes())
    cells = "".join(f'<row r="{r}"><c r="A{r}"><v>{r}</v></c></row>' for r in range(1, 300_001))
    big = ('<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
           f"{cells}</sheetData></worksheet>")
    hungry = write(tmp_path, "big.xlsm", edit_part(plan_bytes(), sheet_part("ReadMe"), lambda _x: big))
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    try:
        assert _context().get_start_method() == "forkserver"
        result = validate_paths([hungry, ok], limits=Limits(timeout_s=120, memory_mib=40))
    finally:
        stop.set()
        other.join()
    assert [[f.code for f in r.findings] for r in result.reports] == [["memory-limit"], []]


def test_a_worker_that_cannot_send_its_report_is_a_memory_limit() -> None:
    from planner.validate.batch import MEMORY_EXIT_CODE, died_report

    assert [f.code for f in died_report("p.xlsx", MEMORY_EXIT_CODE, 64).findings] == ["memory-limit"]
    assert [f.code for f in died_report("p.xlsx", 1, 64).findings] == ["validator-crash"]


def test_every_code_is_tested() -> None:
    text = Path(__file__).read_text() + Path(__file__).with_name("test_gate_hostile.py").read_text()
    untested = [c for c in CATALOGUE if f'"{c}"' not in text]
    assert untested == []


def test_edited_formula_is_recomputed_by_the_general_engine(tmp_path: Path) -> None:
    """A non-conforming workbook (an edited formula) falls back to the general engine (planner.recalc)."""
    pytest.importorskip("planner.recalc")
    addr = R.cell("rpm_demand", 0)
    data = plan_bytes()
    xml = cell_xml(data, R.sheet, addr)
    edited = re.sub(r"<v>[^<]*</v>", "<v>1</v>", re.sub(r"</f>", "*2</f>", xml))
    report = validate_file(write(tmp_path, "g.xlsm", replace_cell(data, R.sheet, addr, edited)))
    assert report.engine == "fast+formulas"  # the edited cell by formulas, everything else on the template's path
    assert {(f.cell, f.code) for f in report.findings} >= {(addr, "formula-changed"), (addr, "stale-value")}


@pytest.mark.slow
def test_edit_with_unknown_precedents_falls_back_to_the_general_engine(tmp_path: Path) -> None:
    """An edit whose precedents the text does not show (INDIRECT): the general engine computes the whole workbook."""
    addr = R.cell("rpm_demand", 0)
    data = plan_bytes()
    xml = cell_xml(data, R.sheet, addr)
    dynamic = re.sub(r"<v>[^<]*</v>", "<v>1</v>", re.sub(r"<f>.*</f>", '<f>INDIRECT("Routes!C4")*2</f>', xml))
    report = validate_file(write(tmp_path, "d.xlsm", replace_cell(data, R.sheet, addr, dynamic)))
    assert report.engine == "formulas"
    assert {(f.cell, f.code) for f in report.findings} >= {(addr, "formula-changed"), (addr, "stale-value")}


def test_validator_crash_is_contained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in a check ends in a validator-crash finding for that workbook, not a traceback."""
    from planner.validate import checks

    def boom(_book: object) -> None:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(checks, "check_inputs", boom)
    report = validate_file(write(tmp_path, "ok.xlsm", plan_bytes()))
    assert [f.code for f in report.findings] == ["validator-crash"]
    assert "ZeroDivisionError: a bug" in report.findings[0].message


def test_crash_finding_carries_the_exception_type(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The crash finding names its exception's type in its context, and near the memory cap only a real SystemError
    counts as memory-limit (a crash whose message merely mentions "SystemError" stays a validator-crash)."""
    from planner.validate import batch, checks

    path = write(tmp_path, "ok.xlsm", plan_bytes())
    raised: list[BaseException] = []

    def boom(_book: object) -> None:
        raise raised[-1]

    monkeypatch.setattr(checks, "check_inputs", boom)
    monkeypatch.setattr(batch, "_near_cap", lambda: True)
    raised.append(SystemError("error return without exception set"))
    crash = validate_file(path).findings
    assert [f.code for f in crash] == ["validator-crash"] and dict(crash[0].context) == {"exception": "SystemError"}
    wire, out_of_memory = batch._validate_one(path)
    assert out_of_memory and [f["code"] for f in wire["findings"]] == ["memory-limit"]
    raised.append(ValueError("SystemError: a message that only names it"))
    wire, out_of_memory = batch._validate_one(path)
    assert not out_of_memory and [f["code"] for f in wire["findings"]] == ["validator-crash"]
    assert wire["findings"][0]["context"] == [["exception", "ValueError"]]
    monkeypatch.setattr(batch, "_near_cap", lambda: False)  # far from the cap a SystemError is a bug
    raised.append(SystemError("error return without exception set"))
    wire, out_of_memory = batch._validate_one(path)
    assert not out_of_memory and [f["code"] for f in wire["findings"]] == ["validator-crash"]


def test_input_changed_since_recalc_names_the_input(tmp_path: Path) -> None:
    """An input changed without recomputing: the input is named, and of the stale cells only those whose own
    precedents are not stale are listed, each with the count of stale cells downstream of it."""
    from planner.ooxml import write_cached_values

    src = write(tmp_path, "ok.xlsm", plan_bytes())
    rpm = ts.ROUTES.cell("peak_qps", 0)
    changed = tmp_path / "changed.xlsm"
    assert validate_file(src).findings == ()
    from planner.validate.checks import read_book

    value = read_book(src).values[(ts.ROUTES.sheet, rpm)]
    write_cached_values(src, changed, {(ts.ROUTES.sheet, rpm): value * 1.5})
    report = validate_file(changed)
    named = [(f.sheet, f.cell) for f in report.findings if f.code == "input-changed-since-recalc"]
    assert named == [(ts.ROUTES.sheet, rpm)]
    stale = [f for f in report.findings if f.code == "stale-value"]
    assert stale and all(f"input {ts.ROUTES.sheet}!{rpm} changed" in f.message for f in stale)
    assert any("dependent cell(s) are stale" in f.message for f in stale)
    # every listed stale cell reads the input directly: none of its precedents is stale
    from planner.validate.fastpath import template_graph

    prec = template_graph()[0]
    assert all((ts.ROUTES.sheet, rpm) in prec[(f.sheet, f.cell)] for f in stale)
    # one tampered cached value names no input
    res = R.cell("rpm_demand", 0)
    tampered = tmp_path / "tampered.xlsm"
    write_cached_values(src, tampered, {(R.sheet, res): 12345})
    report = validate_file(tampered)
    assert {(f.code, f.cell) for f in report.findings} == {("stale-value", res)}


def test_value_not_written_by_recalc(tmp_path: Path) -> None:
    """planner recalc reports a computed value its output cannot hold (no <c> element for the cell)."""
    from xlsx_craft import write_xlsx

    from planner.recalc import recalc_file

    src = write_xlsx(tmp_path / "arr.xlsx", ['<c r="A1"><v>1</v></c>',
                                            '<c r="C1"><f t="array" ref="C1:D1">A1:B1*10</f><v>0</v></c>'])
    assert [f.code for f in recalc_file(src, tmp_path / "out.xlsx").findings] == ["value-not-written"]


def test_a_large_caller_gets_workers_from_the_server_a_small_script_forks(tmp_path: Path, monkeypatch) -> None:
    """Workers are forked from a single-threaded caller only while it is small (its free heap would widen every
    worker's memory cap); a small script without a ``__main__`` guard is forked from, so it is not run again in the
    workers (a server's workers re-import ``__main__``)."""
    import subprocess
    import sys

    from planner.validate import batch

    monkeypatch.setattr(batch, "FORK_CALLER_MAX_MIB", 0)
    assert batch._context().get_start_method() == "forkserver"
    assert batch._context(fork_caller=True).get_start_method() == "fork"  # the CLI, whatever its size
    monkeypatch.setattr(batch, "FORK_CALLER_MAX_MIB", 1 << 20)
    assert batch._context().get_start_method() == "fork"

    ok = write(tmp_path, "ok.xlsm", plan_bytes())
    script = tmp_path / "unguarded.py"
    script.write_text("from planner.validate.batch import validate_paths\n"
                      f"r = validate_paths([{str(ok)!r}])\n"
                      "print('codes', [f.code for f in r.reports[0].findings])\n", encoding="utf-8")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["codes []"]  # once, and the plan is valid
