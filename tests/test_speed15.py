"""Session 19 (speed15): FLEET_OPTION's search skips candidates by a bound from each one's setup, so its answers
must stay those of sizing every candidate; each test here fails if a bound is not one or a cache answers another
candidate's question.

- :func:`planner.serving.step.step_floor_s` below every step :func:`~planner.serving.step.step_time_s` gives
  (replicas over the step's branches, random steps, each rule switched);
- :func:`planner.serving.schedule.rate_bound` above every valid steady state's rate (and what the solvers find);
- :func:`planner.serving.api.decode_rate_bound` above :func:`~planner.serving.api.disaggregated_pools`' decode rate;
- :func:`planner.serving.options._search` with ``top`` against the full search on random inputs: the ``top``
  cheapest and the cheapest on the kept GPU the same;
- :func:`planner.serving.options._candidate_setup` keyed on every argument of the setup; the pools from the kept
  setup as :func:`~planner.serving.api.disaggregated_pools` gives them.
"""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

import pytest

from planner.catalog import get_gpu, get_model
from planner.catalog import gpus as all_gpus
from planner.errors import PlannerError
from planner.serving import api, options, step
from planner.serving import schedule as sch
from planner.serving.api import load_calibration
from planner.serving.calibration import DERIVED


def _replicas() -> list[tuple[step.Replica, Any]]:
    """Replicas over the step's branches: dense, MoE and MLA models; one GPU and tensor, pipeline, expert and
    attention data parallelism; vLLM, V0, SGLang and TensorRT-LLM (its PyTorch backend's overlap); 8- and 4-bit
    weights (GPTQ's ExLlama path); CUDA-graph padding; eager steps; two calibrations."""
    out = []
    shapes = [  # model, gpu, tp, pp, ep, dp, engine, weight dtype, extra
        ("llama-3.1-8b", "h100-sxm", 1, 1, 1, 1, "vllm", "auto", {}),
        ("llama-3.1-8b", "a100-80gb", 1, 1, 1, 1, "vllm-v0", "int4", {"quantization": "gptq"}),
        ("llama-3.1-8b", "l40s", 2, 1, 1, 1, "vllm", "fp8", {"checkpoint_recipe": "llm-compressor"}),
        ("llama-3.1-70b", "h100-sxm", 4, 2, 1, 1, "sglang", "fp8", {}),
        ("llama-3.1-70b", "h100-pcie", 2, 1, 1, 1, "vllm", "auto", {"enforce_eager": True}),
        ("llama-3.1-70b", "rtx-4090", 4, 1, 1, 1, "vllm", "fp8", {"host_staged": True}),
        ("qwen3-30b-a3b", "h100-sxm", 2, 1, 2, 1, "vllm", "auto", {}),
        ("qwen3-30b-a3b", "h100-sxm", 8, 1, 1, 8, "trtllm", "fp8",
         {"eager_prefill": True, "graph_sizes": (1, 8, 64, 256)}),
        ("mixtral-8x7b", "a100-80gb-sxm", 2, 1, 1, 1, "sglang", "auto", {}),
        ("deepseek-v3", "h200", 8, 1, 1, 8, "trtllm", "fp8", {"graph_sizes": (1, 4, 32)}),
        ("deepseek-v3", "h200", 8, 1, 1, 1, "sglang", "fp8", {}),
    ]
    for cal, (model, gpu, tp, pp, ep, dp, engine, wd, extra) in itertools.product((DERIVED, load_calibration(None)),
                                                                                   shapes):
        try:
            r = step.build_replica(get_model(model), get_gpu(gpu), tp=tp, pp=pp, ep=ep, dp=dp, weight_dtype=wd,
                                   context_tokens=1500.0, input_tokens=1000.0, cached_tokens=200.0, engine=engine,
                                   calibration=cal, **extra)
        except PlannerError:
            continue
        out.append((r, cal))
    return out


_RULES = ("ATTENTION_DP_HOST_PER_RANK", "LAYER_ACT_TRAFFIC", "LAYER_ACT_PROMPT_ONLY", "MOE_LAUNCH_BY_LAYER",
          "COMM_UNDER_LAUNCH_FLOOR")


