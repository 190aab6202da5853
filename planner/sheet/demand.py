"""Spreadsheet functions for demand at peak (D1-D4)."""

from __future__ import annotations

from planner import demand
from planner.registry import Arg, sheet_function

PEAK_QPS = Arg(name="peak_qps", unit="req/s", help="Requests per second at the peak")
AVG_INPUT = Arg(name="avg_input_tokens", unit="tokens", help="Average input (prompt) tokens per request")
AVG_OUTPUT = Arg(name="avg_output_tokens", unit="tokens", help="Average output (completion) tokens per request")


@sheet_function(
    summary="Requests per minute at peak: 60 x peak QPS.",
    args=(PEAK_QPS,),
    returns="req/min",
    category="Demand",
    example="=CAPACITY_RPM(25) -> 1500",
    formula_ids=("D1",),
)
def CAPACITY_RPM(peak_qps):
    return demand.rpm(peak_qps)


@sheet_function(
    summary="Total tokens per minute at peak: 60 x peak QPS x (input + output tokens).",
    args=(PEAK_QPS, AVG_INPUT, AVG_OUTPUT),
    returns="tokens/min",
    category="Demand",
    example="=CAPACITY_TPM(10, 2000, 500) -> 1500000",
    formula_ids=("D2",),
)
def CAPACITY_TPM(peak_qps, avg_input_tokens, avg_output_tokens):
    return demand.tpm(peak_qps, avg_input_tokens, avg_output_tokens)
