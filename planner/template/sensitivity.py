"""The What-if sheet's sensitivity: the tornado (``tblTornado``) and the low / base / high demand cases
(``tblDemandCases``), as formulas, with their per-route helper (``tblSensitivityRoutes``). Issue 14, item 6.

Each bar moves one input group (:data:`GROUPS`, the same groups ``planner size`` and ``planner sweep`` scale) by
``1 - x`` and ``1 + x`` (``x``: the Plan's ``sensitivity_spread``, 0.2 by default) and gives the monthly bill, the
highest utilization and the first breach month the plan would show with that input changed. Every cell is exact (the
re-evaluated plan's figure, to rounding) because each input enters the plan in a way a cell can reproduce:

- **peak QPS** (and the demand cases): the API bill is linear in the request rate (C1), GPU-hours do not move; the
  utilizations are the Forecast sheet's month at that demand multiple (``FORECAST_MONTH``: linear limits scaled,
  a Poisson burst factor recomputed at the scaled rate, TTFT and TPOT through the serving model);
- **tokens per request, hit rate**: the bill is C1 per route with the input scaled (the hit rate clipped at
  ``1 - max(writes, 1) / input``: the route's cache writes fill the rest and the last prompt token is always
  computed, so a hit rate of 1, which the serving model refuses, is never reached; as ``planner size`` does);
- **average-to-peak ratio**: the bill of a route without a profile and its RPD / TPD scale by
  ``min(1, r (1 +- x)) / r``; a route with a profile keeps its own ratio;
- **MFU**: only compute utilization moves (``u mfu / min(1, mfu (1 +- x))``); the bill does not;
- **growth**: neither the bill nor today's utilization; the breach month ``ln(1/u) / ln(1 + g (1 +- x))``;
- **tokens per request, hit rate** (and the ratio when a route names a profile): no closed form (they change every
  fleet's request mix, hence the serving model's latency, KV in flight and sustainable rate; and TPM, ITPM, OTPM
  with each provider's counting rules). The utilization and breach cells call ``SENSITIVITY_BAR``: the plan's
  Results evaluated again with the group scaled, through the template's own expressions (only the columns Results'
  ``max_util`` and ``months_to_breach`` read; :mod:`planner.whatif.bars`), so they are what the plan re-evaluated
  from scratch shows. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any

from planner.decision import MONTHS_NEVER
from planner.excel.expr import Block, Cells, Expr, Ref, fn, lit, udf, when_filled
from planner.excel.tables import Column, Table
from planner.template.forecast import FORECAST_BACKENDS, FORECAST_ROUTES
from planner.template.layout import FLEET, PLAN, PROVIDERS, ROUTE_ROWS, ROUTES, SPECS, C, PlanValue
from planner.template.profiles import PROFILES, month_ratio
from planner.template.results import RESULTS
from planner.template.whatif import WHATIF

SHEET = "What-if"
DEFAULT_SPREAD = 0.2
NEVER = "never"
"""A breach month beyond the 9,999-month cap (no growth, or nothing in use)."""

GROUPS: tuple[tuple[str, str], ...] = (
    ("peak_qps", "peak QPS (every route)"),
    ("input_tokens", "input tokens per request"),
    ("output_tokens", "output tokens per request"),
    ("cache_hit_rate", "prefix-cache hit rate (below 1: at most 1 - max(writes, 1) / input)"),
    ("monthly_growth", "monthly growth"),
    ("avg_to_peak_ratio", "average-to-peak ratio (routes without a profile; at most 1)"),
    ("mfu", "MFU (every fleet; at most 1)"),
)
"""The tornado's rows, in the order of :data:`planner.whatif.levers.GROUPS` (the same names)."""

USD = "#,##0"
PCT = "0%"
MONTHS = "0.0"
SIDES = ("lo", "hi")


def spread() -> Expr:
    """The Plan's ``sensitivity_spread`` (a blank cell, as in a 2.2.0 workbook: 0.2)."""
    return fn("IF", fn("ISNUMBER", PlanValue("sensitivity_spread")), PlanValue("sensitivity_spread"), DEFAULT_SPREAD)


def factor(side: str) -> Expr:
    return lit(1) - spread() if side == "lo" else lit(1) + spread()


# ---- per route: the bill and the utilizations with one input scaled --------------------------------------------

