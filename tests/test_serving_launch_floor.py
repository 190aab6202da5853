"""Rule L (docs/serving.md, session 16, latency36): a launch-bound step's collectives run under its launch floor.

Llama-3.1-405B FP8 at TP 8 on MI300X with ``enforce_eager`` (dstack's offline command): a decode step of 4 sequences
is launch-bound (126 layers at the eager floor, far above the device's weight read), so under rule L it takes the
fixed host part plus the floor alone, its all-reduces hidden; under S1 it takes the all-reduces on top. A CUDA-graph
step (device time far above ``L·f_layer``) is the same under both.
"""

import pytest

from planner.catalog import get_gpu, get_model
from planner.serving import step
from planner.serving.api import default_calibration


def _replica(gpu: str, *, eager: bool) -> step.Replica:
    return step.build_replica(get_model("llama-3.1-405b"), get_gpu(gpu), tp=8, weight_dtype="fp8",
                              context_tokens=128 + 1024, input_tokens=128, engine="vllm-v0",
                              calibration=default_calibration(), enforce_eager=eager)


def test_eager_step_hides_its_all_reduces_under_the_floor(monkeypatch):
    cal = default_calibration()
    r = _replica("mi300x", eager=True)
    floor = step.launch_layers(r) * cal.eager_layer_floor_s
    monkeypatch.setattr(step, "COMM_UNDER_LAUNCH_FLOOR", False)
    fixed0, body0, comm0 = step.step_parts(r, cal, decode_seqs=4)
    assert body0 == pytest.approx(floor) and comm0 > 0  # S1: launch-bound, all-reduces after the floor
    monkeypatch.setattr(step, "COMM_UNDER_LAUNCH_FLOOR", True)
    fixed1, body1, comm1 = step.step_parts(r, cal, decode_seqs=4)
    assert (fixed1, body1, comm1) == (pytest.approx(fixed0), pytest.approx(floor), 0.0)
    assert step.step_time_s(r, cal, decode_seqs=4) == pytest.approx(fixed0 + body0 + comm0 - comm0)


def test_device_bound_step_is_unchanged(monkeypatch):
    cal = default_calibration()
    r = _replica("h100-sxm", eager=False)
    monkeypatch.setattr(step, "COMM_UNDER_LAUNCH_FLOOR", False)
    before = step.step_time_s(r, cal, decode_seqs=64)
    monkeypatch.setattr(step, "COMM_UNDER_LAUNCH_FLOOR", True)
    assert step.step_time_s(r, cal, decode_seqs=64) == pytest.approx(before, rel=1e-12)
