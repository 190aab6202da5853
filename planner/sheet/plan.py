"""Spreadsheet functions that read the plan's own tables: the catalog sheets as spec tokens, and per-backend totals.

They keep the template's formulas short enough to audit: a Results cell reads "the TPM demand of every route on this
backend", not a SUMIFS over two ranges; a fleet's functions read the model and GPU rows the Models and GPUs sheets
show (:mod:`planner.catalog_sheet`), not the bundled catalog behind the planner's back.
"""

from __future__ import annotations

from typing import Any

from planner import catalog_sheet, decision
from planner.coerce import SharedRows, _number, prepare_args
from planner.errors import ArgumentError
from planner.registry import REGISTRY, Arg, sheet_function

BACKEND = Arg(name="backend", unit="name", kind="text", help="Backend name (a row of Providers or Fleet)")
BACKENDS = Arg(name="backends", unit="names", kind="texts", help="The backend column of the routes (Routes!L4:L23)")
VALUES = Arg(name="values", unit="per route", kind="numbers", help="A column with one value per route, aligned",
             row_errors=True)


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
    summary="The price per GPU-hour in a GPU_SPEC token: the GPUs sheet's, else the bundled catalog's (a fleet "
    "that names its GPU by an alias finds the price of the row it resolves to).",
    args=(Arg(name="gpu_token", unit="spec token", kind="text", help="A GPU_SPEC result"),),
    returns="USD/GPU-h",
    category="Plan",
    example='=GPU_PRICE("h100-sxm|usd_per_gpu_hour=2.5") -> 2.5',
    formula_ids=("C4",),
)
def GPU_PRICE(gpu_token):
    gpu = catalog_sheet.gpu_from_token(gpu_token)
    if gpu.usd_per_gpu_hour is None:
        # the GPU's name, not the whole token (its facts are the GPUs sheet's, not what the planner has to fix)
        raise ArgumentError("gpu", gpu.name, "a GPU with a price per GPU-hour (the GPUs sheet's price column, "
                            "or the Fleet row's own price)")
    return float(gpu.usd_per_gpu_hour)


@sheet_function(
    summary="Which facts of a spec token come from the bundled catalog because the sheet leaves them blank.",
    args=(Arg(name="spec", unit="spec token", kind="text", help="A MODEL_SPEC or GPU_SPEC result"),
          Arg(name="kind", unit="model/gpu", kind="text", help="model or gpu")),
    returns="text",
    returns_kind="text",
    category="Plan",
    example='=BUNDLED_FACTS("h100-sxm|hbm_gib=80", "gpu") -> "bundled: display_name, torch_total_gib, '
    'mem_bw_gb_s, bf16_tflops, fp8_tflops, int8_tops, usd_per_gpu_hour, compute_capability"',
)
def BUNDLED_FACTS(spec, kind):
    if kind not in ("model", "gpu"):
        raise ArgumentError("kind", kind, "model or gpu")
    return catalog_sheet.bundled_fallback(spec, kind)


@sheet_function(
    summary="The sum of a per-route column over the routes on one backend (routes on a backend share its limits, "
    "KV and FLOP/s); a refusal in a summed cell is the result, so no cause is summed away; one in another "
    "backend's row is not.",
    args=(BACKEND, BACKENDS, VALUES),
    returns="the values' unit",
    category="Plan",
    example='=BACKEND_SUM("a", {"a","b","A"}, {1,2,3}) -> 4',
    formula_ids=("C7",),
)
def BACKEND_SUM(backend, backends, values):
    return decision.backend_sum(backend, backends=backends, values=values)


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
    return decision.outage_sum(failed_backend, receiver=receiver, backends=backends, failovers=failovers, values=values)


@sheet_function(
    summary="The highest of a per-route column over the routes on one backend (0 when it has none).",
    args=(BACKEND, BACKENDS, VALUES),
    returns="the values' unit",
    category="Plan",
    example='=BACKEND_MAX("a", {"a","b","a"}, {0.6,2,1.2}) -> 1.2',
    formula_ids=("C8",),
)
def BACKEND_MAX(backend, backends, values):
    return decision.backend_max(backend, backends=backends, values=values)


