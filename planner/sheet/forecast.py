"""Spreadsheet functions for the plan over time: demand profiles, the forecast month, commitments (issue 14)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache
from operator import itemgetter
from typing import Any

from planner.coerce import SharedRows
from planner.errors import ArgumentError, PlannerError, Refusal, check_number, is_refusal_text, read_row
from planner.excel.expr import HashedTuple
from planner.excel.values import ERROR_VALUES
from planner.forecast import bill, commitments, growth, profile
from planner.forecast import data as forecast_data
from planner.forecast import month as fmonth
from planner.registry import Arg, sheet_function
from planner.sheet.cost import AVG_QPS, HIT_RATE, P_IN, P_OUT, P_READ, P_WRITE, WRITE_TOKENS
from planner.sheet.demand import AVG_INPUT, AVG_OUTPUT

LINEAR_CONSTRAINTS = ("RPM", "TPM", "ITPM", "OTPM", "RPD", "TPD", "BURST", "KV", "COMPUTE", "LOAD")
"""The utilizations linear in demand, in the order of the Results columns rpm_util ... load_util."""

BACKEND_KEYS = (
    "backend", "type", "top_route", "linear_util", "binding", "units", "scope", "multiplied_by", "raise_by",
    "step_usd", "fleet_qps", "mix_input_tokens", "mix_output_tokens", "mix_cache_hit_rate", "model_spec", "gpu_spec",
    "tp", "pp", "engine", "weight_dtype", "kv_dtype", "ttft_slo_s", "tpot_slo_s", "load_util",
    "limit_util", "limit_binding", "burst_util", "burst_rpm", "window_s", "compute_util", "kv_prefix_util",
    "kv_rate_s", "kv_tpot_rate_s", "kv_slo_util",
)
"""The Forecast sheet's backend table, column by column (FORECAST_MONTH reads it by position)."""

MONTH_FIELDS = ("max_util", "binding", "route", "action", "action_usd", "util_after", "headroom_util")
BILL_FIELDS = ("input_usd", "cache_read_usd", "cache_write_usd", "output_usd")
"""The API bill's token classes: a month's is the sum of each route's month-1 part times its own multiple."""

SHARE_KEYS = tuple(f"{c.lower()}_share" for c in LINEAR_CONSTRAINTS)
"""Each route's share of its backend's ten linear utilizations (RPM ... LOAD): they add up to the backend's."""

ROUTE_KEYS = (
    "route", "input_usd", "cache_read_usd", "cache_write_usd", "output_usd", "linear_util", "linear_binding",
    "limit_util", "limit_binding", "kv_rate_s", "kv_tpot_rate_s", "kv_slo_util", "backend", "growth", "qps",
    "input_tokens", "output_tokens", "cache_hit_rate", "kind", "ttft_slo_s", "tpot_slo_s", "rpm", *SHARE_KEYS,
)
"""The Forecast sheet's route table, column by column (FORECAST_MONTH reads it by position): month 1's parts of each
route and its own growth rate (blank: the Plan's)."""


def _blank(v: Any) -> bool:
    return v is None or (isinstance(v, str) and v.strip() == "")


def _rows(table: Sequence[Sequence[Any]], what: str, width: int) -> list[Sequence[Any]]:
    rows = list(table)
    if not rows or len(rows[0]) != width:
        raise ArgumentError(what, f"{len(rows[0]) if rows else 0} columns", f"the {what} table, {width} columns "
                            "with its header row")
    return rows[1:]


# ---- demand over the day ----------------------------------------------------------------------------------------

def _profile_hours(name: Any, profiles: Sequence[Sequence[Any]]) -> tuple[list[float], list[float] | None]:
    weekday: list[float] | None = None
    weekend: list[float] | None = None
    key = str(name).strip().lower()
    for row in _rows(profiles, "profiles", 27):
        if _blank(row[0]) or str(row[0]).strip().lower() != key:
            continue
        days = "all" if _blank(row[1]) else str(row[1]).strip().lower()
        hours = [0.0 if _blank(v) else v for v in row[2:26]]
        if days in ("all", "weekday"):
            weekday = hours
        elif days == "weekend":
            weekend = hours
        else:
            raise ArgumentError(f"profile {name} days", row[1], "weekday, weekend or all (blank)")
    if weekday is None:
        raise ArgumentError("profile", name, "a name on the Profiles sheet with a weekday (or all) row")
    return weekday, weekend


@sheet_function(
    summary="Average-to-peak ratio of an hour-of-day profile: 'day' for daily limits (the busiest day's average / "
    "peak hour), 'month' for the bill (the week's average / peak hour).",
    args=(
        Arg(name="profile", unit="name", kind="text", help="Profile name (a row of the Profiles sheet)"),
        Arg(name="profiles", unit="table", kind="table", help="The Profiles sheet's range, header row included: "
            "name, days (weekday, weekend or all), 24 hourly multipliers, source"),
        Arg(name="basis", unit="day|month", kind="text", help="day (RPD, TPD) or month (the bill)",
            default="month"),
    ),
    returns="fraction",
    category="Forecast",
    example=(
        '=PROFILE_RATIO("noon", {"name","days",0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,'
        '"source";"noon","all",0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,1,0.5,0.5,0.5,0.5,0.5,0.5,0.5,'
        '0.5,0.5,0.5,0.5,"example"}, "month") -> 0.5208'
    ),
    formula_ids=("D1",),
)
def PROFILE_RATIO(profile, profiles, basis="month"):
    weekday, weekend = _profile_hours(profile, profiles)
    b = str(basis).strip().lower()
    if b == "day":
        return _profile.busiest_day_avg_to_peak(weekday, weekend=weekend)
    if b == "month":
        return _profile.month_avg_to_peak(weekday, weekend=weekend)
    raise ArgumentError("basis", basis, "day or month")


_profile = profile


# ---- the forecast ---------------------------------------------------------------------------------------------

@sheet_function(
    summary="Demand multiple of forecast month m (1 = the plan as entered): the month's demand index where given, "
    "else (1 + growth)^(m - 1).",
    args=(
        Arg(name="month_number", unit="month", help="Forecast month, 1 = the plan as entered"),
        Arg(name="monthly_growth", unit="fraction/month", help="Demand growth per month (0.08 = 8 %)"),
        Arg(name="demand_index", unit="x", help="The planner's own demand multiple for the month",
            default=None, blank="no index: compound growth"),
    ),
    returns="x demand",
    category="Forecast",
    example="=GROWTH_MULTIPLIER(13, 8%) -> 2.518",
    formula_ids=("C7",),
)
def GROWTH_MULTIPLIER(month_number, monthly_growth, demand_index=None):
    return growth.demand_multiplier(month_number, monthly_growth=monthly_growth, demand_index=demand_index)


TOKEN_CLASS = Arg(name="token_class", unit="class", kind="text",
                  help="input (uncached), read (cache reads), write (cache writes) or output")


@sheet_function(
    summary="One token class's share of a route's monthly API bill: uncached input, cache reads, cache writes or "
    "output (the four add up to API_COST_MONTHLY).",
    args=(TOKEN_CLASS, AVG_QPS, AVG_INPUT, AVG_OUTPUT, HIT_RATE, WRITE_TOKENS, P_IN, P_READ, P_WRITE, P_OUT),
    returns="USD/month",
    category="Forecast",
    example='=API_COST_BY_CLASS("read", 1, 10000, 500, 0.8, 1000, 3, 0.3, 3.75, 15) -> 6311.52',
    formula_ids=("C1",),
)
def API_COST_BY_CLASS(token_class, avg_qps, avg_input_tokens, avg_output_tokens, cache_hit_rate, cache_write_tokens,
                      usd_per_mtok_input, usd_per_mtok_cached_input, usd_per_mtok_cache_write, usd_per_mtok_output):
    cls = str(token_class).strip().lower()
    cls = {"read": "cache_read", "write": "cache_write"}.get(cls, cls)
    return bill.api_cost_by_class_usd(
        avg_qps, token_class=cls, avg_input_tokens=avg_input_tokens,
        avg_output_tokens=avg_output_tokens, cache_hit_rate=cache_hit_rate, cache_write_tokens=cache_write_tokens,
        usd_per_mtok_input=usd_per_mtok_input, usd_per_mtok_output=usd_per_mtok_output,
        usd_per_mtok_cached_input=usd_per_mtok_cached_input, usd_per_mtok_cache_write=usd_per_mtok_cache_write)


