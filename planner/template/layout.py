"""The template's layout: the input tables (Plan, Routes, Providers, Fleet, GPUs, Models) and the Lists sheet.

Every column carries its header (with its unit), help, input constraints and, for computed columns, its formula
expression (:mod:`planner.excel.expr`). This module is pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from planner import catalog_sheet
from planner.excel.expr import At, Block, Cells, Evaluator, Expr, Ref, fn, udf
from planner.excel.tables import Column, Table
from planner.specs import LIMIT_MULTIPLIERS, LIMIT_SCOPES

ROUTE_ROWS = 20
FORECAST_MONTHS = 36
"""Rows of the Forecast sheet's month table (the Plan's forecast_months, 12-36, fills the first ones)."""
ROUTE_DEMAND_HEADER_ROW = 4 + FORECAST_MONTHS + 4
"""The Forecast sheet's per-route demand index (tblRouteDemand, inputs) starts below the month table."""
FORECAST_ROUTES_HEADER_ROW = ROUTE_DEMAND_HEADER_ROW + ROUTE_ROWS + 4
"""The Forecast sheet's route table (tblForecastRoutes) starts below the per-route demand index: Results' months to
breach reads its route shares."""
PROVIDER_ROWS = 8
FLEET_ROWS = 6
GPU_ROWS = 24
MODEL_ROWS = 36

ROUTE_KINDS = ("latency-critical", "bulk", "interactive")
KV_DTYPES = ("auto", "bf16", "fp16", "fp8", "int8")
WEIGHT_DTYPES = ("auto", "bf16", "fp16", "fp8", "int8", "w8a16", "int4", "mxfp4")
"""The Fleet sheet's weight dtypes (docs/template.md, 2.8.0): ``int8`` is W8A8 (8-bit weights and activations,
INT8 GEMMs), ``w8a16`` weight-only INT8 (8-bit weights, 16-bit math: vLLM's Marlin / Machete kernels)."""
ENGINES = ("vllm", "sglang", "trtllm")
FLAGS = ("TRUE", "FALSE")
SCOPES = LIMIT_SCOPES
MULTIPLIERS = LIMIT_MULTIPLIERS
CONSTRAINTS = ("RPM", "TPM", "ITPM", "OTPM", "RPD", "TPD", "BURST", "KV", "COMPUTE", "LOAD", "TTFT", "TPOT")
"""Constraint labels, in the order of the utilization columns of Results (what BINDING_CONSTRAINT returns)."""

OUTAGE_CONSTRAINTS = ("RPM", "TPM", "ITPM", "OTPM", "RPD", "TPD", "KV", "COMPUTE", "LOAD")
"""Constraints checked on a failover receiver, in the order of the Failover sheet's outage columns."""

LISTS: dict[str, tuple[str, ...]] = {
    "kind": ROUTE_KINDS,
    "kv_dtype": KV_DTYPES,
    "weight_dtype": WEIGHT_DTYPES,
    "engine": ENGINES,
    "flag": FLAGS,
    "scope": SCOPES,
    "multiplied_by": MULTIPLIERS,
    "constraint": CONSTRAINTS,
    "outage_constraint": OUTAGE_CONSTRAINTS,
}

C = Column

