"""What should we run this on: the fleet options search (the cheapest fleets meeting both SLOs at a load).

The candidate space is every priced GPU (the catalog's, or the rows a plan's GPUs sheet gives) × TP 1/2/4/8 (a TP
that divides the attention heads) × PP 1, plus TP 8 × PP 2 (16 GPUs per replica, for models that do not fit one
8-GPU node) × weight dtype (as released, FP8) × KV dtype (as released, FP8). Each candidate is sized two ways:

- **aggregated**: ``replicas = ceil(rate / r)`` with ``r`` the highest Poisson rate one replica sustains within the
  mean TTFT and TPOT SLOs (:func:`planner.serving.api.max_rate_at_slo`, Q5), or, in ``throughput`` mode (fleets that
  carry only bulk routes), its offline maximum (Q6);
- **disaggregated** (latency mode, PP 1, where aggregated needs more than 2 replicas or cannot meet the SLOs: pools
  need at least one prefill and one decode replica, so they cannot beat 2 replicas or fewer): prefill and decode
  pools of the same GPU and TP (:func:`planner.serving.api.disaggregated_pools`), with the KV-transfer bandwidth
  between them.

A candidate's cost is ``GPUs × USD per GPU-hour`` of its cheaper mode; candidates that do not fit or cannot meet the
SLOs are left out. Each candidate's rates per replica are memoised without the load (they do not depend on it), and
each search on all its arguments: a plan's cells ask for one fleet's options many times.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from planner import memory
from planner.errors import PlannerError, read_row
from planner.serving import schedule as sch
from planner.serving.calibration import Calibration
from planner.specs import GpuSpec, ModelSpec

if TYPE_CHECKING:
    from planner.serving.api import _Setup

TP_CHOICES = (1, 2, 4, 8)
"""Tensor-parallel sizes the search tries (one node)."""
PP_CHOICES = ((8, 2),)
"""(TP, PP) pairs beyond one node the search tries: TP 8 × PP 2, 16 GPUs per replica."""
WEIGHT_DTYPES = ("auto", "fp8")
KV_DTYPES = ("auto", "fp8")


@dataclass(frozen=True, kw_only=True)
class FleetChoice:
    """One candidate fleet (GPU, TP, PP, weight and KV dtype) sized for the load, in its cheaper mode.

    ``aggregated_gpus`` / ``disaggregated_gpus`` are the GPUs each mode needs (0: that mode cannot meet the SLOs or
    was not tried); ``disaggregated`` says which one the choice is; ``binding`` what limits it (``TTFT``, ``TPOT``,
    ``KV``, ``SEQS``, ``COMPUTE``; disaggregated: the prefill pool's then the decode pool's, ``TTFT/TPOT``).
    ``kv_bytes_per_token`` is one token's KV over all GPUs of a replica (KV heads replicated where TP > KV heads).
    """

    gpu: str
    tp: int
    pp: int
    weight_dtype: str
    kv_cache_dtype: str
    usd_per_gpu_hour: float
    disaggregated: bool
    replicas: int
    gpus: int
    usd_per_hour: float
    binding: str
    rate_per_replica: float  # aggregated: requests/s one replica sustains (0: that mode cannot meet the SLOs)
    aggregated_gpus: int
    aggregated_binding: str
    prefill_replicas: int
    decode_replicas: int
    disaggregated_gpus: int
    disaggregated_binding: str
    kv_transfer_bytes_per_s: float
    kv_bytes_per_token: float


def _peak_binding(s, peak: sch.State) -> str:
    """What caps the replica's maximum throughput: the running batch at its KV or sequence cap, else compute (the
    steps are full of prompt tokens)."""
    load = s.load
    upper = sch.upper_batch(load)
    if peak.decode_batch >= 0.99 * upper and upper >= load.max_running * (1 - 1e-9):
        return "KV" if s.kv_running < load.schedule.max_num_seqs else "SEQS"
    return "COMPUTE"


def _aggregated(s, *, ttft_slo_s: float, tpot_slo_s: float, throughput: bool) -> tuple[float, str]:
    """(requests/s one replica sustains, what binds), 0 when even a light load misses the SLOs (as
    :func:`planner.serving.api.max_rate_at_slo`, which this follows step for step)."""
    memo: dict[float, sch.State] = {}  # the SLO bisection starts at the peak's batch: its states, shared
    peak = sch.max_throughput(s.load, memo=memo)
    if throughput:
        return (peak.requests_per_s * s.pp, _peak_binding(s, peak)) if peak.valid else (0.0, "")

    def meets(st: sch.State) -> bool:
        return st.ttft_s <= ttft_slo_s and st.tpot_s <= tpot_slo_s

    if peak.valid and meets(peak):
        return peak.requests_per_s * s.pp, _peak_binding(s, peak)
    best = sch._bisect(s.load, meets, peak.decode_batch, memo=memo)
    if not (best.valid and meets(best)):
        return 0.0, ""
    binding = "TTFT" if best.ttft_s / ttft_slo_s >= best.tpot_s / tpot_slo_s else "TPOT"
    return best.requests_per_s * s.pp, binding


def _candidates(spec: ModelSpec, tps: tuple[int, ...], pps: tuple[tuple[int, int], ...]) -> list[tuple[int, int]]:
    shapes = [(tp, 1) for tp in tps] + [p for p in pps if p[0] in tps or not tps]
    return [(tp, pp) for tp, pp in shapes if spec.num_attention_heads % tp == 0]


@dataclass(frozen=True, kw_only=True)
class _Aggregated:
    """What one candidate replica sustains, independent of the load: the rate within the SLOs (0: cannot), what
    binds it, and one token's KV over the replica's GPUs."""

    rate: float
    binding: str
    kv_bytes_per_token: float


@dataclass(frozen=True, kw_only=True)
class _Pools:
    """The prefill and decode pools' rates per replica (independent of the load) and the KV bytes one request ships."""

    prefill_rate: float
    decode_rate: float
    binding: str
    kv_transfer_bytes_per_request: float


