"""Session 21's shortcuts of the read, the flattening and the write give the long path's answers: a skeleton's
changed numbers told by their characters and :func:`float` (:func:`planner.ooxml._numbers_from_texts`) as the number
pattern tells them; a skeleton's ``base`` holding the last sighting's views; a part last read row by row read so
first; the flattening's common change for ints and texts (:func:`planner.validate.checks._flat_kept`), its count
that of a new flattening; the writer's cells picked only where a value is not held."""

from __future__ import annotations

import random
import re
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from test_io_reuse import BASE, alone, written
from test_read_reuse import alone as book_alone
from test_read_reuse import flat
from test_sheet_memo import ROWS, book, outcome

from planner import ooxml
from planner.ooxml import SheetMemo, read_workbook
from planner.validate.checks import _flat_bytes, book_from_view

_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _numbers_by_pattern(texts: tuple[str, ...]) -> list[float | int] | None:
    """The long path (session 19's rule, one text at a time): None unless every text is a ``_NUMBER``; a float, or
    an int where the text is ``[+-]digits`` and the float whole."""
    if not all(_NUMBER.fullmatch(t) for t in texts):
        return None
    out: list[float | int] = []
    for t in texts:
        f = float(t)
        out.append(int(f) if t.lstrip("+-").isdigit() and f.is_integer() else f)
    return out


def _shown(values: list[float | int] | None) -> Any:
    return None if values is None else [(type(v).__name__, repr(v)) for v in values]


ODD = ["", ".", "e", "E", "+", "-", "1e", "1e+", "+-1", "--1", "1..2", "1e1.5", "1e1e1", ".e1", "e1", "1.e5",
       "5.", ".5", "-.5e-3", "+5", "-0", "00", "0e0", "1E+05", "1e400", "-1e400", "9" * 30, "1" * 400, "inf", "nan",
       "-inf", "Infinity", "1_0", " 1", "1 ", "1\n", "\u0661", "\u00b2", "\uff11", "1&amp;", "0x10", "1j", "١٢"]
"""Texts at the edges of the rule: spellings float() takes and the pattern does not (blanks, underscores, other
digits, inf, nan), overflows, ints too big for a float's digits, and what neither takes."""


def test_numbers_told_as_the_pattern_tells_them() -> None:
    """Over random texts of the number characters (and a few others) and the edge cases above, in groups of two to
    six: the same values, of the same types, or None where the pattern refuses a text."""
    rng = random.Random(21)
    alphabet = "0123456789+-.eE" * 3 + " _&ixn\u0661"

    def digits() -> str:
        return "".join(rng.choice("0123456789") for _ in range(rng.choice((0, 1, 1, 2, 3, 17))))

    def text() -> str:
        if rng.random() < 0.1:  # any characters
            return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 7)))
        # a number's pieces, each there or not (most give a number, some do not: "", ".", "e5", "+")
        t = rng.choice(("", "", "+", "-")) + digits() + rng.choice(("", "", ".")) + digits()
        if rng.random() < 0.3:
            t += rng.choice("eE") + rng.choice(("", "+", "-")) + digits()
        return t

    groups = [tuple(rng.choice(ODD + ["1.5", "42", "-7", "3e2"]) for _ in range(rng.randint(2, 6)))
              for _ in range(3000)]
    groups += [tuple(text() for _ in range(rng.randint(2, 6))) for _ in range(20000)]
    groups += [(a, "1.5") for a in ODD] + [("2", a) for a in ODD]
    accepted = 0
    for texts in groups:
        want = _numbers_by_pattern(texts)
        assert _shown(ooxml._numbers_from_texts(texts)) == _shown(want), texts
        accepted += want is not None
    assert accepted > 2000  # (numbers among them, ints and floats, and refusals)


def test_numbers_that_are_whole_but_not_ints() -> None:
    """A whole float is an int only from ``[+-]digits``: ``4.0``, ``4e0`` and ``1e400`` (inf) stay floats."""
    got = ooxml._numbers_from_texts(("4", "4.0", "4e0", "-4", "+4", "1e400", "4.5"))
    assert _shown(got) == _shown([4, 4.0, 4.0, -4, 4, float("inf"), 4.5])


@pytest.mark.parametrize("part", ["xl/worksheets/sheet1.xml", "xl/workbook.xml", "a/b/c.xml", "x.xml", "xl/../y.xml"])
def test_relationships_part_names(part: str) -> None:
    pp = PurePosixPath(part)
    assert ooxml._rels_name(part) == str(pp.parent / "_rels" / (pp.name + ".rels"))


