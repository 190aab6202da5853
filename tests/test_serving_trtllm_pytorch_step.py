"""Rule P (session 15, latency32, docs/serving.md; tried, not kept): TensorRT-LLM's PyTorch backend
(``PyExecutor``, ``engine="trtllm"`` with ``eager_prefill=True``) may carry its own fixed step cost,
``step_overhead_s["trtllm-pytorch"]``;
the TensorRT-engine runtime (NIM's engines, ``eager_prefill`` None) keeps ``step_overhead_s["trtllm"]``, and both share
``tp_overhead_s["trtllm"]`` and ``per_seq_overhead_s["trtllm"]``. Without the key the backend takes ``trtllm``'s value,
so the published calibration (which does not name it) answers as before.

Expected values are worked by hand from the derived constants (``DERIVED``: ``step_overhead_s`` trtllm 0.3 ms, vllm
0.6 ms; ``tp_overhead_s`` trtllm 1 ms; ``per_seq_overhead_s`` trtllm 5 µs) and a made-up ``trtllm-pytorch`` of 1 ms:

- PyTorch backend at TP 2: ``t_fixed``'s fixed part = 1 + 1·log2 2 = 2 ms; a decode step of 10 sequences adds
  10·5 µs: 2.05 ms;
- the TensorRT-engine runtime at TP 2, same calibration: 0.3 + 1 = 1.3 ms; with 10 sequences 1.35 ms;
- PyTorch backend at TP 2 without the key: 0.3 + 1 = 1.3 ms (``trtllm``'s, not ``vllm``'s 0.6 + 1 = 1.6 ms);
- PyTorch backend at TP 8 with the key: 1 + 1·3 = 4 ms.
"""

from __future__ import annotations

import json

import pytest

from planner.catalog import get_gpu, get_model
from planner.serving.bench import get_constant, set_constant
from planner.serving.calibration import DERIVED, TRTLLM_PYTORCH, from_dict, to_dict
from planner.serving.step import build_replica, step_parts

SPLIT = DERIVED.replace(step_overhead_s={"trtllm-pytorch": 1e-3})


def _replica(cal, *, pytorch: bool, tp: int = 2):
    return build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), tp=tp, engine="trtllm", context_tokens=1024,
                         input_tokens=512, calibration=cal, eager_prefill=True if pytorch else None)


def test_key_name():
    assert TRTLLM_PYTORCH == "trtllm-pytorch"


def test_fallback_to_trtllm_not_vllm():
    assert DERIVED.overhead_s("trtllm-pytorch") == pytest.approx(3e-4)
    assert SPLIT.overhead_s("trtllm-pytorch") == pytest.approx(1e-3)
    assert SPLIT.overhead_s("trtllm") == pytest.approx(3e-4)
    assert DERIVED.overhead_s("unknown-engine") == pytest.approx(6e-4)


def test_pytorch_backend_takes_its_own_fixed_cost():
    assert _replica(SPLIT, pytorch=True).fixed_s == pytest.approx(2e-3)
    assert _replica(SPLIT, pytorch=True, tp=8).fixed_s == pytest.approx(4e-3)


def test_tensorrt_engine_runtime_keeps_trtllm():
    assert _replica(SPLIT, pytorch=False).fixed_s == pytest.approx(1.3e-3)


def test_without_the_key_both_runtimes_alike():
    assert _replica(DERIVED, pytorch=True).fixed_s == pytest.approx(1.3e-3)
    assert _replica(DERIVED, pytorch=False).fixed_s == pytest.approx(1.3e-3)


def test_decode_step_fixed_part():
    fixed, _, _ = step_parts(_replica(SPLIT, pytorch=True), SPLIT, decode_seqs=10)
    assert fixed == pytest.approx(2.05e-3)
    fixed, _, _ = step_parts(_replica(SPLIT, pytorch=False), SPLIT, decode_seqs=10)
    assert fixed == pytest.approx(1.35e-3)


def test_fitter_reads_the_fallback():
    assert get_constant(DERIVED, name="step_overhead_s:trtllm-pytorch") == pytest.approx(3e-4)
    cal = set_constant(DERIVED, name="step_overhead_s:trtllm-pytorch", value=7e-4)
    assert cal.overhead_s("trtllm-pytorch") == pytest.approx(7e-4) and cal.overhead_s("trtllm") == pytest.approx(3e-4)


def test_json_round_trip():
    data = json.loads(json.dumps(to_dict(SPLIT)))
    assert data["constants"]["step_overhead_s"]["trtllm-pytorch"] == pytest.approx(1e-3)
    assert from_dict(data).overhead_s("trtllm-pytorch") == pytest.approx(1e-3)


def test_published_calibration_does_not_name_it():
    from planner.serving.api import default_calibration

    cal = default_calibration()
    assert "trtllm-pytorch" not in dict(cal.step_overhead_s)
    assert cal.overhead_s("trtllm-pytorch") == cal.overhead_s("trtllm")
