"""Self-hosted replicas and fleets: KV fit and TPOT of a model on a GPU, from catalog specs (M8-M11, P1-P8).

Pure functions, no I/O. This module composes :mod:`planner.memory`, :mod:`planner.latency` and
:func:`planner.engines.kv_capacity` (the KV budget the serving engine allocates) into what a plan asks of one replica
(KV bytes per request, maximum concurrency, TPOT at a batch, the largest batch at a TPOT SLO) and of a fleet carrying
routes (:func:`fleet_constraints`, :func:`route_details`, used by :mod:`planner.sizing`). The spreadsheet functions
of :mod:`planner.sheet.memory` and :mod:`planner.sheet.latency` call the same functions, so ``planner size`` and the
workbook agree.

Method for a fleet (C7 constraints):

- every route's in-flight requests by Little's law at ``E2E = TTFT + O·TPOT`` (P7; the route's SLOs where given,
  otherwise the modelled values), the same expression as the template's *In flight at peak* column;
- ``<fleet> KV``: ``Σ_routes C_r / (C_max(ctx_r)·replicas)`` with ``C_max`` the requests of context ``ctx_r`` (the
  route's p95 context, or ``I + O``) that fit one replica (M11);
- ``<fleet> TPOT``: TPOT at the peak batch per replica (``Σ C_r / replicas`` at the concurrency-weighted average
  context ``I + O/2``, P1-P3) over the tightest TPOT SLO of the fleet's routes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from planner import latency, memory
from planner.defaults import DEFAULT_MBU, DEFAULT_MFU
from planner.engines import budget_reads_max_model_len, held_sliding_tokens, kv_capacity
from planner.engines.vllm import padded_layers
from planner.errors import check_fraction, check_number
from planner.specs import GIB, GpuSpec, ModelSpec

FIXED_POINT_ITERATIONS = 30
"""Iterations of the batch ↔ TPOT fixed point when a route gives no TPOT SLO."""


def _model(model: ModelSpec | str) -> ModelSpec:
    from planner.catalog import get_model

    return model if isinstance(model, ModelSpec) else get_model(model)


def _specs(model: ModelSpec | str, gpu: GpuSpec | str) -> tuple[ModelSpec, GpuSpec]:
    from planner.catalog import get_gpu

    return _model(model), gpu if isinstance(gpu, GpuSpec) else get_gpu(gpu)


@dataclass(frozen=True, kw_only=True)
class ReplicaKv:
    """One replica's KV cache at one request context, per GPU of the replica."""

    engine: str
    context_tokens: float
    block_size: int
    weights_gib: float
    kv_budget_bytes: float
    kv_bytes_per_request: float
    kv_bytes_held_per_request: float
    max_concurrency: int


def replica_kv(
    model: ModelSpec | str,
    gpu: GpuSpec | str,
    *,
    context_tokens: float,
    tp: int = 1,
    pp: int = 1,
    gpu_memory_utilization: float | None = None,
    kv_cache_dtype: str = "auto",
    weight_dtype: str = "auto",
    engine: str = "vllm",
    block_size: int | None = None,
) -> ReplicaKv:
    """KV budget (M9, from :func:`planner.engines.kv_capacity` for ``engine``), KV bytes per request at
    ``context_tokens`` in the engine's block size (M7-M8; vLLM V1 with its padded hybrid groups) and
    ``C_max = floor(budget / KV_req)`` (M11). For vLLM V1 this is ``floor`` of the engine's logged maximum
    concurrency at ``max_model_len = context_tokens``: the admission worst case, a prefill chunk beyond the window
    on sliding layers (M4). ``kv_bytes_held_per_request`` is what a decoding request holds in the engine's steady
    state (M4a, :func:`planner.engines.held_sliding_tokens`), the size ``KV_FIT`` charges in-flight requests.

    The two steps: :func:`replica_budget` (the engine's budget, which only vLLM V0's profile batch lets the context
    change) and :func:`replica_kv_at` (the request at ``context_tokens`` against it).

    >>> r = replica_kv("llama-3.1-8b", "h100-sxm", context_tokens=4096)
    >>> r.kv_bytes_per_request / 2**30, r.max_concurrency
    (0.5, 102)
    """
    budget = replica_budget(model, gpu, context_tokens=context_tokens, tp=tp, pp=pp,
                            gpu_memory_utilization=gpu_memory_utilization, kv_cache_dtype=kv_cache_dtype,
                            weight_dtype=weight_dtype, engine=engine, block_size=block_size)
    return replica_kv_at(budget, context_tokens=context_tokens)


