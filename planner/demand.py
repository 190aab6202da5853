"""Demand at peak (formulas D1-D5 of the reference set): requests and tokens per minute, as providers count them.

All rates are per minute unless the name says otherwise. ``peak_qps`` is requests per second at the peak,
``avg_qps`` the average over a day or month.

Token accounting used throughout (one consistent reading of D2, D4 and C1):

- ``avg_input_tokens`` ``I`` is the whole prompt of a request, cached or not;
- ``cache_hit_rate`` ``h`` is the fraction of those input tokens *read* from the prompt cache;
- ``cache_write_tokens`` ``w`` is the part of the non-read input ``I·(1−h)`` that is written to the cache
  (Anthropic's ``cache_creation_input_tokens``), so ``0 <= w <= I·(1−h)``.

So Anthropic's three input fields are ``input_tokens = I·(1−h) − w``, ``cache_creation_input_tokens = w`` and
``cache_read_input_tokens = I·h``.
"""

from __future__ import annotations

from planner.errors import ArgumentError, check_fraction, check_number

SECONDS_PER_MINUTE = 60.0
SECONDS_PER_DAY = 86_400.0
MINUTES_PER_DAY = SECONDS_PER_DAY / SECONDS_PER_MINUTE
"""1,440: a per-minute demand at the average rate, times this, is the daily volume daily limits count."""
DAYS_PER_MONTH = 365.25 / 12
"""30.4375: the average Gregorian month, used wherever a monthly volume comes from an average rate."""

AZURE_RPM_PER_1000_TPM = 6.0
"""D5: Azure OpenAI grants 6 RPM per 1,000 TPM of quota on older chat models (Microsoft Learn quota page)."""


def rpm(peak_qps: float) -> float:
    """Requests per minute at peak (D1): ``RPM = 60 * peak_qps``.

    Reference: D1, Microsoft Learn Azure OpenAI quota page; Anthropic rate-limit documentation.

    >>> rpm(25)
    1500.0
    """
    return SECONDS_PER_MINUTE * check_number("peak_qps", peak_qps, minimum=0)


def tpm(peak_qps: float, *, avg_input_tokens: float, avg_output_tokens: float) -> float:
    """Total tokens per minute at peak (D2): ``TPM = 60 * peak_qps * (E[I] + E[O])``.

    Reference: D2 (provider definitions; LiteLLM counts ``total_tokens`` after the call).

    >>> tpm(10, avg_input_tokens=2000, avg_output_tokens=500)  # 10 req/s x 2,500 tokens x 60 s
    1500000.0
    """
    i = check_number("avg_input_tokens", avg_input_tokens, minimum=0)
    o = check_number("avg_output_tokens", avg_output_tokens, minimum=0)
    return rpm(peak_qps) * (i + o)


def itpm(peak_qps: float, *, avg_input_tokens: float) -> float:
    """Input tokens per minute at peak, every input token counted (D2): ``ITPM = RPM * E[I]``.

    Reference: D2 (provider definitions of ITPM; Baseten counts cached tokens at full weight, D4).

    >>> itpm(10, avg_input_tokens=2000)
    1200000.0
    """
    return rpm(peak_qps) * check_number("avg_input_tokens", avg_input_tokens, minimum=0)


def otpm(peak_qps: float, *, avg_output_tokens: float) -> float:
    """Output tokens per minute at peak, actual output counted (D2): ``OTPM = RPM * E[O]``.

    Reference: D2 (Anthropic OTPM counts actual output in 2026 documentation, facts.md §1.6).

    >>> otpm(10, avg_output_tokens=500)
    300000.0
    """
    return rpm(peak_qps) * check_number("avg_output_tokens", avg_output_tokens, minimum=0)


