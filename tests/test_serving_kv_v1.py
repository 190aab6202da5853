"""vLLM V1's KV admission and preemption in the step-by-step replay (planner.serving.replay._replay_trace_kv_v1;
docs/serving.md, session 12, latency14), worked by hand."""

from __future__ import annotations

import dataclasses

import pytest

from planner.catalog import get_gpu, get_model
from planner.serving import replay
from planner.serving import schedule as sch
from planner.serving.calibration import DERIVED
from planner.serving.step import build_replica, step_time_s


def _load(kv_tokens: float | None, *, budget: int = 64, seqs: int = 256) -> sch.Load:
    r = build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), context_tokens=45, input_tokens=40,
                      calibration=DERIVED)
    s = sch.EngineSchedule(engine="vllm", budget_tokens=budget, max_num_seqs=seqs, mixed=True, source="test")
    return sch.Load(replica=r, calibration=DERIVED, schedule=s, input_tokens=40, output_tokens=11, max_running=seqs,
                    kv_tokens=kv_tokens)


def _steps(load: sch.Load):
    r = load.replica

    def m(decode: int, prefill: int, finished: int) -> float:
        return step_time_s(r, DERIVED, decode_seqs=decode, prefill_tokens=prefill, prefill_seqs=finished)

    return m, (lambda seqs: m(seqs, 0, 0))


def test_v1_kv_admission_preemption_and_cached_blocks_by_hand():
    """Three 40-token prompts at 0, 11 output tokens each, 64-token steps, a cache of 6 blocks of 16 tokens, with
    V1's prefix cache keeping a preempted request's full blocks in the free queue (allocation takes the head; a freed
    request's full blocks join the tail, its last first, its partial block the head), worked by hand (c = computed
    tokens):

    1. prompt 0 whole (40 tokens, 3 blocks) and a 24-token chunk of prompt 1 (2 blocks); request 0's first token.
    2. request 0 decodes (c 41), prompt 1's last 16 tokens (a third block, the cache full); request 1's first token.
    3-9. seven steps of two decodes: request 0 to c 48, request 1 to c 47.
    10. request 0's 49th token needs a 4th block: request 1 is preempted; its partial block goes to the head of the
        queue, its two full blocks (32 tokens) to the tail, cached; request 0 takes the partial one. Free 2.
    11. request 0 finishes (free 6: queue = request 1's 2 cached blocks, then 4); request 1's re-admission needs
        blocks for 48 tokens, 3, where 2 were free before the step.
    12. request 1 re-admitted: 32 tokens cached (2 blocks back out of the queue), 16 recomputed (a third block), its
        9th token sampled; prompt 2 whole (40 tokens, 3 blocks; free 0); its first token. One step of 56 tokens.
    13. request 1's 49th token needs a block: request 2 (c 40) is preempted, its 2 full blocks cached, its partial
        one taken by request 1. Free 2.
    14. request 1 finishes (free 6); request 2 (41 tokens, 3 blocks) did not fit the 2 free blocks before it.
    15. request 2 re-admitted: 32 tokens cached, 9 computed (its prompt's last 8 and its first output); its 2nd
        token sampled.
    16-24. nine decode steps of one; request 2 finishes.
    """
    load = _load(96)
    m, d = _steps(load)
    t1 = m(0, 64, 1)
    t2 = t1 + m(1, 16, 1)
    t11 = t2 + 7 * d(2) + 2 * d(1)
    t12 = t11 + m(0, 56, 2)
    t14 = t12 + 2 * d(1)
    t15 = t14 + m(0, 9, 1)
    t24 = t15 + 9 * d(1)
    run = replay.trace_open_run(load, runs=[([0.0, 0.0, 0.0], [40, 40, 40])], stat="mean")
    o = load.replica.ttft_fixed_s  # vLLM V1 hands a step's tokens out when it ends (no Q4' delay)
    assert run.ttft_s == pytest.approx(o + (t1 + t2 + t12) / 3, rel=1e-9)
    assert run.tpot_s == pytest.approx(((t11 - t1) + (t14 - t2) + (t24 - t12)) / 30, rel=1e-9)
    assert run.duration_s == pytest.approx(t24, rel=1e-9)
    assert run.peak_running == 2


