"""Calibration: log parsing, back-solving, the public calibration set, docs/accuracy.md, CLI and sheet functions."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest
from calibration_cases import (
    ACCURACY_DOC,
    SERVING_MARKER,
    load_cases,
    render_accuracy,
    render_summary,
    resolve_gpu,
    resolve_model,
    run_all,
    write_accuracy_doc,
)
from click.testing import CliRunner

import planner.functions  # noqa: F401  (registers the spreadsheet functions)
from planner import kv_capacity
from planner.calibrate import accuracy_summary, calibrate, parse_log
from planner.cli import cli
from planner.coerce import call_sheet_function
from planner.errors import ArgumentError
from planner.registry import REGISTRY
from planner.specs import GIB

CASES = load_cases()
RESULTS = run_all()
BY_ID = {r.case_id: r for r in RESULTS}


def _expected_miss(case: dict, what: str) -> str | None:
    return (case.get("expect") or {}).get(what)


def test_calibration_set_size_and_sources():
    assert len(CASES) >= 60
    for case in CASES:
        assert case["source"]["url"].startswith("https://")
        assert case["log"].strip() and case["notes"].strip()
        # the split is by source: the vLLM >= 0.17 constants were measured on the llm-d sweep
        expected = "train" if case["source"].get("repo") == "llm-d-incubation/llm-d-planner" else "held-out"
        assert case["split"] == expected, case["id"]
    assert sum(c["split"] == "held-out" for c in CASES) >= 15
    engines = {c["engine"] for c in CASES}
    assert {"vllm", "vllm-v0", "sglang"} <= engines
    assert len({c["tp"] for c in CASES}) >= 3  # TP 1, 2, 4, 8
    assert {c.get("weight_dtype") for c in CASES} >= {"fp8", "fp32"}


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_every_case_log_parses(case):
    log = parse_log(case["log"])
    found = (log.weights_gib, log.available_kv_gib, log.kv_cache_tokens, log.kv_bytes_per_token)
    assert any(v is not None for v in found)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_kv_bytes_per_token_exact(case):
    """KV bytes per logged token within 0.5% of available / tokens, except the documented multi-rank logs."""
    result = BY_ID[case["id"]]
    err = result.kv_bytes_per_token_error
    if err is None:
        pytest.skip("the log gives no available-memory and token pair")
    if _expected_miss(case, "kv_bytes_per_token"):
        assert abs(err) > 0.005, "documented miss now matches: update the case"
    else:
        assert abs(err) <= 0.005


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_kv_tokens_within_10pct_without_measured_overheads(case):
    result = BY_ID[case["id"]]
    err = result.kv_tokens_error
    if err is None:
        pytest.skip("no GPU or no token line in the log")
    if _expected_miss(case, "kv_cache_tokens"):
        assert abs(err) > 0.10, "documented miss now within 10%: update the case"
    else:
        assert abs(err) <= 0.10


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_kv_capacity_within_10pct_without_measured_overheads(case):
    """KV capacity (logged tokens, else available GiB) within 10%, predicted from catalog facts only."""
    err = BY_ID[case["id"]].capacity_error
    if err is None:
        pytest.skip("no GPU, or no positive KV size in the log")
    if _expected_miss(case, "capacity") or _expected_miss(case, "kv_cache_tokens"):
        assert abs(err) > 0.10, "documented miss now within 10%: update the case"
    else:
        assert abs(err) <= 0.10


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_calibrated_prediction_reproduces_log(case):
    """After back-solving the overhead, the prediction matches the logged tokens (to the log's GiB rounding)."""
    err = BY_ID[case["id"]].calibrated_tokens_error
    if err is None:
        pytest.skip("nothing to calibrate against")
    if _expected_miss(case, "calibrated"):
        assert abs(err) > 0.005
    else:
        assert abs(err) <= 0.005


def test_accuracy_doc_is_current():
    table, summary = render_accuracy(RESULTS, CASES)
    block = render_summary(RESULTS, CASES)
    if os.environ.get("PLANNER_WRITE_ACCURACY"):
        write_accuracy_doc(table, block)
    doc = ACCURACY_DOC.read_text(encoding="utf-8")
    memory_part = doc.split(SERVING_MARKER)[0]
    assert table in memory_part and block in memory_part
    assert f"{summary['per_token_within_0p5pct']} of {summary['per_token_cases']}" in memory_part


def test_accuracy_writer_keeps_the_serving_section(tmp_path):
    """The memory generator rewrites its own blocks only; the serving section from its marker on is untouched."""
    tail = (SERVING_MARKER + "\n## Serving\n<!-- table -->\nserving rows\n<!-- /table -->\n"
            "<!-- serving-accuracy:end -->\n")
    doc = tmp_path / "accuracy.md"
    doc.write_text("# A\n<!-- summary -->\nold\n<!-- /summary -->\n<!-- table -->\nold\n<!-- /table -->\n" + tail,
                   encoding="utf-8")
    write_accuracy_doc("| new table |\n", "new summary\n", doc)
    text = doc.read_text(encoding="utf-8")
    assert text.endswith(tail)
    assert "| new table |" in text and "new summary" in text and "old" not in text.split(SERVING_MARKER)[0]


def test_split_figures_are_reported_separately():
    train = accuracy_summary(RESULTS, split="train")
    held = accuracy_summary(RESULTS, split="held-out")
    assert train["cases"] + held["cases"] == len(CASES)
    assert held["capacity_cases"] >= 10
    block = render_summary(RESULTS, CASES)
    assert "**held-out**" in block and "**train**" in block


def test_summary_counts():
    s = accuracy_summary(RESULTS)
    assert s["cases"] == len(CASES)
    assert s["per_token_within_0p5pct"] == s["per_token_cases"] - sum(
        1 for c in CASES if _expected_miss(c, "kv_bytes_per_token")
    )
    assert s["tokens_within_10pct"] == s["token_cases"] - sum(1 for c in CASES if _expected_miss(c, "kv_cache_tokens"))
    assert s["capacity_within_10pct"] == s["capacity_cases"] - sum(
        1 for c in CASES if BY_ID[c["id"]].capacity_error is not None
        and (_expected_miss(c, "capacity") or _expected_miss(c, "kv_cache_tokens"))
    )


def test_parse_vllm_v1_v0_and_sglang_fields():
    v1 = parse_log(next(c for c in CASES if c["id"] == "llmd-llama31-8b-h100-16k")["log"])
    assert (v1.engine, v1.weights_gib, v1.available_kv_gib, v1.kv_cache_tokens) == ("vllm", 14.99, 58.11, 476016)
    assert (v1.max_model_len, v1.max_concurrency, v1.activation_gib, v1.non_torch_gib) == (16384, 29.05, 1.89, 0.25)
    assert v1.total_gpu_gib == 79.19  # torch's total in the log; the catalog's h100-sxm has 79.18 (facts.md 3.2)
    v0 = parse_log(next(c for c in CASES if c["id"] == "vllm12330-llama3-8b-a100-40g")["log"])
    assert (v0.engine, v0.num_gpu_blocks, v0.kv_cache_tokens, v0.total_gpu_gib) == ("vllm-v0", 5691, 5691 * 16, 39.5)
    assert (v0.activation_gib, v0.non_torch_gib, v0.available_kv_gib) == (9.37, 0.10, 11.12)
    sgl = parse_log(
        "[2025-07-22] Load weight end. type=Qwen3MoeForCausalLM, dtype=torch.bfloat16, avail mem=24.11 GB, "
        "mem usage=54.98 GB.\n[2025-07-22] KV Cache is allocated. #tokens: 367404, K size: 8.23 GB, V size: 8.23 GB\n"
        "max_total_num_tokens=367404, chunked_prefill_size=8192, max_prefill_tokens=16384, context_len=40960"
    )
    assert (sgl.engine, sgl.kv_cache_tokens, sgl.weights_gib, sgl.avail_mem_gib) == ("sglang", 367404, 54.98, 24.11)
    assert sgl.available_kv_gib == pytest.approx(16.46) and sgl.max_model_len == 40960


def test_parse_rejects_text_without_kv_lines():
    with pytest.raises(ArgumentError, match="log_text: got"):
        parse_log("INFO Starting server on port 8000")


def test_calibrate_back_solves_reserve():
    case = next(c for c in CASES if c["id"] == "llmd-llama31-8b-h100-16k")
    log = parse_log(case["log"])
    gpu = dataclasses.replace(resolve_gpu(case), torch_total_bytes=int(log.total_gpu_gib * GIB))  # the log's own total
    cal = calibrate(log, resolve_model(case), gpu, gpu_memory_utilization=0.95,
                    engine_version="0.19.0", max_model_len=16384)
    # 79.19 x 0.95 - 14.99 - 58.11 = 2.13 GiB: the log's own 1.89 activation + 0.25 non-torch.
    assert cal.reserve_gib == pytest.approx(log.activation_gib + log.non_torch_gib, abs=0.02)


def test_cli_calibrate_text_and_json(tmp_path):
    case = next(c for c in CASES if c["id"] == "llmd-llama31-8b-h100-16k")
    logfile = tmp_path / "vllm.log"
    logfile.write_text(case["log"], encoding="utf-8")
    runner = CliRunner()
    plain = runner.invoke(cli, ["calibrate", str(logfile)])
    assert plain.exit_code == 0 and "476,016" in plain.output
    res = runner.invoke(cli, ["calibrate", str(logfile), "--model", "llama-3.1-8b", "--gpu", "h100-sxm",
                              "--gpu-memory-utilization", "0.95", "--engine-version", "0.19.0",
                              "--max-model-len", "16384", "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["kv_cache_tokens"] == 476016
    assert out["reserve_gib"] == pytest.approx(2.13, abs=0.02)
    assert out["calibrated_kv_cache_tokens"] == pytest.approx(476016, rel=0.001)


def test_cli_calibrate_errors(tmp_path):
    runner = CliRunner()
    missing = runner.invoke(cli, ["calibrate", str(tmp_path / "none.log")])
    assert missing.exit_code == 2
    empty = tmp_path / "other.log"
    empty.write_text("hello\n", encoding="utf-8")
    res = runner.invoke(cli, ["calibrate", str(empty)])
    assert res.exit_code == 2 and "log_text" in res.output
    half = runner.invoke(cli, ["calibrate", str(empty), "--model", "llama-3.1-8b"])
    assert half.exit_code == 2 and "--model and --gpu" in half.output


def test_sheet_functions_take_pasted_log():
    log = next(c for c in CASES if c["id"] == "llmd-gemma3-27b-h100")["log"]
    get = REGISTRY["CALIBRATE_LOG"]
    assert call_sheet_function(get, log, "KV_CACHE_TOKENS") == 36560
    assert call_sheet_function(get, log, "available_kv_gib") == 19.53
    assert call_sheet_function(get, log, "nope").startswith("field: got 'nope', expected one of engine")
    reserve = call_sheet_function(REGISTRY["CALIBRATE_RESERVE_GIB"], log, "gemma-3-27b", "h100-sxm", 1, 0.95,
                                  "vllm", "0.19.0")
    assert isinstance(reserve, float)
    tokens = call_sheet_function(REGISTRY["KV_CACHE_TOKENS"], "gemma-3-27b", "h100-sxm", 1, 0.95, "auto", "VLLM",
                                 8192, "0.19.0")
    direct = kv_capacity("gemma-3-27b", "h100-sxm", gpu_memory_utilization=0.95, max_model_len=8192,
                         engine_version="0.19.0")
    assert tokens == direct.kv_cache_tokens
    assert REGISTRY["KV_CACHE_TOKENS"].category == "Engine"


def test_concurrency_line_alone_gives_tokens():
    """A log that keeps only "Maximum concurrency for L tokens per request: Cx" gives C·L tokens (vLLM #9802 quotes
    only that line); a token or block line, where present, wins."""
    assert parse_log("Maximum concurrency for 40000 tokens per request: 52.89x").kv_cache_tokens == 2_115_600
    both = parse_log("GPU KV cache size: 158,656 tokens\nMaximum concurrency for 32,768 tokens per request: 4.84x")
    assert both.kv_cache_tokens == 158656
    blocks = parse_log("# GPU blocks: 5691, # CPU blocks: 2048\n"
                       "Maximum concurrency for 8192 tokens per request: 11.12x")
    assert blocks.kv_cache_tokens == 5691 * 16


def test_concurrency_line_of_a_hybrid_model_is_compared_as_concurrency():
    """A lone concurrency line of a hybrid sliding/full model (gpt-oss: 2 KV groups) is not a token count: the case
    compares concurrency (predicted concurrency x L against the logged C x L) and has no calibrated column; a one-group
    model's lone line keeps the token comparison (vLLM #9802)."""
    assert not parse_log("GPU KV cache size: 158,656 tokens").tokens_from_concurrency
    hybrid = BY_ID["ray-gpt-oss-20b-l4"]
    assert hybrid.reported.tokens_from_concurrency
    assert hybrid.reported.kv_cache_tokens == round(5.22 * 32768)  # the log's C x L
    assert hybrid.calibrated_kv_cache_tokens is None
    case = next(c for c in CASES if c["id"] == "ray-gpt-oss-20b-l4")
    keys = ("engine", "engine_version", "max_model_len", "max_num_batched_tokens", "max_num_seqs")
    setup = {k: case[k] for k in keys}
    cap = kv_capacity(resolve_model(case), resolve_gpu(case), **setup)
    assert cap.kv_groups == 2
    assert hybrid.predicted_kv_cache_tokens == round(cap.max_concurrency * 32768) != cap.kv_cache_tokens
    one_group = BY_ID["vllm9802-llama31-8b-a100-pcie-tp4"]
    assert one_group.reported.tokens_from_concurrency and one_group.calibrated_kv_cache_tokens is not None