_ROUTE_KEYS = ("route", "profiled",
               *(f"{g}_{s}_usd" for g in ("input", "output", "hit", "ratio") for s in SIDES),
               *(f"{u}_{g}_{s}" for g in ("mfu", "ratio") for u in ("util", "headroom") for s in SIDES), "hit_ceiling")
ROUTES_HEADER_ROW = WHATIF.last_row + 4 + len(GROUPS) + 4 + 3 + 4
_ROUTES_REF = Table(name="tblSensitivityRoutes", sheet=SHEET, rows=ROUTE_ROWS, header_row=ROUTES_HEADER_ROW,
                    columns=tuple(C(key=k, header=k, help=k) for k in _ROUTE_KEYS))


def _r(key: str) -> Expr:
    return Ref(ROUTES, key)


def _res(key: str) -> Expr:
    return Ref(RESULTS, key)


def _route_columns() -> tuple[Column, ...]:
    first = Ref(_ROUTES_REF, "route")
    kind = _res("backend_type")
    inp, out, hit, writes = (_r("avg_input_tokens"), _r("avg_output_tokens"), _r("cache_hit_rate"),
                             _r("cache_write_tokens"))
    avg = _r("peak_qps") * month_ratio()
    cost = _res("cost_monthly_usd")
    ratio = PlanValue("avg_to_peak_ratio")

    def col(key: str, header: str, help: str, body: Expr, fmt: str = USD, kind_: str = "number",
            width: float = 12.0) -> Column:
        return C(key=key, header=header, help=help, formula=when_filled(first, body), number_format=fmt, kind=kind_,
                 width=width)

    def api(i: Expr, o: Expr, h: Expr) -> Expr:
        """The route's bill with its inputs replaced (C1 through the provider's row, as Results); a fleet's route
        keeps its share of the GPU-hours (their sum is the fleet's cost whatever the request mix)."""
        return fn("IF", kind.eq("fleet"), cost, udf("PROVIDER_API_COST_MONTHLY", _r("backend"), Block(PROVIDERS),
                                                    avg, i, o, h, writes))

    def hit_at(side: str) -> Expr:
        # the cache writes fill the rest and the last prompt token is computed: at most 1 - max(writes, 1) / input
        return fn("MIN", hit * factor(side), 1, fn("MAX", hit, Ref(_ROUTES_REF, "hit_ceiling")))

    def ratio_k(side: str) -> Expr:
        """A route without a profile: its average (bill) and busiest day (RPD, TPD) scale by min(1, r f) / r."""
        return fn("IF", _r("profile").eq(""), fn("IFERROR", fn("MIN", 1, ratio * factor(side)) / ratio, 1), 1)

    def mfu_k(side: str) -> Expr:
        mfu = fn("INDEX", Cells(FLEET, "mfu"), _res("fleet_row"))
        return fn("IF", kind.eq("fleet"), fn("IF", fn("ISNUMBER", mfu), mfu / fn("MIN", 1, mfu * factor(side)), 1), 1)

    def with_compute(side: str, last: str) -> Expr:
        tail = (Cells(RESULTS, "load_util", last),) if last == "tpot_util" else (_res("load_util"),)
        return fn("MAX", Cells(RESULTS, "rpm_util", "kv_util"), _res("compute_util") * mfu_k(side), *tail)

    def with_days(side: str, last: str) -> Expr:
        k = ratio_k(side)
        return fn("MAX", Cells(RESULTS, "rpm_util", "otpm_util"), _res("rpd_util") * k, _res("tpd_util") * k,
                  Cells(RESULTS, "burst_util", last))

    cols: list[Column] = [
        C(key="route", header="Route [name]", help="Route name (from Routes)", kind="text", width=16,
          formula=fn("IF", _r("name").eq(""), "", _r("name"))),
        col("profiled", "Own profile [0/1]", "1 where the route names a profile (the Plan's ratio does not move it)",
            fn("IF", _r("profile").eq(""), 0, 1), "0", width=8),
    ]
    for s in SIDES:
        cols.append(col(f"input_{s}_usd", f"Bill, input {s} [USD/month]", "C1 with input tokens x (1 -+ spread)",
                        api(inp * factor(s), out, hit)))
    for s in SIDES:
        cols.append(col(f"output_{s}_usd", f"Bill, output {s} [USD/month]", "C1 with output tokens x (1 -+ spread)",
                        api(inp, out * factor(s), hit)))
    for s in SIDES:
        cols.append(col(f"hit_{s}_usd", f"Bill, hit {s} [USD/month]", "C1 with the hit rate x (1 -+ spread), at most "
                        "1 - max(writes, 1) / input (unless already above it)", api(inp, out, hit_at(s))))
    for s in SIDES:
        cols.append(col(f"ratio_{s}_usd", f"Bill, ratio {s} [USD/month]", "The route's bill x min(1, r f) / r "
                        "(routes without a profile; a fleet's share does not move)",
                        fn("IF", kind.eq("fleet"), cost, cost * ratio_k(s))))
    for s in SIDES:
        cols.append(col(f"util_mfu_{s}", f"Max util, MFU {s} [x]", "C7 with compute util x mfu / min(1, mfu f)",
                        with_compute(s, "tpot_util"), PCT))
    for s in SIDES:
        cols.append(col(f"headroom_mfu_{s}", f"Linear util, MFU {s} [x]", "1 / C7 headroom (RPM ... LOAD) with "
                        "compute scaled", with_compute(s, "load_util"), PCT))
    for s in SIDES:
        cols.append(col(f"util_ratio_{s}", f"Max util, ratio {s} [x]", "C7 with RPD and TPD x min(1, r f) / r",
                        with_days(s, "tpot_util"), PCT))
    for s in SIDES:
        cols.append(col(f"headroom_ratio_{s}", f"Linear util, ratio {s} [x]", "1 / C7 headroom with RPD and TPD "
                        "scaled", with_days(s, "load_util"), PCT))
    written = fn("MAX", fn("IF", fn("ISNUMBER", writes), writes, 0), 1)
    cols.append(col("hit_ceiling", "Hit rate ceiling [fraction]", "1 - max(cache writes, 1) / input: the highest hit "
                    "rate the bars reach (the writes fill the rest; the last prompt token is computed)",
                    fn("MAX", 0, fn("IFERROR", lit(1) - written / inp, 1)), "0.0000", width=10))
    return tuple(cols)


