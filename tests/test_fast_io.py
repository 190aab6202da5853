"""The faster reader and writer give the same results as the general code: the cell views built without the frozen
dataclass's ``__setattr__`` equal the dataclass's own, and the writer that jumps from one ``<c`` to the next writes
the same bytes as the lexer over every tag (or hands the part to it when the part is not in the plain form)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from planner import ooxml
from planner.ooxml import NS_MAIN, CellView, _cell_view, patch_sheet_xml
from planner.recalc import compute

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = sorted((ROOT / "samples").glob("*.xlsm"))


def test_cell_view_equals_the_dataclass() -> None:
    a = CellView(ref="B3", value=2.5, type="n", formula="A1*2", array_ref=None, formula_kind="normal")
    b = _cell_view("B3", 2.5, "n", "A1*2", None, "normal")
    assert a == b and hash(a) == hash(b) and repr(a) == repr(b) and type(b) is CellView
    with pytest.raises(AttributeError):
        b.value = 3  # type: ignore[misc]  # still frozen


def _general(xml: bytes, values: dict[str, object], monkeypatch: pytest.MonkeyPatch) -> tuple[bytes, set[str]]:
    with monkeypatch.context() as m:
        m.setattr(ooxml, "_patch_cells_by_search", lambda _x, _w: None)
        return patch_sheet_xml(xml, values)


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_search_writer_writes_the_lexers_bytes_on_samples(sample: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = compute(sample)
    with zipfile.ZipFile(sample) as z:
        for sheet in result.view.sheets:
            values = {c: v for (s, c), v in result.values.items() if s == sheet.name}
            xml = z.read(sheet.part)
            want = {k.upper(): v for k, v in values.items()}
            fast = ooxml._patch_cells_by_search(xml, want)
            assert fast is not None, f"{sheet.name}: the template's sheets are in the plain form"
            assert fast == _general(xml, values, monkeypatch), sheet.name


SHEET = (b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="' + NS_MAIN.encode()
         + b'" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheetData>'
         b'<row r="1"><c r="A1" s="1"><f>1+1</f><v>0</v></c><c r="B1" t="s"><v>0</v></c><c r="C1"><f>A1</f></c>'
         b'<c r="D1"/></row><row r="2"><c r="A2" t="str"><f>"x"</f><v>x</v></c></row></sheetData>'
         b'<cols><col min="1" max="2"/></cols></worksheet>')


def test_search_writer_on_a_plain_sheet(monkeypatch: pytest.MonkeyPatch) -> None:
    values = {"A1": 2.0, "C1": "text & <more>", "D1": True, "A2": "y", "Z9": 1.0}
    fast = ooxml._patch_cells_by_search(SHEET, {k: v for k, v in values.items()})
    assert fast is not None
    assert fast == _general(SHEET, values, monkeypatch)
    new, missing = fast
    assert missing == {"Z9"}
    assert b'<c r="A1" s="1"><f>1+1</f><v>2</v></c>' in new and b"<v>text &amp; &lt;more&gt;</v>" in new


@pytest.mark.parametrize("change", [
    (b"<sheetData>", b"<!-- <c r=\"A1\"> --><sheetData>"),  # a comment
    (b"<sheetData>", b"<sheetData><![CDATA[x]]>"),  # CDATA
    (b'<c r="C1">', b"<c>"),  # a cell without r: its address depends on what comes before
    (b'<c r="D1"/>', b'<c r="D1" xmlns="urn:other"/>'),  # a second default namespace
    (b'<c r="D1"/>', b'<x:c xmlns:x="' + NS_MAIN.encode() + b'" r="D1"/>'),  # a prefixed cell
])
def test_search_writer_hands_other_forms_to_the_lexer(change: tuple[bytes, bytes],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    xml = SHEET.replace(*change)
    assert xml != SHEET
    assert ooxml._patch_cells_by_search(xml, {"A1": 2.0}) is None
    assert patch_sheet_xml(xml, {"A1": 2.0}) == _general(xml, {"A1": 2.0}, monkeypatch)


CELL_FORMS = [  # (cell bytes, wanted?) in the forms writers give, plain and not
    b'<c r="A1" s="1"><f>1+1</f><v>0</v></c>',
    b'<c r="B1" t="str" s="2"><f>"a"&amp;"b"</f><v>ab</v></c>',
    b'<c r="C1" s="2" t="e"><f>1/0</f><v>#DIV/0!</v></c>',
    b'<c r="D1" t="b"/>',
    b'<c r="E1"><f>A1</f><v/></c>',
    b'<c r="F1"><f>A1</f><v /></c>',  # openpyxl's self-closing <v />: not plain, the general rebuild
    b'<c r="G1" t="n" cm="1"><f t="array" ref="G1">A1:A2</f><v>1</v></c>',
    b'<c r="H1"><f t="shared" ref="H1:H2" si="0">A1*2</f><v>2</v></c>',
    b'<c r="H2"><f t="shared" si="0"/><v>2</v></c>',
    b'<c s="3" r="I1"><f>1</f><v>1</v></c>',  # r not first: not plain
    b'<c r="J1" ph="x t=1"><f>1</f></c>',  # "=" in a value: not plain
    b'<c r="K1" s="1" ><f>1</f></c>',  # space before ">": not plain
    b'<c r="L1" t="inlineStr"><is><t>hi</t></is></c>',  # inline string: not plain
    b'<c r="M1" t="s"><v>0</v></c>',
    b'<c r="N1"/>',
    b'<c r="O1" s="1"><f>1</f><v>1</v><extLst/></c>',  # another child: not plain
]
VALUES = [2.0, 3, -0.0, 1e20, 0.1, float("nan"), float("inf"), True, False, None, "text & <more> = \"q\"",
          "#N/A", "", "x\x01y"]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_plain_cells_rebuilt_as_the_general_rebuild(value: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every cell form above, given each kind of value: the search writer (plain cells in one match) writes the
    lexer's bytes; the cells left out (M1) keep theirs."""
    sheet = (b'<worksheet xmlns="' + NS_MAIN.encode() + b'"><sheetData><row r="1">' + b"".join(CELL_FORMS)
             + b"</row></sheetData></worksheet>")
    refs = [c.split(b'r="')[1].split(b'"')[0].decode() for c in CELL_FORMS]
    values = {r: value for r in refs if r != "M1"}
    fast = ooxml._patch_cells_by_search(sheet, dict(values))
    assert fast is not None and fast[1] == set()
    assert fast == _general(sheet, values, monkeypatch)
    assert b'<c r="M1" t="s"><v>0</v></c>' in fast[0]
    plain = [c for c in CELL_FORMS if ooxml._PLAIN_CELL.fullmatch(c)]
    assert len(plain) == 10  # the fast form is really taken (A1-E1, G1, H1, H2, M1, N1)