@dataclass(frozen=True, kw_only=True)
class ReplicaBudget:
    """What :func:`replica_kv` reads of :func:`planner.engines.kv_capacity` for one replica, with the model and the
    arguments the request's bytes need (``tp``, ``pp``, ``kv_cache_dtype`` as given); ``sliding_batch`` is vLLM V1's
    profile batch (its sliding-window admission, M4), None for the other engines. ``reads_context``: whether
    the context it was computed at (its ``max_model_len``) can change it
    (:func:`planner.engines.budget_reads_max_model_len`: vLLM V0's profile batch); when false it is the budget at
    every valid context."""

    model: ModelSpec
    tp: int
    pp: int
    kv_cache_dtype: str
    engine: str
    block_size: int
    sliding_batch: int | None
    weights_gib: float
    kv_budget_bytes: float
    cached_layers: tuple[int, int] | None
    reads_context: bool


def replica_budget(
    model: ModelSpec | str,
    gpu: GpuSpec | str,
    *,
    context_tokens: float,
    tp: int = 1,
    pp: int = 1,
    gpu_memory_utilization: float | None = None,
    kv_cache_dtype: str = "auto",
    weight_dtype: str = "auto",
    engine: str = "vllm",
    block_size: int | None = None,
) -> ReplicaBudget:
    """The KV budget of one replica serving requests of ``context_tokens`` (validated first, then
    ``max_model_len = max(1, ceil(context))``): ``kv_capacity``'s available bytes, weights, engine, block and
    profile batch, and the layers vLLM V1 caches per request (its padded hybrid groups,
    :func:`planner.engines.vllm.padded_layers`). M9.

    >>> b = replica_budget("llama-3.1-8b", "h100-sxm", context_tokens=4096)
    >>> round(b.kv_budget_bytes / 2**30, 2), b.block_size, b.reads_context
    (51.32, 16, False)
    """
    spec, card = _specs(model, gpu)
    ctx = memory.blocks(context_tokens, block_size=1)  # validates; whole tokens
    cap = kv_capacity(
        spec, card, tp=tp, pp=pp, gpu_memory_utilization=gpu_memory_utilization, kv_cache_dtype=kv_cache_dtype,
        weight_dtype=weight_dtype, engine=engine, max_model_len=max(1, ctx), block_size=block_size,
    )
    full, swa = memory.layer_split(spec, pp=pp)
    return ReplicaBudget(
        model=spec, tp=tp, pp=pp, kv_cache_dtype=kv_cache_dtype, engine=cap.engine, block_size=cap.block_size,
        sliding_batch=cap.max_num_batched_tokens if cap.engine == "vllm" else None, weights_gib=cap.weights_gib,
        kv_budget_bytes=cap.available_kv_gib * GIB,
        cached_layers=padded_layers(full, swa=swa) if cap.engine == "vllm" else None,
        reads_context=budget_reads_max_model_len(cap.engine),
    )


