"""Serving-engine memory accounting: how vLLM, SGLang and TensorRT-LLM turn GPU memory into a KV cache.

Pure functions, no I/O. The per-token and per-GPU physics (weights, KV bytes per token, layer split) come from
:mod:`planner.memory`; this package adds what each engine reserves and how each engine reports the result:

- :mod:`planner.engines.activation`: vLLM's activation peak and non-torch memory (constants and shape models);
- :mod:`planner.engines.vllm`, :mod:`~planner.engines.vllm_v0`, :mod:`~planner.engines.sglang`,
  :mod:`~planner.engines.trtllm`: each engine's pinned defaults and its one KV budget function;
- here: :func:`kv_capacity`, which resolves the setup and dispatches to the engine's budget.

Formula IDs refer to ``docs/method.md``: M9 (KV budget by engine), §2.1 (engine accounting), §2.2 (empirical
non-KV constants).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from planner.engines import sglang, trtllm, vllm, vllm_v0
from planner.engines.activation import (
    VLLM_V1_SAMPLERS,
    default_reserve_bytes,
    vllm_v0_profile_tokens,
    vllm_v1_default_max_num_batched_tokens,
    vllm_v1_default_max_num_seqs,
)
from planner.engines.common import ENGINES, EngineDefaults, KvBudget, KvLayout, normalize_engine
from planner.errors import ArgumentError, check_fraction, check_number
from planner.memory import (
    check_parallelism,
    kv_bytes_per_token_layer,
    kv_dtype_bytes,
    layer_split,
    stage_layer_split,
    stage_weight_bytes,
    weight_bytes_per_gpu,
)
from planner.specs import GIB, GpuSpec, ModelSpec

__all__ = ["ENGINES", "ENGINE_DEFAULTS", "EngineDefaults", "KvCapacity", "budget_reads_max_model_len",
           "held_sliding_tokens", "kv_capacity", "normalize_engine"]

ENGINE_DEFAULTS = {m.DEFAULTS.engine: m.DEFAULTS for m in (vllm, vllm_v0, sglang, trtllm)}
"""Each engine's pinned defaults, by engine key."""

_BUDGETS = {"vllm": vllm.kv_budget, "vllm-v0": vllm_v0.kv_budget, "sglang": sglang.kv_budget,
            "trtllm": trtllm.kv_budget}


@dataclass(frozen=True, kw_only=True)
class KvCapacity:
    """What one serving replica allocates for the KV cache, per GPU of its binding pipeline stage.

    ``kv_cache_tokens`` is the number the engine logs ("GPU KV cache size" for vLLM, ``max_total_num_tokens`` for
    SGLang, max tokens for TensorRT-LLM); for hybrid sliding-window models under vLLM it is not a per-token capacity.
    ``kv_bytes_per_token`` caches one token in every layer of the stage; ``kv_bytes_per_logged_token`` is what the
    engine spends per logged token (``available / kv_cache_tokens``): vLLM's hybrid groups pad it to
    ``page · group_size · groups``, SGLang's sliding pools add ``swa_full_tokens_ratio`` of the sliding layers.

    Under pipeline parallelism (vLLM V0 and V1) every field is the **binding stage**'s, the stage with the fewest
    blocks, which the engine allocates on every stage; ``stage_kv_cache_tokens`` gives each stage's own count
    (first to last) and ``binding_stage`` its index. Other engines and PP 1: one stage.
    """

    engine: str
    engine_version: str
    memory_fraction: float
    weights_gib: float
    reserve_gib: float
    available_kv_gib: float
    kv_bytes_per_token: float
    kv_bytes_per_logged_token: float
    num_blocks: int
    block_size: int
    kv_cache_tokens: int
    max_model_len: int
    max_num_batched_tokens: int
    blocks_per_request: int
    max_concurrency: float
    kv_groups: int
    stage_kv_cache_tokens: tuple[int, ...] = ()
    binding_stage: int = 0


