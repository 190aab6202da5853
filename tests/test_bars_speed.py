"""The tornado's bar ends (SENSITIVITY_BAR, :mod:`planner.whatif.bars`) as they are evaluated since session 18: a bar
end's store starts as a copy of the base's store (the plan's own cells computed so far) without its column's cone,
with only the scaled cells (:func:`planner.whatif.levers.scaled_cells`) written over it.

The oracle is THE plan method (:func:`planner.template.evaluate_plan`) on the scaled plan, as in tests/test_whatif.py;
the bar ends are also compared with themselves computed from empty caches in other orders (the base then holds other
cells when an end starts): the values must not depend on what the base has computed before.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planner import template as ts
from planner.excel.expr import Block, Evaluator
from planner.scenario import parse_scenario, tomllib
from planner.template.inputs import catalog_inputs, scenario_inputs
from planner.template.sensitivity import BAR_TABLES
from planner.whatif import bars, levers
from planner.whatif.source import load_inputs

ROOT = Path(__file__).resolve().parents[1]
ENDS = tuple((g, f) for g in ("input_tokens", "output_tokens", "cache_hit_rate") for f in (0.8, 1.2))


def _blocks(inputs: dict) -> dict:
    """The tables SENSITIVITY_BAR receives (header row included), as the plan's evaluated cells give them."""
    ev = Evaluator({**ts.fixed_cells(), **inputs, **ts.evaluate_plan(inputs)}, {})
    return {name: Block(t).evaluate(ev, 0) for name, t in BAR_TABLES}


def _clear() -> None:
    bars._bar.cache_clear()
    bars._base.cache_clear()


def _ends(blocks: dict, order: tuple = ENDS) -> dict:
    return {(g, f): repr(bars.bar_figures(blocks, group=g, factor=f)) for g, f in order}


def _again(inputs: dict, g: str, f: float) -> levers.PlanFigures:
    return levers.figures(ts.evaluate_plan(levers.scaled(inputs, levers.group(g), f)), inputs)


def _close(a, b) -> bool:
    if b is None:
        return a == bars.MONTHS_NEVER
    return isinstance(a, float) and abs(a - b) <= 1e-9 * max(1.0, abs(b))


def _grown_apart() -> dict:
    text = (ROOT / "samples" / "seed.toml").read_text(encoding="utf-8")
    text = text.replace('name = "chat"\n', 'name = "chat"\nmonthly_growth = 0.2\n', 1)
    text = text.replace('name = "completion"\n', 'name = "completion"\nmonthly_growth = 0.03\n', 1)
    return {**catalog_inputs(), **scenario_inputs(parse_scenario(tomllib.loads(text)))}


@pytest.fixture(scope="module")
def seed() -> dict:
    return load_inputs(ROOT / "samples" / "seed.toml")


def test_scaled_is_the_inputs_with_the_scaled_cells_written_over(seed):
    for g in levers.GROUPS:
        for f in (0.8, 1.2):
            edits = levers.scaled_cells(seed, g, f)
            assert levers.scaled(seed, g, f) == {**seed, **edits}
            assert edits, g.name  # every group scales at least one cell of the seed


@pytest.mark.parametrize("plan", ["seed", "grown_apart"])
def test_bar_ends_equal_the_plan_evaluated_again_whatever_the_base_holds(plan, seed):
    """Each end computed first (the base empty), last (the base holding what five ends read) and alone: one value,
    the whole plan evaluated again with the group scaled."""
    inputs = seed if plan == "seed" else _grown_apart()
    blocks = _blocks(inputs)
    _clear()
    forward = _ends(blocks)
    _clear()
    backward = _ends(blocks, tuple(reversed(ENDS)))
    alone = {}
    for end in ENDS:
        _clear()
        alone.update(_ends(blocks, (end,)))
    assert forward == backward == alone
    _clear()
    for g, f in ENDS:
        bar = bars.bar_figures(blocks, group=g, factor=f)
        again = _again(inputs, g, f)
        assert _close(bar.max_util, again.highest_utilization), (g, f, bar, again)
        assert _close(bar.breach_months, again.first_breach_months), (g, f, bar, again)


def test_plans_that_differ_in_one_field(seed):
    """One route's input tokens 10 % higher: its bar ends computed while the caches hold the first plan's base are
    its own (the same as from empty caches, and the plan evaluated again), not the first plan's."""
    t = ts.ROUTES
    cell = (t.sheet, t.cell("avg_input_tokens", 0))
    other = {**seed, cell: seed[cell] * 1.1}
    first, second = _blocks(seed), _blocks(other)
    _clear()
    a = _ends(first)
    b = _ends(second)
    _clear()
    assert b == _ends(second)
    assert a != b
    for g, f in ENDS:
        bar = bars.bar_figures(second, group=g, factor=f)
        again = _again(other, g, f)
        assert _close(bar.max_util, again.highest_utilization), (g, f)
        assert _close(bar.breach_months, again.first_breach_months), (g, f)


def test_an_end_never_starts_from_the_base_values_of_its_cone(seed):
    """The base's own values of the cone's cells (utilization, breach) are not the scaled plan's: an end computed
    after the base has computed its whole cone starts without any of them (each is computed again from the scaled
    cells), and shows the scaled plan, not the base."""
    blocks = _blocks(seed)
    _clear()
    key = tuple(bars._frozen(blocks.get(name)) for name in bars.TABLES)
    inputs, base, _base_ev = bars._base(key)  # the evaluator held while the base computes
    for k in bars._cone(None):  # the whole cone of the base computed: every cell an end could take from it
        base[k]
    g = levers.group("input_tokens")
    changed = ((ts.ROUTES.name, g.key),)
    values, _ev = bars._end(base, levers.scaled_cells(inputs, g, 0.8), changed)
    cone = bars._cone(changed)
    assert cone and not any(k in values for k in cone)
    assert all(values[k] == v for k, v in levers.scaled_cells(inputs, g, 0.8).items())
    util = (ts.RESULTS.sheet, ts.RESULTS.cell("max_util", 0))
    assert util in cone and values[util] != base[util]
    bar = bars.bar_figures(blocks, group="input_tokens", factor=0.8)
    again = _again(seed, "input_tokens", 0.8)
    assert _close(bar.max_util, again.highest_utilization)
    assert _close(bar.breach_months, again.first_breach_months)
