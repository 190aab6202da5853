"""Self-hosted fleets in ``planner size`` (planner.selfhosted): KV and TPOT constraints, route details, the CLI.

The expected values are recomputed with the spreadsheet functions (planner.functions), i.e. with the formulas the
template's Results sheet uses, so ``planner size`` and the workbook cannot drift apart.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from planner import functions, selfhosted
from planner.catalog import get_gpu
from planner.cost import HOURS_PER_MONTH
from planner.errors import ArgumentError
from planner.scenario import Fleet, Route, load_scenario, parse_scenario
from planner.sizing import bundled_scenario_path, size_scenario

PLANNER = Path(sys.executable).with_name("planner")

FLEET = Fleet(name="f", model="llama-3.1-8b", gpu="h100-sxm", tp=1, replicas=4, kv_dtype="fp8")
ROUTE = Route(name="r", peak_qps=100, avg_input_tokens=2000, avg_output_tokens=200, p95_context_tokens=6000,
              ttft_slo_s=0.5, tpot_slo_s=0.03, backend="f")


def _by_label(constraints):
    return {c.label: c for c in constraints}


def _max_conc(fleet: Fleet, ctx: float) -> int:
    return functions.MAX_CONCURRENCY(fleet.model, fleet.gpu, fleet.tp, fleet.gpu_memory_utilization, fleet.kv_dtype,
                                     ctx, fleet.engine)


def test_kv_constraint_is_the_workbook_formula():
    """KV util = KV_FIT(QPS, E2E_LATENCY_S(TTFT SLO, TPOT SLO, O), p95 context, replicas): the template's KV share."""
    kv = _by_label(selfhosted.fleet_constraints(FLEET, [ROUTE]))["f KV"]
    e2e = functions.E2E_LATENCY_S(0.5, 0.03, 200)
    in_flight = functions.CONCURRENCY(100, e2e)
    assert kv.demand == pytest.approx(in_flight)
    assert kv.utilization == pytest.approx(functions.KV_FIT("llama-3.1-8b", "h100-sxm", 100, e2e, 6000, 4, 1, 0.9,
                                                            "fp8"))
    assert kv.utilization < in_flight / (_max_conc(FLEET, 6000) * 4)  # whole requests per replica: a lower bound
    assert kv.unit == "requests"


def test_compute_constraint_is_the_workbook_formula():
    """COMPUTE util = COMPUTE_UTILIZATION of the route's load on the fleet's GPUs."""
    comp = _by_label(selfhosted.fleet_constraints(FLEET, [ROUTE]))["f COMPUTE"]
    assert comp.utilization == pytest.approx(
        functions.COMPUTE_UTILIZATION("llama-3.1-8b", "h100-sxm", 100, 2000, 200, 4, 1, 0.0, FLEET.mfu))
    assert comp.unit == "FLOP/s"
    assert comp.capacity == pytest.approx(4 * get_gpu("h100-sxm").bf16_flops_per_s * FLEET.mfu)


def test_tpot_constraint_is_tpot_at_the_peak_batch_over_the_slo():
    tpot = _by_label(selfhosted.fleet_constraints(FLEET, [ROUTE]))["f TPOT"]
    batch = functions.CONCURRENCY(100, functions.E2E_LATENCY_S(0.5, 0.03, 200)) / 4
    expected = functions.TPOT_S("llama-3.1-8b", "h100-sxm", 1, batch, 2000 + 100, "fp8", FLEET.mbu, FLEET.mfu)
    assert tpot.demand == pytest.approx(expected)
    assert tpot.capacity == 0.03
    assert tpot.utilization == pytest.approx(expected / 0.03)


def test_routes_sharing_a_fleet_add_up():
    """Two routes: KV utilizations add; the TPOT constraint uses the tightest SLO and the summed batch."""
    other = replace(ROUTE, name="s", peak_qps=20, avg_input_tokens=20_000, p95_context_tokens=30_000, tpot_slo_s=0.05)
    both = _by_label(selfhosted.fleet_constraints(FLEET, [ROUTE, other]))
    alone = [_by_label(selfhosted.fleet_constraints(FLEET, [r]))["f KV"].utilization for r in (ROUTE, other)]
    assert both["f KV"].utilization == pytest.approx(sum(alone))
    assert both["f TPOT"].capacity == 0.03
    assert both["f TPOT"].demand > _by_label(selfhosted.fleet_constraints(FLEET, [ROUTE]))["f TPOT"].demand


