"""The serving model against the published points: the generated section of docs/accuracy.md is current, the split
is deterministic, and the held-out figures are what the docs say (whatever they are: reported, not asserted)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from planner.serving import accuracy
from planner.serving.api import default_calibration

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "accuracy.md"
BEGIN, END = "<!-- serving-accuracy:begin -->", "<!-- serving-accuracy:end -->"


def _points() -> list[dict]:
    out = []
    for path in sorted((ROOT / "tests" / "data" / "serving").glob("*.json")):
        out += json.loads(path.read_text(encoding="utf-8"))["points"]
    return out


@pytest.fixture(scope="module")
def rows():
    return accuracy.evaluate(_points(), calibration=default_calibration())


def test_split_is_deterministic_and_about_70_30():
    ids = [p["id"] for p in _points()]
    train = [i for i in ids if accuracy.is_training(i)]
    assert train == [i for i in ids if accuracy.is_training(i)]
    assert 0.6 < len(train) / len(ids) < 0.8


def test_fit_used_the_training_split_only():
    data = json.loads((ROOT / "planner" / "data" / "serving_calibration.json").read_text())
    assert "training split" in data["source"] and data["fitted"]
    assert set(data["fitted"]).isdisjoint(data["derived"])


def test_serving_accuracy_section_is_current(rows):
    block = f"{BEGIN}\n{accuracy.markdown(rows, calibration=default_calibration())}{END}\n"
    text = DOC.read_text(encoding="utf-8")
    if os.environ.get("PLANNER_WRITE_ACCURACY"):
        if BEGIN in text:
            text = text[: text.index(BEGIN)] + block + text[text.index(END) + len(END) + 1:]
        else:
            text = text.rstrip("\n") + "\n\n" + block
        DOC.write_text(text, encoding="utf-8")
    assert block in DOC.read_text(encoding="utf-8"), "run tools/regenerate (PLANNER_WRITE_ACCURACY=1)"


def test_model_beats_the_old_roofline_on_held_out_points(rows):
    held = [r for r in rows if not r.train]
    new, old = accuracy.summary(held), accuracy.summary(held, baseline=True)
    for metric in ("tpot", "ttft", "otps"):
        assert new[metric][0] < old[metric][0], metric
    assert new["within25"] > old["within25"]


def test_accelmark_runs_keep_the_engine_arguments_they_record():
    """AccelMark's vLLM 0.20 suite-C W8A8/W8A16/W4A16 result files record ``task.extra_config.enforce_eager: true``
    (BF16 records none: ``results/verified/nvidia_a100_sxm4_80gbx1_suite_C_nvidia_vllm020_0f6c56e4_ffd81462/*/
    online/result.json``), and suite C's ``precision_model_map`` names ``quantization: gptq`` for W4A16, which the
    runner passes to the offline ``LLM(...)`` only (``runners/nvidia_vllm_47f5d58e/runner.py``)."""
    run = "accelmark/nvidia_a100_sxm4_80gbx1_suite_C_nvidia_vllm020_0f6c56e4_ffd81462"
    base = {"engine": "vllm", "engine_version": "0.20.1+transformers-5.8.1", "mode": "open"}
    for prec, eager in (("w8a8", True), ("w8a16", True), ("w4a16", True), ("bf16", False)):
        got = accuracy.harness_settings({**base, "id": f"{run}/{prec}/online/qps5"}, gpu_big=False)
        assert got.get("enforce_eager", False) is eager, prec
    offline = {**base, "mode": "offline", "weight_dtype": "int4-gptq"}
    assert accuracy.harness_settings({**offline, "id": f"{run}/w4a16/offline"}, gpu_big=False)["quantization"] == "gptq"
    old = "accelmark/nvidia_h100_80gb_hbm3x1_suite_C_nvidia_vllm_47f5d58e_a4a8716a"
    v0 = {"engine": "vllm", "engine_version": "0.7.3", "weight_dtype": "int4-gptq"}
    assert accuracy.harness_settings({**v0, "mode": "offline", "id": f"{old}/w4a16/offline"},
                                     gpu_big=True) == {"max_num_seqs": 512, "quantization": "gptq"}
    assert accuracy.harness_settings({**v0, "mode": "open", "id": f"{old}/w4a16/online/qps5"}, gpu_big=True) == {}
