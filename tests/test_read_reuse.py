"""What a batch worker's reads keep from plan to plan changes nothing they give: a book flattened through a
:class:`planner.ooxml.SheetMemo` (:func:`planner.validate.checks.book_from_view` with ``memo=``) is the book of the
view read alone, every value with its Python type and in its order, whatever plan came before; a part read row by
row (:meth:`planner.ooxml.SheetMemo.cells` after a miss) gives the views the whole part gives; cells' text holding a
comment or a processing instruction goes to the parser as before."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import pytest
from test_sheet_memo import _HEAD, ROWS, book, outcome

from planner import ooxml
from planner.ooxml import Limits, SheetMemo, read_workbook
from planner.validate.checks import Book, book_from_view

CHANGES = {
    "number": ('<c r="A1" s="1"><v>4</v>', '<c r="A1" s="1"><v>5</v>'),
    "int to float": ('<c r="A1" s="1"><v>4</v>', '<c r="A1" s="1"><v>4.5</v>'),
    "shared string": ('<c r="B1" t="s"><v>0</v>', '<c r="B1" t="s"><v>1</v>'),
    "inline string": ("<is><t>x</t></is>", "<is><t>z</t></is>"),
    "boolean": ('t="b"><v>1</v>', 't="b"><v>0</v>'),
    "error": ("<v>#N/A</v>", "<v>#DIV/0!</v>"),
    "formula cached number": ("A1*2</f><v>8</v>", "A1*2</f><v>9</v>"),
    "formula cached text": ("<v>ab</v>", "<v>cd</v>"),
    "formula value that comes": ('<f t="shared" si="0"/><v></v>', '<f t="shared" si="0"/><v>3</v>'),
    "formula value that goes": ("A1*2</f><v>8</v>", "A1*2</f><v></v>"),
    "text formula without a value": ("<v>ab</v>", "<v></v>"),
    "number to text": ('<c r="A1" s="1"><v>4</v>', '<c r="A1" s="1" t="str"><v>four</v>'),
    "a formula that comes": ('<c r="A1" s="1"><v>4</v>', '<c r="A1" s="1"><f>2+2</f><v>4</v>'),
    "a formula that goes": ('<c r="C1" t="str"><f>"a"&amp;"b"</f><v>ab</v>', '<c r="C1" t="str"><v>ab</v>'),
    "another formula": ('<f>"a"&amp;"b"</f>', '<f>"a"&amp;"c"</f>'),
    "a cell that goes": ('<c r="D3" t="d"><v>2026-01-01</v></c>', ""),
}


def flat(book_: Book) -> Any:
    """A book's values (with their Python types) and formulas, in order."""
    return ([(k, type(v).__name__, repr(v)) for k, v in book_.values.items()], list(book_.formulas.items()))


def alone(path: Path) -> Any:
    return flat(book_from_view(read_workbook(path)))


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_book_through_the_memo_is_the_book_read_alone(tmp_path: Path, change: str) -> None:
    """Two plans that differ in one cell, read and flattened through one memo in turn: each book is its own (a
    flattening reused where it should not be gives the other plan's value)."""
    old, new = CHANGES[change]
    assert old in ROWS
    a = book(tmp_path, "a.xlsx")
    b = book(tmp_path, "b.xlsx", ROWS.replace(old, new, 1))
    assert alone(a) != alone(b)
    memo = SheetMemo()
    for path in (a, b, a, a, b, b, a):
        got = book_from_view(read_workbook(path, memo=memo), memo=memo)
        assert flat(got) == alone(path), (change, path.name)
    assert memo.bytes == sum(n for _v, n in memo._entries.values())


@pytest.mark.parametrize("floats", [("4.5", "5.25", "9.5", "10.5"), ("4.5", "4.5", "9.5", "1e3"),
                                    ("0.1", "-0.1", "9.5", "9.5")])
def test_numbers_that_stay_numbers(tmp_path: Path, floats: tuple[str, str, str, str]) -> None:
    """The common change of a batch (a float input or cached result that is another float) through the memo."""
    a1, b1, a2, b2 = floats
    rows = ROWS.replace('<c r="A1" s="1"><v>4</v>', '<c r="A1" s="1"><v>{}</v>').replace(
        "A1*2</f><v>8</v>", "A1*2</f><v>{}</v>")
    a = book(tmp_path, "a.xlsx", rows.format(a1, a2))
    b = book(tmp_path, "b.xlsx", rows.format(b1, b2))
    memo = SheetMemo()
    for path in (a, b, b, a, b):
        assert flat(book_from_view(read_workbook(path, memo=memo), memo=memo)) == alone(path), path.name


