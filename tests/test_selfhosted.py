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

from planner import functions
from planner.catalog import get_gpu
from planner.cost import HOURS_PER_MONTH
from planner.scenario import Fleet, Plan, Route, Scenario, load_scenario
from planner.sizing import bundled_scenario_path, size_scenario

PLANNER = Path(sys.executable).with_name("planner")

FLEET = Fleet(name="f", model="llama-3.1-8b", gpu="h100-sxm", tp=1, replicas=4, kv_dtype="fp8")
ROUTE = Route(name="r", peak_qps=100, avg_input_tokens=2000, avg_output_tokens=200, p95_context_tokens=6000,
              ttft_slo_s=0.5, tpot_slo_s=0.03, backend="f")


def _size(fleet: Fleet, *routes: Route):
    return size_scenario(Scenario(plan=Plan(name="t"), providers=(), fleets=(fleet,), routes=tuple(routes), path="t"))


def _utils(route_sizing) -> dict[str, float]:
    return {c.label: c.utilization for c in route_sizing.constraints}


def test_size_scenario_with_a_fleet():
    fleet = Fleet(name="f", model="qwen3-30b-a3b", gpu="h200", tp=2, replicas=3, kv_dtype="fp8")
    route = Route(name="r", peak_qps=30, avg_input_tokens=4000, avg_output_tokens=300, p95_context_tokens=16000,
                  ttft_slo_s=1, tpot_slo_s=0.04, backend="f")
    (r,) = _size(fleet, route).routes
    assert set(_utils(r)) == {"f KV", "f COMPUTE", "f LOAD", "f TTFT", "f TPOT"}
    # KV at load: Little's law at the predicted TTFT and TPOT, each request holding its mean context (I + O/2)
    e2e = functions.E2E_LATENCY_S(r.results["ttft_at_load_s"], r.results["tpot_at_load_s"], 300)
    expected_kv = functions.KV_FIT("qwen3-30b-a3b", "h200", 30, e2e, 4000 + 300 / 2, 3, 2, 0.9, "fp8")
    assert r.results["kv_util"] == pytest.approx(expected_kv)
    assert r.max_utilization == max(_utils(r).values())
    assert f"f {r.binding}" == max(_utils(r), key=_utils(r).get)


def test_more_replicas_lower_the_utilizations():
    """Compute and load are linear in the replicas; KV and TPOT fall with the lighter load per replica (KV is not
    linear: Little's law holds each request for the latency at that load, or at the SLOs where a replica saturates)."""
    (one,) = _size(FLEET, ROUTE).routes
    (two,) = _size(replace(FLEET, replicas=8), ROUTE).routes
    assert _utils(two)["f KV"] < _utils(one)["f KV"]
    assert _utils(two)["f COMPUTE"] == pytest.approx(_utils(one)["f COMPUTE"] / 2)
    assert _utils(two)["f LOAD"] == pytest.approx(_utils(one)["f LOAD"] / 2)
    assert _utils(two)["f TPOT"] < _utils(one)["f TPOT"]


def test_routes_sharing_a_fleet_add_up():
    """Two routes on one fleet: its KV and compute utilizations are the sums of each route's alone."""
    other = replace(ROUTE, name="s", peak_qps=20, avg_input_tokens=20_000, p95_context_tokens=30_000, tpot_slo_s=0.05)
    both = _size(FLEET, ROUTE, other).routes
    alone = [_size(FLEET, r).routes[0] for r in (ROUTE, other)]
    for key in ("f KV", "f COMPUTE"):
        assert _utils(both[0])[key] == pytest.approx(sum(_utils(a)[key] for a in alone))
        assert _utils(both[1])[key] == _utils(both[0])[key]  # one backend, one utilization


def test_fleet_cost_is_gpu_hours():
    price = get_gpu("h100-sxm").usd_per_gpu_hour
    (r,) = _size(FLEET, ROUTE).routes
    assert r.monthly_cost_usd == pytest.approx(price * 4 * HOURS_PER_MONTH)
    (own,) = _size(replace(FLEET, usd_per_gpu_hour=2.0), ROUTE).routes
    assert own.monthly_cost_usd == pytest.approx(2.0 * 4 * HOURS_PER_MONTH)


def test_a_fleet_that_cannot_hold_the_model_shows_the_function_message_in_its_cells():
    fleet = replace(FLEET, model="llama-3.1-405b", gpu="l4", kv_dtype="auto")
    (r,) = _size(fleet, ROUTE).routes
    assert r.errors, "a model that does not fit must show in the report"
    assert any("expected a positive KV budget" in e for e in r.errors)
    assert all(e.startswith("Results!") for e in r.errors)


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


def test_planner_size_json_carries_every_results_cell_of_the_workbook(tmp_path):
    """The JSON is a view of the evaluated template: each route's ``results`` equals the Results row of the sample
    workbook the template builder writes for the same scenario (read back from the file, not from the evaluator)."""
    from planner.ooxml import read_workbook
    from planner.template import RESULT_KEYS, RESULTS
    from planner.template.build import build_sample

    result = subprocess.run([str(PLANNER), "size", "--format", "json"], capture_output=True, text=True, check=False,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    book = read_workbook(build_sample(bundled_scenario_path(), tmp_path / "seed.xlsm"))
    cells = book.sheet("Results").cells
    for i, row in enumerate(report["routes"]):
        for key in RESULT_KEYS:
            cached = cells[RESULTS.cell(key, i)].value
            if cached is None:  # a formula's "" is stored as an empty string cell and read back as empty
                cached = ""
            assert row["results"][key] == (pytest.approx(cached) if isinstance(cached, float) else cached), key


def test_planner_size_with_an_oversized_model_shows_the_cells_and_exits_1(tmp_path):
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
    assert result.returncode == 1  # a plan with error cells, as `planner validate` exits on an invalid plan
    assert "error: Results!" in result.stdout and "expected a positive KV budget" in result.stdout
