"""A tornado bar's base takes the plan's own values of its cone from the whole plan's evaluation running now
(session 19: :data:`planner.template.fast.WHOLE_PLAN`, :func:`planner.whatif.bars._plan_cone_values`) instead of
computing them again, but only the cells that read nothing the bar's tables give otherwise than the plan holds it.

The oracle is the bar computed alone (no evaluation of the whole plan around it: the base computes every cell of its
cone itself, as in Excel and xlwings Lite), on generated 20-route plans and the samples; and a plan whose computed
values are deliberately wrong where the bar must not use them."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_compiled_expr import _generated  # the benchmark's generated plans (tests/test_compiled_expr.py)

from planner import template as ts
from planner.excel.expr import Block, Evaluator
from planner.template import fast
from planner.template.sensitivity import BAR_TABLES
from planner.whatif import bars
from planner.whatif.source import load_inputs

ROOT = Path(__file__).resolve().parents[1]
ENDS = tuple((g, f) for g in ("input_tokens", "output_tokens", "cache_hit_rate") for f in (0.8, 1.2))


def _plan(inputs: dict) -> tuple[dict, dict]:
    """The plan's store (fixed cells, inputs, every computed cell) and the bar's tables as the plan's cells give them
    through the registry's coercion (as SENSITIVITY_BAR receives them)."""
    from planner.coerce import coerce_table

    # a workbook's numbers are floats (what the reader gives the fast path): an int setting would differ in type
    inputs = {k: float(v) if type(v) is int else v for k, v in inputs.items()}
    store = {**ts.fixed_cells(), **inputs, **ts.evaluate_plan(inputs)}
    ev = Evaluator(store, {})
    blocks = {name: [list(r) for r in coerce_table(Block(t).evaluate(ev, 0))] for name, t in BAR_TABLES}
    return store, blocks


def _ends(blocks: dict) -> dict:
    bars._bar.cache_clear()
    bars._base.cache_clear()
    return {(g, f): repr(bars.bar_figures(blocks, group=g, factor=f)) for g, f in ENDS}


def _ends_inside(store: dict, computed: dict, blocks: dict) -> dict:
    token = fast.WHOLE_PLAN.set((store, computed))
    try:
        return _ends(blocks)
    finally:
        fast.WHOLE_PLAN.reset(token)


INPUTS = [pytest.param(lambda s=s: _generated(s), id=f"generated-{s}") for s in (3, 11, 29)] + [
    pytest.param(lambda p=p: load_inputs(p), id=p.stem) for p in sorted((ROOT / "samples").glob("*.toml"))[:3]]


@pytest.mark.parametrize("make", INPUTS)
def test_bar_ends_inside_the_plans_evaluation_equal_the_bar_alone(make) -> None:
    store, blocks = _plan(make())
    computed = {k: store[k] for k in fast.compiled_cells()}
    alone = _ends(blocks)
    assert _ends_inside(store, computed, blocks) == alone
    # and the base took most of its cone from the plan (what makes it cheaper): the cells that read only columns
    # the tables give as the plan holds them
    token = fast.WHOLE_PLAN.set((store, computed))
    try:
        taken = bars._plan_cone_values(bars.cells(blocks))
    finally:
        fast.WHOLE_PLAN.reset(token)
    assert 0 < len(taken) < len(bars._cone(None))


def test_cells_reading_a_column_the_tables_give_otherwise_are_not_taken() -> None:
    """The plan's Specs hold "" on rows without a fleet where the bar's table gives a blank: every cell of the cone
    that reads a Specs column is computed by the base. Poisoning the plan's values of exactly those cells leaves
    every bar end as the bar alone computes it; poisoning a cell that is taken changes an end (it is used)."""
    store, blocks = _plan(_generated(7))
    computed = {k: store[k] for k in fast.compiled_cells()}
    alone = _ends(blocks)
    token = fast.WHOLE_PLAN.set((store, computed))
    try:
        taken = bars._plan_cone_values(bars.cells(blocks))
    finally:
        fast.WHOLE_PLAN.reset(token)
    untaken = [k for k in bars._cone(None) if k not in taken]
    assert untaken
    poisoned = {**computed, **{k: 1e9 for k in untaken}}
    assert _ends_inside({**store, **poisoned}, poisoned, blocks) == alone
    # a taken cell that no bar end computes again (outside every end's column cone) is read from the base: some
    # such cell, poisoned, changes an end
    again = set().union(*(bars._cone(((ts.ROUTES.name, k),)) for k in ("avg_input_tokens", "avg_output_tokens",
                                                                        "cache_hit_rate")))
    candidates = [k for k in taken if k not in again and isinstance(computed[k], float)][:60]
    assert candidates
    assert any(_ends_inside({**store, k: computed[k] * 7 + 1}, {**computed, k: computed[k] * 7 + 1}, blocks) != alone
               for k in candidates)


def test_a_plan_setting_that_differs_takes_nothing() -> None:
    store, blocks = _plan(_generated(5))
    computed = {k: store[k] for k in fast.compiled_cells()}
    setting = (ts.PLAN.sheet, ts.plan_value_cell(ts.PLAN_SETTINGS[0][0]))
    other = {**store, setting: "not the bar's"}
    token = fast.WHOLE_PLAN.set((other, computed))
    try:
        assert bars._plan_cone_values(bars.cells(blocks)) == {}
    finally:
        fast.WHOLE_PLAN.reset(token)


def test_outside_a_whole_plan_evaluation_nothing_is_taken() -> None:
    _store, blocks = _plan(_generated(5))
    assert fast.WHOLE_PLAN.get() is None and bars._plan_cone_values(bars.cells(blocks)) == {}


def test_the_cone_reads_only_the_bars_tables() -> None:
    """What makes the comparison complete: every column the cone reads and does not compute is one of the six
    tables' (a Plan setting aside), so a cell the base takes reads only cells that were compared."""
    names = {t.name for _n, t in BAR_TABLES}
    reads = ts.cone_reads(bars._TARGETS, bars._GIVEN, reads=bars._reads())
    assert reads and {name for name, _k in reads} <= names
