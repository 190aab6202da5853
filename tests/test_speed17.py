"""Session 20 (speed17): the KV fits' replica budget kept per replica, cheaper keys for the kept replicas, and the
plan's fleet and provider functions calling their registry functions with the row's cells coerced once.

Each test compares a shortcut with the long path over many inputs, or asks two inputs that differ only in what a
key must hold (another input's answer would come back if the key missed it):

- :func:`planner.selfhosted.replica_budget` / :func:`~planner.selfhosted.replica_kv_at` against the body of
  ``replica_kv`` they replaced (kept below), and :func:`planner.engines.budget_reads_max_model_len` against
  :func:`~planner.engines.kv_capacity` at two contexts;
- :data:`planner.sheet.memory._BUDGETS` and the kept replicas (:func:`~planner.sheet.memory._replica_kv`) against
  :func:`planner.selfhosted.replica_kv`, each argument changed alone; :func:`~planner.sheet.memory._key` and
  :func:`~planner.sheet.memory._named`;
- :func:`planner.sheet.plan._call_row` against :func:`~planner.sheet.plan._call` (rows of every kind of cell, errors
  included), :func:`~planner.sheet.plan._fleet` and :func:`~planner.sheet.plan._provider` keyed on the table and
  the name.
"""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from planner import engines, memory, selfhosted
from planner.coerce import SharedRows
from planner.engines import held_sliding_tokens, kv_capacity
from planner.engines.vllm import padded_layers
from planner.errors import PlannerError
from planner.registry import load
from planner.sheet import memory as sm
from planner.sheet import plan
from planner.specs import GIB

load()

MODELS = ("llama-3.1-8b", "llama-3.1-70b", "gemma-3-27b", "gemma-2-9b", "mistral-7b-v0.1", "deepseek-v3",
          "gpt-oss-20b", "qwen3-30b-a3b", "phi-3-mini-4k")
GPUS = ("h100-sxm", "a100-80gb-sxm", "a100-40gb-sxm", "mi300x", "l40s", "b200-hgx")
ENGINES = ("vllm", "vllm-v0", "sglang", "trtllm")


def _old_replica_kv(model: Any, gpu: Any, *, context_tokens: float, tp: int = 1, pp: int = 1,
                    gpu_memory_utilization: float | None = None, kv_cache_dtype: str = "auto",
                    weight_dtype: str = "auto", engine: str = "vllm",
                    block_size: int | None = None) -> selfhosted.ReplicaKv:
    """``planner.selfhosted.replica_kv`` as it was at 91752de (one body)."""
    spec, card = selfhosted._specs(model, gpu)
    ctx = memory.blocks(context_tokens, block_size=1)
    cap = kv_capacity(
        spec, card, tp=tp, pp=pp, gpu_memory_utilization=gpu_memory_utilization, kv_cache_dtype=kv_cache_dtype,
        weight_dtype=weight_dtype, engine=engine, max_model_len=max(1, ctx), block_size=block_size,
    )
    budget = cap.available_kv_gib * GIB
    full, swa = memory.layer_split(spec, pp=pp)
    layers = padded_layers(full, swa=swa) if cap.engine == "vllm" else None
    batch = {"max_num_batched_tokens": cap.max_num_batched_tokens} if cap.engine == "vllm" else {}
    per_request = memory.kv_bytes_per_request(
        spec, context_tokens=context_tokens, tp=tp, pp=pp, kv_cache_dtype=kv_cache_dtype, block_size=cap.block_size,
        cached_layers=layers, **batch,
    )
    held = per_request
    if spec.sliding_window:
        held = memory.kv_bytes_per_request(
            spec, context_tokens=context_tokens, tp=tp, pp=pp, kv_cache_dtype=kv_cache_dtype, block_size=cap.block_size,
            cached_layers=layers,
            sliding_tokens=held_sliding_tokens(spec.sliding_window, engine=cap.engine, block_size=cap.block_size),
        )
    conc = memory.max_concurrency(budget, kv_request_bytes=per_request) if per_request > 0 else 0
    return selfhosted.ReplicaKv(
        engine=cap.engine, context_tokens=float(context_tokens), block_size=cap.block_size,
        weights_gib=cap.weights_gib, kv_budget_bytes=budget, kv_bytes_per_request=per_request,
        kv_bytes_held_per_request=held, max_concurrency=conc,
    )


