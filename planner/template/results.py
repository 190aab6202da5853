"""The Results and Summary sheets: every computed column of the plan, as expressions over the input tables.

The method follows the reference formula set (docs/method.md): demand D1-D4, provider-limit utilization,
KV memory M2-M11, decode time P1-P2, cost C1 and the decision C7-C8. This module is pure: no I/O.
"""

from __future__ import annotations

from typing import Any

from planner.decision import UTIL_INFINITE
from planner.defaults import DEFAULT_BLOCK_SIZE
from planner.demand import MINUTES_PER_DAY
from planner.excel.expr import Block, Cells, Expr, Ref, fn, lit, lookup, udf, when_filled
from planner.excel.tables import Column, Table, col_letter
from planner.sheet.forecast import ROUTE_KEYS as FORECAST_ROUTE_KEYS
from planner.template.layout import (
    FLEET,
    FORECAST_ROUTES_HEADER_ROW,
    LISTS_TABLE,
    PROVIDERS,
    ROUTE_ROWS,
    ROUTES,
    SPECS,
    C,
    PlanValue,
)
from planner.template.profiles import day_ratio, month_ratio


def _r(key: str) -> Expr:
    return Ref(ROUTES, key)


def _res(key: str) -> Expr:
    return Ref(RESULTS_REF, key)


def _fo(key: str) -> Expr:
    return Ref(FAILOVER_REF, key)


def _at(table: Table, key: str, row: Expr) -> Expr:
    """``INDEX(<table column>, row)``: a fact of the backend whose row number a Results column holds."""
    return fn("INDEX", Cells(table, key), row)


def _spec(kind: str, row: Expr) -> Expr:
    """The fleet's model or GPU as the catalog sheets give it (its Specs row, see :data:`SPECS`)."""
    return _at(SPECS, f"{kind}_spec", row)


def _row_of(table: Table, backend: Expr) -> Expr:
    """The backend's row number on ``table`` (Providers or Fleet), or "" when it is not there."""
    return fn("IFERROR", fn("MATCH", backend, Cells(table, "name")), "")


def _type(provider_row: Expr, fleet_row: Expr) -> Expr:
    return fn("IF", fn("ISNUMBER", provider_row), "provider", fn("IF", fn("ISNUMBER", fleet_row), "fleet", "unknown"))


def _counts_cached(kind: Expr, prow: Expr) -> Expr:
    return fn("IF", kind.eq("provider"), _at(PROVIDERS, "cached_reads_count_itpm", prow), True)


def _reserved(kind: Expr, prow: Expr) -> Expr:
    """The route's max_tokens where the backend reserves it at admission (D3), else "" (actual output counts)."""
    return fn("IF", kind.eq("provider"),
              fn("IF", _at(PROVIDERS, "reserves_max_tokens", prow), _r("max_tokens"), ""), "")


def _weight(kind: Expr, prow: Expr) -> Expr:
    w = _at(PROVIDERS, "output_token_weight", prow)
    return fn("IF", kind.eq("provider"), fn("IF", w.gt(0), w, 1), 1)


def _demands(kind: Expr, counts: Expr, reserved: Expr, weight: Expr) -> dict[str, Expr]:
    """The route's demand per limit as one backend counts it (D1-D4): the counting rules are columns beside it."""
    qps, inp, out = _r("peak_qps"), _r("avg_input_tokens"), _r("avg_output_tokens")
    hit, writes, avg = _r("cache_hit_rate"), _r("cache_write_tokens"), day_ratio()
    tpm = udf("CAPACITY_TPM", qps, inp, out, hit, writes, counts, reserved, weight)
    return {
        "rpm": udf("CAPACITY_RPM", qps),
        "tpm": tpm,
        "itpm": udf("CAPACITY_ITPM", qps, inp, hit, writes, counts),
        "otpm": udf("CAPACITY_OTPM", qps, out),
        # daily volume at the average rate: a day holds one peak, not 1,440 of them
        "rpd": udf("CAPACITY_RPD", qps * avg),
        "tpd": tpm * avg * MINUTES_PER_DAY,
    }


SPECS_USED = Table(name=SPECS.name, sheet=SPECS.sheet, rows=SPECS.rows, header_row=SPECS.header_row,
                   columns=SPECS.columns[:3])
"""The Specs columns the fleet functions read (name, model and GPU as used): an Excel error elsewhere on the Specs
sheet (a fleet's price, say) is not an argument of theirs."""
assert tuple(c.key for c in SPECS_USED.columns) == ("fleet", "model_spec", "gpu_spec")


def _on_fleet(name: str, fleet: Expr, *args: Any) -> Expr:
    """A ``FLEET_*`` function of the fleet named ``fleet``: it reads the fleet's Fleet and Specs rows itself."""
    return udf(name, fleet, Block(FLEET), Block(SPECS_USED), *args)


def _on_provider(name: str, provider: Expr, *args: Any) -> Expr:
    """A ``PROVIDER_*`` function of the provider named ``provider``: it reads the provider's row itself."""
    return udf(name, provider, Block(PROVIDERS), *args)


def route_tpot_slo() -> Expr:
    """The route's TPOT SLO as the sustainable rate reads it: 0 (none) for a route of one output token, whose only
    token is the first (TTFT alone binds it)."""
    return fn("IF", _r("avg_output_tokens").le(1), 0, _r("tpot_slo_s"))