@pytest.mark.parametrize("flip", [None, *_RULES])
def test_step_floor_is_below_every_step(monkeypatch: pytest.MonkeyPatch, flip: str | None) -> None:
    """Every replica, fixed and random steps (decode only, prompt only, mixed), under the rules as they are and with
    each one switched: the floor at the step's decoding sequences is at most the step's time."""
    if flip is not None:
        monkeypatch.setattr(step, flip, not getattr(step, flip))
    replicas = _replicas()
    assert len(replicas) >= 18
    rng = random.Random(15)
    steps = [(d, p) for d in (0.0, 0.4, 1.0, 7.0, 64.0, 300.0, 3001.0) for p in (0.0, 1.0, 37.0, 2048.0, 8192.0)]
    steps += [(rng.choice((0.0, rng.uniform(0, 2), rng.uniform(0, 4096))), rng.choice((0.0, rng.uniform(0, 16384))))
              for _ in range(60)]
    n = 0
    for (r, cal), (d, p) in itertools.product(replicas, steps):
        if d + p <= 0:
            continue
        t = step.step_time_s(r, cal, decode_seqs=d, prefill_tokens=p, prefill_seqs=p / 700.0)
        floor = step.step_floor_s(r, cal, decode_seqs=d)
        assert 0 < floor <= t, (r.engine, r.tp, d, p, floor, t)
        n += 1
    assert n > 1500


def test_step_floor_gives_no_bound_for_a_negative_overhead() -> None:
    """A calibration with a negative overhead could make a step shorter than its body: no bound (0)."""
    import dataclasses

    r, cal = _replicas()[0]
    assert step.step_floor_s(r, cal, decode_seqs=4.0) > 0
    assert step.step_floor_s(dataclasses.replace(r, fixed_s=-1e-3), cal, decode_seqs=4.0) == 0.0
    assert step.step_floor_s(r, dataclasses.replace(cal, allreduce_latency_s=-1e-6), decode_seqs=4.0) == 0.0


def _loads() -> list[sch.Load]:
    """Loads over the replicas: each engine's schedule (mixed, prefill-only, whole prompts), KV-limited and
    sequence-limited running caps, short and long outputs, open and closed loops."""
    out = []
    rng = random.Random(19)
    for r, cal in _replicas():
        engine = r.engine
        sched = sch.engine_schedule(engine, gpu_big=True, gpu_gib=79.6, max_position=131072,
                                    async_scheduling=engine == "vllm")
        for _ in range(3):
            out.append(sch.Load(replica=r, calibration=cal, schedule=sched,
                                input_tokens=rng.choice((1.0, 150.0, 1000.0, 6000.0)),
                                output_tokens=rng.choice((1.0, 2.0, 60.0, 900.0)),
                                max_running=rng.choice((0.5, 3.0, 40.0, 1024.0)),
                                others=rng.choice((1.0, 0.75, 0.0))))
    return out


def test_rate_bound_is_above_every_valid_state() -> None:
    """Every valid state over a grid of decode batches, and what max_throughput and an open loop find, runs at most
    rate_bound requests/s (a finite bound)."""
    checked = 0
    for load in _loads():
        bound = sch.rate_bound(load)
        assert bound > 0 and math.isfinite(bound)
        top = sch.upper_batch(load)
        for f in (1e-4, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 1.0):
            st = sch.state(load, d=top * f)
            if st.valid:
                assert st.requests_per_s <= bound, (load.replica.engine, top * f, st.requests_per_s, bound)
                checked += 1
        peak = sch.max_throughput(load)
        if peak.valid:
            assert peak.requests_per_s <= bound
        st = sch.open_loop(load, rate=0.5 * peak.requests_per_s, peak=peak)
        if st is not None and st.valid:
            assert st.requests_per_s <= bound
    assert checked > 200


def test_rate_bound_without_a_share_in_range_is_no_bound() -> None:
    import dataclasses

    load = _loads()[0]
    assert sch.rate_bound(dataclasses.replace(load, others=1.5)) == math.inf
    assert sch.rate_bound(dataclasses.replace(load, max_running=0.0)) == 0.0


_MODELS = ("llama-3.1-8b", "llama-3.1-70b", "qwen3-30b-a3b", "mixtral-8x7b", "qwen3-235b-a22b")
_CARDS = tuple(g for g in all_gpus() if g.usd_per_gpu_hour)