CANDIDATE_CACHE_SIZE = 1024
"""Entries of each per-candidate cache (:func:`_aggregated_rate`, :func:`_pool_rates`). Their keys carry a plan's
request mix, so plans with different mixes share nothing and a bound is what keeps a long batch's memory flat: a
20-route plan adds about 45 and 18 entries, and reuses them within the plan only (the Options sheet asks the same
search for several ranks). At 1,024 the caches are full after about 25 and 60 such plans (16,384 took several
hundred, so the batch's memory kept rising until then)."""

SEARCH_CACHE_SIZE = 64
"""Entries of the search cache (:func:`_search`): a 20-route plan makes about 2 searches and asks each 4 times."""

SHARED_SEARCH_CACHE_SIZE = 16
"""Entries of :func:`_search_shared` (keyed on every argument of :func:`_search` but the kept GPU): each holds a
search's state (its heap of about 240 candidates, the candidates taken and the choices sized), there only for the
searches of the same plan that differ in the kept GPU (a 20-route plan makes 1-2)."""

SETUP_CACHE_SIZE = 256
"""Entries of the candidate setup cache (:func:`_candidate_setup`, keyed on the model, GPU, TP, PP, dtypes, request
mix, engine and calibration: every argument of the setup): a 20-route plan's two searches (one request mix, two own
GPUs) set up about 60 candidates, each for the search's bound, its aggregated rate and its pools."""


@lru_cache(maxsize=SETUP_CACHE_SIZE)
def _candidate_setup(spec: ModelSpec, card: GpuSpec, tp: int, pp: int, wd: str, kd: str, i: float, o: float,
                     hit: float, engine: str, cal: Calibration) -> _Setup | None:
    """One candidate replica's setup (:func:`planner.serving.api._setup`, the search's fixed engine settings),
    memoised: None where the setup is refused (it does not fit, or the shape is refused). The search's bound
    (:func:`_gpus_at_least`), the aggregated rate and the pools (PP 1) all start from it."""
    from planner.serving.api import setup_simple

    try:  # _setup's answer, from the fleet's part kept (setup_simple; None: a refusal)
        return setup_simple(spec, card, tp=tp, pp=pp, engine=engine, weight_dtype=wd, kv_cache_dtype=kd,
                            input_tokens=i, output_tokens=o, cache_hit_rate=hit, calibration=cal, or_none=True)
    except PlannerError:
        return None


@lru_cache(maxsize=CANDIDATE_CACHE_SIZE)
def _aggregated_rate(spec: ModelSpec, card: GpuSpec, tp: int, pp: int, wd: str, kd: str, i: float, o: float,
                     hit: float, ttft: float, tpot: float, engine: str, throughput: bool,
                     cal: Calibration) -> _Aggregated | None:
    """One candidate's aggregated rate, memoised (None: it does not fit or the shape is refused); it does not depend
    on the load, so a plan whose demand changes, or a batch of plans with one request mix, reuses it."""
    s = _setup_kept(spec, card, tp, pp, wd, kd, i, o, hit, engine, cal)
    if s is None:
        return None
    try:
        r, binding = _aggregated(s, ttft_slo_s=ttft, tpot_slo_s=tpot, throughput=throughput)
    except PlannerError:
        return None
    return _Aggregated(rate=r, binding=binding,
                       kv_bytes_per_token=memory.kv_bytes_per_token(spec, tp=tp, kv_cache_dtype=kd) * tp)


@lru_cache(maxsize=CANDIDATE_CACHE_SIZE)
def _pool_rates(spec: ModelSpec, card: GpuSpec, tp: int, wd: str, kd: str, i: float, o: float, hit: float,
                ttft: float, tpot: float, engine: str, cal: Calibration) -> _Pools | None:
    """One candidate's prefill and decode pools (:func:`planner.serving.api.disaggregated_pools`; their rates per
    replica do not depend on the rate asked for, 1 req/s here), memoised; None where they cannot meet the SLOs.
    Both pools are the candidate's PP-1 replica, whose setup the search already holds (:func:`_candidate_setup`)."""
    from planner.errors import check_number
    from planner.serving.api import _pools

    try:  # disaggregated_pools' steps: its checks, its setup (None: refused), then the pools
        lam = check_number("request_rate", 1.0, minimum=0)
        ttft = check_number("ttft_slo_s", ttft, minimum=0, exclusive_minimum=True)
        tpot = check_number("tpot_slo_s", tpot, minimum=0, exclusive_minimum=True)
        s = _candidate_setup(spec, card, tp, 1, wd, kd, i, o, hit, engine, cal)
        if s is None:
            return None
        pools = _pools(spec, s, s, lam=lam, ttft=ttft, tpot=tpot, input_tokens=i, output_tokens=o, prefill_tp=tp,
                       decode_tp=tp, kv_cache_dtype=kd)
    except PlannerError:
        return None
    t_d = pools.decode_batch / (max(o - 1.0, 1.0) * pools.decode_rate_per_replica)
    return _Pools(prefill_rate=pools.prefill_rate_per_replica, decode_rate=pools.decode_rate_per_replica,
                  binding="TTFT/" + ("TPOT" if t_d >= 0.99 * tpot else "KV"),
                  kv_transfer_bytes_per_request=pools.kv_transfer_bytes_per_s)


