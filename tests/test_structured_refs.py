"""Rewrites of Excel formula text into the A1 syntax the formulas library parses (pure functions)."""

from __future__ import annotations

import pytest

from planner.structured_refs import (
    StructuredRefError,
    Table,
    bound_full_ranges,
    exclude_cells_from_subtotal,
    external_reference,
    rewrite_structured,
)

T = Table(name="Table1", sheet="Sheet1", top=3, left=2, bottom=7, right=5,
          columns=("Region", "Column#", "Qty", "Price"), totals_rows=1)
TABLES = {"table1": T}


@pytest.mark.parametrize(
    ("formula", "row", "expected"),
    [
        ("Table1[[#This Row],[Qty]]", 5, "D5"),
        ("[@Qty]*[@Price]", 4, "D4*E4"),
        ("[@[Qty]]", 4, "D4"),
        ("Table1[@Qty]", 4, "D4"),
        ("SUBTOTAL(101,[Qty])", 7, "SUBTOTAL(101,D4:D6)"),
        ("SUM(Table1[Qty])", 7, "SUM(D4:D6)"),
        ("SUM(table1[qty])", 7, "SUM(D4:D6)"),
        ("SUM(Table1[[Qty]:[Price]])", 7, "SUM(D4:E6)"),
        ("SUM(Table1[[#This Row],[Region]:[Qty]])", 6, "SUM(B6:D6)"),
        ("Table1[#Totals]", 2, "B7:E7"),
        ("Table1[[#Totals],[Qty]]", 2, "D7"),
        ("Table1[#Headers]", 2, "B3:E3"),
        ("Table1[#Data]", 2, "B4:E6"),
        ("Table1[#All]", 2, "B3:E7"),
        ("Table1[[#Headers],[#Data],[Qty]]", 2, "D3:D6"),
        ("SUM(Table1)", 2, "SUM(B4:E6)"),
        ("Table1x+1", 2, "Table1x+1"),
        ("SUM([Column'#])", 7, "SUM(C4:C6)"),
        ('"[Qty]"&[@Qty]', 4, '"[Qty]"&D4'),
    ],
)
def test_rewrite(formula: str, row: int, expected: str) -> None:
    assert rewrite_structured(formula, sheet="Sheet1", row=row, col=3, tables=TABLES) == expected


def test_reference_from_another_sheet_gets_the_sheet_prefix() -> None:
    other = Table(name="Routes", sheet="My Routes", top=1, left=1, bottom=3, right=2, columns=("a", "b"))
    assert rewrite_structured("SUM(Routes[b])", sheet="Sheet1", row=1, col=1, tables={"routes": other}) == (
        "SUM('My Routes'!B2:B3)"
    )


def test_this_row_outside_the_data_rows_is_value_error() -> None:
    assert rewrite_structured("Table1[@Qty]", sheet="Sheet1", row=7, col=4, tables=TABLES) == "#VALUE!"


@pytest.mark.parametrize(
    ("formula", "match"),
    [("Table1[Nope]", "no column 'Nope'"), ("Nope[Qty]", "no table named 'Nope'"), ("Table1[#Bad]", "specifier")],
)
def test_bad_structured_references_raise(formula: str, match: str) -> None:
    with pytest.raises(StructuredRefError, match=match):
        rewrite_structured(formula, sheet="Sheet1", row=5, col=3, tables=TABLES)


def test_column_reference_outside_any_table_raises() -> None:
    with pytest.raises(StructuredRefError, match="outside any table"):
        rewrite_structured("[Qty]", sheet="Sheet1", row=20, col=20, tables=TABLES)


def test_external_book_brackets_are_left_alone() -> None:
    assert rewrite_structured("[1]Sheet1!A1", sheet="Sheet1", row=1, col=1, tables=TABLES) == "[1]Sheet1!A1"


def test_bound_full_ranges() -> None:
    assert bound_full_ranges("SUM(A:A)", max_row=12, max_col=3) == "SUM(A1:A12)"
    assert bound_full_ranges("SUM(Sheet2!$B:$C)", max_row=5, max_col=3) == "SUM(Sheet2!$B1:$C5)"
    assert bound_full_ranges("SUM(2:3)", max_row=5, max_col=4) == "SUM(A2:D3)"
    assert bound_full_ranges("A1:B2+TIME(1,2,3)", max_row=5, max_col=4) == "A1:B2+TIME(1,2,3)"


def test_exclude_nested_subtotals() -> None:
    assert exclude_cells_from_subtotal("SUBTOTAL(9,B2:B10)", excluded={(6, 2), (11, 2)}) == "SUBTOTAL(9,B2:B5,B7:B10)"
    assert exclude_cells_from_subtotal("SUM(B2:B10)", excluded={(6, 2)}) == "SUM(B2:B10)"
    assert exclude_cells_from_subtotal("SUBTOTAL(9,C2:C10)", excluded={(6, 2)}) == "SUBTOTAL(9,C2:C10)"


@pytest.mark.parametrize(
    ("formula", "expected"),
    [
        ("[1]Sheet1!A1", "[1]"),
        ("'C:\\x\\[book.xlsx]S'!A1", "[book.xlsx]"),
        ("SUM([2]S!A1:A3)", "[2]"),
        ("cmd|' /C calc'!A0", "cmd|"),
        ("A1+B2", None),
        ('"[1]S!A1"', None),
    ],
)
def test_external_reference(formula: str, expected: str | None) -> None:
    assert external_reference(formula) == expected
