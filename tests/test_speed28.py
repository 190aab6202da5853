"""Session 22, speed28: a package read from memory through a :class:`SheetMemo` (the file's bytes read once, the
zip file kept for the write of the same bytes: :func:`planner.ooxml.open_package`), and the header cells of
:func:`planner.validate.checks.check_structure` compared at once. Each shortcut against the long path."""

from __future__ import annotations

import dataclasses
import random
import shutil
import zipfile
from pathlib import Path
from typing import Any

import pytest
from test_io_reuse import BASE, VARIANTS, alone, written
from test_sheet_memo import ROWS, book, outcome

from planner import ooxml
from planner import template as ts
from planner.excel.values import XlError
from planner.ooxml import Limits, SheetMemo, TableView, WorkbookError, open_package, read_workbook
from planner.validate import checks
from planner.validate.checks import book_from_view, check_structure
from planner.validate.report import Finding

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = sorted([*(ROOT / "samples").rglob("*.xls[xm]"), *(ROOT / "tests" / "data").rglob("*.xls[xm]")])


def _opened(path: Path, memo: SheetMemo | None, limits: Limits = ooxml.DEFAULT_LIMITS) -> Any:
    """What :func:`open_package` gives for ``path``: its names, each part's bytes or read error, each entry's stored
    bytes (:meth:`Package.stored`); or the error, its kind and part."""
    try:
        pkg = open_package(path, limits, memo=memo)
    except WorkbookError as exc:
        return ("error", type(exc).__name__, exc.kind, exc.part, str(exc))
    except Exception as exc:  # noqa: BLE001  (what zipfile raises past open_package, e.g. NotImplementedError)
        return ("error", type(exc).__name__, str(exc))
    with pkg:
        parts = []
        for info in pkg.zf.infolist():
            try:
                got: Any = pkg.read(info.filename)
            except WorkbookError as exc:
                got = ("error", exc.kind, exc.part, str(exc))
            except Exception as exc:  # noqa: BLE001
                got = ("error", type(exc).__name__, str(exc))
            parts.append((info.filename, got, pkg.stored(info) if memo is not None else None))
        return pkg.names, parts


def _stored_from_file(path: Path) -> list[Any]:
    """Each entry's :meth:`Package.stored` read from the file (no memo: the seeks and reads of the file)."""
    with open_package(path) as pkg:
        return [pkg.stored(info) for info in pkg.zf.infolist()]


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_a_package_read_from_memory_is_the_file(path: Path) -> None:
    """Every sample and test workbook: the same names, parts, errors and stored bytes from memory (through a memo,
    twice: the second open takes the first's zip file) as from the file."""
    alone = _opened(path, None)
    memo = SheetMemo()
    first = _opened(path, memo)
    if alone[0] == "error":
        assert first == alone
        return
    assert first[0] == alone[0]
    assert [p[:2] for p in first[1]] == [p[:2] for p in alone[1]]
    assert [p[2] for p in first[1]] == _stored_from_file(path)
    with open_package(path, memo=memo) as pkg:
        pkg.keep_reads()  # (a read that succeeded: its zip file kept for the next open)
    assert memo._package is not None
    kept_zf = memo._package[1]
    with open_package(path, memo=memo) as pkg:
        assert pkg.zf is kept_zf  # the same bytes: the zip file of the last package
        assert pkg.names == alone[0]
        assert [pkg.read(n) for n in pkg.names] == [p[1] for p in alone[1]]
    assert memo._package is None  # taken, and not kept again by a package that did not succeed


def _mangled(data: bytes, rng: random.Random) -> bytes:
    """``data`` truncated, cut short of its end record, given junk before it, or with bytes of its central
    directory, end record or a local header changed."""
    kind = rng.randrange(6)
    if kind == 0:
        return data[:rng.randrange(len(data))]
    if kind == 1:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(40))) + data
    cd = data.rfind(b"PK\x01\x02")
    end = data.rfind(b"PK\x05\x06")
    at = {2: rng.randrange(max(cd, 0), len(data)), 3: rng.randrange(end, len(data)),
          4: rng.randrange(0, 40), 5: rng.randrange(len(data))}[kind]
    out = bytearray(data)
    for i in range(rng.randint(1, 3)):
        out[min(at + i, len(out) - 1)] = rng.randrange(256)
    return bytes(out)


