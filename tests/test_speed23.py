"""Session 21, speed23: the shortcuts of the tornado's bar ends (:mod:`planner.whatif.bars`) and of the template's
compiled evaluation (:mod:`planner.template.fast`) against their long paths, over many inputs.

- a bar's tables converted once per registry rows object (``bars._frozen``): equal to, and hashed like, the tuple
  of row tuples; another object never gets a kept tuple;
- the plan's values compared with a bar's tables column by column in C (``bars._differ``): the rule it replaced
  (a cell differs in value or only in type) over random cells;
- a base's store starting with the blanks it would read (``bars._blanks``): the same bar ends as without them;
- a cell's reads (``fast.reads``): the precedents the fast path finds in the rendered formula
  (:func:`planner.validate.fastpath.template_graph`), for every template formula cell;
- the Plan settings compiled as references (``fast._settings_as_cells``): the same formula text, no setting left;
- a column read by its key and table identity (``FastEvaluator.column``): the same list as the general read, with
  two tables sharing a column key read in turn.
"""

from __future__ import annotations

import dataclasses
import math
import random
from pathlib import Path

import pytest
from test_bars_speed import _blocks  # the tables SENSITIVITY_BAR receives (tests/test_bars_speed.py)

from planner import template as ts
from planner.coerce import SharedRows
from planner.excel.expr import Evaluator, HashedTuple
from planner.template import fast
from planner.template.layout import PerRow, PlanValue
from planner.template.sensitivity import BAR_TABLES
from planner.whatif import bars
from planner.whatif.source import load_inputs

ROOT = Path(__file__).resolve().parents[1]
ENDS = tuple((g, f) for g in ("input_tokens", "output_tokens", "cache_hit_rate") for f in (0.8, 1.2))
CELLS = (1.0, 0.0, -0.0, 2.5, True, False, 1, "a", "A", "", " ", None, "#N/A", float("nan"))


def _clear() -> None:
    bars._bar.cache_clear()
    bars._base.cache_clear()
    bars._FROZEN.clear()


@pytest.fixture(scope="module")
def seed() -> dict:
    return load_inputs(ROOT / "samples" / "seed.toml")


def _plain(rows):  # the long path: the tuple of row tuples bars._frozen gave before
    if rows is None or isinstance(rows, tuple) and all(isinstance(r, tuple) for r in rows):
        return rows
    if rows and not isinstance(rows[0], (list, tuple)):
        return (tuple(rows),)
    return tuple(tuple(r) for r in rows)


def test_frozen_equals_the_tuple_of_rows_and_hashes_alike() -> None:
    rng = random.Random(23)
    for _ in range(300):
        n, m = rng.randint(0, 6), rng.randint(1, 5)
        rows = [[rng.choice(CELLS[:-1]) for _j in range(m)] for _i in range(n)]
        for given in (rows, SharedRows(rows), tuple(map(tuple, rows)), rows[0] if rows else rows):
            got, want = bars._frozen(given), _plain(given)
            assert got == want and type(got) is HashedTuple and hash(got) == hash(want), given
    assert bars._frozen(None) is None


def test_frozen_keeps_a_tuple_per_rows_object_and_no_more() -> None:
    bars._FROZEN.clear()
    a = SharedRows([["x", 1.0]])
    first = bars._frozen(a)
    assert bars._frozen(a) is first  # the same rows object: the kept tuple
    b = SharedRows([["x", 2.0]])
    bars._FROZEN[id(b)] = (a, first)  # an entry whose rows are another object (an id reused): not b's
    assert bars._frozen(b) == (("x", 2.0),)
    plain = [["x", 1.0]]
    assert bars._frozen(plain) is not bars._frozen(plain)  # a list its caller may change: converted every time
    for i in range(3 * bars._FROZEN_SIZE):
        bars._frozen(SharedRows([[float(i)]]))
        assert len(bars._FROZEN) <= bars._FROZEN_SIZE
    bars._FROZEN.clear()


def _differs_long(a: dict, b: dict, keys) -> bool:  # the rule bars._plan_cone_values applied cell by cell
    def differs(k):
        x, y = a.get(k), b.get(k)
        return x is not y and (type(x) is not type(y) or x != y)

    return any(map(differs, keys))


def test_differ_is_the_cell_by_cell_rule() -> None:
    rng = random.Random(21)
    nan = float("nan")
    keys = tuple(("S", f"A{i}") for i in range(6))
    for _ in range(5000):
        a, b = {}, {}
        for k in keys:
            r = rng.random()
            if r < 0.1:
                continue  # absent from both: blank
            x = rng.choice(CELLS)
            a[k] = x
            if r < 0.6:
                b[k] = x  # the same object (a NaN too)
            elif r < 0.7:
                b[k] = nan if x is nan else x  # another NaN object where x is one
            elif r < 0.8:
                pass  # absent from b only
            else:
                b[k] = rng.choice(CELLS)
        assert bars._differ(a, b, keys) == _differs_long(a, b, keys), (a, b)