def test_decode_rate_bound_is_above_the_decode_pool() -> None:
    """disaggregated_pools' decode rate per replica, over random models, GPUs, TP, dtypes, mixes, engines and TPOT
    SLOs, is at most decode_rate_bound of the same setup."""
    rng = random.Random(12)
    checked = 0
    for _ in range(120):
        model, card = get_model(rng.choice(_MODELS)), rng.choice(_CARDS)
        tp, wd, kd = rng.choice((1, 2, 4, 8)), rng.choice(("auto", "fp8")), rng.choice(("auto", "fp8"))
        i, o, hit = rng.uniform(50, 8000), rng.choice((2.0, rng.uniform(2, 1500))), rng.choice((0.0, 0.5))
        engine = rng.choice(("vllm", "sglang", "trtllm"))
        args = dict(engine=engine, engine_version=None, weight_dtype=wd, kv_cache_dtype=kd, input_tokens=i,
                    output_tokens=o, cache_hit_rate=hit, max_num_batched_tokens=None, max_num_seqs=None,
                    calibration=None)
        try:
            s = api._setup(model, card, tp=tp, pp=1, **args)
            pools = api.disaggregated_pools(model, card, request_rate=1.0, ttft_slo_s=rng.uniform(0.5, 20),
                                            tpot_slo_s=rng.uniform(0.01, 0.3), input_tokens=i, output_tokens=o,
                                            prefill_tp=tp, decode_tp=tp, engine=engine, weight_dtype=wd,
                                            kv_cache_dtype=kd, cache_hit_rate=hit)
        except PlannerError:
            continue
        assert pools.decode_rate_per_replica <= api.decode_rate_bound(s.load, output_tokens=o)
        checked += 1
    assert checked > 40


def _random_search(rng: random.Random) -> tuple[str, dict[str, Any], str]:
    model = rng.choice(_MODELS)
    cards = tuple(rng.sample(_CARDS, rng.randint(2, len(_CARDS))))
    slo = rng.random()
    rates = (rng.uniform(0.05, 3), rng.uniform(3, 300), rng.uniform(300, 3000))
    args = dict(request_rate=0.0 if rng.random() < 0.05 else rng.choice(rates),
                ttft_slo_s=0.0 if slo < 0.2 else rng.choice((0.3, 1.0, 2.0, 8.0)),
                tpot_slo_s=0.0 if slo < 0.2 else rng.choice((0.015, 0.03, 0.1, 0.4)),
                input_tokens=rng.uniform(50, 6000), output_tokens=rng.choice((1.0, 2.0, rng.uniform(2, 1500))),
                cache_hit_rate=rng.choice((0.0, rng.uniform(0, 0.9))), engine=rng.choice(("vllm", "sglang", "trtllm")),
                gpus=cards)
    return model, args, rng.choice(cards).name


@pytest.mark.parametrize("seed", range(8))
def test_the_search_gives_the_full_searchs_cheapest(seed: int) -> None:
    """Random searches (models, priced GPU subsets, rates from 0 to thousands, SLOs or none, mixes, engines): with
    ``top`` and a kept GPU, the ``top`` cheapest and the cheapest on that GPU are those of sizing every candidate,
    field for field; and the search sizes fewer candidates than the full one when it has more than ``top``."""
    rng = random.Random(1000 + seed)
    for _ in range(5):
        model, args, keep = _random_search(rng)
        every = options.fleet_choices(model, **args)
        top = rng.choice((1, 3, 5))
        pruned = options.fleet_choices(model, **args, top=top, keep_gpu=keep)
        assert pruned[:top] == every[:top], (model, args, keep, top)
        assert (next((c for c in pruned if c.gpu == keep), None)
                == next((c for c in every if c.gpu == keep), None)), (model, args, keep)
        assert len(pruned) >= min(top, len(every))
        assert set(pruned) <= set(every)


