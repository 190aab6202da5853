"""The Forecast sheet: the plan month by month (bill by token class, highest utilization, what binds, the step that
relieves it) and commitments (reserved GPUs against on demand, provisioned throughput against pay-as-you-go, the
bundled reserved GPU quotes). Issue 14, items 2 and 3. Pure apart from reading the bundled quotes
(planner/data/commitments.json, cached) as the quotes table's template content.

A month is the plan with demand scaled: the plan's backends as the evaluated Results give them (each one's highest
utilization linear in demand and, for a fleet, what the serving model needs), times the month's demand multiple;
TTFT and TPOT are recomputed by the serving model at the month's load (``FORECAST_MONTH``).
"""

from __future__ import annotations

from typing import Any

from planner.decision import utilization_text
from planner.excel.expr import At, Bin, Block, Cells, Expr, Ref, fn, lit, lookup, udf, when_filled
from planner.excel.tables import Column, Table
from planner.forecast import data as forecast_data
from planner.sheet.forecast import BACKEND_KEYS, MONTH_FIELDS, ROUTE_KEYS
from planner.template.layout import (
    FLEET,
    FLEET_ROWS,
    FORECAST_MONTHS,
    FORECAST_ROUTES_HEADER_ROW,
    LISTS_TABLE,
    PROVIDER_ROWS,
    PROVIDERS,
    ROUTE_DEMAND_HEADER_ROW,
    ROUTE_ROWS,
    ROUTES,
    SPECS,
    C,
    PlanValue,
)
from planner.template.profiles import avg_qps
from planner.template.results import FORECAST_ROUTES_REF, LIMIT_KEYS, RESULTS, route_tpot_slo

SHEET = "Forecast"
USD = "#,##0"
PCT = "0%"


def _text(expr: Expr) -> Expr:
    """``expr&""``: an empty input cell reads as "" on every surface (INDEX of an empty cell is 0 in Excel and the
    general engine, blank in the evaluator)."""
    return Bin("&", expr, lit(""))


def _col(first: Expr, key: str, header: str, help: str, body: Expr, fmt: str = USD, kind: str = "number",
         width: float = 14.0) -> Column:
    return C(key=key, header=header, help=help, formula=when_filled(first, body), number_format=fmt, kind=kind,
             width=width)


# ---- per route: the bill by token class and the highest linear utilization -----------------------------------

# ---- per route, month by month: the planner's own demand multiples (inputs) --------------------------------------

ROUTE_DEMAND = Table(
    name="tblRouteDemand", sheet=SHEET, rows=ROUTE_ROWS, header_row=ROUTE_DEMAND_HEADER_ROW,
    columns=(
        C(key="route", header="Route [name]", help="Route name (from Routes)", kind="text", width=18,
          formula=fn("IF", Ref(ROUTES, "name").eq(""), "", Ref(ROUTES, "name"))),
        *(C(key=f"m{m:02d}", header=f"M{m} [x month 1]", help=f"Month {m}: this route's own demand multiple (blank: "
            "its own growth rate, else the month's)", minimum=0, maximum=1000, number_format="0.00", width=7)
          for m in range(1, FORECAST_MONTHS + 1)),
    ),
)
"""A route's demand multiple typed month by month, as the month table's demand index is for the plan: it takes
precedence over the route's own growth rate, which takes precedence over the month's multiple."""

_ROUTES_REF = FORECAST_ROUTES_REF  # the layout Results' months to breach reads too (keys -> letters)


