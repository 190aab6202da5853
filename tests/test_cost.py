"""Cost (C1, C2, C4, C6): API cost with prompt caching, cache break-even, $/Mtok per total and per output token for
the API and for self-hosting, break-even volume.

Expected values are computed here from the prices the sources state (reference §2 and §5: Sonnet input 3, write 3.75,
read 0.3, output 15 USD/Mtok; OpenAI gpt-4.1 input 2, cached 0.5, output 8), never from the code under test.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from planner import catalog, cost, functions
from planner.coerce import call_sheet_function
from planner.errors import ArgumentError, UnknownNameError
from planner.registry import REGISTRY

PER_TOKEN_TO_PER_MTOK = 1e6
SONNET_INPUT, SONNET_WRITE_5M, SONNET_WRITE_1H, SONNET_READ = 3e-6, 3.75e-6, 6e-6, 3e-7  # USD/token, reference §5

prices = st.floats(min_value=0.01, max_value=100, allow_nan=False)
tokens = st.floats(min_value=0, max_value=2e5, allow_nan=False)
fraction = st.floats(min_value=0, max_value=1, allow_nan=False)


class TestReferencePrices:
    def test_catalog_sonnet_prices_match_the_reference(self):
        """Anthropic Sonnet: input 3e-6, cache write 3.75e-6, cache read 3e-7 USD per token (LiteLLM price map)."""
        p = [functions.PROVIDER_PRICE("anthropic", "tier-4", "claude-sonnet-4.5", name) / PER_TOKEN_TO_PER_MTOK
             for name in ("input", "cache_write", "cached_input")]
        assert p == pytest.approx([SONNET_INPUT, SONNET_WRITE_5M, SONNET_READ])

    def test_anthropic_ratios(self):
        """C1 ratios: write 1.25x input (5 min), read 0.1x input."""
        assert SONNET_WRITE_5M / SONNET_INPUT == pytest.approx(1.25)
        assert SONNET_READ / SONNET_INPUT == pytest.approx(0.1)

    def test_unknown_price_name(self):
        with pytest.raises(UnknownNameError, match="^price_name: got 'batch'"):
            functions.PROVIDER_PRICE("anthropic", "tier-4", "claude-sonnet-4.5", "batch")

    def test_price_the_catalog_lacks(self):
        """Gemini lists no cache-write price: the message says which prices it lists."""
        with pytest.raises(ArgumentError, match="^price_name: got 'cache_write', expected a price gemini/"):
            functions.PROVIDER_PRICE("gemini", "tier-1", "gemini-2.5-pro", "cache_write")


class TestApiCost:
    def test_worked_example(self):
        """10,000 in (80 % read, 1,000 written), 500 out at Sonnet prices:
        (3x1,000 + 0.3x8,000 + 3.75x1,000 + 15x500) / 1e6 = 0.01665 USD."""
        assert functions.API_COST_PER_REQUEST(10_000, 500, 0.8, 1000, 3, 0.3, 3.75, 15) == pytest.approx(0.01665)

    def test_no_cache_is_plain_price(self):
        assert functions.API_COST_PER_REQUEST(1_000_000, 1_000_000, 0, 0, 3, 0.3, 3.75, 15) == pytest.approx(18)

    def test_zero_tokens_cost_nothing(self):
        assert functions.API_COST_PER_REQUEST(0, 0, 0, 0, 3, 0.3, 3.75, 15) == 0

    def test_too_many_write_tokens(self):
        with pytest.raises(ArgumentError, match="^cache_write_tokens: got 3000"):
            functions.API_COST_PER_REQUEST(10_000, 0, 0.8, 3000, 3, 0.3, 3.75, 15)

    def test_monthly_from_average_qps(self):
        """30.4375 days x 86,400 s = 2,629,800 requests per month at 1 req/s."""
        per_request = functions.API_COST_PER_REQUEST(10_000, 500, 0.8, 1000, 3, 0.3, 3.75, 15)
        assert functions.API_COST_MONTHLY(1, 10_000, 500, 0.8, 1000, 3, 0.3, 3.75, 15) == pytest.approx(
            per_request * 2_629_800
        )
        assert functions.API_COST_MONTHLY(1, 10_000, 500, 0.8, 1000, 3, 0.3, 3.75, 15, 30) == pytest.approx(
            per_request * 2_592_000
        )

    def test_monthly_from_request_count(self):
        assert functions.API_COST_FOR_REQUESTS(0.002, 1_000_000) == pytest.approx(2000)

    def test_monthly_needs_exactly_one_volume(self):
        with pytest.raises(ArgumentError, match="^avg_qps: got None, expected exactly one"):
            cost.monthly_cost_usd(0.01)

    def test_missing_cache_price_defaults_to_the_input_price(self):
        """In Python a cache price may be left out: reads then cost like uncached input (no discount assumed)."""
        assert cost.api_cost_per_request_usd(
            1000, avg_output_tokens=0, usd_per_mtok_input=3, usd_per_mtok_output=15, cache_hit_rate=0.5
        ) == pytest.approx(0.003)

    def test_blank_cache_write_price_is_billed_as_uncached_input(self):
        """The one rule for a blank cache-write price: the provider charges no separate write price, so writes cost
        the input price (OpenAI gpt-4.1: input 2, cached 0.5, output 8 USD/Mtok, no write surcharge).
        10,000 in, 80 % read, 1,000 written, 500 out: (2 x 1,000 + 0.5 x 8,000 + 2 x 1,000 + 8 x 500) / 1e6."""
        expected = (2 * 1000 + 0.5 * 8000 + 2 * 1000 + 8 * 500) / 1e6
        assert expected == pytest.approx(0.012)
        spec = REGISTRY["API_COST_PER_REQUEST"]
        for blank in (None, "", [[None]]):  # an empty cell reaches Excel's call as None, "" or a 1x1 empty range
            assert call_sheet_function(spec, 10_000, 500, 0.8, 1000, 2, 0.5, blank, 8) == pytest.approx(expected)
        assert functions.API_COST_MONTHLY(1, 10_000, 500, 0.8, 1000, 2, 0.5, None, 8) == pytest.approx(
            expected * 2_629_800
        )
        core = cost.api_cost_per_request_usd(
            10_000, avg_output_tokens=500, usd_per_mtok_input=2, usd_per_mtok_output=8, cache_hit_rate=0.8,
            usd_per_mtok_cached_input=0.5, cache_write_tokens=1000,
        )
        assert core == pytest.approx(expected)

    def test_zero_cache_write_price_is_free_writes_not_blank(self):
        """0 is a price (writes free), not a blank: (2 x 1,000 + 0.5 x 8,000 + 0 + 8 x 500) / 1e6 = 0.010."""
        assert functions.API_COST_PER_REQUEST(10_000, 500, 0.8, 1000, 2, 0.5, 0, 8) == pytest.approx(0.010)

    def test_blank_input_price_is_still_refused(self):
        """Only the cache prices have a blank meaning; a blank input price is an error naming the argument."""
        message = call_sheet_function(REGISTRY["API_COST_PER_REQUEST"], 10_000, 500, 0.8, 1000, None, 0.5, 2, 8)
        assert message == "usd_per_mtok_input: got None, expected a value (the cell is empty)"

    def test_core_is_keyword_only_after_the_leading_quantity(self):
        """Code review §5: eight positional floats were called in two different orders; now they cannot be."""
        with pytest.raises(TypeError):
            cost.api_cost_per_request_usd(10_000, 500, 3, 15)  # type: ignore[misc]

    @given(tokens, tokens, fraction, fraction, prices, prices)
    def test_more_hits_never_cost_more_when_reads_are_cheaper(self, i, o, h1, h2, p_in, p_out):
        lo, hi = sorted((h1, h2))
        p_read = p_in / 10
        common = {"avg_output_tokens": o, "usd_per_mtok_input": p_in, "usd_per_mtok_output": p_out,
                  "usd_per_mtok_cached_input": p_read}
        high = cost.api_cost_per_request_usd(i, cache_hit_rate=hi, **common)
        low = cost.api_cost_per_request_usd(i, cache_hit_rate=lo, **common)
        assert high <= low * (1 + 1e-12) + 1e-15


class TestCacheSavings:
    def test_worked_example(self):
        """(3 - 0.3) x 8,000 - (3.75 - 3) x 1,000 = 20,850 per Mtok: 0.02085 USD per request, x 2,629,800."""
        assert cost.cache_savings_per_request_usd(
            10_000, cache_hit_rate=0.8, usd_per_mtok_input=3, usd_per_mtok_cached_input=0.3, cache_write_tokens=1000,
            usd_per_mtok_cache_write=3.75,
        ) == pytest.approx(0.02085)
        assert functions.CACHE_SAVINGS_MONTHLY(1, 10_000, 0.8, 1000, 3, 0.3, 3.75) == pytest.approx(0.02085 * 2_629_800)

    def test_writes_without_reads_lose_money(self):
        assert functions.CACHE_SAVINGS_MONTHLY(1, 10_000, 0, 10_000, 3, 0.3, 3.75) < 0

    @given(tokens, tokens, fraction, fraction, prices, st.floats(min_value=0, max_value=1))
    def test_savings_are_the_cost_difference(self, i, o, h, write_share, p_in, read_ratio):
        """Congruence: savings = cost without cache - cost with cache (C1 twice)."""
        w = i * (1 - h) * write_share
        p_read, p_write = p_in * read_ratio, p_in * 1.25
        with_cache = cost.api_cost_per_request_usd(
            i, avg_output_tokens=o, usd_per_mtok_input=p_in, usd_per_mtok_output=15, cache_hit_rate=h,
            usd_per_mtok_cached_input=p_read, cache_write_tokens=w, usd_per_mtok_cache_write=p_write,
        )
        without = cost.api_cost_per_request_usd(i, avg_output_tokens=o, usd_per_mtok_input=p_in, usd_per_mtok_output=15)
        saving = cost.cache_savings_per_request_usd(
            i, cache_hit_rate=h, usd_per_mtok_input=p_in, usd_per_mtok_cached_input=p_read, cache_write_tokens=w,
            usd_per_mtok_cache_write=p_write,
        )
        assert saving == pytest.approx(without - with_cache, rel=1e-9, abs=1e-12)


class TestCacheBreakEven:
    def test_sonnet_five_minute_cache(self):
        """C2 at Sonnet prices: h* = (3.75 - 3) / (3.75 - 0.3) = 0.2174; r* = 3.45 / 2.7 = 1.278 uses."""
        h = functions.CACHE_BREAKEVEN_HIT_RATE(SONNET_INPUT * 1e6, SONNET_WRITE_5M * 1e6, SONNET_READ * 1e6)
        assert h == pytest.approx(0.75 / 3.45)
        assert functions.CACHE_BREAKEVEN_REUSE(3, 3.75, 0.3) == pytest.approx(3.45 / 2.7)

    def test_one_hour_cache_needs_more_hits(self):
        """2x write price (1 h TTL): h* = 3 / 5.7."""
        assert functions.CACHE_BREAKEVEN_HIT_RATE(3, 6, 0.3) == pytest.approx(3 / 5.7)

    def test_free_writes_always_pay(self):
        """OpenAI-style caching (writes at the input price): any hit pays."""
        assert functions.CACHE_BREAKEVEN_HIT_RATE(2, 2, 0.5) == 0

    def test_blank_write_price_is_the_input_price(self):
        """A blank write price (no separate write price) breaks even at once, like a write at the input price."""
        assert functions.CACHE_BREAKEVEN_HIT_RATE(2, None, 0.5) == 0
        assert functions.CACHE_BREAKEVEN_REUSE(2, None, 0.5) == 1

    def test_reads_not_cheaper_never_pay(self):
        with pytest.raises(ArgumentError, match="^usd_per_mtok_cached_input: got 3"):
            functions.CACHE_BREAKEVEN_HIT_RATE(3, 3.75, 3)

    @given(prices, st.floats(min_value=1, max_value=3), st.floats(min_value=0, max_value=0.9))
    def test_break_even_reuse_equalizes_cost(self, p_in, write_ratio, read_ratio):
        """At r* uses one write plus r*-1 reads cost as much as r* uncached sends (C2 equality)."""
        p_write, p_read = p_in * write_ratio, p_in * read_ratio
        r = cost.cache_breakeven_reuse(p_in, usd_per_mtok_cache_write=p_write, usd_per_mtok_cached_input=p_read)
        assume(r > 1)
        assert p_write + (r - 1) * p_read == pytest.approx(r * p_in)
        h = cost.cache_breakeven_hit_rate(p_in, usd_per_mtok_cache_write=p_write, usd_per_mtok_cached_input=p_read)
        assert h == pytest.approx((r - 1) / r)


class TestSelfHost:
    def test_reference_formula_per_output_token(self):
        """C4: 2 GPUs x 3 USD/h decoding 920 output tokens/s: 1e6 x 6 / (3600 x 920) = 1.8116 USD per Mtok output."""
        assert functions.SELFHOST_USD_PER_MTOK_OUTPUT(3, 920, 2) == pytest.approx(1e6 * 6 / (3600 * 920))

    def test_per_total_token(self):
        """The same fleet on 3,000-token prompts and 1,000-token answers serves 920 x 4 tokens/s in all:
        1e6 x 6 / (3600 x 3,680) = 0.4529 USD per Mtok, a quarter of the per-output figure."""
        assert functions.SELFHOST_USD_PER_MTOK(3, 920, 3000, 1000, 2) == pytest.approx(1e6 * 6 / (3600 * 920 * 4))

    def test_catalog_gpu_price(self):
        """With a catalog GPU price, 1,000 output tokens/s on one GPU costs price/3.6 per Mtok of output."""
        gpu = catalog.get_gpu("a100-80gb-pcie")
        assert functions.SELFHOST_USD_PER_MTOK_OUTPUT(gpu.usd_per_gpu_hour, 1000) == pytest.approx(1.35 / 3.6)

    def test_zero_throughput_is_refused(self):
        with pytest.raises(ArgumentError, match="^output_tokens_per_s: got 0, expected a number > 0$"):
            functions.SELFHOST_USD_PER_MTOK_OUTPUT(3, 0)
        with pytest.raises(ArgumentError, match="^avg_output_tokens: got 0, expected a number > 0$"):
            functions.SELFHOST_USD_PER_MTOK(3, 920, 3000, 0)

    @given(prices, st.floats(min_value=1, max_value=1e6), st.integers(min_value=1, max_value=64))
    def test_round_trip_to_monthly_cost(self, price, tps, gpus):
        """$/Mtok x Mtok served in a month = the fleet's monthly cost (C4 and monthly GPU-hours agree)."""
        per_mtok = cost.selfhost_usd_per_mtok_output(price, output_tokens_per_s=tps, gpus=gpus)
        mtok_month = tps * 3600 * cost.HOURS_PER_MONTH / 1e6
        assert per_mtok * mtok_month == pytest.approx(cost.selfhost_monthly_usd(price, gpus=gpus))

    @given(prices, st.floats(min_value=1, max_value=1e5), st.floats(min_value=0, max_value=1e5),
           st.floats(min_value=1, max_value=1e5))
    def test_total_and_output_figures_describe_the_same_spend(self, price, tps, i, o):
        """Per total token x all tokens = per output token x output tokens (one month's spend either way)."""
        total = cost.selfhost_usd_per_mtok(price, output_tokens_per_s=tps, avg_input_tokens=i, avg_output_tokens=o)
        output = cost.selfhost_usd_per_mtok_output(price, output_tokens_per_s=tps)
        assert total * (i + o) == pytest.approx(output * o)