def test_plain_cells_on_generated_plans(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A benchmark plan (every route filled): each sheet patched with its recomputed values, the same bytes as the
    lexer's."""
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from bench_validate import generate
    finally:
        sys.path.pop(0)
    (plan,) = generate(tmp_path, 1)
    result = compute(plan)
    with zipfile.ZipFile(plan) as z:
        for sheet in result.view.sheets:
            values = {c: v for (s, c), v in result.values.items() if s == sheet.name}
            xml = z.read(sheet.part)
            fast = ooxml._patch_cells_by_search(xml, {k.upper(): v for k, v in values.items()})
            assert fast is not None and fast == _general(xml, values, monkeypatch), sheet.name


def _read_both(path: Path) -> tuple[object, object]:
    """``read_workbook`` with the cells read by search where the part allows, and by the XML parser only: each a
    view, or the error's (kind, message)."""
    def outcome() -> object:
        try:
            return ooxml.read_workbook(path)
        except ooxml.WorkbookError as exc:
            return ("error", exc.kind, str(exc))

    fast = outcome()
    orig = ooxml._split_sheet_data
    ooxml._split_sheet_data = lambda _data: None  # type: ignore[assignment]
    try:
        parsed = outcome()
    finally:
        ooxml._split_sheet_data = orig
    return fast, parsed


def _searchable(xml: bytes) -> bool:
    split = ooxml._split_sheet_data(xml)
    return split is not None and ooxml._cells_by_search(split[1], [], ooxml.DEFAULT_LIMITS) is not None


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_reader_by_search_reads_what_the_parser_reads_on_samples(sample: Path) -> None:
    fast, parsed = _read_both(sample)
    assert fast == parsed
    with zipfile.ZipFile(sample) as z:
        sheets = [n for n in z.namelist() if n.startswith("xl/worksheets/sheet")]
        assert sheets and all(_searchable(z.read(n)) for n in sheets if b't="s"' not in z.read(n))


def test_reader_by_search_on_a_generated_plan(tmp_path: Path) -> None:
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from bench_validate import generate
    finally:
        sys.path.pop(0)
    (plan,) = generate(tmp_path, 1)
    fast, parsed = _read_both(plan)
    assert fast == parsed
    with zipfile.ZipFile(plan) as z:
        assert all(_searchable(z.read(n)) for n in z.namelist() if n.startswith("xl/worksheets/sheet"))


_CT = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/'
       'package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
       'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/></Types>')
