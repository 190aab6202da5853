"""Provider-limit utilization and keys needed (C7, C8 on rate limits), and catalog lookups."""

from __future__ import annotations

import math

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
        assert limits.keys_needed_all([1500, 3_600_000], limits_per_key=[1000, 1_000_000], target_utilization=0.9) == 4
        assert limits.keys_needed_all([1500, 3_600_000], limits_per_key=[1000, None], target_utilization=0.9) == 2

    def test_mismatched_lengths_name_the_argument(self):
        with pytest.raises(ArgumentError, match="^limits_per_key: got 1, expected 2 limits"):
            limits.keys_needed_all([1, 2], limits_per_key=[3])

    @given(demand_values, limit_values, targets)
    def test_keys_are_the_smallest_count_under_target(self, d, lim, t):
        """keys_needed makes utilization <= target, and one key fewer would exceed it."""
        keys = limits.keys_needed(d, limit_per_key=lim, target_utilization=t)
        assert limits.utilization(d, limit=lim, keys=keys) <= t * (1 + 1e-9)
        if keys > 1:
            assert limits.utilization(d, limit=lim, keys=keys - 1) > t * (1 - 1e-9)

    @given(demand_values, demand_values, limit_values)
    def test_monotone_in_demand(self, d1, d2, lim):
        lo, hi = sorted((d1, d2))
        assume(hi > 0)
        assert limits.keys_needed(lo, limit_per_key=lim) <= limits.keys_needed(hi, limit_per_key=lim)
        assert limits.utilization(lo, limit=lim) <= limits.utilization(hi, limit=lim)


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


class TestLimitScope:
    """Issue 10 item 5: keys multiply a limit only where the provider meters it per key, deployment or account-Region.

    Scopes as the providers state them: Anthropic "Rate limits are set at the organization level" (support article
    8243635); Gemini "Rate limits are applied per project, not per API key" (ai.google.dev rate-limits page); Azure
    OpenAI quota per subscription, Region and model, assigned to deployments; Bedrock quotas per account and Region.
    """

    def test_org_limit_is_not_multiplied_by_keys(self):
        """Three Anthropic keys in one organization share 2,000,000 ITPM."""
        assert functions.LIMIT_CAPACITY(2_000_000, 3, "organization") == 2_000_000
        assert functions.LIMIT_CAPACITY(2_000_000, 3, "project") == 2_000_000

    def test_per_deployment_and_account_region_limits_multiply(self):
        """Three Azure deployments with their own quota (three Regions) at 450,000 TPM: 1,350,000."""
        assert functions.LIMIT_CAPACITY(450_000, 3, "deployment") == 1_350_000
        assert functions.LIMIT_CAPACITY(6_000_000, 2, "account-region") == 12_000_000
        assert functions.LIMIT_CAPACITY(1000, 4, "key") == 4000

    def test_utilization_with_scope(self):
        """1,500 RPM against 1,000 RPM: 150 % for one organization whatever the keys, 75 % over two Regions."""
        assert functions.LIMIT_UTILIZATION(1500, 1000, 2, "organization") == 1.5
        assert functions.LIMIT_UTILIZATION(1500, 1000, 2, "account-region") == 0.75
        assert functions.LIMIT_UTILIZATION(1500, 1000, 2) == 0.75  # no scope given: per key, as before scopes

    def test_catalog_scope_drives_the_multiplication(self):
        """The issue's example: an Anthropic tier at 2 keys gives no more ITPM than at 1; Bedrock at 2 Regions does."""
        anthropic = catalog.get_provider_limits("anthropic", "tier-4", "claude-sonnet-4.5")
        bedrock = catalog.get_provider_limits("bedrock", "default-cross-region", "claude-sonnet-4.6")
        assert limits.effective_limit(anthropic.itpm, keys=2, scope=anthropic.scope) == 2_000_000
        assert limits.effective_limit(bedrock.tpm, keys=2, scope=bedrock.scope) == 12_000_000

    def test_scope_names_are_a_closed_vocabulary(self):
        with pytest.raises(UnknownNameError, match="^scope: got 'team', expected one of account-region, deployment"):
            functions.LIMIT_CAPACITY(1000, 2, "team")
        assert limits.check_scope(" Account_Region ") == "account-region"

    def test_keys_must_be_whole_and_positive(self):
        with pytest.raises(ArgumentError, match="^keys: got 0, expected a number >= 1$"):
            functions.LIMIT_CAPACITY(1000, 0, "key")

    def test_scope_text(self):
        assert functions.LIMIT_SCOPE_TEXT("organization", 3, "", "a higher usage tier; a limit increase request") == (
            "per organization: keys in one organization share it, so 3 keys count as 1; raise it with a higher usage "
            "tier or a limit increase request"
        )
        assert functions.LIMIT_SCOPE_TEXT("deployment", 2, "region") == (
            "per deployment: each deployment with its own quota (another Region or subscription) has its own, so 2 "
            "keys count as 2; more capacity: another region"
        )

    def test_provider_scope_lookup(self):
        assert functions.PROVIDER_LIMIT_SCOPE("gemini", "tier-1", "gemini-2.5-flash") == "project"
        assert functions.PROVIDER_LIMIT_SCOPE("openai", "tier-5", "gpt-4.1") == "organization"
        text = functions.PROVIDER_LIMIT_SCOPE("anthropic", "scale", "claude-sonnet-4.5", 4)
        assert text.startswith("per organization: keys in one organization share it, so 4 keys count as 1; raise it")
        assert "a higher usage tier (Start, Build, Scale)" in text

    @given(limit_values, st.integers(min_value=1, max_value=64))
    def test_only_multiplying_scopes_grow_with_keys(self, lim, keys):
        for scope in ("organization", "project"):
            assert limits.effective_limit(lim, keys=keys, scope=scope) == lim
        for scope in ("key", "deployment", "account-region"):
            assert limits.effective_limit(lim, keys=keys, scope=scope) == pytest.approx(lim * keys)


