"""Cost (formulas C1-C6 of the reference set): API cost with prompt caching, routing and hit rate, self-hosted
$/Mtok, owned-hardware TCO, break-even.

Prices are USD per million tokens (``usd_per_mtok_*``), as provider price pages and
:class:`planner.specs.ProviderLimits` give them; multiply a per-token price (LiteLLM's ``input_cost_per_token``) by
1e6 to get one. Input-token accounting follows :mod:`planner.demand`: ``avg_input_tokens`` is the whole prompt,
``cache_hit_rate`` the fraction read from cache, ``cache_write_tokens`` the part of the rest written to cache.

Two rules every surface shares:

- **A blank (``None``) cache price.** A blank cache-write price means the provider charges no separate write price,
  so written tokens are billed as uncached input (OpenAI: cache writes carry no surcharge on most models; Gemini's
  implicit caching has no write price). A blank cached-input price likewise means no discount (the input price).
- **Cost per million tokens is per million *total* tokens** (input + output), for the API
  (:func:`api_usd_per_mtok`) and for self-hosting (:func:`selfhost_usd_per_mtok`) alike, so the two compare; the
  per-output-token figures are the ``..._per_mtok_output`` functions.

Every function is keyword-only after its leading quantity (the ``planner.sheet.cost`` layer keeps Excel's order).
"""

from __future__ import annotations

from planner.demand import DAYS_PER_MONTH, check_cache_write_tokens, requests_per_month
from planner.errors import ArgumentError, UnknownNameError, check_fraction, check_number
from planner.specs import ProviderLimits

TOKENS_PER_MTOK = 1e6
SECONDS_PER_HOUR = 3600.0
HOURS_PER_MONTH = 24 * DAYS_PER_MONTH
"""730.5: the hours in an average month (365.25 * 24 / 12)."""


def _price(argument: str, value: float | None, default: float | None = None) -> float:
    if value is None and default is not None:
        return default
    return check_number(argument, value, minimum=0)


def api_cost_per_request_usd(
    avg_input_tokens: float,
    *,
    avg_output_tokens: float,
    usd_per_mtok_input: float,
    usd_per_mtok_output: float,
    cache_hit_rate: float = 0.0,
    usd_per_mtok_cached_input: float | None = None,
    cache_write_tokens: float = 0.0,
    usd_per_mtok_cache_write: float | None = None,
) -> float:
    """API cost of one request with prompt caching (C1).

    A blank (``None``) cache-write price means the provider charges no separate write price: written tokens are
    billed as uncached input (OpenAI, Gemini). A blank cached-input price means no discount (the input price).

    ``cost = [p_in * (I*(1-h) - w) + p_read * I*h + p_write * w + p_out * O] / 1e6``, where ``I*(1-h) - w`` is the
    uncached input that is not written to cache, ``w`` the cache-write tokens and ``I*h`` the cache reads.

    Reference: C1, LiteLLM price map fields ``input_cost_per_token``, ``cache_read_input_token_cost``,
    ``cache_creation_input_token_cost``, ``output_cost_per_token``; OpenRouter prompt-caching documentation.

    Claude Sonnet (input 3, cache write 3.75, cache read 0.30, output 15 USD/Mtok): a 10,000-token prompt with 80 %
    read from cache, 1,000 tokens written, 500 output tokens costs 1.665 cents:

    >>> round(api_cost_per_request_usd(10_000, avg_output_tokens=500, usd_per_mtok_input=3, usd_per_mtok_output=15,
    ...       cache_hit_rate=0.8, usd_per_mtok_cached_input=0.3, cache_write_tokens=1000,
    ...       usd_per_mtok_cache_write=3.75), 8)
    0.01665
    >>> api_cost_per_request_usd(1_000_000, avg_output_tokens=0, usd_per_mtok_input=3, usd_per_mtok_output=15)
    3.0

    GPT-4.1 (input 2, cached 0.5, output 8, no write price): the 1,000 written tokens cost the input price, 2 USD/Mtok:

    >>> round(api_cost_per_request_usd(10_000, avg_output_tokens=500, usd_per_mtok_input=2, usd_per_mtok_output=8,
    ...       cache_hit_rate=0.8, usd_per_mtok_cached_input=0.5, cache_write_tokens=1000), 8)
    0.012
    """
    o = check_number("avg_output_tokens", avg_output_tokens, minimum=0)
    i = check_number("avg_input_tokens", avg_input_tokens, minimum=0)
    h = check_fraction("cache_hit_rate", cache_hit_rate)
    w = check_cache_write_tokens(i, cache_hit_rate=h, cache_write_tokens=cache_write_tokens)
    p_in = _price("usd_per_mtok_input", usd_per_mtok_input)
    p_out = _price("usd_per_mtok_output", usd_per_mtok_output)
    p_read = _price("usd_per_mtok_cached_input", usd_per_mtok_cached_input, p_in)
    p_write = _price("usd_per_mtok_cache_write", usd_per_mtok_cache_write, p_in)
    uncached_plain = max(0.0, i * (1.0 - h) - w)
    usd = p_in * uncached_plain + p_read * i * h + p_write * w + p_out * o
    return usd / TOKENS_PER_MTOK