_ROOT_RELS = ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
              '2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/'
              '2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>')
_WB = ('<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="' + NS_MAIN + '" xmlns:r="http://schemas.'
       'openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="S" sheetId="1" r:id="rId1"/>'
       '</sheets></workbook>')
_WB_RELS = ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
            '2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/'
            '2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>')
_HEAD = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="' + NS_MAIN + '" xmlns:x14ac='
         '"http://schemas.microsoft.com/office/spreadsheetml/2009/9/ac"><dimension ref="A1:C3"/>')
_TAIL = ('<dataValidations count="1"><dataValidation type="list" sqref="A1"><formula1>"a,b"</formula1>'
         '</dataValidation></dataValidations></worksheet>')
_ROWS = ('<row r="1" spans="1:3" x14ac:dyDescent="0.25"><c r="A1" s="1" t="n"><v>4</v></c>'
         '<c r="B1" t="str"><f>"a"&amp;"&lt;b&gt;"</f><v>a&lt;b&gt;</v></c><c r="C1" t="inlineStr"><is><t '
         'xml:space="preserve"> x &amp; y </t></is></c></row><row r="2"/><row r="3"><c r="A3" t="b"><v>1</v></c>'
         '<c r="B3"><f t="shared" ref="B3:C3" si="0">A3*2</f><v>2</v></c><c r="C3"><f t="shared" si="0"/><v>2</v>'
         '</c><c r="D3" t="e" /><c r="E3"><f t="array" ref="E3:E4">A1:A2</f><v></v></c></row>')