def _unshared_context() -> Expr:
    """M10: the mean context an in-flight request holds alone, ``I − P + O/2`` with ``P`` the route's shared prefix
    (reference-counted blocks, held once by the prefix retention); with no shared prefix given, ``I + O/2``: a
    cache hit from the request's own history (a conversation) is not shared with the other requests in flight."""
    inp = _r("avg_input_tokens")
    shared = fn("IF", fn("ISNUMBER", _r("prefix_tokens")), fn("MIN", _r("prefix_tokens"), inp), 0)
    return inp - shared + _r("avg_output_tokens") / 2


def _prefixes() -> tuple[Expr, Expr]:
    """The route's shared prefix kept warm (its Results column: blank Routes cell, input x hit rate) and how many
    (blank: 1), M10."""
    return _res("prefix_tokens"), fn("IF", fn("ISNUMBER", _r("distinct_prefixes")), _r("distinct_prefixes"), 1)


def _kv_share(fleet: Expr) -> Expr:
    """M10/M11 ``FLEET_KV_FIT``: the route's in-flight KV at its unshared mean context plus its prefixes kept warm,
    over the KV budget of ``fleet`` (one function, so a refusal reaches KV util unchanged)."""
    return _on_fleet("FLEET_KV_FIT", fleet, _r("peak_qps"), _res("e2e_s"), _unshared_context(), *_prefixes())


def _prefix_share(fleet: Expr) -> Expr:
    """M10 ``FLEET_PREFIX_KV_FIT``: the route's shared prefixes kept warm on every replica of ``fleet``."""
    return _on_fleet("FLEET_PREFIX_KV_FIT", fleet, *_prefixes())


def _compute_share(fleet: Expr) -> Expr:
    """P2/P4 ``COMPUTE_UTILIZATION``: the route's FLOP/s at peak over the achieved FLOP/s of ``fleet``."""
    return _on_fleet("FLEET_COMPUTE_UTILIZATION", fleet, _r("peak_qps"), _r("avg_input_tokens"),
                     _r("avg_output_tokens"), _r("cache_hit_rate"))


def _on(backend: Expr, column: Expr) -> Expr:
    """``BACKEND_SUM``: a per-route column summed over the routes on ``backend`` (they share its limits)."""
    return udf("BACKEND_SUM", backend, Cells(ROUTES, "backend"), column)


def _limit_util(kind: Expr, backend: Expr, limit_key: str, demand: Expr) -> Expr:
    """A provider limit's utilization: ``demand / (limit x keys)`` where the limit's scope lets keys multiply it,
    ``demand / limit`` where it does not; 0 where the backend has no such limit (``PROVIDER_LIMIT_UTILIZATION``)."""
    return fn("IF", kind.eq("provider"), _on_provider("PROVIDER_LIMIT_UTILIZATION", backend, limit_key, demand), 0)


def _burst_util(kind: Expr, backend: Expr, burst: Expr) -> Expr:
    """The RPM limit in its enforcement window: the backend's requests in the busiest window (``burst`` x the
    average window at the peak minute) over the window's share of the limit (``PROVIDER_BURST_UTILIZATION``)."""
    demand = _on(backend, Cells(RESULTS_REF, "rpm_demand"))
    return fn("IF", kind.eq("provider"), _on_provider("PROVIDER_BURST_UTILIZATION", backend, demand, burst), 0)


LIMIT_KEYS = ("rpm", "tpm", "itpm", "otpm", "rpd", "tpd")

RESULT_KEYS = (
    "route", "provider_row", "fleet_row", "backend_type", "counts_cached_reads", "reserved_max_tokens",
    "output_weight", *(f"{k}_demand" for k in LIMIT_KEYS),
    "input_tokens_per_s", "output_tokens_per_s", "cached_tokens_per_s", "fleet_qps", "replica_rate",
    "mix_input_tokens", "mix_output_tokens", "mix_cache_hit_rate", "ttft_at_load_s", "tpot_at_load_s",
    "offline_rate", "sustainable_rate", "e2e_s", "concurrency_needed", "prefix_tokens", "kv_share", "prefix_kv_share",
    "compute_share",
    "burst_factor", "rpm_util", "tpm_util", "itpm_util", "otpm_util", "rpd_util", "tpd_util", "burst_util", "kv_util",
    "compute_util", "load_util", "ttft_util", "tpot_util", "limit_scope", "kv_bytes_per_request", "max_concurrency",
    "batch_per_replica",
    "cost_monthly_no_cache_usd", "cost_monthly_usd", "failover_util", "failover_binding", "failover_ok",
    "max_util", "binding_constraint", "headroom_multiple", "months_to_breach", "status",
)
UTILIZATION_KEYS = ("rpm_util", "tpm_util", "itpm_util", "otpm_util", "rpd_util", "tpd_util", "burst_util", "kv_util",
                    "compute_util", "load_util", "ttft_util", "tpot_util")

FAILOVER_KEYS = (
    "route", "failover", "receiver_provider_row", "receiver_fleet_row", "receiver_type", "counts_cached_reads",
    "reserved_max_tokens", "output_weight", *(f"{k}_demand" for k in LIMIT_KEYS), "kv_share", "prefix_kv_share",
    "compute_share", "outage_qps", "outage_input_tokens_per_s", "outage_output_tokens_per_s",
    "outage_cached_tokens_per_s", "offline_rate", "sustainable_rate",
    *(f"outage_{k}_util" for k in (*LIMIT_KEYS, "kv", "compute", "load")),
    "outage_util", "outage_binding", "outage_ok",
)
# The layouts (keys -> letters) exist before the formulas, which refer to columns of their own and other tables.
RESULTS_REF = Table(name="tblResults", sheet="Results", rows=ROUTE_ROWS,
                    columns=tuple(C(key=k, header=k, help=k) for k in RESULT_KEYS))
