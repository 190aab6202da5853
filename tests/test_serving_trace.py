"""Q8': replaying a benchmark's own arrivals and prompt lengths (AccelMark's online scenario).

Expected step sequences are worked out by hand from the scheduling rules in docs/serving.md; the arrival times are
generated the way AccelMark's ``loadgen/loadgen.py`` generates them (``random.Random(42).expovariate``), written out
here from that source rather than taken from the code under test."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import random
import statistics
from pathlib import Path

import pytest

from planner.catalog import benchmark_harness_data, get_gpu, get_model
from planner.serving import accuracy, replay
from planner.serving import schedule as sch
from planner.serving.calibration import DERIVED
from planner.serving.step import build_replica, step_time_s

ROOT = Path(__file__).resolve().parent.parent


def _load(*, mixed: bool = True, budget: int = 8192, max_running: int = 64):
    r = build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), context_tokens=201, input_tokens=200,
                      calibration=DERIVED)
    s = sch.EngineSchedule(engine="vllm" if mixed else "vllm-v0", budget_tokens=budget, max_num_seqs=1024,
                           mixed=mixed, source="test")
    return r, sch.Load(replica=r, calibration=DERIVED, schedule=s, input_tokens=200, output_tokens=2,
                       max_running=max_running)


def test_trace_replay_by_hand_on_a_mixed_engine():
    """Request 0 (100 tokens) arrives at 0 and is prefilled alone; request 1 (300 tokens) arrives during that step
    and is prefilled in step 2 beside request 0's decode; step 3 decodes request 1."""
    r, load = _load()
    t1 = step_time_s(r, DERIVED, decode_seqs=0, prefill_tokens=100, prefill_seqs=1)
    t2 = t1 + step_time_s(r, DERIVED, decode_seqs=1, prefill_tokens=300, prefill_seqs=1)
    t3 = t2 + step_time_s(r, DERIVED, decode_seqs=1)
    o = r.ttft_fixed_s
    run = replay.trace_open_run(load, runs=[([0.0, t1 / 2], [100, 300])])
    assert run.ttft_s == pytest.approx(((o + t1) + (o + t2 - t1 / 2)) / 2, rel=1e-9)
    assert run.tpot_s == pytest.approx(((t2 - t1) + (t3 - t2)) / 2, rel=1e-9)
    assert run.duration_s == pytest.approx(t3, rel=1e-9)
    # running: request 0 alone in step 1, both in step 2, request 1 alone in step 3
    assert run.mean_running == pytest.approx((t1 + 2 * (t2 - t1) + (t3 - t2)) / t3, rel=1e-9)


def test_trace_replay_by_hand_on_a_prefill_first_engine():
    """Budget 350, both prompts waiting at 0: the first step takes request 0 whole and stops before request 1 (300
    tokens do not fit in the 250 left, and a prefill-first engine does not chunk a second prompt); request 1 gets a
    prefill-only step of its own, which stalls request 0's decoding; then one decode step of both."""
    r, load = _load(mixed=False, budget=350)
    t1 = step_time_s(r, DERIVED, decode_seqs=0, prefill_tokens=100, prefill_seqs=1)
    t2 = t1 + step_time_s(r, DERIVED, decode_seqs=0, prefill_tokens=300, prefill_seqs=1)
    t3 = t2 + step_time_s(r, DERIVED, decode_seqs=2)
    run = replay.trace_open_run(load, runs=[([0.0, 0.0], [100, 300])], stat="median")
    tpots = sorted([t3 - t1, t3 - t2])
    assert run.tpot_s == pytest.approx((tpots[0] + tpots[1]) / 2, rel=1e-9)  # numpy's median of two: their mean
    assert run.duration_s == pytest.approx(t3, rel=1e-9)


def test_runs_are_pooled_and_each_starts_idle():
    r, load = _load()
    one = replay.trace_open_run(load, runs=[([0.0, 0.01, 0.02], [150, 250, 200])])
    three = replay.trace_open_run(load, runs=[([0.0, 0.01, 0.02], [150, 250, 200])] * 3)
    assert three.ttft_s == pytest.approx(one.ttft_s, rel=1e-12)
    assert three.duration_s == pytest.approx(one.duration_s, rel=1e-12)