def _route_columns() -> tuple[Column, ...]:
    res = lambda k: Ref(RESULTS, k)  # noqa: E731
    r = lambda k: Ref(ROUTES, k)  # noqa: E731
    price = lambda k: fn("INDEX", Cells(PROVIDERS, k), res("provider_row"))  # noqa: E731
    first = Ref(_ROUTES_REF, "route")
    me = lambda k: Ref(_ROUTES_REF, k)  # noqa: E731
    fleet = lambda body: fn("IF", res("backend_type").eq("fleet"), body, 0)  # noqa: E731

    def by_class(cls: str) -> Expr:
        return fn("IF", res("backend_type").eq("provider"), udf(
            "API_COST_BY_CLASS", cls.replace("cache_", ""), avg_qps(), r("avg_input_tokens"), r("avg_output_tokens"),
            r("cache_hit_rate"), r("cache_write_tokens"), price("usd_per_mtok_input"),
            price("usd_per_mtok_cached_input"), price("usd_per_mtok_cache_write"), price("usd_per_mtok_output")), 0)

    linear = Cells(RESULTS, "rpm_util", "load_util")
    limits = Cells(RESULTS, "rpm_util", "tpd_util")
    names = {"input": "Uncached input", "cache_read": "Cache reads", "cache_write": "Cache writes",
             "output": "Output"}
    return (
        C(key="route", header="Route [name]", help="Route name (from Routes)", kind="text", width=18,
          formula=fn("IF", r("name").eq(""), "", r("name"))),
        *(_col(first, f"{k}_usd", f"{v} [USD/month]", f"C1 by class: the month-1 API bill's {v.lower()} part "
               "(API_COST_BY_CLASS at the route's month ratio); 0 on a fleet", by_class(k))
          for k, v in names.items()),
        _col(first, "linear_util", "Linear util [x]", "The highest of the ten utilizations linear in demand (RPM "
             "... LOAD on Results): it scales with the month's demand multiple", udf("MAX_UTILIZATION", linear), PCT),
        _col(first, "linear_binding", "Linear binds", "Its constraint", udf("LINEAR_BINDING_CONSTRAINT", linear),
             kind="text", width=10),
        _col(first, "limit_util", "Limits util [x]", "The highest of RPM ... TPD (the provider limits per minute and "
             "per day; BURST apart: its Poisson factor changes with demand)", udf("MAX_UTILIZATION", limits), PCT),
        _col(first, "limit_binding", "Limits bind", "Its constraint", udf("LINEAR_BINDING_CONSTRAINT", limits),
             kind="text", width=10),
        # KV in flight is requests/s x E2E (Little's law): split by what E2E is made of, so a month recomputes it
        # from the serving model's TTFT and TPOT at its load (planner.forecast.month.kv_util)
        _col(first, "kv_rate_s", "KV in flight per s of E2E [x/s]", "Fleet: the route's in-flight KV share (KV "
             "share - prefix retention) / its E2E at load", fleet(res("kv_share") - res("prefix_kv_share")) /
             res("e2e_s"), "0.0000"),
        _col(first, "kv_tpot_rate_s", "... x (output - 1) [x/s]", "The same x (output tokens - 1): the part of E2E "
             "that TPOT multiplies", me("kv_rate_s") * fn("MAX", r("avg_output_tokens") - 1, 0), "0.0000"),
        _col(first, "kv_slo_util", "KV in flight at the SLOs [x]", "The in-flight KV share with E2E at the route's "
             "SLOs (what Results holds where the replica saturates; without both SLOs, month 1's)",
             me("kv_rate_s") * fn("IF", fn("AND", fn("ISNUMBER", r("ttft_slo_s")), fn("ISNUMBER", r("tpot_slo_s"))),
                                  udf("E2E_LATENCY_S", r("ttft_slo_s"), r("tpot_slo_s"), r("avg_output_tokens")),
                                  res("e2e_s")), "0.0000"),
        # each route's parts, so that a month re-derives a backend whose routes grow apart (FORECAST_MONTH)
        _col(first, "backend", "Backend [name]", "The route's backend (Routes)", fn("IF", r("name").eq(""), "",
                                                                               _text(r("backend"))), kind="text"),
        _col(first, "growth", "Own growth [fraction/month]", "The route's own growth (Routes; blank: the Plan's)",
             fn("IF", fn("ISNUMBER", r("monthly_growth")), r("monthly_growth"), ""), "0.0%"),
        _col(first, "qps", "Peak [req/s]", "Routes", r("peak_qps"), "#,##0.0"),
        _col(first, "input_tokens", "Input [tokens]", "Routes", r("avg_input_tokens"), "#,##0"),
        _col(first, "output_tokens", "Output [tokens]", "Routes", r("avg_output_tokens"), "#,##0"),
        _col(first, "cache_hit_rate", "Cache hit [fraction]", "Routes", r("cache_hit_rate"), "0%"),
        _col(first, "kind", "Kind", "Routes (bulk: sized at the offline maximum)", _text(r("kind")), kind="text"),
        _col(first, "ttft_slo_s", "TTFT SLO [s]", "Routes", r("ttft_slo_s"), "0.000"),
        _col(first, "tpot_slo_s", "TPOT SLO [s]", "Routes (0: none, a route of one output token)", route_tpot_slo(),
             "0.000"),
        _col(first, "rpm", "RPM [req/min]", "Provider: the route's requests per minute (Results), the burst "
             "window's rate", fn("IF", res("backend_type").eq("provider"), res("rpm_demand"), 0), "#,##0"),
        # a provider limit's utilization is its routes' demands over the limit: each route's part by its demand
        # (BURST by its requests)
        *(_col(first, f"{k}_share", f"{k.upper()} share [x]", f"Provider: the route's part of its backend's "
               f"{k.upper()} utilization (Results' util x its {d.upper()} demand / the backend's)",
               fn("IF", res("backend_type").eq("provider"), fn("IFERROR", res(f"{k}_util") * res(f"{d}_demand") / udf(
                   "BACKEND_SUM", r("backend"), Cells(ROUTES, "backend"), Cells(RESULTS, f"{d}_demand")), 0), 0),
               "0.0000") for k, d in (*((k, k) for k in LIMIT_KEYS), ("burst", "rpm"))),
        _col(first, "kv_share", "KV share [x]", "Fleet: its KV share (Results)", fleet(res("kv_share")), "0.0000"),
        _col(first, "compute_share", "COMPUTE share [x]", "Fleet: its compute share (Results)",
             fleet(res("compute_share")), "0.0000"),
        _col(first, "load_share", "LOAD share [x]", "Fleet: its part of LOAD by its requests (the request mix held)",
             fleet(fn("IFERROR", res("load_util") * r("peak_qps") / res("fleet_qps"), 0)), "0.0000"),
    )


FORECAST_ROUTES = Table(name="tblForecastRoutes", sheet=SHEET, rows=ROUTE_ROWS, header_row=FORECAST_ROUTES_HEADER_ROW,
                        columns=_route_columns())
assert tuple(c.key for c in FORECAST_ROUTES.columns) == ROUTE_KEYS


# ---- per backend: what the month evaluation needs ------------------------------------------------------------

BACKENDS_HEADER_ROW = FORECAST_ROUTES.last_row + 4
_BACKENDS_REF = Table(name="tblForecastBackends", sheet=SHEET, rows=LISTS_TABLE.rows, header_row=BACKENDS_HEADER_ROW,
                      columns=tuple(C(key=k, header=k, help=k) for k in BACKEND_KEYS))