def test_more_replicas_lower_the_utilizations():
    one = _by_label(selfhosted.fleet_constraints(FLEET, [ROUTE]))
    two = _by_label(selfhosted.fleet_constraints(replace(FLEET, replicas=8), [ROUTE]))
    assert two["f KV"].utilization == pytest.approx(one["f KV"].utilization / 2)
    assert two["f TPOT"].utilization < one["f TPOT"].utilization


def test_without_slos_the_modelled_latencies_are_a_fixed_point():
    """No TTFT/TPOT SLO: in flight = QPS·(modelled TTFT + O·TPOT(in flight / replicas)); no TPOT constraint."""
    route = replace(ROUTE, ttft_slo_s=None, tpot_slo_s=None)
    found = _by_label(selfhosted.fleet_constraints(FLEET, [route]))
    assert set(found) == {"f KV", "f COMPUTE"}
    c = found["f KV"].demand
    ttft = functions.TTFT_S("llama-3.1-8b", "h100-sxm", 1, 2000, 0.0, FLEET.mfu, FLEET.mbu, "fp8")
    tpot = functions.TPOT_S("llama-3.1-8b", "h100-sxm", 1, c / 4, 2100, "fp8", FLEET.mbu, FLEET.mfu)
    assert c == pytest.approx(100 * functions.E2E_LATENCY_S(ttft, tpot, 200), rel=1e-6)


def test_context_falls_back_to_input_plus_output():
    route = replace(ROUTE, p95_context_tokens=None)
    details = selfhosted.route_details(FLEET, route)
    assert details["kv_bytes_per_request"] == functions.KV_BYTES_PER_REQUEST("llama-3.1-8b", 2200, "fp8", 1)
    assert details["max_concurrency_per_replica"] == _max_conc(FLEET, 2200)


def test_route_details():
    d = selfhosted.route_details(FLEET, ROUTE)
    assert d["kv_bytes_per_request"] == functions.KV_BYTES_PER_REQUEST("llama-3.1-8b", 6000, "fp8", 1)
    assert d["kv_fit"] == pytest.approx(_by_label(selfhosted.fleet_constraints(FLEET, [ROUTE]))["f KV"].utilization)
    assert d["ttft_s"] == pytest.approx(functions.TTFT_S("llama-3.1-8b", "h100-sxm", 1, 2000, 0.0, FLEET.mfu,
                                                         FLEET.mbu, "fp8"))
    price = get_gpu("h100-sxm").usd_per_gpu_hour
    assert d["monthly_cost_usd"] == pytest.approx(price * 4 * HOURS_PER_MONTH)
    assert selfhosted.route_details(replace(FLEET, usd_per_gpu_hour=2.0), ROUTE)["monthly_cost_usd"] == (
        pytest.approx(2.0 * 4 * HOURS_PER_MONTH)
    )


def test_a_fleet_that_cannot_hold_the_model_is_a_clear_error():
    fleet = replace(FLEET, model="llama-3.1-405b", gpu="l4", kv_dtype="auto")
    with pytest.raises(ArgumentError, match=r"^fleets f: got 'llama-3.1-405b on l4 at TP=1', expected a replica whose "
                       r"weights \(\d+\.\d GiB/GPU\)"):
        selfhosted.fleet_constraints(fleet, [ROUTE])
    with pytest.raises(ArgumentError, match="^fleets f: "):
        selfhosted.route_details(fleet, ROUTE)


def test_a_context_that_does_not_fit_one_replica_is_a_clear_error():
    route = replace(ROUTE, p95_context_tokens=2_000_000)
    with pytest.raises(ArgumentError, match="^fleets f: got '2000000 tokens of context', expected a context whose KV"):
        selfhosted.fleet_constraints(FLEET, [route])