def test_even_arrivals_and_uniform_lengths_reproduce_the_uniform_replay():
    """The uniform replay (Q8) is the per-request trace replay (Q8') with regular arrivals and one prompt length."""
    r, load = _load(max_running=48)
    for rate in (20.0, 400.0):
        for stat in ("mean", "median"):
            even = replay.finite_open_run(load, rate=rate, prompts=200, stat=stat)
            traced = replay.trace_open_run(load, runs=[([i / rate for i in range(200)], [200] * 200)], stat=stat)
            assert traced.tpot_s == pytest.approx(even.tpot_s, rel=1e-12)
            assert traced.ttft_s == pytest.approx(even.ttft_s, rel=1e-12)
            assert traced.duration_s == pytest.approx(even.duration_s, rel=1e-12)
            assert traced.peak_running == even.peak_running


def _accelmark_points() -> list[dict]:
    data = json.loads((ROOT / "tests" / "data" / "serving" / "accelmark-verified.json").read_text())
    return data["points"]


def test_harness_trace_follows_accelmarks_load_generator():
    """loadgen.py: one random.Random(42) per scenario; for each qps level in suite order, num_runs runs of
    online_request_count gaps expovariate(qps) (drawn upfront, accumulated); the first requests of the dataset."""
    harness = benchmark_harness_data()["accelmark"]
    suite = harness["suites"]["suite_C"]
    assert suite["online_qps_levels"] == [5, 10, 25, 50] and suite["num_runs"] == 3
    point = next(p for p in _accelmark_points() if p["mode"] == "open" and "suite_C" in p["id"]
                 and p["request_rate_per_s"] == 25)
    rng = random.Random(42)
    for qps in (5, 10):  # the levels before 25 consume 3 runs of 300 draws each
        for _ in range(3 * 300):
            rng.expovariate(qps)
    first = list(itertools.accumulate(rng.expovariate(25) for _ in range(300)))
    runs = accuracy.harness_trace(point)
    assert runs is not None and len(runs) == 3
    assert runs[0][0] == pytest.approx(first, rel=1e-12)
    assert runs[1][0] != runs[0][0]
    assert statistics.mean(b - a for a, b in zip(runs[0][0], runs[0][0][1:])) == pytest.approx(1 / 25, rel=0.15)
    lengths = harness["datasets"]["sharegpt_standard_v1"]["input_tokens"]
    assert len(lengths) == 500 and runs[0][1] == lengths[:300]


def test_suite_d_runs_send_the_hundred_requests_their_durations_say():
    """loadgen.py sends requests[:online_request_count], i.e. min(200, len(dataset)) requests. Suite D's dataset is
    not stored; its size is read from the published durations (AccelMark result.json, elapsed_seconds_median at 0.5
    req/s, the first level): the last arrival of the harness's own generator must come before a run can end, and
    the last request then takes about one unloaded request's time (interactive p50 TTFT + 255 · p50 TPOT)."""
    def last_arrivals(n: int) -> list[float]:
        rng = random.Random(42)  # levels 0.5, 1, 2 in order, 2 runs each; 0.5 req/s is the first level
        return [list(itertools.accumulate(rng.expovariate(0.5) for _ in range(n)))[-1] for _ in range(2)]

    published = {"h100": (204.3, 1076.72, 11.88), "h200": (205.3, 1165.86, 16.06)}  # elapsed s, TTFT ms, TPOT ms
    for elapsed, ttft_ms, tpot_ms in published.values():
        assert min(last_arrivals(200)) > elapsed  # 200 requests cannot have ended by then
        tail = elapsed - statistics.mean(last_arrivals(100))
        assert 0.7 < tail / ((ttft_ms + 255 * tpot_ms) / 1e3) < 1.3
    data = benchmark_harness_data()["accelmark"]
    assert data["datasets"]["sharegpt_longctx_v1"]["requests"] == 100
    recorded = data["datasets"]["sharegpt_longctx_v1"]["online_elapsed_seconds_median"]
    assert sorted(v["0.5"] for v in recorded.values()) == [204.3, 205.3]
    point = next(p for p in _accelmark_points() if p["mode"] == "open" and "h100_80gb_hbm3x1_suite_D" in p["id"]
                 and p["request_rate_per_s"] == 0.5)
    runs = accuracy.harness_trace(point)
    assert runs is not None and len(runs) == 2 and all(len(r[0]) == 100 for r in runs)
    assert [r[0][-1] for r in runs] == pytest.approx(last_arrivals(100), rel=1e-12)
    assert {x for r in runs for x in r[1]} == {point["input_tokens"]}


