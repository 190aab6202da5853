"""Engine memory models: reserves, KV bytes per token, hybrid groups, PP, quantized weights, engine budgets."""

from __future__ import annotations

import dataclasses

import pytest

import planner
from planner import engines, memory
from planner.catalog import get_gpu, get_model
from planner.engines import activation, sglang
from planner.errors import ArgumentError
from planner.specs import GIB


def test_default_reserve_constants_by_family_and_tp():
    llama, qwen, moe = get_model("llama-3.1-8b"), get_model("qwen3-8b"), get_model("mixtral-8x7b")
    assert activation.default_reserve_bytes(llama, tp=1) == pytest.approx((4.8 + 0.15) * GIB)
    assert activation.default_reserve_bytes(qwen, tp=1) == pytest.approx((5.6 + 0.15) * GIB)
    assert activation.default_reserve_bytes(moe, tp=2) == pytest.approx((8.0 + 0.6) * GIB)
    # vLLM >= 0.17 profiles a much smaller activation peak; NCCL buffers dominate at TP >= 2.
    assert activation.default_reserve_bytes(llama, tp=4, engine_version="0.19.0") == pytest.approx((1.9 + 2.1) * GIB)
    # V1: off the constants' setup (8192 tokens, 1024 sequences) the constant follows the shape-derived peak,
    # which the sampler's [sequences, vocab] tensors set: it grows with the sequences, barely with the tokens.
    d = activation.vllm_v1_activation_bytes
    anchor = d(llama, max_num_batched_tokens=8192, max_num_seqs=1024)
    assert activation.default_reserve_bytes(llama, tp=1, max_num_batched_tokens=16384) == pytest.approx(
        4.8 * GIB * d(llama, max_num_batched_tokens=16384, max_num_seqs=1024) / anchor + 0.15 * GIB
    )
    assert activation.default_reserve_bytes(llama, tp=1, max_num_seqs=256) == pytest.approx(
        4.8 * GIB * d(llama, max_num_batched_tokens=8192, max_num_seqs=256) / anchor + 0.15 * GIB
    )
    # TensorRT-LLM keeps the batch scaling of the constant.
    assert activation.default_reserve_bytes(llama, tp=1, engine="trtllm", max_num_batched_tokens=16384) == (
        pytest.approx((9.6 + 0.15) * GIB)
    )
    # MLA MoE models follow the shape-derived peak too (session 10), with the experts' 2,048 width: at TP 8 the
    # forward holds 2·(8·(3·256 + 7168) + 5·7168) = 198,656 B per token (8 experts, one shared expert's output);
    # 256 sequences: max(8192 x 198,656, 256 x 129,280 x 38 + 8192 x 7168 x 2) against the anchor's 1024 sequences.
    mla = get_model("deepseek-v3")
    forward = 8192 * 198_656
    at_256 = max(forward, 256 * 129_280 * 38 + 8192 * 7168 * 2)
    at_1024 = max(forward, 1024 * 129_280 * 38 + 8192 * 7168 * 2)
    assert activation.default_reserve_bytes(mla, tp=8, max_num_seqs=256) == pytest.approx(
        8.0 * GIB * at_256 / at_1024 + 0.6 * GIB
    )
    # MoE models with an expert intermediate size follow the shape-derived peak (fused-experts workspaces).
    assert activation.default_reserve_bytes(moe, tp=2, max_num_seqs=256) == pytest.approx(
        8.0 * GIB * d(moe, tp=2, max_num_batched_tokens=8192, max_num_seqs=256)
        / d(moe, tp=2, max_num_batched_tokens=8192, max_num_seqs=1024) + 0.6 * GIB
    )


def test_vllm_v1_moe_forward_and_logged_sampler():
    """MoE forward per token: b·(k·(3·I/TP + H) + (3 + [TP>1])·H), by hand for Mixtral (k 2, I 14336, H 4096); the
    sampler path a log names replaces the version default in D(T, S) but not in the anchor D(8192, 1024)."""
    moe, qwen = get_model("mixtral-8x7b"), get_model("qwen2.5-7b-instruct")
    assert activation.vllm_v1_forward_bytes_per_token(moe, tp=2) == 2 * (2 * (3 * 7168 + 4096) + 4 * 4096)
    # Qwen3-MoE carries only moe_intermediate_size (768): 2·(8·(3·768 + 2048) + 3·2048)
    assert activation.vllm_v1_forward_bytes_per_token(get_model("qwen3-30b-a3b")) == 2 * (8 * (3 * 768 + 2048)
                                                                                          + 3 * 2048)
    d = activation.vllm_v1_activation_bytes
    flashinfer = 256 * 152_064 * 14 + 2048 * 3584 * 2  # [S, V] logits x 14 B + the held [T, H] hidden states
    assert d(qwen, max_num_batched_tokens=2048, max_num_seqs=256, sampler="flashinfer") == flashinfer
    anchor_native = 1024 * 152_064 * 38 + 8192 * 3584 * 2
    assert activation.vllm_v1_scaled_activation_bytes(
        qwen, max_num_batched_tokens=2048, max_num_seqs=256, engine_version="0.10.1", sampler="flashinfer"
    ) == pytest.approx(5.6 * GIB * flashinfer / anchor_native)
    with pytest.raises(ArgumentError):
        engines.kv_capacity(qwen, "a100-80gb", sampler="fast")


