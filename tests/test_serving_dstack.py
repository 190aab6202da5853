"""dstack's Llama-3.1-405B runs (session 12, latency11): benchmark_serving's own load for the ShareGPT runs (tried, off)
and vLLM V0's eager decode past ``max_seq_len_to_capture`` (kept).

The expected step sequences are worked out by hand from the rules in docs/serving.md (section 4, latency11) and the
vLLM V0 code they cite; the published totals are copied from the runs' result files
(dstackai/benchmarks 06c957a, ``comparison/h100sxm5_vs_mi300x/raw_data/8xH100SXM5-serving/``), not taken from the
code under test."""

from __future__ import annotations

import dataclasses
import math

import pytest

from planner.catalog import benchmark_harness_data, get_gpu, get_model
from planner.serving import accuracy, replay
from planner.serving import schedule as sch
from planner.serving.api import default_calibration, performance
from planner.serving.calibration import DERIVED
from planner.serving.step import build_replica, step_time_s

H100_QPS16 = "dstack-405b/8xH100-1FP8-meta/sharegpt/qps16"


def test_sharegpt_trace_matches_the_published_result_file():
    """``nvidia-vllm-16.0qps-...-20241109-150547.json``: total_input_tokens 215196, total_output_tokens 120689 over
    1,000 requests; request 1 arrives one exponential gap after request 0, the first draw of numpy's legacy MT19937
    seeded with 0 (its first double is 0.5488135039273248, the documented ``np.random.seed(0); np.random.rand()``)."""
    runs = accuracy.dstack_sharegpt_trace({"id": H100_QPS16, "mode": "open", "request_rate_per_s": 16.0})
    assert runs is not None and len(runs) == 1
    arrivals, prompts, outputs = runs[0]
    assert len(arrivals) == len(prompts) == len(outputs) == 1000
    assert sum(prompts) == 215196 and sum(outputs) == 120689
    assert arrivals[0] == 0.0
    assert arrivals[1] == pytest.approx(-math.log(1.0 - 0.5488135039273248) / 16.0, rel=1e-12)
    assert all(b >= a for a, b in zip(arrivals, arrivals[1:]))
    # 999 gaps of mean 1/16 s: the last arrival near 62 s (a Poisson process's sum, not 999/16 exactly)
    assert 50.0 < arrivals[-1] < 75.0


def test_sharegpt_arrivals_are_numpys_own():
    """The arrivals come from numpy's legacy generator reproduced without numpy: bit for bit what
    ``np.random.seed(0)`` then ``np.random.exponential(1/λ)`` and a running sum give (benchmark_serving's
    ``get_request``)."""
    np = pytest.importorskip("numpy")
    data = benchmark_harness_data()["dstack_sharegpt"]
    run = accuracy.dstack_sharegpt_trace({"id": "dstack-405b/8xH100-1FP8-meta/sharegpt/qps16", "mode": "open",
                                          "request_rate_per_s": 16.0, "output_tokens": 121})
    assert run is not None
    n = len(data["input_tokens"])
    gaps = np.random.RandomState(int(data["seed"])).exponential(1.0 / 16.0, size=n - 1)
    assert run[0][0] == [0.0, *(float(x) for x in np.cumsum(gaps))]


def test_sharegpt_trace_only_for_dstack_sharegpt_points_and_outputs_only_where_stored():
    amd = accuracy.dstack_sharegpt_trace({"id": "dstack-405b/8xMi300-1FP8-amd/sharegpt/qps32", "mode": "open",
                                         "request_rate_per_s": 32.0})
    assert amd is not None and len(amd[0]) == 2  # the amd build's result files are absent: prompts only
    assert accuracy.dstack_sharegpt_trace({"id": "dstack-405b/8xH100-1FP8-meta/2048-2048/offline-n8",
                                           "mode": "offline", "request_rate_per_s": None}) is None
    assert accuracy.dstack_sharegpt_trace({"id": "accelmark/x/online/qps5", "mode": "open",
                                           "request_rate_per_s": 5.0}) is None
    data = benchmark_harness_data()["dstack_sharegpt"]
    assert set(data["runs"]) == {f"dstack-405b/{b}/sharegpt/qps{q}" for b in ("8xH100-1FP8-meta",
                                                                              "8xMi300x-1FP8-meta")
                                 for q in (16, 32, 1000)}


