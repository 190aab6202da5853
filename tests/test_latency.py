"""Self-hosted latency and throughput (planner.latency, P1-P8) and its spreadsheet functions.

Expected values are derived here from the catalog specs and the formulas of docs/method.md §3, so a change in
either the formula or the data shows up as a failure.
"""

from __future__ import annotations

import doctest
import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from planner import functions as F
from planner import latency, memory, selfhosted
from planner.catalog import get_gpu, get_model
from planner.coerce import call_sheet_function
from planner.errors import ArgumentError
from planner.registry import REGISTRY, load

load()


def _splits(model, tp):
    """vLLM's TP rule (memory.check_parallelism): TP divides the attention heads and divides or is a multiple of
    the KV heads."""
    spec = get_model(model)
    kv = spec.num_key_value_heads
    kv_ok = spec.attention == "mla" or (kv % tp == 0 if tp < kv else tp % kv == 0)
    return spec.num_attention_heads % tp == 0 and kv_ok

H100 = get_gpu("h100-sxm")
LLAMA8 = get_model("llama-3.1-8b")


def _llama8_decode(ctx: float = 2048) -> latency.DecodeModel:
    return latency.DecodeModel(
        weights_bytes=memory.weight_bytes_per_gpu(LLAMA8), kv_bytes_per_token=memory.kv_bytes_per_token(LLAMA8),
        context_tokens=ctx, mem_bw_bytes_per_s=H100.mem_bw_bytes_per_s, flops_per_s=H100.bf16_flops_per_s,
        params_active=LLAMA8.params_active, model=LLAMA8,
    )


def test_littles_law():
    """P7: in-flight = rate x latency (Little 1961)."""
    assert latency.concurrency(450, latency_s=1.21) == pytest.approx(544.5)
    assert F.CONCURRENCY(10, 0) == 0
    assert F.CONCURRENCY(12.5, 4) == 50


def test_decode_step_is_memory_bound_at_small_batch():
    """P1: (weights + B·ctx·kv_tok) / (BW·MBU), every byte per GPU, default MBU 0.7."""
    weights = memory.weight_bytes_per_gpu(LLAMA8)
    expected = (weights + 16 * 2048 * 131_072) / (H100.mem_bw_bytes_per_s * 0.7)
    assert _llama8_decode().tpot_s(16) == pytest.approx(expected)
    assert F.TPOT_S("llama-3.1-8b", "h100-sxm", 1, 16, 2048) == pytest.approx(expected)


def test_compute_floor_takes_over_past_the_ridge():
    """P2: t >= 2·P_active·B/(F·MFU·TP); at a context of 0 tokens a large batch is compute bound."""
    d = _llama8_decode(ctx=0)
    batch = 4096
    compute = 2 * LLAMA8.params_active * batch / (H100.bf16_flops_per_s * 0.5)
    memory_bound = memory.weight_bytes_per_gpu(LLAMA8) / (H100.mem_bw_bytes_per_s * 0.7)
    assert compute > memory_bound
    assert d.tpot_s(batch) == pytest.approx(compute)
    assert d.tpot_s(1) == pytest.approx(memory_bound)


def test_tp_splits_weights_and_kv_reads():
    one = F.TPOT_S("llama-3.1-70b", "h100-sxm", 1, 8, 4096)
    four = F.TPOT_S("llama-3.1-70b", "h100-sxm", 4, 8, 4096)
    assert four == pytest.approx(one / 4)  # 8 KV heads divide by 4: both weights and KV shrink by TP
    # fp8 KV halves only the KV term
    fp8 = F.TPOT_S("llama-3.1-70b", "h100-sxm", 4, 8, 4096, "fp8")
    spec = get_model("llama-3.1-70b")
    kv_term = 8 * 4096 * memory.kv_bytes_per_token(spec, tp=4) / (H100.mem_bw_bytes_per_s * 0.7)
    assert four - fp8 == pytest.approx(kv_term / 2)


