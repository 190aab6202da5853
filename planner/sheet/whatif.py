"""Spreadsheet functions for the What-if sheet: self-host vs API per route (W1-W4, :mod:`planner.whatif.rules`).

The arguments keep Excel's order; the core is called by keyword. Prices in USD per million tokens, rates in requests
per second averaged over the month.
"""

from __future__ import annotations

from planner.demand import DAYS_PER_MONTH
from planner.errors import ArgumentError, Refusal, check_number
from planner.excel.values import XlError
from planner.registry import Arg, sheet_function
from planner.sheet.cost import P_IN, P_OUT, P_READ, P_WRITE, WRITE_TOKENS
from planner.sheet.demand import AVG_INPUT, AVG_OUTPUT
from planner.whatif import rules

FLEET_COST = Arg(name="fleet_cost_monthly_usd", unit="USD/month", help="The fleet's monthly cost (Specs)")
SELFHOST_PER_MTOK = Arg(name="selfhost_usd_mtok", unit="USD/Mtok",
                        help="Self-hosted cost per million total tokens (SELFHOST_USD_PER_MTOK_AT_LOAD)",
                        blank="no fleet to compare with")
API_PER_MTOK = Arg(name="api_usd_mtok", unit="USD/Mtok", help="API cost per million total tokens "
                   "(API_USD_PER_MTOK)", blank="no provider to compare with")
BREAKEVEN = Arg(name="breakeven_rate_qps", unit="req/s", help="Break-even average rate (BREAKEVEN_QPS)",
                blank="no break-even rate")
RULE_ARGS = (
    Arg(name="avg_qps", unit="req/s", help="The route's average requests per second over the month"),
    BREAKEVEN,
    SELFHOST_PER_MTOK,
    API_PER_MTOK,
    Arg(name="peak_to_average", unit="x", help="Peak over average demand (1 / the Plan's average-to-peak ratio)"),
    Arg(name="burst_factor", unit="x", help="The Plan's burst factor", blank="not set: not considered"),
    Arg(name="new_route", unit="TRUE/FALSE", kind="flag", help="The route serves a new model or product (demand "
        "not yet known)", blank="FALSE"),
    Arg(name="api_backend", unit="name", kind="text", help="The provider backend compared", blank="none"),
    Arg(name="fleet_backend", unit="name", kind="text", help="The fleet compared", blank="none"),
    Arg(name="failover", unit="name", kind="text", help="The route's failover (Routes)", blank="none"),
)


@sheet_function(
    summary="Self-hosted cost per million total (input + output) tokens at the plan's utilization: 1e6 x the fleet's "
    "monthly cost / the tokens its routes send it in a month.",
    args=(FLEET_COST, Arg(name="tokens_per_month", unit="tokens/month", help="Tokens (input + output) the fleet "
                          "serves in a month at the average rate")),
    returns="USD/Mtok",
    category="What-if",
    example="=SELFHOST_USD_PER_MTOK_AT_LOAD(205709, 809978400000) -> 0.254",
    formula_ids=("W1", "C4"),
)
def SELFHOST_USD_PER_MTOK_AT_LOAD(fleet_cost_monthly_usd, tokens_per_month):
    return rules.selfhost_usd_per_mtok_at_load(fleet_cost_monthly_usd, tokens_per_month=tokens_per_month)


@sheet_function(
    summary="Break-even request rate: the average requests per second at which the route's API bill equals the "
    "fleet's monthly cost (below it the API is cheaper).",
    args=(FLEET_COST, Arg(name="api_cost_per_request_usd", unit="USD/request", help="API cost of one request "
                          "(API_COST_PER_REQUEST)"),
          Arg(name="days_per_month", unit="days", help="Days in the month", default=DAYS_PER_MONTH)),
    returns="req/s",
    category="What-if",
    example="=BREAKEVEN_QPS(205709, 0.00267) -> 29.3",
    formula_ids=("W2", "C6"),
)
def BREAKEVEN_QPS(fleet_cost_monthly_usd, api_cost_per_request_usd, days_per_month=DAYS_PER_MONTH):
    return rules.breakeven_qps(fleet_cost_monthly_usd, api_cost_per_request_usd=api_cost_per_request_usd,
                               days_per_month=days_per_month)


@sheet_function(
    summary="The API's prefix-cache hit rate at which its cost per million tokens equals self-hosting's (above it "
    "the API is cheaper; below 0 or above 1 - writes/input: no crossing).",
    args=(Arg(name="selfhost_usd_mtok", unit="USD/Mtok", help="Self-hosted cost per million total tokens"),
          AVG_INPUT, AVG_OUTPUT, WRITE_TOKENS, P_IN, P_READ, P_WRITE, P_OUT),
    returns="fraction",
    category="What-if",
    example="=BREAKEVEN_HIT_RATE(0.254, 1500, 40, 0, 3, 0.3, 3, 15) -> 1.163",
    formula_ids=("W3", "C1"),
)
def BREAKEVEN_HIT_RATE(selfhost_usd_mtok, avg_input_tokens, avg_output_tokens, cache_write_tokens,
                       usd_per_mtok_input, usd_per_mtok_cached_input, usd_per_mtok_cache_write, usd_per_mtok_output):
    return rules.breakeven_hit_rate(
        selfhost_usd_mtok, avg_input_tokens=avg_input_tokens, avg_output_tokens=avg_output_tokens,
        cache_write_tokens=cache_write_tokens, usd_per_mtok_input=usd_per_mtok_input,
        usd_per_mtok_cached_input=usd_per_mtok_cached_input, usd_per_mtok_cache_write=usd_per_mtok_cache_write,
        usd_per_mtok_output=usd_per_mtok_output)