def itpm_counted(
    peak_qps: float,
    *,
    avg_input_tokens: float,
    cache_hit_rate: float = 0.0,
    cached_reads_count: bool = False,
) -> float:
    """Input tokens per minute as the provider counts them against ITPM (D4, cache-aware).

    - Providers that exclude cache reads (Anthropic for most models, Groq; ``cached_reads_count=False``):
      ``ITPM_counted = RPM * (E[I_uncached] + E[I_cache_write]) = RPM * E[I] * (1 - h)``: uncached input and cache
      writes count, cache reads do not (cache writes are part of the non-read input, see the module docstring).
    - Providers that count cached tokens at full weight (Baseten, OpenAI TPM; ``cached_reads_count=True``):
      ``ITPM_counted = RPM * E[I]``.

    Reference: D4, Anthropic rate-limit documentation ("cache-aware ITPM"); Groq and Baseten rate-limit pages.

    A 10 req/s agent route with 20,000-token prompts and an 80 % cache hit rate counts 2.4 M ITPM at Anthropic,
    a fifth of the 12 M it sends:

    >>> round(itpm_counted(10, avg_input_tokens=20_000, cache_hit_rate=0.8))
    2400000
    >>> itpm_counted(10, avg_input_tokens=20_000, cache_hit_rate=0.8, cached_reads_count=True)
    12000000.0
    """
    h = check_fraction("cache_hit_rate", cache_hit_rate)
    full = itpm(peak_qps, avg_input_tokens=avg_input_tokens)
    return full if cached_reads_count else full * (1.0 - h)


def tpm_counted(
    peak_qps: float,
    *,
    avg_input_tokens: float,
    avg_output_tokens: float,
    cache_hit_rate: float = 0.0,
    cached_reads_count: bool = True,
    reserved_max_tokens: float | None = None,
    output_weight: float = 1.0,
) -> float:
    """Tokens per minute as a provider counts them against TPM (D2-D4, with the provider's rules).

    ``TPM_counted = ITPM_counted + RPM * O_counted * w``, where ``ITPM_counted`` is :func:`itpm_counted` (cache reads
    in or out), ``O_counted`` is ``max_tokens`` where the provider reserves it at admission (OpenAI, Azure, Bedrock:
    D3) and the actual output otherwise, and ``w`` is the quota weight of an output token (AWS Bedrock burns 5 for
    Claude 3.7 and later; 1 elsewhere).

    Reference: D2-D4 (docs/method.md); OpenAI rate limits ("the maximum of max_tokens and the estimated number of
    tokens"); AWS Bedrock token burndown (InputTokenCount + CacheWriteInputTokens + OutputTokenCount x 5).

    A 10 req/s route with 2,000 input and 500 output tokens counts 1.5 M TPM with plain counting; where 1,024
    ``max_tokens`` are reserved at a quota weight of 5 and 80 % of the input is read from cache (not counted):

    >>> tpm_counted(10, avg_input_tokens=2000, avg_output_tokens=500)
    1500000.0
    >>> round(tpm_counted(10, avg_input_tokens=2000, avg_output_tokens=500, cache_hit_rate=0.8,
    ...                   cached_reads_count=False, reserved_max_tokens=1024, output_weight=5))
    3312000
    """
    counted_input = itpm_counted(peak_qps, avg_input_tokens=avg_input_tokens, cache_hit_rate=cache_hit_rate,
                                 cached_reads_count=cached_reads_count)
    w = check_number("output_weight", output_weight, minimum=0.0)
    out = avg_output_tokens if reserved_max_tokens is None else check_number(
        "max_tokens", reserved_max_tokens, minimum=0.0)
    return counted_input + otpm(peak_qps, avg_output_tokens=out) * w


def check_cache_write_tokens(avg_input_tokens: float, *, cache_hit_rate: float, cache_write_tokens: float) -> float:
    """Validate ``cache_write_tokens`` against the non-read input ``I·(1−h)`` and return it as a float."""
    i = check_number("avg_input_tokens", avg_input_tokens, minimum=0)
    h = check_fraction("cache_hit_rate", cache_hit_rate)
    w = check_number("cache_write_tokens", cache_write_tokens, minimum=0)
    uncached = i * (1.0 - h)
    if w > uncached * (1 + 1e-12) + 1e-9:
        allowed = f"at most the non-read input avg_input_tokens*(1-h) = {uncached:g}"
        raise ArgumentError("cache_write_tokens", cache_write_tokens, allowed)
    return w


def admission_tpm(
    peak_qps: float, *, avg_input_tokens: float, max_tokens: float, output_weight: float = 1.0
) -> float:
    """Tokens per minute reserved at admission when ``max_tokens`` is reserved up front (D3).

    ``TPM_admit = RPM * (E[I] + w_out * M)``, where ``M`` is the request's ``max_tokens`` (if unset, the context
    limit minus the input) and ``w_out`` the output burndown weight (1 for Azure OpenAI and Cerebras; 5 for
    Claude 3.7+ on AWS Bedrock, facts.md §1.5).

    Reference: D3, Microsoft Q&A on ``max_tokens`` reservation; Cerebras rate-limit documentation; AWS Bedrock
    token-burndown page.

    Short answers with a generous ``max_tokens`` burn admission TPM: 10 req/s, 2,000 in, ``max_tokens`` 4,096
    reserves 3.66 M TPM although actual TPM at 500 output tokens is 1.5 M:

    >>> admission_tpm(10, avg_input_tokens=2000, max_tokens=4096)
    3657600.0
    >>> admission_tpm(1, avg_input_tokens=1000, max_tokens=1000, output_weight=5)  # Bedrock burndown
    360000.0
    """
    i = check_number("avg_input_tokens", avg_input_tokens, minimum=0)
    m = check_number("max_tokens", max_tokens, minimum=0)
    w = check_number("output_weight", output_weight, minimum=0)
    return rpm(peak_qps) * (i + w * m)


