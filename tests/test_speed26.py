"""Session 22 (speed26): the serving model's steady states and step times worked out with each load's and replica's
constants read once, so every float must stay the one the long path gives; each test here fails if a shortcut
forms one operation otherwise.

- :func:`planner.serving.step.step_timer` against :func:`planner.serving.step.step_time_s` on random replicas
  (real models and GPUs, fields then changed at random: eager flags, attention efficiency, overheads, data-parallel
  groups, experts, CUDA graphs, overlaps) and random calibrations, at random steps (ints, floats, zeros, negative
  totals, NaN and infinities), with rule L on and off;
- :func:`planner.serving.schedule.state` (through its kept solver) against the body it had before, kept here
  (:func:`_state_before`), on random loads (mixed and prefill-only engines, whole prompts, async scheduling, closed
  loops, tiny and huge budgets) and batches, compared by type and ``repr`` of every field.
"""

from __future__ import annotations

import dataclasses
import math
import random
from typing import Any

import pytest

from planner.catalog import get_gpu, get_model
from planner.serving import schedule as sch
from planner.serving import step
from planner.serving.calibration import DERIVED, Calibration
from planner.serving.schedule import (
    DEFERRED_FIRST_TOKEN,
    Load,
    State,
    engine_schedule,
    first_token_delay_s,
    whole_prompt_room,
)
from planner.serving.step import build_replica, step_time_s


def _shown(x: Any) -> Any:
    """A value as its type and ``repr`` (a state: each field's), so NaN equals NaN and 1 differs from 1.0."""
    if hasattr(x, "__dict__"):
        return type(x).__name__, {k: (type(v).__name__, repr(v)) for k, v in vars(x).items()}
    return type(x).__name__, repr(x)


def _outcome(f: Any, *args: Any, **kw: Any) -> Any:
    """``f``'s answer shown (:func:`_shown`), or the type and text of what it raised."""
    try:
        return _shown(f(*args, **kw))
    except (ArithmeticError, ValueError) as e:
        return "raised", type(e).__name__, str(e)


def _state_before(load: Load, *, d: float) -> State:
    """:func:`planner.serving.schedule.state`'s body before session 22, as it was (the reference)."""
    r, cal, sched = load.replica, load.calibration, load.schedule
    iu, o1 = load.input_tokens, max(load.output_tokens - 1.0, 1e-3)
    mixed, others = sched.mixed, load.others
    t_d = step_time_s(r, cal, decode_seqs=max(d, 1.0)) if d > 0 else 0.0
    room = sched.budget_tokens - (d if mixed else 0.0)
    if room <= 0:
        return State(decode_batch=d, requests_per_s=0.0, tpot_s=math.inf, ttft_s=math.inf, ttft_service_s=math.inf,
                     prefill_share=1.0, decode_step_s=t_d, mixed_step_s=math.inf, running=d, valid=False)
    p_m = min(room, iu)
    p_top = whole_prompt_room(room, prompt_tokens=iu, dp=r.dp) if sched.whole_prompts else room
    x = 0.0
    t_m = tau = t_d
    for _ in range(3):
        t_m = step_time_s(r, cal, decode_seqs=d if mixed else 0.0, prefill_tokens=p_m, prefill_seqs=p_m / iu)
        extra = t_m - t_d if mixed else t_m
        tau = t_d + others * d * iu * extra / (o1 * p_m)
        if mixed and d * iu / (o1 * p_m) > 1.0:
            tau = max(tau, t_m)
        x = d / (o1 * tau) if tau > 0 else 0.0
        grown = min(p_top, max(iu, x * iu * t_m))
        if abs(grown - p_m) <= 1e-6 * p_m:
            break
        p_m = grown
    rho = x * iu * t_m / p_m
    service = math.ceil(iu / room - 1e-9) * t_m
    valid = rho < 1.0 and d <= load.max_running
    if valid:
        wait = load.others * rho * (t_m * iu / p_m) / (2.0 * (1.0 - rho))
        in_flight = 1.5 if sched.async_scheduling else 0.5
        ttft = (load.replica.ttft_fixed_s + load.others * in_flight * t_d * min(d, 1.0) + wait + service
                + first_token_delay_s(r, decode_seqs=load.others * d + 1.0))
    else:
        ttft = math.inf
    running = d + x * service
    return State(decode_batch=d, requests_per_s=x, tpot_s=tau, ttft_s=ttft, ttft_service_s=service,
                 prefill_share=min(rho, 1.0), decode_step_s=t_d, mixed_step_s=t_m, running=running, valid=valid)


