"""planner.defaults: one place for the defaults every surface shows (core signatures, sheet functions, engines)."""

from __future__ import annotations

import inspect

import planner.functions  # noqa: F401  (registers the spreadsheet functions)
from planner import defaults, latency, selfhosted
from planner.engines import ENGINE_DEFAULTS
from planner.registry import REGISTRY

BY_ARGUMENT = {
    "mbu": defaults.DEFAULT_MBU,
    "mfu": defaults.DEFAULT_MFU,
    "gpu_memory_utilization": defaults.DEFAULT_GPU_MEMORY_UTILIZATION,
    "block_size": defaults.DEFAULT_BLOCK_SIZE,
}


def test_values_are_the_documented_engine_defaults():
    # vLLM CacheConfig: gpu_memory_utilization 0.9, block_size 16; V1 online max_num_batched_tokens 8192
    assert (defaults.DEFAULT_GPU_MEMORY_UTILIZATION, defaults.DEFAULT_BLOCK_SIZE) == (0.9, 16)
    assert defaults.DEFAULT_MAX_NUM_BATCHED_TOKENS == 8192
    assert (defaults.DEFAULT_MBU, defaults.DEFAULT_MFU) == (0.7, 0.5)
    vllm = ENGINE_DEFAULTS["vllm"]
    assert (vllm.memory_fraction, vllm.block_size, vllm.max_num_batched_tokens) == (0.9, 16, 8192)


def test_every_sheet_default_of_these_arguments_is_the_shared_one():
    seen = 0
    for spec in REGISTRY.values():
        for arg in spec.args:
            if arg.name in BY_ARGUMENT and arg.optional and arg.default is not None:
                assert arg.default == BY_ARGUMENT[arg.name], (spec.name, arg.name, arg.default)
                seen += 1
    assert seen >= 10


def test_core_signatures_use_the_shared_defaults():
    for fn in (latency.decode_step_s, selfhosted.decode_model, selfhosted.ttft_s):
        params = inspect.signature(fn).parameters
        for name, value in BY_ARGUMENT.items():
            if name in params and params[name].default is not inspect.Parameter.empty:
                assert params[name].default == value, (fn.__name__, name)
