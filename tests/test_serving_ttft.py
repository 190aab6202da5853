"""TTFT: vLLM V1's async scheduling (session 12, latency12; docs/serving.md, its section at the end).

With async scheduling vLLM's ``EngineCore`` schedules batch ``n+1`` right after submitting batch ``n``
(``step_with_batch_queue``), so a request that arrives while batch ``n`` runs enters batch ``n+2``; an idle engine
schedules it at once. The expected times below are worked out by hand from that rule and the step times of
:func:`planner.serving.step.step_time_s` (not the code under test, which is the replay's and the steady state's
admission)."""

from __future__ import annotations

import dataclasses

import pytest

from planner.catalog import get_gpu, get_model
from planner.serving import replay
from planner.serving import schedule as sch
from planner.serving.api import performance
from planner.serving.calibration import DERIVED
from planner.serving.step import build_replica, step_time_s


def _load(*, async_scheduling: bool, output_tokens: int = 20):
    r = build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), context_tokens=310, input_tokens=300,
                      calibration=DERIVED)
    s = sch.EngineSchedule(engine="vllm", budget_tokens=2048, max_num_seqs=128, mixed=True, source="test",
                           async_scheduling=async_scheduling)
    return r, sch.Load(replica=r, calibration=DERIVED, schedule=s, input_tokens=300, output_tokens=output_tokens,
                       max_running=128)


def _ttfts(load, arrivals, lens):
    ttfts: list[tuple[float, float]] = []
    replay._replay_trace(load, arrivals, lens, ttfts, [])
    return [v for v, _ in ttfts]


def test_a_request_arriving_mid_step_waits_one_more_step_by_hand():
    """Request 0 (300 tokens) arrives at 0 on an idle engine: a prefill step ``t_p``, then it decodes (steps of
    ``t_d``). Request 1 (300 tokens) arrives halfway through request 0's first decode step, at ``t_p + t_d/2``.
    Synchronous: it enters the next step (a mixed step ``t_m`` of request 0's decode and its prompt), first token at
    ``t_p + t_d + t_m``. Async: the next step was scheduled when the first decode step started, so it enters the one
    after: ``t_p + 2·t_d + t_m``. Request 0's TTFT is ``o_ttft + t_p`` either way."""
    r, sync = _load(async_scheduling=False)
    _, lagged = _load(async_scheduling=True)
    t_p = step_time_s(r, DERIVED, decode_seqs=0, prefill_tokens=300, prefill_seqs=1)
    t_d = step_time_s(r, DERIVED, decode_seqs=1)
    t_m = step_time_s(r, DERIVED, decode_seqs=1, prefill_tokens=300, prefill_seqs=1)
    a1 = t_p + 0.5 * t_d
    o = r.ttft_fixed_s
    got_sync = _ttfts(sync, [0.0, a1], [300, 300])
    got_async = _ttfts(lagged, [0.0, a1], [300, 300])
    assert got_sync[0] == pytest.approx(o + t_p, rel=1e-9)
    assert got_async[0] == pytest.approx(o + t_p, rel=1e-9)
    assert got_sync[1] == pytest.approx(o + t_p + t_d + t_m - a1, rel=1e-9)
    assert got_async[1] == pytest.approx(o + t_p + 2 * t_d + t_m - a1, rel=1e-9)


def test_an_idle_engine_schedules_at_once():
    """One request at a time (AccelMark's interactive scenario): the engine is idle at every arrival, so async
    scheduling adds nothing: TTFT is ``o_ttft + t_p`` for both requests (the second arrives after the first ends)."""
    r, lagged = _load(async_scheduling=True, output_tokens=3)
    t_p = step_time_s(r, DERIVED, decode_seqs=0, prefill_tokens=300, prefill_seqs=1)
    t_d = step_time_s(r, DERIVED, decode_seqs=1)
    late = t_p + 2 * t_d + 1.0  # request 0 is done by then
    got = _ttfts(lagged, [0.0, late], [300, 300])
    assert got == pytest.approx([r.ttft_fixed_s + t_p] * 2, rel=1e-9)


def test_closed_loop_next_request_waits_one_more_step():
    """Two requests behind one client (``--max-concurrency 1``) of 2 output tokens: request 1 arrives when request 0
    completes, at the end of request 0's decode step. Synchronous, the engine is then idle and schedules it at once
    (TTFT ``o_ttft + t_p``); async, the step after that decode step was already scheduled (empty), so request 1 also
    starts at once on the idle engine: no change for a single client. With a second client decoding alongside, the
    engine is busy and the next request waits one decode step more (see the mid-step test)."""
    r, sync = _load(async_scheduling=False, output_tokens=2)
    _, lagged = _load(async_scheduling=True, output_tokens=2)
    t_p = step_time_s(r, DERIVED, decode_seqs=0, prefill_tokens=300, prefill_seqs=1)
    for load in (sync, lagged):
        ttfts: list[tuple[float, float]] = []
        replay._replay_trace(load, [], [300, 300], ttfts, [], outputs=[2, 2], clients=1)
        assert [v for v, _ in ttfts] == pytest.approx([r.ttft_fixed_s + t_p] * 2, rel=1e-9)