@sheet_function(
    summary="The label of the highest of the ten utilizations linear in demand (RPM, TPM, ITPM, OTPM, RPD, TPD, "
    "BURST, KV, COMPUTE, LOAD; Results' rpm_util to load_util), or of the first of them a shorter range gives "
    "(rpm_util to tpd_util: the provider limits).",
    args=(Arg(name="utilizations", unit="fractions", kind="numbers", help="The ten utilizations (or the first n), "
              "a range"),),
    returns="label",
    returns_kind="text",
    category="Forecast",
    example="=LINEAR_BINDING_CONSTRAINT({0.1,0.2,0.9,0,0,0,0,0,0,0}) -> \"ITPM\"",
    formula_ids=("C7",),
)
def LINEAR_BINDING_CONSTRAINT(utilizations):
    from planner import decision

    values = list(utilizations)
    if not 0 < len(values) <= len(LINEAR_CONSTRAINTS):
        raise ArgumentError("utilizations", f"{len(values)} values", f"1 to {len(LINEAR_CONSTRAINTS)} values")
    return decision.binding_constraint(LINEAR_CONSTRAINTS[:len(values)], utilizations=values)


def _num(v: Any, default: float | None = None) -> float | None:
    if _blank(v):
        return default
    if isinstance(v, str):  # BACKEND_ARGMAX gives a label as text
        try:
            return float(v)
        except ValueError:
            raise ArgumentError("value", v, "a number") from None
    return float(check_number("value", v))


def _whole(v: float | None) -> float | int | None:
    """A whole float below 2^53 as the int a sheet cell's number argument is coerced to (``coerce``'s rule), else
    ``v``: the backend table's TP and PP (coerced as floats) then key the serving model's answers as the fleet
    functions' own calls do, so the month at the plan's rate finds their answer (the serving model takes
    ``int(tp)`` of either: the same figures).

    >>> _whole(4.0), _whole(1.5), _whole(None), _whole(1)
    (4, 1.5, None, 1)
    """
    return int(v) if type(v) is float and v.is_integer() and abs(v) < 2**53 else v


def _latency(specs: dict[str, tuple]) -> fmonth.LatencyFn:
    """TTFT and TPOT of a fleet's replica at a rate, for the backend's request mix (month 1's, or the month's where
    its routes grow apart)."""
    from planner.sheet.serving import _perf

    def call(b: fmonth.Backend, rate: float) -> tuple[float, float] | None:
        model, gpu, tp, engine, wd, kvd, pp = specs[b.name]
        # SERVING_TTFT_S and SERVING_TPOT_S of these arguments, from one serving-model run (each of the two reads
        # its field of the same _perf result; calibration "" as their default)
        try:
            got = _perf(model, gpu, tp, b.mix_input_tokens, b.mix_output_tokens, 0, rate, engine, wd, kvd,
                        b.mix_cache_hit_rate, pp, "")
        except PlannerError:
            return None
        return float(got.ttft_s), float(got.tpot_s)
    return call


def _sustainable(specs: dict[str, tuple]) -> fmonth.SustainableFn:
    """Results' sustainable rate of a route on a fleet at the backend's request mix: the offline maximum for a bulk
    route (FLEET_OFFLINE_RATE), else MAX_RATE_AT_SLO at the route's SLOs (FLEET_MAX_RATE_AT_SLO); 0 where the
    serving model refuses (no rate meets the SLOs)."""
    from planner.sheet.serving import MAX_RATE_AT_SLO, SERVING_TOKENS_PER_S

    def call(b: fmonth.Backend, r: fmonth.RoutePart) -> float:
        model, gpu, tp, engine, wd, kvd, pp = specs[b.name]
        try:
            if r.bulk:
                tokens = SERVING_TOKENS_PER_S(model, gpu, tp, b.mix_input_tokens, b.mix_output_tokens, 0, 0, engine,
                                              wd, kvd, b.mix_cache_hit_rate, pp)
                return float(tokens) / b.mix_output_tokens if b.mix_output_tokens > 0 else 0.0
            return float(MAX_RATE_AT_SLO(model, gpu, tp, b.mix_input_tokens, b.mix_output_tokens, r.ttft_slo_s,
                                         r.tpot_slo_s, kvd, b.mix_cache_hit_rate, engine, wd, pp))
        except PlannerError:
            return 0.0
    return call


def _row_error(row: Sequence[Any]) -> str | None:
    """The first Excel error or planner refusal in a backend row (its Results carry it), else None."""
    for v in row:
        if isinstance(v, str) and (v.strip() in ERROR_VALUES or is_refusal_text(v)):
            return v.strip()
    return None


def _backends(table: Sequence[Sequence[Any]]) -> tuple[list[fmonth.Backend], dict[str, tuple], dict[str, str]]:
    """The backend table's rows as :class:`~planner.forecast.month.Backend`, the serving arguments of each fleet,
    and the rows that hold an error or refusal (backend name -> its message): those are left out of the month, so
    one backend's error is not another's (``Arg.row_errors``)."""
    out: list[fmonth.Backend] = []
    specs: dict[str, tuple] = {}
    broken: dict[str, str] = {}
    for row in _rows(table, "backends", len(BACKEND_KEYS)):
        r = dict(zip(BACKEND_KEYS, row))
        error = _row_error(row)
        if error is not None:
            name = r["backend"] if isinstance(r["backend"], str) and not _row_error([r["backend"]]) else "?"
            if name == "?" or not _blank(r["top_route"]):
                broken.setdefault(name.strip().lower(), error)
            continue
        if _blank(r["backend"]) or _blank(r["top_route"]):
            continue  # a backend no route uses as primary
        b = fmonth.Backend(
            name=str(r["backend"]), kind=str(r["type"]), top_route=str(r["top_route"]),
            linear_util=_num(r["linear_util"], 0.0) or 0.0, binding=str(r["binding"] or ""),
            units=int(_num(r["units"], 1) or 1), scope="" if _blank(r["scope"]) else str(r["scope"]),
            multiplied_by="" if _blank(r["multiplied_by"]) else str(r["multiplied_by"]),
            raise_by="" if _blank(r["raise_by"]) else str(r["raise_by"]),
            step_usd=_num(r["step_usd"], 0.0) or 0.0, fleet_qps=_num(r["fleet_qps"], 0.0) or 0.0,
            ttft_slo_s=_num(r["ttft_slo_s"]) or None, tpot_slo_s=_num(r["tpot_slo_s"]) or None,
            load_util=_num(r["load_util"], 0.0) or 0.0, limit_util=_num(r["limit_util"], 0.0) or 0.0,
            limit_binding="" if _blank(r["limit_binding"]) else str(r["limit_binding"]),
            burst_util=_num(r["burst_util"], 0.0) or 0.0, burst_rpm=_num(r["burst_rpm"], 0.0) or 0.0,
            window_s=_num(r["window_s"], 0.0) or 0.0, compute_util=_num(r["compute_util"], 0.0) or 0.0,
            kv_prefix_util=_num(r["kv_prefix_util"], 0.0) or 0.0, kv_rate_s=_num(r["kv_rate_s"]),
            kv_tpot_rate_s=_num(r["kv_tpot_rate_s"], 0.0) or 0.0, kv_slo_util=_num(r["kv_slo_util"], 0.0) or 0.0,
            mix_input_tokens=_num(r["mix_input_tokens"], 0.0) or 0.0,
            mix_output_tokens=_num(r["mix_output_tokens"], 1.0) or 0.0,
            mix_cache_hit_rate=_num(r["mix_cache_hit_rate"], 0.0) or 0.0)
        out.append(b)
        if b.kind == "fleet":
            specs[b.name] = (r["model_spec"], r["gpu_spec"], _whole(_num(r["tp"], 1)), r["engine"],
                             r["weight_dtype"], r["kv_dtype"], _whole(_num(r["pp"], 1)))
    return out, specs, broken


