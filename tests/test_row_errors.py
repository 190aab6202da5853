"""One backend's error is not another's (Arg.row_errors): a refusal in a route's row of a per-route column reaches
BACKEND_SUM / MAX / ARGMAX, OUTAGE_SUM, FLEET_SUM, FLEET_SLO_S and the forecast's backend table in place, and is the
result only where the function reads that row, as SUMIFS reads only the rows its criteria select.

The expected values come from a second evaluation of THE plan method: the same plan without the broken fleet and
its route, never from the code under test."""

from __future__ import annotations

import pytest

from planner import decision
from planner import template as ts
from planner.errors import Refusal
from planner.scenario import parse_scenario, tomllib
from planner.sizing import evaluate_scenario

HEALTHY = """
[plan]
name = "two-fleets"
utilization_threshold = 0.8
monthly_growth = 0.1
avg_to_peak_ratio = 0.4
forecast_months = 12

[[fleets]]
name = "qwen-h200"
model = "qwen3-235b-a22b"
gpu = "h200-sxm"
tp = 8
replicas = 4
kv_dtype = "fp8"
weight_dtype = "fp8"
engine = "vllm"

[[routes]]
name = "rag"
kind = "interactive"
peak_qps = 12
avg_input_tokens = 6000
avg_output_tokens = 500
p95_context_tokens = 16000
max_tokens = 1024
cache_hit_rate = 0.4
ttft_slo_s = 2
tpot_slo_s = 0.05
backend = "qwen-h200"
"""

BROKEN = """
[[fleets]]
# a 70B model in bf16 on one 48 GB L40S: the weights do not fit, every KV figure of this fleet is a refusal
name = "small-l40s"
model = "llama-3.1-70b"
gpu = "l40s"
tp = 1
replicas = 6
engine = "sglang"

[[routes]]
name = "classify"
kind = "latency-critical"
peak_qps = 150
avg_input_tokens = 800
avg_output_tokens = 5
p95_context_tokens = 1500
max_tokens = 8
ttft_slo_s = 1.5
tpot_slo_s = 0.2
backend = "small-l40s"
"""


def _plan(text: str):
    return evaluate_scenario(parse_scenario(tomllib.loads(text)))


def _res(values, key: str, row: int):
    return values[(ts.RESULTS.sheet, ts.RESULTS.cell(key, row))]


def test_core_functions_read_only_their_rows() -> None:
    bad = Refusal("kv_budget: got '-91.38 GiB', expected a positive KV budget")
    assert decision.backend_sum("a", backends=["a", "b"], values=[0.25, bad]) == 0.25
    assert decision.backend_max("a", backends=["a", "b", "a"], values=[0.25, bad, 0.5]) == 0.5
    assert decision.backend_argmax("a", backends=["b", "a"], values=[bad, 0.5], labels=[bad, "KV"]) == "KV"
    assert decision.outage_sum("a", receiver="c", backends=["a", "b"], failovers=["c", "c"], values=[2.0, bad]) == 2
    with pytest.raises(Refusal, match="kv_budget"):
        decision.backend_sum("b", backends=["a", "b"], values=[0.25, bad])
    with pytest.raises(Refusal, match="kv_budget"):
        decision.backend_argmax("a", backends=["a"], values=[0.5], labels=[bad])


def test_a_broken_fleet_leaves_the_other_fleet_as_it_would_be_alone() -> None:
    alone = _plan(HEALTHY)
    both = _plan(HEALTHY + BROKEN)
    # the broken route names its cause in its own cells
    assert "positive KV budget" in str(_res(both, "kv_util", 1))
    # the healthy route: every utilization, its status and headroom as in the plan without the broken fleet
    for key in (*ts.UTILIZATION_KEYS, "max_util", "binding_constraint", "headroom_multiple", "months_to_breach",
                "status", "cost_monthly_usd"):
        assert _res(both, key, 0) == _res(alone, key, 0), key
    assert _res(both, "status", 0) == "OK"
    # and its per-route forecast, month by month (its backend's figures)
    t = ts.FORECAST_BY_ROUTE
    months = [c.key for c in t.columns if c.key.startswith("m")]
    assert len(months) >= 36
    for key in months[:36]:
        assert both[(t.sheet, t.cell(key, 0))] == alone[(t.sheet, t.cell(key, 0))], key
    assert isinstance(both[(t.sheet, t.cell("m12_util", 0))], float)
    # the plan-wide month needs every backend: the broken one's error is its result
    f = ts.FORECAST
    assert not isinstance(both[(f.sheet, f.cell("max_util", 0))], float)
    assert isinstance(alone[(f.sheet, f.cell("max_util", 0))], float)
