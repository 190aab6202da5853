"""A :class:`planner.ooxml.SheetMemo` changes no view: a workbook read through a memo that saw others (same markup
with other values, other strings, other limits, values that do not convert) gives exactly what it gives read alone,
views with their Python types or the same error."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import pytest

from planner import ooxml
from planner.ooxml import NS_MAIN, Limits, SheetMemo, read_workbook

ROOT = Path(__file__).resolve().parents[1]

_CT = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/'
       'package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
       'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/></Types>')
_ROOT_RELS = ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
              '2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/'
              '2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>')
_WB = ('<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="' + NS_MAIN + '" xmlns:r="http://schemas.'
       'openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="S" sheetId="1" r:id="rId1"/>'
       '<sheet name="T" sheetId="2" r:id="rId2"/></sheets></workbook>')
_REL = ('<Relationship Id="{}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/{}" '
        'Target="{}"/>')
_WB_RELS = ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
            '2006/relationships">' + _REL.format("rId1", "worksheet", "worksheets/sheet1.xml")
            + _REL.format("rId2", "worksheet", "worksheets/sheet2.xml")
            + _REL.format("rId3", "sharedStrings", "sharedStrings.xml") + '</Relationships>')
_HEAD = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="' + NS_MAIN + '"><dimension '
         'ref="A1:E3"/>')
_TAIL = ('<conditionalFormatting sqref="A1:A3"><cfRule type="expression" priority="1"><formula>A1&gt;3</formula>'
         '</cfRule></conditionalFormatting><dataValidations count="1"><dataValidation type="list" sqref="A1">'
         '<formula1>"a,b"</formula1></dataValidation></dataValidations></worksheet>')
ROWS = ('<row r="1"><c r="A1" s="1"><v>4</v></c><c r="B1" t="s"><v>0</v></c><c r="C1" t="str"><f>"a"&amp;"b"</f>'
        '<v>ab</v></c><c r="D1" t="inlineStr"><is><t>x</t></is></c><c r="E1" t="b"><v>1</v></c></row>'
        '<row r="2"><c r="A2"><f t="shared" ref="A2:C2" si="0">A1*2</f><v>8</v></c><c r="B2"><f t="shared" si="0"/>'
        '<v>0</v></c><c r="C2"><f t="shared" si="0"/><v></v></c><c r="D2" t="e"><v>#N/A</v></c><c r="E2"><f '
        't="array" ref="E2:E3">A1:A2</f><v>4</v></c></row>'
        '<row r="3"><c r="A3" t="inlineStr"><v>9</v><is><t xml:space="preserve"> y </t></is></c><c r="B3" t="str">'
        '<v>a &amp; b</v></c><c r="C3"/><c r="D3" t="d"><v>2026-01-01</v></c><c r="E3" t="n"><v/></c></row>')
OTHER = '<row r="1"><c r="A1"><v>1</v></c><c r="B1" t="inlineStr"><is><t>t</t></is></c></row>'
STRINGS = ["s0", "s1"]


def book(folder: Path, name: str, rows: str = ROWS, *, strings: list[str] = STRINGS, tail: str = _TAIL,
         other: str = OTHER) -> Path:
    """A two-sheet workbook: sheet S holds ``rows``, sheet T ``other``, with these shared strings."""
    sst = ('<?xml version="1.0" encoding="UTF-8"?><sst xmlns="' + NS_MAIN + '">'
           + "".join(f"<si><t>{s}</t></si>" for s in strings) + "</sst>")
    path = folder / name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for part, data in (("[Content_Types].xml", _CT), ("_rels/.rels", _ROOT_RELS), ("xl/workbook.xml", _WB),
                           ("xl/_rels/workbook.xml.rels", _WB_RELS), ("xl/sharedStrings.xml", sst),
                           ("xl/worksheets/sheet1.xml", _HEAD + "<sheetData>" + rows + "</sheetData>" + tail),
                           ("xl/worksheets/sheet2.xml", _HEAD + "<sheetData>" + other + "</sheetData>" + tail)):
            z.writestr(part, data)
    return path


def outcome(path: Path, memo: SheetMemo | None = None, limits: Limits = ooxml.DEFAULT_LIMITS) -> Any:
    """Everything a read gives, every value with its Python type; or the error, its kind, part and sheet."""
    try:
        v = read_workbook(path, limits, memo=memo)
    except ooxml.WorkbookError as exc:
        return ("error", exc.kind, exc.part, exc.sheet, str(exc))
    return [(s.name, s.part, [(k, c.ref, type(c.value).__name__, repr(c.value), c.type, c.formula, c.array_ref,
                               c.formula_kind) for k, c in s.cells.items()],
             s.dimension, s.data_validations, s.tables, s.state, s.max_row, s.max_col, s.rule_formulas, s.plain)
            for s in v.sheets], v.defined_names, v.parts


def test_a_plan_read_twice_through_a_memo(tmp_path: Path) -> None:
    a = book(tmp_path, "a.xlsx")
    memo = SheetMemo()
    alone = outcome(a)
    assert alone[0][0][-1] is True  # read by search: what the memo works on
    assert outcome(a, memo) == alone and (memo.hits, memo.misses) == (0, 2)
    assert outcome(a, memo) == alone and (memo.hits, memo.misses) == (2, 2)
    cells = read_workbook(a, memo=memo).sheet("S").cells
    assert cells["A1"].value == 4 and type(cells["A1"].value) is int and cells["B1"].value == "s0"
    assert cells["C2"].formula == "C1*2" and cells["C2"].value is None and cells["A3"].value == " y "
    assert cells["B3"].value == "a & b" and cells["E2"].array_ref == "E2:E3" and cells["E3"].value is None


@pytest.mark.parametrize(("rows", "strings", "how"), [
    # other values in the same markup: converted as without the memo
    (ROWS.replace("<v>4</v></c><c r=\"B1\"", "<v>4.0</v></c><c r=\"B1\""), STRINGS, True),  # an int becomes a float
    (ROWS.replace("<v>8</v>", "<v>1E5</v>").replace("<v>0</v></c><c r=\"C2\"", "<v>-.5</v></c><c r=\"C2\""),
     STRINGS, True),
    (ROWS.replace("<v>8</v>", "<v>+3</v>").replace("<v></v>", "<v>7</v>"), STRINGS, True),  # empty <v> filled
    (ROWS.replace("<v>8</v>", "<v></v>"), STRINGS, True),  # a value emptied
    (ROWS.replace("<v>ab</v>", '<v>a"b&gt;c &amp;amp;</v>'), STRINGS, True),  # entities in a text value
    (ROWS.replace("<v>#N/A</v>", "<v>#DIV/0!</v>").replace("<v>2026-01-01</v>", "<v>x</v>"), STRINGS, True),
    (ROWS, ["other", "table"], True),  # another strings table: B1 is this workbook's string 0
    (ROWS.replace('t="s"><v>0</v>', 't="s"><v>1</v>'), STRINGS, True),
    (ROWS.replace('t="s"><v>0</v>', 't="s"><v> 1</v>'), STRINGS, True),  # read as the parser reads it
    (ROWS.replace("<t>x</t>", "<t>x &amp; z</t>").replace(" y </t>", "</t>"), STRINGS, True),  # inline texts
    (ROWS.replace("<v>9</v>", "<v>&amp;</v>"), STRINGS, True),  # an inline string's <v> is checked, not used
    # values the conversion refuses: the parser reads the part and says why, as without the memo
    (ROWS.replace("<v>4</v></c><c r=\"B1\"", "<v>4_00</v></c><c r=\"B1\""), STRINGS, "refused"),
    (ROWS.replace('t="s"><v>0</v>', 't="s"><v>2</v>'), STRINGS, "refused"),  # index past this workbook's strings
    (ROWS, [], "refused"),  # no strings at all
    (ROWS.replace("<v>a &amp; b</v>", "<v>a &bogus; b</v>"), STRINGS, "refused"),  # an undefined entity
    (ROWS.replace("<v>a &amp; b</v>", "<v>&#65;</v>"), STRINGS, "parser"),  # a character reference: read there
    (ROWS.replace("<t>x</t>", "<t>&bogus;</t>"), STRINGS, "refused"),  # ... in an inline text
    (ROWS.replace("<v>9</v>", "<v>&bogus;</v>"), STRINGS, "refused"),  # ... in an inline string's <v>
    (ROWS.replace('t="b"><v>1</v>', 't="b"><v>2</v>'), STRINGS, "refused"),  # a flag that is not 0/1
    (ROWS.replace("<v>8</v>", "<v>1e</v>"), STRINGS, "refused"),
    (ROWS.replace("<v>8</v>", "<v> 8</v>"), STRINGS, "refused"),
    # other markup: another skeleton, read in full
    (ROWS.replace(">A1*2<", ">A1*3<"), STRINGS, False),  # another shared formula
    (ROWS.replace("<v>8</v>", "<v>1<2</v>"), STRINGS, False),  # not well-formed
    (ROWS.replace("<v>8</v>", "<v>8</v><v>9</v>"), STRINGS, False),  # two values
    (ROWS.replace("<v>8</v>", "<v>8</v></c><c r=\"A2\"><v>9</v>"), STRINGS, False),  # a duplicate cell
    (ROWS.replace('<c r="C3"/>', '<c r="C3" t="str"><v>s</v></c>'), STRINGS, False),
    (ROWS.replace("<v>4</v>", "<v>4</v><is><t>i</t></is>"), STRINGS, False),  # an inline text in a number cell
])
def test_a_memo_that_saw_another_plan(tmp_path: Path, rows: str, strings: list[str], how: bool | str) -> None:
    """``how``: True, sheet S has plan A's markup and is read from the memo; "parser" and "refused", the same but a
    text the conversion refuses: the parser then reads the part, or refuses it (sheet T is then not read); False, S
    has other markup and is read in full (or refused) as without the memo."""
    a, b = book(tmp_path, "a.xlsx"), book(tmp_path, "b.xlsx", rows, strings=strings)
    memo = SheetMemo()
    outcome(a, memo)
    hits = memo.hits
    want = outcome(b)
    assert outcome(b, memo) == want
    if how is not False:  # (other markup may be read or refused)
        assert (want[0] == "error") == (how == "refused")
        assert how == "refused" or want[0][0][-1] == (how is True)  # plain: sheet S read by search
    t_read = want[0] != "error"  # sheet T (the same in both) is read after S unless S is refused
    assert memo.hits - hits == (how in (True, "parser", "refused")) + t_read
    assert outcome(a, memo) == outcome(a)  # and the first plan again, after the second


def test_limits_are_this_reads(tmp_path: Path) -> None:
    a = book(tmp_path, "a.xlsx")
    for limits in (Limits(max_cells=13), Limits(max_formula_cells=4), Limits(max_cells=14, max_formula_cells=5)):
        memo = SheetMemo()
        outcome(a, memo)
        assert outcome(a, memo, limits) == outcome(a, limits=limits)
        assert memo.hits >= 1
    tight = Limits(max_cells=13)
    assert outcome(a, limits=tight)[0] == "error"  # 14 cells on sheet S
    memo = SheetMemo()
    assert outcome(a, memo, tight) == outcome(a, limits=tight)  # a refused read keeps nothing
    assert outcome(a, memo) == outcome(a)


def test_heads_by_their_bytes(tmp_path: Path) -> None:
    """The head (all of a part but its cells) read once: another head is read in full; the rule formulas and data
    validations are this workbook's."""
    a = book(tmp_path, "a.xlsx")
    tail = _TAIL.replace('count="1"><dataValidation', 'count="2"><dataValidation type="whole" sqref="B1"><formula1>'
                         '1</formula1></dataValidation><dataValidation')
    b = book(tmp_path, "b.xlsx", tail=tail)
    memo = SheetMemo()
    for path in (a, b, a, b):
        assert outcome(path, memo) == outcome(path)
    sheet = read_workbook(b, memo=memo).sheet("S")
    assert sheet.data_validations == 2 and ("B1", "1") in sheet.rule_formulas and ("A1:A3", "A1>3") in \
        sheet.rule_formulas