COMPUTE_BOUND_MARGIN = 1.5
"""Safety factor on the compute bound of a replica's rate used to skip candidates (see :func:`_lower_bound_gpus`)."""


def _lower_bound_gpus(spec: ModelSpec, card: GpuSpec, tp: int, pp: int, rate: float, i: float, o: float,
                      hit: float) -> int:
    """GPUs a candidate needs at least, in either mode, without the serving model: one replica, and no replica
    computes faster than its GPUs' peak FLOP/s over ``2·active params`` per uncached input and output token
    (attention FLOPs left out, peak taken at the faster of BF16 and FP8, and the rate bound widened by
    :data:`COMPUTE_BOUND_MARGIN`, so the bound stays below what the model finds):
    ``tp·pp·max(1, ceil(λ·2·P·(I·(1−h) + O) / (margin·tp·pp·peak)))``.

    >>> from planner.catalog import get_gpu, get_model
    >>> _lower_bound_gpus(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), 1, 1, 1000, 1000, 200, 0.0)
    7
    """
    peak = max(float(card.bf16_flops_per_s or 0.0), float(card.fp8_flops_per_s or 0.0))
    per_request = 2.0 * float(spec.params_active) * (i * (1.0 - hit) + o)
    if peak <= 0 or per_request <= 0:
        return tp * pp
    replica_rate = COMPUTE_BOUND_MARGIN * tp * pp * peak / per_request
    return tp * pp * max(1, math.ceil(rate / replica_rate - 1e-9))


ROOM_CACHE_SIZE = 1024
"""Entries of the candidate room cache (:func:`_candidate_room`, keyed on the model, GPU, TP, PP, dtypes, engine and
calibration, none of a plan's request mix): a search over the catalog's 12 priced GPUs has about 240 candidates per
model and engine, and plans of one model share them all."""


@lru_cache(maxsize=ROOM_CACHE_SIZE)
def _candidate_room(spec: ModelSpec, card: GpuSpec, tp: int, pp: int, wd: str, kd: str, engine: str,
                    cal: Calibration) -> tuple[float, float, float] | None:
    """What a candidate's setup holds whatever the request mix: ``(sequence cap, KV tokens, step floor)`` per
    virtual engine (``max_num_seqs/pp``, ``Load.kv_tokens``, :func:`planner.serving.step.step_floor_s` at no
    decoding sequence), read from its setup for a one-token request (None where that setup is refused). None of the
    three depends on the mix: the schedule and the KV room come from the engine, GPU and dtypes alone, and the
    floor's terms (dense weight bytes, launch layers, overheads) from the model and shape; ``tests/test_speed15.py``
    compares them with setups of random mixes."""
    from planner.serving.api import setup_simple
    from planner.serving.step import step_floor_s

    try:  # _setup's answer, from the fleet's part kept (setup_simple; None: a refusal)
        s = setup_simple(spec, card, tp=tp, pp=pp, engine=engine, weight_dtype=wd, kv_cache_dtype=kd,
                         input_tokens=1.0, output_tokens=1.0, cache_hit_rate=0.0, calibration=cal, or_none=True)
    except PlannerError:
        return None
    if s is None:
        return None
    load = s.load
    return (float(load.schedule.max_num_seqs) / pp, float(load.kv_tokens or 0.0),
            step_floor_s(load.replica, load.calibration, decode_seqs=0.0))


ROOMS_KEPT, SETUPS_KEPT, SEARCHES_KEPT = ROOM_CACHE_SIZE, SETUP_CACHE_SIZE, SEARCH_CACHE_SIZE
"""Entries of each identity front (:func:`_room_kept`, :func:`_setup_kept`, :func:`_search_kept`), then emptied: the
sizes of the caches behind them, so a front holds at most as many answers as its cache (the same objects while both
hold them)."""

_ROOMS: dict[tuple[Any, ...], tuple[ModelSpec, GpuSpec, Calibration, tuple[float, float, float] | None]] = {}
_SETUPS: dict[tuple[Any, ...], tuple[ModelSpec, GpuSpec, Calibration, _Setup | None]] = {}
_SEARCHES: dict[tuple[Any, ...], tuple[ModelSpec, tuple[GpuSpec, ...], Calibration, tuple[FleetChoice, ...]]] = {}


def _hook_clear(cached: Any, front: dict[tuple[Any, ...], Any]) -> None:
    """``cached.cache_clear()`` (an ``lru_cache``) empties ``front`` too, so whoever starts a cache over (a test, a
    fit that switches a rule: ``tests/test_keyed_caches.py``'s ``_clear_caches``) starts its front over."""
    clear = cached.cache_clear

    def both() -> None:
        front.clear()
        clear()
    cached.cache_clear = both