def test_steady_state_waits_one_more_decode_step():
    """Q4 with async scheduling: at the same decode batch ``d >= 1`` the state is the same but TTFT waits
    ``a·t_d`` more (the rest of the step in flight, then the whole next step), ``a`` = 1 in an open loop."""
    r, sync = _load(async_scheduling=False, output_tokens=300)
    _, lagged = _load(async_scheduling=True, output_tokens=300)
    for d in (1.0, 8.0, 40.0):
        a, b = sch.state(sync, d=d), sch.state(lagged, d=d)
        assert a.valid and b.valid
        assert b.requests_per_s == a.requests_per_s and b.tpot_s == a.tpot_s
        assert b.ttft_s - a.ttft_s == pytest.approx(step_time_s(r, DERIVED, decode_seqs=d), rel=1e-9)
    closed = dataclasses.replace(lagged, others=0.75)  # four clients: three others
    assert sch.state(closed, d=8.0).ttft_s - sch.state(dataclasses.replace(sync, others=0.75), d=8.0).ttft_s == \
        pytest.approx(0.75 * step_time_s(r, DERIVED, decode_seqs=8.0), rel=1e-9)


def test_api_applies_it_from_vllm_0_20_only():
    """``performance`` schedules asynchronously for vLLM 0.20 and later (the release AccelMark's V1 runs used), not
    for an unnamed release, an earlier V1 release, V0 or pipeline parallelism; in an open loop TTFT then rises and
    TPOT and throughput stay."""
    common = dict(input_tokens=300, output_tokens=300, request_rate=10.0, calibration=DERIVED)
    new = performance("llama-3.1-8b", "h100-sxm", engine_version="0.20.1", **common)
    old = performance("llama-3.1-8b", "h100-sxm", engine_version="0.19.0", **common)
    unnamed = performance("llama-3.1-8b", "h100-sxm", **common)
    assert new.ttft_s > old.ttft_s
    assert unnamed.ttft_s == pytest.approx(old.ttft_s, rel=1e-3)  # (an unnamed release's KV room differs slightly)
    assert new.tpot_s == old.tpot_s and new.output_tokens_per_s == old.output_tokens_per_s
    assert not sch.async_scheduling_default("vllm", engine_version="0.20.1", pp=2)
    assert not sch.async_scheduling_default("vllm-v0", engine_version="0.7.3")


def test_sglang_overlap_scheduler_admits_one_step_late():
    """SGLang's default overlap loop schedules batch ``k+1`` when batch ``k`` starts, so the same rule holds there: on
    a prefill-first engine, a request arriving halfway through request 0's first decode step is prefilled in a
    prefill-only step after the next decode step, not right after the current one (``t_s`` the prefill-only step;
    the Q4' delivery wait of SGLang, the fixed part of the step after, is added to both)."""
    r = build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), context_tokens=310, input_tokens=300,
                      engine="sglang", calibration=DERIVED)
    s = sch.engine_schedule("sglang", gpu_big=True, gpu_gib=79.6, max_position=131072,
                            async_scheduling=sch.async_scheduling_default("sglang", engine_version=None))
    assert s.async_scheduling and not s.mixed
    load = sch.Load(replica=r, calibration=DERIVED, schedule=s, input_tokens=300, output_tokens=20, max_running=128)
    sync = dataclasses.replace(load, schedule=dataclasses.replace(s, async_scheduling=False))
    t_p = step_time_s(r, DERIVED, decode_seqs=0, prefill_tokens=300, prefill_seqs=1)
    t_d = step_time_s(r, DERIVED, decode_seqs=1)
    a1 = t_p + 0.5 * t_d
    o = r.ttft_fixed_s
    delay_first = r.fixed_s + r.seq_s * 1  # Q4': the next step carries request 0 alone
    delay_second = r.fixed_s + r.seq_s * 2  # ... request 0 and request 1
    assert _ttfts(sync, [0.0, a1], [300, 300]) == pytest.approx(
        [o + t_p + delay_first, o + t_p + t_d + t_p + delay_second - a1], rel=1e-9)
    assert _ttfts(load, [0.0, a1], [300, 300]) == pytest.approx(
        [o + t_p + delay_first, o + t_p + 2 * t_d + t_p + delay_second - a1], rel=1e-9)