def kv_capacity(
    model: ModelSpec | str,
    gpu: GpuSpec | str,
    *,
    tp: int = 1,
    pp: int = 1,
    gpu_memory_utilization: float | None = None,
    kv_cache_dtype: str = "auto",
    weight_dtype: str = "auto",
    engine: str = "vllm",
    engine_version: str | None = None,
    max_model_len: int | None = None,
    max_num_batched_tokens: int | None = None,
    max_num_seqs: int | None = None,
    block_size: int | None = None,
    reserve_gib: float | None = None,
    weights_gib: float | None = None,
    sampler: str | None = None,
) -> KvCapacity:
    """KV cache one replica allocates, as the engine computes and logs it (M9, §2.1, M7, M11).

    - vLLM V1 (>= 0.10, pinned 0.11.0): ``avail = HBM·util − weights − activation − non_torch``;
      ``num_blocks = avail // (page·group_size)``; logged tokens ``num_blocks // groups · block``;
      concurrency ``num_blocks / Σ_groups blocks_per_request``. The activation is the family constant scaled by
      the shape-derived peak (:func:`vllm_v1_scaled_activation_bytes`) at ``max_num_seqs`` dummy sequences (default
      :func:`vllm_v1_default_max_num_seqs`: 1024 on >= 70 GiB non-A100 GPUs, else 256, from 0.9; the
      0.8.x rules by ``engine_version``, :func:`vllm_v1_large_gpu_defaults`) and, unless given,
      ``max_num_batched_tokens`` (:func:`vllm_v1_default_max_num_batched_tokens`: 8192 there, else 2048);
      ``sampler`` is the top-k/top-p path the engine ran (``native``, ``flashinfer``, ``triton``; None: the
      version's default).
    - vLLM V0 (pinned 0.6.6): the same budget, activation derived from the model's shapes at the profile batch
      (:func:`vllm_v0_profile_tokens`: ``max(max_model_len, 2048)``, chunked-prefill budget above 32K) for the
      driver rank, which also samples (:func:`vllm_v0_activation_bytes`); logged tokens ``num_blocks·block``.
    - SGLang (pinned 0.5.3): ``KV = (HBM − C)·mem_fraction_static − weights`` with ``C`` the memory in use when it
      measures its total (:func:`planner.engines.sglang.non_torch_bytes`), default fraction by version from
      :func:`sglang_default_mem_fraction`; ``max_total_num_tokens = KV // cell_size`` (sliding layers sized at
      ``swa_full_tokens_ratio`` 0.8 of the full pool).
    - TensorRT-LLM (pinned 1.0): ``KV = (HBM − weights − activation − non_torch)·free_gpu_memory_fraction``.

    ``reserve_gib`` (activation + non-torch, or SGLang's non-torch) and ``weights_gib`` replace the empirical
    defaults, e.g. with the values :func:`planner.calibrate.calibrate` back-solves from a log.

    Pipeline parallelism (vLLM V0 and V1, ``pp`` > 1): each stage has its own layers (``get_pp_indices``,
    :func:`planner.memory.pp_layer_ranges`), weights (the embedding on the first stage, the LM head on the last,
    :func:`planner.memory.stage_weight_bytes`) and activation (the sampler on the last stage only, ``samples``
    of :func:`default_reserve_bytes`), so each has its own block count. vLLM allocates the smallest on every stage
    (V1: ``unify_kv_cache_configs`` / ``get_kv_cache_configs`` set every worker's ``num_blocks`` to the minimum; V0:
    ``ExecutorBase.determine_num_available_blocks`` takes the minimum), and the result is that **binding** stage's.
    What the log shows differs by version (read in the wheels): V0 logs the minimum once ("# GPU blocks"); V1 up to
    0.11 logs "GPU KV cache size" and "Maximum concurrency" once per worker, with that worker's own count, before
    the minimum is taken (0.8.5, 0.9.2, 0.10.1.1, 0.11.0: ``get_kv_cache_config`` per worker in ``EngineCore.
    _initialize_kv_caches``; 0.11.1 and 0.11.2 not read), so a log quoting one such line may show a non-binding
    stage (``stage_kv_cache_tokens`` has each); from 0.12.0 it logs once, after the minimum
    (``_report_kv_cache_config``, 0.12.0, 0.13.0, 0.19.0). ``weights_gib`` and ``reserve_gib``, when given, are one
    GPU's figures: they replace the binding stage's (the stage the model finds binding), which is then the result.
    SGLang and TensorRT-LLM keep the even split of the weights and the largest stage's layers (their pipeline code
    was not read).

    >>> cap = kv_capacity("llama-3.1-8b", "h100-sxm", max_model_len=8192)
    >>> round(cap.available_kv_gib, 2), cap.kv_cache_tokens, round(cap.max_concurrency, 2)
    (51.32, 420432, 51.32)
    """
    from planner.catalog import get_gpu, get_model

    spec = model if isinstance(model, ModelSpec) else get_model(model)
    card = gpu if isinstance(gpu, GpuSpec) else get_gpu(gpu)
    tp, pp = check_parallelism(spec, tp=tp, pp=pp)
    key = normalize_engine(engine, engine_version=engine_version)
    if sampler is not None and sampler not in VLLM_V1_SAMPLERS:
        raise ArgumentError("sampler", sampler, "one of " + ", ".join(VLLM_V1_SAMPLERS))
    defaults = ENGINE_DEFAULTS[key]
    version = engine_version or defaults.version
    hbm = float(card.engine_total_bytes)

    if max_model_len is None:
        max_model_len = spec.max_position_embeddings or 8192
    max_len = int(check_number("max_model_len", max_model_len, minimum=1, integer=True))
    block = int(check_number("block_size", defaults.block_size if block_size is None else block_size, minimum=1,
                             integer=True))
    if max_num_batched_tokens is None and key == "vllm":  # V1's default depends on the GPU (get_batch_defaults)
        max_num_batched_tokens = vllm_v1_default_max_num_batched_tokens(card, engine_version=engine_version)
    if max_num_batched_tokens is None:
        max_num_batched_tokens = defaults.max_num_batched_tokens or vllm_v0_profile_tokens(
            max_len, engine_version=version
        )
    batched = int(check_number("max_num_batched_tokens", max_num_batched_tokens, minimum=1, integer=True))

    if gpu_memory_utilization is None:
        fraction = defaults.memory_fraction
        if fraction is None:
            fraction = sglang.sglang_default_mem_fraction(hbm, tp=tp, pp=pp, engine_version=version)
    else:
        fraction = check_fraction("gpu_memory_utilization", gpu_memory_utilization, allow_zero=False)

    args = (spec, card, tp, pp, key, version, engine_version, weight_dtype, kv_cache_dtype, batched, max_num_seqs,
            sampler, fraction)
    try:
        w_parts, r_parts, per_layer, splits = _stage_parts_kept(*args)
    except TypeError:  # an unhashable argument (a caller's own dtype object): computed, not kept
        w_parts, r_parts, per_layer, splits = _stage_parts(*args)
    stage_w, stage_r = list(w_parts), list(r_parts)  # the caller's given figures replace one stage's below

    def stage_budget(s: int) -> KvBudget:
        full, swa = splits[s]
        return _BUDGETS[key](KvLayout(
            hbm_bytes=hbm, memory_fraction=fraction, weights_bytes=stage_w[s], reserve_bytes=stage_r[s],
            kv_bytes_per_token_layer=per_layer, full_layers=full, sliding_layers=swa,
            sliding_window=spec.sliding_window, max_model_len=max_len, block_size=block,
            max_num_batched_tokens=batched,
        ))

    budgets = [stage_budget(s) for s in range(len(splits))]
    binding = min(range(len(budgets)), key=lambda i: (budgets[i].num_blocks, -i))
    if weights_gib is not None or reserve_gib is not None:
        # Given figures (e.g. back-solved from a log by planner.calibrate) are one GPU's: the binding stage's.
        if weights_gib is not None:
            stage_w[binding] = check_number("weights_gib", weights_gib, minimum=0) * GIB
        if reserve_gib is not None:
            stage_r[binding] = check_number("reserve_gib", reserve_gib) * GIB
        budgets[binding] = stage_budget(binding)
    budget, (full, swa), w_bytes, reserve = budgets[binding], splits[binding], stage_w[binding], stage_r[binding]
    return KvCapacity(
        engine=key,
        engine_version=version,
        memory_fraction=fraction,
        weights_gib=w_bytes / GIB,
        reserve_gib=reserve / GIB,
        available_kv_gib=budget.available_bytes / GIB,
        kv_bytes_per_token=(full + swa) * per_layer,
        kv_bytes_per_logged_token=budget.kv_bytes_per_logged_token,
        num_blocks=budget.num_blocks,
        block_size=block,
        kv_cache_tokens=budget.kv_cache_tokens,
        max_model_len=max_len,
        max_num_batched_tokens=batched,
        blocks_per_request=budget.blocks_per_request,
        max_concurrency=budget.max_concurrency,
        kv_groups=budget.kv_groups,
        stage_kv_cache_tokens=tuple(b.kv_cache_tokens for b in budgets),
        binding_stage=binding,
    )


