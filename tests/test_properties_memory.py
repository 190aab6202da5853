"""Property tests of the memory core (M1-M11): unit round trips, sharding identities and fit/concurrency agreement.

Complements the property tests in ``test_memory.py`` (block bounds, monotonicity, KV_FIT vs MAX_CONCURRENCY through
the spreadsheet functions) with identities of the core functions themselves.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from planner import functions as F
from planner import memory
from planner.catalog import get_model
from planner.registry import load
from planner.specs import GIB

load()


def _splits(model, tp, pp=1):
    """vLLM's split rules (memory.check_parallelism): TP divides the attention heads, TP divides or is a multiple
    of the KV heads, PP <= layers."""
    spec = model if not isinstance(model, str) else get_model(model)
    kv = spec.num_key_value_heads
    kv_ok = spec.attention == "mla" or (kv % tp == 0 if tp < kv else tp % kv == 0)
    return spec.num_attention_heads % tp == 0 and kv_ok and pp <= spec.num_hidden_layers

FULL_ONLY = ["llama-3.1-8b", "llama-3.1-70b", "qwen3-8b", "mixtral-8x7b", "qwen3-30b-a3b", "phi-4"]
ANY = FULL_ONLY + ["deepseek-v3", "gemma-2-9b", "gemma-3-27b", "gpt-oss-120b", "mistral-7b-v0.1"]
tokens = st.integers(min_value=0, max_value=500_000)
BUDGETS = st.integers(min_value=2**20, max_value=2000 * GIB)
REQUESTS = st.integers(min_value=2**10, max_value=2**37)


@settings(max_examples=50, deadline=None)
@given(model=st.sampled_from(ANY), dtype=st.sampled_from(["auto", "bf16", "fp8", "int4", "mxfp4"]),
       tp=st.sampled_from([1, 2, 4, 8]), pp=st.sampled_from([1, 2, 4]))
def test_weights_gib_round_trips_to_bytes_and_shards_exactly(model, dtype, tp, pp):
    """WEIGHTS_GIB x 2^30 is the core's byte count, and TP x PP GPUs together hold the whole checkpoint."""
    assume(_splits(model, tp, pp))
    spec = get_model(model)
    per_gpu = memory.weight_bytes_per_gpu(spec, tp=tp, pp=pp, weight_dtype=dtype)
    assert F.WEIGHTS_GIB(model, dtype, tp, pp) * GIB == pytest.approx(per_gpu, rel=1e-12)
    assert per_gpu * tp * pp == pytest.approx(memory.weight_bytes_per_gpu(spec, weight_dtype=dtype), rel=1e-12)


@settings(max_examples=50, deadline=None)
@given(model=st.sampled_from(FULL_ONLY), ctx=tokens, tp=st.sampled_from([1, 2, 4, 8, 16]),
       kv=st.sampled_from(["auto", "fp8"]))
def test_unpaged_request_is_tokens_times_bytes_per_token(model, ctx, tp, kv):
    """Full attention, block 1: KV per request = context x KV bytes per token (M2 x M8)."""
    assume(_splits(model, tp))
    spec = get_model(model)
    assert memory.kv_bytes_per_request(spec, context_tokens=ctx, tp=tp, kv_cache_dtype=kv, block_size=1) == (
        ctx * F.KV_BYTES_PER_TOKEN(model, kv, tp)
    )


@settings(max_examples=40, deadline=None)
@given(model=st.sampled_from(FULL_ONLY), tp=st.sampled_from([1, 2, 4, 8]))
def test_tp_shards_sum_to_the_replica_when_tp_divides_kv_heads(model, tp):
    """When TP divides the KV heads, the TP shards hold exactly the replica's KV; past that, heads replicate."""
    assume(_splits(model, tp))
    spec = get_model(model)
    whole = memory.kv_bytes_per_token(spec)
    shard = memory.kv_bytes_per_token(spec, tp=tp)
    if spec.num_key_value_heads % tp == 0:
        assert shard * tp == whole
    else:
        assert shard * tp > whole
    assert shard >= whole / spec.num_key_value_heads  # at least one head per rank


