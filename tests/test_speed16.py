"""Session 20 (speed16): the serving model's sheet functions keep each replica setup and share its steady states
between the solves of one setup, so every answer must stay the one the library gives afresh; each test here fails
if a memo answers another load's question or a kept setup another call's.

- :func:`planner.serving.schedule.solved` and the solvers with a memo (:func:`~planner.serving.schedule._bisect`,
  :func:`~planner.serving.schedule.max_throughput`, :func:`~planner.serving.schedule.open_loop`): the same states,
  field for field, as without one, over random loads asked one after another through one memo;
- :func:`planner.sheet.serving._setup_kept` (through ``_perf_kept`` and ``_rate``): keyed on every argument of the
  setup, a TP or PP of ``4.0`` and ``4`` one setup, anything else typed; the sheet functions against
  :func:`planner.serving.api.performance` and :func:`~planner.serving.api.max_rate_at_slo` on random inputs;
- a refusal is not kept (raised again, renamed as before).
"""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from planner.catalog import get_gpu, get_model
from planner.errors import ArgumentError, PlannerError
from planner.serving import api
from planner.serving import schedule as sch
from planner.sheet import serving as ss


def _shown(x: Any) -> Any:
    """A state or result as its type and fields' ``repr`` (NaN equal to NaN)."""
    if x is None or not hasattr(x, "__dict__"):
        return type(x).__name__, repr(x)
    return type(x).__name__, {k: repr(v) for k, v in vars(x).items()}


def _clear() -> None:
    ss._perf_kept.cache_clear()
    ss._setup_kept.cache_clear()


SHAPES = [  # model, gpu, tp, pp, engine, weight dtype, kv dtype
    ("llama-3.1-8b", "h100-sxm", 1, 1, "vllm", "auto", "auto"),
    ("llama-3.1-8b", "a100-80gb", 1, 1, "vllm-v0", "auto", "auto"),
    ("llama-3.1-70b", "h100-sxm", 4, 1, "vllm", "auto", "bf16"),
    ("llama-3.1-70b", "h200-sxm", 4, 1, "vllm", "auto", "fp8"),
    ("llama-3.1-70b", "h100-sxm", 2, 2, "sglang", "fp8", "auto"),
    ("llama-3.1-70b", "h100-sxm", 4, 1, "trtllm", "fp8", "auto"),
    ("qwen3-30b-a3b", "h100-sxm", 2, 1, "vllm", "auto", "auto"),
    ("mixtral-8x7b", "a100-80gb-sxm", 2, 1, "sglang", "auto", "auto"),
]


def _random_setup(rng: random.Random) -> tuple[api._Setup, float, float]:
    while True:
        model, gpu, tp, pp, engine, wd, kd = rng.choice(SHAPES)
        i, o = rng.choice([1.0, 3.0, 50.0, 600.0, 2562.05, 9000.0]), rng.choice([1.0, 2.0, 5.0, 200.0, 903.2, 4000.0])
        try:
            s = api._setup(model, gpu, tp=tp, pp=pp, engine=engine, engine_version=None, weight_dtype=wd,
                           kv_cache_dtype=kd, input_tokens=i, output_tokens=o,
                           cache_hit_rate=rng.choice([0.0, 0.3, 0.95]), max_num_batched_tokens=None,
                           max_num_seqs=None, calibration=None)
        except PlannerError:
            continue
        return s, i, o


@pytest.mark.parametrize("seed", range(8))
def test_solves_through_one_memo_are_the_solves_afresh(seed: int) -> None:
    """One memo per load, asked in turn for open loops at several rates (light to saturated), the offline maximum
    and an SLO bisection: every answer equals the memo-less solver's, field for field."""
    rng = random.Random(seed)
    for _ in range(6):
        s, _i, _o = _random_setup(rng)
        load = s.load
        memo: dict[float, sch.State] = {}
        peak = sch.max_throughput(load)
        rates = [peak.requests_per_s * f for f in (0.01, 0.3, 0.9, 0.999, 1.0, 1.5)] + [rng.uniform(0, 50)]
        rng.shuffle(rates)
        for rate in rates:
            if rate <= 0:
                continue
            assert _shown(sch.open_loop(load, rate=rate, memo=memo)) == _shown(sch.open_loop(load, rate=rate))
        assert _shown(sch.max_throughput(load, memo=memo)) == _shown(peak)
        assert sch.max_throughput(load, memo=memo) is sch.max_throughput(load, memo=memo)  # the kept states

        def meets(st: sch.State, t: float = peak.tpot_s * 1.1) -> bool:
            return st.tpot_s <= t

        assert (_shown(sch._bisect(load, meets, peak.decode_batch, memo=memo))
                == _shown(sch._bisect(load, meets, peak.decode_batch)))
        assert len(memo) <= sch.MEMO_STATES


