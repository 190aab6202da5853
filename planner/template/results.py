"""The Results and Summary sheets: every computed column of the plan, as expressions over the input tables.

The method follows the reference formula set (docs/method.md): demand D1-D4, provider-limit utilization,
KV memory M2-M11, decode time P1-P2, cost C1 and the decision C7-C8. This module is pure: no I/O.
"""

from __future__ import annotations

from planner.demand import MINUTES_PER_DAY
from planner.excel.expr import Cells, Expr, Ref, fn, lookup, udf, when_filled
from planner.excel.tables import Column, Table, col_letter
from planner.template.layout import (
    FLEET,
    GPUS,
    LISTS_TABLE,
    PROVIDERS,
    ROUTE_ROWS,
    ROUTES,
    C,
    PlanValue,
)


def _r(key: str) -> Expr:
    return Ref(ROUTES, key)


_BACKEND = _r("backend")
_FAILOVER = _r("failover")


def _prov(key: str, backend: Expr = _BACKEND) -> Expr:
    return lookup(PROVIDERS, "name", backend, key)


def _fleet(key: str, backend: Expr = _BACKEND) -> Expr:
    return lookup(FLEET, "name", backend, key)


def _is_provider(backend: Expr) -> Expr:
    return fn("ISNUMBER", fn("MATCH", backend, Cells(PROVIDERS, "name")))


def _is_fleet(backend: Expr) -> Expr:
    return fn("ISNUMBER", fn("MATCH", backend, Cells(FLEET, "name")))


def _res(key: str) -> Expr:
    return Ref(RESULTS_REF, key)


def _reserves(backend: Expr = _BACKEND) -> Expr:
    return fn("AND", _is_provider(backend), fn("IFERROR", _prov("reserves_max_tokens", backend), False))


def _gpu_price(backend: Expr = _BACKEND) -> Expr:
    own = _fleet("usd_per_gpu_hour", backend)
    return fn("IF", own.gt(0), own, lookup(GPUS, "name", _fleet("gpu", backend), "usd_per_gpu_hour"))


def _on_backend(key: str, backend: Expr = _BACKEND) -> Expr:
    """The sum of a Results column over every route whose primary backend is ``backend``: routes on one backend
    share its limits, KV cache and FLOP/s."""
    return fn("SUMIFS", Cells(RESULTS_REF, key), Cells(ROUTES, "backend"), backend)


def _limit_util(demand_key: str, limit_key: str) -> Expr:
    limit = _prov(limit_key)
    return fn(
        "IF",
        fn("AND", _res("backend_type").eq("provider"), fn("IFERROR", limit.gt(0), False)),
        udf("LIMIT_UTILIZATION", _on_backend(demand_key), limit, _prov("keys")),
        0,
    )


def _demand_on(backend: Expr, demand_key: str) -> Expr:
    """The route's demand as ``backend`` counts it: max_tokens reserved at admission or not (TPM, OTPM), cached reads
    counted toward ITPM or not. Results uses the primary backend; the failover check the failover backend."""
    qps, inp, out, cap = _q("peak_qps"), _q("avg_input_tokens"), _q("avg_output_tokens"), _q("max_tokens")
    if demand_key == "rpm_demand":
        return udf("CAPACITY_RPM", qps)
    counts = fn("IF", _is_provider(backend), fn("IFERROR", _prov("cached_reads_count_itpm", backend), True), True)
    itpm = udf("CAPACITY_ITPM", qps, inp, _q("cache_hit_rate"), _q("cache_write_tokens"), counts)
    if demand_key == "itpm_demand":
        return itpm
    if demand_key == "otpm_demand":
        return udf("CAPACITY_OTPM", qps, out)
    # daily volume at the average rate: a day holds one peak, not 1,440 of them
    if demand_key == "rpd_demand":
        return udf("CAPACITY_RPD", qps * PlanValue("avg_to_peak_ratio"))
    if demand_key == "tpd_demand":  # the counted tokens of a minute (TPM rules) over an average day
        return _demand_on(backend, "tpm_demand") * PlanValue("avg_to_peak_ratio") * MINUTES_PER_DAY
    if demand_key == "tpm_demand":  # counted input + output, or + max_tokens x quota weight where reserved (D3)
        weight = _prov("output_token_weight", backend)
        weight = fn("IF", fn("IFERROR", weight.gt(0), False), weight, 1)
        return itpm + fn("IF", _reserves(backend), udf("CAPACITY_OTPM", qps, cap) * weight,
                         udf("CAPACITY_OTPM", qps, out))
    raise KeyError(demand_key)