def _backend_columns() -> tuple[Column, ...]:
    backend = Ref(LISTS_TABLE, "backend")
    routes = Cells(ROUTES, "backend")
    me = lambda k: Ref(_BACKENDS_REF, k)  # noqa: E731
    is_fleet, is_provider = me("type").eq("fleet"), me("type").eq("provider")
    first = me("backend")
    bmax = lambda values: udf("BACKEND_MAX", backend, routes, values)  # noqa: E731
    argmax = lambda values, labels: udf("BACKEND_ARGMAX", backend, routes, values, labels)  # noqa: E731
    prov = lambda k: fn("IF", is_provider, _text(lookup(PROVIDERS, "name", backend, k)), "")  # noqa: E731
    fleet = lambda k: fn("IF", is_fleet, lookup(FLEET, "name", backend, k), "")  # noqa: E731
    fleet_text = lambda k: fn("IF", is_fleet, _text(lookup(FLEET, "name", backend, k)), "")  # noqa: E731
    spec = lambda k: fn("IF", is_fleet, lookup(SPECS, "fleet", backend, k), "")  # noqa: E731
    lin = Cells(FORECAST_ROUTES, "linear_util")
    fleet_sum = lambda values: fn("IF", is_fleet, udf("BACKEND_SUM", backend, routes, values), "")  # noqa: E731
    window = fn("IF", is_provider, lookup(PROVIDERS, "name", backend, "window_s"), 0)

    def slo(util: str, key: str) -> Expr:
        # 0 (not ""): no latency SLO binds on this fleet (bulk routes only, or none)
        return fn("IF", is_fleet, fn("IF", bmax(Cells(RESULTS, util)).gt(0), argmax(Cells(RESULTS, util),
                                                                                    Cells(ROUTES, key)), 0), "")

    def col(key: str, header: str, help: str, body: Expr, fmt: str = "General", kind: str = "number",
            width: float = 12.0) -> Column:
        return _col(first, key, header, help, body, fmt, kind, width)

    return (
        C(key="backend", header="Backend [name]", help="Every backend of the plan (Providers, then Fleet)",
          kind="text", width=20, formula=fn("IF", backend.eq(""), "", backend)),
        col("type", "Type", "provider or fleet",
            fn("IF", fn("ISNUMBER", fn("MATCH", backend, Cells(PROVIDERS, "name"))), "provider", "fleet"),
            kind="text"),
        col("top_route", "Route [name]", "Its route with the highest linear utilization (blank: no route uses it "
            "as primary)", fn("IF", fn("COUNTIFS", routes, backend).eq(0), "", argmax(lin, Cells(ROUTES, "name"))),
            kind="text", width=16),
        col("linear_util", "Linear util [x]", "Month 1: its highest utilization linear in demand", bmax(lin), PCT),
        col("binding", "Binds", "That constraint", fn("IF", me("top_route").eq(""), "",
                                                      argmax(lin, Cells(FORECAST_ROUTES, "linear_binding"))),
            kind="text"),
        col("units", "Keys or replicas [count]", "Provider: keys / deployments; fleet: replicas",
            fn("IF", is_provider, lookup(PROVIDERS, "name", backend, "keys"),
               lookup(FLEET, "name", backend, "replicas")), "0"),
        col("scope", "Limit scope", "What the provider's limits are metered per (keys multiply them only per key, "
            "deployment or account-region)", prov("scope"), kind="text"),
        col("multiplied_by", "More capacity from", "What adds a copy of the limit", prov("multiplied_by"),
            kind="text"),
        col("raise_by", "Raise it with", "Other ways to raise the limit", prov("raise_by"), kind="text", width=24),
        col("step_usd", "One more replica [USD/month]", "Fleet: its monthly cost / replicas",
            fn("IF", is_fleet, spec("cost_monthly_usd") / me("units"), 0), USD),
        col("fleet_qps", "Fleet load [req/s]", "Peak QPS of every route on the fleet",
            fn("IF", is_fleet, udf("BACKEND_SUM", backend, routes, Cells(ROUTES, "peak_qps")), 0), "#,##0.0"),
        col("mix_input_tokens", "Mix input [tokens]", "The fleet's request mix (Results)",
            fn("IF", is_fleet, bmax(Cells(RESULTS, "mix_input_tokens")), ""), "#,##0"),
        col("mix_output_tokens", "Mix output [tokens]", "The fleet's request mix (Results)",
            fn("IF", is_fleet, bmax(Cells(RESULTS, "mix_output_tokens")), ""), "#,##0"),
        col("mix_cache_hit_rate", "Mix cache hit [fraction]", "The fleet's request mix (Results)",
            fn("IF", is_fleet, bmax(Cells(RESULTS, "mix_cache_hit_rate")), ""), "0%"),
        col("model_spec", "Model as used [spec]", "Specs", spec("model_spec"), kind="text", width=10),
        col("gpu_spec", "GPU as used [spec]", "Specs", spec("gpu_spec"), kind="text", width=10),
        col("tp", "TP [GPUs]", "Fleet", fleet("tp"), "0"),
        col("pp", "PP [stages]", "Fleet", fleet("pp"), "0"),
        col("engine", "Engine", "Fleet", fleet_text("engine"), kind="text"),
        col("weight_dtype", "Weight dtype", "Fleet", fleet_text("weight_dtype"), kind="text"),
        col("kv_dtype", "KV dtype", "Fleet", fleet_text("kv_dtype"), kind="text"),
        col("ttft_slo_s", "Tightest TTFT SLO [s]", "The SLO of its route with the highest TTFT util (0: none, bulk)",
            slo("ttft_util", "ttft_slo_s"), "0.000"),
        col("tpot_slo_s", "Tightest TPOT SLO [s]", "The SLO of its route with the highest TPOT util (0: none, bulk)",
            slo("tpot_util", "tpot_slo_s"), "0.000"),
        col("load_util", "Load util [x]", "Results: rate per replica / sustainable rate",
            fn("IF", is_fleet, bmax(Cells(RESULTS, "load_util")), 0), PCT),
        col("limit_util", "Limits util [x]", "Provider: its highest of RPM ... TPD (linear in demand)",
            fn("IF", is_provider, bmax(Cells(FORECAST_ROUTES, "limit_util")), 0), PCT),
        col("limit_binding", "Limits bind", "That constraint",
            fn("IF", fn("AND", is_provider, me("top_route").ne("")), argmax(Cells(FORECAST_ROUTES, "limit_util"),
                                                                          Cells(FORECAST_ROUTES, "limit_binding")),
               ""), kind="text"),
        col("burst_util", "Burst util [x]", "Provider: the RPM limit in its enforcement window (Results)",
            fn("IF", is_provider, bmax(Cells(RESULTS, "burst_util")), 0), PCT),
        col("burst_rpm", "Poisson burst at [req/min]", "Where the burst factor is Poisson (a window of 1-59 s, no Plan "
            "burst factor): the backend's RPM, at which the factor is recomputed for the month's rate; 0: a fixed "
            "factor, BURST scales linearly", fn("IF", fn("AND", me("window_s").gt(0), me("window_s").le(59)), fn(
                "IF", PlanValue("burst_factor").gt(0), 0, udf("BACKEND_SUM", backend, routes,
                                                            Cells(RESULTS, "rpm_demand"))), 0), "#,##0"),
        col("window_s", "Window [s]", "Provider: the limit's enforcement window", fn("IF", is_provider, window, 0),
            "0"),
        col("compute_util", "Compute util [x]", "Fleet: Results' compute utilization (linear in demand)",
            fn("IF", is_fleet, bmax(Cells(RESULTS, "compute_util")), 0), PCT),
        col("kv_prefix_util", "KV prefixes [x]", "Fleet: the prefixes kept warm on every replica / the KV budget "
            "(they do not grow with demand)", fleet_sum(Cells(RESULTS, "prefix_kv_share")), PCT),
        col("kv_rate_s", "KV per s of E2E [x/s]", "Fleet: its routes' in-flight KV share per second of E2E",
            fleet_sum(Cells(FORECAST_ROUTES, "kv_rate_s")), "0.0000"),
        col("kv_tpot_rate_s", "... x (output - 1) [x/s]", "Fleet: the same, weighted by output tokens - 1",
            fleet_sum(Cells(FORECAST_ROUTES, "kv_tpot_rate_s")), "0.0000"),
        col("kv_slo_util", "KV in flight at the SLOs [x]", "Fleet: its routes' in-flight KV share at E2E at their "
            "SLOs (a saturated replica)", fleet_sum(Cells(FORECAST_ROUTES, "kv_slo_util")), PCT),
    )