def _two_numbers(a: str, b: str, *, text: str = "ab") -> str:
    """:data:`test_sheet_memo.ROWS` with A1, A2's cached value and C1's text changed."""
    return (ROWS.replace('<c r="A1" s="1"><v>4</v>', f'<c r="A1" s="1"><v>{a}</v>', 1)
            .replace("A1*2</f><v>8</v>", f"A1*2</f><v>{b}</v>", 1).replace("<v>ab</v>", f"<v>{text}</v>", 1))


def test_base_holds_the_last_sightings_views(tmp_path: Path) -> None:
    """Plans whose numbers change two at a time (converted together) or one at a time, and back, read through one
    memo: each read is the read alone (a view left in ``base`` from an older sighting would give an old value for a
    cell whose text is the last one's); after a refusal half-way ``base`` holds no view of a slot, and after a
    sighting it holds the views ``last_views`` holds (counted there)."""
    plans = {
        "a": book(tmp_path, "a.xlsx"),
        "two": book(tmp_path, "two.xlsx", _two_numbers("5", "10")),
        "two'": book(tmp_path, "two2.xlsx", _two_numbers("6.5", "13")),
        "one": book(tmp_path, "one.xlsx", _two_numbers("5", "8")),
        "text": book(tmp_path, "text.xlsx", _two_numbers("5", "8", text="abc")),
        "bad": book(tmp_path, "bad.xlsx", _two_numbers("7", "14").replace('t="b"><v>1</v>', 't="b"><v>7</v>')),
    }
    memo = SheetMemo()
    order = ["a", "two", "two", "a", "one", "one", "two'", "two", "text", "a", "bad", "two", "two", "bad", "bad", "a",
             "one", "a", "two'", "two'"]
    for name in order:
        assert outcome(plans[name], memo) == outcome(plans[name]), name
        for (kind, *_k), (entry, _n) in memo._entries.items():
            if kind != "cells":
                continue
            refs = [s[0] for s in entry.slotted]
            if entry.last_texts is None:  # refused half-way
                assert all(entry.base[r] is None for r in refs), name
                assert entry.last_views == {} and entry.reuse_bytes == 0
            else:
                assert {r: entry.base[r] for r in refs if entry.base[r] is not None} == entry.last_views, name
                assert all(entry.base[r] is entry.last_views[r] for r in entry.last_views)
        assert memo.bytes == sum(n for _v, n in memo._entries.values())


_VARYING = [
    '<row r="{r}"><c r="A{r}"><v>{r}</v></c><c r="B{r}"{t}><f>A{r}*2</f><v>{v}</v></c><c r="C{r}" t="s"><v>1</v></c>'
    '</row>'
]


def _varying_rows(kinds: str, base: int = 0, *, bad: str = "") -> str:
    """Rows 1..len(kinds): row r's B cell a text (``t="str"``, kind ``s``) or a number (kind ``n``): the markup
    follows the values, so the whole region's skeleton differs from plan to plan (read row by row)."""
    rows = []
    for i, k in enumerate(kinds, start=1):
        t, v = (' t="str"', f"x{i + base}") if k == "s" else ("", str(2 * i + base))
        rows.append(_VARYING[0].format(r=i, t=t, v=v))
    text = "".join(rows)
    return text.replace("<v>x", f"<v>{bad}x", 1) if bad else text


def test_a_part_last_read_row_by_row(tmp_path: Path) -> None:
    """A sheet whose markup follows its values, read through one memo in many orders (its first sighting's markup
    again among them, a plan that is refused, a plan whose rows give None: a cell twice): each read is the read
    alone, and the part is read row by row first once it was so."""
    plans = {
        "first": _varying_rows("nnsnn"), "b": _varying_rows("nsnnn", 1), "c": _varying_rows("snnns", 2),
        "d": _varying_rows("nnsnn", 3), "ctrl": _varying_rows("nnsss", 4, bad="\x01"),
        "cdata": _varying_rows("snsns", 5, bad="]]&gt;"),
        "twice": _varying_rows("nnsnn", 6).replace('<c r="C2"', '<c r="A1"', 1),
    }
    paths = {k: book(tmp_path, f"{k}.xlsx", v) for k, v in plans.items()}
    memo = SheetMemo()
    rng = random.Random(5)
    order = ["first", "b", "c", "first", "b", "ctrl", "b", "cdata", "c", "twice", "d", "first", "twice"]
    order += [rng.choice(list(plans)) for _ in range(40)]
    rowwise = 0
    for name in order:
        assert outcome(paths[name], memo) == outcome(paths[name]), name
        rowwise += "xl/worksheets/sheet1.xml" in memo._by_rows
    assert rowwise > 20  # (read row by row first in most of them)
    assert memo.bytes == sum(n for _v, n in memo._entries.values())