def _room_kept(spec: ModelSpec, card: GpuSpec, tp: int, pp: int, wd: str, kd: str, engine: str,
               cal: Calibration) -> tuple[float, float, float] | None:
    """:func:`_candidate_room`, first looked up by the model's, GPU's and calibration's identity (held, so their
    ``id``s are not reused) and the other arguments' values, as its ``lru_cache`` compares them: its key hashes the
    three frozen dataclasses field by field on every call (about 2.8 µs; a search asks about 40 candidates), this
    one their ``id``s. The same object the cache gives (equal arguments); :data:`ROOMS_KEPT` entries, then emptied,
    and emptied with the cache."""
    key = (id(spec), id(card), tp, pp, wd, kd, engine, id(cal))
    hit = _ROOMS.get(key)
    if hit is not None and hit[0] is spec and hit[1] is card and hit[2] is cal:
        return hit[3]
    out = _candidate_room(spec, card, tp, pp, wd, kd, engine, cal)
    if len(_ROOMS) >= ROOMS_KEPT:
        _ROOMS.clear()
    _ROOMS[key] = (spec, card, cal, out)
    return out


def _setup_kept(spec: ModelSpec, card: GpuSpec, tp: int, pp: int, wd: str, kd: str, i: float, o: float,
                hit_rate: float, engine: str, cal: Calibration) -> _Setup | None:
    """:func:`_candidate_setup` behind an identity front, as :func:`_room_kept` (its cache hashes the same three
    dataclasses: about 4.8 µs a hit)."""
    key = (id(spec), id(card), tp, pp, wd, kd, i, o, hit_rate, engine, id(cal))
    hit = _SETUPS.get(key)
    if hit is not None and hit[0] is spec and hit[1] is card and hit[2] is cal:
        return hit[3]
    out = _candidate_setup(spec, card, tp, pp, wd, kd, i, o, hit_rate, engine, cal)
    if len(_SETUPS) >= SETUPS_KEPT:
        _SETUPS.clear()
    _SETUPS[key] = (spec, card, cal, out)
    return out


_hook_clear(_candidate_room, _ROOMS)
_hook_clear(_candidate_setup, _SETUPS)


def _gpus_at_least_room(room: tuple[float, float, float], *, rate: float, i: float, o: float, tp: int, pp: int,
                        pools: bool) -> float:
    """:func:`_gpus_at_least` before the candidate is set up, from its :func:`_candidate_room`: the same counts
    with the rates' bounds (:func:`planner.serving.schedule.rate_bound`, :func:`planner.serving.api.
    decode_rate_bound`) widened to what the setup cannot exceed: the running cap at most
    ``min(seqs, KV/(I + O))`` (a request holds at least its ``I + O`` tokens of KV: whole blocks of them), the
    floor at no decoding sequence (it rises with them)::

        R_agg = pp·D / (max(O−1, 1e-3)·t_floor(0))·(1 + 2e-9),   R_dec = max(D, 1) / (max(O−1, 1)·t_floor(0))·(1 + 2e-9)

    >>> from planner.catalog import get_gpu, get_model
    >>> from planner.serving.api import load_calibration
    >>> room = _candidate_room(get_model("llama-3.1-70b"), get_gpu("a100-80gb-sxm"), 1, 1, "fp8", "auto", "vllm",
    ...                        load_calibration(None))
    >>> _gpus_at_least_room(room, rate=1.34, i=2600, o=900, tp=1, pp=1, pools=True)  # the setup's bound: 24
    23
    """
    seqs, kv, floor = room
    if not floor > 0 or not rate > 0:
        return tp * pp
    running = min(seqs, kv / (i + o)) * (1.0 + sch.RATE_BOUND_SLACK)
    slack = (1.0 + sch.RATE_BOUND_SLACK) ** 2
    r_agg = pp * running / (max(o - 1.0, 1e-3) * floor) * slack
    r_dec = max(running, 1.0) / (max(o - 1.0, 1.0) * floor) * slack if pools else None
    return _gpus_from_rates(rate=rate, tp=tp, pp=pp, r_agg=r_agg, r_dec=r_dec)


def _gpus_from_rates(*, rate: float, tp: int, pp: int, r_agg: float, r_dec: float | None) -> float:
    """The GPU counts of :func:`_gpus_at_least` from rates per replica at least the true ones (``r_dec`` None: no
    pools), the smaller of the two modes."""
    agg = tp * pp * max(1, math.ceil(rate / r_agg - 1e-9)) if r_agg > 0 else math.inf
    if r_dec is None:
        return agg
    dis = tp * (1 + max(1, math.ceil(rate / r_dec - 1e-9))) if r_dec > 0 else math.inf
    return min(agg, dis)