def route_multiple(month_number: float, *, route_growth: Any, multiplier: float, index: Any = None) -> float:
    """A route's demand multiple in a month: its own typed multiple for the month (``index``, the per-route demand
    table), else ``(1 + g_r)^(m - 1)`` with its own growth rate ``g_r``, else the month's (the Plan's growth or the
    typed demand index)."""
    if not _blank(index):
        return float(check_number("route demand index", read_row(index), minimum=0))
    if _blank(route_growth):
        return multiplier
    return growth.demand_multiplier(month_number, monthly_growth=_num(route_growth, 0.0) or 0.0)


@lru_cache(maxsize=512)
def _multiples(routes: tuple, index: tuple | None, month_number: int, x: float) -> tuple[float, ...]:
    """Each route row's multiple in the month (:func:`route_multiple`), the per-route demand table's row ``i``
    beside the route table's row ``i`` (its column ``m`` is month ``m``)."""
    rows = _route_rows(routes)
    typed = [None] * len(rows) if index is None else [r[month_number] if month_number < len(r) else None
                                                       for r in list(index)[1:]]
    typed += [None] * (len(rows) - len(typed))
    return tuple(route_multiple(month_number, route_growth=read_row(r["growth"]), multiplier=x, index=i)
                 if not _blank(r["route"]) else x for r, i in zip(rows, typed))


_PART_KEYS = ROUTE_KEYS[ROUTE_KEYS.index("kv_rate_s"):]
"""The route table's columns a month reads (the bill's and month 1's labels are not among them)."""


def _parts(table: tuple | None, month_number: Any, x: float, index: tuple | None = None
           ) -> tuple[tuple[fmonth.RoutePart, ...], dict[str, str]]:
    """The route table's rows as the month's :class:`~planner.forecast.month.RoutePart` (each at its own multiple),
    and the backends a route row's error breaks (backend name -> its message): only a backend with a route of its
    own growth, the one a month re-derives from its routes (the others are scaled from their backend row)."""
    if table is None or _blank(month_number):
        return (), {}
    m = int(check_number("month_number", month_number, minimum=1, integer=True))
    multiples = _multiples(table, index, m, x)
    if all(multiple == x for multiple in multiples):  # every route at the month's multiple: no backend re-derived
        return (), {}
    out: list[fmonth.RoutePart] = []
    errors: dict[str, str] = {}
    own_growth: set[str] = set()
    for r, multiple in zip(_route_rows(table), multiples):
        if _blank(r["route"]) or _blank(r["backend"]) or _row_error([r["backend"]]):
            continue
        backend = str(r["backend"]).strip().lower()
        if not _blank(r["growth"]) or multiple != x:
            own_growth.add(backend)
        error = _row_error([r[k] for k in _PART_KEYS])
        if error is not None:
            errors.setdefault(backend, error)
            continue
        n = lambda k, r=r: _num(r[k], 0.0) or 0.0  # noqa: E731
        slo = lambda k, r=r: _num(r[k]) or None  # noqa: E731
        out.append(fmonth.RoutePart(
            backend=backend, multiple=multiple, qps=n("qps"),
            input_tokens=n("input_tokens"), output_tokens=n("output_tokens"), cache_hit_rate=n("cache_hit_rate"),
            limit_shares=tuple(n(k) for k in SHARE_KEYS[:len(fmonth.LIMITS)]), rpm=n("rpm"),
            compute_share=n("compute_share"), kv_rate_s=n("kv_rate_s"), kv_tpot_rate_s=n("kv_tpot_rate_s"),
            kv_slo_util=n("kv_slo_util"), bulk=str(r["kind"]).strip().lower() == "bulk",
            ttft_slo_s=slo("ttft_slo_s"), tpot_slo_s=slo("tpot_slo_s")))
    return tuple(out), {b: e for b, e in errors.items() if b in own_growth}


def _month_inputs(field: Any, *, fields: tuple[str, ...], multiplier: Any, threshold: Any
                  ) -> tuple[str, float, float]:
    """A forecast function's field (one of ``fields``), the month's demand multiple and the policy threshold."""
    if multiplier == 0 or threshold == 0:  # 0.0 and -0.0 are one key and two answers: read, not kept
        return _read_month_inputs(field, fields, multiplier, threshold)
    try:
        return _month_inputs_kept(field, fields, multiplier, threshold)
    except TypeError:  # an unhashable argument: read, not kept
        return _read_month_inputs(field, fields, multiplier, threshold)


@lru_cache(maxsize=1024, typed=True)
def _month_inputs_kept(field: Any, fields: tuple[str, ...], multiplier: Any, threshold: Any
                       ) -> tuple[str, float, float]:
    """:func:`_read_month_inputs`, kept per arguments with their types (``1`` and ``1.0``, ``True`` and ``1`` apart):
    a 20-route plan's 444 forecast calls ask about 165 distinct ones (each FORECAST_MONTH field once; a month's 20
    routes and its backends' fields share theirs). 1,024 entries; a refusal is not kept (raised again)."""
    return _read_month_inputs(field, fields, multiplier, threshold)


def _read_month_inputs(field: Any, fields: tuple[str, ...], multiplier: Any, threshold: Any
                       ) -> tuple[str, float, float]:
    f = str(field).strip().lower()
    if f not in fields:
        raise ArgumentError("field", field, f"one of {', '.join(fields)}")
    return (f, check_number("multiplier", multiplier, minimum=0),
            check_number("threshold", threshold, minimum=0, exclusive_minimum=True))


MULTIPLIER = Arg(name="multiplier", unit="x", help="The month's demand multiple (GROWTH_MULTIPLIER)")
MONTH_NUMBER = Arg(name="month_number", unit="month", help="The forecast month (1 = the plan as entered): routes with "
                   "their own growth rate carry (1 + growth)^(month - 1)", default=None,
                   blank="every route at the multiple")
THRESHOLD = Arg(name="threshold", unit="fraction", help="The plan's utilization threshold (policy)")
BACKENDS_TABLE = Arg(name="backends", unit="table", kind="table", help="The Forecast sheet's backend table, header "
                     "included", row_errors=True)
ROUTES_TABLE = Arg(name="routes", unit="table", kind="table", help="The Forecast sheet's route table, header "
                   "included (month 1's parts of each route and its own growth rate)", row_errors=True)
BREACH_READS = ("route", "backend", "growth", *SHARE_KEYS)
"""The route table's columns BACKEND_MONTHS_TO_BREACH reads (_share_rows): a route's costs and month-1 figures are
not among them."""
BREACH_ROUTES_TABLE = replace(ROUTES_TABLE, reads=BREACH_READS)
ROUTE_DEMAND_TABLE = Arg(name="route_demand", unit="table", kind="table", help="The Forecast sheet's per-route "
                         "demand table, header included (a route's own multiple month by month)", default=None,
                         blank="no route's own multiples", row_errors=True)


_MONTH_AND_BILL_FIELDS = MONTH_FIELDS + BILL_FIELDS
"""FORECAST_MONTH's fields, one tuple (built once: the kept month inputs hash it on every call)."""


