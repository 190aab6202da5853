"""The time of one engine step on one replica (pure; formulas S1-S7 of ``docs/serving.md``).

A step runs every scheduled token through the model once: ``d`` decoding sequences (one token each, context ``c``)
and ``p`` prefill tokens (chunks of prompts). Its time on one replica of ``tp × pp`` GPUs is::

    t = t_fixed + max(t_gemm + t_attn + t_act, L·f_layer·(2 if MoE)) + t_comm                (S1, S7)
    t_fixed = o_engine + o_tp·log2(tp·pp) + (o_seq + o_tp_seq·log2(tp·pp))·(d + n_prefill)  (S2)
    (o_engine of TensorRT-LLM's PyTorch backend, eager_prefill=True: step_overhead_s["trtllm-pytorch"], session 15)
    (TensorRT-LLM with dp attention ranks: one rank's ⌈(d + n_prefill)/dp⌉ sequences, rule A, host_sequences)
    S2'' (vLLM V0's async output processing; tried, off: V0_ASYNC_OUTPUT_OVERLAP) overlaps the per-sequence part:
    t = o_engine + o_tp·log2(tp·pp) + max(t_body + t_comm, o_seq·(d + n_prefill))
    Rule O (TensorRT-LLM's PyTorch backend, its overlap scheduler; TRTLLM_OVERLAP_SCHEDULER, overlaps_host_work):
    t = max(t_body + t_comm, t_launch + t_fixed)     (t_launch = L·f_eager·(2 if MoE) without a CUDA graph, else 0)
    t_gemm  = max(W_read / (BW·η_w),  F_lin / (F_peak·η(M)))      η(M) = η_gemm·M/(M + M½)   (S3)
    t_attn  = max(d·KV(c) / (BW·η_kv),  A / (F_16·η_attn))                                  (S4)
    t_comm  = 2·L·[α + 2(tp−1)/tp · M·h·2 B / B_link] + (pp−1)·(α + M·h·2 B / B_link)       (S5)
    S5' (ep, dp > 1): L·[α + 2(tp_a−1)/tp_a · M·h·2 B/(dp·B_link)] + 2·L·[α + k·M·h·2 B·(ep−1)/(ep·tp·B_link)]

with ``M = d + p`` tokens, ``W_read`` the weight bytes per GPU the step touches (MoE: the shared weights plus the
experts the ``M`` tokens route to, :func:`planner.latency.experts_touched`), ``F_lin`` the GEMM FLOPs per GPU
(``2·P_body·M + 2·P_head·(d + n_prefill)``: the embedding table is a lookup, no FLOPs, and the LM head runs only
for sampled tokens), ``KV(c)`` the KV bytes one sequence's decode reads per GPU, ``A`` the attention FLOPs
(:func:`planner.latency.attention_flops`), ``B_link`` one direction of the GPU's NVLink/Infinity Fabric/PCIe.
MoE experts run at ``η_moe·η(M·k/E_touched)`` (grouped GEMM of the tokens one expert gets) (S6).
``t_act = M·B_act/(BW·η_w)``: the MoE layers' routed-token activation traffic between the grouped GEMMs (permute,
activation and sum passes; :func:`moe_activation_bytes_per_token`, S7; 0 for dense models). S8 (every layer's
norms, quantisation, RoPE and SiLU-and-mul passes, :func:`layer_activation_bytes_per_token`) was tried and is off
(:data:`LAYER_ACT_TRAFFIC`), and so is its variant S8L (each pass counted beyond the GPU's last shared cache,
:func:`layer_activation_passes`, :data:`LAYER_ACT_L2`; session 14), and so is S8T (TensorRT-LLM's PyTorch-backend
fusions, :func:`trtllm_pytorch_fusions`, :data:`LAYER_ACT_TRTLLM_FUSION`; session 14, latency21).
Pipeline stages run in sequence for one micro-batch, so a step covers all ``L`` layers at ``1/tp`` of the weights.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from planner import latency, memory
from planner.errors import ArgumentError
from planner.latency import gemm_peak_flops
from planner.memory import weight_bytes_per_gpu
from planner.serving.calibration import TRTLLM_PYTORCH, Calibration
from planner.specs import GpuSpec, ModelSpec

ACT_BYTES = 2.0
"""Bytes per activation element exchanged by tensor/pipeline parallelism (bf16)."""

EAGER_PREFILL = frozenset({"vllm-v0", "sglang"})
"""Engines whose steps with prompt tokens run without CUDA graphs (vLLM V0: ``_use_captured_graph`` needs a
decode-only batch, ``vllm/worker/model_runner.py``; SGLang: ``ModelRunner.forward`` replays a graph only when
``forward_mode.is_cuda_graph()``, i.e. decode, ``python/sglang/srt/model_executor/model_runner.py``): such a step
takes at least ``L·eager_layer_floor_s`` (twice for MoE layers). TensorRT-LLM's PyTorch backend does the same
(``PyTorchModelEngine._maybe_get_cuda_graph`` in ``tensorrt_llm/_torch/pyexecutor/model_engine.py`` returns no graph
unless ``batch.is_generation_only``), but ``engine="trtllm"`` also stands for its TensorRT-engine backend (NIM's tables
do not name theirs), so it is not in this set: ``build_replica(..., eager_prefill=True)`` asks for it."""

V0_MAX_SEQ_LEN_TO_CAPTURE = 8192
"""vLLM V0's default ``max_seq_len_to_capture`` (``EngineArgs`` and ``LLM(...)`` in 0.6 and 0.7): the longest
sequence a decode step may hold and still be replayed as a CUDA graph (``ModelRunner._use_captured_graph``:
``decode_only and not enforce_eager and max_decode_seq_len <= max_seq_len_to_capture``; the argument's help: "When a
sequence has context length larger than this, we fall back to eager mode"). :func:`v0_decode_eager` applies it."""

V0_GRAPH_SEQ_CAP = True
"""Whether :func:`v0_decode_eager` is used by the library (session 12, latency11; docs/serving.md section 4)."""


def v0_decode_eager(engine: str, *, context_tokens: float, max_seq_len_to_capture: int | None = None) -> bool:
    """Whether vLLM V0 runs its decode steps without CUDA graphs because their sequences are longer than
    ``max_seq_len_to_capture`` (:data:`V0_MAX_SEQ_LEN_TO_CAPTURE` unless given): then every step takes the eager floor
    ``L·f_eager``, as with ``enforce_eager``. The test uses the replica's mean decode context ``I + O/2`` (V0 checks the
    batch's longest sequence; for the published runs that cross the cap, every decode step is past it or none is)::

        eager  ⇔  engine is vLLM V0  and  I + O/2 > max_seq_len_to_capture

    Worked example: dstack's 32,784/2,048 runs of Llama-3.1-405B (vLLM 0.6.3, no ``--max-seq-len-to-capture``):
    33,808 > 8,192, so every decode step launches Llama's 126 layers from Python (126 × 0.41 ms = 52 ms of floor).

    >>> v0_decode_eager("vllm-v0", context_tokens=32784 + 2048 / 2), v0_decode_eager("vllm", context_tokens=33808)
    (True, False)
    >>> v0_decode_eager("vllm-v0", context_tokens=33808, max_seq_len_to_capture=65536)
    False
    """
    cap = V0_MAX_SEQ_LEN_TO_CAPTURE if max_seq_len_to_capture is None else int(max_seq_len_to_capture)
    return V0_GRAPH_SEQ_CAP and engine == "vllm-v0" and float(context_tokens) > cap


V0_ASYNC_OUTPUT_OVERLAP = False
"""Whether vLLM V0's per-sequence step cost overlaps the GPU's work (S2'', :func:`overlaps_output_processing`).
Tried and not kept (session 13, latency17, docs/serving.md): refitted, its training loss is 0.2860 against 0.2749 for
the same refit under S2 and 0.2767 before; so False, the serial sum S2 for every engine."""


def overlaps_output_processing(engine: str, *, pp: int = 1, enforce_eager: bool = False) -> bool:
    """Whether the per-sequence host cost of a step runs while the GPU computes (S2''): vLLM V0's async output
    processing, on by default (``ModelConfig.use_async_output_proc``). vLLM 0.7.3's ``ModelRunner.execute_model``
    (``vllm/worker/model_runner.py``) launches the forward and ``compute_logits``, then calls
    ``model_input.async_callback()``, i.e. ``LLMEngine._process_model_outputs`` of the *previous* step (incremental
    detokenisation, stop checks, ``RequestOutput`` creation and, under ``vllm serve``'s ``MQLLMEngine``, the
    outputs pickled and sent by ``_async_socket_engine_callback``), and only then the sampler, whose copy to the host
    waits for the GPU. ``ModelConfig.verify_async_output_proc`` (``vllm/config.py``) turns it off with pipeline
    parallelism, and ``CudaPlatform.is_async_output_supported`` (``vllm/platforms/cuda.py``, ROCm alike) with
    ``enforce_eager``. The per-sequence constant ``o_seq`` of vLLM V0 is taken as that overlapped work (splitting
    it from the serial per-sequence scheduling and input preparation would need a new constant)::

        t = o_engine + o_tp·log2(tp·pp) + max(t_body + t_comm, o_seq·(d + n_p))        (S2'')

    Off by default (:data:`V0_ASYNC_OUTPUT_OVERLAP`: tried, not kept), so every engine answers False.

    >>> overlaps_output_processing("vllm-v0"), overlaps_output_processing("vllm")
    (False, False)
    """
    return V0_ASYNC_OUTPUT_OVERLAP and engine == "vllm-v0" and pp == 1 and not enforce_eager


TRTLLM_OVERLAP_SCHEDULER = False
"""Whether a TensorRT-LLM PyTorch-backend step takes the larger of its GPU time and its host time instead of their sum
(rule O, :func:`overlaps_host_work`; session 15, latency30, docs/serving.md). Tried and **not kept**: with the
published constants the training loss rose 0.2642206 to 0.2925234 (hinge 0), so False: S2's sum for every replica."""


def overlaps_host_work(engine: str, *, pytorch_backend: bool, pp: int = 1) -> bool:
    """Whether a step's host work (all of S2) runs while the GPU runs the previous step (rule O): TensorRT-LLM's
    PyTorch backend with its default overlap scheduler. ``PyExecutor.__init__``
    (``tensorrt_llm/_torch/pyexecutor/py_executor.py``, NVIDIA/TensorRT-LLM, 1.0 era) runs
    ``_executor_loop_overlap`` unless ``disable_overlap_scheduler`` (default False, ``TorchLlmArgs``) or
    ``pp_size > 1`` (``_executor_loop_pp``). Its iteration ``n`` schedules, prepares (taking step ``n − 1``'s new
    tokens as a device tensor) and launches step ``n`` before it first waits for the GPU, on step ``n − 1``'s sampler
    event (``_update_requests``), then enqueues step ``n``'s sampling and handles step ``n − 1``'s responses
    (``_process_previous_batch``); nothing waits for step ``n`` itself. A step without a CUDA graph is launched
    kernel by kernel from Python, so its launch (the eager floor) stays serial with the rest of the host work::

        t = max(t_body + t_comm,  t_launch + h)      h = S2's o_engine + o_tp·log2(tp·pp) + o_seq·n (rule A's n)
        t_launch = L_launch·f_eager without a CUDA graph, else 0                                         (rule O)

    NIM's pre-built TensorRT engines run the C++ executor (``Executor::Impl::executionLoop``: ``forwardSync`` waits
    for the previous step before ``fetchNewRequests`` and ``forwardAsync`` schedule and launch the next), so they keep
    S2's sum, as every other engine does. ``pytorch_backend`` is the library's flag for that backend
    (``engine="trtllm"`` with ``eager_prefill=True``, :data:`EAGER_PREFILL`'s note). Off when
    :data:`TRTLLM_OVERLAP_SCHEDULER` is False.

    Worked example: a decode step of Llama-4-Maverick on 8 B200s (attention DP 8, 1,500 sequences) with 18.84 ms of
    host work and 15.8 ms on the GPU takes max(15.8, 18.84) = 18.84 ms instead of 34.6 ms.

    >>> overlaps_host_work("trtllm", pytorch_backend=True) == TRTLLM_OVERLAP_SCHEDULER
    True
    >>> (overlaps_host_work("trtllm", pytorch_backend=False), overlaps_host_work("trtllm", pytorch_backend=True, pp=2),
    ...  overlaps_host_work("sglang", pytorch_backend=True))
    (False, False, False)
    """
    return TRTLLM_OVERLAP_SCHEDULER and engine == "trtllm" and bool(pytorch_backend) and pp == 1


EXLLAMA_MAX_Q_GEMM_ROWS = 50
"""vLLM's ``gptq`` method (the ExLlama kernels, ``csrc/quantization/gptq/q_gemm.cu``): ``gemm_half_q_half_cuda``
multiplies a GEMM of at most ``MAX_Q_GEMM_ROWS`` = 50 tokens straight from the packed 4-bit weights; a bigger one
first rebuilds the whole 16-bit weight matrix (``reconstruct_exllama`` into ``temp_dq``) and then calls
``cublasHgemm`` on it. vLLM runs this method for a GPTQ checkpoint only when the user names ``quantization="gptq"``:
``GPTQMarlinConfig.override_quantization_method`` converts every Marlin-compatible GPTQ checkpoint to
``gptq_marlin`` unless ``gptq`` was asked for explicitly ("forcing gptq. Use quantization=gptq_marlin for faster
inference", ``vllm/model_executor/layers/quantization/gptq_marlin.py``)."""

DEQUANT_BYTES_PER_PARAM = 4.0
"""Memory traffic per quantized weight of a rebuilt 16-bit GEMM (:data:`EXLLAMA_MAX_Q_GEMM_ROWS`): the
reconstruction writes 2 bytes and cuBLAS reads them back (2 bytes), on top of the packed 4-bit read the step already
counts."""

CHECKPOINT_RECIPES = ("meta-fp8",)
"""Quantized checkpoints that keep some linear layers in 16 bits (:func:`unquantized_params`). ``"meta-fp8"``: Meta's
FBGEMM FP8 checkpoints of Llama 3.1 (``meta-llama/Llama-3.1-405B-FP8``, ``quant_method: fbgemm_fp8``), which quantize
only the feed-forward layers and leave the self-attention layers and the first and last Transformer layers in BF16
(Llama Team, *The Llama 3 Herd of Models*, arXiv 2407.21783, section 6.2 "FP8 quantization"; Hugging Face's
conversion with ``FbgemmFp8Config(modules_to_not_convert=["model.layers.0", "model.layers.125", "lm_head",
"model.layers.{1..124}.self_attn"])``, "As defined by Meta, we don't quantize the first and last layers as well as
the lm_head. Also, we don't quantize the self_attn layers"); vLLM's ``fbgemm_fp8`` method runs the modules of that
list unquantized (``FBGEMMFp8Config.ignore_list``)."""

HOPPER_COMPUTE_CAPABILITY = 9.0
"""GPUs of a lower CUDA compute capability (the catalog's ``compute_capability``: A100 8.0; A10, RTX 3090 8.6; L4,
L40S, RTX 4090 8.9; H100/H200 are 9.0, B200/GB200 10.0; NVIDIA, developer.nvidia.com/cuda-gpus) run attention
kernels written for the ``mma.sync`` instruction set: vLLM runs FlashAttention-2 below 9.0 and FlashAttention-3 on
9.0 (``FlashAttentionImpl`` in ``vllm/attention/backends/flash_attn.py``, later ``get_flash_attn_version``), at
``attn_eff_pre_hopper`` instead of ``attn_eff`` (:func:`attention_eff`). A GPU with no compute capability (AMD, or
a GPUs-sheet row without one) takes ``attn_eff``."""

PRE_HOPPER_ATTENTION = True
"""Whether :func:`attention_eff` separates the pre-Hopper attention kernels (session 10, docs/serving.md section 4);
False gives every GPU ``attn_eff``, the model before it."""

PCIE_GEN4_BYTES_PER_S_BIDIR = 64e9
"""PCIe 4.0 x16, both directions (32 GB/s each way): the link of a GPU the catalog gives no interconnect for."""

_W4 = ("int4", "awq", "gptq", "int4-awq", "int4-gptq")
_FP4 = latency.FP4_WEIGHT_DTYPES

W8_WEIGHT_ONLY_KERNEL_EFF = True
"""Whether vLLM V0's weight-only 8-bit GEMMs take ``w4_kernel_eff`` on their compute-bound part, as its weight-only
4-bit ones do (:func:`weight_only_mixed_input`; session 14, latency23, docs/serving.md; kept by its rule: training
loss 0.2684557 to 0.2679510, hinge 0). False gives the model before it (full 16-bit GEMM efficiency for ``w8a16``
and for FP8 without FP8 tensor cores)."""


def weight_only_mixed_input(engine: str, gpu: GpuSpec, weight_dtype: str) -> bool:
    """Whether an 8-bit checkpoint runs vLLM V0's weight-only mixed-input kernels (Marlin or Machete: 8-bit weights
    dequantised inside a 16-bit tensor-core GEMM), read from vLLM 0.7.3
    (``vllm/model_executor/layers/quantization/``):

    - FP8 on an NVIDIA GPU without FP8 tensor cores (capability < 8.9: the A100s): ``Fp8LinearMethod`` sets
      ``use_marlin = not current_platform.has_device_capability(89)`` and runs ``ops.fp8_marlin_gemm``
      (``utils/marlin_utils_fp8.py``); a compressed-tensors FP8 checkpoint falls back to
      ``CompressedTensorsW8A16Fp8``, the same call;
    - W8A16 (INT8 weights, ``CompressedTensorsWNA16``, ``uint8b128``) on any NVIDIA GPU: ``choose_mp_linear_kernel``
      takes the first of ``[MacheteLinearKernel, MarlinLinearKernel, ExllamaLinearKernel]`` that implements it
      (Machete from capability 9.0, Marlin below).

    Those are the kernels W4A16 runs, so with :data:`W8_WEIGHT_ONLY_KERNEL_EFF` the GEMM efficiency of such a step
    is ``eff(M) = gemm_eff·M/(M + M½)·w4_kernel_eff`` (S3's compute-bound part; the memory-bound part reads 1 byte
    a weight as before). vLLM V1 (0.8+) and the other engines are not covered (their kernel lists were not read).

    Worked example: Llama-3.1-8B W8A16 on one A100 80GB, a 280-token prompt step, a ``gemm_eff`` of 0.7, ``M½`` 64
    and the published ``w4_kernel_eff`` 0.889: ``eff = 0.7·280/344·0.889 = 0.507`` instead of 0.570, so the step's
    compute part ``13.96e9·280/(312e12·eff)`` is 24.7 ms instead of 22.0 ms (×1/0.889 = 1.125).

    >>> from planner.catalog import get_gpu
    >>> a100, h100 = get_gpu("a100-80gb-sxm"), get_gpu("h100-sxm")
    >>> weight_only_mixed_input("vllm-v0", a100, "fp8"), weight_only_mixed_input("vllm-v0", h100, "fp8")
    (True, False)
    >>> weight_only_mixed_input("vllm-v0", h100, "w8a16"), weight_only_mixed_input("vllm", a100, "w8a16")
    (True, False)
    """
    if engine != "vllm-v0" or str(gpu.vendor).upper() != "NVIDIA":
        return False
    name = str(weight_dtype).strip().lower()
    return name == "w8a16" or (name == "fp8" and not gpu.fp8_flops_per_s)


MOE_ACT_TRAFFIC = True
"""Whether a step counts the MoE layers' routed-token activation traffic (S7, :func:`moe_activation_bytes_per_token`;
session 13, latency18, docs/serving.md). False gives the model before it."""

NVFP4_ACT_BYTES = 0.5 + 1.0 / 16
"""Bytes per activation element quantised to NVFP4: 4 bits and one FP8 scale per 16 elements (TensorRT-LLM's
``expandInputRowsKernel`` and ``doActivation`` write the GEMM inputs so on a GPU with FP4 tensor cores)."""


def activation_quant_bytes(gpu: GpuSpec, weight_dtype: str) -> float | None:
    """Bytes per element a dense layer's activation quantisation writes before its GEMM, or None when the GEMM takes
    16-bit activations (no quantisation pass): :data:`NVFP4_ACT_BYTES` for NVFP4 on a GPU with FP4 tensor cores, 1 for
    FP8/W8A8/INT8 on a GPU that runs them at its 8-bit peak, None otherwise (weight-only kernels, FP8 on an A100,
    MXFP4, whose checkpoints keep the attention in BF16 and quantise only the experts).

    >>> from planner.catalog import get_gpu
    >>> activation_quant_bytes(get_gpu("h100-sxm"), "fp8"), activation_quant_bytes(get_gpu("a100-80gb-sxm"), "fp8")
    (1.0, None)
    """
    name = str(weight_dtype).lower()
    peak = gemm_peak_flops(gpu, weight_dtype=name)
    fp4 = getattr(gpu, "fp4_flops_per_s", None)
    if name == "nvfp4" and fp4 and peak == float(fp4):
        return NVFP4_ACT_BYTES
    if name in ("fp8", "w8a8", "int8") and peak > float(gpu.bf16_flops_per_s):
        return 1.0
    return None


def moe_activation_bytes_per_token(model: ModelSpec, gpu: GpuSpec, *, engine: str, weight_dtype: str, tp: int = 1,
                                   ep: int = 1) -> float:
    """Bytes the memory-bound kernels between an MoE layer's grouped GEMMs move per token, per GPU, summed over the
    model's MoE layers (S7 of ``docs/serving.md``; what a GEMM kernel reads and writes itself is not counted)::

        B_act/M = L_moe · [ k·h·a_perm + k·(I/tp)·a_mid + h·a_tok ]

    TensorRT-LLM (CUTLASS fused MoE, ``CutlassMoeFCRunner::runMoe`` in
    ``cpp/tensorrt_llm/kernels/cutlass_kernels/moe_gemm/moe_kernels.cu``): ``expandInputRowsKernel`` reads the token's
    16-bit row (``a_tok = 2``) and writes ``k`` permuted copies at the first GEMM's input precision ``a_q``
    (``a_perm = a_q``); ``doActivation`` reads the 16-bit gate and up outputs (``2I``) and writes ``I`` at ``a_q``
    (``a_mid = 4 + a_q``); the second GEMM's epilogue does the finalize (``EpilogueFusion::FINALIZE``). ``a_q`` =
    :data:`NVFP4_ACT_BYTES` for NVFP4 on a GPU with FP4 tensor cores, 1 for FP8/W8A8/INT8 on a GPU that runs them at
    its 8-bit peak (and MXFP4 with FP4 tensor cores), 2 otherwise. vLLM and SGLang (Triton ``fused_experts_impl``,
    ``vllm/model_executor/layers/fused_moe/fused_moe.py``): no permute copy; ``silu_and_mul`` reads ``2I`` and writes
    ``I`` in 16 bits (``a_mid = 6``), ``moe_sum`` reads the ``k`` 16-bit copies (``a_perm = 2``) and writes the sum
    (``a_tok = 2``); with 8-bit activations a quantisation pass adds 3 bytes an element to both (``a_mid = 9``,
    ``a_tok = 5``). 0 for a dense model. Expert parallelism ``ep`` is not separated (the count of ``ep = 1``):
    TensorRT-LLM's expand writes only a GPU's local rows (``/ep``), while the Triton path's ``silu_and_mul`` and
    ``moe_sum`` run over all ``M·k`` rows, zeros of other GPUs' experts included (``×ep`` on the activation term).

    Worked example, Qwen3-30B-A3B (h 2,048, I 768, k 8, 48 MoE layers) NVFP4 on a B200, TensorRT-LLM:
    ``48·(8·2,048·0.5625 + 8·768·4.5625 + 2,048·2)`` = 48·41,344 = 1,984,512 B a token; with vLLM in BF16 on an H100
    ``48·(8·2,048·2 + 8·768·6 + 2,048·2)`` = 48·73,728 = 3,538,944 B.

    >>> from planner.catalog import get_gpu, get_model
    >>> m = get_model("qwen3-30b-a3b")
    >>> moe_activation_bytes_per_token(m, get_gpu("b200-hgx"), engine="trtllm", weight_dtype="nvfp4")
    1984512.0
    >>> moe_activation_bytes_per_token(m, get_gpu("h100-sxm"), engine="vllm", weight_dtype="bf16")
    3538944.0
    """
    e, k = model.num_experts or 0, model.num_experts_per_tok or 0
    width = model.expert_intermediate_size
    if model.architecture != "moe" or not (e > k > 0) or not width:
        return 0.0
    layers = len(model.moe_layers) or model.num_hidden_layers
    h = float(model.hidden_size)
    a = activation_quant_bytes(gpu, weight_dtype)  # the dense GEMMs' activation precision (None: 16-bit)
    if engine == "trtllm":
        if a is None:  # MXFP4's experts run on FP4 tensor cores with 8-bit inputs; anything else stays 16-bit
            name, fp4 = str(weight_dtype).lower(), getattr(gpu, "fp4_flops_per_s", None)
            fp4_gemm = fp4 is not None and fp4 > 0 and gemm_peak_flops(gpu, weight_dtype=name) == float(fp4)
            a = 1.0 if name == "mxfp4" and fp4_gemm else ACT_BYTES
        a_perm, a_mid, a_tok = a, 2 * ACT_BYTES + a, ACT_BYTES
    else:
        quant = ACT_BYTES + 1.0 if a == 1.0 else 0.0  # 8-bit inputs: read 16-bit, write 8-bit
        a_perm, a_mid, a_tok = ACT_BYTES, 3 * ACT_BYTES + quant, ACT_BYTES + quant
    del ep  # not separated (docs/serving.md, session 13): the count of ep = 1, as S5' leaves the rest of the step
    return layers * (k * h * a_perm + k * width / tp * a_mid + h * a_tok)


LAYER_ACT_TRAFFIC = False
"""Whether a step counts every layer's non-GEMM activation traffic (S8, :func:`layer_activation_bytes_per_token`;
session 13, latency19, docs/serving.md): tried and **not kept** (training loss 0.2749068 to 0.2722102 but the
acceptance hinge 0 to 1.133, the decision rule counting both), so off; True gives S8."""

LAYER_ACT_PROMPT_ONLY = False
"""Variant S8p of docs/serving.md (session 13, latency19): count S8's bytes for a step's prompt tokens only (a decode
step's activation rows fit in L2). False counts every token of the step (S8). With :data:`LAYER_ACT_L2` too, the
prompt tokens' passes are counted beyond the cache (a combination never tried under a rule)."""


def layer_activation_bytes_per_token(model: ModelSpec, gpu: GpuSpec, *, engine: str, weight_dtype: str,
                                     tp: int = 1) -> float:
    """Bytes the memory-bound kernels between a layer's GEMMs move per token, per GPU, summed over the model's layers
    (S8 of ``docs/serving.md``; an MoE layer's routed-expert passes are S7's, :func:`moe_activation_bytes_per_token`)::

        B/M = Σ_layers [ 8h + Q(h) ] + [ 8h + Q(h) (MoE layer: 8h) ] + [Q(q) + 4·(r_q + r_k)]·(not trtllm)
                       + 6·I_mlp + Q(I_mlp),          Q(x) = (2 + a)·x with a quantisation, else 0

    ``8h``: residual add + RMSNorm in place (read the row and the residual, write both, 16-bit: vLLM
    ``ops.fused_add_rms_norm`` in ``RMSNorm.forward_cuda``, ``vllm/model_executor/layers/layernorm.py``; SGLang
    ``sgl_kernel`` ``fused_add_rmsnorm``; TensorRT-LLM's PyTorch ``RMSNorm`` with ``residual``, flashinfer
    ``fused_add_rmsnorm``); ``Q``: the quantisation before an FP8/FP4 GEMM (vLLM ``Fp8LinearOp.apply`` ->
    ``ops.scaled_fp8_quant``; TensorRT-LLM ``FP8QDQLinearMethod.apply`` -> ``static_quantize_e4m3_per_tensor``), ``a`` =
    :func:`activation_quant_bytes`; ``q = n_q·d_v/tp``: the attention output, quantised by a pass in vLLM and SGLang and
    inside the attention kernel in TensorRT-LLM (``out_scale = o_proj.inv_input_scale``); ``r_q + r_k = (n_q + max(n_kv,
    tp))·d/tp`` (MLA: ``(n_q/tp + 1)·d_rope``): RoPE in place on q and k (vLLM ``ops.rotary_embedding``, SGLang
    ``apply_rope_with_cos_sin_cache_inplace``; TensorRT-LLM fuses it into the attention op); ``6·I_mlp``: SiLU-and-mul
    (read ``2I``, write ``I``, 16-bit; ``I_mlp`` the dense MLP's width, ``dense_intermediate_size`` for the dense layers
    of an MoE model, the shared experts' width in an MoE layer, 0 without them; ``/tp``). vLLM V1 runs the same bytes
    (Inductor compiles the norm, SiLU-and-mul and RoPE, but the FP8 quantisation is the opaque ``scaled_fp8_quant``
    through 0.9, so nothing is folded).

    Worked example, Llama-3.1-8B (h 4,096, I 14,336, 32 q and 8 KV heads of 128, 32 layers) FP8 on an H100:
    TensorRT-LLM ``2·(8 + 3)·4,096 + 9·14,336`` = 219,136 B a layer, ×32 = 7,012,352 B a token; vLLM adds
    ``3·4,096 + 4·(4,096 + 1,024)`` = 32,768 B a layer: 8,060,928 B.

    >>> from planner.catalog import get_gpu, get_model
    >>> m, g = get_model("llama-3.1-8b"), get_gpu("h100-sxm")
    >>> layer_activation_bytes_per_token(m, g, engine="trtllm", weight_dtype="fp8")
    7012352.0
    >>> layer_activation_bytes_per_token(m, g, engine="vllm", weight_dtype="fp8")
    8060928.0
    """
    # the same passes S8L counts one at a time (layer_activation_passes), summed: one account of S8's traffic
    return sum(b * n for b, n in layer_activation_passes(model, gpu, engine=engine, weight_dtype=weight_dtype, tp=tp))


LAYER_ACT_L2 = False
"""Variant S8L of docs/serving.md (session 14, latency20): with :data:`LAYER_ACT_TRAFFIC` on, count each of S8's
passes only beyond the GPU's last shared cache (:func:`layer_activation_passes`, :func:`activation_cache_bytes`): a
pass that moves ``M·b`` bytes at a step of ``M`` tokens moves ``max(0, M·b − C)`` of them to or from HBM. False
counts every byte (S8)."""


def activation_cache_bytes(gpu: GpuSpec) -> float:
    """The cache S8L counts an activation pass against: the last cache in front of HBM that every compute unit
    shares, ``C`` of docs/serving.md (session 14) — AMD's memory-side Infinity Cache where the catalog gives one (the
    MI300 series: 256 MiB, shared by the 8 XCDs, whose own L2s are 4 MiB each), else the L2 (NVIDIA: one L2 for all
    SMs), 0 where neither was sourced (then S8L counts the full S8 bytes). Sizes: ``planner/data/gpus.json``
    (``l2_cache_bytes``, ``infinity_cache_bytes``, ``l2_source``): the H100's driver-reported ``l2CacheSize`` is
    52,428,800 B (50 MiB, NVIDIA's H100 datasheet: 50 MB), ROCm's GPU specification table gives the MI300X 32 MiB of
    L2 and 256 MiB of Infinity Cache.

    >>> from planner.catalog import get_gpu
    >>> activation_cache_bytes(get_gpu("h100-sxm")), activation_cache_bytes(get_gpu("mi300x")) / 2**20
    (52428800.0, 256.0)
    """
    cache = getattr(gpu, "infinity_cache_bytes", None) or getattr(gpu, "l2_cache_bytes", None)
    return float(cache or 0)


LAYER_ACT_TRTLLM_FUSION = False
"""Variant S8T of docs/serving.md (session 14, latency21): with :data:`LAYER_ACT_TRAFFIC` on, count S8's passes as
TensorRT-LLM's PyTorch backend of the 1.0 era runs them (:func:`trtllm_pytorch_fusions`: the residual add, RMSNorm
and quantisation fused into a dense Llama's tensor-parallel all-reduce, the FP8 quantisation fused into SiLU-and-mul)
for replicas built with ``engine="trtllm"`` and ``eager_prefill=True`` (the PyTorch backend); TensorRT engines (NIM,
the library's default ``"trtllm"``) keep S8's count. False: S8's count everywhere."""


def trtllm_pytorch_fusions(model: ModelSpec, gpu: GpuSpec, *, weight_dtype: str, tp: int = 1,
                           dp: int = 1) -> tuple[int, bool]:
    """Which of S8's passes TensorRT-LLM's PyTorch backend (1.0 era) fuses away (S8T, docs/serving.md, session 14):
    ``(norm_sites, swiglu)``, the number of a layer's two residual-add + RMSNorm sites run inside the all-reduce and
    whether SiLU-and-mul writes the FP8 input of ``down_proj`` itself.

    Norm sites (``tensorrt_llm/_torch/models/modeling_llama.py``, ``LlamaDecoderLayer``): ``enable_fusion`` needs
    ``hidden_size > 4096``; ``POST_MLP_FUSION = mapping.has_tp() and enable_fusion``, ``PRE_MLP_FUSION`` the same and
    ``not enable_attention_dp``; both run ``AllReduceFusionOp.RESIDUAL_RMS_NORM(_QUANT_FP8/_QUANT_NVFP4)``. Dense
    Llama models only (family ``llama``, ``llama-2*``, ``llama-3*``; Llama 4 and the MoE models were not read).
    SiLU-and-mul (``tensorrt_llm/_torch/modules/gated_mlp.py``, ``GatedMLP._apply_activation``): with an FP8
    per-tensor ``down_proj`` (``has_fp8_qdq``), ``swiglu(x, quant_scale=down_proj.input_scale,
    quant_type=torch.float8_e4m3fn)``; not for NVFP4 and not for MLA models (DeepSeek's FP8 is block-scaled).

    >>> from planner.catalog import get_gpu, get_model
    >>> h100 = get_gpu("h100-sxm")
    >>> trtllm_pytorch_fusions(get_model("llama-3.3-70b"), h100, weight_dtype="fp8", tp=2)
    (2, True)
    >>> trtllm_pytorch_fusions(get_model("llama-3.1-8b"), h100, weight_dtype="fp8", tp=2)
    (0, True)
    """
    name = str(weight_dtype).lower()
    a = activation_quant_bytes(gpu, name)
    family = (model.family or "").lower()
    llama = model.architecture != "moe" and (family == "llama" or family.startswith(("llama-2", "llama-3")))
    sites = 0
    if llama and tp > 1 and model.hidden_size > 4096:
        sites = 2 if dp <= 1 else 1  # POST_MLP_FUSION always; PRE_MLP_FUSION only without attention DP
    swiglu = name == "fp8" and a == 1.0 and not (model.kv_lora_rank and model.qk_rope_head_dim)
    return sites, swiglu


def layer_activation_passes(model: ModelSpec, gpu: GpuSpec, *, engine: str, weight_dtype: str,
                            tp: int = 1, dp: int = 1,
                            pytorch_fusions: bool = False) -> tuple[tuple[float, int], ...]:
    """S8's passes one at a time: ``(b, n)`` pairs, ``b`` the bytes one pass moves per token per GPU and ``n`` how
    many such passes the model's layers run, so that ``Σ n·b`` is :func:`layer_activation_bytes_per_token`. Per
    dense layer: two residual add + RMSNorm passes (``8h`` each), two quantisations of ``h`` (``Q(h)``), outside
    TensorRT-LLM the attention output's quantisation (``Q(q)``) and RoPE (``4·(r_q + r_k)``), SiLU-and-mul
    (``6·I``) and its quantisation (``Q(I)``); an MoE layer has one ``Q(h)`` (its expert input's is S7's) and the
    shared experts' width for ``I`` (none without shared experts). Notation and kernels: that function's docstring.
    S8L (:data:`LAYER_ACT_L2`) counts ``Σ n·max(0, M·b − C)`` bytes at a step of ``M`` tokens, ``C`` =
    :func:`activation_cache_bytes` (docs/serving.md, session 14: a pass moving ``T`` bytes through a cache of ``C``
    keeps at most ``C`` of them on chip; the proportional form ``T·max(0, 1 − C/T)``).

    Worked example, Llama-3.1-8B FP8 on an H100 with TensorRT-LLM: ``8h`` = 32,768 B and ``Q(h)`` = 3·4,096 =
    12,288 B (32 layers × 2 each), ``6I`` = 86,016 B and ``Q(I)`` = 43,008 B (32 each): 32·219,136 = 7,012,352 B a
    token, S8's.

    ``pytorch_fusions`` (S8T, :func:`trtllm_pytorch_fusions`; ``engine="trtllm"`` only): each norm site fused into
    the all-reduce is one pass of ``4h + a·h`` (``6h`` unquantised) in place of ``8h`` and ``Q(h)``, and an FP8
    SiLU-and-mul one pass of ``(4 + a)·I`` in place of ``6I`` and ``Q(I)``. Worked example, Llama-3.3-70B (h 8,192, I
    28,672, 80 layers) FP8 at TP 2: ``5·8,192`` = 40,960 B (160 sites) and ``5·14,336`` = 71,680 B (80):
    12,288,000 B a token against S8's 24,739,840 B; Llama-3.1-8B at TP 1 keeps its norms (no all-reduce, h = 4,096)
    and its SiLU-and-mul becomes 71,680 B: 5,177,344 B.

    >>> from planner.catalog import get_gpu, get_model
    >>> layer_activation_passes(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), engine="trtllm", weight_dtype="fp8")
    ((32768.0, 64), (12288.0, 64), (86016.0, 32), (43008.0, 32))
    >>> layer_activation_passes(get_model("llama-3.3-70b"), get_gpu("h100-sxm"), engine="trtllm", weight_dtype="fp8",
    ...                         tp=2, pytorch_fusions=True)
    ((40960.0, 160), (71680.0, 80))
    """
    h = float(model.hidden_size)
    a = activation_quant_bytes(gpu, weight_dtype)

    def quant(x: float) -> float:
        return (2.0 + a) * x if a is not None else 0.0

    n_q, n_kv = float(model.num_attention_heads), float(model.num_key_value_heads)
    d = float(model.head_dim or model.hidden_size // model.num_attention_heads)
    out = n_q * float(model.v_head_dim or d) / tp
    if model.kv_lora_rank and model.qk_rope_head_dim:  # MLA: RoPE on the decoupled rope dims, one shared key head
        rope = (n_q / tp + 1.0) * float(model.qk_rope_head_dim)
    else:
        rope = (n_q + max(n_kv, float(tp))) * d / tp
    e, k = model.num_experts or 0, model.num_experts_per_tok or 0
    moe = model.architecture == "moe" and e > k > 0
    layers = model.num_hidden_layers
    moe_layers = (len(model.moe_layers) or layers) if moe else 0
    dense_layers = layers - moe_layers
    dense_width = float(model.dense_intermediate_size or model.intermediate_size or 0) / tp
    shared_width = float(model.shared_expert_intermediate_size or 0) / tp if moe else 0.0
    sites, swiglu = (trtllm_pytorch_fusions(model, gpu, weight_dtype=weight_dtype, tp=tp, dp=dp)
                     if pytorch_fusions and engine == "trtllm" else (0, False))
    # S8T: a norm site inside the all-reduce reads and writes the residual and writes the GEMM input (a bytes, or 2)
    fused_site = 4 * h + (a if a is not None else ACT_BYTES) * h
    passes: list[tuple[float, int]] = [(fused_site, sites * dense_layers), (8 * h, 2 * layers - sites * dense_layers),
                                       (quant(h), (2 - sites) * dense_layers + moe_layers)]
    if engine != "trtllm":
        passes += [(quant(out), layers), (4.0 * rope, layers)]

    def mlp(width: float, count: int) -> list[tuple[float, int]]:
        if swiglu:  # S8T: SiLU-and-mul reads gate and up (16-bit) and writes down_proj's FP8 input
            return [((2 * ACT_BYTES + float(a or 0.0)) * width, count)]
        return [(6 * width, count), (quant(width), count)]

    passes += mlp(dense_width, dense_layers)
    if shared_width:
        passes += mlp(shared_width, moe_layers)
    return tuple((b, n) for b, n in passes if b > 0 and n > 0)


@dataclass(frozen=True, kw_only=True)
class Replica:
    """Per-step constants of one model on one replica (``tp × pp`` GPUs), per GPU of a tensor-parallel group."""

    layers: int
    hidden: int
    tp: int
    pp: int
    ep: int
    dense_bytes: float  # weights a step always reads, per GPU (attention, shared experts, embeddings share)
    expert_bytes: float  # one routed expert's weights in every MoE layer, per GPU (0 for dense)
    num_experts: int
    experts_per_token: int
    body_flops_per_token: float  # dense GEMM FLOPs per token, per GPU (2·P without embeddings, LM head, experts)
    expert_flops_per_token: float  # routed-expert GEMM FLOPs per token, per GPU
    head_flops_per_token: float  # LM head FLOPs per sampled token, per GPU
    kv_read_bytes_per_seq: float  # KV bytes one decoding sequence reads per step, per GPU
    attn_flops_per_seq: float  # decode attention FLOPs of one sequence's token, per GPU
    attn_flops_per_prefill_token: float  # prefill attention FLOPs per prompt token, per GPU
    peak_flops_per_s: float  # GEMM peak at the weights' compute precision
    peak16_flops_per_s: float
    mem_bw_bytes_per_s: float
    link_bytes_per_s: float  # one direction
    link_is_pcie: bool
    quant_kernel_eff: float  # 1, or w4_kernel_eff for weight-only 4-bit
    engine: str
    vendor_eff: float = 1.0  # rocm_eff on AMD GPUs (compute-bound work)
    fixed_s: float = 0.0  # o_engine + o_tp·log2(tp·pp), from the calibration the replica was built with (o_engine:
    # step_overhead_s["trtllm-pytorch"] for TensorRT-LLM's PyTorch backend, calibration.TRTLLM_PYTORCH)
    seq_s: float = 0.0  # o_seq of the engine
    ttft_fixed_s: float = 0.0  # o_ttft of the engine
    dp: int = 1  # attention data-parallel groups inside the replica (tp/dp GPUs each)
    attn_eff: float | None = None  # attention's share of peak 16-bit FLOP/s (None: the calibration's attn_eff)
    eager: bool = False  # every step without CUDA graphs (``enforce_eager=True``): the eager floor on every step
    eager_prefill: bool = False  # steps with prompt tokens without CUDA graphs (EAGER_PREFILL, or asked for)
    dequant_bytes: float = 0.0  # extra weight traffic per GPU of a step above EXLLAMA_MAX_Q_GEMM_ROWS tokens
    overlap_seq: bool = False  # the per-sequence cost runs while the GPU computes (S2''; V0_ASYNC_OUTPUT_OVERLAP)
    overlap_host: bool = False  # rule O: all of S2 runs beside the GPU (TensorRT-LLM PyTorch backend's overlap loop)
    moe_act_bytes: float = 0.0  # MoE activation traffic per token per GPU between the grouped GEMMs (S7)
    layer_act_passes: tuple[tuple[float, int], ...] = ()  # S8: every layer's non-GEMM passes (bytes a token, count)
    act_cache_bytes: float = 0.0  # S8L: the cache each pass is counted against (activation_cache_bytes); 0: S8
    graph_sizes: tuple[int, ...] = ()  # CG: per-rank CUDA-graph batch sizes a decode-only batch is padded to
    moe_comm_layers: int = 0  # rule B: layers whose experts all-gather/reduce-scatter (0: S5's all-reduce form)
    moe_gather_bytes: float = 2.0  # rule B: bytes an element of the experts' all-gathered input (a_q)
    moe_layer_count: int = 0  # rule K: the MoE decoder layers (0 for a dense model; all L unless some are dense)

    @property
    def layer_act_bytes(self) -> float:
        """S8's bytes a token per GPU, the passes summed (0 when S8 is off)."""
        return sum(b * n for b, n in self.layer_act_passes)


def cuda_graph_sizes(batch_sizes: tuple[int, ...] | list[int], *, max_batch_size: float,
                     max_num_tokens: float) -> tuple[int, ...]:
    """The CUDA-graph batch sizes TensorRT-LLM's PyTorch backend keeps with padding on (rule CG, docs/serving.md,
    session 14, latency24): ``_filter_cuda_graph_batch_sizes`` of ``tensorrt_llm/_torch/pyexecutor/model_engine.py``
    (1.0 era) keeps the listed sizes ``≤ c = min(max_batch_size, max_num_tokens)`` (no draft tokens) and, because
    padding is on, adds ``c`` itself when a listed size exceeds it and ``c`` is not already the last one kept
("padding to max_cuda_graph_bs is acceptable")::

        G' = [g in G : g <= c] + ([c] if any g > c and c not in G)

    Both limits are one rank's (with attention DP, the replica's divided by its ``dp`` ranks).

    Worked example: the TensorRT-LLM overview's list with Llama-3.1-405B's trtllm-bench limits on 8 H100s at
    1,000/2,000 tokens (``max_batch_size`` 384, ``max_num_tokens`` 2,048): ``c`` = 384, and 384 is itself listed.

    >>> cuda_graph_sizes(TRTLLM_OVERVIEW_GRAPH_SIZES, max_batch_size=384, max_num_tokens=2048)[-3:]
    (128, 256, 384)
    >>> cuda_graph_sizes(TRTLLM_OVERVIEW_GRAPH_SIZES, max_batch_size=1792, max_num_tokens=2792)[-3:]
    (512, 1024, 1792)
    """
    cap = int(min(max_batch_size, max_num_tokens))
    if cap < 1:
        return ()
    kept = [int(g) for g in sorted(batch_sizes) if g <= cap]
    if any(g > cap for g in batch_sizes) and (not kept or kept[-1] != cap):
        kept.append(cap)
    return tuple(kept)


TRTLLM_OVERVIEW_GRAPH_SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 384, 512, 1024, 2048, 4096, 8192)
"""``cuda_graph_config.batch_sizes`` of the ``llm_options.yml`` every run of TensorRT-LLM's performance overview used,
with ``enable_padding: true`` (NVIDIA/TensorRT-LLM ``docs/source/performance/perf-overview.md`` at 00f37686,
"Reproducing Benchmarked Results", for dense and MoE models alike)."""


def padded_decode_tokens(decode_seqs: float, sizes: tuple[int, ...], *, dp: int = 1) -> float:
    """Tokens a decode-only step of ``decode_seqs`` sequences runs through its GEMMs and collectives when the engine
    pads it to a CUDA-graph batch size (rule CG): each of the ``dp`` attention ranks holds ``b = ⌈d/dp⌉`` (the replica
    splits sequences evenly; TensorRT-LLM pads every rank to the largest rank's batch, ``tp_allgather`` in
    ``_get_padded_batch``) padded to the smallest kept size ``b' ≥ b`` by repeating one dummy generation request::

        M' = dp·b',   b' = min{g in sizes : g >= ⌈d/dp⌉}   (d itself when no size is given or none is large enough)

    Worked example: 259 sequences on one rank with the overview's sizes capped at 384 run as 384 tokens; 1,500 over
    8 attention-DP ranks are 188 a rank, padded to 256: 2,048 tokens.

    >>> g = cuda_graph_sizes(TRTLLM_OVERVIEW_GRAPH_SIZES, max_batch_size=384, max_num_tokens=2048)
    >>> padded_decode_tokens(259, g), padded_decode_tokens(384, g), padded_decode_tokens(259, ())
    (384.0, 384.0, 259)
    >>> padded_decode_tokens(1500, cuda_graph_sizes(TRTLLM_OVERVIEW_GRAPH_SIZES, max_batch_size=1792,
    ...                                              max_num_tokens=2792), dp=8)
    2048.0
    """
    if not sizes or decode_seqs <= 0:
        return decode_seqs
    ranks = max(int(dp), 1)
    per_rank = math.ceil(decode_seqs / ranks - 1e-9)
    for g in sizes:
        if g >= per_rank:
            return float(ranks * g)
    return decode_seqs


def link_bytes_per_s_bidir(gpu: GpuSpec) -> tuple[float, bool]:
    """The GPU-to-GPU bandwidth (both directions) of ``gpu`` and whether it is PCIe.

    >>> from planner.catalog import get_gpu
    >>> link_bytes_per_s_bidir(get_gpu("h100-sxm")), link_bytes_per_s_bidir(get_gpu("l4"))
    ((900000000000.0, False), (64000000000.0, True))
    """
    nvlink = getattr(gpu, "nvlink_bytes_per_s_bidir", None)
    if nvlink:
        return float(nvlink), False
    other = getattr(gpu, "interconnect_bytes_per_s_bidir", None)
    kind = str(getattr(gpu, "interconnect", "") or "").lower()
    if other:
        return float(other), kind.startswith("pcie")
    return PCIE_GEN4_BYTES_PER_S_BIDIR, True


def host_staged_link_bytes_per_s(uplink_bytes_per_s: float, *, ranks: int) -> float:
    """One rank's share of the link when ``ranks`` GPUs without peer access stage every collective through host
    memory over one shared PCIe uplink of ``uplink_bytes_per_s`` a direction (rule H; docs/serving.md, session 17,
    latency41): NCCL's SHM transport ("SHM is used between devices when peer-to-peer cannot happen, therefore, host
    memory is used", NCCL's ``NCCL_SHM_DISABLE``) sends each rank's ring bytes up to host memory and down to the next
    rank, so a ring all-reduce of ``S`` bytes moves ``n·2(n−1)/n·S = 2(n−1)·S`` bytes over the uplink each way
    instead of ``2(n−1)/n·S`` over each rank's own link: S5's bandwidth term with ``B/n`` for ``B``.

    Worked example: eight RTX 4090s under one PCIe Gen4 x16 uplink (32 GB/s a direction) give each rank 4 GB/s; a
    1.23 MB all-reduce (150 tokens of Llama-3-8B's 4,096 × 2 B) then takes ``2·7/8·1.23 MB / 4 GB/s`` = 538 µs of
    bandwidth instead of 67 µs.

    >>> host_staged_link_bytes_per_s(32e9, ranks=8)
    4000000000.0
    >>> round(2 * 7 / 8 * 150 * 4096 * 2 / host_staged_link_bytes_per_s(32e9, ranks=8) * 1e6)
    538
    """
    return uplink_bytes_per_s / max(int(ranks), 1)


def attention_eff(gpu: GpuSpec, cal: Calibration) -> float:
    """The attention kernels' share of peak 16-bit FLOP/s on ``gpu``: ``attn_eff_pre_hopper`` on the compute
    capability 8.x GPUs (below :data:`HOPPER_COMPUTE_CAPABILITY`: FlashAttention-2 class kernels), else ``attn_eff``.

    >>> from planner.catalog import get_gpu
    >>> from planner.serving.calibration import DERIVED
    >>> attention_eff(get_gpu("a100-80gb-sxm"), DERIVED), attention_eff(get_gpu("h100-sxm"), DERIVED)
    (0.7, 0.5)
    """
    cc = gpu.compute_capability
    if PRE_HOPPER_ATTENTION and cc is not None and cc < HOPPER_COMPUTE_CAPABILITY:
        return cal.attn_eff_pre_hopper
    return cal.attn_eff


def unquantized_params(model: ModelSpec, recipe: str | None) -> float:
    """Linear-layer parameters a quantized checkpoint of ``recipe`` keeps in 16 bits (beyond the embeddings and LM
    head, which every quantized checkpoint keeps; :data:`CHECKPOINT_RECIPES`). ``"meta-fp8"`` on a dense model: the
    self-attention projections of layers 2..L−1 plus the whole first and last layers,
    ``(L−2)·h·d_head·(2·n_q + 2·n_kv) + 2·P_body/L`` with ``P_body = P − 2·V·h``.

    Worked example, Llama-3.1-405B (126 layers, h 16,384, 128 query and 8 KV heads of 128): attention 16,384·128·272 =
    570.4 M per layer, ×124 = 70.7 G; ``P_body`` = 405.85 G − 2·128,256·16,384 = 401.6 G, two layers of it 6.4 G:
    77.1 G parameters in BF16, 19% of the model.

    >>> from planner.catalog import get_model
    >>> round(unquantized_params(get_model("llama-3.1-405b"), "meta-fp8") / 1e9, 1)
    77.1
    >>> unquantized_params(get_model("llama-3.1-405b"), None)
    0.0
    """
    if not recipe:
        return 0.0
    if recipe not in CHECKPOINT_RECIPES:
        raise ArgumentError("checkpoint_recipe", recipe, f"one of {', '.join(CHECKPOINT_RECIPES)} or None")
    if model.architecture == "moe":
        raise ArgumentError("checkpoint_recipe", recipe, "a dense model (Meta's FP8 recipe is for dense Llama 3.1)")
    layers = model.num_hidden_layers
    head_dim = model.head_dim or model.hidden_size // model.num_attention_heads
    attn = model.hidden_size * head_dim * 2 * (model.num_attention_heads + model.num_key_value_heads)
    body = model.params_active - 2 * float(model.vocab_size or 0) * model.hidden_size
    return (layers - 2) * attn + 2 * body / layers


WEIGHT_DTYPE_ALIASES = {"int4-awq": "awq", "int4-gptq": "gptq", "fp4": "nvfp4"}
"""Weight dtype spellings the plan accepts and the name the memory and step models use for each."""


def weight_dtype_name(weight_dtype: str) -> str:
    """A weight dtype as the memory and step models name it (:data:`WEIGHT_DTYPE_ALIASES`), lower case.

    >>> weight_dtype_name(" INT4-AWQ"), weight_dtype_name("fp8"), weight_dtype_name("auto")
    ('awq', 'fp8', 'auto')
    """
    name = str(weight_dtype).strip().lower()
    return WEIGHT_DTYPE_ALIASES.get(name, name)


def routed_expert_params(model: ModelSpec) -> float:
    """Parameters of one routed expert, ``P_e = (P_total − P_active)/(E − k)``; 0 for a dense model (or an MoE spec
    whose totals do not say).

    >>> from planner.catalog import get_model
    >>> routed_expert_params(get_model("llama-3.1-8b"))
    0.0
    >>> round(routed_expert_params(get_model("llama-4-maverick")) / 1e9, 4)
    3.0157
    """
    e, k = model.num_experts or 0, model.num_experts_per_tok or 0
    if model.architecture == "moe" and e > k > 0 and model.params_total > model.params_active:
        return (model.params_total - model.params_active) / (e - k)
    return 0.0


def _weights_per_gpu(model: ModelSpec, *, tp: int, pp: int = 1, weight_dtype: str) -> tuple[str, float]:
    """(the dtype the step model names, weight bytes a GPU: :func:`planner.memory.weight_bytes_per_gpu`)."""
    dtype = model.weight_dtype if weight_dtype == "auto" else weight_dtype_name(weight_dtype)
    return dtype, weight_bytes_per_gpu(model, tp=tp, pp=pp, weight_dtype=dtype if weight_dtype != "auto" else "auto")


def attention_dp_replicated_bytes(model: ModelSpec, *, tp: int, dp: int, pp: int = 1,
                                  weight_dtype: str = "auto") -> float:
    """Weight bytes one GPU holds beyond the ``tp·pp`` split when a mixture-of-experts model runs ``dp`` attention
    data-parallel ranks in TensorRT-LLM (rule R, docs/serving.md, session 15, latency27): every rank keeps the whole
    non-expert part (attention, dense layers' MLP, shared experts, embedding and LM head) and only the routed experts
    stay split. Read in ``tensorrt_llm/_torch/models/modeling_llama.py`` (1.0 era): ``GatedMLP(...,
    overridden_tp_size=1 if self.enable_attention_dp else None)`` for the dense MLP and the shared expert,
    ``Embedding(vocab_size, hidden_size, dtype=...)`` without a mapping under attention DP, the LM head whole unless
    ``enable_lm_head_tp_in_adp`` (later releases); DeepSeek-V3's ``_compute_mlp_tp_size`` gives ``mlp_tp_size = 1``
    likewise. The non-expert bytes are those :func:`build_replica` reads per GPU (``dense_bytes``)::

        W_d = W/(tp·pp) − E·W_e/(tp·pp),   W_e = W·P_e/P_total,   P_e = (P_total − P_active)/(E − k)
        extra = (dp − 1)·W_d                        (0 for a dense model or dp = 1)

    Worked example (by hand): Llama-4-Maverick FP8 at ``tp`` 8: ``W/tp`` = (400e9 − 2.069e9 + 2·2.069e9)/8 =
    50.259e9 B (embeddings and LM head at 2 bytes), ``W_e/tp`` = 50.259e9·3.0157e9/400e9 = 0.37892e9 B, ``W_d`` =
    50.259e9 − 128·0.37892e9 = 1.7571e9 B; at ``dp`` 8: 7·1.7571e9 = 12.30e9 B (11.46 GiB) a GPU.

    >>> from planner.catalog import get_model
    >>> round(attention_dp_replicated_bytes(get_model("llama-4-maverick"), tp=8, dp=8, weight_dtype="fp8") / 1e9, 2)
    12.3
    >>> attention_dp_replicated_bytes(get_model("llama-4-maverick"), tp=8, dp=1, weight_dtype="fp8")
    0.0
    """
    per_expert = routed_expert_params(model)
    if dp <= 1 or not per_expert:
        return 0.0
    _dtype, total = _weights_per_gpu(model, tp=tp, pp=pp, weight_dtype=weight_dtype)
    dense = total - (model.num_experts or 0) * total * per_expert / model.params_total
    return (dp - 1) * max(dense, 0.0)


ATTENTION_DP_HOST_PER_RANK = True
"""Whether a TensorRT-LLM replica with attention data parallelism counts S2's per-sequence host cost for one rank's
share of the sequences (rule A, :func:`host_sequences`; session 15, latency28, docs/serving.md; kept by its rule:
training loss 0.2662772 to 0.2642206, hinge 0). False gives the model before it (the replica's whole count)."""


def host_sequences(engine: str, sequences: float, *, dp: int = 1) -> float:
    """The sequences S2's per-sequence host term ``o_seq·n`` counts in one step of ``sequences`` (``d + n_p``) on a
    replica of ``dp`` attention data-parallel ranks (rule A, docs/serving.md, session 15, latency28)::

        n = ⌈(d + n_p)/dp⌉      TensorRT-LLM with dp > 1 (:data:`ATTENTION_DP_HOST_PER_RANK`)
        n = d + n_p             every other replica

    TensorRT-LLM's PyTorch backend runs one ``PyExecutor`` per GPU, each with its own ``active_requests``
    (NVIDIA/TensorRT-LLM ``tensorrt_llm/_torch/pyexecutor/py_executor.py``, 1.0-1.1 era): under attention DP
    ``ExecutorRequestQueue._fetch_new_requests_attention_dp`` hands each new request to one rank
    (``_balance_requests_across_ranks``, each rank filled up to ``⌈(active + new)/tp⌉``), and every step's
    ``_schedule``, ``model_engine.forward``'s input preparation, ``_sample_async``, ``_update_requests`` and
    ``_handle_responses`` loop over the rank's own requests, the ranks in parallel; the step waits for the slowest
    rank at the experts' all-gather (earlier versions split alike: ``PyExecutor._fetch_new_requests`` with the same
    heap, the first ``_fetch_adp_new_requests`` round-robin). The constant ``o_seq`` is unchanged (no refit).

    Worked example: a decode step of 3,000 sequences on 8 attention-DP ranks counts ⌈3,000/8⌉ = 375 sequences, so
    with TensorRT-LLM's published ``o_seq`` of 4.4457 µs the host term is 1.667 ms instead of 13.337 ms.

    >>> host_sequences("trtllm", 3000, dp=8), host_sequences("trtllm", 3001, dp=8), host_sequences("sglang", 3000, dp=8)
    (375, 376, 3000)
    >>> host_sequences("trtllm", 3000)
    3000
    """
    if ATTENTION_DP_HOST_PER_RANK and engine == "trtllm" and dp > 1:
        return math.ceil(sequences / dp - 1e-9)
    return sequences


ATTENTION_DP_MOE_COLLECTIVES = False
"""Whether a TensorRT-LLM replica of an MoE model with attention data parallelism counts its collectives as the
experts' all-gather of the quantized input and reduce-scatter of the 16-bit output in the MoE layers only (rule B,
:func:`moe_allgather_input_bytes`; session 15, latency28, docs/serving.md). Tried and **not kept**: on top of rule A
the training loss rose 0.2642206 to 0.2651954 (hinge 0), so False: S5's all-reduce in every layer."""


def moe_allgather_input_bytes(model: ModelSpec, gpu: GpuSpec, weight_dtype: str) -> float:
    """Bytes per element of the MoE input TensorRT-LLM all-gathers under attention DP (``a_q`` of rule B,
    docs/serving.md, session 15, latency28). ``CutlassFusedMoE.forward_chunk``
    (``tensorrt_llm/_torch/modules/fused_moe/fused_moe_cutlass.py``, 1.0 era, the default ``moe_backend``) sets
    ``run_post_quant_allgather = self.use_dp and self.parallel_size > 1`` and quantizes before the
    ``allgather([x, x_sf, token_selected_experts, token_final_scales])``: ``fp4_quantize`` for NVFP4 (4 bits and one
    FP8 scale per 16 elements, :data:`NVFP4_ACT_BYTES`), ``static_quantize_e4m3_per_tensor`` for per-tensor FP8 (1 B);
    DeepSeek's block-scaled FP8 (``use_deepseek_fp8_block_scale``; an MLA model here) and unquantized experts go as
    16-bit (2 B). The step's MoE collectives per MoE layer are then (rule B)::

        t = 2α + (tp − 1)/tp·M·h·(a_q + 2 B)/B_link        (all-gather of a_q, reduce-scatter of 2 B)

    Worked example: Llama-4-Maverick NVFP4 on a B200 gives ``a_q`` = 0.5625 B, so 3,000 tokens over 8 GPUs move
    7/8·3,000·5,120·2.5625 B = 34.44 MB a GPU per MoE layer, over 24 MoE layers 0.9184 ms at 900 GB/s, against
    S5's 48 layers of 2·7/8·3,000·5,120·2 B, 2.8672 ms (both plus 48α).

    >>> from planner.catalog import get_gpu, get_model
    >>> m = get_model("llama-4-maverick")
    >>> b200, h100 = get_gpu("b200-hgx"), get_gpu("h100-sxm")
    >>> moe_allgather_input_bytes(m, b200, "nvfp4"), moe_allgather_input_bytes(m, h100, "fp8")
    (0.5625, 1.0)
    >>> moe_allgather_input_bytes(get_model("deepseek-r1"), get_gpu("h200-sxm"), "fp8")
    2.0
    """
    name = str(weight_dtype).lower()
    a = activation_quant_bytes(gpu, name)
    if name == "nvfp4" and a == NVFP4_ACT_BYTES:
        return NVFP4_ACT_BYTES
    if name == "fp8" and a == 1.0 and not (model.kv_lora_rank and model.qk_rope_head_dim):
        return 1.0
    return ACT_BYTES


def mix_terms(model: ModelSpec, *, tp: int, dp: int, kv_cache_dtype: str, context_tokens: float,
              input_tokens: float, cached_tokens: float) -> tuple[float, float, float]:
    """The three per-step constants of :func:`build_replica` that the request mix sets, per GPU of an attention
    group (``tp/dp`` GPUs): ``(kv_read_bytes_per_seq, attn_flops_per_seq, attn_flops_per_prefill_token)``, the KV
    bytes one decoding sequence of ``context_tokens`` reads (:func:`planner.memory.kv_bytes_read_per_step`), its
    decode attention FLOPs, and the prefill attention FLOPs per uncached prompt token
    (:func:`planner.latency.attention_flops` of ``max(I − cached, 1)`` new tokens after ``cached``). Every other field
    of a replica depends on the model, GPU, shape, dtypes, engine and calibration alone (:func:`with_mix`).

    >>> from planner.catalog import get_model
    >>> kv, dec, pre = mix_terms(get_model("llama-3.1-8b"), tp=1, dp=1, kv_cache_dtype="auto", context_tokens=1024,
    ...                          input_tokens=512, cached_tokens=0.0)
    >>> kv / 2**20
    128.0
    """
    tp_attn = max(tp // dp, 1)
    kv_seq = memory.kv_bytes_read_per_step(model, context_tokens=context_tokens, tp=tp_attn,
                                           kv_cache_dtype=kv_cache_dtype)
    attn_dec = latency.attention_flops(model, new_tokens=1, cached_tokens=max(context_tokens - 1, 0.0),
                                       phase="decode") / tp_attn
    new = max(input_tokens - cached_tokens, 1.0)
    attn_pre = latency.attention_flops(model, new_tokens=new, cached_tokens=cached_tokens) / new / tp_attn
    return kv_seq, attn_dec, attn_pre


def with_mix(fields: dict[str, object], *, model: ModelSpec, tp: int, dp: int, kv_cache_dtype: str,
             context_tokens: float, input_tokens: float, cached_tokens: float) -> Replica:
    """The replica whose fields are ``fields`` (those of a :func:`build_replica` result for the same model, GPU,
    shape, dtypes, engine, calibration and flags, at any mix) with the three :func:`mix_terms` of this mix: what
    ``build_replica`` gives for it, field for field (equal, hashed and shown alike, still frozen), without building
    again what the mix does not change (the fleet's setups, :func:`planner.serving.api.setup_simple`).

    >>> from planner.catalog import get_gpu, get_model
    >>> from planner.serving.calibration import DERIVED
    >>> m, g = get_model("llama-3.1-8b"), get_gpu("h100-sxm")
    >>> a = build_replica(m, g, context_tokens=1024, input_tokens=512, calibration=DERIVED)
    >>> b = build_replica(m, g, context_tokens=3000, input_tokens=2000, cached_tokens=500.0, calibration=DERIVED)
    >>> with_mix(dict(a.__dict__), model=m, tp=1, dp=1, kv_cache_dtype="auto", context_tokens=3000, input_tokens=2000,
    ...          cached_tokens=500.0) == b
    True
    """
    kv_seq, attn_dec, attn_pre = mix_terms(model, tp=tp, dp=dp, kv_cache_dtype=kv_cache_dtype,
                                           context_tokens=context_tokens, input_tokens=input_tokens,
                                           cached_tokens=cached_tokens)
    out = dict(fields)
    out["kv_read_bytes_per_seq"] = kv_seq
    out["attn_flops_per_seq"] = attn_dec
    out["attn_flops_per_prefill_token"] = attn_pre
    r = object.__new__(Replica)
    object.__setattr__(r, "__dict__", out)
    return r


def build_replica(model: ModelSpec, gpu: GpuSpec, *, tp: int = 1, pp: int = 1, ep: int = 1, dp: int = 1,
                  weight_dtype: str = "auto", kv_cache_dtype: str = "auto", context_tokens: float,
                  input_tokens: float, cached_tokens: float = 0.0, engine: str = "vllm",
                  calibration: Calibration, enforce_eager: bool = False,
                  quantization: str | None = None, checkpoint_recipe: str | None = None,
                  eager_prefill: bool | None = None, graph_sizes: tuple[int, ...] = (),
                  host_staged: bool = False) -> Replica:
    """The per-step constants of ``model`` on ``tp × pp`` ``gpu`` for requests of ``input_tokens`` (of which
    ``cached_tokens`` hit the prefix cache) decoding at average ``context_tokens``.

    Parameters: ``P_head = V·h`` (LM head), ``P_body = P_active − 2·V·h − P_experts,active`` (the catalog counts an
    input embedding and an untied LM head, as :func:`planner.memory.weight_bytes_per_gpu` does); MoE expert size
    ``(P_total − P_active)/(E − k)``.

    Expert parallelism ``ep`` (vLLM ``--enable-expert-parallel``, SGLang ``--ep-size``; ``ep`` divides ``tp``): each
    GPU holds ``E/ep`` whole experts (``tp/ep``-way sliced), so a GPU's expert weights and FLOPs are still ``1/tp``
    of the total in expectation; what changes is the MoE collective (an all-to-all dispatch and combine of the
    routed tokens instead of an all-reduce, S5'). Attention data parallelism ``dp`` (SGLang
    ``--enable-dp-attention``, vLLM's DP attention; ``dp`` divides ``tp``): attention runs in ``dp`` groups of
    ``tp/dp`` GPUs, each with ``1/dp`` of the sequences, so the attention weights are replicated ``dp`` times
    (``dense_bytes`` per GPU ``×dp``) and a sequence's KV is split ``tp/dp`` ways instead of ``tp`` (no replication
    of KV heads when ``tp`` exceeds them, MLA's single latent head above all); the attention all-reduce runs over
    ``tp/dp`` GPUs with ``1/dp`` of the tokens.

    ``enforce_eager`` (vLLM's engine argument): no step is captured as a CUDA graph, so every step, decode-only ones
    included, takes at least the eager floor ``L·f_eager`` (S1; :data:`EAGER_PREFILL` is the same floor for prompt
    steps only). ``eager_prefill``: whether a step that carries prompt tokens runs without a CUDA graph (its floor
    ``L·f_eager``); None takes the engine's own (:data:`EAGER_PREFILL`), True is TensorRT-LLM's PyTorch backend
    (``trtllm-bench --backend pytorch``). ``quantization="gptq"`` with a 4-bit GPTQ checkpoint: vLLM's ExLlama
    kernels instead of Marlin (:data:`EXLLAMA_MAX_Q_GEMM_ROWS`): a step of more than 50 tokens also writes and
    reads the 16-bit copy of the dense linear weights, ``dequant_bytes = 4 B·P_body/tp``
    (:data:`DEQUANT_BYTES_PER_PARAM`; dense models only).
    ``checkpoint_recipe`` (FP8/INT8 weights only): the :func:`unquantized_params` ``P_16`` of the checkpoint stay in
    16 bits, so a step reads ``P_16·(2 − 1 B)/tp`` more and the GEMMs run at the blend of the two peaks,
    ``F_peak = 1/((1 − s)/F_8 + s/F_16)`` with ``s = P_16/P_body``. ``graph_sizes`` (rule CG,
    :func:`cuda_graph_sizes`): the per-rank CUDA-graph batch sizes a decode-only step is padded to
    (:func:`padded_decode_tokens`); empty, no padding. ``host_staged`` (rule H, :func:`host_staged_link_bytes_per_s`):
    the ``tp·pp`` GPUs have no peer access and share one PCIe uplink to host memory, through which NCCL stages every
    collective: each rank's link is that uplink's ``1/(tp·pp)``.

    >>> from planner.catalog import get_gpu, get_model
    >>> from planner.serving.calibration import DERIVED
    >>> r = build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), context_tokens=1024, input_tokens=512,
    ...                   calibration=DERIVED)
    >>> round(r.body_flops_per_token / 1e9, 2), r.kv_read_bytes_per_seq / 2**20
    (13.96, 128.0)
    """
    dtype, total_bytes = _weights_per_gpu(model, tp=tp, weight_dtype=weight_dtype)
    head = float(model.vocab_size or 0) * model.hidden_size
    e, k = model.num_experts or 0, model.num_experts_per_tok or 0
    per_expert = routed_expert_params(model)
    moe = per_expert > 0
    experts_active = k * per_expert if moe else 0.0
    body = max(model.params_active - 2 * head - experts_active, 0.3 * model.params_active)
    expert_bytes = total_bytes * per_expert / model.params_total if moe else 0.0
    dense_bytes = (total_bytes - e * expert_bytes) * dp
    kv_seq, attn_dec, attn_pre = mix_terms(model, tp=tp, dp=dp, kv_cache_dtype=kv_cache_dtype,
                                           context_tokens=context_tokens, input_tokens=input_tokens,
                                           cached_tokens=cached_tokens)
    link, pcie = link_bytes_per_s_bidir(gpu)
    if dtype not in ("bf16", "fp16", "fp32", "fp8", "w8a8", "int8", "w8a16", *_W4, *_FP4):
        raise ArgumentError("weight_dtype", weight_dtype, "bf16, fp16, fp8, int8 (w8a8), w8a16, int4/awq/gptq, nvfp4 "
                            "or mxfp4")
    has_fp4 = bool(getattr(gpu, "fp4_flops_per_s", None))
    if dtype in _W4 or (dtype in _FP4 and not has_fp4):
        quant = calibration.w4_kernel_eff
    elif W8_WEIGHT_ONLY_KERNEL_EFF and weight_only_mixed_input(engine, gpu, dtype):
        quant = calibration.w4_kernel_eff
    else:
        quant = calibration.fp4_eff if dtype in _FP4 else 1.0
    exllama = (quantization or "").strip().lower() == "gptq" and dtype in ("gptq", "int4") and not moe
    peak = gemm_peak_flops(gpu, weight_dtype=dtype)
    p16 = unquantized_params(model, checkpoint_recipe) if dtype in ("fp8", "w8a8", "int8") else 0.0
    if p16:
        dense_bytes += p16 * (2.0 - 1.0) / tp
        share = min(p16 / body, 1.0)
        peak = 1.0 / ((1.0 - share) / peak + share / float(gpu.bf16_flops_per_s))
    pytorch = engine == "trtllm" and bool(eager_prefill)  # TensorRT-LLM's PyTorch backend (EAGER_PREFILL's note)
    rule_b = ATTENTION_DP_MOE_COLLECTIVES and engine == "trtllm" and dp > 1 and moe and tp > 1 and ep <= 1
    act_passes = (layer_activation_passes(model, gpu, engine=engine, weight_dtype=dtype, tp=tp, dp=dp,
                                          pytorch_fusions=LAYER_ACT_TRTLLM_FUSION and pytorch)
                  if LAYER_ACT_TRAFFIC else ())
    return Replica(
        layers=model.num_hidden_layers, hidden=model.hidden_size, tp=tp, pp=pp, ep=ep,
        dense_bytes=dense_bytes, expert_bytes=expert_bytes, num_experts=e if moe else 0,
        experts_per_token=k if moe else 0,
        body_flops_per_token=2 * body / tp, expert_flops_per_token=2 * experts_active / tp,
        head_flops_per_token=2 * head / tp,
        kv_read_bytes_per_seq=kv_seq, attn_flops_per_seq=attn_dec, attn_flops_per_prefill_token=attn_pre,
        peak_flops_per_s=peak, peak16_flops_per_s=float(gpu.bf16_flops_per_s),
        mem_bw_bytes_per_s=float(gpu.mem_bw_bytes_per_s), link_is_pcie=pcie,
        link_bytes_per_s=host_staged_link_bytes_per_s(link / 2, ranks=tp * pp) if host_staged else link / 2,
        quant_kernel_eff=quant, engine=engine,
        vendor_eff=calibration.rocm_factor(engine) if gpu.vendor.upper() == "AMD" else 1.0,
        fixed_s=calibration.overhead_s(TRTLLM_PYTORCH if pytorch else engine)
        + (calibration.tp_fixed_s(engine) * math.log2(tp * pp) if tp * pp > 1 else 0.0),
        seq_s=calibration.seq_overhead_s(engine) + (calibration.tp_seq_s(engine) * math.log2(tp * pp)
                                                    if tp * pp > 1 else 0.0),
        ttft_fixed_s=calibration.ttft_fixed_s(engine), dp=dp, attn_eff=attention_eff(gpu, calibration),
        eager=bool(enforce_eager),
        eager_prefill=engine in EAGER_PREFILL if eager_prefill is None else bool(eager_prefill),
        dequant_bytes=DEQUANT_BYTES_PER_PARAM * body / tp if exllama else 0.0,
        overlap_seq=overlaps_output_processing(engine, pp=pp, enforce_eager=enforce_eager),
        overlap_host=overlaps_host_work(engine, pytorch_backend=pytorch, pp=pp),
        moe_act_bytes=(moe_activation_bytes_per_token(model, gpu, engine=engine, weight_dtype=dtype, tp=tp, ep=ep)
                       if moe and MOE_ACT_TRAFFIC else 0.0),
        layer_act_passes=act_passes,
        act_cache_bytes=activation_cache_bytes(gpu) if act_passes and LAYER_ACT_L2 else 0.0,
        graph_sizes=tuple(int(g) for g in graph_sizes),
        moe_comm_layers=(len(model.moe_layers) or model.num_hidden_layers) if rule_b else 0,
        moe_gather_bytes=moe_allgather_input_bytes(model, gpu, dtype) if rule_b else ACT_BYTES,
        moe_layer_count=(len(model.moe_layers) or model.num_hidden_layers) if moe else 0,
    )


COMM_UNDER_LAUNCH_FLOOR = False
"""Whether a step's collectives count under its launch floor (rule L, :func:`comm_under_launch_floor`; session 16,
latency36, docs/serving.md). Tried and **not kept**: with the published constants the training loss rose 0.2561437
to 0.2595006 (hinge 0; its rule asked for at most 0.2560437), most of it dstack's H100 ShareGPT runs, whose
chunked-prefill steps run eager with 20 MB all-reduces. False: S1's order, the floor, then ``t_comm`` after it."""


def comm_under_launch_floor(device_s: float, comm_s: float, floor_s: float) -> tuple[float, float]:
    """``(body, comm)`` of a step under rule L (docs/serving.md, session 16, latency36): the launch floor
    ``L_launch·f`` (S1) is the host's kernel-launch time and the tensor-parallel collectives (S5) are kernels on the
    device timeline, so a launch-bound step (no CUDA graph, the floor above the device time) runs each all-reduce in
    the gap before the host launches the next kernel::

        body = max(t_gemm + t_attn + t_act + t_comm, L_launch·f),   comm = 0

    where S1 has ``body = max(t_gemm + t_attn + t_act, L_launch·f)`` and ``t_comm`` after it. The two agree whenever
    the device time exceeds the floor. ``device_s`` is ``t_gemm + t_attn + t_act``.

    Worked example: an eager decode step of Llama-3.1-405B at TP 8 with 11.6 ms of device work, 1.5 ms of
    all-reduces and a 65.3 ms floor (126 layers × 0.518 ms) takes 65.3 ms instead of 66.8 ms; with 80 ms of device
    work it takes 81.5 ms either way.

    >>> [round(x * 1e3, 1) for x in comm_under_launch_floor(0.0116, 0.0015, 0.0653)]
    [65.3, 0.0]
    >>> [round(x * 1e3, 1) for x in comm_under_launch_floor(0.080, 0.0015, 0.0653)]
    [81.5, 0.0]
    """
    return max(device_s + comm_s, floor_s), 0.0


MOE_LAUNCH_BY_LAYER = False
"""Rule K (session 16, latency40, docs/serving.md): whether :func:`launch_layers` counts only the MoE decoder layers
twice (``L + L_moe``) instead of every layer of an MoE model (``2·L``). Off: ``2·L``."""


def launch_layers(r: Replica) -> float:
    """The layers a step's launch floor counts (S1's ``L·(2 if MoE)``): an MoE layer launches its attention and its
    expert kernels as two, so it counts twice. The step's floor is ``launch_layers(r)·f_layer`` (``f_eager`` without
    a CUDA graph); :func:`planner.serving.replay.next_launch_wait_s` takes the eager one as an SGLang prompt step's
    launch.

    Rule K (:data:`MOE_LAUNCH_BY_LAYER`): only the MoE decoder layers count twice, ``L + L_moe``, for the models
    whose code mixes dense and MoE layers (``ModelSpec.moe_layers``: Llama-4-Maverick's ``interleave_moe_layer_step``
    2, 48 + 24 = 72 instead of 96; DeepSeek-V3/R1's ``first_k_dense_replace`` 3, 61 + 58 = 119 instead of 122);
    a model whose every layer is MoE counts ``2·L`` either way.

    >>> from planner.catalog import get_gpu, get_model
    >>> from planner.serving.calibration import DERIVED
    >>> h100 = get_gpu("h100-sxm")
    >>> [launch_layers(build_replica(get_model(m), h100, context_tokens=400, input_tokens=300, calibration=DERIVED))
    ...  for m in ("llama-3.1-8b", "qwen3-30b-a3b")]
    [32.0, 96.0]
    """
    if not r.num_experts:
        return float(r.layers)
    if MOE_LAUNCH_BY_LAYER and r.moe_layer_count:
        return float(r.layers + r.moe_layer_count)
    return r.layers * 2.0


def step_time_s(r: Replica, cal: Calibration, *, decode_seqs: float, prefill_tokens: float = 0.0,
                prefill_seqs: float = 0.0) -> float:
    """Time of one engine step: the sum of :func:`step_parts`.

    Worked example, Llama-3.1-8B bf16 on one H100 SXM, 32 sequences at 1,024 tokens of context, derived constants:
    weights 16.06e9 B / (3.35e12·0.8) = 5.99 ms; KV 32·128 MiB / (3.35e12·0.6) = 2.14 ms; GEMM compute
    (13.96e9·32 + 1.05e9·32)·(32+64)/32 / (989e12·0.7) = 2.08 ms < 5.99 ms; overhead 0.6 + 32·0.01 ms = 0.92 ms:
    9.05 ms.

    >>> from planner.catalog import get_gpu, get_model
    >>> from planner.serving.calibration import DERIVED
    >>> r = build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), context_tokens=1024, input_tokens=512,
    ...                   calibration=DERIVED)
    >>> round(step_time_s(r, DERIVED, decode_seqs=32) * 1e3, 2)
    9.05
    """
    fixed, body, comm = step_parts(r, cal, decode_seqs=decode_seqs, prefill_tokens=prefill_tokens,
                                   prefill_seqs=prefill_seqs)
    return fixed + body + comm


def step_parts(r: Replica, cal: Calibration, *, decode_seqs: float, prefill_tokens: float = 0.0,
               prefill_seqs: float = 0.0) -> tuple[float, float, float]:
    """The parts of one engine step (S1-S7) with ``decode_seqs`` decoding sequences and ``prefill_tokens`` prompt
    tokens (from ``prefill_seqs`` prompts, whose last chunk samples a token): ``(t_fixed, max(t_gemm + t_attn,
    floor), t_comm)`` in seconds. The fixed costs are those of the calibration ``r`` was built with. When the
    per-sequence cost overlaps the GPU (``r.overlap_seq``, S2''), ``t_fixed`` holds the fixed part and only the
    per-sequence host time beyond ``t_body + t_comm``. Under rule O (``r.overlap_host``, :func:`overlaps_host_work`),
    ``t_fixed`` is ``max(t_launch + h − t_body − t_comm, 0)``: the host time beyond the GPU's."""
    d, p = decode_seqs, prefill_tokens
    m = d + p
    if m <= 0:
        return 0.0, 0.0, 0.0
    sampled = d + prefill_seqs
    # the real sequences only (CG's padding repeats a dummy request on the GPU); rule A: one rank's share
    dp = r.dp
    host = r.seq_s * host_sequences(r.engine, sampled, dp=dp)
    routed = m  # tokens that pick experts (CG's dummy rows repeat one token: its k experts, counted as none)
    if r.graph_sizes and p <= 0:  # CG: a decode-only batch runs at its padded CUDA-graph size
        m = sampled = padded_decode_tokens(d, r.graph_sizes, dp=dp)
    bw = r.mem_bw_bytes_per_s
    weight_bw = bw * cal.weight_bw_eff  # the same product each time it divides below
    gemm_half = cal.gemm_half_tokens
    eff = cal.gemm_eff * m / (m + gemm_half) * r.quant_kernel_eff
    flops = r.body_flops_per_token * m + r.head_flops_per_token * sampled
    compute = flops / (r.peak_flops_per_s * eff * r.vendor_eff)
    read = r.dense_bytes
    if r.dequant_bytes and m > EXLLAMA_MAX_Q_GEMM_ROWS:  # ExLlama GPTQ: a 16-bit copy rebuilt, then cuBLAS
        read += r.dequant_bytes
    e = r.num_experts
    if e:
        k = r.experts_per_token
        touched = min(e * (1 - (1 - k / e) ** routed), k * routed, e)  # latency.experts_touched, unchecked
        read += touched * r.expert_bytes
        per_expert_tokens = m * k / max(touched, 1.0)
        eff_e = cal.moe_eff * cal.gemm_eff * per_expert_tokens / (per_expert_tokens + gemm_half)
        compute += r.expert_flops_per_token * m / (r.peak_flops_per_s * eff_e * r.quant_kernel_eff * r.vendor_eff)
    gemm = read / weight_bw
    if compute > gemm:  # max(read time, compute), the first of equals as max keeps it
        gemm = compute
    if r.moe_act_bytes:  # S7: permute/activation/sum passes between the grouped GEMMs, memory-bound
        gemm += r.moe_act_bytes * m / weight_bw
    if r.layer_act_passes:  # S8: norms, quantisation, RoPE, SiLU-and-mul, memory-bound; S8L: beyond the cache C
        tokens = p if LAYER_ACT_PROMPT_ONLY else m
        moved = sum(n * max(0.0, tokens * b - r.act_cache_bytes) for b, n in r.layer_act_passes)
        gemm += moved / weight_bw
    g = float(dp)  # attention groups: each GPU's attention sees 1/dp of the sequences and tokens
    attn = max(d / g * r.kv_read_bytes_per_seq / (bw * cal.kv_bw_eff),
               (d * r.attn_flops_per_seq + p * r.attn_flops_per_prefill_token) / g
               / (r.peak16_flops_per_s * (cal.attn_eff if r.attn_eff is None else r.attn_eff) * r.vendor_eff))
    comm = 0.0
    tp = r.tp
    if tp > 1 or r.pp > 1 or r.ep > 1:
        alpha = cal.pcie_allreduce_latency_s if r.link_is_pcie else cal.allreduce_latency_s
        msg = m * r.hidden * ACT_BYTES
        tp_attn = tp // dp
        if tp_attn > 1:  # attention output all-reduce within a group, 1/dp of the tokens
            comm += r.layers * (alpha + 2 * (tp_attn - 1) / tp_attn * msg / g / r.link_bytes_per_s)
        if r.ep > 1 and e:  # MoE all-to-all: dispatch and combine the k routed copies of each token
            comm += 2 * r.layers * (alpha + r.experts_per_token * msg / tp * (r.ep - 1) / r.ep
                                    / r.link_bytes_per_s)
        elif r.moe_comm_layers:  # rule B: the experts' all-gather (a_q) and reduce-scatter (2 B), MoE layers only
            comm += r.moe_comm_layers * (2 * alpha + (tp - 1) / tp * m * r.hidden
                                         * (r.moe_gather_bytes + ACT_BYTES) / r.link_bytes_per_s)
        elif tp > 1:  # MLP/MoE all-reduce (with dp attention: all-gather + reduce-scatter, the same bytes)
            comm += r.layers * (alpha + 2 * (tp - 1) / tp * msg / r.link_bytes_per_s)
        if r.pp > 1:
            comm += (r.pp - 1) * (alpha + msg / r.link_bytes_per_s)
    layers = launch_layers(r)
    floor = layers * cal.layer_floor_s
    eager = r.eager or (p > 0 and r.eager_prefill)
    if eager:  # no CUDA graph for this step: launches from Python
        floor = max(floor, layers * cal.eager_layer_floor_s)
    if COMM_UNDER_LAUNCH_FLOOR:  # rule L: the collectives are device work, hidden under a launch-bound step's floor
        body, comm = comm_under_launch_floor(gemm + attn, comm, floor)
    else:
        body = max(gemm + attn, floor)
    if r.overlap_host:  # rule O: max(GPU, launch + host); an eager step's kernel launches stay serial on the host
        launch = layers * cal.eager_layer_floor_s if eager else 0.0
        return max(launch + r.fixed_s + host - (body + comm), 0.0), body, comm
    if r.overlap_seq:  # S2'': the previous step's output processing runs while the GPU computes
        return r.fixed_s + max(host - (body + comm), 0.0), body, comm
    return r.fixed_s + host, body, comm


def step_timer(r: Replica, cal: Calibration) -> Callable[[float, float, float], float]:
    """:func:`step_time_s` of ``r`` and ``cal`` as a function of ``(decode_seqs, prefill_tokens, prefill_seqs)``,
    with what does not change from step to step worked out once: ``t(d, p, n_p) == step_time_s(r, cal,
    decode_seqs=d, prefill_tokens=p, prefill_seqs=n_p)``, the same floats from the same operations in the same
    order (:func:`planner.serving.schedule.state` times two to four steps a state, and a plan solves about 560
    states on about 26 replicas).

    What is worked out once is a product, quotient or choice of ``r``'s and ``cal``'s fields alone, formed as
    :func:`step_parts` forms it: the weights' bandwidth ``B·e_w``, the weight read ``W / (B·e_w)``, the KV read's
    ``B·e_kv``, attention's ``peak16·e_attn·vendor``, the all-reduce factor ``2(tp−1)/tp``, the launch floor and its
    eager form; ``max(x, y)`` is written ``y if y > x else x`` (what ``max`` returns: the first unless the second is
    greater). Only the replicas most plans run take this form: a dense model (no experts, no MoE or per-layer
    activation passes, no dequantised copy), one attention group, no CUDA-graph padding and no host overlap (S2'',
    rule O); :func:`step_parts`' own rules that a module switch turns (rule L, :data:`COMM_UNDER_LAUNCH_FLOOR`) are
    read at each call, and with rule L on the step goes the long way. Any other replica gets
    ``step_time_s`` itself (``tests/test_speed26.py`` compares both with it over random replicas and steps).

    Worked example: :func:`step_time_s`'s (Llama-3.1-8B bf16 on one H100 SXM, 32 sequences at 1,024 tokens): 9.05 ms.

    >>> from planner.catalog import get_gpu, get_model
    >>> from planner.serving.calibration import DERIVED
    >>> r = build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), context_tokens=1024, input_tokens=512,
    ...                   calibration=DERIVED)
    >>> t = step_timer(r, DERIVED)
    >>> round(t(32, 0.0, 0.0) * 1e3, 2), t(32, 0.0, 0.0) == step_time_s(r, DERIVED, decode_seqs=32)
    (9.05, True)
    """
    if (r.num_experts or r.dequant_bytes or r.moe_act_bytes or r.layer_act_passes or r.graph_sizes or r.dp != 1
            or r.overlap_host or r.overlap_seq or r.moe_comm_layers):
        def long(d: float, p: float, n_p: float) -> float:
            return step_time_s(r, cal, decode_seqs=d, prefill_tokens=p, prefill_seqs=n_p)
        return long
    bw = r.mem_bw_bytes_per_s
    weight_bw = bw * cal.weight_bw_eff
    gemm_read = r.dense_bytes / weight_bw  # no experts, no ExLlama copy: the read is the dense weights'
    gemm_half, gemm_eff, quant_eff, vendor = cal.gemm_half_tokens, cal.gemm_eff, r.quant_kernel_eff, r.vendor_eff
    body_flops, head_flops, peak = r.body_flops_per_token, r.head_flops_per_token, r.peak_flops_per_s
    g = float(r.dp)  # 1.0, divided by as step_parts does
    kv_seq, kv_bw = r.kv_read_bytes_per_seq, bw * cal.kv_bw_eff
    attn_seq, attn_token = r.attn_flops_per_seq, r.attn_flops_per_prefill_token
    attn_peak = r.peak16_flops_per_s * (cal.attn_eff if r.attn_eff is None else r.attn_eff) * r.vendor_eff
    tp, pp = r.tp, r.pp
    comm_any = tp > 1 or pp > 1 or r.ep > 1
    alpha = cal.pcie_allreduce_latency_s if r.link_is_pcie else cal.allreduce_latency_s
    hidden, n_layers, link = r.hidden, r.layers, r.link_bytes_per_s
    # one attention group (dp 1): the attention output's all-reduce (over tp // dp = tp GPUs, its message divided
    # by dp = 1.0, which leaves a float as it is) and the MLP's are the same term, formed once and added twice
    share = 2 * (tp - 1) / tp if tp > 1 else 0.0
    layers = launch_layers(r)
    floor = layers * cal.layer_floor_s
    eager_layer = layers * cal.eager_layer_floor_s
    floor_eager = eager_layer if eager_layer > floor else floor  # max(floor, layers·f_eager)
    eager_always, eager_prefill = r.eager, r.eager_prefill
    seq_s, fixed_s = r.seq_s, r.fixed_s

    def fast(d: float, p: float, n_p: float) -> float:
        m = d + p
        if m <= 0:
            return 0.0
        if COMM_UNDER_LAUNCH_FLOOR:
            return step_time_s(r, cal, decode_seqs=d, prefill_tokens=p, prefill_seqs=n_p)
        sampled = d + n_p
        host = seq_s * sampled  # host_sequences: every sequence (one attention group)
        eff = gemm_eff * m / (m + gemm_half) * quant_eff
        compute = (body_flops * m + head_flops * sampled) / (peak * eff * vendor)
        gemm = compute if compute > gemm_read else gemm_read
        kv = d / g * kv_seq / kv_bw
        flops = (d * attn_seq + p * attn_token) / g / attn_peak
        attn = flops if flops > kv else kv
        comm = 0.0
        if comm_any:
            msg = m * hidden * ACT_BYTES
            if tp > 1:
                reduce = n_layers * (alpha + share * msg / link)
                comm += reduce  # the attention output's
                comm += reduce  # the MLP's
            if pp > 1:
                comm += (pp - 1) * (alpha + msg / link)
        lower = floor_eager if eager_always or (p > 0 and eager_prefill) else floor
        body = gemm + attn
        if lower > body:
            body = lower
        return fixed_s + host + body + comm
    return fast


FLOOR_ROUNDING = 1e-9
"""Relative slack :func:`step_floor_s` leaves below its bound: it forms ``W + d·K`` in another order than
:func:`step_parts` forms its terms, so the two may differ by a few units in the last place."""


def step_floor_s(r: Replica, cal: Calibration, *, decode_seqs: float) -> float:
    """A lower bound on :func:`step_time_s` of every step with ``decode_seqs`` decoding sequences (and any prompt
    tokens; at least one token in all), from two of :func:`step_parts`' terms alone::

        t_step ≥ max(W + d·K, L_launch·f_layer)·(1 − 1e-9),   W = dense_bytes / (B·e_w),
                                                               K = kv_read_bytes_per_seq / (dp·B·e_kv)

    Why it holds: the step's body is ``max(t_gemm + t_attn, floor)`` (rule L: ``t_comm`` inside the max as well);
    ``t_gemm`` is at least the read of the dense weights (S1: the read only grows with experts, ExLlama's copy, S7
    and S8, and the compute only replaces it when larger); ``t_attn`` at least the decoding sequences' KV read
    (S3); the floor at least ``launch_layers(r)·f_layer`` (an eager step's only raises it); and the fixed part and
    ``t_comm`` add nothing negative. That last needs non-negative overheads (``o_engine``, ``o_seq``, the
    all-reduce latencies) and non-negative byte counts: otherwise 0 is returned (no bound). The factor
    ``1 − FLOOR_ROUNDING`` covers the rounding of forming the sum in another order. Used to prune the fleet
    search (:func:`planner.serving.schedule.rate_bound`); any change to :func:`step_parts` that could lower a
    step below it must change it too (``tests/test_speed15.py`` checks it on random steps).

    Worked example, :func:`step_time_s`'s (Llama-3.1-8B bf16 on one H100 SXM, 32 sequences at 1,024 tokens,
    9.05 ms): weights 5.99 ms + KV 2.14 ms = 8.13 ms.

    >>> from planner.catalog import get_gpu, get_model
    >>> from planner.serving.calibration import DERIVED
    >>> r = build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), context_tokens=1024, input_tokens=512,
    ...                   calibration=DERIVED)
    >>> round(step_floor_s(r, DERIVED, decode_seqs=32) * 1e3, 2)
    8.13
    """
    bw = r.mem_bw_bytes_per_s
    if not (r.fixed_s >= 0 and r.seq_s >= 0 and cal.allreduce_latency_s >= 0 and cal.pcie_allreduce_latency_s >= 0
            and r.dense_bytes >= 0 and r.kv_read_bytes_per_seq >= 0 and r.expert_bytes >= 0
            and r.dequant_bytes >= 0 and r.moe_act_bytes >= 0 and all(n >= 0 for _b, n in r.layer_act_passes)
            and (not r.num_experts or 0 <= r.experts_per_token <= r.num_experts)
            and bw > 0 and cal.weight_bw_eff > 0 and cal.kv_bw_eff > 0 and cal.layer_floor_s >= 0
            and decode_seqs >= 0 and r.dp >= 1):
        return 0.0
    weights = r.dense_bytes / (bw * cal.weight_bw_eff)
    kv = decode_seqs * r.kv_read_bytes_per_seq / (r.dp * bw * cal.kv_bw_eff)
    return max(weights + kv, launch_layers(r) * cal.layer_floor_s) * (1.0 - FLOOR_ROUNDING)
