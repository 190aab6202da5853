"""Spreadsheet functions for cost: API cost with prompt caching, cache break-even, $/Mtok for the API and for
self-hosting (per million total tokens, and per million output tokens in the ``..._OUTPUT`` functions).

The arguments keep Excel's order; the core (:mod:`planner.cost`) is called by keyword. A blank cache-write price
means the provider charges no separate write price (written tokens cost the input price); a blank cached-input price
means no discount.
"""

from __future__ import annotations

from planner import cost
from planner.demand import DAYS_PER_MONTH
from planner.registry import Arg, sheet_function
from planner.sheet.demand import AVG_INPUT, AVG_OUTPUT

P_IN = Arg(name="usd_per_mtok_input", unit="USD/Mtok", help="Price of uncached input tokens")
P_OUT = Arg(name="usd_per_mtok_output", unit="USD/Mtok", help="Price of output tokens")
P_READ = Arg(
    name="usd_per_mtok_cached_input",
    unit="USD/Mtok",
    help="Price of input tokens read from the prompt cache",
    blank="no discount: the input price",
)
P_WRITE = Arg(
    name="usd_per_mtok_cache_write",
    unit="USD/Mtok",
    help="Price of input tokens written to the prompt cache",
    blank="no separate write price: writes cost the input price",
)
HIT_RATE = Arg(
    name="cache_hit_rate", unit="fraction", help="Fraction of input tokens read from the prompt cache (0-1)"
)
WRITE_TOKENS = Arg(
    name="cache_write_tokens",
    unit="tokens",
    help="Input tokens per request written to the cache (part of the non-read input; 0 if none)",
)
AVG_QPS = Arg(name="avg_qps", unit="req/s", help="Average requests per second over the month")
DAYS = Arg(name="days_per_month", unit="days", help="Days in the month", default=DAYS_PER_MONTH)


@sheet_function(
    summary="One price of a provider tier from the catalog, in USD per million tokens: input, cached_input, "
    "cache_write or output.",
    args=(
        Arg(name="provider", unit="name", kind="text", help="Provider in the catalog (e.g. anthropic)"),
        Arg(name="tier", unit="name", kind="text", help="Usage tier of the provider"),
        Arg(name="model", unit="name", kind="text", help="Model or model class the price applies to"),
        Arg(name="price_name", unit="name", kind="text", help="input, cached_input (cache_read), cache_write, output"),
    ),
    returns="USD/Mtok",
    category="Cost",
    example='=PROVIDER_PRICE("anthropic", "tier-4", "claude-sonnet-4.5", "cache_write") -> 3.75',
    formula_ids=("C1",),
)
def PROVIDER_PRICE(provider, tier, model, price_name):
    from planner import catalog

    return cost.price_value(catalog.get_provider_limits(provider, tier, model), price_name=price_name)


@sheet_function(
    summary="API cost of one request: uncached input, cache reads, cache writes and output at their prices "
    "(cache writes are part of the non-read input).",
    args=(AVG_INPUT, AVG_OUTPUT, HIT_RATE, WRITE_TOKENS, P_IN, P_READ, P_WRITE, P_OUT),
    returns="USD/request",
    category="Cost",
    example="=API_COST_PER_REQUEST(10000, 500, 0.8, 1000, 3, 0.3, 3.75, 15) -> 0.01665",
    formula_ids=("C1",),
)
def API_COST_PER_REQUEST(
    avg_input_tokens,
    avg_output_tokens,
    cache_hit_rate,
    cache_write_tokens,
    usd_per_mtok_input,
    usd_per_mtok_cached_input,
    usd_per_mtok_cache_write,
    usd_per_mtok_output,
):
    return cost.api_cost_per_request_usd(avg_input_tokens, **_api_prices(locals()))


def _api_prices(args: dict) -> dict:
    """The keyword arguments of :func:`planner.cost.api_cost_per_request_usd` after ``avg_input_tokens``."""
    names = ("avg_output_tokens", "usd_per_mtok_input", "usd_per_mtok_output", "cache_hit_rate",
             "usd_per_mtok_cached_input", "cache_write_tokens", "usd_per_mtok_cache_write")
    return {name: args[name] for name in names}