def _stage_parts(spec: ModelSpec, card: GpuSpec, tp: int, pp: int, key: str, version: str,
                 engine_version: str | None, weight_dtype: str, kv_cache_dtype: str, batched: int,
                 max_num_seqs: int | None, sampler: str | None, fraction: float
                 ) -> tuple[tuple[float, ...], tuple[float, ...], float, tuple[tuple[int, int], ...]]:
    """What :func:`kv_capacity` computes before the engine's budget, which ``max_model_len`` does not change:
    each pipeline stage's weight bytes (with the Marlin MXFP4 padding and vLLM's rope cache) and reserve (activation
    peak and non-torch memory, :func:`~planner.engines.activation.default_reserve_bytes`), one token's KV bytes per
    layer and each stage's (full, sliding) layers. ``key`` is the normalised engine, ``version`` its version
    (``engine_version`` or the pinned default), ``batched`` the profile batch, ``fraction`` the memory fraction.
    The same expressions, in the same order (so the same errors first), as :func:`kv_capacity` had inline."""
    staged = key in ("vllm", "vllm-v0") and pp > 1
    if staged:
        stage_w = list(stage_weight_bytes(spec, tp=tp, pp=pp, weight_dtype=weight_dtype))
    else:
        stage_w = [weight_bytes_per_gpu(spec, tp=tp, pp=pp, weight_dtype=weight_dtype)]
    extra = 0.0
    if key == "vllm" and weight_dtype in ("auto", "mxfp4") and vllm.uses_marlin_mxfp4(card, engine_version=version):
        extra += vllm.mxfp4_marlin_extra_bytes(spec, tp=tp, pp=pp)  # Marlin pads MXFP4 experts
    if key in ("vllm", "vllm-v0"):  # the rope cache, per GPU, counted in the load
        extra += vllm.rope_cache_bytes(spec, act_bytes=kv_dtype_bytes("auto", model=spec, weight_dtype=weight_dtype))
    stage_w = [w + extra for w in stage_w]

    def reserve_for(samples: bool) -> float:
        if key == "sglang":
            return sglang.non_torch_bytes(tp=tp * pp, memory_fraction=fraction, gpu=card)
        # V0: the activation is derived from the shapes at the profile batch (vllm_v0_profile_tokens); V1 scales
        # the measured constants by the shape-derived peak (batch and dummy sequences); TRT-LLM by the batch.
        seqs = max_num_seqs
        if key == "vllm" and seqs is None:  # V1 profiles its default sequences, which depend on the GPU
            seqs = vllm_v1_default_max_num_seqs(card, engine_version=engine_version)
        return default_reserve_bytes(
            spec, tp=tp, engine=key, max_num_batched_tokens=batched, engine_version=engine_version,
            max_num_seqs=seqs, act_bytes=kv_dtype_bytes("auto", model=spec, weight_dtype=weight_dtype),
            sampler=sampler if key == "vllm" else None, gpu=card, samples=samples,
        )

    per_layer = kv_bytes_per_token_layer(spec, tp=tp, kv_cache_dtype=kv_cache_dtype, weight_dtype=weight_dtype)
    splits = stage_layer_split(spec, pp=pp) if staged else (layer_split(spec, pp=pp),)
    last_reserve = reserve_for(True)
    stage_r = [reserve_for(False) if staged else last_reserve] * (len(splits) - 1) + [last_reserve]
    return tuple(stage_w), tuple(stage_r), per_layer, tuple(splits)


