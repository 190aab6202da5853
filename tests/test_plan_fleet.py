"""Issue #10, what the template checks on fleets: prefix retention counted in KV fit (M10), the N+1 check with LOAD,
outages sized on the receiver's mixed request shape, and formulas short enough to read."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner import functions as F
from planner import template as ts
from planner.catalog import get_model
from planner.registry import REGISTRY
from planner.scenario import load_scenario
from planner.sheet import plan
from planner.template.inputs import catalog_inputs, scenario_inputs

PLAN = """
[plan]
name = "fleet-checks"
utilization_threshold = 0.85

[[fleets]]
name = "primary"
model = "llama-3.1-8b"
gpu = "h100-sxm"
tp = 1
replicas = 4

[[fleets]]
name = "backup"
model = "llama-3.1-8b"
gpu = "h100-sxm"
tp = 1
replicas = 3

[[routes]]
name = "chat"
kind = "interactive"
peak_qps = 6
avg_input_tokens = 3000
avg_output_tokens = 300
cache_hit_rate = 0.6
prefix_tokens = 1800
distinct_prefixes = 40
ttft_slo_s = 2
tpot_slo_s = 0.05
backend = "primary"
failover = "backup"

[[routes]]
name = "summarize"
kind = "interactive"
peak_qps = 2
avg_input_tokens = 8000
avg_output_tokens = 100
ttft_slo_s = 2
tpot_slo_s = 0.05
backend = "primary"
failover = "backup"