@sheet_function(
    summary="API cost per million total (input + output) tokens, caching included: 1e6 x API_COST_PER_REQUEST / "
    "(input + output tokens). Compares with SELFHOST_USD_PER_MTOK.",
    args=(AVG_INPUT, AVG_OUTPUT, HIT_RATE, WRITE_TOKENS, P_IN, P_READ, P_WRITE, P_OUT),
    returns="USD/Mtok",
    category="Cost",
    example="=API_USD_PER_MTOK(10000, 500, 0.8, 1000, 3, 0.3, 3.75, 15) -> 1.5857",
    formula_ids=("C1", "C6"),
)
def API_USD_PER_MTOK(
    avg_input_tokens,
    avg_output_tokens,
    cache_hit_rate,
    cache_write_tokens,
    usd_per_mtok_input,
    usd_per_mtok_cached_input,
    usd_per_mtok_cache_write,
    usd_per_mtok_output,
):
    return cost.api_usd_per_mtok(avg_input_tokens, **_api_prices(locals()))


@sheet_function(
    summary="API cost per million output tokens, the input they needed included: 1e6 x API_COST_PER_REQUEST / "
    "output tokens. Compares with SELFHOST_USD_PER_MTOK_OUTPUT.",
    args=(AVG_INPUT, AVG_OUTPUT, HIT_RATE, WRITE_TOKENS, P_IN, P_READ, P_WRITE, P_OUT),
    returns="USD/Mtok output",
    category="Cost",
    example="=API_USD_PER_MTOK_OUTPUT(10000, 500, 0.8, 1000, 3, 0.3, 3.75, 15) -> 33.3",
    formula_ids=("C1",),
)
def API_USD_PER_MTOK_OUTPUT(
    avg_input_tokens,
    avg_output_tokens,
    cache_hit_rate,
    cache_write_tokens,
    usd_per_mtok_input,
    usd_per_mtok_cached_input,
    usd_per_mtok_cache_write,
    usd_per_mtok_output,
):
    return cost.api_usd_per_mtok_output(avg_input_tokens, **_api_prices(locals()))


@sheet_function(
    summary="Monthly API cost of a route: API_COST_PER_REQUEST x requests per month from the average QPS "
    "(86,400 x 30.4375 days, or the days given).",
    args=(AVG_QPS, AVG_INPUT, AVG_OUTPUT, HIT_RATE, WRITE_TOKENS, P_IN, P_READ, P_WRITE, P_OUT, DAYS),
    returns="USD/month",
    category="Cost",
    example="=API_COST_MONTHLY(1, 10000, 500, 0.8, 1000, 3, 0.3, 3.75, 15) -> 43786.17",
    formula_ids=("C1",),
)
def API_COST_MONTHLY(
    avg_qps,
    avg_input_tokens,
    avg_output_tokens,
    cache_hit_rate,
    cache_write_tokens,
    usd_per_mtok_input,
    usd_per_mtok_cached_input,
    usd_per_mtok_cache_write,
    usd_per_mtok_output,
    days_per_month=DAYS_PER_MONTH,
):
    per_request = cost.api_cost_per_request_usd(avg_input_tokens, **_api_prices(locals()))
    return cost.monthly_cost_usd(per_request, avg_qps=avg_qps, days_per_month=days_per_month)


@sheet_function(
    summary="Monthly cost of a number of requests (e.g. a forecast): cost per request x requests per month.",
    args=(
        Arg(name="cost_per_request_usd", unit="USD/request", help="Cost of one request (API_COST_PER_REQUEST)"),
        Arg(name="requests_per_month", unit="req/month", help="Requests in the month"),
    ),
    returns="USD/month",
    category="Cost",
    example="=API_COST_FOR_REQUESTS(0.002, 1000000) -> 2000",
    formula_ids=("C1",),
)
def API_COST_FOR_REQUESTS(cost_per_request_usd, requests_per_month):
    return cost.monthly_cost_usd(cost_per_request_usd, requests_per_month_count=requests_per_month)


