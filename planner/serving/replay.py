"""Finite benchmark runs replayed step by step (pure; formulas Q7-Q8'' of docs/serving.md): what a benchmark client
measures when its run is short or past capacity, so the steady state of :mod:`planner.serving.schedule` does not
hold. A run of given arrivals and prompt lengths (:func:`trace_open_run`; a Poisson run, :func:`finite_open_run`; N
clients, :func:`trace_closed_run`) goes through the engine's scheduler one step at a time, each step costing
:func:`planner.serving.step.step_time_s`:

- with the running batch capped at ``KV / (I + O)`` and ``max_num_seqs`` (:func:`_replay_trace`), or
- with the engine's own KV admission and preemption where the cache binds: vLLM V0 without chunked prefill
  (:func:`_replay_trace_kv`: whole prompts, the 1 % watermark, RECOMPUTE preemption) and vLLM V1
  (:func:`_replay_trace_kv_v1`: 16-token blocks per step, chunked prefill, preempted requests' full blocks kept in the
  prefix cache).

The benchmark's statistic (mean or median) of each request's TTFT and TPOT is reported as the tools compute it.
"""

from __future__ import annotations

import bisect
import dataclasses
import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass

from planner.serving.schedule import EngineSchedule, Load, engine_schedule, first_token_delay_s  # noqa: F401 (doctests)
from planner.serving.step import Replica, launch_layers, step_parts, step_time_s


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

SGLANG_BURST_SPLIT = True
"""SGLang's overlap loop with a burst (Q8b; session 14, latency22, docs/serving.md; kept by its rule): in
:func:`_replay_trace`, an idle SGLang engine starts its first prompt step with the first of the requests that arrived
together (the rest enter the next step), and a prompt step's first tokens followed by another eager prompt step leave
after that step's launch (:func:`next_launch_wait_s`). Off: an idle engine takes every arrived request into one step
and Q4' is the next step's fixed host part alone.

Read from SGLang 0.5.6 (``sglang-0.5.6-py3-none-any.whl``): ``Scheduler.event_loop_overlap`` polls
``recv_requests`` (``zmq.NOBLOCK``) and ``get_new_batch_prefill`` batches whatever waits, with no minimum, so the
first request of a burst to reach an idle scheduler is prefilled alone; its step runs without a CUDA graph and is
launched on the scheduler's thread, while the rest of the burst (sent one ZMQ message per request by the
``TokenizerManager``) queues for the next prompt step; ``SGLANG_DISABLE_CONSECUTIVE_PREFILL_OVERLAP`` (False,
``srt/environ.py``) keeps ``process_batch_result`` of a prompt step after the next step's launch. Worked example
(``tests/test_serving_burst.py``): three clients' 100-token prompts at 0, prompt steps of 50 ms (40 ms GPU part),
``F`` = 40 ms, Q4' 2 ms, ``o_ttft`` 5 ms: TTFTs 97, 107 and 107 ms (off: 57 ms each)."""


def next_launch_wait_s(r: Replica, *, body_s: float, eager_floor_s: float) -> float:
    """How much longer a prompt step's first tokens wait when the next step also carries prompt tokens without a
    CUDA graph (:data:`SGLANG_BURST_SPLIT`; SGLang 0.5.6 keeps its overlap for two prompt steps in a row,
    ``SGLANG_DISABLE_CONSECUTIVE_PREFILL_OVERLAP`` False in ``srt/environ.py``, so ``process_batch_result`` of step
    ``k`` runs after step ``k+1`` is launched): the next step's launch from Python, ``F = L·f_eager`` (MoE layers
    twice, ``eager_layer_floor_s``), less the part of it that runs while this step's GPU work goes on past its own
    launch (``b`` = this step's GPU part, :func:`planner.serving.step.step_parts`' body)::

        wait = max(0, F − max(0, b − F))

    ``eager_floor_s`` is ``F``. Worked example: a launch-bound step (``b = F`` = 40 ms) waits the whole 40 ms; a step
    of ``b`` = 70 ms waits 10 ms; one of ``b`` ≥ 80 ms none.

    >>> from planner.catalog import get_gpu, get_model
    >>> from planner.serving.calibration import DERIVED
    >>> from planner.serving.step import build_replica
    >>> r = build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), context_tokens=400, input_tokens=300,
    ...                   engine="sglang", calibration=DERIVED)
    >>> [round(next_launch_wait_s(r, body_s=b, eager_floor_s=0.04) * 1e3, 6) for b in (0.04, 0.07, 0.08, 0.2)]
    [40.0, 10.0, 0.0, 0.0]
    """
    if not (r.eager_prefill or r.eager):
        return 0.0
    return max(0.0, eager_floor_s - max(0.0, body_s - eager_floor_s))


