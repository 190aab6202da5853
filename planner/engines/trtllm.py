"""TensorRT-LLM (PyTorch backend; pinned 1.0): its defaults and its KV budget (M9, §2.1).

Pure functions, no I/O.
"""

from __future__ import annotations

import math

from planner.defaults import DEFAULT_GPU_MEMORY_UTILIZATION, DEFAULT_MAX_NUM_BATCHED_TOKENS
from planner.engines.common import EngineDefaults, KvBudget, KvLayout

DEFAULTS = EngineDefaults(
    engine="trtllm", version="1.0.0", memory_fraction=DEFAULT_GPU_MEMORY_UTILIZATION, block_size=32,
    max_num_batched_tokens=DEFAULT_MAX_NUM_BATCHED_TOKENS,
    source="NVIDIA/TensorRT-LLM v1.0: KvCacheConfig.free_gpu_memory_fraction 0.9, tokens_per_block 32",
)


def kv_budget(layout: KvLayout) -> KvBudget:
    """TensorRT-LLM's KV allocation: ``KV = (HBM − weights − reserve)·free_gpu_memory_fraction``; tokens
    ``KV // kv_token`` rounded down to whole blocks of ``tokens_per_block``.

    Ref: TensorRT-LLM ``KvCacheCreator`` / ``KvCacheConfig.free_gpu_memory_fraction`` (M9).

    >>> from planner.specs import GIB
    >>> kv_budget(KvLayout(hbm_bytes=80 * GIB, memory_fraction=0.9, weights_bytes=15 * GIB, reserve_bytes=5 * GIB,
    ...     kv_bytes_per_token_layer=4096, full_layers=32, sliding_layers=0, sliding_window=None,
    ...     max_model_len=8192, block_size=32, max_num_batched_tokens=8192)).kv_cache_tokens
    442368
    """
    per_token = layout.kv_bytes_per_token_layer * (layout.full_layers + layout.sliding_layers)
    avail = (layout.hbm_bytes - layout.weights_bytes - layout.reserve_bytes) * layout.memory_fraction
    tokens = max(0, int(avail // per_token)) if per_token > 0 else 0
    block = layout.block_size
    num_blocks = tokens // block
    blocks_req = math.ceil(layout.max_model_len / block)
    return KvBudget(
        available_bytes=avail, num_blocks=num_blocks, kv_cache_tokens=num_blocks * block,
        kv_bytes_per_logged_token=per_token, blocks_per_request=blocks_req, kv_groups=1,
        max_concurrency=num_blocks / blocks_req if blocks_req else 0.0,
    )


def held_sliding_tokens(window: int) -> int:
    """Tokens a sliding-window layer of TensorRT-LLM holds for one request: the window (M4a).

    TensorRT-LLM keeps a cyclic KV cache per attention window (``max_attention_window``): a layer whose window is
    ``W`` never holds more than ``W`` tokens of a request, plus the partly filled block the paged manager adds.
    ***Not verified against the source in this repository's tests*** (the vLLM and SGLang rules are).

    >>> held_sliding_tokens(4096)
    4096
    """
    return int(window)