def _outcome(call: Any, *args: Any, **kwargs: Any) -> tuple[str, str]:
    """What a call gives, as text: its value's type and ``repr``, or its error's type and message."""
    try:
        out = call(*args, **kwargs)
    except (PlannerError, ValueError, TypeError, ZeroDivisionError, OverflowError) as exc:
        return "raised " + type(exc).__name__, str(exc)
    return type(out).__name__, repr(out)


def _random_setup(rng: random.Random) -> dict[str, Any]:
    kw: dict[str, Any] = {
        "tp": rng.choice((1, 1, 2, 4, 8, 2.0, 3)),
        "pp": rng.choice((1, 1, 1, 2, 4)),
        "gpu_memory_utilization": rng.choice((None, 0.9, 0.85, 0.95, 0.5, 1, 0.0)),
        "kv_cache_dtype": rng.choice(("auto", "auto", "fp8", "bf16", "int3")),
        "weight_dtype": rng.choice(("auto", "auto", "fp8", "int4", "w8a16")),
        "engine": rng.choice(ENGINES + ("vLLM", "tensorrt-llm", "nope")),
    }
    if kw["gpu_memory_utilization"] is None:
        del kw["gpu_memory_utilization"]
    return kw


def _random_context(rng: random.Random) -> Any:
    return rng.choice((1, 0, 0.0, 16, 4096, 4096.0, 3000.5, 32768, 40000, 131072, 250000.0, rng.uniform(1, 9000),
                       rng.randint(1, 200_000), -5, float("nan"), True))


@pytest.fixture(autouse=True)
def _empty() -> None:
    sm._replica_kv_kept.cache_clear()
    sm._prefix_bytes_kept.cache_clear()
    sm._BUDGETS.clear()
    sm._NAMED.clear()
    plan._FLEETS.clear()
    plan._PROVIDERS.clear()
    plan._TEMPLATES.clear()
    plan._PREFIX_FITS.clear()


def test_split_replica_kv_answers_as_the_replaced_body() -> None:
    rng = random.Random(17)
    n = 0
    for _ in range(400):
        model, gpu, kw = rng.choice(MODELS), rng.choice(GPUS), _random_setup(rng)
        ctx = _random_context(rng)
        old = _outcome(_old_replica_kv, model, gpu, context_tokens=ctx, **kw)
        assert _outcome(selfhosted.replica_kv, model, gpu, context_tokens=ctx, **kw) == old, (model, gpu, ctx, kw)
        n += not old[0].startswith("raised")
    assert n > 100  # enough of them answer (the rest raise, as before)


def test_budget_reads_max_model_len_is_kv_capacitys() -> None:
    """Where it says no, every budget field replica_kv reads is the same at any two contexts; vLLM V0 changes."""
    rng = random.Random(5)
    changed_v0 = 0
    for _ in range(300):
        model, gpu, kw = rng.choice(MODELS), rng.choice(GPUS), _random_setup(rng)
        kw["engine"] = rng.choice(ENGINES)
        a, b = rng.choice((1, 2048, 4096, 33000)), rng.choice((1, 16, 8192, 40000, 131072))
        try:
            ca = kv_capacity(model, gpu, max_model_len=a, **kw)
            cb = kv_capacity(model, gpu, max_model_len=b, **kw)
        except PlannerError:
            continue
        fields = ("engine", "available_kv_gib", "weights_gib", "reserve_gib", "block_size", "num_blocks",
                  "kv_cache_tokens", "binding_stage", "stage_kv_cache_tokens")
        same = all(repr(getattr(ca, f)) == repr(getattr(cb, f)) for f in fields)
        if not engines.budget_reads_max_model_len(kw["engine"]):
            assert same, (model, gpu, kw, a, b)
            if ca.engine == "vllm":
                assert ca.max_num_batched_tokens == cb.max_num_batched_tokens
        elif not same:
            changed_v0 += 1
    assert changed_v0 > 0  # V0's budget does move with the context: it must not be kept