def window_peak(rate_per_min: float, *, window_s: float = 1.0, burst_factor: float = 1.0) -> float:
    """What a per-minute rate means in a short enforcement window (D1): ``rate / 60 * window_s * burst``.

    Providers that enforce a per-minute limit over 1 s or 10 s windows throttle the peak *second*: apply this to
    the demand (with ``burst_factor`` = peak-second rate / average rate within the minute) and to the limit (with
    ``burst_factor`` 1) and compare. ``burst_factor`` 1 assumes perfectly smooth arrivals.

    Reference: D1, Microsoft Learn Azure OpenAI quota page ("600 RPM: at most 10 requests in a 1-second period");
    Anthropic token bucket ("60 RPM may be enforced as 1 request per second").

    >>> window_peak(600)  # a 600-RPM deployment admits 10 requests per second
    10.0
    >>> window_peak(1500, window_s=10,
    ...             burst_factor=1.5)  # 1,500 RPM of demand with 1.5x bursts: 375 requests in the peak 10 s
    375.0
    """
    r = check_number("rate_per_min", rate_per_min, minimum=0)
    s = check_number("window_s", window_s, minimum=0, exclusive_minimum=True)
    b = check_number("burst_factor", burst_factor, minimum=1)
    return r / SECONDS_PER_MINUTE * s * b


def requests_per_day(avg_qps: float) -> float:
    """Daily request volume from the average rate, for RPD limits: ``RPD = 86,400 * avg_qps``.

    Reference: D1 applied to a day (Groq and OpenAI publish RPD limits, facts.md §1.1).

    >>> requests_per_day(2)
    172800.0
    """
    return SECONDS_PER_DAY * check_number("avg_qps", avg_qps, minimum=0)


def tokens_per_day(avg_qps: float, *, avg_input_tokens: float, avg_output_tokens: float) -> float:
    """Daily token volume from the average rate, for TPD limits: ``TPD = 86,400 * avg_qps * (E[I] + E[O])``.

    Reference: D2 applied to a day (Groq and OpenAI publish TPD limits, facts.md §1.1).

    >>> tokens_per_day(1, avg_input_tokens=1000, avg_output_tokens=250)
    108000000.0
    """
    i = check_number("avg_input_tokens", avg_input_tokens, minimum=0)
    o = check_number("avg_output_tokens", avg_output_tokens, minimum=0)
    return requests_per_day(avg_qps) * (i + o)


def requests_per_month(avg_qps: float, *, days_per_month: float = DAYS_PER_MONTH) -> float:
    """Monthly request volume from the average rate: ``86,400 * days_per_month * avg_qps``.

    ``days_per_month`` defaults to 30.4375 (365.25 / 12).

    >>> requests_per_month(1)
    2629800.0
    """
    d = check_number("days_per_month", days_per_month, minimum=0, exclusive_minimum=True)
    return requests_per_day(avg_qps) * d


def azure_rpm_limit(tpm_limit: float, *, rpm_per_1000_tpm: float = AZURE_RPM_PER_1000_TPM) -> float:
    """The RPM limit Azure OpenAI derives from a TPM quota (D5): ``RPM_limit = ratio * TPM_limit / 1000``.

    The ratio is 6 for older chat models; it is set per model for newer ones (facts.md §1.4, UNCERTAIN).

    Reference: D5, Microsoft Learn Azure OpenAI quota page; Microsoft Q&A answer of 2025-05-14.

    >>> azure_rpm_limit(20_000)
    120.0
    >>> azure_rpm_limit(240_000)
    1440.0
    """
    t = check_number("tpm_limit", tpm_limit, minimum=0)
    r = check_number("rpm_per_1000_tpm", rpm_per_1000_tpm, minimum=0, exclusive_minimum=True)
    return r * t / 1000.0