def in_process_first_token_s(*, end_s: float, put_delay_s: float, next_end_s: float | None,
                              arrivals_s: list[float] | None) -> float:
    """When an in-process vLLM V0 ``AsyncLLMEngine`` client sees the first token of a prompt finished in the step
    ending at ``end_s`` (rule D, :data:`planner.serving.schedule.Load` ``in_process_delivery``; session 16, latency35,
    docs/serving.md). vLLM 0.7.3 runs each step in a worker thread (``make_async`` → ``loop.run_in_executor``); the
    next step's ``async_callback`` (``ModelRunner.execute_model``, after the forward is launched) puts the previous
    step's outputs into the clients' ``asyncio.Queue`` from that thread, whose ``Future.set_result`` schedules the
    client with ``loop.call_soon``, which does not wake the event loop: the client runs when the thread's step ends
    (``call_soon_threadsafe``) or when a timer falls due first (AccelMark's next ``asyncio.sleep`` arrival)::

        t_put = end + q,   seen = min(max(next_end, t_put), a*),   a* = first arrival ≥ t_put (none: ∞)

    ``put_delay_s`` is ``q``, Q4' (:func:`planner.serving.schedule.first_token_delay_s`); ``next_end_s`` the end of
    the next step (None: no step follows, V0 drains its outputs in the loop at once, ``seen = end``);
    ``arrivals_s`` the open loop's ascending arrival times (None for a closed loop: no timers).

    Worked example: a prompt step ends at 100 ms, Q4' is 5 ms and the next (decode) step ends at 160 ms: seen at
    160 ms with no arrival, at 130 ms if a request arrives then, still at 160 ms if one arrived at 104 ms (before
    the outputs were put).

    >>> [round(in_process_first_token_s(end_s=0.1, put_delay_s=0.005, next_end_s=0.16, arrivals_s=a) * 1e3, 6)
    ...  for a in (None, [0.13], [0.104], [0.104, 0.2])]
    [160.0, 130.0, 160.0, 160.0]
    >>> in_process_first_token_s(end_s=0.1, put_delay_s=0.005, next_end_s=None, arrivals_s=None)
    0.1
    """
    if next_end_s is None:
        return end_s
    put = end_s + put_delay_s
    seen = max(next_end_s, put)
    if arrivals_s:
        k = bisect.bisect_left(arrivals_s, put)
        if k < len(arrivals_s) and arrivals_s[k] < seen:
            seen = arrivals_s[k]
    return seen


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


def _steps_before_arrival(k: int, arrivals_s: list[float], arrived: int, t: float, dt: float) -> int:
    """``k`` steps of ``dt`` from ``t``, cut to end in the step during which the next arrival (``arrivals_s[arrived]``,
    if any is left and known) comes, and never fewer than one: a replay jumps a decode-only stretch this way.

    >>> _steps_before_arrival(10, [0.0, 0.35], 1, 0.0, 0.1), _steps_before_arrival(10, [0.0, math.inf], 1, 0.0, 0.1)
    (4, 10)
    """
    if arrived < len(arrivals_s) and math.isfinite(arrivals_s[arrived]):
        return min(k, max(1, math.ceil((arrivals_s[arrived] - t) / dt - 1e-9)))
    return k


