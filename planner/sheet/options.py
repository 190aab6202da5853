"""Spreadsheet functions of the fleet options search (the template's Options sheet): a fleet's load and strictest
SLOs over its routes, and one field of its n-th cheapest fleet (:mod:`planner.serving.options`)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from planner import catalog_sheet
from planner.coerce import SharedRows
from planner.errors import ArgumentError, PlannerError
from planner.registry import Arg, sheet_function
from planner.serving import options as opt
from planner.sheet.memory import MODEL
from planner.sheet.serving import INPUT, OUTPUT

FLEET = Arg(name="fleet", unit="name", kind="text", help="Fleet backend name (a row of Fleet)")
BACKENDS = Arg(name="backends", unit="names", kind="texts", help="The backend column of the routes (Routes)",
               blank="no routes")
FAILOVERS = Arg(name="failovers", unit="names", kind="texts", help="The failover column of the routes (Routes)",
                blank="no route has a failover")

FIELDS = {
    "gpu": "GPU name", "tp": "tensor-parallel GPUs", "pp": "pipeline stages", "weight_dtype": "weights as served",
    "kv_cache_dtype": "KV-cache dtype", "mode": "aggregated or disaggregated (the cheaper)",
    "replicas": "replicas (disaggregated: prefill + decode)", "gpus": "GPUs", "usd_per_gpu_hour": "USD/GPU-h",
    "usd_per_hour": "USD/h", "binding": "what binds", "rate_per_replica": "req/s one aggregated replica sustains",
    "aggregated_gpus": "GPUs aggregated (0: cannot)", "prefill_replicas": "prefill pool replicas",
    "decode_replicas": "decode pool replicas", "disaggregated_gpus": "GPUs disaggregated (0: cannot)",
    "kv_transfer_gb_s": "KV transfer prefill -> decode, GB/s", "kv_bytes_per_token": "KV bytes/token per replica",
}
"""The fields FLEET_OPTION returns, with their meaning."""


SEARCH_TOP = 3
"""Ranks up to this share one search (it finds the cheapest SEARCH_TOP overall and on each GPU)."""


@lru_cache(maxsize=64)
def _cards(gpus: tuple[tuple, ...]) -> tuple:
    """The priced GPUs of a GPUs-sheet range (header row first), as specs; unnamed rows skipped, a row the sheet
    cannot describe left out (its fleets show the error on Specs)."""
    from planner.catalog import get_gpu

    headers, out = list(gpus[0]), []
    for row in gpus[1:]:
        if not row or row[0] is None or str(row[0]).strip() == "":
            continue
        try:
            card = get_gpu(catalog_sheet.gpu_token(list(row), headers))
        except PlannerError:
            continue
        if card.usd_per_gpu_hour:
            out.append(card)
    return tuple(out)


_CARDS_BY_ID: dict[int, tuple[Any, tuple, dict[str, str]]] = {}
CARDS_KEPT = 64
"""GPUs tables :func:`_cards_named` keeps by identity (then emptied): a plan hands every FLEET_OPTION call one GPUs
block (the base's and its bar ends' share it), asked about 8 times a plan."""


def _cards_named(gpus: Any) -> tuple[tuple, dict[str, str]]:
    """:func:`_cards` of a GPUs range and each priced GPU's name and display name (stripped of nothing, lower case) ->
    the name of the first card (in the sheet's order) that has it, as FLEET_OPTION's ``priced`` finds it. A range
    handed over as a plan's shared rows (:class:`planner.coerce.SharedRows`: one object per block, never changed)
    is kept by its ``id`` (the range held, so the ``id`` is not reused; :data:`CARDS_KEPT` entries, then emptied);
    any other range is converted and looked up in :func:`_cards` each time, as before."""
    shared = type(gpus) is SharedRows
    if shared:
        hit = _CARDS_BY_ID.get(id(gpus))
        if hit is not None and hit[0] is gpus:
            return hit[1], hit[2]
    cards = _cards(tuple(tuple(r) for r in gpus))
    names = _names(cards)
    if shared:
        if len(_CARDS_BY_ID) >= CARDS_KEPT:
            _CARDS_BY_ID.clear()
        _CARDS_BY_ID[id(gpus)] = (gpus, cards, names)
    return cards, names


def _names(cards: tuple) -> dict[str, str]:
    """Each card's name and display name in lower case -> the name of the first card (in ``cards``' order) that has
    it: ``names.get(key)`` is the first of ``[c.name for c in cards if key in (c.name.lower(),
    c.display_name.lower())]``, None where that list is empty."""
    names: dict[str, str] = {}
    for c in cards:  # the first card with the name wins, as the list of matches' first
        names.setdefault(c.name.lower(), c.name)
        names.setdefault(c.display_name.lower(), c.name)
    return names


@sheet_function(
    summary="The sum of a per-route column over the routes a fleet's options are sized for: its primary routes, or "
    "for a standby fleet the routes that fail over to it.",
    args=(FLEET, BACKENDS, FAILOVERS,
          Arg(name="values", unit="per route", kind="numbers", help="A column with one value per route, aligned",
              blank="no values (0)", row_errors=True)),
    returns="the values' unit",
    category="Options",
    example='=FLEET_SUM("s", {"a","b","c"}, {"s","","s"}, {400,40,6}) -> 406',
    formula_ids=("F1",),
)
def FLEET_SUM(fleet, backends, failovers, values):
    return opt.fleet_sum(fleet, backends=backends, failovers=failovers, values=values)


@sheet_function(
    summary="The strictest SLO over a fleet's latency-critical and interactive routes (as FLEET_SUM chooses them); "
    "0 when all are bulk (sized at throughput).",
    args=(FLEET, BACKENDS, FAILOVERS,
          Arg(name="kinds", unit="kind", kind="texts", help="The kind column of the routes", blank="no kinds",
              row_errors=True),
          Arg(name="slos", unit="s", kind="numbers", help="The TTFT or TPOT SLO column of the routes",
              blank="no SLOs (0)", row_errors=True)),
    returns="s",
    category="Options",
    example='=FLEET_SLO_S("f", {"f","f"}, {"",""}, {"interactive","bulk"}, {1,0.2}) -> 1',
    formula_ids=("F1",),
)
def FLEET_SLO_S(fleet, backends, failovers, kinds, slos):
    return opt.fleet_slo_s(fleet, backends=backends, failovers=failovers, kinds=kinds, slos=slos)


_TOKENS: dict[int, tuple[opt.FleetChoice, str]] = {}
TOKENS_KEPT = 256
"""Options :func:`option_token` keeps by identity (then emptied): the search's memo hands FLEET_OPTION the same
choice objects on every call that asks for them again (about 8 calls a plan)."""


def option_token(c: opt.FleetChoice) -> str:
    """One option as the text an Options cell holds: ``field=value`` pairs separated by ``|``, numbers to 15
    significant digits (read back the same from a file as from the evaluator). Kept per choice object
    (:data:`_TOKENS`, the choice held, so its ``id`` is not reused: a frozen dataclass, so the same text)."""
    hit = _TOKENS.get(id(c))
    if hit is not None and hit[0] is c:
        return hit[1]
    out = _option_token(c)
    if len(_TOKENS) >= TOKENS_KEPT:
        _TOKENS.clear()
    _TOKENS[id(c)] = (c, out)
    return out


def _option_token(c: opt.FleetChoice) -> str:
    values = {"gpu": c.gpu, "tp": c.tp, "pp": c.pp, "weight_dtype": c.weight_dtype,
              "kv_cache_dtype": c.kv_cache_dtype, "mode": "disaggregated" if c.disaggregated else "aggregated",
              "replicas": c.replicas, "gpus": c.gpus, "usd_per_gpu_hour": c.usd_per_gpu_hour,
              "usd_per_hour": c.usd_per_hour, "binding": c.binding, "rate_per_replica": c.rate_per_replica,
              "aggregated_gpus": c.aggregated_gpus, "prefill_replicas": c.prefill_replicas,
              "decode_replicas": c.decode_replicas, "disaggregated_gpus": c.disaggregated_gpus,
              "kv_transfer_gb_s": c.kv_transfer_bytes_per_s / 1e9, "kv_bytes_per_token": c.kv_bytes_per_token}
    assert tuple(values) == tuple(FIELDS)
    return "|".join(f"{k}={v if isinstance(v, str) else format(_number(v), '.15g')}" for k, v in values.items())


def _number(v: object) -> float:
    assert isinstance(v, (int, float)), v  # every field above is text or a number
    return float(v)


@sheet_function(
    summary="The rank-th cheapest fleet serving the load within both SLOs (0 and 0: at throughput), as an option "
    "token (read its figures with OPTION_FIELD): over the GPUs sheet's priced GPUs (or only_gpu) x TP 1/2/4/8 (and "
    "8 x PP 2) x weights and KV as released or FP8, aggregated or as prefill and decode pools, whichever is cheaper.",
    args=(MODEL,
          Arg(name="peak_qps", unit="req/s", help="Requests per second the fleet must serve"),
          INPUT, OUTPUT,
          Arg(name="cache_hit_rate", unit="fraction", help="Fraction of input tokens served from the prefix cache"),
          Arg(name="ttft_slo_s", unit="s", help="Mean TTFT budget (0: none)"),
          Arg(name="tpot_slo_s", unit="s", help="Mean TPOT budget (0: none; both 0: sized at throughput)"),
          Arg(name="rank", unit="rank", help="1 for the cheapest, 2 for the next, ..."),
          Arg(name="engine", unit="name", kind="text", help="Serving engine: vllm, sglang or trtllm"),
          Arg(name="gpus", unit="table", kind="table", help="The GPUs sheet's range, header row included"),
          Arg(name="own_gpu", unit="name", kind="text", help="The fleet's GPU: its cheapest option is always found, so "
              "only_gpu rows share the search (empty: none)", default=""),
          Arg(name="only_gpu", unit="name", kind="text", help="Rank only this GPU's options (empty: every priced GPU; "
              "else give it as own_gpu too)", default="")),
    returns="option token",
    returns_kind="text",
    category="Options",
    example='=FLEET_OPTION("llama-3.1-8b", 50, 1000, 200, 0, 1, 0.05, 1, "vllm", {"GPU [name]";"h100-sxm"}) -> '
    '"gpu=h100-sxm|tp=1|pp=1|..."',
    formula_ids=("F1", "F2", "Q5"),
)
def FLEET_OPTION(model, peak_qps, avg_input_tokens, avg_output_tokens, cache_hit_rate, ttft_slo_s, tpot_slo_s, rank,
                 engine, gpus, own_gpu="", only_gpu=""):
    k = int(rank)
    if k < 1 or k != float(rank):
        raise ArgumentError("rank", rank, "an integer >= 1")
    cards, names = _cards_named(gpus)
    if not cards:
        raise ArgumentError("gpus", "(no priced GPU)", "a GPUs sheet with at least one priced GPU")

    def priced(name: str, arg: str) -> str:
        found = names.get(str(name).strip().lower())  # the first card whose name or display name it is
        if found is None:
            raise ArgumentError(arg, name, "a priced GPU of the GPUs sheet")
        return found

    keep = priced(own_gpu, "own_gpu") if own_gpu else None
    only = priced(only_gpu, "only_gpu") if only_gpu else None
    if only is not None and keep is None:
        keep = only
    # one search over every priced GPU for all of a fleet's rows (memoised): the cheapest SEARCH_TOP, and the
    # cheapest on its own GPU, are exact
    choices = opt.fleet_choices(model, request_rate=peak_qps, ttft_slo_s=ttft_slo_s, tpot_slo_s=tpot_slo_s,
                                input_tokens=avg_input_tokens, output_tokens=avg_output_tokens, gpus=cards,
                                engine=engine, cache_hit_rate=cache_hit_rate,
                                top=max(k, SEARCH_TOP) if only is None else SEARCH_TOP if k == 1 else None,
                                keep_gpu=next(c for c in cards if c.name == keep) if keep else None)
    if only is not None:
        choices = tuple(c for c in choices if c.gpu == only)
    if len(choices) < k:
        raise ArgumentError("rank", rank, f"at most {len(choices)} (fleets that meet the SLOs)")
    return option_token(choices[k - 1])


@sheet_function(
    summary="One figure of an option token (FLEET_OPTION): " + ", ".join(f"{k} ({v})" for k, v in FIELDS.items())
    + ".",
    args=(Arg(name="option_token", unit="option token", kind="text", help="A FLEET_OPTION result"),
          Arg(name="field", unit="name", kind="text", help="Which figure: " + ", ".join(FIELDS))),
    returns="the field's unit (text for gpu, dtypes, mode, binding)",
    category="Options",
    example='=OPTION_FIELD("gpu=h100-sxm|tp=2|gpus=4", "gpus") -> 4',
    formula_ids=("F2",),
)
def OPTION_FIELD(option_token, field):
    if field not in FIELDS:
        raise ArgumentError("field", field, "one of " + ", ".join(FIELDS))
    value = _token_fields(str(option_token)).get(field)  # the first "field=value" part of the token
    if value is not None:
        if field in ("gpu", "weight_dtype", "kv_cache_dtype", "mode", "binding"):
            return value
        try:
            return float(value)
        except ValueError:
            raise ArgumentError("option_token", option_token, "an option token as FLEET_OPTION writes it") from None
    raise ArgumentError("option_token", option_token, f"an option token with {field}= (as FLEET_OPTION writes it)")


_FIELDS_OF: dict[str, dict[str, str]] = {}
FIELDS_OF_KEPT = 256
"""Option tokens :func:`_token_fields` keeps (then emptied): a plan's Options sheet reads about 8 tokens, each for
about 8 fields (OPTION_FIELD, 68 calls a plan)."""


def _token_fields(token: str) -> dict[str, str]:
    """An option token's ``key=value`` parts (split at ``|``, each at its first ``=``; parts without one skipped) as
    key -> value, the first part of a key kept: what OPTION_FIELD's scan of the parts finds first for each field.
    Kept per token text (:data:`_FIELDS_OF`); callers only read it.

    >>> _token_fields("gpu=h100-sxm|tp=2|odd|gpus=4|tp=3|x=a=b")
    {'gpu': 'h100-sxm', 'tp': '2', 'gpus': '4', 'x': 'a=b'}
    """
    out = _FIELDS_OF.get(token)
    if out is None:
        out = {}
        for part in token.split("|"):
            key, sep, value = part.partition("=")
            if sep:
                out.setdefault(key, value)
        if len(_FIELDS_OF) >= FIELDS_OF_KEPT:
            _FIELDS_OF.clear()
        _FIELDS_OF[token] = out
    return out