FAILOVER_REF = Table(name="tblFailover", sheet="Failover", rows=ROUTE_ROWS,
                     columns=tuple(C(key=k, header=k, help=k) for k in FAILOVER_KEYS))
FORECAST_ROUTES_REF = Table(name="tblForecastRoutes", sheet="Forecast", rows=ROUTE_ROWS,
                         header_row=FORECAST_ROUTES_HEADER_ROW,
                         columns=tuple(C(key=k, header=k, help=k) for k in FORECAST_ROUTE_KEYS))
"""The Forecast sheet's route table (planner.template.forecast builds it): months to breach reads each route's
shares of the linear constraints and its own growth there."""

UTIL_FMT = "0.00"


def _col(route: Expr, key: str, header: str, help: str, body: Expr, fmt: str = "#,##0", kind: str = "number",
         width: float = 14.0) -> Column:
    formula = body if key == "route" else when_filled(route, body)
    return C(key=key, header=header, help=help, formula=formula, number_format=fmt, kind=kind, width=width)


def _results_columns() -> tuple[Column, ...]:
    qps, inp, out = _r("peak_qps"), _r("avg_input_tokens"), _r("avg_output_tokens")
    backend, kind, prow, frow = _r("backend"), _res("backend_type"), _res("provider_row"), _res("fleet_row")

    def col(key: str, header: str, help: str, body: Expr, fmt: str = "#,##0", kind: str = "number",
            width: float = 14.0) -> Column:
        return _col(_res("route"), key, header, help, body, fmt, kind, width)

    def fleet_only(body: Expr, otherwise: Any = 0) -> Expr:
        return fn("IF", kind.eq("fleet"), body, otherwise)

    def latency_util(at_load: str, slo: str) -> Expr:
        """A latency SLO's utilization at load; bulk routes are sized at throughput, so it is no constraint there,
        and a route of one output token has no TPOT (no gap between tokens)."""
        ratio = fn("IF", fn("ISNUMBER", _res(at_load)), _res(at_load) / _r(slo), fn("MAX", _res("load_util"), 1))
        none = _r("kind").eq("bulk") if slo != "tpot_slo_s" else fn("OR", _r("kind").eq("bulk"), out.le(1))
        return fleet_only(fn("IF", none, 0, ratio))

    f = lambda k: _at(FLEET, k, frow)  # noqa: E731
    window = _at(PROVIDERS, "window_s", prow)

    mix = (_res("mix_input_tokens"), _res("mix_output_tokens"))

    def perf(name: str) -> Expr:
        """The serving model at the fleet's load: Poisson arrivals at the fleet's rate per replica (open loop), the
        request mix of every route on the fleet."""
        return _on_fleet(name, backend, *mix, _res("replica_rate"), _res("mix_cache_hit_rate"))
    avg_qps = qps * month_ratio()
    demands = _demands(kind, _res("counts_cached_reads"), _res("reserved_max_tokens"), _res("output_weight"))
    # a fleet's cost is shared by its routes in proportion to the FLOP/s they use (no double count in the totals)
    fleet_cost = _at(SPECS, "cost_monthly_usd", frow) * fn("IFERROR", _res("compute_share") / _res("compute_util"), 0)

    def api_cost(hit: Any, writes: Any) -> Expr:
        return _on_provider("PROVIDER_API_COST_MONTHLY", backend, avg_qps, inp, out, hit, writes)

    labels = {"rpm": "D1: 60 x peak QPS", "tpm": "D2-D4 CAPACITY_TPM: counted input + output (or reserved "
              "max_tokens x output weight)", "itpm": "D4: input tokens per minute as the backend counts them",
              "otpm": "D2: output tokens per minute", "rpd": "Requests per day at the average rate (peak x "
              "avg-to-peak x 1,440)", "tpd": "Counted tokens per day at the average rate"}
    units = {"rpm": "req/min", "tpm": "tokens/min", "itpm": "tokens/min", "otpm": "tokens/min", "rpd": "req/day",
             "tpd": "tokens/day"}
    return (
        col("route", "Route [name]", "Route name (from Routes)", fn("IF", _r("name").eq(""), "", _r("name")),
            kind="text", width=18),
        col("provider_row", "Provider row [#]", "The backend's row on Providers (blank: not a provider)",
            _row_of(PROVIDERS, backend), "0", width=8),
        col("fleet_row", "Fleet row [#]", "The backend's row on Fleet (blank: not a fleet)",
            _row_of(FLEET, backend), "0", width=8),
        col("backend_type", "Backend type", "provider, fleet or unknown", _type(prow, frow), kind="text", width=10),
        col("counts_cached_reads", "Counts cache reads [TRUE/FALSE]", "The backend counts prefix-cache reads toward "
            "ITPM/TPM (Providers)", _counts_cached(kind, prow), kind="text", width=10),
        col("reserved_max_tokens", "Reserved max_tokens [tokens]", "max_tokens where the backend reserves it at "
            "admission (D3); blank: actual output counts", _reserved(kind, prow)),
        col("output_weight", "Output weight [x]", "Quota tokens one output token burns toward TPM (Providers)",
            _weight(kind, prow), "0.0"),
        *(col(f"{k}_demand", f"{k.upper()} demand [{units[k]}]", labels[k], demands[k]) for k in LIMIT_KEYS),
        col("input_tokens_per_s", "Input [tokens/s]", "Peak QPS x input tokens (weights the fleet's request mix)",
            qps * inp),
        col("output_tokens_per_s", "Output [tokens/s]", "Peak QPS x output tokens", qps * out),
        col("cached_tokens_per_s", "Cached input [tokens/s]", "Peak QPS x input x prefix-cache hit rate",
            qps * inp * _r("cache_hit_rate")),
        col("fleet_qps", "Fleet load [req/s]", "Peak QPS of every route on the fleet",
            fleet_only(_on(backend, Cells(ROUTES, "peak_qps")), ""), "#,##0.0"),
        col("replica_rate", "Rate per replica [req/s]", "The fleet's load spread over its replicas (Poisson arrivals)",
            fleet_only(_res("fleet_qps") / f("replicas"), ""), "#,##0.00"),
        col("mix_input_tokens", "Mix input [tokens]", "The fleet's request mix: input tokens per request",
            fleet_only(_on(backend, Cells(RESULTS_REF, "input_tokens_per_s")) / _res("fleet_qps"), ""), "#,##0"),
        col("mix_output_tokens", "Mix output [tokens]", "The fleet's request mix: output tokens per request",
            fleet_only(_on(backend, Cells(RESULTS_REF, "output_tokens_per_s")) / _res("fleet_qps"), ""), "#,##0"),
        col("mix_cache_hit_rate", "Mix cache hit [fraction]", "The fleet's request mix: cached share of input",
            fleet_only(fn("IFERROR", _on(backend, Cells(RESULTS_REF, "cached_tokens_per_s"))
                          / _on(backend, Cells(RESULTS_REF, "input_tokens_per_s")), 0), ""), "0%"),
        col("ttft_at_load_s", "TTFT at load [s]", "Q4 SERVING_TTFT_S: mean time to first token at the fleet's load "
            "(queueing for prefill room, prefill chunks); the saturation message where the load exceeds a replica",
            fleet_only(perf("FLEET_TTFT_S"), ""), "0.000"),
        col("tpot_at_load_s", "TPOT at load [s]", "S1/Q2 SERVING_TPOT_S: mean time per output token at the fleet's "
            "load (decode steps lengthened by the prefill they carry)", fleet_only(perf("FLEET_TPOT_S"), ""),
            "0.0000"),
        col("offline_rate", "Offline maximum [req/s per replica]", "Q6: the replica's offline throughput for the "
            "fleet's request mix (big batches): SERVING_TOKENS_PER_S / output",
            fleet_only(_on_fleet("FLEET_OFFLINE_RATE", backend, *mix, _res("mix_cache_hit_rate")), ""), "#,##0.00"),
        col("sustainable_rate", "Sustainable rate [req/s per replica]", "Q5: latency-critical and interactive routes: "
            "MAX_RATE_AT_SLO, the highest rate within both SLOs (lean batches); bulk: the offline maximum",
            fleet_only(fn("IF", _r("kind").eq("bulk"), _res("offline_rate"), _on_fleet(
                "FLEET_MAX_RATE_AT_SLO", backend, *mix, _r("ttft_slo_s"), route_tpot_slo(),
                _res("mix_cache_hit_rate"))), ""), "#,##0.00"),
        col("e2e_s", "E2E at load [s]", "P6: TTFT + (output - 1) x TPOT at the fleet's load (the time Little's law "
            "holds a request in flight); at the SLOs where the model saturates or the backend is a provider",
            fn("IF", fn("AND", fn("ISNUMBER", _res("ttft_at_load_s")), fn("ISNUMBER", _res("tpot_at_load_s"))),
               udf("E2E_LATENCY_S", _res("ttft_at_load_s"), _res("tpot_at_load_s"), out),
               udf("E2E_LATENCY_S", _r("ttft_slo_s"), _r("tpot_slo_s"), out)), "0.000"),
        col("concurrency_needed", "In flight at peak [requests]", "P7 Little's law: peak QPS x E2E",
            udf("CONCURRENCY", qps, _res("e2e_s")), fmt="#,##0.0"),
        col("prefix_tokens", "Prefix kept warm [tokens]", "M10: the route's shared prefix (Routes), blank: input x "
            "hit rate, the least the planned hit rate needs warm", fn("IF", fn("ISNUMBER", _r("prefix_tokens")),
                                                                   _r("prefix_tokens"), inp * _r("cache_hit_rate"))),
        col("kv_share", "KV share [x]", "M10/M11 FLEET_KV_FIT: this route's in-flight KV at its unshared mean "
            "context (input - shared prefix + output/2; sliding-window layers at the engine's steady state) plus its "
            "prefix retention, over its fleet's KV budget; the p95 context is its own check (Max concurrency)",
            fleet_only(_kv_share(backend)), UTIL_FMT),
        col("prefix_kv_share", "Prefix retention [x]", "M10 FLEET_PREFIX_KV_FIT: the part of the KV share that "
            "keeps this route's shared prefixes warm on every replica (distinct prefixes x prefix tokens, blank: 1 x "
            "input x hit rate) / the KV budget, for the planned hit rate", fleet_only(_prefix_share(backend)),
            UTIL_FMT),
        col("compute_share", "Compute share [x]", "P2/P4 COMPUTE_UTILIZATION: this route's FLOP/s at peak / its "
            "fleet's GPUs x peak FLOP/s x MFU", fleet_only(_compute_share(backend)), UTIL_FMT),
        col("burst_factor", "Burst factor [x]", "Busiest window / average window at the peak minute: the Plan's "
            "burst factor, else Poisson at p99 for the backend's requests (1 where limits are per minute)",
            fn("IF", kind.eq("provider"), fn("IF", fn("AND", window.gt(0), window.le(59)), fn(
                "IF", PlanValue("burst_factor").gt(0), PlanValue("burst_factor"),
                udf("POISSON_BURST_FACTOR", _on(backend, Cells(RESULTS_REF, "rpm_demand")), window)), 1), 1),
            "0.00"),
        # utilization columns, in CONSTRAINTS order (contiguous: BINDING_CONSTRAINT reads them as one range); each is
        # the utilization of the route's backend with all the routes it serves
        *(col(f"{k}_util", f"{k.upper()} util [x]", f"{k.upper()} demand of every route on the backend / (limit x "
              "keys)", _limit_util(kind, backend, k, _on(backend, Cells(RESULTS_REF, f"{k}_demand"))), UTIL_FMT)
          for k in LIMIT_KEYS),
        col("burst_util", "Burst util [x]", "RPM in the provider's enforcement window: the backend's requests in the "
            "busiest window / the window's share of the limit (BURST_UTILIZATION)",
            _burst_util(kind, backend, _res("burst_factor")), UTIL_FMT),
        col("kv_util", "KV util [x]", "M10/M11: KV of every route in flight on the fleet plus the prefixes kept warm "
            "/ its KV budget (sum of the KV shares)", fleet_only(_on(backend, Cells(RESULTS_REF, "kv_share"))),
            UTIL_FMT),
        col("compute_util", "Compute util [x]", "P2/P4: FLOP/s of every route on the fleet / GPUs x peak FLOP/s x MFU",
            fleet_only(_on(backend, Cells(RESULTS_REF, "compute_share"))), UTIL_FMT),
        col("load_util", "Load util [x]", "Q5: rate per replica / sustainable rate (within both SLOs, or the offline "
            "maximum for bulk): its inverse is the demand multiple at which the first latency SLO is reached; infinite "
            "(10^9, shown as the infinity sign) where even a light load misses an SLO",
            fleet_only(fn("IF", _res("sustainable_rate").gt(0), _res("replica_rate") / _res("sustainable_rate"),
                          UTIL_INFINITE)), UTIL_FMT),
        col("ttft_util", "TTFT util [x]", "TTFT at load / TTFT SLO (latency-critical and interactive routes; a "
            "saturated replica shows its load util)", latency_util("ttft_at_load_s", "ttft_slo_s"), UTIL_FMT),
        col("tpot_util", "TPOT util [x]", "TPOT at load / TPOT SLO (latency-critical and interactive routes)",
            latency_util("tpot_at_load_s", "tpot_slo_s"), UTIL_FMT),
        col("limit_scope", "Limit scope", "What the backend's limits are metered per, what its keys count for and "
            "what would raise them (LIMIT_SCOPE_TEXT)",
            fn("IF", kind.eq("provider"), udf("LIMIT_SCOPE_TEXT", _at(PROVIDERS, "scope", prow),
                                              _at(PROVIDERS, "keys", prow), _at(PROVIDERS, "multiplied_by", prow),
                                              _at(PROVIDERS, "raise_by", prow)), ""), kind="text", width=40),
        col("kv_bytes_per_request", "KV per request [bytes]", "M8: KV bytes per request at p95 context",
            fleet_only(udf("KV_BYTES_PER_REQUEST", _spec("model", frow), _r("p95_context_tokens"), f("kv_dtype"),
                           f("tp"), DEFAULT_BLOCK_SIZE, f("pp")), ""), "#,##0"),
        col("max_concurrency", "Max concurrency [req/replica]", "M11: requests at p95 context that fit one replica",
            fleet_only(_on_fleet("FLEET_MAX_CONCURRENCY", backend, _r("p95_context_tokens")), ""), "#,##0"),
        col("batch_per_replica", "Peak batch [req/replica]",
            "In flight at peak on the fleet (all its routes) / replicas",
            fleet_only(_on(backend, Cells(RESULTS_REF, "concurrency_needed")) / f("replicas"), ""), "#,##0.0"),
        col("cost_monthly_no_cache_usd", "Cost no cache [USD/month]", "C1 at hit rate 0 (fleet: its GPU-hours, "
            "shared by its routes in proportion to their compute)",
            fn("IF", kind.eq("fleet"), fleet_cost, api_cost(0, 0)), "#,##0"),
        col("cost_monthly_usd", "Cost with cache [USD/month]", "C1 at the route's hit rate (fleet: its share of the "
            "fleet's GPU-hours)",
            fn("IF", kind.eq("fleet"), fleet_cost, api_cost(_r("cache_hit_rate"), _r("cache_write_tokens"))),
            "#,##0"),
        col("failover_util", "Failover util [x]", "C8: the failover backend's highest utilization when this route's "
            "backend is down and all its routes move at once (Failover sheet)", _fo("outage_util"), UTIL_FMT),
        col("failover_binding", "Failover binds", "C8: the constraint that binds on the failover in that outage",
            _fo("outage_binding"), kind="text", width=10),
        col("failover_ok", "Failover check", "OK when the failover backend absorbs the outage at <= 1",
            _fo("outage_ok"), kind="text", width=10),
        col("max_util", "Max util [x]", "C7: highest utilization of the route",
            udf("MAX_UTILIZATION", Cells(RESULTS_REF, "rpm_util", "tpot_util")), UTIL_FMT),
        col("binding_constraint", "Binding constraint", "C7: the constraint with the highest utilization",
            udf("BINDING_CONSTRAINT", Cells(LISTS_TABLE, "constraint"), Cells(RESULTS_REF, "rpm_util", "tpot_util")),
            kind="text", width=12),
        col("headroom_multiple", "Headroom [x demand]", "C7: the demand multiple at which the first constraint reaches "
            "1: 1 / utilization for those linear in demand (RPM ... COMPUTE), 1 / load util for the latency SLOs (the "
            "serving model's sustainable rate, not linear)",
            udf("HEADROOM_MULTIPLE", Cells(RESULTS_REF, "rpm_util", "load_util")), "0.00"),
        col("months_to_breach", "Months to breach [months]", "Months of growth until demand reaches the headroom "
            "multiple: ln(headroom) / ln(1 + growth); where the backend's routes grow at their own rates (Routes), "
            "the first month their shares of a linear constraint add up to 1 (BACKEND_MONTHS_TO_BREACH)",
            udf("BACKEND_MONTHS_TO_BREACH", backend, Block(FORECAST_ROUTES_REF), PlanValue("monthly_growth"),
                lit(1) / _res("headroom_multiple")), "0.0"),
        col("status", "Status", "OK, WARN (above the plan threshold) or BREACH (above 1)",
            fn("IF", _res("max_util").gt(1), "BREACH",
               fn("IF", _res("max_util").gt(PlanValue("utilization_threshold")), "WARN", "OK")),
            kind="text", width=10),
    )