def test_the_search_answers_as_the_full_one_for_the_sample_plans_fleets() -> None:
    """The searches the sample plans' Options sheets make (Llama-3.1-70B on the catalog's priced GPUs, a low rate
    within 2 s TTFT and 100 ms TPOT, its own GPU kept): the same three cheapest and the same cheapest on each GPU."""
    args = dict(request_rate=1.34, ttft_slo_s=2.0, tpot_slo_s=0.1, input_tokens=2652.5, output_tokens=924.6,
                cache_hit_rate=0.61)
    every = options.fleet_choices("llama-3.1-70b", **args)
    for keep in ("h100-sxm", "h200-sxm", "a100-80gb-sxm", "l40s"):
        pruned = options.fleet_choices("llama-3.1-70b", **args, top=3, keep_gpu=keep)
        assert pruned[:3] == every[:3]
        assert next(c for c in pruned if c.gpu == keep) == next(c for c in every if c.gpu == keep)
        assert len(pruned) < len(every) // 2  # it prunes


_SETUP_ARGS = dict(spec=get_model("llama-3.1-70b"), card=get_gpu("h100-sxm"), tp=2, pp=1, wd="fp8", kd="auto",
                   i=2500.0, o=900.0, hit=0.5, engine="vllm", cal=load_calibration(None))
_OTHER = dict(spec=get_model("llama-3.1-8b"), card=get_gpu("h200-sxm"), tp=4, pp=2, wd="auto", kd="fp8", i=2400.0,
              o=800.0, hit=0.25, engine="sglang", cal=DERIVED)


@pytest.mark.parametrize("field", list(_SETUP_ARGS))
def test_the_setup_cache_is_keyed_on_every_argument(field: str) -> None:
    """Two candidates one argument apart, asked one after the other: each gets its own setup, as _setup gives it."""
    options._candidate_setup.cache_clear()
    for kw in (_SETUP_ARGS, {**_SETUP_ARGS, field: _OTHER[field]}):
        got = options._candidate_setup(*kw.values())
        want = api._setup(kw["spec"], kw["card"], tp=kw["tp"], pp=kw["pp"], engine=kw["engine"], engine_version=None,
                          weight_dtype=kw["wd"], kv_cache_dtype=kw["kd"], input_tokens=kw["i"], output_tokens=kw["o"],
                          cache_hit_rate=kw["hit"], max_num_batched_tokens=None, max_num_seqs=None,
                          calibration=kw["cal"])
        assert got == want, field


def test_a_refused_setup_is_none_and_the_candidate_left_out() -> None:
    """Llama-3.1-70B in 16 bits on one 40 GB A100: the setup refuses it (None), and so does the aggregated rate."""
    a = dict(_SETUP_ARGS, card=get_gpu("a100-40gb-sxm"), tp=1, wd="auto")
    assert options._candidate_setup(*a.values()) is None
    assert options._aggregated_rate(a["spec"], a["card"], 1, 1, "auto", "auto", 2500.0, 900.0, 0.5, 2.0, 0.1, "vllm",
                                    False, a["cal"]) is None


@pytest.mark.parametrize("card,tp,kd,ttft,tpot", [("h100-sxm", 1, "auto", 2.0, 0.1), ("h100-sxm", 2, "fp8", 0.5, 0.03),
                                                   ("a100-80gb-sxm", 4, "auto", 8.0, 0.4),
                                                   ("l40s", 2, "fp8", 0.05, 0.1)])
def test_the_pools_from_the_kept_setup_are_disaggregated_pools(card: str, tp: int, kd: str, ttft: float,
                                                               tpot: float) -> None:
    """The search's pools (from the candidate's kept setup) as disaggregated_pools gives them, or None where it
    raises (a TTFT below one prompt's prefill)."""
    spec, cal = get_model("llama-3.1-8b"), load_calibration(None)
    options._pool_rates.cache_clear()
    got = options._pool_rates(spec, get_gpu(card), tp, "fp8", kd, 3000.0, 400.0, 0.2, ttft, tpot, "vllm", cal)
    try:
        p = api.disaggregated_pools(spec, get_gpu(card), request_rate=1.0, ttft_slo_s=ttft, tpot_slo_s=tpot,
                                    input_tokens=3000.0, output_tokens=400.0, prefill_tp=tp, decode_tp=tp,
                                    weight_dtype="fp8", kv_cache_dtype=kd, cache_hit_rate=0.2, calibration=cal)
    except PlannerError:
        assert got is None
        return
    assert got is not None
    assert (got.prefill_rate, got.decode_rate, got.kv_transfer_bytes_per_request) == (
        p.prefill_rate_per_replica, p.decode_rate_per_replica, p.kv_transfer_bytes_per_s)