def _gpus_at_least(s: _Setup, *, rate: float, tp: int, pp: int, pools: bool) -> float:
    """GPUs a candidate whose setup is ``s`` needs at least for ``rate`` > 0 requests/s in the mode the search picks,
    from upper bounds on its rates per replica (no steady state solved)::

        aggregated:      tp·pp·max(1, ceil(λ / R_agg − 1e-9)),   R_agg = pp·rate_bound(load)
        disaggregated:   tp·(1 + max(1, ceil(λ / R_dec − 1e-9))), R_dec = decode_rate_bound(load)   (``pools``)

    and the smaller of the two (the search takes the cheaper mode that meets the SLOs; a mode that cannot adds
    nothing). ``replicas_at_slo`` is that ceiling of ``λ`` over the true rate, which is at most the bound
    (:func:`planner.serving.schedule.rate_bound`, :func:`planner.serving.api.decode_rate_bound`), so each count is
    at most the one the search finds; a prefill pool has at least one replica.

    >>> from planner.catalog import get_gpu, get_model
    >>> from planner.serving.api import _setup
    >>> s = _setup(get_model("llama-3.1-70b"), get_gpu("a100-80gb-sxm"), tp=1, pp=1, engine="vllm",
    ...            engine_version=None, weight_dtype="fp8", kv_cache_dtype="auto", input_tokens=2600,
    ...            output_tokens=900, cache_hit_rate=0.6, max_num_batched_tokens=None, max_num_seqs=None,
    ...            calibration=None)
    >>> _gpus_at_least(s, rate=1.34, tp=1, pp=1, pools=True)  # room for about 2 sequences: 0.06 req/s a GPU
    24
    """
    from planner.serving.api import decode_rate_bound

    r_dec = decode_rate_bound(s.load, output_tokens=s.output_tokens) if pools else None
    return _gpus_from_rates(rate=rate, tp=tp, pp=pp, r_agg=pp * sch.rate_bound(s.load), r_dec=r_dec)


@dataclass(frozen=True, kw_only=True)
class _Args:
    """What sizing a candidate of one search reads (:func:`_search`'s arguments, its shapes and whether pools
    apply)."""

    spec: ModelSpec
    cards: tuple[GpuSpec, ...]
    shapes: tuple[tuple[int, int, str, str], ...]
    rate: float
    ttft: float
    tpot: float
    i: float
    o: float
    hit: float
    engine: str
    throughput: bool
    cal: Calibration
    pools_apply: bool


@dataclass(kw_only=True)
class _Frontier:
    """A best-first search's state: its heap of ``(bound, stage, card index, shape index)``, the costs found so far
    (sorted), the candidates taken (GPU name, TP, PP, dtypes) and the choices sized."""

    heap: list[tuple[float, int, int, int]]
    found: list[float]
    seen: set[tuple]
    out: list[FleetChoice]

    def copy(self) -> _Frontier:
        return _Frontier(heap=list(self.heap), found=list(self.found), seen=set(self.seen), out=list(self.out))


def _search_args(spec: ModelSpec, cards: tuple[GpuSpec, ...], rate: float, ttft: float, tpot: float, i: float,
                 o: float, hit: float, engine: str, throughput: bool, disaggregation: bool, tps: tuple[int, ...],
                 pps: tuple[tuple[int, int], ...], wds: tuple[str, ...], kds: tuple[str, ...],
                 cal: Calibration) -> tuple[_Args, list[tuple[float, int, int]]]:
    """The search's :class:`_Args` and its candidates ``(cost of the first bound, card index, shape index)`` in the
    order of that bound (priced cards only)."""
    shapes = tuple((tp, pp, wd, kd) for tp, pp in _candidates(spec, tps, pps) for wd in wds for kd in kds)
    bounds: dict[tuple[int, int, int], float] = {}  # _lower_bound_gpus of a (card, TP, PP): the dtypes share it
    order = []
    for n, card in enumerate(cards):
        if not (card.usd_per_gpu_hour or 0) > 0:
            continue
        price = card.usd_per_gpu_hour or 0.0
        for m, (tp, pp, _wd, _kd) in enumerate(shapes):
            cost = bounds.get((n, tp, pp))
            if cost is None:
                cost = bounds[n, tp, pp] = _lower_bound_gpus(spec, card, tp, pp, rate, i, o, hit) * price
            order.append((cost, n, m))
    order.sort()
    pools_apply = disaggregation and not throughput and math.isfinite(ttft) and math.isfinite(tpot)
    return _Args(spec=spec, cards=cards, shapes=shapes, rate=rate, ttft=ttft, tpot=tpot, i=i, o=o, hit=hit,
                 engine=engine, throughput=throughput, cal=cal, pools_apply=pools_apply), order


def _fits(seen: set[tuple], spec: ModelSpec, card: GpuSpec, tp: int, pp: int, wd: str, kd: str) -> bool:
    """The candidate is new (a GPU listed twice is taken at its first place in the search's order; noted in
    ``seen``) and its weights leave room on the GPUs (what the engine memory model would find, sooner)."""
    key = (card.name, tp, pp, wd, kd)
    if key in seen:
        return False
    seen.add(key)
    try:
        return memory.weight_bytes_per_gpu(spec, tp=tp, pp=pp, weight_dtype=wd) < card.hbm_bytes
    except PlannerError:
        return False