def test_kept_budget_gives_the_long_paths_answer() -> None:
    """The kept replicas over random calls in a row (budgets kept from earlier contexts) against replica_kv."""
    rng = random.Random(11)
    setups = [(rng.choice(MODELS[:5]), rng.choice(GPUS[:3]), _random_setup(rng)) for _ in range(12)]
    for _ in range(600):
        model, gpu, kw = rng.choice(setups)
        ctx = _random_context(rng)
        want = _outcome(_old_replica_kv, model, gpu, context_tokens=ctx, **kw)
        assert _outcome(sm._replica_kv, model, gpu, context_tokens=ctx, **kw) == want, (model, gpu, ctx, kw)
    assert sm._BUDGETS  # some were kept


@pytest.mark.parametrize("field, other", [
    ("model", "llama-3.1-70b"), ("gpu", "a100-80gb-sxm"), ("tp", 2), ("pp", 2), ("gpu_memory_utilization", 0.8),
    ("kv_cache_dtype", "fp8"), ("weight_dtype", "fp8"), ("engine", "sglang"), ("tp", 1.0),
])
def test_budget_key_holds_each_argument(field: str, other: Any) -> None:
    base: dict[str, Any] = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "tp": 1, "pp": 1,
                            "gpu_memory_utilization": 0.9, "kv_cache_dtype": "auto", "weight_dtype": "auto",
                            "engine": "vllm"}
    changed = {**base, field: other}
    for args, ctx in ((base, 4096), (changed, 2048), (base, 1000), (changed, 333)):
        kw = dict(args)
        model, gpu = kw.pop("model"), kw.pop("gpu")
        assert sm._replica_kv(model, gpu, context_tokens=ctx, **kw) == _old_replica_kv(model, gpu,
                                                                                      context_tokens=ctx, **kw)
        assert repr(sm._replica_kv(model, gpu, context_tokens=ctx, **kw)) == repr(
            _old_replica_kv(model, gpu, context_tokens=ctx, **kw))
    assert len(sm._BUDGETS) == 2


def test_v0_budget_is_not_kept() -> None:
    for ctx in (1000, 40000):
        assert sm._replica_kv("llama-3.1-8b", "h100-sxm", context_tokens=ctx, engine="vllm-v0") == _old_replica_kv(
            "llama-3.1-8b", "h100-sxm", context_tokens=ctx, engine="vllm-v0")
    assert not sm._BUDGETS


def test_bad_context_with_a_kept_budget_raises_the_same_error() -> None:
    sm._replica_kv("llama-3.1-8b", "h100-sxm", context_tokens=4096, tp=1)
    assert sm._BUDGETS
    for ctx in (-1, float("nan"), float("inf"), "x", None, True):
        assert _outcome(sm._replica_kv, "llama-3.1-8b", "h100-sxm", context_tokens=ctx, tp=1) == _outcome(
            _old_replica_kv, "llama-3.1-8b", "h100-sxm", context_tokens=ctx, tp=1)


def test_prefix_bytes_through_the_kept_replicas() -> None:
    rng = random.Random(3)
    for _ in range(200):
        model, gpu, kw = rng.choice(MODELS[:5]), rng.choice(GPUS[:3]), _random_setup(rng)
        p, n = rng.choice((0, 1, 512, 4096, 4096.0, 10_000.5, -1)), rng.choice((0, 1, 10, 2.5, -3))
        want = _outcome(selfhosted.prefix_retention_bytes, model, gpu, prefix_tokens=p, distinct_prefixes=n, **kw)
        assert _outcome(sm._prefix_bytes, model, gpu, prefix_tokens=p, distinct_prefixes=n, **kw) == want


