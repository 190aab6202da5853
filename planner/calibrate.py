"""Read what a serving engine allocated from its startup log, and back-solve the overhead it measured.

Pure functions on log text (the CLI reads the file). vLLM V1 lines::

    Model loading took 14.99 GiB and 5.1 seconds
    Available KV cache memory: 51.31 GiB
    GPU KV cache size: 420,288 tokens
    Maximum concurrency for 8,192 tokens per request: 51.30x

vLLM V0 lines (``Loading model weights took 14.96 GB``, ``# GPU blocks: 5691, # CPU blocks: 2048``,
``the rest of the memory reserved for KV Cache is 11.12GiB`` / ``kv_cache_size=3.81GiB``), and SGLang lines::

    Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.70 GB, mem usage=14.99 GB.
    KV Cache is allocated. #tokens: 413827, K size: 25.26 GB, V size: 25.26 GB
    max_total_num_tokens=413827, chunked_prefill_size=8192, ...

vLLM and SGLang print GiB (they divide by 2**30) even where the label says "GB".

The back-solved overhead (:func:`calibrate`) is what :func:`planner.engines.kv_capacity` takes as ``reserve_gib`` and
``weights_gib``: with them, a prediction for the same setup reproduces the logged allocation (§2.1, M9).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from planner.errors import ArgumentError
from planner.specs import GIB

LOG_FIELDS = (
    "engine",
    "weights_gib",
    "available_kv_gib",
    "kv_cache_tokens",
    "num_gpu_blocks",
    "max_concurrency",
    "max_model_len",
    "k_size_gib",
    "v_size_gib",
    "avail_mem_gib",
    "kv_bytes_per_token",
)
"""The fields :func:`parse_log` can report (the ``field`` argument of ``CALIBRATE_LOG``)."""


@dataclass(frozen=True, kw_only=True)
class EngineLog:
    """What a startup log says the engine allocated (``None`` where the log does not say).

    ``kv_bytes_per_token`` is derived: K+V size / tokens (SGLang), or available KV / tokens (vLLM).
    """

    engine: str
    weights_gib: float | None = None
    available_kv_gib: float | None = None
    kv_cache_tokens: int | None = None
    num_gpu_blocks: int | None = None
    max_concurrency: float | None = None
    max_model_len: int | None = None
    k_size_gib: float | None = None
    v_size_gib: float | None = None
    avail_mem_gib: float | None = None
    kv_bytes_per_token: float | None = None

    def get(self, field: str) -> float | str | None:
        """One field by name (case-insensitive), as ``CALIBRATE_LOG`` returns it."""
        name = str(field).strip().lower()
        if name not in LOG_FIELDS:
            raise ArgumentError("field", field, "one of " + ", ".join(LOG_FIELDS))
        return getattr(self, name)


_NUM = r"([0-9][0-9,]*(?:\.[0-9]+)?)"

_PATTERNS = {
    "vllm_weights": re.compile(r"(?:Model loading took|Loading model weights took)\s+" + _NUM + r"\s*Gi?B"),
    "vllm_avail": re.compile(r"Available KV cache memory:\s*" + _NUM + r"\s*GiB"),
    "vllm_v0_avail": re.compile(
        r"(?:reserved for KV Cache is|kv_cache_size=)\s*" + _NUM + r"\s*GiB", re.IGNORECASE
    ),
    "vllm_tokens": re.compile(r"GPU KV cache size:\s*" + _NUM + r"\s*tokens"),
    "vllm_blocks": re.compile(r"#\s*GPU blocks:\s*" + _NUM),
    "vllm_concurrency": re.compile(r"Maximum concurrency for\s*" + _NUM + r"\s*tokens per request:\s*" + _NUM + "x"),
    "sgl_alloc": re.compile(
        r"KV Cache is allocated\.\s*#tokens:\s*" + _NUM + r",\s*K size:\s*" + _NUM + r"\s*GB,\s*V size:\s*" + _NUM
    ),
    "sgl_total": re.compile(r"max_total_num_tokens=\s*" + _NUM),
    "sgl_weights": re.compile(r"Load weight end\..*?avail mem=\s*" + _NUM + r"\s*GB,\s*mem usage=\s*" + _NUM),
    "sgl_context": re.compile(r"context_len=\s*" + _NUM),
}


def _num(text: str) -> float:
    return float(text.replace(",", ""))


def _last(name: str, text: str) -> re.Match | None:
    found = list(_PATTERNS[name].finditer(text))
    return found[-1] if found else None


def parse_log(text: str) -> EngineLog:
    """Parse a vLLM or SGLang startup log (pasted text); the last occurrence of each line wins.

    >>> log = parse_log('''Model loading took 14.99 GiB and 4.2 seconds
    ... Available KV cache memory: 51.31 GiB
    ... GPU KV cache size: 420,288 tokens
    ... Maximum concurrency for 8,192 tokens per request: 51.30x''')
    >>> log.engine, log.kv_cache_tokens, log.max_model_len, round(log.kv_bytes_per_token)
    ('vllm', 420288, 8192, 131086)
    >>> parse_log("KV Cache is allocated. #tokens: 367404, K size: 8.23 GB, V size: 8.23 GB").kv_cache_tokens
    367404
    """
    if not isinstance(text, str) or not text.strip():
        raise ArgumentError("log_text", text, "the text of a vLLM or SGLang startup log")
    alloc, total = _last("sgl_alloc", text), _last("sgl_total", text)
    sgl_weights = _last("sgl_weights", text)
    if alloc or total or sgl_weights:
        tokens = int(_num(alloc.group(1))) if alloc else int(_num(total.group(1))) if total else None
        if total:
            tokens = int(_num(total.group(1)))
        k = _num(alloc.group(2)) if alloc else None
        v = _num(alloc.group(3)) if alloc else None
        context = _last("sgl_context", text)
        per_token = None
        if alloc and k is not None and v is not None and int(_num(alloc.group(1))):
            per_token = (k + v) * GIB / int(_num(alloc.group(1)))
        return EngineLog(
            engine="sglang",
            weights_gib=_num(sgl_weights.group(2)) if sgl_weights else None,
            avail_mem_gib=_num(sgl_weights.group(1)) if sgl_weights else None,
            available_kv_gib=(k + v) if k is not None and v is not None else None,
            kv_cache_tokens=tokens,
            k_size_gib=k,
            v_size_gib=v,
            max_model_len=int(_num(context.group(1))) if context else None,
            kv_bytes_per_token=per_token,
        )
    weights = _last("vllm_weights", text)
    avail = _last("vllm_avail", text) or _last("vllm_v0_avail", text)
    tokens_m = _last("vllm_tokens", text)
    blocks = _last("vllm_blocks", text)
    conc = _last("vllm_concurrency", text)
    if not (weights or avail or tokens_m or blocks or conc):
        raise ArgumentError(
            "log_text", text[:60] + ("..." if len(text) > 60 else ""),
            "a vLLM or SGLang startup log (no 'GPU KV cache size', 'Available KV cache memory', "
            "'max_total_num_tokens' or 'KV Cache is allocated' line found)",
        )
    num_blocks = int(_num(blocks.group(1))) if blocks else None
    tokens = int(_num(tokens_m.group(1))) if tokens_m else (num_blocks * 16 if num_blocks is not None else None)
    avail_gib = _num(avail.group(1)) if avail else None
    return EngineLog(
        engine="vllm" if tokens_m or _last("vllm_avail", text) else "vllm-v0",
        weights_gib=_num(weights.group(1)) if weights else None,
        available_kv_gib=avail_gib,
        kv_cache_tokens=tokens,
        num_gpu_blocks=num_blocks,
        max_concurrency=_num(conc.group(2)) if conc else None,
        max_model_len=int(_num(conc.group(1))) if conc else None,
        kv_bytes_per_token=(avail_gib * GIB / tokens) if avail_gib is not None and tokens else None,
    )


@dataclass(frozen=True, kw_only=True)
class Calibration:
    """The measured overheads of one setup, back-solved from its log.

    ``reserve_gib``: vLLM/TRT-LLM activation + non-torch memory; SGLang: memory gone between the driver total and
    the post-load free memory besides the weights (CUDA context, NCCL). Pass ``reserve_gib`` and ``weights_gib`` to
    :func:`planner.engines.kv_capacity` to reproduce the log.
    """

    engine: str
    weights_gib: float
    reserve_gib: float
    available_kv_gib: float
    kv_cache_tokens: int | None
    predicted_reserve_gib: float
    predicted_weights_gib: float


def calibrate(log: EngineLog, model, gpu, **setup) -> Calibration:
    """Back-solve the overhead of the setup that produced ``log`` (M9, inverted).

    - vLLM: ``reserve = HBM·util − weights − available_kv``.
    - SGLang: ``reserve = HBM − weights − (KV + HBM·(1 − mem_fraction_static))``.
    - TRT-LLM: ``reserve = HBM − weights − KV/free_gpu_memory_fraction``.

    Missing log values are derived (available KV from tokens × KV bytes per token; weights from the model).

    >>> log = parse_log("Model loading took 14.99 GiB\\nAvailable KV cache memory: 51.31 GiB\\n"
    ...                 "GPU KV cache size: 420,288 tokens")
    >>> round(calibrate(log, "llama-3.1-8b", "h100-sxm").reserve_gib, 2)
    5.38
    """
    from planner.engines import kv_capacity

    engine = setup.pop("engine", None) or ("vllm-v0" if log.engine == "vllm-v0" else log.engine)
    base = kv_capacity(model, gpu, engine=engine, **setup)
    weights = log.weights_gib if log.weights_gib is not None else base.weights_gib
    if log.available_kv_gib is not None:
        avail = log.available_kv_gib
    elif log.kv_cache_tokens is not None:
        avail = log.kv_cache_tokens * base.kv_bytes_per_token / GIB
    else:
        raise ArgumentError("log", "no KV size", "a log with an available-KV or KV-tokens line")
    from planner.catalog import get_gpu
    from planner.specs import GpuSpec

    card = gpu if isinstance(gpu, GpuSpec) else get_gpu(gpu)
    hbm = card.hbm_bytes / GIB
    fraction = base.memory_fraction
    if base.engine == "sglang":
        reserve = hbm - weights - (avail + hbm * (1 - fraction))
    elif base.engine == "trtllm":
        reserve = hbm - weights - avail / fraction
    else:
        reserve = hbm * fraction - weights - avail
    return Calibration(
        engine=base.engine,
        weights_gib=weights,
        reserve_gib=reserve,
        available_kv_gib=avail,
        kv_cache_tokens=log.kv_cache_tokens,
        predicted_reserve_gib=base.reserve_gib,
        predicted_weights_gib=base.weights_gib,
    )
