"""The Options sheet: what each self-hosted fleet could run on instead (formulas over the input tables, Specs and
Results; the search is :func:`planner.serving.options.fleet_choices` behind ``FLEET_OPTION``).

Four rows per Fleet row: the three cheapest fleets over every priced GPU of the GPUs sheet, then the cheapest on the
fleet's own GPU. Each is sized for the fleet's load and request mix (its primary routes; a standby fleet: the routes
that fail over to it) within the strictest TTFT and TPOT SLO of its latency-critical and interactive routes (a fleet
of bulk routes only: at the offline maximum), and set beside the fleet as it is (its GPUs and cost on Specs). This
module is pure: no I/O.
"""

from __future__ import annotations

from planner.excel.expr import At, Block, Cells, Expr, Ref, fn, lit, udf, when_filled
from planner.excel.tables import Column, Table
from planner.template.layout import FLEET, FLEET_ROWS, GPUS, ROUTES, SPECS, C, PerRow, PlanValue
from planner.template.results import RESULTS

OPTIONS_PER_FLEET = 3
"""Cheapest fleets listed per Fleet row over every GPU (one more row: the cheapest on the fleet's own GPU)."""
ROWS_PER_FLEET = OPTIONS_PER_FLEET + 1
OPTION_ROWS = FLEET_ROWS * ROWS_PER_FLEET

OPTION_FIELDS = (
    ("gpu", "GPU [name]", "The GPU of this option", "General", "text", 14),
    ("tp", "TP [GPUs]", "Tensor-parallel GPUs per replica (1, 2, 4, 8)", "0", "number", 7),
    ("pp", "PP [stages]", "Pipeline stages per replica (PP 2 only with TP 8)", "0", "number", 7),
    ("weight_dtype", "Weight dtype", "Weights as served: auto (the released checkpoint) or fp8", "General", "text", 10),
    ("kv_cache_dtype", "KV dtype", "KV-cache dtype: auto (the model's) or fp8", "General", "text", 9),
    ("mode", "Mode", "aggregated (replicas_at_slo) or disaggregated (prefill and decode pools): the cheaper of the two "
     "for this GPU, TP, PP and dtypes", "General", "text", 13),
    ("replicas", "Replicas [count]", "Replicas that serve the load within the SLOs (disaggregated: prefill + decode)",
     "#,##0", "number", 10),
    ("gpus", "GPUs [count]", "GPUs of the option (replicas x TP x PP)", "#,##0", "number", 9),
    ("usd_per_gpu_hour", "Price [USD/GPU-h]", "The GPUs sheet's price of the option's GPU", "0.00", "number", 10),
)
DETAIL_FIELDS = (
    ("binding", "Binds", "What limits a replica: TTFT, TPOT, KV (running batch at the KV cache), SEQS (max_num_seqs), "
     "COMPUTE (offline maximum); disaggregated: prefill pool / decode pool", "General", "text", 11),
    ("rate_per_replica", "Rate per replica [req/s]", "Q5: the highest rate one aggregated replica sustains within both "
     "SLOs (bulk: Q6 offline maximum); 0 where aggregated cannot meet them", "#,##0.00", "number", 11),
    ("aggregated_gpus", "Aggregated [GPUs]", "GPUs the option needs aggregated (0: cannot meet the SLOs)", "#,##0",
     "number", 10),
    ("prefill_replicas", "Prefill pool [replicas]", "Disaggregated: prefill replicas (TTFT SLO, M/D/1 queue)", "#,##0",
     "number", 10),
    ("decode_replicas", "Decode pool [replicas]", "Disaggregated: decode replicas (TPOT SLO within the KV cache)",
     "#,##0", "number", 10),
    ("disaggregated_gpus", "Disaggregated [GPUs]", "GPUs the option needs in prefill and decode pools (0: cannot, or "
     "not tried: bulk fleets and PP > 1)", "#,##0", "number", 11),
    ("kv_transfer_gb_s", "KV transfer [GB/s]", "Disaggregated: KV bytes per second the prefill pool ships to the "
     "decode pool (rate x input x KV per token)", "#,##0.0", "number", 11),
    ("kv_bytes_per_token", "KV per token [bytes/replica]", "M2: one token's KV over all GPUs of a replica (KV heads "
     "replicated where TP exceeds them)", "#,##0", "number", 12),
)
OPTION_KEYS = (
    "fleet_row", "rank", "only_gpu", "fleet", "model_spec", "engine", "load_qps", "mix_input_tokens",
    "mix_output_tokens", "mix_cache_hit_rate", "ttft_slo_s", "tpot_slo_s", "sized_qps", "gpu_now",
    "gpus_now", "cost_now_monthly_usd", "option",
    *(k for k, *_ in OPTION_FIELDS), "cost_monthly_usd", "usd_per_mtok", "saving_monthly_usd",
    *(k for k, *_ in DETAIL_FIELDS),
)
_REF = Table(name="tblOptions", sheet="Options", rows=OPTION_ROWS,
             columns=tuple(C(key=k, header=k, help=k) for k in OPTION_KEYS))