@lru_cache(maxsize=SEARCH_CACHE_SIZE)
def _search(spec: ModelSpec, cards: tuple[GpuSpec, ...], rate: float, ttft: float, tpot: float, i: float, o: float,
            hit: float, engine: str, throughput: bool, disaggregation: bool, tps: tuple[int, ...],
            pps: tuple[tuple[int, int], ...], wds: tuple[str, ...], kds: tuple[str, ...],
            cal: Calibration, top: int | None, keep: str) -> tuple[FleetChoice, ...]:
    """Every candidate (``top`` None), or at least the ``top`` cheapest and the cheapest on GPU ``keep``, cheapest
    first (ties: fewer GPUs, smaller replicas, aggregated first, then by name and dtypes).

    With ``top``, candidates are taken best first by a lower bound on their cost (:func:`_advance`); the search
    stops once the next bound costs more than the ``top``-th cheapest found and, on ``keep``, more than its cheapest
    found; a candidate whose bound costs more than both is never sized. Each bound is at most what the candidate's
    sizing finds, so every candidate left out costs more than the ``top``-th cheapest (and, on ``keep``, than its
    cheapest): those come out as sizing every candidate gives them. Past them, the list holds what was sized (fewer
    candidates than before the bounds of session 19; ``tests/test_speed15.py`` compares it with the full search on
    random inputs). Up to the first bound past the ``top``-th cheapest the search does not read ``keep``: that part
    is shared by the searches that differ only in it (:func:`_search_shared`; a plan's fleets ask one search with
    each fleet's own GPU kept)."""
    if top is None:  # every candidate, in the order of its first bound
        a, order = _search_args(spec, cards, rate, ttft, tpot, i, o, hit, engine, throughput, disaggregation, tps,
                                pps, wds, kds, cal)
        out: list[FleetChoice] = []
        seen: set[tuple] = set()
        for _bound, gi, si in order:
            card, (tp, pp, wd, kd) = cards[gi], a.shapes[si]
            if _fits(seen, spec, card, tp, pp, wd, kd):
                _size(out, a, card, tp, pp, wd, kd)
        return _sorted(out)
    a, shared = _search_shared(spec, cards, rate, ttft, tpot, i, o, hit, engine, throughput, disaggregation, tps,
                               pps, wds, kds, cal, top)
    fr = shared.copy()  # the shared state is never changed
    _advance(fr, a, top=top, keep=keep)
    return _sorted(fr.out)


@lru_cache(maxsize=SHARED_SEARCH_CACHE_SIZE)
def _search_shared(spec: ModelSpec, cards: tuple[GpuSpec, ...], rate: float, ttft: float, tpot: float, i: float,
                   o: float, hit: float, engine: str, throughput: bool, disaggregation: bool, tps: tuple[int, ...],
                   pps: tuple[tuple[int, int], ...], wds: tuple[str, ...], kds: tuple[str, ...],
                   cal: Calibration, top: int) -> tuple[_Args, _Frontier]:
    """The part of :func:`_search` that does not read ``keep``: the best-first search run until the next bound
    costs more than the ``top``-th cheapest found (that entry left in the heap), memoised on every other argument
    (:data:`SHARED_SEARCH_CACHE_SIZE` entries). Callers continue from a copy."""
    a, order = _search_args(spec, cards, rate, ttft, tpot, i, o, hit, engine, throughput, disaggregation, tps, pps,
                            wds, kds, cal)
    fr = _Frontier(heap=[(bound, 0, gi, si) for bound, gi, si in order], found=[], seen=set(), out=[])
    _advance(fr, a, top=top, keep=None)  # the order is sorted: a heap already
    return a, fr


def _advance(fr: _Frontier, a: _Args, *, top: int, keep: str | None) -> None:
    """The best-first search from ``fr`` (changed in place). A candidate is taken first on the cost of
    :func:`_lower_bound_gpus` (no setup) and goes back with that of :func:`_gpus_at_least_room` (its room, no
    setup); taken again, it is set up and goes back with that of :func:`_gpus_at_least` (its KV room and its step's
    floor); taken a third time, it is sized. Each bound is at least the one before, so the heap hands out bounds in
    rising order. Once the next bound costs more than the ``top``-th cheapest found it stops, unless ``keep``
    names a GPU whose cheapest found costs at least that bound (then only that GPU's candidates go on); ``keep``
    None stops there with that entry back in the heap (the part every ``keep`` shares)."""
    import heapq

    heap, found, out = fr.heap, fr.found, fr.out
    spec, cards, shapes, rate, i, o, cal = a.spec, a.cards, a.shapes, a.rate, a.i, a.o, a.cal
    kept = min((c.usd_per_hour for c in out if c.gpu == keep), default=math.inf)
    while heap:
        bound, stage, gi, si = heapq.heappop(heap)
        card, (tp, pp, wd, kd) = cards[gi], shapes[si]
        if len(found) >= top and bound > found[top - 1]:
            if keep is None:
                heapq.heappush(heap, (bound, stage, gi, si))
                return
            if not keep or bound > kept:
                break  # every remaining candidate costs more than the top cheapest (and the cheapest on keep)
            if card.name != keep:
                continue
        price = card.usd_per_gpu_hour or 0.0  # priced cards only (the order)
        pools = a.pools_apply and pp == 1
        if stage == 0:  # the first bound taken: the room's bound (no setup), back in the heap
            if not _fits(fr.seen, spec, card, tp, pp, wd, kd):
                continue
            room = _room_kept(spec, card, tp, pp, wd, kd, a.engine, cal)
            if room is not None:  # (refused: the setup decides, below)
                # never below a bound already taken: the heap's order holds
                bound = max(bound, _gpus_at_least_room(room, rate=rate, i=i, o=o, tp=tp, pp=pp, pools=pools) * price)
            heapq.heappush(heap, (bound, 1, gi, si))
            continue
        if stage == 1:  # the room's bound taken: the setup's bound, back in the heap
            s = _setup_kept(spec, card, tp, pp, wd, kd, i, o, a.hit, a.engine, cal)
            if s is None:
                continue  # refused: it does not fit or the shape is refused (no aggregated rate)
            if rate > 0:
                bound = max(bound, _gpus_at_least(s, rate=rate, tp=tp, pp=pp, pools=pools) * price)
            heapq.heappush(heap, (bound, 2, gi, si))
            continue
        choice = _size(out, a, card, tp, pp, wd, kd)
        if choice is not None:
            found.append(choice.usd_per_hour)
            found.sort()
            if card.name == keep:
                kept = min(kept, choice.usd_per_hour)


