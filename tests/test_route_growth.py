"""Routes that grow at their own rates (template 2.6.0, issue 14 item 2).

The oracle is THE plan method run again: the plan with each route's peak QPS times its own demand multiple for the
month, evaluated from scratch. The Forecast derives the month another way (each backend re-derived from its routes'
month-1 parts: limits, request mix, sustainable rate, KV in flight), so agreement is not agreement with itself.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from planner import template as ts
from planner.scenario import parse_scenario, tomllib
from planner.template.inputs import catalog_inputs, scenario_inputs

ROOT = Path(__file__).resolve().parents[1]
PLAN_GROWTH = 0.08

# The seed plus three routes, so that each kind of backend carries routes growing apart: the 70B fleet a second
# latency-critical route and a bulk route (the request mix, the sustainable rate and the KV in flight all move), the
# Gemini backend a second chat route growing 25 % a month, the Anthropic agent route flat.
EXTRA = """
[[routes]]
name = "autocomplete-lite"
kind = "latency-critical"
peak_qps = 120
avg_input_tokens = 600
avg_output_tokens = 20
p95_context_tokens = 1200
max_tokens = 32
cache_hit_rate = 0.3
ttft_slo_s = 0.3
tpot_slo_s = 0.025
backend = "llama70b-h100"

[[routes]]
name = "nightly"
kind = "bulk"
peak_qps = 8
avg_input_tokens = 3000
avg_output_tokens = 300
p95_context_tokens = 5000
max_tokens = 512
ttft_slo_s = 60
tpot_slo_s = 0.2
backend = "llama70b-h100"
monthly_growth = -0.05

[[routes]]
name = "chat-2"
kind = "interactive"
peak_qps = 12
avg_input_tokens = 1800
avg_output_tokens = 300
p95_context_tokens = 6000
max_tokens = 1024
cache_hit_rate = 0.4
ttft_slo_s = 1.0
tpot_slo_s = 0.04
backend = "gemini-flash"
monthly_growth = 0.25
"""
OWN = {"completion": 0.15, "agent": 0.0, "nightly": -0.05, "chat-2": 0.25}


INDEX = {"chat": [1.0, 0.5, 3.0], "autocomplete-lite": [1.0, 2.5, 2.5]}
"""Routes' own demand multiples typed month by month (the Forecast's per-route table), for the second plan."""


def _scenario(index: dict[str, list[float]] | None = None) -> Any:
    data = tomllib.loads((ROOT / "samples" / "seed.toml").read_text() + EXTRA)
    for r in data["routes"]:
        if r["name"] in OWN:
            r["monthly_growth"] = OWN[r["name"]]
        if index and r["name"] in index:
            r["demand_index"] = index[r["name"]]
    assert data["plan"]["monthly_growth"] == PLAN_GROWTH
    return parse_scenario(data, path="route-growth.toml")


def _multiple(route: str, month: int, index: dict[str, list[float]] | None = None) -> float:
    typed = (index or {}).get(route, [])
    if month <= len(typed):
        return typed[month - 1]
    return (1 + OWN.get(route, PLAN_GROWTH)) ** (month - 1)


def _rows(values: dict, table: Any, keys: tuple[str, ...]) -> list[dict[str, Any]]:
    out = []
    for i in range(table.rows):
        row = {k: values.get((table.sheet, table.cell(k, i))) for k in keys}
        if row[keys[0]] not in (None, ""):
            out.append(row)
    return out


@pytest.fixture(scope="module")
def plan() -> tuple[dict, dict]:
    inputs = {**catalog_inputs(), **scenario_inputs(_scenario())}
    return inputs, ts.evaluate_plan(inputs)


@pytest.fixture(scope="module")
def indexed() -> tuple[dict, dict]:
    inputs = {**catalog_inputs(), **scenario_inputs(_scenario(INDEX))}
    return inputs, ts.evaluate_plan(inputs)


def _scaled(inputs: dict, month: int, index: dict[str, list[float]] | None = None) -> dict:
    """The plan with each route's peak QPS times its own multiple for ``month`` (the Routes cells edited)."""
    r = ts.ROUTES
    out = dict(inputs)
    for i in range(r.rows):
        name = inputs.get((r.sheet, r.cell("name", i)))
        if isinstance(name, str) and name.strip():
            qps = (r.sheet, r.cell("peak_qps", i))
            out[qps] = inputs[qps] * _multiple(name, month, index)
    return out


