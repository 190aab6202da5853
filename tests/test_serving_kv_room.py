"""Rules K and KW (session 16, latency38, docs/serving.md): the KV room of a replica from the run's own engine
settings (``max_model_len``, chunked prefill, ``max_num_batched_tokens``), its memory fraction and its logged weight
load. Both switches were measured on the training split and left off; these tests pin the mechanism either way.

Expected values are worked by hand for Llama-3.1-405B (126 layers, 8 KV heads of 128, hidden 16,384, FFN 53,248,
vocabulary 128,256) at FP8 on 8 H100s under vLLM 0.6 (V0):

- a token's KV per GPU (BF16, one KV head a GPU): ``126·2·128·2`` = 64,512 B;
- V0 profiles one step of ``max_num_batched_tokens`` before it sizes the cache. With chunked prefill off at
  ``max_model_len`` 91,680 that step is 91,680 tokens, whose forward peak is ``2·(3·53,248/8 + 4·16,384)`` =
  171,008 B a token, 14.60 GiB; with chunked prefill on (512 tokens) the sampler's 256 dummy sequences set the peak,
  ``256·128,256·38 B + 512·16,384·2 B`` = 1.18 GiB. The difference, 13.42 GiB, is 223,400 tokens of KV;
- a memory fraction of 0.85 instead of 0.9 leaves ``0.05·G`` less (``G`` the GPU's engine-visible total);
- the logged 56.7677 GiB of weights a GPU (dstack's ``gpu-usage.md``) against the model's count leave the
  difference less.
Offline at 2,048 + 2,048 tokens a request holds 4,096 tokens, so ``max_running`` is the KV tokens / 4,096 (below
V0's 256 sequences).
"""

from __future__ import annotations

import pytest

from planner.catalog import get_gpu
from planner.engines import kv_capacity
from planner.serving import accuracy, api

KV_TOKEN = 126 * 2 * 128 * 2  # bytes per token per GPU
GIB = 2**30
RUN = dict(tp=8, engine="vllm", engine_version="0.6.3", weight_dtype="fp8", input_tokens=2048, output_tokens=2048,
           max_model_len=91680)


def _running(**kw) -> float:
    return api.performance("llama-3.1-405b", "h100-sxm", **{**RUN, **kw}).max_running


def test_profile_follows_the_runs_chunked_prefill_with_rule_k(monkeypatch):
    monkeypatch.setattr(api, "KV_FROM_RUN_SETTINGS", True)
    off, on = _running(chunked_prefill=False), _running(chunked_prefill=True)
    forward = 91680 * 2 * (3 * 53248 / 8 + 4 * 16384)
    sampler = 256 * 128256 * 38 + 512 * 16384 * 2
    assert forward / GIB == pytest.approx(14.60, abs=0.01)
    assert (on - off) * 4096 == pytest.approx((forward - sampler) / KV_TOKEN, rel=0.01)  # ≈ 223,400 tokens
    assert off < 35 < 85 < on  # about 34 and 88 requests of 4,096 tokens


def test_without_rule_k_the_room_ignores_the_runs_settings(monkeypatch):
    monkeypatch.setattr(api, "KV_FROM_RUN_SETTINGS", False)
    off, on = _running(chunked_prefill=False), _running(chunked_prefill=True)
    assert off == on  # max_model_len 8,192 and the default profile, as before rule K
    cap = kv_capacity("llama-3.1-405b", "h100-sxm", tp=8, weight_dtype="fp8", engine="vllm-v0",
                      engine_version="0.6.3", max_model_len=8192)
    assert off == pytest.approx(cap.kv_cache_tokens / 4096, rel=1e-3)


def test_memory_fraction_and_logged_weights_shrink_the_room():
    base = _running(chunked_prefill=True)
    g = get_gpu("h100-sxm").engine_total_bytes
    assert (base - _running(chunked_prefill=True, gpu_memory_utilization=0.85)) * 4096 == pytest.approx(
        0.05 * g / KV_TOKEN, rel=0.01)
    model = kv_capacity("llama-3.1-405b", "h100-sxm", tp=8, weight_dtype="fp8", engine="vllm-v0",
                        engine_version="0.6.3", max_model_len=8192).weights_gib
    assert model == pytest.approx(47.77, abs=0.01)
    less = _running(chunked_prefill=True, loaded_weights_gib=56.7677)
    assert (base - less) * 4096 == pytest.approx((56.7677 - model) * GIB / KV_TOKEN, rel=0.01)  # ≈ 149,800


def test_a_recipe_is_not_counted_twice_beside_a_logged_load():
    logged = _running(chunked_prefill=True, loaded_weights_gib=56.7677)
    both = _running(chunked_prefill=True, loaded_weights_gib=56.7677, checkpoint_recipe="meta-fp8")
    assert both == pytest.approx(logged)


def test_serving_performance_takes_the_same_settings(monkeypatch):
    monkeypatch.setattr(api, "KV_FROM_RUN_SETTINGS", True)
    kw = dict(RUN)
    r = api.serving_performance("llama-3.1-405b", "h100-sxm", chunked_prefill=False, **kw)
    assert r.max_running == pytest.approx(_running(chunked_prefill=False))
    assert r.budget_tokens == 91680  # V0 without chunking: max(max_model_len, 2048)
    assert api.serving_performance("llama-3.1-405b", "h100-sxm", gpu_memory_utilization=0.85, chunked_prefill=False,
                                   **kw).max_running < r.max_running


def test_recorded_room_of_the_training_sources():
    assert accuracy.logged_weight_gib({"id": "dstack-405b/8xH100-1FP8-meta/128-2048/offline-n8"}) == 56.7677
    assert accuracy.logged_weight_gib({"id": "dstack-405b/4xMi300x-1FP8-amd/128-2048/offline-n8"}) == 97.4347
    assert accuracy.recorded_memory_fraction({"id": "trtllm-dsr1-blog/x"},
                                             settings={"kv_cache_free_gpu_mem_fraction": 0.85}) == 0.85
    assert accuracy.recorded_memory_fraction({"id": "trtllm-perf-overview/x"}, settings={}) == 0.95
    assert accuracy.recorded_memory_fraction({"id": "sglang-cookbook/x"},
                                             settings={"gpu_memory_utilization": "1.5"}) is None
