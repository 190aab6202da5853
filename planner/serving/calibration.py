"""The constants of the serving model, as one frozen value object, and its JSON form (pure: dicts in, dicts out).

A :class:`Calibration` holds the efficiency and overhead constants of :mod:`planner.serving.step` and
:mod:`planner.serving.schedule`. The defaults (:data:`DERIVED`) come from vendor figures and engine sources; the
catalog's ``planner/data/serving_calibration.json`` holds the values fitted on the training split of the published
benchmark points (``docs/serving.md`` says which constant is fitted and which derived), and
``planner calibrate-bench`` writes the same format for one user's setup.

File format (JSON object)::

    {"format": "planner-serving-calibration/1", "name": "...", "source": "...", "as_of": "YYYY-MM-DD",
     "constants": {"weight_bw_eff": 0.8, ..., "step_overhead_s": {"vllm": 0.0006, "sglang": 0.0005, ...}}}
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from planner.errors import ArgumentError

FORMAT = "planner-serving-calibration/1"

ENGINES = ("vllm", "vllm-v0", "sglang", "trtllm")

TRTLLM_PYTORCH = "trtllm-pytorch"
"""The ``step_overhead_s`` key of TensorRT-LLM's PyTorch backend (``PyExecutor``; ``engine="trtllm"`` built with
``eager_prefill=True``), apart from ``trtllm``, which keeps the TensorRT-engine runtime (NIM's engines, the C++
executor). Only the fixed step cost is split (session 15, latency32, docs/serving.md); the TP term, the per-sequence
and TTFT costs stay ``trtllm``'s for both. A calibration without the key gives the backend ``trtllm``'s value."""

OVERHEAD_FALLBACK = {TRTLLM_PYTORCH: "trtllm"}
"""The ``step_overhead_s`` entry a key falls back to when the table does not name it (before ``vllm``'s)."""

TABLES = ("step_overhead_s", "per_seq_overhead_s", "ttft_overhead_s", "tp_overhead_s", "rocm_eff",
          "tp_seq_overhead_s")
"""Constants given per engine."""


@dataclass(frozen=True, kw_only=True)
class Calibration:
    """Efficiency (fractions of peak) and overhead (seconds) constants of the serving model.

    - ``weight_bw_eff``: achieved fraction of peak HBM bandwidth streaming the weights (GEMMs, memory-bound);
    - ``kv_bw_eff``: achieved fraction of peak HBM bandwidth in decode attention (paged KV reads);
    - ``gemm_eff``: achieved fraction of peak FLOP/s of a large GEMM; ``gemm_half_tokens``: the token count at
      which a GEMM reaches half of that (``eff(M) = gemm_eff·M/(M + M½)``, small decode batches stay low);
    - ``attn_eff``: achieved fraction of peak 16-bit FLOP/s of prefill (flash) attention;
      ``attn_eff_pre_hopper``: the same on NVIDIA GPUs before Hopper (compute capability 8.x: Ampere, Ada), whose
      attention kernels are another family (vLLM runs FlashAttention-2 there and FlashAttention-3 on Hopper,
      ``FlashAttentionImpl`` in ``vllm/attention/backends/flash_attn.py``; FA2 reaches up to 73% of an A100's peak
      in its forward pass, Dao 2023, arXiv 2307.08691, while FA3 was written for Hopper's ``wgmma``/TMA, Shah et
      al. 2024, arXiv 2407.08608);
    - ``moe_eff``: grouped-GEMM efficiency of MoE experts relative to a dense GEMM of the same shape;
    - ``w4_kernel_eff``: weight-only 4-bit kernels (Marlin/Machete) relative to a 16-bit GEMM, compute-bound part;
      on vLLM V0 also its weight-only 8-bit GEMMs, the same kernels (``planner.serving.step.weight_only_mixed_input``);
    - ``step_overhead_s``: fixed time of one engine step (scheduling, input preparation, kernel launches,
      sampling) per engine, with TensorRT-LLM's PyTorch backend under its own key :data:`TRTLLM_PYTORCH`;
      ``tp_overhead_s``: extra per step and per doubling of the GPUs of a replica
      (``o_tp·log2(tp·pp)``: broadcast of the scheduler output to the workers, synchronisation), per engine;
      ``per_seq_overhead_s``: per scheduled sequence and step, per engine (input preparation, sampling, output
      processing; large for vLLM V0's Python scheduler); ``tp_seq_overhead_s``: per scheduled sequence, step and
      doubling of the GPUs (``o_tp_seq·log2(tp·pp)·(d + n_p)``): the per-sequence part of what the driver sends its
      workers every step (vLLM V0 broadcasts the prepared model input, ``broadcast_tensor_dict`` in
      ``worker_base.LocalOrDistributedWorkerBase``); 0 unless fitted;
    - ``allreduce_latency_s``: latency of one small all-reduce over NVLink/Infinity Fabric;
      ``pcie_allreduce_latency_s`` over PCIe;
    - ``ttft_overhead_s``: fixed time between a request's arrival and its first token outside the engine steps
      (HTTP, tokenization, detokenization of the first token), per engine;
    - ``layer_floor_s``: the shortest a layer's kernels take however small the step (launch and synchronisation
      floor of ~10 kernels per layer even under CUDA graphs); MoE layers count twice;
    - ``eager_layer_floor_s``: the same floor for a step that carries prompt tokens on an engine that runs such
      steps without CUDA graphs (vLLM V0 replays graphs only for decode-only batches, ``_use_captured_graph``;
      SGLang only for decode-like forward modes, ``forward_mode.is_cuda_graph()``): every kernel of a layer is
      launched from Python, about a dozen per layer at some 8 us each (derived start 0.1 ms);
    - ``rocm_eff``: AMD GPUs (ROCm kernels) relative to the same compute efficiencies on NVIDIA, per engine: the
      ROCm kernels an engine ships differ by engine and generation (vLLM 0.6's ROCm FP8 path vs SGLang 0.5's
      aiter kernels), so one factor for all of them cannot hold;
    - ``fp4_eff``: FP4 (nvfp4/mxfp4) tensor-core GEMMs relative to their peak, beyond ``gemm_eff``.
    """

    name: str = "derived"
    weight_bw_eff: float = 0.80
    kv_bw_eff: float = 0.60
    gemm_eff: float = 0.70
    gemm_half_tokens: float = 64.0
    attn_eff: float = 0.50
    attn_eff_pre_hopper: float = 0.70
    moe_eff: float = 0.60
    w4_kernel_eff: float = 0.60
    step_overhead_s: tuple[tuple[str, float], ...] = (("sglang", 5e-4), ("trtllm", 3e-4), ("vllm", 6e-4),
                                                     ("vllm-v0", 1.5e-3))
    tp_overhead_s: tuple[tuple[str, float], ...] = (("sglang", 1e-3), ("trtllm", 1e-3), ("vllm", 1e-3),
                                                   ("vllm-v0", 1e-3))
    per_seq_overhead_s: tuple[tuple[str, float], ...] = (("sglang", 1e-5), ("trtllm", 5e-6), ("vllm", 1e-5),
                                                        ("vllm-v0", 5e-5))
    allreduce_latency_s: float = 1e-5
    pcie_allreduce_latency_s: float = 3e-5
    ttft_overhead_s: tuple[tuple[str, float], ...] = (("sglang", 0.01), ("trtllm", 0.01), ("vllm", 0.01),
                                                     ("vllm-v0", 0.01))
    layer_floor_s: float = 2e-5
    eager_layer_floor_s: float = 1e-4
    rocm_eff: tuple[tuple[str, float], ...] = (("sglang", 0.7), ("trtllm", 0.7), ("vllm", 0.7), ("vllm-v0", 0.7))
    tp_seq_overhead_s: tuple[tuple[str, float], ...] = (("sglang", 0.0), ("trtllm", 0.0), ("vllm", 0.0),
                                                       ("vllm-v0", 0.0))
    fp4_eff: float = 0.7
    source: str = "derived defaults (docs/serving.md)"
    as_of: str = "2026-12-03"

    def overhead_s(self, engine: str) -> float:
        """The fixed step time of ``engine`` (``trtllm-pytorch``: TensorRT-LLM's PyTorch backend, else ``trtllm``'s
        value, :data:`OVERHEAD_FALLBACK`; the ``vllm`` value for an engine the table does not name).

        >>> DERIVED.overhead_s("trtllm-pytorch"), DERIVED.replace(step_overhead_s={"trtllm-pytorch": 1e-3}).overhead_s(
        ...     "trtllm-pytorch"), DERIVED.overhead_s("other")
        (0.0003, 0.001, 0.0006)
        """
        table = dict(self.step_overhead_s)
        fallback = OVERHEAD_FALLBACK.get(engine)
        return table.get(engine, table.get(fallback or "vllm", table.get("vllm", 6e-4)))

    def seq_overhead_s(self, engine: str) -> float:
        """The per-sequence step time of ``engine`` (the ``vllm`` value for an engine the table does not name)."""
        table = dict(self.per_seq_overhead_s)
        return table.get(engine, table.get("vllm", 1e-5))

    def tp_fixed_s(self, engine: str) -> float:
        """The per-doubling multi-GPU step cost of ``engine`` (the ``vllm`` value for an engine not named)."""
        table = dict(self.tp_overhead_s)
        return table.get(engine, table.get("vllm", 1e-3))

    def tp_seq_s(self, engine: str) -> float:
        """The per-sequence, per-doubling multi-GPU step cost of ``engine`` (the ``vllm`` value for an engine not
        named)."""
        table = dict(self.tp_seq_overhead_s)
        return table.get(engine, table.get("vllm", 0.0))

    def ttft_fixed_s(self, engine: str) -> float:
        """The fixed TTFT outside engine steps of ``engine`` (the ``vllm`` value for an engine not named)."""
        table = dict(self.ttft_overhead_s)
        return table.get(engine, table.get("vllm", 0.01))

    def rocm_factor(self, engine: str) -> float:
        """The ROCm efficiency factor of ``engine`` on AMD GPUs (the ``vllm`` value for an engine not named)."""
        table = dict(self.rocm_eff)
        return table.get(engine, table.get("vllm", 0.7))

    def replace(self, **changes: Any) -> Calibration:
        """A copy with ``changes`` (``step_overhead_s`` may be a mapping)."""
        for key in TABLES:
            if isinstance(changes.get(key), dict):
                changes[key] = tuple(sorted({**dict(getattr(self, key)), **changes[key]}.items()))
        return dataclasses.replace(self, **changes)


SCALARS = tuple(f.name for f in dataclasses.fields(Calibration)
                if f.name not in ("name", "source", "as_of", *TABLES))
"""The scalar constants of a calibration, in declaration order."""

DERIVED = Calibration()
"""The derived defaults, before any fit."""


def to_dict(cal: Calibration) -> dict[str, Any]:
    """The JSON form of ``cal``.

    >>> to_dict(DERIVED)["constants"]["step_overhead_s"]["sglang"]
    0.0005
    """
    constants: dict[str, Any] = {name: getattr(cal, name) for name in SCALARS}
    for key in TABLES:
        constants[key] = dict(getattr(cal, key))
    return {"format": FORMAT, "name": cal.name, "source": cal.source, "as_of": cal.as_of, "constants": constants}


def from_dict(data: Any, *, where: str = "calibration") -> Calibration:
    """A :class:`Calibration` from its JSON form; unknown or missing constants are errors naming ``where``.

    Constants the file leaves out keep the :data:`DERIVED` values.

    >>> from_dict({"format": FORMAT, "constants": {"kv_bw_eff": 0.5}}).kv_bw_eff
    0.5
    """
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("constants"), dict):
        raise ArgumentError("calibration", where, f'a JSON object with "format": "{FORMAT}" and "constants"')
    constants = dict(data["constants"])
    changes: dict[str, Any] = {}
    for key in TABLES:
        overhead = constants.pop(key, None)
        if overhead is None:
            continue
        if isinstance(overhead, (int, float)) and not isinstance(overhead, bool):
            overhead = {engine: float(overhead) for engine in ENGINES}
        if not isinstance(overhead, dict) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in overhead.values()):
            raise ArgumentError("calibration", where, f"{key} as seconds per engine, e.g. {{\"vllm\": 0.0006}}")
        changes[key] = {str(k): float(v) for k, v in overhead.items()}
    for name, value in constants.items():
        if name not in SCALARS:
            raise ArgumentError("calibration", where, f"constants among {', '.join(SCALARS)} (not {name!r})")
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
            raise ArgumentError("calibration", where, f"{name} as a number >= 0 (got {value!r})")
        changes[name] = float(value)
    for key in ("name", "source", "as_of"):
        if isinstance(data.get(key), str):
            changes[key] = data[key]
    return DERIVED.replace(**changes)
