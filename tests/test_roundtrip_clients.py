"""Plans from every client: the cached-value writer on every cell form real writers produce, and round trips of a
sample through openpyxl, pandas and LibreOffice headless, then ``planner validate`` / ``planner recalc``."""

from __future__ import annotations

import os
import shutil
import subprocess
import zipfile
from collections import Counter
from pathlib import Path

import openpyxl
import pytest
from xlsx_craft import write_xlsx

from planner.ooxml import NS_MAIN, WorkbookError, patch_sheet_xml, read_workbook, write_cached_values
from planner.validate import validate_file

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "seed.xlsm"
SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")
needs_lo = pytest.mark.skipif(SOFFICE is None, reason="LibreOffice (soffice) is not installed")

# ---------------------------------------------------------------------------------------------------------------------
# The writer on every cell form

_NS = NS_MAIN
FORMS = {
    # Microsoft Excel: numbers without t, a <v> after <f>
    "excel": (f'<worksheet xmlns="{_NS}"><sheetData><row r="1" spans="1:2"><c r="A1"><v>1</v></c>'
              '<c r="B1" s="2"><f>A1+1</f><v>5</v></c></row></sheetData></worksheet>'),
    # LibreOffice: t="n" spelled out, <f aca="false">
    "libreoffice": (f'<worksheet xmlns="{_NS}"><sheetData><row r="1"><c r="A1" s="0" t="n"><v>1</v></c>'
                    '<c r="B1" s="0" t="n"><f aca="false">A1+1</f><v>5</v></c></row></sheetData></worksheet>'),
    # openpyxl: a formula cell without a cached value gets a self-closing <v /> (with a blank)
    "openpyxl": (f'<worksheet xmlns="{_NS}"><sheetData><row r="1"><c r="A1" t="n"><v>1</v></c>'
                 '<c r="B1"><f>A1+1</f><v /></c></row></sheetData></worksheet>'),
    "openpyxl-nospace": (f'<worksheet xmlns="{_NS}"><sheetData><row r="1"><c r="A1"><v>1</v></c>'
                         '<c r="B1"><f>A1+1</f><v/></c></row></sheetData></worksheet>'),
    # Google Sheets export: a text result as a shared string
    "google-sheets": (f'<worksheet xmlns="{_NS}" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/'
                      'relationships"><sheetData><row r="1"><c r="A1" s="1"><v>1</v></c>'
                      '<c r="B1" s="1" t="s"><f>A1+1</f><v>0</v></c></row></sheetData></worksheet>'),
    # a prefixed SpreadsheetML namespace (<x:c>), as some .NET writers produce
    "prefixed": ('<x:worksheet xmlns:x="' + _NS + '"><x:sheetData><x:row r="1"><x:c r="A1"><x:v>1</x:v></x:c>'
                 '<x:c r="B1" t="str"><x:f>A1+1</x:f><x:v>old</x:v></x:c></x:row></x:sheetData></x:worksheet>'),
    # cells without r= (position implied), single-quoted attributes, an inline string, an extLst child
    "implied-refs": (f"<worksheet xmlns='{_NS}'><sheetData><row r='1'><c><v>1</v></c>"
                     "<c t='inlineStr'><f>A1+1</f><is><t>x</t></is><extLst><ext uri='u'/></extLst></c>"
                     "</row></sheetData></worksheet>"),
    # an empty, self-closing target cell
    "self-closing": (f'<worksheet xmlns="{_NS}"><sheetData><row r="1"><c r="A1"><v>1</v></c>'
                     '<c r="B1" s="3"/></row></sheetData></worksheet>'),
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_patch_sheet_xml_sets_one_value_and_keeps_every_other_byte(form: str) -> None:
    xml = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' + FORMS[form]).encode()
    new, missing = patch_sheet_xml(xml, {"B1": 2.5})
    assert missing == set()
    head = xml.index(b"<sheetData>") if b"<sheetData>" in xml else xml.index(b"<x:sheetData>")
    assert new[:head] == xml[:head]  # everything before the cells: identical bytes
    from xml.etree.ElementTree import fromstring

    cells = [el for el in fromstring(new).iter() if el.tag == f"{{{_NS}}}c"]
    b1 = cells[1]
    assert [ch.tag.split("}")[1] for ch in b1 if ch.tag.endswith("}v")] == ["v"]  # exactly one <v>
    assert b1.find(f"{{{_NS}}}v").text == "2.5"
    assert b1.get("t") is None and b1.find(f"{{{_NS}}}is") is None
    assert fromstring(new).find(f".//{{{_NS}}}c").find(f"{{{_NS}}}v").text == "1"  # A1 untouched
    if form == "implied-refs":
        assert b"<extLst><ext uri='u'/></extLst>" in new and b"<f>A1+1</f>" in new


@pytest.mark.parametrize("value,t,v", [("rag-chat", "str", "rag-chat"), (True, "b", "1"), ("#N/A", "e", "#N/A"),
                                       ("a & <b>", "str", "a & <b>"), (None, "str", None), (7, None, "7")])
def test_patch_sheet_xml_types(value: object, t: str | None, v: str | None) -> None:
    from xml.etree.ElementTree import fromstring

    new, _ = patch_sheet_xml(FORMS["openpyxl"].encode(), {"B1": value})
    cell = [el for el in fromstring(new).iter() if el.tag == f"{{{_NS}}}c"][1]
    assert cell.get("t") == t
    assert cell.find(f"{{{_NS}}}v").text == v


def test_written_values_are_read_back_by_openpyxl_and_pandas(tmp_path: Path) -> None:
    xlsxwriter = pytest.importorskip("xlsxwriter")
    src = tmp_path / "xw.xlsx"
    wb = xlsxwriter.Workbook(str(src))
    ws = wb.add_worksheet("S")
    ws.write_number("A1", 1)
    ws.write_formula("B1", "=A1+1")  # XlsxWriter caches 0
    ws.write_formula("C1", '=IF(A1>0,"yes","no")')
    wb.close()
    dst = tmp_path / "out.xlsx"
    write_cached_values(src, dst, {("S", "B1"): 2, ("S", "C1"): "yes"})
    ws2 = openpyxl.load_workbook(dst, data_only=True)["S"]
    assert (ws2["A1"].value, ws2["B1"].value, ws2["C1"].value) == (1, 2, "yes")
    assert openpyxl.load_workbook(dst)["S"]["B1"].value == "=A1+1"
    pd = pytest.importorskip("pandas")
    frame = pd.read_excel(dst, sheet_name="S", header=None, engine="openpyxl")
    assert frame.iloc[0].tolist() == [1, 2, "yes"]


def test_every_part_kept_vba_bytes_included(tmp_path: Path) -> None:
    vba = os.urandom(3000)
    src = write_xlsx(tmp_path / "in.xlsm", ['<c r="A1"><v>1</v></c>', '<c r="B1"><f>A1+1</f><v/></c>'],
                     extra_parts={"xl/vbaProject.bin": vba, "xl/custom/thing.bin": b"\x00\x01"})
    dst = tmp_path / "out.xlsm"
    write_cached_values(src, dst, {("S", "B1"): 2})
    with zipfile.ZipFile(src) as a, zipfile.ZipFile(dst) as b:
        assert [i.filename for i in a.infolist()] == [i.filename for i in b.infolist()]
        for info in a.infolist():
            if info.filename != "xl/worksheets/sheet1.xml":
                assert a.read(info.filename) == b.read(info.filename), info.filename
                assert b.getinfo(info.filename).compress_type == info.compress_type
        assert b.read("xl/vbaProject.bin") == vba
    assert read_workbook(dst).sheet("S").cells["B1"].value == 2


def test_never_writes_through_links_and_never_leaves_partial_output(tmp_path: Path) -> None:
    src = write_xlsx(tmp_path / "in.xlsx", ['<c r="A1"><v>1</v></c>', '<c r="B1"><f>A1+1</f></c>'])
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "out.xlsx"
    (tmp_path / "out.xlsx.tmp").symlink_to(victim)  # the old fixed temp name, planted
    write_cached_values(src, out, {("S", "B1"): 2})
    assert victim.read_text() == "keep me" and (tmp_path / "out.xlsx.tmp").is_symlink()
    # the output itself a link: replaced by the new file, the link's target untouched
    link = tmp_path / "link.xlsx"
    link.symlink_to(victim)
    write_cached_values(src, link, {("S", "B1"): 3})
    assert victim.read_text() == "keep me" and not link.is_symlink()
    assert read_workbook(link).sheet("S").cells["B1"].value == 3
    # a failure half-way leaves neither the output nor a temporary file
    before = set(os.listdir(tmp_path))
    bad = write_xlsx(tmp_path / "bad.xlsx", ['<c r="A1"><v>1</v></c>'],
                     extra_parts={"xl/zz.xml": b"x"})
    with zipfile.ZipFile(bad, "a") as z:  # a duplicate entry: refused
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            z.writestr("xl/zz.xml", b"y")
    before.add("bad.xlsx")
    with pytest.raises(WorkbookError, match="two entries named xl/zz.xml"):
        write_cached_values(bad, tmp_path / "never.xlsx", {("S", "A1"): 2})
    assert set(os.listdir(tmp_path)) == before


# ---------------------------------------------------------------------------------------------------------------------
# Round trips of a real sample


def _findings(path: Path) -> Counter[str]:
    return Counter(f.code for f in validate_file(str(path)).findings)


def _openpyxl_edit(src: Path, dst: Path, value: float | None = None) -> float:
    wb = openpyxl.load_workbook(src, keep_vba=True)
    ws = wb["Routes"]
    old = ws["C4"].value
    ws["C4"].value = old if value is None else value
    wb.save(dst)
    return float(old)


def _soffice(src: Path, outdir: Path, target: str) -> Path:
    profile = outdir / "lo-profile"
    subprocess.run([SOFFICE, f"-env:UserInstallation=file://{profile}", "--headless", "--norestore",
                    "--convert-to", target, "--outdir", str(outdir), str(src)],
                   check=True, capture_output=True, timeout=180)
    ext = target.split(":")[0]
    return outdir / (src.stem + "." + ext)


def test_openpyxl_edited_plan_validates_without_false_findings(tmp_path: Path) -> None:
    """openpyxl drops every cached value (it has no calculation engine) and sets fullCalcOnLoad: no missing-value
    warnings, and the computed dropdown lists (backend names) are not read from the absent cached values."""
    out = tmp_path / "opx.xlsm"
    _openpyxl_edit(SAMPLE, out)
    assert read_workbook(out).calc_on_load
    assert _findings(out) == Counter()
    bad = tmp_path / "bad.xlsm"
    wb = openpyxl.load_workbook(SAMPLE, keep_vba=True)
    wb["Routes"]["L4"].value = "no-such-backend"
    wb.save(bad)
    report = validate_file(str(bad))
    wrong = [f for f in report.findings if f.code == "input-wrong-type"]
    assert [(f.sheet, f.cell) for f in wrong] == [("Routes", "L4")]
    assert "anthropic-sonnet" in str(wrong[0].expected)


def test_recalc_of_an_openpyxl_plan_is_read_by_openpyxl_and_pandas(tmp_path: Path) -> None:
    edited = tmp_path / "opx.xlsm"
    _openpyxl_edit(SAMPLE, edited)
    out = tmp_path / "recalc.xlsm"
    from planner.recalc import recalc_file

    result = recalc_file(edited, out)
    assert not result.findings
    with zipfile.ZipFile(out) as z:
        for name in z.namelist():
            if name.startswith("xl/worksheets/"):
                assert b"<v /><v>" not in z.read(name) and b"<v/><v>" not in z.read(name)
    original = openpyxl.load_workbook(SAMPLE, data_only=True)["Results"]
    ws = openpyxl.load_workbook(out, data_only=True)["Results"]
    assert ws["A4"].value == original["A4"].value and isinstance(ws["A4"].value, str) and ws["A4"].value
    assert ws["C4"].value == pytest.approx(original["C4"].value)
    pd = pytest.importorskip("pandas")
    frame = pd.read_excel(out, sheet_name="Results", header=None, engine="openpyxl")
    assert frame.iloc[3, 0] == original["A4"].value
    assert _findings(out) == Counter()


def test_pandas_edited_plan_validates(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    out = tmp_path / "pandas.xlsm"
    shutil.copy(SAMPLE, out)
    peak = openpyxl.load_workbook(SAMPLE)["Routes"]["C4"].value
    with pd.ExcelWriter(out, mode="a", engine="openpyxl", if_sheet_exists="overlay",
                        engine_kwargs={"keep_vba": True}) as writer:
        pd.DataFrame([[peak // 2]]).to_excel(writer, sheet_name="Routes", startrow=3, startcol=2, header=False,
                                            index=False)
    assert openpyxl.load_workbook(out)["Routes"]["C4"].value == peak // 2
    assert _findings(out) == Counter()


@needs_lo
@pytest.mark.slow
@pytest.mark.parametrize("target", ["xlsx", "xlsm:Calc MS Excel 2007 VBA XML"])
def test_libreoffice_saved_plan_validates_without_false_findings(tmp_path: Path, target: str) -> None:
    """LibreOffice writes TRUE() for TRUE and lower-case function names: formulas are compared by meaning."""
    saved = _soffice(SAMPLE, tmp_path, target)
    report = validate_file(str(saved))
    assert Counter(f.code for f in report.findings) == Counter()
    assert report.engine == "fast"
    from planner.recalc import compute

    result = compute(saved)  # LibreOffice writes TRUE inputs as =TRUE(): constants, the fast path still applies
    assert result.engine == "fast" and not result.findings


@needs_lo
@pytest.mark.slow
def test_openpyxl_then_recalc_then_libreoffice(tmp_path: Path) -> None:
    """An openpyxl-edited plan, recomputed by planner recalc, opened and saved by LibreOffice: LibreOffice reads
    every recomputed value (one per cell), and the result still validates."""
    edited = tmp_path / "opx.xlsm"
    old = _openpyxl_edit(SAMPLE, edited, value=None)
    from planner.recalc import recalc_file

    out = tmp_path / "recalc.xlsm"
    recalc_file(edited, out)
    lo_dir = tmp_path / "lo"
    lo_dir.mkdir()
    saved = _soffice(out, lo_dir, "xlsx")
    mine = read_workbook(out).sheet("Results").cells
    theirs = read_workbook(saved).sheet("Results").cells
    for ref in ("A4", "C4", "D4"):
        assert theirs[ref].value == pytest.approx(mine[ref].value) if isinstance(mine[ref].value, float) \
            else theirs[ref].value == mine[ref].value
    assert read_workbook(saved).sheet("Routes").cells["C4"].value == old
    assert _findings(saved) == Counter()


def test_reader_turns_malformed_cells_into_precise_errors(tmp_path: Path) -> None:
    """Inputs that used to crash the reader (or be misread) name the part and the problem."""
    for bad, match in [('<c r="4C"><v>1</v></c>', "r='4C'"), ('<c r=""><v>1</v></c>', "r=''"),
                       ('<c r="XFE1"><v>1</v></c>', "r='XFE1'")]:
        src = write_xlsx(tmp_path / "bad.xlsx", [bad])
        with pytest.raises(WorkbookError, match=match):
            read_workbook(src)
    src = write_xlsx(tmp_path / "num.xlsx", ['<c r="A1"><v>4_00</v></c>', '<c r="B1"><v>400</v></c>'])
    with pytest.raises(WorkbookError, match="'4_00' is not a number"):  # never read as 400 (LibreOffice shows 4)
        read_workbook(src)
    good = write_xlsx(tmp_path / "z.xlsx", ['<c r="A1"><v>1</v></c>'])
    data = bytearray(good.read_bytes())
    with zipfile.ZipFile(good) as z:
        info = z.getinfo("xl/worksheets/sheet1.xml")
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data[start:start + 8] = b"\xff" * 8  # a corrupt deflate stream
    broken = tmp_path / "broken.xlsx"
    broken.write_bytes(bytes(data))
    with pytest.raises(WorkbookError, match="corrupt .*part xl/worksheets/sheet1.xml"):
        read_workbook(broken)