def test_every_accelmark_online_level_is_one_the_suite_runs():
    harness = benchmark_harness_data()["accelmark"]
    for p in _accelmark_points():
        if p["mode"] != "open":
            continue
        suite = next(s for k, s in harness["suites"].items() if f"_{k}_" in p["id"])
        assert p["request_rate_per_s"] in suite["online_qps_levels"], p["id"]
        assert p["num_prompts"] == suite["online_request_count"], p["id"]
        has_trace = accuracy.harness_trace(p) is not None
        assert has_trace == (suite["dataset"] in harness["datasets"]), p["id"]


def test_accelmark_online_points_are_replayed_from_the_trace_and_others_are_not():
    from planner.serving.api import default_calibration, performance

    point = next(p for p in _accelmark_points() if p["mode"] == "open" and "suite_A" in p["id"]
                 and "a100_sxm4_80gb" in p["id"] and "vllm020" in p["id"] and p["request_rate_per_s"] == 5)
    row = accuracy.predict(point, calibration=default_calibration())
    trace = accuracy.harness_trace(point)
    mean_input = sum(trace[0][1]) / len(trace[0][1])
    res = performance("llama-3.1-8b", "a100-80gb-sxm", engine_version="0.20.1", input_tokens=mean_input,
                      output_tokens=310, request_rate=5.0, max_num_seqs=128, max_num_batched_tokens=2048,
                      max_model_len=4096, latency_stat="median", trace=trace)
    assert res.mode == "open-trace"
    assert row is not None and row.predicted["ttft"] == pytest.approx(res.ttft_s, rel=1e-9)
    # at 5 req/s the engine is far from its cap: the median TTFT is the front end plus a few steps (the step already
    # scheduled under 0.20's async scheduling, the one that carries the prompt, little queue), not a queue's worth
    assert res.ttft_s < default_calibration().ttft_fixed_s("vllm") + 4 * res.tpot_s
    other = next(p for p in json.loads((ROOT / "tests" / "data" / "serving" / "dstack-405b-h100-mi300x.json")
                                       .read_text())["points"] if p["mode"] == "open")
    assert accuracy.harness_trace(other) is None
    assert math.isfinite(row.predicted["tpot"])


def test_harness_data_is_sourced():
    data = benchmark_harness_data()
    source = data["source"]
    assert source["repo"] == "FreedomIntelligence/AccelMark" and len(source["commit"]) == 40
    assert source["as_of"] and "loadgen/loadgen.py" in source["paths"]
    lengths = data["accelmark"]["datasets"]["sharegpt_standard_v1"]["input_tokens"]
    assert all(isinstance(x, int) and x > 0 for x in lengths)


def test_closed_trace_by_hand():
    """Q8'': two clients, three 100-token prompts of 2 output tokens. Requests 0 and 1 start together and are
    prefilled in one step; one decode step of both ends them; their completion starts request 2 at that instant,
    which is prefilled alone and decoded alone."""
    r, load = _load()
    t1 = step_time_s(r, DERIVED, decode_seqs=0, prefill_tokens=200, prefill_seqs=2)
    t2 = t1 + step_time_s(r, DERIVED, decode_seqs=2)
    t3 = t2 + step_time_s(r, DERIVED, decode_seqs=0, prefill_tokens=100, prefill_seqs=1)
    t4 = t3 + step_time_s(r, DERIVED, decode_seqs=1)
    o = r.ttft_fixed_s
    run = replay.trace_closed_run(load, clients=2, input_tokens=[100] * 3, output_tokens=[2] * 3)
    assert run.ttft_s == pytest.approx((2 * (o + t1) + (o + t3 - t2)) / 3, rel=1e-9)
    assert run.tpot_s == pytest.approx((2 * (t2 - t1) + (t4 - t3)) / 3, rel=1e-9)
    assert run.duration_s == pytest.approx(t4, rel=1e-9)
    assert run.peak_running == 2 and run.peak_waiting == 0


