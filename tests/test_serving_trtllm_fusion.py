"""S8T: S8's activation passes as TensorRT-LLM's PyTorch backend of the 1.0 era runs them (docs/serving.md, session 14,
latency21; tried, not kept: the switch ``LAYER_ACT_TRTLLM_FUSION`` is off, and these tests turn it on where they
build a replica).

Every expected value is worked by hand from the rule

    norm site inside the all-reduce (dense Llama, tp > 1, h > 4,096; two a layer, one with attention DP):
        8h + Q(h)  ->  4h + a·h      (6h without quantisation)
    SiLU-and-mul with an FP8 per-tensor down_proj (not MLA):
        6I + Q(I)  ->  (4 + a)·I

``Q(x) = (2 + a)·x``, ``a`` = 1 for FP8 on a GPU with an 8-bit peak above its 16-bit one, 0.5625 for NVFP4 on FP4
tensor cores (4 bits and one FP8 scale per 16 elements), ``I`` the MLP width divided by ``tp``. Sources of the rule:
``tensorrt_llm/_torch/models/modeling_llama.py`` (``LlamaDecoderLayer``: ``enable_fusion &= hidden_size > 4096``,
``PRE_MLP_FUSION``/``POST_MLP_FUSION``, ``AllReduceFusionOp.RESIDUAL_RMS_NORM_QUANT_FP8``/``_NVFP4``) and
``tensorrt_llm/_torch/modules/gated_mlp.py`` (``swiglu(x, quant_scale=down_proj.input_scale,
quant_type=torch.float8_e4m3fn)``). Model shapes from the published ``config.json``: Llama-3.1-8B hidden 4,096,
MLP 14,336, 32 layers; Llama-3.3-70B hidden 8,192, MLP 28,672, 80 layers; Llama-3.1-405B hidden 16,384, MLP 53,248,
126 layers. The H100 SXM's 3.35 TB/s is NVIDIA's datasheet figure.
"""

from __future__ import annotations

import pytest

from planner.catalog import get_gpu, get_model
from planner.serving import step
from planner.serving.api import default_calibration


def test_which_fusions_each_build_gets() -> None:
    h100, b200, a100 = get_gpu("h100-sxm"), get_gpu("b200-hgx"), get_gpu("a100-80gb-sxm")
    fusions = step.trtllm_pytorch_fusions
    assert fusions(get_model("llama-3.3-70b"), h100, weight_dtype="fp8", tp=2) == (2, True)
    assert fusions(get_model("llama-3.3-70b"), h100, weight_dtype="fp8", tp=1) == (0, True)  # no all-reduce
    assert fusions(get_model("llama-3.3-70b"), h100, weight_dtype="fp8", tp=2, dp=2) == (1, True)  # POST only
    assert fusions(get_model("llama-3.1-8b"), h100, weight_dtype="fp8", tp=2) == (0, True)  # h = 4,096: off
    assert fusions(get_model("llama-3.1-405b"), b200, weight_dtype="nvfp4", tp=4) == (2, False)  # NVFP4 SwiGLU apart
    assert fusions(get_model("llama-3.3-70b"), a100, weight_dtype="fp8", tp=2) == (2, False)  # no FP8 peak: 16-bit
    assert fusions(get_model("llama-4-scout"), h100, weight_dtype="fp8", tp=4) == (0, True)  # not LlamaDecoderLayer
    assert fusions(get_model("deepseek-r1"), h100, weight_dtype="fp8", tp=8) == (0, False)  # MLA: block-scaled FP8


def test_passes_of_llama_70b_fp8_tp2() -> None:
    model, gpu = get_model("llama-3.3-70b"), get_gpu("h100-sxm")
    # Two fused norm sites a layer: 4·8,192 + 8,192 = 40,960 B (160); SiLU-and-mul into FP8: 5·(28,672 / 2) = 71,680
    # B (80). 80·(81,920 + 71,680) = 12,288,000 B a token, against S8's 80·(2·11·8,192 + 9·14,336) = 24,739,840 B.
    fused = step.layer_activation_passes(model, gpu, engine="trtllm", weight_dtype="fp8", tp=2, pytorch_fusions=True)
    assert sorted(fused) == sorted([(40_960, 160), (71_680, 80)])
    assert sum(b * n for b, n in fused) == pytest.approx(12_288_000)
    plain = step.layer_activation_passes(model, gpu, engine="trtllm", weight_dtype="fp8", tp=2)
    assert sum(b * n for b, n in plain) == pytest.approx(24_739_840)
    # The fusions are TensorRT-LLM's: another engine keeps its own count whatever the flag.
    assert step.layer_activation_passes(model, gpu, engine="vllm", weight_dtype="fp8", tp=2,
                                        pytorch_fusions=True) == step.layer_activation_passes(
        model, gpu, engine="vllm", weight_dtype="fp8", tp=2)