[[routes]]
name = "backup-own"
kind = "interactive"
peak_qps = 3
avg_input_tokens = 500
avg_output_tokens = 500
ttft_slo_s = 2
tpot_slo_s = 0.05
backend = "backup"
"""


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], object]:
    path = Path(tmp_path_factory.mktemp("plan")) / "fleet.toml"
    path.write_text(PLAN, encoding="utf-8")
    return ts.evaluate_plan({**catalog_inputs(), **scenario_inputs(load_scenario(path))})


def _res(out, key: str, route: int):
    return out[("Results", ts.RESULTS.cell(key, route))]


def _fo(out, key: str, route: int):
    return out[("Failover", ts.FAILOVER.cell(key, route))]


def test_prefix_retention_is_its_own_line_and_counted_in_kv_fit(evaluated) -> None:
    """M10: 40 prefixes of 1,800 tokens on every replica = 40 x 113 blocks x 16 x 131,072 B (Llama-3.1-8B bf16,
    32 layers x 8 KV heads x 128 x 2 x 2 B); in flight each request holds 3,000 - 1,800 + 300/2 tokens alone."""
    budget = F.KV_BUDGET_GIB("llama-3.1-8b", "h100-sxm") * 2**30
    retention = 40 * 113 * 16 * 131_072
    assert _res(evaluated, "prefix_kv_share", 0) == pytest.approx(retention / budget)
    e2e = _res(evaluated, "e2e_s", 0)
    in_flight = 6 * e2e * -(-1350 // 16) * 16 * 131_072 / (budget * 4)
    assert _res(evaluated, "kv_share", 0) == pytest.approx(in_flight + retention / budget)
    assert _res(evaluated, "prefix_kv_share", 1) == 0  # no cache hit, nothing to keep warm
    kv_util = sum(_res(evaluated, "kv_share", i) for i in (0, 1))
    assert _res(evaluated, "kv_util", 0) == pytest.approx(kv_util)


def test_blank_prefix_keeps_one_prefix_of_the_cached_input_and_no_sharing(tmp_path: Path) -> None:
    """Blank shared prefix: one prefix of input x hit rate is kept warm, and in-flight requests are charged their
    whole context (a hit on a conversation's own history is not shared)."""
    text = PLAN.replace("prefix_tokens = 1800\ndistinct_prefixes = 40\n", "")
    path = tmp_path / "blank.toml"
    path.write_text(text, encoding="utf-8")
    out = ts.evaluate_plan({**catalog_inputs(), **scenario_inputs(load_scenario(path))})
    budget = F.KV_BUDGET_GIB("llama-3.1-8b", "h100-sxm") * 2**30
    retention = 113 * 16 * 131_072 / budget  # 1,800 tokens
    assert _res(out, "prefix_kv_share", 0) == pytest.approx(retention)
    in_flight = 6 * _res(out, "e2e_s", 0) * -(-3150 // 16) * 16 * 131_072 / (budget * 4)
    assert _res(out, "kv_share", 0) == pytest.approx(in_flight + retention)


def test_outage_load_uses_the_receivers_mix_after_the_outage(evaluated) -> None:
    """The backup serves its own 3 req/s of 500/500 and takes chat (6 req/s, 3,000/300, 60% cached) and summarize
    (2 req/s, 8,000/100): its sustainable rate is for that mix, not for each moved route's own request."""
    qps = 6 + 2 + 3
    inp = (6 * 3000 + 2 * 8000 + 3 * 500) / qps
    out = (6 * 300 + 2 * 100 + 3 * 500) / qps
    hit = 6 * 3000 * 0.6 / (6 * 3000 + 2 * 8000 + 3 * 500)
    rate = F.MAX_RATE_AT_SLO("llama-3.1-8b", "h100-sxm", 1, inp, out, 2, 0.05, "auto", hit)
    for route in (0, 1):
        assert _fo(evaluated, "outage_qps", route) == pytest.approx(qps)
        assert _fo(evaluated, "sustainable_rate", route) == pytest.approx(rate)
        assert _fo(evaluated, "outage_load_util", route) == pytest.approx(qps / 3 / rate)
    own = F.MAX_RATE_AT_SLO("llama-3.1-8b", "h100-sxm", 1, 8000, 100, 2, 0.05, "auto", 0)
    assert rate != pytest.approx(own)  # the moved route's own shape would give another answer


def test_fleet_n_plus_one_counts_load(evaluated) -> None:
    """N+1 takes the highest of KV, compute and LOAD with one replica lost: u x R / (R - 1)."""
    row = next(i for i in range(ts.OUTAGES.rows) if evaluated[("Summary", ts.OUTAGES.cell("backend", i))] == "primary")
    load = _res(evaluated, "load_util", 0)
    fleet_util = max(load, _res(evaluated, "kv_util", 0), _res(evaluated, "compute_util", 0))
    assert evaluated[("Summary", ts.OUTAGES.cell("fleet_util", row))] == pytest.approx(fleet_util)
    assert evaluated[("Summary", ts.OUTAGES.cell("n_plus_one_util", row))] == pytest.approx(fleet_util * 4 / 3)
    assert load > _res(evaluated, "kv_util", 0)  # the plan is built so that LOAD is what N+1 must catch


def test_every_formula_is_at_most_300_characters() -> None:
    """Issue #10: formulas a planner can audit. Aggregation and a backend's facts live in registry functions that
    read whole columns or a table row (FLEET_*, PROVIDER_*, BACKEND_SUM)."""
    formulas = ts.all_formulas()
    longest = max(formulas.items(), key=lambda item: len(item[1]))
    assert len(longest[1]) <= 300, longest


def test_row_functions_read_the_headers_the_template_has() -> None:
    """The FLEET_* and PROVIDER_* functions find their columns by the headers of the Fleet, Specs and Providers
    tables: every header they read exists there."""
    for headers, table in ((plan.FLEET_HEADERS, ts.FLEET), (plan.SPEC_HEADERS, ts.SPECS),
                           (plan.PROVIDER_HEADERS, ts.PROVIDERS)):
        have = {c.header for c in table.columns}
        assert set(headers.values()) <= have, set(headers.values()) - have


def test_a_fleet_row_function_equals_the_function_it_reads_the_row_for() -> None:
    """FLEET_KV_FIT on a Fleet/Specs row gives what KV_FIT gives with that row's cells, refusals included."""
    fleets = [["Backend [name]", "TP [GPUs]", "PP [stages]", "Replicas [count]", "GPU mem util [fraction]",
               "KV dtype", "Weight dtype", "Engine"],
              ["g", 2, 1, 3, 0.85, "fp8", "auto", "sglang"]]
    specs = [["Backend [name]", "Model as used [spec]", "GPU as used [spec]"], ["g", "gemma-3-27b", "h100-sxm"]]
    got = REGISTRY["FLEET_KV_FIT"].impl("G", fleets, specs, 20, 3, 6000)
    assert got == F.KV_FIT("gemma-3-27b", "h100-sxm", 20, 3, 6000, 3, 2, 0.85, "fp8", "sglang", "auto", 1)
    assert get_model("gemma-3-27b").sliding_window  # a hybrid model: the steady-state hold is in both
    fleets[1][5] = "fp9"
    from planner.coerce import call_sheet_function

    message = call_sheet_function(REGISTRY["FLEET_KV_FIT"], "g", fleets, specs, 20, 3, 6000)
    assert message.startswith("kv_dtype: got 'fp9'")
    assert "fleet" in call_sheet_function(REGISTRY["FLEET_KV_FIT"], "nope", fleets, specs, 20, 3, 6000)


def test_a_fleet_naming_its_gpu_by_an_alias_is_priced(tmp_path: Path) -> None:
    """A Fleet row that says "h200" (an alias of h200-sxm) gets the GPUs sheet's h200-sxm price, not #N/A: the price
    is read from the row GPU_SPEC resolved, as every other GPU fact is."""
    seed = Path(__file__).resolve().parents[1] / "samples" / "seed.toml"
    path = tmp_path / "alias.toml"
    path.write_text(seed.read_text(encoding="utf-8").replace('gpu = "h200-sxm"', 'gpu = "h200"'), encoding="utf-8")
    out = ts.evaluate_plan({**catalog_inputs(), **scenario_inputs(load_scenario(path))})
    s = ts.SPECS
    row = next(i for i in range(s.rows) if out[(s.sheet, s.cell("fleet", i))] == "llama70b-h200")
    assert out[(s.sheet, s.cell("usd_per_gpu_hour", row))] == pytest.approx(3.99)  # planner/data GPU catalog
    gpus = out[(s.sheet, s.cell("gpus", row))]
    assert out[(s.sheet, s.cell("cost_monthly_usd", row))] == pytest.approx(gpus * 3.99 * 730.5)