def test_closed_trace_per_request_outputs():
    """Request 0 generates 1 token (no TPOT, as bench_serving counts TPOT only for outputs > 1) and frees its client
    at its first token; request 1 (3 tokens) decodes two steps."""
    r, load = _load()
    t1 = step_time_s(r, DERIVED, decode_seqs=0, prefill_tokens=200, prefill_seqs=2)
    t2 = t1 + step_time_s(r, DERIVED, decode_seqs=1, prefill_tokens=100, prefill_seqs=1)  # request 2 joins
    run = replay.trace_closed_run(load, clients=2, input_tokens=[100] * 3, output_tokens=[1, 3, 2], stat="mean")
    o = r.ttft_fixed_s
    assert run.ttft_s == pytest.approx((2 * (o + t1) + (o + t2 - t1)) / 3, rel=1e-9)


@pytest.mark.parametrize(("input_len", "output_len", "n", "total_in", "total_out"), [
    (1000, 1000, 500, 249831, 252162),   # cookbook Qwen3 / DeepSeek-R1 'High Concurrency' 1000/1000
    (8000, 1000, 320, 1273893, 169680),  # Qwen3 8000/1000 c64
    (1000, 8000, 320, 158939, 1300705),  # Qwen3 1000/8000 c64
    (1000, 1000, 10, 6101, 4210),        # Llama 3.1 70B 'Low Concurrency' input total; Qwen3's output total
])
def test_bench_serving_random_lengths_reproduce_the_published_totals(input_len, output_len, n, total_in,
                                                                     total_out):
    """Totals as published in the SGLang cookbook's 'Serving Benchmark Result' blocks ('Total input tokens',
    'Total generated tokens'; tests/data/serving/sglang-cookbook.json records them in its notes)."""
    ins, outs = accuracy.random_lengths(n, input_len=input_len, output_len=output_len)
    assert (sum(ins), sum(outs)) == (total_in, total_out)


@pytest.mark.parametrize(("input_len", "output_len", "n", "ratio", "seed"),
                         [(1000, 1000, 10, 0.0, 1), (8000, 1000, 320, 0.0, 1), (3, 7, 50, 0.5, 2), (1, 1, 5, 0.0, 1),
                          (131072, 4096, 1000, 0.3, 7)])
def test_random_lengths_are_numpys_legacy_stream(input_len, output_len, n, ratio, seed):
    """The pure-Python generator draws exactly what numpy's legacy RandomState draws (the library sglang uses)."""
    np = pytest.importorskip("numpy")
    rs = np.random.RandomState(seed)
    ins = [int(x) for x in rs.randint(max(int(input_len * ratio), 1), input_len + 1, size=n)]
    outs = [int(x) for x in rs.randint(int(output_len * ratio), output_len + 1, size=n)]
    assert accuracy.random_lengths(n, input_len=input_len, output_len=output_len, range_ratio=ratio,
                                   seed=seed) == (ins, outs)


def test_cookbook_run_lengths_and_cached_prompts():
    """A 'High Concurrency' run (64 clients, 320 prompts) follows the 80-prompt 'Medium' run of the same workload:
    its first 80 prompts are cached (one token left to compute); a 'Low' run only has its warmup prompt cached."""
    data = json.loads((ROOT / "tests" / "data" / "serving" / "sglang-cookbook.json").read_text())
    by_id = {p["id"]: p for p in data["points"]}
    high = accuracy.bench_serving_lengths(by_id["sglang-cookbook/qwen3-235b-a22b/b200-hgxx8/3981-530/c64"])
    assert high is not None and len(high[0]) == 320
    assert high[0][:80] == [1] * 80 and min(high[0][80:]) > 1
    low = accuracy.bench_serving_lengths(by_id["sglang-cookbook/qwen3-235b-a22b/b200-hgxx8/4194-421/c1"])
    assert low is not None and low[0][0] == 1 and min(low[0][1:]) > 1
    assert accuracy.bench_serving_lengths(by_id["sglang-cookbook/deepseek-v3/mi300xx8/302-188/c100"]) is None


