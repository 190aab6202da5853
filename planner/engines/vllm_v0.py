"""vLLM V0 (< 0.8; pinned 0.6.6): its defaults and its KV budget (M9, §2.1).

Pure functions, no I/O. V0 budgets like V1 (:func:`planner.engines.vllm.kv_budget`) but has no hybrid allocator:
every layer caches the full context. Its activation peak is derived from the model's shapes
(:func:`planner.engines.activation.vllm_v0_activation_bytes`).
"""

from __future__ import annotations

from planner.defaults import DEFAULT_BLOCK_SIZE, DEFAULT_GPU_MEMORY_UTILIZATION
from planner.engines.common import EngineDefaults, KvBudget, KvLayout
from planner.engines.vllm import kv_budget as vllm_kv_budget

DEFAULTS = EngineDefaults(
    engine="vllm-v0", version="0.6.6", memory_fraction=DEFAULT_GPU_MEMORY_UTILIZATION,
    block_size=DEFAULT_BLOCK_SIZE, max_num_batched_tokens=None,
    source="vllm-project/vllm v0.6.6: worker.determine_num_available_blocks (profile run at "
    "max_num_batched_tokens = max(max_model_len, 2048) without chunked prefill)",
)


def kv_budget(layout: KvLayout) -> KvBudget:
    """V0's KV allocation: ``avail = HBM·util − weights − reserve``; ``# GPU blocks = avail // (page·L)``; logged
    tokens ``blocks · block`` (sliding layers cache the full context too).

    Ref: vLLM 0.6 ``worker.determine_num_available_blocks``, ``CacheEngine.get_cache_block_size``.

    >>> from planner.specs import GIB
    >>> kv_budget(KvLayout(hbm_bytes=39.5 * GIB, memory_fraction=0.9, weights_bytes=14.96 * GIB,
    ...     reserve_bytes=1.4 * GIB, kv_bytes_per_token_layer=4096, full_layers=32, sliding_layers=0,
    ...     sliding_window=None, max_model_len=8192, block_size=16, max_num_batched_tokens=8192)).num_blocks
    9825
    """
    return vllm_kv_budget(layout, hybrid=False)
