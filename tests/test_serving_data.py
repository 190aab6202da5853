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


def test_models_outside_the_catalog_keep_their_hugging_face_id():
    for name, point in _all_points():
        if not point["model_in_catalog"]:
            assert re.fullmatch(r"[\w.-]+/[\w.-]+", point["model"]), (name, point["id"], point["model"])


def test_schema_lists_every_file():
    schema = (SERVING / "SCHEMA.md").read_text(encoding="utf-8")
    for path in FILES:
        assert f"`{path.name}`" in schema, path.name


def test_regimes_the_accuracy_tables_split_on_are_covered():
    # docs/accuracy.md reports held-out error by regime; each regime needs measured latency points to report on.
    models = {m["id"]: m for m in json.loads((CATALOG / "models.json").read_text(encoding="utf-8"))["models"]}

    def is_moe(point) -> bool:
        spec = models.get(point["model"])
        return bool(spec) and spec["params_active"] < spec["params_total"]

    latency = [p for _, p in _all_points() if {"tpot_ms", "itl_ms"} & set(p["measured"]) and p["model_in_catalog"]]
    assert sum(1 for p in latency if p["tp"] > 1) >= 40
    assert sum(1 for p in latency if is_moe(p)) >= 20
    assert sum(1 for p in latency if p["mode"] == "closed" and p["concurrency"] >= 64) >= 5
    assert sum(1 for p in latency if p["input_tokens"] >= 4 * p["output_tokens"]) >= 10  # prefill-heavy
    assert sum(1 for p in latency if p["output_tokens"] >= 4 * p["input_tokens"]) >= 5  # decode-heavy
    assert {"h100-sxm", "h200-sxm", "a100-80gb-sxm", "b200-hgx", "mi300x"} <= {p["gpu"] for p in latency}
    # L4 points exist, but only for Llama-3-8B-Instruct, which the catalog does not list
    assert any(p["gpu"] == "l4" and {"tpot_ms", "itl_ms"} & set(p["measured"]) for _, p in _all_points())
    assert {"vllm", "sglang", "nim"} <= {p["engine"] for p in latency}


@pytest.mark.parametrize(
    ("filename", "point_id", "key", "published"),
    [
        # values typed from the sources (see each point's "where"), guarding the files against accidental edits
        (
            "nim-benchmarking-perf.json",
            "nim-benchmarking-perf/llama-3.3-70b/h100-sxmx2/5000-500/c50",
            "ttft_ms",
            834.51,
        ),
        ("nim-benchmarking-perf.json", "nim-benchmarking-perf/llama-3.3-70b/h100-sxmx2/5000-500/c100", "itl_ms", 92.91),
        (
            "trtllm-perf-overview.json",
            "trtllm-perf-overview/llama-3.1-8b/h100-sxmx1/128-128/offline",
            "output_tokens_per_s",
            28312,
        ),
        (
            "trtllm-perf-overview.json",
            "trtllm-perf-overview/llama-3.3-70b/h100-sxmx2/2048-128/offline",
            "output_tokens_per_s",
            762,
        ),
        ("sglang-cookbook.json", "sglang-cookbook/llama-3.1-70b/a100-80gb-sxmx8/500-505/c100", "tpot_ms", 47.19),
    ],
)
def test_spot_values_match_the_sources(filename, point_id, key, published):
    points = {p["id"]: p for p in _load(SERVING / filename)["points"]}
    assert points[point_id]["measured"][key] == published