def _failover_provider_util(demand_key: str, limit_key: str) -> Expr:
    limit = _prov(limit_key, _FAILOVER)
    # routes whose primary is the failover backend already count by its rules; this route is recounted by them
    moved = _on_backend(demand_key, _FAILOVER) + _demand_on(_FAILOVER, demand_key)
    util = udf("LIMIT_UTILIZATION", moved, limit, _prov("keys", _FAILOVER))
    return fn("IF", fn("IFERROR", limit.gt(0), False), util, 0)


def _e2e() -> Expr:
    """P6 at the SLOs: the latency Little's law holds a request in flight for (TTFT SLO + (O - 1) x TPOT SLO)."""
    return udf("E2E_LATENCY_S", _r("ttft_slo_s"), _r("tpot_slo_s"), _r("avg_output_tokens"))


def _kv_share_on(backend: Expr) -> Expr:
    """M11 ``KV_FIT``: the route's in-flight KV at its p95 context over fleet ``backend``'s KV budget."""
    return udf("KV_FIT", _fleet("model", backend), _fleet("gpu", backend), _r("peak_qps"), _e2e(),
               _r("p95_context_tokens"), *(_fleet(k, backend) for k in (
                   "replicas", "tp", "gpu_memory_utilization", "kv_dtype", "engine", "weight_dtype", "pp")))


def _compute_share_on(backend: Expr) -> Expr:
    """P2/P4 ``COMPUTE_UTILIZATION``: the route's FLOP/s at peak over fleet ``backend``'s achieved FLOP/s."""
    return udf("COMPUTE_UTILIZATION", _fleet("model", backend), _fleet("gpu", backend), _r("peak_qps"),
               _r("avg_input_tokens"), _r("avg_output_tokens"), _fleet("replicas", backend), _fleet("tp", backend),
               _r("cache_hit_rate"), *(_fleet(k, backend) for k in ("mfu", "weight_dtype", "pp")))


def _failover_fleet_util() -> Expr:
    """The failover fleet's KV and compute utilizations with this route moved onto it: the shares of the routes it
    already serves plus this route's share on that fleet (both are linear in load)."""
    kv = _on_backend("kv_share", _FAILOVER) + _kv_share_on(_FAILOVER)
    compute = _on_backend("compute_share", _FAILOVER) + _compute_share_on(_FAILOVER)
    return fn("MAX", kv, compute)


def _q(key: str) -> Expr:
    return _r(key)


def _blank_unless_fleet(body: Expr) -> Expr:
    return fn("IF", _res("backend_type").eq("fleet"), body, "")


def _zero_unless_fleet(body: Expr) -> Expr:
    return fn("IF", _res("backend_type").eq("fleet"), body, 0)


RESULT_KEYS = (
    "route", "backend_type", "rpm_demand", "tpm_demand", "itpm_demand", "otpm_demand", "rpd_demand", "tpd_demand",
    "concurrency_needed",
    "kv_share", "compute_share", "decode_tokens_in_flight",
    "rpm_util", "tpm_util", "itpm_util", "otpm_util", "rpd_util", "tpd_util", "kv_util", "compute_util", "tpot_util",
    "kv_bytes_per_request", "max_concurrency", "batch_per_replica", "tpot_at_peak_s",
    "cost_monthly_no_cache_usd", "cost_monthly_usd", "failover_util", "failover_ok",
    "max_util", "binding_constraint", "headroom_multiple", "months_to_breach", "status",
)
UTILIZATION_KEYS = ("rpm_util", "tpm_util", "itpm_util", "otpm_util", "rpd_util", "tpd_util", "kv_util", "compute_util",
                    "tpot_util")