@sheet_function(
    summary="What prompt caching saves per month against sending every input token uncached (negative when "
    "cache writes cost more than reads save).",
    args=(AVG_QPS, AVG_INPUT, HIT_RATE, WRITE_TOKENS, P_IN, P_READ, P_WRITE, DAYS),
    returns="USD/month",
    category="Cost",
    example="=CACHE_SAVINGS_MONTHLY(1, 10000, 0.8, 1000, 3, 0.3, 3.75) -> 54831.33",
    formula_ids=("C1",),
)
def CACHE_SAVINGS_MONTHLY(
    avg_qps,
    avg_input_tokens,
    cache_hit_rate,
    cache_write_tokens,
    usd_per_mtok_input,
    usd_per_mtok_cached_input,
    usd_per_mtok_cache_write,
    days_per_month=DAYS_PER_MONTH,
):
    return cost.cache_savings_monthly_usd(
        avg_qps,
        avg_input_tokens=avg_input_tokens,
        cache_hit_rate=cache_hit_rate,
        usd_per_mtok_input=usd_per_mtok_input,
        usd_per_mtok_cached_input=usd_per_mtok_cached_input,
        cache_write_tokens=cache_write_tokens,
        usd_per_mtok_cache_write=usd_per_mtok_cache_write,
        days_per_month=days_per_month,
    )


@sheet_function(
    summary="Hit rate among the uses of a cached prefix above which paying for cache writes pays: "
    "(p_write - p_in) / (p_write - p_read).",
    args=(P_IN, P_WRITE, P_READ),
    returns="fraction",
    category="Cost",
    example="=CACHE_BREAKEVEN_HIT_RATE(3, 3.75, 0.3) -> 0.2174",
    formula_ids=("C2",),
)
def CACHE_BREAKEVEN_HIT_RATE(usd_per_mtok_input, usd_per_mtok_cache_write, usd_per_mtok_cached_input):
    return cost.cache_breakeven_hit_rate(usd_per_mtok_input, usd_per_mtok_cache_write=usd_per_mtok_cache_write,
                                         usd_per_mtok_cached_input=usd_per_mtok_cached_input)


@sheet_function(
    summary="Uses per cache write (the write plus its reads) above which caching a prefix pays: "
    "(p_write - p_read) / (p_in - p_read), at least 1.",
    args=(P_IN, P_WRITE, P_READ),
    returns="uses per write",
    category="Cost",
    example="=CACHE_BREAKEVEN_REUSE(3, 3.75, 0.3) -> 1.2778",
    formula_ids=("C2",),
)
def CACHE_BREAKEVEN_REUSE(usd_per_mtok_input, usd_per_mtok_cache_write, usd_per_mtok_cached_input):
    return cost.cache_breakeven_reuse(usd_per_mtok_input, usd_per_mtok_cache_write=usd_per_mtok_cache_write,
                                      usd_per_mtok_cached_input=usd_per_mtok_cached_input)


GPU_HOUR = Arg(name="usd_per_gpu_hour", unit="USD/GPU-h", help="Price of one GPU-hour (on-demand or reserved)")


OUTPUT_TPS = Arg(
    name="output_tokens_per_s",
    unit="tokens/s",
    help="Output tokens per second the GPUs decode together at the SLO (e.g. DECODE_TOKENS_PER_S x replicas)",
)
SELFHOST_GPUS = Arg(name="gpus", unit="count", help="GPUs behind that throughput", default=1)


@sheet_function(
    summary="Self-hosted cost per million total (input + output) tokens: 1e6 x GPUs x $/GPU-hour / (3600 x output "
    "tokens/s x (input + output) / output). Compares with API_USD_PER_MTOK.",
    args=(GPU_HOUR, OUTPUT_TPS, AVG_INPUT, AVG_OUTPUT, SELFHOST_GPUS),
    returns="USD/Mtok",
    category="Cost",
    example="=SELFHOST_USD_PER_MTOK(3, 920, 3000, 1000, 2) -> 0.4529",
    formula_ids=("C4", "C6"),
)
def SELFHOST_USD_PER_MTOK(usd_per_gpu_hour, output_tokens_per_s, avg_input_tokens, avg_output_tokens, gpus=1):
    return cost.selfhost_usd_per_mtok(
        usd_per_gpu_hour, output_tokens_per_s=output_tokens_per_s, avg_input_tokens=avg_input_tokens,
        avg_output_tokens=avg_output_tokens, gpus=gpus,
    )


@sheet_function(
    summary="Self-hosted cost per million output tokens: 1e6 x GPUs x $/GPU-hour / (3600 x output tokens/s at the "
    "SLO). Compares with API_USD_PER_MTOK_OUTPUT.",
    args=(GPU_HOUR, OUTPUT_TPS, SELFHOST_GPUS),
    returns="USD/Mtok output",
    category="Cost",
    example="=SELFHOST_USD_PER_MTOK_OUTPUT(3, 920, 2) -> 1.8116",
    formula_ids=("C4",),
)
def SELFHOST_USD_PER_MTOK_OUTPUT(usd_per_gpu_hour, output_tokens_per_s, gpus=1):
    return cost.selfhost_usd_per_mtok_output(usd_per_gpu_hour, output_tokens_per_s=output_tokens_per_s, gpus=gpus)


