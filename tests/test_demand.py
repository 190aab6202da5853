"""Demand at peak (D1-D5): reference values, edge cases and properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner import demand, functions
from planner.errors import ArgumentError

qps = st.floats(min_value=0, max_value=1e4, allow_nan=False)
tokens = st.floats(min_value=0, max_value=1e6, allow_nan=False)
fraction = st.floats(min_value=0, max_value=1, allow_nan=False)


class TestRates:
    def test_rpm_is_sixty_times_qps(self):
        """D1: 25 req/s is 1,500 RPM."""
        assert functions.CAPACITY_RPM(25) == 1500.0

    def test_tpm_splits_into_itpm_and_otpm(self):
        """D2: TPM = ITPM + OTPM, for the docstring example 10 req/s x (2,000 + 500)."""
        assert functions.CAPACITY_TPM(10, 2000, 500) == 1_500_000.0
        assert functions.CAPACITY_OTPM(10, 500) == 300_000.0
        assert demand.itpm(10, avg_input_tokens=2000) == 1_200_000.0

    def test_zero_demand_is_zero(self):
        """A route with no traffic demands nothing of any limit."""
        assert functions.CAPACITY_RPM(0) == 0
        assert functions.CAPACITY_TPM(0, 2000, 500) == 0
        assert functions.CAPACITY_ITPM(0, 2000, 0.5) == 0
        assert functions.ADMISSION_TPM(0, 2000, 4096) == 0

    def test_negative_rate_names_the_argument(self):
        with pytest.raises(ArgumentError, match=r"^peak_qps: got -1, expected a number >= 0$"):
            functions.CAPACITY_RPM(-1)

    def test_daily_volumes(self):
        """RPD/TPD from the average rate over 86,400 s."""
        assert functions.CAPACITY_RPD(2) == 172_800
        assert functions.CAPACITY_TPD(1, 1000, 250) == 86_400 * 1250


class TestCacheAwareItpm:
    def test_cache_reads_excluded_where_the_provider_excludes_them(self):
        """D4 (Anthropic, Groq): at an 80 % hit rate only a fifth of the input counts."""
        assert functions.CAPACITY_ITPM(10, 20_000, 0.8) == pytest.approx(2_400_000)

    def test_cache_reads_counted_at_full_weight(self):
        """D4 (Baseten): cached tokens count, so the hit rate changes nothing."""
        assert functions.CAPACITY_ITPM(10, 20_000, 0.8, 0, True) == 12_000_000

    def test_cache_writes_count_and_must_fit_in_the_non_read_input(self):
        """Writes are part of I*(1-h): they do not change the count, but more writes than that is an error."""
        assert functions.CAPACITY_ITPM(1, 10_000, 0.8, 2000) == pytest.approx(120_000)
        with pytest.raises(ArgumentError, match="^cache_write_tokens: got 2001"):
            functions.CAPACITY_ITPM(1, 10_000, 0.8, 2001)

    def test_hit_rate_outside_zero_one_is_refused(self):
        with pytest.raises(ArgumentError, match="^cache_hit_rate: got 1.2"):
            functions.CAPACITY_ITPM(1, 100, 1.2)

    @given(qps, tokens, fraction, fraction)
    def test_more_hits_never_count_more(self, q, i, h1, h2):
        """Monotonicity: a higher hit rate never raises counted ITPM, and never exceeds the full count."""
        lo, hi = sorted((h1, h2))
        assert (demand.itpm_counted(q, avg_input_tokens=i, cache_hit_rate=hi)
                <= demand.itpm_counted(q, avg_input_tokens=i, cache_hit_rate=lo) + 1e-6)
        counted = demand.itpm_counted(q, avg_input_tokens=i, cache_hit_rate=lo)
        assert counted <= demand.itpm(q, avg_input_tokens=i) + 1e-6


class TestAdmission:
    def test_max_tokens_reserved_up_front(self):
        """D3: 10 req/s, 2,000 in, max_tokens 4,096 reserves 60 x 10 x 6,096 TPM."""
        assert functions.ADMISSION_TPM(10, 2000, 4096) == 3_657_600

    def test_bedrock_output_burndown(self):
        """AWS Bedrock Claude 3.7+: a reserved output token burns 5 quota units."""
        assert functions.ADMISSION_TPM(1, 1000, 1000, 5) == 60 * 6000

    @given(qps, tokens, st.floats(min_value=0, max_value=1e5), st.floats(min_value=0, max_value=1e5))
    def test_admission_never_below_actual_when_output_within_max_tokens(self, q, i, o, extra):
        """Reserving max_tokens >= actual output counts at least the actual TPM."""
        assert (demand.admission_tpm(q, avg_input_tokens=i, max_tokens=o + extra)
                >= demand.tpm(q, avg_input_tokens=i, avg_output_tokens=o) * (1 - 1e-12))


class TestShortWindows:
    def test_azure_600_rpm_is_ten_per_second(self):
        """D1 / Azure quota page: a 600-RPM deployment is throttled above 10 requests in one second."""
        assert functions.WINDOW_PEAK(600) == 10
        assert functions.WINDOW_PEAK(600, 10) == 100

    def test_burst_factor_scales_the_peak_window(self):
        assert functions.WINDOW_PEAK(1500, 10, 1.5) == pytest.approx(375)

    def test_burst_below_one_is_refused(self):
        with pytest.raises(ArgumentError, match="^burst_factor: got 0.5, expected a number >= 1$"):
            functions.WINDOW_PEAK(600, 1, 0.5)

    @given(st.floats(min_value=0, max_value=1e9), st.floats(min_value=0.1, max_value=60))
    def test_window_is_proportional(self, rate, window):
        """A window of w seconds holds w/60 of the per-minute rate (burst 1)."""
        assert demand.window_peak(rate, window_s=window) == pytest.approx(rate * window / 60)


class TestAzureCoupling:
    def test_reference_value(self):
        """D5, Microsoft Q&A 2025-05-14: 20,000 TPM -> 120 RPM; quota page: 240,000 TPM -> 1,440 RPM."""
        assert functions.AZURE_RPM_LIMIT(20_000) == 120
        assert functions.AZURE_RPM_LIMIT(240_000) == 1440

    def test_per_model_ratio(self):
        """Newer models set their own ratio (gpt-4o-mini: 10 per 1,000)."""
        assert functions.AZURE_RPM_LIMIT(20_000, 10) == 200


@given(qps, tokens, tokens)
def test_tpm_is_monotone_in_every_argument(q, i, o):
    """More traffic or more tokens never lowers TPM."""
    base = demand.tpm(q, avg_input_tokens=i, avg_output_tokens=o)
    assert demand.tpm(q + 1, avg_input_tokens=i, avg_output_tokens=o) >= base
    assert demand.tpm(q, avg_input_tokens=i + 1, avg_output_tokens=o) >= base
    assert demand.tpm(q, avg_input_tokens=i, avg_output_tokens=o + 1) >= base


@given(st.floats(min_value=0, max_value=1e4))
def test_monthly_requests_round_trip(avg):
    """Requests per month / (86,400 x 30.4375) gives the average rate back."""
    assert math.isclose(demand.requests_per_month(avg) / (86_400 * 30.4375), avg, rel_tol=1e-12, abs_tol=1e-12)
