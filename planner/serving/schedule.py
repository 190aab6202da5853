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
import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass

from planner.serving.calibration import Calibration
from planner.serving.step import Replica, step_time_s

BISECTION_STEPS = 36
"""Bisection steps over the decode batch (resolution ``2^-36`` of the range)."""

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
      ``max_num_tokens`` 8192, ``max_batch_size`` 2048.

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
    """
    r, cal, sched = load.replica, load.calibration, load.schedule
    iu, o1 = load.input_tokens, max(load.output_tokens - 1.0, 1e-3)
    d_eff = max(d, 1.0) if d > 0 else 0.0
    t_d = step_time_s(r, cal, decode_seqs=d_eff) if d > 0 else 0.0
    room = sched.budget_tokens - (d if sched.mixed else 0.0)
    if room <= 0:
        return State(decode_batch=d, requests_per_s=0.0, tpot_s=math.inf, ttft_s=math.inf, ttft_service_s=math.inf,
                     prefill_share=1.0, decode_step_s=t_d, mixed_step_s=math.inf, running=d, valid=False)
    p_m = min(room, iu)
    x = 0.0
    t_m = tau = t_d
    for _ in range(3):  # p_m depends on the arrivals during a mixed step
        t_m = step_time_s(r, cal, decode_seqs=d if sched.mixed else 0.0, prefill_tokens=p_m,
                          prefill_seqs=p_m / iu)
        extra = t_m - t_d if sched.mixed else t_m
        tau = t_d + load.others * d * iu * extra / (o1 * p_m)
        if sched.mixed and d * iu / (o1 * p_m) > 1.0:  # every step carries prompts
            tau = max(tau, t_m)
        x = d / (o1 * tau) if tau > 0 else 0.0
        grown = min(room, max(iu, x * iu * t_m))
        if abs(grown - p_m) <= 1e-6 * p_m:
            break
        p_m = grown
    rho = x * iu * t_m / p_m
    service = math.ceil(iu / room - 1e-9) * t_m
    valid = rho < 1.0 and d <= load.max_running
    if valid:
        wait = load.others * rho * (t_m * iu / p_m) / (2.0 * (1.0 - rho))
        in_flight = 1.5 if sched.async_scheduling else 0.5  # async: the rest of the step in flight and the next
        ttft = (load.replica.ttft_fixed_s + load.others * in_flight * t_d * min(d, 1.0) + wait + service
                + first_token_delay_s(r, decode_seqs=load.others * d + 1.0))
    else:
        ttft = math.inf
    running = d + x * service
    return State(decode_batch=d, requests_per_s=x, tpot_s=tau, ttft_s=ttft, ttft_service_s=service,
                 prefill_share=min(rho, 1.0), decode_step_s=t_d, mixed_step_s=t_m, running=running, valid=valid)


def _bisect(load: Load, below, hi: float) -> State:
    """The largest valid state with ``below(state)`` true, bisecting ``d`` in ``[0, hi]`` (``below`` false for
    invalid states; assumed monotone)."""
    lo_state = None
    lo, top = 0.0, hi
    st_hi = state(load, d=top)
    if st_hi.valid and below(st_hi):
        return st_hi
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (lo + top)
        st = state(load, d=mid)
        if st.valid and below(st):
            lo, lo_state = mid, st
        else:
            top = mid
        # relative in d: a short output or a light load runs a decode batch far below 1 (X = d / ((O - 1) tau)), and
        # an absolute step of 0.002 there left X at 0 and TPOT at 0 for light loads of 2-5 output tokens, and a
        # 1-token output (prefill only) at 0.12 req/s offline on an H100 where 2 tokens reached 49
        if top - lo <= 2e-3 * top:
            break
    return lo_state if lo_state is not None else state(load, d=lo)


def upper_batch(load: Load) -> float:
    """The largest decode batch the engine admits: ``min(max_running, budget)`` for mixed engines."""
    hi = load.max_running
    if load.schedule.mixed:
        hi = min(hi, load.schedule.budget_tokens - 1.0)
    return max(hi, 0.0)


def max_throughput(load: Load) -> State:
    """The valid state with the most requests per second (offline maximum; the open loop's saturation rate).

    ``X(d)`` rises with ``d`` until prompts no longer fit (``ρ → 1``) or the running cap; a 10-point scan then a
    local refinement finds the peak.
    """
    hi = upper_batch(load)
    edge = _bisect(load, lambda st: True, hi)  # the largest admissible batch
    best = edge
    top = max(edge.decode_batch, 1e-6)
    grid = [top * (i / 10.0) ** 2 for i in range(1, 10)]
    for d in grid:
        st = state(load, d=d)
        if st.valid and st.requests_per_s > best.requests_per_s:
            best = st
    if best is not edge:  # golden refinement around the grid maximum
        a, b = best.decode_batch * 0.8, min(best.decode_batch * 1.25, top)
        for _ in range(10):
            m1, m2 = a + 0.382 * (b - a), a + 0.618 * (b - a)
            s1, s2 = state(load, d=m1), state(load, d=m2)
            if (s1.requests_per_s if s1.valid else 0) >= (s2.requests_per_s if s2.valid else 0):
                b = m2
            else:
                a = m1
        st = state(load, d=0.5 * (a + b))
        if st.valid and st.requests_per_s > best.requests_per_s:
            best = st
    return best


def open_loop(load: Load, *, rate: float, peak: State | None = None) -> State | None:
    """The steady state at ``rate`` requests/s (Q5), ``None`` when the engine cannot sustain it (saturated).

    Bisects ``X(d) = rate`` over the admissible batches; only when that ends short of the rate is the maximum
    (:func:`max_throughput`) consulted, so an unsaturated load costs one bisection."""
    st = _bisect(load, lambda s: s.requests_per_s <= rate, upper_batch(load))
    if st.valid and st.requests_per_s >= rate * (1 - 1e-3):
        return st
    peak = peak or max_throughput(load)
    if rate >= peak.requests_per_s * (1 - 1e-9):
        return None
    return _bisect(load, lambda s: s.requests_per_s <= rate, peak.decode_batch)


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
    if n < clients * (1 - 1e-3) and st.requests_per_s > 0:  # capped: the rest wait to be admitted
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


@dataclass(frozen=True, kw_only=True)
class FiniteRun:
    """What a benchmark client reports for a finite open-loop run (:func:`finite_open_run`)."""

    ttft_s: float
    tpot_s: float
    duration_s: float
    requests_per_s: float
    peak_running: float
    peak_waiting: float
    mean_running: float = math.nan  # time-averaged running requests (trace replays)


def _stat(values: list[tuple[float, float]], stat: str) -> float:
    """The mean, or the (weighted) median for ``stat`` in (median, p50), of ``(value, weight)`` pairs.

    With whole-number weights (request counts) the median is numpy's of the expanded list, as the benchmark tools
    compute it (``np.median`` in ``vllm bench serve`` and ``sglang.bench_serving``, ``np.percentile(x, 50)`` in
    AccelMark's ``loadgen.py``): of an even count, the mean of the two middle values; otherwise the weighted lower
    median.

    >>> _stat([(1.0, 1), (2.0, 1), (4.0, 1), (10.0, 1)], "p50"), _stat([(1.0, 2), (3.0, 1)], "median")
    (3.0, 1.0)
    """
    total = sum(w for _, w in values)
    if total <= 0:
        return math.nan
    if stat not in ("median", "p50"):
        return sum(v * w for v, w in values) / total
    ordered = sorted(values)
    if MEDIAN_INTERPOLATED and all(float(w).is_integer() for _, w in values):
        lo, hi = (int(total) - 1) // 2, int(total) // 2  # 0-based positions of the middle element(s)
        picked: list[float] = []
        seen = 0
        for v, w in ordered:
            while len(picked) < 2 and seen + w > (lo, hi)[len(picked)]:
                picked.append(v)
            seen += int(w)
            if len(picked) == 2:
                return (picked[0] + picked[1]) / 2.0
    acc = 0.0
    for v, w in ordered:
        acc += w
        if acc >= total / 2:
            return v
    return values[-1][0]


MEDIAN_INTERPOLATED = True
"""Medians interpolated as numpy's (session 9): see :func:`_stat`."""


def finite_open_run(load: Load, *, rate: float, prompts: int, stat: str = "mean") -> FiniteRun:
    """A finite open-loop benchmark run (``vllm bench serve --request-rate λ --num-prompts n``, AccelMark's online
    suite), replayed step by step (Q8) as the one trace replay :func:`trace_open_run` with regular arrivals and
    constant lengths: request ``i`` arrives at ``i/λ`` (the Poisson mean spacing; all at 0 for ``λ = ∞``, an
    offline run) with ``I_u`` prompt tokens. The engine admits waiting requests while fewer than ``max_running``
    run; each step carries the decode batch and, as the engine schedules (:func:`engine_schedule`), up to
    ``budget − d`` prompt tokens FCFS (mixed engines) or a prefill-only step of whole prompts (SGLang, vLLM V0 without
    chunked prefill) whenever a prompt is admissible. A request's first token comes at the end of the step that
    finishes its prompt; its TPOT is the time of its ``O − 1`` decode steps over ``O − 1``; the duration runs from
    the first arrival to the last completion::

        TTFT_i = o_ttft + t(first token_i) − i/λ,   TPOT_i = (t(last)_i − t(first)_i)/(O − 1),   X = n / duration

    Past the steady-state capacity (where :func:`open_loop` answers *saturated*) the queue of a finite run grows
    only for ``n/λ`` seconds, so the client still measures finite latencies: the running batch fills to its cap,
    TPOT settles at the step time of a full batch and TTFT grows with the queue.

    >>> from planner.catalog import get_gpu, get_model
    >>> from planner.serving.calibration import DERIVED
    >>> from planner.serving.step import build_replica
    >>> r = build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), context_tokens=400, input_tokens=300,
    ...                   calibration=DERIVED)
    >>> s = engine_schedule("vllm", gpu_big=True, gpu_gib=79.6, max_position=131072)
    >>> run = finite_open_run(Load(replica=r, calibration=DERIVED, schedule=s, input_tokens=300, output_tokens=200,
    ...                            max_running=64), rate=200.0, prompts=300)
    >>> run.peak_running, run.peak_waiting > 100, run.ttft_s > 1.0
    (64, True, True)
    """
    n = max(int(prompts), 1)
    gap = 1.0 / rate if rate > 0 and math.isfinite(rate) else 0.0
    return trace_open_run(load, runs=[([i * gap for i in range(n)], [max(int(round(load.input_tokens)), 1)] * n)],
                          stat=stat)


TraceRun = tuple[list[float], list[int]] | tuple[list[float], list[int], list[int]]
"""One run of :func:`trace_open_run`: arrival times, prompt lengths and, optionally, output lengths."""


def trace_open_run(load: Load, *, runs: list[TraceRun], stat: str = "mean") -> FiniteRun:
    """The step-by-step replay of finite runs with given traces (Q8'; :func:`finite_open_run` is its regular case):
    each run ``(arrivals_s, input_tokens)`` starts on an idle engine; its request ``i`` arrives at ``arrivals_s[i]``
    (ascending) with a prompt of ``input_tokens[i]`` tokens; every
    request generates ``load.output_tokens`` tokens, or, where a run is given as ``(arrivals_s, input_tokens,
    output_tokens)``, its own ``output_tokens[i]`` (a harness's recorded lengths: dstack's ShareGPT runs,
    :func:`planner.serving.accuracy.dstack_sharegpt_trace`; a request of 0 or 1 tokens finishes with its prefill
    and has no TPOT, as ``benchmark_serving`` counts it). The statistic pools the requests of all runs (AccelMark's p50s
    pool its ``num_runs`` runs); the duration and throughput are the runs' mean. This replays a
    harness whose arrival times and prompt lengths are known (AccelMark's online scenario: Poisson gaps from
    ``random.Random(42).expovariate`` over the first requests of its dataset,
    :func:`planner.serving.accuracy.harness_trace`). The engine admits arrived requests FCFS while fewer than
    ``max_running`` run; a step carries the decode batch and prompt tokens FCFS up to ``budget − d`` (mixed engines:
    whole prompts, then a chunk of the next) or a prefill-only step of whole prompts (the first chunked at the budget
    if it does not fit) on prefill-first engines, timed by :func:`planner.serving.step.step_time_s`::

        TTFT_i = o_ttft + t(step finishing prompt i) − a_i,   TPOT_i = (t(last)_i − t(first)_i)/(O − 1),
        X = n / (t(last completion) − 0)

    Decode-only stretches are advanced to the next arrival or completion in one jump.

    >>> from planner.catalog import get_gpu, get_model
    >>> from planner.serving.calibration import DERIVED
    >>> from planner.serving.step import build_replica
    >>> r = build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), context_tokens=400, input_tokens=300,
    ...                   calibration=DERIVED)
    >>> s = engine_schedule("vllm", gpu_big=True, gpu_gib=79.6, max_position=131072)
    >>> load = Load(replica=r, calibration=DERIVED, schedule=s, input_tokens=300, output_tokens=200, max_running=64)
    >>> even = finite_open_run(load, rate=200.0, prompts=300)
    >>> same = trace_open_run(load, runs=[([i / 200.0 for i in range(300)], [300] * 300)])
    >>> round(same.ttft_s / even.ttft_s, 2), same.peak_running
    (1.0, 64)
    """
    if not runs:
        raise ValueError("trace_open_run needs at least one run")
    ttfts: list[tuple[float, float]] = []
    tpots: list[tuple[float, float]] = []
    durations, peaks_r, peaks_w, counts, areas = [], [], [], [], []
    for run in runs:  # (arrivals, prompts) or (arrivals, prompts, outputs): a run's recorded output lengths
        arrivals_s, input_tokens = run[0], run[1]
        outputs = list(run[2]) if len(run) > 2 else None
        dur, pr, pw, area = _replay_trace(load, list(arrivals_s), input_tokens, ttfts, tpots, outputs=outputs)
        durations.append(dur)
        peaks_r.append(pr)
        peaks_w.append(pw)
        areas.append(area)
        counts.append(len(arrivals_s))
    duration = sum(durations) / len(durations)
    total = max(sum(durations), 1e-12)
    return FiniteRun(ttft_s=_stat(ttfts, stat), tpot_s=_stat(tpots, stat) if tpots else 0.0, duration_s=duration,
                     requests_per_s=sum(counts) / total, peak_running=max(peaks_r), peak_waiting=max(peaks_w),
                     mean_running=sum(areas) / total)


def trace_closed_run(load: Load, *, clients: int, input_tokens: list[int], output_tokens: list[int],
                     stat: str = "mean") -> FiniteRun:
    """A finite closed-loop run with known request lengths (Q8''): ``clients`` clients (``--max-concurrency N``)
    send the requests in order; the first ``N`` start together at 0 and each completion starts the next request at
    once (``sglang.bench_serving`` and ``vllm bench serve`` create every request task up front behind one
    ``asyncio.Semaphore(N)``, which wakes waiters FIFO). Request ``i`` has ``input_tokens[i]`` uncached prompt tokens
    and generates ``output_tokens[i]`` tokens (``ignore_eos``). The step-by-step replay is :func:`trace_open_run`'s,
    with the arrival of request ``N + k`` set to the ``k``-th completion::

        a_i = 0 (i < N),   a_{N+k} = t(k-th completion),   TTFT_i = o_ttft + t(first token_i) − a_i,
        TPOT_i = (t(last)_i − t(first)_i)/(O_i − 1) for O_i > 1,   X = n / t(last completion)

    With equal lengths (:func:`planner.serving.api.uniform_lengths`) this is what ``performance(...,
    concurrency=N, num_prompts=P)`` answers for any finite closed-loop run.

    >>> from planner.catalog import get_gpu, get_model
    >>> from planner.serving.calibration import DERIVED
    >>> from planner.serving.step import build_replica
    >>> r = build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), context_tokens=400, input_tokens=300,
    ...                   calibration=DERIVED)
    >>> s = engine_schedule("vllm", gpu_big=True, gpu_gib=79.6, max_position=131072)
    >>> load = Load(replica=r, calibration=DERIVED, schedule=s, input_tokens=300, output_tokens=200, max_running=64)
    >>> run = trace_closed_run(load, clients=8, input_tokens=[300] * 40, output_tokens=[200] * 40)
    >>> run.peak_running, run.peak_waiting
    (8, 0)
    """
    n = len(input_tokens)
    if n == 0 or len(output_tokens) != n:
        raise ValueError("input_tokens and output_tokens must be non-empty and of equal length")
    ttfts: list[tuple[float, float]] = []
    tpots: list[tuple[float, float]] = []
    dur, pr, pw, area = _replay_trace(load, [], input_tokens, ttfts, tpots, outputs=output_tokens,
                                      clients=max(int(clients), 1))
    return FiniteRun(ttft_s=_stat(ttfts, stat), tpot_s=_stat(tpots, stat) if tpots else 0.0, duration_s=dur,
                     requests_per_s=n / dur, peak_running=pr, peak_waiting=pw, mean_running=area / dur)


KV_ADMISSION = True
"""vLLM V0's prompt-only KV admission with preemption in the step-by-step replays (:func:`_replay_trace_kv`), where
the load knows its KV cache (``Load.kv_tokens``); off, every replay caps the running requests at ``max_running``
(``KV / (I + O)``, a reservation of each request's final length)."""

KV_WATERMARK = 0.01
"""vLLM V0's ``BlockSpaceManager`` watermark (``watermark=0.01``): a prompt is admitted only while the free KV
blocks less its own stay above 1% of the cache."""


def _replay_setup(load: Load, arrivals_s: list[float], input_tokens: list[int], clients: int | None
                  ) -> tuple[list[float], int, list[int], Callable[[int, int, int], float]]:
    """What both replays start from: the arrival times (a closed loop's first ``clients`` requests at 0, the rest
    released as requests finish), how many are released, the prompts' lengths (at least one token) and the step
    time of ``(decode sequences, prefill tokens, prefill sequences)``, each distinct step computed once."""
    n = len(input_tokens)
    released = 0
    if clients is not None:
        arrivals_s = [0.0] * min(clients, n) + [math.inf] * max(n - clients, 0)
        released = min(clients, n)
    if n == 0 or len(arrivals_s) != n:
        raise ValueError("arrivals_s and input_tokens must be non-empty and of equal length")
    r, cal = load.replica, load.calibration
    memo: dict[tuple[int, int, int], float] = {}

    def step(d: int, p: int, k: int) -> float:
        key = (d, p, k)
        if key not in memo:
            memo[key] = step_time_s(r, cal, decode_seqs=float(d), prefill_tokens=float(p), prefill_seqs=float(k))
        return memo[key]

    return arrivals_s, released, [max(int(x), 1) for x in input_tokens], step


def _replay_trace(load: Load, arrivals_s: list[float], input_tokens: list[int], ttfts: list[tuple[float, float]],
                  tpots: list[tuple[float, float]], *, outputs: list[int] | None = None,
                  clients: int | None = None) -> tuple[float, int, int, float]:
    """One run of :func:`trace_open_run` (or, with ``clients``, of :func:`trace_closed_run`, ``arrivals_s``
    ignored): appends its requests' ``(TTFT, 1)`` and ``(TPOT, count)`` pairs and returns
    ``(duration, peak running, peak waiting, ∫ running dt)``. ``outputs``: per-request output tokens (default
    ``load.output_tokens`` for all)."""
    r, sched = load.replica, load.schedule
    if KV_ADMISSION and load.kv_tokens and r.engine == "vllm-v0" and not sched.mixed:
        return _replay_trace_kv(load, arrivals_s, input_tokens, ttfts, tpots, outputs=outputs, clients=clients)
    if KV_ADMISSION_V1 and load.kv_tokens and r.engine == "vllm" and sched.mixed:
        return _replay_trace_kv_v1(load, arrivals_s, input_tokens, ttfts, tpots, outputs=outputs, clients=clients)
    n = len(input_tokens)
    arrivals_s, released, lens, step = _replay_setup(load, arrivals_s, input_tokens, clients)
    o1 = max(int(round(load.output_tokens)) - 1, 0)
    o1s = [max(int(x) - 1, 0) for x in outputs] if outputs is not None else None
    cap = max(int(load.max_running), 1)
    budget = max(int(sched.budget_tokens), 1)

    t = 0.0
    arrived = admitted = done_prefill = 0
    prefill_left = lens[0]  # prompt tokens left of request `done_prefill`
    decode = dstep = completed = 0
    # (decode step, order, count, first-token time, decode steps): a heap, ascending by finishing step
    finishing: list[tuple[int, int, int, float, int]] = []
    order = 0
    peak_running = peak_waiting = 0
    area = 0.0
    o_ttft = r.ttft_fixed_s
    guard = 0
    # async scheduling: the step that starts at t was scheduled when the step before it started (``busy_from``), so
    # only requests that had arrived by then are in it; an idle engine schedules at once (busy_from None)
    lag = sched.async_scheduling
    busy_from: float | None = None
    while completed < n and guard < 4_000_000:
        guard += 1
        cut = busy_from if (lag and busy_from is not None) else t
        while arrived < n and arrivals_s[arrived] <= cut + 1e-12:
            arrived += 1
        running = decode + (admitted - done_prefill)
        admissible = min(arrived - admitted, cap - running)
        if admissible > 0:
            admitted += admissible
            running += admissible
        peak_running = max(peak_running, running)
        peak_waiting = max(peak_waiting, arrived - admitted)
        pending = admitted - done_prefill
        if pending == 0 and decode == 0:
            if arrived >= n:
                break
            if lag and busy_from is not None and arrivals_s[arrived] <= t + 1e-12:
                busy_from = None  # the engine has gone idle with an arrival waiting: it is scheduled now
                continue
            t = max(t, arrivals_s[arrived])
            busy_from = None
            continue
        room = (budget - decode if sched.mixed else budget) if pending else 0
        p_tokens, finished = 0, 0
        j, left = done_prefill, prefill_left
        while room > 0 and j < admitted:
            if left <= room:
                room -= left
                p_tokens += left
                finished += 1
                j += 1
                left = lens[j] if j < n else 0
            elif sched.mixed or j == done_prefill:  # a chunk: of the oldest prompt, or of the next on mixed engines
                p_tokens += room
                left -= room
                room = 0
            else:
                break
        if p_tokens == 0:  # a decode-only stretch: jump to the next completion or arrival
            nxt = finishing[0][0] if finishing else dstep + 1
            dt = step(decode, 0, 0)
            k = max(nxt - dstep, 1)
            if arrived < n and math.isfinite(arrivals_s[arrived]):
                k = min(k, max(1, math.ceil((arrivals_s[arrived] - t) / dt - 1e-9)))
            busy_from = t + (k - 1) * dt
            t += k * dt
            area += running * k * dt
            dstep += k
        else:
            d_now = decode if sched.mixed else 0
            dt = step(d_now, p_tokens, finished)
            busy_from = t
            t += dt
            area += running * dt
            if d_now:
                dstep += 1
        while finishing and finishing[0][0] <= dstep:
            _, _, count, first, steps = heapq.heappop(finishing)
            if steps:
                tpots.append(((t - first) / steps, float(count)))
            decode -= count
            completed += count
            if clients is not None:
                for _ in range(count):
                    if released < n:
                        arrivals_s[released] = t
                        released += 1
        if finished:
            after = decode + sum(1 for i in range(done_prefill, j) if (o1s[i] if o1s is not None else o1) > 0)
            delay = first_token_delay_s(r, decode_seqs=after)
            ttfts.extend((o_ttft + t + delay - arrivals_s[i], 1.0) for i in range(done_prefill, j))
            if o1s is None:
                groups = [(o1, finished)]
            else:
                groups = [(o1s[i], 1) for i in range(done_prefill, j)]
            for steps, count in groups:
                if steps == 0:
                    completed += count
                    if clients is not None:
                        for _ in range(count):
                            if released < n:
                                arrivals_s[released] = t
                                released += 1
                else:
                    decode += count
                    heapq.heappush(finishing, (dstep + steps, order, count, t, steps))
                    order += 1
            done_prefill = j
        prefill_left = left
    return max(t, 1e-12), peak_running, peak_waiting, area


def _replay_trace_kv(load: Load, arrivals_s: list[float], input_tokens: list[int],
                     ttfts: list[tuple[float, float]], tpots: list[tuple[float, float]], *,
                     outputs: list[int] | None = None, clients: int | None = None) -> tuple[float, int, int, float]:
    """:func:`_replay_trace` for vLLM V0 without chunked prefill, with its KV admission and preemption
    (``Scheduler._schedule_default``, ``BlockSpaceManager``, RECOMPUTE preemption), request by request:

    - prefill first: while requests wait, a step takes whole prompts FCFS from the head of the waiting queue while
      they fit the token budget, fewer than ``max_num_seqs`` run and the prompt fits the free KV less the watermark
      (``can_allocate``: ``free − blocks(prompt) ≥ 1%`` of the cache, :data:`KV_WATERMARK`); the head is chunked at
      the budget if it alone exceeds it; the step stalls decoding. A request holds its prompt's KV from admission;
    - otherwise a decode step: each running request adds one token; when the running requests' next tokens do not
      fit, the most recently admitted running request is preempted (``_preempt``, RECOMPUTE: its KV freed, put back
      at the head of the waiting queue) until they do. A preempted request is prefilled again with its prompt and
      the tokens it had generated; that step samples its next token;
    - a request's first token and TPOT as in :func:`_replay_trace` (its TPOT spans any preemption).

    KV per request in tokens (prompt + generated); block rounding is left out. ``load.max_running`` (the
    ``KV/(I + O)`` cap) is not used: ``max_num_seqs`` and the KV in use bound the batch::

        admit the head  while  KV_free − I_head ≥ 0.01·KV  and  running < max_num_seqs
        preempt the last admitted  while  Σ_running (I_j + g_j) + running > KV

    Worked example (``tests/test_serving_trace.py`` follows it step by step): three 40-token prompts at 0, 11 output
    tokens each, a 90-token cache. Two prompts fit (80 + 40 > 90 − 0.9), so the first step prefills 80 tokens and
    five decode steps of two fill the cache (90); the second request is preempted (45 tokens freed), the first
    finishes after five steps of one, a prefill step of 85 tokens recomputes the second (40 + 5) and admits the third,
    two steps of two fill the cache again, the third is preempted, the second finishes, and the third is recomputed
    (40 + 2) and finishes after seven steps: at most two requests run, and the run takes 21 decode and 3 prefill
    steps (181.6 ms on one H100 with the derived constants).

    >>> from planner.catalog import get_gpu, get_model
    >>> from planner.serving.calibration import DERIVED
    >>> from planner.serving.step import build_replica
    >>> r = build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), context_tokens=45, input_tokens=40,
    ...                   engine="vllm-v0", calibration=DERIVED)
    >>> s = EngineSchedule(engine="vllm-v0", budget_tokens=4096, max_num_seqs=256, mixed=False, source="doc")
    >>> load = Load(replica=r, calibration=DERIVED, schedule=s, input_tokens=40, output_tokens=11, max_running=256,
    ...             kv_tokens=90)
    >>> duration, peak_running, _, _ = _replay_trace(load, [0.0] * 3, [40] * 3, [], [])
    >>> peak_running, round(duration * 1e3, 1)
    (2, 181.6)
    """
    import collections

    r, sched = load.replica, load.schedule
    n = len(input_tokens)
    arrivals_s, released, lens, step = _replay_setup(load, arrivals_s, input_tokens, clients)
    steps_of = [max(int(x) - 1, 0) for x in outputs] if outputs is not None else \
        [max(int(round(load.output_tokens)) - 1, 0)] * n
    kv_cap = float(load.kv_tokens or 0.0)
    free_floor = KV_WATERMARK * kv_cap
    seq_cap = max(int(sched.max_num_seqs), 1)
    budget = max(int(sched.budget_tokens), 1)

    gen = [0] * n  # decode steps done (tokens after the first)
    first = [math.nan] * n
    waiting: collections.deque[int] = collections.deque()
    prefill_left: dict[int, int] = {}  # request -> prompt (+ recomputed) tokens still to prefill
    running: list[int] = []  # decoding requests in admission order
    admitted_order: list[int] = []  # admitted, not yet decoding (being prefilled), in order
    kv_used = 0.0
    t = 0.0
    arrived = completed = 0
    peak_running = peak_waiting = 0
    area = 0.0
    o_ttft = r.ttft_fixed_s
    guard = 0

    def finish(i: int) -> None:
        nonlocal completed, released
        completed += 1
        if steps_of[i]:
            tpots.append(((t - first[i]) / steps_of[i], 1.0))
        if clients is not None and released < n:
            arrivals_s[released] = t
            released += 1

    def prefilled(i: int, delay: float) -> None:
        """Request ``i``'s prompt is in after the step ending at ``t``: its first token (a recomputed request's
        next one), then it finishes or decodes."""
        nonlocal kv_used
        if math.isnan(first[i]):
            first[i] = t  # TPOT runs from the step's end: the last token is delayed alike
            ttfts.append((o_ttft + t + delay - arrivals_s[i], 1.0))
        else:  # a recomputed request: this step samples its next token
            gen[i] += 1
            kv_used += 1
        if gen[i] >= steps_of[i]:
            kv_used -= lens[i] + gen[i]
            finish(i)
        else:
            running.append(i)

    while completed < n and guard < 4_000_000:
        guard += 1
        while arrived < n and arrivals_s[arrived] <= t + 1e-12:
            waiting.append(arrived)
            prefill_left[arrived] = lens[arrived]
            arrived += 1
        peak_waiting = max(peak_waiting, len(waiting))
        # prefill step: admit from the head of the queue (budget, sequences, KV less the watermark)
        chosen: list[int] = []
        room, p_tokens = budget, 0
        chunk_only = False
        held = kv_used
        for i in waiting:
            need = prefill_left[i]
            if len(running) + len(admitted_order) + len(chosen) + 1 > seq_cap:
                break
            if kv_cap - held - need < free_floor and (chosen or running or admitted_order):
                break  # (an idle engine takes the head anyway: a prompt beyond the cache would stall the replay)
            held += need
            if need > room:
                if not chosen:  # the head alone exceeds the budget: a chunk of it
                    chosen.append(i)
                    p_tokens = room
                    chunk_only = True
                break
            chosen.append(i)
            room -= need
            p_tokens += need
        if chosen:
            for _ in chosen:
                waiting.popleft()
            kv_used += sum(prefill_left[i] for i in chosen)  # the prompt's blocks, allocated at admission
            done = chosen if not chunk_only else []
            if chunk_only:
                prefill_left[chosen[0]] -= p_tokens
                admitted_order.append(chosen[0])
            dt = step(0, p_tokens, len(done))
            running_now = len(running) + len(admitted_order) + len(done)
            t += dt
            area += running_now * dt
            peak_running = max(peak_running, running_now)
            if chunk_only:
                continue
            newly = [i for i in done]
            for i in list(admitted_order):  # a chunked head finished earlier in this scheme is in `done`
                if i in done:
                    admitted_order.remove(i)
            after = len(running) + sum(1 for i in newly if steps_of[i] > gen[i])
            delay = first_token_delay_s(r, decode_seqs=after)
            for i in newly:
                prefill_left[i] = 0
                prefilled(i, delay)
            continue
        if admitted_order:  # a chunked head continues (it holds its KV already)
            i = admitted_order[0]
            part = min(prefill_left[i], budget)
            prefill_left[i] -= part
            dt = step(0, part, 1 if prefill_left[i] == 0 else 0)
            t += dt
            area += (len(running) + len(admitted_order)) * dt
            if prefill_left[i] == 0:
                admitted_order.pop(0)
                prefilled(i, first_token_delay_s(r, decode_seqs=len(running) + 1))
            continue
        if not running:
            if arrived >= n:
                break
            t = max(t, arrivals_s[arrived])
            continue
        # decode: every running request needs one more token; preempt the latest admitted while they do not fit
        while running and kv_used + len(running) > kv_cap:
            v = running.pop()
            kv_used -= lens[v] + gen[v]
            prefill_left[v] = lens[v] + gen[v]
            waiting.appendleft(v)
        if not running:
            continue
        d = len(running)
        dt = step(d, 0, 0)
        k = min(steps_of[i] - gen[i] for i in running)
        k = min(k, max(int((kv_cap - kv_used) // d), 1))  # (a waiting head that did not fit waits for a completion)
        if arrived < n and math.isfinite(arrivals_s[arrived]):
            k = min(k, max(1, math.ceil((arrivals_s[arrived] - t) / dt - 1e-9)))
        k = max(k, 1)
        t += k * dt
        area += d * k * dt
        peak_running = max(peak_running, d)
        kv_used += k * d
        for i in running:
            gen[i] += k
        still = []
        for i in running:
            if gen[i] >= steps_of[i]:
                kv_used -= lens[i] + gen[i]
                finish(i)
            else:
                still.append(i)
        running = still
    return max(t, 1e-12), peak_running, peak_waiting, area


KV_ADMISSION_V1 = True
"""vLLM V1's token-level KV admission with preemption in the step-by-step replays (:func:`_replay_trace_kv_v1`,
session 12, latency14), where the load knows its KV cache; off, a V1 replay caps the running requests at
``max_running`` (``KV / (I + O)``)."""

V1_PREEMPTED_BLOCKS_CACHED = True
"""vLLM V1's prefix cache (on by default) in :func:`_replay_trace_kv_v1`: a preempted request's full blocks keep
their hashes in the free queue until reused, and its next admission takes back those not evicted; off, a preempted
request recomputes from its first token."""

V1_BLOCK_TOKENS = 16
"""vLLM V1's KV block size in tokens (``CacheConfig.block_size``, 16 by default on CUDA and ROCm):
``KVCacheManager.allocate_slots`` allocates whole blocks."""


def _replay_trace_kv_v1(load: Load, arrivals_s: list[float], input_tokens: list[int],
                        ttfts: list[tuple[float, float]], tpots: list[tuple[float, float]], *,
                        outputs: list[int] | None = None, clients: int | None = None) -> tuple[float, int, int, float]:
    """:func:`_replay_trace` for vLLM V1 with its KV admission and preemption (``Scheduler.schedule`` in
    ``vllm/v1/core/sched/scheduler.py``, ``KVCacheManager.allocate_slots``; FCFS policy; the prefix cache for a
    request's own blocks only), step by step. A request holds the blocks of the tokens it has computed; each step,
    within ``max_num_batched_tokens``:

    - the running requests in order ask for the tokens they lack (``num_tokens − num_computed_tokens``: one when
      decoding, the rest of the prompt, or of a recomputed prompt and its outputs, at most the budget left); when
      their blocks exceed the free blocks (no watermark), the last running request is preempted (RECOMPUTE: its
      blocks freed, its computed tokens 0, back at the head of the waiting queue) until they fit, or the request
      itself was the one preempted, which ends the running pass;
    - only if no request was preempted in this step, waiting requests are admitted FCFS while budget is left, fewer
      than ``max_num_seqs`` run and the blocks of their first chunk (at most the budget left) fit;
    - a request whose tokens are all computed samples one (its first is its TTFT; a recomputed request's next one);
      it finishes at its output count. TTFT, TPOT and async scheduling's late admission as in :func:`_replay_trace`.

    KV in blocks of :data:`V1_BLOCK_TOKENS`; ``load.max_running`` is not used. When any ``max_num_seqs`` of the
    requests fit the cache whole, none is ever preempted or held back by KV, and the replay is
    :func:`_replay_trace`'s with ``max_num_seqs`` as the cap (the same steps, faster)::

        admit the head  while  blocks(first chunk) ≤ free  and  running < max_num_seqs  and  nothing preempted
        preempt the last running  while  blocks(c_i + n_i) − held_i > free   (request i asking for n_i tokens)

    With :data:`V1_PREEMPTED_BLOCKS_CACHED` (V1's prefix cache, on by default) the free blocks are a queue
    (``BlockPool.free_blocks``): allocation takes the head; a freed request's full (hashed) blocks join the tail, its
    last block first, and its partial block the head; a preempted request admitted again takes back its leading full
    blocks still in the queue as computed tokens (at most ``num_tokens − 1``; they count against the free blocks, as
    in ``allocate_slots``). Prompts of different requests share no prefix here.

    Worked example (``tests/test_serving_kv_v1.py`` follows it step by step): three 40-token prompts at 0, 11 output
    tokens each, 64-token steps, a cache of 6 blocks (96 tokens). Step 1 takes prompt 0 (3 blocks) and a 24-token
    chunk of prompt 1 (2 blocks); step 2 decodes request 0 and finishes prompt 1 (its third block: the cache is
    full; prompt 2 waits); seven steps of two decodes fill the blocks (48 and 47 tokens); request 0's 49th token
    needs a fourth block, so request 1 is preempted (its two full blocks stay cached); request 0 finishes after two
    steps of one; one step re-admits request 1 (32 tokens cached, 16 recomputed, its 9th token sampled) and prompt 2
    whole; request 1's 49th token preempts request 2 (two full blocks cached), request 1 finishes after two steps of
    one, and request 2 is re-admitted (32 tokens cached, 9 computed) and decodes nine steps: at most two requests
    run, the run takes 24 steps (158.6 ms on one H100 with the derived constants).

    >>> from planner.catalog import get_gpu, get_model
    >>> from planner.serving.calibration import DERIVED
    >>> from planner.serving.step import build_replica
    >>> r = build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), context_tokens=45, input_tokens=40,
    ...                   calibration=DERIVED)
    >>> s = EngineSchedule(engine="vllm", budget_tokens=64, max_num_seqs=256, mixed=True, source="doc")
    >>> load = Load(replica=r, calibration=DERIVED, schedule=s, input_tokens=40, output_tokens=11, max_running=256,
    ...             kv_tokens=96)
    >>> duration, peak_running, _, _ = _replay_trace(load, [0.0] * 3, [40] * 3, [], [])
    >>> peak_running, round(duration * 1e3, 1)
    (2, 158.6)
    """
    import collections

    r, sched = load.replica, load.schedule
    n = len(input_tokens)
    outs = [max(int(x), 1) for x in outputs] if outputs is not None else [max(int(round(load.output_tokens)), 1)] * n
    bs = V1_BLOCK_TOKENS
    free = int(float(load.kv_tokens or 0.0) // bs)
    seq_cap = max(int(sched.max_num_seqs), 1)
    sizes = sorted((-(-(max(int(x), 1) + o) // bs) for x, o in zip(input_tokens, outs)), reverse=True)
    if sum(sizes[:seq_cap]) <= free:  # the cache holds any max_num_seqs requests whole: nothing is ever preempted
        return _replay_trace(dataclasses.replace(load, max_running=float(seq_cap), kv_tokens=None), arrivals_s,
                             input_tokens, ttfts, tpots, outputs=outputs, clients=clients)
    arrivals_s, released, lens, step = _replay_setup(load, arrivals_s, input_tokens, clients)
    budget = max(int(sched.budget_tokens), 1)

    sampled = [0] * n  # tokens sampled so far (the first is the first token)
    computed = [0] * n  # tokens whose KV is computed
    held = [0] * n  # blocks held
    first = [math.nan] * n
    waiting: collections.deque[int] = collections.deque()
    running: list[int] = []  # in admission order
    t = 0.0
    arrived = completed = 0
    peak_running = peak_waiting = 0
    area = 0.0
    o_ttft = r.ttft_fixed_s
    lag = sched.async_scheduling
    busy_from: float | None = None
    guard = 0

    def blocks(tokens: int) -> int:
        return -(-tokens // bs)

    # the free blocks, a queue of [owner, count] runs (owner −1: blocks nobody asks for again); allocation takes from
    # the head; a freed request's full (hashed) blocks join the tail, its last first, its partial block the head
    queue: collections.deque[list[int]] = collections.deque([[-1, free]])
    cached = [0] * n  # a preempted request's leading blocks still in the queue

    def take(m: int) -> None:
        nonlocal free
        free -= m
        while m > 0 and queue:
            head = queue[0]
            got = min(m, head[1])
            head[1] -= got
            m -= got
            if head[0] >= 0:
                cached[head[0]] -= got
            if head[1] == 0:
                queue.popleft()

    def give(v: int, count: int, full: int, keep: bool) -> None:
        """Free ``count`` blocks of request ``v``, ``full`` of them hashed (kept as ``v``'s when ``keep``)."""
        nonlocal free
        free += count
        bare = count - full
        if bare > 0:  # unhashed: at the head, reused first (``prepend_n``)
            if queue and queue[0][0] < 0:
                queue[0][1] += bare
            else:
                queue.appendleft([-1, bare])
        owner = v if keep else -1
        if full > 0:
            if owner < 0 and queue and queue[-1][0] < 0:
                queue[-1][1] += full
            else:
                queue.append([owner, full])
        if keep and full > 0:
            cached[v] = full

    def reclaim(v: int, count: int) -> None:
        """Request ``v`` takes ``count`` of its leading cached blocks back out of the queue; the rest are orphans."""
        nonlocal free
        for seg in queue:
            if seg[0] == v:
                seg[0] = -1
                seg[1] -= count
                break
        free -= count
        cached[v] = 0

    def preempt(v: int) -> None:
        give(v, held[v], min(computed[v] // bs, held[v]), V1_PREEMPTED_BLOCKS_CACHED)
        held[v] = computed[v] = 0
        waiting.appendleft(v)

    while completed < n and guard < 4_000_000:
        guard += 1
        cut = busy_from if (lag and busy_from is not None) else t
        while arrived < n and arrivals_s[arrived] <= cut + 1e-12:
            waiting.append(arrived)
            arrived += 1
        peak_waiting = max(peak_waiting, len(waiting))
        if not running and not waiting:
            if arrived >= n:
                break
            if lag and busy_from is not None and arrivals_s[arrived] <= t + 1e-12:
                busy_from = None  # the engine has gone idle with an arrival waiting: it is scheduled now
                continue
            t = max(t, arrivals_s[arrived])
            busy_from = None
            continue
        room = budget
        plan: list[tuple[int, int]] = []  # (request, tokens scheduled)
        preempted = False
        idx = 0
        while idx < len(running) and room > 0:  # the running requests first
            i = running[idx]
            want = min(lens[i] + sampled[i] - computed[i], room)
            extra = blocks(computed[i] + want) - held[i]
            while extra > free and running[-1] != i:
                preempt(running.pop())
                preempted = True
            if extra > free and len(running) > 1:  # the request itself is the last: preempted, the pass ends
                preempt(running.pop())
                preempted = True
                break
            take(extra)  # (a lone request beyond the cache is let through: it would stall the replay)
            held[i] += extra
            plan.append((i, want))
            room -= want
            idx += 1
        if not preempted:  # then the waiting ones, FCFS, by the blocks of their first chunk
            while waiting and room > 0 and len(running) < seq_cap:
                h = waiting[0]
                hit = min(cached[h], (lens[h] + sampled[h] - 1) // bs)  # its own blocks still cached (not all)
                want = min(lens[h] + sampled[h] - hit * bs, room)
                need = blocks(hit * bs + want)  # the cached blocks count against the free ones, as they are in it
                if need > free and running:
                    break
                waiting.popleft()
                if cached[h]:
                    reclaim(h, hit)
                computed[h] = hit * bs
                take(need - hit)
                held[h] = need
                running.append(h)
                plan.append((h, want))
                room -= want
        peak_running = max(peak_running, len(running))
        if not plan:
            continue
        # a decoding request computes its last sampled token; the others carry prompt (or recomputed) tokens
        decoding = [i for i, want in plan if want == 1 and sampled[i] and computed[i] + 1 == lens[i] + sampled[i]]
        dec = set(decoding)
        p_tokens = sum(want for i, want in plan if i not in dec)
        finishing = sum(1 for i, want in plan if i not in dec and computed[i] + want == lens[i] + sampled[i])
        d = len(decoding)
        dt = step(d, p_tokens, finishing)
        k = 1
        if p_tokens == 0 and not preempted:  # a decode-only stretch: to the next completion, arrival or new block
            k = min(outs[i] - sampled[i] for i in decoding)
            if arrived < n and math.isfinite(arrivals_s[arrived]):
                k = min(k, max(1, math.ceil((arrivals_s[arrived] - t) / dt - 1e-9)))
            lo, hi = 1, max(k, 1)  # the largest k whose new blocks fit the free ones
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if sum(blocks(computed[i] + mid) - held[i] for i in decoding) <= free:
                    lo = mid
                else:
                    hi = mid - 1
            k = lo
            for i in decoding:
                grow = blocks(computed[i] + k) - held[i]
                take(grow)
                held[i] += grow
        busy_from = t + (k - 1) * dt
        t += k * dt
        area += len(running) * k * dt
        for i, want in plan:
            computed[i] += want * k
            if computed[i] < lens[i] + sampled[i]:
                continue  # a chunk
            sampled[i] += k
            if sampled[i] == k and math.isnan(first[i]):  # (k is 1 after a prompt)
                first[i] = t
                ttfts.append((o_ttft + t + first_token_delay_s(r, decode_seqs=len(running)) - arrivals_s[i], 1.0))
            if sampled[i] >= outs[i]:
                give(i, held[i], min(computed[i] // bs, held[i]), False)
                held[i] = 0
                running.remove(i)
                completed += 1
                if outs[i] > 1:
                    tpots.append(((t - first[i]) / (outs[i] - 1), 1.0))
                if clients is not None and released < n:
                    arrivals_s[released] = t
                    released += 1
    return max(t, 1e-12), peak_running, peak_waiting, area