def test_finite_closed_points_are_replayed():
    """A closed-loop point with a published prompt count is replayed (Q8''), with the statistic the source
    publishes (the vLLM FP8-KV blog: medians)."""
    data = json.loads((ROOT / "tests" / "data" / "serving" / "vllm-blog-fp8-kvcache.json").read_text())
    point = data["points"][0]
    assert point["stat"] == "median" and point["num_prompts"] and point["concurrency"]
    from planner.serving.api import default_calibration

    row = accuracy.predict(point, calibration=default_calibration())
    assert "Q8''" in row.note


def test_performance_replays_a_closed_run_with_known_lengths():
    """``performance(..., concurrency=N, lengths=...)`` replays the run (mode ``closed-trace``), also with ``pp = 2``
    (each virtual engine takes every other request and half the clients)."""
    from planner.serving.api import performance

    kw = dict(input_tokens=300, output_tokens=200, concurrency=8)
    ins, outs = [300] * 40, [200] * 40
    res = performance("llama-3.1-8b", "h100-sxm", lengths=(ins, outs), **kw)
    assert res.mode == "closed-trace" and math.isfinite(res.ttft_s) and res.tpot_s > 0
    assert res.output_tokens_per_s == pytest.approx(res.requests_per_s * 200, rel=1e-12)
    two = performance("llama-3.1-70b", "h100-sxm", tp=2, pp=2, lengths=(ins, outs), **kw)
    assert two.mode == "closed-trace" and two.requests_per_s > 0 and math.isfinite(two.ttft_s)


# --- one closed-loop method: the API's finite closed loop is the replay (Q8'') --------------------------------------

def _closed_points() -> list[dict]:
    out = []
    for path in sorted((ROOT / "tests" / "data" / "serving").glob("*.json")):
        out += [p for p in json.loads(path.read_text())["points"]
                if p["mode"] == "closed" and p.get("num_prompts") and p.get("concurrency")]
    return out


@pytest.mark.parametrize("point_id", [
    "vllm-blog-fp8-kvcache/llama-3.1-8b/h100-sxmx1/20000-2000/c8/kv-fp8",  # published medians
    "vllm-blog-fp8-kvcache/llama-3.1-8b/h100-sxmx1/20000-2000/c8/kv-bf16",
])
def test_the_api_answers_a_finite_closed_run_as_the_accuracy_tables_do(point_id):
    """``performance(..., concurrency=N, num_prompts=P)`` (the library, and ``planner calibrate-bench``, which
    predicts through :func:`accuracy.predict`) gives the accuracy tables' answer for the same point to 1e-12, and
    that answer is the replay of ``P`` requests of the point's lengths (written out here, not taken from the API)."""
    from planner.serving.api import default_calibration, performance

    point = next(p for p in _closed_points() if p["id"] == point_id)
    cal = default_calibration()
    row = accuracy.predict(point, calibration=cal)
    kw = dict(engine="vllm", weight_dtype="auto", kv_cache_dtype=point["kv_cache_dtype"] or "auto",
              input_tokens=point["input_tokens"], output_tokens=point["output_tokens"],
              concurrency=point["concurrency"], calibration=cal, latency_stat="median")
    api = performance(point["model"], point["gpu"], num_prompts=point["num_prompts"], **kw)
    assert api.mode == "closed-trace"
    p, i, o = point["num_prompts"], point["input_tokens"], point["output_tokens"]
    by_hand = performance(point["model"], point["gpu"], lengths=([i] * p, [o] * p), **kw)
    for metric, value in (("tpot", api.tpot_s), ("ttft", api.ttft_s), ("otps", api.output_tokens_per_s)):
        assert value == pytest.approx(row.predicted[metric], rel=1e-12, abs=0)
    assert (api.tpot_s, api.ttft_s, api.output_tokens_per_s) == (by_hand.tpot_s, by_hand.ttft_s,
                                                                 by_hand.output_tokens_per_s)
    # without num_prompts the same call is the steady state (what the template asks), not the replay
    assert performance(point["model"], point["gpu"], **kw).mode == "closed"