def test_moe_reads_only_the_touched_experts():
    """P3 uniform routing: E·(1 − (1 − k/E)^B) experts per layer; batch 1 touches exactly k."""
    assert latency.experts_touched(8, experts_per_token=2, batch=1) == pytest.approx(2)
    assert latency.experts_touched(128, experts_per_token=8, batch=1) == pytest.approx(8)
    assert latency.experts_touched(8, experts_per_token=2, batch=10_000) == pytest.approx(8)
    assert latency.experts_touched(8, experts_per_token=2, batch=3) == pytest.approx(8 * (1 - 0.75**3))
    mixtral = get_model("mixtral-8x7b")
    one = latency.weights_read_fraction(mixtral, batch=1)
    assert one == pytest.approx(mixtral.params_active / mixtral.params_total)
    assert latency.weights_read_fraction(mixtral, batch=1000) == pytest.approx(1.0)
    assert latency.weights_read_fraction(LLAMA8, batch=1) == 1.0
    # TPOT of an MoE grows faster than a dense model's between batch 1 and 8 (more experts are read).
    assert F.TPOT_S("mixtral-8x7b", "h100-sxm", 2, 8, 100) > 2 * F.TPOT_S("mixtral-8x7b", "h100-sxm", 2, 1, 100)


def test_prefill_ttft_and_e2e():
    """P4: prefill = (2·P_active·I·(1−h) + attention)/(F·MFU·TP); TTFT = queue + prefill + one decode step; P6."""
    spec = get_model("llama-3.1-70b")
    pre = latency.prefill_s(params_active=spec.params_active, input_tokens=5000, flops_per_s=H100.bf16_flops_per_s,
                            tp=4)
    assert pre == pytest.approx(2 * spec.params_active * 5000 / (H100.bf16_flops_per_s * 0.5 * 4))
    cached = latency.prefill_s(params_active=spec.params_active, input_tokens=5000,
                               flops_per_s=H100.bf16_flops_per_s, tp=4, cache_hit_rate=0.8)
    assert cached == pytest.approx(pre * 0.2)
    # attention: 80 layers x 2 x 64 heads x (128 + 128) per (query, key) pair, causal over 5,000 tokens
    attn = latency.attention_flops(spec, new_tokens=5000)
    assert attn == 80 * 2 * 64 * 256 * (5000 * 5001 / 2)
    # 1,000 uncached tokens after 4,000 cached: each attends to the 4,000 plus its causal share of the 1,000
    attn_cached = latency.attention_flops(spec, new_tokens=1000, cached_tokens=4000)
    assert attn_cached == 80 * 2 * 64 * 256 * (1000 * 4000 + 1000 * 1001 / 2)
    step = F.TPOT_S("llama-3.1-70b", "h100-sxm", 4, 1, 5000)
    flops = H100.bf16_flops_per_s * 0.5 * 4
    assert F.TTFT_S("llama-3.1-70b", "h100-sxm", 4, 5000) == pytest.approx(pre + attn / flops + step)
    assert F.TTFT_S("llama-3.1-70b", "h100-sxm", 4, 5000, 0.8) == pytest.approx(cached + attn_cached / flops + step)
    assert F.E2E_LATENCY_S(0.25, 0.02, 48) == pytest.approx(0.25 + 47 * 0.02)
    assert F.E2E_LATENCY_S(0.25, 0.02, 1) == 0.25


def test_sliding_window_attention_is_capped_at_the_window():
    """Sliding-window layers attend to at most W keys: prefill FLOPs and the decode KV read stop growing."""
    gemma = get_model("gemma-3-27b")  # 10 full + 52 sliding layers, window 1,024
    w = gemma.sliding_window
    per_key = 2 * gemma.num_attention_heads * (gemma.head_dim * 2)
    # past the window every new query on a sliding layer attends to exactly W keys
    extra = (latency.attention_flops(gemma, new_tokens=1, cached_tokens=20000)
             - latency.attention_flops(gemma, new_tokens=1, cached_tokens=10000))
    assert extra == pytest.approx(per_key * 10 * 10000)  # only the 10 full layers grow
    assert latency.attention_flops(gemma, new_tokens=1,
                                   cached_tokens=20000) == pytest.approx(per_key * (10 * 20001 + 52 * w))
    short = latency.attention_flops(gemma, new_tokens=500)  # inside the window every layer is causal-full
    assert short == pytest.approx(per_key * 62 * 500 * 501 / 2)
    # decode: a step at 32k context reads far less than 62 full layers would, and TPOT grows only with full layers
    d8, d32 = (selfhosted.decode_model("gemma-3-27b", "h100-sxm", context_tokens=c) for c in (8000, 32000))
    full_only = memory.kv_bytes_per_token(gemma) * 10 / 62
    assert d32.kv_bytes_per_token * 32000 - d8.kv_bytes_per_token * 8000 == pytest.approx(full_only * 24000)
    llama = selfhosted.decode_model("llama-3.1-8b", "h100-sxm", context_tokens=8000)
    assert llama.kv_bytes_per_token == memory.kv_bytes_per_token(get_model("llama-3.1-8b"))


