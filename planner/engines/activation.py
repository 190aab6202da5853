"""vLLM's activation peak and non-torch memory: the measured constants (§2.2) and the V0/V1 models derived from the
model's shapes (forward pass and sampler), which give the reserve every engine budget subtracts.

Pure functions, no I/O. Formula IDs refer to ``docs/method.md``: M9 (KV budget by engine), §2.2 (empirical
non-KV constants).
"""

from __future__ import annotations

from planner.defaults import DEFAULT_MAX_NUM_BATCHED_TOKENS
from planner.engines.common import INIT_SNAPSHOT_GIB, has_nvls, normalize_engine, version_tuple
from planner.errors import ArgumentError, check_number
from planner.specs import GIB, GpuSpec, ModelSpec

# §2.2, llm-d capacity_planner (llm-d/llm-d-benchmark config_explorer/src/config_explorer/capacity_planner.py at
# commit 22bb987; llm-d-incubation/llm-d-planner at commit e50305a): vLLM activation peak measured on H100 at the
# default max_num_batched_tokens; constant in max_model_len.
VLLM_ACTIVATION_GIB = {"llama": 4.8, "qwen": 5.6, "moe": 8.0, "multimodal": 2.5}
"""vLLM activation peak by model family (GiB, H100, default ``max_num_batched_tokens``). Source: llm-d."""

VLLM_NON_TORCH_GIB = {1: 0.15, 2: 0.6}
"""vLLM non-torch memory (CUDA context, NCCL buffers): 0.15 GiB at TP=1, 0.6 GiB at TP>=2. Source: llm-d
capacity_planner empirical vLLM memory results."""

VLLM_DEFAULT_BATCHED_TOKENS = DEFAULT_MAX_NUM_BATCHED_TOKENS
"""vLLM V1's default ``max_num_batched_tokens`` (:data:`planner.defaults.DEFAULT_MAX_NUM_BATCHED_TOKENS`), where the
activation constants were measured."""


VLLM_V017_ACTIVATION_GIB = {"llama": 1.9, "qwen": 2.2, "gemma": 3.8, "moe": 2.7, "multimodal": 2.5}
"""vLLM >= 0.17 activation peak (GiB, H100, 8192 batched tokens): v0.17 cut the profiled activation by ~60%.
Source: llm-d-incubation/llm-d-planner ``accuracy/accuracy_report.md`` at commit 875a4fd (v0.19.0 sweep: Llama
0.77-1.97, Qwen2/3 2.21-2.29, Gemma2/3 3.62-3.99, Qwen3-MoE 2.68, Llama-4 3.19, GptOss 2.87 GiB)."""

VLLM_V017_NON_TORCH_GIB = {1: 0.25, 2: 2.1}
"""vLLM >= 0.17 non-torch memory: 0.25 GiB at TP=1, ~2.1 GiB at TP>=2 (NCCL/custom all-reduce buffers). Source: the
same llm-d-planner report (observed means 0.27 / 2.08 / 2.17 GiB at TP 1 / 2 / 4)."""