def test_key_keeps_types_signs_and_order_apart() -> None:
    keys = [sm._key(k) for k in ({"tp": 1, "x": 0.0}, {"tp": 1.0, "x": 0.0}, {"tp": True, "x": 0.0},
                                 {"tp": 1, "x": -0.0}, {"tp": 1, "x": 0}, {"tp": 1, "x": False}, {"x": 0.0, "tp": 1})]
    assert len(set(keys)) == len(keys)
    for kw in ({"a": -0.0, "b": 0.0, "c": 0, "d": "auto", "e": None, "f": 2.5}, {"a": 1}, {}):
        back = sm._unkey(sm._key(kw))
        assert [(k, type(v), repr(v)) for k, v in back.items()] == [(k, type(v), repr(v)) for k, v in kw.items()]
    assert sm._without(sm._key({"a": 1, "context_tokens": 5, "b": 2}), "context_tokens") == sm._key({"a": 1, "b": 2})
    # -0.0 and 0.0 as a context: two entries, each its own answer
    a = sm._replica_kv("llama-3.1-8b", "h100-sxm", context_tokens=0.0)
    b = sm._replica_kv("llama-3.1-8b", "h100-sxm", context_tokens=-0.0)
    assert repr(a) == repr(_old_replica_kv("llama-3.1-8b", "h100-sxm", context_tokens=0.0))
    assert repr(b) == repr(_old_replica_kv("llama-3.1-8b", "h100-sxm", context_tokens=-0.0))


def test_named_is_kept_per_text(tmp_path: Any) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text("{}")
    for _ in range(2):
        assert sm._named("llama-3.1-8b") and sm._named("Llama-3.1-8B") and sm._named("x|layers=2")
        assert not sm._named(str(cfg)) and not sm._named("no-such-model") and not sm._named(None)
    assert sm._NAMED == {"llama-3.1-8b": True, "Llama-3.1-8B": True, "x|layers=2": True, str(cfg): False,
                         "no-such-model": False}


# ---- plan.py: rows kept, registry calls with the row's cells coerced once ----

FLEET_HEAD = ["Backend [name]", "TP [GPUs]", "PP [stages]", "Replicas [count]", "GPU mem util [fraction]",
              "KV dtype", "Weight dtype", "Engine", "MFU [fraction]"]
SPEC_HEAD = ["Backend [name]", "Model as used [spec]", "GPU as used [spec]"]
PROV_HEAD = ["Backend [name]", "Keys [count]", "Limit scope", "Window [s]", "RPM limit [req/min]",
             "TPM limit [tokens/min]", "ITPM limit [tokens/min]", "OTPM limit [tokens/min]", "RPD limit [req/day]",
             "TPD limit [tokens/day]", "Input [USD/Mtok]", "Cached input [USD/Mtok]", "Cache write [USD/Mtok]",
             "Output [USD/Mtok]"]

CELLS: dict[str, tuple[Any, ...]] = {
    "tp": (1, 2, 4, 1.0, 2.0, 3, 0, "2", " 4 ", "#N/A", True, None, "", "x", 2.5),
    "pp": (1, 2, 1.0, None, "#VALUE!", 0),
    "replicas": (1, 2, 3, 2.0, 0.5, None, "#REF!", "3", -1),
    "util": (0.9, 0.85, 1, 0.95, None, "", "90%", 1.5, "#N/A", False),
    "kv": ("auto", "fp8", "", None, "int3", 8, "#N/A", " FP8 "),
    "wd": ("auto", "fp8", None, "int4", "x"),
    "engine": ("vllm", "sglang", "vllm-v0", "trtllm", None, "nope", 1, "#DIV/0!"),
    "mfu": (0.4, 0.5, 1, None, 0, 1.2, "#N/A"),
    "model": ("llama-3.1-8b", "llama-3.1-70b", "gemma-3-27b", "nope", None, "#N/A", 3),
    "gpu": ("h100-sxm", "a100-80gb-sxm", "mi300x", "nope", None),
}
NUMBERS = (1, 2, 100, 0, 4096, 2.5, 3000.0, 0.0, -0.0, 0.3, 1e-9, 2.0**53, 2.0**60, -4, 7.0)
FREE_OTHER = (None, "5", "", True, "#N/A", "x: got 1, expected 2")


def _cell(rng: random.Random, kind: str) -> Any:
    """A cell of ``kind``: one of its first three (valid) values mostly, any (blanks, errors, texts) at times."""
    cells = CELLS[kind]
    return rng.choice(cells[:3]) if rng.random() < 0.85 else rng.choice(cells)