@sheet_function(
    summary="One field of a forecast month: the plan's backends with demand times the multiple; max_util, binding "
    "(backend and constraint), route, action (the steps to get back under the threshold), action_usd (their "
    "monthly cost), util_after, or headroom_util (the highest of RPM ... LOAD: 1 / C7's headroom, what months to "
    "breach reads); input_usd, cache_read_usd, cache_write_usd or output_usd (the API bill's token classes, each "
    "route at its own multiple: needs the route table). A Poisson burst factor is recomputed at the scaled rate, "
    "a fleet's KV in flight from the serving model's E2E at the month's load (Little's law).",
    args=(
        Arg(name="field", unit="name", kind="text", help="max_util, binding, route, action, action_usd, util_after, "
            "headroom_util, input_usd, cache_read_usd, cache_write_usd or output_usd"),
        MULTIPLIER, THRESHOLD, BACKENDS_TABLE,
        MONTH_NUMBER,
        replace(ROUTES_TABLE, default=None), ROUTE_DEMAND_TABLE,
    ),
    returns="the field",
    returns_kind="text",
    category="Forecast",
    example=(
        '=FORECAST_MONTH("max_util", 1.36, 0.8, {"backend","type","route","util","binds","units","scope",'
        '"more","raise","usd","qps","in","out","hit","model","gpu","tp","pp","engine","wd","kv","ttft",'
        '"tpot","load","limit","limit_binds","burst","burst_rpm","window","compute","kvp","kvr","kvt","kvs";'
        '"gemini-flash","provider","chat",0.75,"ITPM",6,"project","","a higher tier",0,0,"","","","","","","","",'
        '"","","","",0,0.75,"ITPM",0,0,0,0,"","","",""}) '
        '-> 1.02'
    ),
    formula_ids=("C7",),
)
def FORECAST_MONTH(field, multiplier, threshold, backends, month_number=None, routes=None, route_demand=None):
    f, x, t = _month_inputs(field, fields=_MONTH_AND_BILL_FIELDS, multiplier=multiplier, threshold=threshold)
    if f in BILL_FIELDS:  # the bill: each route at its own multiple (no backend's error is the bill's)
        if routes is None or _blank(month_number):
            raise ArgumentError("routes", None, f"the route table and the month number for {f}")
        m = int(check_number("month_number", month_number, minimum=1, integer=True))
        table = _hashable(routes)
        _route_rows(table)  # the table's shape first, then the multiples, then the rows' figures, as read before
        multiples = _multiples(table, _hashable(route_demand), m, x)
        return sum(v * multiple for v, multiple in zip(_bill_column(table, f), multiples) if v is not None)
    month, broken = _month(x, t, _hashable(backends), month_number, _hashable(routes), _hashable(route_demand))
    if broken:  # the plan's month needs every backend: the first one's error is the result
        raise Refusal(next(iter(broken.values())))
    return getattr(month, f)


_HASHED: dict[int, tuple[Any, tuple]] = {}


def _hashable(table: Sequence[Sequence[Any]] | None) -> tuple | None:
    """A table as a tuple of tuples (the month caches' key). The coercion layer hands every call of one plan the
    same rows object for a block, so the conversion is kept per object (the object is held, so its id is not
    reused while it is kept)."""
    if table is None:
        return None
    if isinstance(table, HashedTuple):
        return table
    kept = _HASHED.get(id(table))
    if kept is not None and kept[0] is table:
        return kept[1]
    if len(_HASHED) >= 64:
        _HASHED.clear()
    # hashed once: every month cache lookup keys on it (a route table is 700 cells)
    out = HashedTuple(tuple(r) for r in table)
    _HASHED[id(table)] = (table, out)
    return out


@lru_cache(maxsize=256)
def _month(x: float, t: float, rows: tuple, month_number: Any = None, routes: tuple | None = None,
           route_demand: tuple | None = None) -> tuple[fmonth.Month, dict[str, str]]:
    """One month, evaluated once for its fields (the tables are tuples of tuples: hashable), over the backends
    without an error, and the backends with one (name -> message): a backend's own row, or one of its routes'."""
    all_items, specs, kept_broken = _backends_kept(rows)
    broken = dict(kept_broken)  # the route table's errors are added below (the kept one stays as read)
    parts, broken_routes = _parts(routes, month_number, x, route_demand)
    for name, error in broken_routes.items():
        broken.setdefault(name, error)
    items = [b for b in all_items if b.name.strip().lower() not in broken]
    return fmonth.evaluate_month(items, multiplier=x, threshold=t, latency=_latency(specs), routes=parts,
                                 sustainable=_sustainable(specs)), broken


BACKEND_MONTH_FIELDS = ("max_util", "binding", "action", "action_usd")


@sheet_function(
    summary="One backend's figure in a forecast month (the per-route forecast: a route reads its backend's): "
    "max_util (its highest utilization at the month's demand, TTFT and TPOT through the serving model), binding "
    "(that constraint), action (its own step, 'none' within the threshold) or action_usd (the step's monthly cost).",
    args=(
        Arg(name="field", unit="name", kind="text", help="max_util, binding, action or action_usd"),
        MULTIPLIER, THRESHOLD, BACKENDS_TABLE,
        Arg(name="backend", unit="name", kind="text", help="The backend (the route's, from Routes)"),
        MONTH_NUMBER,
        replace(ROUTES_TABLE, default=None), ROUTE_DEMAND_TABLE,
    ),
    returns="the field",
    returns_kind="text",
    category="Forecast",
    example=(
        '=FORECAST_BACKEND_MONTH("max_util", 1.36, 0.8, {' + ",".join(f'"{k}"' for k in BACKEND_KEYS) + ";"
        '"gemini-flash","provider","chat",0.75,"ITPM",6,"project","","a higher tier",0,0,"","","","","","","","",'
        '"","","","",0,0.75,"ITPM",0,0,0,0,"","","",""}, "gemini-flash") -> 1.02'
    ),
    formula_ids=("C7",),
)
def FORECAST_BACKEND_MONTH(field, multiplier, threshold, backends, backend, month_number=None, routes=None,
                           route_demand=None):
    f, x, t = _month_inputs(field, fields=BACKEND_MONTH_FIELDS, multiplier=multiplier, threshold=threshold)
    month, broken = _month(x, t, _hashable(backends), month_number, _hashable(routes), _hashable(route_demand))
    error = broken.get(str(backend).strip().lower()) or broken.get("?")
    if error is not None:  # this backend's own error (another backend's is not this one's)
        raise Refusal(error)
    found = month.backend(str(backend))
    if found is None:
        raise ArgumentError("backend", backend, "a backend of the Forecast sheet's backend table used by a route")
    return getattr(found, f)


@lru_cache(maxsize=64)
def _route_rows(table: tuple) -> tuple[dict[str, Any], ...]:
    """The route table's rows by key, read once per table (every route's month reads the same one)."""
    return tuple(dict(zip(ROUTE_KEYS, r)) for r in _rows(table, "routes", len(ROUTE_KEYS)))


@lru_cache(maxsize=64)
def _route_at(table: tuple) -> dict[str, int]:
    """Each route name of the route table (stripped, lower case) -> its first row, built once per table: every
    route's bill of every month (FORECAST_ROUTE_MONTH, 240 cells of a 20-route plan) looks its row up by name.
    Callers only read it.

    >>> blank = ("",) * (len(ROUTE_KEYS) - 1)
    >>> _route_at((tuple(ROUTE_KEYS), ("R1",) + blank, ("",) + blank, (" r1 ",) + blank, ("r2",) + blank))
    {'r1': 0, 'r2': 3}
    """
    out: dict[str, int] = {}
    for i, r in enumerate(_route_rows(table)):
        if not _blank(r["route"]):
            out.setdefault(str(r["route"]).strip().lower(), i)
    return out