def monthly_cost_usd(
    cost_per_request_usd: float,
    *,
    avg_qps: float | None = None,
    requests_per_month_count: float | None = None,
    days_per_month: float = DAYS_PER_MONTH,
) -> float:
    """Monthly API cost: ``cost_per_request * requests_per_month`` (C1 times volume).

    Give exactly one of ``avg_qps`` (then ``requests = 86,400 * days_per_month * avg_qps``, 30.4375 days by
    default) or ``requests_per_month_count``.

    Reference: C1; volume from D1 over a month.

    >>> round(monthly_cost_usd(0.002, avg_qps=1), 2)  # 2,629,800 requests at 0.2 cents
    5259.6
    >>> monthly_cost_usd(0.002, requests_per_month_count=1_000_000)
    2000.0
    """
    c = check_number("cost_per_request_usd", cost_per_request_usd, minimum=0)
    if (avg_qps is None) == (requests_per_month_count is None):
        raise ArgumentError("avg_qps", avg_qps, "exactly one of avg_qps or requests_per_month")
    if requests_per_month_count is not None:
        n = check_number("requests_per_month", requests_per_month_count, minimum=0)
    else:
        n = requests_per_month(avg_qps, days_per_month=days_per_month)  # type: ignore[arg-type]
    return c * n


def cache_savings_per_request_usd(
    avg_input_tokens: float,
    *,
    cache_hit_rate: float,
    usd_per_mtok_input: float,
    usd_per_mtok_cached_input: float,
    cache_write_tokens: float = 0.0,
    usd_per_mtok_cache_write: float | None = None,
) -> float:
    """What prompt caching saves per request against sending every input token uncached (C1 with and without h).

    ``saving = [(p_in - p_read) * I*h - (p_write - p_in) * w] / 1e6``; negative when writes cost more than reads
    save. Output cost is unchanged by caching and cancels. A blank (``None``) cache-write price is the input price
    (no separate write price).

    Reference: C1 (difference of the cost with ``h, w`` and with ``h = w = 0``). ***Derived.***

    Sonnet prices, 10,000-token prompts, 80 % read, 1,000 written: 2.085 cents saved per request.

    >>> round(cache_savings_per_request_usd(10_000, cache_hit_rate=0.8, usd_per_mtok_input=3,
    ...       usd_per_mtok_cached_input=0.3, cache_write_tokens=1000, usd_per_mtok_cache_write=3.75), 8)
    0.02085
    """
    i = check_number("avg_input_tokens", avg_input_tokens, minimum=0)
    h = check_fraction("cache_hit_rate", cache_hit_rate)
    w = check_cache_write_tokens(i, cache_hit_rate=h, cache_write_tokens=cache_write_tokens)
    p_in = _price("usd_per_mtok_input", usd_per_mtok_input)
    p_read = _price("usd_per_mtok_cached_input", usd_per_mtok_cached_input)
    p_write = _price("usd_per_mtok_cache_write", usd_per_mtok_cache_write, p_in)
    return ((p_in - p_read) * i * h - (p_write - p_in) * w) / TOKENS_PER_MTOK