SENSITIVITY_ROUTES = Table(name="tblSensitivityRoutes", sheet=SHEET, rows=ROUTE_ROWS, header_row=ROUTES_HEADER_ROW,
                           columns=_route_columns())
assert tuple(c.key for c in SENSITIVITY_ROUTES.columns) == _ROUTE_KEYS

# the layout of tblSensitivityBars (below the per-route table), which the tornado's cells read
_BAR_KEYS = ("input", "reevaluated", "util_lo", "util_hi", "breach_lo_months", "breach_hi_months")
BARS_HEADER_ROW = SENSITIVITY_ROUTES.last_row + 4
_BARS_REF = Table(name="tblSensitivityBars", sheet=SHEET, rows=len(GROUPS), header_row=BARS_HEADER_ROW,
                  columns=tuple(C(key=k, header=k, help=k) for k in _BAR_KEYS))


# ---- the tornado ------------------------------------------------------------------------------------------------

_TORNADO_KEYS = ("input", "label", "factor_lo", "factor_hi", "bill_lo_usd", "bill_hi_usd", "util_lo", "util_hi",
                 "breach_lo_months", "breach_hi_months", "bill_lo_change_usd", "bill_hi_change_usd",
                 "bill_routes_lo_usd", "bill_routes_hi_usd", "breach_util_lo", "breach_util_hi")
TORNADO_HEADER_ROW = WHATIF.last_row + 4
_TORNADO_REF = Table(name="tblTornado", sheet=SHEET, rows=len(GROUPS), header_row=TORNADO_HEADER_ROW,
                     columns=tuple(C(key=k, header=k, help=k) for k in _TORNADO_KEYS))


def _total() -> Expr:
    return fn("SUM", Cells(RESULTS, "cost_monthly_usd"), Cells(SPECS, "standby_cost_monthly_usd"))


def _provider_bill() -> Expr:
    """Every provider route's API bill (what scales with demand; GPU-hours do not)."""
    return fn("SUMIFS", Cells(RESULTS, "cost_monthly_usd"), Cells(RESULTS, "backend_type"), "provider")


def _qps_bill(x: Expr) -> Expr:
    """The bill at demand multiple ``x``: every provider route's API bill x ``x``, the GPU-hours unchanged."""
    return _total() + (x - 1) * _provider_bill()