def test_other_strings_tables_and_sheets(tmp_path: Path) -> None:
    """The same markup with another shared-strings table, another second sheet, then the first plan again."""
    a = book(tmp_path, "a.xlsx")
    b = book(tmp_path, "b.xlsx", strings=["t0", "t1"])
    c = book(tmp_path, "c.xlsx", other='<row r="1"><c r="A1"><v>2</v></c></row>')
    memo = SheetMemo()
    for path in (a, b, c, a, c, b, a):
        assert flat(book_from_view(read_workbook(path, memo=memo), memo=memo)) == alone(path), path.name


def test_the_book_is_the_callers(tmp_path: Path) -> None:
    """A caller that changes its book (recalc writes literal inputs into ``values``) changes nothing kept: the next
    book is its plan's."""
    a = book(tmp_path, "a.xlsx")
    memo = SheetMemo()
    first = book_from_view(read_workbook(a, memo=memo), memo=memo)
    first.values[("S", "A1")] = 123.0
    first.values[("S", "Z9")] = "x"
    first.formulas.clear()
    again = book_from_view(read_workbook(a, memo=memo), memo=memo)
    assert flat(again) == alone(a)
    assert again.values is not first.values and again.formulas is not first.formulas


def test_the_flattening_is_counted_and_bounded(tmp_path: Path) -> None:
    """The kept flattening is one entry, counted; in a memo too small for it nothing is kept and the books are the
    same; views are reused by identity only (a view of the same value from another read is flattened anew)."""
    a = book(tmp_path, "a.xlsx")
    b = book(tmp_path, "b.xlsx", ROWS.replace("<v>ab</v>", "<v>cd</v>"))
    memo = SheetMemo()
    book_from_view(read_workbook(a, memo=memo), memo=memo)
    kept = [(k, n) for k, (_v, n) in memo._entries.items() if k[0] == "flat"]
    assert len(kept) == 1 and kept[0][1] > 0
    book_from_view(read_workbook(b, memo=memo), memo=memo)
    assert len([k for k in memo._entries if k[0] == "flat"]) == 1
    assert memo.bytes == sum(n for _v, n in memo._entries.values())
    tiny = SheetMemo(max_bytes=2_000)
    for path in (a, b, a):
        assert flat(book_from_view(read_workbook(path, memo=tiny), memo=tiny)) == alone(path)
    assert not [k for k in tiny._entries if k[0] == "flat"] and tiny.bytes <= tiny.max_bytes
    # views read without the memo: every cell is a new object, the book still its own
    for path in (a, b, a):
        assert flat(book_from_view(read_workbook(path), memo=memo)) == alone(path)


# A sheet whose markup follows its values (the template's results sheet: t="str" on a cell in one plan, not in the
# next), read through a memo that missed its part before: row by row.
VARIANTS = [
    ROWS,
    ROWS.replace('<c r="A1" s="1"><v>4</v>', '<c r="A1" s="1" t="str"><v>four</v>'),
    ROWS.replace('<c r="B3" t="str"><v>a &amp; b</v>', '<c r="B3"><v>7</v>'),
    ROWS.replace('<c r="A1" s="1"><v>4</v>', '<c r="A1" s="1" t="str"><v>four</v>')
    .replace('<c r="B3" t="str"><v>a &amp; b</v>', '<c r="B3"><v>7</v>'),
]


def test_a_part_read_row_by_row(tmp_path: Path) -> None:
    paths = [book(tmp_path, f"v{i}.xlsx", rows) for i, rows in enumerate(VARIANTS)]
    memo = SheetMemo()
    for path in (*paths, *paths[::-1], paths[2], paths[0]):
        assert outcome(path, memo) == outcome(path), path.name
        assert flat(book_from_view(read_workbook(path, memo=memo), memo=memo)) == alone(path)
    assert [k for k in memo._entries if k[0] == "rows"]  # the row path was taken
    assert memo.bytes == sum(n for _v, n in memo._entries.values())


