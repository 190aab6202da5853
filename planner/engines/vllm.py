"""vLLM V1 (>= 0.8; pinned 0.11.0): its defaults, its hybrid KV groups and its KV budget (M9, M7, §2.1).

Pure functions, no I/O.
"""

from __future__ import annotations

import math

from planner.defaults import DEFAULT_BLOCK_SIZE, DEFAULT_GPU_MEMORY_UTILIZATION, DEFAULT_MAX_NUM_BATCHED_TOKENS
from planner.engines.common import EngineDefaults, KvBudget, KvLayout, version_tuple

DEFAULTS = EngineDefaults(
    engine="vllm", version="0.11.0", memory_fraction=DEFAULT_GPU_MEMORY_UTILIZATION, block_size=DEFAULT_BLOCK_SIZE,
    max_num_batched_tokens=DEFAULT_MAX_NUM_BATCHED_TOKENS,
    source="vllm-project/vllm v0.11.0: EngineArgs (gpu_memory_utilization 0.9, block_size 16), "
    "gpu_worker.determine_available_memory, kv_cache_utils._report_kv_cache_config",
)


def vllm_kv_groups(full: int, *, swa: int) -> tuple[int, int, int]:
    """vLLM V1's hybrid KV groups: (group size, full-attention groups, sliding-window groups) (M7).

    Layers of each type are cut into groups of one size (the larger count if the two are within 1.5×, else the
    smaller), the last group of a type padded: Gemma-3-27B's 10 full and 52 sliding layers become 1 + 6 groups of 10,
    so 60 sliding layers' worth of pages. Ref: vLLM ``kv_cache_utils._get_kv_cache_groups_uniform_page_size``;
    vllm-project/vllm #54458 (page alignment in hybrid models).

    >>> vllm_kv_groups(10, swa=52), vllm_kv_groups(21, swa=21), vllm_kv_groups(32, swa=0)
    ((10, 1, 6), (21, 1, 1), (32, 1, 0))
    """
    if not swa:
        return full, 1, 0
    if not full:
        return swa, 0, 1
    small, large = min(full, swa), max(full, swa)
    size = large if large / small < 1.5 else small
    return size, math.ceil(full / size), math.ceil(swa / size)


def padded_layers(full: int, *, swa: int) -> tuple[int, int]:
    """(full, sliding) layers as vLLM V1 caches them: each type padded to whole groups (:func:`vllm_kv_groups`).

    The ``cached_layers`` argument of :func:`planner.memory.kv_bytes_per_request`.

    >>> padded_layers(10, swa=52), padded_layers(32, swa=0)
    ((10, 60), (32, 0))
    """
    if not (full and swa):
        return full, swa
    size, full_groups, swa_groups = vllm_kv_groups(full, swa=swa)
    return size * full_groups, size * swa_groups


