"""What every engine module shares: the engine names, their pinned defaults' shape, version parsing, and the
layout a KV budget is computed from (:class:`KvLayout`) and what each budget function returns (:class:`KvBudget`).

Pure, no I/O. :mod:`planner.engines` dispatches to one budget function per engine (``vllm``, ``vllm_v0``,
``sglang``, ``trtllm``).
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.errors import ArgumentError

ENGINES = ("vllm", "vllm-v0", "sglang", "trtllm")

INIT_SNAPSHOT_GIB = {1: 0.51, 2: 1.53}
"""Device memory in use before any weights are loaded (GiB): the CUDA context at TP 1, and with NCCL's communicator
set up at TP >= 2 on NVSwitch (NVLS) GPUs. Measured by the training logs: every llm-d v0.19 H100 run prints
``worker init memory snapshot: ... cuda_memory=0.51GiB`` at TP 1 and 1.53-1.55 GiB at TP 2 and 4. SGLang loses it
from its total (:data:`planner.engines.sglang.SGLANG_INIT_GIB`); vLLM V1 before 0.9.1 counts it in its reserve
(:func:`planner.engines.activation.vllm_v1_device_non_torch_bytes`)."""


@dataclass(frozen=True, kw_only=True)
class EngineDefaults:
    """The defaults of one serving engine at one version (the values the engine uses when a flag is not given)."""

    engine: str
    version: str
    memory_fraction: float | None  # None: computed (SGLang's reserved-memory heuristic)
    block_size: int
    max_num_batched_tokens: int | None
    source: str


@dataclass(frozen=True, kw_only=True)
class KvLayout:
    """The inputs of one engine's KV budget, per GPU of one pipeline stage (bytes, layers, tokens)."""

    hbm_bytes: float
    memory_fraction: float
    weights_bytes: float
    reserve_bytes: float
    kv_bytes_per_token_layer: float
    full_layers: int
    sliding_layers: int
    sliding_window: int | None
    max_model_len: int
    block_size: int
    max_num_batched_tokens: int


@dataclass(frozen=True, kw_only=True)
class KvBudget:
    """What one engine allocates from a :class:`KvLayout`, as it logs it."""

    available_bytes: float
    num_blocks: int
    kv_cache_tokens: int
    kv_bytes_per_logged_token: float
    blocks_per_request: int
    kv_groups: int
    max_concurrency: float


_ENGINE_ALIASES = {
    "vllm": "vllm", "vllm-v1": "vllm", "vllm_v1": "vllm", "v1": "vllm",
    "vllm-v0": "vllm-v0", "vllm_v0": "vllm-v0", "v0": "vllm-v0",
    "sglang": "sglang", "sgl": "sglang",
    "trtllm": "trtllm", "trt-llm": "trtllm", "tensorrt-llm": "trtllm", "tensorrt_llm": "trtllm",
}


def normalize_engine(engine: str, *, engine_version: str | None = None) -> str:
    """The engine key for ``engine`` (case-insensitive; ``vllm`` with a version below 0.8, where V1 became the
    default engine, means V0).

    >>> normalize_engine("vLLM"), normalize_engine("vllm", engine_version="0.6.3"), normalize_engine("TensorRT-LLM")
    ('vllm', 'vllm-v0', 'trtllm')
    """
    key = _ENGINE_ALIASES.get(str(engine).strip().lower())
    if key is None:
        raise ArgumentError("engine", engine, "one of vllm, vllm-v0, sglang, trtllm")
    if key == "vllm" and engine_version:
        if version_tuple(engine_version) < (0, 8):
            key = "vllm-v0"
    return key


def version_tuple(version: str) -> tuple[int, ...]:
    """``"0.9.2rc1"`` -> ``(0, 9, 2)``; :class:`ArgumentError` naming ``engine_version`` when nothing parses.

    >>> version_tuple("v0.10.1.1"), version_tuple("0.9.2rc1")
    ((0, 10, 1, 1), (0, 9, 2))
    """
    parts = []
    for piece in str(version).strip().lstrip("v").split("."):
        digits = ""
        for ch in piece:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        parts.append(int(digits))
        if len(digits) < len(piece):
            break
    if not parts:
        raise ArgumentError("engine_version", version, "a version such as 0.11.0")
    return tuple(parts)


def has_nvls(gpu) -> bool:
    """Whether NCCL can use NVLink SHARP (NVLS) on ``gpu``: NVSwitch systems of NVLink 4 and later (HGX/DGX
    H100, H200, B200, GB200...; ``nvlink_bytes_per_s_bidir`` >= 900 GB/s and not an NVL bridge card). NCCL enables
    NVLS by default where it is supported (``NCCL_NVLS_ENABLE``) and sets up its multicast buffers when the
    communicator is created. ***The NVLS attribution of the TP >= 2 init memory is an inference***: the training
    logs are all H100 SXM and show +1.0 GiB at TP >= 2; the held-out PCIe and A100 logs show no such step.

    >>> from planner.catalog import get_gpu
    >>> has_nvls(get_gpu("h100-sxm")), has_nvls(get_gpu("a100-80gb-sxm")), has_nvls(get_gpu("l4"))
    (True, False, False)
    """
    if gpu is None:
        return True
    link = gpu.nvlink_bytes_per_s_bidir or 0.0
    name = f"{gpu.name} {gpu.display_name}".lower()
    return link >= 900e9 and " nvl" not in name and "-nvl" not in name