@lru_cache(maxsize=64)
def _plan_backend_at(table: tuple) -> dict[str, fmonth.Backend]:
    """Each backend of a backend table by its name (stripped, lower case) -> the first row of that name, built once
    per table (a tuple of row tuples, as :func:`_backends_kept`'s key): every route's bill of every month
    (FORECAST_ROUTE_MONTH, 240 cells of a 20-route plan) looks its backend up by name. 64 tables; callers only
    read it."""
    out: dict[str, fmonth.Backend] = {}
    for b in _backends_kept(table)[0]:
        out.setdefault(b.name.strip().lower(), b)
    return out


@lru_cache(maxsize=256)
def _bill_column(table: tuple, field: str) -> tuple[float | None, ...]:
    """One month-1 bill column of a route table (a tuple of row tuples), row by row: the figure as a float, None for
    a row without a route or with the cell blank (left out of the sum); the first row's refusal or bad figure raises,
    as the month's sum would (a raised call is not kept). Read once per (table, field) instead of once per month:
    FORECAST_MONTH's bill field in month ``m`` is ``Σ figure·multiple`` over these in row order. 256 entries; a
    20-route plan asks for 4.

    >>> blank = ("",) * len(ROUTE_KEYS)
    >>> rows = [dict(zip(ROUTE_KEYS, blank), route=name, output_usd=usd) for name, usd in
    ...         (("chat", 20.0), ("", 5.0), ("rag", ""), ("code", 1))]
    >>> _bill_column((tuple(ROUTE_KEYS), *(tuple(r[k] for k in ROUTE_KEYS) for r in rows)), "output_usd")
    (20.0, None, None, 1.0)
    """
    return tuple(float(check_number(field, v)) if not _blank(r["route"]) and not _blank(v := read_row(r[field]))
                 else None for r in _route_rows(table))


@lru_cache(maxsize=1024)
def _month1_bill(table: tuple, at: int) -> float:
    """Row ``at`` of a route table (a tuple of row tuples): its month-1 API bill, ``input + cache_read +
    cache_write + output`` USD in that order (each a number; a refusal held in the row is the result), read once per
    route instead of once per month: an API route's bill in month ``m`` is this times its multiple. A raised call is
    not kept (it raises again). 1,024 (table, row) entries; a 20-route plan asks about 20.

    >>> blank = ("",) * len(ROUTE_KEYS)
    >>> row = dict(zip(ROUTE_KEYS, blank), route="chat", input_usd=10.0, cache_read_usd=0.5, cache_write_usd=0.25,
    ...            output_usd=20.0)
    >>> _month1_bill((tuple(ROUTE_KEYS), tuple(row[k] for k in ROUTE_KEYS)), 0)
    30.75
    """
    mine = _route_rows(table)[at]
    return sum(float(check_number(k, read_row(mine[k]))) for k in BILL_FIELDS)


@lru_cache(maxsize=64)
def _backends_kept(table: tuple) -> tuple[tuple[fmonth.Backend, ...], dict[str, tuple], dict[str, str]]:
    """:func:`_backends` of a backend table (a tuple of row tuples, the month caches' key), read once per table: a
    20-route plan evaluates about 15 months of one table, and each read its 15 rows again. The backends are frozen;
    callers only read the specs and copy the broken rows before adding to them. 64 tables, as :func:`_route_rows`."""
    items, specs, broken = _backends(table)
    return tuple(items), specs, broken


@lru_cache(maxsize=1024, typed=True)
def _fleet_share(table: tuple, index: tuple | None, month_number: int, x: float, backend: str) -> float:
    """``Σ compute_share · multiple`` over the route rows of fleet ``backend`` (lower case) in the month: the
    denominator of :func:`FORECAST_ROUTE_MONTH`'s share, the same sum in the same row order, computed once per
    (route table, demand table, month, multiple, backend) instead of once per route of that backend (a row's bad
    share raises as before: a raised call is not kept). Keyed on everything it reads; 1,024 entries (a 20-route
    plan asks about 36)."""
    multiples = _multiples(table, index, month_number, x)
    # the backend's rows and shares in row order (read once per table and backend): the same products summed in
    # the same order
    return sum(share * multiples[i] for i, share in _fleet_rows(table, backend))


@lru_cache(maxsize=256)
def _fleet_rows(table: tuple, backend: str) -> tuple[tuple[int, float], ...]:
    """The route rows of fleet ``backend`` (lower case) in a route table: each row's position and its compute share
    (``_num(share, 0.0) or 0.0``), in row order; the first bad share raises (a raised call is not kept). Read once
    per (table, backend) for :func:`_fleet_share`'s months; 256 entries (a plan asks one per fleet)."""
    return tuple((i, _num(r["compute_share"], 0.0) or 0.0) for i, r in enumerate(_route_rows(table))
                 if not _blank(r["backend"]) and str(r["backend"]).strip().lower() == backend)


ROUTE_FIELDS = ("usd",)


@sheet_function(
    summary="One route's bill in a forecast month (field usd): an API route's month-1 bill by class times its own "
    "demand multiple; a fleet's route its compute share of the month's fleet, GPU-hours plus the replicas the step "
    "adds (its backend's utilization and binding: FORECAST_BACKEND_MONTH).",
    args=(
        Arg(name="field", unit="name", kind="text", help="usd"),
        MULTIPLIER, THRESHOLD, BACKENDS_TABLE,
        Arg(name="route", unit="name", kind="text", help="The route (a row of the route table)"),
        Arg(name="month_number", unit="month", help="The forecast month (1 = the plan as entered)"),
        ROUTES_TABLE, ROUTE_DEMAND_TABLE,
    ),
    returns="the field",
    returns_kind="text",
    category="Forecast",
    example=(
        '=FORECAST_ROUTE_MONTH("usd", 1.08, 0.8, {' + ",".join(f'"{k}"' for k in BACKEND_KEYS) + ";"
        '"api","provider","chat",0.5,"ITPM",1,"","","",0,0,"","","","","","","","","","","","",0,0.5,"ITPM",0,0,0,0,0,'
        '"","",""}, "chat", 3, {' + ",".join(f'"{k}"' for k in ROUTE_KEYS) + ";"
        '"chat",100,50,0,25,0.5,"ITPM",0.5,"ITPM","","","","api",0.1,0,0,0,0,"interactive",1,0.04,0'
        + ",0" * 10 + "}) -> 211.75"
    ),
    formula_ids=("C1", "C7"),
)
def FORECAST_ROUTE_MONTH(field, multiplier, threshold, backends, route, month_number, routes, route_demand=None):
    f, x, t = _month_inputs(field, fields=ROUTE_FIELDS, multiplier=multiplier, threshold=threshold)
    m = int(check_number("month_number", month_number, minimum=1, integer=True))
    key = str(route).strip().lower()
    ctx = _route_month(x, t, _hashable(backends), m, _hashable(routes), _hashable(route_demand))
    at = ctx.route_at.get(key)  # the first row of that name
    if at is None or _blank(ctx.rows[at]["backend"]):
        raise ArgumentError("route", route, "a route of the Forecast sheet's route table with a backend")
    mine = ctx.rows[at]
    backend = str(mine["backend"]).strip()
    month, broken, plan_at = ctx.month()
    low = backend.lower()
    error = broken.get(low) or broken.get("?")
    if error is not None:
        raise Refusal(error)
    own = ctx.multiples[at]
    plan_b = plan_at.get(low)
    if plan_b is None or plan_b.kind != "fleet":  # an API route: its month-1 bill by class at its multiple
        return _month1_bill(ctx.table, at) * own
    # a fleet's route: its compute share of the month's fleet (routes growing apart move the shares)
    share = ctx.fleet_share(low)
    if share <= 0:
        return 0.0
    step = month.backend(backend)
    cost = plan_b.step_usd * plan_b.units + (step.action_usd if step is not None else 0.0)
    return cost * (_num(mine["compute_share"], 0.0) or 0.0) * own / share


