"""Load the calibration set in ``tests/data/calibration/cases.json`` and run it (shared by the tests and by the
``docs/accuracy.md`` renderer: ``PLANNER_WRITE_ACCURACY=1 .venv/bin/pytest tests/test_calibrate.py``, which
``tools/regenerate`` runs)."""

from __future__ import annotations

import json
from pathlib import Path

from planner.calibrate import CaseResult, accuracy_markdown, accuracy_summary, run_case
from planner.catalog import get_gpu, get_model
from planner.engines import normalize_engine
from planner.specs import GpuSpec

DATA = Path(__file__).parent / "data" / "calibration"
CASES_FILE = DATA / "cases.json"
ACCURACY_DOC = Path(__file__).parent.parent / "docs" / "accuracy.md"
SERVING_MARKER = "<!-- serving-accuracy:begin -->"
"""Where another generator's section of docs/accuracy.md starts: the memory generator leaves it and what follows."""

SPLITS = ("train", "held-out")


def load_cases() -> list[dict]:
    return json.loads(CASES_FILE.read_text(encoding="utf-8"))["cases"]


def resolve_model(case: dict):
    name = case["model"]
    return get_model(str(DATA / name) if name.endswith(".json") else name)


def resolve_gpu(case: dict) -> GpuSpec | None:
    """The catalog GPU as it is: nothing from the log (not even the total memory it states) enters a prediction."""
    if not case.get("gpu"):
        return None
    return get_gpu(case["gpu"])


def run_all() -> list[CaseResult]:
    return [run_case(c, resolve_model(c), resolve_gpu(c)) for c in load_cases()]


def render_accuracy(results: list[CaseResult], cases: list[dict]) -> tuple[str, dict]:
    return accuracy_markdown(results, cases), accuracy_summary(results)


def _version(case: dict) -> tuple[int, ...]:
    return tuple(int(p) for p in str(case.get("engine_version") or "0").split(".")[:2] if p.isdigit())


CLUSTERS = (
    ("vLLM >= 0.17", lambda c: normalize_engine(c["engine"], engine_version=c.get("engine_version")) == "vllm"
     and _version(c) >= (0, 17)),
    ("vLLM V1 0.8-0.16", lambda c: normalize_engine(c["engine"], engine_version=c.get("engine_version")) == "vllm"
     and _version(c) < (0, 17)),
    ("vLLM V0 engine (0.5-0.9)",
     lambda c: normalize_engine(c["engine"], engine_version=c.get("engine_version")) == "vllm-v0"),
    ("SGLang", lambda c: c["engine"] == "sglang"),
    ("TP or PP > 1", lambda c: (c.get("tp") or 1) > 1 or (c.get("pp") or 1) > 1),
    ("70B-class dense at TP 2", lambda c: c["model"] in ("llama-3.3-70b", "qwen2.5-72b-instruct") and c.get("tp") == 2),
    ("MoE", lambda c: get_model(c["model"]).architecture == "moe" if not c["model"].endswith(".json")
     else resolve_model(c).architecture == "moe"),
    ("GPU other than H100", lambda c: c.get("gpu") not in (None, "h100-sxm")),
    ("memory fraction < 0.9", lambda c: c.get("gpu_memory_utilization") is not None
     and c["gpu_memory_utilization"] < 0.9),
)


def _row(label: str, errors: list[float]) -> str:
    n = len(errors)
    if not n:
        return f"| {label} | 0 | – | – |"
    within = sum(1 for e in errors if e <= 0.10)
    v = sorted(errors)
    median = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    return f"| {label} | {n} | {within} ({within / n:.1%}) | {median * 100:.1f}% |"


def render_summary(results: list[CaseResult], cases: list[dict]) -> str:
    """The generated summary of docs/accuracy.md: KV capacity within 10% and median by split and by cluster, and
    every case outside 10% with the reason its case records."""
    by_id = {c["id"]: c for c in cases}
    scored = [(r, by_id[r.case_id]) for r in results if r.capacity_error is not None]
    lines = ["| KV capacity, no overhead from the log | cases | within 10% | median abs error |", "|---|---|---|---|"]
    lines.append(_row("**all**", [abs(r.capacity_error) for r, _ in scored]))
    for split in SPLITS:
        lines.append(_row(f"**{split}**", [abs(r.capacity_error) for r, c in scored if c["split"] == split]))
    for label, test in CLUSTERS:
        for split in SPLITS:
            errs = [abs(r.capacity_error) for r, c in scored if c["split"] == split and test(c)]
            if errs:
                lines.append(_row(f"{label} ({split})", errs))
    lines += ["", "Outside 10%:", ""]
    for r, c in scored:
        if abs(r.capacity_error) > 0.10:
            why = (c.get("expect") or {})
            reason = why.get("capacity") if why.get("capacity") not in (None, "as kv_cache_tokens") else why.get(
                "kv_cache_tokens", "not explained")
            lines.append(f"- {r.case_id} ({c['split']}, {r.capacity_error * 100:+.1f}%): {reason}.")
    return "\n".join(lines) + "\n"


def _replace_between(text: str, begin: str, end: str, body: str) -> str:
    start, stop = text.index(begin) + len(begin), text.index(end)
    return text[:start] + "\n" + body + text[stop:]


def write_accuracy_doc(table: str, summary: str, path: Path = ACCURACY_DOC) -> None:
    """Rewrite the generated blocks of docs/accuracy.md; everything from :data:`SERVING_MARKER` on is kept as is."""
    text = path.read_text(encoding="utf-8")
    cut = text.find(SERVING_MARKER)
    head, tail = (text, "") if cut < 0 else (text[:cut], text[cut:])
    head = _replace_between(head, "<!-- summary -->", "<!-- /summary -->", summary)
    head = _replace_between(head, "<!-- table -->", "<!-- /table -->", table)
    path.write_text(head + tail, encoding="utf-8")