def _sorted(out: list[FleetChoice]) -> tuple[FleetChoice, ...]:
    """Cheapest first; ties: fewer GPUs, smaller replicas, aggregated first, then by GPU name and dtypes."""
    out.sort(key=lambda f: (f.usd_per_hour, f.gpus, f.tp * f.pp, f.disaggregated, f.gpu, f.weight_dtype,
                            f.kv_cache_dtype))
    return tuple(out)


def _size(out: list[FleetChoice], a: _Args, card: GpuSpec, tp: int, pp: int, wd: str, kd: str) -> FleetChoice | None:
    """One candidate sized for the search's rate in its cheaper mode, appended to ``out`` and returned (None: it
    does not fit, or neither mode meets the SLOs)."""
    from planner.serving.api import replicas_at_slo

    spec, rate, i, o, hit, ttft, tpot, engine, cal = a.spec, a.rate, a.i, a.o, a.hit, a.ttft, a.tpot, a.engine, a.cal
    g = _aggregated_rate(spec, card, tp, pp, wd, kd, i, o, hit, ttft, tpot, engine, a.throughput, cal)
    if g is None:
        return None  # does not fit (weights leave no KV room) or the shape is refused
    n = replicas_at_slo(rate, rate_per_replica=g.rate) if g.rate > 0 else 0
    agg_gpus = n * tp * pp
    # pools need a prefill and a decode replica: they cannot beat 2 aggregated replicas or fewer
    c = (_pool_rates(spec, card, tp, wd, kd, i, o, hit, ttft, tpot, engine, cal)
         if a.pools_apply and pp == 1 and (n == 0 or n > 2) else None)
    n_pre = replicas_at_slo(rate, rate_per_replica=c.prefill_rate) if c is not None else 0
    n_dec = replicas_at_slo(rate, rate_per_replica=c.decode_rate) if c is not None else 0
    dis_gpus = (n_pre + n_dec) * tp
    if agg_gpus <= 0 and dis_gpus <= 0:
        return None
    use_pools = dis_gpus > 0 and (agg_gpus <= 0 or dis_gpus < agg_gpus)
    chosen_gpus = dis_gpus if use_pools else agg_gpus
    price = card.usd_per_gpu_hour or 0.0
    choice = FleetChoice(
        gpu=card.name, tp=tp, pp=pp, weight_dtype=wd, kv_cache_dtype=kd, usd_per_gpu_hour=price,
        disaggregated=use_pools, replicas=n_pre + n_dec if use_pools else n, gpus=chosen_gpus,
        usd_per_hour=chosen_gpus * price, binding=c.binding if use_pools and c is not None else g.binding,
        rate_per_replica=g.rate, aggregated_gpus=agg_gpus, aggregated_binding=g.binding if n else "",
        prefill_replicas=n_pre, decode_replicas=n_dec, disaggregated_gpus=dis_gpus,
        disaggregated_binding=c.binding if c is not None else "",
        kv_transfer_bytes_per_s=rate * c.kv_transfer_bytes_per_request if c is not None else 0.0,
        kv_bytes_per_token=g.kv_bytes_per_token)
    out.append(choice)
    return choice


def fleet_choices(
    model: ModelSpec | str,
    *,
    request_rate: float,
    ttft_slo_s: float,
    tpot_slo_s: float,
    input_tokens: float,
    output_tokens: float,
    gpus: tuple[GpuSpec | str, ...] | None = None,
    tps: tuple[int, ...] = TP_CHOICES,
    pps: tuple[tuple[int, int], ...] = PP_CHOICES,
    weight_dtypes: tuple[str, ...] = WEIGHT_DTYPES,
    kv_cache_dtypes: tuple[str, ...] = KV_DTYPES,
    engine: str = "vllm",
    cache_hit_rate: float = 0.0,
    disaggregation: bool = True,
    throughput: bool = False,
    calibration: Calibration | Mapping | str | None = None,
    top: int | None = None,
    keep_gpu: GpuSpec | str | None = None,
) -> tuple[FleetChoice, ...]:
    """Every candidate fleet that serves ``request_rate`` within both SLOs (``throughput``: at the offline maximum,
    SLOs ignored), cheapest first (ties: fewer GPUs, smaller replicas, aggregated first); with ``top``, at least
    the ``top`` cheapest and the cheapest on ``keep_gpu`` (candidates that cannot be among them are skipped,
    :func:`_search`). ``gpus``: catalog names, GPUs-sheet spec tokens or specs (None: every priced catalog GPU).
    A TTFT or TPOT SLO of 0 means none.

    Worked example: 50 req/s of 1,000 in / 200 out within 1 s TTFT and 50 ms TPOT on an H100: the cheapest choice
    costs its GPUs at the catalog price, and needs no more GPUs than its other mode.

    >>> best = fleet_choices("llama-3.1-8b", request_rate=50, ttft_slo_s=1.0, tpot_slo_s=0.05, input_tokens=1000,
    ...                      output_tokens=200, gpus=("h100-sxm",))[0]
    >>> best.usd_per_hour == best.gpus * 3.2, best.gpus <= (best.aggregated_gpus or best.gpus)
    (True, True)
    """
    from planner.catalog import get_gpu, get_model
    from planner.catalog import gpus as all_gpus
    from planner.errors import check_number
    from planner.serving.api import load_calibration

    spec = get_model(model)
    cards = tuple(get_gpu(g) for g in gpus) if gpus else tuple(g for g in all_gpus() if g.usd_per_gpu_hour)
    rate = check_number("request_rate", request_rate, minimum=0)
    ttft = check_number("ttft_slo_s", ttft_slo_s, minimum=0) or math.inf
    tpot = check_number("tpot_slo_s", tpot_slo_s, minimum=0) or math.inf
    i = check_number("input_tokens", input_tokens, minimum=1)
    o = check_number("output_tokens", output_tokens, minimum=1)
    hit = float(cache_hit_rate)
    both = math.isinf(ttft) and math.isinf(tpot)
    return _search_kept(spec, cards, float(rate), float(ttft), float(tpot), float(i), float(o), hit, str(engine),
                        bool(throughput or both), bool(disaggregation), tuple(tps), tuple(pps), tuple(weight_dtypes),
                        tuple(kv_cache_dtypes), load_calibration(calibration),
                        None if top is None else max(int(top), 1), get_gpu(keep_gpu).name if keep_gpu else "")


