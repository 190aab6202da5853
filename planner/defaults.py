"""Defaults shared by the core signatures, the spreadsheet functions' ``Arg`` defaults and the template.

One place for each default a planner sees; change it here and every surface follows. Each value names where it
comes from.
"""

from __future__ import annotations

DEFAULT_MBU = 0.7
"""Achieved fraction of peak memory bandwidth in decode (MBU, P1 of ``docs/method.md``): the roofline's default
bandwidth efficiency (Databricks "LLM Inference Performance Engineering: Best Practices", 2023, defines MBU)."""

DEFAULT_MFU = 0.5
"""Achieved fraction of peak dense FLOP/s (MFU, P2 and the prefill formula of ``docs/method.md``): the
roofline's default compute efficiency."""

DEFAULT_GPU_MEMORY_UTILIZATION = 0.9
"""vLLM's default ``--gpu-memory-utilization`` (``CacheConfig.gpu_memory_utilization = 0.9``) and TensorRT-LLM's
default ``free_gpu_memory_fraction`` (0.9) (M9)."""

DEFAULT_BLOCK_SIZE = 16
"""vLLM's default KV block (page) size in tokens (``CacheConfig.block_size = 16``, M7)."""

DEFAULT_MAX_NUM_BATCHED_TOKENS = 8192
"""vLLM V1's default ``max_num_batched_tokens`` for online serving on datacenter GPUs (>= 0.10; the activation
constants were measured there)."""

__all__ = [
    "DEFAULT_BLOCK_SIZE",
    "DEFAULT_GPU_MEMORY_UTILIZATION",
    "DEFAULT_MAX_NUM_BATCHED_TOKENS",
    "DEFAULT_MBU",
    "DEFAULT_MFU",
]