FORECAST_BACKENDS = Table(name="tblForecastBackends", sheet=SHEET, rows=LISTS_TABLE.rows,
                          header_row=BACKENDS_HEADER_ROW, columns=_backend_columns())
assert tuple(c.key for c in FORECAST_BACKENDS.columns) == BACKEND_KEYS


# ---- per month -------------------------------------------------------------------------------------------------

_MONTH_KEYS = ("month", "demand_index", "multiplier", "input_usd", "cache_read_usd", "cache_write_usd", "output_usd",
               "gpu_usd", "total_usd", "max_util", "binding", "route", "action", "action_usd", "util_after")
_FORECAST_REF = Table(name="tblForecast", sheet=SHEET, rows=FORECAST_MONTHS, header_row=4,
                      columns=tuple(C(key=k, header=k, help=k) for k in _MONTH_KEYS))


def _month_columns() -> tuple[Column, ...]:
    me = lambda k: Ref(_FORECAST_REF, k)  # noqa: E731
    x = me("multiplier")
    first = x

    def field(name: str) -> Expr:
        return udf("FORECAST_MONTH", name, x, PlanValue("utilization_threshold"), Block(FORECAST_BACKENDS),
                   me("month"), Block(FORECAST_ROUTES), Block(ROUTE_DEMAND))


    def col(key: str, header: str, help: str, body: Expr, fmt: str = USD, kind: str = "number",
            width: float = 13.0) -> Column:
        return _col(first, key, header, help, body, fmt, kind, width)

    bill = {"input": "Uncached input", "cache_read": "Cache reads", "cache_write": "Cache writes", "output": "Output"}
    return (
        C(key="month", header="Month [#]", help="Forecast month (1 = the plan as entered)", width=8,
          number_format="0"),
        C(key="demand_index", header="Demand index [x]", help="Your own demand multiple for the month (blank: the "
          "Plan's monthly growth compounds)", minimum=0, maximum=1000, number_format="0.00", width=10),
        C(key="multiplier", header="Demand [x month 1]", help="The month's demand multiple: the index, else "
          "(1 + growth)^(month - 1); blank after the Plan's forecast_months", number_format="0.00", width=10,
          formula=fn("IF", me("month").gt(PlanValue("forecast_months")), "",
                     udf("GROWTH_MULTIPLIER", me("month"), PlanValue("monthly_growth"), me("demand_index")))),
        *(col(f"{k}_usd", f"{v} [USD/month]", f"API bill, {v.lower()}: each route's month 1 x its own demand "
              "multiple (FORECAST_MONTH)", field(f"{k}_usd")) for k, v in bill.items()),
        col("gpu_usd", "GPUs [USD/month]", "Every fleet's GPU-hours (Specs) plus the replicas the month's action adds",
            fn("SUM", Cells(SPECS, "cost_monthly_usd")) + me("action_usd"), width=16),
        col("total_usd", "Total [USD/month]", "The month's bill",
            fn("SUM", Cells(_FORECAST_REF, "input_usd", "gpu_usd")), width=16),
        col("max_util", "Max util [x]", "The highest utilization of the plan as it stands, demand scaled (TTFT and "
            "TPOT recomputed at the month's load)", field("max_util"), PCT, width=9),
        col("binding", "Binds", "The backend and constraint at that utilization", field("binding"), kind="text",
            width=22),
        col("route", "Route", "Its route with the highest utilization", field("route"), kind="text", width=12),
        col("action", "Step that relieves it", "Above the Plan's threshold: more keys where the scope multiplies "
            "the limit, more replicas, else the ways to raise the limit", field("action"), kind="text", width=60),
        col("action_usd", "Step cost [USD/month]", "The added replicas' GPU-hours (keys and tiers: not priced)",
            field("action_usd")),
        col("util_after", "Util after step [x]", "The highest utilization once the step is taken",
            field("util_after"), PCT, width=9),
    )


FORECAST = Table(
    name="tblForecast",
    sheet=SHEET,
    rows=FORECAST_MONTHS,
    header_row=4,
    title="Forecast: the plan month by month (bill by token class, what binds, the step that relieves it)",
    note="Month 1 is the plan as entered; demand grows at the Plan's monthly growth unless you type a demand index. "
    "Linear utilizations scale with demand; TTFT and TPOT are recomputed by the serving model at the month's load.",
    columns=_month_columns(),
)
assert tuple(c.key for c in FORECAST.columns) == _MONTH_KEYS


# ---- commitments: reserved GPUs ---------------------------------------------------------------------------------

COMMIT_HEADER_ROW = FORECAST_BACKENDS.last_row + 4
_COMMIT_KEYS = ("fleet", "gpu", "gpus", "on_demand_usd_per_gpu_hour", "reserved_usd_per_gpu_hour",
                "reserved_3y_usd_per_gpu_hour", "on_demand_monthly_usd", "reserved_monthly_usd", "saving_monthly_usd",
                "saving_3y_monthly_usd", "break_even_fraction", "break_even_month")
_COMMIT_REF = Table(name="tblCommitments", sheet=SHEET, rows=FLEET_ROWS, header_row=COMMIT_HEADER_ROW,
                    columns=tuple(C(key=k, header=k, help=k) for k in _COMMIT_KEYS))