def _month(field: str, x: Expr) -> Expr:
    return udf("FORECAST_MONTH", field, x, PlanValue("utilization_threshold"), Block(FORECAST_BACKENDS))


def _breach(u: Expr, growth_factor: Expr) -> Expr:
    """C7 months to breach of the plan's highest linear utilization ``u`` (the earliest route's) at every growth rate
    times ``growth_factor`` (routes with their own growth at theirs: PLAN_MONTHS_TO_BREACH); "never" past the
    9,999-month cap."""
    return _never(udf("PLAN_MONTHS_TO_BREACH", u, PlanValue("monthly_growth"), growth_factor,
                      Block(FORECAST_ROUTES)))


def _tornado_columns() -> tuple[Column, ...]:
    me = lambda k: Ref(_TORNADO_REF, k)  # noqa: E731
    bar = lambda k: Ref(_BARS_REF, k)  # noqa: E731  (the same group's row of tblSensitivityBars)
    name = me("input")
    sr = lambda k: Cells(SENSITIVITY_ROUTES, k)  # noqa: E731
    standby = Cells(SPECS, "standby_cost_monthly_usd")
    no_profiles = fn("SUM", sr("profiled")).eq(0)

    def pick(cases: dict[str, Expr], otherwise: Any) -> Expr:
        out: Any = otherwise
        for g, body in reversed(list(cases.items())):
            out = fn("IF", name.eq(g), body, out)
        return out

    def col(key: str, header: str, help: str, body: Expr, fmt: str, width: float = 13.0) -> Column:
        return C(key=key, header=header, help=help, formula=when_filled(name, body), number_format=fmt,
                 width=width)

    cols: list[Column] = [
        C(key="input", header="Input [group]", help="The input group moved (planner sweep --vary takes the same "
          "names)", kind="text", width=18),
        C(key="label", header="What moves", help="The cells the group scales", kind="text", width=34),
        col("factor_lo", "Low [x]", "1 - the Plan's sensitivity_spread", factor("lo"), "0.00", 8),
        col("factor_hi", "High [x]", "1 + the Plan's sensitivity_spread", factor("hi"), "0.00", 8),
    ]
    for s in SIDES:
        f = me(f"factor_{s}")
        routes = me(f"bill_routes_{s}_usd")  # the routes' bills where the bar moves them route by route
        cols.append(col(f"bill_{s}_usd", f"Bill {s} [USD/month]", "Summary's total with cache with the input at "
                        f"the {'low' if s == 'lo' else 'high'} factor", fn("SUM", standby) + fn(
                            "IF", fn("ISNUMBER", routes), routes, fn("SUM", Cells(RESULTS, "cost_monthly_usd")) + fn(
                                "IF", name.eq("peak_qps"), (f - 1) * _provider_bill(), 0)), USD, 14))
    for s in SIDES:
        f = me(f"factor_{s}")
        cols.append(col(f"util_{s}", f"Max util {s} [x]", "The plan's highest utilization (C7) with the input "
                        f"at the {'low' if s == 'lo' else 'high'} factor (tokens, hit rate: the plan's Results "
                        "evaluated again, SENSITIVITY_BAR)",
                        pick({
                            "peak_qps": _month("max_util", f),
                            "monthly_growth": fn("MAX", Cells(RESULTS, "max_util")),
                            "avg_to_peak_ratio": fn("IF", no_profiles, fn("MAX", sr(f"util_ratio_{s}")),
                                                    bar(f"util_{s}")),
                            "mfu": fn("MAX", sr(f"util_mfu_{s}")),
                        }, bar(f"util_{s}")), PCT, 12))
    for s in SIDES:
        f, u = me(f"factor_{s}"), me(f"breach_util_{s}")
        cols.append(col(f"breach_{s}_months", f"First breach {s} [months]", "Months until the first route's "
                        "binding constraint reaches 1 at the plan's growth (C7; growth x the factor on the growth "
                        "bar); never: not at this growth",
                        fn("IF", fn("ISNUMBER", u), _breach(u, fn("IF", name.eq("monthly_growth"), f, 1)),
                           _never(bar(f"breach_{s}_months"))), MONTHS, 12))
    for s in SIDES:  # the tornado chart's bars: how far each side moves the bill from the base
        cols.append(col(f"bill_{s}_change_usd", f"Bill change {s} [USD/month]", f"Bill {s} - Summary's total with "
                        "cache (the tornado chart's bar)", me(f"bill_{s}_usd") - _total(), USD, 14))
    for s in SIDES:  # the bars that move each route's bill (tblSensitivityRoutes); "" for the others
        cols.append(col(f"bill_routes_{s}_usd", f"Routes' bill {s} [USD/month]", "The routes' bills summed from "
                        "tblSensitivityRoutes (tokens, hit rate, ratio); blank for the other inputs",
                        pick({g: fn("SUM", sr(f"{k}_{s}_usd")) for g, k in (
                            ("input_tokens", "input"), ("output_tokens", "output"), ("cache_hit_rate", "hit"),
                            ("avg_to_peak_ratio", "ratio"))}, ""), USD, 14))
    for s in SIDES:  # what the breach month reads: the highest linear utilization with the input moved
        f = me(f"factor_{s}")
        cols.append(col(f"breach_util_{s}", f"Linear util {s} [x]", "The highest linear utilization (1 / C7 "
                        "headroom) the breach month grows from: the Forecast month at the demand multiple (peak QPS; "
                        "1 for growth), or with compute or RPD / TPD scaled (MFU, ratio)",
                        fn("IF", fn("OR", name.eq("peak_qps"), name.eq("monthly_growth")),
                           _month("headroom_util", fn("IF", name.eq("peak_qps"), f, 1)),
                           pick({"avg_to_peak_ratio": fn("IF", no_profiles, fn("MAX", sr(f"headroom_ratio_{s}")),
                                                         ""),
                                 "mfu": fn("MAX", sr(f"headroom_mfu_{s}"))}, "")), PCT, 10))
    return tuple(cols)