def replica_kv_at(budget: ReplicaBudget, *, context_tokens: float) -> ReplicaKv:
    """One replica's KV cache at ``context_tokens`` against its :func:`replica_budget` (M7-M8, M4a, M11): the
    request's bytes in the engine's blocks and ``C_max = floor(budget / KV_req)``. ``context_tokens`` is checked
    first (:func:`planner.memory.kv_bytes_per_request`, the error :func:`replica_budget` gives for it).

    >>> r = replica_kv_at(replica_budget("llama-3.1-8b", "h100-sxm", context_tokens=1), context_tokens=4096)
    >>> r.kv_bytes_per_request / 2**30, r.max_concurrency
    (0.5, 102)
    """
    spec, layers, tp, pp, dtype = budget.model, budget.cached_layers, budget.tp, budget.pp, budget.kv_cache_dtype
    # vLLM V1 admits a sliding-window request at W - 1 + its batch budget, which depends on the GPU (M4)
    batch = {"max_num_batched_tokens": budget.sliding_batch} if budget.sliding_batch is not None else {}
    per_request = memory.kv_bytes_per_request(
        spec, context_tokens=context_tokens, tp=tp, pp=pp, kv_cache_dtype=dtype, block_size=budget.block_size,
        cached_layers=layers, **batch,
    )
    held = per_request
    if spec.sliding_window:  # decoding requests hold the engine's steady state on sliding layers (M4a)
        held = memory.kv_bytes_per_request(
            spec, context_tokens=context_tokens, tp=tp, pp=pp, kv_cache_dtype=dtype, block_size=budget.block_size,
            cached_layers=layers,
            sliding_tokens=held_sliding_tokens(spec.sliding_window, engine=budget.engine,
                                               block_size=budget.block_size),
        )
    budget_bytes = budget.kv_budget_bytes
    conc = memory.max_concurrency(budget_bytes, kv_request_bytes=per_request) if per_request > 0 else 0
    return ReplicaKv(
        engine=budget.engine, context_tokens=float(context_tokens), block_size=budget.block_size,
        weights_gib=budget.weights_gib, kv_budget_bytes=budget_bytes, kv_bytes_per_request=per_request,
        kv_bytes_held_per_request=held, max_concurrency=conc,
    )


def prefix_retention_bytes(
    model: ModelSpec | str,
    gpu: GpuSpec | str,
    *,
    prefix_tokens: float,
    distinct_prefixes: float = 1,
    tp: int = 1,
    pp: int = 1,
    gpu_memory_utilization: float | None = None,
    kv_cache_dtype: str = "auto",
    weight_dtype: str = "auto",
    engine: str = "vllm",
    replica: Callable[..., ReplicaKv] = replica_kv,
) -> float:
    """KV bytes per GPU that keep a route's shared prefixes warm on one replica (M10):
    ``n_prefixes · KV_held(P)``, ``KV_held`` the blocks a prefix of ``P`` tokens occupies in the engine's cache
    (:func:`replica_kv`; sliding-window layers keep only their window). ``replica`` answers as :func:`replica_kv`
    does (the spreadsheet passes its kept copy, :mod:`planner.sheet.memory`).

    M10 counts shared prefix blocks once, because the engines reference-count them (vLLM automatic prefix caching,
    SGLang's radix cache): ``KV_total ≈ n_prefixes·P·kv_tok + C·kv_tok·(I_unique + O/2)``, so the in-flight part is
    charged the unshared context only. Every replica the route reaches keeps its prefixes warm (no cache-aware
    routing assumed), so the share of each replica's budget is the same on all of them.

    Ref: M10 (PagedAttention block sharing, Kwon et al., SOSP'23; vLLM automatic prefix caching design).

    Worked example, Llama-3.1-8B bf16 on vLLM: 10 prefixes of 4,096 tokens are 10 × 256 blocks × 16 × 131,072 B
    = 5.0 GiB per GPU.

    >>> prefix_retention_bytes("llama-3.1-8b", "h100-sxm", prefix_tokens=4096, distinct_prefixes=10) / 2**30
    5.0
    """
    p = check_number("prefix_tokens", prefix_tokens, minimum=0)
    n = check_number("distinct_prefixes", distinct_prefixes, minimum=0)
    if p == 0 or n == 0:
        return 0.0
    kv = replica(model, gpu, context_tokens=p, tp=tp, pp=pp, gpu_memory_utilization=gpu_memory_utilization,
                 kv_cache_dtype=kv_cache_dtype, engine=engine, weight_dtype=weight_dtype)
    return n * kv.kv_bytes_held_per_request


