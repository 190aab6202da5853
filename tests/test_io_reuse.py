"""What a recalculating worker's reads and writes keep from plan to plan changes nothing they give: a workbook
written by :func:`planner.ooxml.write_cached_values` with ``only_changed`` from a view read through a
:class:`planner.ooxml.SheetMemo` (the writer keeps the last write's answers there, and the stored bytes of the parts
read) is byte for byte the workbook written from a view read alone, whatever plan and values came before; so are
its missing cells and its errors. A sheet whose cached numbers changed, read through the memo (converted together,
:func:`planner.ooxml._numbers_from_texts`), is the sheet read alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_read_reuse import CHANGES
from test_sheet_memo import ROWS, book, outcome

from planner import ooxml
from planner.excel.values import XlError
from planner.ooxml import SheetMemo, WorkbookError, read_workbook, write_cached_values

BASE: dict[tuple[str, str], Any] = {
    ("S", "A1"): 4, ("S", "C1"): "ab", ("S", "E1"): True, ("S", "D2"): "#N/A", ("S", "A2"): 8.0,
    ("S", "B2"): 0.0, ("S", "C2"): 0.0, ("S", "B3"): "a & b", ("S", "A3"): " y ", ("T", "A1"): 1.0,
    ("T", "B1"): "t",
}
"""Values for cells of the two sheets of :func:`test_sheet_memo.book`, most of them what the cells cache."""

VARIANTS: list[tuple[tuple[str, str], Any]] = [
    (("S", "A1"), 4.0), (("S", "A1"), True), (("S", "A1"), "4"), (("S", "A1"), float("nan")),
    (("S", "A1"), None), (("S", "A1"), XlError("#N/A")), (("S", "A1"), 5), (("S", "A1"), float("inf")),
    (("S", "B2"), -0.0), (("S", "C2"), ""), (("S", "E1"), 1), (("S", "E1"), False), (("S", "D2"), XlError("#N/A")),
    (("S", "D2"), "#DIV/0!"), (("S", "C1"), "abc"), (("S", "C1"), XlError("#VALUE!")), (("S", "B3"), "a & b "),
    (("T", "A1"), 1), (("T", "A1"), 2.5), (("T", "B1"), "u"), (("S", "A2"), 8), (("S", "A2"), 9.0),
]
"""One value changed at a time (another type, an equal value of another type, a NaN, an error as text or not)."""


def written(path: Path, values: dict[tuple[str, str], Any], out: Path, memo: SheetMemo | None = None) -> Any:
    """The bytes written for ``values`` (and the missing cells), or the error, from a view read through ``memo``
    (None: read alone)."""
    if out.exists():
        out.unlink()
    try:
        view = read_workbook(path, memo=memo)
        missing = write_cached_values(path, out, values, view=view, only_changed=True)
    except WorkbookError as exc:
        return ("error", exc.kind, str(exc).replace(str(path), "<path>"))
    return out.read_bytes(), sorted(missing)


def alone(path: Path, values: dict[tuple[str, str], Any], tmp_path: Path) -> Any:
    return written(path, values, tmp_path / "alone.xlsx")


def with_(key: tuple[str, str], value: Any) -> dict[tuple[str, str], Any]:
    """:data:`BASE` with one value changed, the keys in the same order."""
    return {k: (value if k == key else v) for k, v in BASE.items()}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_two_plans_written_through_one_memo(tmp_path: Path, change: str) -> None:
    """Two plans that differ in one cell, their values written in turn through one memo: each output is its own (an
    answer reused where it should not be writes, or leaves out, the other plan's cell)."""
    old, new = CHANGES[change]
    a = book(tmp_path, "a.xlsx")
    b = book(tmp_path, "b.xlsx", ROWS.replace(old, new, 1))
    memo = SheetMemo()
    for path in (a, b, a, a, b, b, a):
        got = written(path, BASE, tmp_path / "memo.xlsx", memo)
        assert got == alone(path, BASE, tmp_path), (change, path.name)
    assert memo.bytes == sum(n for _v, n in memo._entries.values())


def test_values_that_change_type_or_not(tmp_path: Path) -> None:
    """The same plan, one value changed at a time and back, through one memo: every write is the write alone."""
    a = book(tmp_path, "a.xlsx")
    b = book(tmp_path, "b.xlsx", ROWS.replace("A1*2</f><v>8</v>", "A1*2</f><v>9</v>"))
    memo = SheetMemo()
    seen = set()
    for key, value in VARIANTS:
        for path in (a, b):
            for values in (with_(key, value), BASE, with_(key, value), with_(key, value)):
                got = written(path, values, tmp_path / "memo.xlsx", memo)
                want = alone(path, values, tmp_path)
                assert got == want, (key, value, path.name)
                seen.add(got[0])
    assert len(seen) > 10  # the variants write different bytes


def test_answers_are_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second write of the same plan asks :func:`planner.ooxml._holds` only about cells whose view is new (a
    shared string's is, each read) or whose value changed (values of the types it is called for: a float's and a
    text's answer is given inline)."""
    a = book(tmp_path, "a.xlsx")
    memo = SheetMemo()
    asked: list[tuple[str, Any]] = []
    real = ooxml._holds

    def holds(cell: Any, value: Any) -> bool:
        asked.append((cell.ref, value))
        return real(cell, value)

    monkeypatch.setattr(ooxml, "_holds", holds)
    values: dict[tuple[str, str], Any] = {("S", "A1"): 4, ("S", "E1"): True, ("S", "D2"): XlError("#N/A"),
                                          ("S", "B1"): XlError("s0"), ("T", "A1"): 1}
    for i, (vals, want) in enumerate([(values, list(values)), (values, [("S", "B1")]),
                                      ({**values, ("S", "A1"): 5}, [("S", "B1"), ("S", "A1")]),
                                      ({**values, ("S", "A1"): 5}, [("S", "B1")]),
                                      ({**values, ("S", "A1"): True}, list(values)[:4])]):  # another type: the
        # sheet's cells asked again (T's are not)
        asked.clear()
        got = written(a, vals, tmp_path / f"{i}.xlsx", memo)
        assert sorted(r for r, _v in asked) == sorted(r for _s, r in want), i
        assert got == alone(a, vals, tmp_path)


@pytest.mark.parametrize("values", [
    {**BASE, ("s", "A1"): 7.0},  # two spellings of one sheet: the cells of the one that asks last win (the loop's)
    {("S", "A1"): 4, ("s", "E1"): 7.0, **BASE},
    {("S", "$A$1"): 7.0, **BASE},  # a reference not as the reader gives it
    {**BASE, ("S", "a2"): 7.0},
    {**BASE, ("S", "F9"): 7.0},  # not a cell: missing
    {**BASE, ("X", "A1"): 7.0},  # no such sheet: the error
    {("X", "A1"): 7.0, **BASE},
])
def test_what_the_loop_decides(tmp_path: Path, values: dict[tuple[str, str], Any]) -> None:
    """Values the writer's loop itself must handle (another spelling of a sheet or reference, a cell that is not
    there, a sheet that is not), after and before writes of the usual values through the memo."""
    a = book(tmp_path, "a.xlsx")
    memo = SheetMemo()
    for vals in (BASE, values, BASE, values, values):
        assert written(a, vals, tmp_path / "memo.xlsx", memo) == alone(a, vals, tmp_path), vals


def _stored_copy(src: Path, dst: Path, part: str, *, raw_at: int | None = None, name: bytes | None = None) -> Path:
    """``src`` with one entry's stored bytes changed in place (its central-directory record kept: the same CRC and
    sizes): a byte of its compressed data flipped (``raw_at``), or its local header's name replaced by another of
    the same length (``name``)."""
    import zipfile

    data = bytearray(src.read_bytes())
    with zipfile.ZipFile(src) as z:
        info = z.getinfo(part)
    at = info.header_offset
    n = int.from_bytes(data[at + 26:at + 28], "little")
    e = int.from_bytes(data[at + 28:at + 30], "little")
    if raw_at is not None:
        data[at + 30 + n + e + raw_at] ^= 0x55
    if name is not None:
        assert len(name) == n
        data[at + 30:at + 30 + n] = name
    dst.write_bytes(bytes(data))
    return dst


@pytest.mark.parametrize("how", ["raw start", "raw middle", "local name"])
@pytest.mark.parametrize("part", ["xl/worksheets/sheet2.xml", "[Content_Types].xml"])
def test_stored_bytes_vouched_for_only_when_they_are_the_same(tmp_path: Path, part: str, how: str) -> None:
    """A part the memo saw inflate well is copied without inflating it again only when every stored byte is the
    same: the same central-directory record (name, CRC, sizes) over other compressed bytes or another local header
    is read, and refused, as without the memo (a CRC-only identity would copy the damaged part)."""
    a = book(tmp_path, "a.xlsx")
    kwargs: dict[str, Any] = ({"raw_at": 0} if how == "raw start" else {"raw_at": 40} if how == "raw middle"
                              else {"name": (part[:-1] + "k").encode()})
    bad = _stored_copy(a, tmp_path / "bad.xlsx", part, **kwargs)
    memo = SheetMemo()
    view = read_workbook(a, memo=memo)
    assert written(a, BASE, tmp_path / "1.xlsx", memo) == alone(a, BASE, tmp_path)
    out = tmp_path / "2.xlsx"
    try:  # the damaged copy read as the good one (its sheet parts may not be the damaged one), then written
        missing: Any = sorted(write_cached_values(bad, out, BASE, view=view.__class__(**{
            **{f: getattr(view, f) for f in view.__dataclass_fields__}, "path": str(bad)}), only_changed=True))
        got: Any = (out.read_bytes(), missing)
    except WorkbookError as exc:
        got = ("error", exc.kind, str(exc).replace(str(bad), "<path>"))
    plain_view = read_workbook(a)
    try:
        out.unlink(missing_ok=True)
        missing = sorted(write_cached_values(bad, out, BASE, view=plain_view.__class__(**{
            **{f: getattr(plain_view, f) for f in plain_view.__dataclass_fields__}, "path": str(bad)}),
            only_changed=True))
        want: Any = (out.read_bytes(), missing)
    except WorkbookError as exc:
        want = ("error", exc.kind, str(exc).replace(str(bad), "<path>"))
    assert got == want
    assert want[0] == "error"  # (the damage is seen)


@pytest.mark.parametrize("limits", [ooxml.Limits(max_part_bytes=400), ooxml.Limits(max_total_bytes=3000)])
def test_limits_of_the_write_apply_to_parts_vouched_for(tmp_path: Path, limits: ooxml.Limits) -> None:
    """A part read under the default limits and copied later under smaller ones is refused as when inflated."""
    a = book(tmp_path, "a.xlsx")
    memo = SheetMemo()
    view = read_workbook(a, memo=memo)
    written(a, BASE, tmp_path / "1.xlsx", memo)
    outs = []
    for v in (view, read_workbook(a)):
        try:
            write_cached_values(a, tmp_path / "2.xlsx", BASE, view=v, only_changed=True, limits=limits)
            outs.append((tmp_path / "2.xlsx").read_bytes())
        except WorkbookError as exc:
            outs.append(("error", exc.kind, exc.part, str(exc)))
    assert outs[0] == outs[1] and outs[0][0] == "error"


def test_parts_read_before_are_not_inflated_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The write after a read through the memo inflates only the parts neither the read nor the last write
    inflated (the first time, the two the reader does not read; then none, a sheet it changes included: a part of
    at most ``KEEP_PART_BYTES`` is kept with its bytes); a second read inflates none."""
    import zipfile

    a = book(tmp_path, "a.xlsx")
    memo = SheetMemo()
    opened: list[str] = []
    real = zipfile.ZipFile.open

    def counting(self: zipfile.ZipFile, name: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(name if isinstance(name, str) else name.filename)
        return real(self, name, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "open", counting)
    for values, want in (({("S", "A1"): 4}, ["[Content_Types].xml", "_rels/.rels"]),  # (parts no reader reads)
                         ({("S", "A1"): 4}, []),
                         ({("S", "A1"): 5}, [])):  # (the sheet changed: its bytes, kept when read, patched)
        view = read_workbook(a, memo=memo)
        opened.clear()
        write_cached_values(a, tmp_path / "o.xlsx", values, view=view, only_changed=True)
        assert opened == want
        assert written(a, values, tmp_path / "o.xlsx") == alone(a, values, tmp_path)
    opened.clear()
    assert outcome(a, memo) == outcome(a, None) and len(opened) == 5  # (the read alone inflates its 5 parts)
    opened.clear()
    outcome(a, memo)
    assert opened == []
    n_parts = len(zipfile.ZipFile(a).infolist())
    view = read_workbook(a)
    opened.clear()
    write_cached_values(a, tmp_path / "o.xlsx", {("S", "A1"): 4}, view=view, only_changed=True)
    assert len(opened) == n_parts  # without a memo every part is inflated


def _central_crc_copy(src: Path, dst: Path, part: str) -> Path:
    """``src`` with the CRC its central directory gives for ``part`` changed (every stored byte of the entry kept)."""
    import zipfile

    data = bytearray(src.read_bytes())
    with zipfile.ZipFile(src) as z:
        at = z.start_dir  # type: ignore[attr-defined]
    while data[at:at + 4] == b"PK\x01\x02":
        n, e, c = (int.from_bytes(data[at + k:at + k + 2], "little") for k in (28, 30, 32))
        if data[at + 46:at + 46 + n] == part.encode():
            data[at + 16] ^= 0x01
        at += 46 + n + e + c
    dst.write_bytes(bytes(data))
    return dst


@pytest.mark.parametrize("part", ["xl/worksheets/sheet2.xml", "[Content_Types].xml"])
def test_another_record_over_the_same_stored_bytes(tmp_path: Path, part: str) -> None:
    """The same stored bytes under a central-directory record with another CRC: read (and refused) as without the
    memo."""
    a = book(tmp_path, "a.xlsx")
    bad = _central_crc_copy(a, tmp_path / "bad.xlsx", part)
    memo = SheetMemo()
    view = read_workbook(a, memo=memo)
    written(a, BASE, tmp_path / "1.xlsx", memo)
    outs = []
    for v in (view, read_workbook(a)):
        try:
            write_cached_values(bad, tmp_path / "2.xlsx", BASE, view=v.__class__(**{
                **{f: getattr(v, f) for f in v.__dataclass_fields__}, "path": str(bad)}), only_changed=True)
            outs.append((tmp_path / "2.xlsx").read_bytes())
        except WorkbookError as exc:
            outs.append(("error", exc.kind, exc.part, str(exc)))
    assert outs[0] == outs[1] and outs[0][0] == "error"


def test_only_the_entry_read_under_its_name(tmp_path: Path) -> None:
    """Of two entries of one name, the first is not vouched for (a read of that name reads the last one), even with
    the stored bytes of one read before."""
    import zipfile

    def zipped(path: Path, *texts: str) -> Path:
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            for t in texts:
                with pytest.warns(UserWarning) if t is not texts[0] else _nothing():
                    z.writestr(zipfile.ZipInfo("p", date_time=(2020, 1, 1, 0, 0, 0)), t)
        return path

    memo = SheetMemo()
    limits = ooxml.Limits()
    one = zipped(tmp_path / "one.zip", "hello")
    with zipfile.ZipFile(one) as z:
        pkg = ooxml.Package(one, z, limits, memo=memo)
        assert pkg.read("p") == b"hello"
        pkg.keep_reads()
    with zipfile.ZipFile(one) as z:
        pkg = ooxml.Package(one, z, limits, memo=memo)
        info = z.infolist()[0]
        assert pkg.read_size(info, pkg.stored(info)) == 5  # type: ignore[arg-type]
    two = zipped(tmp_path / "two.zip", "hello", "world")
    with zipfile.ZipFile(two) as z, zipfile.ZipFile(one) as z1:
        pkg = ooxml.Package(two, z, limits, memo=memo)
        info = z.infolist()[0]
        assert pkg.stored(info) == ooxml.Package(one, z1, limits).stored(info)
        assert pkg.read_size(info, pkg.stored(info)) is None  # type: ignore[arg-type]


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


NUMBERS = ["4", "4.5", "-2", "1e3", "+7", "9" * 400, ".5", "5.", "-0", "1E-2", "007", "-1.5e+300", "2.0"]
"""Number texts of every form the reader converts (an int where whole without "." or exponent, else a float)."""


def _numbers_rows(texts: list[str]) -> str:
    cells = "".join(f'<c r="{chr(65 + i)}1"><v>{t}</v></c>' for i, t in enumerate(texts))
    formulas = "".join(f'<c r="{chr(65 + i)}2"><f>{chr(65 + i)}1*2</f><v>{t}</v></c>' for i, t in enumerate(texts))
    return f'<row r="1">{cells}</row><row r="2">{formulas}</row>'


@pytest.mark.parametrize("odd", ["", " 5", "5 ", "1&amp;", "&#49;", "1_0", "inf", "nan", "0x10", "1e", "--1",
                                 "1.2.3", "\n5", "1\n2", "1<2"])
def test_numbers_converted_together(tmp_path: Path, odd: str) -> None:
    """Plans of one skeleton whose cached numbers change together (every form, and one text that is not a number:
    converted one by one then, and refused as alone), read through one memo in turn: each read is the read alone."""
    plans = []
    for k in range(4):
        texts = NUMBERS[k:] + NUMBERS[:k]
        if k == 2:
            texts[3] = odd
        plans.append(book(tmp_path, f"p{k}.xlsx", _numbers_rows(texts)))
    memo = SheetMemo()
    for path in (plans[0], plans[1], plans[0], plans[2], plans[3], plans[2], plans[1], plans[3]):
        assert outcome(path, memo) == outcome(path), path.name
    assert memo.hits > 8


@pytest.mark.parametrize("budget", [None, 6000, 12000, 40000])
def test_skeleton_texts_held_only_with_their_entries(tmp_path: Path, budget: int | None) -> None:
    """A part's last skeleton text (looked up without hashing a new one) is the key of an entry of the memo, the
    same string, whatever the budget drops; reads through the memo stay the reads alone."""
    plans = [book(tmp_path, f"p{k}.xlsx", _numbers_rows(NUMBERS[k:] + NUMBERS[:k])) for k in range(3)]
    plans.append(book(tmp_path, "other.xlsx"))
    memo = SheetMemo() if budget is None else SheetMemo(max_bytes=budget)
    for path in (plans * 3)[::-1] + plans * 2:
        assert outcome(path, memo) == outcome(path), path.name
        held = {id(k[1]) for k in memo._entries if k[0] == "cells"}
        assert all(id(t) in held for t in memo._keys.values())
    if budget is None:
        assert memo._keys


def _flat_rows(numbers: list[str], formulas: list[str], cached: list[str]) -> str:
    row1 = "".join(f'<c r="{chr(65 + i)}1"><v>{t}</v></c>' for i, t in enumerate(numbers))
    row2 = "".join(f'<c r="{chr(65 + i)}2"{TEXT if c and not c[0].isdigit() else ""}><f>{f}</f><v>{c}</v></c>'
                   for i, (f, c) in enumerate(zip(formulas, cached)))
    return f'<row r="1">{row1}</row><row r="2">{row2}</row>'


TEXT = ' t="str"'
DOUBLED = ["A1*2", "B1*2", "C1*2", "D1*2", "E1*2"]
FLAT_PLANS = {
    "base": (["1.5", "2.5", "3.5", "4", "5.5"], DOUBLED, ["3.5", "5.5", "7.5", "8", "1.5"]),
    "numbers": (["1.25", "2.25", "3.25", "4", "5.25"], DOUBLED, ["2.5", "4.5", "6.5", "8.5", "10.5"]),
    "formula": (["1.75", "2.75", "3.5", "4", "5.5"], ["A1*2", "B1*3", "C1*2", "D1*2", "E1*2"],
                ["3.75", "8.25", "7.25", "8", "1.5"]),
    "empty": (["1.5", "2.25", "3.5", "4", "5.5"], DOUBLED, ["3.25", "", "7.5", "8", "1.25"]),
    "text": (["1.5", "2.5", "3.5", "4.5", "5.5"], DOUBLED, ["3.5", "5.5", "x", "8", "y"]),
    "ints": (["1.5", "2.5", "3.5", "4", "5.5"], DOUBLED, ["3", "5.5", "7", "8.25", "1"]),
}
"""Plans of a few skeletons whose cells change several at a time: numbers, a formula, a cached value that goes,
texts, ints."""


@pytest.mark.parametrize("order", [("base", "numbers", "formula", "numbers", "empty", "numbers", "text", "base",
                                    "text", "ints", "numbers", "ints", "base"),
                                   ("text", "numbers", "empty", "base", "formula", "base", "ints", "text", "numbers"),
                                   ("ints", "text", "ints", "numbers", "text", "numbers", "formula", "empty")])
def test_books_flattened_several_changes_at_once(tmp_path: Path, order: tuple[str, ...]) -> None:
    """Books of plans whose sheets change in several cells at once, flattened through one memo in turn: each is the
    book read alone, and the kept flattening counts what a new one counts."""
    from test_read_reuse import alone as book_alone
    from test_read_reuse import flat

    from planner.validate.checks import _flat_bytes, book_from_view

    paths = {name: book(tmp_path, f"{name}.xlsx", _flat_rows(*FLAT_PLANS[name])) for name in FLAT_PLANS}
    memo = SheetMemo()
    for name in order:
        got = book_from_view(read_workbook(paths[name], memo=memo), memo=memo)
        assert flat(got) == book_alone(paths[name]), name
        kept = memo._entries[("flat",)][0]
        assert kept.bytes == _flat_bytes(kept), name


@pytest.mark.parametrize("how", ["raw start", "raw middle", "local name", "central crc"])
@pytest.mark.parametrize("part", ["xl/worksheets/sheet2.xml", "xl/sharedStrings.xml", "xl/workbook.xml"])
def test_a_read_gets_kept_bytes_only_for_the_same_stored_bytes(tmp_path: Path, part: str, how: str) -> None:
    """A part the memo kept with its bytes is given without inflating it only for the same stored bytes and record:
    a damaged copy (compressed bytes, local header or central CRC) is read, and refused, as without the memo."""
    a = book(tmp_path, "a.xlsx")
    if how == "central crc":
        bad = _central_crc_copy(a, tmp_path / "bad.xlsx", part)
    else:
        kwargs: dict[str, Any] = ({"raw_at": 0} if how == "raw start" else {"raw_at": 30} if how == "raw middle"
                                  else {"name": (part[:-1] + "k").encode()})
        bad = _stored_copy(a, tmp_path / "bad.xlsx", part, **kwargs)
    memo = SheetMemo()
    assert outcome(a, memo) == outcome(a)
    got = outcome(bad, memo)
    assert got == outcome(bad) and got[0] == "error", got
    assert outcome(a, memo) == outcome(a)
    fresh = SheetMemo()
    outcome(bad, fresh)
    assert not [k for k in fresh._entries if k[0] == "stored"]  # nothing kept from a read that failed