@sheet_function(
    summary="The label on the row holding BACKEND_MAX: e.g. which receiver and constraint bind in a backend's "
    "worst outage.",
    args=(BACKEND, BACKENDS, VALUES,
          Arg(name="labels", unit="text", kind="texts", help="A column of labels, aligned with the values",
              row_errors=True)),
    returns="label",
    returns_kind="text",
    category="Plan",
    example='=BACKEND_ARGMAX("a", {"a","b","a"}, {0.6,2,1.2}, {"c TPM","x","d KV"}) -> "d KV"',
    formula_ids=("C8",),
)
def BACKEND_ARGMAX(backend, backends, values, labels):
    return decision.backend_argmax(backend, backends=backends, values=values, labels=labels)


@sheet_function(
    summary="A fleet's utilization with one replica lost (N+1): u x R / (R - 1); one replica: infinite (1E9) "
    "unless idle.",
    args=(Arg(name="utilization", unit="fraction", help="The fleet's utilization with every replica up"),
          Arg(name="replicas", unit="count", help="Replicas of the fleet (at least 1)")),
    returns="fraction",
    category="Plan",
    example="=N_PLUS_ONE_UTILIZATION(0.7, 4) -> 0.9333333333333332",
    formula_ids=("C8",),
)
def N_PLUS_ONE_UTILIZATION(utilization, replicas):
    return decision.n_plus_one_utilization(utilization, replicas=replicas)


# ---- Functions of a plan row: a fleet's or provider's facts read from its row, so a formula reads as a sentence ----

FLEET = Arg(name="fleet", unit="name", kind="text", help="The fleet (a name in the Fleet sheet's first column)")
FLEETS = Arg(name="fleets", unit="table", kind="table", help="The Fleet sheet's range, header row included")
SPECS = Arg(name="specs", unit="table", kind="table",
            help="The Specs sheet's range, header row included (the model and GPU as the catalog sheets give them)")
PROVIDER = Arg(name="provider", unit="name", kind="text", help="The provider backend (a name on the Providers sheet)")
PROVIDERS = Arg(name="providers", unit="table", kind="table", help="The Providers sheet's range, header row included")

FLEET_HEADERS = {
    "tp": "TP [GPUs]", "pp": "PP [stages]", "replicas": "Replicas [count]",
    "gpu_memory_utilization": "GPU mem util [fraction]", "kv_dtype": "KV dtype", "weight_dtype": "Weight dtype",
    "engine": "Engine", "mfu": "MFU [fraction]",
}
"""The Fleet sheet's headers these functions read, by argument (the template's contract; a test checks them)."""
SPEC_HEADERS = {"model": "Model as used [spec]", "gpu": "GPU as used [spec]"}
"""The Specs sheet's headers: the model and GPU spec tokens of each fleet."""
PROVIDER_HEADERS = {
    "keys": "Keys [count]", "scope": "Limit scope", "window_s": "Window [s]",
    "rpm": "RPM limit [req/min]", "tpm": "TPM limit [tokens/min]", "itpm": "ITPM limit [tokens/min]",
    "otpm": "OTPM limit [tokens/min]", "rpd": "RPD limit [req/day]", "tpd": "TPD limit [tokens/day]",
    "usd_per_mtok_input": "Input [USD/Mtok]", "usd_per_mtok_cached_input": "Cached input [USD/Mtok]",
    "usd_per_mtok_cache_write": "Cache write [USD/Mtok]", "usd_per_mtok_output": "Output [USD/Mtok]",
}
"""The Providers sheet's headers, by limit or argument."""


_ROWS: dict[tuple[Any, ...], tuple[Any, dict[str, str], dict[str, Any]]] = {}
ROWS_KEPT = 256
"""Rows :func:`_row` keeps before it starts over (bounded memory in long batches: a 20-route plan asks for about six
distinct rows)."""