class _RouteMonth:
    """What every route's bill in one forecast month reads (:func:`FORECAST_ROUTE_MONTH`, a 20-route plan's 12
    months: 240 calls, 20 a month), found once a month instead of once a call: the route table's rows, the month's
    multiples and the routes' rows by name (read when it is built, in the order the function read them, so the
    first error is the same one); the month, its broken backends and the plan's backends by name (:meth:`month`,
    read on the first call that gets past the route look-up, kept once read); each fleet's share sum
    (:meth:`fleet_share`, kept per backend). A raised read is not kept (it raises again on the next call)."""

    __slots__ = ("args", "table", "rows", "multiples", "route_at", "_month", "_shares")

    def __init__(self, x: float, t: float, plan: tuple, m: int, table: tuple, index: tuple | None) -> None:
        self.args = (x, t, plan, m, table, index)
        self.table = table
        self.rows = _route_rows(table)
        self.multiples = _multiples(table, index, m, x)
        self.route_at = _route_at(table)
        self._month: tuple[fmonth.Month, dict[str, str], dict[str, fmonth.Backend]] | None = None
        self._shares: dict[str, float] = {}

    def month(self) -> tuple[fmonth.Month, dict[str, str], dict[str, fmonth.Backend]]:
        """``_month(...)``'s month and broken backends, and ``_plan_backend_at(plan)``."""
        if self._month is None:
            x, t, plan, m, table, index = self.args
            month, broken = _month(x, t, plan, m, table, index)
            self._month = (month, broken, _plan_backend_at(plan))
        return self._month

    def fleet_share(self, backend: str) -> float:
        """:func:`_fleet_share` of ``backend`` (lower case) in the month."""
        share = self._shares.get(backend)
        if share is None:
            x, _t, _plan, m, table, index = self.args
            share = self._shares[backend] = _fleet_share(table, index, m, x, backend)
        return share


@lru_cache(maxsize=256)
def _route_month(x: float, t: float, plan: tuple, m: int, table: tuple, index: tuple | None) -> _RouteMonth:
    """The month's :class:`_RouteMonth`, kept per (multiple, threshold, backend table, month, route table, demand
    table): the arguments of :func:`_month` (the tables are tuples of row tuples); 256 months (a 20-route plan has
    12)."""
    return _RouteMonth(x, t, plan, m, table, index)


def _route_growths(growths: Sequence[Any], *, plan_growth: float) -> list[float]:
    return [plan_growth if _blank(g) else float(check_number("route growth", g, minimum=-1, exclusive_minimum=True))
            for g in growths]


def _routes_example(*, second_growth: str) -> str:
    """A route table literal for the examples: two routes on backend "a", each 30 % of its ITPM, the first growing
    10 % a month, the second at ``second_growth`` (blank text: the Plan's)."""
    def row(name: str, growth: str) -> str:
        return ",".join([f'"{name}"'] + ["0"] * 11 + ['"a"', growth] + ["0"] * 8 + ["0", "0", "0.3"] + ["0"] * 7)
    return "{" + ",".join(f'"{k}"' for k in ROUTE_KEYS) + ";" + row("r1", "0.1") + ";" + row("r2", second_growth) + "}"


@sheet_function(
    summary="Months of growth until a backend's first linear constraint reaches 1 when its routes grow at their own "
    "rates: the first t with sum u_rL (1 + g_r)^t = 1 for some constraint L (RPM ... LOAD), u_rL each route's share "
    "of it; where every route on the backend grows alike, MONTHS_TO_BREACH of the given utilization.",
    args=(
        Arg(name="backend", unit="name", kind="text", help="The backend"),
        BREACH_ROUTES_TABLE,
        Arg(name="monthly_growth", unit="fraction/month", help="The Plan's monthly growth"),
        Arg(name="utilization", unit="fraction", help="The backend's highest linear utilization (1 / headroom): "
            "used where its routes grow alike"),
    ),
    returns="months",
    category="Forecast",
    example=(
        '=BACKEND_MONTHS_TO_BREACH("a", ' + _routes_example(second_growth="0") + ', 0, 0.6) -> 8.89'
    ),
    formula_ids=("C7",),
)
def BACKEND_MONTHS_TO_BREACH(backend, routes, monthly_growth, utilization):
    from planner import decision

    g = float(check_number("monthly_growth", monthly_growth, minimum=-1, exclusive_minimum=True))
    key = str(backend).strip().lower()
    error, growths = _breach_growths(routes).get(key, _NO_ROUTES)
    if error is not None:  # _share_rows' refusal: the first of this backend's rows with an error
        raise Refusal(error)
    rates = _route_growths(growths, plan_growth=g)
    if len(set(rates)) <= 1:  # one growth rate: C7's closed form on Results' month-1 utilization
        return decision.months_to_breach(utilization, monthly_growth_rate=rates[0] if rates else g)
    return _backend_breach(_share_rows(routes, backend=key), rates)


_NO_ROUTES: tuple[str | None, tuple[Any, ...]] = (None, ())
_BREACH_AT = tuple(ROUTE_KEYS.index(k) for k in ("route", "backend", "growth"))
_BREACH_CHECKED = itemgetter(*(ROUTE_KEYS.index(k) for k in ("growth", *SHARE_KEYS)))
"""A route row's growth and ten shares, in _share_rows' order (the cells whose error is the backend's)."""
_BREACH_KEPT: dict[int, tuple[Any, dict[str, tuple[str | None, tuple[Any, ...]]]]] = {}
BREACH_KEPT = 64
"""Route tables :func:`_breach_growths` keeps before it starts over (a 20-route plan hands it about 7: the Forecast
route table and the tornado's bar ends' tables)."""


def _breach_growths(routes: Sequence[Sequence[Any]]) -> dict[str, tuple[str | None, tuple[Any, ...]]]:
    """What :func:`_share_rows` finds of each backend (lower case) of a route table, in one pass: the first of its
    rows' errors in row order (``_share_rows`` raises it), else its rows' growth cells in row order (None: no error).
    A backend without such rows is not in it. The width is checked first (its ``ArgumentError`` is raised, nothing
    kept).

    A table handed over as the shared rows of a block (:class:`planner.coerce.SharedRows`: one object per block, never
    changed) is read once: kept by its ``id`` with the table held (so the ``id`` is not reused), up to
    :data:`BREACH_KEPT` tables, then emptied; a plan's BACKEND_MONTHS_TO_BREACH calls (about 20, most from the
    tornado's bar ends) read about 7 tables, each for about 3 backends. Callers only read it.

    >>> blank = [None] * len(ROUTE_KEYS)
    >>> def row(route, backend, growth, share=0.1):
    ...     r = list(blank); r[0], r[12], r[13], r[22] = route, backend, growth, share
    ...     return r
    >>> _breach_growths([list(ROUTE_KEYS), row("r1", "A", None), row("r2", " a ", 0.1), row("r3", "b", None, "#N/A"),
    ...                  row(None, "c", 0.2)])
    {'a': (None, (None, 0.1)), 'b': ('#N/A', ())}
    """
    shared = type(routes) is SharedRows
    if shared:
        kept = _BREACH_KEPT.get(id(routes))
        if kept is not None and kept[0] is routes:
            return kept[1]
    rows = _rows(routes, "routes", len(ROUTE_KEYS))
    i_route, i_backend, i_growth = _BREACH_AT
    found: dict[str, tuple[str | None, list[Any]]] = {}
    for r in rows:
        name = r[i_backend]
        if _blank(r[i_route]) or _blank(name) or _row_error([name]):
            continue
        key = str(name).strip().lower()
        error, growths = found.setdefault(key, (None, []))
        if error is not None:
            continue  # _share_rows raises at this backend's first row with an error: the later rows are not read
        error = _row_error(_BREACH_CHECKED(r))
        if error is not None:
            found[key] = (error, [])
        else:
            growths.append(r[i_growth])
    out = {k: (e, tuple(g)) for k, (e, g) in found.items()}
    if shared:
        if len(_BREACH_KEPT) >= BREACH_KEPT:
            _BREACH_KEPT.clear()
        _BREACH_KEPT[id(routes)] = (routes, out)
    return out


