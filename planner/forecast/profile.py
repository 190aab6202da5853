"""Demand over the day and week: an hour-of-day profile gives the peak, the average and the daily totals.

A profile is 24 multipliers, one per local hour (0-23), for a weekday, and optionally 24 for a weekend day. Only their
shape matters: the route's peak QPS is the busiest hour's rate, so hour ``h`` runs at ``peak_qps * m_h / max(m)``,
where ``max(m)`` is the largest multiplier of the week (weekday or weekend).

Formulas (the week has 5 weekdays and 2 weekend days; a profile without a weekend uses the weekday for all 7):

- busiest-day ratio ``r_day = max(mean(m_weekday), mean(m_weekend)) / max(m)`` -- daily limits (RPD, TPD) count
  the busiest day, so ``RPD = 86,400 * peak_qps * r_day``;
- month ratio ``r_month = (5 * mean(m_weekday) + 2 * mean(m_weekend)) / 7 / max(m)`` -- the bill counts every day,
  so ``requests/month = 86,400 * 30.4375 * peak_qps * r_month``.

These replace the single plan-wide average-to-peak ratio for a route that names a profile.
"""

from __future__ import annotations

from collections.abc import Sequence

from planner.errors import ArgumentError, check_number

HOURS_PER_DAY = 24
WEEKDAYS_PER_WEEK = 5
WEEKEND_DAYS_PER_WEEK = 2
SECONDS_PER_HOUR = 3600.0


def check_profile(name: str, multipliers: Sequence[float]) -> tuple[float, ...]:
    """Validate 24 hourly multipliers (each >= 0, not all 0) and return them as floats."""
    values = list(multipliers)
    if len(values) != HOURS_PER_DAY:
        raise ArgumentError(name, f"{len(values)} values", "24 hourly multipliers (hour 0 to hour 23)")
    out = tuple(check_number(f"{name}[{h}]", v, minimum=0) for h, v in enumerate(values))
    if max(out) <= 0:
        raise ArgumentError(name, list(values), "at least one multiplier > 0")
    return out


def _week(weekday: Sequence[float], weekend: Sequence[float] | None) -> tuple[tuple[float, ...], tuple[float, ...]]:
    wd = check_profile("weekday", weekday)
    we = wd if weekend is None else check_profile("weekend", weekend)
    return wd, we


def peak_multiplier(weekday: Sequence[float], *, weekend: Sequence[float] | None = None) -> float:
    """The largest multiplier of the week: the hour the route's peak QPS describes.

    >>> peak_multiplier([1.0] * 12 + [3.0] + [1.0] * 11, weekend=[0.5] * 24)
    3.0
    """
    wd, we = _week(weekday, weekend)
    return max(max(wd), max(we))


def busiest_day_avg_to_peak(weekday: Sequence[float], *, weekend: Sequence[float] | None = None) -> float:
    """Average rate of the busiest day over the peak rate: ``max(mean(weekday), mean(weekend)) / max(m)``.

    Reference: D1 applied to a day; the profile replaces the plan's single average-to-peak ratio (docs/method.md,
    "Demand over the day").

    A day at 1 for 12 hours and 0.5 for the other 12, weekend flat at 0.25: the busiest day averages 0.75 of the peak.

    >>> busiest_day_avg_to_peak([1.0] * 12 + [0.5] * 12, weekend=[0.25] * 24)
    0.75
    """
    wd, we = _week(weekday, weekend)
    return max(sum(wd), sum(we)) / HOURS_PER_DAY / peak_multiplier(wd, weekend=we)


def month_avg_to_peak(weekday: Sequence[float], *, weekend: Sequence[float] | None = None) -> float:
    """Average rate over a week (so over a month) over the peak rate: ``(5 mean(wd) + 2 mean(we)) / 7 / max(m)``.

    Reference: as :func:`busiest_day_avg_to_peak`; a month holds 30.4375 / 7 weeks.

    The same profile: ``(5 * 0.75 + 2 * 0.25) / 7 = 0.607``.

    >>> round(month_avg_to_peak([1.0] * 12 + [0.5] * 12, weekend=[0.25] * 24), 4)
    0.6071
    """
    wd, we = _week(weekday, weekend)
    mean_wd, mean_we = sum(wd) / HOURS_PER_DAY, sum(we) / HOURS_PER_DAY
    week = (WEEKDAYS_PER_WEEK * mean_wd + WEEKEND_DAYS_PER_WEEK * mean_we) / (WEEKDAYS_PER_WEEK + WEEKEND_DAYS_PER_WEEK)
    return week / peak_multiplier(wd, weekend=we)


def hourly_qps(peak_qps: float, *, weekday: Sequence[float], weekend: Sequence[float] | None = None,
               day: str = "weekday") -> tuple[float, ...]:
    """The route's request rate in each hour of a weekday (or weekend day): ``peak_qps * m_h / max(m)``.

    >>> hourly_qps(10, weekday=[1.0] * 12 + [0.5] * 12)[11:13]
    (10.0, 5.0)
    """
    q = check_number("peak_qps", peak_qps, minimum=0)
    wd, we = _week(weekday, weekend)
    if day not in ("weekday", "weekend"):
        raise ArgumentError("day", day, "weekday or weekend")
    top = peak_multiplier(wd, weekend=we)
    return tuple(q * m / top for m in (wd if day == "weekday" else we))


def requests_per_day(peak_qps: float, *, weekday: Sequence[float], weekend: Sequence[float] | None = None,
                     day: str = "weekday") -> float:
    """Requests in one day of the profile: ``3,600 * sum_h qps_h``.

    >>> requests_per_day(10, weekday=[1.0] * 12 + [0.5] * 12)  # 3,600 x (12 x 10 + 12 x 5)
    648000.0
    """
    return SECONDS_PER_HOUR * sum(hourly_qps(peak_qps, weekday=weekday, weekend=weekend, day=day))


__all__ = ["busiest_day_avg_to_peak", "check_profile", "hourly_qps", "month_avg_to_peak", "peak_multiplier",
           "requests_per_day"]