@pytest.mark.parametrize("seed", range(4))
def test_mangled_files_read_from_memory_as_from_the_file(tmp_path: Path, seed: int) -> None:
    """Corrupt files (cut short, junk before, directory or header bytes changed), each opened and read with a memo
    and without: the same names, parts and stored bytes, or the same error with the same message."""
    rng = random.Random(seed)
    src = book(tmp_path, "a.xlsx").read_bytes()
    path = tmp_path / "m.xlsx"
    memo = SheetMemo()
    opened = 0
    for _ in range(120):
        path.write_bytes(_mangled(src, rng))
        alone = _opened(path, None)
        got = _opened(path, memo)
        if alone[0] == "error":
            assert got == alone
            continue
        opened += 1
        assert got[0] == alone[0]
        assert [p[:2] for p in got[1]] == [p[:2] for p in alone[1]]
        assert [p[2] for p in got[1]] == _stored_from_file(path)
        try:
            read_alone: Any = outcome(path)
        except Exception as exc:  # noqa: BLE001
            read_alone = (type(exc).__name__, str(exc))
        try:
            read_memo: Any = outcome(path, SheetMemo())
        except Exception as exc:  # noqa: BLE001
            read_memo = (type(exc).__name__, str(exc))
        assert read_memo == read_alone
    assert opened > 10  # (some of them open: their parts compared, not only errors)


@pytest.mark.parametrize("special", ["missing", "directory", "empty", "tiny"])
def test_files_that_cannot_be_opened_say_so_as_without_a_memo(tmp_path: Path, special: str) -> None:
    path = tmp_path / "x.xlsx"
    if special == "directory":
        path.mkdir()
    elif special == "empty":
        path.write_bytes(b"")
    elif special == "tiny":
        path.write_bytes(b"PK\x05\x06")
    assert _opened(path, SheetMemo()) == _opened(path, None)


