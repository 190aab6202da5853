"""What a recalculating worker's writes keep from plan to plan changes no byte they write: a workbook written by
:func:`planner.ooxml.write_cached_values` with ``only_changed`` from a view read through a
:class:`planner.ooxml.SheetMemo` (the writer keeps the last write's answers there) is byte for byte the workbook
written from a view read alone, whatever plan and values came before; so are its missing cells and its errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_read_reuse import CHANGES
from test_sheet_memo import ROWS, book

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