def cache_savings_monthly_usd(
    avg_qps: float,
    *,
    avg_input_tokens: float,
    cache_hit_rate: float,
    usd_per_mtok_input: float,
    usd_per_mtok_cached_input: float,
    cache_write_tokens: float = 0.0,
    usd_per_mtok_cache_write: float | None = None,
    days_per_month: float = DAYS_PER_MONTH,
) -> float:
    """Monthly cache savings: :func:`cache_savings_per_request_usd` x requests per month from ``avg_qps``.

    Reference: C1 (with and without caching) times volume. ***Derived.***

    One request per second of 10,000-token Sonnet prompts, 80 % read and 1,000 written: 54,831 USD a month.

    >>> round(cache_savings_monthly_usd(1, avg_input_tokens=10_000, cache_hit_rate=0.8, usd_per_mtok_input=3,
    ...       usd_per_mtok_cached_input=0.3, cache_write_tokens=1000, usd_per_mtok_cache_write=3.75), 2)
    54831.33
    """
    per_request = cache_savings_per_request_usd(
        avg_input_tokens, cache_hit_rate=cache_hit_rate, usd_per_mtok_input=usd_per_mtok_input,
        usd_per_mtok_cached_input=usd_per_mtok_cached_input, cache_write_tokens=cache_write_tokens,
        usd_per_mtok_cache_write=usd_per_mtok_cache_write,
    )
    return per_request * requests_per_month(avg_qps, days_per_month=days_per_month)


def cache_breakeven_reuse(usd_per_mtok_input: float, *, usd_per_mtok_cache_write: float | None,
                          usd_per_mtok_cached_input: float) -> float:
    """Uses per cache write (the write plus the reads) above which caching a prefix pays (C2).

    Caching pays when ``p_write + (r - 1) * p_read < r * p_in``, so the break-even use count is
    ``r* = (p_write - p_read) / (p_in - p_read)`` (at least 1: a write that is never read again costs
    ``p_write - p_in`` extra). A blank (``None``) write price is the input price, so any reuse pays (``r* = 1``).

    Reference: C2. ***Derived from C1.***

    Anthropic 5-minute cache (write 1.25x, read 0.1x): a prefix pays from 1.28 uses, i.e. with one read per write.

    >>> round(cache_breakeven_reuse(3, usd_per_mtok_cache_write=3.75, usd_per_mtok_cached_input=0.3), 4)
    1.2778
    """
    p_in = _price("usd_per_mtok_input", usd_per_mtok_input)
    p_write = _price("usd_per_mtok_cache_write", usd_per_mtok_cache_write, p_in)
    p_read = _price("usd_per_mtok_cached_input", usd_per_mtok_cached_input)
    if p_read >= p_in:
        raise ArgumentError("usd_per_mtok_cached_input", usd_per_mtok_cached_input,
                            f"a price below the input price {p_in:g} (else caching never pays)")
    return max(1.0, (p_write - p_read) / (p_in - p_read))


def cache_breakeven_hit_rate(usd_per_mtok_input: float, *, usd_per_mtok_cache_write: float | None,
                             usd_per_mtok_cached_input: float) -> float:
    """Hit rate among the uses of a cached prefix above which paying for cache writes pays (C2).

    With ``r`` uses per write the hit rate is ``h = (r - 1) / r``; at the break-even ``r*`` of
    :func:`cache_breakeven_reuse` this is ``h* = (p_write - p_in) / (p_write - p_read)`` (0 when writes cost no
    more than plain input).

    Reference: C2. ***Derived from C1.***

    Anthropic Sonnet, 5-minute cache (input 3e-6, write 3.75e-6, read 3e-7 USD per token): 21.7 %.

    >>> round(cache_breakeven_hit_rate(3, usd_per_mtok_cache_write=3.75, usd_per_mtok_cached_input=0.3), 4)
    0.2174
    >>> one_hour = cache_breakeven_hit_rate(3, usd_per_mtok_cache_write=6, usd_per_mtok_cached_input=0.3)
    >>> round(one_hour, 4)  # 1-hour writes cost 2x: (6 - 3) / (6 - 0.3)
    0.5263
    """
    r = cache_breakeven_reuse(usd_per_mtok_input, usd_per_mtok_cache_write=usd_per_mtok_cache_write,
                              usd_per_mtok_cached_input=usd_per_mtok_cached_input)
    return (r - 1.0) / r


def effective_hit_rate(cache_hit_rate: float, *, replicas: float = 1, cache_aware_routing: bool = True) -> float:
    """Prefix-cache hit rate the backends actually see, given how requests are routed (C3).

    - Router-affine (cache-aware) routing, or a provider's shared cache: ``h_eff = h``.
    - Random routing over ``N`` replicas without a shared cache: ``h_eff = h / N`` (cold, uniform prefixes).

    Reference: C3; Dynamo KV router; llm-d prefix-cache scorer. ***The h/N term is a heuristic; calibrate.***

    >>> effective_hit_rate(0.8, replicas=4, cache_aware_routing=False)
    0.2
    >>> effective_hit_rate(0.8, replicas=4)
    0.8
    """
    h = check_fraction("cache_hit_rate", cache_hit_rate)
    n = check_number("replicas", replicas, minimum=1, integer=True)
    return h if cache_aware_routing else h / n