def _fleet_tables(rng: random.Random, names: list[str], *, shared: bool) -> tuple[Any, Any]:
    fleets = [FLEET_HEAD] + [[n, *(_cell(rng, k) for k in ("tp", "pp", "replicas", "util", "kv", "wd", "engine",
                                                           "mfu"))] for n in names]
    specs = [SPEC_HEAD] + [[n, _cell(rng, "model"), _cell(rng, "gpu")] for n in names]
    if shared:
        return SharedRows(fleets), SharedRows(specs)
    return fleets, specs


def _number(rng: random.Random, other: bool = True) -> Any:
    return rng.choice(FREE_OTHER) if other and rng.random() < 0.08 else rng.choice(NUMBERS)


def _long(name: str, *raw: Any) -> tuple[str, str]:
    return _outcome(plan._call, name, *raw)


def test_call_row_answers_as_call_for_fleet_rows() -> None:
    """KV_FIT, PREFIX_KV_FIT and COMPUTE_UTILIZATION through _call_row against _call, rows of every kind of cell
    (errors, texts, blanks, TRUE) and free numbers of every kind, each row asked several times (kept)."""
    rng = random.Random(20)
    answered = 0
    for _ in range(120):
        names = ["f1", "f2", "f3"]
        fleets, specs = _fleet_tables(rng, names, shared=True)
        for _ in range(8):
            fleet = rng.choice(names)
            try:
                f = plan._fleet(fleet, fleets, specs)
            except PlannerError:
                continue
            q, lat, ctx, h = _number(rng), _number(rng), _number(rng), _number(rng)
            raw = (f["model"], f["gpu"], q, lat, ctx, f["replicas"], f["tp"], f["gpu_memory_utilization"],
                   f["kv_dtype"], f["engine"], f["weight_dtype"], f["pp"])
            got = _outcome(plan._call_row, "FLEET_KV_FIT", f, "KV_FIT", raw, (2, 3, 4))
            assert got == _long("KV_FIT", *raw), raw
            answered += not got[0].startswith("raised")
            raw = (f["model"], f["gpu"], q, ctx, f["tp"], f["gpu_memory_utilization"], f["kv_dtype"], f["engine"],
                   f["weight_dtype"], f["pp"])
            assert _outcome(plan._call_row, "FLEET_PREFIX_KV_FIT", f, "PREFIX_KV_FIT", raw, (2, 3)) == _long(
                "PREFIX_KV_FIT", *raw), raw
            raw = (f["model"], f["gpu"], q, lat, ctx, f["replicas"], f["tp"], h, f["mfu"], f["weight_dtype"],
                   f["pp"])
            assert _outcome(plan._call_row, "FLEET_COMPUTE_UTILIZATION", f, "COMPUTE_UTILIZATION", raw,
                            (2, 3, 4, 7)) == _long("COMPUTE_UTILIZATION", *raw), raw
    assert answered > 50


def test_call_row_answers_as_call_for_provider_rows() -> None:
    rng = random.Random(21)
    prices = (3, 0.3, 15, 0, None, "", "#N/A", "3.75", -1, 1e-3, True)
    limits = (1000, 400000, 0, None, "#N/A", "5e5", 2.5)
    for _ in range(150):
        providers = SharedRows([PROV_HEAD] + [[n, rng.choice((1, 2, 3.0, None, 0, "#N/A")),
                                               rng.choice(("key", "organization", "", None, "nope", 5)),
                                               rng.choice((None, 1, 60)),
                                               *[rng.choice(limits) for _ in range(6)],
                                               *[rng.choice(prices) for _ in range(4)]] for n in ("p", "q")])
        for _ in range(6):
            p = plan._provider(rng.choice(("p", "q")), providers)
            raw = (_number(rng), _number(rng), _number(rng), _number(rng), _number(rng), p["usd_per_mtok_input"],
                   p["usd_per_mtok_cached_input"], p["usd_per_mtok_cache_write"], p["usd_per_mtok_output"])
            assert _outcome(plan._call_row, "PROVIDER_API_COST_MONTHLY", p, "API_COST_MONTHLY", raw,
                            (0, 1, 2, 3, 4)) == _long("API_COST_MONTHLY", *raw), raw
            key = rng.choice(("rpm", "tpm", "itpm"))
            raw = (_number(rng), p[key], p["keys"], p["scope"])
            assert _outcome(plan._call_row, plan._LIMIT_SITES[key], p, "LIMIT_UTILIZATION", raw, (0,)) == _long(
                "LIMIT_UTILIZATION", *raw), raw