def test_vllm_v1_default_batch_by_gpu():
    """vllm serve's defaults (EngineArgs.get_batch_defaults): 8192 tokens / 1024 sequences on >= 70 GiB GPUs that
    are not A100s, else 2048 / 256; kv_capacity profiles them when none is given."""
    for gpu, tokens in (("h100-sxm", 8192), ("h200-sxm", 8192), ("a100-80gb-sxm", 2048), ("l4", 2048)):
        assert activation.vllm_v1_default_max_num_batched_tokens(get_gpu(gpu)) == tokens
    qwen = get_model("qwen2.5-7b-instruct")
    assert engines.kv_capacity(qwen, "a100-80gb", max_model_len=16384).reserve_gib == pytest.approx(
        engines.kv_capacity(qwen, "a100-80gb", max_model_len=16384, max_num_batched_tokens=2048).reserve_gib
    )


def test_vllm_v1_default_batch_by_release():
    """The 0.8.x rules, as the PyPI source distributions' vllm/engine/arg_utils.py write them (read 2026-12-04):
    0.8.2/0.8.3 tokens by device name ("h100"/"h200"), 1024 sequences everywhere; 0.8.4 (PR #16158) both by name;
    0.8.5 both by torch total >= 70 GiB (A100 80GB included); 0.9.0 on (PR #17885) >= 70 GiB and not an A100."""
    seqs, tokens = activation.vllm_v1_default_max_num_seqs, activation.vllm_v1_default_max_num_batched_tokens
    table = {  # gpu: {version: (tokens, sequences)}
        "h100-sxm": {"0.8.3": (8192, 1024), "0.8.4": (8192, 1024), "0.8.5": (8192, 1024), "0.9.0": (8192, 1024)},
        "a100-80gb-sxm": {"0.8.3": (2048, 1024), "0.8.4": (2048, 256), "0.8.5": (8192, 1024), "0.9.2": (2048, 256)},
        "l40s": {"0.8.3": (2048, 1024), "0.8.4": (2048, 256), "0.8.5": (2048, 256), "0.10.1": (2048, 256)},
        "mi300x": {"0.8.3": (2048, 1024), "0.8.4": (2048, 256), "0.8.5": (8192, 1024), "0.9.0": (8192, 1024)},
    }
    for gpu, by_version in table.items():
        card = get_gpu(gpu)
        for version, expected in by_version.items():
            assert (tokens(card, engine_version=version), seqs(card, engine_version=version)) == expected, (
                gpu, version)
    # No version: the current (0.9+) rule, as before.
    assert (tokens(get_gpu("a100-80gb-sxm")), seqs(get_gpu("a100-80gb-sxm"))) == (2048, 256)
    # kv_capacity profiles the release's defaults: more dummy sequences, a larger reserve.
    old = planner.kv_capacity("llama-3.1-8b", "l40s", max_model_len=8192, engine_version="0.8.3")
    new = planner.kv_capacity("llama-3.1-8b", "l40s", max_model_len=8192, engine_version="0.8.4")
    assert old.reserve_gib > new.reserve_gib
    assert new.reserve_gib == planner.kv_capacity(
        "llama-3.1-8b", "l40s", max_model_len=8192, engine_version="0.8.4", max_num_seqs=256).reserve_gib


def test_vllm_v1_activation_from_shapes():
    llama = get_model("llama-3.1-8b")
    # Sampler bytes per [S, V] logit by top-k/top-p path (16-bit and fp32 logits).
    assert activation.vllm_v1_sampler_bytes_per_logit("native") == 2 + 4 + 12 + 8 + 12
    assert activation.vllm_v1_sampler_bytes_per_logit("triton") == activation.vllm_v1_sampler_bytes_per_logit(
        "flashinfer") == 2 + 4 + 8
    assert activation.vllm_v1_sampler_bytes_per_logit("native", logits_bytes=4.0) == 36
    with pytest.raises(ArgumentError):
        activation.vllm_v1_sampler_bytes_per_logit("sort")
    assert activation.vllm_v1_default_sampler("0.16.1") == "native"
    assert activation.vllm_v1_default_sampler("0.17.0") == "triton"
    # H100 defaults: the sampler binds; the <= 0.16 native path reproduces the 4.8 GiB constant within 2%.
    old = activation.vllm_v1_activation_bytes(llama, engine_version="0.11.0")
    assert old == 1024 * 128256 * 38 + 8192 * 4096 * 2
    assert old / GIB == pytest.approx(4.8, rel=0.02)
    new = activation.vllm_v1_activation_bytes(llama, engine_version="0.19.0")
    assert new == 1024 * 128256 * 14 + 8192 * 4096 * 2
    # Every rank samples the all-gathered logits: TP does not shrink the sampler peak.
    assert activation.vllm_v1_activation_bytes(llama, tp=4, engine_version="0.19.0") == new
    # Few sequences and many tokens: the forward pass binds.
    assert activation.vllm_v1_activation_bytes(llama, max_num_batched_tokens=32768, max_num_seqs=16) == (
        32768 * activation.vllm_v0_forward_bytes_per_token(llama)
    )
    # Qwen3-MoE now has its expert size (768) in the spec: the sampler sets its peak at the default setup.
    assert activation.vllm_v1_activation_bytes(get_model("qwen3-30b-a3b")) == 1024 * 151_936 * 38 + 8192 * 2048 * 2
    # A spec without any expert size is still not covered (the constants apply).
    bare = dataclasses.replace(get_model("qwen3-30b-a3b"), moe_intermediate_size=None, intermediate_size=None)
    assert activation.vllm_v1_activation_bytes(bare) is None
    # Default sequences by GPU (EngineArgs.get_batch_defaults).
    assert activation.vllm_v1_default_max_num_seqs(get_gpu("h100-sxm")) == 1024
    assert activation.vllm_v1_default_max_num_seqs(get_gpu("a100-80gb-sxm")) == 256
    a100 = planner.kv_capacity("llama-3.1-8b", "a100-80gb-sxm", max_model_len=8192)
    again = planner.kv_capacity("llama-3.1-8b", "a100-80gb-sxm", max_model_len=8192, max_num_seqs=256)
    assert a100.reserve_gib == again.reserve_gib < planner.kv_capacity(
        "llama-3.1-8b", "a100-80gb-sxm", max_model_len=8192, max_num_seqs=1024).reserve_gib


