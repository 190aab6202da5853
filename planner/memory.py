"""Self-hosted GPU memory, model physics only: weights, KV bytes per token and per request, the KV budget and
concurrency (M1-M11).

Pure functions, no I/O, no engine knowledge: what a serving engine reserves and how it logs its KV cache is
:mod:`planner.engines`, which builds on this module (never the other way round). Engine-specific layouts enter
here as plain numbers (the block size, the layers an engine pads its hybrid groups to).

Formula IDs refer to ``docs/method.md``: M1 weights, M2 GQA/MHA/MQA, M3 MLA,
M4 sliding window, M6 quantized KV, M7 paging, M8 KV per request, M9 KV budget, M11 fit and concurrency.
"""

from __future__ import annotations

import math

from planner.defaults import DEFAULT_BLOCK_SIZE, DEFAULT_MAX_NUM_BATCHED_TOKENS
from planner.errors import ArgumentError, check_fraction, check_number
from planner.specs import GIB, ModelSpec

__all__ = [
    "average_context_tokens",
    "blocks",
    "check_parallelism",
    "kv_budget_bytes",
    "kv_bytes_per_request",
    "kv_bytes_per_token",
    "kv_bytes_per_token_layer",
    "kv_dtype_bytes",
    "kv_bytes_read_per_step",
    "kv_utilization",
    "layer_split",
    "max_concurrency",
    "pp_layer_ranges",
    "replicas_for_concurrency",
    "stage_layer_split",
    "stage_weight_bytes",
    "weight_bytes_per_gpu",
]


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
    # weight-only INT8 (W8A16: 8-bit weights, per-channel scales, 16-bit activations and tensor-core math)
    "w8a16": 8.0,
    # 4-bit group quantization (AWQ/GPTQ, group 128): 4 bits + one fp16 scale and one 4-bit zero per 128 weights.
    "int4": 4.0 + (16 + 4) / 128, "awq": 4.0 + (16 + 4) / 128, "gptq": 4.0 + (16 + 4) / 128,
    # MXFP4: 4-bit values + one 8-bit shared exponent per 32 values = 4.25 bits (M1).
    "mxfp4": 4.25, "nvfp4": 4.0 + 8 / 16,
}