def _row(name: Any, table: Any, what: str, headers: dict[str, str]) -> dict[str, Any]:
    """The cells of the row named ``name``, by argument (a header the table lacks reads as a blank cell).

    A table handed over as the shared rows of a plan's block (:class:`planner.coerce.SharedRows`: one object per
    block, never changed) has each row it is asked for read once (the table and the headers held, so their ``id``s
    are not reused):
    the provider and fleet functions of every route look up the same few rows about 260 times per 20-route plan.
    Each caller gets its own copy of the dictionary."""
    key = None
    if type(table) is SharedRows:
        try:
            key = (id(table), type(name), name, what, id(headers))
            hit = _ROWS.get(key)
        except TypeError:  # an unhashable name: read, not kept
            key = hit = None
        if hit is not None and hit[0] is table and hit[1] is headers:
            return dict(hit[2])
    head, row = catalog_sheet.find_row(name, table, what)
    cells = dict(zip(head, row))
    out = {k: cells.get(h) for k, h in headers.items()}
    if key is not None:
        if len(_ROWS) >= ROWS_KEPT:
            _ROWS.clear()
        _ROWS[key] = (table, headers, out)
        return dict(out)
    return out


_FLEETS: dict[tuple[Any, ...], tuple[Any, Any, dict[str, Any]]] = {}


def _fleet(fleet: Any, fleets: Any, specs: Any) -> dict[str, Any]:
    """The fleet's Fleet and Specs rows (:func:`_row`) in one dictionary, by argument. **Read it, never change it**:
    for tables handed over as a plan's shared rows (:class:`planner.coerce.SharedRows`) the dictionary is kept
    (:data:`_FLEETS`, keyed on the two tables' ``id``s, which it holds, and the fleet's name with its type; at most
    :data:`ROWS_KEPT` entries, emptied when full) and every caller gets the same one: a plan's fleet functions ask
    for the same few fleets about 200 times."""
    key = None
    if type(fleets) is SharedRows and type(specs) is SharedRows:
        try:
            key = (id(fleets), id(specs), type(fleet), fleet)
            hit = _FLEETS.get(key)
        except TypeError:  # an unhashable name: read, not kept
            key = hit = None
        if hit is not None and hit[0] is fleets and hit[1] is specs:
            return hit[2]
    f = _row(fleet, fleets, "fleet", FLEET_HEADERS)
    f.update(_row(fleet, specs, "fleet", SPEC_HEADERS))
    if key is not None:
        if len(_FLEETS) >= ROWS_KEPT:
            _FLEETS.clear()
        _FLEETS[key] = (fleets, specs, f)
    return f


def _call(name: str, *raw: Any) -> Any:
    """A registered function called with cells, exactly as a formula calls it (the same coercion, the same refusal
    of an Excel error or of an upstream message), so reading a row changes nothing but the formula's length."""
    spec = REGISTRY[name]
    return spec.impl(*prepare_args(spec, raw))


_TEMPLATES: dict[tuple[str, int], tuple[Any, Any, list[Any]]] = {}


def _call_row(site: str, row: dict[str, Any], name: str, raw: tuple[Any, ...], free: tuple[int, ...]) -> Any:
    """``_call(name, *raw)`` for a call site (``site``: one per call of this function) whose arguments are ``row``'s
    cells (:func:`_fleet`, :func:`_provider`) except at the positions ``free``, each a number the calling function's
    own coercion made (an int, or a float that is not a whole number below 2^53). Each argument is coerced alone
    (:func:`planner.coerce.prepare_args`: an Excel error or a refusal is found in argument order, then each argument
    coerced in turn), and such a number is neither an error nor changed by it: so the call's coerced arguments are
    the row's, coerced once with any number in the free places and kept (:data:`_TEMPLATES`, keyed on the site and
    the row's ``id``, the row held; at most :data:`ROWS_KEPT` entries, emptied when full), with this call's numbers
    in the free places, and the error a row's cells raise is raised again (nothing kept). A free argument that is
    not an int or float (a blank, a text, TRUE) goes the long way, as does every free position whose argument is not
    a number (none: the template's functions are written so)."""
    for i in free:
        t = type(raw[i])
        if t is not float and t is not int:
            return _call(name, *raw)
    key = (site, id(row))
    hit = _TEMPLATES.get(key)
    if hit is None or hit[0] is not row:
        spec = REGISTRY[name]
        if any(i >= len(spec.args) or spec.args[i].kind != "number" for i in free):  # pragma: no cover  (a misuse)
            return _call(name, *raw)
        # the row's cells coerced, 0 in the free places (replaced below); raises what the call would
        hit = (row, spec, prepare_args(spec, [0 if i in free else v for i, v in enumerate(raw)]))
        if len(_TEMPLATES) >= ROWS_KEPT:
            _TEMPLATES.clear()
        _TEMPLATES[key] = hit
    args = hit[2].copy()
    for i in free:
        v = raw[i]
        args[i] = _number(v)  # as prepare_args coerces a number
    return hit[1].impl(*args)


