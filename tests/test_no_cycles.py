"""A refusal held in a column (``Arg.row_errors``) must not tie the call stack into a reference cycle.

A caught exception keeps its traceback, the traceback keeps the frames it passed through, and each frame keeps its
caller's: a refusal kept in the list that one of those frames holds made a cycle reaching every frame of the
evaluation and everything they held (the plan's view of 12,000 cells, its book, the evaluator). Reference counting
could then free none of it; the cyclic collector did, at about 22,000 objects a plan (measured on the benchmark plans,
2026-12-05), which cost a batch worker a full traversal of them. Each test fails on the code before the fix."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest

from planner import coerce, recalc
from planner.errors import Refusal, read_row
from planner.scenario import parse_scenario, tomllib
from planner.template.build import write_plan
from planner.template.inputs import scenario_inputs
from planner.validate import fastpath

BAD = "kv_budget: got '-91.38 GiB', expected a positive KV budget"


def test_a_refusal_held_in_a_column_carries_no_traceback() -> None:
    cells = coerce.coerce_sequence("numbers", "values", [[1.0], [BAD], [2.0]], row_errors=True)
    assert cells[0] == 1 and cells[2] == 2
    assert isinstance(cells[1], Refusal) and str(cells[1]) == BAD
    assert cells[1].__traceback__ is None


def test_reading_a_held_refusal_raises_its_message_and_leaves_it_clean() -> None:
    held = coerce.coerce_sequence("numbers", "values", [[BAD]], row_errors=True)[0]
    with pytest.raises(Refusal) as info:
        read_row(held)
    assert str(info.value) == BAD and type(info.value) is Refusal
    assert info.value is not held  # raising the held one would give it this call's traceback
    assert held.__traceback__ is None


PLAN = """
[plan]
name = "row-error"
utilization_threshold = 0.8
monthly_growth = 0.1
avg_to_peak_ratio = 0.4
forecast_months = 12

[[providers]]
name = "api"
provider = "anthropic"
tier = "tier-4"
model = "claude-sonnet-4.5"

[[routes]]
name = "chat"
kind = "interactive"
peak_qps = 2
avg_input_tokens = 2000
avg_output_tokens = 200
p95_context_tokens = 4000
max_tokens = 800
cache_hit_rate = 0.5
ttft_slo_s = 2
tpot_slo_s = 0.1
backend = "api"

[[routes]]
# more cache writes than the non-read input (2000 x (1 - 0.5) = 1000): CAPACITY_ITPM refuses this row, and the
# refusal is held in place in every per-route column BACKEND_SUM and its kin read
name = "rag"
kind = "interactive"
peak_qps = 1
avg_input_tokens = 2000
avg_output_tokens = 200
p95_context_tokens = 4000
max_tokens = 800
cache_hit_rate = 0.5
cache_write_tokens = 1500
ttft_slo_s = 2
tpot_slo_s = 0.1
backend = "api"
"""


def test_a_recomputed_plan_with_a_row_error_is_freed_without_the_collector(tmp_path: Path) -> None:
    path = write_plan(scenario_inputs(parse_scenario(tomllib.loads(PLAN))), tmp_path / "plan.xlsx")
    held: list[Refusal] = []
    original = coerce.coerce_sequence

    def seen(*args, **kwargs):  # type: ignore[no-untyped-def]
        out = original(*args, **kwargs)
        held.extend(c for c in out if isinstance(c, Refusal))
        return out

    fastpath._MEMO.clear()  # the registry-call memo would answer the calls that hold the refusal
    gc.collect()
    gc.disable()
    try:
        coerce.coerce_sequence = seen  # type: ignore[assignment]
        try:
            result = recalc.compute(path)
        finally:
            coerce.coerce_sequence = original  # type: ignore[assignment]
        assert any("cache_write_tokens" in str(r) for r in held), "the plan must hold a refusal in a column"
        assert result.engine == "fast"
        view = weakref.ref(result.view)
        held.clear()
        del result
        assert view() is None, "the plan's view outlived its result: a reference cycle holds it"
    finally:
        gc.enable()


def test_a_bar_end_and_its_store_go_when_it_returns() -> None:
    """A bar end's store and evaluator referred to each other (the store computes cells with the evaluator, whose
    ``values`` it is): each end was a cycle of a few thousand cells left to the collector. The store now holds its
    evaluator weakly; the end (and the base, when the cache drops it) goes by reference counting alone."""
    from planner import template as ts
    from planner.template import sensitivity
    from planner.whatif import bars, levers

    inputs = scenario_inputs(parse_scenario(tomllib.loads(PLAN.replace("cache_write_tokens = 1500", ""))))
    blocks = {name: _block(inputs, t) for name, t in sensitivity.BAR_TABLES}
    key = tuple(bars._frozen(blocks.get(name)) for name in bars.TABLES)
    gc.collect()
    gc.disable()
    try:
        got = bars._base.__wrapped__(key)  # (inputs, store, evaluator): the evaluator held while it computes
        inputs_, base = got[0], got[1]
        base_ev = got[2] if len(got) > 2 else base.ev  # (before the fix the store held it, strongly)
        del got
        g = levers.group("input_tokens")
        values, ev = bars._end(base, levers.scaled_cells(inputs_, g, 0.8), ((ts.ROUTES.name, g.key),))
        util = values[(ts.RESULTS.sheet, ts.RESULTS.cell("max_util", 0))]  # computed through the store
        assert isinstance(util, float)
        # (a store, a dict, cannot be referred to weakly: a marker object held by each stands for it)
        marks = [_Mark(), _Mark()]
        values[("bar-test", "mark")], base[("bar-test", "mark")] = marks
        gone = [weakref.ref(x) for x in (ev, base_ev, *marks)]
        del values, ev, base, base_ev, inputs_, marks
        assert [r() for r in gone] == [None] * 4, "a bar end's store or evaluator outlived it: a reference cycle"
    finally:
        gc.enable()


def _block(inputs: dict, t) -> list[list]:  # type: ignore[no-untyped-def]
    """A bar table as SENSITIVITY_BAR receives it: the header row, then the data rows (``inputs`` by cell)."""
    rows = [[c.header for c in t.columns]]
    for i in range(t.rows):
        rows.append([inputs.get((t.sheet, t.cell(c.key, i))) for c in t.columns])
    return rows


class _Mark:
    """An object a store holds, referable weakly."""
