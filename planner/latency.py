"""Self-hosted latency and throughput: Little's law, decode step, prefill, TTFT/TPOT/E2E, batch at a TPOT SLO (P1-P8).

Pure functions, no I/O. Roofline estimates: decode is bound by reading the weights and the KV cache from HBM (P1)
with a compute floor (P2), MoE decode reads only the touched experts (P3), prefill is compute-bound (P4).
Formula IDs refer to ``docs/method.md``; MBU/MFU are achieved fractions of peak and should be calibrated.

Superseded for latency under load by :mod:`planner.serving` (step time with fixed costs and TP communication,
continuous batching, queueing; ``docs/serving.md``). Kept because :mod:`planner.selfhosted` (``planner size``'s fleet
constraints), the template's TPOT_S/TTFT_S/MAX_BATCH_AT_TPOT/SELFHOST_TOKENS_PER_S columns and the serving model
itself (:func:`attention_flops`, :func:`experts_touched`, :func:`weights_read_fraction`) still use these functions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.defaults import DEFAULT_MBU, DEFAULT_MFU
from planner.errors import ArgumentError, check_fraction, check_number
from planner.specs import GpuSpec, ModelSpec

MAX_BATCH = 1_000_000
"""Upper end of the batch search in :func:`max_batch_at_tpot`."""


def concurrency(rate_qps: float, *, latency_s: float) -> float:
    """In-flight requests by Little's law: ``C = λ·E[E2E]`` (P7).

    Ref: P7, Little (1961).

    >>> concurrency(450, latency_s=0.25 + 48 * 0.02)
    544.5
    """
    lam = check_number("rate_qps", rate_qps, minimum=0)
    w = check_number("latency_s", latency_s, minimum=0)
    return lam * w


def experts_touched(num_experts: int, *, experts_per_token: int, batch: float) -> float:
    """Distinct experts a decode step of ``batch`` tokens touches per layer, uniform routing (P3):
    ``E·(1 − (1 − k/E)^B)``, at most ``min(k·B, E)``. ***Heuristic*** (balls in bins; router skew lowers it).

    >>> tuple(round(experts_touched(n, experts_per_token=k, batch=b), 3) for n, k, b in ((8, 2, 1), (8, 2, 16),
    ...                                                                                    (128, 8, 1)))
    (2.0, 7.92, 8.0)
    """
    e = check_number("num_experts", num_experts, minimum=1, integer=True)
    k = check_number("experts_per_token", experts_per_token, minimum=1, maximum=e, integer=True)
    b = check_number("batch", batch, minimum=0)
    return min(e * (1 - (1 - k / e) ** b), k * b, e)


def weights_read_fraction(model: ModelSpec, *, batch: float) -> float:
    """Fraction of the resident weights a decode step of ``batch`` sequences reads (P3); 1 for dense models.

    MoE: ``W_read = W_shared + E_touched·W_expert`` with ``W_expert = (P_total − P_active)/(E − k)`` and
    ``W_shared = P_total − E·W_expert`` (from total and active parameters), as a fraction of ``P_total``.

    >>> from planner.catalog import get_model
    >>> weights_read_fraction(get_model("llama-3.1-8b"), batch=4)
    1.0
    >>> round(weights_read_fraction(get_model("mixtral-8x7b"), batch=1), 3)
    0.276
    """
    e, k = model.num_experts, model.num_experts_per_tok
    if model.architecture != "moe" or not e or not k or e <= k or model.params_total <= model.params_active:
        return 1.0
    per_expert = (model.params_total - model.params_active) / (e - k)
    shared = max(0.0, model.params_total - e * per_expert)
    if batch <= 0:
        return shared / model.params_total
    return min(1.0, (shared + experts_touched(e, experts_per_token=k, batch=batch) * per_expert) / model.params_total)


def decode_step_s(
    *,
    weights_bytes: float,
    batch: float,
    context_tokens: float,
    kv_bytes_per_token: float,
    mem_bw_bytes_per_s: float,
    flops_per_s: float,
    params_active: float,
    tp: int = 1,
    mbu: float = DEFAULT_MBU,
    mfu: float = DEFAULT_MFU,
    weights_read_fraction: float = 1.0,
    attention_flops_per_seq: float = 0.0,
) -> float:
    """One decode step (= TPOT) on one replica: ``max(P1, P2)``.

    - P1, memory-bound: ``(W_read + B·ctx·kv_tok) / (BW·MBU)``, all per GPU (``weights_bytes`` and
      ``kv_bytes_per_token`` already divided by TP; ``kv_tok`` is the bytes read per context token, which
      sliding-window layers cap); ``W_read = weights_bytes·weights_read_fraction`` (P3).
    - P2, compute floor: ``B·(2·P_active + A) / (F·MFU·TP)`` with ``A`` the attention FLOPs of one sequence's new
      token (:func:`attention_flops`, ``phase="decode"``; 0 ignores them).

    Refs: P1 Databricks "LLM Inference Performance Engineering" (MBU), kipply; P2 kipply, llm-analysis.

    Worked example, Llama-3.1-8B bf16 on one H100 SXM (3.35 TB/s, 989 TFLOP/s): 16.06e9 B of weights plus 16
    sequences × 2,048 tokens × 131,072 B = 4.29e9 B of KV, over 3.35e12 × 0.7 B/s: 8.68 ms (compute floor 0.52 ms).

    >>> round(decode_step_s(weights_bytes=16.06e9, batch=16, context_tokens=2048, kv_bytes_per_token=131072,
    ...     mem_bw_bytes_per_s=3.35e12, flops_per_s=989e12, params_active=8.03e9) * 1e3, 2)
    8.68
    """
    w = check_number("weights_bytes", weights_bytes, minimum=0)
    b = check_number("batch", batch, minimum=0)
    ctx = check_number("context_tokens", context_tokens, minimum=0)
    kv = check_number("kv_bytes_per_token", kv_bytes_per_token, minimum=0)
    bw = check_number("mem_bw_bytes_per_s", mem_bw_bytes_per_s, minimum=0, exclusive_minimum=True)
    f = check_number("flops_per_s", flops_per_s, minimum=0, exclusive_minimum=True)
    p = check_number("params_active", params_active, minimum=0)
    tp = int(check_number("tp", tp, minimum=1, integer=True))
    mbu = check_fraction("mbu", mbu, allow_zero=False)
    mfu = check_fraction("mfu", mfu, allow_zero=False)
    frac = check_fraction("weights_read_fraction", weights_read_fraction)
    a = check_number("attention_flops_per_seq", attention_flops_per_seq, minimum=0)
    memory_s = (w * frac + b * ctx * kv) / (bw * mbu)
    compute_s = (2 * p + a) * b / (f * mfu * tp)
    return max(memory_s, compute_s)


def _keys_attended(first: float, last: float, window: float | None) -> float:
    """``Σ_{p=first}^{last} min(p, W)``: keys the queries at positions ``first..last`` attend to (causal)."""
    if last < first:
        return 0.0
    if window is None or last <= window:
        return (first + last) * (last - first + 1) / 2
    if first > window:
        return window * (last - first + 1)
    return (first + window) * (window - first + 1) / 2 + window * (last - window)


def attention_flops(model: ModelSpec, *, new_tokens: float, cached_tokens: float = 0.0, phase: str = "prefill"
                    ) -> float:
    """Attention FLOPs (QKᵀ and AV) of ``new_tokens`` queries after ``cached_tokens`` of context, whole model (P4).

    Per layer ``2·n_h·(d_qk + d_v)·S`` with ``S = Σ_p min(p, W)`` over the query positions ``p = c+1 … c+n``
    (causal; ``W`` the window of a sliding-window layer, unbounded for a full layer): ``S = n·c + n·(n+1)/2``
    without a window, the reference's ``I_unc·(I_unc + I_cached)`` halved by the causal mask on the new part.
    MLA: prefill runs as multi-head attention on decompressed keys (``d_qk = head_dim``, ``d_v = v_head_dim``);
    decode (``phase="decode"``) runs on the latent cache with absorbed projections (``d_qk = kv_lora_rank +
    qk_rope_head_dim``, ``d_v = kv_lora_rank``), as vLLM's MLA backends do.

    Refs: P4 (docs/method.md, kipply); vLLM ``vllm/attention/backends/mla/common.py`` (compute-friendly prefill,
    data-movement-friendly absorbed decode); DeepSeek-V2 paper §2.1.

    Worked example, Llama-3.1-70B (80 layers × 64 heads × (128 + 128)) prefilling 5,000 tokens:
    ``80·2·64·256·12,502,500 = 3.28e13`` FLOPs, 4.6% on top of the ``2·70.6e9·5,000 = 7.06e14`` of the weights.

    >>> from planner.catalog import get_model
    >>> attention_flops(get_model("llama-3.1-70b"), new_tokens=5000)
    32774553600000.0
    >>> attention_flops(get_model("llama-3.1-8b"), new_tokens=1,
    ...                 cached_tokens=2047) == attention_flops(get_model("llama-3.1-8b"), new_tokens=2048) / 1024.5
    True
    """
    n = check_number("new_tokens", new_tokens, minimum=0)
    c = check_number("cached_tokens", cached_tokens, minimum=0)
    if phase not in ("prefill", "decode"):
        raise ArgumentError("phase", phase, "prefill or decode")
    if n == 0:
        return 0.0
    heads = model.num_attention_heads
    if model.attention == "mla" and phase == "decode":
        rank = float(model.kv_lora_rank or 0)
        d_qk, d_v = rank + (model.qk_rope_head_dim or 0), rank
    else:
        d_qk, d_v = float(model.head_dim), float(model.v_head_dim or model.head_dim)
    per_key = 2 * heads * (d_qk + d_v)
    full = model.full_attention_layers
    swa = model.sliding_window_layers
    if model.sliding_window and not model.layer_types:
        full, swa = 0, model.num_hidden_layers
    keys_full = _keys_attended(c + 1, c + n, None)
    if swa and model.sliding_window is None:
        raise ValueError(f"{model.name}: sliding-window layers without a sliding_window")  # a catalog fault
    keys_swa = _keys_attended(c + 1, c + n, float(model.sliding_window or 0)) if swa else 0.0
    return per_key * (full * keys_full + swa * keys_swa)


def prefill_s(
    *,
    params_active: float,
    input_tokens: float,
    flops_per_s: float,
    tp: int = 1,
    mfu: float = DEFAULT_MFU,
    cache_hit_rate: float = 0.0,
    attention_flops: float = 0.0,
) -> float:
    """Prefill time of one request: ``(2·P_active·I·(1−h) + attention FLOPs) / (F·MFU·TP)`` (P4).

    ``attention_flops`` is :func:`attention_flops` of the uncached ``I·(1−h)`` tokens after the cached ``I·h``
    (0 leaves the linear term alone, which short prompts are dominated by).

    Ref: P4, kipply (FLOPs); Dynamo profiler ("ISL excluding prefix cache hit").

    Worked example: Llama-3.1-70B (70.6e9 active) on 4 H100 (989 TFLOP/s) at MFU 0.5, 5,000 input tokens: 357 ms
    for the weights, 373 ms with the 3.28e13 attention FLOPs.

    >>> round(prefill_s(params_active=70.6e9, input_tokens=5000, flops_per_s=989e12, tp=4), 4)
    0.3569
    >>> round(prefill_s(params_active=70.6e9, input_tokens=5000, flops_per_s=989e12, tp=4, attention_flops=3.28e13), 4)
    0.3735
    """
    p = check_number("params_active", params_active, minimum=0)
    i = check_number("input_tokens", input_tokens, minimum=0)
    f = check_number("flops_per_s", flops_per_s, minimum=0, exclusive_minimum=True)
    tp = int(check_number("tp", tp, minimum=1, integer=True))
    mfu = check_fraction("mfu", mfu, allow_zero=False)
    h = check_fraction("cache_hit_rate", cache_hit_rate)
    a = check_number("attention_flops", attention_flops, minimum=0)
    return (2 * p * i * (1 - h) + a) / (f * mfu * tp)


def ttft_s(prefill: float, *, first_decode_step: float, queue_s: float = 0.0) -> float:
    """Time to first token: ``queue wait + t_prefill + first decode step`` (P4).

    >>> ttft_s(0.3569, first_decode_step=0.0087)
    0.3656
    """
    return (check_number("queue_s", queue_s, minimum=0) + check_number("prefill_s", prefill, minimum=0)
            + check_number("first_decode_step_s", first_decode_step, minimum=0))


def e2e_latency_s(ttft: float, *, tpot: float, output_tokens: float) -> float:
    """End-to-end latency: ``E2E = TTFT + (O − 1)·TPOT`` (P6; the first token comes with TTFT).

    Ref: P6, Databricks; BentoML LatencyMetrics (``TPOT = (E2EL − TTFT)/(tokens − 1)``).

    >>> round(e2e_latency_s(0.25, tpot=0.02, output_tokens=48), 4)
    1.19
    """
    t = check_number("time_to_first_token_s", ttft, minimum=0)
    d = check_number("time_per_output_token_s", tpot, minimum=0)
    o = check_number("output_tokens", output_tokens, minimum=0)
    return t + max(o - 1, 0.0) * d


FP4_WEIGHT_DTYPES = ("nvfp4", "mxfp4", "fp4")
"""Weight dtypes whose GEMMs run on FP4 tensor cores where the GPU has them."""

INT8_PEAK = True
"""Switch for the INT8 tensor-core peak (latency9; off reproduces the 16-bit peak for INT8 on the A100)."""

INT8_PEAK_COMPUTE_CAPABILITY = 8.0
"""The compute capability whose W8A8/INT8 GEMMs run at the GPU's dense INT8 tensor-core peak
(``GpuSpec.int8_ops_per_s``, a catalog fact: planner/data/gpus.json, the GPUs sheet's *INT8 dense [TOPS]*), on a GPU
with no FP8 peak. vLLM runs compressed-tensors W8A8-INT8 checkpoints through ``CompressedTensorsW8A8Int8``
(``vllm/model_executor/layers/quantization/compressed_tensors/schemes/compressed_tensors_w8a8_int8.py``), whose
``cutlass_scaled_mm`` has INT8 kernels for compute capability 7.5 and up (``csrc/quantization/cutlass_w8a8/``), with
the activations quantized per token on the fly. The evidence that the peak is reached is the A100's (8.0, GA100:
AccelMark's suite-C W8A8 runs, latency9, session 11, docs/serving.md section 1); the 8.6 GPUs (A10, RTX 3090, GA10x
tensor cores) have no measured W8A8 point and keep the 16-bit peak, as before the figure moved to the catalog
(session 12). NVIDIA A100 datasheet: INT8 Tensor Core 624 TOPS dense, twice its BF16 312 TFLOPS."""


def gemm_peak_flops(gpu: GpuSpec, *, weight_dtype: str) -> float:
    """Peak FLOP/s of the model's GEMMs: FP4 tensor cores for nvfp4/mxfp4 where the GPU has them, FP8 for fp8/w8a8
    where it has FP8, INT8 tensor cores (``gpu.int8_ops_per_s``) for w8a8/int8 where the GPU has no FP8 and compute
    capability :data:`INT8_PEAK_COMPUTE_CAPABILITY`, else 16-bit (weight-only formats dequantize to 16 bits:
    ``w8a16``, INT8 weights with 16-bit activations, runs vLLM's Marlin/Machete weight-only kernels on 16-bit tensor
    cores on every GPU; FP8 on an A100 runs as weight-only Marlin).

    Worked example: Llama-3.1-8B W8A8 on an A100 runs its GEMMs against 624 TOPS, BF16 and FP8 (weight-only) against
    312 TFLOP/s.

    >>> from planner.catalog import get_gpu
    >>> h100, a100 = get_gpu("h100-sxm"), get_gpu("a100-80gb-sxm")
    >>> gemm_peak_flops(h100, weight_dtype="fp8") / 1e12, gemm_peak_flops(a100, weight_dtype="fp8") / 1e12
    (1979.0, 312.0)
    >>> gemm_peak_flops(a100, weight_dtype="w8a8") / 1e12, gemm_peak_flops(h100, weight_dtype="w8a8") / 1e12
    (624.0, 1979.0)
    """
    name = weight_dtype.lower()
    fp4 = getattr(gpu, "fp4_flops_per_s", None)
    if name in FP4_WEIGHT_DTYPES and fp4:
        return float(fp4)
    if name in ("fp8", "w8a8", "int8", *FP4_WEIGHT_DTYPES) and gpu.fp8_flops_per_s:
        return float(gpu.fp8_flops_per_s)
    int8 = getattr(gpu, "int8_ops_per_s", None)
    if name in ("w8a8", "int8") and INT8_PEAK and int8 and gpu.compute_capability == INT8_PEAK_COMPUTE_CAPABILITY:
        return float(int8)
    return float(gpu.bf16_flops_per_s)


def flops_for(gpu: GpuSpec, *, weight_dtype: str = "auto", model: ModelSpec | None = None) -> float:
    """Peak dense FLOP/s the model computes at: :func:`gemm_peak_flops` of the weight dtype (``auto``: the model's,
    16-bit without a model), the peak the serving model's steps run at, so a fleet's compute capacity (COMPUTE) and
    its latency come from the same figure.

    >>> from planner.catalog import get_gpu
    >>> flops_for(get_gpu("h100-sxm"), weight_dtype="fp8") > flops_for(get_gpu("h100-sxm"))
    True
    """
    name = str(weight_dtype).strip().lower()
    if name == "auto":
        name = model.weight_dtype if model is not None else "bf16"
    return gemm_peak_flops(gpu, weight_dtype=name)


@dataclass(frozen=True, kw_only=True)
class DecodeModel:
    """Everything the decode roofline needs for one replica (per-GPU bytes), so TPOT is a function of the batch."""

    weights_bytes: float
    kv_bytes_per_token: float  # read per context token per step (sliding-window layers capped at the window)
    context_tokens: float
    mem_bw_bytes_per_s: float
    flops_per_s: float
    params_active: float
    tp: int = 1
    mbu: float = DEFAULT_MBU
    mfu: float = DEFAULT_MFU
    model: ModelSpec | None = None
    attention_flops_per_seq: float = 0.0

    def tpot_s(self, batch: float) -> float:
        """TPOT at ``batch`` concurrent sequences (P1-P3)."""
        frac = weights_read_fraction(self.model, batch=batch) if self.model is not None else 1.0
        return decode_step_s(
            weights_bytes=self.weights_bytes, batch=batch, context_tokens=self.context_tokens,
            kv_bytes_per_token=self.kv_bytes_per_token, mem_bw_bytes_per_s=self.mem_bw_bytes_per_s,
            flops_per_s=self.flops_per_s, params_active=self.params_active, tp=self.tp, mbu=self.mbu, mfu=self.mfu,
            weights_read_fraction=frac, attention_flops_per_seq=self.attention_flops_per_seq,
        )


def max_batch_at_tpot(decode: DecodeModel, *, tpot_slo_s: float) -> int:
    """The largest batch ``B`` with ``TPOT(B) ≤ SLO`` (P8); 0 when even one sequence misses the SLO.

    TPOT is non-decreasing in ``B`` (P1 and P2 grow linearly, P3 grows with the touched experts), so an
    exponential search then a bisection over integers finds it. Capped at :data:`MAX_BATCH`.

    Ref: P8, NVIDIA NIM ("highest concurrency meeting the latency bound"), Dynamo SLA planner.

    Worked example, Llama-3.1-8B bf16 on one H100 at 2,048 tokens of context and a 20 ms TPOT SLO:
    ``(0.02·3.35e12·0.7 − 16.06e9)/(2048·131072) = 114.9`` → 114.

    >>> d = DecodeModel(weights_bytes=16.06e9, kv_bytes_per_token=131072, context_tokens=2048,
    ...                 mem_bw_bytes_per_s=3.35e12, flops_per_s=989e12, params_active=8.03e9)
    >>> max_batch_at_tpot(d, tpot_slo_s=0.02)
    114
    """
    slo = check_number("tpot_slo_s", tpot_slo_s, minimum=0, exclusive_minimum=True)
    if decode.tpot_s(1) > slo:
        return 0
    lo, hi = 1, 2
    while hi < MAX_BATCH and decode.tpot_s(hi) <= slo:
        lo, hi = hi, hi * 2
    if hi >= MAX_BATCH:
        hi = MAX_BATCH
        if decode.tpot_s(hi) <= slo:
            return hi
    while hi - lo > 1:  # invariant: tpot(lo) <= slo < tpot(hi)
        mid = (lo + hi) // 2
        if decode.tpot_s(mid) <= slo:
            lo = mid
        else:
            hi = mid
    return lo


def tokens_per_s(batch: float, *, tpot: float) -> float:
    """Decode tokens per second of one replica: ``B / t_dec`` (P1).

    >>> tokens_per_s(114, tpot=0.01997)
    5708.562844266399
    """
    b = check_number("batch", batch, minimum=0)
    t = check_number("tpot_s", tpot, minimum=0, exclusive_minimum=True)
    return b / t


def replica_rate_qps(batch: float, *, e2e_s: float) -> float:
    """Requests per second one replica completes at the SLO batch: ``λ_rep = B_slo / E2E(B_slo)`` (P8).

    >>> round(replica_rate_qps(114, e2e_s=1.19), 2)
    95.8
    """
    b = check_number("batch", batch, minimum=0)
    e = check_number("e2e_latency_s", e2e_s, minimum=0, exclusive_minimum=True)
    return b / e


def replicas_at_slo(peak_qps: float, *, replica_qps: float, failover_replicas: int = 0) -> int:
    """Replicas that serve ``peak_qps`` at the SLO: ``ceil(λ_peak / λ_rep) + k_failover`` (P8).

    >>> replicas_at_slo(450, replica_qps=95.8), replicas_at_slo(450, replica_qps=95.8, failover_replicas=1)
    (5, 6)
    """
    lam = check_number("peak_qps", peak_qps, minimum=0)
    rep = check_number("replica_qps", replica_qps, minimum=0)
    k = int(check_number("failover_replicas", failover_replicas, minimum=0, integer=True))
    if lam == 0:
        return k
    if rep <= 0:
        raise ArgumentError("tpot_slo_s", "unreachable", "an SLO one sequence meets (TPOT at batch 1 exceeds it)")
    return max(1, math.ceil(lam / rep - 1e-12)) + k  # epsilon: float noise; any load needs one replica