_FLEET_EXAMPLE = ('{"Backend [name]","TP [GPUs]","Replicas [count]","GPU mem util [fraction]","KV dtype";'
                  '"f8b",1,2,0.9,"auto"}, '
                  '{"Backend [name]","Model as used [spec]","GPU as used [spec]";"f8b","llama-3.1-8b","h100-sxm"}')


@sheet_function(
    summary="KV_FIT of a route on one fleet plus the KV that keeps its shared prefixes warm (PREFIX_KV_FIT, M10), the "
    "fleet's model, GPU, TP, PP, replicas, memory utilization, dtypes and engine read from its Fleet and Specs rows.",
    args=(FLEET, FLEETS, SPECS, Arg(name="peak_qps", unit="req/s", help="Requests per second at the peak"),
          Arg(name="latency_s", unit="s", help="Time a request is in flight (E2E at load)"),
          Arg(name="avg_context_tokens", unit="tokens", help="Context each in-flight request holds alone"),
          Arg(name="prefix_tokens", unit="tokens", help="Tokens of one shared prefix kept warm (0: none)", default=0),
          Arg(name="distinct_prefixes", unit="count", help="Distinct prefixes kept warm at once", default=1)),
    returns="fraction (<= 1 fits)",
    category="Plan",
    example=f'=FLEET_KV_FIT("f8b", {_FLEET_EXAMPLE}, 100, 2, 4096) -> 0.9742',
    formula_ids=("P7", "M11"),
)
def FLEET_KV_FIT(fleet, fleets, specs, peak_qps, latency_s, avg_context_tokens, prefix_tokens=0, distinct_prefixes=1):
    f = _fleet(fleet, fleets, specs)
    in_flight = _call_row("FLEET_KV_FIT", f, "KV_FIT", (
        f["model"], f["gpu"], peak_qps, latency_s, avg_context_tokens, f["replicas"], f["tp"],
        f["gpu_memory_utilization"], f["kv_dtype"], f["engine"], f["weight_dtype"], f["pp"]), (2, 3, 4))
    if prefix_tokens <= 0 or distinct_prefixes <= 0:
        return in_flight
    return in_flight + _prefix_kv_fit(f, prefix_tokens, distinct_prefixes)


_PREFIX_FITS: dict[tuple[Any, ...], tuple[dict[str, Any], Any]] = {}
PREFIX_FITS_KEPT = 1024
"""Answers :func:`_prefix_kv_fit` keeps (about 60 asked a plan, half of them again: the tornado's bars repeat a
route's prefix on its fleet with other token counts), emptied when full."""


