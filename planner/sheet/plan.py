"""Spreadsheet functions that read the plan's own tables: the catalog sheets as spec tokens, and per-backend totals.

They keep the template's formulas short enough to audit: a Results cell reads "the TPM demand of every route on this
backend", not a SUMIFS over two ranges; a fleet's functions read the model and GPU rows the Models and GPUs sheets
show (:mod:`planner.catalog_sheet`), not the bundled catalog behind the planner's back.
"""

from __future__ import annotations

from planner import catalog_sheet, decision
from planner.errors import ArgumentError
from planner.registry import Arg, sheet_function

BACKEND = Arg(name="backend", unit="name", kind="text", help="Backend name (a row of Providers or Fleet)")
BACKENDS = Arg(name="backends", unit="names", kind="texts", help="The backend column of the routes (Routes!L4:L23)")
VALUES = Arg(name="values", unit="per route", kind="numbers", help="A column with one value per route, aligned")


@sheet_function(
    summary="The spec token of a Models-sheet row: the sheet's facts (blank cells fall back to the bundled catalog) "
    "in the form every model argument accepts.",
    args=(Arg(name="model", unit="name", kind="text", help="Model name (a row of the Models sheet)"),
          Arg(name="models", unit="table", kind="table", help="The Models sheet's range, header row included")),
    returns="spec token",
    returns_kind="text",
    category="Plan",
    example='=MODEL_SPEC("tiny", {"Model [name]","Layers [count]";"tiny",2}) -> "tiny|layers=2"',
)
def MODEL_SPEC(model, models):
    headers, row = catalog_sheet.find_row(model, models, "model")
    return catalog_sheet.model_token(row, headers)


@sheet_function(
    summary="The spec token of a GPUs-sheet row (blank cells fall back to the bundled catalog).",
    args=(Arg(name="gpu", unit="name", kind="text", help="GPU name (a row of the GPUs sheet)"),
          Arg(name="gpus", unit="table", kind="table", help="The GPUs sheet's range, header row included")),
    returns="spec token",
    returns_kind="text",
    category="Plan",
    example='=GPU_SPEC("h100-sxm", {"GPU [name]","HBM [GiB]";"h100-sxm",80}) -> "h100-sxm|hbm_gib=80"',
)
def GPU_SPEC(gpu, gpus):
    headers, row = catalog_sheet.find_row(gpu, gpus, "gpu")
    return catalog_sheet.gpu_token(row, headers)


@sheet_function(
    summary="Which facts of a spec token come from the bundled catalog because the sheet leaves them blank.",
    args=(Arg(name="spec", unit="spec token", kind="text", help="A MODEL_SPEC or GPU_SPEC result"),
          Arg(name="kind", unit="model/gpu", kind="text", help="model or gpu")),
    returns="text",
    returns_kind="text",
    category="Plan",
    example='=BUNDLED_FACTS("h100-sxm|hbm_gib=80", "gpu") -> "bundled: display_name, torch_total_gib, '
    'mem_bw_gb_s, bf16_tflops, fp8_tflops, usd_per_gpu_hour"',
)
def BUNDLED_FACTS(spec, kind):
    if kind not in ("model", "gpu"):
        raise ArgumentError("kind", kind, "model or gpu")
    return catalog_sheet.bundled_fallback(spec, kind)


@sheet_function(
    summary="The sum of a per-route column over the routes on one backend (routes on a backend share its limits, "
    "KV and FLOP/s); a refusal in a summed cell is the result, so no cause is summed away.",
    args=(BACKEND, BACKENDS, VALUES),
    returns="the values' unit",
    category="Plan",
    example='=BACKEND_SUM("a", {"a","b","A"}, {1,2,3}) -> 4',
    formula_ids=("C7",),
)
def BACKEND_SUM(backend, backends, values):
    return decision.backend_sum(backend, backends, values)


FAILOVERS = Arg(name="failovers", unit="names", kind="texts", help="The failover column of the routes (Routes!M4:M23)")


@sheet_function(
    summary="The sum of a per-route column over the routes that move from a failed backend to one receiver "
    "(backend = failed and failover = receiver): what an outage adds to the receiver.",
    args=(Arg(name="failed_backend", unit="name", kind="text", help="The backend that is down"),
          Arg(name="receiver", unit="name", kind="text", help="The failover backend taking its routes"),
          BACKENDS, FAILOVERS, VALUES),
    returns="the values' unit",
    category="Plan",
    example='=OUTAGE_SUM("a", "c", {"a","a","b"}, {"c","c","c"}, {600,600,50}) -> 1200',
    formula_ids=("C8",),
)
def OUTAGE_SUM(failed_backend, receiver, backends, failovers, values):
    return decision.outage_sum(failed_backend, receiver, backends, failovers, values)


@sheet_function(
    summary="The highest of a per-route column over the routes on one backend (0 when it has none).",
    args=(BACKEND, BACKENDS, VALUES),
    returns="the values' unit",
    category="Plan",
    example='=BACKEND_MAX("a", {"a","b","a"}, {0.6,2,1.2}) -> 1.2',
    formula_ids=("C8",),
)
def BACKEND_MAX(backend, backends, values):
    return decision.backend_max(backend, backends, values)


@sheet_function(
    summary="The label on the row holding BACKEND_MAX: e.g. which receiver and constraint bind in a backend's "
    "worst outage.",
    args=(BACKEND, BACKENDS, VALUES,
          Arg(name="labels", unit="text", kind="texts", help="A column of labels, aligned with the values")),
    returns="label",
    returns_kind="text",
    category="Plan",
    example='=BACKEND_ARGMAX("a", {"a","b","a"}, {0.6,2,1.2}, {"c TPM","x","d KV"}) -> "d KV"',
    formula_ids=("C8",),
)
def BACKEND_ARGMAX(backend, backends, values, labels):
    return decision.backend_argmax(backend, backends, values, labels)


@sheet_function(
    summary="A fleet's utilization with one replica lost (N+1): u x R / (R - 1).",
    args=(Arg(name="utilization", unit="fraction", help="The fleet's utilization with every replica up"),
          Arg(name="replicas", unit="count", help="Replicas of the fleet (at least 2)")),
    returns="fraction",
    category="Plan",
    example="=N_PLUS_ONE_UTILIZATION(0.7, 4) -> 0.9333333333333332",
    formula_ids=("C8",),
)
def N_PLUS_ONE_UTILIZATION(utilization, replicas):
    return decision.n_plus_one_utilization(utilization, replicas)
