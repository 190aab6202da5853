"""Spreadsheet functions for self-hosted latency and throughput: Little's law, TPOT, TTFT, batch at SLO (P1-P8)."""

from __future__ import annotations

from planner import latency, selfhosted
from planner.defaults import DEFAULT_GPU_MEMORY_UTILIZATION, DEFAULT_MBU, DEFAULT_MFU
from planner.registry import Arg, sheet_function
from planner.sheet.memory import ENGINE, GPU, KV_DTYPE, MODEL, PP_OPT, TP, TP_OPT, UTIL_OPT, WEIGHT_DTYPE, _kv_dtype

MBU = Arg(name="mbu", unit="fraction", help="Achieved fraction of peak memory bandwidth in decode (0-1)",
          default=DEFAULT_MBU)
MFU = Arg(name="mfu", unit="fraction", help="Achieved fraction of peak FLOP/s (0-1)",
          default=DEFAULT_MFU)
TPOT_SLO = Arg(name="tpot_slo_s", unit="s", help="Time-per-output-token budget")
AVG_CTX = Arg(name="avg_context_tokens", unit="tokens", help="Average context per sequence while decoding (I + O/2)")
HIT = Arg(name="cache_hit_rate", unit="fraction", help="Fraction of input tokens served from the prefix cache",
          default=0.0)


@sheet_function(
    summary="In-flight requests by Little's law: request rate x end-to-end latency.",
    args=(Arg(name="rate_qps", unit="req/s", help="Request rate (peak)"),
          Arg(name="latency_s", unit="s", help="End-to-end latency per request")),
    returns="requests",
    category="Latency",
    example="=CONCURRENCY(450, 1.21) -> 544.5",
    formula_ids=("P7",),
)
def CONCURRENCY(rate_qps, latency_s):
    return latency.concurrency(rate_qps, latency_s=latency_s)


@sheet_function(
    summary="Decode time per output token at a batch: max((weights read + batch x KV read per sequence) / "
    "(bandwidth x MBU), batch x (2 x active params + attention FLOPs) / (FLOP/s x MFU x TP)); MoE reads only "
    "touched experts, sliding-window layers at most their window.",
    args=(MODEL, GPU, TP, Arg(name="batch", unit="sequences", help="Sequences decoding together on one replica"),
          AVG_CTX, KV_DTYPE, MBU, MFU, WEIGHT_DTYPE),
    returns="s/token",
    category="Latency",
    example='=TPOT_S("llama-3.1-8b", "h100-sxm", 1, 16, 2048) -> 0.00868',
    formula_ids=("P1", "P2", "P3"),
)
def TPOT_S(model, gpu, tp, batch, avg_context_tokens, kv_dtype="auto", mbu=DEFAULT_MBU, mfu=DEFAULT_MFU,
           weight_dtype="auto"):
    decode = _kv_dtype(selfhosted.decode_model, model, gpu, context_tokens=avg_context_tokens, tp=tp,
                       kv_cache_dtype=kv_dtype, weight_dtype=weight_dtype, mbu=mbu, mfu=mfu)
    return decode.tpot_s(batch)


@sheet_function(
    summary="Time to first token on an idle replica: queue wait + prefill ((2 x active params x uncached input + "
    "attention FLOPs) / (FLOP/s x MFU x TP)) + one decode step.",
    args=(MODEL, GPU, TP, Arg(name="input_tokens", unit="tokens", help="Input (prompt) tokens of the request"),
          HIT, MFU, MBU, KV_DTYPE, Arg(name="queue_s", unit="s", help="Queue wait before prefill", default=0.0),
          WEIGHT_DTYPE),
    returns="s",
    category="Latency",
    example='=TTFT_S("llama-3.1-70b", "h100-sxm", 4, 5000) -> 0.388',
    formula_ids=("P4",),
)
def TTFT_S(model, gpu, tp, input_tokens, cache_hit_rate=0.0, mfu=DEFAULT_MFU, mbu=DEFAULT_MBU, kv_dtype="auto",
           queue_s=0.0, weight_dtype="auto"):
    return _kv_dtype(selfhosted.ttft_s, model, gpu, input_tokens=input_tokens, tp=tp, cache_hit_rate=cache_hit_rate,
                     kv_cache_dtype=kv_dtype, weight_dtype=weight_dtype, mbu=mbu, mfu=mfu, queue_s=queue_s)


@sheet_function(
    summary="End-to-end latency of a request: TTFT + (output tokens - 1) x TPOT.",
    args=(Arg(name="time_to_first_token_s", unit="s", help="Time to first token (TTFT_S or the TTFT SLO)"),
          Arg(name="time_per_output_token_s", unit="s", help="Time per output token (TPOT_S or the TPOT SLO)"),
          Arg(name="output_tokens", unit="tokens", help="Output tokens of the request")),
    returns="s",
    category="Latency",
    example="=E2E_LATENCY_S(0.25, 0.02, 48) -> 1.19",
    formula_ids=("P6",),
)
def E2E_LATENCY_S(time_to_first_token_s, time_per_output_token_s, output_tokens):
    return latency.e2e_latency_s(time_to_first_token_s, tpot=time_per_output_token_s, output_tokens=output_tokens)


