"""Demand at peak (formulas D1-D4 of the reference set): requests and tokens per minute.

All rates are per minute unless the name says otherwise. ``peak_qps`` is requests per second at the peak.
"""

from __future__ import annotations

from planner.errors import check_number

SECONDS_PER_MINUTE = 60.0


def rpm(peak_qps: float) -> float:
    """Requests per minute at peak (D1): ``RPM = 60 * peak_qps``.

    Reference: D1, Microsoft Learn Azure OpenAI quota page; Anthropic rate-limit documentation.

    >>> rpm(25)
    1500.0
    """
    return SECONDS_PER_MINUTE * check_number("peak_qps", peak_qps, minimum=0)


def tpm(peak_qps: float, avg_input_tokens: float, avg_output_tokens: float) -> float:
    """Total tokens per minute at peak (D2): ``TPM = 60 * peak_qps * (E[I] + E[O])``.

    Reference: D2 (provider definitions; LiteLLM counts ``total_tokens`` after the call).

    >>> tpm(10, 2000, 500)  # 10 req/s x 2,500 tokens x 60 s
    1500000.0
    """
    i = check_number("avg_input_tokens", avg_input_tokens, minimum=0)
    o = check_number("avg_output_tokens", avg_output_tokens, minimum=0)
    return rpm(peak_qps) * (i + o)
