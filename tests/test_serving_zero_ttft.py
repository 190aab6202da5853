"""Rule Z (docs/serving.md, "Session 15, latency34"): benchmark_serving counts a TTFT of 0 for the requests that
stream no text. Expected values worked by hand from the runs' recorded output lengths (dstackai/benchmarks 06c957a
result files: 379 of the 8xH100 16 req/s run's 1,000 outputs are 0 tokens, 378 of its 32 req/s run's)."""
from __future__ import annotations

import pytest

from planner.serving import accuracy as A


def test_zero_share_is_the_recorded_count_of_empty_outputs() -> None:
    assert A.bench_serving_zero_ttft_share({"id": "dstack-405b/8xH100-1FP8-meta/sharegpt/qps16"}) == 0.379
    assert A.bench_serving_zero_ttft_share({"id": "dstack-405b/8xH100-1FP8-meta/sharegpt/qps32"}) == 0.378
    # runs whose result files are absent (outputs not recorded) and other sources are untouched
    assert A.bench_serving_zero_ttft_share({"id": "dstack-405b/4xMi300x-1FP8-amd/sharegpt/qps16"}) == 0.0
    assert A.bench_serving_zero_ttft_share({"id": "nim-benchmarking-perf/x"}) == 0.0


def test_published_mean_with_zeros_by_hand() -> None:
    # the qps16 file: mean over the 621 streamed requests 2,393.5 ms; over all 1,000 with 379 zeros
    # 0.621 × 2,393.5 = 1,486.4 ms, the published mean_ttft_ms (1,486.39)
    z = A.bench_serving_zero_ttft_share({"id": "dstack-405b/8xH100-1FP8-meta/sharegpt/qps16"})
    assert (1 - z) * 2393.5 == pytest.approx(1486.4, abs=0.1)


@pytest.mark.slow
def test_switch_scales_only_the_mean_ttft(monkeypatch: pytest.MonkeyPatch) -> None:
    import runpy

    from planner.serving.api import default_calibration

    ns = runpy.run_path("tools/serving_fit", run_name="x")
    point = next(p for p in ns["points"]() if p["id"] == "dstack-405b/8xH100-1FP8-meta/sharegpt/qps16")
    monkeypatch.setattr(A, "BENCH_SERVING_ZERO_TTFT", False)
    off = A.evaluate([point], calibration=default_calibration())[0].predicted
    monkeypatch.setattr(A, "BENCH_SERVING_ZERO_TTFT", True)
    on = A.evaluate([point], calibration=default_calibration())[0].predicted
    assert on["ttft"] == pytest.approx(0.621 * off["ttft"], rel=1e-12)
    assert on["tpot"] == off["tpot"] and on["otps"] == off["otps"]
