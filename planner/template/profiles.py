"""The Profiles sheet: hour-of-day demand profiles (input) and what each route's profile gives (formulas).

A route naming a profile on Routes gets its average-to-peak ratios from it: the busiest day's for daily limits
(RPD, TPD), the week's for the bill. A route without one keeps the Plan's single average-to-peak ratio. Pure: no I/O.
"""

from __future__ import annotations

from planner.demand import DAYS_PER_MONTH, SECONDS_PER_DAY
from planner.excel.expr import Block, Expr, Ref, fn, udf, when_filled
from planner.excel.tables import Column, Table
from planner.template.layout import ROUTE_ROWS, ROUTES, C, PlanValue

PROFILE_ROWS = 12
HOUR_KEYS = tuple(f"h{h:02d}" for h in range(24))

PROFILES = Table(
    name="tblProfiles",
    sheet="Profiles",
    rows=PROFILE_ROWS,
    title="Demand over the day: hour-of-day profiles (24 multipliers per row; only their shape matters)",
    note="A route names a profile on Routes (Profile). Days: weekday, weekend or all (blank: all). A profile without a "
    "weekend row uses its weekday row for all 7 days. The route's peak QPS is the profile's busiest hour.",
    columns=(
        C(key="name", header="Profile [name]", help="Profile name routes refer to", kind="text", width=22),
        C(key="days", header="Days", help="weekday, weekend or all (blank: all)", kind="text", width=10),
        *(C(key=k, header=f"{k[1:]}:00 [x]", help=f"Multiplier of local hour {int(k[1:])}", minimum=0,
            maximum=1e6, number_format="0.00", width=6) for k in HOUR_KEYS),
        C(key="source", header="Source", help="Where the shape comes from (request logs, or a modelling choice)",
          kind="text", width=60),
    ),
)


def _r(key: str) -> Expr:
    return Ref(ROUTES, key)


def _ratio(basis: str) -> Expr:
    """The route's ratio from its profile, or the Plan's average-to-peak ratio when it names none."""
    return fn("IF", _r("profile").eq(""), PlanValue("avg_to_peak_ratio"),
              udf("PROFILE_RATIO", _r("profile"), Block(PROFILES), basis))


def _col(key: str, header: str, help: str, body: Expr, fmt: str = "#,##0", kind: str = "number",
         width: float = 14.0) -> Column:
    formula = body if key == "route" else when_filled(Ref(_ROUTE_PROFILE_REF, "route"), body)
    return C(key=key, header=header, help=help, formula=formula, number_format=fmt, kind=kind, width=width)


_KEYS = ("route", "profile", "month_ratio", "day_ratio", "requests_per_day", "requests_per_month", "avg_qps")
_ROUTE_PROFILE_REF = Table(name="tblRouteProfile", sheet="Profiles", rows=ROUTE_ROWS,
                           header_row=PROFILES.last_row + 4, columns=tuple(C(key=k, header=k, help=k) for k in _KEYS))

ROUTE_PROFILE = Table(
    name="tblRouteProfile",
    sheet="Profiles",
    rows=ROUTE_ROWS,
    header_row=PROFILES.last_row + 4,
    title="",
    columns=(
        _col("route", "Route [name]", "Route name (from Routes)", fn("IF", _r("name").eq(""), "", _r("name")),
             kind="text", width=22),
        _col("profile", "Profile", "The route's profile (blank on Routes: the Plan's average-to-peak ratio)",
             fn("IF", _r("profile").eq(""), "(plan ratio)", _r("profile")), kind="text", width=10),
        _col("month_ratio", "Month avg / peak [fraction]", "The week's average rate / the peak hour's (the bill): "
             "(5 x mean weekday + 2 x mean weekend) / 7 / max", _ratio("month"), "0.000"),
        _col("day_ratio", "Busiest day avg / peak [fraction]", "The busiest day's average rate / the peak hour's "
             "(daily limits RPD, TPD)", _ratio("day"), "0.000"),
        _col("requests_per_day", "Requests, busiest day [req/day]", "86,400 x peak QPS x busiest-day ratio",
             _r("peak_qps") * Ref(_ROUTE_PROFILE_REF, "day_ratio") * SECONDS_PER_DAY),
        _col("requests_per_month", "Requests per month [req/month]", "86,400 x 30.4375 x peak QPS x month ratio",
             _r("peak_qps") * Ref(_ROUTE_PROFILE_REF, "month_ratio") * (SECONDS_PER_DAY * DAYS_PER_MONTH)),
        _col("avg_qps", "Average [req/s]", "Peak QPS x month ratio: the rate the bill counts",
             _r("peak_qps") * Ref(_ROUTE_PROFILE_REF, "month_ratio"), "#,##0.00"),
    ),
)
assert tuple(c.key for c in ROUTE_PROFILE.columns) == _KEYS
ROUTE_PROFILE_TITLE = "Each route's demand over the day: ratios and volumes from its profile (formulas; locked)"


def avg_qps() -> Expr:
    """The route's average rate over the month (peak QPS x month ratio)."""
    return Ref(ROUTE_PROFILE, "avg_qps")


def month_ratio() -> Expr:
    """The route's month average / peak (the bill): Results' average QPS is peak QPS times this."""
    return Ref(ROUTE_PROFILE, "month_ratio")


def day_ratio() -> Expr:
    """The route's busiest-day average / peak (RPD and TPD demand)."""
    return Ref(ROUTE_PROFILE, "day_ratio")
