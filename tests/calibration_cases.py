"""Load the calibration set in ``tests/data/calibration/cases.json`` and run it (shared by the tests and by the
``docs/accuracy.md`` renderer: ``PLANNER_WRITE_ACCURACY=1 .venv/bin/pytest tests/test_calibrate.py``)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from planner.calibrate import CaseResult, accuracy_markdown, accuracy_summary, run_case
from planner.catalog import get_gpu, get_model
from planner.errors import UnknownNameError
from planner.specs import GIB, GpuSpec

DATA = Path(__file__).parent / "data" / "calibration"
CASES_FILE = DATA / "cases.json"
ACCURACY_DOC = Path(__file__).parent.parent / "docs" / "accuracy.md"


def load_cases() -> list[dict]:
    return json.loads(CASES_FILE.read_text(encoding="utf-8"))["cases"]


def resolve_model(case: dict):
    name = case["model"]
    return get_model(str(DATA / name) if name.endswith(".json") else name)


def resolve_gpu(case: dict) -> GpuSpec | None:
    """The catalog GPU, with the total memory the engine logged where the case gives it (a hardware fact, not an
    overhead); a GPU outside the catalog is built from the case's ``gpu_spec``."""
    if not case.get("gpu"):
        return None
    try:
        gpu = get_gpu(case["gpu"])
    except UnknownNameError:
        spec = case["gpu_spec"]
        gpu = GpuSpec(name=case["gpu"], display_name=spec["display_name"], hbm_bytes=int(case["gpu_total_gib"] * GIB),
                      mem_bw_bytes_per_s=spec["mem_bw_bytes_per_s"], bf16_flops_per_s=spec["bf16_flops_per_s"],
                      source=spec["source"], as_of=spec["as_of"])
    if case.get("gpu_total_gib"):
        gpu = dataclasses.replace(gpu, hbm_bytes=int(case["gpu_total_gib"] * GIB), hbm_bytes_basis="engine log")
    return gpu


def run_all() -> list[CaseResult]:
    return [run_case(c, resolve_model(c), resolve_gpu(c)) for c in load_cases()]


def render_accuracy(results: list[CaseResult], cases: list[dict]) -> str:
    return accuracy_markdown(results, cases), accuracy_summary(results)