PLAN = Table(
    name="tblPlan",
    sheet="Plan",
    rows=7,
    title="Plan settings",
    note="One value per setting. Policy threshold, growth and the average-to-peak ratio used for monthly cost.",
    columns=(
        C(key="setting", header="Setting", help="Setting name (fixed)", kind="text", width=26),
        C(key="value", header="Value", help="Your value", kind="text", width=22),
        C(key="unit", header="Unit", help="Unit of the value (fixed)", kind="text", width=18),
        C(key="help", header="Meaning", help="What the setting does (fixed)", kind="text", width=70),
    ),
)
PLAN_SETTINGS: tuple[tuple[str, str, str, dict[str, Any]], ...] = (
    ("name", "text", "Name of the plan", {"kind": "text"}),
    ("utilization_threshold", "fraction", "Policy: a utilization above this is flagged (0 < x <= 1)",
     {"minimum": 0.0, "maximum": 1.0, "default": 0.8}),
    ("monthly_growth", "fraction/month", "Demand growth per month, for months to breach (0.08 = 8 %)",
     {"minimum": 0.0, "maximum": 10.0, "default": 0.0}),
    ("avg_to_peak_ratio", "fraction", "Average QPS over the month / peak QPS, for monthly cost and daily limits",
     {"minimum": 0.0, "maximum": 1.0, "default": 0.5}),
    ("burst_factor", "x", "Peak-window requests / average-window requests at the peak minute, for limits enforced "
     "per second or per 10 s (blank: Poisson at the 99th percentile)",
     {"minimum": 1.0, "maximum": 100.0, "required": False}),
    ("forecast_months", "months", "Months the Forecast sheet covers (12 to 36; month 1 = the plan as entered)",
     {"minimum": 12.0, "maximum": 36.0, "default": 12}),
    ("sensitivity_spread", "fraction", "The What-if sheet's tornado and demand cases: each input at -x and +x (0.2 = "
     "-20 % / +20 %)", {"minimum": 0.01, "maximum": 0.9, "default": 0.2}),
)


def plan_setting_row(setting: str) -> int:
    """The Plan table's data row of ``setting`` (its position in :data:`PLAN_SETTINGS`); KeyError if none."""
    for i, (name, *_rest) in enumerate(PLAN_SETTINGS):
        if name == setting:
            return i
    raise KeyError(setting)


def plan_value_cell(setting: str) -> str:
    return PLAN.cell("value", plan_setting_row(setting))


@dataclass(frozen=True)
class PlanValue(Expr):
    """A plan setting (absolute reference to its value cell on the Plan sheet)."""

    setting: str

    def render(self, row: int) -> str:
        cell = plan_value_cell(self.setting)
        col = cell.rstrip("0123456789")
        return f"Plan!${col}${cell[len(col):]}"

    def evaluate(self, ev: Evaluator, row: int) -> Any:
        return ev.get(PLAN.sheet, plan_value_cell(self.setting))


def _sheet_columns(columns: tuple[catalog_sheet.SheetColumn, ...]) -> tuple[Column, ...]:
    """Template columns from the catalog-sheet definition (:mod:`planner.catalog_sheet`): one definition of what a
    catalog sheet holds, for the template, ``MODEL_SPEC``/``GPU_SPEC`` and the bundled catalog's rows."""
    return tuple(
        C(key=c.key, header=c.header, help=c.help, kind="text" if c.kind == "text" else "number",
          minimum=None if c.kind == "text" else 0, integer=c.kind == "integer", number_format=c.number_format,
          width=c.width)
        for c in columns
    )


GPUS = Table(
    name="tblGPUs",
    sheet="GPUs",
    rows=GPU_ROWS,
    title="GPU catalog (editable): the facts every fleet on this GPU is computed with",
    note="Edit a value or add a row: fleets use this sheet (see Specs). A blank cell takes the bundled catalog's "
    "value. HBM as the driver reports it; prices on demand, USD per GPU-hour.",
    columns=_sheet_columns(catalog_sheet.GPU_COLUMNS),
)

MODELS = Table(
    name="tblModels",
    sheet="Models",
    rows=MODEL_ROWS,
    title="Model catalog (editable): architecture facts from config.json",
    note="Edit a value or add a row: fleets use this sheet (see Specs). A blank cell takes the bundled catalog's "
    "value; a model not in the bundled catalog needs every column up to Params active.",
    columns=_sheet_columns(catalog_sheet.MODEL_COLUMNS),
)

