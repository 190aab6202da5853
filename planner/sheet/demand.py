"""Spreadsheet functions for demand at peak (D1-D4)."""

from __future__ import annotations

from planner import demand
from planner.registry import Arg, sheet_function

PEAK_QPS = Arg(name="peak_qps", unit="req/s", help="Requests per second at the peak")
AVG_QPS = Arg(name="avg_qps", unit="req/s", help="Average requests per second over the day")
AVG_INPUT = Arg(name="avg_input_tokens", unit="tokens", help="Average input (prompt) tokens per request, cached or not")
AVG_OUTPUT = Arg(name="avg_output_tokens", unit="tokens", help="Average output (completion) tokens per request")
CACHE_HIT_RATE = Arg(
    name="cache_hit_rate",
    unit="fraction",
    help="Fraction of input tokens read from the prompt cache (0-1, or a percentage)",
    default=0.0,
)
CACHE_WRITE_TOKENS = Arg(
    name="cache_write_tokens",
    unit="tokens",
    help="Input tokens per request written to the cache; they count like uncached input (checked <= input x (1-h))",
    default=0.0,
)
CACHED_READS_COUNT = Arg(
    name="cached_reads_count",
    unit="flag",
    kind="flag",
    help="TRUE if the provider counts cache reads toward ITPM (Baseten, OpenAI); FALSE if not (Anthropic, Groq)",
    default=False,
)


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
    summary="Tokens per minute at peak as the provider counts them toward TPM: counted input (cache reads in or "
    "out) + output, or the reserved max_tokens x the output quota weight where the provider reserves it.",
    args=(PEAK_QPS, AVG_INPUT, AVG_OUTPUT, CACHE_HIT_RATE, CACHE_WRITE_TOKENS,
          Arg(name="cached_reads_count", unit="TRUE/FALSE", kind="flag", default=True,
              help="Cache reads count toward TPM (blank: TRUE, plain counting)"),
          Arg(name="reserved_max_tokens", unit="tokens", default=None,
              help="max_tokens the provider reserves at admission (blank: actual output counts)"),
          Arg(name="output_weight", unit="x", default=1.0,
              help="Quota tokens one output token burns (AWS Bedrock, Claude 3.7+: 5)")),
    returns="tokens/min",
    category="Demand",
    example="=CAPACITY_TPM(10, 2000, 500) -> 1500000",
    formula_ids=("D2", "D3", "D4"),
)
def CAPACITY_TPM(peak_qps, avg_input_tokens, avg_output_tokens, cache_hit_rate=0.0, cache_write_tokens=0.0,
                 cached_reads_count=True, reserved_max_tokens=None, output_weight=1.0):
    demand.check_cache_write_tokens(avg_input_tokens, cache_hit_rate=cache_hit_rate,
                                    cache_write_tokens=cache_write_tokens)
    return demand.tpm_counted(peak_qps, avg_input_tokens=avg_input_tokens, avg_output_tokens=avg_output_tokens,
                              cache_hit_rate=cache_hit_rate,
                              cached_reads_count=cached_reads_count, reserved_max_tokens=reserved_max_tokens,
                              output_weight=output_weight)


@sheet_function(
    summary="Input tokens per minute at peak as the provider counts them: cache reads excluded unless "
    "cached_reads_count is TRUE (uncached input and cache writes always count).",
    args=(PEAK_QPS, AVG_INPUT, CACHE_HIT_RATE, CACHE_WRITE_TOKENS, CACHED_READS_COUNT),
    returns="tokens/min",
    category="Demand",
    example="=CAPACITY_ITPM(10, 20000, 0.8) -> 2400000",
    formula_ids=("D2", "D4"),
)
def CAPACITY_ITPM(peak_qps, avg_input_tokens, cache_hit_rate=0.0, cache_write_tokens=0.0, cached_reads_count=False):
    demand.check_cache_write_tokens(avg_input_tokens, cache_hit_rate=cache_hit_rate,
                                    cache_write_tokens=cache_write_tokens)
    return demand.itpm_counted(peak_qps, avg_input_tokens=avg_input_tokens, cache_hit_rate=cache_hit_rate,
                               cached_reads_count=cached_reads_count)


@sheet_function(
    summary="Output tokens per minute at peak (actual output): 60 x peak QPS x output tokens.",
    args=(PEAK_QPS, AVG_OUTPUT),
    returns="tokens/min",
    category="Demand",
    example="=CAPACITY_OTPM(10, 500) -> 300000",
    formula_ids=("D2",),
)
def CAPACITY_OTPM(peak_qps, avg_output_tokens):
    return demand.otpm(peak_qps, avg_output_tokens=avg_output_tokens)


@sheet_function(
    summary="Tokens per minute reserved at admission where max_tokens is reserved up front (Azure OpenAI, "
    "Cerebras, Bedrock): 60 x peak QPS x (input + output_weight x max_tokens).",
    args=(
        PEAK_QPS,
        AVG_INPUT,
        Arg(name="max_tokens", unit="tokens", help="max_tokens sent with each request (or context minus input)"),
        Arg(
            name="output_weight",
            unit="x",
            help="Quota units burned per reserved output token (1; 5 for Claude 3.7+ on AWS Bedrock)",
            default=1.0,
        ),
    ),
    returns="tokens/min",
    category="Demand",
    example="=ADMISSION_TPM(10, 2000, 4096) -> 3657600",
    formula_ids=("D3",),
)
def ADMISSION_TPM(peak_qps, avg_input_tokens, max_tokens, output_weight=1.0):
    return demand.admission_tpm(peak_qps, avg_input_tokens=avg_input_tokens, max_tokens=max_tokens,
                                output_weight=output_weight)


@sheet_function(
    summary="A per-minute rate seen in a short enforcement window: rate / 60 x window_s x burst_factor. Apply it to "
    "demand (with its burst factor) and to the limit (burst 1) and compare.",
    args=(
        Arg(name="rate_per_min", unit="per min", help="A per-minute rate: demand (RPM, TPM) or a limit"),
        Arg(name="window_s", unit="s", help="Enforcement window in seconds (1 or 10 for Azure OpenAI)", default=1.0),
        Arg(
            name="burst_factor",
            unit="x",
            help="Peak-second rate / average rate within the minute (>= 1; 1 = smooth arrivals)",
            default=1.0,
        ),
    ),
    returns="per window",
    category="Demand",
    example="=WINDOW_PEAK(600, 1) -> 10",
    formula_ids=("D1",),
)
def WINDOW_PEAK(rate_per_min, window_s=1.0, burst_factor=1.0):
    return demand.window_peak(rate_per_min, window_s=window_s, burst_factor=burst_factor)


@sheet_function(
    summary="Requests per day from the average rate (for RPD limits): 86,400 x average QPS.",
    args=(AVG_QPS,),
    returns="req/day",
    category="Demand",
    example="=CAPACITY_RPD(2) -> 172800",
    formula_ids=("D1",),
)
def CAPACITY_RPD(avg_qps):
    return demand.requests_per_day(avg_qps)


@sheet_function(
    summary="Tokens per day from the average rate (for TPD limits): 86,400 x average QPS x (input + output tokens).",
    args=(AVG_QPS, AVG_INPUT, AVG_OUTPUT),
    returns="tokens/day",
    category="Demand",
    example="=CAPACITY_TPD(1, 1000, 250) -> 108000000",
    formula_ids=("D2",),
)
def CAPACITY_TPD(avg_qps, avg_input_tokens, avg_output_tokens):
    return demand.tokens_per_day(avg_qps, avg_input_tokens=avg_input_tokens, avg_output_tokens=avg_output_tokens)
