"""Rule R (session 15, latency27, docs/serving.md): with attention data parallelism TensorRT-LLM keeps a mixture-of-
experts model's whole non-expert part on every rank, and those bytes come out of the KV room at the memory fraction.

Expected values are worked by hand from the catalog entry of Llama-4-Maverick (400e9 parameters, 17e9 active, 128
experts, top-1, 48 layers, 8 KV heads of 128, vocabulary 202,048, hidden 5,120):

- embeddings and LM head ``2·202,048·5,120 = 2.06897e9`` parameters at 2 bytes, the rest at the weight dtype;
- FP8 at ``tp`` 8: ``W/tp = (400e9 − 2.06897e9 + 2·2.06897e9)/8 = 50.25862e9`` B; NVFP4 (4.5 bits):
  ``((400e9 − 2.06897e9)·0.5625 + 2·2.06897e9)/8 = 28.49677e9`` B;
- one expert ``P_e = (400e9 − 17e9)/127 = 3.015748e9`` parameters, so the non-expert share of the bytes is
  ``1 − 128·3.015748e9/400e9 = 0.034961``: ``W_d`` = 1.75707e9 B (FP8), 0.99627e9 B (NVFP4);
- at ``dp`` 8 each GPU holds ``7·W_d`` more: 12.2996e9 B (FP8), 6.9739e9 B (NVFP4);
- the KV room falls by ``0.9·7·W_d`` = 11.0696e9 B; a token's KV per GPU (FP8, one KV head a GPU) is
  ``2·48·128·1`` = 12,288 B, so ``11.0696e9/12,288`` = 900,850 tokens fewer.
"""

from __future__ import annotations

import pytest

from planner.catalog import get_gpu, get_model
from planner.serving import api
from planner.serving.calibration import DERIVED
from planner.serving.step import attention_dp_replicated_bytes, build_replica

MAVERICK = get_model("llama-4-maverick")


def test_replicated_bytes_fp8_and_nvfp4():
    assert attention_dp_replicated_bytes(MAVERICK, tp=8, dp=8, weight_dtype="fp8") == pytest.approx(12.2996e9,
                                                                                                     rel=1e-4)
    assert attention_dp_replicated_bytes(MAVERICK, tp=8, dp=8, weight_dtype="nvfp4") == pytest.approx(6.9739e9,
                                                                                                       rel=1e-4)
    # two ranks of four GPUs: W/tp at tp 8 is the same, one extra copy of W_d
    assert attention_dp_replicated_bytes(MAVERICK, tp=8, dp=2, weight_dtype="fp8") == pytest.approx(1.75708e9,
                                                                                                     rel=1e-4)


def test_nothing_replicated_without_attention_dp_or_experts():
    assert attention_dp_replicated_bytes(MAVERICK, tp=8, dp=1, weight_dtype="fp8") == 0.0
    assert attention_dp_replicated_bytes(get_model("llama-3.1-8b"), tp=2, dp=2, weight_dtype="fp8") == 0.0


def test_same_bytes_the_step_reads():
    """The step already reads the whole non-expert part on every GPU under attention DP: 8·W_d = 14.0566e9 B."""
    r = build_replica(MAVERICK, get_gpu("h100-sxm"), tp=8, dp=8, weight_dtype="fp8", context_tokens=1500,
                      input_tokens=1000, engine="trtllm", calibration=DERIVED)
    assert r.dense_bytes == pytest.approx(8 * 1.75708e9, rel=1e-4)


def test_kv_room_falls_at_the_memory_fraction():
    h100 = get_gpu("h100-sxm")
    base, _ = api._kv_tokens(MAVERICK, h100, 8, 1, "fp8", "fp8", "trtllm", None, None)
    less, _ = api._kv_tokens(MAVERICK, h100, 8, 1, "fp8", "fp8", "trtllm", None, None, 0.0, 12.2996e9)
    assert base - less == pytest.approx(900_850, rel=1e-4)


def _setup_tokens(engine: str, dp: int) -> float:
    s = api._setup("llama-4-maverick", "h100-sxm", tp=8, pp=1, engine=engine, engine_version=None,
                   weight_dtype="fp8", kv_cache_dtype="fp8", input_tokens=1000, output_tokens=1000,
                   cache_hit_rate=0.0, max_num_batched_tokens=None, max_num_seqs=None, calibration=DERIVED,
                   dp=dp)
    return s.load.kv_tokens


def test_only_trtllm_with_attention_dp_and_the_switch(monkeypatch):
    monkeypatch.setattr(api, "ATTENTION_DP_REPLICATED_WEIGHTS", True)
    tp_only = _setup_tokens("trtllm", 1)
    adp = _setup_tokens("trtllm", 8)
    assert tp_only - adp == pytest.approx(900_850, rel=1e-4)  # 8 KV heads over 8 GPUs: the split is unchanged
    sglang = (_setup_tokens("sglang", 1), _setup_tokens("sglang", 8))
    monkeypatch.setattr(api, "ATTENTION_DP_REPLICATED_WEIGHTS", False)
    assert _setup_tokens("trtllm", 8) == pytest.approx(tp_only)
    assert (_setup_tokens("sglang", 1), _setup_tokens("sglang", 8)) == pytest.approx(sglang)
    assert sglang[0] == pytest.approx(sglang[1])