def test_plan_functions_with_shared_and_plain_tables() -> None:
    """The fleet and provider functions on shared rows (kept) answer as on plain lists (read each time)."""
    rng = random.Random(22)
    for _ in range(60):
        seed = rng.random()
        shared = _fleet_tables(random.Random(seed), ["a", "b"], shared=True)
        plain = _fleet_tables(random.Random(seed), ["a", "b"], shared=False)
        for _ in range(5):
            fleet = rng.choice(("a", "b", "c"))
            q, lat, ctx = rng.choice(NUMBERS), rng.choice(NUMBERS), rng.choice(NUMBERS)
            p, n = rng.choice((0, 1, 4096, 2.5)), rng.choice((0, 1, 3))
            for fn, args in ((plan.FLEET_KV_FIT, (q, lat, ctx, p, n)), (plan.FLEET_PREFIX_KV_FIT, (p, n)),
                             (plan.FLEET_COMPUTE_UTILIZATION, (q, lat, ctx, rng.choice((0.0, 0.5, 1))))):
                assert _outcome(fn, fleet, *shared, *args) == _outcome(fn, fleet, *plain, *args)


def test_fleet_and_provider_rows_kept_per_table_and_name() -> None:
    one = [FLEET_HEAD, ["a", 1, 1, 2, 0.9, "auto", "auto", "vllm", 0.4], ["b", 2, 1, 2, 0.9, "auto", "auto", "vllm",
                                                                          0.4]]
    two = [FLEET_HEAD, ["a", 4, 1, 2, 0.9, "auto", "auto", "vllm", 0.4]]
    specs = SharedRows([SPEC_HEAD, ["a", "llama-3.1-8b", "h100-sxm"], ["b", "llama-3.1-8b", "h100-sxm"]])
    t1, t2 = SharedRows(one), SharedRows(two)
    assert plan._fleet("a", t1, specs)["tp"] == 1
    assert plan._fleet("b", t1, specs)["tp"] == 2
    assert plan._fleet("a", t2, specs)["tp"] == 4
    assert plan._fleet("a", t1, specs) is plan._fleet("a", t1, specs)
    # names equal in value, not in type, find different rows (find_row reads the name's text)
    t3 = SharedRows([FLEET_HEAD, ["1", 1, 1, 2, 0.9, "auto", "auto", "vllm", 0.4],
                     ["1.0", 8, 1, 2, 0.9, "auto", "auto", "vllm", 0.4]])
    s3 = SharedRows([SPEC_HEAD, ["1", "llama-3.1-8b", "h100-sxm"], ["1.0", "llama-3.1-8b", "h100-sxm"]])
    assert [plan._fleet(n, t3, s3)["tp"] for n in (1, 1.0, 1, 1.0)] == [1, 8, 1, 8]
    p3 = SharedRows([PROV_HEAD, ["1", 1, "key", None, 600, 400000, None, None, None, None, 3, 0.3, 3.75, 15],
                     ["1.0", 2, "key", None, 600, 400000, None, None, None, None, 3, 0.3, 3.75, 15]])
    assert [plan._provider(n, p3)["keys"] for n in (1, 1.0, 1, 1.0)] == [1, 2, 1, 2]
    specs2 = SharedRows([SPEC_HEAD, ["a", "llama-3.1-70b", "h100-sxm"]])
    assert plan._fleet("a", t1, specs2)["model"] == "llama-3.1-70b"
    # the KV fits of two fleets one TP apart, asked in turn: each its own (templates keyed on the row)
    for t, tp in ((t1, 1), (t2, 4), (t1, 1)):
        want = plan._call("KV_FIT", "llama-3.1-8b", "h100-sxm", 10, 2, 4096, 2, tp, 0.9, "auto", "vllm", "auto", 1)
        assert plan.FLEET_KV_FIT("a", t, specs if t is t1 else specs, 10, 2, 4096) == want
    prov = [PROV_HEAD, ["p", 1, "key", None, 600, 400000, None, None, None, None, 3, 0.3, 3.75, 15],
            ["q", 1, "key", None, 600, 400000, None, None, None, None, 5, 0.5, 6, 25]]
    p1 = SharedRows(prov)
    p2 = SharedRows([PROV_HEAD, ["p", 2, "key", None, 600, 800000, None, None, None, None, 1, 0.1, 1, 2]])
    for table, name in ((p1, "p"), (p1, "q"), (p2, "p"), (p1, "p")):
        row = next(r for r in (table[1:]) if r[0] == name)
        assert plan.PROVIDER_API_COST_MONTHLY(name, table, 1, 1000, 100) == plan._call(
            "API_COST_MONTHLY", 1, 1000, 100, 0.0, 0.0, row[10], row[11], row[12], row[13])
        assert plan.PROVIDER_LIMIT_UTILIZATION(name, table, "tpm", 100000) == plan._call(
            "LIMIT_UTILIZATION", 100000, row[5], row[1], row[2])
    assert plan._provider("p", p1) is plan._provider("p", p1)