def test_size_scenario_with_a_fleet(tmp_path):
    data = {
        "plan": {"name": "t"},
        "fleets": [{"name": "f", "model": "qwen3-30b-a3b", "gpu": "h200", "tp": 2, "replicas": 3, "kv_dtype": "fp8"}],
        "routes": [{"name": "r", "peak_qps": 30, "avg_input_tokens": 4000, "avg_output_tokens": 300,
                    "p95_context_tokens": 16000, "ttft_slo_s": 1, "tpot_slo_s": 0.04, "backend": "f"}],
    }
    report = size_scenario(parse_scenario(data))
    (route,) = report.routes
    assert {c.label for c in route.constraints} == {"f KV", "f COMPUTE", "f TPOT"}
    expected_kv = functions.KV_FIT("qwen3-30b-a3b", "h200", 30, functions.E2E_LATENCY_S(1, 0.04, 300), 16000, 3, 2,
                                   0.9, "fp8")
    assert route.kv_fit == pytest.approx(expected_kv)
    assert route.binding in ("f KV", "f COMPUTE", "f TPOT")
    assert route.max_utilization == max(c.utilization for c in route.constraints)


# ------------------------------------------------------------------------------------------------ the real CLI


def test_planner_size_on_the_bundled_seed():
    """The README's first command: the seed's self-hosted route gets KV and TPOT lines from the real console script."""
    result = subprocess.run([str(PLANNER), "size"], capture_output=True, text=True, check=False, timeout=120)
    assert result.returncode == 0, result.stderr
    scenario = load_scenario(bundled_scenario_path())
    fleet = scenario.fleets[0]
    assert f"{fleet.name} KV" in result.stdout
    assert f"{fleet.name} TPOT" in result.stdout
    assert "Traceback" not in result.stderr


def test_planner_size_json_matches_the_spreadsheet_functions():
    result = subprocess.run([str(PLANNER), "size", "--format", "json"], capture_output=True, text=True, check=False,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    scenario = load_scenario(bundled_scenario_path())
    fleets = {f.name: f for f in scenario.fleets}
    checked = 0
    for row, route in zip(report["routes"], scenario.routes):
        if route.backend not in fleets:
            continue
        fleet = fleets[route.backend]
        ctx = route.p95_context_tokens
        c_max = functions.MAX_CONCURRENCY(fleet.model, fleet.gpu, fleet.tp, fleet.gpu_memory_utilization,
                                          fleet.kv_dtype, ctx, fleet.engine, fleet.weight_dtype, fleet.pp)
        e2e = functions.E2E_LATENCY_S(route.ttft_slo_s, route.tpot_slo_s, route.avg_output_tokens)
        in_flight = functions.CONCURRENCY(route.peak_qps, e2e)
        assert row["max_concurrency_per_replica"] == c_max
        assert row["kv_bytes_per_request"] == functions.KV_BYTES_PER_REQUEST(fleet.model, ctx, fleet.kv_dtype, fleet.tp)
        assert row["kv_fit"] == pytest.approx(functions.KV_FIT(
            fleet.model, fleet.gpu, route.peak_qps, e2e, ctx, fleet.replicas, fleet.tp, fleet.gpu_memory_utilization,
            fleet.kv_dtype, fleet.engine, fleet.weight_dtype, fleet.pp))
        tpot = functions.TPOT_S(fleet.model, fleet.gpu, fleet.tp, in_flight / fleet.replicas,
                                route.avg_input_tokens + route.avg_output_tokens / 2, fleet.kv_dtype, fleet.mbu,
                                fleet.mfu, fleet.weight_dtype)
        assert row["tpot_s"] == pytest.approx(tpot)
        checked += 1
    assert checked >= 1


def test_planner_size_with_an_oversized_model_is_a_one_line_error(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(
        '[plan]\nname = "tiny"\n\n[[fleets]]\nname = "l4"\nmodel = "llama-3.1-405b"\ngpu = "l4"\nreplicas = 1\n\n'
        '[[routes]]\nname = "r"\npeak_qps = 1\navg_input_tokens = 100\navg_output_tokens = 10\n'
        'tpot_slo_s = 0.05\nttft_slo_s = 1\nbackend = "l4"\n',
        encoding="utf-8",
    )
    result = subprocess.run([str(PLANNER), "size", str(path)], capture_output=True, text=True, check=False,
                            timeout=120)
    assert "Traceback" not in result.stderr
    assert result.returncode == 2
    assert result.stderr.startswith("error: fleets l4: got 'llama-3.1-405b on l4 at TP=1'")
    assert len(result.stderr.strip().splitlines()) == 1
