"""The raw OOXML reader and lossless writer, and registry functions evaluated through recalc."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from xlsx_craft import cell_xml, write_xlsx

from planner.ooxml import read_workbook, shift_formula, write_cached_values
from planner.recalc import recalc_file
from planner.registry import spellings

DATA = Path(__file__).parent / "data" / "excel-made"


def test_read_workbook_of_a_table_fixture() -> None:
    view = read_workbook(DATA / "table10.xlsx")
    assert view.sheet_names == ("Sheet1",)
    table = view.tables["Table1"]
    assert (table.ref, table.totals_row_count, table.columns[:3]) == ("B3:K6", 1, ("Column1", "Column2", "Column3"))
    cells = view.sheet("Sheet1").cells
    assert cells["K4"].formula == "SUM(Table1[[#This Row],[Column1]:[Column3]])"
    assert cells["D6"].formula == "SUBTOTAL(101,[Column3])"


def test_read_defined_names_data_validation_and_vba() -> None:
    names = read_workbook(DATA / "defined_name01.xlsx").defined_names
    assert names and all(isinstance(v, str) and v for v in names.values())
    assert read_workbook(DATA / "data_validation01.xlsx").sheets[0].data_validations >= 1
    assert read_workbook(DATA / "macro01.xlsm").has_vba
    assert not read_workbook(DATA / "table10.xlsx").has_vba


def test_array_formula_is_marked() -> None:
    cell = read_workbook(DATA / "array_formula01.xlsx").sheet("Sheet1").cells["A1"]
    assert (cell.formula_kind, cell.formula) == ("array", "SUM(B1:C1*B2:C2)")


def test_shared_formulas_are_expanded(tmp_path: Path) -> None:
    cells = [
        '<c r="A1"><v>1</v></c>', '<c r="A2"><v>2</v></c>', '<c r="A3"><v>3</v></c>',
        '<c r="B1"><f t="shared" ref="B1:B3" si="0">A1*10+$A$1</f><v>0</v></c>',
        '<c r="B2"><f t="shared" si="0"/><v>0</v></c>',
        '<c r="B3"><f t="shared" si="0"/><v>0</v></c>',
    ]
    p = write_xlsx(tmp_path / "shared.xlsx", cells)
    view = read_workbook(p)
    assert view.sheet("S").cells["B3"].formula == "A3*10+$A$1"
    result = recalc_file(p, tmp_path / "out.xlsx")
    assert [result.values[("S", f"B{r}")] for r in (1, 2, 3)] == [11, 21, 31]
    out = read_workbook(tmp_path / "out.xlsx").sheet("S").cells
    assert out["B3"].value == 31 and out["B3"].formula == "A3*10+$A$1"


def test_shift_formula_keeps_strings_and_sheets() -> None:
    assert shift_formula('"A1"&A1&Sheet2!A1', 1, 1) == '"A1"&B2&Sheet2!B2'


def test_write_cached_values_patches_only_v_and_t(tmp_path: Path) -> None:
    src = write_xlsx(tmp_path / "in.xlsx", [cell_xml("A1", 1), cell_xml("A2", 0, "A1+1"), cell_xml("A3", 0, "A1")])
    dst = tmp_path / "out.xlsx"
    write_cached_values(src, dst, {("S", "A2"): "text & <more>", ("S", "A3"): "#DIV/0!"})
    cells = read_workbook(dst).sheet("S").cells
    assert (cells["A2"].value, cells["A2"].type, cells["A2"].formula) == ("text & <more>", "str", "A1+1")
    assert (cells["A3"].value, cells["A3"].type) == ("#DIV/0!", "e")
    assert cells["A1"].value == 1
    with zipfile.ZipFile(src) as a, zipfile.ZipFile(dst) as b:
        assert a.read("xl/workbook.xml") == b.read("xl/workbook.xml")
    write_cached_values(src, tmp_path / "full.xlsx", {}, full_calc_on_load=True)
    assert b'fullCalcOnLoad="1"' in zipfile.ZipFile(tmp_path / "full.xlsx").read("xl/workbook.xml")


def test_write_cached_values_refuses_unknown_sheet(tmp_path: Path) -> None:
    src = write_xlsx(tmp_path / "in.xlsx", [cell_xml("A1", 1)])
    with pytest.raises(ValueError, match="no sheet named 'Nope'"):
        write_cached_values(src, tmp_path / "out.xlsx", {("Nope", "A1"): 1})


@pytest.mark.parametrize("spelling_index", range(len(spellings("CAPACITY_RPM"))))
def test_registry_function_under_every_spelling(tmp_path: Path, spelling_index: int) -> None:
    name = spellings("CAPACITY_RPM")[spelling_index]
    p = write_xlsx(tmp_path / "f.xlsx", [
        cell_xml("A1", 25), cell_xml("B1", 0, f"{name}(A1)"), cell_xml("C1", 0, f"{name}(-1)"),
    ])
    result = recalc_file(p, tmp_path / "out.xlsx")
    assert result.values[("S", "B1")] == 1500  # =CAPACITY_RPM(25) -> 1500 (the registry's example)
    # one error policy on every surface: the function's one-line refusal, as Excel shows it
    assert result.values[("S", "C1")] == "peak_qps: got -1, expected a number >= 0"


def test_read_only_some_sheets() -> None:
    full = read_workbook(DATA / "chartsheet01.xlsx")
    assert len(full.sheets) >= 1
    first = full.sheets[0].name
    part = read_workbook(DATA / "chartsheet01.xlsx", sheets=(first.upper(),))
    assert part.sheet_names == (first,)
    assert part.sheets[0].cells == full.sheets[0].cells


def test_global_defined_names_are_evaluated(tmp_path: Path) -> None:
    names = ('<definedNames><definedName name="Rate">S!$A$1</definedName>'
             '<definedName name="Block">S!$A$1:$B$1</definedName></definedNames>')
    p = write_xlsx(tmp_path / "names.xlsx", [cell_xml("A1", 4), cell_xml("B1", 0, "Rate*2"),
                                             cell_xml("C1", 0, "SUM(Block)")], names=names)
    assert read_workbook(p).defined_names == {"Rate": "S!$A$1", "Block": "S!$A$1:$B$1"}
    result = recalc_file(p, tmp_path / "out.xlsx")
    assert (result.values[("S", "B1")], result.values[("S", "C1")]) == (8, 12)
    assert result.findings == ()


def test_holds_only_what_the_writer_would_write() -> None:
    """A cell keeps its bytes (``only_changed``) only when it caches the new value in the writer's own form."""
    from planner.excel.values import XlError
    from planner.ooxml import CellView, _holds

    def cell(value: object, t: str = "n") -> CellView:
        return CellView(ref="A1", value=value, type=t)

    assert _holds(cell(3), 3.0) and _holds(cell(0.1), 0.1) and _holds(cell(True, "b"), True)
    assert _holds(cell("x", "str"), "x") and _holds(cell(None, "str"), "")
    assert _holds(cell(XlError("#N/A"), "e"), "#N/A")
    assert not _holds(cell(1), True) and not _holds(cell(True, "b"), 1)  # bool and number never mix
    assert not _holds(cell(1, "b"), 1) and not _holds(cell("x", "s"), "x")  # another t: rewritten
    assert not _holds(cell(float("inf")), float("inf")) and not _holds(cell(None), None)  # written as #NUM!, ""
    assert not _holds(cell("#N/A", "str"), "#N/A") and not _holds(cell(None, "str"), None)
    assert not _holds(cell(2), 2.5) and not _holds(cell("x", "str"), "y")