class TestBurstWindows:
    """Issue 10 item 6: per-minute limits enforced over shorter windows (OpenAI help article 6891753: "60,000
    requests/minute may be enforced as 1,000 requests/second"; Anthropic token bucket: 60 RPM as 1 request per second;
    Azure: 600 RPM allows at most 10 requests in a 1-second period)."""

    def test_window_share_of_the_minute(self):
        assert functions.WINDOW_LIMIT(60_000, 1) == 1000
        assert functions.WINDOW_LIMIT(600, 1) == 10
        assert functions.WINDOW_LIMIT(600, 60) == 600

    def test_within_the_minute_but_over_the_second(self):
        """600 RPM of demand against a 1,000-RPM organization limit runs at 60 % per minute; if the busiest second
        holds twice the average second (20 requests against 1000/60 = 16.7) it runs at 120 %."""
        assert functions.LIMIT_UTILIZATION(600, 1000, 1, "organization") == pytest.approx(0.6)
        assert functions.BURST_UTILIZATION(600, 1000, 1, 2, 1, "organization") == pytest.approx(20 / (1000 / 60))

    def test_burst_factor_one_is_the_per_minute_utilization(self):
        assert functions.BURST_UTILIZATION(600, 1000, 1, 1, 1, "organization") == pytest.approx(0.6)

    def test_keys_follow_the_scope_in_bursts_too(self):
        """Two Azure deployments in two Regions double the per-second share; two OpenAI keys do not."""
        assert functions.BURST_UTILIZATION(600, 1000, 1, 2, 2, "deployment") == pytest.approx(0.6)
        assert functions.BURST_UTILIZATION(600, 1000, 1, 2, 2, "organization") == pytest.approx(1.2)

    def test_bad_window_and_factor(self):
        with pytest.raises(ArgumentError, match="^window_s: got 90, expected a number 0 < x <= 60$"):
            functions.BURST_UTILIZATION(600, 1000, 90, 2, 1, "organization")
        with pytest.raises(ArgumentError, match="^burst_factor: got 0.5, expected a number >= 1$"):
            functions.BURST_UTILIZATION(600, 1000, 1, 0.5, 1, "organization")

    def test_poisson_burst_factor_small_windows(self):
        """Poisson(1): P(X<=3) = e^-1 (1 + 1 + 1/2 + 1/6) = 0.981 < 0.99 <= P(X<=4) = 0.9963, so the 99th-percentile
        second holds 4 requests at 60 RPM: b = 4. Poisson(10): the 99th percentile is 18, b = 1.8."""
        e = math.exp(-1)
        assert e * (1 + 1 + 1 / 2 + 1 / 6) < 0.99 <= e * (1 + 1 + 1 / 2 + 1 / 6 + 1 / 24)
        assert functions.POISSON_BURST_FACTOR(60, 1) == 4
        assert functions.POISSON_BURST_FACTOR(60, 10) == pytest.approx(1.8)
        assert functions.POISSON_BURST_FACTOR(0, 1) == 1

    def test_poisson_burst_factor_large_windows_use_the_normal_tail(self):
        """At a mean of 10,000 per window the 99th percentile is about 10,000 + 2.326 x 100 (+0.74): b = 1.0233."""
        assert functions.POISSON_BURST_FACTOR(10_000, 60) == pytest.approx(10_234 / 10_000)

    @given(st.floats(min_value=1, max_value=1e5), st.sampled_from([1.0, 10.0, 60.0]))
    def test_shorter_windows_are_burstier(self, rate, window):
        """The same traffic needs a larger factor over a shorter window (the reason per-second limits bite)."""
        per_second = limits.poisson_burst_factor(rate, window_s=1)
        assert per_second >= limits.poisson_burst_factor(rate, window_s=window) - 1e-9

    @pytest.mark.parametrize("mean", [501, 1000, 5000, 20_000])
    def test_normal_tail_is_within_one_request_of_the_exact_quantile(self, mean):
        """The exact 99th percentile of Poisson(mean), summed here in log space, against the function's value."""
        log_pmf, cdf, k = -mean, math.exp(-mean), 0
        while cdf < 0.99:
            k += 1
            log_pmf += math.log(mean / k)
            cdf += math.exp(log_pmf)
        got = limits.poisson_burst_factor(mean, window_s=60) * mean
        assert k <= round(got) <= k + 1