def _commit_columns() -> tuple[Column, ...]:
    me = lambda k: Ref(_COMMIT_REF, k)  # noqa: E731
    spec = lambda k: Ref(SPECS, k)  # noqa: E731
    first = me("fleet")

    def priced(body: Expr) -> Expr:
        """``body`` where a reserved price was found; the words, not an error, where none is public."""
        return fn("IF", fn("ISNUMBER", me("reserved_usd_per_gpu_hour")), body, "no public price")

    def col(key: str, header: str, help: str, body: Expr, fmt: str = USD, kind: str = "number",
            width: float = 13.0) -> Column:
        return _col(first, key, header, help, body, fmt, kind, width)

    return (
        C(key="fleet", header="Fleet [name]", help="The Fleet row", kind="text", width=20,
          formula=fn("IF", Ref(FLEET, "name").eq(""), "", Ref(FLEET, "name"))),
        col("gpu", "GPU", "The fleet's GPU", _text(Ref(FLEET, "gpu")), kind="text"),
        col("gpus", "GPUs [count]", "Specs", spec("gpus"), "0"),
        col("on_demand_usd_per_gpu_hour", "On demand [USD/GPU-h]", "Specs (Fleet price, else the GPUs sheet)",
            spec("usd_per_gpu_hour"), "0.00"),
        col("reserved_usd_per_gpu_hour", "Reserved 1 year [USD/GPU-h]", "On demand x the bundled reserved / "
            "on-demand ratio of the GPU (commitments.json, one source for both); a refusal where none is public",
            udf("RESERVED_USD_PER_GPU_HOUR", me("gpu"), me("on_demand_usd_per_gpu_hour"), 12), "0.00", width=16),
        col("reserved_3y_usd_per_gpu_hour", "Reserved 3 years [USD/GPU-h]", "On demand x the bundled 3-year reserved / "
            "on-demand ratio of the GPU; a refusal where none is public (none was found for any GPU)",
            udf("RESERVED_USD_PER_GPU_HOUR", me("gpu"), me("on_demand_usd_per_gpu_hour"), 36), "0.00", width=16),
        col("on_demand_monthly_usd", "On demand [USD/month]", "Specs: GPU-hours of a month on demand",
            spec("cost_monthly_usd")),
        col("reserved_monthly_usd", "Reserved [USD/month]", "The same GPU-hours at the reserved price",
            priced(udf("SELFHOST_USD_MONTHLY", me("reserved_usd_per_gpu_hour"), me("gpus")))),
        col("saving_monthly_usd", "Saving 1 year [USD/month]", "On demand - reserved, for an always-on fleet",
            priced(me("on_demand_monthly_usd") - me("reserved_monthly_usd"))),
        col("saving_3y_monthly_usd", "Saving 3 years [USD/month]", "On demand - the 3-year reserved price, for an "
            "always-on fleet (RESERVED_SAVING_MONTHLY)", fn("IF", fn("ISNUMBER", me("reserved_3y_usd_per_gpu_hour")),
                                                           udf("RESERVED_SAVING_MONTHLY", me("gpus"),
                                                               me("on_demand_usd_per_gpu_hour"),
                                                               me("reserved_3y_usd_per_gpu_hour"), 1),
                                                           "no public price")),
        col("break_even_fraction", "Break-even [share of hours]", "Reserved / on demand: the share of the term's "
            "hours the GPUs must be busy for the reservation to pay", priced(udf(
                "RESERVED_BREAK_EVEN", me("reserved_usd_per_gpu_hour"), me("on_demand_usd_per_gpu_hour"))), PCT),
        col("break_even_month", "Pays from month [#]", "An always-on fleet is busy every hour: the month its share "
            "of hours (1) reaches the break-even share", priced(udf("BREAK_EVEN_MONTH", 1, me("break_even_fraction"),
                                                                    PlanValue("monthly_growth"))), "0"),
    )


COMMITMENTS = Table(name="tblCommitments", sheet=SHEET, rows=FLEET_ROWS, header_row=COMMIT_HEADER_ROW,
                    columns=_commit_columns())
assert tuple(c.key for c in COMMITMENTS.columns) == _COMMIT_KEYS

TITLES: list[tuple[Table, str]] = [  # pairs, not a dict: hashing a table hashes every formula it holds
    (ROUTE_DEMAND, "Per route, month by month: your own demand multiple (blank: the route's own growth, else the "
     "month's)"),
    (FORECAST_ROUTES, "Per route, month 1: the API bill by token class and the highest utilization linear in demand"),
    (FORECAST_BACKENDS, "Per backend, month 1: what FORECAST_MONTH scales (formulas; locked)"),
    (COMMITMENTS, "Commitments: reserved GPUs against on demand, per fleet (1 and 3 years)"),
]
MONTH_FIELD_KEYS = MONTH_FIELDS


def fixed_cells() -> dict[tuple[str, str], Any]:
    """The month numbers 1..36 and the bundled reserved GPU quotes (template content)."""
    out: dict[tuple[str, str], Any] = {(SHEET, FORECAST.cell("month", i)): float(i + 1) for i in range(FORECAST_MONTHS)}
    out.update(quote_cells())
    return out


def forecast_rows(values: dict[tuple[str, str], Any]) -> tuple[dict[str, Any], ...]:
    """The Forecast sheet's months as ``planner size`` reports them: a view of the evaluated cells (one row per month
    of the horizon; ``route`` is the route at the binding constraint)."""
    def cell(key: str, i: int) -> Any:
        v = values.get((SHEET, FORECAST.cell(key, i)))
        return v if v is None or isinstance(v, (int, float, str)) else str(v)

    out = []
    for i in range(FORECAST.rows):
        if cell("multiplier", i) in ("", None):
            continue
        out.append({
            "month": i + 1, "route": cell("route", i), "monthly_cost_usd": cell("total_usd", i),
            "binding": cell("binding", i), "max_utilization": cell("max_util", i), "action": cell("action", i),
            "demand_multiplier": cell("multiplier", i),
            "bill_usd": {k: cell(f"{k}_usd", i) for k in ("input", "cache_read", "cache_write", "output", "gpu")},
            "action_cost_usd": cell("action_usd", i), "utilization_after_action": cell("util_after", i),
        })
    return tuple(out)


def render_by_route(rows: tuple[dict[str, Any], ...]) -> str:
    """The per-route forecast as ``planner size --months N`` prints it: per route, month by month, the bill and its
    backend's utilization and constraint (the steps are in the plan-wide rows above)."""
    lines = ["forecast per route (tblForecastByRoute): month: bill USD/month, its backend's utilization and binding"]
    for route in dict.fromkeys(r["route"] for r in rows):
        mine = [r for r in rows if r["route"] == route]
        lines.append(f"  {route} ({mine[0]['backend']}):")
        for r in mine:
            u = r["max_utilization"]
            cost = r["monthly_cost_usd"]
            lines.append(f"    {r['month']:>2} " + (f"{cost:>12,.0f}" if isinstance(cost, (int, float)) else
                                                  f"{cost!s:>12}") + (f" {u:>6.0%}" if isinstance(u, (int, float))
                                                                      else f" {u!s:>6}") + f"  {r['binding']}")
    return "\n".join(lines)


