"""Session 22, speed27: a generated registry call site keys a column no evaluator keeps (a row's range such as
``$AG4:$AR4``) from its cells and builds the one-cell rows the function receives only on a memo miss
(:func:`planner.excel.compiled._arg_key`, :func:`planner.excel.compiled._rows`).

- ``_arg_key`` then ``_rows`` against :func:`planner.excel.compiled._arg` (the reference steps, which
  tests/test_speed22.py compares with the old loop) over random arguments: the same error, the same value, the same
  memo-key part (tokenized as the generated site tokenizes it).
- A generated site with a row range against the interpreter (:meth:`planner.excel.expr.Udf.evaluate`) through one
  memo, over random rows: the same answers, the function receiving the same one-cell rows on every miss, and one
  memo entry per distinct old key.
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any

import pytest

from planner import template as ts
from planner.coerce import Column
from planner.excel import compiled
from planner.excel import expr as ex
from planner.excel.expr import Cells, Evaluator, HashedTuple, Lit, Udf, value_token
from planner.excel.values import DIV0, NA, XlError
from planner.registry import load

NAN = float("nan")
CELLS = (1.0, 0.0, -0.0, 2.5, NAN, 1, True, False, None, "", "x", "#N/A", NA, DIV0)


def _old_part(cells: list[Any]) -> tuple[Any, ...]:
    return (list, tuple(zip(map(type, cells), cells)))


class _Ev:
    pass


def _random_value(rnd: random.Random, kept: list[Any]) -> Any:
    kind = rnd.randrange(8)
    if kind < 4:  # a column or a row's range: a new list, or one kept by the evaluator
        v = [rnd.choice(CELLS if kind else CELLS[:6]) for _ in range(rnd.randint(0, 12))]
        if kind == 3:
            kept.append(v)
        return v
    if kind == 4:
        return HashedTuple(tuple((rnd.choice(CELLS), rnd.choice(CELLS)) for _ in range(rnd.randint(1, 3))))
    if kind == 5:
        return Column([rnd.choice(CELLS) for _ in range(3)])
    return rnd.choice((NA, DIV0, True, False, None, 3, ((1.0, 2.0),)))


@pytest.mark.parametrize("seed", range(4))
def test_arg_key_then_rows_is_arg(seed: int) -> None:
    """Over 4,000 random arguments (new and kept columns with errors, error-like texts, ints, booleans, blanks, NaN;
    blocks; a Column; scalars), for an argument with ``row_errors`` and one without: ``_arg_key``'s error is
    ``_arg``'s; else ``_rows`` of its value is ``_arg``'s value and its part is ``_arg``'s part, a tuple's part as
    its token."""
    spec = load()["BACKEND_ARGMAX"]  # argument 2: row_errors; argument 1: not
    rnd = random.Random(seed)
    for _ in range(4000):
        kept: list[Any] = []
        v = _random_value(rnd, kept)
        for i in (1, 2):
            ev_a, ev_b = _Ev(), _Ev()
            if kept or rnd.random() < 0.5:  # an evaluator keeping columns (this one, or others)
                ev_a.column_args = {id(c): c for c in kept}  # type: ignore[attr-defined]
                ev_b.column_args = {id(c): c for c in kept}  # type: ignore[attr-defined]
            got = compiled._arg_key(ev_a, spec, i, v)
            want = compiled._arg(ev_b, spec, i, v)
            if type(want) is not tuple:  # the call's result: an error
                assert type(got) is type(want) and got is want, (i, v)
                continue
            assert type(got) is tuple and len(got) == 2
            value = compiled._rows(got[0])
            assert type(value) is type(want[0]) and repr(value) == repr(want[0]), (i, v)
            part = want[1]
            if type(part) is tuple and isinstance(part[1], tuple):
                try:
                    hash(part)
                except TypeError:  # (cells that are lists: no token, the part as it is; the memo then refuses it)
                    assert got[1] == part, (i, v)
                else:
                    assert got[1] is value_token(part), (i, v)
            else:
                assert got[1] is part or got[1] == part, (i, v)
            if type(v) is list and not any(c is v for c in kept):
                assert got[0] is v  # a column not kept: its cells, the rows not built


@pytest.mark.parametrize("seed", range(3))
def test_row_range_site_is_the_interpreter(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """``MAX_UTILIZATION($AG4:$AR4)`` (a row's range, no evaluator keeps it) compiled and interpreted in turn
    through one memo, over 400 random rows with few distinct values: each answer the memo-less interpreter's, the
    registry receiving the interpreter's one-cell rows on every call the site makes, one memo entry per distinct old
    key (the token table not emptied during the test)."""
    monkeypatch.setattr(ex, "VALUE_TOKENS_LIMIT", 100_000)
    monkeypatch.setattr(ex, "_TOKENS", {})
    monkeypatch.setattr(ex, "_COLUMN_TOKENS", {})
    received: list[str] = []
    base = load()["MAX_UTILIZATION"]
    call = Udf._call

    def impl(*args: Any) -> Any:
        return base.impl(*args)

    def recorded(spec: Any, raw: list[Any]) -> Any:  # what the site hands the registry: one-cell rows, as Udf's
        received.append(repr(raw) + repr([type(v) for v in raw]))
        return call(spec, raw)

    monkeypatch.setattr(Udf, "_call", staticmethod(recorded))

    spec = dataclasses.replace(base, impl=impl)
    functions = {"MAX_UTILIZATION": spec}
    t = ts.RESULTS
    cell = next(e for s, c, e, r in ts.formula_cells() if (s, c) == (t.sheet, t.cell("max_util", 0)))
    rng = next(x for x in cell.children() if type(x) is Udf).args[0]  # the template's own range ($AG4:$AR4)
    assert type(rng) is Cells and rng.last is not None
    e = Udf("MAX_UTILIZATION", (rng,))
    keys = [(t.sheet, t.cell(c.key, 0)) for c in t.columns[t.index(rng.first): t.index(rng.last) + 1]]
    site = compiled._udf(e, 0)
    memo: dict[Any, Any] = {}
    old_keys = set()
    rnd = random.Random(seed)
    cells = (0.5, 0.25, 1, True, None, "", "x", NA)
    for k in range(400):
        inputs = {key: rnd.choice(cells) if rnd.random() < 0.3 else 0.5 for key in keys}
        received.clear()
        ev = Evaluator(inputs, functions, memo=memo)
        got = site(ev) if k % 2 else e.evaluate(ev, 0)
        got_args = list(received)
        received.clear()
        want = e.evaluate(Evaluator(inputs, functions, memo=None), 0)
        assert repr(got) == repr(want) and type(got) is type(want), inputs
        assert all(a == received[0] for a in got_args), inputs  # a miss: the rows the interpreter passes
        if not isinstance(want, (list, XlError)):
            old_keys.add(("MAX_UTILIZATION", _old_part([inputs[key] for key in keys])))
    assert 1 < len(memo) == len(old_keys)


@pytest.mark.parametrize("name", ["BACKEND_SUM", "BACKEND_ARGMAX"])
def test_kept_columns_in_a_site_are_the_interpreter(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A generated site whose column arguments the evaluator keeps (``column_args``: not prepared yet, then prepared
    by the first call; with errors, in an argument with and without ``row_errors``), called three times in one
    evaluator: every answer the memo-less interpreter's, and the function receiving the interpreter's arguments
    (one memo shared by the site's calls and a second evaluator: as many entries as the interpreter's own memo, whose
    keys are the old ones; the token table not emptied during the test)."""
    monkeypatch.setattr(ex, "VALUE_TOKENS_LIMIT", 100_000)
    monkeypatch.setattr(ex, "_TOKENS", {})
    monkeypatch.setattr(ex, "_COLUMN_TOKENS", {})
    received: list[str] = []
    base = load()[name]

    def impl(*args: Any) -> Any:
        received.append(repr(args))
        return base.impl(*args)

    spec = dataclasses.replace(base, impl=impl)
    functions = {name: spec}
    rnd = random.Random(len(name))
    cells = (1.0, 2.0, 1, True, None, "", "x", NA, DIV0)
    memo: dict[Any, Any] = {}
    interp_memo: dict[Any, Any] = {}
    for _ in range(600):
        n = rnd.randint(1, 4)
        backends = [rnd.choice(("a", "b", NA)) if rnd.random() < 0.2 else rnd.choice(("a", "b")) for _ in range(n)]
        values = [rnd.choice(cells) if rnd.random() < 0.4 else 1.0 for _ in range(n)]
        args = (Lit("a"), Lit(backends), Lit(values)) + ((Lit(values),) if name == "BACKEND_ARGMAX" else ())
        e = Udf(name, args)
        site = compiled._udf(e, 0)
        received.clear()
        want = e.evaluate(Evaluator({}, functions, memo=None), 0)
        want_args = list(received)
        e.evaluate(Evaluator({}, functions, memo=interp_memo), 0)  # (the interpreter's keys: the old ones)
        for m in (None, memo, memo):
            ev = Evaluator({}, functions, memo=m)
            ev.column_args = {id(backends): backends, id(values): values}  # type: ignore[attr-defined]
            for _ in range(3):
                received.clear()
                got = site(ev)
                assert repr(got) == repr(want) and type(got) is type(want), (backends, values)
                assert all(a == want_args[0] for a in received), (backends, values)
    assert 1 < len(memo) == len(interp_memo)


@pytest.mark.parametrize("limit", [5, 1_000_000])
def test_column_token_is_value_token(limit: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """:func:`planner.excel.expr.column_token` over 6,000 random columns (14 kinds of cells, 0-4 of them, so that
    equal columns come back), with the tables emptied every 5 parts or never: always :func:`value_token`'s token of
    the old part (also right after either table was emptied), and neither table above its limit."""
    monkeypatch.setattr(ex, "VALUE_TOKENS_LIMIT", limit)
    monkeypatch.setattr(ex, "_TOKENS", {})
    monkeypatch.setattr(ex, "_COLUMN_TOKENS", {})
    rnd = random.Random(limit)
    for _ in range(6000):
        cells = [rnd.choice(CELLS) for _ in range(rnd.randint(0, 4))]
        types = tuple(map(type, cells))
        if rnd.random() < 0.5:  # the part made first elsewhere (a kept column's, column_arg)
            value_token(_old_part(cells))
        tok = ex.column_token(types, cells)
        assert tok is value_token(_old_part(cells)), cells
        assert len(ex._TOKENS) <= limit and len(ex._COLUMN_TOKENS) <= limit
    assert ex.column_token((list,), [[1.0]]) == (list, ((list, [1.0]),))  # unhashable: the part as it is


def test_bar_ends_kept_blocks_do_not_change_them() -> None:
    """A plan's bar ends after one that scales the Fleet table (``mfu``, whose Fleet block is not the plan's), in
    two orders, each end the same as computed alone from empty caches (:func:`planner.whatif.bars._keep_blocks`
    gives the base only blocks of sheets the end did not change); the base then holds the Fleet block, and no
    block of a sheet every end computes again."""
    from planner.excel.expr import Block, block_key
    from planner.template.sensitivity import BAR_TABLES
    from planner.whatif import bars
    from planner.whatif.source import load_inputs

    inputs = load_inputs(Path(__file__).resolve().parents[1] / "samples" / "seed.toml")
    ev = Evaluator({**ts.fixed_cells(), **inputs, **ts.evaluate_plan(inputs)}, {})
    blocks = {name: Block(t).evaluate(ev, 0) for name, t in BAR_TABLES}
    ends = [(g, f) for g in ("mfu", "input_tokens", "output_tokens", "cache_hit_rate") for f in (0.8, 1.2)]

    def clear() -> None:
        bars._bar.cache_clear()
        bars._base.cache_clear()

    alone = {}
    for g, f in ends:
        clear()
        alone[(g, f)] = repr(bars.bar_figures(blocks, group=g, factor=f))
    for order in (ends, ends[::-1]):
        clear()
        got = {(g, f): repr(bars.bar_figures(blocks, group=g, factor=f)) for g, f in order}
        assert got == alone
    base_ev = bars._base(tuple(bars._frozen(blocks.get(name)) for name in bars.TABLES))[2]
    kept = base_ev.__dict__.get("_block_args", {})
    assert block_key(ts.FLEET) in kept  # (the Fleet block of an end that did not scale it)
    assert all(bars.block_sheet(k) in ("Fleet", "Specs", "Providers") for k in kept), list(kept)


def _old_differing(a: Any, b: Any) -> list[Any]:
    from planner.whatif import bars

    return [column for column, keys in bars._cone_inputs()[1] if bars._differ(a, b, keys)]


@pytest.mark.parametrize("seed", range(3))
def test_differing_columns_are_the_old_loop(seed: int) -> None:
    """:func:`planner.whatif.bars._differing_columns` against the old per-column :func:`~planner.whatif.bars._differ`
    loop, over 300 random pairs of cell mappings (a few cells changed in value, in type only: 1.0 and TRUE, "" and a
    blank, or missing), the same columns in the same order; and :func:`~planner.whatif.bars._untainted` the cone's
    cells outside the cone of those columns, in the cone's order."""
    from planner.whatif import bars

    every, _bounds = bars._cone_input_cells()
    rnd = random.Random(seed)
    for _ in range(300):
        a = {k: rnd.choice((1.0, 2.0, "x", "", None)) for k in every if rnd.random() < 0.9}
        b = dict(a)
        for _ in range(rnd.choice((0, 0, 1, 2, 3))):
            k = rnd.choice(every)
            v = a.get(k)
            b[k] = {1.0: True, "": None, None: ""}.get(v, 1.0) if rnd.random() < 0.5 else rnd.choice((2.0, "y"))
            if rnd.random() < 0.2:
                b.pop(k)
        got = bars._differing_columns(a, b)
        assert list(got) == _old_differing(a, b)
    for differ in ((), (("tblSpecs", "fleet"),), tuple(c for c, _k in bars._cone_inputs()[1][:2])):
        tainted = set(bars._cone(differ)) if differ else ()
        keys, getter = bars._untainted(differ)
        assert keys == tuple(k for k in bars._cone(None) if k not in tainted)
        assert getter is not None and getter({k: k for k in keys}) == keys


def test_column_arg_is_the_old_steps() -> None:
    """:func:`planner.excel.compiled.column_arg` over 3,000 random columns (14 kinds of cells, errors among them):
    the cells, the first error, :func:`value_token`'s token of the old part, and the one-cell rows."""
    rnd = random.Random(11)
    for _ in range(3000):
        cells = [rnd.choice(CELLS) for _ in range(rnd.randint(0, 8))]
        got = compiled.column_arg(cells)
        error = next((x for x in cells if isinstance(x, XlError)), None)
        assert got[0] is cells and got[1] is error, cells
        assert got[2] is value_token(_old_part(cells)), cells
        assert type(got[3]) is Column and repr(got[3]) == repr([[x] for x in cells]), cells


def test_check_number_refuses_what_it_refused() -> None:
    """:func:`planner.errors.check_number`'s finiteness test (one chained comparison) against the old one (``x != x
    or x in (inf, -inf)``) over NaNs, both infinities, the largest and smallest floats, zeros and random floats."""
    import math
    import sys

    from planner.errors import ArgumentError, check_number

    rnd = random.Random(3)
    values = [math.nan, -math.nan, math.inf, -math.inf, sys.float_info.max, -sys.float_info.max, sys.float_info.min,
              5e-324, 0.0, -0.0, 1e308 * 10, -1e308 * 10]
    values += [rnd.uniform(-1e6, 1e6) for _ in range(500)] + [rnd.choice((1, -1)) * 10.0 ** rnd.randint(-320, 308)
                                                              for _ in range(500)]
    for v in values:
        refused = v != v or v in (math.inf, -math.inf)
        try:
            got = check_number("x", v)
        except ArgumentError:
            assert refused, v
        else:
            assert not refused and got is v, v