@pytest.mark.parametrize(("month", "typed"), [(6, False), (12, False), (2, True), (3, True)])
def test_each_backend_in_a_month_is_the_plan_reevaluated_with_each_route_scaled(plan, indexed, month: int,
                                                                               typed: bool) -> None:
    """Months 6 and 12 with routes growing at their own rates; months 2 and 3 with two routes' multiples typed in
    the per-route demand table (chat at 0.5 then 3.0 beside chat-2 at 25 %; a fleet route at 2.5)."""
    inputs, values = indexed if typed else plan
    again = ts.evaluate_plan(_scaled(inputs, month, INDEX if typed else None))
    results = _rows(again, ts.RESULTS, ("route", "max_util", "cost_monthly_usd", "backend_type"))
    backend_of = {row["route"]: row["backend"] for row in _rows(values, ts.FORECAST_ROUTES, ("route", "backend"))}
    # a backend's highest utilization in the re-evaluated plan: the highest of its routes' (C7)
    expected: dict[str, float] = {}
    for row in results:
        b = backend_of[row["route"]]
        expected[b] = max(expected.get(b, 0.0), row["max_util"])
    by_route = _rows(values, ts.FORECAST_BY_ROUTE, ("route", "backend", f"m{month:02d}_util", f"m{month:02d}_usd"))
    assert {r["route"] for r in by_route} == set(backend_of)
    for r in by_route:
        assert r[f"m{month:02d}_util"] == pytest.approx(expected[backend_of[r["route"]]], rel=1e-9), r["route"]
    # the API routes' bills: each at its own multiple, as the re-evaluated plan's
    api = {row["route"]: row["cost_monthly_usd"] for row in results if row["backend_type"] == "provider"}
    for r in by_route:
        if r["route"] in api:
            assert r[f"m{month:02d}_usd"] == pytest.approx(api[r["route"]], rel=1e-9), r["route"]
    f = ts.FORECAST
    api_bill = sum(values[(f.sheet, f.cell(k, month - 1))] for k in
                   ("input_usd", "cache_read_usd", "cache_write_usd", "output_usd"))
    assert api_bill == pytest.approx(sum(api.values()), rel=1e-9)


def test_routes_growing_apart_move_the_fleet_s_mix_and_its_load(plan) -> None:
    """Not the plan-wide multiple: the month re-derives the 70B fleet. Month 12 with every route at the plan's
    8 % would scale month 1's LOAD by 1.08^11; with the completion route at 15 % and the bulk route shrinking the
    fleet's request mix moves toward the completion route's, and the re-evaluated plan's LOAD is not that figure."""
    inputs, values = plan
    r = ts.RESULTS
    rows = _rows(values, r, ("route", "load_util"))
    month1 = next(x["load_util"] for x in rows if x["route"] == "completion")
    by_route = _rows(values, ts.FORECAST_BY_ROUTE, ("route", "m12_util", "m12_binds"))
    got = next(x for x in by_route if x["route"] == "completion")
    assert got["m12_util"] != pytest.approx(month1 * 1.08 ** 11, rel=1e-3)
    again = ts.evaluate_plan(_scaled(inputs, 12))
    qps = {x["route"]: x["fleet_qps"] for x in _rows(again, r, ("route", "fleet_qps"))}
    assert qps["completion"] == pytest.approx(400 * 1.15 ** 11 + 120 * 1.08 ** 11 + 8 * 0.95 ** 11, rel=1e-12)


def test_breach_month_of_routes_growing_apart_on_a_provider(plan) -> None:
    """Results' months to breach for the Gemini routes (chat at the plan's 8 %, chat-2 at 25 %): at that many
    months the plan re-evaluated with each route's QPS times (1 + g_r)^t has its highest provider limit at 1."""
    inputs, values = plan
    r = ts.RESULTS
    rows = _rows(values, r, ("route", "months_to_breach", "binding_constraint", "rpm_util", "tpd_util"))
    chat = next(x for x in rows if x["route"] == "chat")
    chat2 = next(x for x in rows if x["route"] == "chat-2")
    t = chat["months_to_breach"]
    assert t == chat2["months_to_breach"]  # one backend, one breach month
    assert 0 < t < 20
    edited = dict(inputs)
    for i in range(ts.ROUTES.rows):
        name = inputs.get((ts.ROUTES.sheet, ts.ROUTES.cell("name", i)))
        if name in ("chat", "chat-2"):
            cell = (ts.ROUTES.sheet, ts.ROUTES.cell("peak_qps", i))
            edited[cell] = inputs[cell] * (1 + OWN.get(name, PLAN_GROWTH)) ** t
    again = ts.evaluate_plan(edited)
    limits = [again[(r.sheet, r.cell(f"{k}_util", i))] for i in range(r.rows)
              if again.get((r.sheet, r.cell("route", i))) == "chat" for k in ("rpm", "tpm", "itpm", "otpm", "rpd",
                                                                              "tpd")]
    assert max(limits) == pytest.approx(1.0, rel=1e-5)
    # the plan-wide 8 % alone would breach later: ln(1/u) / ln(1.08) on chat's month-1 limit
    limit_keys = ("rpm", "tpm", "itpm", "otpm", "rpd", "tpd")
    u = max(values[(r.sheet, r.cell(f"{k}_util", i))] for i in range(r.rows)
            if values.get((r.sheet, r.cell("route", i))) == "chat" for k in limit_keys)
    assert t < math.log(1 / u) / math.log(1.08)


