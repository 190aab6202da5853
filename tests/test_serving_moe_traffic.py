"""S7: the MoE layers' routed-token activation traffic (docs/serving.md, session 13, latency18).

Every expected value is worked by hand from the formula

    B_act/M = L_moe · [ k·h·a_perm/ep + k·(I/tp)·a_mid + h·a_tok ]

and the models' published configs (Hugging Face ``config.json``): Qwen3-30B-A3B hidden 2,048, expert width
(``moe_intermediate_size``) 768, 8 experts a token, 48 layers, all MoE; Qwen3-235B-A22B hidden 4,096, expert width
1,536, 8 experts a token, 94 layers, all MoE. Element sizes: TensorRT-LLM writes the permuted copy and the activation
at the GEMM's input precision (NVFP4: 0.5 + 1/16 bytes, FP8: 1, 16-bit: 2) and reads the 16-bit gate and up outputs
(2 × 2 bytes); vLLM/SGLang's Triton path moves 16-bit rows (silu_and_mul 2·2 + 2, moe_sum 2 per copy and 2 per token)
plus 3 bytes an element for an 8-bit quantisation pass.
"""

from __future__ import annotations

import pytest

from planner.catalog import get_gpu, get_model
from planner.serving import step
from planner.serving.api import default_calibration


def _bytes(model: str, gpu: str, engine: str, dtype: str, tp: int = 1) -> float:
    return step.moe_activation_bytes_per_token(get_model(model), get_gpu(gpu), engine=engine, weight_dtype=dtype,
                                               tp=tp)


def test_trtllm_nvfp4_qwen3_30b_on_b200() -> None:
    # 8·2048·0.5625 = 9,216 (permuted FP4 copies) + 8·768·(4 + 0.5625) = 28,032 (activation kernel)
    # + 2048·2 = 4,096 (the token's own row) = 41,344 B a layer; × 48 = 1,984,512 B a token.
    assert _bytes("qwen3-30b-a3b", "b200-hgx", "trtllm", "nvfp4") == pytest.approx(1_984_512)


def test_vllm_bf16_and_fp8_qwen3_30b_on_h100() -> None:
    # BF16: 8·2048·2 = 32,768 (moe_sum reads) + 8·768·6 = 36,864 (silu_and_mul) + 2048·2 = 4,096 (sum written)
    # = 73,728 B a layer, × 48 = 3,538,944.
    assert _bytes("qwen3-30b-a3b", "h100-sxm", "vllm", "bf16") == pytest.approx(3_538_944)
    # FP8 W8A8 on an H100 (FP8 tensor cores): + 8·768·3 = 18,432 and + 2048·3 = 6,144 for the quantisation passes:
    # 98,304 B a layer, × 48 = 4,718,592. SGLang runs the same Triton path.
    assert _bytes("qwen3-30b-a3b", "h100-sxm", "vllm", "fp8") == pytest.approx(4_718_592)
    assert _bytes("qwen3-30b-a3b", "h100-sxm", "sglang", "fp8") == pytest.approx(4_718_592)


def test_trtllm_fp8_qwen3_235b_at_tp8_on_h200() -> None:
    # Each GPU permutes every token's k copies of the full hidden row and holds 1/8 of each expert's width:
    # 8·4096·1 = 32,768 + 8·(1536/8)·(4 + 1) = 7,680 + 4096·2 = 8,192 → 48,640 B a layer; × 94 = 4,572,160.
    assert _bytes("qwen3-235b-a22b", "h200-sxm", "trtllm", "fp8", tp=8) == pytest.approx(4_572_160)


def test_dense_model_moves_nothing() -> None:
    assert _bytes("llama-3.1-8b", "h100-sxm", "vllm", "bf16") == 0.0


def test_prefill_step_pays_the_traffic_at_weight_bandwidth(monkeypatch: pytest.MonkeyPatch) -> None:
    # A 16,384-token prompt step of Qwen3-30B-A3B NVFP4 on one B200 (TensorRT-LLM), far above the eager floor:
    # 16,384 × 1,984,512 B = 32,514,244,608 B at 7.7 TB/s × 0.9 = 6.93 TB/s → 4.6918 ms more than without S7.
    cal = default_calibration().replace(weight_bw_eff=0.9)
    kw = dict(weight_dtype="nvfp4", context_tokens=16384, input_tokens=16384, engine="trtllm", calibration=cal,
              eager_prefill=True)
    with_act = step.build_replica(get_model("qwen3-30b-a3b"), get_gpu("b200-hgx"), **kw)
    monkeypatch.setattr(step, "MOE_ACT_TRAFFIC", False)
    without = step.build_replica(get_model("qwen3-30b-a3b"), get_gpu("b200-hgx"), **kw)
    floor = 2 * 48 * cal.eager_layer_floor_s
    _, body_without, _ = step.step_parts(without, cal, decode_seqs=0, prefill_tokens=16384, prefill_seqs=1)
    _, body_with, _ = step.step_parts(with_act, cal, decode_seqs=0, prefill_tokens=16384, prefill_seqs=1)
    assert body_without > floor
    assert body_with - body_without == pytest.approx(4.6918e-3, rel=1e-4)
