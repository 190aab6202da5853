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

from planner import coerce
from planner.catalog import get_gpu, get_model, gpus
from planner.coerce import SharedRows
from planner.forecast import month as fmonth
from planner.serving import api, options, step
from planner.serving import schedule as sch
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
from planner.sheet import options as sheet_options


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


# ---- the fleet options search: the same candidates in the same order, the same sizes, the same answers ----

def _order_before(spec: Any, cards: tuple, shapes: tuple, rate: float, i: float, o: float, hit: float) -> list:
    """:func:`planner.serving.options._search_args`' order before session 22 (one bound per candidate)."""
    return sorted((options._lower_bound_gpus(spec, card, tp, pp, rate, i, o, hit) * (card.usd_per_gpu_hour or 0.0), n,
                   m) for n, card in enumerate(cards) if (card.usd_per_gpu_hour or 0) > 0
                  for m, (tp, pp, wd, kd) in enumerate(shapes))


_MODELS = ("llama-3.1-8b", "llama-3.1-70b", "qwen3-30b-a3b", "mixtral-8x7b")


def _random_cards(rng: random.Random) -> tuple:
    cards = [c for c in gpus() if c.usd_per_gpu_hour]
    picked = rng.sample(cards, rng.randint(1, len(cards)))
    if rng.random() < 0.3:  # an unpriced card, and a card listed twice
        picked.append(dataclasses.replace(picked[0], usd_per_gpu_hour=None))
        picked.insert(0, picked[-2])
    return tuple(picked)


def test_search_order_is_the_order_before() -> None:
    rng = random.Random(2601)
    for _ in range(150):
        spec, cards = get_model(rng.choice(_MODELS)), _random_cards(rng)
        rate = rng.choice([0.0, 0.05, 1.34, 40.0, 3000.0])
        i, o, hit = rng.uniform(1, 9000), rng.choice([1.0, 2.0, rng.uniform(2, 4000)]), rng.choice([0.0, 0.61, 1.0])
        tps = tuple(rng.sample((1, 2, 4, 8), rng.randint(1, 4)))
        args, order = options._search_args(spec, cards, rate, 1.0, 0.05, i, o, hit, "vllm", False, True, tps,
                                           ((8, 2),), ("auto", "fp8"), ("auto",), DERIVED)
        assert order == _order_before(spec, cards, args.shapes, rate, i, o, hit)
        assert [type(x) for c in order for x in c] == [type(x) for c in _order_before(
            spec, cards, args.shapes, rate, i, o, hit) for x in c]


def _aggregated_before(s: Any, *, ttft_slo_s: float, tpot_slo_s: float, throughput: bool) -> tuple[float, str]:
    """:func:`planner.serving.options._aggregated` before session 22 (its solves without a memo)."""
    peak = sch.max_throughput(s.load)
    if throughput:
        return (peak.requests_per_s * s.pp, options._peak_binding(s, peak)) if peak.valid else (0.0, "")

    def meets(st: State) -> bool:
        return st.ttft_s <= ttft_slo_s and st.tpot_s <= tpot_slo_s

    if peak.valid and meets(peak):
        return peak.requests_per_s * s.pp, options._peak_binding(s, peak)
    best = sch._bisect(s.load, meets, peak.decode_batch)
    if not (best.valid and meets(best)):
        return 0.0, ""
    binding = "TTFT" if best.ttft_s / ttft_slo_s >= best.tpot_s / tpot_slo_s else "TPOT"
    return best.requests_per_s * s.pp, binding


def test_aggregated_rate_is_the_rate_before() -> None:
    rng = random.Random(2602)
    slo_bound = 0
    for _ in range(120):
        s = api.setup_simple(rng.choice(_MODELS), rng.choice(["h100-sxm", "a100-80gb-sxm", "l40s", "h200-sxm"]),
                             tp=rng.choice([1, 2, 4, 8]), pp=1, engine=rng.choice(["vllm", "sglang", "trtllm"]),
                             weight_dtype=rng.choice(["auto", "fp8"]), kv_cache_dtype="auto",
                             input_tokens=rng.uniform(50, 6000), output_tokens=rng.choice([2.0, rng.uniform(2, 1500)]),
                             cache_hit_rate=rng.choice([0.0, 0.5]), calibration=None, or_none=True)
        if s is None:
            continue
        kw = dict(ttft_slo_s=rng.choice([0.05, 0.3, 1.0, 8.0]), tpot_slo_s=rng.choice([0.01, 0.03, 0.1, 0.4]),
                  throughput=rng.random() < 0.2)
        got = options._aggregated(s, **kw)
        assert _shown(got) == _shown(_aggregated_before(s, **kw))
        slo_bound += got[1] in ("TTFT", "TPOT")
    assert slo_bound > 10