def test_kept_tables_are_bounded() -> None:
    specs = SharedRows([SPEC_HEAD, ["a", "llama-3.1-8b", "h100-sxm"]])
    for _ in range(plan.ROWS_KEPT + 5):
        t = SharedRows([FLEET_HEAD, ["a", 1, 1, 2, 0.9, "auto", "auto", "vllm", 0.4]])
        plan.FLEET_KV_FIT("a", t, specs, 1, 1, 100)
        p = SharedRows([PROV_HEAD, ["p", 1, "key", None, 600, 400000, None, None, None, None, 3, 0.3, 3.75, 15]])
        plan.PROVIDER_API_COST_MONTHLY("p", p, 1, 1000, 100)
    assert len(plan._FLEETS) <= plan.ROWS_KEPT and len(plan._PROVIDERS) <= plan.ROWS_KEPT
    assert len(plan._TEMPLATES) <= plan.ROWS_KEPT
    for i in range(sm.BUDGET_CACHE_SIZE + 3):
        sm._replica_kv("llama-3.1-8b", "h100-sxm", context_tokens=100, gpu_memory_utilization=0.5 + i / 10_000)
    assert len(sm._BUDGETS) <= sm.BUDGET_CACHE_SIZE
    assert math.isfinite(len(sm._NAMED))


def test_prefix_fits_kept_per_row_and_numbers() -> None:
    """The kept prefix shares: two fleets one TP apart, prefixes one token or one type apart, asked in turn."""
    fleets = SharedRows([FLEET_HEAD, ["a", 1, 1, 2, 0.9, "auto", "auto", "vllm", 0.4],
                         ["b", 2, 1, 2, 0.9, "auto", "auto", "vllm", 0.4]])
    specs = SharedRows([SPEC_HEAD, ["a", "llama-3.1-8b", "h100-sxm"], ["b", "llama-3.1-8b", "h100-sxm"]])
    rng = random.Random(9)
    asked = [(rng.choice("ab"), rng.choice((4096, 4097, 4096.5, 512, 2.0**60)), rng.choice((1, 2, 2.5, 10)))
             for _ in range(200)]
    for fleet, p, n in asked:
        tp = 1 if fleet == "a" else 2
        want = _long("PREFIX_KV_FIT", "llama-3.1-8b", "h100-sxm", p, n, tp, 0.9, "auto", "vllm", "auto", 1)
        assert _outcome(plan.FLEET_PREFIX_KV_FIT, fleet, fleets, specs, p, n) == want
        assert _outcome(plan._prefix_kv_fit, plan._fleet(fleet, fleets, specs), p, n) == want
    assert 0 < len(plan._PREFIX_FITS) <= 2 * 5 * 4
    # a refusal is not kept; zero and non-numbers are not kept
    for p, n in ((-1, 1), (0, 1), (4096, 0), (-0.0, 1), ("4096", 1)):
        want = _long("PREFIX_KV_FIT", "llama-3.1-8b", "h100-sxm", p, n, 1, 0.9, "auto", "vllm", "auto", 1)
        assert _outcome(plan.FLEET_PREFIX_KV_FIT, "a", fleets, specs, p, n) == want
        assert not any(k[2] == p and type(k[2]) is type(p) and k[4] == n for k in plan._PREFIX_FITS)
