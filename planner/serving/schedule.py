"""Continuous batching with chunked prefill, solved for its steady state (pure; formulas Q1-Q6 of docs/serving.md).

The engine runs steps back to back. Every step carries the ``d`` decoding sequences (one token each) and, when
prompts wait, up to ``budget − d`` prompt tokens (vLLM V1 and TensorRT-LLM: *mixed* steps, decode first, then
chunks of waiting prompts, ``max_num_batched_tokens`` in all), or, for SGLang's default scheduler and vLLM V0
without chunked prefill, a prefill-only step that stalls decoding. In steady state at ``X`` requests/s with ``I_u``
uncached prompt tokens and ``O`` output tokens each (``O−1`` decode steps after the first token)::

    S_m = X·I_u / p_m                   mixed (prefill-carrying) steps per second, p_m prompt tokens each   (Q1)
    τ   = t_d + a·S_m·τ·(t_m − t_d)    TPOT: decode steps, lengthened by the mixed ones (mixed engines)      (Q2)
    τ   = t_d + a·S_m·τ·t_m            ... prefill steps in between (prefill-only engines)                   (Q2')
    d   = X·(O−1)·τ                     decoding sequences, Little's law                                      (Q3)
    TTFT = o_ttft + a·t_d/2 + a·W_q + ceil(I_u / (budget − d))·t_m,   W_q = ρ·s / (2(1−ρ)), ρ = S_m·t_m,
           s = t_m·I_u/p_m (M/D/1 wait for the prefill share of the engine)                                  (Q4)
    TTFT += o_engine + o_tp·log2(tp·pp) + o_seq·(a·d + 1)   vLLM V0 and SGLang: the first token leaves after the
           next step is launched (:func:`first_token_delay_s`)                                              (Q4')
    TTFT += a·t_d   vLLM V1 with async scheduling (0.20+, :func:`async_scheduling_default`): the step after the one
           in flight is already scheduled, so a new request waits for it too                                (Q4'')

TensorRT-LLM without context chunking (rule W, :data:`TRTLLM_WHOLE_CONTEXTS`): ``p_m`` grows only to the whole
prompts that fit, ``p_m = min(k·I_u, max(I_u, X·I_u·t_m))``, ``k = ⌊(budget − d)/I_u⌋`` (:func:`whole_prompt_room`).

``a`` is the share of arrivals a request sees from others: 1 for Poisson arrivals (PASTA), ``(N−1)/N`` for ``N``
closed-loop clients (a client's own next prompt arrives only after its request is done).

Eliminating ``X`` with (Q3) gives ``τ(d) = t_d + d·I_u·(t_m − t_d)/((O−1)·p_m)`` and ``X(d) = d/((O−1)·τ(d))``
explicitly in ``d``, so every load is one bisection over the decode batch ``d``:

- open loop (Poisson rate ``λ``): ``X(d) = λ``; no state with ``ρ < 1`` and ``d`` within ``max_num_seqs`` and the
  KV capacity reaches ``λ`` → *saturated* (latencies ``inf``) (Q5);
- closed loop (``N`` clients, ``vllm bench serve --max-concurrency N``): ``N = d + X·TTFT`` (Little's law over the
  whole request); beyond the admission cap the extra clients wait in the queue (Q6);
- offline: the largest ``X(d)`` over the admissible ``d``.

Pipeline parallelism runs ``pp`` micro-batches in flight, each seeing a full pass of all stages: the solver treats a
replica as ``pp`` virtual engines, each with ``1/pp`` of the load and of ``max_num_seqs`` (as vLLM's virtual engines).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from planner.serving.calibration import Calibration
from planner.serving.step import Replica, step_time_s, step_timer

BISECTION_STEPS = 36
"""Bisection steps over the decode batch (resolution ``2^-36`` of the range)."""
BRACKET = 2.1e-3
"""Just past the bisection's final bracket, relatively: :func:`_bisect` stops once ``top − lo ≤ 0.002·top`` (its
default ``rel``), i.e.
``top ≤ lo/(1 − 0.002) = lo·1.002004``, so ``lo·(1 + BRACKET)`` lies beyond it (:func:`closed_loop`'s check)."""

DEFERRED_FIRST_TOKEN = frozenset({"vllm-v0", "sglang"})
"""Engines that hand out a step's sampled tokens only after the next step is scheduled and launched (Q4'):
vLLM V0's async output processing (``use_async_output_proc``, on by default since 0.6: the model runner calls
``async_callback`` to process the previous step's outputs once the current step's forward is launched) and
SGLang's overlap scheduler (``event_loop_overlap``, the default: ``process_batch_result`` of batch ``n`` runs after
batch ``n+1`` is scheduled and launched). vLLM V1 and TensorRT-LLM's C++ executor return a step's outputs when it
ends."""


def first_token_delay_s(r: Replica, *, decode_seqs: float) -> float:
    """The wait between the end of the step that samples a request's first token and its delivery (Q4'): on an
    engine of :data:`DEFERRED_FIRST_TOKEN`, the fixed (CPU) part of the next step, which carries ``decode_seqs``
    sequences (S2: ``o_engine + o_tp·log2(tp·pp) + o_seq·d``); 0 on the others.

    >>> from planner.catalog import get_gpu, get_model
    >>> from planner.serving.calibration import DERIVED
    >>> from planner.serving.step import build_replica
    >>> r = build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), context_tokens=400, input_tokens=300,
    ...                   engine="vllm-v0", calibration=DERIVED)
    >>> round(first_token_delay_s(r, decode_seqs=10) * 1e3, 3)  # 1.5 ms + 10 x 50 us
    2.0
    """
    if r.engine not in DEFERRED_FIRST_TOKEN:
        return 0.0
    return r.fixed_s + r.seq_s * max(decode_seqs, 1.0)


ASYNC_SCHEDULING_SINCE = (0, 20)
"""The first vLLM V1 release taken to schedule asynchronously by default (:func:`async_scheduling_default`): 0.20,
the release of the training split's vLLM V1 runs (AccelMark's ``nvidia_vllm020`` runner). The default itself
(``VllmConfig.__post_init__`` in ``vllm/config/vllm.py``: ``async_scheduling`` None resolves to True "unless there is
an incompatible option") came with vllm-project/vllm#27614, after releases whose ``SchedulerConfig`` had
``async_scheduling: bool = False``; the first release that carries it is not pinned here, so earlier V1 releases and
an unnamed release keep the synchronous scheduler (an unnamed vLLM release is the engine model's pinned 0.11.0,
``planner/engines/vllm.py``, whose ``SchedulerConfig`` still defaults it off)."""

ASYNC_SCHEDULING = True
"""vLLM V1's async scheduling in the steady state and the replays (:func:`async_scheduling_default`; session 12,
docs/serving.md); off, every V1 release schedules synchronously."""


SGLANG_OVERLAP_ADMISSION = True
"""SGLang's overlap scheduler admits a new request one step late, as vLLM's async scheduling does
(:func:`async_scheduling_default`; session 12, docs/serving.md); off, SGLang admits at the next step."""


TRTLLM_WHOLE_CONTEXTS = True
"""Rule W (session 14, latency26, docs/serving.md): TensorRT-LLM without context chunking (its default) puts only
whole prompts in a step, FCFS, and stops at the first that does not fit (:func:`whole_prompt_room`); off, a mixed
TensorRT-LLM step may carry a chunk of the next prompt as vLLM V1's does."""


def whole_prompt_room(room: float, *, prompt_tokens: float, dp: int = 1) -> float:
    """The prompt tokens a step of TensorRT-LLM without context chunking can carry, in whole prompts of
    ``prompt_tokens`` each, when ``room`` tokens of ``max_num_tokens`` are left after the decoding sequences (rule W).

    ``MicroBatchScheduler::operator()`` (``cpp/tensorrt_llm/batch_manager/microBatchScheduler.cpp``, the
    ``!mCtxChunkConfig`` branch) charges a context request its whole prompt and stops (``break``) at the first that
    would exceed ``maxNumTokens``; with attention data parallelism each of the ``dp`` ranks schedules its own share
    (``room/dp``)::

        p_max = dp · ⌊(room/dp) / I_u⌋ · I_u      when that is at least I_u, else room (a prompt longer than the
                                                   room: outside what an unchunked engine accepts; kept chunked)

    Worked example: 8,192 − 25 = 8,167 tokens of room and 5,000-token prompts fit one prompt, 5,000 tokens;
    2,000-token prompts fit four, 8,000 tokens; with ``dp = 2`` each rank's 4,083.5 fits two, 8,000 in all.

    >>> (whole_prompt_room(8167, prompt_tokens=5000), whole_prompt_room(8167, prompt_tokens=2000),
    ...  whole_prompt_room(8167, prompt_tokens=2000, dp=2))
    (5000.0, 8000.0, 8000.0)
    >>> whole_prompt_room(3000, prompt_tokens=5000)  # longer than the room: unchanged
    3000.0
    """
    dp = max(int(dp), 1)
    k = math.floor((room / dp) / prompt_tokens + 1e-9) if prompt_tokens > 0 else 0
    return float(dp * k * prompt_tokens) if k >= 1 else float(room)


def async_scheduling_default(engine: str, *, engine_version: str | None, pp: int = 1) -> bool:
    """Whether ``engine`` (a :func:`planner.engines.normalize_engine` key) at ``engine_version`` schedules
    asynchronously by default: vLLM V1 from :data:`ASYNC_SCHEDULING_SINCE`, without pipeline parallelism (which
    vLLM disabled it for in the releases that introduced the default). With async scheduling ``EngineCore`` keeps
    two batches in flight (``step_with_batch_queue``): batch ``n+1`` is scheduled right after batch ``n`` is
    submitted, so a request that arrives while batch ``n`` runs enters batch ``n+2``. SGLang's default overlap
    scheduler (``event_loop_overlap``: receive, schedule and launch batch ``k``, then wait for batch ``k−1``'s
    result) does the same at every release in the data (:data:`SGLANG_OVERLAP_ADMISSION`), without pipeline
    parallelism (its own event loop).

    >>> async_scheduling_default("vllm", engine_version="0.20.1"), async_scheduling_default("vllm", engine_version=None)
    (True, False)
    >>> async_scheduling_default("vllm-v0", engine_version="0.7.3")
    False
    >>> async_scheduling_default("sglang", engine_version=None)
    True
    >>> async_scheduling_default("vllm", engine_version="0.21", pp=2)
    False
    """
    from planner.engines.common import version_tuple

    if pp > 1:
        return False
    if engine == "sglang":
        return SGLANG_OVERLAP_ADMISSION
    if not ASYNC_SCHEDULING or engine != "vllm" or not engine_version:
        return False
    return version_tuple(engine_version) >= ASYNC_SCHEDULING_SINCE


@dataclass(frozen=True, kw_only=True)
class EngineSchedule:
    """How an engine batches: token budget per step, sequence cap, whether decode rides along with prefill, and
    whether the next step is scheduled while one runs (vLLM V1's async scheduling: a new request waits one more
    step)."""

    engine: str
    budget_tokens: int
    max_num_seqs: int
    mixed: bool
    source: str
    async_scheduling: bool = False
    whole_prompts: bool = False  # rule W: only whole prompts enter a step (TensorRT-LLM without context chunking)


def engine_schedule(engine: str, *, gpu_big: bool, gpu_gib: float, max_position: int | None,
                    max_num_batched_tokens: int | None = None, max_num_seqs: int | None = None,
                    chunked_prefill: bool | None = None, async_scheduling: bool = False) -> EngineSchedule:
    """The scheduling defaults of ``engine`` (a key of :func:`planner.engines.normalize_engine`).

    - vLLM V1 (0.8+): chunked prefill always on, decode first, ``max_num_batched_tokens`` 8192 for ``vllm serve`` on
      >= 70 GiB non-A100 GPUs, else 2048; ``max_num_seqs`` 1024, else 256 (``EngineArgs.get_batch_defaults``).
    - vLLM V0 (<= 0.7): chunked prefill on by default only above 32K context (``max_model_len`` defaults to the
      model's), then 512 tokens per step, mixed; otherwise whole prompts in prefill-only steps; 256 sequences.
    - SGLang: ``chunked_prefill_size`` by GPU memory
      (:func:`planner.engines.sglang.sglang_chunked_prefill_size`), prefill
      batches run without the decode batch (``enable_mixed_chunk`` off by default); running requests KV-limited.
    - TensorRT-LLM (``trtllm-serve``/``trtllm-bench``): in-flight batching, context and generation in one step,
      ``max_num_tokens`` 8192, ``max_batch_size`` 2048; without context chunking (``chunked_prefill`` not True: the
      executor's default) and with :data:`TRTLLM_WHOLE_CONTEXTS`, only whole prompts enter a step (rule W).

    >>> engine_schedule("vllm", gpu_big=True, gpu_gib=79.6, max_position=131072).budget_tokens
    8192
    >>> engine_schedule("sglang", gpu_big=True, gpu_gib=79.6, max_position=131072).mixed
    False
    """
    from planner.engines.sglang import sglang_chunked_prefill_size

    if engine == "vllm":
        sched = EngineSchedule(engine=engine, budget_tokens=8192 if gpu_big else 2048,
                               max_num_seqs=1024 if gpu_big else 256, mixed=True,
                               source="vllm/engine/arg_utils.py get_batch_defaults (V1, vllm serve)")
    elif engine == "vllm-v0":
        long = (max_position or 0) > 32768
        sched = EngineSchedule(engine=engine, budget_tokens=512 if long else max(2048, max_position or 2048),
                               max_num_seqs=256, mixed=long,
                               source="vllm 0.6 EngineArgs: chunked prefill (512 tokens) above 32K context")
    elif engine == "sglang":
        sched = EngineSchedule(engine=engine, budget_tokens=sglang_chunked_prefill_size(gpu_gib), max_num_seqs=4096,
                               mixed=False, source="sglang server_args: chunked_prefill_size, enable_mixed_chunk=False")
    else:
        sched = EngineSchedule(engine=engine, budget_tokens=8192, max_num_seqs=2048, mixed=True,
                               source="TensorRT-LLM BuildConfig/LLM args: max_num_tokens 8192, max_batch_size 2048")
    if engine == "vllm-v0" and chunked_prefill is not None and chunked_prefill != sched.mixed:
        budget = 512 if chunked_prefill else max(2048, max_position or 2048)
        sched = EngineSchedule(engine=engine, budget_tokens=budget, max_num_seqs=sched.max_num_seqs,
                               mixed=chunked_prefill, source=sched.source + f" (chunked prefill {chunked_prefill})")
    if max_num_batched_tokens or max_num_seqs:
        sched = EngineSchedule(engine=engine, budget_tokens=int(max_num_batched_tokens or sched.budget_tokens),
                               max_num_seqs=int(max_num_seqs or sched.max_num_seqs),
                               mixed=sched.mixed,
                               source=sched.source + " (overridden)")
    if TRTLLM_WHOLE_CONTEXTS and engine == "trtllm" and chunked_prefill is not True:
        sched = dataclasses.replace(sched, whole_prompts=True,
                                    source=sched.source + " (whole contexts: enableChunkedContext false)")
    if async_scheduling:
        sched = dataclasses.replace(sched, async_scheduling=True, source=sched.source + " (async scheduling)")
    return sched


@dataclass(frozen=True, kw_only=True)
class State:
    """The steady state of one virtual engine at decode batch ``d``."""

    decode_batch: float
    requests_per_s: float
    tpot_s: float
    ttft_s: float
    ttft_service_s: float
    prefill_share: float  # ρ: fraction of the time in prefill-carrying steps
    decode_step_s: float
    mixed_step_s: float
    running: float
    valid: bool


@dataclass(frozen=True, kw_only=True)
class Load:
    """One request shape on one engine: the solver's inputs besides the load itself."""

    replica: Replica
    calibration: Calibration
    schedule: EngineSchedule
    input_tokens: float  # uncached prompt tokens per request
    output_tokens: float
    max_running: float  # per virtual engine: min(max_num_seqs, KV capacity) / pp
    others: float = 1.0  # share of the arrivals that come from other clients: 1 open loop, (N−1)/N closed loop
    kv_tokens: float | None = None  # per virtual engine: the KV cache in tokens (None: the request cap only)
    in_process_delivery: bool = False  # rule D: an in-process AsyncLLMEngine client (replays only; replay.py)


def state(load: Load, *, d: float) -> State:
    """The steady state at decode batch ``d`` (Q1-Q4), ``valid`` when ``ρ < 1`` and the budget leaves prompt room.

    >>> from planner.catalog import get_gpu, get_model
    >>> from planner.serving.calibration import DERIVED
    >>> from planner.serving.step import build_replica
    >>> r = build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), context_tokens=1024, input_tokens=1000,
    ...                   calibration=DERIVED)
    >>> s = engine_schedule("vllm", gpu_big=True, gpu_gib=79.6, max_position=131072)
    >>> st = state(Load(replica=r, calibration=DERIVED, schedule=s, input_tokens=1000, output_tokens=100,
    ...                 max_running=1024), d=8)
    >>> round(st.requests_per_s, 2), round(st.tpot_s * 1e3, 2)
    (9.54, 8.47)

    Solved by the load's :func:`_solver` (kept for :data:`SOLVERS_KEPT` loads): the states of one load share the
    work of reading its fields and its replica's step constants.
    """
    hit = _SOLVERS.get(id(load))
    if hit is None or hit[0] is not load:
        hit = (load, _solver(load))
        if len(_SOLVERS) >= SOLVERS_KEPT:
            _SOLVERS.clear()
        _SOLVERS[id(load)] = hit
    return hit[1](d)


SOLVERS_KEPT = 64
"""Loads whose :func:`_solver` :func:`state` keeps (:data:`_SOLVERS`, keyed on the load's ``id``, the load held so
the ``id`` stays its own; emptied when full). A plan solves about 26 loads (one a setup and request mix), about 21
states each; a kept solver holds its load and a few dozen floats."""

_SOLVERS: dict[int, tuple[Load, Callable[[float], State]]] = {}


def _solver(load: Load) -> Callable[[float], State]:
    """:func:`state` of ``load`` as a function of ``d``: Q1-Q4 with the load's fields read once, and its steps timed
    by :func:`planner.serving.step.step_timer` (the same floats as :func:`planner.serving.step.step_time_s`); the
    operations on ``d`` are :func:`state`'s, in its order (``tests/test_speed26.py`` compares it with the body
    :func:`state` had before, kept in the test, over random loads and batches)."""
    r, cal, sched = load.replica, load.calibration, load.schedule
    iu, o1 = load.input_tokens, max(load.output_tokens - 1.0, 1e-3)
    mixed, others = sched.mixed, load.others
    budget, whole, dp, max_running = sched.budget_tokens, sched.whole_prompts, r.dp, load.max_running
    in_flight = 1.5 if sched.async_scheduling else 0.5  # async: the rest of the step in flight and the next
    ttft_fixed = load.replica.ttft_fixed_s
    deferred = r.engine in DEFERRED_FIRST_TOKEN  # first_token_delay_s, inline
    fixed_s, seq_s = r.fixed_s, r.seq_s
    step = step_timer(r, cal)
    ceil, inf, new, put, cls = math.ceil, math.inf, _new, _set, State  # read once, not once a state

    def solve(d: float) -> State:
        t_d = step(1.0 if 1.0 > d else d, 0.0, 0.0) if d > 0 else 0.0  # max(d, 1.0)
        room = budget - (d if mixed else 0.0)
        if room <= 0:
            return State(decode_batch=d, requests_per_s=0.0, tpot_s=inf, ttft_s=inf, ttft_service_s=inf,
                         prefill_share=1.0, decode_step_s=t_d, mixed_step_s=inf, running=d, valid=False)
        p_m = iu if iu < room else room  # min(room, iu): room unless iu is less
        # rule W: whole prompts only
        p_top = whole_prompt_room(room, prompt_tokens=iu, dp=dp) if whole else room
        x = 0.0
        t_m = tau = t_d
        d_mixed = d if mixed else 0.0
        for _ in range(3):  # p_m depends on the arrivals during a mixed step
            t_m = step(d_mixed, p_m, p_m / iu)
            extra = t_m - t_d if mixed else t_m
            tau = t_d + others * d * iu * extra / (o1 * p_m)
            if mixed and d * iu / (o1 * p_m) > 1.0 and t_m > tau:  # every step carries prompts: max(tau, t_m)
                tau = t_m
            x = d / (o1 * tau) if tau > 0 else 0.0
            grown = x * iu * t_m
            if not grown > iu:  # max(iu, grown): iu unless grown is greater
                grown = iu
            grown = grown if grown < p_top else p_top  # min(p_top, grown): p_top unless grown is less
            if abs(grown - p_m) <= 1e-6 * p_m:
                break
            p_m = grown
        rho = x * iu * t_m / p_m
        service = ceil(iu / room - 1e-9) * t_m
        valid = rho < 1.0 and d <= max_running
        if valid:
            wait = others * rho * (t_m * iu / p_m) / (2.0 * (1.0 - rho))
            served = others * d + 1.0
            delay = (fixed_s + seq_s * (1.0 if 1.0 > served else served)) if deferred else 0.0
            ttft = ttft_fixed + others * in_flight * t_d * (1.0 if 1.0 < d else d) + wait + service + delay  # min(d, 1)
        else:
            ttft = inf
        running = d + x * service
        st = new(cls)
        put(st, "__dict__", {"decode_batch": d, "requests_per_s": x, "tpot_s": tau, "ttft_s": ttft,
                             "ttft_service_s": service, "prefill_share": 1.0 if 1.0 < rho else rho,
                             "decode_step_s": t_d, "mixed_step_s": t_m, "running": running, "valid": valid})
        return st
    return solve


RATE_BOUND_SLACK = 1e-9
"""Relative slack :func:`rate_bound` adds above its bound (the rounding of :func:`state`'s own arithmetic)."""


def rate_bound(load: Load) -> float:
    """An upper bound on ``requests_per_s`` of every valid :func:`state` of ``load`` (so of what
    :func:`max_throughput`, :func:`open_loop` and a bisection under an SLO can find), without solving any::

        X ≤ D / ((O−1)·t_floor(D))·(1 + 1e-9),   D = max_running,   t_floor = step_floor_s

    Why it holds: a valid state has ``d ≤ max_running`` and ``X = d/((O−1)·τ)`` (Q3); ``τ`` is ``t_d`` plus a
    non-negative share of a prompt step (prefill-only engines), or lies between ``t_d`` and ``t_m`` (mixed engines:
    ``τ = t_d + c·(t_m − t_d)`` with ``c = a·d·I_u/((O−1)·p_m) ≤ 1``, else ``τ ≥ t_m`` is imposed), so
    ``τ ≥ min(t_d, t_m)``; both steps carry ``d`` decoding sequences (``t_d`` at least one), so each is at least
    :func:`planner.serving.step.step_floor_s` at ``d``, and ``d/t_floor(d)`` rises with ``d``. ``inf`` (no bound)
    when the arrivals' share ``a`` is outside [0, 1] or the floor is 0.

    Worked example: Llama-3.1-70B on two H100s with room for 6 running sequences of about 3,000 tokens and 901
    output tokens: a step takes at least 27.8 ms (weights and 6 sequences' KV), so at most
    6 / (900 × 0.0278) = 0.240 requests/s; the solved maximum is 0.204.

    >>> from planner.catalog import get_gpu, get_model
    >>> from planner.serving.calibration import DERIVED
    >>> from planner.serving.step import build_replica
    >>> r = build_replica(get_model("llama-3.1-70b"), get_gpu("h100-sxm"), tp=2, context_tokens=3000,
    ...                   input_tokens=2500, calibration=DERIVED)
    >>> s = engine_schedule("vllm", gpu_big=True, gpu_gib=79.6, max_position=131072)
    >>> load = Load(replica=r, calibration=DERIVED, schedule=s, input_tokens=2500, output_tokens=901, max_running=6)
    >>> round(rate_bound(load), 3), round(max_throughput(load).requests_per_s, 3)
    (0.24, 0.204)
    """
    from planner.serving.step import step_floor_s

    d = load.max_running
    if not (0.0 <= load.others <= 1.0) or not d > 0:
        return math.inf if not (0.0 <= load.others <= 1.0) else 0.0
    floor = step_floor_s(load.replica, load.calibration, decode_seqs=d)
    if not floor > 0:
        return math.inf
    return d / (max(load.output_tokens - 1.0, 1e-3) * floor) * (1.0 + RATE_BOUND_SLACK)


_new = object.__new__
_set = object.__setattr__


def _state(**fields: Any) -> State:
    """``State(**fields)`` for every field of :class:`State` given: the same class and attributes (equal, hashed and
    shown alike), built without the frozen dataclass's ``__init__`` (one ``object.__setattr__`` a field: 1.6 against
    0.5 µs, and the solves build about a thousand states a plan). :func:`_solver` builds its states the same way.

    >>> kw = dict(decode_batch=2.0, requests_per_s=1.0, tpot_s=0.02, ttft_s=0.1, ttft_service_s=0.05,
    ...           prefill_share=0.1, decode_step_s=0.02, mixed_step_s=0.03, running=2.1, valid=True)
    >>> _state(**kw) == State(**kw), repr(_state(**kw)) == repr(State(**kw)), hash(_state(**kw)) == hash(State(**kw))
    (True, True, True)
    """
    st = _new(State)
    _set(st, "__dict__", fields)
    return st


MEMO_STATES = 128
"""States a memo of :func:`solved` holds before it starts over: a plan's setups keep about 25 states each, the one whose
forecast months bisect it at 12 rates about 100."""


def solved(load: Load, *, d: float, memo: dict[float, State] | None) -> State:
    """``state(load, d=d)``, kept in ``memo`` (the caller's, for this ``load`` only: keyed on ``d`` alone) when one
    is given: the same object for the same batch, so a second solve of the load (another rate, the offline maximum
    after an open loop, the SLO bisection after the maximum) computes only the batches the first did not. A ``d``
    that is not a ``float`` is not kept (``1`` and ``1.0`` give states shown apart). At most :data:`MEMO_STATES`
    entries (emptied when full).

    >>> from planner.catalog import get_gpu, get_model
    >>> from planner.serving.calibration import DERIVED
    >>> from planner.serving.step import build_replica
    >>> r = build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), context_tokens=1024, input_tokens=1000,
    ...                   calibration=DERIVED)
    >>> s = engine_schedule("vllm", gpu_big=True, gpu_gib=79.6, max_position=131072)
    >>> load = Load(replica=r, calibration=DERIVED, schedule=s, input_tokens=1000, output_tokens=100, max_running=1024)
    >>> memo: dict = {}
    >>> st = solved(load, d=8.0, memo=memo)
    >>> st is solved(load, d=8.0, memo=memo), st == state(load, d=8.0)
    (True, True)
    """
    if memo is None or type(d) is not float:
        return state(load, d=d)
    st = memo.get(d)
    if st is None:
        st = state(load, d=d)
        if len(memo) >= MEMO_STATES:
            memo.clear()
        memo[d] = st
    return st


def _bisect(load: Load, below, hi: float, *, lo: float = 0.0, rel: float = 2e-3,
            memo: dict[float, State] | None = None) -> State:
    """The largest valid state with ``below(state)`` true, bisecting ``d`` in ``[lo, hi]`` (``below`` false for
    invalid states; assumed monotone) until the bracket is within ``rel`` of its top; states through ``memo``
    (:func:`solved`)."""
    lo_state = None
    top = hi
    st_hi = solved(load, d=top, memo=memo)
    if st_hi.valid and below(st_hi):
        return st_hi
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (lo + top)
        st = solved(load, d=mid, memo=memo)
        if st.valid and below(st):
            lo, lo_state = mid, st
        else:
            top = mid
        # relative in d: a short output or a light load runs a decode batch far below 1 (X = d / ((O - 1) tau)), and
        # an absolute step of 0.002 there left X at 0 and TPOT at 0 for light loads of 2-5 output tokens, and a
        # 1-token output (prefill only) at 0.12 req/s offline on an H100 where 2 tokens reached 49
        if top - lo <= rel * top:
            break
    return lo_state if lo_state is not None else solved(load, d=lo, memo=memo)


def upper_batch(load: Load) -> float:
    """The largest decode batch the engine admits: ``min(max_running, budget)`` for mixed engines."""
    hi = load.max_running
    if load.schedule.mixed:
        hi = min(hi, load.schedule.budget_tokens - 1.0)
    return max(hi, 0.0)


def max_throughput(load: Load, *, memo: dict[float, State] | None = None) -> State:
    """The valid state with the most requests per second (offline maximum; the open loop's saturation rate).

    ``X(d)`` rises with ``d`` until prompts no longer fit (``ρ → 1``) or the running cap; a 10-point scan then a
    local refinement finds the peak. States through ``memo`` (:func:`solved`).
    """
    hi = upper_batch(load)
    edge = _bisect(load, lambda st: True, hi, memo=memo)  # the largest admissible batch
    best = edge
    top = max(edge.decode_batch, 1e-6)
    grid = [top * (i / 10.0) ** 2 for i in range(1, 10)]
    for d in grid:
        st = solved(load, d=d, memo=memo)
        if st.valid and st.requests_per_s > best.requests_per_s:
            best = st
    if best is not edge:  # golden refinement around the grid maximum
        a, b = best.decode_batch * 0.8, min(best.decode_batch * 1.25, top)
        for _ in range(10):
            m1, m2 = a + 0.382 * (b - a), a + 0.618 * (b - a)
            s1, s2 = solved(load, d=m1, memo=memo), solved(load, d=m2, memo=memo)
            if (s1.requests_per_s if s1.valid else 0) >= (s2.requests_per_s if s2.valid else 0):
                b = m2
            else:
                a = m1
        st = solved(load, d=0.5 * (a + b), memo=memo)
        if st.valid and st.requests_per_s > best.requests_per_s:
            best = st
    return best


def open_loop(load: Load, *, rate: float, peak: State | None = None,
              memo: dict[float, State] | None = None) -> State | None:
    """The steady state at ``rate`` requests/s (Q5), ``None`` when the engine cannot sustain it (saturated).

    Bisects ``X(d) = rate`` over the admissible batches; only when that ends short of the rate is the maximum
    (:func:`max_throughput`) consulted, so an unsaturated load costs one bisection. States through ``memo``
    (:func:`solved`)."""
    st = _bisect(load, lambda s: s.requests_per_s <= rate, upper_batch(load), memo=memo)
    if st.valid and st.requests_per_s >= rate * (1 - 1e-3):
        return st
    peak = peak or max_throughput(load, memo=memo)
    if rate >= peak.requests_per_s * (1 - 1e-9):
        return None
    return _bisect(load, lambda s: s.requests_per_s <= rate, peak.decode_batch, memo=memo)


def closed_loop(load: Load, *, clients: float) -> tuple[State, float]:
    """The steady state with ``clients`` concurrent clients (Q6) and the admission wait of the clients beyond the
    running cap (0 below it): ``N = d + X·TTFT``."""
    def n_of(st: State) -> float:
        return st.decode_batch + st.requests_per_s * st.ttft_s

    # a client's own next request never interrupts its decoding: only the other N−1 clients' prompts do
    load = dataclasses.replace(load, others=max(clients - 1.0, 0.0) / clients if clients > 0 else 0.0)
    hi = upper_batch(load)
    st = _bisect(load, lambda s: n_of(s) <= clients, hi)
    n = n_of(st)
    if n < clients * (1 - 1e-3) and st.requests_per_s > 0:
        # a shortfall within the bisection's bracket (0.2% of d) is its tolerance, not clients waiting: only a
        # state just past the bracket that is invalid (prompts no longer fit) or still short, or the running cap,
        # means the rest wait to be admitted
        d_up = st.decode_batch * (1 + BRACKET) + 1e-9
        up = state(load, d=d_up) if d_up < hi else None
        if up is not None and up.valid and n_of(up) >= clients:  # the root is inside: bisect on, finer
            return _bisect(load, lambda s: n_of(s) <= clients, d_up, lo=st.decode_batch, rel=1e-6), 0.0
        return st, (clients - n) / st.requests_per_s
    return st, 0.0


def one_shot_batch(load: Load, *, prompts: float) -> State:
    """All ``prompts`` submitted at once and admitted together (an offline run with ``num_prompts`` within the
    running cap): their prompts fill whole-budget prefill steps, then all decode together (Q7)::

        t_pre = (n·I_u / budget)·t_step(0, budget),  E2E = o_ttft + t_pre + (O−1)·t_d(n),  X = n / E2E

    TPOT is the decode step at ``n`` sequences, TTFT the mean over the prompts (``o_ttft + t_pre/2``).
    """
    r, cal, sched, iu = load.replica, load.calibration, load.schedule, load.input_tokens
    n = max(min(prompts, load.max_running), 1.0)
    tokens = min(float(sched.budget_tokens), n * iu)
    t_full = step_time_s(r, cal, decode_seqs=0.0, prefill_tokens=tokens, prefill_seqs=tokens / iu)
    t_pre = n * iu / tokens * t_full
    t_d = step_time_s(r, cal, decode_seqs=n)
    o1 = max(load.output_tokens - 1.0, 0.0)
    e2e = r.ttft_fixed_s + t_pre + o1 * t_d
    return State(decode_batch=n, requests_per_s=n / e2e, tpot_s=t_d, ttft_s=r.ttft_fixed_s + 0.5 * (t_pre + t_full),
                 ttft_service_s=t_pre, prefill_share=t_pre / e2e, decode_step_s=t_d, mixed_step_s=t_full, running=n,
                 valid=True)
