"""Expert parallelism, attention data parallelism and finite open-loop runs in the serving model (issue 11)."""

from __future__ import annotations

import math

import pytest

from planner import serving_performance
from planner.catalog import get_gpu, get_model
from planner.errors import ArgumentError
from planner.memory import kv_bytes_per_token_layer
from planner.serving import replay
from planner.serving import schedule as sch
from planner.serving.api import performance
from planner.serving.calibration import DERIVED
from planner.serving.step import build_replica, step_parts, step_time_s

SHAPE = dict(input_tokens=1000, output_tokens=500)


def test_ep_and_dp_of_one_change_nothing():
    base = serving_performance("deepseek-v3", "h200-sxm", tp=8, concurrency=64, **SHAPE)
    same = serving_performance("deepseek-v3", "h200-sxm", tp=8, concurrency=64, ep=1, dp=1, **SHAPE)
    assert base == same


def test_dp_attention_stops_replicating_the_mla_latent_cache():
    """MLA caches one latent head: at TP8 every GPU holds all of it, with dp=8 each group holds its own sequences."""
    model = get_model("deepseek-v3")
    per_gpu_tp8, per_gpu_tp1 = (kv_bytes_per_token_layer(model, tp=t) for t in (8, 1))
    assert per_gpu_tp8 == per_gpu_tp1  # replicated, not split
    # 4096 sequences leave both runs KV-bound. An unbounded max_num_seqs no longer does: vLLM V1's profile run samples
    # min(max_num_seqs, batched tokens) dummy rows, and since session 10 MLA MoE models take that shape-derived
    # activation too (8,192 rows x 129,280 logits would take the memory the KV cache needs).
    tp = serving_performance("deepseek-v3", "h200-sxm", tp=8, max_num_seqs=4096, **SHAPE)
    dp = serving_performance("deepseek-v3", "h200-sxm", tp=8, dp=8, max_num_seqs=4096, **SHAPE)
    assert dp.max_running == pytest.approx(8 * tp.max_running, rel=0.01)


def test_dp_attention_replicates_dense_attention_weights():
    """Llama-3.1-70B at TP4: dp=2 doubles the attention weights each GPU reads per step, so a lone request decodes
    slower, while the KV a sequence reads per GPU doubles and its count per GPU halves (the same bytes)."""
    one = serving_performance("llama-3.1-70b", "h100-sxm", tp=4, concurrency=1, **SHAPE)
    two = serving_performance("llama-3.1-70b", "h100-sxm", tp=4, dp=2, concurrency=1, **SHAPE)
    assert two.tpot_s > one.tpot_s
    r1 = build_replica(get_model("llama-3.1-70b"), get_gpu("h100-sxm"), tp=4, context_tokens=1000,
                       input_tokens=1000, calibration=DERIVED)
    r2 = build_replica(get_model("llama-3.1-70b"), get_gpu("h100-sxm"), tp=4, dp=2, context_tokens=1000,
                       input_tokens=1000, calibration=DERIVED)
    assert r2.dense_bytes == pytest.approx(2 * r1.dense_bytes)
    assert r2.kv_read_bytes_per_seq == pytest.approx(2 * r1.kv_read_bytes_per_seq)


def test_expert_parallel_all_to_all_replaces_the_moe_all_reduce():
    """S5': with ep = tp the MoE layer's all-reduce ``L·(α + 2(tp−1)/tp·M·h·2/B)`` becomes two all-to-alls
    ``2·L·(α + k·M·h·2/tp·(ep−1)/ep/B)``; nothing else in the step changes."""
    model, gpu = get_model("qwen3-235b-a22b"), get_gpu("h100-sxm")
    kw = dict(tp=8, context_tokens=2000, input_tokens=1000, calibration=DERIVED)
    r1, r8 = build_replica(model, gpu, **kw), build_replica(model, gpu, ep=8, **kw)
    m = 64.0
    c1, c8 = step_parts(r1, DERIVED, decode_seqs=m)[2], step_parts(r8, DERIVED, decode_seqs=m)[2]
    layers, h, k, link = model.num_hidden_layers, model.hidden_size, model.num_experts_per_tok, r1.link_bytes_per_s
    alpha = DERIVED.allreduce_latency_s
    all_reduce = layers * (alpha + 2 * 7 / 8 * m * h * 2 / link)
    all_to_all = 2 * layers * (alpha + k * m * h * 2 / 8 * 7 / 8 / link)
    assert c8 - c1 == pytest.approx(all_to_all - all_reduce, rel=1e-9)
    assert step_parts(r1, DERIVED, decode_seqs=m)[:2] == step_parts(r8, DERIVED, decode_seqs=m)[:2]


@pytest.mark.parametrize(("model", "kw", "what"), [
    ("llama-3.1-70b", dict(tp=4, ep=2), "mixture-of-experts"),
    ("qwen3-235b-a22b", dict(tp=8, ep=3), "divisor of tp=8"),
    ("deepseek-v3", dict(tp=8, dp=3), "divisor of tp=8"),
    ("deepseek-v3", dict(tp=8, dp=0), ">= 1"),
])
def test_bad_parallel_sizes_are_refused_by_name(model, kw, what):
    with pytest.raises(ArgumentError) as err:
        serving_performance(model, "h200-sxm", concurrency=4, **SHAPE, **kw)
    assert what in str(err.value)


