"""Serving-engine memory accounting: how vLLM, SGLang and TensorRT-LLM turn GPU memory into a KV cache.

Pure functions, no I/O. The per-token and per-GPU formulas (weights, KV bytes per token, block rounding) come from
:mod:`planner.memory`; this module adds what each engine reserves and how each engine reports the result.

Formula IDs refer to ``sizing-formulas.md``: M9 (KV budget by engine), §2.1 (engine accounting), §2.2 (empirical
non-KV constants).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.errors import ArgumentError, check_fraction, check_number
from planner.specs import GIB, MIB, GpuSpec, ModelSpec

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


VLLM_V017_ACTIVATION_GIB = {"llama": 1.9, "qwen": 2.2, "gemma": 3.8, "moe": 2.7, "multimodal": 2.5}
"""vLLM >= 0.17 activation peak (GiB, H100, 8192 batched tokens): v0.17 cut the profiled activation by ~60%.
Source: llm-d-incubation/llm-d-planner ``accuracy/accuracy_report.md`` at commit 875a4fd (v0.19.0 sweep: Llama
0.77-1.97, Qwen2/3 2.21-2.29, Gemma2/3 3.62-3.99, Qwen3-MoE 2.68, Llama-4 3.19, GptOss 2.87 GiB)."""

VLLM_V017_NON_TORCH_GIB = {1: 0.25, 2: 2.1}
"""vLLM >= 0.17 non-torch memory: 0.25 GiB at TP=1, ~2.1 GiB at TP>=2 (NCCL/custom all-reduce buffers). Source: the
same llm-d-planner report (observed means 0.27 / 2.08 / 2.17 GiB at TP 1 / 2 / 4)."""


def _vllm_profile(engine_version: str | None) -> tuple[dict[str, float], dict[int, float]]:
    """The (activation, non-torch) constants for a vLLM version: §2.2 up to 0.16, the v0.17+ measurements after."""
    if engine_version and _version_tuple(engine_version) >= (0, 17):
        return VLLM_V017_ACTIVATION_GIB, VLLM_V017_NON_TORCH_GIB
    return VLLM_ACTIVATION_GIB, VLLM_NON_TORCH_GIB


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


def activation_peak_bytes(
    model: ModelSpec, *, max_num_batched_tokens: int | None = None, engine_version: str | None = None
) -> float:
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
    table, _ = _vllm_profile(engine_version)
    family = activation_family(model)
    if family == "llama" and model.family.lower().startswith("gemma") and "gemma" in table:
        family = "gemma"
    base = table[family] * GIB
    if max_num_batched_tokens is None:
        return base
    tokens = check_number("max_num_batched_tokens", max_num_batched_tokens, minimum=1, integer=True)
    return base * max(1.0, tokens / VLLM_DEFAULT_BATCHED_TOKENS)


# ---------------------------------------------------------------------------------------------------------------
# vLLM V0 activation peak, derived from the model's shapes (no fitted constant)

VLLM_V0_MAX_NUM_SEQS = 256
"""V0's default ``max_num_seqs`` (vllm-project/vllm ``EngineArgs.max_num_seqs = 256``, 0.4-0.8): ``profile_run``
(``vllm/worker/model_runner.py``) builds this many dummy prompts sharing ``max_num_batched_tokens``."""

VLLM_V0_LONG_CONTEXT_TOKENS = 32768
"""Above this ``max_model_len`` V0 turns chunked prefill on by default (``EngineArgs.create_engine_config``:
"Chunked prefill is enabled by default for models with max_model_len > 32K", 0.5.5-0.8.x); the profile batch is then
the chunked-prefill budget :func:`vllm_v0_profile_tokens` returns instead of ``max(max_model_len, 2048)``."""

VLLM_V0_SAMPLER_BYTES_PER_LOGIT = 2 + 4 + (4 + 8) + 8 + (4 + 8)
"""Bytes the V0 sampler holds per ``[num_seqs, vocab]`` logit at its peak (inside ``torch.sort``): 38.

``profile_run`` gives every dummy prompt ``SamplingParams(top_p=0.99, top_k=vocab_size - 1)`` "to reflect the
accurate memory usage", so ``Sampler.forward`` takes the ``_apply_top_k_top_p`` path
(``vllm/model_executor/layers/sampler.py``, 0.4-0.8). Live while ``logits.sort(dim=-1)`` runs:

- 2: the 16-bit logits of ``LogitsProcessor`` (the model runner keeps its reference during sampling);
- 4: the fp32 copy ``logits.to(torch.float)``;
- 4 + 8: the sorted values and their int64 indices;
- 8: the int64 reverse-index array PyTorch's ``segmented_sort_pairs`` allocates for 128 or more rows
  (``aten/src/ATen/native/cuda/SortStable.cu``);
- 4 + 8: cub ``DeviceSegmentedRadixSort::SortPairs``' alternate key and value buffers (its temp storage, taken from
  the caching allocator, so inside torch's peak).