PROVIDERS = Table(
    name="tblProviders",
    sheet="Providers",
    rows=PROVIDER_ROWS,
    title="Provider API backends: rate limits, counting rules and prices",
    note="Limits per minute (RPD/TPD per day) as the provider states them, with the scope they apply to: keys "
    "multiply a limit only where its scope is per key, deployment or account-region. Blank: no such limit. "
    "Prices in USD per million tokens; a blank cache-write price bills writes as uncached input.",
    columns=(
        C(key="name", header="Backend [name]", help="Unique backend name routes refer to", kind="text", width=20),
        C(key="provider", header="Provider", help="Provider (anthropic, openai, ...)", kind="text", width=12),
        C(key="tier", header="Tier", help="Usage tier", kind="text", width=10),
        C(key="model", header="Model", help="Provider model (class)", kind="text", width=20),
        C(key="keys", header="Keys [count]", help="Keys / deployments / regions sharing the load", minimum=1,
          maximum=1000, integer=True, required=True),
        C(key="scope", header="Limit scope", help="What a limit is metered per: organization, project, key, "
          "deployment or account-region (keys multiply only the last three)", kind="text", choices="scope",
          required=True, width=14),
        C(key="multiplied_by", header="More capacity from", help="What adds capacity at this scope (another "
          "deployment, region, ...); blank: nothing at this scope", kind="text", choices="multiplied_by", width=12),
        C(key="raise_by", header="Raise it with", help="Other ways to raise the limit, separated by semicolons",
          kind="text", width=30),
        C(key="rpm", header="RPM limit [req/min]", help="Requests per minute per key", minimum=0,
          number_format="#,##0"),
        C(key="tpm", header="TPM limit [tokens/min]", help="Total tokens per minute per key", minimum=0,
          number_format="#,##0"),
        C(key="itpm", header="ITPM limit [tokens/min]", help="Input tokens per minute per key", minimum=0,
          number_format="#,##0"),
        C(key="otpm", header="OTPM limit [tokens/min]", help="Output tokens per minute per key", minimum=0,
          number_format="#,##0"),
        C(key="rpd", header="RPD limit [req/day]", help="Requests per day per key (Gemini, OpenAI low tiers)",
          minimum=0, number_format="#,##0"),
        C(key="tpd", header="TPD limit [tokens/day]", help="Tokens per day per key (batch queues, low tiers)",
          minimum=0, number_format="#,##0"),
        C(key="window_s", header="Window [s]", help="Enforcement window behind the per-minute limits (1, 10 or 60)",
          minimum=1, maximum=60, required=True, number_format="0"),
        C(key="cached_reads_count_itpm", header="Cached reads count [TRUE/FALSE]",
          help="Prefix-cache reads count toward ITPM/TPM", kind="flag", choices="flag", required=True),
        C(key="reserves_max_tokens", header="Reserves max_tokens [TRUE/FALSE]",
          help="Admission counts input + max_tokens (D3)", kind="flag", choices="flag", required=True),
        C(key="output_token_weight", header="Output quota weight [x]",
          help="Quota tokens one reserved output token burns toward TPM (AWS Bedrock, Claude 3.7+: 5); blank: 1",
          minimum=0, maximum=100, number_format="0.0"),
        C(key="usd_per_mtok_input", header="Input [USD/Mtok]", help="Uncached input price", minimum=0,
          number_format="0.000"),
        C(key="usd_per_mtok_cached_input", header="Cached input [USD/Mtok]", help="Cache-read price", minimum=0,
          number_format="0.000"),
        C(key="usd_per_mtok_cache_write", header="Cache write [USD/Mtok]", help="Cache-write price", minimum=0,
          number_format="0.000"),
        C(key="usd_per_mtok_output", header="Output [USD/Mtok]", help="Output price", minimum=0,
          number_format="0.000"),
        # a provisioned-throughput quote: Bedrock publishes neither the price nor the throughput of a model unit
        # (ask the account manager), and Azure PTU / Vertex GSU prices are negotiated; the Forecast's tblProvisioned
        # sizes and prices the backend's units from these where they are typed
        C(key="pt_usd_per_unit_hour", header="Quote [USD/unit-h]", help="Your provisioned-throughput quote: price "
          "per unit-hour (Bedrock model unit, Azure PTU, Vertex GSU) for the term quoted; blank: the bundled public "
          "price (Bedrock: none public)", minimum=0, maximum=1e6, number_format="0.00", width=11),
        C(key="pt_input_tpm_per_unit", header="Quote input [tokens/min/unit]", help="Your quote: input tokens per "
          "minute one unit processes (both throughput cells typed: units = the larger of input and output demand "
          "over them); blank: the bundled figure", minimum=0, maximum=1e10, number_format="#,##0", width=12),
        C(key="pt_output_tpm_per_unit", header="Quote output [tokens/min/unit]", help="Your quote: output tokens "
          "per minute one unit generates", minimum=0, maximum=1e10, number_format="#,##0", width=12),
        C(key="source", header="Source", help="Where the limits and prices come from", kind="text", width=40),
        C(key="as_of", header="As of [date]", help="Date of the facts", kind="text", width=14),
    ),
)

