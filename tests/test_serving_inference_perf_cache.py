"""Rule U (session 17, latency42, docs/serving.md): inference-perf's ``shared_prefix`` generator cycles through
``num_groups × num_prompts_per_group`` prompts, so on vLLM V1 (prefix cache on by default) every prompt after a stage's
first pass is a cache hit of whole 16-token blocks; ``accuracy.inference_perf_cache_hit_rate`` gives the mean hit rate
and ``predict`` passes it as ``performance(..., cache_hit_rate=)`` when the switch is on."""

import json
from pathlib import Path

import pytest

from planner.catalog import benchmark_harness_data
from planner.serving import accuracy, api
from planner.serving.api import default_calibration, performance

DATA = Path(__file__).parent / "data" / "serving"


def _blis(point_id: str) -> dict:
    points = json.loads((DATA / "blis-training-h100.json").read_text())["points"]
    return next(p for p in points if p["id"] == point_id)


GENERAL = "blis-training/20260218-130541-mixtral-8x7b-v0-1-tp2-general"
ROLEPLAY = "blis-training/20260218-141024-mixtral-8x7b-v0-1-tp2-roleplay"


def test_harness_records_one_hundred_prompts_for_blis():
    entry = benchmark_harness_data()["inference_perf"]
    assert entry["sources"] == {"blis-training": {"distinct_prompts": 100}}  # 10 groups x 10 prompts, resolved config
    assert entry["source"]["repo"] == "kubernetes-sigs/inference-perf"


@pytest.mark.parametrize(("point_id", "expected"), [
    # by hand: 571-token prompts, 35 whole blocks (560 tokens) cached, 11 computed; stage 0's first 100 of 4,800 miss
    (f"{GENERAL}/stage0", 560 / 571 * 4700 / 4800),
    (f"{GENERAL}/stage1", 560 / 571),  # a later stage of the same server: every prompt already cached
    (f"{ROLEPLAY}/stage0", 768 / 782 * 7100 / 7200),  # 782 tokens: 48 blocks cached, 14 computed; 7,200 requests
])
def test_hit_rate_by_hand(point_id, expected):
    assert accuracy.inference_perf_cache_hit_rate(_blis(point_id)) == pytest.approx(expected, rel=1e-12)


def test_no_hit_rate_outside_the_harness_or_on_v0():
    point = _blis(f"{GENERAL}/stage1")
    assert accuracy.inference_perf_cache_hit_rate({**point, "engine_version": "0.7.3"}) is None
    assert accuracy.inference_perf_cache_hit_rate({**point, "engine": "sglang"}) is None
    other = {**point, "id": "dstack-405b/8xH100-1FP8-meta/sharegpt/qps16"}
    assert accuracy.inference_perf_cache_hit_rate(other) is None
    assert accuracy.inference_perf_cache_hit_rate({**point, "engine_version": "0.10.1"}) == pytest.approx(560 / 571)


def _passed_kwargs(monkeypatch, point: dict) -> dict:
    seen: dict = {}

    def fake(model, gpu, **kwargs):
        seen.update(kwargs)
        raise accuracy.PlannerError("stop")  # predict turns a PlannerError into a 'not modelled' row

    monkeypatch.setattr(api, "performance", fake)
    accuracy.predict(point, calibration=default_calibration())
    return seen


def test_predict_passes_the_hit_rate_only_with_the_switch(monkeypatch):
    point = _blis(f"{GENERAL}/stage1")
    monkeypatch.setattr(accuracy, "INFERENCE_PERF_PREFIX_CACHE", False)
    assert "cache_hit_rate" not in _passed_kwargs(monkeypatch, point)
    monkeypatch.setattr(accuracy, "INFERENCE_PERF_PREFIX_CACHE", True)
    assert _passed_kwargs(monkeypatch, point)["cache_hit_rate"] == pytest.approx(560 / 571)


def test_other_sources_are_untouched_with_the_switch(monkeypatch):
    monkeypatch.setattr(accuracy, "INFERENCE_PERF_PREFIX_CACHE", True)
    points = json.loads((DATA / "sglang-cookbook.json").read_text())["points"]
    assert "cache_hit_rate" not in _passed_kwargs(monkeypatch, points[0])


def test_a_cached_prompt_costs_less_prompt_work():
    # the API's own cache_hit_rate (what rule U passes): at a light load the first token comes sooner
    kw = dict(tp=1, input_tokens=2000, output_tokens=100, request_rate=0.5, calibration=default_calibration())
    cold = performance("llama-3.1-8b", "h100-sxm", **kw)
    warm = performance("llama-3.1-8b", "h100-sxm", cache_hit_rate=0.992, **kw)
    assert warm.ttft_s < cold.ttft_s