def test_mla_decode_attention_runs_on_the_latent_cache():
    """MLA decode: absorbed attention over (kv_lora_rank + rope) keys, far costlier per key than prefill's MHA form."""
    ds = get_model("deepseek-v3")
    dec = latency.attention_flops(ds, new_tokens=1, cached_tokens=4095, phase="decode")
    pre = latency.attention_flops(ds, new_tokens=1, cached_tokens=4095)
    assert dec == 2 * 128 * (512 + 64 + 512) * 4096 * 61
    assert pre == 2 * 128 * (192 + 128) * 4096 * 61
    with pytest.raises(ArgumentError):
        latency.attention_flops(ds, new_tokens=1, phase="train")


def test_fp8_weights_compute_at_fp8_flops():
    assert latency.flops_for(H100, weight_dtype="fp8") == H100.fp8_flops_per_s
    assert latency.flops_for(H100, weight_dtype="bf16") == H100.bf16_flops_per_s
    assert latency.flops_for(get_gpu("a100-80gb-sxm"), weight_dtype="fp8") == get_gpu("a100-80gb-sxm").bf16_flops_per_s


def test_fleet_compute_capacity_uses_the_serving_models_gemm_peak():
    """One peak per GPU and weight dtype: a fleet's FLOP/s (COMPUTE, P2/P4) is counted at the peak the serving model's
    steps run at. Datasheet figures: A100 INT8 tensor core 624 TOPS dense (BF16 312 TFLOPS); H100 SXM FP8 1,979
    TFLOPS dense; INT8 weights with 16-bit math (w8a16) at the 16-bit peak. Until session 12 the COMPUTE column
    counted an A100 W8A8 fleet at 312 and an H100 INT8 fleet at its BF16 peak while its latency used 624 / 1,979."""
    from planner.selfhosted import fleet_flops_per_s

    a100 = get_gpu("a100-80gb-sxm")
    assert latency.flops_for(a100, weight_dtype="w8a8") == pytest.approx(624e12)
    assert latency.flops_for(a100, weight_dtype="w8a16") == pytest.approx(312e12)
    assert latency.flops_for(H100, weight_dtype="int8") == pytest.approx(1979e12)
    # 10 replicas of TP 2 at MFU 0.4: 10 x 2 x 624e12 x 0.4
    assert fleet_flops_per_s("llama-3.1-8b", "a100-80gb-sxm", replicas=10, tp=2, mfu=0.4, weight_dtype="w8a8") \
        == pytest.approx(10 * 2 * 624e12 * 0.4)


def test_max_batch_at_tpot_is_the_last_batch_meeting_the_slo():
    d = _llama8_decode()
    batch = latency.max_batch_at_tpot(d, tpot_slo_s=0.02)
    assert d.tpot_s(batch) <= 0.02 < d.tpot_s(batch + 1)
    # closed form for a dense memory-bound model: (SLO·BW·MBU − W)/(ctx·kv_tok)
    closed = (0.02 * H100.mem_bw_bytes_per_s * 0.7 - memory.weight_bytes_per_gpu(LLAMA8)) / (2048 * 131_072)
    assert batch == math.floor(closed)
    assert F.MAX_BATCH_AT_TPOT("llama-3.1-8b", "h100-sxm", 1, 0.02, 2048) == batch
    assert F.MAX_BATCH_AT_TPOT("llama-3.1-8b", "h100-sxm", 1, 0.001, 2048) == 0


def test_replicas_and_tokens_per_s_at_the_slo():
    """P8: λ_rep = B/E2E(B), replicas = ceil(λ_peak/λ_rep); tokens/s = B/TPOT(B)."""
    assert latency.replicas_at_slo(450, replica_qps=95.8) == 5
    assert latency.replicas_at_slo(450, replica_qps=90) == 5  # exact division does not add a replica
    assert latency.replicas_at_slo(450, replica_qps=95.8, failover_replicas=1) == 6
    assert latency.replicas_at_slo(0, replica_qps=0) == 0
    assert latency.tokens_per_s(114, tpot=0.02) == pytest.approx(5700)
    assert latency.replica_rate_qps(100, e2e_s=2) == 50
    tokens = F.SELFHOST_TOKENS_PER_S("llama-3.1-8b", "h100-sxm", 1, 1800, 48, 0.02)
    replicas = F.REPLICAS_AT_SLO("llama-3.1-8b", "h100-sxm", 1, 450, 1800, 48, 0.02)
    assert tokens > 0 and replicas >= 1
    # more load needs at least as many replicas; a looser SLO at most as many
    assert F.REPLICAS_AT_SLO("llama-3.1-8b", "h100-sxm", 1, 900, 1800, 48, 0.02) >= replicas
    assert F.REPLICAS_AT_SLO("llama-3.1-8b", "h100-sxm", 1, 450, 1800, 48, 0.05) <= replicas
    # the throughput feeds the self-hosted $/Mtok (C4)
    assert F.SELFHOST_USD_PER_MTOK_OUTPUT(3, tokens, 1) == pytest.approx(1e6 * 3 / (3600 * tokens))