SHAPES = [  # model, gpu, tp, pp, engine, weight dtype
    ("llama-3.1-8b", "h100-sxm", 1, 1, "vllm", "auto"),
    ("llama-3.1-8b", "a100-80gb", 1, 1, "vllm-v0", "auto"),
    ("llama-3.1-70b", "h100-sxm", 4, 1, "vllm", "auto"),
    ("llama-3.1-70b", "h200-sxm", 2, 1, "vllm", "fp8"),
    ("llama-3.1-70b", "h100-sxm", 2, 2, "sglang", "fp8"),
    ("llama-3.1-70b", "h100-sxm", 8, 1, "trtllm", "fp8"),
    ("llama-3.1-70b", "l40s", 4, 1, "vllm", "auto"),
    ("qwen3-30b-a3b", "h100-sxm", 2, 1, "vllm", "auto"),
    ("mixtral-8x7b", "a100-80gb-sxm", 2, 1, "sglang", "auto"),
]


def _random_calibration(rng: random.Random) -> Calibration:
    if rng.random() < 0.3:
        return DERIVED
    floats = [f.name for f in dataclasses.fields(Calibration) if isinstance(getattr(DERIVED, f.name), float)]
    return dataclasses.replace(DERIVED, **{n: getattr(DERIVED, n) * rng.choice([0.01, 0.3, 0.77, 1.0, 1.9, 40.0])
                                           for n in rng.sample(floats, rng.randint(1, len(floats)))})


def _random_replica(rng: random.Random, cal: Calibration) -> step.Replica:
    model, gpu, tp, pp, engine, wd = rng.choice(SHAPES)
    r = build_replica(get_model(model), get_gpu(gpu), tp=tp, pp=pp, weight_dtype=wd, engine=engine,
                      context_tokens=rng.choice([10.0, 1024.0, 3000.5]), input_tokens=rng.choice([5.0, 900.0]),
                      calibration=cal)
    changes: dict[str, Any] = {}
    if rng.random() < 0.5:  # the fields the fast form reads, moved
        changes.update(eager=rng.random() < 0.3, eager_prefill=rng.random() < 0.5,
                       attn_eff=rng.choice([None, 0.35, 0.9]), fixed_s=rng.choice([0.0, 4e-4, 2e-3]),
                       seq_s=rng.choice([0.0, 1e-5, 7e-5]), ttft_fixed_s=rng.choice([0.0, 0.02]),
                       link_is_pcie=rng.random() < 0.3, vendor_eff=rng.choice([1.0, 0.7]),
                       pp=rng.choice([r.pp, 1, 2, 4]), ep=rng.choice([r.ep, 1, 2]), tp=rng.choice([r.tp, 1, 2, 8]))
    if rng.random() < 0.3:  # the fields that send it the long way
        pick = rng.choice(["dp", "graph_sizes", "overlap_seq", "overlap_host", "dequant_bytes", "moe_act_bytes",
                           "layer_act_passes", "moe_comm_layers"])
        changes[pick] = {"dp": 2, "graph_sizes": (1, 2, 4, 8, 16, 64, 256), "overlap_seq": True,
                         "overlap_host": True, "dequant_bytes": 3e8, "moe_act_bytes": 4096.0,
                         "layer_act_passes": ((8192.0, 3), (2048.0, 2)), "moe_comm_layers": 12}[pick]
    return dataclasses.replace(r, **changes) if changes else r


NUMBERS = [0, 0.0, 1, 1.0, 0.37, 2.5, 3, 17.0, 64, 255.9, 1000, 4096.0, 8191.5, 1e6, -1.0, -0.0]


def _number(rng: random.Random) -> Any:
    x = rng.random()
    if x < 0.5:
        return rng.choice(NUMBERS)
    if x < 0.95:
        return rng.uniform(0.0, 3000.0)
    return rng.choice([math.nan, math.inf, -math.inf])


