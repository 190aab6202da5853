"""Rule D (session 16, latency35; docs/serving.md, "Session 16, latency35"): AccelMark's in-process vLLM V0 client.

vLLM 0.7.3's ``AsyncLLMEngine`` runs each step in a worker thread; the next step's ``async_callback`` puts the
previous step's outputs into the clients' ``asyncio.Queue`` from that thread without waking the event loop, so the
client sees a first token at the end of the next step, or at the harness's next arrival timer if that comes first
(after the outputs were put), instead of after the next step's launch (Q4').

Every expected value below is worked by hand from step times the test sets itself (``replay.step_time_s`` replaced
by fixed numbers): a step with prompt tokens 50 ms, a decode step 10 ms, ``o_ttft`` 5 ms, Q4' 2 ms (the replica's
fixed host part ``o_engine`` 2 ms, ``o_seq`` 0)."""

from __future__ import annotations

import dataclasses

import pytest

from planner.catalog import get_gpu, get_model
from planner.errors import ArgumentError
from planner.serving import accuracy, replay
from planner.serving import schedule as sch
from planner.serving.api import performance
from planner.serving.calibration import DERIVED
from planner.serving.step import build_replica


def _load(*, in_process: bool, kv: bool):
    r = build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), context_tokens=101, input_tokens=100,
                      engine="vllm-v0", calibration=DERIVED)
    r = dataclasses.replace(r, fixed_s=0.002, seq_s=0.0, ttft_fixed_s=0.005)
    s = sch.engine_schedule("vllm-v0", gpu_big=True, gpu_gib=79.6, max_position=4096)
    assert not s.mixed and s.budget_tokens == 4096
    return sch.Load(replica=r, calibration=DERIVED, schedule=s, input_tokens=100, output_tokens=3, max_running=64,
                    kv_tokens=100_000 if kv else None, in_process_delivery=in_process)


@pytest.fixture
def steps(monkeypatch):
    def step_time(r, cal, *, decode_seqs, prefill_tokens=0.0, prefill_seqs=0.0):
        return 0.050 if prefill_tokens > 0 else 0.010

    monkeypatch.setattr(replay, "step_time_s", step_time)


def _ttfts(load, arrivals, *, clients=None) -> list[float]:
    out: list[tuple[float, float]] = []
    replay._replay_trace(load, list(arrivals), [100] * len(arrivals), out, [], outputs=[3] * len(arrivals),
                         clients=clients)
    return [v for v, _ in out]


def test_seen_time_by_hand():
    """Prompt step ends at 100 ms, Q4' 5 ms (outputs put at 105 ms), next step ends at 160 ms: seen at 160 ms with
    no timer, at 130 ms with an arrival then, at 160 ms if the only arrival (104 ms) came before the put; no next
    step: at once."""
    f = replay.in_process_first_token_s
    assert f(end_s=0.1, put_delay_s=0.005, next_end_s=0.16, arrivals_s=None) == pytest.approx(0.16)
    assert f(end_s=0.1, put_delay_s=0.005, next_end_s=0.16, arrivals_s=[0.0, 0.13, 0.2]) == pytest.approx(0.13)
    assert f(end_s=0.1, put_delay_s=0.005, next_end_s=0.16, arrivals_s=[0.104]) == pytest.approx(0.16)
    assert f(end_s=0.1, put_delay_s=0.005, next_end_s=None, arrivals_s=[0.13]) == pytest.approx(0.1)


@pytest.mark.parametrize("kv", [True, False])
def test_interactive_one_client_by_hand(steps, kv):
    """One client, two requests of 100 prompt and 3 output tokens. Request 0: prompt step 0-50 ms, decode steps
    50-60 and 60-70 ms; request 1 is sent at 70 ms: prompt step 70-120, decode 120-130, 130-140.
    Off (Q4'): TTFT 5 + 50 + 2 = 57 ms each. On: the first token is seen at the end of the next (decode) step,
    60 ms and 130 ms: TTFT 5 + 60 = 65 ms and 5 + 130 − 70 = 65 ms."""
    assert _ttfts(_load(in_process=False, kv=kv), [0.0, 0.0], clients=1) == pytest.approx([0.057, 0.057])
    assert _ttfts(_load(in_process=True, kv=kv), [0.0, 0.0], clients=1) == pytest.approx([0.065, 0.065])


@pytest.mark.parametrize("kv", [True, False])
def test_open_loop_arrival_timer_by_hand(steps, kv):
    """Requests at 0 and 55 ms. Request 0: prompt step 0-50 ms, its outputs put at 52 ms during the decode step
    50-60 ms; request 1's arrival timer (55 ms) wakes the loop first: seen at 55 ms, TTFT 5 + 55 = 60 ms. Request
    1: prompt step 60-110 ms (it arrived during the decode step), put at 112 ms during the decode step 110-120 ms of
    both, no arrival left: seen at 120 ms, TTFT 5 + 120 − 55 = 70 ms. Off: 57 ms and 5 + 110 + 2 − 55 = 62 ms."""
    assert _ttfts(_load(in_process=False, kv=kv), [0.0, 0.055]) == pytest.approx([0.057, 0.062])
    assert _ttfts(_load(in_process=True, kv=kv), [0.0, 0.055]) == pytest.approx([0.060, 0.070])


def test_api_in_process_and_front_end():
    """``front_end=False`` takes exactly ``o_ttft`` out of a one-client replay; ``in_process_delivery`` is vLLM V0's
    alone and adds to a one-client TTFT the next decode step less Q4' (its GPU part, positive)."""
    args = dict(engine="vllm", engine_version="0.7.3", input_tokens=280, output_tokens=50, concurrency=1,
                num_prompts=3, latency_stat="median")
    base = performance("llama-3.1-8b", "h100-sxm", **args)
    no_front = performance("llama-3.1-8b", "h100-sxm", front_end=False, **args)
    inproc = performance("llama-3.1-8b", "h100-sxm", in_process_delivery=True, **args)
    from planner.serving.api import default_calibration

    o = default_calibration().ttft_fixed_s("vllm-v0")
    assert base.ttft_s - no_front.ttft_s == pytest.approx(o, rel=1e-9)
    assert inproc.ttft_s > base.ttft_s and inproc.tpot_s == pytest.approx(base.tpot_s)
    with pytest.raises(ArgumentError):
        performance("llama-3.1-8b", "h100-sxm", engine="vllm", engine_version="0.20.1", input_tokens=280,
                    output_tokens=50, concurrency=1, num_prompts=3, in_process_delivery=True)


def test_accelmark_scope():
    """Only AccelMark's V0 runner, online and interactive, is in process by rule D."""
    v0 = "accelmark/nvidia_h200x1_suite_A_nvidia_vllm_47f5d58e_29b2ec38"
    assert accuracy.accelmark_in_process({"id": f"{v0}/interactive", "engine": "vllm", "engine_version": "0.7.3",
                                          "mode": "closed"})
    assert not accuracy.accelmark_in_process({"id": f"{v0}/offline", "engine": "vllm", "engine_version": "0.7.3",
                                              "mode": "offline"})
    assert not accuracy.accelmark_in_process({"id": "dstack-405b/8xH100-1FP8-meta/sharegpt/qps16", "engine": "vllm",
                                              "engine_version": "0.6.3", "mode": "open"})
