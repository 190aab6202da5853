"""The fit's loss (planner.serving.accuracy.fitted_objective): each prediction's |ln(pred/meas)| capped, the metrics
averaged, each benchmark run weighted alike; and the trimmed cap the published constants were fitted under (session
23, rule T, docs/serving.md). Expected values are worked by hand from the logarithms."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from planner.serving.accuracy import LOSS_CAP, PUBLISHED_FIT_CAP_RATIO, Row, fitted_objective

ROOT = Path(__file__).resolve().parent.parent


def _row(point_id: str, *, tpot: tuple[float, float] | None = None, ttft: tuple[float, float] | None = None,
         otps: tuple[float, float] | None = None) -> Row:
    measured, predicted = {}, {}
    for name, pair in (("tpot", tpot), ("ttft", ttft), ("otps", otps)):
        if pair is not None:
            measured[name], predicted[name] = pair
    return Row(id=point_id, train=True, tp=1, moe=False, concurrency_class="low", heavy="decode", measured=measured,
               predicted=predicted, baseline={}, saturated=False, note="")


def test_default_cap_is_ln_4_and_the_published_fit_trims_at_ln_1_5():
    assert LOSS_CAP == pytest.approx(1.3862944, abs=1e-7)
    assert PUBLISHED_FIT_CAP_RATIO == 1.5


def test_a_near_miss_costs_its_log_whatever_the_cap():
    # The loss is the mean over the three metrics; a metric no row measured adds 0. ln(1.2) = 0.1823216.
    rows = [_row("src/run/p1", tpot=(0.010, 0.012))]
    assert fitted_objective(rows) == pytest.approx(0.1823216 / 3, abs=1e-7)
    assert fitted_objective(rows, cap=math.log(1.5)) == pytest.approx(0.1823216 / 3, abs=1e-7)


def test_a_miss_beyond_the_cap_costs_the_cap():
    # 8x too slow: ln 8 = 2.0794415, capped at ln 4 = 1.3862944 by default and at ln 1.5 = 0.4054651 when trimmed.
    rows = [_row("src/run/p1", ttft=(0.1, 0.8))]
    assert fitted_objective(rows) == pytest.approx(1.3862944 / 3, abs=1e-7)
    assert fitted_objective(rows, cap=math.log(1.5)) == pytest.approx(0.4054651 / 3, abs=1e-7)


def test_a_saturated_prediction_costs_the_cap():
    rows = [_row("src/run/p1", ttft=(0.1, math.inf)), _row("src/run/p2", otps=(100.0, None))]
    assert fitted_objective(rows, cap=math.log(1.5)) == pytest.approx(2 * 0.4054651 / 3, abs=1e-7)


def test_trimming_changes_which_constant_wins():
    """Two runs: one met within 10 %, one 3x off. Untrimmed the 3x run dominates the loss; trimmed at ln 1.5 its
    cost is fixed, so the loss no longer rewards bending toward it. TPOT's mean (ln 1.1 + ln 3) / 2 = 0.5969 against
    (ln 1.1 + ln 1.5) / 2 = 0.2504, a third of it in the three-metric mean."""
    rows = [_row("a/run/p1", tpot=(0.010, 0.011)), _row("b/run/p1", tpot=(0.010, 0.030))]
    assert fitted_objective(rows, per_run=True) == pytest.approx((0.0953102 + 1.0986123) / 6, abs=1e-7)
    assert fitted_objective(rows, per_run=True, cap=math.log(1.5)) == pytest.approx((0.0953102 + 0.4054651) / 6,
                                                                                   abs=1e-7)


def test_per_run_weighting_counts_a_run_once():
    """Three points of one run at ln 2 and one point of another at 0: per point (3 x 0.6931 + 0) / 4 = 0.5199, per run
    (0.6931 + 0) / 2 = 0.3466 (each a third of the three-metric mean)."""
    rows = [_row(f"a/run/p{i}", otps=(100.0, 200.0)) for i in range(3)] + [_row("b/run/p1", otps=(100.0, 100.0))]
    assert fitted_objective(rows) == pytest.approx(3 * 0.6931472 / 4 / 3, abs=1e-7)
    assert fitted_objective(rows, per_run=True) == pytest.approx(0.6931472 / 2 / 3, abs=1e-7)


def test_the_calibration_file_names_its_objective():
    data = json.loads((ROOT / "planner" / "data" / "serving_calibration.json").read_text(encoding="utf-8"))
    assert "loss capped at ln 1.5" in data["source"]