@settings(max_examples=60, deadline=None)
@given(budget=BUDGETS, per_request=REQUESTS,
       concurrency=st.floats(min_value=0, max_value=1e6))
@example(budget=2**20, per_request=2**10, concurrency=5e-324)  # a tiny positive load still needs one replica
def test_replicas_for_kv_always_fit_and_one_fewer_does_not_hold_the_requests(budget, per_request, concurrency):
    """ceil(C / C_max) replicas give KV utilization <= 1; with one replica fewer, C exceeds their whole-request
    capacity (M11). Byte counts are whole numbers, as KV per request always is."""
    c_max = memory.max_concurrency(budget, kv_request_bytes=per_request)
    if c_max == 0:
        assert per_request > budget
        return
    replicas = memory.replicas_for_concurrency(concurrency, max_concurrency_per_replica=c_max)
    if concurrency == 0:
        assert replicas == 0
        return
    assert memory.kv_utilization(concurrency, kv_request_bytes=per_request, kv_budget=budget,
                                 replicas=replicas) <= 1 + 1e-9
    assert (replicas - 1) * c_max < concurrency


@settings(max_examples=60, deadline=None)
@given(budget=BUDGETS, per_request=REQUESTS)
def test_max_concurrency_is_the_floor(budget, per_request):
    """Byte counts are whole numbers (KV per request is blocks x page bytes), so the floor is exact."""
    c_max = memory.max_concurrency(budget, kv_request_bytes=per_request)
    assert c_max * per_request <= budget < (c_max + 1) * per_request


@settings(max_examples=50, deadline=None)
@given(model=st.sampled_from(ANY), ctx=tokens, block=st.sampled_from([1, 16, 32]))
def test_fp8_kv_is_exactly_half_of_bf16_at_any_context(model, ctx, block):
    spec = get_model(model)
    bf16 = memory.kv_bytes_per_request(spec, context_tokens=ctx, kv_cache_dtype="bf16", block_size=block)
    fp8 = memory.kv_bytes_per_request(spec, context_tokens=ctx, kv_cache_dtype="fp8", block_size=block)
    assert fp8 * 2 == bf16


@settings(max_examples=50, deadline=None)
@given(model=st.sampled_from(ANY), a=tokens, b=tokens, block=st.sampled_from([1, 16]))
def test_kv_per_request_is_subadditive_up_to_blocks(model, a, b, block):
    """Caching a + b tokens never costs more than two requests of a and b plus a block per layer (sliding layers are
    capped, full layers are linear)."""
    spec = get_model(model)
    full, swa = memory.layer_split(spec)
    slack = memory.kv_bytes_per_token_layer(spec) * block * (full + 2 * swa)
    joint = memory.kv_bytes_per_request(spec, context_tokens=a + b, block_size=block)
    assert joint <= memory.kv_bytes_per_request(spec, context_tokens=a, block_size=block) + memory.kv_bytes_per_request(
        spec, context_tokens=b, block_size=block) + slack


@settings(max_examples=40, deadline=None)
@given(i=st.floats(min_value=0, max_value=1e6), o=st.floats(min_value=0, max_value=1e6))
def test_average_context_lies_between_input_and_input_plus_output(i, o):
    avg = memory.average_context_tokens(i, avg_output_tokens=o)
    assert i <= avg <= i + o
    assert math.isclose(2 * avg - i, i + o, rel_tol=1e-12, abs_tol=1e-9)


def test_any_positive_load_needs_a_replica():
    assert memory.replicas_for_concurrency(1e-15, max_concurrency_per_replica=1000) == 1
    from planner import latency

    assert latency.replicas_at_slo(1e-15, replica_qps=1000) == 1
    assert latency.replicas_at_slo(1e-15, replica_qps=1000, failover_replicas=1) == 2
