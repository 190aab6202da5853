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
