"""vLLM V0's weight-only 8-bit GEMMs (session 14, latency23; docs/serving.md, its section at the end;
``planner.serving.step.W8_WEIGHT_ONLY_KERNEL_EFF``).

vLLM 0.7.3 runs FP8 on GPUs without FP8 tensor cores (``Fp8LinearMethod.use_marlin``, capability < 8.9) and W8A16
(``choose_mp_linear_kernel``: Machete from capability 9.0, Marlin below) on the same weight-only mixed-input kernels as
W4A16, so their compute-bound GEMM part takes ``w4_kernel_eff``: ``eff(M) = gemm_eff·M/(M + M½)·w4_kernel_eff``.

Every expected value below is worked by hand. Llama-3.1-8B (catalog: 8.03e9 parameters, vocabulary 128,256, hidden
4,096): LM head ``P_head = 128,256·4,096 = 525,336,576``, body ``P_body = 8.03e9 − 2·P_head = 6,979,326,848``; a
prompt step of 4,096 tokens that samples one token computes ``F = 2·P_body·4,096 + 2·P_head = 57,175,696,211,968``
FLOPs. With ``gemm_eff`` 0.5, ``M½`` 0 and ``w4_kernel_eff`` 0.8 (set by the test) on an A100 (312 TFLOP/s 16-bit):
the GEMM part is ``F/(312e12·0.5) = 366.51 ms`` off and ``F/(312e12·0.4) = 458.14 ms`` on, 91.63 ms apart; the
weight read (≈ 8 GB at 2.039 TB/s) is far below either, and attention does not change."""

from __future__ import annotations

import dataclasses

import pytest

from planner.catalog import get_gpu, get_model
from planner.serving import step
from planner.serving.calibration import DERIVED
from planner.serving.step import build_replica, step_parts, weight_only_mixed_input

CAL = dataclasses.replace(DERIVED, gemm_eff=0.5, gemm_half_tokens=0.0, w4_kernel_eff=0.8)
F_FLOPS = 2 * 6_979_326_848 * 4096 + 2 * 525_336_576  # the prompt step's GEMM FLOPs, worked in the docstring


def _body(engine: str, gpu: str, dtype: str) -> float:
    r = build_replica(get_model("llama-3.1-8b"), get_gpu(gpu), weight_dtype=dtype, context_tokens=4096,
                      input_tokens=4096, engine=engine, calibration=CAL)
    return step_parts(r, CAL, decode_seqs=0.0, prefill_tokens=4096.0, prefill_seqs=1.0)[1]


def test_which_checkpoints_run_the_mixed_input_kernels():
    a100, h100, h200 = get_gpu("a100-80gb-sxm"), get_gpu("h100-sxm"), get_gpu("h200-sxm")
    assert weight_only_mixed_input("vllm-v0", a100, "fp8")  # Marlin FP8 below capability 8.9
    assert not weight_only_mixed_input("vllm-v0", h100, "fp8")  # FP8 tensor cores (W8A8)
    assert weight_only_mixed_input("vllm-v0", a100, "w8a16")  # Marlin
    assert weight_only_mixed_input("vllm-v0", h200, "w8a16")  # Machete
    assert not weight_only_mixed_input("vllm-v0", a100, "w8a8")  # INT8 tensor cores
    assert not weight_only_mixed_input("vllm-v0", a100, "bf16")
    assert not weight_only_mixed_input("vllm", a100, "w8a16")  # vLLM V1's kernel list was not read
    assert not weight_only_mixed_input("sglang", a100, "fp8")


def test_a_w8a16_prompt_step_on_an_a100_takes_the_w4_factor(monkeypatch):
    monkeypatch.setattr(step, "W8_WEIGHT_ONLY_KERNEL_EFF", False)
    off = _body("vllm-v0", "a100-80gb-sxm", "w8a16")
    monkeypatch.setattr(step, "W8_WEIGHT_ONLY_KERNEL_EFF", True)
    on = _body("vllm-v0", "a100-80gb-sxm", "w8a16")
    assert F_FLOPS == 57_175_696_211_968
    assert on - off == pytest.approx(0.09163, abs=2e-5)  # 458.14 − 366.51 ms: F/312e12·(1/0.4 − 1/0.5)


def test_the_replica_carries_the_factor_for_fp8_on_an_a100_only(monkeypatch):
    monkeypatch.setattr(step, "W8_WEIGHT_ONLY_KERNEL_EFF", True)

    def quant(gpu: str, dtype: str, engine: str = "vllm-v0") -> float:
        return build_replica(get_model("llama-3.1-8b"), get_gpu(gpu), weight_dtype=dtype, context_tokens=1024,
                             input_tokens=512, engine=engine, calibration=CAL).quant_kernel_eff

    assert quant("a100-80gb-sxm", "fp8") == 0.8
    assert quant("h100-sxm", "fp8") == 1.0
    assert quant("a100-80gb-sxm", "w8a8") == 1.0
    assert quant("a100-80gb-sxm", "w8a16", engine="vllm") == 1.0
    assert quant("a100-80gb-sxm", "gptq") == 0.8  # W4 as before


@pytest.mark.parametrize(("engine", "gpu", "dtype"), [("vllm", "a100-80gb-sxm", "w8a16"),
                                                      ("vllm-v0", "h100-sxm", "fp8"),
                                                      ("vllm-v0", "a100-80gb-sxm", "bf16")])
def test_other_checkpoints_and_engines_do_not_move(monkeypatch, engine, gpu, dtype):
    monkeypatch.setattr(step, "W8_WEIGHT_ONLY_KERNEL_EFF", False)
    off = _body(engine, gpu, dtype)
    monkeypatch.setattr(step, "W8_WEIGHT_ONLY_KERNEL_EFF", True)
    assert _body(engine, gpu, dtype) == off


def test_a_memory_bound_decode_step_does_not_move(monkeypatch):
    """One sequence decoding: the GEMM part is the weight read (≈ 8 GB / 2.039 TB/s), not the compute."""
    r_args = dict(weight_dtype="w8a16", context_tokens=1024, input_tokens=512, engine="vllm-v0", calibration=CAL)
    monkeypatch.setattr(step, "W8_WEIGHT_ONLY_KERNEL_EFF", False)
    r = build_replica(get_model("llama-3.1-8b"), get_gpu("a100-80gb-sxm"), **r_args)
    off = step_parts(r, CAL, decode_seqs=1.0)
    monkeypatch.setattr(step, "W8_WEIGHT_ONLY_KERNEL_EFF", True)
    r = build_replica(get_model("llama-3.1-8b"), get_gpu("a100-80gb-sxm"), **r_args)
    assert step_parts(r, CAL, decode_seqs=1.0) == off