def test_every_finite_closed_point_is_the_apis_replay():
    """No closed-loop point with a published prompt count is answered by the steady state."""
    from planner.serving.api import default_calibration

    cal = default_calibration()
    for point in _closed_points():
        row = accuracy.predict(point, calibration=cal)
        assert row is None or row.note.startswith(("closed run replayed", "not modelled", "published TPOT")), \
            (point["id"], row.note)


def _api_replica(input_tokens: float, output_tokens: float):
    """The replica :func:`planner.serving.api.performance` builds for Llama-3.1-8B on one H100 (vLLM V1, BF16)."""
    return build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"),
                         context_tokens=input_tokens + output_tokens / 2, input_tokens=input_tokens,
                         cached_tokens=0.0, engine="vllm", calibration=DERIVED)


def test_closed_replay_with_one_client_has_no_queue():
    """N = 1: each request starts when the previous one ends, on an idle engine: its prompt in one step of 1,000
    tokens, then 99 decode steps of one sequence. TTFT = o_ttft + t(0, 1000), TPOT = t_d(1),
    X = 1/(t(0, 1000) + 99·t_d(1)), whatever the number of prompts."""
    from planner.serving.api import performance

    r = _api_replica(1000, 100)
    t_pre = step_time_s(r, DERIVED, decode_seqs=0, prefill_tokens=1000, prefill_seqs=1)
    t_d = step_time_s(r, DERIVED, decode_seqs=1)
    for prompts in (1, 5, 40):
        res = performance("llama-3.1-8b", "h100-sxm", input_tokens=1000, output_tokens=100, concurrency=1,
                          num_prompts=prompts, calibration=DERIVED)
        assert res.mode == "closed-trace" and res.admission_wait_s == 0.0
        assert res.ttft_s == pytest.approx(r.ttft_fixed_s + t_pre, rel=1e-9)
        assert res.tpot_s == pytest.approx(t_d, rel=1e-9)
        assert res.requests_per_s == pytest.approx(1 / (t_pre + 99 * t_d), rel=1e-9)
        assert res.e2e_s == pytest.approx(r.ttft_fixed_s + t_pre + 99 * t_d, rel=1e-9)


def test_closed_replay_with_as_many_prompts_as_clients_is_one_wave():
    """P = N = 6: all six prompts (6 x 1,000 tokens, within vLLM's 8,192-token budget on an H100) are prefilled in
    one step, then 99 decode steps of six sequences: TTFT = o_ttft + t(0, 6000; 6 prompts), TPOT = t_d(6),
    X = 6/(t(0, 6000) + 99·t_d(6)); the one-shot offline batch (Q7) says the same."""
    from planner.serving.api import performance

    r = _api_replica(1000, 100)
    t_pre = step_time_s(r, DERIVED, decode_seqs=0, prefill_tokens=6000, prefill_seqs=6)
    t_d = step_time_s(r, DERIVED, decode_seqs=6)
    res = performance("llama-3.1-8b", "h100-sxm", input_tokens=1000, output_tokens=100, concurrency=6,
                      num_prompts=6, calibration=DERIVED)
    assert res.ttft_s == pytest.approx(r.ttft_fixed_s + t_pre, rel=1e-9)
    assert res.tpot_s == pytest.approx(t_d, rel=1e-9)
    assert res.requests_per_s == pytest.approx(6 / (t_pre + 99 * t_d), rel=1e-9)
    offline = performance("llama-3.1-8b", "h100-sxm", input_tokens=1000, output_tokens=100, num_prompts=6,
                          calibration=DERIVED)
    assert offline.ttft_s == pytest.approx(res.ttft_s, rel=1e-9)
    assert offline.requests_per_s == pytest.approx(res.requests_per_s, rel=1e-9)


# --- Q4': a prefill step's token reaches the client after the next step is launched (vLLM V0, SGLang) ------------

def _engine_load(engine: str):
    r = build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), context_tokens=201, input_tokens=200,
                      engine=engine, calibration=DERIVED)
    s = sch.EngineSchedule(engine=engine, budget_tokens=8192, max_num_seqs=1024, mixed=engine == "vllm",
                           source="test")
    return r, sch.Load(replica=r, calibration=DERIVED, schedule=s, input_tokens=200, output_tokens=3,
                       max_running=64)