def _search_kept(spec: ModelSpec, cards: tuple[GpuSpec, ...], rate: float, ttft: float, tpot: float, i: float,
                 o: float, hit: float, engine: str, throughput: bool, disaggregation: bool, tps: tuple[int, ...],
                 pps: tuple[tuple[int, int], ...], wds: tuple[str, ...], kds: tuple[str, ...], cal: Calibration,
                 top: int | None, keep: str) -> tuple[FleetChoice, ...]:
    """:func:`_search` behind an identity front, as :func:`_room_kept`: the model, each GPU (the tuple is new on
    each call, its specs are not) and the calibration by identity, held; the rest by value. Its cache hashes the
    model, twelve GPUs and the calibration field by field (about 10 µs; a plan asks it about 17 times)."""
    key = (id(spec), tuple(map(id, cards)), rate, ttft, tpot, i, o, hit, engine, throughput, disaggregation, tps,
           pps, wds, kds, id(cal), top, keep)
    kept = _SEARCHES.get(key)
    if kept is not None and kept[0] is spec and kept[2] is cal and all(map(operator.is_, kept[1], cards)):
        return kept[3]
    out = _search(spec, cards, rate, ttft, tpot, i, o, hit, engine, throughput, disaggregation, tps, pps, wds, kds,
                  cal, top, keep)
    if len(_SEARCHES) >= SEARCHES_KEPT:
        _SEARCHES.clear()
    _SEARCHES[key] = (spec, cards, cal, out)
    return out


_hook_clear(_search, _SEARCHES)


def _name(value: object) -> str:
    return str(value).strip().lower() if value is not None else ""


def fleet_route_rows(fleet: str, *, backends: Sequence[str | None] | None,
                     failovers: Sequence[str | None] | None) -> list[int]:
    """The route rows a fleet's options are sized for: the routes whose primary backend it is; for a standby fleet
    (no primary route), the routes that fail over to it (what it carries in their backend's outage).

    >>> fleet_route_rows("a", backends=["a", "b", "A"], failovers=[None, "a", None])
    [0, 2]
    >>> fleet_route_rows("s", backends=["a", "b"], failovers=["s", "s"])
    [0, 1]
    """
    key = _name(fleet)
    if not key:
        return []
    rows = [i for i, b in enumerate(backends or ()) if _name(b) == key]
    return rows or [i for i, f in enumerate(failovers or ()) if _name(f) == key]


def fleet_sum(fleet: str, *, backends: Sequence[str | None] | None, failovers: Sequence[str | None] | None,
              values: Sequence[float | None] | None) -> float:
    """``Σ values`` over :func:`fleet_route_rows` (empty cells skipped): a fleet's load, or its tokens per second.

    >>> fleet_sum("s", backends=["a", "b", "c"], failovers=["s", None, "s"], values=[400, 40, 6])
    406.0
    """
    values = values or ()
    return float(sum(float(read_row(values[i])) for i in fleet_route_rows(fleet, backends=backends,
                                                                           failovers=failovers)
                     if i < len(values) and values[i] is not None))


def fleet_slo_s(fleet: str, *, backends: Sequence[str | None] | None, failovers: Sequence[str | None] | None,
                kinds: Sequence[str | None] | None, slos: Sequence[float | None] | None) -> float:
    """The strictest (smallest) SLO over the fleet's latency-critical and interactive routes (its whole load must
    meet it, so its strictest route binds); 0 when all its routes are bulk (sized at throughput, no latency SLO).

    >>> fleet_slo_s("f", backends=["f", "f", "g"], failovers=[None] * 3, kinds=["interactive", "bulk", "interactive"],
    ...             slos=[1.0, 0.2, 0.5])
    1.0
    >>> fleet_slo_s("f", backends=["f"], failovers=[None], kinds=["bulk"], slos=[10.0])
    0.0
    """
    kinds, slos = kinds or (), slos or ()
    found = [float(read_row(slos[i])) for i in fleet_route_rows(fleet, backends=backends, failovers=failovers)
             if i < len(slos) and slos[i] is not None
             and _name(read_row(kinds[i]) if i < len(kinds) else None) != "bulk"]
    return min(found, default=0.0)