def test_every_workbook_in_one_memo(tmp_path: Path) -> None:
    """The samples, the test workbooks and their refusals, read through one memo in two orders (and with a budget
    that drops entries as it goes), as read alone."""
    books = sorted(p for d in ("samples", "tests/data") for p in (ROOT / d).rglob("*.xls[xm]") if p.is_file())
    assert len(books) > 50
    alone = {p: outcome(p) for p in books}
    for order in (books, books[::-1]):
        for budget in (ooxml.SHEET_MEMO_BYTES, 1 << 18):
            memo = SheetMemo(max_bytes=budget)
            assert [p for p in order if outcome(p, memo) != alone[p]] == []
            assert memo.bytes <= budget
        assert memo.hits > 0


def test_the_budget(tmp_path: Path) -> None:
    paths = [book(tmp_path, f"{i}.xlsx", ROWS.replace(">A1*2<", f">A1*{i}<")) for i in range(6)]
    memo = SheetMemo()
    for p in paths:
        outcome(p, memo)
    sizes = [n for _v, n in memo._entries.values()]
    one = max(sizes)
    small = SheetMemo(max_bytes=one * 3)
    for p in paths:
        assert outcome(p, small) == outcome(p)
        assert small.bytes <= small.max_bytes and small.bytes == sum(n for _v, n in small._entries.values())
    assert len(small) < len(memo)
    assert outcome(paths[-1], small) == outcome(paths[-1]) and small.hits >= 2  # the newest entries are kept
    tiny = SheetMemo(max_bytes=100)  # no entry fits: nothing kept, every read in full
    assert outcome(paths[0], tiny) == outcome(paths[0]) and len(tiny) == 0 and tiny.bytes == 0
    small.clear()
    assert len(small) == 0 and small.bytes == 0


