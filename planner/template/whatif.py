"""The What-if sheet: per route, the value of one point of prefix-cache hit rate and self-host vs API.

Row-aligned with Routes and Results. Every column is one formula over the input tables and Results, calling the
registry's functions (formulas W1-W4 in docs/method.md section 8). The lever columns are the Results formulas they
stand for with the route's hit rate one point higher (``MIN(1, h + 0.01)``), so they equal what the plan method
gives when the Routes cell is edited (:func:`planner.whatif.levers.cache_hit_lever` does exactly that, and
tests/test_whatif.py checks the two agree). The tornado and the demand cases below this table are
:mod:`planner.template.sensitivity`; sweeps re-evaluate the whole plan per value (``planner sweep``). This module is
pure: no I/O.
"""

from __future__ import annotations

from planner.demand import DAYS_PER_MONTH
from planner.excel.expr import At, Cells, Expr, Ref, fn, lit, udf, when_filled
from planner.excel.tables import Column, Table
from planner.template.layout import FLEET, PROVIDERS, ROUTE_ROWS, ROUTES, SPECS, C, PlanValue
from planner.template.profiles import avg_qps as profile_avg_qps
from planner.template.profiles import month_ratio
from planner.template.results import FAILOVER, RESULTS

HIT_STEP = 0.01
"""One point of prefix-cache hit rate (absolute: 0.60 -> 0.61)."""

WHATIF_KEYS = (
    "route", "hit_after", "saving_per_point_usd", "itpm_demand_after", "itpm_util_after", "mix_hit_after",
    "ttft_after_s",
    "api_backend", "fleet_backend", "api_row", "fleet_row", "tokens_per_month", "api_cost_per_request_usd",
    "api_usd_per_mtok", "fleet_cost_monthly_usd", "selfhost_usd_per_mtok", "breakeven_qps", "breakeven_hit_rate",
    "recommendation", "reasons",
)
_REF = Table(name="tblWhatIf", sheet="What-if", rows=ROUTE_ROWS, columns=tuple(C(key=k, header=k, help=k)
                                                                             for k in WHATIF_KEYS))


def _r(key: str) -> Expr:
    return Ref(ROUTES, key)


def _res(key: str) -> Expr:
    return Ref(RESULTS, key)


def _w(key: str) -> Expr:
    return Ref(_REF, key)


def _at(table: Table, key: str, row: Expr) -> Expr:
    return fn("INDEX", Cells(table, key), row)