def render_forecast(rows: tuple[dict[str, Any], ...]) -> str:
    """The forecast as ``planner size --months N`` prints it."""
    def usd(x: Any) -> str:
        return f"{x:>12,.0f}" if isinstance(x, (int, float)) else f"{x!s:>12}"

    def pct(x: Any) -> str:
        text = utilization_text(x, decimals=0) if isinstance(x, (int, float)) else str(x)
        return f"{text:>6}" if len(text) < 7 else f" {text}"

    lines = ["forecast (Forecast sheet): month, demand x (the Plan's growth; routes with their own growth rate grow "
             "at it), bill USD/month (API input, cache reads, cache writes, output, GPUs, total), max util, binds, "
             "step", ""]
    for r in rows:
        b = r["bill_usd"]
        x = r["demand_multiplier"]
        lines.append(f"  {r['month']:>2} {x:5.2f}x" + "".join(usd(b[k]) for k in ("input", "cache_read",
                     "cache_write", "output", "gpu")) + usd(r["monthly_cost_usd"]) + pct(r["max_utilization"])
                     + f"  {r['binding']}")
        if r["action"] != "none":
            lines.append(f"       step (+{usd(r['action_cost_usd']).strip()} USD/month): {r['action']}")
    return "\n".join(lines)


# ---- commitments: provisioned throughput against pay-as-you-go -----------------------------------------------

PROVISIONED_HEADER_ROW = COMMIT_HEADER_ROW + FLEET_ROWS + 4
_PT_KEYS = ("backend", "provider", "model", "basis", "itpm_demand", "otpm_demand", "units", "payg_monthly_usd",
            "provisioned_monthly_usd",
            "break_even_multiple", "break_even_month")
_PT_REF = Table(name="tblProvisioned", sheet=SHEET, rows=PROVIDER_ROWS, header_row=PROVISIONED_HEADER_ROW,
                columns=tuple(C(key=k, header=k, help=k) for k in _PT_KEYS))


NO_PRICE = "no price: quote on Providers"
"""What tblProvisioned shows where neither a quote nor a bundled public price sizes the units."""


def _provisioned_columns() -> tuple[Column, ...]:
    me = lambda k: Ref(_PT_REF, k)  # noqa: E731
    p = lambda k: Ref(PROVIDERS, k)  # noqa: E731
    first = me("backend")
    on = lambda k: udf("BACKEND_SUM", p("name"), Cells(ROUTES, "backend"), Cells(RESULTS, k))  # noqa: E731

    def col(key: str, header: str, help: str, body: Expr, fmt: str = USD, kind: str = "number",
            width: float = 13.0) -> Column:
        return _col(first, key, header, help, body, fmt, kind, width)

    return (
        C(key="backend", header="Backend [name]", help="The Providers row", kind="text", width=20,
          formula=fn("IF", p("name").eq(""), "", p("name"))),
        col("provider", "Provider", "Providers", _text(p("provider")), kind="text"),
        col("model", "Model", "Providers", _text(p("model")), kind="text"),
        col("basis", "Priced from", "Where the units and their price come from: your quote on Providers (its "
            "throughput per unit, its price per unit-hour, or both) or the bundled public offer",
            fn("IF", fn("AND", fn("ISNUMBER", p("pt_input_tpm_per_unit")), fn("ISNUMBER", p("pt_output_tpm_per_unit"))),
               fn("IF", fn("ISNUMBER", p("pt_usd_per_unit_hour")), "your quote", "your throughput, bundled price"),
               fn("IF", fn("ISNUMBER", p("pt_usd_per_unit_hour")), "bundled throughput, your price",
                  "bundled offer")), kind="text", width=16),
        col("itpm_demand", "Peak input [tokens/min]", "ITPM demand of every route on the backend (Results, as the "
            "provider counts input)", on("itpm_demand"), "#,##0"),
        col("otpm_demand", "Peak output [tokens/min]", "OTPM demand of every route on the backend (Results)",
            on("otpm_demand"), "#,##0"),
        col("units", "Units at peak [PTU, GSU or MU]", "Your quote where both throughput cells are typed on "
            "Providers (PROVISIONED_UNITS_QUOTED: the larger of the peak ITPM and OTPM over a unit's); else "
            "PROVISIONED_UNITS for the bundled offer (Azure OpenAI: PTU; Gemini or Vertex: Vertex AI GSU); a refusal "
            "where neither exists (Bedrock: not published, type the account manager's quote)",
            fn("IF", fn("AND", fn("ISNUMBER", p("pt_input_tpm_per_unit")), fn("ISNUMBER", p("pt_output_tpm_per_unit"))),
               udf("PROVISIONED_UNITS_QUOTED", me("itpm_demand"), me("otpm_demand"), p("pt_input_tpm_per_unit"),
                   p("pt_output_tpm_per_unit")),
               udf("PROVISIONED_UNITS", me("provider"), me("model"), me("itpm_demand"), me("otpm_demand"))), "0",
            width=16),
        col("payg_monthly_usd", "Pay-as-you-go [USD/month]", "Month 1: the API cost of every route on the backend",
            on("cost_monthly_usd")),
        col("provisioned_monthly_usd", "Provisioned [USD/month]", "Those units at your quoted price per unit-hour "
            "(Providers; x 730.5 h) or on the bundled offer's monthly reservation: the break-even volume of "
            "pay-as-you-go spend", fn("IF", fn("ISNUMBER", me("units")), fn(
                "IF", fn("ISNUMBER", p("pt_usd_per_unit_hour")),
                udf("PROVISIONED_USD_MONTHLY_QUOTED", me("units"), p("pt_usd_per_unit_hour")),
                udf("PROVISIONED_USD_MONTHLY", me("provider"), me("units"), "1_month")), NO_PRICE)),
        col("break_even_multiple", "Break-even demand [x month 1]", "Provisioned / pay-as-you-go: the demand multiple "
            "at which the units pay (below 1: already in month 1)",
            fn("IF", fn("ISNUMBER", me("provisioned_monthly_usd")), udf(
                "BREAK_EVEN_MULTIPLE", me("payg_monthly_usd"), me("provisioned_monthly_usd")), NO_PRICE),
            "0.00"),
        col("break_even_month", "Pays from month [#]", "The first month the forecast's pay-as-you-go spend reaches "
            "that cost (units held fixed; 9999: never at this growth)",
            fn("IF", fn("ISNUMBER", me("provisioned_monthly_usd")), udf(
                "BREAK_EVEN_MONTH", me("payg_monthly_usd"), me("provisioned_monthly_usd"),
                PlanValue("monthly_growth")), NO_PRICE), "0"),
    )