def tco_yearly_usd(capex_usd: float, *, depreciation_years: float, license_usd_per_year: float = 0.0,
                   hosting_usd_per_year: float = 0.0, power_usd_per_year: float = 0.0) -> float:
    """Yearly total cost of owned hardware (C5):
    ``yearly = capex / depreciation_years + license + hosting + power``.

    Reference: C5, NVIDIA "Benchmarking LLM inference costs" (developer.nvidia.com blog); llmtco.com methodology.

    An 8-GPU server at 300,000 USD over 4 years, 20,000 USD a year of hosting and 15,000 of power:

    >>> tco_yearly_usd(300_000, depreciation_years=4, hosting_usd_per_year=20_000, power_usd_per_year=15_000)
    110000.0
    """
    c = check_number("capex_usd", capex_usd, minimum=0)
    y = check_number("depreciation_years", depreciation_years, minimum=0, exclusive_minimum=True)
    lic = check_number("license_usd_per_year", license_usd_per_year, minimum=0)
    host = check_number("hosting_usd_per_year", hosting_usd_per_year, minimum=0)
    power = check_number("power_usd_per_year", power_usd_per_year, minimum=0)
    return c / y + lic + host + power


def selfhost_usd_per_mtok_output(usd_per_gpu_hour: float, *, output_tokens_per_s: float, gpus: float = 1) -> float:
    """Self-hosted cost per million *output* tokens (C4): ``1e6 * gpus * $/GPU-h / (3600 * output_tokens_per_s)``.

    ``output_tokens_per_s`` is the decode throughput the ``gpus`` deliver together *at the latency SLO* (P8), not the
    peak. For a figure comparable with an API price per total token use :func:`selfhost_usd_per_mtok`.

    Reference: C4, cli99/llm-analysis (``1000 * $/h * N_gpu / 3600 / tokens_per_s`` per 1k tokens); NVIDIA TCO blog.

    Two H100s at 3 USD/h each serving 920 output tokens/s (the NIM Llama-3.3-70B fp8 plateau): 1.81 USD per million
    output tokens.

    >>> round(selfhost_usd_per_mtok_output(3.0, output_tokens_per_s=920, gpus=2), 4)
    1.8116
    """
    p = check_number("usd_per_gpu_hour", usd_per_gpu_hour, minimum=0)
    t = check_number("output_tokens_per_s", output_tokens_per_s, minimum=0, exclusive_minimum=True)
    g = check_number("gpus", gpus, minimum=0, exclusive_minimum=True)
    return TOKENS_PER_MTOK * g * p / (SECONDS_PER_HOUR * t)


def selfhost_usd_per_mtok(usd_per_gpu_hour: float, *, output_tokens_per_s: float, avg_input_tokens: float,
                          avg_output_tokens: float, gpus: float = 1) -> float:
    """Self-hosted cost per million *total* (input + output) tokens, comparable with :func:`api_usd_per_mtok`.

    While the fleet decodes ``output_tokens_per_s`` it also prefills ``I / O`` input tokens per output token, so it
    serves ``output_tokens_per_s * (I + O) / O`` tokens a second in all:
    ``$/Mtok_total = 1e6 * gpus * $/GPU-h / (3600 * output_tokens_per_s * (I + O) / O)
    = $/Mtok_output * O / (I + O)``.

    Reference: C4 with C6's token-weighted total (``blended = (I*p_in + O*p_out) / (I + O)``: both per total token).
    ***Derived.***

    The two H100s above (1.81 USD per million output tokens) on 3,000-token prompts and 1,000-token answers:
    0.45 USD per million tokens in all.

    >>> round(selfhost_usd_per_mtok(3.0, output_tokens_per_s=920, avg_input_tokens=3000, avg_output_tokens=1000,
    ...       gpus=2), 4)
    0.4529
    """
    i = check_number("avg_input_tokens", avg_input_tokens, minimum=0)
    o = check_number("avg_output_tokens", avg_output_tokens, minimum=0, exclusive_minimum=True)
    per_output = selfhost_usd_per_mtok_output(usd_per_gpu_hour, output_tokens_per_s=output_tokens_per_s, gpus=gpus)
    return per_output * o / (i + o)