def _failover_columns() -> tuple[Column, ...]:
    failover, backend = _r("failover"), _r("backend")
    kind, prow, frow = _fo("receiver_type"), _fo("receiver_provider_row"), _fo("receiver_fleet_row")

    def col(key: str, header: str, help: str, body: Expr, fmt: str = "#,##0", kind: str = "number",
            width: float = 14.0) -> Column:
        return _col(_fo("route"), key, header, help, body, fmt, kind, width)

    def moved(key: str, table: Table = FAILOVER_REF) -> Expr:
        """The receiver's own load plus every route that moves to it from this route's backend (``table``: where
        the moved routes' values are, as the receiver counts them or as they are whatever the backend)."""
        return _on(failover, Cells(RESULTS_REF if table is FAILOVER_REF else table, key)) + udf(
            "OUTAGE_SUM", backend, failover, Cells(ROUTES, "backend"), Cells(ROUTES, "failover"), Cells(table, key))

    def fleet_there(body: Expr, otherwise: Any = 0) -> Expr:
        return fn("IF", kind.eq("fleet"), body, otherwise)

    qps = _fo("outage_qps")
    mix = (_fo("outage_input_tokens_per_s") / qps, _fo("outage_output_tokens_per_s") / qps)
    mix_hit = fn("IFERROR", _fo("outage_cached_tokens_per_s") / _fo("outage_input_tokens_per_s"), 0)

    demands = _demands(kind, _fo("counts_cached_reads"), _fo("reserved_max_tokens"), _fo("output_weight"))
    none = lambda body: fn("IF", failover.eq(""), "", body)  # noqa: E731
    return (
        col("route", "Route [name]", "Route name (from Routes)", fn("IF", _r("name").eq(""), "", _r("name")),
            kind="text", width=18),
        col("failover", "Failover [name]", "The route's failover backend (Routes)", none(failover), kind="text",
            width=18),
        col("receiver_provider_row", "Provider row [#]", "The failover's row on Providers",
            none(_row_of(PROVIDERS, failover)), "0", width=8),
        col("receiver_fleet_row", "Fleet row [#]", "The failover's row on Fleet", none(_row_of(FLEET, failover)),
            "0", width=8),
        col("receiver_type", "Failover type", "provider, fleet, unknown or none",
            fn("IF", failover.eq(""), "none", _type(prow, frow)), kind="text", width=10),
        col("counts_cached_reads", "Counts cache reads [TRUE/FALSE]", "The failover's counting rule",
            _counts_cached(kind, prow), kind="text", width=10),
        col("reserved_max_tokens", "Reserved max_tokens [tokens]", "max_tokens where the failover reserves it",
            _reserved(kind, prow)),
        col("output_weight", "Output weight [x]", "The failover's output quota weight", _weight(kind, prow), "0.0"),
        *(col(f"{k}_demand", f"{k.upper()} demand there [per {'day' if k.endswith('d') else 'min'}]",
              f"This route's {k.upper()} demand as the failover counts it", demands[k]) for k in LIMIT_KEYS),
        col("kv_share", "KV share there [x]", "This route's KV share on the failover fleet (in flight and prefixes)",
            fleet_there(_kv_share(failover)), UTIL_FMT),
        col("prefix_kv_share", "Prefix retention there [x]", "The part of it that keeps the route's prefixes warm",
            fleet_there(_prefix_share(failover)), UTIL_FMT),
        col("compute_share", "Compute share there [x]", "This route's compute share on the failover fleet",
            fleet_there(_compute_share(failover)), UTIL_FMT),
        col("outage_qps", "Outage load there [req/s]", "The failover fleet's peak QPS in the outage: its own routes "
            "plus every route moved onto it", fleet_there(moved("peak_qps", ROUTES), ""), "#,##0.0"),
        col("outage_input_tokens_per_s", "Outage input there [tokens/s]", "Input tokens/s of the same routes (the "
            "receiver's request mix after the outage)", fleet_there(moved("input_tokens_per_s", RESULTS_REF), ""),
            "#,##0"),
        col("outage_output_tokens_per_s", "Outage output there [tokens/s]", "Output tokens/s of the same routes",
            fleet_there(moved("output_tokens_per_s", RESULTS_REF), ""), "#,##0"),
        col("outage_cached_tokens_per_s", "Outage cached input there [tokens/s]", "Cached input tokens/s of the same "
            "routes", fleet_there(moved("cached_tokens_per_s", RESULTS_REF), ""), "#,##0"),
        col("offline_rate", "Offline maximum there [req/s per replica]", "Q6 on the failover fleet for its request "
            "mix after the outage (all the routes it then serves)",
            fleet_there(_on_fleet("FLEET_OFFLINE_RATE", failover, *mix, mix_hit), ""), "#,##0.00"),
        col("sustainable_rate", "Sustainable rate there [req/s per replica]", "Q5 on the failover fleet for its "
            "request mix after the outage, at this route's SLOs: FLEET_MAX_RATE_AT_SLO (bulk: the offline maximum)",
            fleet_there(fn("IF", _r("kind").eq("bulk"), _fo("offline_rate"), _on_fleet(
                "FLEET_MAX_RATE_AT_SLO", failover, *mix, _r("ttft_slo_s"), route_tpot_slo(), mix_hit)), ""),
            "#,##0.00"),
        *(col(f"outage_{k}_util", f"Outage {k.upper()} util [x]", f"The failover's {k.upper()} utilization with "
              "every route of this route's backend moved onto it",
              _limit_util(kind, failover, k, moved(f"{k}_demand")), UTIL_FMT) for k in LIMIT_KEYS),
        col("outage_kv_util", "Outage KV util [x]", "The failover fleet's KV utilization in the outage (in-flight "
            "requests and prefixes kept warm)", fleet_there(moved("kv_share")), UTIL_FMT),
        col("outage_compute_util", "Outage compute util [x]", "The failover fleet's compute utilization in the outage",
            fleet_there(moved("compute_share")), UTIL_FMT),
        col("outage_load_util", "Outage load util [x]", "The failover fleet's requests per replica in the outage / "
            "the sustainable rate there (for the mix of all the routes it then serves)",
            fleet_there(fn("IF", _fo("sustainable_rate").gt(0), qps / _at(FLEET, "replicas", frow)
                           / _fo("sustainable_rate"), UTIL_INFINITE)), UTIL_FMT),
        col("outage_util", "Outage util [x]", "C8: the highest of the outage utilizations",
            fn("MAX", Cells(FAILOVER_REF, "outage_rpm_util", "outage_load_util")), UTIL_FMT),
        col("outage_binding", "Outage binds", "The constraint at that utilization",
            none(udf("BINDING_CONSTRAINT", Cells(LISTS_TABLE, "outage_constraint"),
                     Cells(FAILOVER_REF, "outage_rpm_util", "outage_load_util"))), kind="text", width=10),
        col("outage_ok", "Outage check", "OK when the failover absorbs the outage at <= 1; none without a failover",
            fn("IF", failover.eq(""), "none", fn("IF", _fo("outage_util").le(1), "OK", "BREACH")), kind="text",
            width=10),
    )