PROVISIONED = Table(name="tblProvisioned", sheet=SHEET, rows=PROVIDER_ROWS, header_row=PROVISIONED_HEADER_ROW,
                    columns=_provisioned_columns())
assert tuple(c.key for c in PROVISIONED.columns) == _PT_KEYS
TITLES.append((PROVISIONED, "Commitments: provisioned throughput (Azure PTU, Vertex GSU, Bedrock MU) against "
               "pay-as-you-go; your quote on Providers where typed (Bedrock publishes no price)"))


# ---- commitments: the bundled reserved GPU quotes, per GPU-hour as published -----------------------------------

_QUOTES = forecast_data.reserved_quotes()
QUOTE_ROWS = len(_QUOTES) + 2
"""The bundled quotes and two blank rows for the planner's own."""
QUOTES_HEADER_ROW = PROVISIONED_HEADER_ROW + PROVIDER_ROWS + 4
_QUOTE_KEYS = ("gpu", "vendor", "term_months", "on_demand_usd_per_gpu_hour", "reserved_usd_per_gpu_hour",
               "saving_fraction", "break_even_fraction", "saving_per_gpu_month_usd", "source", "as_of")
_QUOTES_REF = Table(name="tblReservedQuotes", sheet=SHEET, rows=QUOTE_ROWS, header_row=QUOTES_HEADER_ROW,
                    columns=tuple(C(key=k, header=k, help=k) for k in _QUOTE_KEYS))


def _quote_columns() -> tuple[Column, ...]:
    me = lambda k: Ref(_QUOTES_REF, k)  # noqa: E731
    first = me("gpu")
    od, res = me("on_demand_usd_per_gpu_hour"), me("reserved_usd_per_gpu_hour")
    return (
        C(key="gpu", header="GPU [name]", help="GPU name (GPUs sheet)", kind="text", width=12),
        C(key="vendor", header="Offer", help="Who sells it and how", kind="text", width=20),
        C(key="term_months", header="Term [months]", help="12 (1 year), 36 (3 years); blank: the term is not "
          "stated (a 'from' rate)", minimum=1, maximum=120, number_format="0", width=9),
        C(key="on_demand_usd_per_gpu_hour", header="On demand [USD/GPU-h]", help="The same seller's on-demand price",
          minimum=0, maximum=1000, number_format="0.00", width=11),
        C(key="reserved_usd_per_gpu_hour", header="Reserved [USD/GPU-h]", help="The reserved price as published",
          minimum=0, maximum=1000, number_format="0.00", width=11),
        _col(first, "saving_fraction", "Saving [share]", "1 - reserved / on demand",
             lit(1) - res / od, PCT, width=9),
        _col(first, "break_even_fraction", "Break-even [share of hours]", "Reserved / on demand: busier than this, "
             "the reservation pays", udf("RESERVED_BREAK_EVEN", res, od), PCT, width=11),
        _col(first, "saving_per_gpu_month_usd", "Saving [USD/GPU-month]", "(on demand - reserved) x 730.5 h for a "
             "GPU busy every hour (RESERVED_SAVING_MONTHLY)", udf("RESERVED_SAVING_MONTHLY", 1, od, res, 1),
             width=11),
        C(key="source", header="Source", help="Where the prices were published", kind="text", width=16),
        C(key="as_of", header="As of", help="When they were read", kind="text", width=11),
    )


RESERVED_QUOTES = Table(name="tblReservedQuotes", sheet=SHEET, rows=QUOTE_ROWS, header_row=QUOTES_HEADER_ROW,
                        columns=_quote_columns())
assert tuple(c.key for c in RESERVED_QUOTES.columns) == _QUOTE_KEYS
TITLES.append((RESERVED_QUOTES, "Commitments: every bundled reserved GPU quote, per GPU-hour as published (3-year: "
               "none public; add your own quotes below them)"))


# ---- per route per month ------------------------------------------------------------------------------------

BY_ROUTE_HEADER_ROW = QUOTES_HEADER_ROW + QUOTE_ROWS + 4
BY_ROUTE_FIELDS = ("usd", "util", "binds")


def _by_route_columns() -> tuple[Column, ...]:
    r = lambda k: Ref(ROUTES, k)  # noqa: E731
    first = Ref(RESULTS, "route")

    def route_month(field: str, x: Expr, m: int) -> Expr:
        if field == "usd":  # the route's own bill
            return udf("FORECAST_ROUTE_MONTH", field, x, PlanValue("utilization_threshold"),
                       Block(FORECAST_BACKENDS), Ref(FORECAST_ROUTES, "route"), lit(m), Block(FORECAST_ROUTES),
                       Block(ROUTE_DEMAND))
        # its backend's figure: one call per backend and month, whichever of its routes asks (the memo shares it)
        return udf("FORECAST_BACKEND_MONTH", field, x, PlanValue("utilization_threshold"), Block(FORECAST_BACKENDS),
                   r("backend"), lit(m), Block(FORECAST_ROUTES), Block(ROUTE_DEMAND))

    cols: list[Column] = [
        C(key="route", header="Route [name]", help="Route name (from Routes)", kind="text", width=16,
          formula=fn("IF", r("name").eq(""), "", r("name"))),
        _col(first, "backend", "Backend", "The route's backend (Routes)", _text(r("backend")), kind="text", width=14),
    ]
    for m in range(1, FORECAST_MONTHS + 1):
        x = At(_FORECAST_REF, "multiplier", m - 1)

        def in_horizon(body: Expr, x: Expr = x) -> Expr:
            return fn("IF", x.eq(""), "", body)

        cols += [
            _col(first, f"m{m:02d}_usd", f"M{m} bill [USD/month]", f"Month {m}: the route's bill (API: month 1's x "
                 "its own demand multiple; a fleet's route: its compute share of the month's fleet, GPU-hours plus "
                 "the replicas its step adds; FORECAST_ROUTE_MONTH)", in_horizon(route_month("usd", x, m)), USD,
                 width=11),
            _col(first, f"m{m:02d}_util", f"M{m} util [x]", f"Month {m}: the highest utilization of the route's "
                 "backend at the month's demand (FORECAST_BACKEND_MONTH)", in_horizon(route_month("max_util", x, m)),
                 PCT, width=7),
            _col(first, f"m{m:02d}_binds", f"M{m} binds", f"Month {m}: that constraint (the step that relieves it: "
                 "the month's row above, by backend)", in_horizon(route_month("binding", x, m)), kind="text",
                 width=7),
        ]
    return tuple(cols)