def test_passes_of_llama_8b_fp8_tp1() -> None:
    # No all-reduce: both norms stay 8·4,096 = 32,768 B and Q(h) = 3·4,096 = 12,288 B (64 each); SiLU-and-mul into
    # FP8 5·14,336 = 71,680 B (32). 32·(90,112 + 71,680) = 5,177,344 B (S8: 7,012,352).
    fused = step.layer_activation_passes(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), engine="trtllm",
                                         weight_dtype="fp8", pytorch_fusions=True)
    assert sorted(fused) == sorted([(32_768, 64), (12_288, 64), (71_680, 32)])
    assert sum(b * n for b, n in fused) == pytest.approx(5_177_344)


def test_passes_of_llama_405b_nvfp4_tp4_b200() -> None:
    # NVFP4 (a = 0.5625): fused sites 4.5625·16,384 = 74,752 B (252); the SwiGLU stays 6·(53,248 / 4) = 79,872 B and
    # its quantisation 2.5625·13,312 = 34,112 B (126 each).
    fused = step.layer_activation_passes(get_model("llama-3.1-405b"), get_gpu("b200-hgx"), engine="trtllm",
                                         weight_dtype="nvfp4", tp=4, pytorch_fusions=True)
    assert sorted(fused) == sorted([(74_752, 252), (79_872, 126), (34_112, 126)])


def test_bf16_site_writes_the_16_bit_norm() -> None:
    # No quantisation: a fused site reads and writes the residual and writes the 16-bit norm, 6·8,192 = 49,152 B;
    # SiLU-and-mul stays 6·14,336 = 86,016 B.
    fused = step.layer_activation_passes(get_model("llama-3.3-70b"), get_gpu("h100-sxm"), engine="trtllm",
                                         weight_dtype="bf16", tp=2, pytorch_fusions=True)
    assert sorted(fused) == sorted([(49_152, 160), (86_016, 80)])


def _replica(**kw):
    return step.build_replica(get_model("llama-3.3-70b"), get_gpu("h100-sxm"), tp=2, weight_dtype="fp8",
                              context_tokens=2048, input_tokens=2048, calibration=default_calibration(), **kw)


def test_the_build_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not step.LAYER_ACT_TRTLLM_FUSION  # tried, not kept
    monkeypatch.setattr(step, "LAYER_ACT_TRAFFIC", True)
    monkeypatch.setattr(step, "LAYER_ACT_TRTLLM_FUSION", True)
    # The PyTorch backend (eager_prefill=True, as the accuracy tables ask for trtllm-bench's runs): 12,288,000 B.
    assert _replica(engine="trtllm", eager_prefill=True).layer_act_bytes == pytest.approx(12_288_000)
    # A TensorRT engine (NIM, and "trtllm" by default): S8's 24,739,840 B.
    assert _replica(engine="trtllm").layer_act_bytes == pytest.approx(24_739_840)
    # With S8L the replica carries the fused passes.
    monkeypatch.setattr(step, "LAYER_ACT_L2", True)
    assert sorted(_replica(engine="trtllm", eager_prefill=True).layer_act_passes) == sorted(
        [(40_960, 160), (71_680, 80)])
    # Without S8 nothing is counted.
    monkeypatch.setattr(step, "LAYER_ACT_TRAFFIC", False)
    assert _replica(engine="trtllm", eager_prefill=True).layer_act_bytes == 0.0


def test_prompt_step_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # A prompt step of 2,048 tokens, S8 without the cache, η_w = 0.9: the fusions remove
    # 2,048·(24,739,840 − 12,288,000) = 25,501,368,320 B, 8.458 ms at 3.35 TB/s × 0.9.
    cal = default_calibration().replace(weight_bw_eff=0.9)
    monkeypatch.setattr(step, "LAYER_ACT_TRAFFIC", True)

    def body(fused: bool) -> float:
        monkeypatch.setattr(step, "LAYER_ACT_TRTLLM_FUSION", fused)
        r = step.build_replica(get_model("llama-3.3-70b"), get_gpu("h100-sxm"), tp=2, weight_dtype="fp8",
                               engine="trtllm", eager_prefill=True, context_tokens=2048, input_tokens=2048,
                               calibration=cal)
        return step.step_parts(r, cal, decode_seqs=0, prefill_tokens=2048, prefill_seqs=1)[1]

    assert body(False) - body(True) == pytest.approx(25_501_368_320 / (3.35e12 * 0.9), rel=1e-9)
