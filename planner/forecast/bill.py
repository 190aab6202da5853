"""The monthly API bill by token class (C1 split): uncached input, cache reads, cache writes, output.

Token accounting as :mod:`planner.demand`: a request of ``I`` input tokens with cache hit rate ``h`` reads ``I*h``
from the cache, writes ``w`` and sends ``I*(1-h) - w`` uncached. Per month, with the average rate ``q`` (requests/s)
and ``86,400 * 30.4375`` seconds:

- uncached input ``= q * s * (I*(1-h) - w) * p_in / 1e6``;
- cache reads ``= q * s * I*h * p_read / 1e6`` (a blank read price: ``p_in``);
- cache writes ``= q * s * w * p_write / 1e6`` (a blank write price: ``p_in``, written tokens billed as input);
- output ``= q * s * O * p_out / 1e6``.

Their sum is :func:`planner.cost.api_cost_per_request_usd` times the month's requests (C1).
"""

from __future__ import annotations

from planner.demand import DAYS_PER_MONTH, SECONDS_PER_DAY, check_cache_write_tokens
from planner.errors import ArgumentError, check_fraction, check_number

TOKEN_CLASSES = ("input", "cache_read", "cache_write", "output")


def api_cost_by_class_usd(
    avg_qps: float,
    *,
    token_class: str,
    avg_input_tokens: float,
    avg_output_tokens: float,
    cache_hit_rate: float,
    cache_write_tokens: float,
    usd_per_mtok_input: float,
    usd_per_mtok_output: float,
    usd_per_mtok_cached_input: float | None = None,
    usd_per_mtok_cache_write: float | None = None,
    days_per_month: float = DAYS_PER_MONTH,
) -> float:
    """One token class's share of a route's monthly API bill (C1 by class; see the module docstring).

    Reference: C1 (docs/method.md); LiteLLM price-map fields ``input_cost_per_token``,
    ``cache_read_input_token_cost``, ``cache_creation_input_token_cost``, ``output_cost_per_token``.

    1 req/s, 10,000 input tokens at 80 % hit rate with 1,000 written, 500 output; $3 / $0.30 / $3.75 / $15:
    2,629,800 requests a month send 1,000 uncached tokens each ($7,889.40), read 8,000 ($6,311.52), write 1,000
    ($9,861.75) and get 500 ($19,723.50) -- $43,786.17 in all, API_COST_MONTHLY's figure.

    >>> args = dict(avg_input_tokens=10_000, avg_output_tokens=500, cache_hit_rate=0.8, cache_write_tokens=1000,
    ...             usd_per_mtok_input=3, usd_per_mtok_output=15, usd_per_mtok_cached_input=0.3,
    ...             usd_per_mtok_cache_write=3.75)
    >>> [round(api_cost_by_class_usd(1, token_class=c, **args), 2) for c in TOKEN_CLASSES]
    [7889.4, 6311.52, 9861.75, 19723.5]
    """
    q = check_number("avg_qps", avg_qps, minimum=0)
    i = check_number("avg_input_tokens", avg_input_tokens, minimum=0)
    o = check_number("avg_output_tokens", avg_output_tokens, minimum=0)
    h = check_fraction("cache_hit_rate", cache_hit_rate)
    w = check_cache_write_tokens(i, cache_hit_rate=h, cache_write_tokens=cache_write_tokens)
    d = check_number("days_per_month", days_per_month, minimum=0, exclusive_minimum=True)
    p_in = check_number("usd_per_mtok_input", usd_per_mtok_input, minimum=0)
    p_out = check_number("usd_per_mtok_output", usd_per_mtok_output, minimum=0)
    p_read = p_in if usd_per_mtok_cached_input is None else check_number(
        "usd_per_mtok_cached_input", usd_per_mtok_cached_input, minimum=0)
    p_write = p_in if usd_per_mtok_cache_write is None else check_number(
        "usd_per_mtok_cache_write", usd_per_mtok_cache_write, minimum=0)
    tokens_and_price = {
        "input": (max(i * (1.0 - h) - w, 0.0), p_in),
        "cache_read": (i * h, p_read),
        "cache_write": (w, p_write),
        "output": (o, p_out),
    }
    if token_class not in tokens_and_price:
        raise ArgumentError("token_class", token_class, f"one of {', '.join(TOKEN_CLASSES)}")
    tokens, price = tokens_and_price[token_class]
    return q * SECONDS_PER_DAY * d * tokens * price / 1e6


__all__ = ["TOKEN_CLASSES", "api_cost_by_class_usd"]
