"""Spreadsheet functions for serving engines: what vLLM, SGLang or TensorRT-LLM allocate for the KV cache of one
replica (M9, §2.1), and what a pasted startup log says (calibration)."""

from __future__ import annotations

from planner import calibrate, engines
from planner.registry import Arg, sheet_function

MODEL = Arg(name="model", unit="name", kind="text", help="Model: catalog name, Hugging Face id or config.json path")
GPU = Arg(name="gpu", unit="name", kind="text", help="GPU in the catalog (e.g. h100-sxm)")
TP = Arg(name="tp", unit="count", help="Tensor-parallel degree of the replica", default=1)
UTIL = Arg(
    name="gpu_memory_utilization",
    unit="fraction",
    help="The engine's memory fraction (vLLM --gpu-memory-utilization, SGLang --mem-fraction-static, TRT-LLM "
    "free_gpu_memory_fraction); empty: the engine's default",
    default=None,
)
KV_DTYPE = Arg(
    name="kv_cache_dtype", unit="name", kind="text", help="KV cache dtype: auto, bf16, fp16, fp32, fp8, int8",
    default="auto",
)
ENGINE = Arg(name="engine", unit="name", kind="text", help="vllm, vllm-v0, sglang or trtllm", default="vllm")
MAX_LEN = Arg(
    name="max_model_len", unit="tokens", help="Context length per request; empty: the model's maximum", default=None
)
VERSION = Arg(
    name="engine_version", unit="version", kind="text",
    help="Engine version (e.g. 0.19.0); empty: the pinned default of the engine", default=None,
)
ENGINE_ARGS = (MODEL, GPU, TP, UTIL, KV_DTYPE, ENGINE, MAX_LEN, VERSION)


def _capacity(model, gpu, tp, gpu_memory_utilization, kv_cache_dtype, engine, max_model_len, engine_version):
    return engines.kv_capacity(
        model, gpu, tp=int(tp) if isinstance(tp, float) and tp.is_integer() else tp,
        gpu_memory_utilization=gpu_memory_utilization, kv_cache_dtype=kv_cache_dtype, engine=engine,
        engine_version=engine_version,
        max_model_len=int(max_model_len) if isinstance(max_model_len, float) and max_model_len.is_integer()
        else max_model_len,
    )


@sheet_function(
    summary="KV cache tokens one replica's engine allocates and logs (vLLM 'GPU KV cache size', SGLang "
    "max_total_num_tokens): (memory budget of the engine - weights - reserves) / KV bytes per token, in blocks.",
    args=ENGINE_ARGS,
    returns="tokens",
    category="Engine",
    example='=KV_CACHE_TOKENS("llama-3.1-8b", "h100-sxm", 1, 0.9, "auto", "vllm", 8192) -> 420432',
    formula_ids=("M9", "M2", "M7"),
)
def KV_CACHE_TOKENS(model, gpu, tp=1, gpu_memory_utilization=None, kv_cache_dtype="auto", engine="vllm",
                    max_model_len=None, engine_version=None):
    return _capacity(model, gpu, tp, gpu_memory_utilization, kv_cache_dtype, engine, max_model_len,
                     engine_version).kv_cache_tokens


@sheet_function(
    summary="GPU memory the engine leaves for the KV cache on each GPU of the replica (vLLM 'Available KV cache "
    "memory'; SGLang K+V size).",
    args=ENGINE_ARGS,
    returns="GiB",
    category="Engine",
    example='=KV_AVAILABLE_GIB("llama-3.1-8b", "h100-sxm", 1, 0.9, "auto", "vllm", 8192) -> 51.32',
    formula_ids=("M9",),
)
def KV_AVAILABLE_GIB(model, gpu, tp=1, gpu_memory_utilization=None, kv_cache_dtype="auto", engine="vllm",
                     max_model_len=None, engine_version=None):
    return _capacity(model, gpu, tp, gpu_memory_utilization, kv_cache_dtype, engine, max_model_len,
                     engine_version).available_kv_gib


@sheet_function(
    summary="Requests of max_model_len tokens the KV cache holds at once, as the engine logs it ('Maximum "
    "concurrency'): KV blocks / blocks one full-length request needs (sliding-window groups capped).",
    args=ENGINE_ARGS,
    returns="requests",
    category="Engine",
    example='=KV_MAX_CONCURRENCY("llama-3.1-8b", "h100-sxm", 1, 0.9, "auto", "vllm", 8192) -> 51.32',
    formula_ids=("M11", "M7", "M4"),
)
def KV_MAX_CONCURRENCY(model, gpu, tp=1, gpu_memory_utilization=None, kv_cache_dtype="auto", engine="vllm",
                       max_model_len=None, engine_version=None):
    return _capacity(model, gpu, tp, gpu_memory_utilization, kv_cache_dtype, engine, max_model_len,
                     engine_version).max_concurrency


@sheet_function(
    summary="One value from a pasted vLLM or SGLang startup log: " + ", ".join(calibrate.LOG_FIELDS) + ".",
    args=(
        Arg(name="log_text", unit="text", kind="text", help="The startup log lines (paste into one cell)"),
        Arg(name="field", unit="name", kind="text", help="Which value: " + ", ".join(calibrate.LOG_FIELDS)),
    ),
    returns="the field's unit (GiB, tokens, x)",
    category="Engine",
    example='=CALIBRATE_LOG("GPU KV cache size: 476,016 tokens", "kv_cache_tokens") -> 476016',
    formula_ids=("M9",),
)
def CALIBRATE_LOG(log_text, field):
    return calibrate.parse_log(log_text).get(field)


@sheet_function(
    summary="The overhead the engine measured, back-solved from a pasted startup log: vLLM activation + non-torch "
    "memory = total x utilization - weights - available KV (SGLang: memory besides weights and its fraction).",
    args=(
        Arg(name="log_text", unit="text", kind="text", help="The startup log lines (paste into one cell)"),
        MODEL, GPU, TP, UTIL, ENGINE, VERSION,
    ),
    returns="GiB",
    category="Engine",
    example='=CALIBRATE_RESERVE_GIB("Model loading took 14.99 GiB ... Available KV cache memory: 51.31 GiB", '
    '"llama-3.1-8b", "h100-sxm") -> 4.96',
    formula_ids=("M9",),
)
def CALIBRATE_RESERVE_GIB(log_text, model, gpu, tp=1, gpu_memory_utilization=None, engine="vllm",
                          engine_version=None):
    tp_value = int(tp) if isinstance(tp, float) and tp.is_integer() else tp
    return calibrate.calibrate(
        calibrate.parse_log(log_text), model, gpu, tp=tp_value, gpu_memory_utilization=gpu_memory_utilization,
        engine=engine, engine_version=engine_version,
    ).reserve_gib
