"""planner recalc on the 63 workbooks saved by Microsoft Excel (tests/data/excel-made, see its README)."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from planner.ooxml import read_workbook
from planner.recalc import recalc_file

DATA = Path(__file__).parent / "data" / "excel-made"
FIXTURES = sorted(p for p in DATA.iterdir() if p.suffix in (".xlsx", ".xlsm"))
PLANNER = Path(sys.executable).with_name("planner")

_V = re.compile(rb"<v>.*?</v>|<v/>", re.S)
_T = re.compile(rb'\st="[^"]*"')


def _strip_values(xml: bytes) -> bytes:
    return _T.sub(b"", _V.sub(b"", xml))


def test_there_are_63_fixtures() -> None:
    assert len(FIXTURES) == 63


@pytest.fixture(scope="module")
def recalculated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, object]]:
    out_dir = tmp_path_factory.mktemp("recalc")
    results = {}
    for src in FIXTURES:
        dst = out_dir / src.name
        results[src.name] = (dst, recalc_file(src, dst))
    return results


@pytest.mark.parametrize("src", FIXTURES, ids=lambda p: p.name)
def test_every_part_is_kept(src: Path, recalculated: dict) -> None:
    dst, _result = recalculated[src.name]
    view = read_workbook(src)
    sheet_parts = {s.part for s in view.sheets}
    with zipfile.ZipFile(src) as a, zipfile.ZipFile(dst) as b:
        assert a.namelist() == b.namelist()
        for name in a.namelist():
            if name in sheet_parts:
                assert _strip_values(a.read(name)) == _strip_values(b.read(name)), name
            else:
                assert a.read(name) == b.read(name), name


def test_input_is_never_written(tmp_path: Path) -> None:
    src = DATA / "table10.xlsx"
    before = hashlib.sha256(src.read_bytes()).hexdigest()
    recalc_file(src, tmp_path / "out.xlsx")
    assert hashlib.sha256(src.read_bytes()).hexdigest() == before
    with pytest.raises(ValueError, match="must not be the input"):
        recalc_file(src, src)
    assert hashlib.sha256(src.read_bytes()).hexdigest() == before


def test_genuine_cached_values_of_formula_results01(recalculated: dict) -> None:
    dst, result = recalculated["formula_results01.xlsx"]
    cached = {ref: c.value for ref, c in read_workbook(DATA / "formula_results01.xlsx").sheet("Sheet1").cells.items()
              if c.formula is not None}
    assert len(cached) == 12
    assert {ref: result.values[("Sheet1", ref)] for ref in cached} == cached
    rewritten = read_workbook(dst).sheet("Sheet1").cells
    assert {ref: rewritten[ref].value for ref in cached} == cached
    assert {ref: rewritten[ref].type for ref in cached} == {
        ref: c.type for ref, c in read_workbook(DATA / "formula_results01.xlsx").sheet("Sheet1").cells.items()
        if c.formula is not None
    }


@pytest.mark.parametrize("name", ["outline01.xlsx", "outline02.xlsx", "outline05.xlsx", "outline06.xlsx"])
def test_genuine_subtotal_sums_of_outlines(name: str, recalculated: dict) -> None:
    view = read_workbook(DATA / name)
    sheet = view.sheets[0]
    subtotals = {ref: c.value for ref, c in sheet.cells.items() if c.formula and c.formula.startswith("SUBTOTAL")}
    assert len(subtotals) == 3
    _dst, result = recalculated[name]
    assert {ref: result.values[(sheet.name, ref)] for ref in subtotals} == subtotals


def test_table17_totals_use_the_column_data(recalculated: dict) -> None:
    view = read_workbook(DATA / "table17.xlsx")
    cells = view.sheet("Sheet1").cells
    table = next(iter(view.tables.values()))
    assert table.totals_row_count == 1
    _dst, result = recalculated["table17.xlsx"]
    # SUBTOTAL(109,[Column8]) is the sum of the data cells of that column
    col8 = table.columns.index("Column8")
    from planner.ooxml import index_to_col, split_range

    top, left, bottom, _right = split_range(table.ref)
    letter = index_to_col(left + col8)
    data = [cells[f"{letter}{r}"].value for r in range(top + 1, bottom) if f"{letter}{r}" in cells]
    expected = sum(v for v in data if isinstance(v, int | float))
    assert result.values[("Sheet1", f"{letter}{bottom}")] == expected


def test_cli_recalc(tmp_path: Path) -> None:
    out = tmp_path / "o.xlsx"
    proc = subprocess.run([str(PLANNER), "recalc", str(DATA / "outline01.xlsx"), "-o", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "3 formula cells recomputed" in proc.stdout
    assert read_workbook(out).sheets[0].cells["B12"].value == 6400