def decode_model(
    model: ModelSpec | str,
    gpu: GpuSpec | str,
    *,
    context_tokens: float,
    tp: int = 1,
    kv_cache_dtype: str = "auto",
    weight_dtype: str = "auto",
    mbu: float = DEFAULT_MBU,
    mfu: float = DEFAULT_MFU,
) -> latency.DecodeModel:
    """The decode roofline of one replica (P1-P3): weights and KV per token per GPU of a TP group.

    With pipeline parallelism the stages run one after another, so a decode step reads the whole replica's weights
    over TP: the roofline takes ``pp = 1`` sizes.

    >>> round(decode_model("llama-3.1-8b", "h100-sxm", context_tokens=2048).tpot_s(16) * 1e3, 2)
    8.68
    """
    spec, card = _specs(model, gpu)
    ctx = float(context_tokens)
    per_token = memory.kv_bytes_per_token(spec, tp=tp, kv_cache_dtype=kv_cache_dtype)
    if ctx > 0:  # the bytes a step reads per context token: sliding-window layers read at most their window
        per_token = memory.kv_bytes_read_per_step(spec, context_tokens=ctx, tp=tp, kv_cache_dtype=kv_cache_dtype) / ctx
    return latency.DecodeModel(
        weights_bytes=memory.weight_bytes_per_gpu(spec, tp=tp, weight_dtype=weight_dtype),
        kv_bytes_per_token=per_token,
        context_tokens=ctx,
        mem_bw_bytes_per_s=card.mem_bw_bytes_per_s,
        flops_per_s=latency.flops_for(card, weight_dtype=weight_dtype, model=spec),
        params_active=spec.params_active,
        tp=int(tp), mbu=mbu, mfu=mfu, model=spec,
        attention_flops_per_seq=latency.attention_flops(spec, new_tokens=1, cached_tokens=max(ctx - 1, 0.0),
                                                        phase="decode"),
    )


def ttft_s(
    model: ModelSpec | str,
    gpu: GpuSpec | str,
    *,
    input_tokens: float,
    tp: int = 1,
    cache_hit_rate: float = 0.0,
    kv_cache_dtype: str = "auto",
    weight_dtype: str = "auto",
    mbu: float = DEFAULT_MBU,
    mfu: float = DEFAULT_MFU,
    queue_s: float = 0.0,
) -> float:
    """TTFT of one request on an idle replica: ``queue + prefill(I·(1−h)) + one decode step at batch 1`` (P4);
    prefill counts the weights' FLOPs and the attention FLOPs of the uncached tokens over the whole prefix.

    >>> round(ttft_s("llama-3.1-70b", "h100-sxm", input_tokens=5000, tp=4), 3)
    0.388
    """
    spec, card = _specs(model, gpu)
    h = check_fraction("cache_hit_rate", cache_hit_rate)
    i = check_number("input_tokens", input_tokens, minimum=0)
    attn = latency.attention_flops(spec, new_tokens=i * (1 - h),
                                   cached_tokens=i * h)  # the uncached part attends to the cached prefix too
    pre = latency.prefill_s(params_active=spec.params_active, input_tokens=input_tokens,
                            flops_per_s=latency.flops_for(card, weight_dtype=weight_dtype, model=spec), tp=tp, mfu=mfu,
                            cache_hit_rate=cache_hit_rate, attention_flops=attn)
    step = decode_model(spec, card, context_tokens=input_tokens, tp=tp, kv_cache_dtype=kv_cache_dtype,
                        weight_dtype=weight_dtype, mbu=mbu, mfu=mfu).tpot_s(1)
    return latency.ttft_s(pre, first_decode_step=step, queue_s=queue_s)


