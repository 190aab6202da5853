"""A latency SLO that no load meets on its fleet: every surface gives a figure that says so (template 2.5.0): the
sheets show the infinity sign, ``planner size`` the word *infinite*.

The plan is ``samples/selfhost-kv.toml`` with its TPOT SLO cut from 50 ms to 5 ms. Why no load can meet it comes
from outside the code: Llama-3.1-70B has 70.6 billion parameters (Meta's model card), 141 GB in bf16, so at TP 4
each H100 reads at least 35.3 GB of weights per decode step; at the H100 SXM's 3.35 TB/s (NVIDIA's datasheet)
that is 10.5 ms per output token for a lone request, twice the SLO. The control is the same plan at its own 50 ms
SLO, which a light load meets.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import openpyxl
import pytest

from planner import template as ts
from planner.decision import UTIL_INFINITE

ROOT = Path(__file__).resolve().parents[1]
PLANNER = Path(sys.executable).with_name("planner")
FLOOR_TPOT_S = 70.6e9 * 2 / 4 / 3.35e12  # weights read per GPU per step / HBM bandwidth: 10.5 ms


def _scenario(tmp_path: Path, tpot_slo_s: float) -> Path:
    text = (ROOT / "samples" / "selfhost-kv.toml").read_text(encoding="utf-8")
    assert "tpot_slo_s = 0.05\n" in text
    path = tmp_path / f"tpot-{tpot_slo_s:g}.toml"
    path.write_text(text.replace("tpot_slo_s = 0.05\n", f"tpot_slo_s = {tpot_slo_s}\n"), encoding="utf-8")
    return path


def _planner(*args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(PLANNER), *args], capture_output=True, text=True, timeout=600, check=False)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


@pytest.fixture(scope="module")
def tight(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    path = _scenario(tmp_path_factory.mktemp("tight"), 0.005)
    out = _planner("size", str(path), "--months", "12", "--format", "json")
    assert out.returncode in (0, 1), out.stderr
    return path, json.loads(out.stdout)


def test_the_slo_is_below_the_bandwidth_floor_and_load_says_unreachable(tight: tuple[Path, dict]) -> None:
    route = tight[1]["routes"][0]
    res = route["results"]
    assert FLOOR_TPOT_S > 0.01 > 0.005
    assert res["tpot_at_load_s"] >= FLOOR_TPOT_S  # the serving model respects the floor
    assert res["sustainable_rate"] == 0
    assert res["load_util"] == UTIL_INFINITE
    assert route["binding"] == "LOAD" and route["status"] == "BREACH"
    assert route["max_utilization"] == UTIL_INFINITE
    assert route["headroom_multiple"] <= 1e-9 and route["months_to_breach"] == 0
    assert route["errors"] == []  # a figure, not a refusal spreading through the row
    # the failover fleet (H200, TP 4) reads the same 35 GB per step at 4.8 TB/s: 7.4 ms, still above 5 ms
    assert route["failover_utilization"] == UTIL_INFINITE and route["failover_check"] == "BREACH"


def test_the_plan_totals_and_outages_say_unreachable_not_zero(tight: tuple[Path, dict]) -> None:
    report = tight[1]
    assert report["totals"]["Highest utilization [x]"] == UTIL_INFINITE  # Excel's MAX skipped the old text: 0
    assert report["totals"]["Worst outage [x]"] == UTIL_INFINITE  # N+1 keeps it, never 7/6 of it
    assert report["totals"]["Routes in breach [count]"] == 1
    down = next(o for o in report["outages"] if o["backend"] == "llama70b-h100")
    assert down["utilization"] == UTIL_INFINITE and down["status"] == "BREACH"


def test_the_forecast_takes_no_replica_step_and_keeps_it_unreachable(tight: tuple[Path, dict]) -> None:
    report = tight[1]
    months = report["forecast_months"]
    assert len(months) == 12
    for m in months:
        assert m["max_utilization"] == UTIL_INFINITE, m
        assert "no replica count relieves it" in m["action"], m
    bills = {round(m["monthly_cost_usd"], 2) for m in months}
    assert len(bills) == 1  # no replicas bought for an SLO that replicas cannot meet
    for case in report["sensitivity"]["cases"].values():
        assert case["highest_utilization"] == UTIL_INFINITE, case  # 0.8x demand included
    for bar in report["sensitivity"]["tornado"]:
        for end in ("low", "high"):
            assert bar[end]["highest_utilization"] == UTIL_INFINITE, (bar["input"], end)


def test_the_text_report_says_unreachable_and_no_refusal_text(tight: tuple[Path, dict]) -> None:
    text = _planner("size", str(tight[0]), "--months", "12").stdout
    assert "LOAD infinite: the latency SLOs are missed even at light load" in text
    assert "Highest utilization [x]: infinite" in text and "Worst outage [x]: infinite" in text
    for bad in ("got 0, expected > 0", "#DIV/0!", "#VALUE!", "%  llama70b"):
        assert bad not in text, bad


def test_the_control_at_50_ms_is_a_finite_load(tmp_path: Path) -> None:
    out = _planner("size", str(_scenario(tmp_path, 0.05)), "--format", "json")
    res = json.loads(out.stdout)["routes"][0]["results"]
    assert 0 < res["load_util"] < 10 and res["sustainable_rate"] > 0


@pytest.mark.slow
def test_the_workbook_agrees_and_libreoffice_prints_unreachable(tight: tuple[Path, dict], tmp_path: Path) -> None:
    from planner.recalc import compute
    from planner.template.render import render

    book = tmp_path / "tight.xlsm"
    made = _planner("template", "sample", str(tight[0]), "-o", str(book))
    assert made.returncode == 0, made.stderr
    cached = openpyxl.load_workbook(book, data_only=True)
    theirs = compute(book).values  # the general engine on the formula text the workbook holds
    for table, key in ((ts.RESULTS, "load_util"), (ts.RESULTS, "max_util"), (ts.FAILOVER, "outage_load_util")):
        cell = table.cell(key, 0)
        assert cached[table.sheet][cell].value == UTIL_INFINITE, (table.sheet, cell)
        assert theirs[(table.sheet, cell)] == UTIL_INFINITE, (table.sheet, cell)
    assert cached[ts.RESULTS.sheet][ts.RESULTS.cell("load_util", 0)].number_format.startswith(
        '[>=1000000000]"\u221e";')
    pages = render(book, tmp_path / "pdf")
    summary = pages.sheet_text("Summary")
    assert "\u221e" in summary  # the cells and the chart's labels
    for bad in ("1000000000", "###", "#VALUE!", "#DIV/0!", "got 0, expected"):
        assert bad not in summary, bad


def test_a_one_replica_fleet_has_no_n_plus_one(tmp_path: Path) -> None:
    """Losing the only replica leaves no capacity: N+1 is infinite and the outage a BREACH (it was a refusal)."""
    text = (ROOT / "samples" / "selfhost-kv.toml").read_text(encoding="utf-8")
    assert "replicas = 3\n" in text  # the H200 fleet
    path = tmp_path / "one-replica.toml"
    path.write_text(text.replace("replicas = 3\n", "replicas = 1\n"), encoding="utf-8")
    report = json.loads(_planner("size", str(path), "--format", "json").stdout)
    h200 = next(o for o in report["outages"] if o["backend"] == "llama70b-h200")
    assert h200["n_plus_one_utilization"] == 0  # idle: no route uses it as primary
    path.write_text(text.replace("replicas = 7\n", "replicas = 1\n"), encoding="utf-8")
    report = json.loads(_planner("size", str(path), "--format", "json").stdout)
    h100 = next(o for o in report["outages"] if o["backend"] == "llama70b-h100")
    assert h100["n_plus_one_utilization"] == UTIL_INFINITE and h100["status"] == "BREACH"