FLEET = Table(
    name="tblFleet",
    sheet="Fleet",
    rows=FLEET_ROWS,
    title="Self-hosted fleets",
    note="One row per fleet (model x GPU x parallelism). Price blank: the GPU catalog price is used.",
    columns=(
        C(key="name", header="Backend [name]", help="Unique backend name routes refer to", kind="text", width=20),
        C(key="model", header="Model [name]", help="From the Models sheet", kind="text", choices="tblModels.name",
          required=True, width=20),
        C(key="gpu", header="GPU [name]", help="From the GPUs sheet", kind="text", choices="tblGPUs.name",
          required=True),
        C(key="tp", header="TP [GPUs]", help="Tensor-parallel degree", minimum=1, maximum=64, integer=True,
          required=True),
        C(key="pp", header="PP [stages]", help="Pipeline-parallel stages (GPUs per replica = TP x PP)", minimum=1,
          maximum=64, integer=True, required=True),
        C(key="replicas", header="Replicas [count]", help="Engine replicas", minimum=1, maximum=10000,
          integer=True, required=True),
        C(key="gpu_memory_utilization", header="GPU mem util [fraction]", help="vLLM gpu_memory_utilization",
          minimum=0.05, maximum=1.0, required=True, number_format="0.00"),
        C(key="kv_dtype", header="KV dtype", help="KV-cache dtype", kind="text", choices="kv_dtype", required=True),
        C(key="weight_dtype", header="Weight dtype", help="Weights as served: auto (the released checkpoint), bf16, "
          "fp8, int8 (W8A8), w8a16 (8-bit weights, 16-bit math), int4, mxfp4, ...", kind="text",
          choices="weight_dtype", required=True),
        C(key="engine", header="Engine", help="Serving engine", kind="text", choices="engine", required=True),
        C(key="usd_per_gpu_hour", header="Price [USD/GPU-h]", help="Blank: GPU catalog price", minimum=0,
          number_format="0.00"),
        C(key="mbu", header="MBU [fraction]", help="Achieved fraction of peak HBM bandwidth (P1)", minimum=0.05,
          maximum=1.0, required=True, number_format="0.00"),
        C(key="mfu", header="MFU [fraction]", help="Achieved fraction of peak FLOP/s (P2 decode floor, P4 prefill)",
          minimum=0.05, maximum=1.0, required=True, number_format="0.00"),
    ),
)