@pytest.mark.parametrize("rule_l", [False, True])
def test_step_timer_is_step_time(rule_l: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(step, "COMM_UNDER_LAUNCH_FLOOR", rule_l)
    rng = random.Random(2612 + rule_l)
    fast = 0
    for _ in range(300):
        cal = _random_calibration(rng)
        r = _random_replica(rng, cal)
        t = step.step_timer(r, cal)
        fast += t.__name__ == "fast"
        for _ in range(25):
            d, p = _number(rng), _number(rng)
            n_p = p / rng.choice([1.0, 300.0, 7.5]) if rng.random() < 0.8 else _number(rng)
            assert _outcome(t, d, p, n_p) == _outcome(step_time_s, r, cal, decode_seqs=d, prefill_tokens=p,
                                                      prefill_seqs=n_p), (r, cal, d, p, n_p)
    assert 100 < fast < 290  # both forms exercised


def _random_load(rng: random.Random) -> Load:
    cal = _random_calibration(rng)
    r = _random_replica(rng, cal)
    engine = rng.choice(["vllm", "vllm-v0", "sglang", "trtllm", r.engine])
    r = dataclasses.replace(r, engine=engine) if rng.random() < 0.5 else r
    sched = engine_schedule(engine, gpu_big=rng.random() < 0.7, gpu_gib=79.6,
                            max_position=rng.choice([None, 8192, 131072]),
                            max_num_batched_tokens=rng.choice([None, None, 16, 512, 2048]),
                            chunked_prefill=rng.choice([None, True, False]),
                            async_scheduling=rng.random() < 0.5)
    if rng.random() < 0.3:
        sched = dataclasses.replace(sched, whole_prompts=not sched.whole_prompts, mixed=rng.random() < 0.5)
    return Load(replica=r, calibration=cal, schedule=sched,
                input_tokens=rng.choice([1, 1.0, 3.0, 50, 600.0, 2562.05, 9000.0, 30000.0]),
                output_tokens=rng.choice([1, 1.0, 1.5, 2.0, 200, 903.2, 4000.0]),
                max_running=rng.choice([0.5, 6.0, 64, 256.0, 1024.0]),
                others=rng.choice([1.0, 1.0, 0.0, 0.5, 0.875]),
                kv_tokens=rng.choice([None, 1e5]))


def test_state_is_the_body_before() -> None:
    rng = random.Random(26)
    loads = [_random_load(rng) for _ in range(400)]
    asked = [(load, d) for load in loads for d in [_number(rng) for _ in range(12)]
             + [sch.upper_batch(load), sch.upper_batch(load) * 0.5, 1e-6]]
    rng.shuffle(asked)  # solvers built, kept, dropped and built again in any order
    valid = 0
    for load, d in asked:
        got = _outcome(sch.state, load, d=d)
        assert got == _outcome(_state_before, load, d=d), (load, d)
        valid += got[0] == "State" and got[1]["valid"][1] == "True"
    assert valid > 1000
    assert len(sch._SOLVERS) <= sch.SOLVERS_KEPT


def test_state_solvers_keyed_by_the_load_itself() -> None:
    rng = random.Random(7)
    a = _random_load(rng)
    b = dataclasses.replace(a, input_tokens=a.input_tokens * 3 + 1)
    for load in (a, b, a, b):
        assert _shown(sch.state(load, d=5.0)) == _shown(_state_before(load, d=5.0))
    sch._SOLVERS[id(b)] = (a, sch._SOLVERS[id(a)][1])  # another load at b's id: not b's solver
    assert _shown(sch.state(b, d=5.0)) == _shown(_state_before(b, d=5.0))
    assert sch._SOLVERS[id(b)][0] is b


def test_solvers_bounded() -> None:
    rng = random.Random(8)
    for _ in range(3 * sch.SOLVERS_KEPT):
        sch.state(_random_load(rng), d=2.0)
        assert len(sch._SOLVERS) <= sch.SOLVERS_KEPT


def test_deferred_first_token_engines_exercised() -> None:
    rng = random.Random(9)
    seen = set()
    for _ in range(200):
        load = _random_load(rng)
        st = sch.state(load, d=3.0)
        assert _shown(st) == _shown(_state_before(load, d=3.0))
        if st.valid:
            seen.add(load.replica.engine in DEFERRED_FIRST_TOKEN)
    assert seen == {True, False}