def flops_per_request(
    model: ModelSpec | str, *, input_tokens: float, output_tokens: float, cache_hit_rate: float = 0.0
) -> float:
    """FLOPs one request costs a replica: prefill of the uncached input plus every decode step (P2, P4).

    ``2·P_active·I·(1−h) + A_prefill(I·(1−h) after I·h) + O·(2·P_active + A_decode(I + O/2))``, with ``A`` from
    :func:`planner.latency.attention_flops` (decode at the time-averaged context ``I + O/2``, M8). Cached input
    costs no FLOPs: the prefix cache skips its prefill.

    Refs: P2, P4 (docs/method.md); kipply (2·P FLOPs per token); BentoML llm-optimizer (prefill compute limit).

    Worked example, Llama-3.1-70B, 1,500 input tokens at a 60% hit rate, 40 output tokens:
    ``2·70.55e9·600 = 8.47e13`` for the weights in prefill, ``40·2·70.55e9 = 5.64e12`` for decode, plus
    ``1.89e12`` of prefill attention (600 queries over 900 cached keys and their own causal share) and ``1.6e11`` of
    decode attention: 9.24e13.

    >>> round(flops_per_request("llama-3.1-70b", input_tokens=1500, output_tokens=40, cache_hit_rate=0.6) / 1e12, 1)
    92.4
    """
    spec = _model(model)
    i = check_number("input_tokens", input_tokens, minimum=0)
    o = check_number("output_tokens", output_tokens, minimum=0)
    h = check_fraction("cache_hit_rate", cache_hit_rate)
    new, cached = i * (1 - h), i * h
    prefill = 2 * spec.params_active * new + latency.attention_flops(spec, new_tokens=new, cached_tokens=cached)
    decode = 0.0
    if o > 0:
        ctx = memory.average_context_tokens(i, avg_output_tokens=o)
        attention = latency.attention_flops(spec, new_tokens=1, cached_tokens=max(ctx - 1, 0.0), phase="decode")
        decode = o * (2 * spec.params_active + attention)
    return prefill + decode


def compute_utilization(
    model: ModelSpec | str,
    gpu: GpuSpec | str,
    *,
    peak_qps: float,
    input_tokens: float,
    output_tokens: float,
    replicas: float,
    tp: int = 1,
    pp: int = 1,
    cache_hit_rate: float = 0.0,
    mfu: float = DEFAULT_MFU,
    weight_dtype: str = "auto",
) -> float:
    """Compute utilization of a fleet at peak: ``λ·FLOPs per request / (replicas·TP·PP·F·MFU)`` (P2, P4).

    The ceiling that prefill-heavy traffic hits before KV memory or TPOT: every uncached input token costs
    ``2·P_active`` FLOPs however the batch is formed. ``F`` is the GPU's dense peak at the weights' precision
    (:func:`planner.latency.flops_for`: FP8 for fp8 weights where the GPU has it), ``MFU`` the achieved fraction.
    Over 1 the fleet cannot even compute the load; near 1, prefill queues and TTFT grows without bound.

    Worked example: the seed's completion route (400 req/s of the request above) on 12 replicas of 4 H100 at MFU
    0.4: ``400·9.24e13 / (48·989e12·0.4) = 1.95``: twice what the fleet can compute.

    >>> round(compute_utilization("llama-3.1-70b", "h100-sxm", peak_qps=400, input_tokens=1500, output_tokens=40,
    ...     replicas=12, tp=4, cache_hit_rate=0.6, mfu=0.4), 2)
    1.95
    """
    spec, card = _specs(model, gpu)
    lam = check_number("peak_qps", peak_qps, minimum=0)
    per_request = flops_per_request(spec, input_tokens=input_tokens, output_tokens=output_tokens,
                                    cache_hit_rate=cache_hit_rate)
    return lam * per_request / fleet_flops_per_s(spec, card, replicas=replicas, tp=tp, pp=pp, mfu=mfu,
                                                 weight_dtype=weight_dtype)