def _prefix_kv_fit(f: dict[str, Any], prefix_tokens: Any, distinct_prefixes: Any) -> Any:
    """FLEET_PREFIX_KV_FIT of the fleet whose rows :func:`_fleet` gave as ``f``. Its answer for nonzero int or float
    ``prefix_tokens`` and ``distinct_prefixes`` is kept (:data:`_PREFIX_FITS`, keyed on ``f``'s ``id``, which it
    holds, and both numbers with their types; a refusal is not kept): PREFIX_KV_FIT is a function of the fleet's row
    and these two."""
    key = None
    if (type(prefix_tokens) is int or type(prefix_tokens) is float) and prefix_tokens and (
            type(distinct_prefixes) is int or type(distinct_prefixes) is float) and distinct_prefixes:
        key = (id(f), type(prefix_tokens), prefix_tokens, type(distinct_prefixes), distinct_prefixes)
        hit = _PREFIX_FITS.get(key)
        if hit is not None and hit[0] is f:
            return hit[1]
    out = _call_row("FLEET_PREFIX_KV_FIT", f, "PREFIX_KV_FIT", (
        f["model"], f["gpu"], prefix_tokens, distinct_prefixes, f["tp"], f["gpu_memory_utilization"], f["kv_dtype"],
        f["engine"], f["weight_dtype"], f["pp"]), (2, 3))
    if key is not None:
        if len(_PREFIX_FITS) >= PREFIX_FITS_KEPT:
            _PREFIX_FITS.clear()
        _PREFIX_FITS[key] = (f, out)
    return out


@sheet_function(
    summary="KV share of one fleet's budget that keeps a route's shared prefixes warm on every replica (M10): "
    "distinct prefixes x the KV a prefix of that length holds, over the KV budget, from the fleet's rows.",
    args=(FLEET, FLEETS, SPECS,
          Arg(name="prefix_tokens", unit="tokens", help="Tokens of one shared prefix (system prompt, tools, history)"),
          Arg(name="distinct_prefixes", unit="count", help="Distinct prefixes kept warm at once", default=1)),
    returns="fraction of one replica's KV budget",
    category="Plan",
    example=f'=FLEET_PREFIX_KV_FIT("f8b", {_FLEET_EXAMPLE}, 4096, 10) -> 0.0974',
    formula_ids=("M10", "M11"),
)
def FLEET_PREFIX_KV_FIT(fleet, fleets, specs, prefix_tokens, distinct_prefixes=1):
    return _prefix_kv_fit(_fleet(fleet, fleets, specs), prefix_tokens, distinct_prefixes)


@sheet_function(
    summary="COMPUTE_UTILIZATION of a route on one fleet, the fleet's model, GPU, TP, PP, replicas, MFU and weight "
    "dtype read from its Fleet and Specs rows.",
    args=(FLEET, FLEETS, SPECS, Arg(name="peak_qps", unit="req/s", help="Requests per second at the peak"),
          Arg(name="avg_input_tokens", unit="tokens", help="Average prompt tokens"),
          Arg(name="avg_output_tokens", unit="tokens", help="Average completion tokens"),
          Arg(name="cache_hit_rate", unit="fraction", help="Share of input read from the prefix cache", default=0.0)),
    returns="fraction (<= 1 fits)",
    category="Plan",
    example=f'=FLEET_COMPUTE_UTILIZATION("f8b", {_FLEET_EXAMPLE}, 10, 2000, 200) -> 0.3701',
    formula_ids=("P2", "P4"),
)
def FLEET_COMPUTE_UTILIZATION(fleet, fleets, specs, peak_qps, avg_input_tokens, avg_output_tokens,
                              cache_hit_rate=0.0):
    f = _fleet(fleet, fleets, specs)
    return _call_row("FLEET_COMPUTE_UTILIZATION", f, "COMPUTE_UTILIZATION", (
        f["model"], f["gpu"], peak_qps, avg_input_tokens, avg_output_tokens, f["replicas"], f["tp"], cache_hit_rate,
        f["mfu"], f["weight_dtype"], f["pp"]), (2, 3, 4, 7))


_MIX = (Arg(name="avg_input_tokens", unit="tokens", help="Input tokens per request of the fleet's mix"),
        Arg(name="avg_output_tokens", unit="tokens", help="Output tokens per request of the fleet's mix"))
_MIX_HIT = Arg(name="cache_hit_rate", unit="fraction", help="Cached share of the mix's input", default=0.0)
_RATE = Arg(name="request_rate", unit="req/s", help="Poisson arrivals per replica (open loop)")


def _serving(name: str, fleet, fleets, specs, avg_input_tokens, avg_output_tokens, request_rate, cache_hit_rate):
    f = _fleet(fleet, fleets, specs)
    return _call(name, f["model"], f["gpu"], f["tp"], avg_input_tokens, avg_output_tokens, 0, request_rate,
                 f["engine"], f["weight_dtype"], f["kv_dtype"], cache_hit_rate, f["pp"])