def test_a_memo_is_emptied_when_full_and_an_int_batch_not_kept() -> None:
    s, _i, _o = _random_setup(random.Random(1))
    memo: dict[float, sch.State] = {}
    for k in range(sch.MEMO_STATES + 5):
        assert _shown(sch.solved(s.load, d=0.5 + k, memo=memo)) == _shown(sch.state(s.load, d=0.5 + k))
    assert 0 < len(memo) <= sch.MEMO_STATES
    sch.solved(s.load, d=3.0, memo=memo)
    got = sch.solved(s.load, d=3, memo=memo)  # an int: computed with the int (its decode_batch shown as 3), not kept
    assert repr(got.decode_batch) == "3" and memo[3.0].decode_batch.__class__ is float


def _sheet_perf(model: str, gpu: str, tp: Any, pp: Any, engine: str, wd: str, kd: str, i: float, o: float,
                rate: float, hit: float) -> Any:
    return ss._perf(model, gpu, tp, i, o, 0, rate, engine, wd, kd, hit, pp, "")


def _library_perf(model: str, gpu: str, tp: Any, pp: Any, engine: str, wd: str, kd: str, i: float, o: float,
                  rate: float, hit: float) -> Any:
    return api.performance(model, gpu, tp=tp, pp=pp, engine=engine, weight_dtype=wd, kv_cache_dtype=kd,
                           input_tokens=i, output_tokens=o, request_rate=rate or None, cache_hit_rate=hit)


def _library_rate(model: str, gpu: str, tp: Any, pp: Any, engine: str, wd: str, kd: str, i: float, o: float,
                  ttft: float, tpot: float, hit: float) -> float:
    return api.max_rate_at_slo(model, gpu, ttft_slo_s=ttft or math.inf, tpot_slo_s=tpot or math.inf,
                               input_tokens=i, output_tokens=o, tp=tp, pp=pp, engine=engine, weight_dtype=wd,
                               kv_cache_dtype=kd, cache_hit_rate=hit)


def _outcome(call: Any, *args: Any) -> Any:
    try:
        return _shown(call(*args))
    except PlannerError as exc:
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("seed", range(6))
def test_the_sheets_answers_are_the_librarys_on_random_inputs(seed: int) -> None:
    """Calls of one fleet at mixes a tornado's bar ends give (input, output, hit rate scaled 0.8 and 1.2), at rates
    and offline, and the SLO rate, in a random order with the caches kept between them: each equals the library's
    call afresh (a saturated rate's refusal included)."""
    rng = random.Random(100 + seed)
    _clear()
    calls = []
    for model, gpu, tp, pp, engine, wd, kd in rng.sample(SHAPES, 3):
        i, o, h = rng.uniform(100, 5000), rng.uniform(2, 1500), rng.uniform(0, 0.8)
        for fi, fo, fh in [(1, 1, 1), (0.8, 1, 1), (1.2, 1, 1), (1, 0.8, 1), (1, 1.2, 1), (1, 1, 0.8), (1, 1, 1.2)]:
            for rate in (0.0, rng.uniform(0.01, 2.0), rng.uniform(0.01, 40.0)):
                calls.append((model, gpu, rng.choice([tp, float(tp)]), rng.choice([pp, float(pp)]), engine, wd, kd,
                              i * fi, o * fo, rate, min(h * fh, 0.99)))
    rng.shuffle(calls)
    for args in calls:
        got = _outcome(_sheet_perf, *args)
        rate = args[9]
        want = _outcome(_library_perf, *args)
        if want[0] != "ArgumentError" and rate and want[1]["saturated"] == "True":  # the sheet refuses
            assert got[0] == "ArgumentError" and "saturated" in got[1], args
        else:
            assert got == want, args
        model, gpu, tp, pp, engine, wd, kd, i, o, _rate, hit = args
        for ttft, tpot in ((0.5, 0.05), (5.0, 0.0), (0.0, 0.2)):
            sheet = _outcome(ss.MAX_RATE_AT_SLO, model, gpu, tp, i, o, ttft, tpot, kd, hit, engine, wd, pp)
            lib = _outcome(_library_rate, model, gpu, tp, pp, engine, wd, kd, i, o, ttft, tpot, hit)
            assert sheet == lib, (args, ttft, tpot)