def _vllm_profile(engine_version: str | None) -> tuple[dict[str, float], dict[int, float]]:
    """The (activation, non-torch) constants for a vLLM version: §2.2 up to 0.16, the v0.17+ measurements after."""
    if engine_version and version_tuple(engine_version) >= (0, 17):
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
    if engine_version and version_tuple(engine_version) < (0, 7):
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
    samples: bool = True,
) -> float:
    """vLLM V0's "PyTorch activation peak memory" on the driver rank (bytes), from the model's shapes.

    ``act = max(T·forward_per_token, S·V·38 + T·H·b)`` with ``T = max_num_batched_tokens``,
    ``S = min(max_num_seqs, T)`` dummy prompts and ``V = vocab_size``: the forward pass
    (:func:`vllm_v0_forward_bytes_per_token`) and the sampler (:data:`VLLM_V0_SAMPLER_BYTES_PER_LOGIT`, while the
    final hidden states [T, H] are still held) peak one after the other. V0 samples on the driver worker only
    (``ModelRunner.execute_model``: "if not self.is_driver_worker: return"), so rank 0 has the larger peak and, the
    executor taking the minimum of the ranks' block counts, it sets the logged KV size.

    Models this does not cover (MoE, MLA, no ``intermediate_size``/``vocab_size``) keep the §2.2 constant.

    ``samples=False``: a pipeline stage before the last, which returns its hidden states before the sampler
    (``ModelRunner.execute_model``: ``if not get_pp_group().is_last_rank: ... return``; read in the 0.8.5 wheel):
    the forward term alone.

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
    if not samples:
        return forward
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
    if engine_version and version_tuple(engine_version) >= (0, 17):
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


def vllm_v1_large_gpu_defaults(gpu: GpuSpec, *, engine_version: str | None = None) -> tuple[bool, bool]:
    """Whether V1 gives ``gpu`` its large-GPU batch defaults: ``(tokens, sequences)``, per release.

    The rule in ``EngineArgs`` (``vllm/engine/arg_utils.py``), read in the PyPI source distributions:

    - 0.8.2 and 0.8.3: 8192 batched tokens when "h100" or "h200" is in the device name, else 2048; 1024 sequences
      on every GPU (``default_max_num_seqs = 1024`` outside the device test).
    - 0.8.4 (PR #16158, "revert the default max_num_seqs to V0 values for most hardware"): the device-name test
      for both, 1024 sequences on H100 / H200 only, else 256.
    - 0.8.5: ``device_memory >= 70 * GiB_bytes`` (the torch-visible total) for both, A100 80GB included.
    - 0.9.0 on (PR #17885): ``device_memory >= 70 * GiB_bytes and "a100" not in device_name``.

    ``engine_version`` None: the 0.9+ rule (the pinned default is 0.11.0). ***0.8.0 and 0.8.1 were not read***
    (taken as 0.8.2); ***a later >= 160 GiB tier (PR #51726, reported in vLLM #53961) is not modelled***.

    >>> from planner.catalog import get_gpu
    >>> a100 = get_gpu("a100-80gb-sxm")
    >>> [vllm_v1_large_gpu_defaults(a100, engine_version=v) for v in ("0.8.3", "0.8.4", "0.8.5", "0.9.0")]
    [(False, True), (False, False), (True, True), (False, False)]
    """
    version = version_tuple(engine_version) if engine_version else (0, 9, 0)
    name = f"{gpu.name} {gpu.display_name}".lower()
    by_name = "h100" in name or "h200" in name
    big = gpu.engine_total_bytes >= 70 * GIB
    if version < (0, 8, 4):
        return by_name, True
    if version < (0, 8, 5):
        return by_name, by_name
    if version < (0, 9, 0):
        return big, big
    big = big and "a100" not in name
    return big, big


def vllm_v1_default_max_num_seqs(gpu: GpuSpec, *, engine_version: str | None = None) -> int:
    """V1's default ``max_num_seqs`` on ``gpu``: 1024 on GPUs with >= 70 GiB that are not A100s, else 256 (0.9+;
    earlier releases: :func:`vllm_v1_large_gpu_defaults`).

    ``EngineArgs.get_batch_defaults`` (``vllm/engine/arg_utils.py``, 0.9+): "if device_memory >= 70 * GiB_bytes and
    'a100' not in device_name" the defaults are 1024 sequences (``LLM`` and ``vllm serve``; 16384 / 8192 batched
    tokens), otherwise 256 (8192 / 2048 tokens; A100s excluded after PR #17885).

    >>> from planner.catalog import get_gpu
    >>> vllm_v1_default_max_num_seqs(get_gpu("h100-sxm")), vllm_v1_default_max_num_seqs(get_gpu("a100-80gb-sxm"))
    (1024, 256)
    >>> vllm_v1_default_max_num_seqs(get_gpu("l40s"), engine_version="0.8.3")
    1024
    """
    return 1024 if vllm_v1_large_gpu_defaults(gpu, engine_version=engine_version)[1] else 256


def vllm_v1_forward_bytes_per_token(model: ModelSpec, *, tp: int = 1, act_bytes: float = 2.0) -> float | None:
    """Peak bytes per profiled token of V1's dummy forward pass: dense SwiGLU models as V0
    (:func:`vllm_v0_forward_bytes_per_token`), MoE models with their fused-experts workspaces, whatever their
    attention (MLA included); ``None`` for dense MLA models and for models without an (expert) FFN size.

    MoE: ``b·(k·(3·N + H) + (3 + [TP>1] + [shared])·H)`` with ``N = I_e/TP`` (one routed expert's FFN width per
    rank, :attr:`ModelSpec.expert_intermediate_size`: ``moe_intermediate_size``, not DeepSeek's dense 18,432) and
    ``k`` experts per token: ``fused_experts_impl`` (``vllm/model_executor/layers/fused_moe/fused_moe.py``)
    allocates ``intermediate_cache1`` [T, k, 2N], ``intermediate_cache2`` [T·k, N] and ``intermediate_cache3``
    [T, k, H] beside the layer input, the residual (and the all-reduce output at TP > 1); a model with shared experts
    also holds their output [T, H] while the routed experts run (``DeepseekV2MoE.forward``: ``shared_output =
    self.shared_experts(hidden_states)`` before ``self.experts(...)``; read in the 0.8.5 wheel). The fused-experts
    path does not depend on the attention, and the attention's own workspaces are not counted: ***an estimate, not
    read in the source***, of MLA's prefill tensors (decompressed K and V, query, output: about 1.9 kB per head and
    token in 16 bits) puts them below the MoE layer's at every TP where DeepSeek-V3's weights fit (TP >= 2: 166 kB
    against 236 kB per token at TP 2) and for DeepSeek-V2-Lite at TP 1 (43 kB against 92 kB). An MoE model with
    dense layers (``moe_layers``: DeepSeek's first three, Llama-4-Maverick's every other) peaks at the larger of the
    two layer kinds (the dense term with ``dense_intermediate_size``). The router logits ([T, E]) are not counted;
    the sampler sets the peak at the default setups (below).

    Worked example, gpt-oss-120b at TP 4 (k 4, I 2880, H 2880): 2·(4·(3·720 + 2880) + 4·2880) = 63,360 B per token;
    DeepSeek-R1 at TP 8 (k 8, I_e 2048, H 7168, one shared expert): 2·(8·(3·256 + 7168) + 5·7168) = 198,656 B
    (the dense layers: 2·(3·2304 + 4·7168) = 71,168 B).

    >>> from planner.catalog import get_model
    >>> vllm_v1_forward_bytes_per_token(get_model("gpt-oss-120b"), tp=4)
    63360.0
    >>> vllm_v1_forward_bytes_per_token(get_model("llama-3.1-8b"))
    110592.0
    >>> vllm_v1_forward_bytes_per_token(get_model("deepseek-r1"), tp=8)
    198656.0
    """
    if model.architecture != "moe":
        return vllm_v0_forward_bytes_per_token(model, tp=tp, act_bytes=act_bytes)
    inter = model.expert_intermediate_size
    if not inter or not model.num_experts_per_tok:
        return None
    tp = int(check_number("tp", tp, minimum=1, integer=True))
    h = model.hidden_size
    k = model.num_experts_per_tok
    held = 3 + (1 if tp > 1 else 0)
    moe = k * (3 * inter / tp + h) + (held + (1 if model.num_shared_experts else 0)) * h
    dense = 0.0
    if model.moe_layers and len(model.moe_layers) < model.num_hidden_layers:
        dense = 3 * (model.dense_intermediate_size or model.intermediate_size or 0) / tp + held * h
    return act_bytes * max(moe, dense)


def vllm_v1_default_max_num_batched_tokens(gpu: GpuSpec, *, engine_version: str | None = None) -> int:
    """V1's default ``max_num_batched_tokens`` for ``vllm serve`` on ``gpu``: 8192 on GPUs with >= 70 GiB that are
    not A100s, else 2048 (the same ``EngineArgs.get_batch_defaults`` rule as :func:`vllm_v1_default_max_num_seqs`;
    the ``LLM`` class defaults are 16384 / 8192; before 0.9 :func:`vllm_v1_large_gpu_defaults`). The engine logs
    it: "Chunked prefill is enabled with max_num_batched_tokens=2048" (dennislee22/vLLM-benchmarking, 0.10.1.1 on
    A100 80GB).

    >>> from planner.catalog import get_gpu
    >>> vllm_v1_default_max_num_batched_tokens(get_gpu("h100-sxm")), vllm_v1_default_max_num_batched_tokens(
    ...     get_gpu("a100-80gb-sxm"))
    (8192, 2048)
    """
    return 8192 if vllm_v1_large_gpu_defaults(gpu, engine_version=engine_version)[0] else 2048


def vllm_v1_activation_bytes(
    model: ModelSpec,
    *,
    tp: int = 1,
    max_num_batched_tokens: int = VLLM_DEFAULT_BATCHED_TOKENS,
    max_num_seqs: int = 1024,
    engine_version: str | None = None,
    sampler: str | None = None,
    act_bytes: float | None = None,
    samples: bool = True,
) -> float | None:
    """vLLM V1's "torch peak memory increase" of ``profile_run`` (bytes), from the model's shapes; ``None`` for
    models this does not cover (dense MLA, no (expert) FFN size / ``vocab_size``), which keep the constants.

    ``samples=False``: a pipeline stage before the last, where ``profile_run`` skips ``_dummy_sampler_run``
    (``if get_pp_group().is_last_rank``; read in the 0.8.5 and 0.19.0 wheels): the forward term alone.

    ``act = max(T·forward_per_token, S·V·B + T·H·b)`` with ``T = max_num_batched_tokens``,
    ``S = min(max_num_seqs, T)``, ``V = vocab_size`` and ``B`` from :func:`vllm_v1_sampler_bytes_per_logit`
    (sampler path from :func:`vllm_v1_default_sampler` unless given). ``profile_run`` runs
    ``_dummy_run(max_num_tokens)`` (the forward peak, :func:`vllm_v1_forward_bytes_per_token`: V0's MLP
    tensors, or the fused-experts workspaces of MoE models) and then, still holding the [T, H] hidden states,
    ``_dummy_sampler_run`` over the last token of each of the ``min(max_num_tokens, max_num_reqs)`` dummy requests.
    Every TP rank samples (V1 all-gathers the logits), so the peak does not shrink with TP.

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
    per_token = vllm_v1_forward_bytes_per_token(model, tp=tp, act_bytes=act_bytes)
    if per_token is None or not model.vocab_size:
        return None
    if not samples:
        return tokens * per_token
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
    sampler: str | None = None,
    samples: bool = True,
) -> float:
    """vLLM V1's activation peak (bytes): the family constant at its measured setup, scaled by the shape-derived
    peak away from it.

    ``act = A_family · D(T, S) / D(8192, 1024)`` with ``D`` = :func:`vllm_v1_activation_bytes` for this model
    (``T`` batched tokens, ``S`` = ``max_num_seqs``, default 1024). At the setup the constants were measured at
    (H100 defaults, T 8192, S 1024) the ratio is 1, so the constants' level is kept; elsewhere (A100 / <70 GiB GPUs
    profile 256 sequences, other batch sizes) the ratio carries how the forward and sampler tensors grow with T
    and S. This replaces the former ***heuristic*** ``max(1, T / 8192)``: the sampler's [S, V] tensors, not the
    forward pass, set the peak at the default setup, so the peak follows S and barely T. Models ``D`` does not cover
    (dense MLA, MoE without an expert FFN size) keep :func:`activation_peak_bytes`.

    ``samples=False`` (a pipeline stage before the last, which skips the dummy sampler run): ``D`` is the forward
    term alone, the anchor unchanged, so such a stage keeps the constant's level for the forward pass only (Llama-3.1-8B
    at v0.19, PP 2: 1.9 x 0.84 / 1.77 = 0.90 GiB; the llm-d PP 2 log's first stage prints 1.10 GiB, its last 2.01).

    ``sampler``: the top-k/top-p path the engine ran (the log says it: "Using FlashInfer for top-p & top-k
    sampling", or "FlashInfer is not available. Falling back to the PyTorch-native implementation"); ``D(T, S)``
    takes it, the anchor ``D(8192, 1024)`` keeps the version's default path, the one the constants were measured
    with. None: the version's default (:func:`vllm_v1_default_sampler`).

    Why not ``D`` alone: on the five llm-d v0.19 logs that state the measured peak, ``D`` is 3-24% low (1.77 / 3.47
    / 3.58 / 1.69 / 1.84 GiB against 1.89 / 3.65 / 3.99 / 2.21 / 1.96; mean absolute error 0.27 GiB against the
    constants' 0.14 GiB), so the constants stay the level (docs/accuracy.md).

    Worked example, Qwen3-0.6B on an A100 (S 256, T 8192, 0.10: ``native``): D(8192, 256) = 256 x 151,936 x 38 B
    + 8192 x 1024 x 2 B = 1.39 GiB, D(8192, 1024) = 5.52 GiB, so 5.6 GiB x 0.252 = 1.41 GiB. Qwen2-7B on an A100
    with FlashInfer installed (S 256, T 2048): D = 256 x 152,064 x 14 B + 2048 x 3584 x 2 B = 0.52 GiB against
    D(8192, 1024) = 5.57 GiB native, so 5.6 GiB x 0.094 = 0.52 GiB (the 0.10.1 logs of dennislee22/vLLM-benchmarking
    leave 0.54 GiB for activation and non-torch memory together).

    >>> from planner.catalog import get_model
    >>> m = get_model("llama-3.1-8b")
    >>> round(vllm_v1_scaled_activation_bytes(m) / 2**30, 2), round(
    ...     vllm_v1_scaled_activation_bytes(m, max_num_seqs=256) / 2**30, 2)
    (4.8, 1.25)
    >>> round(vllm_v1_scaled_activation_bytes(get_model("qwen2.5-7b-instruct"), max_num_batched_tokens=2048,
    ...     max_num_seqs=256, engine_version="0.10.1", sampler="flashinfer") / 2**30, 2)
    0.52
    """
    base = activation_peak_bytes(model, engine_version=engine_version)
    tokens = VLLM_DEFAULT_BATCHED_TOKENS if max_num_batched_tokens is None else max_num_batched_tokens
    seqs = VLLM_V1_ANCHOR_SEQS if max_num_seqs is None else max_num_seqs
    derived = vllm_v1_activation_bytes(
        model, tp=tp, max_num_batched_tokens=tokens, max_num_seqs=seqs, engine_version=engine_version,
        act_bytes=act_bytes, sampler=sampler, samples=samples,
    )
    if derived is None:
        return activation_peak_bytes(
            model, max_num_batched_tokens=max_num_batched_tokens, engine_version=engine_version
        )
    at_anchor = vllm_v1_activation_bytes(
        model, tp=tp, max_num_batched_tokens=VLLM_DEFAULT_BATCHED_TOKENS, max_num_seqs=VLLM_V1_ANCHOR_SEQS,
        engine_version=engine_version, act_bytes=act_bytes,
    )
    assert at_anchor is not None  # the anchor is the shape derived above: it exists where ``derived`` does
    return base * derived / at_anchor


def non_torch_bytes(*, tp: int, engine_version: str | None = None, gpu: GpuSpec | None = None) -> float:
    """vLLM non-torch memory increase during profiling (bytes): 0.15 GiB at TP=1, 0.6 GiB at TP>=2 (§2.2; v0.17+:
    0.25 / 2.1 GiB, :data:`VLLM_V017_NON_TORCH_GIB`).

    The TP >= 2 constants were measured on H100 SXM (NVSwitch) only. On GPUs where NCCL cannot use NVLink SHARP
    (:func:`planner.engines.common.has_nvls`: PCIe cards, NVL bridge cards, A100) the TP = 1 value applies at every
    TP: ***an inference*** from the training logs (the TP >= 2 step appears with NCCL's communicator, +1.0 GiB
    already in the H100 init snapshots), not a measurement on those GPUs. ``gpu`` None: the constants as measured.

    >>> from planner.catalog import get_gpu
    >>> non_torch_bytes(tp=1) / 2**30, non_torch_bytes(tp=4) / 2**30, non_torch_bytes(tp=4, gpu=get_gpu("l4")) / 2**30
    (0.15, 0.6, 0.15)
    """
    tp = int(check_number("tp", tp, minimum=1, integer=True))
    _, table = _vllm_profile(engine_version)
    return table[2 if tp > 1 and has_nvls(gpu) else 1] * GIB


VLLM_V1_BASELINE_PROFILER = (0, 9, 1)
"""First vLLM release whose V1 worker subtracts the memory in use at start-up from its non-torch figure
(``Worker.determine_available_memory`` profiles inside ``memory_profiling(self.init_snapshot, ...)``, so only the
*increase* of non-torch memory is reserved). Read in the PyPI sdists (downloaded 2026-12-04): 0.8.4 and 0.9.0 take
``peak_memory = allocated_bytes.all.peak`` and add ``non_torch_allocations = (total − free) −
allocated_bytes.all.current`` after ``empty_cache()``, i.e. every byte on the device that torch did not allocate;
0.9.1 and 0.9.2 use the snapshot. ***0.8.0-0.8.3 and 0.8.5 were not read here***; every V1 release before 0.9.1 is
taken to have the 0.8.4 / 0.9.0 code."""


def vllm_v1_device_non_torch_bytes(*, tp: int, engine_version: str | None = None, gpu: GpuSpec | None = None) -> float:
    """Memory in use before the weights that vLLM V1 releases before 0.9.1 (:data:`VLLM_V1_BASELINE_PROFILER`)
    reserve on top of the non-torch increase (bytes): :data:`planner.engines.common.INIT_SNAPSHOT_GIB` (the CUDA
    context, 0.51 GiB; 1.53 GiB with NCCL's communicator at TP >= 2 on NVLS GPUs); 0 from 0.9.1 and for V0
    (``vllm/worker/worker.py`` subtracts its ``baseline_memory`` since 0.6.5, PR #10511).

    ``avail = HBM·util − peak_torch − ((total − free) − torch_allocated)`` in 0.8.x / 0.9.0
    (``vllm/v1/worker/gpu_worker.py``): the second term is the CUDA context and every other non-torch allocation
    on the device, including another process's memory (not modelled: a plan runs the engine alone on its GPUs).
    The 0.51 / 1.53 GiB are the H100 training logs' init snapshots; ***on other GPUs the context size is not
    measured here*** (the same figure is used, as for SGLang).

    >>> vllm_v1_device_non_torch_bytes(tp=1, engine_version="0.8.4") / 2**30
    0.51
    >>> vllm_v1_device_non_torch_bytes(tp=1, engine_version="0.9.1"), vllm_v1_device_non_torch_bytes(tp=1)
    (0.0, 0.0)
    """
    version = version_tuple(engine_version) if engine_version else None
    if version is None or not (0, 8) <= version < VLLM_V1_BASELINE_PROFILER:
        return 0.0
    tp = int(check_number("tp", tp, minimum=1, integer=True))
    return INIT_SNAPSHOT_GIB[2 if tp > 1 and has_nvls(gpu) else 1] * GIB


def default_reserve_bytes(
    model: ModelSpec,
    *,
    tp: int,
    engine: str = "vllm",
    max_num_batched_tokens: int | None = None,
    engine_version: str | None = None,
    max_num_seqs: int | None = None,
    act_bytes: float | None = None,
    sampler: str | None = None,
    gpu: GpuSpec | None = None,
    samples: bool = True,
) -> float:
    """Non-KV, non-weight memory one GPU reserves (bytes): activation peak + non-torch memory (M9, §2.2).

    ``reserve = act + non_torch(TP)``. vLLM V1: the family constant scaled by the shape-derived peak
    (:func:`vllm_v1_scaled_activation_bytes`, ``max_num_seqs`` default 1024, the constants' setup), plus, before
    0.9.1, the memory in use at start-up (:func:`vllm_v1_device_non_torch_bytes`); vLLM V0: the
    activation derived from the model's shapes (:func:`vllm_v0_activation_bytes`, profile batch
    ``max_num_batched_tokens``, default 2048); TensorRT-LLM: the constant scaled by ``max(1, T / 8192)``.
    ``engine_version`` >= 0.17 selects the v0.17+ constants
    (:data:`VLLM_V017_ACTIVATION_GIB`). ``samples=False``: a vLLM pipeline stage before the last (no sampler in its
    profile run). SGLang and TensorRT-LLM budget their reserve differently
    (see :func:`kv_capacity`); this number is the vLLM-style reserve the generic memory model uses.

    >>> from planner.catalog import get_model
    >>> round(default_reserve_bytes(get_model("llama-3.1-8b"), tp=1) / 2**30, 2)
    4.95
    >>> round(default_reserve_bytes(get_model("qwen3-30b-a3b"), tp=2) / 2**30, 2)
    8.6
    """
    key = normalize_engine(engine, engine_version=engine_version)
    if key == "vllm-v0":
        tokens = max_num_batched_tokens or vllm_v0_profile_tokens(2048, engine_version=engine_version)
        return vllm_v0_activation_bytes(
            model, tp=tp, max_num_batched_tokens=tokens, engine_version=engine_version,
            max_num_seqs=VLLM_V0_MAX_NUM_SEQS if max_num_seqs is None else max_num_seqs, samples=samples,
        ) + non_torch_bytes(tp=tp, engine_version=engine_version, gpu=gpu)
    if key == "vllm":
        return vllm_v1_scaled_activation_bytes(
            model, tp=tp, max_num_batched_tokens=max_num_batched_tokens, max_num_seqs=max_num_seqs,
            engine_version=engine_version, act_bytes=act_bytes, sampler=sampler, samples=samples,
        ) + non_torch_bytes(tp=tp, engine_version=engine_version, gpu=gpu) + vllm_v1_device_non_torch_bytes(
            tp=tp, engine_version=engine_version, gpu=gpu)
    return activation_peak_bytes(
        model, max_num_batched_tokens=max_num_batched_tokens, engine_version=engine_version
    ) + non_torch_bytes(tp=tp, engine_version=engine_version, gpu=gpu)

