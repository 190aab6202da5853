"""S8: every layer's non-GEMM activation traffic (docs/serving.md, session 13, latency19; tried, not kept: the switch
``LAYER_ACT_TRAFFIC`` is off, and these tests turn it on where they time it).

Every expected value is worked by hand from the formula, per token, per GPU, per layer,

    [8h + Q(h)] + [8h + Q(h)] (MoE layer: 8h) + [Q(q) + 4·(r_q + r_k)] (not TensorRT-LLM) + 6·I + Q(I),
    Q(x) = (2 + a)·x when the GEMM takes quantised activations (a = 1 for FP8 on an FP8 GPU), else 0,

and the models' published configs (Hugging Face ``config.json``): Llama-3.1-8B hidden 4,096, MLP 14,336, 32 query
and 8 KV heads of 128, 32 layers; Llama-3.3-70B hidden 8,192, MLP 28,672, 64 query and 8 KV heads of 128, 80 layers;
Qwen3-30B-A3B hidden 2,048, 32 query and 4 KV heads of 128, 48 layers, every layer MoE, no shared expert. The H100
SXM's 3.35 TB/s is NVIDIA's datasheet figure.
"""

from __future__ import annotations

import pytest

from planner.catalog import get_gpu, get_model
from planner.serving import step
from planner.serving.api import default_calibration


def _bytes(model: str, gpu: str, engine: str, dtype: str, tp: int = 1) -> float:
    return step.layer_activation_bytes_per_token(get_model(model), get_gpu(gpu), engine=engine, weight_dtype=dtype,
                                                 tp=tp)


def test_llama_8b_fp8_h100_trtllm_and_vllm() -> None:
    # TensorRT-LLM: two norms 2·(8 + 3)·4,096 = 90,112 + SiLU-and-mul and its quantisation (6 + 3)·14,336 = 129,024
    # = 219,136 B a layer (attention output quantised in the kernel, RoPE in the attention op), × 32 = 7,012,352.
    assert _bytes("llama-3.1-8b", "h100-sxm", "trtllm", "fp8") == pytest.approx(7_012_352)
    # vLLM and SGLang add the attention output's quantisation 3·4,096 = 12,288 and RoPE 4·(4,096 + 1,024) = 20,480:
    # 251,904 B a layer, × 32 = 8,060,928.
    assert _bytes("llama-3.1-8b", "h100-sxm", "vllm", "fp8") == pytest.approx(8_060_928)
    assert _bytes("llama-3.1-8b", "h100-sxm", "sglang", "fp8") == pytest.approx(8_060_928)
    assert _bytes("llama-3.1-8b", "h100-sxm", "vllm-v0", "fp8") == pytest.approx(8_060_928)


def test_llama_8b_bf16_and_weight_only_fp8_have_no_quantisation() -> None:
    # BF16, vLLM: 2·8·4,096 = 65,536 + RoPE 20,480 + 6·14,336 = 86,016 = 172,032 B a layer, × 32 = 5,505,024.
    assert _bytes("llama-3.1-8b", "h100-sxm", "vllm", "bf16") == pytest.approx(5_505_024)
    # TensorRT-LLM BF16: 65,536 + 86,016 = 151,552, × 32 = 4,849,664.
    assert _bytes("llama-3.1-8b", "h100-sxm", "trtllm", "bf16") == pytest.approx(4_849_664)
    # FP8 on an A100 is weight-only (Marlin): 16-bit activations, the BF16 count.
    assert _bytes("llama-3.1-8b", "a100-80gb-sxm", "vllm", "fp8") == pytest.approx(5_505_024)


def test_llama_70b_fp8_tp2() -> None:
    # Per GPU at TP 2: norms on the full row 2·11·8,192 = 180,224; MLP 28,672/2 = 14,336 wide: 9·14,336 = 129,024;
    # TensorRT-LLM 309,248 B a layer, × 80 = 24,739,840.
    assert _bytes("llama-3.3-70b", "h100-sxm", "trtllm", "fp8", tp=2) == pytest.approx(24_739_840)
    # vLLM: + 3·(64·128/2 = 4,096) = 12,288 + 4·((64 + 8)·128/2 = 4,608) = 18,432: 339,968, × 80 = 27,197,440.
    assert _bytes("llama-3.3-70b", "h100-sxm", "vllm", "fp8", tp=2) == pytest.approx(27_197_440)


def test_moe_layer_counts_no_mlp_and_no_input_quantisation() -> None:
    # Qwen3-30B-A3B BF16, vLLM: 2·8·2,048 = 32,768 + RoPE 4·(32 + 4)·128 = 18,432 = 51,200 B a layer (the experts'
    # passes are S7's), × 48 = 2,457,600.
    assert _bytes("qwen3-30b-a3b", "h100-sxm", "vllm", "bf16") == pytest.approx(2_457_600)


def test_switch_is_off_by_default() -> None:
    r = step.build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), weight_dtype="fp8", engine="trtllm",
                           context_tokens=2048, input_tokens=2048, calibration=default_calibration())
    assert not step.LAYER_ACT_TRAFFIC and r.layer_act_bytes == 0.0


def test_step_time_of_a_prompt_step(monkeypatch: pytest.MonkeyPatch) -> None:
    cal = default_calibration()
    kw = dict(weight_dtype="fp8", engine="trtllm", context_tokens=2048, input_tokens=2048, calibration=cal)
    model, gpu = get_model("llama-3.1-8b"), get_gpu("h100-sxm")
    before = step.step_parts(step.build_replica(model, gpu, **kw), cal, decode_seqs=0, prefill_tokens=2048,
                             prefill_seqs=1)[1]
    monkeypatch.setattr(step, "LAYER_ACT_TRAFFIC", True)
    r = step.build_replica(model, gpu, **kw)
    after = step.step_parts(r, cal, decode_seqs=0, prefill_tokens=2048, prefill_seqs=1)[1]
    # 7,012,352 B × 2,048 tokens = 14,361,296,896 B at 3.35e12 B/s × weight_bw_eff (0.9: 4.763 ms).
    assert after - before == pytest.approx(14_361_296_896 / (3.35e12 * cal.weight_bw_eff), rel=1e-9)
    # Variant S8p: a decode-only step adds nothing.
    monkeypatch.setattr(step, "LAYER_ACT_PROMPT_ONLY", True)
    off = step.step_parts(step.build_replica(model, gpu, **{**kw}), cal, decode_seqs=64)[1]
    monkeypatch.setattr(step, "LAYER_ACT_TRAFFIC", False)
    assert off == pytest.approx(step.step_parts(step.build_replica(model, gpu, **kw), cal, decode_seqs=64)[1])
