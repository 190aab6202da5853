"""Rules A and B (session 15, latency28, docs/serving.md): what TensorRT-LLM's attention data parallelism makes per
rank. A (kept): S2's per-sequence host cost counts one rank's ``⌈(d + n_p)/dp⌉`` sequences. B (tried, not kept, off):
the collectives are the experts' all-gather of the quantized input and reduce-scatter of the 16-bit output, in the
MoE layers only.

Expected values are worked by hand with the derived constants (``DERIVED``: TensorRT-LLM ``o_engine`` 0.3 ms,
``o_tp`` 1 ms a doubling, ``o_seq`` 5 µs; SGLang 0.5 ms, 1 ms, 10 µs; all-reduce latency ``α`` 10 µs) and the catalog's
Llama-4-Maverick (hidden 5,120, 48 layers of which 24 MoE) on 8 GPUs (``log2 8`` = 3):

- A, a decode step of 3,000 sequences over 8 ranks: ``⌈3,000/8⌉`` = 375, fixed part
  ``0.3 + 3·1 + 375·0.005`` = 5.175 ms (18.3 ms counting all 3,000); SGLang with ``dp`` 8 is untouched:
  ``0.5 + 3 + 3,000·0.01`` = 33.5 ms; a prompt step of 65 prompts: ``⌈65/8⌉`` = 9, ``3.3 + 0.045`` = 3.345 ms;
- B, NVFP4 on B200s (NVLink 1.8 TB/s both ways, 900 GB/s one way), 3,000 tokens: ``24·2α`` = 0.48 ms plus
  ``24·7/8·3,000·5,120·(0.5625 + 2)/900e9`` = 0.9184 ms, 1.3984 ms; S5 instead: ``48α`` = 0.48 ms plus
  ``48·2·7/8·3,000·5,120·2/900e9`` = 2.8672 ms, 3.3472 ms; FP8 on H100s (450 GB/s one way), 1,000 tokens:
  0.48 + ``24·7/8·1,000·5,120·3/450e9`` = 0.48 + 0.7168 = 1.1968 ms.
"""

from __future__ import annotations

import pytest

from planner.catalog import get_gpu, get_model
from planner.serving import step
from planner.serving.calibration import DERIVED
from planner.serving.step import build_replica, host_sequences, moe_allgather_input_bytes, step_parts

MAVERICK = get_model("llama-4-maverick")


def _replica(engine: str, dp: int, gpu: str = "b200-hgx", dtype: str = "nvfp4"):
    return build_replica(MAVERICK, get_gpu(gpu), tp=8, dp=dp, weight_dtype=dtype, kv_cache_dtype="fp8",
                         context_tokens=1500, input_tokens=1000, engine=engine, calibration=DERIVED,
                         eager_prefill=True if engine == "trtllm" else None)


def test_host_sequences_one_rank():
    assert host_sequences("trtllm", 3000, dp=8) == 375
    assert host_sequences("trtllm", 3001, dp=8) == 376
    assert host_sequences("trtllm", 3000, dp=1) == 3000
    assert host_sequences("sglang", 3000, dp=8) == 3000
    assert host_sequences("vllm", 3000, dp=8) == 3000


def test_rule_a_fixed_part_of_a_decode_step(monkeypatch):
    monkeypatch.setattr(step, "ATTENTION_DP_HOST_PER_RANK", True)
    fixed, _, _ = step_parts(_replica("trtllm", 8), DERIVED, decode_seqs=3000)
    assert fixed == pytest.approx(5.175e-3, rel=1e-9)
    fixed, _, _ = step_parts(_replica("trtllm", 8), DERIVED, decode_seqs=0, prefill_tokens=65000, prefill_seqs=65)
    assert fixed == pytest.approx(3.345e-3, rel=1e-9)
    fixed, _, _ = step_parts(_replica("sglang", 8), DERIVED, decode_seqs=3000)
    assert fixed == pytest.approx(33.5e-3, rel=1e-9)
    fixed, _, _ = step_parts(_replica("trtllm", 1), DERIVED, decode_seqs=3000)
    assert fixed == pytest.approx(18.3e-3, rel=1e-9)


def test_rule_a_switch_off_counts_the_replica(monkeypatch):
    monkeypatch.setattr(step, "ATTENTION_DP_HOST_PER_RANK", False)
    fixed, _, _ = step_parts(_replica("trtllm", 8), DERIVED, decode_seqs=3000)
    assert fixed == pytest.approx(18.3e-3, rel=1e-9)


def test_rule_b_gathered_bytes():
    b200, h100, h200 = get_gpu("b200-hgx"), get_gpu("h100-sxm"), get_gpu("h200-sxm")
    assert moe_allgather_input_bytes(MAVERICK, b200, "nvfp4") == 0.5625
    assert moe_allgather_input_bytes(MAVERICK, h100, "fp8") == 1.0
    assert moe_allgather_input_bytes(MAVERICK, h100, "bf16") == 2.0
    assert moe_allgather_input_bytes(get_model("deepseek-r1"), h200, "fp8") == 2.0  # block-scaled: not pre-quantized


def test_rule_b_comm_when_on(monkeypatch):
    monkeypatch.setattr(step, "ATTENTION_DP_MOE_COLLECTIVES", True)
    _, _, comm = step_parts(_replica("trtllm", 8), DERIVED, decode_seqs=3000)
    assert comm == pytest.approx(1.3984e-3, rel=1e-9)
    _, _, comm = step_parts(_replica("trtllm", 8, gpu="h100-sxm", dtype="fp8"), DERIVED, decode_seqs=1000)
    assert comm == pytest.approx(1.1968e-3, rel=1e-9)
    _, _, comm = step_parts(_replica("sglang", 8), DERIVED, decode_seqs=3000)  # other engines keep S5
    assert comm == pytest.approx(3.3472e-3, rel=1e-9)


def test_rule_b_is_off():
    assert step.ATTENTION_DP_MOE_COLLECTIVES is False
    _, _, comm = step_parts(_replica("trtllm", 8), DERIVED, decode_seqs=3000)
    assert comm == pytest.approx(3.3472e-3, rel=1e-9)