@sheet_function(
    summary="SERVING_TTFT_S on one fleet at a rate per replica: its model, GPU, TP, PP, engine and dtypes read from "
    "its Fleet and Specs rows.",
    args=(FLEET, FLEETS, SPECS, *_MIX, _RATE, _MIX_HIT),
    returns="s",
    category="Plan",
    example=f'=FLEET_TTFT_S("f8b", {_FLEET_EXAMPLE}, 2000, 200, 2) -> 0.057',
    formula_ids=("Q4",),
)
def FLEET_TTFT_S(fleet, fleets, specs, avg_input_tokens, avg_output_tokens, request_rate, cache_hit_rate=0.0):
    return _serving("SERVING_TTFT_S", fleet, fleets, specs, avg_input_tokens, avg_output_tokens, request_rate,
                    cache_hit_rate)


@sheet_function(
    summary="SERVING_TPOT_S on one fleet at a rate per replica: its model, GPU, TP, PP, engine and dtypes read from "
    "its Fleet and Specs rows.",
    args=(FLEET, FLEETS, SPECS, *_MIX, _RATE, _MIX_HIT),
    returns="s/token",
    category="Plan",
    example=f'=FLEET_TPOT_S("f8b", {_FLEET_EXAMPLE}, 2000, 200, 2) -> 0.0101',
    formula_ids=("S1", "Q2"),
)
def FLEET_TPOT_S(fleet, fleets, specs, avg_input_tokens, avg_output_tokens, request_rate, cache_hit_rate=0.0):
    return _serving("SERVING_TPOT_S", fleet, fleets, specs, avg_input_tokens, avg_output_tokens, request_rate,
                    cache_hit_rate)


@sheet_function(
    summary="The offline maximum of one replica of a fleet for a request mix (Q6): SERVING_TOKENS_PER_S with big "
    "batches / output tokens, the fleet read from its Fleet and Specs rows.",
    args=(FLEET, FLEETS, SPECS, *_MIX, _MIX_HIT),
    returns="req/s per replica",
    category="Plan",
    example=f'=FLEET_OFFLINE_RATE("f8b", {_FLEET_EXAMPLE}, 2000, 200) -> 10.92',
    formula_ids=("Q6",),
)
def FLEET_OFFLINE_RATE(fleet, fleets, specs, avg_input_tokens, avg_output_tokens, cache_hit_rate=0.0):
    tokens = _serving("SERVING_TOKENS_PER_S", fleet, fleets, specs, avg_input_tokens, avg_output_tokens, 0,
                      cache_hit_rate)
    if avg_output_tokens <= 0:
        raise ArgumentError("avg_output_tokens", avg_output_tokens, "> 0 (the offline rate is per output token)")
    return tokens / avg_output_tokens


@sheet_function(
    summary="MAX_RATE_AT_SLO on one fleet for a request mix (Q5): the highest rate per replica within both SLOs, the "
    "fleet read from its Fleet and Specs rows.",
    args=(FLEET, FLEETS, SPECS, *_MIX, Arg(name="ttft_slo_s", unit="s", help="Mean time-to-first-token budget"),
          Arg(name="tpot_slo_s", unit="s", help="Mean time-per-output-token budget (0: none, a one-token route)"),
          _MIX_HIT),
    returns="req/s per replica",
    category="Plan",
    example=f'=FLEET_MAX_RATE_AT_SLO("f8b", {_FLEET_EXAMPLE}, 2000, 200, 0.5, 0.03) -> 9.0',
    formula_ids=("Q5",),
)
def FLEET_MAX_RATE_AT_SLO(fleet, fleets, specs, avg_input_tokens, avg_output_tokens, ttft_slo_s, tpot_slo_s,
                          cache_hit_rate=0.0):
    f = _fleet(fleet, fleets, specs)
    return _call("MAX_RATE_AT_SLO", f["model"], f["gpu"], f["tp"], avg_input_tokens, avg_output_tokens, ttft_slo_s,
                 tpot_slo_s, f["kv_dtype"], cache_hit_rate, f["engine"], f["weight_dtype"], f["pp"])