RESULTS = Table(
    name="tblResults",
    sheet="Results",
    rows=ROUTE_ROWS,
    title="Results per route (formulas; locked)",
    note="Demand as each backend counts it, then provider limits, then GPU memory and decode time, then the binding "
    "constraint. Row columns name the backend's row on Providers or Fleet; the rules beside them are read there.",
    columns=_results_columns(),
)
assert tuple(c.key for c in RESULTS.columns) == RESULT_KEYS

FAILOVER = Table(
    name="tblFailover",
    sheet="Failover",
    rows=ROUTE_ROWS,
    title="Failover: each route's backend down, every one of its routes moved at once (formulas; locked)",
    note="The receiver carries its own routes plus all routes of the failed backend that fail over to it, each "
    "counted by the receiver's rules. Two routes losing one primary add up here.",
    columns=_failover_columns(),
)
assert tuple(c.key for c in FAILOVER.columns) == FAILOVER_KEYS

_SUMMARY_KEYS = ("route", *UTILIZATION_KEYS, "failover_util", "binding_constraint", "headroom_multiple",
                 "months_to_breach", "cost_monthly_usd", "status")
SUMMARY = Table(
    name="tblSummary",
    sheet="Summary",
    rows=ROUTE_ROWS,
    header_row=4,
    title="Summary: utilization of every constraint per route (1.00 = at the limit)",
    columns=tuple(
        C(
            key=k,
            header=RESULTS.column(k).header,
            help=RESULTS.column(k).help,
            formula=Ref(RESULTS, k),
            kind=RESULTS.column(k).kind,
            number_format=RESULTS.column(k).number_format,
            width=RESULTS.column(k).width,
        )
        for k in _SUMMARY_KEYS
    ),
)