@pytest.mark.parametrize(("rows", "searched"), [
    (_ROWS, True),
    ("\n  " + _ROWS.replace("<c ", "\n    <c ").replace("</row>", "\n  </row>") + "\n", True),  # indented
    (_ROWS.replace("<v>4</v>", "<v>&#52;</v>"), False),  # a character reference: the parser
    (_ROWS.replace("<v>4</v>", "<v>&nbsp;</v>"), False),  # an undefined entity: the parser's error
    (_ROWS.replace(" x &amp; y ", " x \r\n y "), False),  # a carriage return: the parser normalises it
    (_ROWS.replace("<v>4</v>", "<v>4\x01</v>"), False),  # a character XML refuses: the parser's error
    (_ROWS.replace('s="1" t="n"', 's="1" t="n" t="s"'), False),  # an attribute twice: the parser's error
    (_ROWS.replace('s="1" t="n"', 's="1" r="A1"'), False),  # r twice
    (_ROWS.replace('spans="1:3"', 'spans="1:3" spans="1:4"'), False),
    (_ROWS.replace('s="1" t="n"', 's="1" q:z="1"'), False),  # an undeclared prefix: the parser's error
    (_ROWS.replace('s="1" t="n"', 's="1" t="q"'), False),  # an unknown type: the parser's finding
    (_ROWS.replace('<v>4</v>', '<v>4_00</v>'), False),  # not a number: the parser's finding
    (_ROWS.replace('<c r="A3"', '<c r="A1"'), False),  # a duplicate cell
    (_ROWS.replace('<c r="A3"', '<c r="XFE3"'), False),  # off the grid
    (_ROWS.replace('<row r="2"/>', '<row r="0"/>'), False),  # a row off the grid
    (_ROWS.replace("<v>4</v>", "<v>4</v><extLst/>"), False),  # another child
    (_ROWS.replace('<c r="A1" s="1" t="n">', '<c s="1" r="A1" t="n">'), False),  # r not first
    (_ROWS.replace("<t \nxml", "<t xml"), True),
    (_ROWS.replace('t="inlineStr"><is><t xml:space="preserve"> x &amp; y </t></is>',
                   't="inlineStr"><is><r><t>x</t></r><r><rPr><b/></rPr><t>y</t></r></is>'), False),  # rich text
    (_ROWS.replace('<f t="shared" si="0"/>', '<f t="shared" si="9"/>'), False),  # an undefined shared formula
    (_ROWS.replace("</row>", "</row><!-- c -->", 1), False),  # a comment
    (_ROWS.replace("</row>", "</rows>", 1), False),  # not well-formed
    (_ROWS + "<row>", False),
    (_ROWS.replace("</c><c r=\"B1\"", "</c>x<c r=\"B1\""), False),  # text between two cells
    (_ROWS.replace("</c><c r=\"B1\"", "</c> \n x<c r=\"B1\""), False),  # text after blanks between two cells
    (_ROWS.replace("</c></row>", "</c>x</row>", 1), False),  # text after a row's last cell
    (_ROWS.replace("</c></row>", "</c> \n </row>", 1), True),  # blanks after a row's last cell
    (_ROWS.replace('<row r="2"/>', '<row r="2"><row r="4"></row></row>'), False),  # a row inside a row
    (_ROWS.replace('<row r="2"/>', '<c r="A2"><v>1</v></c>'), False),  # a cell outside a row
    (_ROWS.replace('<row r="2"/>', '<row r="2"><c r="A2"><v>1</v></c>'), False),  # a row without its end
    (_ROWS.replace("<v>4</v>", "<v>4</v><v>5</v>"), False),  # two values
])
def test_reader_by_search_or_by_the_parser(tmp_path: Path, rows: str, searched: bool) -> None:
    """A sheet in the common form is read by search, anything else by the parser, with the same result: the same
    view, or the same error."""
    xml = (_HEAD + "<sheetData>" + rows.replace("<t \nxml", "<t xml") + "</sheetData>" + _TAIL).encode()
    path = tmp_path / "s.xlsx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in (("[Content_Types].xml", _CT), ("_rels/.rels", _ROOT_RELS), ("xl/workbook.xml", _WB),
                           ("xl/_rels/workbook.xml.rels", _WB_RELS), ("xl/worksheets/sheet1.xml", xml)):
            z.writestr(name, data)
    assert _searchable(xml) is searched
    fast, parsed = _read_both(path)
    assert fast == parsed
    if searched:
        cells = fast.sheet("S").cells  # type: ignore[union-attr]
        assert cells["B1"].formula == '"a"&"<b>"' and cells["B1"].value == "a<b>"
        assert cells["C1"].value == " x & y " and cells["C3"].formula == "B3*2" and cells["E3"].array_ref == "E3:E4"
        assert cells["A3"].value is True and cells["D3"].value is None and cells["A1"].value == 4
        assert fast.sheet("S").data_validations == 1  # type: ignore[union-attr]


@pytest.mark.parametrize("cell", [
    '<c r="A1" t="inlineStr"><is><t></t></is></c>',  # an empty inline string: ""
    '<c r="A1" t="inlineStr"></c>',  # no inline string: None
    '<c r="A1" t="inlineStr"><is><t xml:space="preserve"></t></is></c>',
    '<c r="A1" t="inlineStr"><v>1</v></c>',
    '<c r="A1" t="str"><f/><v>x</v></c>',  # a formula without text or attributes
    '<c r="A1" t="str"><f></f><v></v></c>',
    '<c r="A1" t="str"><f>"a"</f><v /></c>',
    '<c r="A1"><f t="array" ref="A1:A2">B1:B2</f><v>1</v></c>',
    '<c r="A1"><f t="array">B1</f><v>1</v></c>',  # an array formula without ref: its own cell
    '<c r="A1"><f t="shared" si="0">B1</f><v>1</v></c><c r="A2"><f t="shared" si="0"/><v>1</v></c>',
    '<c r="A1"><f t="shared" si="0" ref="A1:A2">B1</f></c><c r="A2"><f t="shared" si="0" ref="A1:A2"/></c>',
    '<c r="A1" s="2"/><c r="B1" s="2" />',
    '<c r="A1" t="n"><v>12345678901234567890</v></c><c r="B1"><v>1e3</v></c><c r="C1"><v>-0.5</v></c>',
])
def test_reader_by_search_on_each_cell_form(tmp_path: Path, cell: str) -> None:
    """Each form of a cell the search reads gives the parser's view (an element present but empty is not an
    element absent: ``<is><t></t></is>`` is the empty string, no ``<is>`` no value)."""
    xml = (_HEAD + "<sheetData><row r=\"1\">" + cell + "</row></sheetData>" + _TAIL).encode()
    path = tmp_path / "s.xlsx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in (("[Content_Types].xml", _CT), ("_rels/.rels", _ROOT_RELS), ("xl/workbook.xml", _WB),
                           ("xl/_rels/workbook.xml.rels", _WB_RELS), ("xl/worksheets/sheet1.xml", xml)):
            z.writestr(name, data)
    assert _searchable(xml)
    fast, parsed = _read_both(path)
    assert fast == parsed
    assert fast.sheet("S").plain  # type: ignore[union-attr]