def _release(arrivals_s: list[float], released: int, t: float, clients: int | None, count: int = 1) -> int:
    """A closed loop (``clients`` given) sends its next ``count`` requests at ``t``, when as many finish: their
    arrival times are set in ``arrivals_s`` and the new number released is returned (unchanged for an open loop).

    >>> times = [0.0, math.inf, math.inf]
    >>> _release(times, 1, 2.5, clients=1, count=3), times
    (3, [0.0, 2.5, 2.5])
    """
    if clients is None:
        return released
    for _ in range(count):
        if released < len(arrivals_s):
            arrivals_s[released] = t
            released += 1
    return released


def _replay_trace(load: Load, arrivals_s: list[float], input_tokens: list[int], ttfts: list[tuple[float, float]],
                  tpots: list[tuple[float, float]], *, outputs: list[int] | None = None,
                  clients: int | None = None) -> tuple[float, int, int, float]:
    """One run of :func:`trace_open_run` (or, with ``clients``, of :func:`trace_closed_run`, ``arrivals_s``
    ignored): appends its requests' ``(TTFT, 1)`` and ``(TPOT, count)`` pairs and returns
    ``(duration, peak running, peak waiting, ∫ running dt)``. ``outputs``: per-request output tokens (default
    ``load.output_tokens`` for all). SGLang with its overlap loop (:data:`SGLANG_BURST_SPLIT`, Q8b): an idle engine
    starts with the first arrived request alone, and a prompt step's first tokens wait for the next step's launch
    (:func:`planner.serving.schedule.first_token_delay_s` plus :func:`next_launch_wait_s` when that step is an eager
    prompt step)."""
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
    # SGLANG_BURST_SPLIT: the first tokens of the last prompt step, (requests, step end, Q4' delay, GPU part), held
    # until the next step is known; F = the eager launch of a prompt step (L·f_eager, MoE layers twice)
    split = SGLANG_BURST_SPLIT and lag and r.engine == "sglang"
    held: list[tuple[list[int], float, float, float]] = []
    floor_s = launch_layers(r) * load.calibration.eager_layer_floor_s
    # rule D (in-process client): first tokens put during the next step, seen at its end or the next arrival timer
    inproc = load.in_process_delivery
    timers = arrivals_s if clients is None else None
    unseen: list[tuple[list[int], float, float]] = []  # (requests, end of their prompt step, Q4')

    def deliver(next_end: float | None) -> None:
        for idx, end, q in unseen:
            seen = in_process_first_token_s(end_s=end, put_delay_s=q, next_end_s=next_end, arrivals_s=timers)
            ttfts.extend((o_ttft + seen - arrivals_s[i], 1.0) for i in idx)
        unseen.clear()

    def release_held(extra: float) -> None:
        for idx, end, delay_s, _ in held:
            ttfts.extend((o_ttft + end + delay_s + extra - arrivals_s[i], 1.0) for i in idx)
        held.clear()

    while completed < n and guard < 4_000_000:
        guard += 1
        cut = busy_from if (lag and busy_from is not None) else t
        while arrived < n and arrivals_s[arrived] <= cut + 1e-12:
            arrived += 1
        running = decode + (admitted - done_prefill)
        admissible = min(arrived - admitted, cap - running)
        if split and busy_from is None and running == 0:  # an idle SGLang loop: the first arrival starts a step alone
            admissible = min(admissible, 1)
        if admissible > 0:
            admitted += admissible
            running += admissible
        peak_running = max(peak_running, running)
        peak_waiting = max(peak_waiting, arrived - admitted)
        pending = admitted - done_prefill
        if pending == 0 and decode == 0:
            release_held(0.0)
            deliver(None)
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
            elif (sched.mixed and not sched.whole_prompts) or j == done_prefill:
                # a chunk: of the oldest prompt, or of the next on mixed engines (rule W, TensorRT-LLM without
                # chunking: none of the next; its scheduler stops at the first prompt that does not fit)
                p_tokens += room
                left -= room
                room = 0
            else:
                break
        if held:  # the previous prompt step's first tokens leave once this step is launched
            release_held(next_launch_wait_s(r, body_s=held[0][3], eager_floor_s=floor_s) if p_tokens else 0.0)
        if p_tokens == 0:  # a decode-only stretch: jump to the next completion or arrival
            nxt = finishing[0][0] if finishing else dstep + 1
            dt = step(decode, 0, 0)
            deliver(t + dt)
            k = max(nxt - dstep, 1)
            k = _steps_before_arrival(k, arrivals_s, arrived, t, dt)
            busy_from = t + (k - 1) * dt
            t += k * dt
            area += running * k * dt
            dstep += k
        else:
            d_now = decode if sched.mixed else 0
            dt = step(d_now, p_tokens, finished)
            deliver(t + dt)
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
            released = _release(arrivals_s, released, t, clients, count)
        if finished:
            after = decode + sum(1 for i in range(done_prefill, j) if (o1s[i] if o1s is not None else o1) > 0)
            delay = first_token_delay_s(r, decode_seqs=after)
            if split:  # Q4' waits for the next step: held until it is known
                body = step_parts(r, load.calibration, decode_seqs=float(d_now), prefill_tokens=float(p_tokens),
                                  prefill_seqs=float(finished))[1]
                held.append((list(range(done_prefill, j)), t, delay, body))
            elif inproc:  # seen once the next step is known (deliver)
                unseen.append((list(range(done_prefill, j)), t, delay))
            else:
                ttfts.extend((o_ttft + t + delay - arrivals_s[i], 1.0) for i in range(done_prefill, j))
            if o1s is None:
                groups = [(o1, finished)]
            else:
                groups = [(o1s[i], 1) for i in range(done_prefill, j)]
            for steps, count in groups:
                if steps == 0:
                    completed += count
                    released = _release(arrivals_s, released, t, clients, count)
                else:
                    decode += count
                    heapq.heappush(finishing, (dstep + steps, order, count, t, steps))
                    order += 1
            done_prefill = j
        prefill_left = left
    release_held(0.0)
    deliver(None)
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
    # rule D (in-process client): first tokens put during the next step, seen at its end or the next arrival timer
    inproc = load.in_process_delivery
    timers = arrivals_s if clients is None else None  # a closed loop (AccelMark's interactive) sleeps on no timer
    unseen: list[tuple[int, float, float]] = []  # (request, end of its prompt step, Q4')

    def deliver(next_end: float | None) -> None:
        for i, end, q in unseen:
            seen = in_process_first_token_s(end_s=end, put_delay_s=q, next_end_s=next_end, arrivals_s=timers)
            ttfts.append((o_ttft + seen - arrivals_s[i], 1.0))
        unseen.clear()

    def finish(i: int) -> None:
        nonlocal completed, released
        completed += 1
        if steps_of[i]:
            tpots.append(((t - first[i]) / steps_of[i], 1.0))
        released = _release(arrivals_s, released, t, clients)

    def prefilled(i: int, delay: float) -> None:
        """Request ``i``'s prompt is in after the step ending at ``t``: its first token (a recomputed request's
        next one), then it finishes or decodes."""
        nonlocal kv_used
        if math.isnan(first[i]):
            first[i] = t  # TPOT runs from the step's end: the last token is delayed alike
            if inproc:  # seen once the next step is known (deliver)
                unseen.append((i, t, delay))
            else:
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
            deliver(t + dt)
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
            deliver(t + dt)
            t += dt
            area += (len(running) + len(admitted_order)) * dt
            if prefill_left[i] == 0:
                admitted_order.pop(0)
                prefilled(i, first_token_delay_s(r, decode_seqs=len(running) + 1))
            continue
        if not running:
            deliver(None)  # nothing runs: V0 drains its outputs in the loop
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
        deliver(t + dt)
        k = min(steps_of[i] - gen[i] for i in running)
        k = min(k, max(int((kv_cap - kv_used) // d), 1))  # (a waiting head that did not fit waits for a completion)
        k = _steps_before_arrival(k, arrivals_s, arrived, t, dt)
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
    deliver(None)
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
            k = _steps_before_arrival(k, arrivals_s, arrived, t, dt)
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
                released = _release(arrivals_s, released, t, clients)
    return max(t, 1e-12), peak_running, peak_waiting, area