def test_the_room_is_the_setups_whatever_the_mix() -> None:
    """A candidate's room (sequence cap and KV tokens per virtual engine, step floor at no decoding sequence), read
    once from a one-token setup, is that of its setup for random request mixes; a refused setup has no room."""
    rng = random.Random(7)
    checked = 0
    for _ in range(150):
        spec, card = get_model(rng.choice(_MODELS)), rng.choice(_CARDS)
        tp, pp = rng.choice(((1, 1), (2, 1), (4, 1), (8, 1), (8, 2)))
        wd, kd, engine = rng.choice(("auto", "fp8")), rng.choice(("auto", "fp8")), rng.choice(("vllm", "sglang",
                                                                                              "trtllm", "vllm-v0"))
        cal = rng.choice((DERIVED, load_calibration(None)))
        room = options._candidate_room(spec, card, tp, pp, wd, kd, engine, cal)
        i, o, hit = rng.uniform(1, 30000), rng.uniform(1, 3000), rng.choice((0.0, rng.uniform(0, 0.95)))
        try:
            s = api._setup(spec, card, tp=tp, pp=pp, engine=engine, engine_version=None, weight_dtype=wd,
                           kv_cache_dtype=kd, input_tokens=i, output_tokens=o, cache_hit_rate=hit,
                           max_num_batched_tokens=None, max_num_seqs=None, calibration=cal)
        except PlannerError:
            assert room is None
            continue
        assert room == (s.load.schedule.max_num_seqs / pp, s.load.kv_tokens,
                        step.step_floor_s(s.load.replica, cal, decode_seqs=0.0))
        assert s.load.max_running <= min(room[0], room[1] / (i + o))
        checked += 1
    assert checked > 50


@pytest.mark.parametrize("seed", range(3))
def test_the_rooms_bound_is_below_the_setups(seed: int) -> None:
    """The GPUs a candidate needs at least, from its room before the setup, are at most those from its setup."""
    rng = random.Random(50 + seed)
    checked = 0
    for _ in range(80):
        spec, card = get_model(rng.choice(_MODELS)), rng.choice(_CARDS)
        tp, pp = rng.choice(((1, 1), (2, 1), (4, 1), (8, 1), (8, 2)))
        wd, kd, engine = rng.choice(("auto", "fp8")), rng.choice(("auto", "fp8")), rng.choice(("vllm", "sglang"))
        cal = load_calibration(None)
        i, o, hit = rng.uniform(1, 8000), rng.uniform(1, 2000), rng.choice((0.0, 0.5))
        rate, pools = rng.uniform(0.01, 500), pp == 1 and rng.random() < 0.7
        room = options._candidate_room(spec, card, tp, pp, wd, kd, engine, cal)
        s = options._candidate_setup(spec, card, tp, pp, wd, kd, i, o, hit, engine, cal)
        if room is None or s is None:
            assert room is None and s is None
            continue
        early = options._gpus_at_least_room(room, rate=rate, i=i, o=o, tp=tp, pp=pp, pools=pools)
        assert early <= options._gpus_at_least(s, rate=rate, tp=tp, pp=pp, pools=pools)
        checked += 1
    assert checked > 30


def _clear_search_caches() -> None:
    for f in (options._search, options._search_shared, options._aggregated_rate, options._pool_rates,
              options._candidate_setup, options._candidate_room):
        f.cache_clear()


def test_a_search_is_the_same_whichever_search_ran_before() -> None:
    """Searches that differ only in the kept GPU share their first part (memoised): each one's whole list, past its
    exact part too, is the one it gives alone, whatever was searched before it."""
    args = dict(request_rate=1.34, ttft_slo_s=2.0, tpot_slo_s=0.1, input_tokens=2652.5, output_tokens=924.6,
                cache_hit_rate=0.61)
    keeps = ("h100-sxm", "h200-sxm", "l40s", "a100-80gb-sxm")
    alone = {}
    for keep in keeps:
        _clear_search_caches()
        alone[keep] = options.fleet_choices("llama-3.1-70b", **args, top=3, keep_gpu=keep)
    _clear_search_caches()
    for keep in keeps + keeps[::-1]:
        options._search.cache_clear()  # asked again, not answered from the search's own cache
        assert options.fleet_choices("llama-3.1-70b", **args, top=3, keep_gpu=keep) == alone[keep], keep