def kv_budget(layout: KvLayout, *, hybrid: bool = True) -> KvBudget:
    """vLLM's KV allocation: ``avail = HBM·util − weights − reserve``; ``num_blocks = avail // (page·group_size)``
    with ``page = kv_layer·block``; logged tokens ``num_blocks // groups · block``; concurrency
    ``num_blocks / Σ_groups blocks_per_request`` (sliding groups hold ``min(W − 1 + T, max_len)`` tokens plus a
    misalignment block). ``hybrid=False`` is V0, which caches every layer at the full context (one group).

    Ref: vLLM ``gpu_worker.determine_available_memory``, ``kv_cache_utils.get_kv_cache_config`` and
    ``_report_kv_cache_config`` (M9, M7, M4).

    Worked example, Llama-3.1-8B on H100 (79.65 GiB) at 0.9 with 14.96 GiB weights and 4.95 GiB reserve:
    51.78 GiB / (131,072 B · 16) = 26,508 blocks = 424,128 tokens.

    >>> from planner.specs import GIB
    >>> b = kv_budget(KvLayout(hbm_bytes=79.65 * GIB, memory_fraction=0.9, weights_bytes=14.96 * GIB,
    ...     reserve_bytes=4.95 * GIB, kv_bytes_per_token_layer=4096, full_layers=32, sliding_layers=0,
    ...     sliding_window=None, max_model_len=8192, block_size=16, max_num_batched_tokens=8192))
    >>> b.num_blocks, b.kv_cache_tokens
    (26508, 424128)
    """
    full, swa = layout.full_layers, layout.sliding_layers
    if not hybrid:
        full, swa = full + swa, 0
    avail = layout.hbm_bytes * layout.memory_fraction - layout.weights_bytes - layout.reserve_bytes
    group_size, full_groups, swa_groups = vllm_kv_groups(full, swa=swa)
    block = layout.block_size
    page = layout.kv_bytes_per_token_layer * block
    num_blocks = max(0, int(avail // (page * group_size))) if page * group_size > 0 else 0
    groups = full_groups + swa_groups
    window = layout.sliding_window or layout.max_model_len
    swa_tokens = min(window - 1 + layout.max_num_batched_tokens, layout.max_model_len)
    blocks_req = full_groups * math.ceil(layout.max_model_len / block) + swa_groups * (
        math.ceil(swa_tokens / block) + 1
    )
    if groups == 1:
        logged = num_blocks * block
        logged_cost = layout.kv_bytes_per_token_layer * (full + swa)
    else:
        logged = num_blocks // groups * block
        logged_cost = layout.kv_bytes_per_token_layer * group_size * groups
    return KvBudget(
        available_bytes=avail, num_blocks=num_blocks, kv_cache_tokens=logged, kv_bytes_per_logged_token=logged_cost,
        blocks_per_request=blocks_req, kv_groups=groups,
        max_concurrency=num_blocks / blocks_req if blocks_req else 0.0,
    )


def held_sliding_tokens(window: int, *, lookahead_tokens: int = 0) -> int:
    """Tokens a sliding-window layer of vLLM V1 holds for one decoding request: ``W + lookahead`` (M4a).

    Before it allocates a step's slots, the scheduler frees the blocks wholly before the window
    (``KVCacheManager.allocate_slots`` calls ``remove_skipped_blocks``): ``SlidingWindowManager.
    get_num_skipped_tokens(n) = max(0, n − W + 1)`` of ``n`` computed tokens are dropped, and the step adds its one
    decoded token plus any speculative lookahead, so ``(n + 1 + k) − (n − W + 1) = W + k`` tokens stay, in
    ``ceil((W + k − 1)/block) + 1`` blocks at most (the window's first block is partly outside it). The admission
    worst case ``W − 1 + max_num_batched_tokens`` (``SlidingWindowSpec.max_memory_usage_bytes``) holds only while a
    request's prefill chunk is in flight.

    Ref: vllm-project/vllm ``vllm/v1/core/single_type_kv_cache_manager.py`` (``SlidingWindowManager``,
    ``SingleTypeKVCacheManager.remove_skipped_blocks``) and ``vllm/v1/core/kv_cache_manager.py``
    (``allocate_slots``).

    Worked example, Gemma-3 (window 1,024) without speculative decoding: 1,024 tokens, 65 blocks of 16 at most.

    >>> held_sliding_tokens(1024), held_sliding_tokens(128, lookahead_tokens=3)
    (1024, 131)
    """
    return int(window) + int(lookahead_tokens)


MXFP4_MARLIN_GPUS = ("a100", "a10", "a30", "a40", "l4", "l40", "l40s", "rtx", "t4", "v100")
"""Catalog-id prefixes of the NVIDIA GPUs before Hopper (compute capability < 9.0): vLLM has no native MXFP4 MoE
kernel for them and runs gpt-oss's experts on Marlin's weight-only FP4 kernels ("Your GPU does not have native
support for FP4 computation but FP4 quantization is being used", dennislee22/vLLM-benchmarking on A100)."""


MXFP4_HOPPER_GPUS = ("h100", "h200", "gh200")
"""Catalog-id prefixes of the NVIDIA Hopper GPUs (compute capability 9.0)."""

VLLM_TRITON_KERNELS_DEPENDENCY = (0, 12, 0)
"""First vLLM release whose wheel carries ``triton_kernels`` (vllm-project/vllm PR #27370, merged 2025-10-22: "users
have to install triton_kernels manually to access this code-path"). Read in the PyPI sdists (downloaded 2026-12-04):
0.12.0 and 0.13.0 build it into the wheel (``cmake/external_projects/triton_kernels.cmake``, triton tag v3.5.0,
copied to ``vllm/third_party/triton_kernels``) and ``has_triton_kernels()`` also finds
``vllm.third_party.triton_kernels``; 0.11.0, 0.11.1 and 0.11.2 have neither (no such CMake file, no requirement:
``requirements/cuda.txt`` of 0.11.1 adds ``flashinfer-python`` only), so ``has_triton_kernels()`` is false in a
plain install and ``get_mxfp4_backend`` on Hopper falls through to Marlin. (Session 7 took 0.11.1, the first release
after the merge; the sdists put the boundary at 0.12.0.)"""


def uses_marlin_mxfp4(gpu, *, engine_version: str | None = None) -> bool:
    """Whether vLLM runs MXFP4 experts on Marlin on ``gpu``: NVIDIA before Hopper (:data:`MXFP4_MARLIN_GPUS`)
    always; Hopper (:data:`MXFP4_HOPPER_GPUS`) before vLLM 0.12.0.

    Ref: vllm-project/vllm ``model_executor/layers/quantization/mxfp4.py`` ``get_mxfp4_backend`` (read at main
    007d500 and in the 0.11.0, 0.11.1 and 0.12.0 PyPI sdists; the 0.10.1 and 0.14.1 logs below agree):
    on SM90 FlashInfer's MXFP4 x BF16 path is opt-in (``VLLM_USE_FLASHINFER_MOE_MXFP4_BF16``, default ``"0"``,
    ``vllm/envs.py``), and the Triton path needs ``triton_kernels``, which vLLM ships only from 0.12.0
    (:data:`VLLM_TRITON_KERNELS_DEPENDENCY`); otherwise "Using Marlin backend". Evidence: 0.10.1 on one
    H100 logs Marlin's FP4 warning and 65.97 GiB (#23278); 0.14.1 logs "Using Triton backend" and 64.38 GiB
    (#33155). An install with ``triton_kernels`` added by hand, or the FlashInfer variable set, differs: a plan
    cannot see that. ``engine_version`` None: the pinned default (:data:`DEFAULTS`, 0.11.0).

    >>> from planner.catalog import get_gpu
    >>> uses_marlin_mxfp4(get_gpu("a100-80gb-sxm")), uses_marlin_mxfp4(get_gpu("l40s")), uses_marlin_mxfp4(
    ...     get_gpu("h100-sxm"))
    (True, True, True)
    >>> uses_marlin_mxfp4(get_gpu("h100-sxm"), engine_version="0.14.1"), uses_marlin_mxfp4(get_gpu("b200"))
    (False, False)
    >>> uses_marlin_mxfp4(get_gpu("h100-sxm"), engine_version="0.11.2")
    True
    """
    if gpu is None or str(gpu.vendor).upper() != "NVIDIA":
        return False
    family = str(gpu.name).lower().split("-")[0]
    if family in MXFP4_MARLIN_GPUS:
        return True
    if family in MXFP4_HOPPER_GPUS:
        return version_tuple(engine_version or DEFAULTS.version) < VLLM_TRITON_KERNELS_DEPENDENCY
    return False


def mxfp4_marlin_extra_bytes(model, *, tp: int = 1, pp: int = 1) -> float:
    """Bytes per GPU that Marlin's MXFP4 layout adds to an MoE model's experts (0 for other models).

    ``Mxfp4MoEMethod.create_weights`` (``vllm/model_executor/layers/quantization/mxfp4.py``) pads, for Marlin, the
    expert intermediate size per TP rank up to a multiple of 128 and the hidden size up to a multiple of 256, so
    the experts (``L·E·3·H·I`` parameters at 4.25 bits, ``L`` the MoE layers, ``I`` the expert width
    :attr:`~planner.specs.ModelSpec.expert_intermediate_size`) grow by ``f = (⌈I/TP⌉₁₂₈ / (I/TP))·(⌈H⌉₂₅₆ / H)``:
    ``extra = experts·(f − 1)/(TP·PP)``.

    Worked example, gpt-oss-120b (36 layers, 128 experts, H = I = 2880; experts 56.73 GiB): TP 1 f = (2944/2880)·
    (3072/2880) = 1.0904, weights 60.80 + 5.13 = 65.93 GiB (vLLM 0.10.1 logs 65.97 GiB with the Marlin fallback,
    #23278); TP 4 (720 -> 768 per rank) f = 1.1378, 15.20 + 1.95 = 17.15 GiB per GPU (the A100 log: 17.22 GiB).

    >>> from planner.catalog import get_model
    >>> round(mxfp4_marlin_extra_bytes(get_model("gpt-oss-120b"), tp=4) / 2**30, 2)
    1.95
    >>> mxfp4_marlin_extra_bytes(get_model("llama-3.1-8b"))
    0.0
    """
    inter = model.expert_intermediate_size
    if model.weight_dtype != "mxfp4" or model.architecture != "moe" or not inter or not model.num_experts:
        return 0.0
    h, i = model.hidden_size, inter / int(tp)
    moe_layers = len(model.moe_layers) or model.num_hidden_layers
    experts = moe_layers * model.num_experts * 3 * model.hidden_size * inter * 4.25 / 8
    factor = (math.ceil(i / 128) * 128 / i) * (math.ceil(h / 256) * 256 / h)
    return experts * (factor - 1) / (int(tp) * int(pp))



def rope_cache_bytes(model, *, act_bytes: float = 2.0) -> float:
    """Bytes of the rotary-embedding cache vLLM keeps on every GPU beside the weights (V0 and V1).

    ``max_position_embeddings · rotary_dim · act_bytes``: ``RotaryEmbedding.__init__`` builds ``cos_sin_cache``
    ``[max_position, rotary_dim]`` (cos and sin halves concatenated) and casts it to the model dtype
    (``vllm/model_executor/layers/rotary_embedding.py``); ``get_rope`` is called with the config's
    ``max_position_embeddings`` (``models/llama.py``, ``models/llama4.py``), not ``max_model_len``, and caches one
    instance per distinct rope (``_ROPE_DICT``), so the layers share it. It is a registered buffer, replicated per
    rank, so it does not shrink with TP, and torch counts it in "Model loading took" (read in the PyPI sdist of
    0.9.2). ``rotary_dim``: ``qk_rope_head_dim`` for MLA, else ``head_dim``. ***Not modelled***: partial rotary
    factors, a second rope (Gemma-3's local base: +1 cache), Llama-4's vision rope.

    Worked example, Llama-4-Scout (10,485,760 positions, head_dim 128, bf16): 10,485,760 · 128 · 2 B = 2.50 GiB
    per GPU — the llm-d v0.19 TP 4 log loads 53.12 GiB per GPU where 109B parameters / 4 are 50.76 GiB;
    Llama-3.1-8B (131,072 positions): 32 MiB (14.96 -> 14.99 GiB, the logged figure).

    >>> from planner.catalog import get_model
    >>> rope_cache_bytes(get_model("llama-4-scout")) / 2**30, rope_cache_bytes(get_model("llama-3.1-8b")) / 2**20
    (2.5, 32.0)
    """
    positions = model.max_position_embeddings or 0
    rotary = model.qk_rope_head_dim if model.attention == "mla" and model.qk_rope_head_dim else model.head_dim
    return float(positions * rotary * act_bytes)
