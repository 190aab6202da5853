"""The serving model at light loads and short outputs: the steady state it solves is the load asked for.

The open loop's steady state is found by bisecting the decode batch ``d`` (``X = d / ((O - 1) tau)``). A short output
or a light load runs a batch far below one request, where a fixed step of 0.002 in ``d`` left the answer at ``X = 0``
and TPOT 0 (2-5 output tokens at 0.01-0.1 req/s) and a one-token output (prefill only: a classifier, a scorer) at
0.12 req/s offline on an H100 where two tokens reached 49. The expected values come from outside the model: the rate
asked for, the weights' bandwidth floor of a decode step, the compute bound of prefill, and monotonicity.
"""

from __future__ import annotations

import pytest

import planner

WEIGHTS_BYTES = 8.03e9 * 2  # Llama-3.1-8B, bf16 (Meta's model card: 8.03 B parameters)
H100_BW = 3.35e12  # H100 SXM HBM3 bytes/s (NVIDIA datasheet)
H100_BF16 = 989e12  # dense bf16 FLOP/s (NVIDIA datasheet)


@pytest.mark.parametrize("output_tokens", [1, 2, 5, 200])
@pytest.mark.parametrize("rate", [0.01, 0.1, 1.0, 5.0])
def test_the_open_loop_runs_at_the_rate_asked_for(output_tokens: int, rate: float) -> None:
    r = planner.serving_performance("llama-3.1-8b", "h100-sxm", input_tokens=800, output_tokens=output_tokens,
                                    request_rate=rate)
    assert not r.saturated
    assert r.requests_per_s == pytest.approx(rate, rel=5e-3)
    assert r.tpot_s >= WEIGHTS_BYTES / H100_BW  # every decode step reads the weights: 4.8 ms at least, never 0


def test_a_one_token_output_is_prefill_bound_not_a_tenth_of_a_request_per_second() -> None:
    one = planner.serving_performance("llama-3.1-8b", "h100-sxm", input_tokens=800, output_tokens=1)
    two = planner.serving_performance("llama-3.1-8b", "h100-sxm", input_tokens=800, output_tokens=2)
    compute_bound = H100_BF16 / (2 * 8.03e9 * 800)  # 77 req/s at 100% of peak FLOP/s
    assert two.requests_per_s * 0.99 <= one.requests_per_s < compute_bound
    assert one.requests_per_s > 0.25 * compute_bound  # the old answer was 0.117 req/s


def test_light_load_latency_is_the_one_request_latency() -> None:
    """At 0.01 req/s a request meets an empty engine: TTFT and TPOT equal those at 0.001 req/s to 1%."""
    for o in (2, 5, 200):
        a = planner.serving_performance("llama-3.1-8b", "h100-sxm", input_tokens=800, output_tokens=o,
                                        request_rate=0.01)
        b = planner.serving_performance("llama-3.1-8b", "h100-sxm", input_tokens=800, output_tokens=o,
                                        request_rate=0.001)
        assert a.tpot_s == pytest.approx(b.tpot_s, rel=0.01) and a.ttft_s == pytest.approx(b.ttft_s, rel=0.01)
