"""Decisions (C7, C8): binding constraint, headroom, months to breach, failover."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner import decision, functions
from planner.errors import ArgumentError

utilization = st.floats(min_value=0, max_value=5, allow_nan=False)
positive_utilization = st.floats(min_value=1e-6, max_value=5, allow_nan=False)


class TestBindingConstraint:
    def test_highest_utilization_wins(self):
        assert functions.BINDING_CONSTRAINT(["RPM", "ITPM", "OTPM", "KV"], [0.42, 0.91, 0.35, 0.88]) == "ITPM"

    def test_ties_go_to_the_first(self):
        assert functions.BINDING_CONSTRAINT(["RPM", "TPM", "KV"], [0.5, 0.9, 0.9]) == "TPM"

    def test_blank_utilizations_are_skipped(self):
        """A limit the provider does not set is a blank cell: it never binds."""
        assert functions.BINDING_CONSTRAINT(["RPM", "TPM", "ITPM"], [0.2, None, 0.1]) == "RPM"

    def test_empty_labels(self):
        with pytest.raises(ArgumentError, match=r"^labels: got \[\], expected at least one label$"):
            functions.BINDING_CONSTRAINT([], [])

    def test_mismatched_lengths_name_the_argument(self):
        with pytest.raises(ArgumentError, match="^utilizations: got '2 values', expected 3 values, one per label$"):
            functions.BINDING_CONSTRAINT(["RPM", "TPM", "KV"], [0.1, 0.2])

    def test_negative_utilization_is_refused(self):
        with pytest.raises(ArgumentError, match="^utilizations: got -0.1"):
            functions.BINDING_CONSTRAINT(["RPM", "TPM"], [-0.1, 0.2])

    def test_all_blank(self):
        with pytest.raises(ArgumentError, match="^utilizations: .* expected at least one utilization$"):
            functions.BINDING_CONSTRAINT(["RPM", "TPM"], [None, None])

    @given(st.lists(utilization, min_size=1, max_size=12))
    def test_binding_label_has_the_max_utilization(self, values):
        labels = [f"L{i}" for i in range(len(values))]
        label = decision.binding_constraint(labels, utilizations=values)
        index = labels.index(label)
        assert values[index] == max(values)
        assert index == values.index(max(values))  # the first of any ties


class TestHeadroom:
    def test_headroom_and_multiple(self):
        assert functions.MAX_UTILIZATION([0.42, 0.91, 0.35]) == 0.91
        assert functions.HEADROOM([0.42, 0.8, 0.35]) == pytest.approx(0.2)
        assert functions.HEADROOM_MULTIPLE([0.25, 0.5]) == 2

    def test_over_the_ceiling(self):
        """Over a limit: negative headroom, multiple below 1 (demand must shrink)."""
        assert functions.HEADROOM([1.25]) == pytest.approx(-0.25)
        assert functions.HEADROOM_MULTIPLE([1.25]) == pytest.approx(0.8)

    def test_zero_demand_has_unbounded_multiple(self):
        with pytest.raises(ArgumentError, match="^utilizations: .* expected at least one utilization > 0"):
            functions.HEADROOM_MULTIPLE([0, 0])

    def test_empty_range(self):
        with pytest.raises(ArgumentError, match="^utilizations: got \\[\\], expected at least one utilization$"):
            functions.HEADROOM([])

    @given(st.lists(positive_utilization, min_size=1, max_size=12))
    def test_multiple_times_max_is_one(self, values):
        assert decision.headroom_multiple(values) * decision.max_utilization(values) == pytest.approx(1.0)
        assert decision.headroom(values) == pytest.approx(1 - max(values))


class TestMonthsToBreach:
    def test_worked_example(self):
        """60 % at 10 % a month: log(1/0.6) / log(1.1) = 5.36 months."""
        assert functions.MONTHS_TO_BREACH(0.6, 0.1) == pytest.approx(math.log(1 / 0.6) / math.log(1.1))

    def test_already_over_is_zero(self):
        assert functions.MONTHS_TO_BREACH(1.0, 0.1) == 0
        assert functions.MONTHS_TO_BREACH(1.3, 0.0) == 0

    def test_never_is_the_documented_sentinel(self):
        assert functions.MONTHS_TO_BREACH(0.5, 0) == decision.MONTHS_NEVER == 9999
        assert functions.MONTHS_TO_BREACH(0.5, -0.05) == decision.MONTHS_NEVER
        assert functions.MONTHS_TO_BREACH(0, 0.2) == decision.MONTHS_NEVER
        assert functions.MONTHS_TO_BREACH(1e-300, 1e-6) == decision.MONTHS_NEVER  # capped

    def test_growth_of_minus_100_percent_is_refused(self):
        with pytest.raises(ArgumentError, match="^monthly_growth_rate: got -1"):
            functions.MONTHS_TO_BREACH(0.5, -1)

    @given(st.floats(min_value=0.01, max_value=0.999), st.floats(min_value=0.005, max_value=2))
    def test_inverse_of_compound_growth(self, u, g):
        """u x (1 + g) ** months = 1: the result undoes the growth."""
        months = decision.months_to_breach(u, monthly_growth_rate=g)
        assert u * (1 + g) ** months == pytest.approx(1.0, rel=1e-9)

    @given(st.floats(min_value=0.01, max_value=0.99), st.floats(min_value=0.01, max_value=0.99),
           st.floats(min_value=0.01, max_value=1))
    def test_higher_utilization_breaches_sooner(self, u1, u2, g):
        lo, hi = sorted((u1, u2))
        assert (decision.months_to_breach(hi, monthly_growth_rate=g)
                <= decision.months_to_breach(lo, monthly_growth_rate=g))


class TestFailover:
    def test_worst_case_loses_the_largest_backend(self):
        """3 x 1,000 RPM carrying 1,500: one down, the others run at 75 %."""
        assert functions.FAILOVER_UTILIZATION(1500, [1000, 1000, 1000]) == 0.75
        assert functions.FAILOVER_UTILIZATION(1500, [2000, 1000]) == 1.5  # worst case: the 2,000 one fails

    def test_named_failure(self):
        assert functions.FAILOVER_UTILIZATION(1500, [2000, 1000], 2) == 0.75

    def test_single_backend_cannot_fail_over(self):
        with pytest.raises(ArgumentError, match="^capacities: got \\[1000\\], expected at least two backends"):
            functions.FAILOVER_UTILIZATION(100, [1000])

    def test_failed_position_out_of_range(self):
        with pytest.raises(ArgumentError, match="^failed: got 3"):
            functions.FAILOVER_UTILIZATION(100, [1000, 1000], 3)

    def test_survivors_without_capacity(self):
        with pytest.raises(ArgumentError, match="^capacities: .* surviving backends with capacity > 0"):
            functions.FAILOVER_UTILIZATION(100, [1000, 0])

    @given(st.floats(min_value=0, max_value=1e6), st.lists(st.floats(min_value=1, max_value=1e6), min_size=2))
    def test_worst_case_dominates_every_single_failure(self, d, caps):
        worst = decision.failover_utilization(d, capacities=caps)
        for k in range(1, len(caps) + 1):
            assert decision.failover_utilization(d, capacities=caps, failed=k) <= worst * (1 + 1e-12)
        assert worst >= d / sum(caps)  # losing a backend never helps

    def test_spillover(self):
        """C8: 1,500 RPM against 1,000 kept at 80 %: 700 spill; under the limit nothing spills."""
        assert functions.SPILLOVER(1500, 1000, 0.2) == pytest.approx(700)
        assert functions.SPILLOVER(500, 1000) == 0