def _columns() -> tuple[Column, ...]:
    kind = _res("backend_type")
    qps, inp, out, hit = _r("peak_qps"), _r("avg_input_tokens"), _r("avg_output_tokens"), _r("cache_hit_rate")
    avg_qps = profile_avg_qps()  # peak QPS x the route's own month ratio (its profile, else the Plan's ratio)
    arow, fleet_row = _w("api_row"), _w("fleet_row")

    def col(key: str, header: str, help: str, body: Expr, fmt: str = "#,##0", kind: str = "number",
            width: float = 14.0) -> Column:
        formula = body if key == "route" else when_filled(_w("route"), body)
        return C(key=key, header=header, help=help, formula=formula, number_format=fmt, kind=kind, width=width)

    def price(key: str, row: Expr) -> Expr:
        return _at(PROVIDERS, key, row)

    def api_prices(row: Expr) -> tuple[Expr, ...]:
        return tuple(price(k, row) for k in ("usd_per_mtok_input", "usd_per_mtok_cached_input",
                                              "usd_per_mtok_cache_write", "usd_per_mtok_output"))

    def spec(key: str) -> Expr:  # the compared fleet is the route's own where it is on a fleet
        return _at(SPECS, key, fleet_row)

    def fl(key: str) -> Expr:
        return _at(FLEET, key, fleet_row)

    def other(side: str, first: Table) -> Expr:
        """The backend compared on ``side``: the route's backend, else its failover, else the plan's first."""
        plan_first = At(first, "name", 0)  # an empty cell reads 0 in Excel: spelled out as ""
        return fn("IF", kind.eq(side), _r("backend"), fn("IF", Ref(FAILOVER, "receiver_type").eq(side),
                                                           _r("failover"),
                                                           fn("IF", plan_first.eq(""), "", plan_first)))

    itpm_limit = price("itpm", arow)  # the compared provider is the route's own where it is on a provider
    itpm_after = udf("CAPACITY_ITPM", qps, inp, _w("hit_after"), _r("cache_write_tokens"),
                     _res("counts_cached_reads"))
    on_backend = udf("BACKEND_SUM", _r("backend"), Cells(ROUTES, "backend"), Cells(RESULTS, "itpm_demand"))
    cached = udf("BACKEND_SUM", _r("backend"), Cells(ROUTES, "backend"), Cells(RESULTS, "cached_tokens_per_s"))
    inputs = udf("BACKEND_SUM", _r("backend"), Cells(ROUTES, "backend"), Cells(RESULTS, "input_tokens_per_s"))
    api_cost = udf("API_COST_PER_REQUEST", inp, out, hit, _r("cache_write_tokens"), *api_prices(arow))
    fleet_tokens = udf("BACKEND_SUM", _w("fleet_backend"), Cells(ROUTES, "backend"), Cells(_REF, "tokens_per_month"))
    rule_args = (avg_qps, _w("breakeven_qps"), _w("selfhost_usd_per_mtok"), _w("api_usd_per_mtok"),
                 lit(1) / month_ratio(), PlanValue("burst_factor"), _r("new_route"),
                 _w("api_backend"), _w("fleet_backend"), _r("failover"))
    no_api, no_fleet = _w("api_row").eq(""), _w("fleet_row").eq("")
    return (
        col("route", "Route [name]", "Route name (from Routes)", fn("IF", _r("name").eq(""), "", _r("name")),
            kind="text", width=18),
        col("hit_after", "Hit +1 point [fraction]", "The route's prefix-cache hit rate one point higher, at most 1 "
            "and at most 1 - cache writes / input (the writes fill the rest): MIN(1, hit + 0.01, 1 - writes / input)",
            fn("MIN", 1, hit + HIT_STEP, fn("IFERROR", lit(1) - _r("cache_write_tokens") / inp, 1)), "0%",
            width=10),
        col("saving_per_point_usd", "Saving per +1 point [USD/month]", "W5: the plan's bill at today's hit rate "
            "minus at one point more (provider: C1 at both; a fleet's GPU-hours do not change: 0)",
            fn("IF", kind.eq("provider"), _res("cost_monthly_usd") - udf(
                "API_COST_MONTHLY", avg_qps, inp, out, _w("hit_after"), _r("cache_write_tokens"), *api_prices(arow)),
               0), "#,##0"),
        col("itpm_demand_after", "ITPM demand +1 point [tokens/min]", "D4: the backend's counted input per minute "
            "(every route on it) with this route one point higher",
            fn("IF", kind.eq("provider"), on_backend - _res("itpm_demand") + itpm_after, ""), "#,##0"),
        col("itpm_util_after", "ITPM util +1 point [x]", "W5: the backend's ITPM utilization with this route one "
            "point higher (cache reads leave ITPM where the provider does not count them); blank: no ITPM limit",
            fn("IF", kind.eq("provider"), fn("IF", itpm_limit.gt(0), udf(
                "LIMIT_UTILIZATION", _w("itpm_demand_after"), itpm_limit, price("keys", arow), price("scope", arow)),
                ""), ""), "0.00"),
        col("mix_hit_after", "Fleet mix hit +1 point [fraction]", "The fleet's cached share of input with this "
            "route one point higher (Results' mix hit rate, recomputed)",
            fn("IF", kind.eq("fleet"), fn("IFERROR", (cached - _res("cached_tokens_per_s") + qps * inp
                                                      * _w("hit_after")) / inputs, 0), ""), "0.0%"),
        col("ttft_after_s", "TTFT +1 point [s]", "W5: Q4 SERVING_TTFT_S at the fleet's load with that mix hit rate "
            "(less prefill per request)",
            fn("IF", _w("mix_hit_after").eq(""), "", udf(
                "SERVING_TTFT_S", spec("model_spec"), spec("gpu_spec"), fl("tp"), _res("mix_input_tokens"),
                _res("mix_output_tokens"), 0, _res("replica_rate"), fl("engine"), fl("weight_dtype"),
                fl("kv_dtype"), _w("mix_hit_after"), fl("pp"))), "0.000"),
        col("api_backend", "API compared [name]", "The route's provider backend, else its failover if a provider, "
            "else the plan's first provider", other("provider", PROVIDERS), kind="text", width=18),
        col("fleet_backend", "Fleet compared [name]", "The route's fleet, else its failover if a fleet, else the "
            "plan's first fleet", other("fleet", FLEET), kind="text", width=18),
        col("api_row", "API row [#]", "Its row on Providers",
            fn("IFERROR", fn("MATCH", _w("api_backend"), Cells(PROVIDERS, "name")), ""), "0", width=8),
        col("fleet_row", "Fleet row [#]", "Its row on Fleet",
            fn("IFERROR", fn("MATCH", _w("fleet_backend"), Cells(FLEET, "name")), ""), "0", width=8),
        col("tokens_per_month", "Tokens [per month]", "D2 at the average rate: CAPACITY_TPD x days per month "
            "(input + output, the basis of both $/Mtok)",
            udf("CAPACITY_TPD", avg_qps, inp, out) * DAYS_PER_MONTH, "#,##0"),
        col("api_cost_per_request_usd", "API cost [USD/request]", "C1 at the compared provider's prices and the "
            "route's hit rate", fn("IF", no_api, "", api_cost), "0.00000"),
        col("api_usd_per_mtok", "API [USD/Mtok]", "C1 per million total tokens (API_USD_PER_MTOK)",
            fn("IF", no_api, "", udf("API_USD_PER_MTOK", inp, out, hit, _r("cache_write_tokens"),
                                     *api_prices(arow))), "0.000"),
        col("fleet_cost_monthly_usd", "Fleet cost [USD/month]", "The compared fleet's GPU-hours (Specs)",
            fn("IF", no_fleet, "", _at(SPECS, "cost_monthly_usd", fleet_row)), "#,##0"),
        col("selfhost_usd_per_mtok", "Self-host [USD/Mtok]", "W1 at the plan's utilization: the fleet's cost / the "
            "tokens its routes send it (a fleet with no route: as if it carried this one)",
            fn("IF", no_fleet, "", udf("SELFHOST_USD_PER_MTOK_AT_LOAD", _w("fleet_cost_monthly_usd"),
                                       fn("IF", fleet_tokens.gt(0), fleet_tokens, _w("tokens_per_month")))), "0.000"),
        col("breakeven_qps", "Break-even [req/s avg]", "W2: the average rate at which this route's API bill equals "
            "the fleet's cost", fn("IF", fn("OR", no_api, no_fleet), "", udf(
                "BREAKEVEN_QPS", _w("fleet_cost_monthly_usd"), _w("api_cost_per_request_usd"))), "#,##0.0"),
        col("breakeven_hit_rate", "Break-even hit [fraction]", "W3: the API hit rate at which its $/Mtok equals "
            "self-hosting's; above it the API is cheaper (outside 0..1: no crossing)",
            fn("IF", fn("OR", no_api, no_fleet), "", udf(
                "BREAKEVEN_HIT_RATE", _w("selfhost_usd_per_mtok"), inp, out, _r("cache_write_tokens"),
                *api_prices(arow))), "0%"),
        col("recommendation", "Recommendation", "W4, the seed's rule: steady high volume self-hosted; spiky or new "
            "on APIs (spiky: the peak / average of the route's own hour-of-day profile, Profiles' month ratio, "
            "above 3; a route without a profile: the Plan's average-to-peak ratio)",
            udf("SELFHOST_OR_API", *rule_args), kind="text", width=12),
        col("reasons", "Why", "W4: the inputs that drove it, decisive first, and the failover on the other side",
            udf("SELFHOST_OR_API_REASONS", *rule_args), kind="text", width=80),
    )


WHATIF = Table(
    name="tblWhatIf",
    sheet="What-if",
    rows=ROUTE_ROWS,
    title="What-if: one more point of prefix-cache hit rate, and self-host vs API, per route (formulas; locked)",
    note="Lever: each route's hit rate +1 point (0.60 -> 0.61) through the plan's own formulas. Self-host vs API on "
    "one basis: total tokens at the average rate. The tornado and the demand cases are below (Plan: "
    "sensitivity_spread); planner sweep ranges one input.",
    columns=_columns(),
)
assert tuple(c.key for c in WHATIF.columns) == WHATIF_KEYS


__all__ = ["HIT_STEP", "WHATIF", "WHATIF_KEYS"]
