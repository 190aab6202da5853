"""The published serving benchmark points in tests/data/serving (schema: tests/data/serving/SCHEMA.md).

Every point is a number copied from a public source (a URL or a repository path); these tests check the files are
well formed, so the serving model's accuracy tables rest on complete, unit-explicit, uniquely named points.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

SERVING = Path(__file__).parent / "data" / "serving"
CATALOG = Path(__file__).parent.parent / "planner" / "data"
FILES = sorted(SERVING.glob("*.json"))

ENGINES = {"vllm", "sglang", "trtllm", "nim", "tgi", "lmdeploy", "other"}
MODES = {"closed", "open", "offline"}
LENGTHS = {"fixed", "random", "dataset"}
SCOPES = {"total", "per_gpu", "n/a"}
STATS = {"mean", "median", "p50", "p90", "p95", "p99", "n/a"}
DTYPES = {"bf16", "fp16", "fp8", "int8", "int4-awq", "int4-gptq", "nvfp4", "mxfp4", "fp4", "auto"}
LATENCY_KEYS = {"tpot_ms", "itl_ms", "ttft_ms", "e2e_ms", "output_tokens_per_s_per_user"}
THROUGHPUT_KEYS = {"output_tokens_per_s", "total_tokens_per_s", "requests_per_s"}
POINT_KEYS = {
    "id", "engine", "engine_version", "model", "model_in_catalog", "gpu", "gpu_in_catalog", "gpu_count", "tp", "pp",
    "ep", "dp", "weight_dtype", "kv_cache_dtype", "input_tokens", "output_tokens", "lengths", "mode", "concurrency",
    "request_rate_per_s", "num_prompts", "measured", "throughput_scope", "stat", "where",
}  # fmt: skip
OPTIONAL_KEYS = {"engine_settings", "notes"}


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _catalog_ids(filename: str, section: str) -> set[str]:
    return {entry["id"] for entry in json.loads((CATALOG / filename).read_text(encoding="utf-8"))[section]}


def _all_points() -> list[tuple[str, dict]]:
    return [(path.name, point) for path in FILES for point in _load(path)["points"]]


def _positive_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _positive_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def test_there_are_files_and_a_schema():
    assert (SERVING / "SCHEMA.md").is_file()
    assert len(FILES) >= 3


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_source_is_a_url_or_a_repository_path(path):
    source = _load(path)["source"]
    has_url = isinstance(source.get("url"), str) and re.match(r"https?://[^\s/]+\.[^\s]+$", source["url"])
    has_repo = (
        isinstance(source.get("repo"), str)
        and re.fullmatch(r"[A-Za-z0-9][\w.-]*/[\w.-]+", source["repo"])
        and isinstance(source.get("path"), str)
        and source["path"].strip()
    )
    assert has_url or has_repo, path.name
    if "commit" in source:
        assert re.fullmatch(r"[0-9a-f]{40}", source["commit"]), path.name
    assert isinstance(source.get("title"), str) and source["title"].strip(), path.name
    assert re.fullmatch(r"\d{4}-\d{2}(-\d{2})?", source.get("as_of", "")), path.name
    assert isinstance(source.get("notes"), str) and source["notes"].strip(), path.name
    assert _load(path)["points"], f"{path.name} has no points"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_point_follows_the_schema(path):
    models = _catalog_ids("models.json", "models")
    gpus = _catalog_ids("gpus.json", "gpus")
    for point in _load(path)["points"]:
        where = f"{path.name}: {point.get('id')}"
        keys = set(point)
        assert POINT_KEYS <= keys, (where, POINT_KEYS - keys)
        assert keys <= POINT_KEYS | OPTIONAL_KEYS, (where, keys - POINT_KEYS - OPTIONAL_KEYS)
        assert isinstance(point["id"], str) and point["id"].strip(), where
        assert point["engine"] in ENGINES, where
        assert point["engine_version"] is None or isinstance(point["engine_version"], str), where
        # catalog names are used whenever the model / GPU is in the catalog, and the flag says which
        assert point["model_in_catalog"] is (point["model"] in models), where
        assert point["gpu_in_catalog"] is (point["gpu"] in gpus), where
        for key in ("gpu_count", "tp", "pp", "input_tokens", "output_tokens"):
            assert _positive_int(point[key]), (where, key)
        for key in ("ep", "dp", "num_prompts"):
            assert point[key] is None or _positive_int(point[key]), (where, key)
        assert point["tp"] * point["pp"] <= point["gpu_count"] * (point["dp"] or 1), where
        assert point["gpu_count"] >= point["tp"] * point["pp"], where
        for key in ("weight_dtype", "kv_cache_dtype"):
            assert point[key] is None or point[key] in DTYPES, (where, key)
        assert point["lengths"] in LENGTHS, where
        assert point["mode"] in MODES, where
        if point["mode"] == "closed":
            assert _positive_int(point["concurrency"]) and point["request_rate_per_s"] is None, where
        elif point["mode"] == "open":
            assert _positive_number(point["request_rate_per_s"]) and point["concurrency"] is None, where
        else:
            assert point["concurrency"] is None and point["request_rate_per_s"] is None, where
        measured = point["measured"]
        assert isinstance(measured, dict) and measured, where
        assert set(measured) <= LATENCY_KEYS | THROUGHPUT_KEYS, (where, set(measured) - LATENCY_KEYS - THROUGHPUT_KEYS)
        for key, value in measured.items():
            assert _positive_number(value), (where, key)
        has_throughput = bool(set(measured) & THROUGHPUT_KEYS)
        has_latency = bool(set(measured) & LATENCY_KEYS)
        assert point["throughput_scope"] in SCOPES, where
        assert (point["throughput_scope"] != "n/a") is has_throughput, where
        assert point["stat"] in STATS, where
        assert (point["stat"] != "n/a") is has_latency, where
        assert isinstance(point["where"], str) and point["where"].strip(), where
        if "engine_settings" in point:
            assert isinstance(point["engine_settings"], dict), where


def test_units_are_plausible():
    # A latency in seconds filed as ms, or tokens/s per user filed as total, shows up as an impossible value.
    for name, point in _all_points():
        measured = point["measured"]
        for key in ("tpot_ms", "itl_ms"):
            if key in measured:
                assert 0.5 <= measured[key] <= 2_000, (name, point["id"], key)
        if "ttft_ms" in measured:
            assert 1 <= measured["ttft_ms"] <= 600_000, (name, point["id"])
        if "tpot_ms" in measured and "e2e_ms" in measured:
            assert measured["e2e_ms"] >= measured["tpot_ms"], (name, point["id"])
        if "output_tokens_per_s_per_user" in measured:
            assert measured["output_tokens_per_s_per_user"] <= 5_000, (name, point["id"])


def test_ids_are_unique_across_files():
    counts = Counter(point["id"] for _, point in _all_points())
    assert not [pid for pid, n in counts.items() if n > 1]


def test_at_least_sixty_points_with_latency_and_throughput_regimes():
    points = [point for _, point in _all_points()]
    assert len(points) >= 60
    with_latency = [p for p in points if {"tpot_ms", "itl_ms"} & set(p["measured"])]
    assert len(with_latency) >= 30
    assert any(p["tp"] > 1 for p in with_latency) and any(p["tp"] == 1 for p in with_latency)
    assert {"closed", "offline"} <= {p["mode"] for p in points}
