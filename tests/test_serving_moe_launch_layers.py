"""Rule K (docs/serving.md, session 16, latency40): the launch floor counts only the MoE decoder layers twice.

Llama-4-Maverick interleaves dense and MoE layers (``interleave_moe_layer_step`` 2: 24 MoE layers of 48) and
DeepSeek-R1 keeps its first three layers dense (``first_k_dense_replace`` 3: 58 of 61), so with the switch on they
count 48 + 24 = 72 and 61 + 58 = 119 launch layers instead of 96 and 122; models whose every layer is MoE (Scout,
Qwen3-235B, Mixtral) and dense models are unchanged. Values worked by hand from the model configs.
"""

import pytest

from planner.catalog import get_gpu, get_model
from planner.serving import step
from planner.serving.api import default_calibration


def _replica(model: str, *, engine: str = "sglang", tp: int = 8, gpu: str = "h100-sxm") -> step.Replica:
    return step.build_replica(get_model(model), get_gpu(gpu), tp=tp, context_tokens=600, input_tokens=500,
                              engine=engine, calibration=default_calibration())


CASES = {  # model: (launch layers off, on)
    "llama-4-maverick": (96.0, 72.0),
    "deepseek-r1": (122.0, 119.0),
    "llama-4-scout": (96.0, 96.0),
    "qwen3-235b-a22b": (188.0, 188.0),
    "mixtral-8x7b": (64.0, 64.0),
    "llama-3.1-70b": (80.0, 80.0),
}


@pytest.mark.parametrize("model", sorted(CASES))
def test_launch_layers_by_switch(model, monkeypatch):
    off, on = CASES[model]
    r = _replica(model)
    monkeypatch.setattr(step, "MOE_LAUNCH_BY_LAYER", False)
    assert step.launch_layers(r) == off
    monkeypatch.setattr(step, "MOE_LAUNCH_BY_LAYER", True)
    assert step.launch_layers(r) == on


def test_maverick_eager_prompt_floor_loses_its_dense_layers(monkeypatch):
    """A one-token SGLang prompt step of Maverick at TP 8 is launch-bound (no CUDA graph for prompt steps): its body
    is the eager floor, 96 launch layers without rule K and 72 with it, 24 × f_eager apart."""
    cal = default_calibration()
    r = _replica("llama-4-maverick")
    monkeypatch.setattr(step, "MOE_LAUNCH_BY_LAYER", False)
    _, body_off, _ = step.step_parts(r, cal, decode_seqs=0, prefill_tokens=1, prefill_seqs=1)
    monkeypatch.setattr(step, "MOE_LAUNCH_BY_LAYER", True)
    _, body_on, _ = step.step_parts(r, cal, decode_seqs=0, prefill_tokens=1, prefill_seqs=1)
    assert body_off == pytest.approx(96 * cal.eager_layer_floor_s)
    assert body_on == pytest.approx(72 * cal.eager_layer_floor_s)
    assert body_off - body_on == pytest.approx(24 * cal.eager_layer_floor_s)


def test_default_matches_the_published_switch():
    """The published behaviour is the switch's value in step.py (rule K's outcome, docs/serving.md)."""
    r = _replica("llama-4-maverick")
    assert step.launch_layers(r) == (72.0 if step.MOE_LAUNCH_BY_LAYER else 96.0)