BAR_TABLES: tuple[tuple[str, Table], ...] = (("plan", PLAN), ("routes", ROUTES), ("providers", PROVIDERS),
                                            ("fleet", FLEET), ("specs", SPECS), ("profiles", PROFILES))
"""The tables SENSITIVITY_BAR reads, by its argument names and in its argument order (planner.whatif.bars)."""


def _plan_blocks() -> tuple[Expr, ...]:
    return tuple(Block(t) for _name, t in BAR_TABLES)


def _never(m: Expr) -> Expr:
    """A breach month as the tornado shows it: "never" past the 9,999-month cap."""
    return fn("IF", m.gt(MONTHS_NEVER - 0.5), NEVER, m)


TORNADO = Table(name="tblTornado", sheet=SHEET, rows=len(GROUPS), header_row=TORNADO_HEADER_ROW,
                columns=_tornado_columns())
assert tuple(c.key for c in TORNADO.columns) == _TORNADO_KEYS


# ---- low / base / high demand -----------------------------------------------------------------------------------

CASES = ("low", "base", "high")
_CASE_KEYS = ("case", "factor", "bill_usd", "max_util", "breach_months", "route", "binding")
CASES_HEADER_ROW = TORNADO.last_row + 4
_CASES_REF = Table(name="tblDemandCases", sheet=SHEET, rows=len(CASES), header_row=CASES_HEADER_ROW,
                   columns=tuple(C(key=k, header=k, help=k) for k in _CASE_KEYS))


def _case_columns() -> tuple[Column, ...]:
    me = lambda k: Ref(_CASES_REF, k)  # noqa: E731
    name, f = me("case"), me("factor")

    def col(key: str, header: str, help: str, body: Expr, fmt: str, width: float = 14.0) -> Column:
        return C(key=key, header=header, help=help, formula=when_filled(name, body), number_format=fmt, width=width)

    return (
        C(key="case", header="Demand case", help="low, base or high", kind="text", width=18),
        col("factor", "Peak QPS and growth [x]", "Both at 1 - x, 1 and 1 + x (x: the Plan's sensitivity_spread)",
            fn("IF", name.eq("low"), factor("lo"), fn("IF", name.eq("high"), factor("hi"), 1)), "0.00", 12),
        col("bill_usd", "Bill [USD/month]", "The API bill x the factor, GPU-hours unchanged", _qps_bill(f), USD),
        col("max_util", "Max util [x]", "The Forecast month at that demand multiple (FORECAST_MONTH)",
            _month("max_util", f), PCT, 12),
        col("breach_months", "First breach [months]", "C7 months to breach at the growth x the factor",
            _breach(_month("headroom_util", f), f), MONTHS, 12),
        C(key="route", header="Route", help="Its route with the highest utilization", kind="text", width=14,
          formula=when_filled(name, _month("route", f))),
        C(key="binding", header="Binds", help="The backend and constraint at that utilization", kind="text", width=22,
          formula=when_filled(name, _month("binding", f))),
    )