# The Results layout (keys -> letters) exists before its formulas, which refer to earlier Results columns.
RESULTS_REF = Table(
    name="tblResults",
    sheet="Results",
    rows=ROUTE_ROWS,
    columns=tuple(C(key=k, header=k, help=k) for k in RESULT_KEYS),
)


def _results_columns() -> tuple[Column, ...]:
    qps, inp, out = _q("peak_qps"), _q("avg_input_tokens"), _q("avg_output_tokens")
    route = _res("route")

    def col(key: str, header: str, help: str, body: Expr, fmt: str = "#,##0", kind: str = "number",
            width: float = 14.0) -> Column:
        formula = body if key == "route" else when_filled(route, body)
        return C(key=key, header=header, help=help, formula=formula, number_format=fmt, kind=kind, width=width)

    fleet_args = lambda *keys: [_fleet(k) for k in keys]  # noqa: E731
    price = lambda k: fn("IFERROR", _prov(k), 0)  # noqa: E731
    avg_qps = qps * PlanValue("avg_to_peak_ratio")
    e2e = _e2e()
    util_fmt = "0.00"
    return (
        col("route", "Route [name]", "Route name (from Routes)",
            fn("IF", _r("name").eq(""), "", _r("name")), kind="text", width=18),
        col("backend_type", "Backend type", "provider, fleet or unknown",
            fn("IF", _is_provider(_BACKEND), "provider", fn("IF", _is_fleet(_BACKEND), "fleet", "unknown")),
            kind="text", width=10),
        col("rpm_demand", "RPM demand [req/min]", "D1: 60 x peak QPS", _demand_on(_BACKEND, "rpm_demand")),
        col("tpm_demand", "TPM demand [tokens/min]", "D2/D3: total tokens per minute (max_tokens if reserved)",
            _demand_on(_BACKEND, "tpm_demand")),
        col("itpm_demand", "ITPM demand [tokens/min]", "D4: counted input tokens per minute",
            _demand_on(_BACKEND, "itpm_demand")),
        col("otpm_demand", "OTPM demand [tokens/min]", "D2/D3: output tokens per minute (max_tokens if reserved)",
            _demand_on(_BACKEND, "otpm_demand")),
        col("rpd_demand", "RPD demand [req/day]", "Requests per day at the average rate (peak x avg-to-peak x 1,440)",
            _demand_on(_BACKEND, "rpd_demand")),
        col("tpd_demand", "TPD demand [tokens/day]", "Counted tokens per day at the average rate",
            _demand_on(_BACKEND, "tpd_demand")),
        col("concurrency_needed", "In flight at peak [requests]",
            "P7 Little's law at the SLO: QPS x E2E latency (P6, TTFT SLO + output x TPOT SLO)",
            udf("CONCURRENCY", qps, e2e), fmt="#,##0.0"),
        col("kv_share", "KV share [x]", "M11 KV_FIT: this route's in-flight KV at p95 context / its fleet's KV budget",
            _zero_unless_fleet(_kv_share_on(_BACKEND)), util_fmt),
        col("compute_share", "Compute share [x]", "P2/P4 COMPUTE_UTILIZATION: this route's FLOP/s at peak / its "
            "fleet's GPUs x peak FLOP/s x MFU", _zero_unless_fleet(_compute_share_on(_BACKEND)), util_fmt),
        col("decode_tokens_in_flight", "Decode context in flight [tokens]",
            "M8: in flight at peak x (input + output/2), to weight the fleet's decode context",
            _res("concurrency_needed") * (inp + out / 2), "#,##0"),
        # utilization columns, in CONSTRAINTS order (contiguous: BINDING_CONSTRAINT reads them as one range); each is
        # the utilization of the route's backend with all the routes it serves

        col("rpm_util", "RPM util [x]", "RPM demand / (limit x keys)", _limit_util("rpm_demand", "rpm"), util_fmt),
        col("tpm_util", "TPM util [x]", "TPM demand / (limit x keys)", _limit_util("tpm_demand", "tpm"), util_fmt),
        col("itpm_util", "ITPM util [x]", "ITPM demand / (limit x keys)", _limit_util("itpm_demand", "itpm"),
            util_fmt),
        col("otpm_util", "OTPM util [x]", "OTPM demand / (limit x keys)", _limit_util("otpm_demand", "otpm"),
            util_fmt),
        col("rpd_util", "RPD util [x]", "RPD demand / (limit x keys)", _limit_util("rpd_demand", "rpd"), util_fmt),
        col("tpd_util", "TPD util [x]", "TPD demand / (limit x keys)", _limit_util("tpd_demand", "tpd"), util_fmt),
        col("kv_util", "KV util [x]", "M11: KV of every route in flight on the fleet / its KV budget (sum of shares)",
            _zero_unless_fleet(_on_backend("kv_share")), util_fmt),
        col("compute_util", "Compute util [x]", "P2/P4: FLOP/s of every route on the fleet / GPUs x peak FLOP/s x MFU",
            _zero_unless_fleet(_on_backend("compute_share")), util_fmt),
        col("tpot_util", "TPOT util [x]", "TPOT at the peak batch / TPOT SLO",
            _zero_unless_fleet(_res("tpot_at_peak_s") / _q("tpot_slo_s")), util_fmt),
        col("kv_bytes_per_request", "KV per request [bytes]", "M8: KV bytes per request at p95 context",
            _blank_unless_fleet(udf("KV_BYTES_PER_REQUEST", *fleet_args("model"), _q("p95_context_tokens"),
                                    *fleet_args("kv_dtype", "tp"), 16, _fleet("pp"))), "#,##0"),
        col("max_concurrency", "Max concurrency [req/replica]", "M11: requests at p95 context that fit one replica",
            _blank_unless_fleet(udf("MAX_CONCURRENCY", *fleet_args("model", "gpu", "tp", "gpu_memory_utilization",
                                                                    "kv_dtype"), _q("p95_context_tokens"),
                                    *fleet_args("engine", "weight_dtype", "pp"))), "#,##0"),
        col("batch_per_replica", "Peak batch [req/replica]",
            "In flight at peak on the fleet (all its routes) / replicas",
            _blank_unless_fleet(_on_backend("concurrency_needed") / _fleet("replicas")), "#,##0.0"),
        col("tpot_at_peak_s", "TPOT at peak [s]", "P1-P2: decode step at the fleet's peak batch and in-flight-weighted "
            "context (M8)",
            _blank_unless_fleet(udf("TPOT_S", *fleet_args("model", "gpu", "tp"), _res("batch_per_replica"),
                                    fn("IFERROR", _on_backend("decode_tokens_in_flight")
                                       / _on_backend("concurrency_needed"), inp + out / 2),
                                    *fleet_args("kv_dtype", "mbu", "mfu", "weight_dtype"))),
            "0.0000"),
        col("cost_monthly_no_cache_usd", "Cost no cache [USD/month]", "C1 at hit rate 0 (fleet: GPU-hours)",
            fn("IF", _res("backend_type").eq("fleet"),
               udf("SELFHOST_USD_MONTHLY", _gpu_price(), _fleet("tp") * _fleet("pp") * _fleet("replicas")),
               udf("API_COST_MONTHLY", avg_qps, inp, out, 0, 0, price("usd_per_mtok_input"),
                   price("usd_per_mtok_cached_input"), price("usd_per_mtok_cache_write"),
                   price("usd_per_mtok_output"))), "#,##0"),
        col("cost_monthly_usd", "Cost with cache [USD/month]", "C1 at the route's hit rate (fleet: GPU-hours)",
            fn("IF", _res("backend_type").eq("fleet"),
               udf("SELFHOST_USD_MONTHLY", _gpu_price(), _fleet("tp") * _fleet("pp") * _fleet("replicas")),
               udf("API_COST_MONTHLY", avg_qps, inp, out, _q("cache_hit_rate"), _q("cache_write_tokens"),
                   price("usd_per_mtok_input"), price("usd_per_mtok_cached_input"),
                   price("usd_per_mtok_cache_write"), price("usd_per_mtok_output"))), "#,##0"),
        col("failover_util", "Failover util [x]", "C8: highest utilization of the failover backend with this route "
            "moved onto it (plus the routes it already serves)",
            fn("IF", _FAILOVER.eq(""), 0,
               fn("IF", _is_provider(_FAILOVER),
                  fn("MAX", _failover_provider_util("rpm_demand", "rpm"), _failover_provider_util("tpm_demand", "tpm"),
                     _failover_provider_util("itpm_demand", "itpm"), _failover_provider_util("otpm_demand", "otpm"),
                     _failover_provider_util("rpd_demand", "rpd"), _failover_provider_util("tpd_demand", "tpd")),
                  fn("IF", _is_fleet(_FAILOVER), _failover_fleet_util(), 0))), util_fmt),
        col("failover_ok", "Failover check", "OK when the failover backend absorbs the route at <= 1",
            fn("IF", _FAILOVER.eq(""), "none", fn("IF", _res("failover_util").le(1), "OK", "BREACH")),
            kind="text", width=10),
        col("max_util", "Max util [x]", "C7: highest utilization of the route",
            fn("MAX", Cells(RESULTS_REF, "rpm_util", "tpot_util")), util_fmt),
        col("binding_constraint", "Binding constraint", "C7: the constraint with the highest utilization",
            udf("BINDING_CONSTRAINT", Cells(LISTS_TABLE, "constraint"), Cells(RESULTS_REF, "rpm_util", "tpot_util")),
            kind="text", width=12),
        col("headroom_multiple", "Headroom [x demand]", "C7: demand multiple before the first ceiling",
            udf("HEADROOM_MULTIPLE", Cells(RESULTS_REF, "rpm_util", "tpot_util")), "0.00"),
        col("months_to_breach", "Months to breach [months]", "Months of growth until max util reaches 1",
            udf("MONTHS_TO_BREACH", _res("max_util"), PlanValue("monthly_growth")), "0.0"),
        col("status", "Status", "OK, WARN (above the plan threshold) or BREACH (above 1)",
            fn("IF", _res("max_util").gt(1), "BREACH",
               fn("IF", _res("max_util").gt(PlanValue("utilization_threshold")), "WARN", "OK")),
            kind="text", width=10),
    )


