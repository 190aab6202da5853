"""The KV fits' kept results (planner.sheet.memory._replica_kv / _prefix_bytes): the same answers as the uncached
functions, arguments kept apart by type, and no result kept for a model named by a path."""

from __future__ import annotations

import json

import pytest

from planner import selfhosted
from planner.sheet import memory as sm


@pytest.fixture(autouse=True)
def _empty() -> None:
    sm._replica_kv_kept.cache_clear()
    sm._prefix_bytes_kept.cache_clear()


def test_kept_results_equal_the_functions() -> None:
    kw = dict(context_tokens=4096.0, tp=1, pp=1, gpu_memory_utilization=0.9, kv_cache_dtype="auto",
              engine="vllm", weight_dtype="auto")
    direct = selfhosted.replica_kv("llama-3.1-8b", "h100-sxm", **kw)
    assert sm._replica_kv("llama-3.1-8b", "h100-sxm", **kw) == direct
    assert sm._replica_kv("llama-3.1-8b", "h100-sxm", **kw) is sm._replica_kv("llama-3.1-8b", "h100-sxm", **kw)
    assert sm._replica_kv_kept.cache_info().hits == 2
    pk = dict(prefix_tokens=4096.0, distinct_prefixes=10.0, tp=1, engine="vllm")
    assert sm._prefix_bytes("llama-3.1-8b", "h100-sxm", **pk) == selfhosted.prefix_retention_bytes(
        "llama-3.1-8b", "h100-sxm", **pk)


def test_sheet_functions_answer_as_before() -> None:
    # the registry functions' own worked examples (docstrings of planner/sheet/memory.py), twice (second: kept)
    for _ in range(2):
        assert sm.MAX_CONCURRENCY("llama-3.1-8b", "h100-sxm", 1, 0.9, "auto", 4096) == 102
        assert round(sm.KV_FIT("llama-3.1-8b", "h100-sxm", 100, 2, 4096, 2), 4) == 0.9742
        assert round(sm.PREFIX_KV_FIT("llama-3.1-8b", "h100-sxm", 4096, 10), 4) == 0.0974
        assert sm.REPLICAS_FOR_KV("llama-3.1-8b", "h100-sxm", 250, 4096) == 3


def test_arguments_kept_apart_by_type() -> None:
    a = sm._key({"tp": 1, "x": 0.0})
    b = sm._key({"tp": 1.0, "x": -0.0})
    c = sm._key({"tp": True, "x": 0.0})
    assert len({a, b, c}) == 3
    sm._replica_kv("llama-3.1-8b", "h100-sxm", context_tokens=4096, tp=1)
    sm._replica_kv("llama-3.1-8b", "h100-sxm", context_tokens=4096.0, tp=1)
    assert sm._replica_kv_kept.cache_info().misses == 2


def test_errors_are_not_kept() -> None:
    from planner.errors import ArgumentError

    for _ in range(2):
        with pytest.raises(ArgumentError):
            sm.KV_FIT("llama-3.1-8b", "h100-sxm", 100, 2, 4096, 2, kv_dtype="int3")
    assert sm._replica_kv_kept.cache_info().currsize == 0


def test_a_model_given_by_path_is_not_kept(tmp_path) -> None:  # noqa: ANN001
    from planner.catalog import model_entry

    cfg = tmp_path / "config.json"
    entry = model_entry("llama-3.1-8b")
    hf = entry.get("hf_config") or entry.get("config")
    if not isinstance(hf, dict):
        pytest.skip("the catalog entry carries no Hugging Face config to write")
    cfg.write_text(json.dumps(hf))
    assert not sm._named(str(cfg))
    sm._replica_kv(str(cfg), "h100-sxm", context_tokens=4096)
    assert sm._replica_kv_kept.cache_info().currsize == 0
    assert sm._named("llama-3.1-8b") and sm._named("Llama-3.1-8B")