_SETUP_BASE = dict(spec=get_model("llama-3.1-70b"), card=get_gpu("h100-sxm"), tp=4, pp=1, wd="auto", kd="auto",
                   i=2500.0, o=900.0, hit=0.5, engine="vllm", cal=DERIVED)
_SETUP_OTHER = dict(spec=get_model("llama-3.1-8b"), card=get_gpu("h200-sxm"), tp=2, pp=2, wd="fp8", kd="fp8",
                    i=2400.0, o=800.0, hit=0.25, engine="sglang", cal=api.load_calibration(None))


@pytest.mark.parametrize("field", list(_SETUP_BASE))
def test_identity_fronts_keyed_on_every_argument(field: str) -> None:
    """Two candidates one argument apart, asked one after the other and again: each gets its cache's answer."""
    room_args = ("spec", "card", "tp", "pp", "wd", "kd", "engine", "cal")
    for kw in (_SETUP_BASE, {**_SETUP_BASE, field: _SETUP_OTHER[field]}) * 2:
        assert options._setup_kept(*kw.values()) is options._candidate_setup(*kw.values()), field
        room = [kw[k] for k in room_args]
        assert options._room_kept(*room) is options._candidate_room(*room), field


def test_identity_fronts_answer_as_their_caches() -> None:
    rng = random.Random(2603)
    cal = api.load_calibration(None)
    for _ in range(60):
        spec, card = get_model(rng.choice(_MODELS)), rng.choice([c for c in gpus() if c.usd_per_gpu_hour])
        tp, wd = rng.choice([1, 2, 4, 8]), rng.choice(["auto", "fp8"])
        i, o, hit = rng.choice([100.0, 2652.5]), rng.choice([2.0, 924.6]), rng.choice([0.0, 0.61])
        for kd in ("auto", "fp8", "auto"):
            assert options._room_kept(spec, card, tp, 1, wd, kd, "vllm", cal) is options._candidate_room(
                spec, card, tp, 1, wd, kd, "vllm", cal)
            assert options._setup_kept(spec, card, tp, 1, wd, kd, i, o, hit, "vllm", cal) is options._candidate_setup(
                spec, card, tp, 1, wd, kd, i, o, hit, "vllm", cal)
    # an equal model that is another object: its own entry, the same answer
    spec = get_model("llama-3.1-8b")
    twin = dataclasses.replace(spec)
    card = get_gpu("h100-sxm")
    a = options._setup_kept(spec, card, 1, 1, "auto", "auto", 1000.0, 200.0, 0.0, "vllm", cal)
    b = options._setup_kept(twin, card, 1, 1, "auto", "auto", 1000.0, 200.0, 0.0, "vllm", cal)
    assert a == b and options._SETUPS[(id(twin), id(card), 1, 1, "auto", "auto", 1000.0, 200.0, 0.0, "vllm",
                                      id(cal))][0] is twin
    # each argument of the key
    other = options._setup_kept(spec, card, 1, 1, "auto", "fp8", 1000.0, 200.0, 0.0, "vllm", cal)
    assert other == api.setup_simple(spec, card, tp=1, pp=1, engine="vllm", weight_dtype="auto", kv_cache_dtype="fp8",
                                     input_tokens=1000.0, output_tokens=200.0, cache_hit_rate=0.0, calibration=cal)
    assert other != a
    # the caches' cache_clear empties the fronts
    options._candidate_setup.cache_clear()
    options._candidate_room.cache_clear()
    options._search.cache_clear()
    assert not options._SETUPS and not options._ROOMS and not options._SEARCHES