def fleet_flops_per_s(
    model: ModelSpec | str,
    gpu: GpuSpec | str,
    *,
    replicas: float,
    tp: int = 1,
    pp: int = 1,
    mfu: float = DEFAULT_MFU,
    weight_dtype: str = "auto",
) -> float:
    """FLOP/s a fleet achieves: ``replicas·TP·PP·F·MFU`` with ``F`` the GPU's dense peak at the weights' precision
    (P2, P4; :func:`planner.latency.flops_for`).

    >>> round(fleet_flops_per_s("llama-3.1-70b", "h100-sxm", replicas=12, tp=4, mfu=0.4) / 1e15, 2)
    18.99
    """
    spec, card = _specs(model, gpu)
    n = check_number("replicas", replicas, minimum=0, exclusive_minimum=True)
    tp = int(check_number("tp", tp, minimum=1, integer=True))
    pp = int(check_number("pp", pp, minimum=1, integer=True))
    mfu = check_fraction("mfu", mfu, allow_zero=False)
    return n * tp * pp * latency.flops_for(card, weight_dtype=weight_dtype, model=spec) * mfu


@dataclass(frozen=True, kw_only=True)
class SloCapacity:
    """One replica at the largest batch that meets a TPOT SLO (and fits its KV cache)."""

    batch: int
    batch_at_tpot: int
    max_concurrency_kv: int
    tpot_s: float
    ttft_s: float
    e2e_s: float
    tokens_per_s: float
    replica_qps: float


def slo_capacity(
    model: ModelSpec | str,
    gpu: GpuSpec | str,
    *,
    tpot_slo_s: float,
    avg_input_tokens: float,
    avg_output_tokens: float,
    tp: int = 1,
    kv_cache_dtype: str = "auto",
    weight_dtype: str = "auto",
    mbu: float = DEFAULT_MBU,
    mfu: float = DEFAULT_MFU,
    cache_hit_rate: float = 0.0,
    gpu_memory_utilization: float | None = None,
    engine: str = "vllm",
) -> SloCapacity:
    """``B_slo = min(max B with TPOT(B) ≤ SLO at context I + O/2, C_max_KV at context I + O)`` and
    ``λ_rep = B_slo / E2E(B_slo)`` with ``E2E = TTFT + (O−1)·TPOT`` (P8, P6, M11).

    >>> c = slo_capacity("llama-3.1-8b", "h100-sxm", tpot_slo_s=0.02, avg_input_tokens=1800, avg_output_tokens=48)
    >>> c.batch_at_tpot, c.max_concurrency_kv, c.batch
    (128, 226, 128)
    """
    spec, card = _specs(model, gpu)
    ctx_avg = memory.average_context_tokens(avg_input_tokens, avg_output_tokens=avg_output_tokens)
    decode = decode_model(spec, card, context_tokens=ctx_avg, tp=tp, kv_cache_dtype=kv_cache_dtype,
                          weight_dtype=weight_dtype, mbu=mbu, mfu=mfu)
    b_tpot = latency.max_batch_at_tpot(decode, tpot_slo_s=tpot_slo_s)
    kv = replica_kv(spec, card, context_tokens=avg_input_tokens + avg_output_tokens, tp=tp,
                    gpu_memory_utilization=gpu_memory_utilization, kv_cache_dtype=kv_cache_dtype,
                    weight_dtype=weight_dtype, engine=engine)
    batch = min(b_tpot, kv.max_concurrency)
    first = ttft_s(spec, card, input_tokens=avg_input_tokens, tp=tp, cache_hit_rate=cache_hit_rate,
                   kv_cache_dtype=kv_cache_dtype, weight_dtype=weight_dtype, mbu=mbu, mfu=mfu)
    tpot = decode.tpot_s(max(batch, 1))
    e2e = latency.e2e_latency_s(first, tpot=tpot, output_tokens=avg_output_tokens)
    return SloCapacity(
        batch=batch, batch_at_tpot=b_tpot, max_concurrency_kv=kv.max_concurrency, tpot_s=tpot, ttft_s=first,
        e2e_s=e2e, tokens_per_s=latency.tokens_per_s(batch, tpot=tpot),
        replica_qps=latency.replica_rate_qps(batch, e2e_s=e2e) if e2e > 0 else 0.0,
    )
