"""Template 2.8.0 (issue 11 follow-ups): the GPUs sheet's INT8 peak reaches the computation, and a Fleet row can be
W8A16. Each plan is evaluated headless (planner.template.evaluate_plan), as ``planner size`` evaluates it."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner import template as ts
from planner.catalog import get_model
from planner.scenario import load_scenario
from planner.template.inputs import catalog_inputs, scenario_inputs

PLAN = """
[plan]
name = "a100-w8a8"

[[fleets]]
name = "a100"
model = "llama-3.1-8b"
gpu = "a100-80gb-sxm"
tp = 1
replicas = 2
weight_dtype = "{dtype}"

[[routes]]
name = "rag"
kind = "interactive"
peak_qps = 2
avg_input_tokens = 6000
avg_output_tokens = 200
ttft_slo_s = 3
tpot_slo_s = 0.08
backend = "a100"
"""


def _evaluate(tmp_path: Path, dtype: str, edits: dict[tuple[str, str], object] | None = None) -> dict:
    path = tmp_path / f"{dtype}.toml"
    path.write_text(PLAN.format(dtype=dtype), encoding="utf-8")
    inputs = {**catalog_inputs(), **scenario_inputs(load_scenario(path))}
    return ts.evaluate_plan({**inputs, **(edits or {})})


def _gpu_row(name: str) -> int:
    inputs = catalog_inputs()
    return next(i for i in range(ts.GPUS.rows) if inputs.get((ts.GPUS.sheet, ts.GPUS.cell("name", i))) == name)


def _ttft(out: dict) -> float:
    return out[("Results", ts.RESULTS.cell("ttft_at_load_s", 0))]


def _spec(out: dict, key: str) -> object:
    return out[(ts.SPECS.sheet, ts.SPECS.cell(key, 0))]


def test_the_gpus_sheet_int8_peak_reaches_a_w8a8_fleet(tmp_path: Path) -> None:
    """The A100 row shows the datasheet's 624 TOPS (INT8 Tensor Core, dense) and the fleet's spec carries it. Typing
    312 TOPS there, the A100's BF16 peak (datasheet), makes W8A8 compute at 16-bit speed: the plan's TTFT (a
    6,000-token prompt, compute-bound) becomes the one the same plan gets with FP8 weights, which an A100 runs
    weight-only at its BF16 peak (1 byte per weight either way). The edit moves the answer."""
    row = _gpu_row("a100-80gb-sxm")
    cell = (ts.GPUS.sheet, ts.GPUS.cell("int8_tops", row))
    assert catalog_inputs()[cell] == 624.0
    bundled = _evaluate(tmp_path, "int8")
    assert "int8_tops=624" in str(_spec(bundled, "gpu_spec"))
    at_bf16 = _evaluate(tmp_path, "int8", {cell: 312.0})
    assert "int8_tops=312" in str(_spec(at_bf16, "gpu_spec"))
    fp8 = _evaluate(tmp_path, "fp8")
    assert _ttft(at_bf16) == pytest.approx(_ttft(fp8), rel=1e-12)
    assert _ttft(bundled) < 0.9 * _ttft(at_bf16)  # 624 TOPS: the prefill's GEMMs at twice the rate


def _kv_budget_bytes(out: dict) -> float:
    """One replica's KV budget as the plan used it, read back from Results: the route's in-flight KV (Little's law,
    2 req/s x E2E, each holding ceil(6,100 / 16) blocks of 16 tokens x 131,072 B, Llama-3.1-8B's BF16 KV per token:
    32 layers x 8 KV heads x 128 x 2 x 2 B) = KV share x budget x 2 replicas."""
    per_request = -(-(6000 + 200 // 2) // 16) * 16 * 131_072
    res = lambda k: out[("Results", ts.RESULTS.cell(k, 0))]  # noqa: E731
    return 2 * res("e2e_s") * per_request / (res("kv_share") * 2)


def test_a_w8a16_fleet_is_sized_with_one_byte_weights(tmp_path: Path) -> None:
    """W8A16 on the Fleet sheet (dropdown, 2.8.0): 8-bit weights, so the replica's KV budget grows by the weight
    bytes W8A16 saves against BF16. Worked by hand for Llama-3.1-8B (catalog: 8.03 B parameters; vocabulary 128,256
    x hidden 4,096 = 525,336,576 in the embedding and as many in the untied LM head, which quantized checkpoints keep
    in 16 bits): BF16 8.03e9 x 2 = 16,060,000,000 B; W8A16 (8.03e9 - 1,050,673,152) x 1 + 1,050,673,152 x 2 =
    9,080,673,152 B (params x 1 byte plus the 16-bit embedding and head); the budget grows by 6,979,326,848 B. The
    math is 16-bit: TTFT is FP8's on an A100 (weight-only too), not W8A8's at the INT8 peak."""
    assert "w8a16" in ts.WEIGHT_DTYPES
    model = get_model("llama-3.1-8b")
    assert (model.params_total, model.vocab_size, model.hidden_size) == (8.03e9, 128_256, 4_096)
    w8a16, bf16, int8, fp8 = (_evaluate(tmp_path, d) for d in ("w8a16", "bf16", "int8", "fp8"))
    assert _spec(w8a16, "fleet") == "a100" and w8a16[("Results", ts.RESULTS.cell("status", 0))] != ""
    head_and_embedding = 2 * 128_256 * 4_096
    saved = 8.03e9 * 2 - ((8.03e9 - head_and_embedding) * 1 + head_and_embedding * 2)
    assert saved == 6_979_326_848
    assert _kv_budget_bytes(w8a16) - _kv_budget_bytes(bf16) == pytest.approx(saved, rel=1e-9)
    assert _kv_budget_bytes(w8a16) == pytest.approx(_kv_budget_bytes(int8), rel=1e-12)  # 1 byte per weight alike
    assert _ttft(w8a16) == pytest.approx(_ttft(fp8), rel=1e-12)
    assert _ttft(w8a16) > 1.5 * _ttft(int8)


def test_a_gpu_row_the_catalog_lacks_takes_its_int8_peak_from_the_sheet() -> None:
    """A planner's own GPUs-sheet row: an A30 (NVIDIA's aiconfigurator a30.yaml: 24 GiB, 933 GB/s, BF16 165 TFLOPS,
    INT8 330 TOPS, sm_version 80). With compute capability 8.0 and no FP8 its W8A8 GEMMs run at the row's 330 TOPS;
    without the INT8 cell, at its BF16 165. A negative cell is refused like any GPUs-sheet number."""
    from planner import catalog_sheet
    from planner.errors import ArgumentError
    from planner.serving.step import gemm_peak_flops
    from planner.sheet.plan import GPU_SPEC

    headers = ["GPU [name]", "HBM [GiB]", "Bandwidth [GB/s]", "BF16 dense [TFLOP/s]", "INT8 dense [TOPS]",
               "Compute capability [x.y]"]
    token = GPU_SPEC("a30", [headers, ["a30", 24, 933, 165, 330, 8.0]])
    assert token == "a30|hbm_gib=24|mem_bw_gb_s=933|bf16_tflops=165|int8_tops=330|compute_capability=8"
    a30 = catalog_sheet.gpu_from_token(token)
    assert a30.int8_ops_per_s == 330e12 and a30.fp8_flops_per_s is None
    assert gemm_peak_flops(a30, weight_dtype="w8a8") == 330e12 and gemm_peak_flops(a30, weight_dtype="w8a16") == 165e12
    no_int8 = catalog_sheet.gpu_from_token(GPU_SPEC("a30", [headers, ["a30", 24, 933, 165, None, 8.0]]))
    assert gemm_peak_flops(no_int8, weight_dtype="w8a8") == 165e12
    with pytest.raises(ArgumentError, match="INT8 dense"):
        GPU_SPEC("a30", [headers, ["a30", 24, 933, 165, -1, 8.0]])