def test_fleet_choices_through_the_front_are_the_searchs() -> None:
    rng = random.Random(2604)
    cards = tuple(c for c in gpus() if c.usd_per_gpu_hour)
    for _ in range(6):
        args = dict(request_rate=rng.choice([0.5, 1.34, 30.0]), ttft_slo_s=rng.choice([0.0, 2.0]),
                    tpot_slo_s=rng.choice([0.0, 0.1]), input_tokens=rng.uniform(100, 4000),
                    output_tokens=rng.uniform(2, 900), cache_hit_rate=rng.choice([0.0, 0.5]))
        keep = rng.choice(cards)
        first = options.fleet_choices("llama-3.1-70b", **args, gpus=cards, top=3, keep_gpu=keep)
        again = options.fleet_choices("llama-3.1-70b", **args, gpus=tuple(cards), top=3, keep_gpu=keep)
        other = options.fleet_choices("llama-3.1-70b", **args, gpus=cards, top=5, keep_gpu=keep)
        options._search.cache_clear()
        assert again is first and first == options.fleet_choices("llama-3.1-70b", **args, gpus=cards, top=3,
                                                                 keep_gpu=keep)
        assert other[:3] == first[:3]


_SEARCH_BASE = dict(spec=get_model("llama-3.1-70b"), cards=tuple(get_gpu(g) for g in ("h100-sxm", "l40s", "h200-sxm")),
                    rate=1.34, ttft=2.0, tpot=0.1, i=2652.5, o=924.6, hit=0.61, engine="vllm", throughput=False,
                    disaggregation=True, tps=(1, 2, 4, 8), pps=((8, 2),), wds=("auto", "fp8"), kds=("auto", "fp8"),
                    cal=api.load_calibration(None), top=3, keep="h100-sxm")
_SEARCH_OTHER = dict(spec=get_model("llama-3.1-8b"), cards=tuple(get_gpu(g) for g in ("h100-sxm", "a100-80gb-sxm")),
                     rate=30.0, ttft=0.5, tpot=0.03, i=900.0, o=200.0, hit=0.2, engine="sglang", throughput=True,
                     disaggregation=False, tps=(1, 2), pps=(), wds=("auto",), kds=("fp8",), cal=DERIVED, top=5,
                     keep="l40s")


@pytest.mark.parametrize("field", list(_SEARCH_BASE))
def test_search_front_keyed_on_every_argument(field: str) -> None:
    for kw in (_SEARCH_BASE, {**_SEARCH_BASE, field: _SEARCH_OTHER[field]}) * 2:
        assert options._search_kept(*kw.values()) is options._search(*kw.values()), field


# ---- the sheet: FLEET_OPTION's GPUs, _call_row's numbers, a month's backends ----

def _priced_before(cards: tuple, name: Any) -> str | None:
    key = str(name).strip().lower()
    found = [c.name for c in cards if key in (c.name.lower(), c.display_name.lower())]
    return found[0] if found else None


def test_gpu_names_found_as_before() -> None:
    rng = random.Random(2605)
    for _ in range(200):
        cards = _random_cards(rng)
        if rng.random() < 0.3:  # a card whose display name is another card's name
            cards = (dataclasses.replace(cards[-1], display_name=cards[0].name.upper()), *cards)
        if rng.random() < 0.5:  # two cards of one display name
            cards = (*cards, dataclasses.replace(cards[-1], name=cards[-1].name + "-b",
                                                 display_name=cards[0].display_name.upper()))
        cards = tuple(c for c in cards if c.usd_per_gpu_hour)
        names = sheet_options._names(cards)
        for c in cards:
            for asked in (c.name, c.display_name, f"  {c.name.upper()} ", c.display_name.lower() + "x",
                          f" {cards[0].display_name.upper()}"):
                assert names.get(str(asked).strip().lower()) == _priced_before(cards, asked)


def test_cards_named_kept_by_the_block_itself() -> None:
    head = ["GPU [name]"]
    block = SharedRows([head, ["h100-sxm"], ["l40s"]])
    cards, names = sheet_options._cards_named(block)
    assert [c.name for c in cards] == [c.name for c in sheet_options._cards(tuple(tuple(r) for r in block))]
    assert sheet_options._cards_named(block)[0] is cards
    other = SharedRows([head, ["a100-80gb-sxm"]])
    assert [c.name for c in sheet_options._cards_named(other)[0]] == ["a100-80gb-sxm"]
    plain = [head, ["h100-sxm"]]  # not shared rows: read each time
    assert [c.name for c in sheet_options._cards_named(plain)[0]] == ["h100-sxm"]
    assert id(plain) not in sheet_options._CARDS_BY_ID


