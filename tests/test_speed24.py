"""Session 21, speed24: recalc's comparison of a plan's formulas with the template's through the last equal plan's
(:func:`planner.recalc._is_template_formulas`), and the writer's references kept as the reader's own objects
(:func:`planner.ooxml._wanted_kept`). Each shortcut against the long path over random inputs."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from test_io_reuse import BASE, VARIANTS, alone, written
from test_sheet_memo import book

from planner import ooxml, recalc
from planner.ooxml import SheetMemo, read_workbook


@pytest.fixture(autouse=True)
def _fresh_cache() -> Any:
    recalc._SAME_FORMULAS.clear()
    yield
    recalc._SAME_FORMULAS.clear()


def _formulas(n: int, rng: random.Random) -> dict[tuple[str, str], str]:
    return {("S", f"A{i}"): f"=B{i}*{rng.randint(1, 3)}" for i in range(1, n + 1)}


def _rebuilt(d: dict[tuple[str, str], str]) -> dict[tuple[str, str], str]:
    """Equal to ``d``, every key and text an object of its own (as a plan read without a memo has)."""
    return {(s, (c + ".")[:-1]): (t + ".")[:-1] for (s, c), t in d.items()}


@pytest.mark.parametrize("seed", range(6))
def test_formulas_compared_as_dict_equality(seed: int) -> None:
    """A run of plans, each the last one (its objects shared, as a memo's flattening hands them), with one text
    changed, one key added or removed, a key's text changed and back, the same content from objects of its own, the
    last plan's dictionary changed after it was found equal; and another ``expected``: every answer is
    ``formulas == expected``."""
    rng = random.Random(seed)
    expected = _formulas(60, rng)
    other = dict(expected)
    other[("S", "A1")] = "=0"
    last = _rebuilt(expected)
    for step in range(300):
        kind = rng.randrange(7)
        plan = dict(last)
        k = rng.choice(list(plan))
        if kind == 0:
            plan[k] = plan[k] + "+1"
        elif kind == 1:
            del plan[k]
        elif kind == 2:
            plan[("S", "Z9")] = "=1"
        elif kind == 3:
            plan = _rebuilt(expected)
        elif kind == 4:  # the last plan's own dictionary changed after the call (the kept copy must not change)
            last[k] = "=changed"
            plan = dict(last)
        elif kind == 5:
            plan = dict(expected)  # the template's own objects
        exp = other if rng.random() < 0.1 else expected
        assert recalc._is_template_formulas(plan, exp) == (plan == exp), (seed, step, kind)
        last = plan if rng.random() < 0.7 else _rebuilt(expected)


def test_a_changed_text_behind_the_same_first_key() -> None:
    """Plan 2 shares plan 1's first key (as a memo's flattening hands it) but one text differs, at the end: not the
    template's (a shortcut that trusted the first key alone would say it is)."""
    expected = _formulas(30, random.Random(1))
    plan1 = _rebuilt(expected)
    assert recalc._is_template_formulas(plan1, expected)
    plan2 = dict(plan1)
    plan2[("S", "A30")] = "=B30*4"
    assert not recalc._is_template_formulas(plan2, expected)
    plan1[("S", "A30")] = "=B30*4"  # the plan's dictionary changed after it was found equal: the kept copy did not
    assert not recalc._is_template_formulas(dict(plan1), expected)
    assert recalc._is_template_formulas(_rebuilt(expected), expected)


def test_references_are_the_readers_objects(tmp_path: Path) -> None:
    """After a write through a memo, the kept references are each view's own ``ref`` (equal to the values' keys);
    plans whose values change at random, a few cells at a time, written through one memo: each output is the one
    written alone."""
    a = book(tmp_path, "a.xlsx")
    memo = SheetMemo()
    keys = list(BASE)
    rng = random.Random(7)
    values = dict(BASE)
    for step in range(40):
        got = written(a, values, tmp_path / "memo.xlsx", memo)
        assert got == alone(a, values, tmp_path), step
        kept = memo._entries.get(ooxml._WRITE_KEY)
        if kept is not None:
            view = read_workbook(a, memo=memo)
            for g in kept[0][1]:
                cells = view.sheet(g.sheet).cells
                assert g.refs == [keys[i][1] for i in g.positions]
                assert all(r is cells[r].ref for r in g.refs), step
        values = dict(BASE)
        for _ in range(rng.randint(0, 3)):
            k, v = rng.choice(VARIANTS)
            values[k] = v


def test_references_not_found_as_given(tmp_path: Path) -> None:
    """A reference the reader does not give as the values spell it (``$A$1``, ``a2``): the writer's own loop, the
    output the one written alone, before and after plans that took the kept path."""
    a = book(tmp_path, "a.xlsx")
    memo = SheetMemo()
    odd = {(s, ("$A$1" if c == "A1" else c.lower() if c == "A2" else c)): v for (s, c), v in BASE.items()}
    odd[("S", "$A$1")] = 5.0
    for values in (BASE, odd, BASE, {**BASE, ("S", "A2"): 1.5}, odd, BASE):
        assert written(a, values, tmp_path / "memo.xlsx", memo) == alone(a, values, tmp_path)
