"""SGLang's first burst through its overlap loop (session 14, latency22; docs/serving.md, Q8b and its section at the
end; ``planner.serving.replay.SGLANG_BURST_SPLIT``).

SGLang 0.5.6's idle ``event_loop_overlap`` starts a prompt step with the first request that reaches it, the rest of a
burst enter the next prompt step, and with ``SGLANG_DISABLE_CONSECUTIVE_PREFILL_OVERLAP`` False the first step's
tokens are handed out only after that next step is launched: its eager launch ``F = L·f_eager`` less what the first
step's GPU time beyond its own launch hides, ``max(0, F − max(0, b − F))``.

Every expected value below is worked by hand from step times the test sets itself (``replay.step_time_s`` and
``replay.step_parts`` replaced by fixed numbers): a prompt step 50 ms (10 ms fixed host part, 40 ms GPU part), a
decode step 10 ms, ``o_ttft`` 5 ms, Q4' 2 ms (``o_engine + o_tp·log2(1)`` = 2 ms, ``o_seq`` = 0), and
``F`` = 32 layers × 1.25 ms = 40 ms."""

from __future__ import annotations

import dataclasses

import pytest

from planner.catalog import get_gpu, get_model
from planner.serving import replay
from planner.serving import schedule as sch
from planner.serving.calibration import DERIVED
from planner.serving.step import build_replica

CAL = dataclasses.replace(DERIVED, eager_layer_floor_s=0.00125)  # F = 32 layers x 1.25 ms = 40 ms (dense model)


def _load(engine: str = "sglang"):
    r = build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), context_tokens=110, input_tokens=100,
                      engine=engine, calibration=CAL)
    r = dataclasses.replace(r, fixed_s=0.002, seq_s=0.0, ttft_fixed_s=0.005)
    assert r.layers == 32 and not r.num_experts
    s = sch.engine_schedule(engine, gpu_big=True, gpu_gib=79.6, max_position=131072, async_scheduling=True)
    return sch.Load(replica=r, calibration=CAL, schedule=s, input_tokens=100, output_tokens=2, max_running=64)


@pytest.fixture
def steps(monkeypatch):
    """Fixed step times: a step with prompt tokens ``prefill_s`` (10 ms host + GPU part ``body_s``), a decode step
    10 ms; ``set(body_s)`` changes the prompt step's GPU part."""
    cfg = {"body": 0.040}

    def step_time(r, cal, *, decode_seqs, prefill_tokens=0.0, prefill_seqs=0.0):
        return 0.010 + cfg["body"] if prefill_tokens > 0 else 0.010

    def parts(r, cal, *, decode_seqs, prefill_tokens=0.0, prefill_seqs=0.0):
        return (0.010, cfg["body"], 0.0) if prefill_tokens > 0 else (0.002, 0.008, 0.0)

    monkeypatch.setattr(replay, "step_time_s", step_time)
    monkeypatch.setattr(replay, "step_parts", parts)
    return cfg


def _closed_ttfts(load, clients: int, n: int) -> list[float]:
    ttfts: list[tuple[float, float]] = []
    replay._replay_trace(load, [], [100] * n, ttfts, [], outputs=[2] * n, clients=clients)
    return sorted(v for v, _ in ttfts)


def test_next_launch_wait_by_hand():
    """``max(0, F − max(0, b − F))`` with ``F`` = 40 ms: ``b`` = 40 ms (launch-bound) 40 ms, 60 ms 20 ms, 80 ms and
    more 0; an engine whose prompt steps run with CUDA graphs waits nothing."""
    r = _load().replica
    got = [replay.next_launch_wait_s(r, body_s=b, eager_floor_s=0.040) for b in (0.040, 0.060, 0.080, 0.5)]
    assert got == pytest.approx([0.040, 0.020, 0.0, 0.0], abs=1e-12)
    graphed = dataclasses.replace(r, eager_prefill=False, eager=False)
    assert replay.next_launch_wait_s(graphed, body_s=0.040, eager_floor_s=0.040) == 0.0


def test_burst_of_three_on_sglang_by_hand(steps, monkeypatch):
    """Three clients send three 100-token prompts (2 output tokens) together at 0.

    On: prompt step 1 carries request 0 alone (0-50 ms); requests 1 and 2 enter prompt step 2 (50-100 ms), then one
    decode step of three (100-110 ms). Request 0's token leaves after step 2's launch: 50 + 2 + 40 = 92 ms, TTFT
    5 + 92 = 97 ms; requests 1 and 2: the next step is a decode step, 100 + 2 = 102 ms, TTFT 107 ms. Mean 103.667 ms.
    Off: one prompt step of three (0-50 ms), TTFT 5 + 50 + 2 = 57 ms each."""
    monkeypatch.setattr(replay, "SGLANG_BURST_SPLIT", True)
    assert _closed_ttfts(_load(), 3, 3) == pytest.approx([0.097, 0.107, 0.107], abs=1e-12)
    run = replay.trace_closed_run(_load(), clients=3, input_tokens=[100] * 3, output_tokens=[2] * 3)
    assert run.ttft_s == pytest.approx((0.097 + 2 * 0.107) / 3, abs=1e-12)
    assert run.duration_s == pytest.approx(0.110, abs=1e-12)
    monkeypatch.setattr(replay, "SGLANG_BURST_SPLIT", False)
    assert _closed_ttfts(_load(), 3, 3) == pytest.approx([0.057] * 3, abs=1e-12)


def test_compute_bound_first_step_hides_the_next_launch(steps, monkeypatch):
    """The same burst with a 200 ms GPU part per prompt step (210 ms steps): step 1 (0-210 ms) hides step 2's 40 ms
    launch (200 − 40 = 160 ≥ 40), so request 0's TTFT is 5 + 210 + 2 = 217 ms; requests 1 and 2 (step 2, 210-420 ms)
    5 + 420 + 2 = 427 ms."""
    monkeypatch.setattr(replay, "SGLANG_BURST_SPLIT", True)
    steps["body"] = 0.200
    assert _closed_ttfts(_load(), 3, 3) == pytest.approx([0.217, 0.427, 0.427], abs=1e-12)


def test_one_client_is_unchanged(steps, monkeypatch):
    """One client, two requests: the engine is idle at each arrival and each prompt step is followed by a decode
    step, so both TTFTs are 5 + 50 + 2 = 57 ms, on or off."""
    for on in (True, False):
        monkeypatch.setattr(replay, "SGLANG_BURST_SPLIT", on)
        assert _closed_ttfts(_load(), 1, 2) == pytest.approx([0.057, 0.057], abs=1e-12)


def test_other_engines_are_unchanged(steps, monkeypatch):
    """vLLM (mixed steps, async scheduling) is not SGLang's loop: the burst of three is one step on or off."""
    got = {}
    for on in (True, False):
        monkeypatch.setattr(replay, "SGLANG_BURST_SPLIT", on)
        got[on] = _closed_ttfts(_load("vllm"), 3, 3)
    assert got[True] == got[False]
    assert len(set(got[True])) == 1