def _flat_sheet(ints: list[str], texts: list[str], numbers: list[str]) -> str:
    """Row 1: constants; row 2: formulas caching ints; row 3: formulas caching texts (``t="str"``); row 4:
    formulas caching booleans and errors, which change with the constants' first (a boolean or an error for a
    boolean or an error: no common change)."""
    row1 = "".join(f'<c r="{chr(65 + i)}1"><v>{t}</v></c>' for i, t in enumerate(numbers))
    row2 = "".join(f'<c r="{chr(65 + i)}2"><f>{chr(65 + i)}1*2</f><v>{t}</v></c>' for i, t in enumerate(ints))
    row3 = "".join(f'<c r="{chr(65 + i)}3" t="str"><f>"t"&amp;{chr(65 + i)}1</f><v>{t}</v></c>'
                   for i, t in enumerate(texts))
    odd = len(numbers[0]) % 2
    row4 = (f'<c r="A4" t="b"><f>A1&gt;1</f><v>{odd}</v></c><c r="B4" t="b"><f>B1&gt;1</f><v>{1 - odd}</v></c>'
            f'<c r="C4" t="e"><f>1/0</f><v>{"#DIV/0!" if odd else "#N/A"}</v></c>'
            f'<c r="D4" t="e"><f>NA()</f><v>{"#N/A" if odd else "#VALUE!"}</v></c>')
    return f'<row r="1">{row1}</row><row r="2">{row2}</row><row r="3">{row3}</row><row r="4">{row4}</row>'


FLAT = {
    "base": (["2", "4", "6", "8"], ["t1", "t2", "t3", "t4"], ["1", "2", "3", "4"]),
    "ints": (["3", "5", "6", "9"], ["t1", "t2", "t3", "t4"], ["1.5", "2.5", "3", "4.5"]),
    "texts": (["2", "4", "6", "8"], ["a much longer text than before", "t2", "", "t"], ["1", "2", "3", "4"]),
    "both": (["20", "40", "6", "8"], ["u1", "u2 u2 u2 u2 u2 u2 u2 u2", "t3", "é"], ["10", "20", "3", "4"]),
    "floats": (["2.5", "4", "6.25", "8"], ["t1", "t2", "t3", "t4"], ["1.25", "2", "3.125", "4"]),
    "mixed": (["2", "4.5", "1e3", "-8"], ["t1", "t2", "t3", "t4 "], ["1", "2.25", "500", "-4"]),
    "one": (["2", "4", "7", "8"], ["t1", "t2", "t3", "t5"], ["1", "2", "3", "4"]),
}
"""Plans whose formula cells change several at a time: ints for ints, texts for texts (longer, shorter, empty,
non-ASCII), ints for floats and back, a whole number written with an exponent (a float), one cell at a time."""


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_books_flattened_ints_and_texts_at_once(tmp_path: Path, seed: int) -> None:
    """Books of those plans flattened through one memo in random orders: each is the book read alone, and the kept
    flattening counts what a new one counts (:func:`planner.validate.checks._flat_bytes`)."""
    paths = {k: book(tmp_path, f"{k}.xlsx", _flat_sheet(*v)) for k, v in FLAT.items()}
    rng = random.Random(seed)
    order = [rng.choice(list(FLAT)) for _ in range(30)]
    memo = SheetMemo()
    for name in order:
        got = book_from_view(read_workbook(paths[name], memo=memo), memo=memo)
        assert flat(got) == book_alone(paths[name]), name
        kept = memo._entries[("flat",)][0]
        assert kept.bytes == _flat_bytes(kept), name
        assert kept.types == [[type(c.value) for c in s] for s in kept.views]


def test_written_only_where_a_value_is_not_held(tmp_path: Path) -> None:
    """Plans whose values are all held, then one that is not (one cell, then several), written in turn through one
    memo: each output is the one written alone."""
    a = book(tmp_path, "a.xlsx")
    memo = SheetMemo()
    for values in (BASE, BASE, {**BASE, ("S", "A1"): 5.0}, BASE, {**BASE, ("S", "A2"): 1.5, ("T", "A1"): 3},
                   {**BASE, ("S", "C1"): "abc", ("S", "A1"): True}, BASE):
        assert written(a, values, tmp_path / "memo.xlsx", memo) == alone(a, values, tmp_path)
