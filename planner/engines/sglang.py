"""SGLang (pinned 0.5.3): its defaults, its default memory fraction and its KV budget (M9, §2.1).

Pure functions, no I/O.
"""

from __future__ import annotations

from planner.engines.common import INIT_SNAPSHOT_GIB, EngineDefaults, KvBudget, KvLayout, has_nvls, version_tuple
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


SGLANG_V04_MEM_FRACTION_BY_TP = ((16, 0.79), (8, 0.81), (4, 0.85), (2, 0.87), (1, 0.88))
"""SGLang 0.3-0.4's default ``mem_fraction_static`` by TP size (``ServerArgs.__post_init__``, sglang
``python/sglang/srt/server_args.py``: "Mem fraction depends on the tensor parallelism size"; 0.83 at TP >= 8 in
0.3). An L4 log of 2025-03 (TP 4, no ``--mem-fraction-static``) prints ``mem_fraction_static=0.85``."""


def sglang_default_mem_fraction(
    gpu_hbm_bytes: float, *, tp: int = 1, pp: int = 1, cuda_graph_max_bs: int = 256,
    engine_version: str | None = None,
) -> float:
    """SGLang's default ``mem_fraction_static`` (M9).

    - Before 0.5: by TP size alone (:data:`SGLANG_V04_MEM_FRACTION_BY_TP`: 0.88 at TP 1, 0.87 at 2, 0.85 at 4,
      0.81 at 8, 0.79 at 16).
    - 0.5 on (PR #10975): ``(gpu_MB − reserved_MB) / gpu_MB`` with ``reserved_MB = 512 + 1.5·max(chunked_prefill,
      2048) + 2·cuda_graph_max_bs + 1024·TP·PP/8``, at least 10 GB on GPUs above 60 GB. ***Heuristic*** (the rule
      changes between versions; DP-attention and speculative terms omitted; ***the 0.5 boundary is not located in
      the source here***: the last 0.4 files read keep the TP table).

    >>> round(sglang_default_mem_fraction(80 * 2**30 * 0.99), 3)
    0.834
    >>> sglang_default_mem_fraction(22 * 2**30, tp=4, engine_version="0.4.3")
    0.85
    """
    if engine_version and version_tuple(engine_version) < (0, 5):
        size = int(tp) * int(pp)
        return next(frac for at_least, frac in SGLANG_V04_MEM_FRACTION_BY_TP if size >= at_least)
    gpu_mb = gpu_hbm_bytes / MIB
    chunk = sglang_chunked_prefill_size(gpu_hbm_bytes / GIB)
    reserved = 512 + 1.5 * max(chunk, 2048) + 2 * cuda_graph_max_bs + 1024 * tp * pp / 8
    if gpu_mb > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    return (gpu_mb - reserved) / gpu_mb


SGLANG_INIT_GIB = INIT_SNAPSHOT_GIB
"""Device memory in use when SGLang measures its "total" (after ``init_torch_distributed``): the CUDA context
(0.51 GiB) and, at TP >= 2 on NVSwitch GPUs, NCCL's communicator setup (1.53 GiB in all). Measured on the same
CUDA/NCCL stack by the training logs: the llm-d v0.19 H100 runs print ``worker init memory snapshot: ...
cuda_memory=0.51GiB`` at TP 1 and 1.53-1.55 GiB at TP 2 and 4."""


def non_torch_bytes(*, tp: int, memory_fraction: float = 1.0, gpu=None) -> float:
    """What SGLang's budget loses to memory in use before it measures its total (CUDA context, NCCL setup):
    ``C·f`` with ``C`` from :data:`SGLANG_INIT_GIB` (TP >= 2 only on NVLS GPUs, :func:`has_nvls`) and ``f`` the
    ``mem_fraction_static``. SGLang takes ``total`` = the free memory after ``init_torch_distributed`` and sizes the
    pool as ``free_after_weights − total·(1 − f)`` (``ModelRunner.profile_max_num_token``), which is
    ``(HBM − C)·f − weights`` = ``HBM·f − weights − C·f``. NCCL buffers allocated at the first collective come
    later, out of the ``1 − f`` headroom.

    >>> round(non_torch_bytes(tp=1, memory_fraction=0.88) / 2**30, 3), non_torch_bytes(tp=8) / 2**30
    (0.449, 1.53)
    """
    c = SGLANG_INIT_GIB[2 if tp > 1 and has_nvls(gpu) else 1]
    return c * float(memory_fraction) * GIB


def kv_budget(layout: KvLayout) -> KvBudget:
    """SGLang's KV allocation: ``KV = (HBM − weights − reserve) − HBM·(1 − mem_fraction_static)`` with ``reserve``
    = :func:`non_torch_bytes` (``C·f``), i.e. ``(HBM − C)·f − weights``;
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