def _rate_call(**kw: Any) -> Any:
    return api.max_rate_at_slo(kw["model"], kw["gpu"], ttft_slo_s=kw.get("ttft", 0.5), tpot_slo_s=0.05,
                               input_tokens=kw["i"], output_tokens=kw["o"], tp=kw["tp"], pp=kw["pp"],
                               engine=kw["engine"], weight_dtype=kw["wd"], kv_cache_dtype=kw["kd"],
                               cache_hit_rate=kw["hit"])


BASE = dict(model="llama-3.1-70b", gpu="h100-sxm", tp=4, pp=1, engine="vllm", wd="auto", kd="auto", i=2000.0,
            o=300.0, hit=0.2)
VARIANTS = {"model": "llama-3.1-8b", "gpu": "h200-sxm", "tp": 8, "pp": 2, "engine": "sglang", "wd": "fp8",
            "kd": "fp8", "i": 2000.5, "o": 300.5, "hit": 0.2000001}


@pytest.mark.parametrize("field", sorted(VARIANTS))
def test_the_kept_setup_is_keyed_on_every_argument(field: str) -> None:
    """Two calls that differ in one argument of the setup, the second right after the first (its setup and states
    kept): each gets what the library gives afresh, and the two differ."""
    other = {**BASE, field: VARIANTS[field]}
    _clear()
    answers = []
    for kw in (BASE, other):
        args = (kw["model"], kw["gpu"], kw["tp"], kw["pp"], kw["engine"], kw["wd"], kw["kd"], kw["i"], kw["o"])
        sheet = (_shown(_sheet_perf(*args, 0.5, kw["hit"])),
                 ss.MAX_RATE_AT_SLO(kw["model"], kw["gpu"], kw["tp"], kw["i"], kw["o"], 0.5, 0.05, kw["kd"],
                                    kw["hit"], kw["engine"], kw["wd"], kw["pp"]))
        lib = (_shown(_library_perf(*args, 0.5, kw["hit"])), _rate_call(**kw))
        assert sheet == lib
        answers.append(sheet)
    assert answers[0] != answers[1]


def test_a_whole_float_tp_shares_the_setup_and_anything_else_is_typed() -> None:
    _clear()
    a = _sheet_perf("llama-3.1-70b", "h100-sxm", 4, 1, "vllm", "auto", "auto", 2000.0, 300.0, 0.5, 0.2)
    b = _sheet_perf("llama-3.1-70b", "h100-sxm", 4.0, 1.0, "vllm", "auto", "auto", 2000.0, 300.0, 0.5, 0.2)
    assert ss._setup_kept.cache_info().currsize == 1 and _shown(a) == _shown(b)
    assert ss._setup_key({"tp": 4.0, "pp": 1.0}) == ss._setup_key({"tp": 4, "pp": 1})
    assert ss._setup_key({"tp": 2.0 ** 60, "pp": 1}) != ss._setup_key({"tp": 2 ** 60, "pp": 1})
    for odd in (4.5, True, 0.0, -4.0, "4"):
        assert ss._setup_key({"tp": odd, "pp": 1}) != ss._setup_key({"tp": 4, "pp": 1})
        with pytest.raises(ArgumentError) as sheet:
            _sheet_perf("llama-3.1-70b", "h100-sxm", odd, 1, "vllm", "auto", "auto", 2000.0, 300.0, 0.5, 0.2)
        with pytest.raises(ArgumentError) as lib:
            _library_perf("llama-3.1-70b", "h100-sxm", odd, 1, "vllm", "auto", "auto", 2000.0, 300.0, 0.5, 0.2)
        assert str(sheet.value) == str(lib.value)