def test_a_route_s_own_growth_is_an_input_the_validator_bounds(tmp_path: Path) -> None:
    """Routes' own growth accepts -50 % to 1,000 % a month; outside it the validator names the cell, and a plan
    written with one in range validates clean."""
    from planner.template.build import build_sample
    from planner.validate.checks import validate_file

    text = (ROOT / "samples" / "seed.toml").read_text().replace(
        'failover = "llama70b-h200"\n', 'failover = "llama70b-h200"\nmonthly_growth = GROWTH\n', 1)
    col = ts.ROUTES.cell("monthly_growth", 0)
    found = {}
    for growth in ("0.15", "12.0"):
        src = tmp_path / f"g{growth}.toml"
        src.write_text(text.replace("GROWTH", growth))
        out = build_sample(src, tmp_path / f"g{growth}.xlsm")
        found[growth] = {(f.sheet, f.cell, f.code) for f in validate_file(out).findings}
    assert found["0.15"] == set()
    assert ("Routes", col, "input-out-of-range") in found["12.0"]


def test_the_tornado_growth_bar_moves_every_route_s_own_growth(plan) -> None:
    """The What-if sheet's growth bar (cell formulas, PLAN_MONTHS_TO_BREACH) against the plan re-evaluated with the
    Plan's growth and every route's own growth times the bar's factor (the earliest route's months to breach)."""
    from planner.whatif import levers

    inputs, values = plan
    row = next(i for i in range(ts.TORNADO.rows)
               if ts.fixed_cells()[("What-if", ts.TORNADO.cell("input", i))] == "monthly_growth")
    g = levers.group("monthly_growth")
    for side, factor in (("lo", 0.8), ("hi", 1.2)):
        edited = levers.scaled(inputs, g, factor)
        own = ts.ROUTES.cell("monthly_growth", 0)  # completion's own 15 %
        assert edited[("Routes", own)] == pytest.approx(0.15 * factor, rel=1e-12)
        again = levers.figures(ts.evaluate_plan(edited), inputs)
        got = values[("What-if", ts.TORNADO.cell(f"breach_{side}_months", row))]
        assert got == pytest.approx(again.first_breach_months, abs=1e-5)
    # the base: the earliest route's months to breach on Results
    base = levers.figures(values, inputs).first_breach_months
    case = next(i for i in range(ts.DEMAND_CASES.rows)
                if ts.fixed_cells()[("What-if", ts.DEMAND_CASES.cell("case", i))] == "base")
    assert values[("What-if", ts.DEMAND_CASES.cell("breach_months", case))] == pytest.approx(base, abs=1e-5)


def test_a_plan_file_and_its_scenario_give_the_same_forecast(tmp_path: Path) -> None:
    """The Forecast's demand index is an input on a computed sheet: `planner size PLAN.xlsm` read only the input
    sheets, so a workbook with a typed index was sized without it. Its inputs now come from every input column."""
    from planner.template.build import build_sample
    from planner.whatif.source import load_inputs

    text = (ROOT / "samples" / "seed.toml").read_text().replace(
        "avg_to_peak_ratio = 0.5\n", "avg_to_peak_ratio = 0.5\ndemand_index = [1.0, 1.5, 2.0]\n", 1)
    src = tmp_path / "index.toml"
    src.write_text(text)
    book = build_sample(src, tmp_path / "index.xlsm")
    from_book, from_toml = load_inputs(book), load_inputs(src)
    index = {k for k in from_toml if k[0] == ts.FORECAST.sheet}
    assert len(index) == 3 and {k: from_book.get(k) for k in index} == {k: from_toml[k] for k in index}
    f = ts.FORECAST
    month3 = (f.sheet, f.cell("multiplier", 2))
    assert ts.evaluate_plan(from_book)[month3] == 2.0 == ts.evaluate_plan(from_toml)[month3]
