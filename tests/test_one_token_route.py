"""A route of one output token has no TPOT (its only token is the first): its TPOT SLO does not bind.

Before template 2.6.0 a classifier route (one output token) carried its TPOT SLO into the sustainable rate and TPOT
utilization, so an SLO below the fleet's decode floor (a 70B model at TP 4 on H100 reads about 35 GB per GPU each
decode step, ~10.5 ms) made LOAD infinite although no token of that route ever waits on a decode step.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planner import serving
from planner import template as ts
from planner.decision import UTIL_INFINITE
from planner.scenario import parse_scenario, tomllib
from planner.template.inputs import catalog_inputs, scenario_inputs

ROOT = Path(__file__).resolve().parents[1]


def _plan(output_tokens: int) -> dict:
    data = tomllib.loads((ROOT / "samples" / "selfhost-kv.toml").read_text())
    route = data["routes"][0]
    route.update(name="classify", kind="latency-critical", peak_qps=3, avg_input_tokens=2000,
                 avg_output_tokens=output_tokens, p95_context_tokens=4000, max_tokens=1, cache_hit_rate=0.0,
                 ttft_slo_s=0.5, tpot_slo_s=0.005)  # 5 ms: below the fleet's decode floor
    inputs = {**catalog_inputs(), **scenario_inputs(parse_scenario(data, path="classify.toml"))}
    return ts.evaluate_plan(inputs)


def _res(values: dict, key: str) -> object:
    return values[(ts.RESULTS.sheet, ts.RESULTS.cell(key, 0))]


def test_a_one_token_route_is_held_to_its_ttft_slo_only() -> None:
    values = _plan(1)
    assert _res(values, "tpot_util") == 0
    rate = _res(values, "sustainable_rate")
    assert isinstance(rate, float) and rate > 0
    assert _res(values, "load_util") < UTIL_INFINITE
    # the same replica with a TPOT SLO that never binds (10 s a token): only TTFT limits the rate
    loose = serving.max_rate_at_slo("llama-3.1-70b", "h100-sxm", tp=4, ttft_slo_s=0.5, tpot_slo_s=10.0,
                                    input_tokens=2000, output_tokens=1, kv_cache_dtype="bf16")
    assert rate == pytest.approx(loose, rel=1e-12)


def test_two_tokens_keep_the_tpot_slo() -> None:
    """Two output tokens have one gap between them: the 5 ms TPOT SLO applies, and no load meets it."""
    values = _plan(2)
    assert _res(values, "load_util") == UTIL_INFINITE
    assert _res(values, "sustainable_rate") == 0