def test_a_refused_setup_is_not_kept_and_is_refused_as_before() -> None:
    """Refusals of the setup (no room for a KV cache, no input token, a hit rate of 1) and of an SLO (checked
    before the setup, as the library does): the sheet's error is the library's, renamed as before (``kv_dtype``),
    each time, and nothing is kept."""
    from planner.sheet.memory import _kv_dtype

    _clear()
    bad = [dict(kd="fp3"), dict(i=0.0), dict(hit=1.0)]
    for _ in range(2):
        for change in bad:
            kw = {**BASE, **change}
            args = (kw["model"], kw["gpu"], kw["tp"], kw["pp"], kw["engine"], kw["wd"], kw["kd"], kw["i"], kw["o"],
                    0.5, kw["hit"])
            with pytest.raises(ArgumentError) as sheet:
                _sheet_perf(*args)
            with pytest.raises(ArgumentError) as lib:
                _kv_dtype(_library_perf, *args)
            assert (sheet.value.argument, str(sheet.value)) == (lib.value.argument, str(lib.value))
            with pytest.raises(ArgumentError) as sheet:
                ss.MAX_RATE_AT_SLO(kw["model"], kw["gpu"], kw["tp"], kw["i"], kw["o"], 0.5, 0.05, kw["kd"],
                                   kw["hit"], kw["engine"], kw["wd"], kw["pp"])
            with pytest.raises(ArgumentError) as lib:
                _kv_dtype(_rate_call, **kw)
            assert (sheet.value.argument, str(sheet.value)) == (lib.value.argument, str(lib.value))
        with pytest.raises(ArgumentError) as exc:
            ss.MAX_RATE_AT_SLO("llama-3.1-70b", "h100-sxm", 4, 0.0, 300.0, -1.0, 0.05)
        assert exc.value.argument == "ttft_slo_s"
    assert ss._setup_kept.cache_info().currsize == 0 and ss._perf_kept.cache_info().currsize == 0


def test_the_setup_cache_is_bounded() -> None:
    _clear()
    for k in range(ss.SETUP_CACHE_SIZE + 3):
        ss.MAX_RATE_AT_SLO("llama-3.1-8b", "h100-sxm", 1, 1000.0 + k, 200.0, 0.5, 0.05)
    assert ss._setup_kept.cache_info().currsize == ss.SETUP_CACHE_SIZE
    assert get_model("llama-3.1-8b") and get_gpu("h100-sxm")


def _setup_outcome(call: Any, model: Any, gpu: Any, **kw: Any) -> Any:
    try:
        s = call(model, gpu, **kw)
    except PlannerError as exc:
        return type(exc).__name__, getattr(exc, "argument", None), str(exc)
    return s, repr(s)


def _long_setup(model: Any, gpu: Any, **kw: Any) -> api._Setup:
    return api._setup(model, gpu, engine_version=None, max_num_batched_tokens=None, max_num_seqs=None, **kw)


FLEETS = SHAPES + [
    ("llama-3.1-70b", "l4", 1, 1, "vllm", "auto", "auto"),  # no room: refused
    ("llama-3.1-8b", "h100-sxm", 1, 1, "vllm", "fp3", "auto"),  # a weight dtype refused
    ("llama-3.1-8b", "h100-sxm", 1, 1, "vllm", "auto", "fp3"),  # a KV dtype refused
    ("llama-3.1-8b", "h100-sxm", 3, 1, "vllm", "auto", "auto"),
    ("llama-3.1-8b", "h100-sxm", 1.5, 1, "vllm", "auto", "auto"),
    ("llama-3.1-8b", "h100-sxm", 2.0, 1.0, "vllm", "bf16", "fp16"),
    ("llama-3.1-8b", "h100-sxm", 1, 1, "tgi", "auto", "auto"),
    ("deepseek-v3", "h200-sxm", 8, 1, "sglang", "fp8", "auto"),
    ("llama-3.1-8b", "nope", 1, 1, "vllm", "auto", "auto"),
]
MIXES = [(1000.0, 200.0, 0.0), (9000.0, 500.0, 0.2), (8000.0, 800.0, 0.0), (2562.05, 903.2, 0.4386), (1.0, 1.0, 0.0),
         (0.0, 100.0, 0.0), (100.0, 0.5, 0.0), (100.0, 100.0, 1.0), (100.0, 100.0, -0.1), (5000, 10, 0.5),
         (3000.0, 2.0, 0.99)]