def _outage_columns() -> tuple[Column, ...]:
    backend = Ref(LISTS_TABLE, "backend")
    routes = Cells(ROUTES, "backend")
    kind, moved = Ref(_OUTAGES_REF, "type"), Ref(_OUTAGES_REF, "worst_util")
    fleet_util = udf("FLEET_UTILIZATION", backend, routes, *(Cells(RESULTS, f"{k}_util") for k in ("kv", "compute",
                                                                                                   "load")))

    def col(key: str, header: str, help: str, body: Expr, fmt: str = "0.00", kind: str = "number",
            width: float = 14.0) -> Column:
        return C(key=key, header=header, help=help, number_format=fmt, kind=kind, width=width,
                 formula=body if key == "backend" else fn("IF", backend.eq(""), "", body))

    return (
        col("backend", "Backend down [name]", "Every backend of the plan (Providers, then Fleet)",
            fn("IF", backend.eq(""), "", backend), kind="text", width=20),
        col("type", "Type", "provider or fleet",
            fn("IF", fn("ISNUMBER", fn("MATCH", backend, Cells(PROVIDERS, "name"))), "provider", "fleet"),
            kind="text", width=10),
        col("routes", "Routes moved [count]", "Routes whose primary backend it is",
            fn("COUNTIFS", routes, backend), "0", width=10),
        col("worst_util", "Worst receiver util [x]", "C8: the highest utilization a receiver reaches when this "
            "backend is down (all its routes moved at once)",
            udf("BACKEND_MAX", backend, routes, Cells(FAILOVER, "outage_util"))),
        col("receiver", "Worst receiver", "The failover backend at that utilization",
            fn("IF", moved.gt(0), udf("BACKEND_ARGMAX", backend, routes, Cells(FAILOVER, "outage_util"),
                                      Cells(FAILOVER, "failover")), ""), kind="text", width=18),
        col("binding", "Binds there", "The constraint at that utilization",
            fn("IF", moved.gt(0), udf("BACKEND_ARGMAX", backend, routes, Cells(FAILOVER, "outage_util"),
                                      Cells(FAILOVER, "outage_binding")), ""), kind="text", width=10),
        col("fleet_util", "Fleet util [x]", "Fleets: the highest of KV, compute and load utilization with every "
            "replica up; providers: blank", fn("IF", kind.eq("fleet"), fleet_util, "")),
        col("n_plus_one_util", "N+1 util [x]", "Fleets: the highest of KV, compute and load utilization with one "
            "replica lost (u x R / (R - 1): the survivors take its requests; load within 1 keeps TTFT and TPOT "
            "within the SLOs, the sustainable rate being the highest rate that meets both); providers: blank",
            fn("IF", kind.eq("fleet"), fn("IF", Ref(_OUTAGES_REF, "routes").gt(0), udf(
                "N_PLUS_ONE_UTILIZATION", Ref(_OUTAGES_REF, "fleet_util"), lookup(FLEET, "name", backend, "replicas")),
                0), "")),
        col("status", "Status", "BREACH when the worst receiver or N+1 exceeds 1, OK otherwise",
            fn("IF", fn("IF", kind.eq("fleet"), fn("MAX", Ref(_OUTAGES_REF, "worst_util"),
                                                     Ref(_OUTAGES_REF, "n_plus_one_util")),
                        Ref(_OUTAGES_REF, "worst_util")).gt(1), "BREACH", "OK"), kind="text", width=10),
    )