def kv_dtype_bytes(kv_cache_dtype: str, *, model: ModelSpec, weight_dtype: str = "auto") -> float:
    """Bytes per cached element: ``auto`` is the model's activation dtype (bf16/fp16 = 2, fp32 = 4); fp8/int8 = 1 (M6).

    >>> from planner.catalog import get_model
    >>> kv_dtype_bytes("auto", model=get_model("llama-3.1-8b")), kv_dtype_bytes("FP8", model=get_model("llama-3.1-8b"))
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
    tp, pp = check_parallelism(model, tp=tp, pp=pp)
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


def pp_layer_ranges(num_layers: int, *, pp: int) -> tuple[tuple[int, int], ...]:
    """The ``[start, end)`` decoder layers of each pipeline stage, as vLLM splits them.

    ``get_pp_indices`` (vllm-project/vllm ``vllm/distributed/utils.py``, the same code in the 0.8.5 and 0.19.0
    wheels): every stage gets ``L // PP`` layers, and the ``L % PP`` left over go one each to the stages before the
    last, from the second-to-last backwards (``partitions[-i] += 1`` for ``i`` in ``2 .. r + 1``); the last stage,
    which also holds the final norm and the LM head, never gets one. ``VLLM_PP_LAYER_PARTITION`` overrides it (not
    modelled).

    Worked example: DeepSeek-R1's 61 layers over PP 2 are [31, 30] (layers 0-30 and 31-60); 32 layers over PP 4 are
    8 each; 30 over PP 4 are [7, 8, 8, 7].

    >>> pp_layer_ranges(61, pp=2), pp_layer_ranges(30, pp=4)
    (((0, 31), (31, 61)), ((0, 7), (7, 15), (15, 23), (23, 30)))
    """
    layers = int(check_number("num_hidden_layers", num_layers, minimum=1, integer=True))
    stages = int(check_number("pp", pp, minimum=1, integer=True))
    if stages > layers:
        raise ArgumentError("pp", pp, f"at most the model's {layers} layers")
    parts = [layers // stages] * stages
    for i in range(2, layers % stages + 2):
        parts[-i] += 1
    out, start = [], 0
    for n in parts:
        out.append((start, start + n))
        start += n
    return tuple(out)


def stage_layer_split(model: ModelSpec, *, pp: int = 1) -> tuple[tuple[int, int], ...]:
    """(full-attention, sliding-window) layers of each pipeline stage, by :func:`pp_layer_ranges` and the model's
    ``layer_types`` (a model with a window and no ``layer_types`` windows every layer).

    >>> from planner.catalog import get_model
    >>> stage_layer_split(get_model("deepseek-r1"), pp=2), stage_layer_split(get_model("gemma-2-9b"), pp=2)
    (((31, 0), (30, 0)), ((10, 11), (11, 10)))
    """
    _, pp = check_parallelism(model, pp=pp)
    out = []
    for start, end in pp_layer_ranges(model.num_hidden_layers, pp=pp):
        if model.sliding_window and not model.layer_types:
            out.append((0, end - start))
        elif not model.layer_types or not model.sliding_window:
            out.append((end - start, 0))
        else:
            swa = sum(1 for t in model.layer_types[start:end] if t == "sliding_attention")
            out.append((end - start - swa, swa))
    return tuple(out)


def stage_weight_bytes(model: ModelSpec, *, tp: int = 1, pp: int = 1, weight_dtype: str = "auto") -> tuple[float, ...]:
    """Weight bytes on one GPU of each pipeline stage (M1), as vLLM places the layers.

    ``W_s = (Σ_{i∈s} ℓ_i·c·β + E·[s = 0]·β_e + Hd_s·β_e) / TP`` with ``ℓ_i`` the decoder layers' parameters
    (``layer_params``, estimated from the config), ``c = (P − E − Hd − d) / Σℓ`` scaling them to the catalog's
    parameter count ``P``, ``E`` the input embedding (on the first stage: ``VocabParallelEmbedding`` is built only
    ``if get_pp_group().is_first_rank``), ``Hd_s`` the LM head and final norm on the last stage (``ParallelLMHead``
    ``if get_pp_group().is_last_rank``; a tied model builds its embedding there too, ``models/llama.py``), ``β`` the
    bytes per parameter of ``weight_dtype`` and ``β_e`` the embeddings' (16-bit when the weights are quantized, as in
    :func:`weight_bytes_per_gpu`). With ``weight_dtype`` ``auto`` and an exact ``checkpoint_bytes`` each stage takes
    its share of the checkpoint by parameters (***approximate for mixed-precision checkpoints***). Layers per stage
    from :func:`pp_layer_ranges`. PP 1, or a spec without ``layer_params``, gives the even split of
    :func:`weight_bytes_per_gpu` (unchanged). Ref: vLLM ``vllm/model_executor/models/utils.py`` ``make_layers``,
    ``models/deepseek_v2.py``, ``models/llama.py`` (read in the 0.8.5 and 0.19.0 wheels).

    Worked example, DeepSeek-R1 (FP8; bf16 embedding and head) at TP 8, PP 2: stage 0 holds 3 dense and 28 MoE
    layers and the embedding, 37.9 GiB per GPU; stage 1 holds 30 MoE layers, the norm and the LM head, 40.4 GiB; the
    even split was 39.2 GiB. Llama-3.1-8B at PP 4: 4.23 / 3.25 / 3.25 / 4.23 GiB (the llm-d v0.19 log loads 4.26 GiB on
    the first stage and 3.28 on the third, each with the 32 MiB rope cache).

    >>> from planner.catalog import get_model
    >>> [round(w / 2**30, 1) for w in stage_weight_bytes(get_model("deepseek-r1"), tp=8, pp=2)]
    [37.9, 40.4]
    >>> [round(w / 2**30, 2) for w in stage_weight_bytes(get_model("llama-3.1-8b"), pp=4)]
    [4.23, 3.25, 3.25, 4.23]
    """
    tp, pp = check_parallelism(model, tp=tp, pp=pp)
    whole = weight_bytes_per_gpu(model, tp=tp, pp=1, weight_dtype=weight_dtype)
    if pp == 1:
        return (whole,)
    if not model.layer_params or len(model.layer_params) != model.num_hidden_layers or not model.embedding_params:
        return (whole / pp,) * pp
    embed = float(model.embedding_params)
    head = 0.0 if model.tie_word_embeddings else embed
    layers_total = float(sum(model.layer_params))
    scale = max(model.params_total - embed - head - model.hidden_size, 0.0) / layers_total
    name = str(weight_dtype).strip().lower()
    ranges = pp_layer_ranges(model.num_hidden_layers, pp=pp)
    stage_params = []
    for s, (start, end) in enumerate(ranges):
        layer_part = sum(model.layer_params[start:end]) * scale
        edge = (embed if s == 0 else 0.0) + ((embed if model.tie_word_embeddings else head) + model.hidden_size
                                            if s == pp - 1 else 0.0)
        stage_params.append((layer_part, edge))
    if name == "auto" and model.checkpoint_bytes:
        counted = sum(a + b for a, b in stage_params)
        return tuple(model.checkpoint_bytes * (a + b) / counted / tp for a, b in stage_params)
    if name == "auto":
        name = model.weight_dtype
    if name not in _WEIGHT_DTYPE_BITS:
        raise ArgumentError("weight_dtype", weight_dtype, "one of auto, " + ", ".join(_WEIGHT_DTYPE_BITS))
    beta = _WEIGHT_DTYPE_BITS[name] / 8
    beta_edge = 2.0 if beta < 2 else beta
    return tuple((a * beta + b * beta_edge) / tp for a, b in stage_params)


def layer_split(model: ModelSpec, *, pp: int = 1) -> tuple[int, int]:
    """(full-attention layers, sliding-window layers) of the largest pipeline stage.

    A model with a ``sliding_window`` but no ``layer_types`` windows every layer (Mistral-7B-v0.1); with PP the
    largest stage (``ceil(L/PP)`` layers) holds its proportional share of full layers: the split SGLang and
    TensorRT-LLM use in :mod:`planner.engines` (vLLM's own per-stage split is :func:`stage_layer_split`). A PP above
    the layers is an :class:`ArgumentError` (:func:`check_parallelism`).

    >>> from planner.catalog import get_model
    >>> layer_split(get_model("llama-3.1-8b")), layer_split(get_model("llama-3.1-8b"), pp=2)
    ((32, 0), (16, 0))
    """
    _, pp = check_parallelism(model, pp=pp)
    full, swa = model.full_attention_layers, model.sliding_window_layers
    if model.sliding_window and not model.layer_types:
        full, swa = 0, model.num_hidden_layers
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
    A TP that does not divide the attention heads is an :class:`ArgumentError` (:func:`check_parallelism`).

    >>> from planner.catalog import get_model
    >>> kv_bytes_per_token_layer(get_model("llama-3.1-70b"), tp=16)
    512.0
    >>> kv_bytes_per_token_layer(get_model("deepseek-v3"), tp=8)
    1152.0
    """
    tp, _ = check_parallelism(model, tp=tp)
    b = kv_dtype_bytes(kv_cache_dtype, model=model, weight_dtype=weight_dtype)
    if model.attention == "mla":
        if str(kv_cache_dtype).strip().lower() == "fp8_ds_mla":
            return 656.0
        return float((model.kv_lora_rank or 0) + (model.qk_rope_head_dim or 0)) * b
    heads = math.ceil(model.num_key_value_heads / tp)
    return float(heads * (model.head_dim + (model.v_head_dim or model.head_dim))) * b


def kv_bytes_per_token(model: ModelSpec, *, tp: int = 1, pp: int = 1, kv_cache_dtype: str = "auto") -> float:
    """KV bytes per token on one GPU, every cached layer of the largest pipeline stage counted (M2, M3, M6).

    GQA/MHA/MQA: ``2·L·ceil(n_kv/TP)·d_h·b_kv`` (KV heads replicated when TP > n_kv); MLA:
    ``L·(kv_lora_rank + qk_rope_head_dim)·b_kv``, not divided by TP. ``L`` is the layers of the largest stage
    (:func:`layer_split`).

    Refs: M2 vLLM ``AttentionSpec``, SGLang ``cell_size``; M3 DeepSeek-V2 paper, vLLM ``MLAAttentionSpec``.

    Worked example: Llama-3-70B bf16 ``80·2·8·128·2 = 327,680`` B; DeepSeek-V3 ``61·(512+64)·2 = 70,272`` B.

    >>> from planner.catalog import get_model
    >>> kv_bytes_per_token(get_model("llama-3.1-70b")), kv_bytes_per_token(get_model("deepseek-v3"), tp=8)
    (327680.0, 70272.0)
    >>> kv_bytes_per_token(get_model("qwen3-235b-a22b"), tp=4)
    48128.0
    """
    full, swa = layer_split(model, pp=pp)
    return (full + swa) * kv_bytes_per_token_layer(model, tp=tp, kv_cache_dtype=kv_cache_dtype)


def blocks(tokens: float, *, block_size: int = DEFAULT_BLOCK_SIZE) -> int:
    """Paged KV blocks one sequence of ``tokens`` occupies: ``ceil(tokens / block)`` (M7, vLLM ``cdiv``).

    Ref: M7, vLLM ``get_max_concurrency_for_kv_cache_config``; default block 16 tokens.

    >>> blocks(1000), blocks(1024), blocks(1025), blocks(7, block_size=1)
    (63, 64, 65, 7)
    """
    t = check_number("context_tokens", tokens, minimum=0)
    b = int(check_number("block_size", block_size, minimum=1, integer=True))
    return math.ceil(t / b)


def average_context_tokens(avg_input_tokens: float, *, avg_output_tokens: float) -> float:
    """Time-averaged context of a request while it decodes: ``I + O/2`` (M8, P7).

    Ref: M8, Dynamo pre-deployment profiler ("average context = ISL + OSL/2").

    >>> average_context_tokens(2000, avg_output_tokens=500)
    2250.0
    """
    i = check_number("avg_input_tokens", avg_input_tokens, minimum=0)
    o = check_number("avg_output_tokens", avg_output_tokens, minimum=0)
    return i + o / 2


def kv_bytes_per_request(
    model: ModelSpec,
    *,
    context_tokens: float,
    tp: int = 1,
    pp: int = 1,
    kv_cache_dtype: str = "auto",
    block_size: int = DEFAULT_BLOCK_SIZE,
    max_num_batched_tokens: int = DEFAULT_MAX_NUM_BATCHED_TOKENS,
    cached_layers: tuple[int, int] | None = None,
    sliding_tokens: float | None = None,
) -> float:
    """KV bytes one request holds on one GPU at ``context_tokens``, rounded up to whole blocks (M2-M4, M7, M8).

    ``KV_req = kv_layer·block·(L_full·ceil(ctx/block) + L_swa·(ceil(min(S, ctx)/block) + 1))`` with ``kv_layer``
    the per-layer bytes per token per GPU (GQA ``ceil(n_kv/TP)·(d_k+d_v)·b``, MLA ``(kv_lora_rank + rope)·b``
    undivided by TP) and ``S`` the tokens a sliding-window layer holds for the request:

    - ``sliding_tokens`` given: the engine's steady state while the request decodes (M4a; the engine's own rule,
      :func:`planner.engines.held_sliding_tokens`: vLLM V1 holds the window, SGLang about 1.5 windows);
    - ``None``: the admission worst case ``W − 1 + max_num_batched_tokens`` (a whole prefill chunk beyond the
      window, M4), which is what an engine reserves and logs as its maximum concurrency.

    The extra sliding block is vLLM's misalignment block (the window rarely starts on a block boundary); with
    ``block_size = 1`` (exact, unpaged size; SGLang) there is none. ``cached_layers`` = (full, sliding) replaces
    the model's layer counts where an engine pads them (vLLM V1's hybrid groups:
    :func:`planner.engines.vllm.padded_layers`), which is what that engine reserves per request.

    Refs: M4 vLLM ``SlidingWindowSpec.max_memory_usage_bytes``; M4a vLLM
    ``SlidingWindowManager.get_num_skipped_tokens``; M7 vLLM paging; M8.

    Worked example, Llama-3.1-8B bf16 (32 layers × 8 KV heads × 128 × 2 × 2 B = 131,072 B/token): 1,000 tokens are
    63 blocks = 1,008 tokens = 132,120,576 B. Gemma-3-27B bf16 at 8,000 tokens (10 full + 52 sliding layers of
    8,192 B per token, window 1,024): the worst case holds ``min(1,023 + 8,192, 8,000) = 8,000`` tokens on every
    sliding layer, the steady state ``1,024`` tokens = 64 blocks + 1: ``8,192·16·(10·500 + 52·65) = 1.11e9`` B
    against ``4.07e9`` B (3.7×).

    >>> from planner.catalog import get_model
    >>> kv_bytes_per_request(get_model("llama-3.1-8b"), context_tokens=1000)
    132120576.0
    >>> kv_bytes_per_request(get_model("llama-3.1-8b"), context_tokens=1000, block_size=1)
    131072000.0
    >>> gemma = get_model("gemma-3-27b")
    >>> (kv_bytes_per_request(gemma, context_tokens=8000),
    ...  kv_bytes_per_request(gemma, context_tokens=8000, sliding_tokens=1024))
    (4070047744.0, 1098383360.0)
    """
    ctx = check_number("context_tokens", context_tokens, minimum=0)
    block = int(check_number("block_size", block_size, minimum=1, integer=True))
    batched = int(check_number("max_num_batched_tokens", max_num_batched_tokens, minimum=1, integer=True))
    per_layer = kv_bytes_per_token_layer(model, tp=int(check_number("tp", tp, minimum=1, integer=True)),
                                         kv_cache_dtype=kv_cache_dtype)
    full, swa = layer_split(model, pp=pp) if cached_layers is None else cached_layers
    total_blocks = full * blocks(ctx, block_size=block)
    if swa:
        window = model.sliding_window or ctx
        held = window - 1 + batched if sliding_tokens is None else check_number(
            "sliding_tokens", sliding_tokens, minimum=1)
        swa_tokens = min(held, ctx)
        total_blocks += swa * (blocks(swa_tokens, block_size=block) + (1 if block > 1 else 0))
    return float(total_blocks * block * per_layer)


def kv_bytes_read_per_step(
    model: ModelSpec, *, context_tokens: float, tp: int = 1, kv_cache_dtype: str = "auto"
) -> float:
    """KV bytes one sequence's decode step reads on one GPU: ``kv_layer·(L_full·ctx + L_swa·min(ctx, W))`` (P1, M4).

    A sliding-window layer attends to the last ``W`` tokens only, so its read is capped at the window however long
    the context; full-attention layers read the whole context. ``kv_layer`` as in :func:`kv_bytes_per_request`
    (MLA: the latent cache, which the absorbed decode kernels read). Unpaged: a step reads tokens, not blocks.

    Refs: P1 (KV read per decode step), M4 (sliding-window cap), Gemma 3 technical report (local layers attend to a
    1,024-token window).

    Worked example, Gemma-3-27B bf16 (10 full + 52 sliding layers, window 1,024, 16 KV heads × 128 × 2 × 2 B =
    8,192 B per layer-token) at 8,000 tokens: ``8,192·(10·8,000 + 52·1,024) = 1.09e9`` B, 27% of the
    ``8,192·62·8,000 = 4.06e9`` B a full-attention read would be.

    >>> from planner.catalog import get_model
    >>> kv_bytes_read_per_step(get_model("gemma-3-27b"), context_tokens=8000)
    1091567616.0
    >>> kv_bytes_read_per_step(get_model("llama-3.1-8b"),
    ...                        context_tokens=2048) == 2048 * kv_bytes_per_token(get_model("llama-3.1-8b"))
    True
    """
    ctx = check_number("context_tokens", context_tokens, minimum=0)
    per_layer = kv_bytes_per_token_layer(model, tp=int(check_number("tp", tp, minimum=1, integer=True)),
                                         kv_cache_dtype=kv_cache_dtype)
    full, swa = layer_split(model)
    window = float(model.sliding_window or ctx)
    return float(per_layer * (full * ctx + swa * min(ctx, window)))


def kv_budget_bytes(
    hbm_bytes: float, *, gpu_memory_utilization: float, weights_bytes: float, reserve_bytes: float
) -> float:
    """KV budget of one GPU: ``HBM·gpu_memory_utilization − weights − reserve`` (M9, vLLM V1 accounting).

    ``reserve`` is the activation peak plus non-torch memory (:func:`planner.engines.default_reserve_bytes`). A
    negative result means the weights do not fit; it is returned as is (callers report it).

    Ref: M9, vLLM ``gpu_worker.determine_available_memory``.

    Worked example: an 80 GiB GPU at 0.9 with 15 GiB of weights and 5 GiB reserved leaves 52 GiB.

    >>> kv_budget_bytes(80 * 2**30, gpu_memory_utilization=0.9, weights_bytes=15 * 2**30,
    ...                 reserve_bytes=5 * 2**30) / 2**30
    52.0
    """
    hbm = check_number("hbm_bytes", hbm_bytes, minimum=0, exclusive_minimum=True)
    util = check_fraction("gpu_memory_utilization", gpu_memory_utilization, allow_zero=False)
    w = check_number("weights_bytes", weights_bytes, minimum=0)
    r = check_number("reserve_bytes", reserve_bytes, minimum=0)
    return hbm * util - w - r


def max_concurrency(kv_budget: float, *, kv_request_bytes: float) -> int:
    """Requests that fit one replica's KV cache at once: ``floor(KV_avail / KV_req)`` (M11).

    Both arguments are per GPU (every GPU of a TP group holds its shard of every request). A budget at or below zero
    fits nothing.

    Ref: M11, vLLM ``kv_cache_utils`` (max concurrency = blocks / blocks per request).

    Worked example: 52 GiB over 0.5 GiB per request (4,096 tokens of Llama-3.1-8B bf16) = 104.

    >>> max_concurrency(52 * 2**30, kv_request_bytes=0.5 * 2**30)
    104
    """
    budget = check_number("kv_budget_bytes", kv_budget)
    per_req = check_number("kv_bytes_per_request", kv_request_bytes, minimum=0, exclusive_minimum=True)
    if budget <= 0:
        return 0
    return int(budget // per_req)


def replicas_for_concurrency(concurrency: float, *, max_concurrency_per_replica: float) -> int:
    """Replicas whose KV caches hold ``concurrency`` requests: ``ceil(C / C_max)`` (M11, C7).

    >>> replicas_for_concurrency(250, max_concurrency_per_replica=104), replicas_for_concurrency(
    ...     0, max_concurrency_per_replica=104)
    (3, 0)
    """
    c = check_number("in_flight_requests", concurrency, minimum=0)
    per = check_number("max_concurrency", max_concurrency_per_replica, minimum=0)
    if c == 0:
        return 0
    if per <= 0:
        raise ArgumentError("max_concurrency", max_concurrency_per_replica,
                            "> 0 (one request must fit a replica: more TP, a smaller context or fp8 KV)")
    return max(1, math.ceil(c / per - 1e-12))  # the epsilon absorbs float noise (300/100); C > 0 needs one


def kv_utilization(concurrency: float, *, kv_request_bytes: float, kv_budget: float, replicas: float = 1) -> float:
    """KV memory utilization at peak: ``C·KV_req / (KV_avail·replicas)``; at most 1 fits (M11 ``KV_FIT``).

    ``concurrency`` is the in-flight requests of the whole fleet (Little's law, P7); bytes are per GPU.

    Worked example: 300 requests of 0.5 GiB over 3 replicas of 52 GiB = 150 / 156 = 0.96.

    >>> round(kv_utilization(300, kv_request_bytes=0.5 * 2**30, kv_budget=52 * 2**30, replicas=3), 4)
    0.9615
    """
    c = check_number("concurrency", concurrency, minimum=0)
    per = check_number("kv_bytes_per_request", kv_request_bytes, minimum=0)
    budget = check_number("kv_budget_bytes", kv_budget)
    r = check_number("replicas", replicas, minimum=1)
    need = c * per
    if budget <= 0:
        if need == 0:
            return 0.0
        raise ArgumentError("kv_budget", f"{budget / GIB:.2f} GiB",
                            "a positive KV budget (the weights and reserve exceed the GPU memory)")
    return need / (budget * r)


def check_parallelism(model: ModelSpec, *, tp: int = 1, pp: int = 1) -> tuple[int, int]:
    """``(tp, pp)`` as whole numbers, or :class:`ArgumentError` when the model cannot be split that way.

    - TP must divide the attention heads: vLLM refuses otherwise (``ModelConfig.verify_with_parallel_config``:
      "Total number of attention heads (64) must be divisible by tensor parallel size (3)"); SGLang and
      TensorRT-LLM shard the heads the same way.
    - GQA KV heads: TP divides ``n_kv``, or (TP >= ``n_kv``) ``n_kv`` divides TP and each KV head is replicated on
      ``TP / n_kv`` GPUs (vLLM ``QKVParallelLinear``: ``divide(total_num_kv_heads, tp_size)`` /
      ``num_kv_head_replicas = divide(tp_size, total_num_kv_heads)``; M2, :func:`kv_bytes_per_token_layer`).
    - PP must not exceed the layers: a stage needs at least one layer.

    >>> from planner.catalog import get_model
    >>> check_parallelism(get_model("llama-3.1-70b"), tp=8, pp=2)
    (8, 2)
    >>> try:
    ...     check_parallelism(get_model("llama-3.1-70b"), tp=3)
    ... except ArgumentError as error:
    ...     print(error.argument, error.given, error.allowed.split(" (")[0])
    tp 3 one of 1, 2, 4, 8, 16, 32, 64
    """
    if type(tp) is int and type(pp) is int and 1 <= tp <= 2**53 and 1 <= pp <= 2**53:
        tp_n, pp_n = tp, pp  # int(check_number(...))'s answer (exact as floats), without its calls: 1,600 a plan
    else:
        tp_n = int(check_number("tp", tp, minimum=1, integer=True))
        pp_n = int(check_number("pp", pp, minimum=1, integer=True))
    if not _tp_splits(model, tp_n):
        allowed = ", ".join(str(t) for t in range(1, max(model.num_attention_heads, 1) + 1) if _tp_splits(model, t))
        heads = model.num_attention_heads
        kv = "" if model.attention == "mla" else f" and divide or be a multiple of its {model.num_key_value_heads}"
        kv += " KV heads" if kv else ""
        raise ArgumentError("tp", tp, f"one of {allowed} (TP must divide {model.name}'s {heads} attention heads{kv})")
    if pp_n > model.num_hidden_layers:
        raise ArgumentError("pp", pp, f"at most {model.name}'s {model.num_hidden_layers} layers")
    return tp_n, pp_n


def _tp_splits(model: ModelSpec, tp: int) -> bool:
    heads, kv = model.num_attention_heads, model.num_key_value_heads
    if heads and heads % tp:
        return False
    if model.attention == "mla" or not kv:
        return True
    return kv % tp == 0 if tp < kv else tp % kv == 0