def test_unreachable_slo_is_a_clear_error():
    with pytest.raises(ArgumentError, match="tpot_slo_s"):
        F.REPLICAS_AT_SLO("llama-3.1-8b", "h100-sxm", 1, 100, 1000, 100, 0.0001)


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda: F.TPOT_S("llama-3.1-8b", "h100-sxm", 0, 1, 100), "tp"),
        (lambda: F.TPOT_S("llama-3.1-8b", "h100-sxm", 1, -1, 100), "batch"),
        (lambda: F.TPOT_S("llama-3.1-8b", "h100-sxm", 1, 1, 100, "auto", 0), "mbu"),
        (lambda: F.TTFT_S("llama-3.1-8b", "h100-sxm", 1, 100, 1.2), "cache_hit_rate"),
        (lambda: F.MAX_BATCH_AT_TPOT("llama-3.1-8b", "h100-sxm", 1, 0, 100), "tpot_slo_s"),
        (lambda: F.E2E_LATENCY_S(-1, 0.01, 10), "time_to_first_token_s"),
        (lambda: F.TPOT_S("llama-3.1-8b", "h100-sxm", 1, 1, 100, "fp9"), "kv_dtype"),
    ],
)
def test_bad_arguments_name_the_argument(call, argument):
    with pytest.raises(ArgumentError) as info:
        call()
    assert str(info.value).startswith(f"{argument}: got ")
    assert "\n" not in str(info.value)


@settings(max_examples=40, deadline=None)
@given(
    model=st.sampled_from(["llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b", "qwen3-30b-a3b", "deepseek-v3"]),
    tp=st.sampled_from([1, 2, 4, 8]),
    a=st.integers(0, 512),
    b=st.integers(0, 512),
    ctx=st.integers(0, 32_768),
)
def test_tpot_is_non_decreasing_in_batch(model, tp, a, b, ctx):
    lo, hi = sorted((a, b))
    assert F.TPOT_S(model, "h200-sxm", tp, lo, ctx) <= F.TPOT_S(model, "h200-sxm", tp, hi, ctx) * (1 + 1e-12)


@settings(max_examples=40, deadline=None)
@given(slo_ms=st.floats(5, 200), ctx=st.integers(0, 16_384))
def test_max_batch_meets_the_slo_and_one_more_misses_it(slo_ms, ctx):
    d = latency.DecodeModel(
        weights_bytes=memory.weight_bytes_per_gpu(get_model("mixtral-8x7b"), tp=2),
        kv_bytes_per_token=memory.kv_bytes_per_token(get_model("mixtral-8x7b"), tp=2), context_tokens=ctx,
        mem_bw_bytes_per_s=H100.mem_bw_bytes_per_s, flops_per_s=H100.bf16_flops_per_s,
        params_active=get_model("mixtral-8x7b").params_active, tp=2, model=get_model("mixtral-8x7b"),
    )
    slo = slo_ms / 1000
    batch = latency.max_batch_at_tpot(d, tpot_slo_s=slo)
    if batch == 0:
        assert d.tpot_s(1) > slo
    else:
        assert d.tpot_s(batch) <= slo
        assert batch == latency.MAX_BATCH or d.tpot_s(batch + 1) > slo


# --------------------------------------------------------------------------------- across the catalog, documented

MODELS = ["llama-3.1-8b", "llama-3.1-70b", "qwen3-30b-a3b", "mixtral-8x7b", "deepseek-v3", "gemma-2-9b", "phi-4"]
GPUS = ["h100-sxm", "h200", "a100-80gb", "b200", "mi300x", "l40s", "l4"]


def test_kv_cache_caps_the_slo_batch():
    """A long context fills the KV cache before the TPOT SLO binds: the SLO batch is the KV maximum."""
    cap = selfhosted.slo_capacity("llama-3.1-70b", "h100-sxm", tp=4, tpot_slo_s=0.2, avg_input_tokens=100_000,
                                  avg_output_tokens=1000)
    assert cap.batch == cap.max_concurrency_kv < cap.batch_at_tpot
    assert cap.max_concurrency_kv == F.MAX_CONCURRENCY("llama-3.1-70b", "h100-sxm", 4, 0.9, "auto", 101_000)