def test_unknown_engine_message_names_argument_and_choices():
    with pytest.raises(ArgumentError) as err:
        planner.kv_capacity("llama-3.1-8b", "h100-sxm", engine="tgi")
    assert str(err.value) == "engine: got 'tgi', expected one of vllm, vllm-v0, sglang, trtllm"


def test_engine_version_selects_v0_below_0_8():
    assert engines.normalize_engine("vllm", engine_version="0.6.3") == "vllm-v0"
    assert engines.normalize_engine("vLLM", engine_version="0.9.2") == "vllm"
    assert planner.kv_capacity("llama-3.1-8b", "h100-sxm", engine_version="0.5.4").engine == "vllm-v0"


def test_kv_heads_replicated_when_tp_exceeds_them_and_mla_not_split():
    llama70 = get_model("llama-3.1-70b")  # 8 KV heads
    assert memory.kv_bytes_per_token(llama70, tp=8) == 80 * 1 * 256 * 2
    assert memory.kv_bytes_per_token(llama70, tp=16) == memory.kv_bytes_per_token(llama70, tp=8)
    ds = get_model("deepseek-v3")
    assert memory.kv_bytes_per_token(ds, tp=8) == memory.kv_bytes_per_token(ds, tp=1) == 61 * 576 * 2
    assert memory.kv_bytes_per_token_layer(ds, kv_cache_dtype="fp8_ds_mla") == 656


def test_kv_dtype_fp8_halves_and_fp32_doubles():
    m = get_model("llama-3.1-8b")
    bf16 = memory.kv_bytes_per_token(m)
    assert memory.kv_bytes_per_token(m, kv_cache_dtype="fp8") == bf16 / 2
    assert memory.kv_bytes_per_token_layer(m, weight_dtype="fp32") * 32 == bf16 * 2
    with pytest.raises(ArgumentError, match="kv_cache_dtype: got 'fp9'"):
        memory.kv_bytes_per_token(m, kv_cache_dtype="fp9")


def test_fp8_kv_doubles_tokens_for_same_budget():
    a = planner.kv_capacity("qwen3-8b", "h100-sxm", max_model_len=8192)
    b = planner.kv_capacity("qwen3-8b", "h100-sxm", max_model_len=8192, kv_cache_dtype="fp8")
    assert b.available_kv_gib == a.available_kv_gib
    assert b.kv_cache_tokens == pytest.approx(2 * a.kv_cache_tokens, abs=16)


def test_vllm_hybrid_groups_pad_gemma3():
    gemma3 = get_model("gemma-3-27b")  # 52 sliding + 10 full layers
    cap = planner.kv_capacity(gemma3, "h100-sxm", max_model_len=8192)
    assert cap.kv_groups == 7  # 1 full + 6 sliding groups of 10 layers: 8 padding layers
    per_layer = 16 * 128 * 2 * 2
    assert cap.kv_bytes_per_logged_token == per_layer * 10 * 7
    assert cap.kv_bytes_per_token == per_layer * 62
    assert cap.kv_cache_tokens == cap.num_blocks // 7 * 16
    # One request: 512 full blocks + 6 sliding groups x (cdiv(min(1023 + 8192, 8192), 16) + 1) blocks.
    assert cap.blocks_per_request == 512 + 6 * 513
    # V0 has no hybrid allocator: every layer caches the whole context.
    v0 = planner.kv_capacity(gemma3, "h100-sxm", max_model_len=8192, engine="vllm-v0")
    assert v0.kv_groups == 1 and v0.kv_bytes_per_logged_token == per_layer * 62