class TestPerMtokComparable:
    """Issue 10: the API's $/Mtok was per total token, self-hosting's per output token. Both now have both."""

    def test_api_per_total_token(self):
        """The Sonnet request (0.01665 USD for 10,000 + 500 tokens): 0.01665e6 / 10,500 = 1.5857 USD/Mtok."""
        assert functions.API_USD_PER_MTOK(10_000, 500, 0.8, 1000, 3, 0.3, 3.75, 15) == pytest.approx(0.01665e6 / 10_500)

    def test_api_per_output_token(self):
        """0.01665e6 / 500 = 33.3 USD per million output tokens."""
        assert functions.API_USD_PER_MTOK_OUTPUT(10_000, 500, 0.8, 1000, 3, 0.3, 3.75, 15) == pytest.approx(33.3)

    def test_api_without_cache_is_the_blended_price(self):
        """C6: (3,000 x 3 + 1,000 x 15) / 4,000 = 6 USD/Mtok."""
        assert functions.API_USD_PER_MTOK(3000, 1000, 0, 0, 3, None, None, 15) == pytest.approx(6)

    def test_same_unit_for_api_and_self_host(self):
        """On one workload (3,000 in, 1,000 out) both per-total figures are a quarter of the per-output ones."""
        api_total = functions.API_USD_PER_MTOK(3000, 1000, 0, 0, 3, None, None, 15)
        api_output = functions.API_USD_PER_MTOK_OUTPUT(3000, 1000, 0, 0, 3, None, None, 15)
        host_total = functions.SELFHOST_USD_PER_MTOK(3, 920, 3000, 1000, 2)
        host_output = functions.SELFHOST_USD_PER_MTOK_OUTPUT(3, 920, 2)
        assert api_total / api_output == pytest.approx(0.25)
        assert host_total / host_output == pytest.approx(0.25)

    def test_no_tokens_is_refused(self):
        with pytest.raises(ArgumentError, match="^avg_input_tokens: got 0, expected input \\+ output tokens > 0$"):
            functions.API_USD_PER_MTOK(0, 0, 0, 0, 3, None, None, 15)
        with pytest.raises(ArgumentError, match="^avg_output_tokens: got 0, expected a number > 0$"):
            functions.API_USD_PER_MTOK_OUTPUT(1000, 0, 0, 0, 3, None, None, 15)