FORECAST_BY_ROUTE = Table(name="tblForecastByRoute", sheet=SHEET, rows=ROUTE_ROWS, header_row=BY_ROUTE_HEADER_ROW,
                          columns=_by_route_columns())
TITLES.append((FORECAST_BY_ROUTE, "Per route, month by month: the route's bill, its backend's highest utilization and "
                "what binds (the step that relieves it: the month's row at the top, by backend)"))


def forecast_by_route(values: dict[tuple[str, str], Any]) -> tuple[dict[str, Any], ...]:
    """``planner size``'s JSON ``forecast``: one row per route per month of the horizon, a view of
    ``tblForecastByRoute`` (bill, utilization, binding) and of the month's step for the route's backend
    (``tblForecast``'s action: each backend's step begins with its name)."""
    t = FORECAST_BY_ROUTE

    def cell(table: Table, key: str, i: int) -> Any:
        v = values.get((table.sheet, table.cell(key, i)))
        return v if v is None or isinstance(v, (int, float, str)) else str(v)

    out = []
    for m in range(1, FORECAST_MONTHS + 1):
        if cell(FORECAST, "multiplier", m - 1) in ("", None):
            continue
        names = {str(cell(t, "backend", i)).strip().lower() for i in range(t.rows)}
        steps = _steps_by_backend(cell(FORECAST, "action", m - 1), names)
        for i in range(t.rows):
            route = cell(t, "route", i)
            if route in ("", None):
                continue
            backend = cell(t, "backend", i) or ""
            out.append({"month": m, "route": route, "backend": backend,
                        "monthly_cost_usd": cell(t, f"m{m:02d}_usd", i),
                        "binding": cell(t, f"m{m:02d}_binds", i), "max_utilization": cell(t, f"m{m:02d}_util", i),
                        "action": steps.get(str(backend).strip().lower(), "none")})
    return tuple(out)


def _steps_by_backend(action: Any, backends: set[str]) -> dict[str, str]:
    """The month's action text split into each backend's step (``"name: ..."``, joined by ``"; "``); ``backends``:
    the plan's backend names, lower case (a part that starts with none of them continues the previous step)."""
    out: dict[str, str] = {}
    last = None
    for part in str(action or "").split("; "):
        head = part.partition(": ")[0].strip().lower()
        if head in backends:
            last = head
            out[last] = part
        elif last is not None:
            out[last] += "; " + part
    return out


def quote_cells() -> dict[tuple[str, str], Any]:
    """The bundled quotes (planner/data/commitments.json) as the table's prefilled rows (template content)."""
    out: dict[tuple[str, str], Any] = {}
    for i, q in enumerate(_QUOTES):
        for key in ("gpu", "vendor", "term_months", "on_demand_usd_per_gpu_hour", "reserved_usd_per_gpu_hour",
                    "source", "as_of"):
            v = q[key]
            out[(SHEET, RESERVED_QUOTES.cell(key, i))] = float(v) if isinstance(v, (int, float)) else v
    return out


def commitment_rows(values: dict[tuple[str, str], Any]) -> dict[str, list[dict[str, Any]]]:
    """The three commitment tables as ``planner size --months`` reports them (a view of the evaluated cells; the
    quotes table's prefilled rows are template content)."""
    values = {**quote_cells(), **values}
    def rows(t: Table) -> list[dict[str, Any]]:
        out = []
        for i in range(t.rows):
            row = {c.key: values.get((t.sheet, t.cell(c.key, i))) for c in t.columns}
            if row[t.columns[0].key] in ("", None):
                continue
            out.append({k: v if v is None or isinstance(v, (int, float, str)) else str(v) for k, v in row.items()})
        return out

    return {"reserved_gpus": rows(COMMITMENTS), "provisioned_throughput": rows(PROVISIONED),
            "reserved_quotes": rows(RESERVED_QUOTES)}


def render_commitments(tables: dict[str, list[dict[str, Any]]]) -> str:
    """The commitment tables as ``planner size --months N`` prints them."""
    def num(x: Any, fmt: str) -> str:
        # a refusal (no public price) prints short; the JSON and the sheet carry its reason
        return format(x, fmt) if isinstance(x, (int, float)) else "not public"

    lines = ["commitments (Forecast sheet; 'not public': no public price, the reason is in the cell and the JSON)"]
    for r in tables.get("reserved_gpus", []):
        lines.append(f"  reserved, {r['fleet']} ({r['gpu']}): 1 year {num(r['reserved_usd_per_gpu_hour'], '.2f')}, "
                     f"3 years {num(r.get('reserved_3y_usd_per_gpu_hour'), '.2f')} vs "
                     f"{num(r['on_demand_usd_per_gpu_hour'], '.2f')} USD/GPU-h on demand; saves "
                     f"{num(r['saving_monthly_usd'], ',.0f')} (1 year), {num(r.get('saving_3y_monthly_usd'), ',.0f')} "
                     f"(3 years) USD/month; 1-year break-even at "
                     f"{num(r['break_even_fraction'], '.0%')} of the hours")
    for r in tables.get("provisioned_throughput", []):
        lines.append(f"  provisioned throughput, {r['backend']} ({r['provider']} {r['model']}; {r['basis']}): units "
                     f"{num(r['units'], '.0f')}; pay-as-you-go {num(r['payg_monthly_usd'], ',.0f')} vs provisioned "
                     f"{num(r['provisioned_monthly_usd'], ',.0f')} USD/month; pays at "
                     f"{num(r.get('break_even_multiple'), '.2f')} x month 1's demand, from month "
                     f"{num(r['break_even_month'], '.0f')}")
    for r in tables.get("reserved_quotes", []):
        term = f"{num(r['term_months'], '.0f')} months" if isinstance(r["term_months"], (int, float)) else \
            "term not stated"
        lines.append(f"  reserved quote, {r['gpu']} {r['vendor']} ({term}): "
                     f"{num(r['reserved_usd_per_gpu_hour'], '.2f')} vs "
                     f"{num(r['on_demand_usd_per_gpu_hour'], '.2f')} USD/GPU-h on demand, saves "
                     f"{num(r['saving_fraction'], '.0%')}")
    return "\n".join(lines)