def test_only_changed_copies_unchanged_entries_as_they_are(tmp_path: Path) -> None:
    """Cells already holding their values keep their bytes; entries with nothing to change are copied compressed
    as they were (same bytes, method, time, attributes); a changed part is written anew."""
    src = write_xlsx(tmp_path / "in.xlsx", [cell_xml("A1", 1), cell_xml("A2", 2, "A1+1"), cell_xml("A3", 1, "A1")])
    same = tmp_path / "same.xlsx"
    write_cached_values(src, same, {("S", "A2"): 2.0, ("S", "A3"): 1}, only_changed=True)
    assert same.read_bytes() == src.read_bytes()  # nothing to change: every entry copied, the same zip
    out = tmp_path / "out.xlsx"
    write_cached_values(src, out, {("S", "A2"): 5.0, ("S", "A3"): 1}, only_changed=True)
    with zipfile.ZipFile(src) as a, zipfile.ZipFile(out) as b:
        for ia, ib in zip(a.infolist(), b.infolist(), strict=True):
            assert (ia.filename, ia.date_time, ia.compress_type, ia.external_attr) == \
                (ib.filename, ib.date_time, ib.compress_type, ib.external_attr)
            if ia.filename != "xl/worksheets/sheet1.xml":
                assert a.read(ia.filename) == b.read(ib.filename)
                assert ia.compress_size == ib.compress_size and ia.CRC == ib.CRC
        sheet_a, sheet_b = a.read("xl/worksheets/sheet1.xml"), b.read("xl/worksheets/sheet1.xml")
    assert sheet_b == sheet_a.replace(b"<f>A1+1</f><v>2</v>", b"<f>A1+1</f><v>5</v>")
    cells = read_workbook(out).sheet("S").cells
    assert (cells["A2"].value, cells["A3"].value) == (5, 1)