class TestBreakEvenVolume:
    def test_break_even_volume(self):
        """C6: 8 GPUs at 2 USD/h (11,688 USD/month) vs a 6 USD/Mtok blend (3:1 input:output at 3/15)."""
        monthly = functions.SELFHOST_USD_MONTHLY(2, 8)
        assert monthly == pytest.approx(11_688)
        assert functions.BREAKEVEN_MTOK_MONTHLY(monthly, 3000, 1000, 3, 15) == pytest.approx(1948)

    def test_break_even_needs_tokens(self):
        with pytest.raises(ArgumentError, match="^avg_input_tokens: got 0"):
            functions.BREAKEVEN_MTOK_MONTHLY(1000, 0, 0, 3, 15)


class TestRoutingAndOwnership:
    def test_random_routing_dilutes_the_hit_rate(self):
        """C3 heuristic: without cache-aware routing each of N replicas sees h / N."""
        assert functions.EFFECTIVE_HIT_RATE(0.8, 4, False) == pytest.approx(0.2)
        assert functions.EFFECTIVE_HIT_RATE(0.8, 4) == 0.8

    def test_replicas_must_be_whole(self):
        with pytest.raises(ArgumentError, match="^replicas: got 2.5, expected a whole number$"):
            functions.EFFECTIVE_HIT_RATE(0.8, 2.5)

    def test_tco(self):
        """C5: 300,000 USD over 4 years + 20,000 hosting + 15,000 power = 110,000 USD a year."""
        assert functions.TCO_YEARLY(300_000, 4, 0, 20_000, 15_000) == 110_000

    def test_tco_needs_a_depreciation_period(self):
        with pytest.raises(ArgumentError, match="^depreciation_years: got 0, expected a number > 0$"):
            functions.TCO_YEARLY(300_000, 0)