def test_the_kept_flags_say_what_docs_say():
    """The trace was tried and not kept; V0's graph-capture cap was kept (docs/serving.md section 4, latency11)."""
    from planner.serving import step

    assert accuracy.DSTACK_TRACE is False and step.V0_GRAPH_SEQ_CAP is True


def _v1_load():
    r = build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), context_tokens=101, input_tokens=100,
                      calibration=DERIVED)
    s = sch.EngineSchedule(engine="vllm", budget_tokens=8192, max_num_seqs=1024, mixed=True, source="test")
    return r, sch.Load(replica=r, calibration=DERIVED, schedule=s, input_tokens=100, output_tokens=4,
                       max_running=64)


def test_trace_with_per_request_outputs_by_hand():
    """Two 100-token prompts at 0 with outputs 1 and 4 on a mixed engine: one prefill step of both; request 0 ends
    with it (one token: no TPOT, as benchmark_serving counts only outputs above 1), request 1 decodes 3 steps alone."""
    r, load = _v1_load()
    t1 = step_time_s(r, DERIVED, decode_seqs=0, prefill_tokens=200, prefill_seqs=2)
    td1 = step_time_s(r, DERIVED, decode_seqs=1)
    run = replay.trace_open_run(load, runs=[([0.0, 0.0], [100, 100], [1, 4])])
    assert run.tpot_s == pytest.approx(td1, rel=1e-9)
    assert run.ttft_s == pytest.approx(r.ttft_fixed_s + t1, rel=1e-9)
    assert run.duration_s == pytest.approx(t1 + 3 * td1, rel=1e-9)


def test_trace_outputs_equal_to_the_uniform_length_change_nothing():
    _, load = _v1_load()
    arrivals, prompts = [0.0, 0.01, 0.02, 0.5], [100, 300, 50, 700]
    two = replay.trace_open_run(load, runs=[(arrivals, prompts)])
    three = replay.trace_open_run(load, runs=[(arrivals, prompts, [4] * 4)])
    assert dataclasses.astuple(two) == dataclasses.astuple(three)


def test_api_output_rate_uses_the_recorded_outputs():
    arrivals, prompts, outputs = [0.0, 0.05, 0.1], [200, 200, 200], [10, 30, 50]
    res = performance("llama-3.1-8b", "h100-sxm", engine="vllm", input_tokens=200, output_tokens=30,
                      request_rate=20.0, trace=[(arrivals, prompts, outputs)], calibration=DERIVED)
    assert res.mode == "open-trace"
    assert res.output_tokens_per_s == pytest.approx(res.requests_per_s * 30.0, rel=1e-12)  # mean of 10, 30, 50


def test_v0_decode_past_max_seq_len_to_capture_is_eager():
    """vLLM V0 replays a decode step as a CUDA graph only while the batch's sequences are within
    ``max_seq_len_to_capture`` (8,192 by default in 0.6/0.7, ``ModelRunner._use_captured_graph``). Past it every step
    is eager, which is what ``enforce_eager=True`` asks for (V0's prompt steps are eager either way); within it, or
    on V1, nothing changes."""
    cal = default_calibration()  # the fitted eager floor (0.41 ms a layer) binds an 8B step; the derived not
    kw = dict(engine="vllm", engine_version="0.6.3", output_tokens=200, concurrency=1, calibration=cal)
    long_default = performance("llama-3.1-8b", "h100-sxm", input_tokens=20000, **kw)
    long_eager = performance("llama-3.1-8b", "h100-sxm", input_tokens=20000, enforce_eager=True, **kw)
    long_graphs = performance("llama-3.1-8b", "h100-sxm", input_tokens=20000, max_seq_len_to_capture=32768, **kw)
    assert dataclasses.astuple(long_default) == dataclasses.astuple(long_eager)
    # the eager floor: Llama-3.1-8B's 32 layers at the eager per-layer floor
    assert long_default.tpot_s >= 32 * cal.eager_layer_floor_s
    assert long_graphs.tpot_s < long_default.tpot_s
    short_default = performance("llama-3.1-8b", "h100-sxm", input_tokens=4000, **kw)
    short_eager = performance("llama-3.1-8b", "h100-sxm", input_tokens=4000, enforce_eager=True, **kw)
    assert short_default.tpot_s < short_eager.tpot_s
    v1 = dict(kw, engine_version="0.10.0")
    assert performance("llama-3.1-8b", "h100-sxm", input_tokens=20000, **v1).tpot_s < performance(
        "llama-3.1-8b", "h100-sxm", input_tokens=20000, enforce_eager=True, **v1).tpot_s
