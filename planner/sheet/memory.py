"""Spreadsheet functions for self-hosted GPU memory: weights, KV per token and per request, budget, fit (M1-M11)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from planner import latency, memory, selfhosted
from planner.defaults import DEFAULT_BLOCK_SIZE, DEFAULT_GPU_MEMORY_UTILIZATION
from planner.errors import ArgumentError
from planner.registry import Arg, sheet_function
from planner.specs import GIB

MODEL = Arg(name="model", unit="name", kind="text",
            help="Model in the catalog (e.g. llama-3.1-70b) or the path of a Hugging Face config.json")
GPU = Arg(name="gpu", unit="name", kind="text", help="GPU in the catalog (e.g. h100-sxm, a100-80gb, mi300x)")
KV_DTYPE = Arg(name="kv_dtype", unit="dtype", kind="text",
               help="KV-cache dtype: auto (the model's dtype), bf16, fp16, fp8, int8", default="auto")
WEIGHT_DTYPE = Arg(name="weight_dtype", unit="dtype", kind="text",
                   help="Weight dtype: auto (the released checkpoint), bf16, fp16, fp8, int8 (W8A8: 8-bit weights and "
                   "activations), w8a16 (8-bit weights, 16-bit math), int4, mxfp4",
                   default="auto")
TP_OPT = Arg(name="tp", unit="GPUs", help="Tensor-parallel degree (KV heads replicated when TP > KV heads)", default=1)
TP = Arg(name="tp", unit="GPUs", help="Tensor-parallel degree (GPUs per replica)")
PP_OPT = Arg(name="pp", unit="GPUs", help="Pipeline-parallel degree", default=1)
UTIL = Arg(name="gpu_memory_utilization", unit="fraction",
           help="Fraction of GPU memory the engine may use (vLLM --gpu-memory-utilization)")
UTIL_OPT = Arg(name="gpu_memory_utilization", unit="fraction",
               help="Fraction of GPU memory the engine may use (vLLM --gpu-memory-utilization)",
               default=DEFAULT_GPU_MEMORY_UTILIZATION)
ENGINE = Arg(name="engine", unit="name", kind="text", help="Serving engine: vllm, vllm-v0, sglang, trtllm",
             default="vllm")
CONTEXT = Arg(name="context_tokens", unit="tokens", help="Tokens per request held in the cache (input + output)")
BLOCK = Arg(name="block_size", unit="tokens", help="Paged KV block size (vLLM 16, TensorRT-LLM 32, SGLang 1)",
            default=DEFAULT_BLOCK_SIZE)


def _kv_dtype(call, *args, **kwargs):
    """Call a core function, reporting the core's ``kv_cache_dtype`` argument under the sheet's name ``kv_dtype``."""
    try:
        return call(*args, **kwargs)
    except ArgumentError as exc:
        if exc.argument == "kv_cache_dtype":
            raise ArgumentError("kv_dtype", exc.given, exc.allowed) from None
        raise


def _model(model):
    return selfhosted._model(model)


REPLICA_CACHE_SIZE = 1024
"""Results of :func:`planner.selfhosted.replica_kv` and :func:`~planner.selfhosted.prefix_retention_bytes` kept per
process (:func:`_replica_kv`); a 20-route plan asks about 70 distinct ones, in about 235 calls with its tornado bars."""


NAMED_CACHE_SIZE = 256
_NAMED: dict[str, bool] = {}


def _named(model: Any) -> bool:
    """``model`` names its spec by itself: a Models-sheet token (``MODEL_SPEC``) or a catalog name, not a path of a
    ``config.json`` (whose file may change between calls). The answer for a text is kept (:data:`_NAMED`, keyed on
    the text, at most :data:`NAMED_CACHE_SIZE` texts, emptied when full): it depends on the text and the bundled
    catalog only."""
    if type(model) is str:
        hit = _NAMED.get(model)
        if hit is not None:
            return hit
    from planner import catalog, catalog_sheet

    named = catalog_sheet.is_token(model) or (
        isinstance(model, str) and catalog.normalize_name(model) in catalog._models()[1])
    if type(model) is str:
        if len(_NAMED) >= NAMED_CACHE_SIZE:
            _NAMED.clear()
        _NAMED[model] = named
    return named


def _key(kwargs: dict[str, Any]) -> tuple:
    """The keyword arguments as ``(names, values, types)`` in the order given, each value's type kept (``1`` and
    ``1.0``, ``True`` and ``1`` kept apart; ``-0.0`` and ``0.0`` by their text). The same arguments given in another
    order make another key (a second entry, never a wrong answer): the call sites give them in one order."""
    values = tuple(kwargs.values())
    types = tuple(map(type, values))
    if 0 in values:  # a float zero: its sign kept by its text (-0.0 == 0.0 and they hash alike)
        values = tuple(repr(v) if v == 0 and type(v) is float else v for v in values)
    return tuple(kwargs), values, types


def _unkey(key: tuple) -> dict[str, Any]:
    """The keyword arguments :func:`_key` made ``key`` of."""
    names, values, types = key
    return {k: float(v) if type(v) is str and t is float else v for k, v, t in zip(names, values, types)}


def _without(key: tuple, name: str) -> tuple:
    """``key`` (:func:`_key`) without the argument ``name``."""
    names, values, types = key
    if name not in names:
        return key
    i = names.index(name)
    return names[:i] + names[i + 1:], values[:i] + values[i + 1:], types[:i] + types[i + 1:]


BUDGET_CACHE_SIZE = 256
"""Replica budgets (:func:`planner.selfhosted.replica_budget`) :func:`_replica_kv_kept` keeps, keyed on the model
and GPU names and every argument but the context (:func:`_key`'s entries, types kept): the budget does not depend
on the request's context (``reads_context`` false; a budget that does, vLLM V0's, is not kept). A plan asks about
70 distinct (replica, context) pairs of 2-6 replicas: the tornado's bars repeat each fleet's replica with other
token counts. Emptied when full (an entry is a few numbers and the model's spec, which the catalog holds anyway)."""

_BUDGETS: dict[tuple, selfhosted.ReplicaBudget] = {}


@lru_cache(maxsize=REPLICA_CACHE_SIZE, typed=True)
def _replica_kv_kept(model, gpu, key):
    """:func:`planner.selfhosted.replica_kv` of ``model`` and ``gpu`` (named: :func:`_named`) at :func:`_unkey`'s
    arguments, the budget from :data:`_BUDGETS` when kept: :func:`~planner.selfhosted.replica_kv_at` checks the
    context first, as :func:`~planner.selfhosted.replica_budget` does before the budget, so a bad context gives the
    same error whether the budget was kept or not (the model and GPU of a kept budget resolved before)."""
    kwargs = _unkey(key)
    budget_key = (model, gpu, _without(key, "context_tokens"))
    budget = _BUDGETS.get(budget_key)
    if budget is None:
        budget = selfhosted.replica_budget(model, gpu, **kwargs)
        if not budget.reads_context:
            if len(_BUDGETS) >= BUDGET_CACHE_SIZE:
                _BUDGETS.clear()
            _BUDGETS[budget_key] = budget
    return selfhosted.replica_kv_at(budget, context_tokens=kwargs["context_tokens"])


@lru_cache(maxsize=REPLICA_CACHE_SIZE, typed=True)
def _prefix_bytes_kept(model, gpu, key):
    """:func:`planner.selfhosted.prefix_retention_bytes` with the replica's KV from :func:`_replica_kv` (kept)."""
    return selfhosted.prefix_retention_bytes(model, gpu, replica=_replica_kv, **_unkey(key))


def _kept(call, kept, model, gpu, kwargs):
    """``call(model, gpu, **kwargs)``, its result kept by ``kept`` per distinct arguments (arguments compared with
    their types: ``1`` and ``1.0`` are kept apart) when ``model`` names its spec (:func:`_named`). Pure functions,
    frozen results: the same object for the same arguments. A call that raises is not kept."""
    try:
        key = _key(kwargs)
        hash((model, gpu, key))
    except TypeError:
        return call(model, gpu, **kwargs)
    if not _named(model):
        return call(model, gpu, **kwargs)
    return kept(model, gpu, key)


def _replica_kv(model, gpu, **kwargs):
    """:func:`planner.selfhosted.replica_kv` through :func:`_kept`. A plan's KV fits repeat the same replica at the
    same context (every ``PREFIX_KV_FIT`` of a fleet asks for its budget at context 1; the tornado's bars ask again
    for each input group)."""
    return _kept(selfhosted.replica_kv, _replica_kv_kept, model, gpu, kwargs)


def _prefix_bytes(model, gpu, **kwargs):
    """:func:`planner.selfhosted.prefix_retention_bytes` through :func:`_kept`."""
    return _kept(selfhosted.prefix_retention_bytes, _prefix_bytes_kept, model, gpu, kwargs)


@sheet_function(
    summary="Weight memory on each GPU: parameters x bytes per weight (all MoE experts resident) / (TP x PP).",
    args=(MODEL, WEIGHT_DTYPE, TP_OPT, PP_OPT),
    returns="GiB per GPU",
    category="Memory",
    example='=WEIGHTS_GIB("llama-3.1-70b", "fp8", 4) -> 16.92',
    formula_ids=("M1",),
)
def WEIGHTS_GIB(model, weight_dtype="auto", tp=1, pp=1):
    return memory.weight_bytes_per_gpu(_model(model), tp=tp, pp=pp, weight_dtype=weight_dtype) / GIB


@sheet_function(
    summary="KV-cache bytes per token on each GPU: 2 x layers x ceil(KV heads / TP) x head_dim x dtype bytes "
    "(MLA: layers x (kv_lora_rank + rope dim) x bytes, not divided by TP).",
    args=(MODEL, KV_DTYPE, TP_OPT, PP_OPT),
    returns="bytes/token per GPU",
    category="Memory",
    example='=KV_BYTES_PER_TOKEN("llama-3.1-70b") -> 327680',
    formula_ids=("M2", "M3", "M6"),
)
def KV_BYTES_PER_TOKEN(model, kv_dtype="auto", tp=1, pp=1):
    return _kv_dtype(memory.kv_bytes_per_token, _model(model), tp=tp, pp=pp, kv_cache_dtype=kv_dtype)


@sheet_function(
    summary="KV-cache bytes one request holds on each GPU at a context, in whole paged blocks; sliding-window "
    "layers capped at the window.",
    args=(MODEL, CONTEXT, KV_DTYPE, TP_OPT, BLOCK, PP_OPT),
    returns="bytes/request per GPU",
    category="Memory",
    example='=KV_BYTES_PER_REQUEST("llama-3.1-8b", 1000) -> 132120576',
    formula_ids=("M4", "M7", "M8"),
)
def KV_BYTES_PER_REQUEST(model, context_tokens, kv_dtype="auto", tp=1, block_size=DEFAULT_BLOCK_SIZE, pp=1):
    return _kv_dtype(memory.kv_bytes_per_request, _model(model), context_tokens=context_tokens, tp=tp, pp=pp,
                     kv_cache_dtype=kv_dtype, block_size=block_size)


@sheet_function(
    summary="KV-cache budget of each GPU as the engine allocates it: HBM x utilization - weights - "
    "activation/runtime reserve (vLLM; SGLang and TensorRT-LLM by their own rules).",
    args=(MODEL, GPU, TP_OPT, UTIL_OPT, KV_DTYPE, ENGINE, WEIGHT_DTYPE, PP_OPT),
    returns="GiB per GPU",
    category="Memory",
    example='=KV_BUDGET_GIB("llama-3.1-8b", "h100-sxm") -> 51.32',
    formula_ids=("M9",),
)
def KV_BUDGET_GIB(model, gpu, tp=1, gpu_memory_utilization=DEFAULT_GPU_MEMORY_UTILIZATION, kv_dtype="auto",
                  engine="vllm", weight_dtype="auto", pp=1):
    kv = _kv_dtype(_replica_kv, model, gpu, context_tokens=1, tp=tp, pp=pp,
                   gpu_memory_utilization=gpu_memory_utilization, kv_cache_dtype=kv_dtype, engine=engine,
                   weight_dtype=weight_dtype)
    return kv.kv_budget_bytes / GIB


@sheet_function(
    summary="Requests of a given context that fit one replica's KV cache at once: floor(KV budget / KV per "
    "request), budget from the engine's accounting.",
    args=(MODEL, GPU, TP, UTIL, Arg(name="kv_dtype", unit="dtype", kind="text",
                                    help="KV-cache dtype: auto, bf16, fp16, fp8, int8"),
          CONTEXT, ENGINE, WEIGHT_DTYPE, PP_OPT),
    returns="requests per replica",
    category="Memory",
    example='=MAX_CONCURRENCY("llama-3.1-8b", "h100-sxm", 1, 0.9, "auto", 4096) -> 102',
    formula_ids=("M9", "M11"),
)
def MAX_CONCURRENCY(model, gpu, tp, gpu_memory_utilization, kv_dtype, context_tokens, engine="vllm",
                    weight_dtype="auto", pp=1):
    kv = _kv_dtype(_replica_kv, model, gpu, context_tokens=context_tokens, tp=tp, pp=pp,
                   gpu_memory_utilization=gpu_memory_utilization, kv_cache_dtype=kv_dtype, engine=engine,
                   weight_dtype=weight_dtype)
    return kv.max_concurrency


@sheet_function(
    summary="KV-memory utilization at peak: Little's-law in-flight requests (QPS x E2E latency) x KV each holds / "
    "(KV budget x replicas); sliding-window layers at the engine's steady state (vLLM: the window; SGLang: 1.5 "
    "windows). At most 1 fits.",
    args=(
        MODEL, GPU,
        Arg(name="peak_qps", unit="req/s", help="Requests per second at the peak"),
        Arg(name="latency_s", unit="s", help="End-to-end latency per request (TTFT + output x TPOT, or E2E_LATENCY_S)"),
        Arg(name="avg_context_tokens", unit="tokens", help="Context per request held in the cache (e.g. p95 of I+O)"),
        Arg(name="replicas", unit="replicas", help="Replicas of the fleet"),
        TP_OPT, UTIL_OPT, KV_DTYPE, ENGINE, WEIGHT_DTYPE, PP_OPT,
    ),
    returns="fraction (<= 1 fits)",
    category="Memory",
    example='=KV_FIT("llama-3.1-8b", "h100-sxm", 100, 2, 4096, 2) -> 0.9742',
    formula_ids=("P7", "M11"),
)
def KV_FIT(model, gpu, peak_qps, latency_s, avg_context_tokens, replicas, tp=1,
           gpu_memory_utilization=DEFAULT_GPU_MEMORY_UTILIZATION, kv_dtype="auto", engine="vllm", weight_dtype="auto",
           pp=1):
    kv = _kv_dtype(_replica_kv, model, gpu, context_tokens=avg_context_tokens, tp=tp, pp=pp,
                   gpu_memory_utilization=gpu_memory_utilization, kv_cache_dtype=kv_dtype, engine=engine,
                   weight_dtype=weight_dtype)
    in_flight = latency.concurrency(peak_qps, latency_s=latency_s)
    return memory.kv_utilization(in_flight, kv_request_bytes=kv.kv_bytes_held_per_request,
                                 kv_budget=kv.kv_budget_bytes, replicas=replicas)


_PREFIX_ARGS = (
    Arg(name="prefix_tokens", unit="tokens", help="Tokens of one shared prefix (system prompt, tools, history)"),
    Arg(name="distinct_prefixes", unit="count", help="Distinct prefixes kept warm at once", default=1),
)


@sheet_function(
    summary="KV memory on each GPU that keeps shared prefixes warm on one replica for the planned cache hit rate: "
    "distinct prefixes x the KV a prefix of that length holds in the engine's blocks (M10).",
    args=(MODEL, GPU, *_PREFIX_ARGS, TP_OPT, KV_DTYPE, ENGINE, PP_OPT),
    returns="GiB per GPU",
    category="Memory",
    example='=PREFIX_KV_GIB("llama-3.1-8b", "h100-sxm", 4096, 10) -> 5.0',
    formula_ids=("M10",),
)
def PREFIX_KV_GIB(model, gpu, prefix_tokens, distinct_prefixes=1, tp=1, kv_dtype="auto", engine="vllm", pp=1):
    return _kv_dtype(_prefix_bytes, model, gpu, prefix_tokens=prefix_tokens,
                     distinct_prefixes=distinct_prefixes, tp=tp, pp=pp, kv_cache_dtype=kv_dtype, engine=engine) / GIB


@sheet_function(
    summary="Share of one replica's KV budget that keeps shared prefixes warm (M10): PREFIX_KV_GIB / KV_BUDGET_GIB; "
    "added to KV_FIT of the requests in flight, which then hold their unshared context only.",
    args=(MODEL, GPU, *_PREFIX_ARGS, TP_OPT, UTIL_OPT, KV_DTYPE, ENGINE, WEIGHT_DTYPE, PP_OPT),
    returns="fraction of the KV budget",
    category="Memory",
    example='=PREFIX_KV_FIT("llama-3.1-8b", "h100-sxm", 4096, 10) -> 0.0974',
    formula_ids=("M10", "M11"),
)
def PREFIX_KV_FIT(model, gpu, prefix_tokens, distinct_prefixes=1, tp=1,
                  gpu_memory_utilization=DEFAULT_GPU_MEMORY_UTILIZATION, kv_dtype="auto", engine="vllm",
                  weight_dtype="auto", pp=1):
    kv = _kv_dtype(_replica_kv, model, gpu, context_tokens=1, tp=tp, pp=pp,
                   gpu_memory_utilization=gpu_memory_utilization, kv_cache_dtype=kv_dtype, engine=engine,
                   weight_dtype=weight_dtype)
    need = _kv_dtype(_prefix_bytes, model, gpu, prefix_tokens=prefix_tokens,
                     distinct_prefixes=distinct_prefixes, tp=tp, pp=pp, gpu_memory_utilization=gpu_memory_utilization,
                     kv_cache_dtype=kv_dtype, weight_dtype=weight_dtype, engine=engine)
    return memory.kv_utilization(1, kv_request_bytes=need, kv_budget=kv.kv_budget_bytes, replicas=1)


@sheet_function(
    summary="Replicas whose KV caches hold a number of in-flight requests: ceil(concurrency / max concurrency per "
    "replica).",
    args=(MODEL, GPU, Arg(name="in_flight_requests", unit="requests", help="In-flight requests at peak (CONCURRENCY)"),
          CONTEXT, TP_OPT, UTIL_OPT, KV_DTYPE, ENGINE, WEIGHT_DTYPE, PP_OPT),
    returns="replicas",
    category="Memory",
    example='=REPLICAS_FOR_KV("llama-3.1-8b", "h100-sxm", 250, 4096) -> 3',
    formula_ids=("M11", "C7"),
)
def REPLICAS_FOR_KV(model, gpu, in_flight_requests, context_tokens, tp=1,
                    gpu_memory_utilization=DEFAULT_GPU_MEMORY_UTILIZATION, kv_dtype="auto", engine="vllm",
                    weight_dtype="auto", pp=1):
    kv = _kv_dtype(_replica_kv, model, gpu, context_tokens=context_tokens, tp=tp, pp=pp,
                   gpu_memory_utilization=gpu_memory_utilization, kv_cache_dtype=kv_dtype, engine=engine,
                   weight_dtype=weight_dtype)
    return memory.replicas_for_concurrency(in_flight_requests, max_concurrency_per_replica=kv.max_concurrency)