def test_sliding_window_caps_blocks_per_request():
    long = planner.kv_capacity("gemma-2-9b", "h100-sxm", max_model_len=131072)
    # Full group: 8192 blocks; sliding group: cdiv(4095 + 8192, 16) + 1.
    assert long.blocks_per_request == 8192 + (-(-(4095 + 8192) // 16) + 1)


def test_pipeline_parallel_smallest_stage_wins():
    m = get_model("llama-3.1-8b")
    assert memory.kv_bytes_per_token(m, pp=3) == 11 * 8 * 256 * 2  # ceil(32 / 3) layers on the largest stage
    one = planner.kv_capacity(m, "h100-sxm", max_model_len=8192)
    two = planner.kv_capacity(m, "h100-sxm", max_model_len=8192, pp=2)
    rope = 131072 * 128 * 2  # vLLM's cos/sin cache, on every stage (max_position_embeddings x head_dim x bf16)
    assert two.weights_gib * GIB - rope == pytest.approx((one.weights_gib * GIB - rope) / 2)
    assert two.kv_bytes_per_token == one.kv_bytes_per_token / 2


def test_quantized_weight_bytes():
    m = get_model("llama-3.3-70b")
    bf16 = memory.weight_bytes_per_gpu(m, tp=2)
    fp8 = memory.weight_bytes_per_gpu(m, tp=2, weight_dtype="fp8")
    awq = memory.weight_bytes_per_gpu(m, tp=2, weight_dtype="awq")
    mx = memory.weight_bytes_per_gpu(m, tp=2, weight_dtype="mxfp4")
    assert bf16 > fp8 > mx > awq
    # fp8 everywhere but the bf16 embeddings and LM head (2 x 128256 x 8192 parameters).
    embed = 2 * 128256 * 8192
    assert fp8 == pytest.approx(((70.55e9 - embed) + embed * 2) / 2)
    assert fp8 / GIB == pytest.approx(33.88, rel=0.005)  # vLLM's "Model loading took 33.88 GiB" (llm-d log)
    oss = get_model("gpt-oss-120b")  # catalog checkpoint bytes (MXFP4 experts)
    assert memory.weight_bytes_per_gpu(oss) == oss.checkpoint_bytes
    with pytest.raises(ArgumentError, match="weight_dtype"):
        memory.weight_bytes_per_gpu(m, weight_dtype="int3")


def test_vllm_budget_formula():
    gpu = get_gpu("h100-sxm")
    cap = planner.kv_capacity("llama-3.1-8b", gpu, gpu_memory_utilization=0.9, max_model_len=8192)
    rope = 131072 * 128 * 2  # the rotary cache vLLM loads beside the weights: 32 MiB
    expected = (gpu.engine_total_bytes * 0.9 - memory.weight_bytes_per_gpu(get_model("llama-3.1-8b")) - rope
                - 4.95 * GIB)
    assert cap.available_kv_gib * GIB == pytest.approx(expected)
    assert cap.num_blocks == int(expected // (131072 * 16))
    assert cap.kv_cache_tokens == cap.num_blocks * 16
    assert cap.max_concurrency == pytest.approx(cap.num_blocks / 512)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cap.num_blocks = 1  # type: ignore[misc]


def test_sglang_default_fraction_and_budget():
    gpu = get_gpu("h100-sxm")
    frac = sglang.sglang_default_mem_fraction(gpu.engine_total_bytes, tp=1)
    gpu_mb = gpu.engine_total_bytes / 2**20
    assert frac == pytest.approx((gpu_mb - max(512 + 1.5 * 8192 + 512 + 128, 10240)) / gpu_mb)
    cap = planner.kv_capacity("llama-3.1-8b", gpu, engine="sglang", max_model_len=8192)
    assert cap.memory_fraction == frac
    # SGLang's total is the free memory after init (CUDA context 0.51 GiB at TP 1): (HBM - C)·f - weights.
    expected = (gpu.engine_total_bytes - 0.51 * GIB) * frac - memory.weight_bytes_per_gpu(get_model("llama-3.1-8b"))
    assert cap.available_kv_gib * GIB == pytest.approx(expected)
    assert cap.kv_cache_tokens == int(expected // 131072)
    # A 24 GiB GPU gets no 10 GB floor: 512 + 1.5 x 2048 + 2 x 256 + 1024/8 MB reserved.
    assert sglang.sglang_default_mem_fraction(24 * GIB) == pytest.approx((24576 - 4224) / 24576)


def test_sglang_04_defaults_and_init_memory():
    """SGLang 0.4 sets mem_fraction_static by TP size alone (server_args: 0.88 / 0.87 / 0.85 / 0.81 / 0.79); the
    memory in use at init is the CUDA context, plus NCCL's setup at TP >= 2 on NVSwitch (NVLS) GPUs only."""
    l4, h100 = get_gpu("l4"), get_gpu("h100-sxm")
    for tp, frac in ((1, 0.88), (2, 0.87), (4, 0.85), (8, 0.81), (16, 0.79)):
        assert sglang.sglang_default_mem_fraction(l4.engine_total_bytes, tp=tp, engine_version="0.4.3.post4") == frac
    assert sglang.non_torch_bytes(tp=4, memory_fraction=0.85, gpu=l4) == pytest.approx(0.51 * 0.85 * GIB)
    assert sglang.non_torch_bytes(tp=4, memory_fraction=0.85, gpu=h100) == pytest.approx(1.53 * 0.85 * GIB)
    cap = planner.kv_capacity("qwen2.5-32b", l4, tp=4, engine="sglang", engine_version="0.4.3", max_model_len=131072)
    weights = memory.weight_bytes_per_gpu(get_model("qwen2.5-32b"), tp=4)
    assert cap.memory_fraction == 0.85
    assert cap.available_kv_gib * GIB == pytest.approx((l4.engine_total_bytes - 0.51 * GIB) * 0.85 - weights)
    # vLLM's TP >= 2 non-torch constant applies on NVLS GPUs; elsewhere the TP = 1 value.
    assert activation.non_torch_bytes(tp=2, gpu=h100) == pytest.approx(0.6 * GIB)
    assert activation.non_torch_bytes(tp=2, gpu=get_gpu("a100-80gb-sxm")) == pytest.approx(0.15 * GIB)
    assert activation.non_torch_bytes(tp=2, gpu=get_gpu("h200-nvl")) == pytest.approx(0.15 * GIB)


def test_trtllm_fraction_applies_to_free_memory_after_weights():
    gpu = get_gpu("h100-sxm")
    cap = planner.kv_capacity("llama-3.1-8b", gpu, engine="trtllm", max_model_len=8192)
    free = gpu.engine_total_bytes - memory.weight_bytes_per_gpu(get_model("llama-3.1-8b")) - 4.95 * GIB
    assert cap.available_kv_gib * GIB == pytest.approx(free * 0.9)
    assert cap.kv_cache_tokens % 32 == 0


def test_measured_reserve_replaces_constants():
    base = planner.kv_capacity("llama-3.1-8b", "h100-sxm", max_model_len=8192)
    cal = planner.kv_capacity("llama-3.1-8b", "h100-sxm", max_model_len=8192, reserve_gib=2.0, weights_gib=15.0)
    assert cal.reserve_gib == 2.0 and cal.weights_gib == 15.0
    assert cal.available_kv_gib == pytest.approx(base.available_kv_gib + base.reserve_gib - 2.0
                                                  + base.weights_gib - 15.0)


def test_model_from_config_path(tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text(
        '{"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,'
        ' "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,'
        ' "max_position_embeddings": 8192, "torch_dtype": "bfloat16"}',
        encoding="utf-8",
    )
    cap = planner.kv_capacity(str(cfg), "a100-80gb-sxm")
    assert cap.kv_bytes_per_token == 131072 and cap.max_model_len == 8192


def test_vllm_v0_activation_is_derived_from_shapes():
    """V0: forward peak b·(3·I/TP + (3 + [TP>1])·H) per token against the sampler's 38 bytes per logit (driver)."""
    llama = get_model("llama-3.1-8b")
    assert activation.vllm_v0_forward_bytes_per_token(llama) == 2 * (3 * 14336 + 3 * 4096)
    assert activation.vllm_v0_forward_bytes_per_token(llama, tp=2) == 2 * (3 * 7168 + 4 * 4096)
    # 20k tokens: the forward pass binds; 8192 tokens: the sampler (256 x 128,256 logits) binds, independent of TP.
    long = activation.vllm_v0_activation_bytes(llama, max_num_batched_tokens=20000)
    assert long == 20000 * activation.vllm_v0_forward_bytes_per_token(llama)
    short = activation.vllm_v0_activation_bytes(llama, max_num_batched_tokens=8192)
    assert short == 256 * 128256 * 38 + 8192 * 4096 * 2
    assert activation.vllm_v0_activation_bytes(llama, tp=2, max_num_batched_tokens=8192) == short
    # MoE keeps the published constant (no derivation for fused-MoE workspaces here).
    moe = get_model("qwen3-30b-a3b")
    peak = activation.activation_peak_bytes(moe)
    assert activation.vllm_v0_activation_bytes(moe, max_num_batched_tokens=8192) == peak


def test_vllm_v0_profile_batch_and_capacity():
    assert activation.vllm_v0_profile_tokens(20000) == 20000
    assert activation.vllm_v0_profile_tokens(131072, engine_version="0.6.4") == 512
    cap = planner.kv_capacity("llama-3.1-8b", "h100-sxm", engine="vllm-v0", max_model_len=20000)
    act = activation.vllm_v0_activation_bytes(get_model("llama-3.1-8b"), max_num_batched_tokens=20000)
    assert cap.reserve_gib * 2**30 == pytest.approx(act + activation.non_torch_bytes(tp=1))


# ------------------------------------------------------------------------------------- package and worked examples


def test_engine_modules_worked_examples_hold():
    import doctest

    from planner.engines import common, trtllm, vllm, vllm_v0

    for module in (engines, activation, common, vllm, vllm_v0, sglang, trtllm):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.attempted > 0 and result.failed == 0, module.__name__


def test_memory_imports_nothing_from_engines():
    """memory is model physics; engines build on it (the dependency points one way)."""
    import ast
    from pathlib import Path

    tree = ast.parse(Path(memory.__file__).read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not {m for m in imported if m and m.startswith("planner.engines")}


# ------------------------------------------------------------------------------------- TP / PP that cannot split


@pytest.mark.parametrize(("model", "tp", "pp", "argument", "allowed"), [
    ("llama-3.1-70b", 3, 1, "tp", "one of 1, 2, 4, 8, 16, 32, 64 "),  # 64 heads
    ("phi-4", 4, 1, "tp", "one of 1, 2, 5, 10, 20, 40 "),  # 40 heads, 10 KV heads: 10 % 4 != 0
    ("qwen3-30b-a3b", 3, 1, "tp", "one of 1, 2, 4, 8, 16, 32 "),
    ("deepseek-v3", 3, 1, "tp", "one of 1, 2, 4, 8, 16, 32, 64, 128 "),  # MLA: only the 128 heads
    ("llama-3.1-8b", 1, 33, "pp", "at most llama-3.1-8b's 32 layers"),
])
def test_tp_pp_that_cannot_split_the_model_is_an_argument_error(model, tp, pp, argument, allowed):
    with pytest.raises(ArgumentError) as info:
        engines.kv_capacity(model, "h100-sxm", tp=tp, pp=pp, max_model_len=8192)
    err = info.value
    assert (err.argument, err.given) == (argument, tp if argument == "tp" else pp)
    assert err.allowed.startswith(allowed)
    assert "\n" not in str(err)


def test_tp_replicating_kv_heads_is_allowed():
    """TP 16 on 8 KV heads: each KV head on 2 GPUs (vLLM QKVParallelLinear num_kv_head_replicas = 2)."""
    cap = engines.kv_capacity("llama-3.1-70b", "h100-sxm", tp=16, max_model_len=8192)
    assert cap.kv_bytes_per_token == 80 * 1 * 2 * 128 * 2


def test_tp_error_reaches_the_cell_as_one_line():
    import planner.functions  # noqa: F401  (registers the spreadsheet functions)
    from planner.coerce import call_sheet_function
    from planner.registry import REGISTRY

    out = call_sheet_function(REGISTRY["KV_CACHE_TOKENS"], "llama-3.1-70b", "h100-sxm", 3, 0.9, "auto", "vllm", 8192)
    assert out.startswith("tp: got 3, expected one of 1, 2, 4, 8, 16, 32, 64 (TP must divide llama-3.1-70b's 64")
    fit = call_sheet_function(REGISTRY["MAX_CONCURRENCY"], "llama-3.1-70b", "h100-sxm", 3, 0.9, "auto", 8192)
    assert fit == out


def test_engines_budget_from_the_torch_visible_total():
    """vLLM budgets util x torch's total (79.18 GiB on an H100 80GB), not nvidia-smi's 79.65 GiB: at 0.95 the
    difference is 0.45 GiB of KV per GPU, +20% of Qwen2.5-72B's 3 GiB pool at TP 2 (llm-d v0.19 sweep)."""
    h100 = get_gpu("h100-sxm")
    cap = engines.kv_capacity("qwen2.5-72b-instruct", h100, tp=2, gpu_memory_utilization=0.95, max_model_len=8192,
                              engine_version="0.19.0")
    smi = dataclasses.replace(h100, torch_total_bytes=None)
    cap_smi = engines.kv_capacity("qwen2.5-72b-instruct", smi, tp=2, gpu_memory_utilization=0.95,
                                  max_model_len=8192, engine_version="0.19.0")
    assert cap_smi.available_kv_gib - cap.available_kv_gib == pytest.approx((79.6475 - 79.1788) * 0.95, abs=1e-3)
    # the log: Available KV cache memory 3.04 GiB, 19,920 tokens
    assert cap.kv_cache_tokens / 19920 - 1 == pytest.approx(0.054, abs=0.01)
    assert cap_smi.kv_cache_tokens / 19920 - 1 > 0.19


def test_marlin_pads_mxfp4_experts_before_hopper():
    """Marlin rounds the expert intermediate size per rank up to 128 and the hidden size up to 256 (vLLM
    Mxfp4MoEMethod): gpt-oss-120b's 56.73 GiB of experts grow by (2944/2880)(3072/2880) at TP 1 and by
    (768/720)(3072/2880) at TP 4; on NVIDIA GPUs before Hopper, and on Hopper before vLLM 0.12.0 (no
    triton_kernels in the wheel until PR #27370, which the 0.12.0 sdist carries and 0.11.1 / 0.11.2 do not), only
    for vLLM's default weights."""
    from planner.engines import vllm

    oss = get_model("gpt-oss-120b")
    experts = 36 * 128 * 3 * 2880 * 2880 * 4.25 / 8
    assert vllm.mxfp4_marlin_extra_bytes(oss) == pytest.approx(experts * (2944 / 2880 * 3072 / 2880 - 1))
    assert vllm.mxfp4_marlin_extra_bytes(oss, tp=4) == pytest.approx(experts * (768 / 720 * 3072 / 2880 - 1) / 4)
    a100 = planner.kv_capacity(oss, "a100-80gb", tp=4, max_model_len=16384)
    h100 = planner.kv_capacity(oss, "h100-sxm", tp=4, max_model_len=16384, engine_version="0.14.1")
    h100_011 = planner.kv_capacity(oss, "h100-sxm", tp=4, max_model_len=16384, engine_version="0.11.0")
    rope = 131072 * 64 * 2  # max_position_embeddings x head_dim x bf16, replicated per rank
    assert a100.weights_gib * GIB == pytest.approx(
        oss.checkpoint_bytes / 4 + vllm.mxfp4_marlin_extra_bytes(oss, tp=4) + rope)
    assert h100.weights_gib * GIB == pytest.approx(oss.checkpoint_bytes / 4 + rope)
    assert h100_011.weights_gib == pytest.approx(a100.weights_gib)
    h100_0112 = planner.kv_capacity(oss, "h100-sxm", tp=4, max_model_len=16384, engine_version="0.11.2")
    h100_012 = planner.kv_capacity(oss, "h100-sxm", tp=4, max_model_len=16384, engine_version="0.12.0")
    assert h100_0112.weights_gib == pytest.approx(a100.weights_gib)
    assert h100_012.weights_gib == pytest.approx(h100.weights_gib)
    # vLLM 0.10.1 on one H100 logs 65.9651 GiB with the Marlin fallback (#23278)
    h100_tp1 = planner.kv_capacity(oss, "h100-sxm", max_model_len=131072, engine_version="0.10.1")
    assert h100_tp1.weights_gib == pytest.approx(65.9651, rel=0.002)
    sg = planner.kv_capacity(oss, "a100-80gb", tp=4, engine="sglang", max_model_len=16384)
    assert sg.weights_gib * GIB == pytest.approx(oss.checkpoint_bytes / 4)


def test_vllm_v1_before_0_9_1_reserves_the_start_up_memory():
    """vLLM V1 0.8.x / 0.9.0 add every non-torch byte on the device to the profiled peak (gpu_worker, read in the
    0.8.4 and 0.9.0 sdists), so the CUDA context of the init snapshot (0.51 GiB; 1.53 GiB with NCCL at TP >= 2 on
    NVLS GPUs, the training logs' figures) joins the reserve; 0.9.1 profiles against the init snapshot (0 more), and
    V0 subtracts its baseline."""
    llama = get_model("llama-3.1-8b")
    l40s, h100 = get_gpu("l40s"), get_gpu("h100-sxm")
    for version, extra in (("0.8.4", 0.51), ("0.9.0", 0.51), ("0.9.1", 0.0), ("0.11.0", 0.0)):
        assert activation.vllm_v1_device_non_torch_bytes(tp=1, engine_version=version, gpu=l40s) == pytest.approx(
            extra * GIB)
    assert activation.vllm_v1_device_non_torch_bytes(tp=4, engine_version="0.8.5", gpu=h100) == pytest.approx(
        1.53 * GIB)
    assert activation.vllm_v1_device_non_torch_bytes(tp=4, engine_version="0.8.5", gpu=l40s) == pytest.approx(
        0.51 * GIB)
    old = planner.kv_capacity(llama, "l40s", engine_version="0.8.4", max_model_len=32768)
    new = planner.kv_capacity(llama, "l40s", engine_version="0.9.1", max_model_len=32768)
    assert (old.reserve_gib - new.reserve_gib) * GIB == pytest.approx(0.51 * GIB)
    v0 = activation.default_reserve_bytes(llama, tp=1, engine="vllm-v0", engine_version="0.6.6",
                                          max_num_batched_tokens=8192)
    assert v0 == pytest.approx(256 * 128_256 * 38 + 8192 * 4096 * 2 + 0.15 * GIB)


def test_vllm_v0_profiles_the_given_max_num_seqs():
    """V0's profile run samples max_num_seqs dummy prompts (default 256): with 16 the sampler term shrinks and the
    forward pass sets the peak (Qwen2.5-7B at 8192 tokens: 8192 x 2·(3·18944 + 3·3584) B)."""
    qwen = get_model("qwen2.5-7b-instruct")
    few = activation.default_reserve_bytes(qwen, tp=1, engine="vllm-v0", max_num_batched_tokens=8192, max_num_seqs=16)
    assert few == pytest.approx(8192 * 2 * (3 * 18944 + 3 * 3584) + 0.15 * GIB)
    default = activation.default_reserve_bytes(qwen, tp=1, engine="vllm-v0", max_num_batched_tokens=8192)
    assert default == pytest.approx(256 * 152_064 * 38 + 8192 * 3584 * 2 + 0.15 * GIB)


def test_pipeline_stages_follow_vllm_get_pp_indices():
    """vLLM's split (vllm/distributed/utils.py get_pp_indices, 0.8.5 and 0.19.0): L // PP layers each, the remainder
    one each to the stages before the last, from the second-to-last backwards."""
    assert memory.pp_layer_ranges(61, pp=2) == ((0, 31), (31, 61))
    assert memory.pp_layer_ranges(32, pp=4) == ((0, 8), (8, 16), (16, 24), (24, 32))
    assert memory.pp_layer_ranges(30, pp=4) == ((0, 7), (7, 15), (15, 23), (23, 30))  # [7, 8, 8, 7]
    assert memory.pp_layer_ranges(7, pp=7) == tuple((i, i + 1) for i in range(7))
    with pytest.raises(ArgumentError):
        memory.pp_layer_ranges(4, pp=5)


def test_stage_weights_put_embedding_first_and_head_last():
    """Llama-3.1-8B at PP 4 against the llm-d v0.19 log: the first stage loads 4.26 GiB, the third 3.28 GiB (both with
    the 32 MiB rope cache, so 4.23 and 3.25 GiB of weights); DeepSeek-R1's stages differ by their embedding, head and
    layer kinds; every stage sums back to the model at PP 1 (untied)."""
    llama = get_model("llama-3.1-8b")
    per_stage = memory.stage_weight_bytes(llama, pp=4)
    assert per_stage[0] / GIB == pytest.approx(4.26 - 32 / 1024, abs=0.01)
    assert per_stage[2] / GIB == pytest.approx(3.28 - 32 / 1024, abs=0.01)
    assert per_stage[3] - per_stage[0] == 4096 * 2  # the final norm
    assert per_stage[1] == per_stage[2]
    assert sum(per_stage) == pytest.approx(memory.weight_bytes_per_gpu(llama), rel=1e-9)
    r1 = get_model("deepseek-r1")
    first, last = memory.stage_weight_bytes(r1, tp=8, pp=2, weight_dtype="fp8")
    assert first < memory.weight_bytes_per_gpu(r1, tp=8, pp=2, weight_dtype="fp8") < last
    assert first + last == pytest.approx(2 * memory.weight_bytes_per_gpu(r1, tp=8, pp=2, weight_dtype="fp8"), rel=1e-6)
    # PP 1 and a spec without the per-layer breakdown keep the even split.
    assert memory.stage_weight_bytes(llama) == (memory.weight_bytes_per_gpu(llama),)
    bare = dataclasses.replace(llama, layer_params=())
    assert memory.stage_weight_bytes(bare, pp=2) == (memory.weight_bytes_per_gpu(llama) / 2,) * 2


def test_pipeline_kv_is_the_binding_stage():
    """Each stage has its own weights, layers and activation (the sampler on the last only); vLLM allocates the
    smallest block count on every stage, and kv_capacity reports that stage."""
    cap = engines.kv_capacity("llama-3.1-8b", "h100-sxm", pp=4, engine_version="0.19.0", max_model_len=8192,
                              gpu_memory_utilization=0.95)
    assert len(cap.stage_kv_cache_tokens) == 4 and cap.kv_cache_tokens == min(cap.stage_kv_cache_tokens)
    assert cap.binding_stage == 3  # the LM head and the sampler
    assert cap.stage_kv_cache_tokens[1] == cap.stage_kv_cache_tokens[2] > cap.stage_kv_cache_tokens[0]
    # the first stage skips the sampler: less reserve than the last at (almost) the same weights
    assert cap.stage_kv_cache_tokens[0] > cap.stage_kv_cache_tokens[3]
    # DeepSeek-R1 at TP 8 PP 2: 31 layers on stage 0 (35,712 B per token), 30 on stage 1, which binds (more weights).
    r1 = engines.kv_capacity("deepseek-r1", "h100-sxm", tp=8, pp=2, engine_version="0.8.5", max_model_len=32768,
                             max_num_batched_tokens=2048, max_num_seqs=128, weight_dtype="fp8")
    assert r1.binding_stage == 1 and r1.kv_bytes_per_token == 30 * 576 * 2
    # Given figures replace the binding stage's; SGLang keeps one even stage.
    given = engines.kv_capacity("deepseek-r1", "h100-sxm", tp=8, pp=2, engine_version="0.8.5", max_model_len=32768,
                                max_num_batched_tokens=2048, max_num_seqs=128, weight_dtype="fp8", weights_gib=40.0,
                                reserve_gib=3.0)
    assert given.binding_stage == 1 and given.weights_gib == 40.0 and given.reserve_gib == 3.0
    sg = engines.kv_capacity("llama-3.1-8b", "h100-sxm", pp=2, engine="sglang")
    assert len(sg.stage_kv_cache_tokens) == 1


def test_stages_before_the_last_skip_the_sampler():
    """V0 and V1 sample on the last pipeline stage only: the others' activation is the forward term alone (V0: T x the
    per-token forward bytes; V1: the constant scaled by that term over the anchor)."""
    llama = get_model("llama-3.1-8b")
    per_token = 2 * (3 * 14336 + 3 * 4096)  # 110,592 B, by hand
    assert activation.vllm_v0_activation_bytes(llama, max_num_batched_tokens=8192, samples=False) == 8192 * per_token
    anchor = 1024 * 128_256 * 14 + 8192 * 4096 * 2  # v0.19 (Triton sampler) at H100 defaults
    assert activation.vllm_v1_scaled_activation_bytes(llama, engine_version="0.19.0", samples=False) == pytest.approx(
        1.9 * GIB * 8192 * per_token / anchor)
    # models the derivation does not cover keep the constant on every stage
    bare = dataclasses.replace(get_model("qwen3-30b-a3b"), moe_intermediate_size=None, intermediate_size=None)
    scaled = activation.vllm_v1_scaled_activation_bytes
    assert scaled(bare, samples=False) == scaled(bare)
