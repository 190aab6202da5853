"""Provider-limit utilization and keys needed (C7, C8 on rate limits), and catalog lookups."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from planner import catalog, demand, functions, limits
from planner.errors import ArgumentError, UnknownNameError

demand_values = st.floats(min_value=0, max_value=1e10, allow_nan=False)
limit_values = st.floats(min_value=1, max_value=1e9, allow_nan=False)
targets = st.floats(min_value=0.05, max_value=1, allow_nan=False)


class TestUtilization:
    def test_spread_over_keys(self):
        """1,500 RPM against a 1,000-RPM tier over two keys runs at 75 %."""
        assert functions.LIMIT_UTILIZATION(1500, 1000, 2) == 0.75

    def test_zero_demand(self):
        assert functions.LIMIT_UTILIZATION(0, 4000) == 0

    def test_zero_limit_is_refused(self):
        """A limit of 0 would divide by zero; the message names the argument."""
        with pytest.raises(ArgumentError, match=r"^limit: got 0, expected a number > 0$"):
            functions.LIMIT_UTILIZATION(10, 0)

    def test_fractional_keys_are_refused(self):
        with pytest.raises(ArgumentError, match="^keys: got 1.5, expected a whole number$"):
            functions.LIMIT_UTILIZATION(10, 100, 1.5)

    def test_daily_limit(self):
        """RPD with daily volume: 2 req/s on average is 172,800 requests against a 100,000 RPD tier."""
        assert functions.LIMIT_UTILIZATION(functions.CAPACITY_RPD(2), 100_000) == pytest.approx(1.728)

    def test_anthropic_itpm_with_caching(self):
        """A 10 req/s, 20k-token agent route at 80 % hits against Anthropic tier 4 ITPM (2 M, cache reads
        excluded): 2.4 M counted ITPM is 120 % of one key; 2 keys bring it to 60 %."""
        tier = catalog.get_provider_limits("anthropic", "tier-4", "claude-sonnet-4.5")
        assert tier.cached_reads_count_itpm is False
        counted = functions.CAPACITY_ITPM(10, 20_000, 0.8, 0, tier.cached_reads_count_itpm)
        assert functions.LIMIT_UTILIZATION(counted, tier.itpm) == pytest.approx(1.2)
        assert functions.KEYS_NEEDED(counted, tier.itpm, 0.7) == 2


class TestKeysNeeded:
    def test_reference_example(self):
        """12 M ITPM against 4 M per key at a 70 % target: 5 keys (4 would run at 75 %)."""
        assert functions.KEYS_NEEDED(12_000_000, 4_000_000, 0.7) == 5
        assert functions.LIMIT_UTILIZATION(12_000_000, 4_000_000, 4) == 0.75

    def test_exact_multiple_is_not_rounded_up(self):
        """Float noise (0.1 x 3) must not add a key."""
        assert functions.KEYS_NEEDED(0.3, 0.1) == 3

    def test_zero_demand_needs_one_key(self):
        assert functions.KEYS_NEEDED(0, 1000) == 1

    def test_every_limit_counts(self):
        """Across several limits the largest count wins (C7: fleet = max of counts)."""
        assert limits.keys_needed_all([1500, 3_600_000], [1000, 1_000_000], 0.9) == 4
        assert limits.keys_needed_all([1500, 3_600_000], [1000, None], 0.9) == 2

    def test_mismatched_lengths_name_the_argument(self):
        with pytest.raises(ArgumentError, match="^limits_per_key: got 1, expected 2 limits"):
            limits.keys_needed_all([1, 2], [3])

    @given(demand_values, limit_values, targets)
    def test_keys_are_the_smallest_count_under_target(self, d, lim, t):
        """keys_needed makes utilization <= target, and one key fewer would exceed it."""
        keys = limits.keys_needed(d, lim, t)
        assert limits.utilization(d, lim, keys) <= t * (1 + 1e-9)
        if keys > 1:
            assert limits.utilization(d, lim, keys - 1) > t * (1 - 1e-9)

    @given(demand_values, demand_values, limit_values)
    def test_monotone_in_demand(self, d1, d2, lim):
        lo, hi = sorted((d1, d2))
        assume(hi > 0)
        assert limits.keys_needed(lo, lim) <= limits.keys_needed(hi, lim)
        assert limits.utilization(lo, lim) <= limits.utilization(hi, lim)


class TestAzureDeployments:
    def test_rpm_coupling_binds_before_tpm(self):
        """D5: a 20,000-TPM deployment allows 120 RPM; 3 req/s (180 RPM) of short requests needs 2 deployments."""
        rpm_limit = functions.AZURE_RPM_LIMIT(20_000)
        assert functions.KEYS_NEEDED(functions.CAPACITY_RPM(3), rpm_limit) == 2
        assert functions.KEYS_NEEDED(functions.CAPACITY_TPM(3, 50, 50), 20_000) == 1  # TPM alone: 1
        assert functions.WINDOW_PEAK(rpm_limit, 1) == 2  # 120 RPM enforced per second: 2 requests


class TestProviderLookups:
    def test_limit_by_name_is_case_insensitive(self):
        assert functions.PROVIDER_LIMIT("Anthropic", "Tier 4", "Claude-Sonnet-4.5", "ITPM") == 2_000_000
        assert functions.PROVIDER_LIMIT("openai", 1, "gpt-4o", "tpm") == 30_000

    def test_limit_the_tier_does_not_set(self):
        """Anthropic sets ITPM/OTPM, not TPM: the message lists what it does set."""
        expected = "^limit_name: got 'tpm', expected a limit anthropic/tier-4/.* sets: rpm, itpm"
        with pytest.raises(ArgumentError, match=expected):
            functions.PROVIDER_LIMIT("anthropic", "tier-4", "claude-sonnet-4.5", "tpm")

    def test_unknown_limit_name(self):
        with pytest.raises(UnknownNameError, match="^limit_name: got 'qpm', expected one of itpm"):
            functions.PROVIDER_LIMIT("anthropic", "tier-4", "claude-sonnet-4.5", "qpm")

    def test_unknown_provider_comes_from_the_catalog(self):
        with pytest.raises(UnknownNameError, match="^provider: got 'nope'"):
            functions.PROVIDER_LIMIT("nope", "tier-4", "claude-sonnet-4.5", "rpm")

    def test_window_and_output_weight(self):
        bedrock = catalog.provider_limits()[-1]
        weight = functions.PROVIDER_LIMIT(bedrock.provider, bedrock.tier, bedrock.model, "output_token_weight")
        assert weight == bedrock.output_token_weight
        assert functions.PROVIDER_LIMIT("anthropic", "tier-4", "claude-sonnet-4.5", "window_s") > 0


def test_azure_rpm_limit_is_linear():
    assert demand.azure_rpm_limit(40_000) == 2 * demand.azure_rpm_limit(20_000)