@sheet_function(
    summary="Compute utilization of a fleet at peak: peak QPS x FLOPs per request (2 x active params per uncached "
    "input and output token, plus attention) / (replicas x TP x PP x peak FLOP/s x MFU). Over 1 the fleet cannot "
    "compute the load.",
    args=(MODEL, GPU, Arg(name="peak_qps", unit="req/s", help="Requests per second at the peak"),
          Arg(name="avg_input_tokens", unit="tokens", help="Average input (prompt) tokens per request"),
          Arg(name="avg_output_tokens", unit="tokens", help="Average output tokens per request"),
          Arg(name="replicas", unit="replicas", help="Replicas of the fleet"),
          TP_OPT, HIT, MFU, WEIGHT_DTYPE, PP_OPT),
    returns="fraction (<= 1 fits)",
    category="Latency",
    example='=COMPUTE_UTILIZATION("llama-3.1-70b", "h100-sxm", 400, 1500, 40, 12, 4, 0.6, 0.4) -> 1.945',
    formula_ids=("P2", "P4"),
)
def COMPUTE_UTILIZATION(model, gpu, peak_qps, avg_input_tokens, avg_output_tokens, replicas, tp=1, cache_hit_rate=0.0,
                        mfu=DEFAULT_MFU, weight_dtype="auto", pp=1):
    return selfhosted.compute_utilization(model, gpu, peak_qps=peak_qps, input_tokens=avg_input_tokens,
                                          output_tokens=avg_output_tokens, replicas=replicas, tp=tp, pp=pp,
                                          cache_hit_rate=cache_hit_rate, mfu=mfu, weight_dtype=weight_dtype)


@sheet_function(
    summary="Largest batch per replica whose modelled TPOT still meets the SLO (0 if one sequence misses it).",
    args=(MODEL, GPU, TP, TPOT_SLO, AVG_CTX, KV_DTYPE, MBU, MFU, WEIGHT_DTYPE),
    returns="sequences",
    category="Latency",
    example='=MAX_BATCH_AT_TPOT("llama-3.1-8b", "h100-sxm", 1, 0.02, 2048) -> 114',
    formula_ids=("P1", "P2", "P8"),
)
def MAX_BATCH_AT_TPOT(model, gpu, tp, tpot_slo_s, avg_context_tokens, kv_dtype="auto", mbu=DEFAULT_MBU, mfu=DEFAULT_MFU,
                      weight_dtype="auto"):
    decode = _kv_dtype(selfhosted.decode_model, model, gpu, context_tokens=avg_context_tokens, tp=tp,
                       kv_cache_dtype=kv_dtype, weight_dtype=weight_dtype, mbu=mbu, mfu=mfu)
    return latency.max_batch_at_tpot(decode, tpot_slo_s=tpot_slo_s)


_SLO_ARGS = (
    MODEL, GPU, TP,
    Arg(name="peak_qps", unit="req/s", help="Requests per second at the peak"),
    Arg(name="avg_input_tokens", unit="tokens", help="Average input tokens per request"),
    Arg(name="avg_output_tokens", unit="tokens", help="Average output tokens per request"),
    TPOT_SLO, KV_DTYPE, MBU, MFU, HIT, UTIL_OPT, ENGINE, WEIGHT_DTYPE,
)


def _slo(model, gpu, tp, avg_input_tokens, avg_output_tokens, tpot_slo_s, kv_dtype, mbu, mfu, cache_hit_rate,
         gpu_memory_utilization, engine, weight_dtype):
    return _kv_dtype(selfhosted.slo_capacity, model, gpu, tpot_slo_s=tpot_slo_s, avg_input_tokens=avg_input_tokens,
                     avg_output_tokens=avg_output_tokens, tp=tp, kv_cache_dtype=kv_dtype, mbu=mbu, mfu=mfu,
                     cache_hit_rate=cache_hit_rate, gpu_memory_utilization=gpu_memory_utilization, engine=engine,
                     weight_dtype=weight_dtype)


@sheet_function(
    summary="Output tokens per second one replica decodes at the largest batch meeting the TPOT SLO (and fitting "
    "the KV cache at context I+O): batch / TPOT(batch). Feeds SELFHOST_USD_PER_MTOK and SELFHOST_USD_PER_MTOK_OUTPUT.",
    args=(MODEL, GPU, TP,
          Arg(name="avg_input_tokens", unit="tokens", help="Average input tokens per request"),
          Arg(name="avg_output_tokens", unit="tokens", help="Average output tokens per request"),
          TPOT_SLO, KV_DTYPE, MBU, MFU, UTIL_OPT, ENGINE, WEIGHT_DTYPE),
    returns="tokens/s per replica",
    category="Latency",
    example='=SELFHOST_TOKENS_PER_S("llama-3.1-8b", "h100-sxm", 1, 1800, 48, 0.02) -> 6433',
    formula_ids=("P1", "P8"),
)
def SELFHOST_TOKENS_PER_S(model, gpu, tp, avg_input_tokens, avg_output_tokens, tpot_slo_s, kv_dtype="auto",
                          mbu=DEFAULT_MBU, mfu=DEFAULT_MFU, gpu_memory_utilization=DEFAULT_GPU_MEMORY_UTILIZATION,
                          engine="vllm", weight_dtype="auto"):
    cap = _slo(model, gpu, tp, avg_input_tokens, avg_output_tokens, tpot_slo_s, kv_dtype, mbu, mfu, 0.0,
               gpu_memory_utilization, engine, weight_dtype)
    return cap.tokens_per_s