def _o(key: str) -> Expr:
    return Ref(_REF, key)


def _per_fleet(body) -> PerRow:
    """A different expression on each row: ``body(fleet row j, slot k)`` with ``k`` in 0..ROWS_PER_FLEET-1."""
    return PerRow(tuple(body(i // ROWS_PER_FLEET, i % ROWS_PER_FLEET) for i in range(OPTION_ROWS)))


def _on_fleet(values: Cells) -> Expr:
    """``FLEET_SUM``: a per-route column summed over the routes this fleet is sized for."""
    return udf("FLEET_SUM", _o("fleet"), Cells(ROUTES, "backend"), Cells(ROUTES, "failover"), values)


def _slo(key: str) -> Expr:
    return udf("FLEET_SLO_S", _o("fleet"), Cells(ROUTES, "backend"), Cells(ROUTES, "failover"), Cells(ROUTES, "kind"),
               Cells(ROUTES, key))


def _option(field: str) -> Expr:
    """``OPTION_FIELD``: one figure of this row's option; blank for a fleet that carries no load."""
    return fn("IF", _o("load_qps").gt(0), udf("OPTION_FIELD", _o("option"), field), "")


def _columns() -> tuple[Column, ...]:
    fleet = _o("fleet")

    def col(key: str, header: str, help: str, body: Expr, fmt: str = "#,##0", kind: str = "number",
            width: float = 12.0) -> Column:
        return C(key=key, header=header, help=help, kind=kind, number_format=fmt, width=width,
                 formula=when_filled(fleet, body))

    def shared(key: str, header: str, help: str, body: Expr, fmt: str = "#,##0", kind: str = "number",
               width: float = 12.0) -> Column:
        """A figure of the fleet, the same on its rows: computed on its first row, referenced on the others."""
        return C(key=key, header=header, help=help, kind=kind, number_format=fmt, width=width,
                 formula=_per_fleet(lambda j, k: when_filled(fleet, body) if k == 0
                                    else At(_REF, key, j * ROWS_PER_FLEET)))

    def at_spec(key: str) -> Expr:
        return fn("INDEX", Cells(SPECS, key), _o("fleet_row"))

    name = lambda j: At(FLEET, "name", j)  # noqa: E731
    load = _o("load_qps")
    return (
        C(key="fleet_row", header="Fleet row [#]", help="The Fleet row these options are for", number_format="0",
          width=7, formula=_per_fleet(lambda j, k: lit(j + 1))),
        C(key="rank", header="Rank [#]", help="1 = cheapest; the last row of each fleet: the cheapest on its own GPU",
          number_format="0", width=6, formula=_per_fleet(lambda j, k: lit(k + 1 if k < OPTIONS_PER_FLEET else 1))),
        C(key="only_gpu", header="Only GPU [name]", help="Blank: every priced GPU of the GPUs sheet; else the fleet's "
          "own GPU", kind="text", width=12,
          formula=_per_fleet(lambda j, k: lit("") if k < OPTIONS_PER_FLEET
                             else fn("IF", name(j).eq(""), "", At(FLEET, "gpu", j)))),
        C(key="fleet", header="Fleet [name]", help="The Fleet row's name", kind="text", width=18,
          formula=_per_fleet(lambda j, k: fn("IF", name(j).eq(""), "", name(j)))),
        shared("model_spec", "Model as used [spec]", "The fleet's model as Specs gives it", at_spec("model_spec"),
            "General", "text", 24),
        shared("engine", "Engine", "The fleet's engine (Fleet)", fn("INDEX", Cells(FLEET, "engine"), _o("fleet_row")),
            "General", "text", 8),
        shared("load_qps", "Load [req/s]", "F1: peak QPS of the routes the fleet is sized for (its primary routes; a "
            "standby fleet: the routes that fail over to it)", _on_fleet(Cells(ROUTES, "peak_qps")), "#,##0.0"),
        shared("mix_input_tokens", "Mix input [tokens]", "The routes' input tokens per request (weighted by QPS)",
            fn("IF", load.gt(0), _on_fleet(Cells(RESULTS, "input_tokens_per_s")) / load, ""), "#,##0"),
        shared("mix_output_tokens", "Mix output [tokens]", "The routes' output tokens per request (weighted by QPS)",
            fn("IF", load.gt(0), _on_fleet(Cells(RESULTS, "output_tokens_per_s")) / load, ""), "#,##0"),
        shared("mix_cache_hit_rate", "Mix cache hit [fraction]", "Cached share of the routes' input tokens",
            fn("IFERROR", _on_fleet(Cells(RESULTS, "cached_tokens_per_s"))
               / _on_fleet(Cells(RESULTS, "input_tokens_per_s")), 0), "0%"),
        shared("ttft_slo_s", "TTFT SLO [s]", "F1: the strictest TTFT SLO of the fleet's latency-critical and "
               "interactive routes (0: bulk only, sized at throughput)", _slo("ttft_slo_s"), "0.000", width=9),
        shared("tpot_slo_s", "TPOT SLO [s]", "F1: the strictest TPOT SLO of those routes (0: bulk only)",
            _slo("tpot_slo_s"), "0.000", width=9),
        shared("sized_qps", "Sized for [req/s]", "The load over the plan's utilization threshold: an option runs at or "
            "below the policy threshold, as the fleet must (Results status OK)",
            fn("IF", PlanValue("utilization_threshold").gt(0), load / PlanValue("utilization_threshold"), load),
            "#,##0.0"),
        shared("gpu_now", "GPU now [name]", "The fleet's GPU (Fleet): its cheapest option is always found",
            fn("INDEX", Cells(FLEET, "gpu"), _o("fleet_row")), "General", "text", 12),
        shared("gpus_now", "GPUs now [count]", "The fleet as it is (Specs)", at_spec("gpus"), "#,##0", width=9),
        shared("cost_now_monthly_usd", "Cost now [USD/month]", "The fleet as it is (Specs)",
               at_spec("cost_monthly_usd"), "#,##0"),
        col("option", "Option [spec]", "F2 FLEET_OPTION: the option as one token (every figure right of it is read "
            "from it with OPTION_FIELD)", fn("IF", load.gt(0), udf(
                "FLEET_OPTION", _o("model_spec"), _o("sized_qps"), _o("mix_input_tokens"), _o("mix_output_tokens"),
                _o("mix_cache_hit_rate"), _o("ttft_slo_s"), _o("tpot_slo_s"), _o("rank"), _o("engine"), Block(GPUS),
                _o("gpu_now"), _o("only_gpu")), ""), "General", "text", 30),
        *(col(k, h, f"F2: {hp}", _option(k), fmt, kind, w) for k, h, hp, fmt, kind, w in OPTION_FIELDS),
        col("cost_monthly_usd", "Cost [USD/month]", "C1: the option's GPUs always on at its price",
            fn("IF", load.gt(0), udf("SELFHOST_USD_MONTHLY", _o("usd_per_gpu_hour"), _o("gpus")), ""), "#,##0"),
        col("usd_per_mtok", "Cost [USD/Mtok]", "The option's cost per million tokens (input + output) at the plan's "
            "average load (peak x avg-to-peak ratio): SELFHOST_USD_PER_MTOK_OUTPUT of the token rate",
            fn("IF", load.gt(0), udf("SELFHOST_USD_PER_MTOK_OUTPUT", _o("usd_per_gpu_hour"), load
                                     * PlanValue("avg_to_peak_ratio") * (_o("mix_input_tokens")
                                                                         + _o("mix_output_tokens")), _o("gpus")), ""),
            "0.000"),
        col("saving_monthly_usd", "Saving [USD/month]", "Cost now - the option's cost (negative: the option costs "
            "more)", fn("IF", load.gt(0), _o("cost_now_monthly_usd") - _o("cost_monthly_usd"), ""), "#,##0"),
        *(col(k, h, f"F2: {hp}", _option(k), fmt, kind, w) for k, h, hp, fmt, kind, w in DETAIL_FIELDS),
    )


OPTIONS = Table(
    name="tblOptions",
    sheet="Options",
    rows=OPTION_ROWS,
    title="Fleet options: the cheapest fleets meeting both SLOs for each fleet's load (formulas; locked)",
    note="Per Fleet row: the 3 cheapest over every priced GPU of the GPUs sheet (TP 1/2/4/8, TP 8 x PP 2, weights "
    "and KV as released or FP8, aggregated or prefill/decode pools), then the cheapest on its own GPU.",
    columns=_columns(),
)
assert tuple(c.key for c in OPTIONS.columns) == OPTION_KEYS