@sheet_function(
    summary="MAX_CONCURRENCY of one replica of a fleet at a context (its engine's admission reservation), the fleet "
    "read from its Fleet and Specs rows.",
    args=(FLEET, FLEETS, SPECS, Arg(name="context_tokens", unit="tokens", help="Tokens per request (input + output)")),
    returns="requests per replica",
    category="Plan",
    example=f'=FLEET_MAX_CONCURRENCY("f8b", {_FLEET_EXAMPLE}, 4096) -> 102',
    formula_ids=("M9", "M11"),
)
def FLEET_MAX_CONCURRENCY(fleet, fleets, specs, context_tokens):
    f = _fleet(fleet, fleets, specs)
    return _call("MAX_CONCURRENCY", f["model"], f["gpu"], f["tp"], f["gpu_memory_utilization"], f["kv_dtype"],
                 context_tokens, f["engine"], f["weight_dtype"], f["pp"])


_LIMIT = Arg(name="limit", unit="name", kind="text", help="rpm, tpm, itpm, otpm, rpd or tpd")
_PROVIDER_EXAMPLE = ('{"Backend [name]","Keys [count]","Limit scope","TPM limit [tokens/min]";'
                     '"p",2,"key",400000}')


_PROVIDERS: dict[tuple[Any, ...], tuple[Any, dict[str, Any]]] = {}


def _provider(provider: Any, providers: Any) -> dict[str, Any]:
    """The provider's Providers row (:func:`_row`) by argument. **Read it, never change it**: for a table handed over
    as a plan's shared rows the dictionary is kept (:data:`_PROVIDERS`, keyed on the table's ``id``, which it holds,
    and the provider's name with its type; at most :data:`ROWS_KEPT` entries, emptied when full) and every caller
    gets the same one (a plan's provider functions ask about 170 times for a few providers)."""
    key = None
    if type(providers) is SharedRows:
        try:
            key = (id(providers), type(provider), provider)
            hit = _PROVIDERS.get(key)
        except TypeError:  # an unhashable name: read, not kept
            key = hit = None
        if hit is not None and hit[0] is providers:
            return hit[1]
    p = _row(provider, providers, "provider", PROVIDER_HEADERS)
    if key is not None:
        if len(_PROVIDERS) >= ROWS_KEPT:
            _PROVIDERS.clear()
        _PROVIDERS[key] = (providers, p)
    return p


_LIMIT_SITES = {k: f"PROVIDER_LIMIT_UTILIZATION {k}" for k in ("rpm", "tpm", "itpm", "otpm", "rpd", "tpd")}
"""One :func:`_call_row` site per limit (each reads its own column of the row)."""


@sheet_function(
    summary="A provider limit's utilization from its Providers row: demand / (limit x keys) where the limit's scope "
    "lets keys multiply it, demand / limit where not; 0 where the provider has no such limit.",
    args=(PROVIDER, PROVIDERS, _LIMIT, Arg(name="demand", unit="per min or day", help="Demand as the provider counts "
                                           "it, every route on it")),
    returns="fraction",
    category="Plan",
    example=f'=PROVIDER_LIMIT_UTILIZATION("p", {_PROVIDER_EXAMPLE}, "tpm", 400000) -> 0.5',
    formula_ids=("C7",),
)
def PROVIDER_LIMIT_UTILIZATION(provider, providers, limit, demand):
    key = str(limit).strip().lower()
    if key not in ("rpm", "tpm", "itpm", "otpm", "rpd", "tpd"):
        raise ArgumentError("limit", limit, "one of rpm, tpm, itpm, otpm, rpd, tpd")
    p = _provider(provider, providers)
    if _blank_or_zero(p[key]):
        return 0
    return _call_row(_LIMIT_SITES[key], p, "LIMIT_UTILIZATION", (demand, p[key], p["keys"], p["scope"]), (0,))


