"""Spreadsheet functions of the serving model: TPOT, TTFT and throughput under load, the highest rate at both SLOs,
the replicas that follow, and the cheapest fleet (S1-S6, Q1-Q6 of docs/serving.md)."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

from planner import serving
from planner.errors import ArgumentError
from planner.registry import Arg, sheet_function
from planner.serving import api
from planner.serving.api import performance
from planner.sheet.memory import (
    ENGINE,
    GPU,
    KV_DTYPE,
    MODEL,
    PP_OPT,
    TP,
    WEIGHT_DTYPE,
    _kept,
    _key,
    _kv_dtype,
    _named,
    _unkey,
)

INPUT = Arg(name="avg_input_tokens", unit="tokens", help="Average input (prompt) tokens per request")
OUTPUT = Arg(name="avg_output_tokens", unit="tokens", help="Average output tokens per request")
CLIENTS = Arg(name="clients", unit="requests",
                  help="Concurrent clients (closed loop, as vllm bench serve --max-concurrency); 0 with a request "
                  "rate for an open loop, 0 and 0 for the offline maximum")
RATE = Arg(name="request_rate", unit="req/s", help="Poisson request rate per replica (open loop) when clients "
           "is 0", default=0.0)
HIT = Arg(name="cache_hit_rate", unit="fraction", help="Fraction of input tokens served from the prefix cache",
          default=0.0)
CALIBRATION = Arg(name="calibration", unit="path", kind="text",
                  help="Calibration JSON from planner calibrate-bench (empty: the fitted defaults)", default="")
TTFT_SLO = Arg(name="ttft_slo_s", unit="s", help="Mean time-to-first-token budget")
TPOT_SLO = Arg(name="tpot_slo_s", unit="s", help="Mean time-per-output-token budget")
TPOT_SLO_OR_NONE = Arg(name="tpot_slo_s", unit="s", help="Mean time-per-output-token budget (0: none, as for a route "
                       "of one output token: no gap between tokens)")


def _perf(model, gpu, tp, avg_input_tokens, avg_output_tokens, clients, request_rate, engine, weight_dtype,
          kv_dtype, cache_hit_rate, pp, calibration):
    conc = float(clients or 0)
    rate = float(request_rate or 0)
    if conc < 0:
        raise ArgumentError("clients", clients, "a number >= 0")
    if rate < 0:
        raise ArgumentError("request_rate", request_rate, "a number >= 0")
    if conc > 0 and rate > 0:
        raise ArgumentError("request_rate", request_rate, "0 when clients are given (one load at a time)")
    kwargs = dict(tp=tp, pp=pp, engine=engine, weight_dtype=weight_dtype, kv_cache_dtype=kv_dtype,
                  input_tokens=avg_input_tokens, output_tokens=avg_output_tokens, concurrency=conc or None,
                  request_rate=rate or None, cache_hit_rate=cache_hit_rate)
    # the fitted constants' answers kept per distinct call (a calibration file may change between calls)
    result = (_performance(model, gpu, calibration=calibration, **kwargs) if calibration
              else _kept(_performance, _perf_kept, model, gpu, kwargs))
    if result.saturated:
        raise ArgumentError("request_rate", request_rate,
                            f"below the replica's maximum {result.max_requests_per_s:.4g} req/s (saturated)")
    return result


PERF_CACHE_SIZE = 1024
"""Serving-model answers kept per process (:func:`_perf_kept`): a plan's fleet routes ask for the same steady state
through several functions (``FLEET_TTFT_S`` and ``FLEET_TPOT_S`` of a route at its rate), about 42 calls and 33
distinct ones a 20-route plan with its tornado bars."""


def _performance(model, gpu, **kwargs):
    return _kv_dtype(performance, model, gpu, **kwargs)


@lru_cache(maxsize=PERF_CACHE_SIZE, typed=True)
def _perf_kept(model, gpu, key):
    """:func:`_performance` with the fitted constants, kept per distinct arguments through
    :func:`planner.sheet.memory._kept` (arguments compared with their types, only for a model that names its spec):
    a pure function with a frozen result. A call that raises (a refusal) is not kept.

    Computed as :func:`planner.serving.api.performance` does (its setup, then the load's solve), from the replica's
    setup kept per setup (:func:`_setup_kept`), and an open loop's or the offline maximum's steady states through
    that setup's memo of states (:func:`planner.serving.schedule.solved`)."""
    kwargs = _unkey(key)
    concurrency, rate = kwargs.pop("concurrency"), kwargs.pop("request_rate")
    if concurrency is not None and rate is not None:  # performance's own first check (_perf gives one of them)
        return _performance(model, gpu, concurrency=concurrency, request_rate=rate, **kwargs)
    s, memo = _kv_dtype(_setup_kept, model, gpu, _setup_key(kwargs))
    return _kv_dtype(api._perform, s, concurrency=concurrency, request_rate=rate,
                     memo=memo if concurrency is None else None)


SETUP_CACHE_SIZE = 32
"""Replica setups kept per process (:func:`_setup_kept`): a 20-route plan asks the serving model about 14 distinct
(model, GPU, TP, PP, engine, dtypes, request mix) setups in about 43 calls (its routes' TTFT and TPOT at their rate,
the offline and SLO rates of each mix, the forecast's months, and the tornado's scaled mixes), each with a memo of at
most :data:`planner.serving.schedule.MEMO_STATES` states (about 25, 100 for the forecast's; 550 bytes a state): about
0.25 MB a plan, at most 2.3 MB. Distinct plans share none, so two plans' worth is kept."""


def _setup_key(kwargs: dict[str, Any]) -> tuple:
    """:func:`planner.sheet.memory._key` of a setup's arguments, with a ``tp`` or ``pp`` that is a whole float from 1
    to 2^53 taken as the int :func:`planner.serving.api._setup` makes of it (``int(check_number(...))``, before any
    other use): the forecast passes a fleet's TP as ``4.0`` where the fleet functions pass ``4``, and both get the
    same setup. Anything else keeps its type in the key.

    >>> _setup_key({"tp": 4.0, "pp": 1.5}) == _key({"tp": 4, "pp": 1.5})
    True
    """
    for name in ("tp", "pp"):
        v = kwargs.get(name)
        if type(v) is float and v.is_integer() and 1.0 <= v <= 2.0 ** 53:
            kwargs[name] = int(v)
    return _key(kwargs)


@lru_cache(maxsize=SETUP_CACHE_SIZE, typed=True)
def _setup_kept(model, gpu, key):
    """``(setup, memo)``: :func:`planner.serving.api._setup` of ``model`` and ``gpu`` with the fitted constants and
    the arguments ``key`` holds (:func:`planner.sheet.memory._key` of ``tp``, ``pp``, ``engine``, ``weight_dtype``,
    ``kv_cache_dtype``, ``input_tokens``, ``output_tokens`` and ``cache_hit_rate``: compared with their types), and an
    empty memo of its load's steady states (:func:`planner.serving.schedule.solved`, at most
    :data:`planner.serving.schedule.MEMO_STATES` states), which every solve of this setup shares: the same states
    for the same batches, so the same floats as solving afresh. Key: the model and GPU (tokens that name their
    specs: the caller checks, :func:`planner.sheet.memory._named`) and ``key``; at most :data:`SETUP_CACHE_SIZE`
    entries (least recently used first out). A setup that raises (a refusal) is not kept."""
    memo: dict[float, Any] = {}
    return api.setup_simple(model, gpu, calibration=None, **_unkey(key)), memo


_PERF_ARGS = (MODEL, GPU, TP, INPUT, OUTPUT, CLIENTS, RATE, ENGINE, WEIGHT_DTYPE, KV_DTYPE, HIT, PP_OPT,
              CALIBRATION)


@sheet_function(
    summary="Mean time per output token of one replica under load (continuous batching with chunked prefill: "
    "decode steps lengthened by the prompts they carry, fixed step cost, TP communication).",
    args=_PERF_ARGS,
    returns="s/token",
    category="Serving",
    example='=SERVING_TPOT_S("llama-3.1-8b", "h100-sxm", 1, 1000, 200, 16) -> about 0.008',
    formula_ids=("S1", "Q2"),
)
def SERVING_TPOT_S(model, gpu, tp, avg_input_tokens, avg_output_tokens, clients, request_rate=0.0,
                   engine="vllm", weight_dtype="auto", kv_dtype="auto", cache_hit_rate=0.0, pp=1, calibration=""):
    return _perf(model, gpu, tp, avg_input_tokens, avg_output_tokens, clients, request_rate, engine,
                 weight_dtype, kv_dtype, cache_hit_rate, pp, calibration).tpot_s


@sheet_function(
    summary="Mean time to first token of one replica under load: fixed front-end time, wait for the current step, "
    "queueing for prefill room (M/D/1) and the prefill chunks.",
    args=_PERF_ARGS,
    returns="s",
    category="Serving",
    example='=SERVING_TTFT_S("llama-3.1-8b", "h100-sxm", 1, 1000, 200, 16) -> about 0.05',
    formula_ids=("Q4",),
)
def SERVING_TTFT_S(model, gpu, tp, avg_input_tokens, avg_output_tokens, clients, request_rate=0.0,
                   engine="vllm", weight_dtype="auto", kv_dtype="auto", cache_hit_rate=0.0, pp=1, calibration=""):
    return _perf(model, gpu, tp, avg_input_tokens, avg_output_tokens, clients, request_rate, engine,
                 weight_dtype, kv_dtype, cache_hit_rate, pp, calibration).ttft_s


@sheet_function(
    summary="Output tokens per second one replica delivers under the load (closed loop, open loop or offline "
    "maximum): requests/s x output tokens.",
    args=_PERF_ARGS,
    returns="tokens/s per replica",
    category="Serving",
    example='=SERVING_TOKENS_PER_S("llama-3.1-8b", "h100-sxm", 1, 1000, 200, 16) -> about 1,900',
    formula_ids=("Q3", "Q6"),
)
def SERVING_TOKENS_PER_S(model, gpu, tp, avg_input_tokens, avg_output_tokens, clients, request_rate=0.0,
                         engine="vllm", weight_dtype="auto", kv_dtype="auto", cache_hit_rate=0.0, pp=1,
                         calibration=""):
    return _perf(model, gpu, tp, avg_input_tokens, avg_output_tokens, clients, request_rate, engine,
                 weight_dtype, kv_dtype, cache_hit_rate, pp, calibration).output_tokens_per_s


def _rate(model, gpu, tp, avg_input_tokens, avg_output_tokens, ttft_slo_s, tpot_slo_s, kv_dtype, cache_hit_rate,
          engine, weight_dtype, pp, calibration):
    ttft = float(ttft_slo_s) if ttft_slo_s else math.inf
    tpot = float(tpot_slo_s) if tpot_slo_s else math.inf  # 0: no TPOT SLO (a one-token route)
    if not calibration:  # the fitted constants: the setup and its states kept (_setup_kept), as max_rate_at_slo runs
        kwargs = dict(tp=tp, pp=pp, engine=engine, weight_dtype=weight_dtype, kv_cache_dtype=kv_dtype,
                      input_tokens=avg_input_tokens, output_tokens=avg_output_tokens, cache_hit_rate=cache_hit_rate)
        try:
            key = _setup_key(kwargs)
            hash((model, gpu, key))
        except TypeError:
            key = None
        if key is not None and _named(model):
            limits = api._slo_limits(ttft, tpot)
            s, memo = _kv_dtype(_setup_kept, model, gpu, key)
            return api._rate_at_slo(s, *limits, memo=memo)
    return _kv_dtype(serving.max_rate_at_slo, model, gpu, ttft_slo_s=ttft, tpot_slo_s=tpot,
                     input_tokens=avg_input_tokens, output_tokens=avg_output_tokens, tp=tp, pp=pp, engine=engine,
                     weight_dtype=weight_dtype, kv_cache_dtype=kv_dtype, cache_hit_rate=cache_hit_rate,
                     calibration=calibration or None)


@sheet_function(
    summary="Highest Poisson request rate one replica sustains with mean TTFT and mean TPOT within their SLOs "
    "(0 if even a light load misses them).",
    args=(MODEL, GPU, TP, INPUT, OUTPUT, TTFT_SLO, TPOT_SLO_OR_NONE, KV_DTYPE, HIT, ENGINE, WEIGHT_DTYPE, PP_OPT,
          CALIBRATION),
    returns="req/s per replica",
    category="Serving",
    example='=MAX_RATE_AT_SLO("llama-3.1-8b", "h100-sxm", 1, 1500, 60, 0.5, 0.02) -> about 20',
    formula_ids=("Q5",),
)
def MAX_RATE_AT_SLO(model, gpu, tp, avg_input_tokens, avg_output_tokens, ttft_slo_s, tpot_slo_s, kv_dtype="auto",
                    cache_hit_rate=0.0, engine="vllm", weight_dtype="auto", pp=1, calibration=""):
    return _rate(model, gpu, tp, avg_input_tokens, avg_output_tokens, ttft_slo_s, tpot_slo_s, kv_dtype,
                 cache_hit_rate, engine, weight_dtype, pp, calibration)


@sheet_function(
    summary="Replicas that serve the peak within both SLOs: ceil(peak QPS / MAX_RATE_AT_SLO). The serving model "
    "replaces the roofline (mbu, mfu and gpu_memory_utilization are kept for position and ignored); ttft_slo_s 0 "
    "means no TTFT SLO.",
    args=(MODEL, GPU, TP,
          Arg(name="peak_qps", unit="req/s", help="Requests per second at the peak"),
          INPUT, OUTPUT, TPOT_SLO, KV_DTYPE,
          Arg(name="mbu", unit="fraction", help="Ignored (kept so existing calls keep their positions)", default=0.7),
          Arg(name="mfu", unit="fraction", help="Ignored (kept so existing calls keep their positions)", default=0.5),
          HIT,
          Arg(name="gpu_memory_utilization", unit="fraction",
              help="Ignored (the engine's default memory fraction sizes the KV cache)", default=0.9),
          ENGINE, WEIGHT_DTYPE,
          Arg(name="ttft_slo_s", unit="s", help="Mean time-to-first-token budget (0: none)", default=0.0),
          PP_OPT, CALIBRATION),
    returns="replicas",
    category="Serving",
    example='=REPLICAS_AT_SLO("llama-3.1-8b", "h100-sxm", 1, 2000, 1500, 60, 0.02) -> about 100',
    formula_ids=("Q5", "P8"),
)
def REPLICAS_AT_SLO(model, gpu, tp, peak_qps, avg_input_tokens, avg_output_tokens, tpot_slo_s, kv_dtype="auto",
                    mbu=0.7, mfu=0.5, cache_hit_rate=0.0, gpu_memory_utilization=0.9, engine="vllm",
                    weight_dtype="auto", ttft_slo_s=0.0, pp=1, calibration=""):
    rate = _rate(model, gpu, tp, avg_input_tokens, avg_output_tokens, ttft_slo_s, tpot_slo_s, kv_dtype,
                 cache_hit_rate, engine, weight_dtype, pp, calibration)
    return serving.replicas_at_slo(peak_qps, rate_per_replica=rate)


@sheet_function(
    summary="The cheapest fleet meeting both SLOs at the peak, over every priced catalog GPU, TP 1/2/4/8, weight "
    "bf16/fp8, KV bf16/fp8 and prefill/decode disaggregation, as text (rank 1 = cheapest).",
    args=(MODEL,
          Arg(name="peak_qps", unit="req/s", help="Requests per second at the peak"),
          INPUT, OUTPUT, TTFT_SLO, TPOT_SLO,
          Arg(name="rank", unit="rank", help="1 for the cheapest, 2 for the next, ...", default=1),
          ENGINE),
    returns="fleet description",
    returns_kind="text",
    category="Serving",
    example='=CHEAPEST_FLEET("llama-3.1-8b", 50, 1000, 200, 1, 0.05) -> "1 x h100-sxm TP1 ..."',
    formula_ids=("Q5",),
)
def CHEAPEST_FLEET(model, peak_qps, avg_input_tokens, avg_output_tokens, ttft_slo_s, tpot_slo_s, rank=1,
                   engine="vllm"):
    k = int(rank)
    if k < 1:
        raise ArgumentError("rank", rank, "an integer >= 1")
    options = serving.cheapest_fleets(model, request_rate=peak_qps, ttft_slo_s=ttft_slo_s, tpot_slo_s=tpot_slo_s,
                                      input_tokens=avg_input_tokens, output_tokens=avg_output_tokens, engine=engine,
                                      top=k)
    if len(options) < k:
        raise ArgumentError("rank", rank, f"at most {len(options)} (fleets that meet the SLOs)")
    return describe_fleet(options[k - 1])


def describe_fleet(f) -> str:
    """One line for a :class:`planner.serving.api.FleetOption`."""
    dtypes = f"weights {f.weight_dtype}, KV {f.kv_cache_dtype}"
    if f.disaggregated:
        return (f"{f.prefill_replicas} prefill + {f.decode_replicas} decode x {f.gpu} TP{f.tp} ({dtypes}): "
                f"{f.gpus} GPUs, ${f.usd_per_hour:,.2f}/h")
    return f"{f.replicas} x {f.gpu} TP{f.tp} ({dtypes}): {f.gpus} GPUs, ${f.usd_per_hour:,.2f}/h"