@pytest.mark.parametrize("seed", range(4))
def test_setup_simple_is_setup_on_random_fleets_and_mixes(seed: int) -> None:
    """The kept fleet's setups (vLLM V0 past its CUDA-graph length: the eager replica; refused fleets and mixes;
    a calibration given as an object, as None and as a mapping) against ``_setup``'s, one after another in a random
    order with every cache kept: the same setup, field for field, or the same refusal."""
    from planner.serving.calibration import DERIVED

    rng = random.Random(200 + seed)
    api._fleet_kept.cache_clear()
    calls = [(f, m, cal) for f in FLEETS for m in MIXES for cal in (None, DERIVED)]
    calls += [(f, MIXES[0], {"kv_bw_eff": 0.5}) for f in FLEETS[:3]]
    rng.shuffle(calls)
    for (model, gpu, tp, pp, engine, wd, kd), (i, o, h), cal in calls:
        kw = dict(tp=tp, pp=pp, engine=engine, weight_dtype=wd, kv_cache_dtype=kd, input_tokens=i, output_tokens=o,
                  cache_hit_rate=h, calibration=cal)
        got = _setup_outcome(api.setup_simple, model, gpu, **kw)
        want = _setup_outcome(_long_setup, model, gpu, **kw)
        assert got == want, (model, gpu, kw)
        quiet = api.setup_simple(model, gpu, or_none=True, **kw)  # the search's form: None for a refusal
        assert (quiet is None) if isinstance(want[0], str) else (quiet == want[0]), (model, gpu, kw)
    assert any(True in (f.replicas or {}) for f in _kept_fleets())  # an eager replica was kept and reused


def _kept_fleets() -> list[api._Fleet]:
    """The fleets :func:`planner.serving.api._fleet_kept` holds (read back through a cache hit of each shape)."""
    out = []
    for model, gpu, tp, pp, engine, wd, kd in FLEETS:
        for cal in (None,):
            f = api._fleet_kept(model, gpu, tp, pp, engine, wd, kd, cal)
            if f is not None:
                out.append(f)
    return out


def test_a_refused_fleet_is_kept_as_none_and_still_refused_in_setups_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fleet with no room is worked out once (kept as None); every setup on it is refused as ``_setup`` refuses
    it, a bad mix's refusal first (``_setup`` checks the mix before the room)."""
    api._fleet_kept.cache_clear()
    kw = dict(tp=1, pp=1, engine="vllm", weight_dtype="auto", kv_cache_dtype="auto", cache_hit_rate=0.0,
              calibration=None)
    mixes = (1000.0, 0.0, 2000.0)
    wants = [_setup_outcome(_long_setup, "llama-3.1-70b", "l4", input_tokens=i, output_tokens=100.0, **kw)
             for i in mixes]
    calls = []
    real = api._fleet
    monkeypatch.setattr(api, "_fleet", lambda *a, **k: calls.append(1) or real(*a, **k))
    for i, want in zip(mixes, wants):
        got = _setup_outcome(api.setup_simple, "llama-3.1-70b", "l4", input_tokens=i, output_tokens=100.0, **kw)
        assert got == want and got[1] == ("gpu" if i else "input_tokens")
        assert api.setup_simple("llama-3.1-70b", "l4", input_tokens=i, output_tokens=100.0, or_none=True,
                                **kw) is None
    assert api._fleet_kept("llama-3.1-70b", "l4", 1, 1, "vllm", "auto", "auto", None) is None
    # the kept fleet once; then _setup's own path for the two refusals it reaches the room for (the third is
    # refused at its input tokens first); the search's form (or_none) none
    assert len(calls) == 1 + 2


FLEET_BASE = dict(model="llama-3.1-70b", gpu="h100-sxm", tp=4, pp=1, engine="vllm", weight_dtype="auto",
                  kv_cache_dtype="auto")
FLEET_VARIANTS = {"model": "llama-3.1-8b", "gpu": "h200-sxm", "tp": 8, "pp": 2, "engine": "vllm-v0",
                  "weight_dtype": "fp8", "kv_cache_dtype": "fp8"}


@pytest.mark.parametrize("field", sorted(FLEET_VARIANTS))
def test_the_kept_fleet_is_keyed_on_every_argument(field: str) -> None:
    """A fleet set up right after another that differs in one argument (and the calibration: DERIVED against the
    fitted constants) gets ``_setup``'s answer, not the first fleet's."""
    from planner.serving.calibration import DERIVED

    api._fleet_kept.cache_clear()
    mix = dict(input_tokens=2000.0, output_tokens=300.0, cache_hit_rate=0.2)
    for cal_a, cal_b in ((None, None), (None, DERIVED)):
        first = {**FLEET_BASE, **mix, "calibration": cal_a}
        other = {**FLEET_BASE, field: FLEET_VARIANTS[field], **mix, "calibration": cal_b}
        a = api.setup_simple(first.pop("model"), first.pop("gpu"), **first)
        b = api.setup_simple(other.pop("model"), other.pop("gpu"), **other)
        assert b == _long_setup(FLEET_BASE["model"] if field != "model" else FLEET_VARIANTS["model"],
                                FLEET_BASE["gpu"] if field != "gpu" else FLEET_VARIANTS["gpu"], **other)
        assert a != b