def test_a_big_sheet_goes_to_the_parser() -> None:
    """Past SEARCH_MAX_PART_BYTES the parser reads the part (it reaches the memory limit sooner on huge sheets)."""
    def sheet(rows: int) -> bytes:
        cells = "".join(f'<row r="{r}"><c r="A{r}"><v>{r}</v></c></row>' for r in range(1, rows + 1))
        return (_HEAD + "<sheetData>" + cells + "</sheetData>" + _TAIL).encode()

    small, big = sheet(1000), sheet(70_000)
    assert len(small) < ooxml.SEARCH_MAX_PART_BYTES < len(big)
    assert _searchable(small) and ooxml._split_sheet_data(big) is None


def _jump_cases(plan: Path) -> list[tuple[str, bytes, dict[str, object]]]:
    """Each sheet of ``plan`` the reader read by search, with every computed cell given a new value (numbers + 1,
    texts and flags changed), as ``(sheet, xml, wanted values)``."""
    def changed(v: object) -> object:
        if isinstance(v, bool):
            return not v
        if isinstance(v, int | float):
            return v + 1
        return f"{v}!" if isinstance(v, str) else 1.5

    result = compute(plan)
    out = []
    with zipfile.ZipFile(plan) as z:
        for sheet in result.view.sheets:
            values = {c: changed(v) for (s, c), v in result.values.items() if s == sheet.name}
            if values and sheet.plain:
                out.append((sheet.name, z.read(sheet.part), values))
    return out


@pytest.mark.parametrize("sample", SAMPLES[:2], ids=lambda p: p.stem)
def test_jump_writer_writes_the_search_writers_bytes_on_samples(sample: Path) -> None:
    """The writer that finds each wanted cell by its start tag (parts the reader read by search) writes what the
    writer visiting every cell writes."""
    cases = _jump_cases(sample)
    assert cases, "the template's computed sheets are read by search"
    for name, xml, values in cases:
        jump = ooxml._patch_cells_by_jump(xml, dict(values))
        assert jump is not None, name
        assert jump == ooxml._patch_cells_by_search(xml, dict(values)), name
        assert patch_sheet_xml(xml, values, plain=True) == jump


def test_jump_writer_hands_other_cases_to_the_search_writer() -> None:
    """A wanted cell that is not there (or not in row order) or a part in another form: None, and the caller's
    result is the search writer's."""
    new = {"A1": 2.0, "A2": "y"}
    assert ooxml._patch_cells_by_jump(SHEET, dict(new)) == ooxml._patch_cells_by_search(SHEET, dict(new))
    for values in ({"A1": 2.0, "Z9": 1.0}, {"a1": 2.0}, {"XFE1": 1.0}):
        assert ooxml._patch_cells_by_jump(SHEET, dict(values)) is None
    unordered = SHEET.replace(b'<row r="1">', b'<row r="3">').replace(b'<row r="2">', b'<row r="1">')
    assert ooxml._patch_cells_by_jump(unordered, {"A1": 2.0, "C3": 1.0}) is None
    assert patch_sheet_xml(unordered, {"A1": 2.0, "C3": 1.0}, plain=True) == \
        ooxml._patch_cells_by_search(unordered, {"A1": 2.0, "C3": 1.0})
    other_ns = SHEET.replace(b'<c r="D1"/>', b'<c r="D1" xmlns="urn:other"/>')
    assert ooxml._patch_cells_by_jump(other_ns, {"A1": 2.0}) is None