@sheet_function(
    summary="The RPM limit in its enforcement window from the provider's Providers row: BURST_UTILIZATION where the "
    "window is under a minute and there is an RPM limit, else 0.",
    args=(PROVIDER, PROVIDERS, Arg(name="per_min_demand", unit="req/min", help="RPM demand of every route on it"),
          Arg(name="burst_factor", unit="x", help="Busiest window / average window at the peak minute")),
    returns="fraction",
    category="Plan",
    example='=PROVIDER_BURST_UTILIZATION("p", {"Backend [name]","Keys [count]","Limit scope","RPM limit [req/min]",'
    '"Window [s]";"p",1,"organization",600,1}, 300, 2) -> 1.0',
    formula_ids=("D1",),
)
def PROVIDER_BURST_UTILIZATION(provider, providers, per_min_demand, burst_factor):
    p = _row(provider, providers, "provider", PROVIDER_HEADERS)
    window = p["window_s"]
    if _blank_or_zero(p["rpm"]) or _blank_or_zero(window) or not isinstance(window, (int, float)) or window > 59:
        return 0
    return _call("BURST_UTILIZATION", per_min_demand, p["rpm"], window, burst_factor, p["keys"], p["scope"])


@sheet_function(
    summary="API_COST_MONTHLY at the prices of the provider's Providers row (a blank cache-write price bills writes "
    "as uncached input).",
    args=(PROVIDER, PROVIDERS, Arg(name="avg_qps", unit="req/s", help="Average requests per second over the month"),
          Arg(name="avg_input_tokens", unit="tokens", help="Average prompt tokens"),
          Arg(name="avg_output_tokens", unit="tokens", help="Average completion tokens"),
          Arg(name="cache_hit_rate", unit="fraction", help="Share of input read from cache", default=0.0),
          Arg(name="cache_write_tokens", unit="tokens", help="Input tokens written to cache per request",
              default=0.0)),
    returns="USD/month",
    category="Plan",
    example='=PROVIDER_API_COST_MONTHLY("p", {"Backend [name]","Input [USD/Mtok]","Output [USD/Mtok]";"p",3,15}, '
    '1, 1000, 100) -> 11834.1',
    formula_ids=("C1",),
)
def PROVIDER_API_COST_MONTHLY(provider, providers, avg_qps, avg_input_tokens, avg_output_tokens, cache_hit_rate=0.0,
                              cache_write_tokens=0.0):
    p = _provider(provider, providers)
    return _call_row("PROVIDER_API_COST_MONTHLY", p, "API_COST_MONTHLY", (
        avg_qps, avg_input_tokens, avg_output_tokens, cache_hit_rate, cache_write_tokens, p["usd_per_mtok_input"],
        p["usd_per_mtok_cached_input"], p["usd_per_mtok_cache_write"], p["usd_per_mtok_output"]), (0, 1, 2, 3, 4))


def _blank_or_zero(value: Any) -> bool:
    return value is None or value == "" or (isinstance(value, (int, float)) and not isinstance(value, bool)
                                            and value <= 0)


@sheet_function(
    summary="A fleet's utilization with every replica up: the highest of the KV, compute and load utilizations of "
    "the routes on it (the Outages table's fleet util; an Excel error or refusal in one of its routes' rows is the "
    "result).",
    args=(BACKEND, BACKENDS,
          Arg(name="kv_utils", unit="per route", kind="numbers", help="The KV util column", row_errors=True),
          Arg(name="compute_utils", unit="per route", kind="numbers", help="The compute util column",
              row_errors=True),
          Arg(name="load_utils", unit="per route", kind="numbers", help="The load util column", row_errors=True)),
    returns="fraction",
    category="Plan",
    example='=FLEET_UTILIZATION("a", {"a","b"}, {0.2,0.9}, {0.5,0.1}, {0.7,2}) -> 0.7',
    formula_ids=("C8",),
)
def FLEET_UTILIZATION(backend, backends, kv_utils, compute_utils, load_utils):
    return max(decision.backend_max(backend, backends=backends, values=v) for v in (kv_utils, compute_utils,
                                                                                        load_utils))