def _share_rows(routes: Sequence[Sequence[Any]], *, backend: str | None = None) -> list[dict[str, Any]]:
    """The route table's rows with a route and a backend (``backend``: on that one only, lower case); a route's
    error in its growth or shares is the result (another backend's is not that backend's)."""
    out = []
    for r in _route_rows(_hashable(routes)):
        if _blank(r["route"]) or _blank(r["backend"]) or _row_error([r["backend"]]):
            continue
        if backend is not None and str(r["backend"]).strip().lower() != backend:
            continue
        error = _row_error([r["growth"], *(r[k] for k in SHARE_KEYS)])
        if error is not None:
            raise Refusal(error)
        out.append(r)
    return out


def _share_total(rows: Sequence[dict[str, Any]]) -> float:
    """A backend's highest linear utilization from its routes' shares: the largest sum over one constraint."""
    return max((sum(_num(r[k], 0.0) or 0.0 for r in rows) for k in SHARE_KEYS), default=0.0)


def _backend_breach(rows: Sequence[dict[str, Any]], rates: Sequence[float], *, scale: float = 1.0) -> float:
    """The first month a linear constraint of one backend reaches 1, its routes' shares (times ``scale``) growing at
    ``rates``: C7's closed form where they grow alike, else decision.months_to_breach_mixed (the earliest
    constraint)."""
    from planner import decision

    if len(set(rates)) <= 1:
        return decision.months_to_breach(_share_total(rows) * scale, monthly_growth_rate=rates[0] if rates else 0.0)
    return min(decision.months_to_breach_mixed([((_num(r[k], 0.0) or 0.0) * scale, rate)
                                                for r, rate in zip(rows, rates)]) for k in SHARE_KEYS)


@sheet_function(
    summary="Months until the plan's first backend reaches 1 on a linear constraint (the tornado's and the demand "
    "cases' first breach): MONTHS_TO_BREACH(utilization, growth x factor) where no route has its own growth; "
    "otherwise each backend's routes' shares, scaled by utilization / the month-1 highest, growing at their own "
    "rates x factor, the earliest backend.",
    args=(
        Arg(name="utilization", unit="fraction", help="The plan's highest linear utilization (1 / headroom) with the "
            "input moved"),
        Arg(name="monthly_growth", unit="fraction/month", help="The Plan's monthly growth"),
        Arg(name="growth_factor", unit="x", help="The factor on every growth rate (the growth bar's; else 1)"),
        ROUTES_TABLE,
    ),
    returns="months",
    category="Forecast",
    example=(
        '=PLAN_MONTHS_TO_BREACH(0.6, 0, 1, ' + _routes_example(second_growth='""') + ') -> 8.89'
    ),
    formula_ids=("C7",),
)
def PLAN_MONTHS_TO_BREACH(utilization, monthly_growth, growth_factor, routes):
    from planner import decision

    u = float(check_number("utilization", utilization, minimum=0))
    g = float(check_number("monthly_growth", monthly_growth, minimum=-1, exclusive_minimum=True))
    f = float(check_number("growth_factor", growth_factor, minimum=0))
    if all(_blank(r["growth"]) for r in _route_rows(_hashable(routes))):  # the Plan's growth for every route
        return decision.months_to_breach(u, monthly_growth_rate=g * f)  # C7's closed form
    rows = _share_rows(routes)
    by_backend: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_backend.setdefault(str(r["backend"]).strip().lower(), []).append(r)
    base = max((_share_total(mine) for mine in by_backend.values()), default=0.0)
    scale = u / base if base > 0 else 1.0
    return min((_backend_breach(mine, [rate * f for rate in _route_growths([r["growth"] for r in mine],
                                                                             plan_growth=g)], scale=scale)
                for mine in by_backend.values()), default=decision.MONTHS_NEVER)


# ---- commitments ----------------------------------------------------------------------------------------------

@sheet_function(
    summary="Reserved price per GPU-hour for a term: the on-demand price times the bundled reserved / on-demand "
    "ratio for the GPU (same source for both); a refusal where no public reserved price was found.",
    args=(
        Arg(name="gpu", unit="name", kind="text", help="GPU name (h100-sxm, ...)"),
        Arg(name="on_demand_usd_per_gpu_hour", unit="USD/GPU-h", help="The fleet's on-demand price"),
        Arg(name="term_months", unit="months", help="12 (1 year) or 36 (3 years)", default=12),
    ),
    returns="USD/GPU-h",
    category="Forecast",
    example='=RESERVED_USD_PER_GPU_HOUR("h100-sxm", 2.23, 12) -> 1.79',
    formula_ids=("C4",),
)
def RESERVED_USD_PER_GPU_HOUR(gpu, on_demand_usd_per_gpu_hour, term_months=12):
    od = check_number("on_demand_usd_per_gpu_hour", on_demand_usd_per_gpu_hour, minimum=0)
    term = int(check_number("term_months", term_months, minimum=1, integer=True))
    found = forecast_data.reserved_ratio(str(gpu), term_months=term)
    if found is None:
        raise ArgumentError("gpu", gpu, f"a GPU with a public {term}-month reserved price in the bundled catalog "
                            "(planner/data/commitments.json: none found for this one)")
    return od * found[0]


@sheet_function(
    summary="Share of the hours a reserved GPU must be busy to cost no more than on demand: reserved / on-demand.",
    args=(
        Arg(name="reserved_price", unit="USD/GPU-h", help="Reserved price per GPU-hour"),
        Arg(name="on_demand_price", unit="USD/GPU-h", help="On-demand price per GPU-hour"),
    ),
    returns="fraction of hours",
    category="Forecast",
    example="=RESERVED_BREAK_EVEN(1.79, 2.23) -> 0.803",
    formula_ids=("C4",),
)
def RESERVED_BREAK_EVEN(reserved_price, on_demand_price):
    return commitments.reserved_break_even_fraction(reserved_price, on_demand_usd_per_hour=on_demand_price)


@sheet_function(
    summary="The first forecast month whose volume reaches a break-even volume at compound growth (1: already; "
    "9999: never).",
    args=(
        Arg(name="volume", unit="per month", help="Month 1's volume (USD of API spend, tokens, GPU-hours)"),
        Arg(name="break_even_volume", unit="per month", help="The volume at which the commitment pays off"),
        Arg(name="monthly_growth", unit="fraction/month", help="Demand growth per month"),
    ),
    returns="month",
    category="Forecast",
    example="=BREAK_EVEN_MONTH(5000, 12000, 8%) -> 13",
    formula_ids=("C7",),
)
def BREAK_EVEN_MONTH(volume, break_even_volume, monthly_growth):
    return commitments.break_even_month(volume, break_even_volume=break_even_volume, monthly_growth=monthly_growth)


def _offer(provider: Any) -> dict[str, Any]:
    """The bundled provisioned-throughput offer of a provider, or a refusal saying why there is none."""
    name = str(provider).strip().lower()
    offer = forecast_data.provisioned_offer(name)
    if offer is not None:
        return offer
    missing = forecast_data.commitments()["meta"]["not_found"]
    reason = {"bedrock": missing["bedrock-provisioned-throughput"]}.get(
        name, "no provisioned-throughput offer with a public price is bundled for it")
    raise ArgumentError("provider", provider, "a provider with a public provisioned-throughput price (azure-openai: "
                        f"PTU; gemini or vertex: Vertex AI GSU), or your quote on Providers; {name}: {reason}")