ROUTES = Table(
    name="tblRoutes",
    sheet="Routes",
    rows=ROUTE_ROWS,
    title="Routes: one row per route or product surface",
    note="Demand at the peak. Backend and failover name a row of Providers or Fleet.",
    columns=(
        C(key="name", header="Route [name]", help="Unique route name", kind="text", width=18),
        C(key="kind", header="Kind", help="latency-critical, bulk or interactive", kind="text", choices="kind",
          required=True, width=16),
        C(key="peak_qps", header="Peak [req/s]", help="Requests per second at the peak", minimum=0,
          maximum=1e6, required=True, number_format="#,##0.0"),
        C(key="avg_input_tokens", header="Avg input [tokens]", help="Average prompt tokens", minimum=0,
          maximum=1e7, required=True, number_format="#,##0"),
        C(key="avg_output_tokens", header="Avg output [tokens]", help="Average completion tokens", minimum=0,
          maximum=1e6, required=True, number_format="#,##0"),
        C(key="p95_context_tokens", header="p95 context [tokens]", help="95th-percentile input + output",
          minimum=1, maximum=1e7, required=True, number_format="#,##0"),
        C(key="max_tokens", header="max_tokens [tokens]", help="Request cap (reserved where the provider does)",
          minimum=1, maximum=1e7, required=True, number_format="#,##0"),
        C(key="cache_hit_rate", header="Prefix-cache hit [fraction]", help="Share of input read from cache",
          minimum=0, maximum=1, required=True, number_format="0%"),
        C(key="cache_write_tokens", header="Cache writes [tokens/req]", help="Input tokens written to cache",
          minimum=0, maximum=1e7, required=True, number_format="#,##0"),
        C(key="ttft_slo_s", header="TTFT SLO [s]", help="Time to first token budget", minimum=0.001,
          maximum=600, required=True, number_format="0.000"),
        C(key="tpot_slo_s", header="TPOT SLO [s]", help="Time per output token budget", minimum=0.0001,
          maximum=10, required=True, number_format="0.000"),
        C(key="backend", header="Backend [name]", help="A Providers or Fleet backend", kind="text",
          choices="tblLists.backend", required=True, width=20),
        C(key="failover", header="Failover [name]", help="Backend taking the load when the primary is down",
          kind="text", choices="tblLists.backend", width=20),
        C(key="prefix_tokens", header="Shared prefix [tokens]", help="Tokens of one shared prefix the cache hit rate "
          "relies on (system prompt, tools, conversation); blank: input x hit rate", minimum=0, maximum=1e7,
          number_format="#,##0"),
        C(key="distinct_prefixes", header="Distinct prefixes [count]", help="Shared prefixes kept warm at once on "
          "each replica (prompt versions, tenants, live conversations); blank: 1", minimum=0, maximum=1e7,
          number_format="#,##0"),
        C(key="new_route", header="New [TRUE/FALSE]", help="A new model or product: its demand is not known yet "
          "(the What-if sheet then recommends an API); blank: FALSE", kind="flag", choices="flag", width=10),
        # issue 14: demand over the day (planner/template/profiles.py)
        C(key="profile", header="Profile [name]", help="Hour-of-day profile from the Profiles sheet (blank: the "
          "Plan's average-to-peak ratio)", kind="text", width=20),
        C(key="monthly_growth", header="Own growth [fraction/month]", help="This route's demand growth per month "
          "(blank: the Plan's monthly growth, or its demand index): the Forecast and months to breach grow each "
          "route at its own rate", minimum=-0.5, maximum=10.0, number_format="0.0%", width=12),
    ),
)


@dataclass(frozen=True)
class PerRow(Expr):
    """A different expression on each data row (used by the Lists sheet's backend column)."""

    exprs: tuple[Expr, ...]

    def render(self, row: int) -> str:
        return self.exprs[row].render(row)

    def evaluate(self, ev: Evaluator, row: int) -> Any:
        return self.exprs[row].evaluate(ev, row)

    def children(self) -> Sequence[Expr]:
        return self.exprs


LIST_ROWS = PROVIDER_ROWS + FLEET_ROWS


def _backend_name(i: int) -> Expr:
    src, j = (PROVIDERS, i) if i < PROVIDER_ROWS else (FLEET, i - PROVIDER_ROWS)
    name = At(src, "name", j)
    return fn("IF", name.eq(""), "", name)


LISTS_TABLE = Table(
    name="tblLists",
    sheet="Lists",
    rows=LIST_ROWS,
    title="Lists feeding the dropdowns (fixed; the backend column follows Providers and Fleet)",
    columns=tuple(
        C(key=k, header=f"{k} [choice]", help=f"Allowed values of {k}", kind="text", width=18) for k in LISTS
    )
    + (
        C(key="backend", header="backend [name]", help="Provider and fleet backend names",
          kind="text", formula=PerRow(tuple(_backend_name(i) for i in range(LIST_ROWS))), width=20),
    ),
)