def api_usd_per_mtok(
    avg_input_tokens: float,
    *,
    avg_output_tokens: float,
    usd_per_mtok_input: float,
    usd_per_mtok_output: float,
    cache_hit_rate: float = 0.0,
    usd_per_mtok_cached_input: float | None = None,
    cache_write_tokens: float = 0.0,
    usd_per_mtok_cache_write: float | None = None,
) -> float:
    """API cost per million *total* (input + output) tokens, caching included:
    ``$/Mtok = 1e6 * cost_per_request / (I + O)`` (:func:`api_cost_per_request_usd`, same blank-price rule).

    Reference: C1 over C6's token total. With no caching it equals C6's ``blended`` price. ***Derived.***

    The Sonnet request of :func:`api_cost_per_request_usd` (1.665 cents for 10,000 + 500 tokens): 1.59 USD per
    million tokens; without caching it is the blended price (10,000 x 3 + 500 x 15) / 10,500 = 3.57.

    >>> round(api_usd_per_mtok(10_000, avg_output_tokens=500, usd_per_mtok_input=3, usd_per_mtok_output=15,
    ...       cache_hit_rate=0.8, usd_per_mtok_cached_input=0.3, cache_write_tokens=1000,
    ...       usd_per_mtok_cache_write=3.75), 4)
    1.5857
    >>> round(api_usd_per_mtok(10_000, avg_output_tokens=500, usd_per_mtok_input=3, usd_per_mtok_output=15), 4)
    3.5714
    """
    i = check_number("avg_input_tokens", avg_input_tokens, minimum=0)
    o = check_number("avg_output_tokens", avg_output_tokens, minimum=0)
    if i + o == 0:
        raise ArgumentError("avg_input_tokens", avg_input_tokens, "input + output tokens > 0")
    usd = api_cost_per_request_usd(
        i, avg_output_tokens=o, usd_per_mtok_input=usd_per_mtok_input, usd_per_mtok_output=usd_per_mtok_output,
        cache_hit_rate=cache_hit_rate, usd_per_mtok_cached_input=usd_per_mtok_cached_input,
        cache_write_tokens=cache_write_tokens, usd_per_mtok_cache_write=usd_per_mtok_cache_write,
    )
    return usd * TOKENS_PER_MTOK / (i + o)


def api_usd_per_mtok_output(
    avg_input_tokens: float,
    *,
    avg_output_tokens: float,
    usd_per_mtok_input: float,
    usd_per_mtok_output: float,
    cache_hit_rate: float = 0.0,
    usd_per_mtok_cached_input: float | None = None,
    cache_write_tokens: float = 0.0,
    usd_per_mtok_cache_write: float | None = None,
) -> float:
    """API cost per million *output* tokens, the input they needed included:
    ``$/Mtok_output = 1e6 * cost_per_request / O``; comparable with :func:`selfhost_usd_per_mtok_output`.

    Reference: C1 per output token. ***Derived.***

    The Sonnet request above: 33.3 USD per million output tokens.

    >>> round(api_usd_per_mtok_output(10_000, avg_output_tokens=500, usd_per_mtok_input=3, usd_per_mtok_output=15,
    ...       cache_hit_rate=0.8, usd_per_mtok_cached_input=0.3, cache_write_tokens=1000,
    ...       usd_per_mtok_cache_write=3.75), 4)
    33.3
    """
    o = check_number("avg_output_tokens", avg_output_tokens, minimum=0, exclusive_minimum=True)
    usd = api_cost_per_request_usd(
        avg_input_tokens, avg_output_tokens=o, usd_per_mtok_input=usd_per_mtok_input,
        usd_per_mtok_output=usd_per_mtok_output, cache_hit_rate=cache_hit_rate,
        usd_per_mtok_cached_input=usd_per_mtok_cached_input, cache_write_tokens=cache_write_tokens,
        usd_per_mtok_cache_write=usd_per_mtok_cache_write,
    )
    return usd * TOKENS_PER_MTOK / o