@sheet_function(
    summary="Monthly cost of an always-on self-hosted fleet: GPUs x $/GPU-hour x 730.5 hours.",
    args=(GPU_HOUR, Arg(name="gpus", unit="count", help="GPUs in the fleet")),
    returns="USD/month",
    category="Cost",
    example="=SELFHOST_USD_MONTHLY(2, 8) -> 11688",
    formula_ids=("C4", "C5"),
)
def SELFHOST_USD_MONTHLY(usd_per_gpu_hour, gpus):
    return cost.selfhost_monthly_usd(usd_per_gpu_hour, gpus=gpus)


@sheet_function(
    summary="Monthly API volume (million tokens) at which self-hosting costs the same: self-host monthly cost / "
    "blended API price.",
    args=(
        Arg(name="selfhost_usd_per_month", unit="USD/month", help="Monthly cost of the fleet (SELFHOST_USD_MONTHLY)"),
        AVG_INPUT,
        AVG_OUTPUT,
        Arg(name="usd_per_mtok_input", unit="USD/Mtok", help="Effective input price after caching"),
        P_OUT,
    ),
    returns="Mtok/month",
    category="Cost",
    example="=BREAKEVEN_MTOK_MONTHLY(11688, 3000, 1000, 3, 15) -> 1948",
    formula_ids=("C6",),
)
def BREAKEVEN_MTOK_MONTHLY(
    selfhost_usd_per_month, avg_input_tokens, avg_output_tokens, usd_per_mtok_input, usd_per_mtok_output
):
    return cost.breakeven_mtok_per_month(
        selfhost_usd_per_month, avg_input_tokens=avg_input_tokens, avg_output_tokens=avg_output_tokens,
        usd_per_mtok_input=usd_per_mtok_input, usd_per_mtok_output=usd_per_mtok_output,
    )


@sheet_function(
    summary="Prefix-cache hit rate the backends see: h with cache-aware routing (or a shared cache), h / replicas "
    "with random routing (heuristic).",
    args=(
        HIT_RATE,
        Arg(name="replicas", unit="count", help="Replicas the route is spread over", default=1),
        Arg(
            name="cache_aware_routing",
            unit="flag",
            kind="flag",
            help="TRUE if requests with the same prefix go to the same replica (or the cache is shared)",
            default=True,
        ),
    ),
    returns="fraction",
    category="Cost",
    example="=EFFECTIVE_HIT_RATE(0.8, 4, FALSE) -> 0.2",
    formula_ids=("C3",),
)
def EFFECTIVE_HIT_RATE(cache_hit_rate, replicas=1, cache_aware_routing=True):
    return cost.effective_hit_rate(cache_hit_rate, replicas=replicas, cache_aware_routing=cache_aware_routing)


@sheet_function(
    summary="Yearly total cost of owned hardware: capex / depreciation years + license + hosting + power.",
    args=(
        Arg(name="capex_usd", unit="USD", help="Purchase price of the servers"),
        Arg(name="depreciation_years", unit="years", help="Years over which the hardware is written off"),
        Arg(name="license_usd_per_year", unit="USD/year", help="Software licenses per year", default=0.0),
        Arg(name="hosting_usd_per_year", unit="USD/year", help="Space and operations per year", default=0.0),
        Arg(name="power_usd_per_year", unit="USD/year", help="Electricity per year", default=0.0),
    ),
    returns="USD/year",
    category="Cost",
    example="=TCO_YEARLY(300000, 4, 0, 20000, 15000) -> 110000",
    formula_ids=("C5",),
)
def TCO_YEARLY(capex_usd, depreciation_years, license_usd_per_year=0.0, hosting_usd_per_year=0.0,
               power_usd_per_year=0.0):
    return cost.tco_yearly_usd(capex_usd, depreciation_years=depreciation_years,
                               license_usd_per_year=license_usd_per_year, hosting_usd_per_year=hosting_usd_per_year,
                               power_usd_per_year=power_usd_per_year)