def test_option_token_kept_per_choice() -> None:
    choices = options.fleet_choices("llama-3.1-8b", request_rate=5.0, ttft_slo_s=1.0, tpot_slo_s=0.05,
                                    input_tokens=1000, output_tokens=200, gpus=("h100-sxm", "l40s"))
    for c in choices:
        assert sheet_options.option_token(c) == sheet_options._option_token(c)
        assert sheet_options.option_token(dataclasses.replace(c, gpus=c.gpus + 1)) == sheet_options._option_token(
            dataclasses.replace(c, gpus=c.gpus + 1))


def test_call_row_numbers_as_coerce_gives_them() -> None:
    rng = random.Random(2606)
    values = [0, 1, -3, 2**60, 0.0, -0.0, 1.0, 3.0, -7.0, 2.5, 1e-300, 2.0**53, 2.0**53 - 1, -(2.0**53), 1e300,
              math.nan, math.inf, -math.inf] + [rng.uniform(-1e6, 1e6) for _ in range(200)] + [
              float(rng.randint(-10**6, 10**6)) for _ in range(200)]
    for v in values:
        inline = int(v) if type(v) is float and v.is_integer() and abs(v) < 2**53 else v
        assert _shown(inline) == _shown(coerce._number(v)), v


def _backend_before(month: Any, name: str) -> Any:
    key = name.strip().lower()
    for b in month.backends:
        if b.name.strip().lower() == key:
            return b
    return None


def test_month_backend_by_name_as_before() -> None:
    rng = random.Random(2607)
    for _ in range(200):
        names = [rng.choice(["a", "A", " a ", "gpu-1", "GPU-1 ", "api", "x"]) + rng.choice(["", "", "2"])
                 for _ in range(rng.randint(0, 8))]
        month = fmonth.Month(max_util=0.5, binding="", route="", action="none", action_usd=0.0, util_after=0.5,
                             backends=tuple(fmonth.BackendMonth(name=n, max_util=k / 10, binding="KV", action="none",
                                                                action_usd=0.0) for k, n in enumerate(names)))
        for asked in ["a", " A", "gpu-1", "api2", "x", "none", "A2 "]:
            assert month.backend(asked) is _backend_before(month, asked)
    assert len(fmonth._BY_NAME) <= fmonth.BY_NAME_KEPT


def _option_field_before(option_token: Any, field: Any) -> Any:
    """OPTION_FIELD's body before session 22 (a scan of the token's parts on every call)."""
    from planner.errors import ArgumentError

    if field not in sheet_options.FIELDS:
        raise ArgumentError("field", field, "one of " + ", ".join(sheet_options.FIELDS))
    for part in str(option_token).split("|"):
        key, sep, value = part.partition("=")
        if sep and key == field:
            if field in ("gpu", "weight_dtype", "kv_cache_dtype", "mode", "binding"):
                return value
            try:
                return float(value)
            except ValueError:
                raise ArgumentError("option_token", option_token, "an option token as FLEET_OPTION writes it"
                                    ) from None
    raise ArgumentError("option_token", option_token, f"an option token with {field}= (as FLEET_OPTION writes it)")


def _raised(f: Any, *args: Any) -> Any:
    try:
        return _shown(f(*args))
    except Exception as e:  # noqa: BLE001  (any refusal, compared by type and text)
        return "raised", type(e).__name__, str(e)


def test_option_field_as_before() -> None:
    rng = random.Random(2608)
    fields = list(sheet_options.FIELDS) + ["nope", "GPU", "", " gpu", "binding "]
    values = ["h100-sxm", "2", "2.5", "", "x", "1e309", "nan", "-0", "a=b", " 3 ", " a100 "]
    for _ in range(3000):
        parts = [f"{rng.choice(fields)}{rng.choice(['=', '=', '', '=='])}{rng.choice(values)}"
                 for _ in range(rng.randint(0, 6))]
        token: Any = "|".join(parts) if rng.random() < 0.95 else rng.choice([None, 3.5, 7])
        for _ in range(2):  # the second from the kept parts
            field = rng.choice(fields)
            assert _raised(sheet_options.OPTION_FIELD, token, field) == _raised(_option_field_before, token, field)
    assert len(sheet_options._FIELDS_OF) <= sheet_options.FIELDS_OF_KEPT
