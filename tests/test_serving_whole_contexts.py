"""Rule W (session 14, latency26; docs/serving.md, its section at the end): TensorRT-LLM without context chunking
puts only whole prompts in a step, FCFS, and stops at the first that does not fit
(``MicroBatchScheduler::operator()``, the ``!mCtxChunkConfig`` branch; ``planner.serving.schedule.
TRTLLM_WHOLE_CONTEXTS``, :func:`planner.serving.schedule.whole_prompt_room`).

The expected values are worked by hand: the prompt room in whole prompts from ``⌊room/I_u⌋``, and a replay with step
times the test sets itself (a step with prompt tokens ``10 ms + 0.4 ms`` a prompt token, ``o_ttft`` 5 ms, one
output token so nothing decodes)."""

from __future__ import annotations

import dataclasses

import pytest

from planner.catalog import get_gpu, get_model
from planner.serving import replay
from planner.serving import schedule as sch
from planner.serving.calibration import DERIVED
from planner.serving.step import build_replica


@pytest.mark.parametrize(("room", "prompt", "dp", "expected"), [
    (8167, 5000, 1, 5000.0),   # ⌊8167/5000⌋ = 1 prompt
    (8167, 2000, 1, 8000.0),   # ⌊8167/2000⌋ = 4 prompts
    (8167, 2000, 2, 8000.0),   # each rank: ⌊4083.5/2000⌋ = 2, two ranks
    (8167, 3000, 2, 6000.0),   # each rank's 4,083.5 holds ⌊4083.5/3000⌋ = 1 prompt: 2 x 3,000
    (3000, 5000, 1, 3000.0),   # longer than the room: unchanged (chunked as before)
])
def test_whole_prompt_room(room, prompt, dp, expected):
    assert sch.whole_prompt_room(room, prompt_tokens=prompt, dp=dp) == pytest.approx(expected)


def _schedule(monkeypatch, on: bool, **kw):
    monkeypatch.setattr(sch, "TRTLLM_WHOLE_CONTEXTS", on)
    return sch.engine_schedule(kw.pop("engine", "trtllm"), gpu_big=True, gpu_gib=79.6, max_position=131072, **kw)


def test_schedule_flag(monkeypatch):
    assert _schedule(monkeypatch, True).whole_prompts
    assert _schedule(monkeypatch, True, max_num_batched_tokens=150).whole_prompts  # survives an override
    assert _schedule(monkeypatch, True, chunked_prefill=False).whole_prompts
    assert not _schedule(monkeypatch, True, chunked_prefill=True).whole_prompts  # chunking on: chunks as before
    assert not _schedule(monkeypatch, True, engine="vllm").whole_prompts
    assert not _schedule(monkeypatch, False).whole_prompts  # switch off


def _ttfts(monkeypatch, on: bool) -> list[float]:
    """Three 100-token prompts at once (three clients), one output token each, 150 tokens a step."""
    r = build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), context_tokens=101, input_tokens=100,
                      engine="trtllm", calibration=DERIVED)
    r = dataclasses.replace(r, ttft_fixed_s=0.005)
    s = _schedule(monkeypatch, on, max_num_batched_tokens=150)
    load = sch.Load(replica=r, calibration=DERIVED, schedule=s, input_tokens=100, output_tokens=1, max_running=64)

    def step_time(r, cal, *, decode_seqs, prefill_tokens=0.0, prefill_seqs=0.0):
        return 0.010 + 0.0004 * prefill_tokens if prefill_tokens > 0 else 0.010

    monkeypatch.setattr(replay, "step_time_s", step_time)
    out: list[tuple[float, float]] = []
    replay._replay_trace(load, [], [100] * 3, out, [], outputs=[1] * 3, clients=3)
    return sorted(v for v, _ in out)


def test_replay_whole_prompts(monkeypatch):
    # whole: one prompt a step (the second does not fit the 50 tokens left): 50 ms steps, first tokens at
    # 50, 100, 150 ms, plus o_ttft 5 ms
    assert _ttfts(monkeypatch, True) == pytest.approx([0.055, 0.105, 0.155])


def test_replay_chunked(monkeypatch):
    # switch off: step 1 carries prompt 0 and 50 tokens of prompt 1 (150 tokens, 70 ms); step 2 the other 50 and
    # prompt 2 (150 tokens, 70 ms): first tokens at 70, 140, 140 ms, plus 5 ms
    assert _ttfts(monkeypatch, False) == pytest.approx([0.075, 0.145, 0.145])