@pytest.mark.parametrize("rows", [
    # a shared formula whose first cell is in an earlier row: the row alone cannot read it, the whole part can
    ROWS.replace('<c r="C3"/>', '<c r="C3"><f t="shared" si="0"/><v>1</v></c>'),
    # a cell given in two rows: refused whole and by rows (the parser reports it)
    ROWS.replace('<c r="C3"/>', '<c r="A1"><v>1</v></c>'),
    # a comment or a processing instruction between rows, in a row, after the last row; blanks after it
    ROWS.replace('<row r="2">', '<!-- note --><row r="2">'),
    ROWS.replace('<c r="C3"/>', '<?pi x?><c r="C3"/>'),
    ROWS + "<!-- end -->",
    ROWS + "\n  ",
    # an empty row after the last </row>, and before a row
    ROWS + '<row r="9"/>',
    ROWS.replace('<row r="2">', '<row r="4"/><row r="2">'),
    # a value the search refuses in the last row
    ROWS.replace("<v>2026-01-01</v>", "<v>x</v>").replace('t="b"><v>1</v>', 't="b"><v>7</v>'),
])
def test_rows_read_as_the_whole_part(tmp_path: Path, rows: str) -> None:
    """After a miss of its part (other plans of that part seen), a sheet reads as alone: views, plain flag or
    error; and again after its rows were kept."""
    seen = [book(tmp_path, f"v{i}.xlsx", r) for i, r in enumerate(VARIANTS)]
    odd = book(tmp_path, "odd.xlsx", rows)
    memo = SheetMemo()
    for path in (*seen, odd, *seen, odd, odd):
        assert outcome(path, memo) == outcome(path), path.name
    for limits in (Limits(max_cells=14), Limits(max_cells=15), Limits(max_formula_cells=4),
                   Limits(max_formula_cells=5)):
        for path in (*seen, odd):
            assert outcome(path, memo, limits) == outcome(path, limits=limits), (path.name, limits)


def test_comments_in_the_cells_go_to_the_parser(tmp_path: Path) -> None:
    """A comment or processing instruction inside ``<sheetData>``: the part is read by the parser (not plain), the
    values as the parser gives them, with or without a memo."""
    for n, rows in enumerate((ROWS.replace('<row r="2">', '<!-- c --><row r="2">'),
                              ROWS.replace('<c r="C3"/>', '<?x?><c r="C3"/>'),
                              ROWS.replace("<v>8</v>", "<v><![CDATA[8]]></v>"))):
        path = book(tmp_path, f"c{n}.xlsx", rows)
        got = outcome(path)
        assert got[0][0][-1] is False  # not read by search
        cells = dict((k, r) for k, *r in got[0][0][2])
        assert cells["A2"][2] == "8" and cells["A1"][2] == "4"
        memo = SheetMemo()
        for _ in range(3):
            assert outcome(path, memo) == got
    assert ooxml._split_sheet_data(b"<worksheet><!-- c --><sheetData></sheetData></worksheet>") is None
    assert ooxml._split_sheet_data(b"<worksheet><sheetData></sheetData><?pi?></worksheet>") is None


@pytest.mark.parametrize("text", ["sheetData", "a]]>b", "x\x01y", "x\ry", ' p:q="1', "a&lt;b", "ok"])
def test_new_texts_checked_as_the_whole_part(tmp_path: Path, text: str) -> None:
    """A plan whose markup an earlier plan had, but whose new text would keep its part from the search (a second
    ``sheetData``, ``]]>``, a control character or carriage return, an undeclared prefix's pattern): read as alone
    (by the parser, or refused), through the memo."""
    a = book(tmp_path, "a.xlsx")
    b = book(tmp_path, "b.xlsx", ROWS.replace("<v>ab</v>", f"<v>{text}</v>"))
    memo = SheetMemo()
    for path in (a, b, a, b, b):
        assert outcome(path, memo) == outcome(path), (text, path.name)


def _with_head(path: Path, head: str) -> Path:
    """``path`` with its first sheet's head (the part up to ``<sheetData>``) replaced."""
    with zipfile.ZipFile(path) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    xml = parts["xl/worksheets/sheet1.xml"].decode()
    parts["xl/worksheets/sheet1.xml"] = (head + xml[xml.index("<sheetData>"):]).encode()
    out = path.with_name("h-" + path.name)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for n, data in parts.items():
            z.writestr(n, data)
    return out


def test_prefixes_of_the_markup_declared_in_each_part(tmp_path: Path) -> None:
    """A region whose markup uses a prefixed attribute, served from the memo to a part whose root element does not
    declare the prefix: refused as alone (the parser reports the unbound prefix)."""
    rows = ROWS.replace('<row r="2">', '<row r="2" x14ac:dyDescent="0.25">')
    declared = _HEAD.replace("<worksheet ", '<worksheet xmlns:x14ac="http://schemas.microsoft.com/office/'
                             'spreadsheetml/2009/9/ac" ')
    a = _with_head(book(tmp_path, "a.xlsx", rows), declared)
    b = _with_head(book(tmp_path, "b.xlsx", rows.replace("<v>ab</v>", "<v>cd</v>")), _HEAD)
    assert outcome(a)[0][0][-1] is True and outcome(b)[0] == "error"
    memo = SheetMemo()
    for path in (a, b, a, b):
        assert outcome(path, memo) == outcome(path), path.name