def selfhost_monthly_usd(usd_per_gpu_hour: float, *, gpus: float, hours_per_month: float = HOURS_PER_MONTH) -> float:
    """Monthly cost of an always-on self-hosted fleet: ``gpus * $/GPU-h * hours_per_month`` (730.5 h by default).

    Reference: C4/C5 (rented GPUs; owned hardware adds capex, hosting and power, C5).

    >>> selfhost_monthly_usd(2.0, gpus=8)
    11688.0
    """
    p = check_number("usd_per_gpu_hour", usd_per_gpu_hour, minimum=0)
    g = check_number("gpus", gpus, minimum=0)
    h = check_number("hours_per_month", hours_per_month, minimum=0)
    return p * g * h


def blended_usd_per_mtok(avg_input_tokens: float, *, avg_output_tokens: float, usd_per_mtok_input: float,
                         usd_per_mtok_output: float) -> float:
    """Token-weighted API price (C6): ``blended = (I * p_in_eff + O * p_out) / (I + O)``.

    ``p_in_eff`` is the effective input price after caching (:func:`api_cost_per_request_usd` over input only).

    Reference: C6, llmtco.com; kickllm.

    >>> blended_usd_per_mtok(3000, avg_output_tokens=1000, usd_per_mtok_input=3, usd_per_mtok_output=15)
    6.0
    """
    i = check_number("avg_input_tokens", avg_input_tokens, minimum=0)
    o = check_number("avg_output_tokens", avg_output_tokens, minimum=0)
    p_in = _price("usd_per_mtok_input", usd_per_mtok_input)
    p_out = _price("usd_per_mtok_output", usd_per_mtok_output)
    if i + o == 0:
        raise ArgumentError("avg_input_tokens", avg_input_tokens, "input + output tokens > 0")
    return (i * p_in + o * p_out) / (i + o)


def breakeven_mtok_per_month(selfhost_usd_per_month: float, *, avg_input_tokens: float, avg_output_tokens: float,
                             usd_per_mtok_input: float, usd_per_mtok_output: float) -> float:
    """Monthly API volume (million tokens) at which self-hosting costs the same (C6):
    ``Mtok/month* = self_host_monthly / blended``.

    Above this volume self-hosting is cheaper, provided the fleet actually carries it (check P8 capacity).

    Reference: C6, llmtco.com; kickllm.

    An 11,688 USD/month fleet against a 6 USD/Mtok blended API price breaks even at 1,948 Mtok per month:

    >>> breakeven_mtok_per_month(11_688, avg_input_tokens=3000, avg_output_tokens=1000, usd_per_mtok_input=3,
    ...                          usd_per_mtok_output=15)
    1948.0
    """
    m = check_number("selfhost_usd_per_month", selfhost_usd_per_month, minimum=0)
    blended = blended_usd_per_mtok(avg_input_tokens, avg_output_tokens=avg_output_tokens,
                                   usd_per_mtok_input=usd_per_mtok_input, usd_per_mtok_output=usd_per_mtok_output)
    if blended == 0:
        raise ArgumentError("usd_per_mtok_input", usd_per_mtok_input, "prices with a blended price > 0")
    return m / blended


PRICE_FIELDS = {
    "input": "usd_per_mtok_input",
    "cached_input": "usd_per_mtok_cached_input",
    "cache_read": "usd_per_mtok_cached_input",
    "cache_write": "usd_per_mtok_cache_write",
    "output": "usd_per_mtok_output",
}
"""Names :func:`price_value` accepts (lower case) and the :class:`~planner.specs.ProviderLimits` field each reads."""


def price_value(limits: ProviderLimits, *, price_name: str) -> float:
    """One price of a provider tier in USD per million tokens, by name (``input``, ``cached_input`` (or
    ``cache_read``), ``cache_write``, ``output``). Case-insensitive; a price the catalog lacks raises.

    >>> from planner.specs import ProviderLimits
    >>> tier = ProviderLimits(provider="p", tier="t", model="m", usd_per_mtok_input=3.0, source="s", as_of="2026")
    >>> price_value(tier, price_name="Input")
    3.0
    """
    key = str(price_name).strip().lower()
    if key not in PRICE_FIELDS:
        raise UnknownNameError("price_name", price_name, PRICE_FIELDS)
    value = getattr(limits, PRICE_FIELDS[key])
    if value is None:
        known = [n for n, f in PRICE_FIELDS.items() if getattr(limits, f) is not None]
        raise ArgumentError("price_name", price_name, f"a price {limits.key} lists: {', '.join(known) or 'none'}")
    return float(value)