The later top-p stage (softmax, cumsum, two bool masks, the scatter output) holds 32 bytes per logit, less.
Derived from the code; not fitted to any case. Check (out of sample): Llama-3-8B, 256 x 128,256 logits at 8192
tokens gives 38 x 32.8e6 B + the 64 MiB final hidden states = 1.22 GiB; vLLM PR #10511 logs 1.26 GiB at TP 1 and
TP 2 (the driver rank samples the gathered logits, so the peak does not shrink with TP)."""


def vllm_v0_profile_tokens(max_model_len: int, *, engine_version: str | None = None) -> int:
    """Tokens of V0's profile batch (its default ``max_num_batched_tokens``) for ``max_model_len``.

    - ``max_model_len`` <= 32768 (no chunked prefill): ``max(max_model_len, 2048)`` (``SchedulerConfig``,
      ``_DEFAULT_MAX_NUM_BATCHED_TOKENS = 2048``).
    - Longer (chunked prefill on by default, :data:`VLLM_V0_LONG_CONTEXT_TOKENS`): 512 before 0.7 ("512 is the
      default max_num_batched_tokens for chunked prefill", vLLM docs ``performance.rst``), 2048 from 0.7.
      ***The 0.7 boundary is not located in the source here***; it agrees with the logs: vLLM #10517 (0.6.4, 35k)
      profiles a ~0.06 GiB peak (512 tokens x 110,592 B = 0.05 GiB; 2048 would be 0.21 GiB) and the non-driver
      rank of #13061 (0.7.2) 0.19 GiB (2048 tokens: 0.16 GiB; 512: 0.04 GiB). Neither value changes the driver
      rank's peak, which the sampler sets (:func:`vllm_v0_activation_bytes`).

    >>> vllm_v0_profile_tokens(8192), vllm_v0_profile_tokens(1024)
    (8192, 2048)
    >>> vllm_v0_profile_tokens(131072, engine_version="0.6.4"), vllm_v0_profile_tokens(131072, engine_version="0.7.2")
    (512, 2048)
    """
    max_len = int(check_number("max_model_len", max_model_len, minimum=1, integer=True))
    if max_len <= VLLM_V0_LONG_CONTEXT_TOKENS:
        return max(max_len, 2048)
    if engine_version and _version_tuple(engine_version) < (0, 7):
        return 512
    return 2048


def vllm_v0_forward_bytes_per_token(model: ModelSpec, *, tp: int = 1, act_bytes: float = 2.0) -> float | None:
    """Peak bytes per profiled token of V0's dummy forward pass, dense SwiGLU models (``None`` when the model has no
    ``intermediate_size`` or is MoE/MLA, whose MLP workspaces this does not model).

    ``b·(3·I/TP + (3 + [TP>1])·H)``: the peak is in the MLP's down projection, where ``LlamaMLP.forward``
    (``vllm/model_executor/models/llama.py``; Qwen2 is the same) still holds ``gate_up`` [T, 2I/TP] and the
    SiLU-and-mul output [T, I/TP] while writing ``down_proj``'s [T, H]; the decoder layer holds the layer input and
    the residual [T, H] each (``fused_add_rms_norm`` works in place); at TP > 1 the all-reduce writes one more
    [T, H]. Attention holds less (``qkv`` [T, (n_q + 2 n_kv)·d/TP] + output).

    Check: Llama-3.1-8B (H 4096, I 14336): 2·(3·14336 + 3·4096) = 110,592 B per token; at 20,000 and 29,000 tokens
    2.06 and 2.99 GiB, against the 2.07 and 2.99 GiB the two RTX 3090 logs of vLLM #10517 show
    (peak_torch_memory − weights).

    >>> from planner.catalog import get_model
    >>> vllm_v0_forward_bytes_per_token(get_model("llama-3.1-8b"))
    110592.0
    """
    if model.architecture == "moe" or model.attention == "mla" or not model.intermediate_size:
        return None
    tp = int(check_number("tp", tp, minimum=1, integer=True))
    inter = model.intermediate_size / tp
    return act_bytes * (3 * inter + (3 + (1 if tp > 1 else 0)) * model.hidden_size)


def vllm_v0_activation_bytes(
    model: ModelSpec,
    *,
    tp: int = 1,
    max_num_batched_tokens: int,
    max_num_seqs: int = VLLM_V0_MAX_NUM_SEQS,
    engine_version: str | None = None,
) -> float:
    """vLLM V0's "PyTorch activation peak memory" on the driver rank (bytes), from the model's shapes.

    ``act = max(T·forward_per_token, S·V·38 + T·H·b)`` with ``T = max_num_batched_tokens``,
    ``S = min(max_num_seqs, T)`` dummy prompts and ``V = vocab_size``: the forward pass
    (:func:`vllm_v0_forward_bytes_per_token`) and the sampler (:data:`VLLM_V0_SAMPLER_BYTES_PER_LOGIT`, while the
    final hidden states [T, H] are still held) peak one after the other. V0 samples on the driver worker only
    (``ModelRunner.execute_model``: "if not self.is_driver_worker: return"), so rank 0 has the larger peak and, the
    executor taking the minimum of the ranks' block counts, it sets the logged KV size.

    Models this does not cover (MoE, MLA, no ``intermediate_size``/``vocab_size``) keep the §2.2 constant.

    Worked example, Llama-3.1-8B at 20,000 tokens: forward 20,000 x 110,592 B = 2.06 GiB; sampler
    256 x 128,256 x 38 B + 20,000 x 4096 x 2 B = 1.31 GiB; peak 2.06 GiB.

    >>> from planner.catalog import get_model
    >>> round(vllm_v0_activation_bytes(get_model("llama-3.1-8b"), max_num_batched_tokens=20000) / 2**30, 2)
    2.06
    >>> round(vllm_v0_activation_bytes(get_model("llama-3.1-8b"), max_num_batched_tokens=8192) / 2**30, 2)
    1.22
    """
    tokens = int(check_number("max_num_batched_tokens", max_num_batched_tokens, minimum=1, integer=True))
    seqs = int(check_number("max_num_seqs", max_num_seqs, minimum=1, integer=True))
    act_bytes = 4.0 if model.weight_dtype in ("fp32", "float32") else 2.0
    per_token = vllm_v0_forward_bytes_per_token(model, tp=tp, act_bytes=act_bytes)
    if per_token is None or not model.vocab_size:
        return activation_peak_bytes(model, engine_version=engine_version)
    forward = tokens * per_token
    sampler = min(seqs, tokens) * model.vocab_size * VLLM_V0_SAMPLER_BYTES_PER_LOGIT
    return max(forward, sampler + tokens * model.hidden_size * act_bytes)


# ---------------------------------------------------------------------------------------------------------------
# vLLM V1 activation peak, derived from the model's shapes (no fitted constant)

VLLM_V1_SAMPLERS = ("native", "flashinfer", "triton")
"""The top-k/top-p implementations of V1's ``TopKTopPSampler`` (``vllm/v1/sample/ops/topk_topp_sampler.py``):
PyTorch ``torch.sort`` (``forward_native``), FlashInfer's fused kernel (``forward_cuda``) and the Triton masking
kernel (vLLM PR #33538)."""


def vllm_v1_default_sampler(engine_version: str | None) -> str:
    """The top-k/top-p path V1's dummy sampler run takes by default at ``engine_version`` (no FlashInfer env set).

    - < 0.17: ``native`` (``torch.sort``). FlashInfer's kernel was on by default only when the ``flashinfer``
      package was installed (V1 reads ``VLLM_USE_FLASHINFER_SAMPLER`` unset as on: flashinfer #1180 shows both
      paths in one image), it was not a dependency of the pip wheel before ~0.11 (LMCache #1384), and PR #26859
      (2025-10-15) turned it off by default; pass ``sampler="flashinfer"`` when a log shows "Using FlashInfer for
      top-p & top-k sampling".
    - >= 0.17: ``triton``. PR #33538 (merged 2026-02) added the Triton kernel, which PR #40376 (2026-04-20) calls
      "used by default now". ***The 0.17 boundary is not located in the source here***; it is where the llm-d
      v0.19 sweep's report places the ~60% drop of the profiled activation. FlashInfer (default again after #40376)
      holds the same bytes per logit, so the boundary does not depend on which of the two a version uses.

    >>> vllm_v1_default_sampler("0.10.2"), vllm_v1_default_sampler("0.19.0")
    ('native', 'triton')
    """
    if engine_version and _version_tuple(engine_version) >= (0, 17):
        return "triton"
    return "native"


def vllm_v1_sampler_bytes_per_logit(sampler: str, *, logits_bytes: float = 2.0) -> float:
    """Bytes V1's dummy sampler run holds per ``[max_num_seqs, vocab]`` logit at its peak.

    ``_dummy_sampler_run`` (``vllm/v1/worker/gpu_model_runner.py``) computes ``logits = compute_logits(...)`` in
    the model dtype and keeps that reference while ``Sampler.forward`` runs with ``top_k = vocab - 1`` and
    ``top_p`` < 1 for every dummy request (so both filters apply). ``Sampler.forward`` first takes
    ``logits.to(torch.float32)`` (a copy unless the logits already are fp32). Then:

    - ``native`` (``apply_top_k_top_p``: ``logits.sort``): the sorted fp32 values and int64 indices (4 + 8), PyTorch's
      int64 reverse-index array of ``segmented_sort_pairs`` (8) and cub's alternate key/value buffers (4 + 8), the
      same accounting as :data:`VLLM_V0_SAMPLER_BYTES_PER_LOGIT` (the V1 sort path is V0's). 16-bit: 2 + 4 + 32 = 38.
    - ``triton`` (PR #33538: masks the fp32 logits in place) and ``flashinfer``
      (``top_k_top_p_sampling_from_logits``: top-k-masked logits, then their softmax): two more fp32 [S, V]
      tensors, the probabilities and the exponential noise ``q = torch.empty_like(probs)`` of ``random_sample``
      (Triton) or the masked logits and the probabilities (FlashInfer). 16-bit: 2 + 4 + 8 = 14.

    fp32 models (``logits_bytes`` 4) skip the copy: 36 and 12. Not counted: the Triton kernel's per-program
    buffers (PR #33538: "around ~80MiB"), the vocabulary padding of the LM head (to a multiple of 64).

    >>> vllm_v1_sampler_bytes_per_logit("native"), vllm_v1_sampler_bytes_per_logit("triton")
    (38.0, 14.0)
    >>> vllm_v1_sampler_bytes_per_logit("flashinfer", logits_bytes=4.0)
    12.0
    """
    if sampler not in VLLM_V1_SAMPLERS:
        raise ArgumentError("sampler", sampler, "one of " + ", ".join(VLLM_V1_SAMPLERS))
    copy = 0.0 if logits_bytes >= 4 else 4.0
    extra = (4 + 8) + 8 + (4 + 8) if sampler == "native" else 4 + 4
    return float(logits_bytes + copy + extra)


def vllm_v1_default_max_num_seqs(gpu: GpuSpec) -> int:
    """V1's default ``max_num_seqs`` on ``gpu``: 1024 on GPUs with >= 70 GiB that are not A100s, else 256.

    ``EngineArgs.get_batch_defaults`` (``vllm/engine/arg_utils.py``, 0.9+): "if device_memory >= 70 * GiB_bytes and
    'a100' not in device_name" the defaults are 1024 sequences (``LLM`` and ``vllm serve``; 16384 / 8192 batched
    tokens), otherwise 256 (8192 / 2048 tokens; A100s excluded after PR #17885).

    >>> from planner.catalog import get_gpu
    >>> vllm_v1_default_max_num_seqs(get_gpu("h100-sxm")), vllm_v1_default_max_num_seqs(get_gpu("a100-80gb-sxm"))
    (1024, 256)
    """
    big = gpu.hbm_bytes >= 70 * GIB and "a100" not in f"{gpu.name} {gpu.display_name}".lower()
    return 1024 if big else 256


def vllm_v1_activation_bytes(
    model: ModelSpec,
    *,
    tp: int = 1,
    max_num_batched_tokens: int = VLLM_DEFAULT_BATCHED_TOKENS,
    max_num_seqs: int = 1024,
    engine_version: str | None = None,
    sampler: str | None = None,
    act_bytes: float | None = None,
) -> float | None:
    """vLLM V1's "torch peak memory increase" of ``profile_run`` (bytes), from the model's shapes; ``None`` for
    models this does not cover (MoE, MLA, no ``intermediate_size`` / ``vocab_size``), which keep the constants.

    ``act = max(T·forward_per_token, S·V·B + T·H·b)`` with ``T = max_num_batched_tokens``,
    ``S = min(max_num_seqs, T)``, ``V = vocab_size`` and ``B`` from :func:`vllm_v1_sampler_bytes_per_logit`
    (sampler path from :func:`vllm_v1_default_sampler` unless given). ``profile_run`` runs
    ``_dummy_run(max_num_tokens)`` (the forward peak, :func:`vllm_v0_forward_bytes_per_token`: the same MLP
    tensors) and then, still holding the [T, H] hidden states, ``_dummy_sampler_run`` over the last token of each of
    the ``min(max_num_tokens, max_num_reqs)`` dummy requests. Every TP rank samples (V1 all-gathers the logits), so
    the peak does not shrink with TP.

    Worked example, Llama-3.1-8B on H100 (T 8192, S 1024): forward 8192 x 110,592 B = 0.84 GiB; sampler at 0.19
    (``triton``) 1024 x 128,256 x 14 B + 8192 x 4096 x 2 B = 1.77 GiB (the llm-d v0.19 log: 1.89 GiB); at 0.11
    (``native``) 1024 x 128,256 x 38 B + 64 MiB = 4.71 GiB (the §2.2 constant: 4.8 GiB).

    >>> from planner.catalog import get_model
    >>> m = get_model("llama-3.1-8b")
    >>> round(vllm_v1_activation_bytes(m, engine_version="0.19.0") / 2**30, 2)
    1.77
    >>> round(vllm_v1_activation_bytes(m, engine_version="0.11.0") / 2**30, 2)
    4.71
    """
    tokens = int(check_number("max_num_batched_tokens", max_num_batched_tokens, minimum=1, integer=True))
    seqs = int(check_number("max_num_seqs", max_num_seqs, minimum=1, integer=True))
    if act_bytes is None:  # the model dtype (``--dtype float32`` runs activations and logits in fp32)
        act_bytes = 4.0 if model.weight_dtype in ("fp32", "float32") else 2.0
    per_token = vllm_v0_forward_bytes_per_token(model, tp=tp, act_bytes=act_bytes)
    if per_token is None or not model.vocab_size:
        return None
    path = sampler or vllm_v1_default_sampler(engine_version)
    per_logit = vllm_v1_sampler_bytes_per_logit(path, logits_bytes=act_bytes)
    sampler_peak = min(seqs, tokens) * model.vocab_size * per_logit + tokens * model.hidden_size * act_bytes
    return max(tokens * per_token, sampler_peak)


VLLM_V1_ANCHOR_SEQS = 1024
"""The ``max_num_seqs`` at which both sets of V1 constants were measured: H100 ``vllm serve`` defaults (1024
sequences, 8192 batched tokens; :func:`vllm_v1_default_max_num_seqs`)."""


def vllm_v1_scaled_activation_bytes(
    model: ModelSpec,
    *,
    tp: int = 1,
    max_num_batched_tokens: int | None = None,
    max_num_seqs: int | None = None,
    engine_version: str | None = None,
    act_bytes: float | None = None,
) -> float:
    """vLLM V1's activation peak (bytes): the family constant at its measured setup, scaled by the shape-derived
    peak away from it.

    ``act = A_family · D(T, S) / D(8192, 1024)`` with ``D`` = :func:`vllm_v1_activation_bytes` for this model
    (``T`` batched tokens, ``S`` = ``max_num_seqs``, default 1024). At the setup the constants were measured at
    (H100 defaults, T 8192, S 1024) the ratio is 1, so the constants' level is kept; elsewhere (A100 / <70 GiB GPUs
    profile 256 sequences, other batch sizes) the ratio carries how the forward and sampler tensors grow with T
    and S. This replaces the former ***heuristic*** ``max(1, T / 8192)``: the sampler's [S, V] tensors, not the
    forward pass, set the peak at the default setup, so the peak follows S and barely T. Models ``D`` does not cover
    (MoE, MLA) keep :func:`activation_peak_bytes`.

    Why not ``D`` alone: on the five llm-d v0.19 logs that state the measured peak, ``D`` is 3-24% low (1.77 / 3.47
    / 3.58 / 1.69 / 1.84 GiB against 1.89 / 3.65 / 3.99 / 2.21 / 1.96; mean absolute error 0.27 GiB against the
    constants' 0.14 GiB), so the constants stay the level (docs/accuracy.md).

    Worked example, Qwen3-0.6B on an A100 (S 256, T 8192, 0.10: ``native``): D(8192, 256) = 256 x 151,936 x 38 B
    + 8192 x 1024 x 2 B = 1.39 GiB, D(8192, 1024) = 5.52 GiB, so 5.6 GiB x 0.252 = 1.41 GiB.

    >>> from planner.catalog import get_model
    >>> m = get_model("llama-3.1-8b")
    >>> round(vllm_v1_scaled_activation_bytes(m) / 2**30, 2), round(
    ...     vllm_v1_scaled_activation_bytes(m, max_num_seqs=256) / 2**30, 2)
    (4.8, 1.25)
    """
    base = activation_peak_bytes(model, engine_version=engine_version)
    tokens = VLLM_DEFAULT_BATCHED_TOKENS if max_num_batched_tokens is None else max_num_batched_tokens
    seqs = VLLM_V1_ANCHOR_SEQS if max_num_seqs is None else max_num_seqs
    derived = vllm_v1_activation_bytes(
        model, tp=tp, max_num_batched_tokens=tokens, max_num_seqs=seqs, engine_version=engine_version,
        act_bytes=act_bytes,
    )
    if derived is None:
        return activation_peak_bytes(
            model, max_num_batched_tokens=max_num_batched_tokens, engine_version=engine_version
        )
    at_anchor = vllm_v1_activation_bytes(
        model, tp=tp, max_num_batched_tokens=VLLM_DEFAULT_BATCHED_TOKENS, max_num_seqs=VLLM_V1_ANCHOR_SEQS,
        engine_version=engine_version, act_bytes=act_bytes,
    )
    return base * derived / at_anchor


def non_torch_bytes(*, tp: int, engine_version: str | None = None) -> float:
    """vLLM non-torch memory increase during profiling (bytes): 0.15 GiB at TP=1, 0.6 GiB at TP>=2 (§2.2).

    >>> non_torch_bytes(tp=1) / 2**30, non_torch_bytes(tp=4) / 2**30
    (0.15, 0.6)
    """
    tp = int(check_number("tp", tp, minimum=1, integer=True))
    _, table = _vllm_profile(engine_version)
    return table[1 if tp == 1 else 2] * GIB


def default_reserve_bytes(
    model: ModelSpec,
    *,
    tp: int,
    engine: str = "vllm",
    max_num_batched_tokens: int | None = None,
    engine_version: str | None = None,
    max_num_seqs: int | None = None,
    act_bytes: float | None = None,
) -> float:
    """Non-KV, non-weight memory one GPU reserves (bytes): activation peak + non-torch memory (M9, §2.2).

    ``reserve = act + non_torch(TP)``. vLLM V1: the family constant scaled by the shape-derived peak
    (:func:`vllm_v1_scaled_activation_bytes`, ``max_num_seqs`` default 1024, the constants' setup); vLLM V0: the
    activation derived from the model's shapes (:func:`vllm_v0_activation_bytes`, profile batch
    ``max_num_batched_tokens``, default 2048); TensorRT-LLM: the constant scaled by ``max(1, T / 8192)``.
    ``engine_version`` >= 0.17 selects the v0.17+ constants
    (:data:`VLLM_V017_ACTIVATION_GIB`). SGLang and TensorRT-LLM budget their reserve differently
    (see :func:`kv_capacity`); this number is the vLLM-style reserve the generic memory model uses.

    >>> from planner.catalog import get_model
    >>> round(default_reserve_bytes(get_model("llama-3.1-8b"), tp=1) / 2**30, 2)
    4.95
    >>> round(default_reserve_bytes(get_model("qwen3-30b-a3b"), tp=2) / 2**30, 2)
    8.6
    """
    key = normalize_engine(engine, engine_version)
    if key == "vllm-v0":
        tokens = max_num_batched_tokens or vllm_v0_profile_tokens(2048, engine_version=engine_version)
        return vllm_v0_activation_bytes(
            model, tp=tp, max_num_batched_tokens=tokens, engine_version=engine_version
        ) + non_torch_bytes(tp=tp, engine_version=engine_version)
    if key == "vllm":
        return vllm_v1_scaled_activation_bytes(
            model, tp=tp, max_num_batched_tokens=max_num_batched_tokens, max_num_seqs=max_num_seqs,
            engine_version=engine_version, act_bytes=act_bytes,
        ) + non_torch_bytes(tp=tp, engine_version=engine_version)
    return activation_peak_bytes(
        model, max_num_batched_tokens=max_num_batched_tokens, engine_version=engine_version
    ) + non_torch_bytes(tp=tp, engine_version=engine_version)


# ---------------------------------------------------------------------------------------------------------------
# Engine definitions, each pinned to one version with that version's defaults.

@dataclass(frozen=True, kw_only=True)
class EngineDefaults:
    """The defaults of one serving engine at one version (the values the engine uses when a flag is not given)."""

    engine: str
    version: str
    memory_fraction: float | None  # None: computed (SGLang's reserved-memory heuristic)
    block_size: int
    max_num_batched_tokens: int | None
    source: str


ENGINE_DEFAULTS = {
    "vllm": EngineDefaults(
        engine="vllm", version="0.11.0", memory_fraction=0.9, block_size=16, max_num_batched_tokens=8192,
        source="vllm-project/vllm v0.11.0: EngineArgs (gpu_memory_utilization 0.9, block_size 16), "
        "gpu_worker.determine_available_memory, kv_cache_utils._report_kv_cache_config",
    ),
    "vllm-v0": EngineDefaults(
        engine="vllm-v0", version="0.6.6", memory_fraction=0.9, block_size=16, max_num_batched_tokens=None,
        source="vllm-project/vllm v0.6.6: worker.determine_num_available_blocks (profile run at "
        "max_num_batched_tokens = max(max_model_len, 2048) without chunked prefill)",
    ),
    "sglang": EngineDefaults(
        engine="sglang", version="0.5.3", memory_fraction=None, block_size=1, max_num_batched_tokens=None,
        source="sgl-project/sglang v0.5.3: model_runner.profile_max_num_token, "
        "server_args._handle_gpu_memory_settings (PR #10975 reserved-memory heuristic)",
    ),
    "trtllm": EngineDefaults(
        engine="trtllm", version="1.0.0", memory_fraction=0.9, block_size=32, max_num_batched_tokens=8192,
        source="NVIDIA/TensorRT-LLM v1.0: KvCacheConfig.free_gpu_memory_fraction 0.9, tokens_per_block 32",
    ),
}

_ENGINE_ALIASES = {
    "vllm": "vllm", "vllm-v1": "vllm", "vllm_v1": "vllm", "v1": "vllm",
    "vllm-v0": "vllm-v0", "vllm_v0": "vllm-v0", "v0": "vllm-v0",
    "sglang": "sglang", "sgl": "sglang",
    "trtllm": "trtllm", "trt-llm": "trtllm", "tensorrt-llm": "trtllm", "tensorrt_llm": "trtllm",
}


def normalize_engine(engine: str, engine_version: str | None = None) -> str:
    """The engine key for ``engine`` (case-insensitive; ``vllm`` with a version below 0.8, where V1 became the
    default engine, means V0).

    >>> normalize_engine("vLLM"), normalize_engine("vllm", "0.6.3"), normalize_engine("TensorRT-LLM")
    ('vllm', 'vllm-v0', 'trtllm')
    """
    key = _ENGINE_ALIASES.get(str(engine).strip().lower())
    if key is None:
        raise ArgumentError("engine", engine, "one of vllm, vllm-v0, sglang, trtllm")
    if key == "vllm" and engine_version:
        if _version_tuple(engine_version) < (0, 8):
            key = "vllm-v0"
    return key


def _version_tuple(version: str) -> tuple[int, ...]:
    parts = []
    for piece in str(version).strip().lstrip("v").split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    if not parts:
        raise ArgumentError("engine_version", version, "a version such as 0.11.0")
    return tuple(parts)


# ---------------------------------------------------------------------------------------------------------------
# Dtypes

_KV_DTYPE_BYTES = {
    "bf16": 2.0, "bfloat16": 2.0, "fp16": 2.0, "float16": 2.0, "half": 2.0,
    "fp32": 4.0, "float32": 4.0, "float": 4.0,
    "fp8": 1.0, "fp8_e4m3": 1.0, "fp8_e5m2": 1.0, "int8": 1.0, "fp8_ds_mla": 1.0,
}

_WEIGHT_DTYPE_BITS = {
    "bf16": 16.0, "fp16": 16.0, "fp32": 32.0,
    "fp8": 8.0, "int8": 8.0, "w8a8": 8.0,
    # 4-bit group quantization (AWQ/GPTQ, group 128): 4 bits + one fp16 scale and one 4-bit zero per 128 weights.
    "int4": 4.0 + (16 + 4) / 128, "awq": 4.0 + (16 + 4) / 128, "gptq": 4.0 + (16 + 4) / 128,
    # MXFP4: 4-bit values + one 8-bit shared exponent per 32 values = 4.25 bits (M1).
    "mxfp4": 4.25, "nvfp4": 4.0 + 8 / 16,
}


def kv_dtype_bytes(kv_cache_dtype: str, model: ModelSpec, *, weight_dtype: str = "auto") -> float:
    """Bytes per cached element: ``auto`` is the model's activation dtype (bf16/fp16 = 2, fp32 = 4); fp8/int8 = 1 (M6).

    >>> from planner.catalog import get_model
    >>> kv_dtype_bytes("auto", get_model("llama-3.1-8b")), kv_dtype_bytes("FP8", get_model("llama-3.1-8b"))
    (2.0, 1.0)
    """
    name = str(kv_cache_dtype).strip().lower()
    if name == "auto":
        model_dtype = model.weight_dtype if str(weight_dtype).strip().lower() == "auto" else str(weight_dtype).lower()
        return 4.0 if model_dtype in ("fp32", "float32") else 2.0
    if name not in _KV_DTYPE_BYTES:
        raise ArgumentError("kv_cache_dtype", kv_cache_dtype, "one of auto, " + ", ".join(sorted(_KV_DTYPE_BYTES)))
    return _KV_DTYPE_BYTES[name]


def _embedding_params(model: ModelSpec) -> float:
    """Embedding (+ untied LM head) parameters, kept in 16 bits by quantized checkpoints."""
    if not model.vocab_size:
        return 0.0
    # Tied embeddings are rare in the large models; count input embedding and LM head.
    return 2.0 * model.vocab_size * model.hidden_size


def weight_bytes_per_gpu(model: ModelSpec, *, tp: int = 1, pp: int = 1, weight_dtype: str = "auto") -> float:
    """Weight bytes resident on one GPU (M1): the checkpoint split over ``tp·pp`` GPUs.

    ``auto`` uses the released checkpoint (its exact size where the catalog has it, otherwise
    ``params_total × bits(weight_dtype)/8``). A quantized ``weight_dtype`` (fp8, int8, int4/awq/gptq at 4.16 bits with
    group-128 scales, mxfp4 at 4.25 bits, nvfp4 at 4.5 bits) applies to every parameter except the embeddings and LM
    head, which stay 16-bit. Embeddings are split by TP (vocab-parallel) like every other weight.

    >>> from planner.catalog import get_model
    >>> round(weight_bytes_per_gpu(get_model("llama-3.1-8b")) / 2**30, 2)
    14.96
    >>> round(weight_bytes_per_gpu(get_model("llama-3.1-70b"), tp=4, weight_dtype="fp8") / 2**30, 2)
    16.92
    """
    tp = int(check_number("tp", tp, minimum=1, integer=True))
    pp = int(check_number("pp", pp, minimum=1, integer=True))
    name = str(weight_dtype).strip().lower()
    if name == "auto":
        if model.checkpoint_bytes:
            return model.checkpoint_bytes / (tp * pp)
        name = model.weight_dtype
    if name not in _WEIGHT_DTYPE_BITS:
        raise ArgumentError("weight_dtype", weight_dtype, "one of auto, " + ", ".join(_WEIGHT_DTYPE_BITS))
    bits = _WEIGHT_DTYPE_BITS[name]
    embed = min(_embedding_params(model), model.params_total) if bits < 16 else 0.0
    total = (model.params_total - embed) * bits / 8 + embed * 2
    return total / (tp * pp)


def _layers_per_stage(model: ModelSpec, pp: int) -> tuple[int, int]:
    """(full-attention layers, sliding-window layers) of the largest pipeline stage: the smallest KV pool wins."""
    full, swa = model.full_attention_layers, model.sliding_window_layers
    if model.sliding_window and not model.layer_types:
        full, swa = 0, model.num_hidden_layers  # every layer windowed (Mistral-7B-v0.1)
    if pp == 1:
        return full, swa
    per_stage = math.ceil(model.num_hidden_layers / pp)
    share_full = math.ceil(per_stage * full / model.num_hidden_layers)
    return share_full, per_stage - share_full


def kv_bytes_per_token_layer(
    model: ModelSpec, *, tp: int = 1, kv_cache_dtype: str = "auto", weight_dtype: str = "auto"
) -> float:
    """KV bytes one layer caches per token on one GPU (M2, M3, M6).

    GQA/MHA: ``ceil(n_kv/TP)·(d_k + d_v)·b`` (heads replicated when TP > n_kv); MLA:
    ``(kv_lora_rank + qk_rope_head_dim)·b``, the same on every rank; vLLM's ``fp8_ds_mla`` layout is 656 bytes.

    >>> from planner.catalog import get_model
    >>> kv_bytes_per_token_layer(get_model("llama-3.1-70b"), tp=16)
    512.0
    >>> kv_bytes_per_token_layer(get_model("deepseek-v3"), tp=8)
    1152.0
    """
    b = kv_dtype_bytes(kv_cache_dtype, model, weight_dtype=weight_dtype)
    if model.attention == "mla":
        if str(kv_cache_dtype).strip().lower() == "fp8_ds_mla":
            return 656.0
        return float((model.kv_lora_rank or 0) + (model.qk_rope_head_dim or 0)) * b
    heads = math.ceil(model.num_key_value_heads / tp)
    return float(heads * (model.head_dim + (model.v_head_dim or model.head_dim))) * b


def kv_bytes_per_token(model: ModelSpec, *, tp: int = 1, pp: int = 1, kv_cache_dtype: str = "auto") -> float:
    """KV bytes per token on one GPU of the largest pipeline stage, every cached layer counted (M2-M3).

    >>> from planner.catalog import get_model
    >>> kv_bytes_per_token(get_model("llama-3.1-8b"))
    131072.0
    >>> kv_bytes_per_token(get_model("qwen3-235b-a22b"), tp=4)
    48128.0
    """
    full, swa = _layers_per_stage(model, pp)
    return (full + swa) * kv_bytes_per_token_layer(model, tp=tp, kv_cache_dtype=kv_cache_dtype)


# ---------------------------------------------------------------------------------------------------------------
# SGLang default memory fraction (PR #10975)

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


# ---------------------------------------------------------------------------------------------------------------
# One replica's KV capacity

@dataclass(frozen=True, kw_only=True)
class KvCapacity:
    """What one serving replica allocates for the KV cache, per GPU of its smallest pipeline stage.

    ``kv_cache_tokens`` is the number the engine logs ("GPU KV cache size" for vLLM, ``max_total_num_tokens`` for
    SGLang, max tokens for TensorRT-LLM); for hybrid sliding-window models under vLLM it is not a per-token capacity.
    ``kv_bytes_per_token`` caches one token in every layer of the stage; ``kv_bytes_per_logged_token`` is what the
    engine spends per logged token (``available / kv_cache_tokens``): vLLM's hybrid groups pad it to
    ``page · group_size · groups``, SGLang's sliding pools add ``swa_full_tokens_ratio`` of the sliding layers.
    """

    engine: str
    engine_version: str
    memory_fraction: float
    weights_gib: float
    reserve_gib: float
    available_kv_gib: float
    kv_bytes_per_token: float
    kv_bytes_per_logged_token: float
    num_blocks: int
    block_size: int
    kv_cache_tokens: int
    max_model_len: int
    blocks_per_request: int
    max_concurrency: float
    kv_groups: int


def vllm_kv_groups(full: int, swa: int) -> tuple[int, int, int]:
    """vLLM V1's hybrid KV groups: (group size, full-attention groups, sliding-window groups) (M7).

    Layers of each type are cut into groups of one size (the larger count if the two are within 1.5×, else the
    smaller), the last group of a type padded: Gemma-3-27B's 10 full and 52 sliding layers become 1 + 6 groups of 10,
    so 60 sliding layers' worth of pages. Ref: vLLM ``kv_cache_utils._get_kv_cache_groups_uniform_page_size``;
    vllm-project/vllm #54458 (page alignment in hybrid models).

    >>> vllm_kv_groups(10, 52), vllm_kv_groups(21, 21), vllm_kv_groups(32, 0)
    ((10, 1, 6), (21, 1, 1), (32, 1, 0))
    """
    if not swa:
        return full, 1, 0
    if not full:
        return swa, 0, 1
    small, large = min(full, swa), max(full, swa)
    size = large if large / small < 1.5 else small
    return size, math.ceil(full / size), math.ceil(swa / size)


def kv_capacity(
    model,
    gpu,
    *,
    tp: int = 1,
    pp: int = 1,
    gpu_memory_utilization: float | None = None,
    kv_cache_dtype: str = "auto",
    weight_dtype: str = "auto",
    engine: str = "vllm",
    engine_version: str | None = None,
    max_model_len: int | None = None,
    max_num_batched_tokens: int | None = None,
    max_num_seqs: int | None = None,
    block_size: int | None = None,
    reserve_gib: float | None = None,
    weights_gib: float | None = None,
) -> KvCapacity:
    """KV cache one replica allocates, as the engine computes and logs it (M9, §2.1, M7, M11).

    - vLLM V1 (>= 0.10, pinned 0.11.0): ``avail = HBM·util − weights − activation − non_torch``;
      ``num_blocks = avail // (page·group_size)``; logged tokens ``num_blocks // groups · block``;
      concurrency ``num_blocks / Σ_groups blocks_per_request``. The activation is the family constant scaled by
      the shape-derived peak (:func:`vllm_v1_scaled_activation_bytes`) at ``max_num_seqs`` dummy sequences (default
      :func:`vllm_v1_default_max_num_seqs`: 1024 on >= 70 GiB non-A100 GPUs, else 256).
    - vLLM V0 (pinned 0.6.6): the same budget, activation derived from the model's shapes at the profile batch
      (:func:`vllm_v0_profile_tokens`: ``max(max_model_len, 2048)``, chunked-prefill budget above 32K) for the
      driver rank, which also samples (:func:`vllm_v0_activation_bytes`); logged tokens ``num_blocks·block``.
    - SGLang (pinned 0.5.3): ``KV = (HBM − weights − non_torch) − HBM·(1 − mem_fraction_static)``, default fraction
      from :func:`sglang_default_mem_fraction`; ``max_total_num_tokens = KV // cell_size`` (sliding layers sized at
      ``swa_full_tokens_ratio`` 0.8 of the full pool).
    - TensorRT-LLM (pinned 1.0): ``KV = (HBM − weights − activation − non_torch)·free_gpu_memory_fraction``.

    ``reserve_gib`` (activation + non-torch, or SGLang's non-torch) and ``weights_gib`` replace the empirical
    defaults, e.g. with the values :func:`planner.calibrate.calibrate` back-solves from a log.

    >>> cap = kv_capacity("llama-3.1-8b", "h100-sxm", max_model_len=8192)
    >>> round(cap.available_kv_gib, 2), cap.kv_cache_tokens, round(cap.max_concurrency, 2)
    (51.78, 424144, 51.78)
    """
    from planner.catalog import get_gpu, get_model

    spec = model if isinstance(model, ModelSpec) else get_model(model)
    card = gpu if isinstance(gpu, GpuSpec) else get_gpu(gpu)
    tp = int(check_number("tp", tp, minimum=1, integer=True))
    pp = int(check_number("pp", pp, minimum=1, integer=True))
    key = normalize_engine(engine, engine_version)
    defaults = ENGINE_DEFAULTS[key]
    version = engine_version or defaults.version
    hbm = float(card.hbm_bytes)

    if max_model_len is None:
        max_model_len = spec.max_position_embeddings or 8192
    max_len = int(check_number("max_model_len", max_model_len, minimum=1, integer=True))
    if block_size is None:
        block_size = defaults.block_size
    block = int(check_number("block_size", block_size, minimum=1, integer=True))
    if max_num_batched_tokens is None:
        max_num_batched_tokens = defaults.max_num_batched_tokens or vllm_v0_profile_tokens(
            max_len, engine_version=version
        )
    batched = int(check_number("max_num_batched_tokens", max_num_batched_tokens, minimum=1, integer=True))

    if gpu_memory_utilization is None:
        fraction = defaults.memory_fraction
        if fraction is None:
            fraction = sglang_default_mem_fraction(hbm, tp=tp, pp=pp)
    else:
        fraction = check_fraction("gpu_memory_utilization", gpu_memory_utilization, allow_zero=False)

    w_bytes = (
        weight_bytes_per_gpu(spec, tp=tp, pp=pp, weight_dtype=weight_dtype)
        if weights_gib is None
        else check_number("weights_gib", weights_gib, minimum=0) * GIB
    )
    if reserve_gib is not None:
        reserve = check_number("reserve_gib", reserve_gib) * GIB
    elif key == "sglang":
        # CUDA context + NCCL/custom all-reduce buffers, gone before SGLang measures free memory: the same physical
        # quantity as vLLM's non-torch memory, so the recent measurements apply (0.25 GiB TP=1, 2.1 GiB TP>=2).
        reserve = VLLM_V017_NON_TORCH_GIB[1 if tp == 1 else 2] * GIB
    else:
        # V0: the activation is derived from the shapes at the profile batch (vllm_v0_profile_tokens); V1 scales
        # the measured constants by the shape-derived peak (batch and dummy sequences); TRT-LLM by the batch.
        seqs = max_num_seqs
        if key == "vllm" and seqs is None:  # V1 profiles its default sequences, which depend on the GPU
            seqs = vllm_v1_default_max_num_seqs(card)
        reserve = default_reserve_bytes(
            spec, tp=tp, engine=key, max_num_batched_tokens=batched, engine_version=engine_version,
            max_num_seqs=seqs, act_bytes=kv_dtype_bytes("auto", spec, weight_dtype=weight_dtype),
        )

    per_layer = kv_bytes_per_token_layer(spec, tp=tp, kv_cache_dtype=kv_cache_dtype, weight_dtype=weight_dtype)
    full, swa = _layers_per_stage(spec, pp)
    per_token = (full + swa) * per_layer
    window = spec.sliding_window or max_len

    if key == "sglang":
        avail = (hbm - w_bytes - reserve) - hbm * (1 - fraction)
        cell = per_layer * (full + 0.8 * swa) if full else per_layer * swa
        logged_cost = cell
        tokens = max(0, int(avail // cell))
        num_blocks, groups, blocks_req = tokens, 1, max_len
        logged = tokens
    elif key == "trtllm":
        avail = (hbm - w_bytes - reserve) * fraction
        tokens = max(0, int(avail // per_token))
        logged_cost = per_token
        num_blocks = tokens // block
        groups = 1
        blocks_req = math.ceil(max_len / block)
        logged = num_blocks * block
    else:
        avail = hbm * fraction - w_bytes - reserve
        if key == "vllm-v0":  # V0 has no hybrid allocator: every layer caches the full context
            full, swa = full + swa, 0
        group_size, full_groups, swa_groups = vllm_kv_groups(full, swa)
        page = per_layer * block
        num_blocks = max(0, int(avail // (page * group_size)))
        groups = full_groups + swa_groups
        swa_tokens = min(window - 1 + batched, max_len)
        blocks_req = full_groups * math.ceil(max_len / block) + swa_groups * (math.ceil(swa_tokens / block) + 1)
        if groups == 1:
            logged = num_blocks * block
            logged_cost = per_token
        else:
            logged = num_blocks // groups * block
            logged_cost = per_layer * group_size * groups
    concurrency = num_blocks / blocks_req if blocks_req else 0.0
    if key == "sglang":
        concurrency = tokens / max_len
    return KvCapacity(
        engine=key,
        engine_version=version,
        memory_fraction=fraction,
        weights_gib=w_bytes / GIB,
        reserve_gib=reserve / GIB,
        available_kv_gib=avail / GIB,
        kv_bytes_per_token=per_token,
        kv_bytes_per_logged_token=logged_cost,
        num_blocks=num_blocks,
        block_size=block,
        kv_cache_tokens=logged,
        max_model_len=max_len,
        blocks_per_request=blocks_req,
        max_concurrency=concurrency,
        kv_groups=groups,
    )
