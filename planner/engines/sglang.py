"""SGLang (pinned 0.5.3): its defaults, its default memory fraction and its KV budget (M9, §2.1).

Pure functions, no I/O.
"""

from __future__ import annotations

from planner.engines.activation import VLLM_V017_NON_TORCH_GIB
from planner.engines.common import EngineDefaults, KvBudget, KvLayout
from planner.specs import GIB, MIB

DEFAULTS = EngineDefaults(
    engine="sglang", version="0.5.3", memory_fraction=None, block_size=1, max_num_batched_tokens=None,
    source="sgl-project/sglang v0.5.3: model_runner.profile_max_num_token, "
    "server_args._handle_gpu_memory_settings (PR #10975 reserved-memory heuristic)",
)

SWA_FULL_TOKENS_RATIO = 0.8
"""SGLang's default ``swa_full_tokens_ratio``: the sliding-window pool holds 0.8 of the full pool's tokens."""


def sglang_chunked_prefill_size(gpu_gib: float) -> int:
    """SGLang's default ``chunked_prefill_size`` by GPU memory (server_args, v0.5.x): <35 GiB 2048, <60 GiB 4096,
    <90 GiB 8192, else 16384.

    >>> sglang_chunked_prefill_size(79.2), sglang_chunked_prefill_size(139.8)
    (8192, 16384)
    """
    if gpu_gib < 35:
        return 2048
    if gpu_gib < 60:
        return 4096
    if gpu_gib < 90:
        return 8192
    return 16384


def sglang_default_mem_fraction(
    gpu_hbm_bytes: float, *, tp: int = 1, pp: int = 1, cuda_graph_max_bs: int = 256
) -> float:
    """SGLang's default ``mem_fraction_static`` (M9, PR #10975): ``(gpu_MB − reserved_MB) / gpu_MB`` with
    ``reserved_MB = 512 + 1.5·max(chunked_prefill, 2048) + 2·cuda_graph_max_bs + 1024·TP·PP/8``, at least 10 GB on
    GPUs above 60 GB. ***Heuristic*** (the rule changes between versions; DP-attention and speculative terms omitted).

    >>> round(sglang_default_mem_fraction(80 * 2**30 * 0.99), 3)
    0.834
    """
    gpu_mb = gpu_hbm_bytes / MIB
    chunk = sglang_chunked_prefill_size(gpu_hbm_bytes / GIB)
    reserved = 512 + 1.5 * max(chunk, 2048) + 2 * cuda_graph_max_bs + 1024 * tp * pp / 8
    if gpu_mb > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    return (gpu_mb - reserved) / gpu_mb


def non_torch_bytes(*, tp: int) -> float:
    """Memory gone before SGLang measures free memory besides the weights (CUDA context, NCCL/custom all-reduce
    buffers): the same physical quantity as vLLM's non-torch memory, so the recent vLLM measurements apply
    (0.25 GiB at TP=1, 2.1 GiB at TP>=2; :data:`planner.engines.activation.VLLM_V017_NON_TORCH_GIB`).

    >>> non_torch_bytes(tp=1) / 2**30, non_torch_bytes(tp=8) / 2**30
    (0.25, 2.1)
    """
    return VLLM_V017_NON_TORCH_GIB[1 if tp == 1 else 2] * GIB


def kv_budget(layout: KvLayout) -> KvBudget:
    """SGLang's KV allocation: ``KV = (HBM − weights − non_torch) − HBM·(1 − mem_fraction_static)``;
    ``max_total_num_tokens = KV // cell_size`` with sliding layers sized at ``swa_full_tokens_ratio`` of the full
    pool; concurrency ``tokens / max_len`` (no paging).

    Ref: SGLang ``model_runner.profile_max_num_token`` (M9).

    >>> from planner.specs import GIB
    >>> kv_budget(KvLayout(hbm_bytes=80 * GIB, memory_fraction=0.85, weights_bytes=15 * GIB, reserve_bytes=0.25 * GIB,
    ...     kv_bytes_per_token_layer=4096, full_layers=32, sliding_layers=0, sliding_window=None,
    ...     max_model_len=8192, block_size=1, max_num_batched_tokens=8192)).kv_cache_tokens
    432128
    """
    full, swa = layout.full_layers, layout.sliding_layers
    avail = (layout.hbm_bytes - layout.weights_bytes - layout.reserve_bytes) - layout.hbm_bytes * (
        1 - layout.memory_fraction
    )
    per_layer = layout.kv_bytes_per_token_layer
    cell = per_layer * (full + SWA_FULL_TOKENS_RATIO * swa) if full else per_layer * swa
    tokens = max(0, int(avail // cell)) if cell > 0 else 0
    return KvBudget(
        available_bytes=avail, num_blocks=tokens, kv_cache_tokens=tokens, kv_bytes_per_logged_token=cell,
        blocks_per_request=layout.max_model_len, kv_groups=1, max_concurrency=tokens / layout.max_model_len,
    )


def held_sliding_tokens(window: int, *, page_size: int = 1) -> float:
    """Tokens SGLang's sliding-window pool holds for one decoding request, averaged over its eviction cycle:
    ``1.5·W + page`` (M4a).

    SGLang frees a request's out-of-window sliding KV only every ``W`` decode steps (``ScheduleBatch.
    maybe_evict_swa``: ``decode_batch_idx % sliding_window_size == 1``), and then everything before
    ``seq_len − 1 − W − page`` (``_evict_swa``, floored to a page). Right after an eviction a request holds
    ``W + page + 1`` tokens; it grows by one per step to ``2·W + page`` before the next, so it holds
    ``1.5·W + page`` on average (the time-averaged occupancy, as the mean context is for full layers).

    Ref: sgl-project/sglang ``python/sglang/srt/managers/schedule_batch.py`` (``maybe_evict_swa``, ``_evict_swa``;
    read from an annotated copy of the file, the stored upstream snapshot predates the function) and
    ``python/sglang/srt/mem_cache/swa_memory_pool.py`` (``SWATokenToKVPoolAllocator.free_swa``).

    Worked example, gpt-oss (window 128, page 1): 128 + 64 + 1 = 193 tokens on average, 257 at most.

    >>> held_sliding_tokens(128), held_sliding_tokens(1024, page_size=16)
    (193.0, 1552.0)
    """
    return 1.5 * int(window) + int(page_size)