@sheet_function(
    summary="Provisioned throughput units a backend needs at its peak: (input + output weight x output) tokens over "
    "the model's throughput per unit, rounded up to the minimum and increment (Azure OpenAI PTU: input TPM per PTU; "
    "Vertex AI GSU, also for a Gemini API backend: tokens per second per GSU).",
    args=(
        Arg(name="provider", unit="name", kind="text", help="Provider of the backend (azure-openai, gemini, vertex)"),
        Arg(name="model", unit="name", kind="text", help="Provider model (gpt-4.1, gemini-2.5-flash, ...)"),
        Arg(name="input_tokens_per_min", unit="tokens/min", help="Input tokens per minute at peak"),
        Arg(name="output_tokens_per_min", unit="tokens/min", help="Output tokens per minute at peak"),
    ),
    returns="units",
    category="Forecast",
    example='=PROVISIONED_UNITS("azure-openai", "gpt-4.1", 300000, 25000) -> 135',
    formula_ids=("C4",),
)
def PROVISIONED_UNITS(provider, model, input_tokens_per_min, output_tokens_per_min):
    offer = _offer(provider)
    key = str(model).strip().lower()
    per = offer["throughput_per_unit"].get(key)
    if per is None:
        known = ", ".join(offer["throughput_per_unit"])
        raise ArgumentError("model", model, f"a model with a bundled throughput per {offer['unit']} ({known})")
    weight = offer["output_weight"].get(key)
    if weight is None:
        raise ArgumentError("model", model, f"a model with a bundled output weighting per {offer['unit']} "
                            f"({', '.join(offer['output_weight'])}); not published for this one")
    i = check_number("input_tokens_per_min", input_tokens_per_min, minimum=0)
    o = check_number("output_tokens_per_min", output_tokens_per_min, minimum=0)
    per_min = per * 60 if offer["throughput_per"] == "second" else per
    return commitments.units_for_throughput(i + weight * o, tokens_per_min_per_unit=per_min,
                                            minimum_units=offer["minimum_units"], increment=offer["increment"])


@sheet_function(
    summary="Monthly cost of provisioned throughput units: units x the price per unit for the term, on a monthly "
    "footing (per hour x 730.5, per week x 4.348). Azure PTU: hourly, 1_month, 1_year; Vertex GSU: 1_week, 1_month, "
    "3_month, 1_year.",
    args=(
        Arg(name="provider", unit="name", kind="text", help="Provider of the backend (azure-openai, gemini, vertex)"),
        Arg(name="units", unit="units", help="Provisioned units (PTU, GSU)"),
        Arg(name="term", unit="name", kind="text", help="hourly, 1_week, 1_month, 3_month or 1_year (as offered)",
            default="1_month"),
    ),
    returns="USD/month",
    category="Forecast",
    example='=PROVISIONED_USD_MONTHLY("azure-openai", 15, "1_month") -> 3900',
    formula_ids=("C4",),
)
def PROVISIONED_USD_MONTHLY(provider, units, term="1_month"):
    offer = _offer(provider)
    t = str(term).strip().lower()
    price = next((p for p in offer["prices"] if p["term"] == t), None)
    if price is None:
        raise ArgumentError("term", term, f"a term {offer['unit']} is sold for: "
                            f"{', '.join(p['term'] for p in offer['prices'])}")
    return commitments.provisioned_break_even_usd(
        units, usd_per_unit_month=commitments.unit_monthly_usd(price["usd"], per=price["per"]))


@sheet_function(
    summary="Provisioned units a backend needs at its peak on your quote, where a unit is specified by input and "
    "output tokens per minute (an Amazon Bedrock model unit; any provider's negotiated unit): the larger of "
    "ceil(input / input per unit) and ceil(output / output per unit), at least 1.",
    args=(
        Arg(name="input_tokens_per_min", unit="tokens/min", help="Input tokens per minute at peak"),
        Arg(name="output_tokens_per_min", unit="tokens/min", help="Output tokens per minute at peak"),
        Arg(name="input_per_unit", unit="tokens/min", help="Input tokens per minute one unit processes (quote)"),
        Arg(name="output_per_unit", unit="tokens/min", help="Output tokens per minute one unit generates (quote)"),
    ),
    returns="units",
    category="Forecast",
    example="=PROVISIONED_UNITS_QUOTED(300000, 25000, 50000, 2000) -> 13",
    formula_ids=("C4",),
)
def PROVISIONED_UNITS_QUOTED(input_tokens_per_min, output_tokens_per_min, input_per_unit, output_per_unit):
    return commitments.units_for_split_throughput(
        input_tokens_per_min, output_tokens_per_min=output_tokens_per_min,
        input_tokens_per_min_per_unit=input_per_unit, output_tokens_per_min_per_unit=output_per_unit)


@sheet_function(
    summary="Monthly cost of provisioned units at your quoted price per unit-hour: units x price x 730.5 hours (the "
    "units bill every hour of the term, used or not).",
    args=(
        Arg(name="units", unit="units", help="Provisioned units"),
        Arg(name="usd_per_unit_hour", unit="USD/unit-h", help="Your quoted price per unit-hour for the term"),
    ),
    returns="USD/month",
    category="Forecast",
    example="=PROVISIONED_USD_MONTHLY_QUOTED(13, 40) -> 379860",
    formula_ids=("C4",),
)
def PROVISIONED_USD_MONTHLY_QUOTED(units, usd_per_unit_hour):
    return commitments.provisioned_break_even_usd(
        units, usd_per_unit_month=commitments.unit_monthly_usd(usd_per_unit_hour, per="hour"))


@sheet_function(
    summary="Monthly saving of reserving GPUs for a term instead of renting their busy hours on demand: "
    "GPUs x 730.5 x (busy share x on-demand - reserved) per GPU-hour (negative: the reservation costs more).",
    args=(
        Arg(name="gpus", unit="GPUs", help="GPUs reserved"),
        Arg(name="on_demand_price", unit="USD/GPU-h", help="On-demand price per GPU-hour"),
        Arg(name="reserved_price", unit="USD/GPU-h", help="Reserved price per GPU-hour"),
        Arg(name="busy_fraction", unit="fraction", help="Share of the hours the GPUs are busy", default=1),
    ),
    returns="USD/month",
    category="Forecast",
    example="=RESERVED_SAVING_MONTHLY(88, 3.2, 2.72, 1) -> 30856",
    formula_ids=("C4",),
)
def RESERVED_SAVING_MONTHLY(gpus, on_demand_price, reserved_price, busy_fraction=1):
    return commitments.reserved_saving_usd(gpus, on_demand_usd_per_gpu_hour=on_demand_price,
                                           reserved_usd_per_gpu_hour=reserved_price, busy_fraction=busy_fraction)


@sheet_function(
    summary="The demand multiple of month 1 at which pay-as-you-go spend reaches the provisioned units' monthly cost: "
    "provisioned / pay-as-you-go (below 1: the units already pay in month 1).",
    args=(
        Arg(name="payg_monthly", unit="USD/month", help="Month 1's pay-as-you-go spend on the backend"),
        Arg(name="provisioned_monthly", unit="USD/month", help="The provisioned units' monthly cost"),
    ),
    returns="x demand",
    category="Forecast",
    example="=BREAK_EVEN_MULTIPLE(39447, 78000) -> 1.977",
    formula_ids=("C4",),
)
def BREAK_EVEN_MULTIPLE(payg_monthly, provisioned_monthly):
    return commitments.break_even_multiple(payg_monthly, provisioned_usd_per_month=provisioned_monthly)