def test_the_write_takes_the_read_package_only_for_the_same_bytes(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A plan read, then its file replaced by another plan's bytes (or by the same bytes again) before the write:
    each write is the one made without a memo from the same view and file; the zip file is taken over only where
    the bytes are the same."""
    a = book(tmp_path, "a.xlsx")
    b = book(tmp_path, "b.xlsx", ROWS.replace("<v>4</v>", "<v>5</v>", 1))
    path = tmp_path / "plan.xlsx"
    memo = SheetMemo()
    rng = random.Random(3)
    taken: list[Any] = []
    real = ooxml.Package.__init__

    def spy(self: Any, *args: Any, **kwargs: Any) -> None:
        real(self, *args, **kwargs)
        taken.append(self.zf)

    monkeypatch.setattr(ooxml.Package, "__init__", spy)
    for step in range(24):
        read_from, write_from = rng.choice([a, b]), rng.choice([a, b])
        shutil.copyfile(read_from, path)
        view = read_workbook(path, memo=memo)
        view_alone = read_workbook(path)
        kept = memo._package
        assert kept is not None and kept[0] == read_from.read_bytes()
        shutil.copyfile(write_from, path)
        values = dict(BASE)
        if step % 3:
            k, v = rng.choice(VARIANTS)
            values[k] = v
        outs = []
        for name, v in (("memo", view), ("alone", view_alone)):
            out = tmp_path / f"{name}.xlsx"
            if out.exists():
                out.unlink()
            taken.clear()
            missing = ooxml.write_cached_values(path, out, values, view=v, only_changed=True)
            outs.append((out.read_bytes(), sorted(missing)))
            if name == "memo":
                assert (taken[0] is kept[1]) == (read_from.read_bytes() == write_from.read_bytes()), step
        assert outs[0] == outs[1], step


def test_other_limits_or_a_large_file_are_not_taken_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = book(tmp_path, "a.xlsx")
    memo = SheetMemo()
    read_workbook(a, memo=memo)
    kept = memo._package
    assert kept is not None
    with open_package(a, Limits(max_cells=123), memo=memo) as pkg:
        assert pkg.zf is not kept[1]  # other limits: opened and checked anew
    monkeypatch.setattr(ooxml, "KEEP_PACKAGE_BYTES", 100)
    read_workbook(a, memo=memo)
    assert memo._package is None  # a file above the slot's size is not kept
    memo.clear()
    assert memo._package is None


def test_written_through_one_memo_as_alone(tmp_path: Path) -> None:
    """Plans read and written in turn through one memo (the write taking the read's zip file): every output is the
    write alone."""
    a = book(tmp_path, "a.xlsx")
    b = book(tmp_path, "b.xlsx", ROWS.replace("<v>4</v>", "<v>5</v>", 1))
    memo = SheetMemo()
    rng = random.Random(5)
    for _ in range(20):
        path = rng.choice([a, b])
        values = dict(BASE)
        k, v = rng.choice(VARIANTS)
        values[k] = v
        assert written(path, values, tmp_path / "memo.xlsx", memo) == alone(path, values, tmp_path)


# check_structure: the header cells compared at once


def _structure_slow(book: checks.Book) -> list[Finding]:
    """:func:`check_structure` as it was before session 22 (every header cell compared one by one), verbatim."""
    out = []
    present = set(book.view.sheet_names)
    for name in ts.SHEET_ORDER:
        if name not in present:
            out.append(Finding.of("missing-sheet", sheet=name, expected=name, actual=None))
    for t in ts.TABLES:
        if t.sheet not in present:
            continue
        raw = book.view.tables.get(t.name)
        if raw is None:
            out.append(Finding.of("missing-table", note=f"Excel Table {t.name} is missing", sheet=t.sheet,
                                  cell=t.ref.split(":")[0], expected=f"{t.name} {t.ref}", actual=None))
            continue
        if raw.sheet != t.sheet or raw.ref != t.ref:
            out.append(Finding.of("missing-table", note=f"Excel Table {t.name} does not cover its template range",
                                  sheet=t.sheet, cell=t.ref.split(":")[0], expected=f"{t.sheet}!{t.ref}",
                                  actual=f"{raw.sheet}!{raw.ref}"))
        for j, col in enumerate(t.columns):
            cell = f"{ts.col_letter(t.first_col + j)}{t.header_row}"
            got = book.values.get((t.sheet, cell))
            if got is None:  # no header cell: the table's own column list
                got = raw.columns[j] if j < len(raw.columns) else None
            if got != col.header:
                out.append(Finding.of("missing-column", note=f"of {t.name}",
                                      sheet=t.sheet, cell=cell, expected=col.header, actual=got))
    return out


def _fast(book: checks.Book) -> list[Finding]:
    return list(check_structure(book))


@pytest.mark.parametrize("seed", range(5))
def test_check_structure_as_cell_by_cell(seed: int) -> None:
    """A template plan's book with header cells changed (another text, a number, an error, the same text as
    another object, removed: the table's own column list then), tables removed or moved, sheets removed: the same
    findings in the same order as the cell-by-cell comparison."""
    rng = random.Random(seed)
    base = book_from_view(read_workbook(ROOT / "samples" / "seed.xlsm"))
    assert _fast(base) == _structure_slow(base) == []
    headers = [(k, h) for keys, hs in checks._table_headers(ts.TABLES) for k, h in zip(keys, hs)]
    found: list[int] = []
    for _ in range(60):
        values = dict(base.values)
        tables = dict(base.view.tables)
        for _ in range(rng.randint(1, 4)):
            (key, header) = rng.choice(headers)
            kind = rng.randrange(8)
            if kind == 0:
                values[key] = header + "x"
            elif kind == 1:
                values[key] = 1.0
            elif kind == 2:
                values[key] = XlError("#N/A")
            elif kind == 3:
                values[key] = (header + ".")[:-1]  # equal, another object
            elif kind == 4:
                values.pop(key, None)
            elif kind == 5 and tables:
                del tables[rng.choice(list(tables))]
            elif kind == 6 and tables:
                name = rng.choice(list(tables))
                tv = tables[name]
                tables[name] = TableView(name=tv.name, sheet=tv.sheet, ref="A1:B2", columns=tv.columns[:1],
                                         part=tv.part)
            else:
                values[key] = header.upper() if header.upper() != header else header + " "
        view = base.view
        if rng.random() < 0.2:
            keep = [s for s in view.sheets if s.name != rng.choice(ts.SHEET_ORDER)]
            view = dataclasses.replace(view, sheets=tuple(keep))
        view = dataclasses.replace(view, tables=tables)
        b = checks.Book(view=view, values=values, formulas=base.formulas)
        slow = _structure_slow(b)
        assert _fast(b) == slow
        found.append(len(slow))
    assert sum(map(bool, found)) > 40  # (most books have findings to compare)


def test_table_headers_rebuilt_for_other_tables() -> None:
    """The kept headers are those of the tables asked for (another tuple of tables: built anew)."""
    mine = checks._table_headers(ts.TABLES)
    assert checks._table_headers(ts.TABLES) is mine
    other = checks._table_headers(ts.TABLES[:2])
    assert len(other) == 2 and other[0] == mine[0]
    assert checks._table_headers(ts.TABLES) == mine


# the writer's views picked by position for a sheet of the same order


def test_sheets_of_one_skeleton_share_an_order(tmp_path: Path) -> None:
    """Two reads of plans with the same markup (values apart) through one memo: each sheet has the same order
    token, the views compare equal to a read without a memo (the token is not compared), and a sheet read without
    a memo, or by search, has none."""
    a = book(tmp_path, "a.xlsx")
    b = book(tmp_path, "b.xlsx", ROWS.replace("<v>4</v>", "<v>5</v>", 1))
    memo = SheetMemo()
    read_workbook(a, memo=memo)  # (first sighting: read by search, kept)
    va, vb = read_workbook(a, memo=memo), read_workbook(b, memo=memo)
    assert [s.order for s in va.sheets] == [s.order for s in vb.sheets]
    assert all(s.order is not None for s in va.sheets)
    assert all(list(x.cells) == list(y.cells) for x, y in zip(va.sheets, vb.sheets))
    alone_view = read_workbook(a)
    assert alone_view.sheets == va.sheets and all(s.order is None for s in alone_view.sheets)


EXTRA_CELL = ROWS.replace('<c r="E1" t="b"><v>1</v></c></row>', '<c r="E1" t="b"><v>1</v></c><c r="F1"><v>3</v></c>'
                          '</row>', 1)


@pytest.mark.parametrize("seed", range(4))
def test_views_picked_by_position_only_for_the_same_order(tmp_path: Path, seed: int) -> None:
    """Plans of two markups (the second has one more cell, early: every later cell's position moves) and values
    changed at random, written in turn through one memo: every output is the write alone; the writer picked views
    by position (pick kept) for some."""
    rng = random.Random(seed)
    plans = [book(tmp_path, "x.xlsx"), book(tmp_path, "x2.xlsx", ROWS.replace("<v>4</v>", "<v>5</v>", 1)),
             book(tmp_path, "y.xlsx", EXTRA_CELL)]
    memo = SheetMemo()
    picked = 0
    for _ in range(40):
        path = rng.choice(plans)
        values = dict(BASE)
        for _ in range(rng.randint(0, 2)):
            k, v = rng.choice(VARIANTS)
            values[k] = v
        assert written(path, values, tmp_path / "memo.xlsx", memo) == alone(path, values, tmp_path)
        kept = memo._entries.get(ooxml._WRITE_KEY)
        if kept is not None:
            picked += sum(g.pick is not None for g in kept[0][1])
    assert picked


def test_positions_are_the_process_own_ints() -> None:
    ints = ooxml._positions(5000)
    assert ints is not None and ints[:5000] == list(range(5000))
    assert ooxml._positions(10) is ints
    assert ooxml._positions(ooxml._MAX_POSITIONS + 1) is None


def _with_comment(path: Path) -> Path:
    """``path`` with a comment after the cells of its second sheet (that part read by the parser: no memo's
    cells asked, no order)."""
    with zipfile.ZipFile(path) as z:
        parts = [(i.filename, z.read(i.filename)) for i in z.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in parts:
            if name == "xl/worksheets/sheet2.xml":
                data = data.replace(b"</sheetData>", b"</sheetData><!-- c -->", 1)
            z.writestr(name, data)
    return path


def test_a_sheet_read_by_the_parser_has_no_order(tmp_path: Path) -> None:
    """Sheet T read by the parser (a comment after its cells), in two markups whose cells sit at other positions,
    after sheet S, a kept skeleton: every output through one memo is the write alone (T never takes S's order and
    is not picked by position), and T has no order."""
    t1 = '<row r="1"><c r="A1"><v>1</v></c><c r="B1" t="inlineStr"><is><t>t</t></is></c></row>'
    t2 = '<row r="1"><c r="C1"><v>7</v></c><c r="A1"><v>1</v></c><c r="B1" t="inlineStr"><is><t>t</t></is></c></row>'
    plans = [_with_comment(book(tmp_path, "p1.xlsx", other=t1)), _with_comment(book(tmp_path, "p2.xlsx", other=t2))]
    memo = SheetMemo()
    rng = random.Random(1)
    for step in range(30):
        path = plans[step % 2] if step < 6 else rng.choice(plans)
        values = dict(BASE)
        k, v = rng.choice([x for x in VARIANTS if x[0][0] == "T"])
        values[k] = v
        assert written(path, values, tmp_path / "memo.xlsx", memo) == alone(path, values, tmp_path), step
        view = read_workbook(path, memo=memo)
        assert view.sheets[0].order is not None and view.sheets[1].order is None