def _load(max_running: float = 64.0, budget: int = 8192):
    r = build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), context_tokens=101, input_tokens=100,
                      calibration=DERIVED)
    s = sch.EngineSchedule(engine="vllm", budget_tokens=budget, max_num_seqs=1024, mixed=True, source="test")
    return r, sch.Load(replica=r, calibration=DERIVED, schedule=s, input_tokens=100, output_tokens=2,
                       max_running=max_running)


def test_finite_run_replays_the_steps_by_hand():
    """Four 100-token prompts, 2 output tokens, at 10^6 req/s on a mixed engine: request 0 is prefilled alone
    (step 1); the other three arrive meanwhile and are prefilled in step 2 beside request 0's decode; step 3
    decodes them. Expected values from step_time_s step by step."""
    r, load = _load()
    gap = 1e-6
    t1 = step_time_s(r, DERIVED, decode_seqs=0, prefill_tokens=100, prefill_seqs=1)
    t2 = t1 + step_time_s(r, DERIVED, decode_seqs=1, prefill_tokens=300, prefill_seqs=3)
    t3 = t2 + step_time_s(r, DERIVED, decode_seqs=3)
    o = r.ttft_fixed_s
    run = replay.finite_open_run(load, rate=1 / gap, prompts=4)
    assert run.ttft_s == pytest.approx((o + t1 + 3 * (o + t2) - 6 * gap) / 4, rel=1e-9)
    assert run.tpot_s == pytest.approx(((t2 - t1) + 3 * (t3 - t2)) / 4, rel=1e-9)
    assert run.duration_s == pytest.approx(t3, rel=1e-9)
    median = replay.finite_open_run(load, rate=1 / gap, prompts=4, stat="median")
    assert median.tpot_s == pytest.approx(t3 - t2, rel=1e-9)


def test_finite_run_queues_behind_the_running_cap():
    """With room for 2 running requests, the third waits for the first completion."""
    r, load = _load(max_running=2)
    run = replay.finite_open_run(load, rate=1e6, prompts=3)
    assert run.peak_running == 2 and run.peak_waiting == 1


def test_past_capacity_the_api_says_saturated_but_a_finite_run_is_measured_finite():
    kw = dict(input_tokens=300, output_tokens=300, request_rate=500.0)
    steady = serving_performance("llama-3.1-8b", "h100-sxm", **kw)
    assert steady.saturated and math.isinf(steady.ttft_s)
    short = performance("llama-3.1-8b", "h100-sxm", num_prompts=300, **kw)
    longer = performance("llama-3.1-8b", "h100-sxm", num_prompts=3000, **kw)
    assert short.mode == "open-finite" and not short.saturated
    assert math.isfinite(short.ttft_s) and math.isfinite(short.tpot_s)
    assert longer.ttft_s > 3 * short.ttft_s  # the queue grows with the run
    assert short.requests_per_s <= steady.max_requests_per_s * 1.05


def test_offline_run_past_the_running_cap_runs_in_waves():
    """An offline run of 3x the running cap: the first wave's prompts wait only for prefill, the rest for earlier
    requests to finish, so the mean TTFT is at least a third of the way into the run (the 2nd and 3rd waves start
    after one and two waves' decoding)."""
    kw = dict(input_tokens=500, output_tokens=400, max_num_seqs=32, calibration=DERIVED)
    one = performance("llama-3.1-8b", "h100-sxm", num_prompts=32, **kw)
    three = performance("llama-3.1-8b", "h100-sxm", num_prompts=96, **kw)
    assert three.mode == "offline-finite" and three.running_batch == 32
    wave = one.e2e_s
    assert three.ttft_s > (0 + wave + 2 * wave) / 3 * 0.8
    assert three.requests_per_s == pytest.approx(one.requests_per_s, rel=0.15)


def test_per_sequence_multi_gpu_cost_scales_with_sequences_and_gpu_doublings():
    """S2: ``o_tp_seq·log2(tp·pp)·(d + n_p)``. With 10 us per sequence and doubling, 32 decoding sequences on TP4
    (two doublings) add 32 x 2 x 10 us = 640 us to the step; on one GPU nothing."""
    cal = DERIVED.replace(tp_seq_overhead_s={"vllm": 1e-5})
    model = get_model("llama-3.1-70b")
    for tp, expected in ((1, 0.0), (4, 32 * 2 * 1e-5)):
        base = build_replica(model, get_gpu("h100-sxm"), tp=tp, context_tokens=1000, input_tokens=800,
                             calibration=DERIVED)
        more = build_replica(model, get_gpu("h100-sxm"), tp=tp, context_tokens=1000, input_tokens=800,
                             calibration=cal)
        extra = step_time_s(more, cal, decode_seqs=32) - step_time_s(base, DERIVED, decode_seqs=32)
        assert extra == pytest.approx(expected, abs=1e-12)