def test_v1_kv_admission_and_preemption_without_cached_blocks_by_hand(monkeypatch):
    """The same case with a preempted request recomputed from its first token (the first variant, not kept:
    docs/serving.md), worked by hand (c = computed tokens, b = blocks held, 6 in all):

    1. prompt 0 whole (40 tokens, 3 blocks) and a 24-token chunk of prompt 1 (2 blocks); request 0's first token.
       Free 1 block.
    2. request 0 decodes (c 41, still 3 blocks), prompt 1's last 16 tokens (c 40: a third block, free 0); request 1's
       first token; prompt 2 (3 blocks for its first 40 tokens) does not fit.
    3-9. seven steps of two decodes: request 0 to c 48, request 1 to c 47 (3 blocks each, full).
    10. request 0's next token needs a 4th block: request 1, the last running, is preempted (3 blocks freed, c 0,
        8 tokens sampled, back at the head of the queue); request 0 decodes (4 blocks, free 2); nothing is admitted in
        a step that preempted.
    11. request 0 decodes its 11th token and finishes (free 6); request 1's recompute (48 tokens, 3 blocks) did not
        fit the 2 free blocks before it.
    12. request 1 recomputed whole (40 + 8 = 48 tokens, 3 blocks; its 9th token sampled) and a 16-token chunk of prompt
        2 (1 block); free 2.
    13. request 1 decodes (c 49: a 4th block, free 1); request 2's next 24 tokens need 2 more blocks: it is the last
        running, so it preempts itself (1 block freed, free 2; c 0).
    14. request 1 decodes its 11th token and finishes (free 6); prompt 2 (3 blocks) did not fit the 2 free blocks.
    15. prompt 2 whole (3 blocks); its first token.
    16-25. ten decode steps of one; request 2 finishes.
    """
    monkeypatch.setattr(replay, "V1_PREEMPTED_BLOCKS_CACHED", False)
    load = _load(96)
    r = load.replica
    m, d = _steps(load)
    t1 = m(0, 64, 1)
    t2 = t1 + m(1, 16, 1)
    t11 = t2 + 7 * d(2) + 2 * d(1)
    t12 = t11 + m(0, 64, 1)
    t14 = t12 + 2 * d(1)
    t15 = t14 + m(0, 40, 1)
    t25 = t15 + 10 * d(1)
    run = replay.trace_open_run(load, runs=[([0.0, 0.0, 0.0], [40, 40, 40])], stat="mean")
    o = r.ttft_fixed_s  # vLLM V1 hands a step's tokens out when it ends (no Q4' delay)
    assert run.ttft_s == pytest.approx(o + (t1 + t2 + t15) / 3, rel=1e-9)
    assert run.tpot_s == pytest.approx(((t11 - t1) + (t14 - t2) + (t25 - t15)) / 30, rel=1e-9)
    assert run.duration_s == pytest.approx(t25, rel=1e-9)
    assert run.peak_running == 2
    # without the KV size the replay keeps the request cap only: all three run together
    off = replay.trace_open_run(dataclasses.replace(load, kv_tokens=None), runs=[([0.0, 0.0, 0.0], [40, 40, 40])])
    assert off.peak_running == 3 and off.duration_s < run.duration_s


def test_v1_kv_admission_matches_the_request_cap_replay_when_the_cache_is_ample():
    """Where the cache never fills, V1's admission is the request cap's: the same steps, the same answers. The cache
    (6,250 blocks) is smaller than the 200 requests' 6,400 (32 blocks each), so the block-by-block replay runs, not
    its shortcut, and far larger than the ~60 requests that run at once."""
    load = dataclasses.replace(_load(1e5, budget=2048, seqs=256), input_tokens=300, output_tokens=200)
    runs = [([i / 40.0 for i in range(200)], [300] * 200)]
    with_kv = replay.trace_open_run(load, runs=runs)
    without = replay.trace_open_run(dataclasses.replace(load, kv_tokens=None), runs=runs)
    assert with_kv.ttft_s == pytest.approx(without.ttft_s, rel=1e-9)
    assert with_kv.tpot_s == pytest.approx(without.tpot_s, rel=1e-9)
    assert with_kv.duration_s == pytest.approx(without.duration_s, rel=1e-9)
    assert with_kv.peak_running == without.peak_running
    assert 32 * with_kv.peak_running < 6250 < 200 * 32
    # and a cache that holds any 256 of them whole takes the shortcut, with the same answers
    ample = replay.trace_open_run(dataclasses.replace(load, kv_tokens=1e9), runs=runs)
    assert ample.ttft_s == pytest.approx(with_kv.ttft_s, rel=1e-9)
    assert ample.duration_s == pytest.approx(with_kv.duration_s, rel=1e-9)


def test_v1_kv_admission_in_a_closed_loop_with_async_scheduling_matches_the_request_cap_replay():
    load = _load(1e4, budget=512)  # 625 blocks: fewer than the 40 requests' 880, more than 8 running ever hold
    load = dataclasses.replace(load, schedule=dataclasses.replace(load.schedule, async_scheduling=True))
    kw = dict(clients=8, input_tokens=[300] * 40, output_tokens=[50] * 40)
    with_kv = replay.trace_closed_run(load, **kw)
    without = replay.trace_closed_run(dataclasses.replace(load, kv_tokens=None), **kw)
    assert with_kv.ttft_s == pytest.approx(without.ttft_s, rel=1e-9)
    assert with_kv.tpot_s == pytest.approx(without.tpot_s, rel=1e-9)
    assert with_kv.duration_s == pytest.approx(without.duration_s, rel=1e-9)
