"""vLLM V0's multi-GPU step cost (S2 of docs/serving.md; session 12, latency15): the published fixed parts at TP8,
the per-sequence multi-GPU term that was refitted for V0 alone and dropped under the 1% rule, and the size the code
gives the logits' gather. Expected values are worked by hand from the calibration file and the catalog figures."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from planner.catalog import get_gpu, get_model
from planner.serving.api import default_calibration
from planner.serving.step import build_replica, link_bytes_per_s_bidir, step_time_s

ROOT = Path(__file__).resolve().parent.parent
CALIBRATION = ROOT / "planner" / "data" / "serving_calibration.json"


def _replica(cal, *, tp: int, engine: str = "vllm-v0"):
    return build_replica(get_model("llama-3.1-70b"), get_gpu("h200-sxm"), tp=tp, context_tokens=1200,
                         input_tokens=1000, engine=engine, calibration=cal)


def test_v0_fixed_step_at_tp8_is_the_engine_cost_plus_three_doublings():
    """latency13's form with session 23's trimmed refit (rule T): V0's fixed step parts at TP8 are ``o_engine +
    o_tp·log2 8`` = 4.552395 ms + 3 x 0.702927 ms = 6.661175 ms (the calibration file's o_engine, session 16's
    4.047715 ms times the fit's step 1.6^(1/4) = 1.1246827, and o_tp, session 16's 1.799492 ms divided by 1.6^2);
    its per-sequence cost is ``o_seq`` alone (session 16's 112.47 us / 1.6^(1/2) = 88.91 us), since ``o_tp_seq`` is
    0."""
    r = _replica(default_calibration(), tp=8)
    assert r.fixed_s == pytest.approx(0.004552395 + 3 * 0.000702927, rel=1e-6)
    assert r.fixed_s * 1e3 == pytest.approx(6.661, abs=0.001)
    assert r.seq_s == pytest.approx(88.914e-6, rel=1e-4)


def test_v0_per_sequence_multi_gpu_term_as_tried():
    """The trial (dropped): ``o_tp_seq`` = 4.096 us for ``vllm-v0``. 64 decoding sequences on TP8 (three doublings)
    add 64 x 3 x 4.096 us = 786.432 us to a step; on one GPU nothing; a V1 (``vllm``) replica nothing."""
    base = default_calibration()
    trial = base.replace(tp_seq_overhead_s={"vllm-v0": 4.096e-6})
    for tp, engine, expected_us in ((8, "vllm-v0", 786.432), (1, "vllm-v0", 0.0), (8, "vllm", 0.0)):
        extra = (step_time_s(_replica(trial, tp=tp, engine=engine), trial, decode_seqs=64)
                 - step_time_s(_replica(base, tp=tp, engine=engine), base, decode_seqs=64))
        assert extra * 1e6 == pytest.approx(expected_us, abs=1e-6)


def test_published_calibration_keeps_no_per_sequence_multi_gpu_cost():
    """Dropped under the 1% rule (training loss 0.2787223 to 0.2777732, −0.34%): every engine's ``tp_seq_overhead_s``
    stays 0 and it is not among the fitted constants."""
    data = json.loads(CALIBRATION.read_text(encoding="utf-8"))
    assert data["constants"]["tp_seq_overhead_s"] == {"sglang": 0.0, "trtllm": 0.0, "vllm": 0.0, "vllm-v0": 0.0}
    assert not any(name.startswith("tp_seq_overhead_s") for name in data["fitted"])


def test_logits_gather_bytes_per_sequence_are_half_a_microsecond_on_h200_nvlink():
    """The code reading of docs/serving.md: V0 gathers the logits to the driver (``tensor_model_parallel_gather``),
    ``(tp−1)/tp·V·2 B`` per sampled sequence: 7/8 x 128,256 x 2 B = 224,448 B at TP8 for Llama-3's vocabulary; over
    one direction of the H200's NVLink (900 GB/s both ways, 450 GB/s one) 0.499 us."""
    vocab = get_model("llama-3.1-70b").vocab_size
    assert vocab == 128256
    gather = 7 / 8 * vocab * 2
    assert gather == 224448
    bidir, pcie = link_bytes_per_s_bidir(get_gpu("h200-sxm"))
    assert (bidir, pcie) == (900e9, False)
    assert math.isclose(gather / (bidir / 2) * 1e6, 0.49877, rel_tol=1e-4)