def test_replicas_at_slo_is_ceil_of_peak_over_replica_rate():
    cap = selfhosted.slo_capacity("llama-3.1-8b", "h100-sxm", tpot_slo_s=0.02, avg_input_tokens=1800,
                                  avg_output_tokens=48)
    assert cap.tpot_s <= 0.02
    assert cap.e2e_s == pytest.approx(cap.ttft_s + 47 * cap.tpot_s)
    assert F.SELFHOST_TOKENS_PER_S("llama-3.1-8b", "h100-sxm", 1, 1800, 48, 0.02) == pytest.approx(
        cap.batch / cap.tpot_s
    )
    # REPLICAS_AT_SLO now sizes with the serving model (planner.serving.max_rate_at_slo), not this roofline
    from planner.serving import max_rate_at_slo

    rate = max_rate_at_slo("llama-3.1-8b", "h100-sxm", ttft_slo_s=float("inf"), tpot_slo_s=0.02,
                           input_tokens=1800, output_tokens=48)
    replicas = F.REPLICAS_AT_SLO("llama-3.1-8b", "h100-sxm", 1, 450, 1800, 48, 0.02)
    assert (replicas - 1) * rate < 450 <= replicas * rate


def test_cell_error_text_names_the_argument():
    assert call_sheet_function(REGISTRY["CONCURRENCY"], -1, 1) == "rate_qps: got -1, expected a number >= 0"
    assert call_sheet_function(REGISTRY["TPOT_S"], "llama-3.1-8b", "h100-sxm", 1, 8, 2048, "auto", 1.5) == (
        "mbu: got 1.5, expected a number 0 < x <= 1"
    )
    assert call_sheet_function(REGISTRY["TPOT_S"], "llama-3.1-8b", "b900", 1, 8, 2048).startswith(
        "gpu: got 'b900', expected one of"
    )


@settings(max_examples=60, deadline=None)
@given(model=st.sampled_from(MODELS), gpu=st.sampled_from(GPUS), tp=st.sampled_from([1, 2, 4, 8]),
       ctx=st.integers(min_value=1, max_value=200_000), slo=st.floats(min_value=0.002, max_value=0.5),
       kv=st.sampled_from(["auto", "fp8"]), mbu=st.sampled_from([0.5, 0.7, 0.9]))
def test_max_batch_at_tpot_function_meets_the_slo_and_one_more_does_not(model, gpu, tp, ctx, slo, kv, mbu):
    assume(_splits(model, tp))
    b = F.MAX_BATCH_AT_TPOT(model, gpu, tp, slo, ctx, kv, mbu)
    if b > 0:
        assert F.TPOT_S(model, gpu, tp, b, ctx, kv, mbu) <= slo
    if b < latency.MAX_BATCH:
        assert F.TPOT_S(model, gpu, tp, b + 1, ctx, kv, mbu) > slo


@settings(max_examples=40, deadline=None)
@given(model=st.sampled_from(MODELS), gpu=st.sampled_from(GPUS), b=st.integers(min_value=0, max_value=2000),
       ctx=st.integers(min_value=0, max_value=100_000))
def test_tpot_monotone_in_context_dtype_and_mbu(model, gpu, b, ctx):
    t = F.TPOT_S(model, gpu, 2, b, ctx)
    assert F.TPOT_S(model, gpu, 2, b, ctx + 1000) >= t
    assert F.TPOT_S(model, gpu, 2, b, ctx, "fp8") <= t
    assert F.TPOT_S(model, gpu, 2, b, ctx, "auto", 0.9) <= t


@settings(max_examples=40, deadline=None)
@given(model=st.sampled_from(MODELS), gpu=st.sampled_from(GPUS), i=st.integers(min_value=0, max_value=100_000),
       h=st.floats(min_value=0, max_value=1))
def test_ttft_is_monotone_in_input_and_falls_with_hit_rate(model, gpu, i, h):
    assume(_splits(model, 4))
    t = F.TTFT_S(model, gpu, 4, i, h)
    assert F.TTFT_S(model, gpu, 4, i + 500, h) >= t
    assert F.TTFT_S(model, gpu, 4, i, 0.0) >= t


def test_module_worked_examples_hold():
    for module in (latency, selfhosted):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.attempted > 0 and result.failed == 0, module.__name__