# ---- Specs: the model and GPU facts each fleet is computed with -----------------------------------------------

_SPEC_KEYS = ("fleet", "model_spec", "gpu_spec", "model_bundled", "gpu_bundled", "gpus", "usd_per_gpu_hour",
              "cost_monthly_usd", "routes", "standby_cost_monthly_usd")
_SPECS_REF = Table(name="tblSpecs", sheet="Specs", rows=FLEET_ROWS,
                   columns=tuple(C(key=k, header=k, help=k) for k in _SPEC_KEYS))


def _spec_col(key: str, header: str, help: str, body: Expr, width: float, kind: str = "text",
              fmt: str = "General") -> Column:
    fleet = Ref(FLEET, "name")
    return C(key=key, header=header, help=help, kind=kind, width=width, number_format=fmt,
             formula=fn("IF", fleet.eq(""), "", body))


SPECS = Table(
    name="tblSpecs",
    sheet="Specs",
    rows=FLEET_ROWS,
    title="Specs: the model and GPU facts each fleet is computed with (formulas; locked)",
    note="One row per Fleet row: its Models and GPUs rows as every function reads them. Edit the Models or GPUs "
    "sheet to change them; a blank catalog cell takes the bundled value, listed on the right.",
    columns=(
        _spec_col("fleet", "Backend [name]", "The Fleet row's name", Ref(FLEET, "name"), 20),
        _spec_col("model_spec", "Model as used [spec]", "MODEL_SPEC of the fleet's model on the Models sheet",
                  udf("MODEL_SPEC", Ref(FLEET, "model"), Block(MODELS)), 60),
        _spec_col("gpu_spec", "GPU as used [spec]", "GPU_SPEC of the fleet's GPU on the GPUs sheet",
                  udf("GPU_SPEC", Ref(FLEET, "gpu"), Block(GPUS)), 60),
        _spec_col("model_bundled", "Model facts from the bundled catalog", "Model columns left blank on the sheet",
                  udf("BUNDLED_FACTS", Ref(_SPECS_REF, "model_spec"), "model"), 40),
        _spec_col("gpu_bundled", "GPU facts from the bundled catalog", "GPU columns left blank on the sheet",
                  udf("BUNDLED_FACTS", Ref(_SPECS_REF, "gpu_spec"), "gpu"), 40),
        _spec_col("gpus", "GPUs [count]", "TP x PP x replicas",
                  Ref(FLEET, "tp") * Ref(FLEET, "pp") * Ref(FLEET, "replicas"), 10, "number", "#,##0"),
        _spec_col("usd_per_gpu_hour", "Price [USD/GPU-h]", "The Fleet row's price, else the GPUs sheet's",
                  fn("IF", Ref(FLEET, "usd_per_gpu_hour").gt(0), Ref(FLEET, "usd_per_gpu_hour"),
                     udf("GPU_PRICE", Ref(_SPECS_REF, "gpu_spec"))),
                  12, "number", "0.00"),
        _spec_col("cost_monthly_usd", "Fleet cost [USD/month]", "C1: GPU-hours of a month at that price",
                  udf("SELFHOST_USD_MONTHLY", Ref(_SPECS_REF, "usd_per_gpu_hour"), Ref(_SPECS_REF, "gpus")), 14,
                  "number", "#,##0"),
        _spec_col("routes", "Routes served [count]", "Routes whose primary backend the fleet is (0: a standby "
                  "fleet, e.g. a failover in another region)",
                  fn("COUNTIFS", Cells(ROUTES, "backend"), Ref(FLEET, "name")), 10, "number", "0"),
        _spec_col("standby_cost_monthly_usd", "Standby cost [USD/month]", "The fleet's cost when it serves no route "
                  "as primary (its routes carry it otherwise)",
                  fn("IF", Ref(_SPECS_REF, "routes").eq(0), Ref(_SPECS_REF, "cost_monthly_usd"), 0), 14, "number",
                  "#,##0"),
    ),
)
assert tuple(c.key for c in SPECS.columns) == _SPEC_KEYS
