"""Serving-engine memory accounting: how vLLM, SGLang and TensorRT-LLM turn GPU memory into a KV cache.

Pure functions, no I/O. The per-token and per-GPU formulas (weights, KV bytes per token, block rounding) come from
:mod:`planner.memory`; this module adds what each engine reserves and how each engine reports the result.

Formula IDs refer to ``sizing-formulas.md``: M9 (KV budget by engine), §2.1 (engine accounting), §2.2 (empirical
non-KV constants).
"""

from __future__ import annotations

from planner.errors import ArgumentError, check_number
from planner.specs import GIB, ModelSpec

ENGINES = ("vllm", "vllm-v0", "sglang", "trtllm")

# §2.2, llm-d capacity_planner (llm-d/llm-d-benchmark config_explorer/src/config_explorer/capacity_planner.py at
# commit 22bb987; llm-d-incubation/llm-d-planner at commit e50305a): vLLM activation peak measured on H100 at the
# default max_num_batched_tokens; constant in max_model_len.
VLLM_ACTIVATION_GIB = {"llama": 4.8, "qwen": 5.6, "moe": 8.0, "multimodal": 2.5}
"""vLLM activation peak by model family (GiB, H100, default ``max_num_batched_tokens``). Source: llm-d."""

VLLM_NON_TORCH_GIB = {1: 0.15, 2: 0.6}
"""vLLM non-torch memory (CUDA context, NCCL buffers): 0.15 GiB at TP=1, 0.6 GiB at TP>=2. Source: llm-d
capacity_planner empirical vLLM memory results."""

VLLM_DEFAULT_BATCHED_TOKENS = 8192
"""vLLM V1's default ``max_num_batched_tokens`` for online serving on datacenter GPUs (>= 0.10; the activation
constants were measured there)."""


def activation_family(model: ModelSpec) -> str:
    """The key of :data:`VLLM_ACTIVATION_GIB` for ``model``: ``moe``, ``qwen`` or ``llama`` (every other dense model).

    >>> from planner.catalog import get_model
    >>> activation_family(get_model("qwen3-8b")), activation_family(get_model("mixtral-8x7b"))
    ('qwen', 'moe')
    """
    if model.architecture == "moe":
        return "moe"
    if model.family.lower().startswith("qwen") or model.name.lower().startswith("qwen"):
        return "qwen"
    return "llama"


def activation_peak_bytes(model: ModelSpec, *, max_num_batched_tokens: int | None = None) -> float:
    """vLLM's activation peak of the profiling forward pass (bytes), empirical.

    ``act = A_family · max(1, max_num_batched_tokens / 8192)``: the constants (§2.2, llm-d capacity_planner) were
    measured at the default 8192 batched tokens; the peak is proportional to the tokens of the dummy batch, so a
    larger batch scales it up. Smaller batches keep the constant (weights-sized buffers such as the logits and the
    MoE workspace dominate there). ***Heuristic*** for the scaling.

    >>> from planner.catalog import get_model
    >>> round(activation_peak_bytes(get_model("llama-3.1-8b")) / 2**30, 2)
    4.8
    >>> round(activation_peak_bytes(get_model("llama-3.1-8b"), max_num_batched_tokens=16384) / 2**30, 2)
    9.6
    """
    base = VLLM_ACTIVATION_GIB[activation_family(model)] * GIB
    if max_num_batched_tokens is None:
        return base
    tokens = check_number("max_num_batched_tokens", max_num_batched_tokens, minimum=1, integer=True)
    return base * max(1.0, tokens / VLLM_DEFAULT_BATCHED_TOKENS)


def non_torch_bytes(*, tp: int) -> float:
    """vLLM non-torch memory increase during profiling (bytes): 0.15 GiB at TP=1, 0.6 GiB at TP>=2 (§2.2).

    >>> non_torch_bytes(tp=1) / 2**30, non_torch_bytes(tp=4) / 2**30
    (0.15, 0.6)
    """
    tp = int(check_number("tp", tp, minimum=1, integer=True))
    return VLLM_NON_TORCH_GIB[1 if tp == 1 else 2] * GIB


def default_reserve_bytes(
    model: ModelSpec, *, tp: int, engine: str = "vllm", max_num_batched_tokens: int | None = None
) -> float:
    """Non-KV, non-weight memory one GPU reserves (bytes): activation peak + non-torch memory (M9, §2.2).

    ``reserve = act_family(max_num_batched_tokens) + non_torch(TP)``; for vLLM V0 the same constants apply (its
    profile runs at ``max_num_batched_tokens`` as well). SGLang and TensorRT-LLM budget their reserve differently
    (see :func:`kv_capacity`); this number is the vLLM-style reserve the generic memory model uses.

    >>> from planner.catalog import get_model
    >>> round(default_reserve_bytes(get_model("llama-3.1-8b"), tp=1) / 2**30, 2)
    4.95
    >>> round(default_reserve_bytes(get_model("qwen3-30b-a3b"), tp=2) / 2**30, 2)
    8.6
    """
    name = str(engine).strip().lower()
    if name not in ENGINES:
        raise ArgumentError("engine", engine, "one of " + ", ".join(ENGINES))
    return activation_peak_bytes(model, max_num_batched_tokens=max_num_batched_tokens) + non_torch_bytes(tp=tp)