def test_a_read_without_a_memo_never_uses_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = book(tmp_path, "a.xlsx")
    want = outcome(a)

    def refuse(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("no memo here")

    for name in ("cells", "head", "remember_head"):
        monkeypatch.setattr(SheetMemo, name, refuse)
    assert outcome(a) == want


def test_slots_must_be_cells_values() -> None:
    """A region cut into slots that are not one value and one inline text of a cell each is never kept."""
    region = '<row r="1"><c r="A1"><v>1</v></c><c r="B1" t="inlineStr"><v>2</v><is><t>x</t></is></c></row>'
    found = ooxml._cells_by_search(region, [], ooxml.DEFAULT_LIMITS)
    assert found is not None
    parts = ooxml._SLOT.split(region)
    del parts[2::3]
    skeleton = ooxml._skeleton(parts, found, 3)
    assert skeleton is not None and [s[5:] for s in skeleton.slotted] == [(0, -1), (1, 2)]
    assert ooxml._skeleton(parts, found, 4) is None  # a start tag that is not a slot
    two = list(parts)
    two[5] = "<v>"  # a second <v> in cell B1
    assert ooxml._skeleton(two, found, 3) is None
    stray = list(parts)
    stray[2] = stray[2].replace('<c r="B1"', '<c r="Z9"')  # a slot in a cell that was not read
    assert ooxml._skeleton(stray, found, 3) is None


def test_the_batch_worker_keeps_one_memo(tmp_path: Path) -> None:
    """``planner validate``'s worker validates each plan through its memo: the same report as alone."""
    from planner.validate.batch import _validate_one, memo_bytes
    from planner.validate.checks import validate_file

    plan = ROOT / "samples" / "seed.xlsm"
    memo = SheetMemo(max_bytes=memo_bytes(1024))
    first, _ = _validate_one(str(plan), memo)
    again, _ = _validate_one(str(plan), memo)
    assert first == again == validate_file(str(plan)).to_wire()
    assert memo.hits > 0 and memo_bytes(1024) == 32 * 2**20 and memo_bytes(40) == 40 * 2**20 // 32


def test_views_kept_from_the_last_sighting(tmp_path: Path) -> None:
    """A cell whose texts are the last sighting's gets that view again; a read refused half-way leaves no view to
    reuse; a shared string is built from this workbook's strings each time; the entry's size follows its texts."""
    a = book(tmp_path, "a.xlsx")
    b = book(tmp_path, "b.xlsx", ROWS.replace("<v>4</v></c><c r=\"B1\"", "<v>5</v></c><c r=\"B1\""))
    late = book(tmp_path, "late.xlsx", ROWS.replace("<v>4</v></c><c r=\"B1\"", "<v>5</v></c><c r=\"B1\"")
                .replace("<v>2026-01-01</v>", "<v>x</v>").replace('t="b"><v>1</v>', 't="b"><v>7</v>'))
    c = book(tmp_path, "c.xlsx", strings=["c0", "c1"])
    memo = SheetMemo()
    for path in (a, b, a, a, late, a, b, c, a, c, late, late, b):
        assert outcome(path, memo) == outcome(path), path.name
    huge = book(tmp_path, "huge.xlsx", ROWS.replace("<v>ab</v>", f"<v>{'z' * 50_000}</v>")
                .replace('t="b"><v>1</v>', 't="b"><v>7</v>'))  # a long text built, then a refusal
    counted = memo.bytes
    assert outcome(huge, memo) == outcome(huge)
    assert memo.bytes <= counted  # what the refused read built is dropped, not kept uncounted
    refused = [e for (kind, *_k), (e, _n) in memo._entries.items() if kind == "cells" and e.last_texts is None]
    assert len(refused) == 1 and refused[0].last_views == {} and refused[0].reuse_bytes == 0
    assert memo.bytes == sum(n for _v, n in memo._entries.values())
    first = read_workbook(a, memo=memo).sheet("S").cells
    again = read_workbook(a, memo=memo).sheet("S").cells
    assert again["A1"] is first["A1"] and again["B1"] is not first["B1"]  # a number kept, a shared string built
    long = "y" * 100_000
    big = book(tmp_path, "big.xlsx", ROWS.replace("<v>ab</v>", f"<v>{long}</v>"))
    before = memo.bytes
    cells_before = sum(n for (kind, *_k), (_v, n) in memo._entries.items() if kind == "cells")
    assert read_workbook(big, memo=memo).sheet("S").cells["C1"].value == long
    cells_after = sum(n for (kind, *_k), (_v, n) in memo._entries.items() if kind == "cells")
    # (the skeleton's entry; the parts' stored bytes, kept too, are another plan's now)
    assert cells_after - cells_before >= 3 * (len(long) - 100)
    assert memo.bytes == sum(n for _v, n in memo._entries.values())
    small = SheetMemo(max_bytes=memo.bytes - before)  # room for the entry with short texts only
    outcome(a, small)
    n = len(small)
    assert outcome(big, small) == outcome(big) and len(small) < n  # grown past the budget: dropped
    assert small.bytes == sum(n for _v, n in small._entries.values()) <= small.max_bytes