STAGE_PARTS_CACHE_SIZE = 512
"""Entries of :func:`_stage_parts_kept`, keyed on everything :func:`_stage_parts` reads (model and GPU specs, TP,
PP, engine and versions, dtypes, profile batch, sequences, sampler, memory fraction), never on ``max_model_len``.
A 20-route plan's KV fits ask :func:`kv_capacity` about 70 times (each route's context a new ``max_model_len``)
for a handful of (model, GPU, TP, engine) setups; at 512 a batch's memory stays flat (an entry is a few floats)."""

_stage_parts_kept = lru_cache(maxsize=STAGE_PARTS_CACHE_SIZE, typed=True)(_stage_parts)

def budget_reads_max_model_len(engine: str, *, max_num_batched_tokens: int | None = None) -> bool:
    """Whether :func:`kv_capacity`'s budget for ``engine`` (``available_kv_gib``, ``weights_gib``, ``reserve_gib``,
    ``num_blocks``, ``kv_cache_tokens``, ``block_size``, the binding stage) can change with ``max_model_len`` when
    ``max_num_batched_tokens`` is as given: only through the profile batch, which is derived from ``max_model_len``
    when none is given and the engine pins none (:func:`vllm_v0_profile_tokens`: V0 and SGLang), and only where the
    reserve reads that batch (vLLM V0's activation; SGLang's reserve is its non-torch memory). The profile batch
    itself (``max_num_batched_tokens`` of V0 and SGLang), ``max_model_len``, ``blocks_per_request`` and
    ``max_concurrency`` may change with it.

    >>> [budget_reads_max_model_len(e) for e in ("vllm", "vllm-v0", "sglang", "trtllm")]
    [False, True, False, False]
    >>> budget_reads_max_model_len("vllm-v0", max_num_batched_tokens=4096)
    False
    """
    key = normalize_engine(engine)
    return max_num_batched_tokens is None and key not in ("vllm", "sglang") and not ENGINE_DEFAULTS[
        key].max_num_batched_tokens


def held_sliding_tokens(window: int, *, engine: str = "vllm", block_size: int | None = None) -> float:
    """Tokens a sliding-window layer holds for one decoding request in ``engine``'s steady state (M4a): the rule of
    :func:`planner.engines.vllm.held_sliding_tokens` (V1 and V0: the window), :func:`~planner.engines.sglang.
    held_sliding_tokens` (1.5 windows plus a page, its eviction cycle) or :func:`~planner.engines.trtllm.
    held_sliding_tokens` (the window). ``block_size`` is SGLang's page (default 1).

    >>> held_sliding_tokens(1024), held_sliding_tokens(1024, engine="sglang"), held_sliding_tokens(128, engine="trtllm")
    (1024, 1537.0, 128)
    """
    w = int(check_number("sliding_window", window, minimum=1, integer=True))
    key = normalize_engine(engine)
    if key == "sglang":
        return sglang.held_sliding_tokens(w, page_size=1 if block_size is None else int(block_size))
    if key == "trtllm":
        return trtllm.held_sliding_tokens(w)
    return vllm.held_sliding_tokens(w)
