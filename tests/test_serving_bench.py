"""Benchmark result files (vLLM, SGLang, genai-perf), calibration files and ``planner calibrate-bench``.

The result files below follow the tools' real schemas:

- vLLM: ``vllm/benchmarks/serve.py`` — ``benchmark()`` returns ``duration``, ``completed``, ``failed``,
  ``total_input_tokens``, ``total_output_tokens``, ``request_throughput``, ``output_throughput``,
  ``total_token_throughput``, ``input_lens``, ``output_lens``, ``ttfts``, ``itls``, ``errors`` and, from
  ``process_one_metric``, ``mean_/median_/std_/p99_{ttft,tpot,itl,e2el}_ms``; ``main`` adds ``date``, ``backend``,
  ``model_id``, ``tokenizer_id``, ``num_prompts``, ``request_rate`` ("inf"), ``burstiness``, ``max_concurrency``.
- SGLang: ``python/sglang/bench_serving.py`` — one JSON line per run with ``backend``, ``dataset_name``,
  ``request_rate``, ``max_concurrency``, ``random_input_len``, ``random_output_len``, ``duration``, ``completed``,
  ``total_input_tokens``, ``total_output_tokens``, ``request_throughput``, ``output_throughput``,
  ``mean_e2e_latency_ms``, ``mean_ttft_ms``, ``mean_tpot_ms``, ``mean_itl_ms`` ...
- genai-perf / AIPerf: ``profile_export_genai_perf.json`` — one object per metric (``unit``, ``avg``, ``p50``,
  ...): ``request_throughput``, ``request_latency``, ``time_to_first_token``, ``inter_token_latency``,
  ``output_token_throughput``, ``output_sequence_length``, ``input_sequence_length``, and ``input_config``.
The measured numbers are plausible values for Llama-3.1-8B on one H100 (they are inputs of the fit, not expected
outputs of the code).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from planner import serving_performance
from planner.errors import ArgumentError, PlannerError
from planner.serving.bench import BenchFormatError, parse
from planner.serving.calibration import DERIVED, FORMAT, from_dict, to_dict

VLLM_RESULT = {
    "date": "20261201-101500", "endpoint_type": "openai", "backend": "vllm", "label": None,
    "model_id": "meta-llama/Llama-3.1-8B-Instruct", "tokenizer_id": "meta-llama/Llama-3.1-8B-Instruct",
    "num_prompts": 320, "request_rate": "inf", "burstiness": 1.0, "max_concurrency": 32,
    "duration": 61.2, "completed": 320, "failed": 0, "total_input_tokens": 320000, "total_output_tokens": 64000,
    "request_throughput": 5.23, "request_goodput": None, "output_throughput": 1045.8,
    "total_token_throughput": 6274.5, "input_lens": [1000] * 3, "output_lens": [200] * 3,
    "ttfts": [0.08, 0.07, 0.09], "itls": [[0.029, 0.03]] * 3, "errors": ["", "", ""],
    "mean_ttft_ms": 82.1, "median_ttft_ms": 75.3, "std_ttft_ms": 20.2, "p99_ttft_ms": 160.4,
    "mean_tpot_ms": 29.8, "median_tpot_ms": 29.7, "std_tpot_ms": 1.1, "p99_tpot_ms": 32.0,
    "mean_itl_ms": 29.8, "median_itl_ms": 28.9, "std_itl_ms": 5.0, "p99_itl_ms": 60.1,
    "mean_e2el_ms": 6012.3, "median_e2el_ms": 6001.0, "std_e2el_ms": 220.0, "p99_e2el_ms": 6500.0,
}

SGLANG_LINES = [
    {"backend": "sglang", "dataset_name": "random", "request_rate": "inf", "max_concurrency": 16,
     "sharegpt_output_len": None, "random_input_len": 2000, "random_output_len": 300, "random_range_ratio": 1.0,
     "duration": 40.1, "completed": 160, "total_input_tokens": 320000, "total_output_tokens": 48000,
     "total_output_tokens_retokenized": 47990, "request_throughput": 3.99, "input_throughput": 7980.0,
     "output_throughput": 1197.0, "mean_e2e_latency_ms": 4010.0, "median_e2e_latency_ms": 4000.0,
     "std_e2e_latency_ms": 100.0, "p99_e2e_latency_ms": 4300.0, "mean_ttft_ms": 140.0, "median_ttft_ms": 120.0,
     "std_ttft_ms": 50.0, "p99_ttft_ms": 300.0, "mean_tpot_ms": 12.9, "median_tpot_ms": 12.8, "std_tpot_ms": 0.4,
     "p99_tpot_ms": 14.0, "mean_itl_ms": 12.9, "median_itl_ms": 12.1, "std_itl_ms": 3.0, "p99_itl_ms": 30.0,
     "concurrency": 15.9},
    {"backend": "sglang", "dataset_name": "random", "request_rate": "inf", "max_concurrency": 64,
     "random_input_len": 2000, "random_output_len": 300, "random_range_ratio": 1.0, "duration": 52.0,
     "completed": 640, "total_input_tokens": 1280000, "total_output_tokens": 192000, "request_throughput": 12.3,
     "input_throughput": 24600.0, "output_throughput": 3692.0, "mean_e2e_latency_ms": 5200.0,
     "mean_ttft_ms": 420.0, "median_ttft_ms": 380.0, "mean_tpot_ms": 16.0, "mean_itl_ms": 16.0,
     "concurrency": 63.5},
]

GENAI_PERF = {
    "request_throughput": {"unit": "requests/sec", "avg": 1.21},
    "request_latency": {"unit": "ms", "avg": 13210.0, "p50": 13200.0, "p99": 13400.0},
    "time_to_first_token": {"unit": "ms", "avg": 61.5, "p50": 58.0, "p90": 80.0, "p99": 95.0},
    "inter_token_latency": {"unit": "ms", "avg": 25.7, "p50": 25.6, "p99": 27.0},
    "output_token_throughput": {"unit": "tokens/sec", "avg": 620.0},
    "output_sequence_length": {"unit": "tokens", "avg": 512.0, "p50": 512.0},
    "input_sequence_length": {"unit": "tokens", "avg": 512.0, "p50": 512.0},
    "input_config": {"model": ["meta-llama/Llama-3.1-8B-Instruct"], "endpoint_type": "chat",
                     "perf_analyzer": {"stimulus": {"concurrency": 16}}, "request_count": 0},
}


def test_parse_vllm_sglang_genai_perf():
    vllm = parse([VLLM_RESULT], where="v.json")[0]
    assert (vllm.tool, vllm.input_tokens, vllm.output_tokens, vllm.concurrency) == ("vllm", 1000, 200, 32)
    assert vllm.request_rate is None and vllm.num_prompts == 320
    assert vllm.tpot_s == pytest.approx(0.0298) and vllm.ttft_s == pytest.approx(0.0821)
    runs = parse(SGLANG_LINES, where="s.jsonl")
    assert [r.tool for r in runs] == ["sglang", "sglang"] and runs[1].concurrency == 64
    assert runs[0].input_tokens == 2000 and runs[0].output_tokens == 300
    g = parse([GENAI_PERF], where="g.json")[0]
    assert (g.tool, g.concurrency, g.model) == ("genai-perf", 16, "meta-llama/Llama-3.1-8B-Instruct")
    assert g.tpot_s == pytest.approx(0.0257) and g.ttft_s == pytest.approx(0.0615)


@pytest.mark.parametrize(("record", "missing"), [
    ({"hello": 1}, "not a vllm bench serve"),
    ({**VLLM_RESULT, "completed": 0}, "completed"),
    ({k: v for k, v in VLLM_RESULT.items() if k != "total_output_tokens"}, "total_output_tokens"),
    ({**GENAI_PERF, "input_sequence_length": None}, "input_sequence_length"),
])
def test_unreadable_results_name_the_file_and_what_is_missing(record, missing):
    with pytest.raises(BenchFormatError) as err:
        parse([record], where="bad.json")
    assert "bad.json" in str(err.value) and missing in str(err.value)


def test_calibration_json_round_trip_and_errors():
    cal = DERIVED.replace(kv_bw_eff=0.42, step_overhead_s={"sglang": 0.002})
    back = from_dict(json.loads(json.dumps(to_dict(cal))))
    assert back == cal
    assert back.overhead_s("sglang") == 0.002 and back.overhead_s("vllm") == DERIVED.overhead_s("vllm")
    with pytest.raises(ArgumentError, match="cal.json"):
        from_dict({"format": FORMAT, "constants": {"warp_speed": 2}}, where="cal.json")
    with pytest.raises(ArgumentError, match="format"):
        from_dict({"constants": {}}, where="cal.json")


def test_api_accepts_a_calibration_file(tmp_path):
    slow = DERIVED.replace(step_overhead_s={"vllm": 0.01})
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(to_dict(slow)))
    kw = dict(input_tokens=1000, output_tokens=200, concurrency=8)
    base = serving_performance("llama-3.1-8b", "h100-sxm", calibration=DERIVED, **kw)
    from_file = serving_performance("llama-3.1-8b", "h100-sxm", calibration=str(path), **kw)
    # 10 ms instead of 0.6 ms per step: TPOT rises by about 9.4 ms
    assert from_file.tpot_s - base.tpot_s == pytest.approx(0.0094, rel=0.15)
    with pytest.raises(PlannerError, match="missing.json"):
        serving_performance("llama-3.1-8b", "h100-sxm", calibration=str(tmp_path / "missing.json"), **kw)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "planner.cli", *args], capture_output=True, text=True, check=False)


def test_calibrate_bench_cli_fits_and_writes_a_calibration(tmp_path):
    result = tmp_path / "vllm-inf-concurrency32.json"
    result.write_text(json.dumps(VLLM_RESULT))
    out = tmp_path / "h100.calibration.json"
    run = _cli("calibrate-bench", str(result), "--gpu", "h100-sxm", "-o", str(out))
    assert run.returncode == 0, run.stderr
    assert "TPOT ms" in run.stdout and "before" in run.stdout and "after" in run.stdout
    cal = from_dict(json.loads(out.read_text()))
    tpot = serving_performance("llama-3.1-8b", "h100-sxm", input_tokens=1000, output_tokens=200, concurrency=32,
                               calibration=cal).tpot_s
    before = serving_performance("llama-3.1-8b", "h100-sxm", input_tokens=1000, output_tokens=200, concurrency=32
                                 ).tpot_s
    # the fit moves the prediction towards the measured 29.8 ms
    assert abs(math.log(tpot / 0.0298)) < abs(math.log(before / 0.0298))
    assert abs(tpot / 0.0298 - 1) < 0.15


def test_calibrate_bench_reads_sglang_jsonl(tmp_path):
    result = tmp_path / "sglang.jsonl"
    result.write_text("\n".join(json.dumps(line) for line in SGLANG_LINES) + "\n")
    run = _cli("calibrate-bench", str(result), "--gpu", "h100-sxm", "--model", "llama-3.1-8b")
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "sglang.calibration.json").exists()
    assert run.stdout.count("sglang.jsonl#") >= 6  # 2 runs x 3 metrics


@pytest.mark.parametrize(("content", "args", "message"), [
    ("not json at all\n", ("--gpu", "h100-sxm"), "line 1 is not JSON"),
    (json.dumps({"foo": 1}), ("--gpu", "h100-sxm"), "not a vllm bench serve"),
    (json.dumps(VLLM_RESULT), (), "does not record the GPU; pass --gpu"),
    (json.dumps(SGLANG_LINES[0]), ("--gpu", "h100-sxm"), "no model named"),
])
def test_calibrate_bench_refuses_with_one_line(tmp_path, content, args, message):
    result = tmp_path / "r.json"
    result.write_text(content)
    run = _cli("calibrate-bench", str(result), *args)
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "r.json" in lines[0]


REAL_RESULT = "tests/data/bench/llm-d-llama-3.2-3b-4xl40s.jsonl"
"""A published vLLM benchmark_serving result (tests/data/bench/README.md): 4 x L40S replicas behind a gateway."""


def test_calibrate_bench_replays_the_finite_runs_of_a_real_result(tmp_path):
    """The runs' num_prompts reach the model in every mode: the `--request-rate inf` runs sent 900 prompts at once
    to 4 replicas, and their measured mean TTFT (0.9-4.4 s) is the queue of that burst, which only a replay of the
    900 prompts predicts; the steady state of the same replica (no num_prompts) answers tens of milliseconds."""
    import pathlib

    root = pathlib.Path(__file__).resolve().parent.parent
    out = tmp_path / "l40s.calibration.json"
    run = _cli("calibrate-bench", str(root / REAL_RESULT), "--gpu", "l40s", "--replicas", "4",
               "--model", str(root / "tests/data/bench/llama-3.2-3b/config.json"), "-o", str(out))
    assert run.returncode == 0, run.stderr
    records = [json.loads(line) for line in (root / REAL_RESULT).read_text().splitlines() if line.strip()]
    burst = [i + 1 for i, r in enumerate(records) if r["request_rate"] == "inf"]
    assert burst == [3, 6, 9]
    rows = {}
    for line in run.stdout.splitlines():
        parts = line.split()
        if parts and "#" in parts[0] and "TTFT" in line:
            rows[int(parts[0].split("#")[1])] = float(parts[-2])  # the prediction before the fit, ms
    first = records[2]  # no-features deployment: the gateway spreads the burst evenly (225 prompts per replica)
    assert first["mean_ttft_ms"] / 2 < rows[3] < first["mean_ttft_ms"] * 2
    steady = serving_performance(str(root / "tests/data/bench/llama-3.2-3b/config.json"), "l40s",
                                 input_tokens=first["total_input_tokens"] / first["completed"],
                                 output_tokens=first["total_output_tokens"] / first["completed"])
    assert steady.ttft_s * 1e3 < first["mean_ttft_ms"] / 10  # what the model said before num_prompts reached it
    loss = run.stdout.strip().splitlines()[-1]
    before, after = (float(x) for x in loss.split(";")[0].removeprefix("loss ").split(" -> "))
    assert after < before
    cal = from_dict(json.loads(out.read_text()))
    assert "4 replicas" in cal.source