@pytest.mark.parametrize(("engine", "deferred"), [("vllm-v0", True), ("sglang", True), ("vllm", False),
                                                  ("trtllm", False)])
def test_first_token_waits_for_the_next_step_launch_on_deferred_engines(engine, deferred):
    """One request alone: its first token is sampled at the end of its prefill step ``t1``; vLLM V0 (async output
    processing) and SGLang (overlap scheduler) process that output only once the next step (one decoding
    sequence) is scheduled and launched, i.e. after that step's fixed part ``o_engine + o_seq·1`` (DERIVED: 1.5 ms +
    50 us for V0, 0.5 ms + 10 us for SGLang); vLLM V1 and TensorRT-LLM hand it out at ``t1``."""
    r, load = _engine_load(engine)
    t1 = step_time_s(r, DERIVED, decode_seqs=0, prefill_tokens=200, prefill_seqs=1)
    by_hand = {"vllm-v0": 1.5e-3 + 50e-6, "sglang": 0.5e-3 + 10e-6}.get(engine, 0.0) if deferred else 0.0
    run = replay.trace_open_run(load, runs=[([0.0], [200])])
    assert run.ttft_s == pytest.approx(r.ttft_fixed_s + t1 + by_hand, rel=1e-9)
    # the steady state of one closed-loop client says the same (no queue, no step in flight)
    st, _ = sch.closed_loop(load, clients=1)
    assert st.ttft_s == pytest.approx(r.ttft_fixed_s + t1 + by_hand, rel=1e-3)  # bisection resolution