DEMAND_CASES = Table(name="tblDemandCases", sheet=SHEET, rows=len(CASES), header_row=CASES_HEADER_ROW,
                     columns=_case_columns())
assert tuple(c.key for c in DEMAND_CASES.columns) == _CASE_KEYS
assert SENSITIVITY_ROUTES.header_row == DEMAND_CASES.last_row + 4

# ---- the bars no closed form gives: the plan's Results evaluated again with the group scaled ----------------------

def _bar_columns() -> tuple[Column, ...]:
    me = lambda k: Ref(_BARS_REF, k)  # noqa: E731
    name = me("input")
    profiled = fn("SUM", Cells(SENSITIVITY_ROUTES, "profiled")).gt(0)

    def col(key: str, header: str, help: str, body: Expr, fmt: str, width: float = 12.0) -> Column:
        return C(key=key, header=header, help=help, formula=when_filled(name, body), number_format=fmt, width=width)

    cols: list[Column] = [
        C(key="input", header="Input [group]", help="The tornado's input group (same row)", kind="text", width=18),
        col("reevaluated", "Results again [0/1]", "1 where no closed form gives the bar: input tokens, output tokens, "
            "hit rate; the ratio when a route names a profile", fn("IF", fn(
                "OR", name.eq("input_tokens"), name.eq("output_tokens"), name.eq("cache_hit_rate"),
                fn("AND", name.eq("avg_to_peak_ratio"), profiled)), 1, 0), "0", 10),
    ]
    for field, key, header, fmt in (("max_util", "util_{s}", "Max util {s} [x]", PCT),
                                    ("breach_months", "breach_{s}_months", "First breach {s} [months]", MONTHS)):
        for s in SIDES:
            cols.append(col(key.format(s=s), header.format(s=s), "SENSITIVITY_BAR: the plan's Results evaluated "
                            "again with the group at the tornado's factor (9999 months: never); blank where a "
                            "closed form gives the bar", fn("IF", me("reevaluated").eq(1), udf(
                                "SENSITIVITY_BAR", field, name, Ref(_TORNADO_REF, f"factor_{s}"), *_plan_blocks()),
                                ""), fmt))
    return tuple(cols)


SENSITIVITY_BARS = Table(name="tblSensitivityBars", sheet=SHEET, rows=len(GROUPS), header_row=BARS_HEADER_ROW,
                         columns=_bar_columns())
assert tuple(c.key for c in SENSITIVITY_BARS.columns) == _BAR_KEYS

TITLES = (  # pairs, not a dict: hashing a table hashes every formula it holds
    (TORNADO, "Sensitivity: the tornado, each input at -x and +x (x: the Plan's sensitivity_spread; formulas)"),
    (DEMAND_CASES, "Low / base / high demand: peak QPS and growth together (formulas)"),
    (SENSITIVITY_ROUTES, "Per route, what the tornado sums: the bill and the utilizations with one input scaled"),
    (SENSITIVITY_BARS, "The bars no closed form gives: the plan's Results evaluated again with the input scaled "
     "(SENSITIVITY_BAR)"),
)
SENSITIVITY_TABLES = (TORNADO, DEMAND_CASES, SENSITIVITY_ROUTES, SENSITIVITY_BARS)


def fixed_cells() -> dict[tuple[str, str], Any]:
    """The tornado's input groups and the case names (template content)."""
    out: dict[tuple[str, str], Any] = {}
    for i, (g, label) in enumerate(GROUPS):
        out[(SHEET, TORNADO.cell("input", i))] = g
        out[(SHEET, TORNADO.cell("label", i))] = label
        out[(SHEET, SENSITIVITY_BARS.cell("input", i))] = g
    for i, c in enumerate(CASES):
        out[(SHEET, DEMAND_CASES.cell("case", i))] = c
    return out


__all__ = ["BAR_TABLES", "CASES", "DEMAND_CASES", "GROUPS", "NEVER", "SENSITIVITY_BARS", "SENSITIVITY_ROUTES",
           "SENSITIVITY_TABLES", "TITLES", "TORNADO", "fixed_cells"]