def _recommend(avg_qps, breakeven_rate_qps, selfhost_usd_mtok, api_usd_mtok, peak_to_average, burst_factor,
               new_route, api_backend, fleet_backend, failover) -> rules.Recommendation:
    return rules.recommend(
        avg_qps, breakeven_qps_=breakeven_rate_qps, selfhost_usd_per_mtok=selfhost_usd_mtok,
        api_usd_per_mtok=api_usd_mtok, peak_to_average=peak_to_average, burst_factor=burst_factor,
        new_route=bool(new_route), api_backend=api_backend or "", fleet_backend=fleet_backend or "",
        route_failover=failover or "")


@sheet_function(
    summary="The seed's rule for a route: self-host when steady (peak/avg <= 3, burst <= 3), not new, at or above "
    "the break-even rate and cheaper per token; otherwise API.",
    args=RULE_ARGS,
    returns="self-host or API",
    returns_kind="text",
    category="What-if",
    example='=SELFHOST_OR_API(200, 29.3, 0.254, 1.73, 2, 1, FALSE, "api", "fleet", "fleet2") -> "self-host"',
    formula_ids=("W4",),
)
def SELFHOST_OR_API(avg_qps, breakeven_rate_qps, selfhost_usd_mtok, api_usd_mtok, peak_to_average, burst_factor,
                    new_route, api_backend, fleet_backend, failover):
    return _recommend(**locals()).choice


@sheet_function(
    summary="Why SELFHOST_OR_API decided as it did: the inputs that drove it (decisive first) and the failover "
    "on the other side.",
    args=RULE_ARGS,
    returns="text",
    returns_kind="text",
    category="What-if",
    example='=SELFHOST_OR_API_REASONS(20, 29.3, 0.254, 1.73, 2, 1, FALSE, "api", "fleet", "api") -> "low volume: 20 '
    'req/s avg < break-even 29.3 req/s; self-host 0.254 < API 1.73 USD/Mtok; steady: peak/avg 2 <= 3; fail over to '
    'fleet (add it as the failover; now api)"',
    formula_ids=("W4",),
)
def SELFHOST_OR_API_REASONS(avg_qps, breakeven_rate_qps, selfhost_usd_mtok, api_usd_mtok, peak_to_average,
                            burst_factor, new_route, api_backend, fleet_backend, failover):
    r = _recommend(**locals())
    return f"{r.reasons}; {r.failover}"


def _plan_table(name: str, sheet: str) -> Arg:
    return Arg(name=name, unit="table", kind="table", help=f"The {sheet} sheet's table, header row included")


@sheet_function(
    summary="One end of a tornado bar that no closed form gives (input tokens, output tokens, hit rate; the "
    "average-to-peak ratio when a route names a profile): the plan's Results evaluated again with every cell of the "
    "input group times the factor (the same expressions and functions as the workbook's Results), max_util (the "
    "plan's highest utilization) or breach_months (the fewest months until a route's binding constraint reaches 1; "
    "9999: never).",
    args=(
        Arg(name="field", unit="name", kind="text", help="max_util or breach_months"),
        Arg(name="group", unit="name", kind="text", help="The input group (input_tokens, output_tokens, "
            "cache_hit_rate, avg_to_peak_ratio, peak_qps, monthly_growth, mfu: the tornado's rows)"),
        Arg(name="factor", unit="x", help="The factor the group's cells are multiplied by (1 - or 1 + the spread)"),
        _plan_table("plan", "Plan"), _plan_table("routes", "Routes"), _plan_table("providers", "Providers"),
        _plan_table("fleet", "Fleet"), _plan_table("specs", "Specs"), _plan_table("profiles", "Profiles"),
    ),
    returns="x or months",
    category="What-if",
    example='=SENSITIVITY_BAR("max_util", "input_tokens", 0.8, {"Setting","Value";"monthly_growth",0.08}, '
    '{"Route [name]","Kind","Peak [req/s]","Avg input [tokens]","Avg output [tokens]","p95 context [tokens]",'
    '"max_tokens [tokens]","Prefix-cache hit [fraction]","Cache writes [tokens/req]","TTFT SLO [s]","TPOT SLO [s]",'
    '"Backend [name]";"chat","interactive",10,2000,200,4000,800,0,0,2,0.1,"api"}, {"Backend [name]","Provider",'
    '"Tier","Model","Keys [count]","Limit scope","ITPM limit [tokens/min]","Window [s]","Cached reads count '
    '[TRUE/FALSE]","Reserves max_tokens [TRUE/FALSE]";"api","anthropic","tier-4","claude-sonnet-4.5",1,'
    '"organization",2000000,60,FALSE,FALSE}, {"Backend [name]"}, {"Backend [name]"}, {"Profile [name]"}) -> 0.48',

    formula_ids=("C7",),
)
def SENSITIVITY_BAR(field, group, factor, plan, routes, providers, fleet, specs, profiles):
    # the tornado needs the plan method itself: imported here, since the template's formulas import this layer
    from planner.whatif.bars import bar_figures

    f = str(field).strip().lower()
    if f not in ("max_util", "breach_months"):
        raise ArgumentError("field", field, "max_util or breach_months")
    bar = bar_figures({"plan": plan, "routes": routes, "providers": providers, "fleet": fleet, "specs": specs,
                       "profiles": profiles}, group=str(group).strip(), factor=check_number("factor", factor,
                                                                                          minimum=0))
    value = getattr(bar, f)
    if isinstance(value, XlError):
        raise Refusal(str(value))
    return value