def test_v1_prefix_cache_of_accelmarks_repeated_passes():
    """Session 9, tried and off (accuracy.V1_PREFIX_CACHE): vLLM V1 caches whole 16-token blocks and recomputes the
    last prompt token on a full hit (KVCacheManager.get_computed_blocks), so a cached 280-token prompt leaves
    280 - 16*17 = 8 tokens; AccelMark's warmup sends the first 10 requests (loadgen.py, online_warmup_requests),
    so the first pass of the first level has those cached and every later pass all of them."""
    assert [accuracy.cached_prompt_tail(n) for n in (280, 272, 273, 1)] == [8, 16, 1, 1]
    v1 = next(p for p in _accelmark_points() if p["mode"] == "open" and "vllm020" in p["id"] and "suite_A" in p["id"]
              and p["request_rate_per_s"] == 5)
    v0 = next(p for p in _accelmark_points() if p["mode"] == "open" and "vllm_47f5d58e" in p["id"]
              and "suite_A" in p["id"] and p["request_rate_per_s"] == 5)
    assert accuracy.accelmark_prefix_cache(v1) and not accuracy.accelmark_prefix_cache(v0)
    lengths = benchmark_harness_data()["accelmark"]["datasets"]["sharegpt_standard_v1"]["input_tokens"][:300]
    runs = accuracy.harness_trace(v1, kv_tokens=1e6)
    assert runs[0][1][:10] == [n - 16 * ((n - 1) // 16) for n in lengths[:10]] and runs[0][1][10:] == lengths[10:]
    assert runs[1][1] == [n - 16 * ((n - 1) // 16) for n in lengths]
    assert accuracy.harness_trace(v1, kv_tokens=1e4)[1][1] == lengths  # 300 x (prompt + 512) do not fit: no cache
    assert accuracy.harness_trace(v0, kv_tokens=1e6)[1][1] == lengths  # V0: prefix caching off by default


def test_replay_median_is_numpys():
    """The tools' medians (np.median in vllm bench serve and sglang.bench_serving, np.percentile(x, 50) in
    AccelMark's loadgen.py) interpolate the middle two of an even count; the replays' (value, count) pairs give the
    same as statistics.median of the expanded list."""
    from planner.serving.replay import _stat

    assert _stat([(1.0, 1), (2.0, 1), (4.0, 1), (10.0, 1)], "p50") == 3.0
    assert _stat([(5.0, 2), (1.0, 2)], "median") == 3.0
    pairs = [(0.5, 3), (0.2, 1), (0.9, 2)]
    assert _stat(pairs, "median") == statistics.median([0.5] * 3 + [0.2] + [0.9] * 2)
    assert _stat(pairs, "mean") == pytest.approx((0.5 * 3 + 0.2 + 0.9 * 2) / 6)


def test_v0_kv_admission_and_preemption_by_hand():
    """vLLM V0 without chunked prefill admits a prompt while its KV fits the free cache less the 1% watermark and,
    when the running requests' next tokens do not fit, preempts the most recently admitted one (RECOMPUTE: back at
    the head of the queue, its prompt and generated tokens prefilled again; that step samples its next token).
    Three 40-token prompts at 0, 11 output tokens (10 decode steps) each, a KV cache of 90 tokens, worked by hand:
    P(80, 2 prompts) -> 5 decode steps of 2 (KV 80 -> 90) -> request 1 preempted (KV 45) -> 5 steps of 1, request 0
    done (KV 0) -> P(45 + 40, 2): request 1 recomputed (generated 6), request 2's first token (KV 86) -> 2 steps of 2
    (KV 90) -> request 2 preempted (KV 48) -> 2 steps of 1, request 1 done -> P(42, 1): request 2 recomputed
    (generated 3) -> 7 steps of 1."""
    r = build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), context_tokens=45, input_tokens=40,
                      engine="vllm-v0", calibration=DERIVED)
    s = sch.EngineSchedule(engine="vllm-v0", budget_tokens=4096, max_num_seqs=256, mixed=False, source="test")
    load = sch.Load(replica=r, calibration=DERIVED, schedule=s, input_tokens=40, output_tokens=11, max_running=256,
                    kv_tokens=90)

    def p(tokens: int, seqs: int) -> float:
        return step_time_s(r, DERIVED, decode_seqs=0, prefill_tokens=tokens, prefill_seqs=seqs)

    def d(seqs: int) -> float:
        return step_time_s(r, DERIVED, decode_seqs=seqs)

    delay2 = sch.first_token_delay_s(r, decode_seqs=2)  # Q4': V0 hands the first token out after the next launch
    first01 = p(80, 2)
    end0 = p(80, 2) + 5 * d(2) + 5 * d(1)
    end1 = end0 + p(85, 2) + 2 * d(2) + 2 * d(1)
    first2 = end0 + p(85, 2)
    end2 = end1 + p(42, 1) + 7 * d(1)
    run = replay.trace_open_run(load, runs=[([0.0, 0.0, 0.0], [40, 40, 40])], stat="mean")
    o = r.ttft_fixed_s + delay2
    assert run.ttft_s == pytest.approx((2 * (o + first01) + o + first2) / 3, rel=1e-9)
    assert run.tpot_s == pytest.approx(((end0 - first01) + (end1 - first01) + (end2 - first2)) / 30, rel=1e-9)
    assert run.duration_s == pytest.approx(end2, rel=1e-9)
    assert run.peak_running == 2
    # without the KV limit the replay keeps the request cap only: all three admitted at once
    off = replay.trace_open_run(dataclasses.replace(load, kv_tokens=None, max_running=256),
                             runs=[([0.0, 0.0, 0.0], [40, 40, 40])], stat="mean")
    assert off.peak_running == 3 and off.duration_s < run.duration_s


def test_v0_kv_admission_matches_the_request_cap_replay_when_the_cache_is_ample():
    r = build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), context_tokens=400, input_tokens=300,
                      engine="vllm-v0", calibration=DERIVED)
    s = sch.EngineSchedule(engine="vllm-v0", budget_tokens=4096, max_num_seqs=64, mixed=False, source="test")
    load = sch.Load(replica=r, calibration=DERIVED, schedule=s, input_tokens=300, output_tokens=200, max_running=64,
                    kv_tokens=1e9)
    runs = [([i / 40.0 for i in range(200)], [300] * 200)]
    with_kv = replay.trace_open_run(load, runs=runs)
    without = replay.trace_open_run(dataclasses.replace(load, kv_tokens=None), runs=runs)
    assert with_kv.ttft_s == pytest.approx(without.ttft_s, rel=1e-9)
    assert with_kv.tpot_s == pytest.approx(without.tpot_s, rel=1e-9)
    assert with_kv.peak_running == without.peak_running == 64