RESULTS = Table(
    name="tblResults",
    sheet="Results",
    rows=ROUTE_ROWS,
    title="Results per route (formulas; locked)",
    note="Demand, then provider limits, then GPU memory and decode time, then the binding constraint.",
    columns=_results_columns(),
)
assert tuple(c.key for c in RESULTS.columns) == RESULT_KEYS

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

TOTALS: tuple[tuple[str, str, Expr, str], ...] = (
    ("Total cost with cache [USD/month]", "cost_monthly_usd", fn("SUM", Cells(RESULTS, "cost_monthly_usd")),
     "#,##0"),
    ("Total cost no cache [USD/month]", "cost_monthly_no_cache_usd",
     fn("SUM", Cells(RESULTS, "cost_monthly_no_cache_usd")), "#,##0"),
    ("Routes in breach [count]", "status", fn("COUNTIFS", Cells(RESULTS, "status"), "BREACH"), "0"),
    ("Routes above threshold [count]", "status", fn("COUNTIFS", Cells(RESULTS, "status"), "WARN"), "0"),
    ("Highest utilization [x]", "max_util", fn("MAX", Cells(RESULTS, "max_util")), "0.00"),
)
"""Plan-wide figures on the Summary sheet, in rows 2.. of columns O:P (label, formula)."""

# the plan totals block sits right of the Summary table, one empty column between (it moves when the table grows)
TOTALS_COL_LABEL = col_letter(SUMMARY.first_col + len(SUMMARY.columns) + 1)
TOTALS_COL_VALUE = col_letter(SUMMARY.first_col + len(SUMMARY.columns) + 2)
TOTALS_FIRST_ROW = 5