def test_blanks_are_cells_the_base_reads_as_blank() -> None:
    blanks = bars._blanks()
    cone = set(bars._cone(None))
    fixed = ts.fixed_cells()
    assert blanks and all(v is None for v in blanks.values())
    assert not cone & blanks.keys() and not fixed.keys() & blanks.keys()
    read = set().union(*(fast.reads(*bars._cell_exprs()[k]) for k in cone))
    assert blanks.keys() <= read


def test_bar_ends_with_and_without_the_blanks(seed, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = _blocks(seed)
    _clear()
    want = {(g, f): repr(bars.bar_figures(blocks, group=g, factor=f)) for g, f in ENDS}
    _clear()
    monkeypatch.setattr(bars, "_blanks", lambda: {})
    got = {(g, f): repr(bars.bar_figures(blocks, group=g, factor=f)) for g, f in ENDS}
    _clear()
    assert got == want


def test_reads_are_the_rendered_formulas_precedents() -> None:
    from planner.validate.fastpath import template_graph

    prec = template_graph()[0]
    cells = ts.formula_cells()
    assert len(cells) > 7000
    for s, c, e, r in cells:
        assert fast.reads(e, r) == prec[(s, c)], (s, c)


def _has_setting(e) -> bool:
    todo = [e]
    while todo:
        x = todo.pop()
        if type(x) is PlanValue:
            return True
        todo.extend(x.children())
    return False


def test_settings_as_cells_render_the_same_formula() -> None:
    changed = 0
    for _s, _c, e, r in ts.formula_cells():
        e = e.exprs[r] if type(e) is PerRow else e
        got = fast._settings_as_cells(e)
        assert got.render(r) == e.render(r)
        assert not _has_setting(got)
        changed += got is not e
    assert changed > 1000  # (the Forecast, What-if, Results, Profiles and Options sheets read settings)


def test_column_by_key_and_table_identity() -> None:
    twin = dataclasses.replace(ts.ROUTES)  # an equal table, another object: read through its name as before
    assert twin is not ts.ROUTES
    store = {(ts.ROUTES.sheet, ts.ROUTES.cell("name", i)): f"r{i}" for i in range(ts.ROUTES.rows)}
    store.update({(ts.FLEET.sheet, ts.FLEET.cell("name", i)): f"f{i}" for i in range(ts.FLEET.rows)})
    ev = fast.evaluator(store, {}, memo=None)
    general = Evaluator(dict(ev.values), {})
    rng = random.Random(5)
    for _ in range(200):
        t = rng.choice((ts.ROUTES, ts.FLEET, twin))
        key = rng.choice(("name", "backend"))
        try:
            want = [("" if v == "" else v) for v in general.column(t, key)]
        except KeyError:
            with pytest.raises(KeyError):
                ev.column(t, key)
            continue
        got = ev.column(t, key)
        assert got == want, (t.name, key)
    assert ev.column(ts.ROUTES, "name") is ev.column(twin, "name")  # one list per (table name, key), as before
    assert ev.column(ts.FLEET, "name") != ev.column(ts.ROUTES, "name")


def test_nan_in_differ_is_a_difference_unless_the_same_object() -> None:
    k = (("S", "A1"),)
    x, y = float("nan"), float("nan")
    assert not bars._differ({k[0]: x}, {k[0]: x}, k)
    assert bars._differ({k[0]: x}, {k[0]: y}, k)
    assert math.isnan(x)


def test_column_cells_are_the_tables_cells() -> None:
    from planner.whatif import levers

    tables = [t for _name, t in BAR_TABLES] + [ts.RESULTS]
    for t in tables:
        for c in t.columns:
            got = levers.column_cells(t, c.key)
            assert got == tuple((t.sheet, t.cell(c.key, i)) for i in range(t.rows))
            assert levers.column_cells(t, c.key) is got  # kept
    twin = dataclasses.replace(ts.ROUTES, name="tblTwin", sheet="Twin")  # another table object: its own cells
    assert levers.column_cells(twin, "name")[0] == ("Twin", "A4")
    assert levers.column_cells(ts.ROUTES, "name")[0] == ("Routes", "A4")
    assert len(levers._COLUMN_CELLS) <= 256
    with pytest.raises(KeyError):
        levers.column_cells(ts.ROUTES, "no such column")