_OUTAGE_KEYS = ("backend", "type", "routes", "worst_util", "receiver", "binding", "fleet_util", "n_plus_one_util",
                "status")
OUTAGES_HEADER_ROW = SUMMARY.last_row + 3
_OUTAGES_REF = Table(name="tblOutages", sheet="Summary", rows=LISTS_TABLE.rows, header_row=OUTAGES_HEADER_ROW,
                     columns=tuple(C(key=k, header=k, help=k) for k in _OUTAGE_KEYS))
OUTAGES = Table(
    name="tblOutages",
    sheet="Summary",
    rows=LISTS_TABLE.rows,
    header_row=OUTAGES_HEADER_ROW,
    title="",
    note="",
    columns=_outage_columns(),
)
assert tuple(c.key for c in OUTAGES.columns) == _OUTAGE_KEYS
OUTAGES_TITLE = "Outages: each backend down, all its routes on their failovers at once; fleets with one replica lost"

_STANDBY = Cells(SPECS, "standby_cost_monthly_usd")
TOTALS: tuple[tuple[str, str, Expr, str], ...] = (
    ("Total cost with cache [USD/month]", "cost_monthly_usd",
     fn("SUM", Cells(RESULTS, "cost_monthly_usd"), _STANDBY), "#,##0"),
    ("Total cost no cache [USD/month]", "cost_monthly_no_cache_usd",
     fn("SUM", Cells(RESULTS, "cost_monthly_no_cache_usd"), _STANDBY), "#,##0"),
    ("Standby fleets [USD/month]", "cost_monthly_usd", fn("SUM", _STANDBY), "#,##0"),
    ("Routes in breach [count]", "status", fn("COUNTIFS", Cells(RESULTS, "status"), "BREACH"), "0"),
    ("Routes above threshold [count]", "status", fn("COUNTIFS", Cells(RESULTS, "status"), "WARN"), "0"),
    ("Highest utilization [x]", "max_util", fn("MAX", Cells(RESULTS, "max_util")), "0.00"),
    ("Worst outage [x]", "worst_util", fn("MAX", Cells(OUTAGES, "worst_util"), Cells(OUTAGES, "n_plus_one_util")),
     "0.00"),
    ("Outages in breach [count]", "status", fn("COUNTIFS", Cells(OUTAGES, "status"), "BREACH"), "0"),
)
"""Plan-wide figures on the Summary sheet, in rows 2.. of columns O:P (label, formula)."""

# the plan totals block sits right of the Summary table, one empty column between (it moves when the table grows)
TOTALS_COL_LABEL = col_letter(SUMMARY.first_col + len(SUMMARY.columns) + 1)
TOTALS_COL_VALUE = col_letter(SUMMARY.first_col + len(SUMMARY.columns) + 2)
TOTALS_FIRST_ROW = 5
