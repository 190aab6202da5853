"""Accuracy of the serving model against published benchmark points (pure: point dicts in, rows and markdown out).

The points are ``tests/data/serving/*.json`` (schema in ``tests/data/serving/SCHEMA.md``); the caller reads them.
Each point is predicted with :func:`planner.serving.api.performance` (and with the old roofline of
:mod:`planner.latency` as a baseline), compared metric by metric, split deterministically into a training and a
held-out set (:func:`is_training`: SHA-256 of the point id, 70/30), and summarised by regime.
"""

from __future__ import annotations

import hashlib
import math
import random
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from planner.errors import PlannerError
from planner.serving.calibration import Calibration
from planner.serving.replay import TraceRun
from planner.serving.step import WEIGHT_DTYPE_ALIASES

TRAIN_SHARE = 70
"""Percent of points in the training split."""

METRICS = ("tpot", "ttft", "otps")
LABELS = {"tpot": "TPOT", "ttft": "TTFT", "otps": "output tok/s"}

MODEL_EQUIVALENTS = {
    # Same architecture as the catalog model (layers, heads, KV heads, hidden, vocab); only RoPE scaling and the
    # maximum context differ, which the step time does not see.
    "meta-llama/meta-llama-3-8b-instruct": "llama-3.1-8b",
    "meta-llama/meta-llama-3-70b-instruct": "llama-3.1-70b",
}

ENGINE_MAP = {"vllm": "vllm", "sglang": "sglang", "trtllm": "trtllm", "nim": "trtllm"}
"""Published engine → modelled engine (NIM's optimized profiles run TensorRT-LLM)."""

SOURCE_MAX_MODEL_LEN = {"accelmark": 32768}
"""``max_model_len`` the source's runner sets (AccelMark: 4,096 for ShareGPT, long-context suite below 32K): vLLM V0
does not chunk prefills there."""

LATENCY_STATS = ("mean", "median", "p50")

TRACE_REPLAY = True
"""AccelMark online points replayed with the harness's own arrivals and prompt lengths (:func:`harness_trace`)."""

DSTACK_TRACE = False
"""dstack's Llama-3.1-405B ShareGPT points replayed with benchmark_serving's own arrivals and the requests' recorded
prompt (and, where the run's result file is stored, output) lengths (:func:`dstack_sharegpt_trace`). Tried in session
12 (latency11) and not kept: training loss 0.28115 to 0.28310; with vLLM V0's multi-step scheduling also
replayed, 0.28312 (that replay's code, in :func:`planner.serving.replay._replay_trace_kv`, is not kept; commit
0da57e4 has it; docs/serving.md section 4)."""


BENCH_SERVING_ZERO_TTFT = True
"""Rule Z (session 15, latency34): vLLM's ``benchmark_serving`` records a TTFT of 0.0 for a request that streams no
text and counts it in its mean TTFT; a dstack ShareGPT point whose result file is stored has its predicted mean TTFT
taken with those requests at 0 (:func:`bench_serving_zero_ttft_share`). Kept by its rule: training loss 0.2642206 to
0.2585553, hinge 0, no refit. docs/serving.md, "Session 15, latency34"."""

ACCELMARK_IN_PROCESS_DELIVERY = True
"""Rule D0 (session 16, latency35, docs/serving.md): AccelMark's vLLM V0 runner streams from an ``AsyncLLMEngine`` in
its own process (:func:`accelmark_in_process`), whose worker thread puts a step's outputs into the clients' queues
during the next step without waking the event loop, so a first token is seen at the end of the next step or at the
harness's next arrival timer (:func:`planner.serving.replay.in_process_first_token_s`), not after the next step's
launch (Q4'). Applied to that runner's online and interactive replays. Kept in session 16 (latency37) with vLLM V0's
fixed step and first-token overheads refitted: training loss 0.2561437 to 0.2535207, hinge 0."""

ACCELMARK_IN_PROCESS_NO_FRONT_END = False
"""Rule D1, with :data:`ACCELMARK_IN_PROCESS_DELIVERY`: that in-process path has no HTTP/API-server front end, so the
engine's fitted first-token overhead ``o_ttft`` (``ttft_overhead_s:vllm-v0``, which ``vllm serve`` keeps) is 0 there
(``performance(..., front_end=False)``)."""


def accelmark_in_process(point: Mapping[str, Any]) -> bool:
    """Whether a point's TTFT was stamped by AccelMark's in-process vLLM V0 client: its NVIDIA vLLM runner
    ``nvidia_vllm_47f5d58e`` (``runners/nvidia_vllm_47f5d58e/runner.py``: ``AsyncLLMEngine.from_engine_args`` in the
    load generator's process, TTFT at the first ``engine.generate`` output with a token) on a vLLM release before 0.8
    (V0, ``VLLM_USE_V1`` 0 by default in 0.7.3), in its online (open) or interactive (closed) scenario.

    >>> accelmark_in_process({"id": "accelmark/nvidia_h200x1_suite_A_nvidia_vllm_47f5d58e_29b2ec38/online/qps5",
    ...                       "engine": "vllm", "engine_version": "0.7.3", "mode": "open"})
    True
    >>> accelmark_in_process({"id": "accelmark/nvidia_a100_sxm4_80gbx1_suite_A_nvidia_vllm020_0f6c56e4_x/online/qps5",
    ...                       "engine": "vllm", "engine_version": "0.20.1", "mode": "open"})
    False
    """
    pid = str(point.get("id", ""))
    if not pid.startswith("accelmark/") or "_nvidia_vllm_47f5d58e_" not in pid or point.get("engine") != "vllm":
        return False
    if point.get("mode") not in ("open", "closed"):
        return False
    version = str(point.get("engine_version") or "").split("+")[0].lstrip("v")
    try:
        return tuple(int(x) for x in version.split(".")[:2]) < (0, 8)
    except ValueError:
        return False


RECORDED_ENGINE_CONFIG = True
"""AccelMark runs replayed with the engine arguments their own result files record (``task.extra_config``:
``enforce_eager``; :func:`harness_settings`, session 11)."""

OFFLINE_QUANTIZATION = True
"""AccelMark's offline scenario replayed with the ``quantization`` its runner passes to ``LLM(...)`` (suite C's
W4A16: ``"gptq"``, vLLM's ExLlama kernels; :func:`harness_settings`, session 11)."""


CHECKPOINT_RECIPE = False
"""Runs of a quantized checkpoint that keeps layers in 16 bits replayed with it (:func:`checkpoint_recipe`: dstack's
Llama-3.1-405B runs of Meta's FP8 checkpoint, ``"meta-fp8"``). Tried in session 11 and not kept: the training loss
rose, 0.3079 to 0.3081, and a warm refit round moved nothing (docs/serving.md section 4), so it is off; the API's
``checkpoint_recipe`` argument stays."""


def checkpoint_recipe(point: Mapping[str, Any]) -> str | None:
    """The :data:`planner.serving.step.CHECKPOINT_RECIPES` entry of ``point``'s checkpoint, from
    ``planner/data/benchmark_harnesses.json`` (``checkpoint_recipes``, by point-id prefix), or None.

    >>> checkpoint_recipe({"id": "dstack-405b/8xH100-1FP8-meta/2048-2048/offline-n64"})
    'meta-fp8'
    >>> checkpoint_recipe({"id": "dstack-405b/8xMi300-1FP8-amd/2048-2048/offline-n64"}) is None
    True
    """
    from planner.catalog import benchmark_harness_data

    runs = benchmark_harness_data().get("checkpoint_recipes", {}).get("runs", {})
    pid = str(point.get("id", ""))
    return next((v["recipe"] for k, v in runs.items() if pid.startswith(k)), None)


RECORDED_KV_ROOM = False
"""Points replayed with the KV room their run records (rule KW's parts 2 and 3, session 16, latency38,
docs/serving.md): the engine's memory fraction (:func:`recorded_memory_fraction`) and the weight load its log prints
(:func:`logged_weight_gib`). Judged together with :data:`planner.serving.api.KV_FROM_RUN_SETTINGS`."""

LOGGED_WEIGHT_GIB = {
    "dstack-405b/8xH100-1FP8-meta/": 56.7677,
    "dstack-405b/8xMi300x-1FP8-meta/": 56.7677,
    "dstack-405b/8xMi300-1FP8-amd/": 49.3235,
    "dstack-405b/4xMi300x-1FP8-amd/": 97.4347,
}
"""Weight load per GPU the run's vLLM log prints ("Loading model weights took X GB", X in GiB), by point-id prefix:
dstackai/benchmarks 06c957a ``comparison/h100sxm5_vs_mi300x/raw_data/gpu-usage.md`` (``meta-llama/Llama-3.1-405B-FP8``
on 8 H100 SXM5 and on 8 MI300X, ``amd/Meta-Llama-3.1-405B-Instruct-FP8-KV`` on 8 and on 4 MI300X)."""

MEMORY_FRACTION_KEYS = ("gpu_memory_utilization", "kv_cache_free_gpu_mem_fraction", "mem_fraction_static",
                        "mem-fraction-static")
"""The engine-settings keys of a memory fraction: vLLM's, TensorRT-LLM's (``KvCacheConfig.free_gpu_memory_fraction``
as trtllm-bench and the LLM API options spell it) and SGLang's (``--mem-fraction-static``)."""


def recorded_memory_fraction(point: Mapping[str, Any], *, settings: Mapping[str, Any]) -> float | None:
    """The memory fraction ``point``'s run records (rule KW part 2): the first of :data:`MEMORY_FRACTION_KEYS` in its
    engine ``settings``, else its harness's (``planner/data/benchmark_harnesses.json``, ``trtllm_bench``: 0.95 for the
    TensorRT-LLM overview), else None (the engine's default).

    >>> recorded_memory_fraction({"id": "x/y"}, settings={"kv_cache_free_gpu_mem_fraction": 0.85})
    0.85
    >>> recorded_memory_fraction({"id": "trtllm-perf-overview/llama-3.1-8b/h100-sxmx1/128-128/offline"}, settings={})
    0.95
    >>> recorded_memory_fraction({"id": "blis-training/x/stage0"}, settings={"max_num_seqs": 128}) is None
    True
    """
    for key in MEMORY_FRACTION_KEYS:
        value = _fraction(settings.get(key))
        if value is not None:
            return value
    from planner.catalog import benchmark_harness_data

    pid = str(point.get("id", ""))
    runs = benchmark_harness_data().get("trtllm_bench", {}).get("runs", {})
    run = next((v for k, v in runs.items() if pid.startswith(k)), None)
    return _fraction(run.get("kv_cache_free_gpu_mem_fraction")) if run else None


def logged_weight_gib(point: Mapping[str, Any]) -> float | None:
    """The weight load per GPU ``point``'s run logged (:data:`LOGGED_WEIGHT_GIB`), or None.

    >>> logged_weight_gib({"id": "dstack-405b/8xH100-1FP8-meta/2048-2048/offline-n64"})
    56.7677
    >>> logged_weight_gib({"id": "dstack-405b-mi300x-vllm/short/n1"}) is None
    True
    """
    pid = str(point.get("id", ""))
    return next((v for k, v in LOGGED_WEIGHT_GIB.items() if pid.startswith(k)), None)


TRTLLM_PYTORCH_PREFILL = True
"""The sources that ran TensorRT-LLM's PyTorch backend replayed with its prompt steps outside CUDA graphs
(:func:`trtllm_pytorch_backend`; session 11, docs/serving.md section 4)."""

TRTLLM_PYTORCH_SOURCES = ("trtllm-perf-overview", "trtllm-dsr1-blog")
"""Sources whose runs name TensorRT-LLM's PyTorch backend: the performance overview ("Starting with v0.19, testing
was performed using the PyTorch backend", ``trtllm-bench ... throughput --backend pytorch``,
``docs/source/performance/perf-overview.md``) and the DeepSeek-R1 blog (``pytorch_backend_config`` in its
``extra-llm-api-config.yml``). NIM's tables do not say which backend ran, so its points keep the engine default."""


def trtllm_pytorch_backend(point: Mapping[str, Any]) -> bool:
    """Whether ``point`` ran TensorRT-LLM's PyTorch backend, whose steps with prompt tokens run without a CUDA graph
    (``PyTorchModelEngine._maybe_get_cuda_graph``, ``tensorrt_llm/_torch/pyexecutor/model_engine.py``: no graph
    unless ``batch.is_generation_only``), so they take the eager floor ``L·f_eager`` (twice for MoE layers).

    >>> trtllm_pytorch_backend({"id": "trtllm-perf-overview/qwen3-30b-a3b/gb200x1/128-128/offline"})
    True
    >>> trtllm_pytorch_backend({"id": "nim-benchmarking-perf/llama-3.3-70b/h100-sxmx2/5000-500/c50"})
    False
    """
    return TRTLLM_PYTORCH_PREFILL and str(point.get("id", "")).split("/")[0] in TRTLLM_PYTORCH_SOURCES


TRTLLM_BENCH_SETTINGS = True
"""The TensorRT-LLM performance overview's points replayed with the limits ``trtllm-bench throughput`` set for them
(:func:`trtllm_bench_settings`: its batch-size and token-budget heuristic, chunked prefill off, attention data
parallelism for the MoE models; session 11, docs/serving.md section 2)."""


CUDA_GRAPH_PADDING = False
"""Whether the TensorRT-LLM performance overview's points pad their decode-only steps to the CUDA-graph batch sizes
of the overview's ``llm_options.yml`` (rule CG, :data:`planner.serving.step.TRTLLM_OVERVIEW_GRAPH_SIZES`,
``performance(..., cuda_graph_batch_sizes=)``; session 14, latency24, docs/serving.md)."""


def cuda_graph_batch_sizes(point: Mapping[str, Any]) -> tuple[int, ...] | None:
    """The CUDA-graph batch sizes a point's engine pads its decode-only steps to, or None: the overview's list for
    ``trtllm-perf-overview`` points when :data:`CUDA_GRAPH_PADDING` is on (every run of the overview used
    ``cuda_graph_config: {enable_padding: true, batch_sizes: [1, 2, 4, ..., 256, 384, 512, 1024, ..., 8192]}``).

    >>> cuda_graph_batch_sizes({"id": "nim-benchmarking-perf/x"}) is None
    True
    """
    from planner.serving.step import TRTLLM_OVERVIEW_GRAPH_SIZES

    if CUDA_GRAPH_PADDING and str(point.get("id", "")).startswith("trtllm-perf-overview/"):
        return TRTLLM_OVERVIEW_GRAPH_SIZES
    return None


HOST_STAGED_COLLECTIVES = True
"""Rule H (session 17, latency41, docs/serving.md): the runs listed under ``accelmark.host_staged_collectives`` in
``planner/data/benchmark_harnesses.json`` (eight RTX 4090s without peer access, all under one PCIe switch tree of
one host bridge, as their ``env_info.json`` records) replayed with every collective staged through host memory over
that shared uplink (``performance(..., host_staged_collectives=True)``). Kept by its rule: training loss 0.2535207
to 0.2399354 (hinge 0; the bar was 0.2515207). Off: S5's ring over each GPU's own link."""


def host_staged_collectives(point: Mapping[str, Any]) -> bool:
    """Whether ``point``'s run stages its tensor-parallel collectives through host memory over one shared PCIe uplink
    (rule H, :data:`HOST_STAGED_COLLECTIVES`): an AccelMark run listed in ``planner/data/benchmark_harnesses.json``
    (``accelmark.host_staged_collectives.runs``, keyed by run directory), with the switch on.

    >>> host_staged_collectives({"id": "accelmark/nvidia_geforce_rtx_4090x8_suite_E_nvidia_vllm_47f5d58e_54dccbd0/"
    ...                                "tp8/offline"}) == HOST_STAGED_COLLECTIVES
    True
    >>> host_staged_collectives({"id": "accelmark/nvidia_h200x8_suite_B_nvidia_vllm_47f5d58e_b727568e/offline"})
    False
    """
    from planner.catalog import benchmark_harness_data

    parts = str(point.get("id", "")).split("/")
    if not HOST_STAGED_COLLECTIVES or parts[0] != "accelmark" or len(parts) < 2:
        return False
    runs = benchmark_harness_data()["accelmark"].get("host_staged_collectives", {}).get("runs", {})
    return parts[1] in runs


def _round_up(value: float, step: int) -> int:
    return step * math.ceil(value / step)


def trtllm_bench_settings(point: Mapping[str, Any]) -> dict[str, Any]:
    """The engine limits ``trtllm-bench throughput`` chose for a TensorRT-LLM performance-overview point
    (``planner/data/benchmark_harnesses.json``, ``trtllm_bench``), or ``{}`` for other sources.

    The overview's runs pass neither ``--max_batch_size`` nor ``--max_num_tokens``, so trtllm-bench's ``get_settings``
    (``tensorrt_llm/bench/benchmark/utils/general.py``) takes them from ``calc_engine_setting`` and
    ``finetune_setting`` (``tensorrt_llm/bench/build/tuning.py``):

    - KV requests ``R = f·(n·G − P·b_w)/(2·L·max(tp, n_kv)·d_head·b_kv·(I + O))`` (GiB; ``f`` = 0.95, ``G`` = the
      device's NVML total, ``P`` = parameters, ``b_w`` 1 for FP8 and 0.5 for NVFP4 weights, else 2; ``b_kv`` 1 for an
      FP8 KV cache, else 2),
    - ``raw_bs = min(R, 4096)/pp``, rounded up to a multiple of 32 (at least 64) below 256, of 128 below 1,024, else of
      256: ``max_batch_size``;
    - ``raw_tokens = min(raw_bs·(1 + I/O), 32768)``, rounded up to 256 (at least 2,048) below 4,096, to 512 below
      8,192, else to 1,024; chunked prefill is off, so ``max_num_tokens = max(that, I + max_batch_size)``.

    The MoE models run with ``enable_attention_dp: true`` (the overview's MoE ``llm_options.yml``): every rank then
    schedules its own requests within those limits, so the replica's are ``tp`` times them.

    Worked example, Llama-3.1-405B FP8 on 8 H100s at 1,000/2,000 tokens: ``R = 0.95·(8·79.65 − 405.85e9/2^30)/
    (2·126·8·128·1/2^30·3000) = 0.95·(637.18 − 377.98)/0.721 = 341.5``, ``max_batch_size`` = 384 (a multiple of 128),
    ``raw_tokens = 341.5·1.5 = 512`` -> 2,048, then ``max(2048, 1000 + 384)`` = 2,048.

    >>> trtllm_bench_settings({"id": "trtllm-perf-overview/llama-3.1-405b/h100-sxmx8/1000-2000/offline",
    ...     "model": "llama-3.1-405b", "gpu": "h100-sxm", "tp": 8, "pp": 1, "weight_dtype": "fp8",
    ...     "input_tokens": 1000, "output_tokens": 2000, "engine": "trtllm"})
    {'max_batch_size': 384, 'max_num_tokens': 2048, 'enable_chunked_prefill': False}
    """
    from planner.catalog import benchmark_harness_data, get_gpu, get_model

    runs = benchmark_harness_data().get("trtllm_bench", {}).get("runs", {})
    pid = str(point.get("id", ""))
    run = next((v for k, v in runs.items() if pid.startswith(k)), None)
    if run is None:
        return {}
    spec = get_model(MODEL_EQUIVALENTS.get(str(point["model"]).lower(), point["model"]))
    card = get_gpu(point["gpu"])
    tp, pp = int(point["tp"]), int(point.get("pp") or 1)
    wd = str(point.get("weight_dtype") or "")
    b_w = {"fp8": 1.0, "nvfp4": 0.5, "fp4": 0.5}.get(wd, 2.0)
    kd = str(point.get("kv_cache_dtype") or ("fp8" if b_w < 2.0 else "auto"))  # ModelOpt checkpoints: FP8 KV
    b_kv = 1.0 if kd == "fp8" else 2.0
    gib = 1024**3
    i, o = float(point["input_tokens"]), float(point["output_tokens"])
    per_token = 2 * spec.num_hidden_layers * max(tp, spec.num_key_value_heads) * spec.head_dim * b_kv / gib
    room = card.hbm_bytes / gib * tp * pp - spec.params_total * b_w / gib
    cache = room * float(run["kv_cache_free_gpu_mem_fraction"])
    raw_bs = min(cache / (per_token * (i + o)), float(run["max_batch_size_cap"])) / pp
    raw_tokens = min(raw_bs * (1 + i / o), float(run["max_num_tokens_cap"]))
    if raw_bs < 256:
        bs = max(64, _round_up(raw_bs, 32))
    else:
        bs = _round_up(raw_bs, 128 if raw_bs < 1024 else 256)
    if raw_tokens < 4096:
        tokens = max(2048, _round_up(raw_tokens, 256))
    else:
        tokens = _round_up(raw_tokens, 512 if raw_tokens < 8192 else 1024)
    chunked = bool(run.get("enable_chunked_prefill", False))
    if not chunked:
        tokens = max(tokens, int(math.ceil(i)) + bs)
    out: dict[str, Any] = {}
    ranks = 1
    if run.get("moe_enable_attention_dp") and spec.architecture == "moe" and tp > 1:
        out["enable_attention_dp"] = True
        ranks = tp
    return {"max_batch_size": bs * ranks, "max_num_tokens": tokens * ranks, "enable_chunked_prefill": chunked, **out}


def _recorded_run_config(point: Mapping[str, Any]) -> dict[str, Any]:
    """The recorded engine arguments of ``point``'s AccelMark run (``planner/data/benchmark_harnesses.json``,
    ``accelmark.recorded_engine_config``), keyed by run directory and, for suite C, precision directory."""
    from planner.catalog import benchmark_harness_data

    parts = str(point.get("id", "")).split("/")
    runs = benchmark_harness_data()["accelmark"].get("recorded_engine_config", {}).get("runs", {})
    for key in ("/".join(parts[1:3]), parts[1] if len(parts) > 1 else ""):
        if key in runs:
            return {k: v for k, v in runs[key].items() if k != "where"}
    return {}


def harness_settings(point: Mapping[str, Any], *, gpu_big: bool) -> dict[str, Any]:
    """Engine settings a source's benchmark harness applies that its points do not restate.

    AccelMark's vLLM runners (``runners/nvidia_vllm_47f5d58e/runner.py``, ``runners/nvidia_vllm020_0f6c56e4``) run
    the offline scenario through ``LLM(..., max_num_seqs=512)`` (the runner config, recorded in each result.json's
    ``task.extra_config``) and the online and interactive scenarios through an in-process ``AsyncLLMEngine`` built
    from ``AsyncEngineArgs`` *without* ``max_num_seqs``. vLLM V1 (0.8+) takes its batch defaults from the usage
    context (``EngineArgs.get_batch_defaults``): ``LLM_CLASS`` 16,384 tokens per step on >= 70 GiB non-A100 GPUs,
    else 8,192; an engine built directly (``UsageContext.ENGINE_CONTEXT``) is in neither table and falls back to
    ``SchedulerConfig.DEFAULT_MAX_NUM_SEQS`` 128 and ``DEFAULT_MAX_NUM_BATCHED_TOKENS`` 2,048. vLLM V0 (0.7.3) has
    fixed ``EngineArgs`` defaults (256 sequences, whole prompts up to ``max_model_len``), which the model already uses.

    Two more settings come from the run itself (``planner/data/benchmark_harnesses.json``): ``enforce_eager`` where
    its result.json records ``task.extra_config.enforce_eager: true`` (vLLM 0.20's suite-C W8A8, W8A16 and W4A16 runs
    on the A100 80GB; the runner passes it to ``LLM`` and ``AsyncEngineArgs`` alike), and, offline only, the
    ``quantization`` the runner passes to ``LLM(...)`` from the suite's ``precision_model_map`` (``"gptq"`` for
    suite C's W4A16, which keeps vLLM on its ExLlama kernels; the online engine is built without it).

    >>> harness_settings({"id": "accelmark/x/online/qps25", "engine": "vllm", "engine_version": "0.20.1",
    ...                   "mode": "open"}, gpu_big=False)
    {'max_num_seqs': 128, 'max_num_batched_tokens': 2048}
    >>> harness_settings({"id": "accelmark/x/offline", "engine": "vllm", "engine_version": "0.7.3",
    ...                   "mode": "offline"}, gpu_big=True)
    {'max_num_seqs': 512}
    """
    if TRTLLM_BENCH_SETTINGS and str(point.get("id", "")).startswith("trtllm-perf-overview/"):
        return trtllm_bench_settings(point)
    if str(point.get("id", "")).split("/")[0] != "accelmark" or point.get("engine") != "vllm":
        return {}
    version = str(point.get("engine_version") or "").split("+")[0].lstrip("v")
    try:
        major_minor = tuple(int(x) for x in version.split(".")[:2])
    except ValueError:
        return {}
    v1 = major_minor >= (0, 8)
    extra: dict[str, Any] = {}
    if RECORDED_ENGINE_CONFIG and _recorded_run_config(point).get("enforce_eager"):
        extra["enforce_eager"] = True
    if point.get("mode") == "offline":
        out: dict[str, Any] = {"max_num_seqs": 512}
        if v1:
            out["max_num_batched_tokens"] = 16384 if gpu_big else 8192
        if OFFLINE_QUANTIZATION:
            import re

            from planner.catalog import benchmark_harness_data

            m = re.search(r"_suite_([A-Z])_", str(point.get("id", "")))
            table = benchmark_harness_data()["accelmark"].get("offline_quantization", {})
            quant = table.get(f"suite_{m.group(1)}", {}).get(str(point.get("weight_dtype"))) if m else None
            if quant:
                out["quantization"] = quant
        return {**out, **extra}
    return {**({"max_num_seqs": 128, "max_num_batched_tokens": 2048} if v1 else {}), **extra}


V1_PREFIX_CACHE = False
"""AccelMark's vLLM V1 runs replayed with the prompts its earlier passes left in V1's prefix cache
(:func:`accelmark_prefix_cache`, :func:`accelmark_cached_passes`). Tried in session 9 and not kept: refitted, the
training loss stayed above the model without it (0.3144 without; 0.3181 with it before the refit, 0.3148 after two
rounds; docs/serving.md section 4), so it is off."""

PREFIX_BLOCK_TOKENS = 16
"""vLLM's default KV block size (``CacheConfig.block_size``): the prefix cache hashes whole blocks."""


def cached_prompt_tail(prompt_tokens: int, *, block: int = PREFIX_BLOCK_TOKENS) -> int:
    """Prompt tokens vLLM V1 still computes for a prompt whose every block is in its prefix cache: the cache hits
    whole blocks only, and on a full hit the last prompt token is recomputed to get its logits
    (``KVCacheManager.get_computed_blocks`` caps the hit at ``prompt_len − 1``), so ``I − block·⌊(I − 1)/block⌋``
    tokens (1 to ``block``) are left.

    >>> cached_prompt_tail(280), cached_prompt_tail(281), cached_prompt_tail(16)
    (8, 9, 16)
    """
    n = max(int(prompt_tokens), 1)
    return n - block * ((n - 1) // block)


def accelmark_prefix_cache(point: Mapping[str, Any]) -> bool:
    """Whether an AccelMark point ran on vLLM V1 (0.8+), whose prefix cache is on by default (vLLM
    ``tests/v1/engine/test_engine_args.py``: "V1 turns on prefix caching by default"; AccelMark's
    ``runners/nvidia_vllm020_0f6c56e4/runner.py`` builds ``LLM``/``AsyncEngineArgs`` without
    ``enable_prefix_caching``). vLLM V0 (0.7.3) has it off unless asked. Every AccelMark scenario sends the same
    requests again (warmups, ``num_runs`` passes, qps levels: ``loadgen/loadgen.py``), so on V1 a repeated prompt
    finds its blocks cached while they fit the KV cache (:func:`accelmark_cached_runs`).

    >>> accelmark_prefix_cache({"id": "accelmark/x_suite_A_nvidia_vllm020_0f6c56e4_y/online/qps5",
    ...                         "engine": "vllm", "engine_version": "0.20.1+transformers-5.8.1"})
    True
    >>> accelmark_prefix_cache({"id": "accelmark/x/online/qps5", "engine": "vllm", "engine_version": "0.7.3"})
    False
    """
    if not str(point.get("id", "")).startswith("accelmark/") or point.get("engine") != "vllm":
        return False
    version = str(point.get("engine_version") or "").split("+")[0].lstrip("v")
    try:
        return tuple(int(x) for x in version.split(".")[:2]) >= (0, 8)
    except ValueError:
        return False


INFERENCE_PERF_PREFIX_CACHE = False
"""Rule U (session 17, latency42, docs/serving.md): whether the runs of a source whose harness is inference-perf's
``shared_prefix`` generator (BLIS's training runs) are predicted with the prefix-cache hit rate their repeated prompts
get on vLLM V1 (:func:`inference_perf_cache_hit_rate`). Off until its keep rule decides."""


def inference_perf_cache_hit_rate(point: Mapping[str, Any]) -> float | None:
    """The mean prefix-cache hit rate of a run whose harness cycles through ``U`` distinct prompts
    (``planner/data/benchmark_harnesses.json``, ``inference_perf``: inference-perf's ``SharedPrefixDataGenerator``
    builds ``num_groups × num_prompts_per_group`` prompts once and sends ``prompts[i % U]``), served by vLLM V1, whose
    prefix cache is on by default (:func:`accelmark_prefix_cache`'s citation); None for any other point::

        h = (I − tail(I))/I · (N − u)/N,    u = min(U, N) in stage 0, 0 in a later stage of the same server

    ``tail(I)`` the tokens V1 computes on a full hit (:func:`cached_prompt_tail`: whole 16-token blocks, the last
    token recomputed), ``I`` the stage's mean prompt, ``N`` its requests (``num_prompts``); stage 0's first ``U``
    requests see their prompt for the first time. The stage is the id's ``/stageK`` suffix (none: stage 0).

    Worked example: BLIS's Mixtral "general" run, 571-token prompts, ``U`` = 100: stage 0 (4,800 requests)
    560/571 · 4,700/4,800 = 0.9603; stage 1 (12,000) 560/571 = 0.9807.

    >>> p = {"id": "blis-training/20260218-130541-mixtral-8x7b-v0-1-tp2-general/stage0", "engine": "vllm",
    ...      "engine_version": None, "input_tokens": 571, "num_prompts": 4800}
    >>> round(inference_perf_cache_hit_rate(p), 4)
    0.9603
    >>> round(inference_perf_cache_hit_rate({**p, "id": p["id"][:-1] + "1", "num_prompts": 12000}), 4)
    0.9807
    >>> inference_perf_cache_hit_rate({**p, "engine_version": "0.7.3"}) is None  # V0: prefix cache off by default
    True
    >>> inference_perf_cache_hit_rate({**p, "id": "dstack-405b/x/sharegpt"}) is None
    True
    """
    import re

    from planner.catalog import benchmark_harness_data

    source = str(point.get("id", "")).split("/")[0]
    harness = benchmark_harness_data().get("inference_perf", {}).get("sources", {}).get(source)
    if not harness or point.get("engine") != "vllm":
        return None
    version = str(point.get("engine_version") or "").split("+")[0].lstrip("v")
    if version:  # a stated release before V1's default (0.8) keeps the prefix cache off
        try:
            if tuple(int(x) for x in version.split(".")[:2]) < (0, 8):
                return None
        except ValueError:
            return None
    prompt = float(point["input_tokens"])
    n = int(point.get("num_prompts") or 0)
    if prompt < 2 or n <= 0:
        return None
    m = re.search(r"/stage(\d+)$", str(point["id"]))
    first_seen = min(int(harness["distinct_prompts"]), n) if not m or int(m.group(1)) == 0 else 0
    cached = prompt - cached_prompt_tail(int(round(prompt)))
    return cached / prompt * (n - first_seen) / n


def _accelmark_suite(point: Mapping[str, Any]) -> tuple[dict, dict | None] | None:
    import re

    from planner.catalog import benchmark_harness_data

    m = re.search(r"_suite_([A-Z])_", str(point.get("id", "")))
    if not str(point.get("id", "")).startswith("accelmark/") or not m:
        return None
    harness = benchmark_harness_data()["accelmark"]
    suite = harness["suites"].get(f"suite_{m.group(1)}")
    if not suite:
        return None
    return suite, harness["datasets"].get(suite.get("dataset", ""))


def bench_serving_zero_ttft_share(point: Mapping[str, Any]) -> float:
    """The share ``z`` of a dstack ShareGPT run's requests that ``benchmark_serving`` counts with a TTFT of 0 (rule Z):
    those whose recorded ``output_lens`` is 0 (``planner/data/benchmark_harnesses.json``, ``dstack_sharegpt``; the
    runs whose result files are stored). vLLM's client (``benchmarks/backend_request_func.py``,
    ``async_request_openai_completions``, vLLM 0.6) leaves ``RequestFuncOutput.ttft`` at its default 0.0 unless a
    streamed chunk carries text, and ``calculate_metrics`` (``benchmarks/benchmark_serving.py``) appends every
    successful request's ``ttft`` to the list whose ``np.mean`` it publishes; a request whose model stops at once
    streams no text, succeeds and is retokenized to 0 output tokens. In all six stored files (dstackai/benchmarks
    06c957a) the requests with ``ttfts`` 0.0 are exactly those with ``output_lens`` 0. So the published mean is::

        TTFT_pub = (1 − z) · TTFT_streamed,   z = #{i : output_lens_i = 0} / n

    and the model's mean TTFT (the requests it replays, all of which stream) is scaled by ``1 − z``. 0.0 for every
    other point (and for the dstack runs whose files are absent: their outputs are not recorded). Exact for the
    uniform replay (every request alike); with :data:`DSTACK_TRACE` on it would take the zero-output requests' mean
    TTFT as the others', an approximation not measured (that switch is off).

    Worked example: the 8xH100 run at 16 req/s records 379 of its 1,000 outputs at 0 tokens, so ``z`` = 0.379 and a
    modelled mean TTFT of 4.0 s is published as 0.621 × 4.0 = 2.484 s (the file itself: 1,486.4 ms over all 1,000
    requests, 2,393.5 ms over the 621 that streamed text).

    >>> bench_serving_zero_ttft_share({"id": "dstack-405b/8xH100-1FP8-meta/sharegpt/qps16"})
    0.379
    >>> bench_serving_zero_ttft_share({"id": "dstack-405b/8xMi300-1FP8-amd/sharegpt/qps16"})
    0.0
    """
    from planner.catalog import benchmark_harness_data

    data = benchmark_harness_data().get("dstack_sharegpt") or {}
    run = (data.get("runs") or {}).get(str(point.get("id", "")))
    outputs = run.get("output_tokens") if run else None
    if not outputs:
        return 0.0
    return sum(1 for x in outputs if int(x) == 0) / len(outputs)


def dstack_sharegpt_trace(point: Mapping[str, Any]) -> list[TraceRun] | None:
    """The run behind a dstack Llama-3.1-405B ShareGPT point as ``vllm benchmarks/benchmark_serving.py`` sent it
    (``planner/data/benchmark_harnesses.json``, ``dstack_sharegpt``): its 1,000 requests in order with the prompt
    lengths its result files record (``input_lens``, one list in every stored file), arriving as ``get_request``
    spaces them, request 0 at 0 and one ``np.random.exponential(1/λ)`` gap after each request, from
    ``np.random.seed(0)`` (``main``; ``--seed`` 0)::

        a_0 = 0,   a_i = Σ_{k<i} g_k,   g_k = (1/λ)·(−ln(1 − u_k)),   u_k: numpy's legacy MT19937 stream, seed 0

    (numpy's legacy ``exponential(scale)`` is ``scale · −log(1 − random_sample())`` and its ``random_sample`` the
    53-bit draw Python's ``random()`` makes from the same state: :func:`_numpy_legacy_generator`, no numpy;
    tests/test_serving_dstack.py checks the arrivals against numpy itself)

    and, where the run's own result file is stored, each request's recorded output length (``output_lens``,
    the generated text retokenized; ``ignore_eos`` off). The runs whose files are absent from the snapshot (the
    8xMI300X amd and 4xMI300X builds) keep every output at the point's published mean. None for other points.

    Worked example: numpy's first uniform from seed 0 is 0.5488135, so request 1 of the 16 req/s run arrives
    at −ln(1 − 0.5488135)/16 = 0.0497 s.

    >>> runs = dstack_sharegpt_trace({"id": "dstack-405b/8xH100-1FP8-meta/sharegpt/qps16", "mode": "open",
    ...                               "request_rate_per_s": 16.0, "output_tokens": 121})
    >>> len(runs), len(runs[0]), round(runs[0][0][1], 4), sum(runs[0][1]), sum(runs[0][2])
    (1, 3, 0.0497, 215196, 120689)
    """
    from planner.catalog import benchmark_harness_data

    pid = str(point.get("id", ""))
    rate = point.get("request_rate_per_s")
    if not pid.startswith("dstack-405b/") or "/sharegpt/" not in pid or point.get("mode") != "open" or not rate:
        return None
    data = benchmark_harness_data().get("dstack_sharegpt")
    if not data:
        return None
    prompts = [int(x) for x in data["input_tokens"]]
    gen, scale = _numpy_legacy_generator(int(data["seed"])), 1.0 / float(rate)
    arrivals, a = [0.0], 0.0
    for _ in range(len(prompts) - 1):
        a += scale * -math.log(1.0 - gen.random())
        arrivals.append(a)
    run = data["runs"].get(pid)
    if run:
        return [(arrivals, prompts, [int(x) for x in run["output_tokens"]])]
    return [(arrivals, prompts)]


def harness_trace(point: Mapping[str, Any], *,
                  kv_tokens: float | None = None) -> list[TraceRun] | None:
    """The arrival times and prompt lengths of the runs behind an AccelMark online point, as its load generator made
    them (``planner/data/benchmark_harnesses.json``, from AccelMark's ``loadgen/loadgen.py``): one
    ``random.Random(42)`` per scenario process draws ``online_request_count`` gaps ``expovariate(qps)`` per run, for
    each of the suite's qps levels in order and ``num_runs`` runs each, over the first ``online_request_count``
    requests of the suite's dataset in file order; the published p50s pool a level's runs. A run sends
    ``min(online_request_count, len(dataset))`` requests (``requests[:count]``). Where the dataset itself is not stored
    but its size is known (suite D's long-context set: 100 requests, read from the published run durations,
    docs/serving.md section 4, session 12), the arrivals are still the harness's and every prompt has the point's
    published p50 length. None for other points and for suites whose dataset is unknown.

    >>> runs = harness_trace({"id": "accelmark/nvidia_h100_80gb_hbm3x1_suite_A_nvidia_vllm_47f5d58e_x/online/qps25",
    ...                       "mode": "open", "request_rate_per_s": 25.0})
    >>> len(runs), len(runs[0][0]), runs[0][1][:3]
    (3, 300, [395, 342, 401])
    >>> runs = harness_trace({"id": "accelmark/nvidia_h100_80gb_hbm3x1_suite_D_nvidia_vllm_47f5d58e_x/online/qps0.5",
    ...                       "mode": "open", "request_rate_per_s": 0.5, "input_tokens": 28650})
    >>> len(runs), len(runs[0][0]), round(runs[0][0][-1], 1), set(runs[0][1])
    (2, 100, 198.4, {28650})
    """
    import itertools
    import random

    from planner.catalog import benchmark_harness_data

    found = _accelmark_suite(point) if point.get("mode") == "open" else None
    rate = point.get("request_rate_per_s")
    if not found:
        return None
    suite, dataset = found
    if not dataset or not suite.get("online_qps_levels") or rate is None:
        return None
    levels = [float(q) for q in suite["online_qps_levels"]]
    if float(rate) not in levels:
        return None
    n, runs_per_level = int(suite["online_request_count"]), int(suite["num_runs"])
    if dataset.get("input_tokens"):
        lengths = [int(x) for x in dataset["input_tokens"][:n]]
    elif dataset.get("requests") and point.get("input_tokens"):
        lengths = [round(float(point["input_tokens"]))] * min(n, int(dataset["requests"]))
    else:
        return None
    rng = random.Random(int(benchmark_harness_data()["accelmark"]["seed"]))
    cache = kv_tokens is not None and accelmark_cached_runs(point, prompts=lengths, kv_tokens=kv_tokens)
    warm = int(suite.get("online_warmup_requests") or 0)
    for index, qps in enumerate(levels):
        runs: list[TraceRun] = []
        for k in range(runs_per_level):
            gaps = list(itertools.accumulate(rng.expovariate(qps) for _ in range(len(lengths))))
            if not cache:
                runs.append((gaps, lengths))
            elif index == 0 and k == 0:  # the first pass: only the warmup's requests were sent before
                runs.append((gaps, [cached_prompt_tail(x) if i < warm else x for i, x in enumerate(lengths)]))
            else:
                runs.append((gaps, [cached_prompt_tail(x) for x in lengths]))
        if qps == float(rate):
            return runs
    return None


def accelmark_cached_passes(point: Mapping[str, Any], *, prompts: int, input_tokens: int, output_tokens: int,
                            kv_tokens: float) -> tuple[list[int], list[int]] | None:
    """The pooled requests of an AccelMark interactive or offline scenario on vLLM V1 with its prefix cache
    (:func:`accelmark_cached_runs`): ``loadgen/loadgen.py`` runs ``warmup_runs`` discarded passes (interactive:
    ``interactive_warmup_runs``, 0 in every suite here; offline: ``warmup_runs``, 1) and ``num_runs`` timed passes over
    the same ``prompts`` requests and pools the timed requests into its p50s. The first pass computes each prompt;
    later passes compute only :func:`cached_prompt_tail`. Returns ``(uncached prompt tokens, output tokens)`` of the
    pooled timed requests in order (interactive: one pass uncached, ``num_runs − 1`` cached; offline: all cached),
    or None where nothing is cached.

    >>> ins, outs = accelmark_cached_passes({"id": "accelmark/x_suite_A_nvidia_vllm020_0f6c56e4_y/interactive",
    ...     "engine": "vllm", "engine_version": "0.20.1", "mode": "closed"}, prompts=150, input_tokens=280,
    ...     output_tokens=310, kv_tokens=400_000)
    >>> len(ins), ins[0], ins[150], outs[0]
    (450, 280, 8, 310)
    """
    found = _accelmark_suite(point)
    if not found or not accelmark_cached_runs(point, prompts=[input_tokens] * prompts, kv_tokens=kv_tokens):
        return None
    suite = found[0]
    runs = int(suite.get("num_runs") or 1)
    tail = cached_prompt_tail(input_tokens)
    if point.get("mode") == "offline":
        if not int(suite.get("offline_warmup_runs") or 0):
            return None
        return [tail] * prompts * runs, [output_tokens] * prompts * runs
    return [input_tokens] * prompts + [tail] * prompts * (runs - 1), [output_tokens] * prompts * runs


def accelmark_cached_runs(point: Mapping[str, Any], *, prompts: list[int], kv_tokens: float) -> bool:
    """Whether an AccelMark scenario's repeated requests find their prompts in vLLM V1's prefix cache
    (:func:`accelmark_prefix_cache`): the engine frees a finished request's blocks to an LRU list and evicts them only
    for new blocks, so every prompt of a pass is still cached at the next pass while the requests' prompts and outputs
    (at most the suite's ``output_tokens_max`` each) fit the KV cache of ``kv_tokens`` tokens. Suite D's 100 prompts
    of ~28,650 tokens do not (2.9M tokens against ~0.4M on an A100 80GB): each pass computes its prompts again.

    >>> accelmark_cached_runs({"id": "accelmark/x_suite_A_nvidia_vllm020_0f6c56e4_y/online/qps5", "engine": "vllm",
    ...                        "engine_version": "0.20.1"}, prompts=[280] * 300, kv_tokens=400_000)
    True
    """
    if not accelmark_prefix_cache(point):
        return False
    found = _accelmark_suite(point)
    out_max = int((found[0] if found else {}).get("output_tokens_max") or 512)
    return sum(int(x) + out_max for x in prompts) <= kv_tokens


BENCH_SERVING_RANDOM = True
"""SGLang cookbook closed-loop points replayed with ``sglang.bench_serving``'s own random lengths
(:func:`bench_serving_lengths`)."""

CROSS_RUN_CACHE = True
"""... and with the prompts an earlier run of the same workload sent still in SGLang's radix cache."""


COOKBOOK_PREVIOUS_RUN = {16: 10, 64: 80, 100: 80}
"""Prompts of the run before a cookbook run of ``--max-concurrency N``: each workload's sections run Low (1 client,
10 prompts), Medium (16, 80), High (64 or 100), in the order the pages list them."""


def _numpy_legacy_generator(seed: int) -> random.Random:
    """Python's Mersenne Twister in the state numpy's legacy ``np.random.seed(seed)`` / ``RandomState(seed)`` gives
    it (``init_genrand(seed & 0xffffffff)``, the MT19937 reference seeding): ``getrandbits(32)`` then yields
    numpy's ``genrand_int32`` stream, with no numpy (the core imports no outside library)."""
    mt = [seed & 0xFFFFFFFF]
    for i in range(1, 624):
        mt.append((1812433253 * (mt[-1] ^ (mt[-1] >> 30)) + i) & 0xFFFFFFFF)
    gen = random.Random()
    gen.setstate((3, (*mt, 624), None))
    return gen


def _numpy_randint(gen: random.Random, low: int, high: int, n: int) -> list[int]:
    """numpy's legacy ``RandomState.randint(low, high, size=n)`` (int64, ``high`` exclusive) for ranges below 2**32:
    masked rejection sampling on 32-bit draws (``_bounded_integers._rand_int64``, ``use_masked=True``; a range of
    one value draws nothing)."""
    span = high - 1 - low
    if span == 0:
        return [low] * n
    mask = (1 << span.bit_length()) - 1
    out = []
    for _ in range(n):
        value = gen.getrandbits(32) & mask
        while value > span:
            value = gen.getrandbits(32) & mask
        out.append(low + value)
    return out


def random_lengths(n: int, *, input_len: int, output_len: int, range_ratio: float = 0.0,
                   seed: int = 1) -> tuple[list[int], list[int]]:
    """The per-request prompt and output lengths of ``sglang.bench_serving --dataset-name random``
    (``sample_random_requests`` in ``python/sglang/bench_serving.py``; ``run_benchmark`` seeds
    ``np.random.seed(args.seed)``, ``--seed`` default 1, ``--random-range-ratio`` default 0.0)::

        input_i  ~ np.random.randint(max(int(I·r), 1), I + 1, size=n)
        output_i ~ np.random.randint(int(O·r), O + 1, size=n)        (drawn after all inputs)

    numpy's legacy generator reproduced in pure Python (:func:`_numpy_legacy_generator`, :func:`_numpy_randint`;
    tests/test_serving_trace.py checks it against numpy itself). The totals reproduce the published ones, e.g.
    ``--random-input-len 8000`` over 320 prompts: 1,273,893 input tokens (SGLang cookbook, Llama 3.1 'High
    Concurrency').

    >>> ins, outs = random_lengths(10, input_len=1000, output_len=1000)
    >>> sum(ins), len(outs)
    (6101, 10)
    """
    gen = _numpy_legacy_generator(seed)
    ins = _numpy_randint(gen, max(int(input_len * range_ratio), 1), input_len + 1, n)
    outs = _numpy_randint(gen, int(output_len * range_ratio), output_len + 1, n)
    return ins, outs


def bench_serving_lengths(point: Mapping[str, Any]) -> tuple[list[int], list[int]] | None:
    """The uncached prompt and output tokens, request by request, of an SGLang cookbook closed-loop run on the
    ``random`` dataset (None for other points, and where the regenerated lengths do not reproduce the published
    means: then the command was not the one the notes record).

    - lengths: :func:`random_lengths` of the ``--random-input-len``/``--random-output-len`` in the point's notes;
    - request 0 is cached: ``benchmark()`` sends ``input_requests[0]`` as its warmup request first and flushes the
      cache only in SGLang's CI (``SGLANG_IS_IN_CI``) or with ``--flush-cache``; the radix cache (on by default)
      keeps it, and a full prefix hit leaves one token to compute;
    - with :data:`CROSS_RUN_CACHE`: the first ``P`` requests are cached too, ``P`` the prompt count of the run before
      it on the same server (:data:`COOKBOOK_PREVIOUS_RUN`): every run draws its lengths from the same seed (the
      first ``P`` of ``n`` lengths are the previous run's) and its prompt texts from the same ``random.shuffle`` of
      ShareGPT, so request ``i`` repeats the previous run's request ``i`` token for token.
    """
    import re

    if not BENCH_SERVING_RANDOM or not str(point.get("id", "")).startswith("sglang-cookbook/"):
        return None
    if point.get("mode") != "closed" or point.get("lengths") != "random" or not point.get("num_prompts"):
        return None
    m = re.search(r"--random-input-len (\d+) --random-output-len (\d+)", str(point.get("notes", "")))
    if not m:
        return None
    n = int(point["num_prompts"])
    ins, outs = random_lengths(n, input_len=int(m.group(1)), output_len=int(m.group(2)))
    if round(sum(ins) / n) != round(float(point["input_tokens"])) or \
            abs(sum(outs) / n - float(point["output_tokens"])) > 1.0:
        return None
    cached = 1
    if CROSS_RUN_CACHE:
        cached = max(cached, COOKBOOK_PREVIOUS_RUN.get(int(point.get("concurrency") or 0), 0))
    return [1 if i < cached else x for i, x in enumerate(ins)], [max(x, 1) for x in outs]


def is_training(point_id: str) -> bool:
    """Whether ``point_id`` is in the training split: ``int(sha256(id)[:8], 16) % 100 < 70``.

    >>> is_training("nim-benchmarking-perf/llama-3.3-70b/h100-sxmx2/5000-500/c1")
    True
    """
    return int(hashlib.sha256(point_id.encode()).hexdigest()[:8], 16) % 100 < TRAIN_SHARE


@dataclass(frozen=True, kw_only=True)
class Row:
    """One point: its regime labels, measured and predicted values (seconds, tokens/s per replica)."""

    id: str
    train: bool
    tp: int
    moe: bool
    concurrency_class: str  # "low" (<= 16 clients or offline-free light load) | "high"
    heavy: str  # "prefill" (I/O >= 4) | "decode"
    measured: dict[str, float]
    predicted: dict[str, float]
    baseline: dict[str, float]
    saturated: bool
    note: str

    def error(self, metric: str, *, baseline: bool = False) -> float | None:
        """``pred/meas − 1`` for ``metric`` (None when either side is missing; ``inf`` when the model calls the load
        saturated but the source measured a finite latency: counted as a miss)."""
        pred = (self.baseline if baseline else self.predicted).get(metric)
        meas = self.measured.get(metric)
        if pred is None or meas is None or meas <= 0:
            return None
        if not math.isfinite(pred):
            return math.inf
        return pred / meas - 1.0


def _measured(point: Mapping[str, Any], replicas: int) -> dict[str, float]:
    m = point["measured"]
    out: dict[str, float] = {}
    if point.get("stat") in LATENCY_STATS:
        tpot = m.get("tpot_ms", m.get("itl_ms"))
        if tpot:
            out["tpot"] = tpot / 1e3
        if m.get("ttft_ms"):
            out["ttft"] = m["ttft_ms"] / 1e3
    scope = point.get("throughput_scope")
    otps = m.get("output_tokens_per_s")
    if otps is None and m.get("total_tokens_per_s"):
        i, o = point["input_tokens"], point["output_tokens"]
        otps = m["total_tokens_per_s"] * o / (i + o)
    if otps is not None and scope in ("total", "per_gpu"):
        total = otps * point["gpu_count"] if scope == "per_gpu" else otps
        out["otps"] = total / replicas
    return out


def tpot_floor_s(model, gpu, *, tp: int, weight_dtype: str, batch: float = 1.0) -> float:
    """The physical lower bound of a decode step of ``batch`` sequences: the weights they touch (MoE: the shared
    part and the experts ``batch`` tokens route to) read at 100% of peak HBM bandwidth. A published TPOT below it
    was not measured the way the model defines TPOT (e.g. a client that counts stream chunks), so the accuracy
    tables leave that TPOT out."""
    from planner.latency import weights_read_fraction
    from planner.memory import weight_bytes_per_gpu

    total = weight_bytes_per_gpu(model, tp=tp, weight_dtype=weight_dtype)
    return total * weights_read_fraction(model, batch=max(batch, 1.0)) / gpu.mem_bw_bytes_per_s


def predict(point: Mapping[str, Any], *, calibration: Calibration) -> Row | None:
    """The :class:`Row` of ``point``, or None when the point cannot be modelled (model/GPU outside the catalog)."""
    from planner import selfhosted
    from planner.catalog import get_model
    from planner.serving.api import performance

    model = MODEL_EQUIVALENTS.get(str(point["model"]).lower(), point["model"])
    if not (point.get("gpu_in_catalog") and (point.get("model_in_catalog") or model != point["model"])):
        return None
    replicas = int(point.get("dp") or 1)
    tp, pp = int(point["tp"]), int(point.get("pp") or 1)
    engine = ENGINE_MAP.get(point["engine"], "vllm")
    version = point.get("engine_version") if engine == "vllm" else None
    if version:
        version = version.split("+")[0].lstrip("v")
    wd = point.get("weight_dtype") or "auto"
    spec = get_model(model)
    if wd in ("bf16", "fp16") and spec.weight_dtype in ("bf16", "fp16"):
        wd = "auto"
    wd = WEIGHT_DTYPE_ALIASES.get(wd, wd)
    if wd == "int8" and "/w8a16/" in str(point["id"]):  # AccelMark suite C's W8A16 checkpoint (RedHatAI): INT8
        wd = "w8a16"  # weights only, 16-bit activations: vLLM's weight-only kernels, not INT8 tensor cores
    kd = point.get("kv_cache_dtype") or "auto"
    if point["engine"] in ("trtllm", "nim") and not point.get("kv_cache_dtype") and wd in ("fp8", "nvfp4"):
        kd = "fp8"  # ModelOpt FP8/FP4 checkpoints quantize the KV cache too (hf_quant_config kv_cache_quant_algo)
    kd = "auto" if kd in ("bf16", "fp16") else kd
    from planner.catalog import get_gpu

    card = get_gpu(point["gpu"])
    big = card.hbm_bytes >= 70 * 2**30 and "a100" not in f"{card.name} {card.display_name}".lower()
    settings = {**harness_settings(point, gpu_big=big), **(point.get("engine_settings") or {})}
    moe_model = spec.architecture == "moe"
    ep = int(point.get("ep") or _int(settings.get("ep")) or 1) if moe_model else 1
    attn_dp = tp if (settings.get("enable_attention_dp") is True or "enable-dp-attention" in settings) else 1
    attn_dp = _int(settings.get("dp")) or attn_dp
    i, o = float(point["input_tokens"]), float(point["output_tokens"])
    mode = point["mode"]
    conc: Any = point.get("concurrency")
    rate: Any = point.get("request_rate_per_s")
    source = str(point["id"]).split("/")[0]
    n_prompts = point.get("num_prompts")
    note = ""
    if mode == "offline" and n_prompts:
        note = f"offline run of {n_prompts} prompts"
    kwargs: dict[str, Any] = dict(
                  tp=tp, pp=pp, engine=engine, engine_version=version, weight_dtype=wd, kv_cache_dtype=kd,
                  input_tokens=i, output_tokens=o, calibration=calibration,
                  max_num_batched_tokens=_int(settings.get("max_num_batched_tokens", settings.get("max_num_tokens"))),
                  max_num_seqs=_int(settings.get("max_num_seqs", settings.get("max_batch_size"))),
                  max_model_len=_int(settings.get("max_model_len")) or SOURCE_MAX_MODEL_LEN.get(source),
                  chunked_prefill=_flag(settings.get("enable_chunked_prefill")),
                  num_prompts=math.ceil(n_prompts / replicas) if n_prompts else None,  # each replica's share
                  latency_stat="median" if point.get("stat") in ("median", "p50") else "mean",
                  ep=ep if ep > 1 and tp % ep == 0 else 1, dp=attn_dp if tp % attn_dp == 0 else 1,
                  enforce_eager=_flag(settings.get("enforce_eager")) is True,
                  quantization=settings.get("quantization"),
                  eager_prefill=True if trtllm_pytorch_backend(point) else None,
                  checkpoint_recipe=checkpoint_recipe(point) if CHECKPOINT_RECIPE else None,
                  max_seq_len_to_capture=_int(settings.get("max_seq_len_to_capture")),
                  gpu_memory_utilization=(recorded_memory_fraction(point, settings=settings) if RECORDED_KV_ROOM else
                                          _fraction(settings.get("gpu_memory_utilization"))),
                  loaded_weights_gib=logged_weight_gib(point) if RECORDED_KV_ROOM else None,
                  cuda_graph_batch_sizes=cuda_graph_batch_sizes(point),
                  host_staged_collectives=host_staged_collectives(point))
    if ACCELMARK_IN_PROCESS_DELIVERY and accelmark_in_process(point) and pp == 1 and not kwargs["enforce_eager"]:
        kwargs["in_process_delivery"] = True  # rule D0: async output processing on (no enforce_eager, pp 1)
        kwargs["front_end"] = not ACCELMARK_IN_PROCESS_NO_FRONT_END  # rule D1: no o_ttft in process
    if INFERENCE_PERF_PREFIX_CACHE:  # rule U: the harness's repeated prompts hit V1's prefix cache
        hit = inference_perf_cache_hit_rate(point)
        if hit:
            kwargs["cache_hit_rate"] = hit
    kv_tokens = None
    if V1_PREFIX_CACHE and accelmark_prefix_cache(point) and replicas == 1:
        from planner.engines import normalize_engine
        from planner.serving.api import _kv_tokens

        kv_tokens, _ = _kv_tokens(spec, card, tp, pp, kd, wd, normalize_engine(engine, engine_version=version),
                                  version, kwargs["max_num_seqs"])
    trace: list[TraceRun] | None = (harness_trace(point, kv_tokens=kv_tokens) if TRACE_REPLAY and replicas == 1
                                    else None)
    if trace is None and DSTACK_TRACE and replicas == 1:
        trace = dstack_sharegpt_trace(point)
    if trace:  # the harness's own prompts: the replica is built for their mean length
        kwargs["input_tokens"] = sum(trace[0][1]) / len(trace[0][1])
        kwargs["trace"] = trace
    # every other finite closed-loop run (num_prompts known) is replayed by the API itself with uniform lengths
    # (performance(..., concurrency=N, num_prompts=P), Q8''), as the library and calibrate-bench answer it
    lengths = bench_serving_lengths(point) if mode == "closed" and replicas == 1 else None
    if lengths:
        kwargs["lengths"] = lengths
    elif kv_tokens and mode in ("closed", "offline") and n_prompts:
        passes = accelmark_cached_passes(point, prompts=int(n_prompts), input_tokens=int(i), output_tokens=int(o),
                                         kv_tokens=kv_tokens)
        if passes and mode == "closed":
            kwargs["lengths"] = passes
        elif passes:  # every timed pass follows the warmup pass: all prompts cached
            kwargs["cache_hit_rate"] = 1.0 - cached_prompt_tail(int(i)) / i
    try:
        if mode == "closed":
            res = performance(model, point["gpu"], concurrency=float(conc) / replicas, **kwargs)
        elif mode == "open":
            res = performance(model, point["gpu"], request_rate=float(rate) / replicas, **kwargs)
        else:
            res = performance(model, point["gpu"], **kwargs)
    except PlannerError as exc:
        return Row(id=point["id"], train=is_training(point["id"]), tp=tp, moe=spec.architecture == "moe",
                   concurrency_class="high", heavy="prefill" if i >= 4 * o else "decode",
                   measured=_measured(point, replicas), predicted={}, baseline={}, saturated=False,
                   note=f"not modelled: {exc}")
    ttft = res.ttft_s
    if BENCH_SERVING_ZERO_TTFT and kwargs["latency_stat"] == "mean":  # rule Z: benchmark_serving's zero TTFTs
        ttft *= 1.0 - bench_serving_zero_ttft_share(point)
    predicted = {"tpot": res.tpot_s, "ttft": ttft, "otps": res.output_tokens_per_s}
    measured = _measured(point, replicas)
    from planner.catalog import get_gpu

    tpot_meas = measured.get("tpot", 0.0)
    batch = float(conc or 1) / replicas if mode == "closed" else (rate or 0) / replicas * (o - 1) * tpot_meas
    floor = tpot_floor_s(spec, get_gpu(point["gpu"]), tp=tp, weight_dtype=wd, batch=batch)
    if measured.get("tpot", math.inf) < floor:
        note = (f"published TPOT {measured.pop('tpot') * 1e3:.3g} ms is below the HBM floor {floor * 1e3:.3g} ms "
                "(weights at 100% of peak bandwidth): left out")
    baseline = _roofline(selfhosted, model, point["gpu"], tp=tp, wd=wd, kd=kd, i=i, o=o, mode=mode, conc=conc,
                         rate=rate, replicas=replicas,
                         max_running=min(res.max_running, n_prompts or math.inf) if mode == "offline" else
                         res.max_running)
    load = (conc or 0) / replicas if mode == "closed" else res.running_batch
    return Row(id=point["id"], train=is_training(point["id"]), tp=tp, moe=spec.architecture == "moe",
               concurrency_class="low" if load <= 16 else "high", heavy="prefill" if i >= 4 * o else "decode",
               measured=measured, predicted=predicted, baseline=baseline,
               saturated=res.saturated, note=note or ("saturated in the model" if res.saturated else
                                                      "finite run past capacity (Q8)" if res.mode == "open-finite"
                                                      else "harness trace replayed (Q8')" if res.mode == "open-trace"
                                                      else "closed run replayed (Q8'')"
                                                      if res.mode == "closed-trace"
                                                      else ""))


def _flag(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


def _fraction(value: Any) -> float | None:
    """A recorded memory fraction in (0, 1], else None (not recorded or not a number)."""
    try:
        x = float(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None
    return x if x is not None and 0.0 < x <= 1.0 else None


def _int(value: Any) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


def _roofline(selfhosted, model, gpu, *, tp, wd, kd, i, o, mode, conc, rate, replicas, max_running) -> dict:
    """The pre-issue-11 roofline (P1-P4 with MBU 0.7, MFU 0.5): TPOT at the batch, TTFT on an idle replica."""
    try:
        dec = selfhosted.decode_model(model, gpu, context_tokens=i + o / 2, tp=tp, kv_cache_dtype=kd, weight_dtype=wd)
        ttft = selfhosted.ttft_s(model, gpu, input_tokens=i, tp=tp, kv_cache_dtype=kd, weight_dtype=wd)
    except PlannerError:
        return {}
    if mode == "closed":
        batch = float(conc) / replicas
    elif mode == "open":
        batch = 1.0
        for _ in range(30):  # Little's law fixed point
            batch = max(1.0, min(max_running, rate / replicas * (ttft + (o - 1) * dec.tpot_s(batch))))
    else:
        batch = max_running
    tpot = dec.tpot_s(batch)
    return {"tpot": tpot, "ttft": ttft, "otps": batch * o / (ttft + (o - 1) * tpot)}


def evaluate(points: Iterable[Mapping[str, Any]], *, calibration: Calibration) -> list[Row]:
    """Rows for every modelled point, in the given order."""
    return [row for row in (predict(p, calibration=calibration) for p in points) if row is not None]


def median_abs(errors: list[float]) -> float | None:
    return statistics.median(abs(e) for e in errors) if errors else None


def summary(rows: list[Row], *, baseline: bool = False) -> dict[str, Any]:
    """Median absolute error per metric over finite predictions, the share within ±25 % (a latency the model calls
    saturated while the source measured a finite one counts as a miss), and counts."""
    out: dict[str, Any] = {}
    all_errors: list[float] = []
    saturated = 0
    for metric in METRICS:
        errs = [e for e in (r.error(metric, baseline=baseline) for r in rows) if e is not None]
        finite = [e for e in errs if math.isfinite(e)]
        saturated += len(errs) - len(finite)
        out[metric] = (median_abs(finite), len(finite))
        all_errors += errs
    out["within25"] = (sum(abs(e) <= 0.25 for e in all_errors) / len(all_errors)) if all_errors else None
    out["n"] = len(all_errors)
    out["saturated"] = saturated
    return out


REGIMES = (
    ("all", lambda r: True),
    ("TP1", lambda r: r.tp == 1),
    ("TP>1", lambda r: r.tp > 1),
    ("dense", lambda r: not r.moe),
    ("MoE", lambda r: r.moe),
    ("low concurrency (≤16)", lambda r: r.concurrency_class == "low"),
    ("high concurrency", lambda r: r.concurrency_class == "high"),
    ("prefill-heavy (I ≥ 4·O)", lambda r: r.heavy == "prefill"),
    ("decode-heavy", lambda r: r.heavy == "decode"),
)


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f}%"


def _cell(pair: tuple[float | None, int]) -> str:
    value, n = pair
    return "–" if value is None else f"{100 * value:.0f}% ({n})"


def run_key(point_id: str) -> str:
    """The benchmark run a point belongs to: its id without the last segment (the load level), or for AccelMark the
    result directory (one host; its precisions and scenarios share the host's CPU and software).

    >>> run_key("accelmark/nvidia_h200x1_suite_C_nvidia_vllm_47f5d58e_f07c60f8/bf16/online/qps5")
    'accelmark/nvidia_h200x1_suite_C_nvidia_vllm_47f5d58e_f07c60f8'
    >>> run_key("nim-benchmarking-perf/llama-3.3-70b/h100-sxmx2/5000-500/c50")
    'nim-benchmarking-perf/llama-3.3-70b/h100-sxmx2/5000-500'
    """
    parts = point_id.split("/")
    return "/".join(parts[:2]) if parts[0] == "accelmark" else "/".join(parts[:-1])


LOSS_CAP = math.log(4.0)
""":func:`fitted_objective`'s default cap on one prediction's loss: a miss beyond 4x (or a saturated or missing
prediction) costs ``ln 4`` and pulls no constant further. ``planner calibrate-bench`` fits a user's own benchmark
under it; the published constants were fitted under it until session 23 (:data:`PUBLISHED_FIT_CAP_RATIO`)."""

PUBLISHED_FIT_CAP_RATIO = 1.5
"""The published constants' fit caps one prediction's loss at ``ln 1.5`` instead (session 23, rule T, variant B,
docs/serving.md): a miss beyond 1.5× (AccelMark's slow suite-C H200 host, vLLM 0.20's knees on the A100, dstack's two
MI300X builds) pulls no constant, so the runs the model can fit set its level. Kept on the training split: the share
within ±25 % 67.99 % to 69.36 %, no training median worse (TPOT 12.49 % to 12.03 %, TTFT 22.39 % to 18.07 %, output
tok/s 13.12 % unchanged)."""


def fitted_objective(rows: list[Row], *, per_run: bool = False, cap: float = LOSS_CAP) -> float:
    """The fit's loss: mean over metrics of the mean ``min(|ln(pred/meas)|, cap)`` of the rows (saturated or missing
    predictions of a measured metric count as a miss of ``cap``). ``cap`` defaults to :data:`LOSS_CAP` (``ln 4``,
    what ``planner calibrate-bench`` uses); ``tools/serving_fit`` passes ``ln`` :data:`PUBLISHED_FIT_CAP_RATIO`.

    ``per_run``: each benchmark run (:func:`run_key`) weighs as much in a metric's mean as any other, whatever its
    number of points. The points of one run share its host (CPU, drivers, software build): published runs of the
    same setup on two hosts differ by up to 1.9x in TPOT (AccelMark vLLM 0.7.3, H200), so twenty points of one
    host are one observation of that host's overheads, not twenty.
    """
    total = 0.0
    for metric in METRICS:
        losses: list[tuple[float, str]] = []
        for r in rows:
            if metric not in r.measured:
                continue
            pred = r.predicted.get(metric)
            if pred is None or not math.isfinite(pred) or pred <= 0:
                loss = cap
            else:
                loss = min(abs(math.log(pred / r.measured[metric])), cap)
            losses.append((loss, run_key(r.id) if per_run else r.id))
        if not losses:
            continue
        counts: dict[str, int] = {}
        for _, key in losses:
            counts[key] = counts.get(key, 0) + 1
        total += sum(loss / counts[key] for loss, key in losses) / len(counts)
    return total / len(METRICS)


def _reason(row: Row) -> str:
    """A short, rule-based reason for a large miss (the regime the point belongs to, not a diagnosis)."""
    if row.note.startswith(("not modelled", "published TPOT")):
        return row.note
    errs = {m: e for m in METRICS if (e := row.error(m)) is not None and math.isfinite(e)}
    worst = max(errs, key=lambda m: abs(errs[m]), default=None)
    source = row.id.split("/")[0]
    bits = []
    if "mi300x" in row.id or "mi325x" in row.id or "mi355x" in row.id:
        bits.append("AMD GPU: one ROCm factor per engine for all compute-bound kernels")
    if row.moe:
        bits.append("MoE (routing skew and expert load imbalance not modelled)")
    if source == "dstack-405b":
        bits.append("vLLM 0.6 (V0), 405B FP8 TP8: the H100 runs saturate from 16-32 sequences (the run's log records "
                    "56.77 GiB of weights a GPU, Meta's checkpoint, where the model counts 47.8: less KV); the two "
                    "MI300X builds err in opposite directions, unexplained")
    if source == "accelmark" and "vllm_47f5d58e" in row.id and worst in ("tpot", "ttft"):
        bits.append("vLLM 0.7.3 (V0) host CPU: per-sequence step cost differs up to 2x between runs of the same "
                    "GPU and model (H200 suites A and C: 14 vs 27 ms TPOT at 5 req/s)")
    long_context = "_suite_D_" in row.id  # AccelMark suite D: ~28,650-token prompts, dataset not stored
    if source == "accelmark" and "vllm020" in row.id and worst == "ttft" and row.note.startswith("harness") \
            and not long_context:
        bits.append("vLLM 0.20 engine built without max_num_seqs runs 128 requests; the run's p50 sits at the knee of "
                    "its queue (A100 80GB at 25 req/s: TTFT p50 75 ms, p90 4.3 s)")
    if long_context and row.note.startswith("harness") and worst in ("tpot", "ttft"):
        bits.append("suite D replayed with AccelMark's own Poisson arrivals for the 100 requests a run sent, every "
                    "prompt at the published p50 (the dataset is not stored); the queue of a run past capacity "
                    "follows the predicted throughput of 28K-token prompts")
    elif row.note.startswith("harness") and worst == "ttft":
        bits.append("replayed with AccelMark's own Poisson arrivals and prompt lengths, every request at the "
                    "published p50 output: the spread of the model's output lengths (responses that end before the "
                    "512-token cap free their slot early) is not published, so the cap fills too soon in the replay")
    if row.note.startswith("finite run"):
        bits.append("open loop past capacity, replayed as a finite run with even arrivals and uniform lengths "
                    "(dataset length spread and Poisson bursts not in it)")
    elif worst == "ttft" and not row.note.startswith("harness"):
        bits.append("TTFT of a finite run (ramp-up burst, p50 vs mean, arrival bursts)")
    if worst == "tpot" and row.concurrency_class == "low":
        bits.append("fixed per-step and multi-GPU costs at small batches")
    if "offline" in row.note:
        bits.append("short offline run (ramp-up and tail)")
    if "nvfp4" in row.id or "fp4" in row.id:
        bits.append("FP4 kernels")
    return "; ".join(dict.fromkeys(bits)) or "systematic (engine version, kernels)"


ANCHORS = (
    ("Vidur (discrete-event simulator)", "< 9% (latency, own validation)", "–", "–", "MLSys 2024 paper"),
    ("BLIS, trained", "20% (ITL)", "12%", "–", "its own validation data (issue 11)"),
    ("NVIDIA AIConfigurator", "25% (ITL)", "– (E2E 12%)", "–", "same data as BLIS (issue 11)"),
    ("pure roofline estimators", "54-56% (ITL)", "> 270%", "–", "issue 11"),
    ("planner roofline before issue 11 (issue's measurement)", "55%", "92%", "58%", "issue 11, 105 points"),
)
"""Published median absolute errors the issue sets as the bar (name, TPOT/ITL, TTFT, tok/s, where)."""


CHANGES_NEXT = (
    "2.2.0 published, held out: TPOT 21%, TTFT 37%, output tok/s 17%, 56% within ±25%. What changed since:",
    "",
    "- **AccelMark's own load** (Q8', `harness_trace`, `planner/data/benchmark_harnesses.json`): its online points "
    "are replayed request by request with the arrival times its load generator drew (`random.Random(42)`, "
    "`expovariate(qps)` per gap, levels and runs in suite order, `loadgen/loadgen.py`) and the prompt lengths of the "
    "first `online_request_count` requests of `sharegpt_standard_v1`, at any load (not only past capacity), the "
    "runs pooled into the p50 the source publishes. Outputs stay at the published p50 (the per-request output "
    "lengths are not published). Suite D's long-context dataset is not in the stored snapshot: uniform as before.",
    "- **Refit** on the training split after that change, warm-started from the 2.2.0 constants (`tools/serving_fit "
    "--warm --rounds 3`, acceptance hinge kept): training loss 0.3349 to 0.3331; what moved: vLLM V0's step cost "
    "3.2 to 4.0 ms, TP overhead 3.6 to 4.1 ms and TTFT overhead 43 to 38 ms, vLLM's TP overhead 16 to 10 µs, "
    "TensorRT-LLM's step cost 1.55 to "
    "1.38 ms, the all-reduce latency 4.4 to 4.9 µs, small per-sequence terms. The refit was planned before its "
    "held-out figures were read and is kept as fitted: held-out TPOT was 16% with the trace and the 2.2.0 constants, "
    "20% after the refit (TTFT 36% to 35%, ±25% share 56% to 57%). The trace replay itself answers issue 11's "
    "reading of the 2.2.0 held-out misses (the knee points).",
    "- A per-sequence multi-GPU step cost (`tp_seq_overhead_s`) was tried and not kept: it lowered the training "
    "loss by 0.1% (0.3331 to 0.3327), under the 1% rule set before its fit ended (docs/serving.md section 4).",
    "- Regime labels: an AccelMark online point's load class comes from the replay's time-averaged running batch.",
    "- **SGLang's own closed-loop runs** (Q8'', `trace_closed_run`, `bench_serving_lengths`): the cookbook's "
    "`random`-dataset runs replayed request by request with the lengths `sglang.bench_serving` draws "
    "(`np.random.seed(1)`, prompts uniform over 1..I, outputs over 0..O; they reproduce the published token totals "
    "exactly), the first `N` requests starting together and each completion starting the next, request 0 cached by "
    "the warmup request, and the first 10 (Medium) or 80 (High) prompts cached by the workload's previous run "
    "(same seed, same prompts; the assumption that the runs shared one server is docs/serving.md's, Q8''). Kept on "
    "the training loss before the held-out figures were read (0.3331 without, 0.3327 with the lengths and the "
    "warmup, 0.3318 with the previous run's cache too). Held out it did not help: with the same constants, TTFT "
    "35% to 37%, TPOT 20% to 20%, output tok/s 17% to 16%, ±25% share 57% to 57% (the predicted burst of a High "
    "run is gone, which fixes the 70B A100 runs, but the B200 MoE runs' TTFT is now predicted 30-65% low).",
    "- **Refit** after that change (`tools/serving_fit --warm --rounds 1`, acceptance hinge and per-run weighting "
    "kept), planned before and kept as fitted: training loss 0.3318 to 0.3226. Only SGLang's constants moved: its "
    "TTFT overhead 93 to 149 ms (the cookbook's one-client runs on B200 measure 110-170 ms for prompts that take a "
    "few ms to compute), per-sequence step cost 66 to 105 µs, fixed step cost 0.7 to 76 µs, ROCm efficiency 0.79 "
    "to 0.49. Held out: TPOT 20% to 20%, TTFT 37% to 37%, output tok/s 16% to 16%, ±25% share 57% to 56%.",
    "- **Every finite closed-loop run replayed** (`CLOSED_REPLAY`): the other closed-loop points with a published "
    "prompt count (AccelMark's interactive runs, the vLLM FP8-KV blog, the remaining cookbook runs, the "
    "TensorRT-LLM DeepSeek-R1 blog) are replayed step by step with their mean lengths (Q8'' with uniform lengths: "
    "all `N` clients start together, each completion starts the next request) instead of the steady state blended "
    "with the first wave's burst in the proportion `N/P`; the replay also gives the median where the source "
    "publishes one (the vLLM blog's median TTFT is not moved by the first wave). Kept on the training loss "
    "(0.3226 to 0.3211) before the held-out figures were read. Held out: output tok/s 16% to 15%; TPOT 20%, "
    "TTFT 37% and the ±25% share 56% unchanged.",
    "- **Second refit** after that (`tools/serving_fit --warm --rounds 1`), planned before and kept as fitted: "
    "training loss 0.3211 to 0.3203; only SGLang's ROCm efficiency (0.49 to 0.31) and fixed step cost (76 to 19 µs) "
    "moved. Held out: output tok/s 15% to 16%; TPOT 20%, TTFT 37%, ±25% share 56% unchanged.",
    "- Net effect of the last four items on the held-out split: TPOT 20% to 20%, TTFT 35% to 37%, output tok/s "
    "17% to 16%, ±25% share 57% to 56%: no target moved closer except output tok/s by one point; the targets (15%, "
    "25%, 15%, 70%) are still missed.",
    "- **One closed-loop method** (session 8): `performance(..., concurrency=N, num_prompts=P)` itself replays the "
    "finite run step by step (Q8'' with uniform lengths, `uniform_lengths`) instead of blending the steady state "
    "with the first wave's burst, so the library, `planner calibrate-bench` and these tables answer a run the same "
    "way (the tables now take the API's answer; no point moved: every figure above was unchanged by it).",
    "- **The first token's delivery** (session 8, docs/serving.md Q4'): vLLM V0's asynchronous output processing "
    "and SGLang's overlap scheduler hand a prefill step's token to the client only after the next step is "
    "scheduled and launched, so TTFT gains that step's fixed part (S2's `o_engine + o_tp·log2(tp·pp) + "
    "o_seq·(d + 1)`, no new constant). Diagnosed on the training split only (`tools/serving_residuals --split "
    "train`): one-client runs of vLLM V0 over-predicted (H200 28 ms measured, 50 ms predicted) while loaded runs "
    "were under-predicted, one fixed TTFT cost absorbing both. Rule set before the held-out figures were read: keep "
    "it if, refitted, it lowers the training loss. `tools/serving_fit --warm --rounds 1` with it: training loss "
    "0.3204 to 0.3185 (a second round moved nothing); only vLLM V0's TTFT overhead moved, 38 to 15 ms. Kept. Held "
    "out: TTFT 37% to 35%, ±25% share 56% to 57%, TPOT 20% and output tok/s 16% unchanged; on the training split "
    "the median TTFT error stayed at 36% (AccelMark's 39% to 42%: the fit lowers the mean log error, not every "
    "median). The targets (TTFT 25%, TPOT and tok/s 15%, 70% within ±25%) are still missed.",
    "- **Prompt steps without CUDA graphs** (session 8, docs/serving.md section 1, new constant "
    "`eager_layer_floor_s`): vLLM V0 and SGLang replay CUDA graphs only for decode batches, so a step with prompt "
    "tokens launches every kernel from Python and takes at least `L·f_eager` (MoE layers twice). Prompted by the "
    "training split's SGLang one-client runs (fixed TTFT part 34 ms for gpt-oss-120b, 100-166 ms for the deep "
    "DeepSeek-R1 and Qwen3-235B). The 1% rule for a new constant, compared at the same fitting step as the "
    "baseline (converged at 0.3185): 0.3144 with it, −1.3%, kept. Moved: `eager_layer_floor_s` 0.41 ms, SGLang's "
    "TTFT overhead 149 to 93 ms, per-sequence step cost 105 to 66 µs, fixed step cost 19 to 48 µs; vLLM V0's "
    "per-sequence step cost 142 to 89 µs. Training TTFT 36% to 34% (SGLang cookbook 37% to 28%). Held out, read "
    "after the decision: TTFT 35% to 41%, output tok/s 16% to 15%, TPOT 20%, ±25% share 57% to 56%. A finer "
    "extra round was run on the way and its held-out figures seen (TTFT 39%); it was not published because it "
    "refitted vLLM V1's step cost at a step size the baseline never had and moved the seed plan (docs/serving.md "
    "section 4 says so).",
    "- Net effect of session 8 on the held-out split: TPOT 20% to 20%, TTFT 37% to 41%, output tok/s 16% to 15%, "
    "±25% share 56% to 56%. Output tok/s (14.8% unrounded) meets its 15% target; the TTFT target (25%) is further "
    "away than before; TPOT (15%) and the ±25% share (70%) are still missed.",
    "- **Session 9, diagnosis** (training split only, docs/serving.md section 4): the three largest patterns are "
    "AccelMark's vLLM 0.7.3 hosts (TPOT −17% signed: the same GPU at 5 req/s measures 14.2 ms on one host and "
    "26.8 ms on another), AccelMark's vLLM 0.20 runs on the A100 80GB (TTFT 60% abs: light load too fast, the knee "
    "mostly 4.3-26x too slow, quantized TPOT half the measured) and vLLM V0 at TP8 (light loads twice too slow, "
    "loaded runs too fast). One-client TP1 TPOT is 6-17% too slow everywhere; the L4's one-client run needs a "
    "weight-streaming efficiency of at least 0.875, above the 0.80 the fit had never moved from.",
    "- **Tried, not kept: vLLM V1's prefix cache over AccelMark's repeated passes** (`V1_PREFIX_CACHE`, off; "
    "`cached_prompt_tail`, `accelmark_cached_runs`, `accelmark_cached_passes`): V1 caches prompts by default and "
    "AccelMark resends the same requests (warmups, `num_runs` passes, qps levels). Rule set before its fit: keep it "
    "if, refitted, it lowers the training loss. 0.3144 without; 0.3181 with it, 0.3154 and 0.3148 after one and two "
    "warm rounds: not kept, constants restored. No held-out figure of it was read. The output-length spread could not "
    "be tried: the stored `sharegpt_standard_v1` has no reference responses.",
    "- **Kept: a second start for the weight bandwidth** (`weight_bw_eff` 0.90, the L4 bound, with TensorRT-LLM's "
    "step cost doubled to keep the acceptance hinge at 0; start 0.3147), then `tools/serving_fit --warm --rounds 1` "
    "twice: training loss 0.3144 to 0.3132 (−0.4%), the rule set before (below 0.3144 with the hinge at 0) met, "
    "published as fitted. Moved: `weight_bw_eff` 0.80 to 0.90, TensorRT-LLM's step cost 1.38 to 2.76 ms, vLLM V0's "
    "step cost 4.0 to 6.5 ms and TP overhead 4.1 to 2.6 ms, SGLang's step cost 48 to 195 µs, vLLM V1's per-sequence "
    "cost 0.6 to 1.5 µs and TP overhead 10 to 4 µs. Training (medians): TPOT 17.6% to 18.9%, TTFT 33.8% to 34.1%, "
    "output tok/s 17.7% to 18.8%, ±25% share 56.9% to 57.2%. Held out, read after the decision: TPOT 19.9% to "
    "21.0%, TTFT 41.2% to 35.6%, output tok/s 14.8% to 16.9%, ±25% share 55.6% to 56.3%. Output tok/s no longer "
    "meets its 15% target; TPOT (15%), TTFT (25%) and the ±25% share (70%) are still missed. The seed plan's "
    "70B fleet moved with it (`planner size samples/seed.toml --months 12`: month 4's step is gone, month 5 is "
    "22 -> 24 replicas where it was 22 -> 26).",
    "- **Medians as the tools compute them** (`planner.serving.replay.MEDIAN_INTERPOLATED`): a replay's median "
    "of an even count is the mean of the middle two, as `np.median` (`vllm bench serve`, `sglang.bench_serving`) and "
    "`np.percentile(x, 50)` (AccelMark) give it, not the lower middle value. No constant; training loss 0.3132 to "
    "0.3131, a refit round moved nothing; kept. Held out: unchanged at the rounding above (TPOT 21.0%, TTFT 35.6%, "
    "output tok/s 16.9%, ±25% share 56.3%); training TTFT 34.1% to 34.4%.",
    "- **Tried, not kept: SGLang's multi-GPU cost per layer, not per step.** Its one-client TP8 runs cost about a "
    "fixed time per layer (gpt-oss-120b, 36 layers, 2.3 ms TPOT; Qwen3-235B, 94 layers, 10.2 ms) where "
    "`o_tp·log2(8)` alone is 7.7 ms. Restarted at SGLang `tp_overhead_s` 0.5 ms and refitted (three warm rounds, the "
    "last moving nothing): all-reduce latency 4.9 to 20 µs, training loss 0.3132, not below the 0.3131 the rule set "
    "before its fit required: dropped, constants unchanged, no held-out figure of it read. The same for every "
    "engine (SGLang 0.5 ms, vLLM V0 0.3 ms, all-reduce latency 20 µs, three warm rounds): 0.3137, dropped too.",
    "- **Merged with session 9's engine-memory catalog totals** (A100 80GB PCIe, H100 NVL, L40S and RTX 4090 at "
    "their driver- or torch-reported totals, section \"Session 9 (engine memory)\"; the serving model reads the KV "
    "room they leave), constants not refitted: held out TPOT 21.0%, TTFT 35.6% to 35.1%, output tok/s 16.9%, ±25% "
    "share 56.3%; training TPOT 19.3%, TTFT 33.9%, tok/s 18.8%, ±25% 57.2%.",
    "- Net effect of session 9 on the held-out split: TPOT 19.9% to 21.0%, TTFT 41.2% to 35.1%, output tok/s 14.8% "
    "to 16.9%, ±25% share 55.6% to 56.3%. Every target (TPOT and tok/s 15%, TTFT 25%, 70% within ±25%) is missed; "
    "output tok/s, which met its target after session 8, no longer does (the refit was kept on its training loss "
    "before its held-out figures were read, as the rules say).",
    "- **Session 10, diagnosis** (training split only, docs/serving.md section 4): TP1 dense TPOT errs both ways on "
    "one memory technology (H200, HBM3e: its suite-A host +35% at one client, its suite-C host −54% over 17 loaded "
    "points); the one-client runs leave vLLM V0 a fixed step of 1.7-4.4 ms at `η_w` 0.9 against the fitted 6.5 ms, "
    "which the slow hosts' loaded runs set. The ±25% misses: AccelMark's vLLM 0.7.3 online runs hold 113 of 281, "
    "the TensorRT-LLM overview's offline throughput 41 (36 of them MoE), dstack's 405B offline runs 31 (vLLM "
    "0.6.3 too high on H100 and MI300X, 0.6.4 too low on MI300X). TTFT by harness: the tools stamp the first token "
    "alike; their errors follow the load (queues) and the prompt's compute. The third "
    "pattern: AccelMark's 28,650-token prompts at one client are predicted +9% to +21% on the A100 but +2% and −6% "
    "on the H100 and H200, and +34% to +170% in the same runs past capacity.",
    "- **Tried, not added: a weight-streaming efficiency per memory technology** (HBM2/HBM2e, HBM3/HBM3e, GDDR6, "
    "GDDR6X), as the brief allows: by grid over 0.75-1.0 with the other constants as fitted, the best move per "
    "technology lowers the training loss by at most 0.34% (GDDR6X 0.75), GDDR6 wants the other way (1.0) and HBM3 "
    "rises either way; all together 0.3125 to 0.3113 (−0.4%), under the 1% rule for new constants. No held-out "
    "figure of it was read.",
    "- **Kept: the pre-Hopper attention kernels** (docs/serving.md section 1, `attn_eff_pre_hopper`, derived 0.70; "
    "the catalog's `compute_capability` below 9.0, `planner.serving.step.attention_eff`; a name set in "
    "`step.py` until the catalog carried the field, the same GPUs): vLLM runs FlashAttention-2 below compute "
    "capability 9 and "
    "FlashAttention-3 on Hopper (`FlashAttentionImpl`, `vllm/attention/backends/flash_attn.py`), and FA2 reaches up "
    "to 73% of an A100's peak (Dao 2023) where the fitted Hopper `attn_eff` is 0.44. Scaling all of the A100's "
    "compute instead lowers the training loss by at most 0.5%. Derived, not fitted: the loss keeps falling to the "
    "1.0 cap, flat within 0.1% above 0.7. Rule (section 4's standing 1% rule, written with its start's training "
    "loss known, before any held-out figure): one warm round with and without it, keep it if 1% below: 0.3125 "
    "without (the round moved nothing), 0.3092 with it (moved nothing), −1.1%, kept. Training: "
    "TPOT 19.3% to 20.0%, TTFT 33.9% to 31.5%, output tok/s 18.8% to 18.7%, ±25% share 57.2% to 57.3%. Held out, "
    "read after the decision: TPOT 21.0% to 21.0%, TTFT 35.1% to 35.0%, output tok/s 16.9% to 16.9%, ±25% share "
    "56.3% to 56.0%. Every target (TPOT and tok/s 15%, TTFT 25%, 70% within ±25%) is still missed; no sample or "
    "seed answer moved. The gain rests on few runs: the training split's three A100 suite-D runs (its only long "
    "prompts on a pre-Hopper GPU) improve, the vLLM 0.20 suite-D run's TPOT worsens, every other run moves by less "
    "than 0.015 in log error per point.",
    "- **Session 11, diagnosis** (training split only, docs/serving.md section 4). The three largest patterns: "
    "AccelMark's vLLM 0.7.3 online p50s (TPOT −8% signed / 24% abs over 124 points, TTFT −13% / 36%; H200 TPOT −40%, "
    "RTX 4090 −32%), vLLM 0.20 on the A100 80GB (TTFT at the knee 4-25x too slow, quantized TPOT about half the "
    "measured: W8A16 and W4A16 at 5 req/s −45% and −50%) and dstack's 405B runs (offline tok/s +18% / 42%, MI300X "
    "TPOT −14%, TTFT −23%). The H200's two hosts are one host type: suites A and C ran the same runner, load "
    "generator, engine arguments, driver, torch and CPU (Xeon Platinum 8558); the models differ (Llama-3 vs 3.1) but "
    "on seven other GPUs the two suites agree within 0-10% at 5 req/s. On the H200 suite C's five precisions measure "
    "26.1-31.8 ms whatever their weight bytes (suite A 14.2 ms) while its offline run matches suite A's (5,153 vs "
    "4,863 tok/s): its online steps were bound by the host, and its env_info lists all eight GPUs of the node where "
    "suite A's lists one. Nothing recorded in the run says more, so nothing is modelled for it.",
    "- **Kept: the engine arguments AccelMark's runs record** (`harness_settings`, `RECORDED_ENGINE_CONFIG`, "
    "`OFFLINE_QUANTIZATION`, `planner/data/benchmark_harnesses.json`; `performance(..., enforce_eager=, "
    "quantization=)`, docs/serving.md section 1). vLLM 0.20's suite-C W8A8, W8A16 and W4A16 result files record "
    "`task.extra_config.enforce_eager: true` (BF16 none): no CUDA graph, so every step takes the eager floor "
    "`L·f_eager`. Suite C's W4A16 offline runs get `quantization=\"gptq\"` from the runner's `LLM(...)`, which "
    "keeps vLLM on the ExLlama GPTQ kernels (`GPTQMarlinConfig.override_quantization_method`); above 50 tokens they "
    "rebuild the 16-bit weights before cuBLAS (`csrc/quantization/gptq/q_gemm.cu`), 4 more bytes per weight. No "
    "new constant. Rule set before the held-out figures were read: keep each if it lowers the training loss, then "
    "one warm refit round. Training loss 0.3092 to 0.3083 (eager), 0.3087 (gptq), 0.3079 (both); "
    "`tools/serving_fit --warm --rounds 1` then moved nothing (0.3079). Training: TPOT 20.0% to 19.3%, TTFT 31.5% "
    "to 29.9%, output tok/s 18.7% to 17.2%, ±25% share 56.9% to 57.8% (the W8A16 and W4A16 runs at 5 req/s −45% "
    "and −50% to −2% and −10%; the W4A16 offline runs +122%, +52%, +34%, +33% to +72%, +28%, +1%, +13%). Held out, "
    "read after the decision: TPOT 21.0% to 17.8%, TTFT 35.0% to 33.4%, output tok/s 16.9% to 16.1%, ±25% share "
    "55.6% to 57.4%. Every target (TPOT and tok/s "
    "15%, TTFT 25%, 70% within ±25%) is still missed.",
    "- **Tried, not added: vLLM V0's offline step costs apart from its streaming ones.** The offline `LLM` asks for "
    "final outputs only (`sp.output_kind = RequestOutputKind.FINAL_ONLY` in `LLM._validate_and_add_requests`), so "
    "V0 builds no per-step `RequestOutput` for it, where AccelMark's online engine streams one per sequence and step "
    "to its in-process clients; the training split's V0 offline runs on Hopper are predicted 20-29% slow. As two new "
    "constants (V0's step and per-sequence costs for offline runs, by grid: halves and quarters of the fitted 6.5 ms "
    "and 89 µs, and 0) the best lowers the training loss 0.3079 to 0.3070 (−0.3%, per-sequence cost halved), under "
    "the 1% rule: not added, no code kept, no held-out figure of it read.",
    "- **Tried, not kept: Meta's FP8 checkpoint for dstack's Llama-3.1-405B runs** (`checkpoint_recipe=\"meta-fp8\"`, "
    "`CHECKPOINT_RECIPE` off): `meta-llama/Llama-3.1-405B-FP8` keeps the attention layers and the first and last "
    "layers in BF16 (Llama 3 paper, section 6.2), 77 GB more weights over 8 GPUs, less KV room and a fifth of the "
    "GEMM FLOPs at the 16-bit peak. The training split's H100 offline throughputs move much closer (+125% to +246% "
    "down to +39% to +121% at the large batches), but the MI300X ShareGPT run's TPOT and TTFT move away, and per run "
    "the training loss rises 0.3079 to 0.3081 (a warm refit round moved nothing): not kept, no held-out figure of it "
    "read; the API argument stays.",
    "- **Session 11, second round: diagnosis** (training split only, docs/serving.md section 4; loss 0.3079, output "
    "tok/s +3% signed / 17% abs, TP8 +6% / 30% over 143 points). The three largest output-tok/s patterns: dstack's "
    "Llama-3.1-405B runs (+18% / 47%; the two MI300X builds of one node 2-4x apart: the amd checkpoint on vLLM 0.6.4 "
    "−37% to −59%, Meta's on 0.6.3 with 15 scheduler steps +21% to +105%, both eager); the TensorRT-LLM overview's "
    "MoE models at TP > 1 (Qwen3-235B TP8 −6% to −37%, Llama-4-Maverick TP8 −51% to +82% by GPU) and its dense 405B "
    "at TP8 (+12% to +31%); its one-GPU MoE runs on Blackwell (Qwen3-30B-A3B on GB200 +55% to +277%).",
    "- **Kept: the limits `trtllm-bench throughput` set for the TensorRT-LLM overview** (`trtllm_bench_settings`, "
    "`TRTLLM_BENCH_SETTINGS`, `planner/data/benchmark_harnesses.json` `trtllm_bench`; docs/serving.md section 2). The "
    "overview's runs pass no `--max_batch_size`/`--max_num_tokens`, so trtllm-bench sizes them from its KV estimate "
    "(`calc_engine_setting`, `finetune_setting` in `tensorrt_llm/bench/build/tuning.py`), chunked prefill is off "
    "(`max_num_tokens` at least ISL + batch, `bench/benchmark/utils/general.py`), and the MoE models run "
    "`enable_attention_dp` with per-rank limits; the loader had used TensorRT-LLM's 8,192-token / 2,048-sequence "
    "defaults and plain TP for all 145 points. No new constant. Rule set before the held-out figures were read: keep "
    "it if it lowers the training loss, then one warm refit round, published as it comes out. Training loss 0.3079 to "
    "0.3052 (the limits applied to the whole replica under attention DP, tried before the per-rank reading was "
    "confirmed in the code, gave 0.3027; per rank is what the code does). `tools/serving_fit --warm --rounds 1`: "
    "0.3052 to 0.3003, only TensorRT-LLM's constants moved (step cost 2.76 to 4.42 ms, per-sequence cost 0.006 to "
    "4.4 µs, TTFT overhead 11.2 to 7.0 ms). Training: TPOT 19.3% unchanged, TTFT 29.9% to 30.5%, output tok/s 17.2% "
    "to 15.8% (18.7% before the refit), ±25% share 57.8% to 59.8%. Held out, read after the decision: TPOT 17.8% "
    "unchanged, TTFT 33.4% to 34.0%, output tok/s 16.1% to 19.1% (20.3% before the refit), ±25% share 57.4% to 54.9%. "
    "Every target (TPOT and output tok/s 15%, TTFT 25%, 70% within ±25%) is still missed; output tok/s and the ±25% "
    "share are further from theirs held out than before. dstack's MI300X builds stay unexplained (the amd build's 33 "
    "ms step bounds a ROCm eager floor at 0.26 ms a layer, the meta build's 137 ms needs 1.09 ms: no one constant).",
    "- **Session 11, third round: TensorRT-LLM's step cost, diagnosed** (training split only, docs/serving.md section "
    "4; loss 0.3003). Patterns: Llama-3.1-8B's error changes sign with the shape (128/2,048-4,096 and 2,048/2,048 "
    "−22% to −37%, still −11% to −23% with no step cost at all; 128/128 and 2,048/128 +7% to +15%); Hopper at TP > 1 "
    "predicted fast (405B TP8 +10% to +26%, Maverick TP8 on H100 +21% to +55%) and Blackwell at TP8 slow (Maverick on "
    "B200 −10% to −41%); prompt-carrying shapes fast on every model (2,048/128 +12% to +43%; Qwen3-30B-A3B on GB200 "
    "+19% to +183%). The form of the step cost, one constant scanned per form before any fit: fixed 0.2994 at best, "
    "per layer 0.2991 (not separable), per sequence 0.75 or worse, host work overlapped with the GPU (`max` instead "
    "of the sum) 0.95 or worse: the fixed form is kept.",
    "- **Kept: TensorRT-LLM's PyTorch backend runs prompt-carrying steps without CUDA graphs** (`eager_prefill`, "
    "`TRTLLM_PYTORCH_SOURCES`; docs/serving.md sections 1 and 4): `PyTorchModelEngine._maybe_get_cuda_graph` "
    "(`tensorrt_llm/_torch/pyexecutor/model_engine.py`) replays a graph only for a generation-only batch, so those "
    "steps take the fitted eager floor `L·f_eager`, as SGLang's and vLLM V0's do. Applied to the sources that name "
    "the backend (the performance overview, the DeepSeek-R1 blog), not to NIM's tables (backend not stated). No new "
    "constant; rule set before it was run: keep it if it lowers the training loss, then one warm refit round, "
    "published as it comes out. Training loss 0.3003 to 0.2998 (Qwen3-30B-A3B on GB200 +20%..+183% to +15%..+169%), "
    "kept; `tools/serving_fit --warm --rounds 1`: 0.2998 to 0.2979, only TensorRT-LLM's constants moved (step cost "
    "4.42 to 2.76 ms, multi-GPU overhead 3.24 to 5.18 ms per `log2(tp·pp)`, TTFT overhead 7.0 to 11.2 ms). Training: "
    "TPOT 19.3% and TTFT 30.5% unchanged, output tok/s 15.8% to 15.2%, ±25% share 59.8% to 59.9% (the overview 12.9% "
    "to 11.3%). Held out, read after the decision: TPOT 17.8% unchanged, TTFT 34.0% to 33.2%, output tok/s 19.1% to "
    "17.8% (18.8% before the refit), ±25% share 54.9% to 56.3%. Every target (TPOT and output tok/s 15%, TTFT 25%, "
    "70% within ±25%) is still missed. Not addressed: Qwen3-30B-A3B on GB200 (+22% to +177%; measured slower than on "
    "B200 where the model predicts it faster; a factor on the GB200's (Grace host's) step costs, a new constant, "
    "lowers the training loss at best 0.2979 to 0.2970, −0.3%: not added), the 8B's decode-heavy shapes (−18% to "
    "−32%), Maverick TP8 on B200 "
    "(−12% to −47%).",
    "- **Published by the coordinator: `kv_bw_eff` restarted at 0.70** (`tools/serving_fit --warm --kv-start 0.7 "
    "--rounds 1`; the fit's ×1.6 step never tries it from 0.60; an existing constant, no new one). The helper who ran "
    "it had set the rule before running it (keep it if the converged training loss is below 0.2979 with the "
    "acceptance hinge at 0 and the boundary tests pass) and it met it: loss 0.2979 to 0.2959 (only TensorRT-LLM's "
    "TTFT overhead also moved, 11.2 to 7.0 ms); training TPOT 19.3% to 16.8%, TTFT 30.5% to 30.1%, output tok/s "
    "15.2% to 14.7%, ±25% share 59.9% to 59.6%. The helper left it unpublished for scope (it moves every engine and "
    "the samples' answers); the coordinator published it on that training rule, decided before any held-out figure "
    "of it was read, and redid the documents that quote the samples (samples/README.md 'Session 11 serving refits'). "
    "Held out, read after the decision: TPOT 17.8% to 18.0%, TTFT 33.2% to 33.9%, output tok/s 17.8% to 17.3%, ±25% "
    "share 56.3% to 56.3%. Every target (TPOT and output tok/s 15%, TTFT 25%, 70% within ±25%) is still missed.",
    "- **Session 11, latency9: TTFT diagnosed on the training split** (docs/serving.md section 4; loss 0.2960, TTFT "
    "−8% signed / 30% abs over 181 points; open loop −12% / 40%, closed −5% / 16%, offline −23% / 23%). Patterns: "
    "AccelMark's host-bound vLLM 0.7.3 runs (H200 −49% / 62%, RTX 4090 −35% / 48%; no mechanism); the knees of "
    "AccelMark's A100 runs (vLLM 0.20 at 25-100 req/s +315% to +2,206%; vLLM 0.7.3 at 50 req/s −84% to −87% for the "
    "weight-only FP8 and W4A16 runs, −56% BF16, +41% and +56% W8A8, where the model gave every precision the same "
    "157 ms); W8A8 on the A100 slow at every load (vLLM 0.7.3 TTFT +22% to +56%, offline output tok/s −15% and −22%).",
    "- **Kept: W8A8/INT8 GEMMs on the A100's INT8 tensor cores** (then `planner.serving.step.INT8_DENSE_OPS_PER_S`, "
    "since session 12 the GPU catalog's `int8_ops_per_s`: 624 "
    "TOPS dense, the A100 datasheet, twice its BF16 peak; vLLM's compressed-tensors `CompressedTensorsW8A8Int8` runs "
    "`cutlass_scaled_mm` on INT8 from compute capability 7.5; AccelMark's suite C: \"INT8 weights + INT8 activations "
    "via compressed-tensors. Exercises native int8 tensor cores\"). The model had given them the 16-bit peak, as an "
    "A100 has no FP8. No new constant (a datasheet figure). Rule set before it was run: keep it if it lowers the "
    "training loss, then one warm refit round, published as it comes out, decided before any held-out figure is read. "
    "Training loss 0.29595 to 0.29571, kept: vLLM 0.7.3's W8A8 TTFTs on the A100s +22%..+56% to −31%..+20%, their "
    "offline output tok/s −15% and −22% to +6% and +1%; vLLM 0.20's eager W8A8 run moved away (offline 3,176 tok/s "
    "measured, 4,214 to 5,356 predicted). Training: TPOT 16.8% to 18.1%, TTFT 30.1% to 29.4%, output tok/s 14.7% to "
    "14.5%, ±25% share 59.6% unchanged. Held out, read after the decision: TPOT 18.0% to 23.0%, TTFT 33.9% "
    "unchanged, output tok/s 17.3% to 17.8%, ±25% share 56.3% to 56.0%. Every target (TPOT and output tok/s 15%, "
    "TTFT 25%, 70% within ±25%) is still missed, TPOT further than before. No sample moved.",
    "- **Ran, not published: the warm refit round after it** (`tools/serving_fit --warm --rounds 1`: 0.29571 to "
    "0.29509; all-reduce latency 4.9 to 7.9 µs, SGLang's step cost 195 to 1 µs, vLLM V1's per-sequence cost 1.5 to "
    "2.4 µs; with the INT8 peak off its constants give 0.29535, so most of it is not the mechanism's). It moves the "
    "seed's forecast (`tests/test_forecast.py` month 5: replicas 22 -> 26 where the test expects 22 -> 24), outside "
    "this round's files, so the constants stay main's. Its held-out figures had been read when this was decided "
    "(TPOT 22.8%, TTFT 35.2%, output tok/s 17.7%, ±25% 56.0%); left to the coordinator.",
    "- **Coordinator's fix to latency9's INT8 peak: W8A16 is weight-only** (`w8a16`, a new weight dtype: 1 byte per "
    "weight, 16-bit tensor-core math on every GPU). AccelMark records its suite-C W8A16 runs (RedHatAI's W8A16 "
    "checkpoints, run by vLLM's Marlin / Machete weight-only kernels) and its W8A8 runs alike as `int8`, so the INT8 "
    "tensor-core peak latency9 gave `int8` on the A100 was applied to the W8A16 runs too, which never use INT8 math "
    "(an A100 W8A16 point's TPOT moved from -17% to -48%). The loader now scores an AccelMark `int8` run under "
    "`/w8a16/` as `w8a16` (`tests/test_serving_model.py::test_w8a16_is_weight_only_on_every_gpu`); this also takes "
    "the H100/H200 W8A16 runs off the FP8 peak `int8` had there. A correction by the code path, no constant: training "
    "loss 0.29571 to 0.2938 (TPOT 18.1% to 16.4%, TTFT 29.4% to 27.6%, output tok/s 14.5% to 14.1%, ±25% share 59.6% "
    "to 61.0%). Held out, read before the fix as latency9 published it (TPOT 23.0%, TTFT 33.9%, tok/s 17.8%, ±25% "
    "56.0%) and after it: TPOT 21.0%, TTFT 32.5%, output tok/s 17.3%, ±25% share 57.0%. The bug was found by listing "
    "the points the INT8 peak moved, prompted by the held-out TPOT jump: the fix is what the cited code path says, "
    "not a choice among fits, but it was looked for because of a held-out figure. Every target is still missed.",
    "- **Session 12, latency10: the open loop diagnosed on the training split** (docs/serving.md section 4; loss "
    "0.29382; open loop TPOT −12% signed / 22% abs over 121 points, TTFT −12% / 37% over 124, 45% within ±25%). "
    "Patterns: AccelMark's host-bound vLLM 0.7.3 runs (H200 suite C, RTX 4090: TPOT −42% / 42%, TTFT −49% / 62%, 39 "
    "points each; no mechanism); finite open-loop runs past capacity replayed with even arrivals (Q8), TTFT about "
    "twice the measured (AccelMark suite D +96% median over 8 points, dstack's 405B ShareGPT runs +76% over 8); vLLM "
    "0.20's knee on the A100 80GB (TTFT +517% median over 8 points, TPOT right).",
    "- **Kept: AccelMark suite D's online runs replayed as sent** (`harness_trace`, "
    "`planner/data/benchmark_harnesses.json` `datasets.sharegpt_longctx_v1`). The harness sends `requests[:200]` "
    "of a dataset that, by the published run durations, holds 100 requests (at 0.5 req/s the H100 and H200 runs "
    "ended after 204.3 s and 205.3 s; the harness's own `random.Random(42)` arrivals put the last of 200 requests "
    "at 400-450 s and the last of 100 at 198-202 s), so each run is replayed with the harness's Poisson arrivals "
    "for 100 requests, prompts at the published p50 (the dataset is not stored), instead of 200 evenly spaced "
    "requests. No constant. Rule set before it was run: keep it if it lowers the training loss. 0.29382 to 0.28822 "
    "(−1.9%; the arrivals alone with 200 requests: 0.29534), kept. Training: vLLM 0.7.3's suite-D TTFTs on the "
    "A100s +92%..+116% to −0%..+2%, vLLM 0.20's −12%..+33% to −52%..−33% (its chunked long-prompt steps are "
    "predicted fast: TPOT −26%, unchanged); TPOT 16.4% to 16.0%, TTFT 27.6% to 26.5%, output tok/s 14.1%, ±25% "
    "share 61.0% to 61.4%. Held out, read after the decision: TPOT 21.0% to 18.7%, TTFT 32.5% to 28.9%, output "
    "tok/s 17.3% unchanged, ±25% share 57.0% to 59.5%. Every target (TPOT and output tok/s 15%, TTFT 25%, 70% "
    "within ±25%) is still missed. No sample or seed answer moved (the accuracy loader only).",
    "- **Ran, not published: the warm refit round after it** (`tools/serving_fit --warm --rounds 1`: 0.28822 to "
    "0.28761, −0.2%; all-reduce latency 4.9 to 7.9 µs, SGLang's step cost 195 to 1 µs: latency9's unpublished round "
    "again). Its constants move the seed's forecast (`tests/test_forecast.py` month 5: replicas 22 -> 26 where the "
    "hand-worked month says 22 -> 24) and selfhost-kv's assistant binding (LOAD to TPOT), so by the rule set before "
    "it ran it is not published. Its held-out figures were seen only after that decision, while listing what it "
    "moves: TPOT 18.7%, TTFT 28.9%, output tok/s 17.4%, ±25% share 59.9%. Left to the coordinator.",
    "- **Tried, not kept: vLLM's KV admission by the prompt alone** (V0 `BlockSpaceManager.can_allocate`, V1 "
    "`KVCacheManager.allocate_slots`; preemption when a decode step finds no block) approximated as a running cap of "
    "`KV / (I + O/2)` instead of `KV / (I + O)`: training loss 0.28822 to 0.28698 (−0.4%), the KV-bound RTX 4090 "
    "runs' TPOT closer (−24%..−43% to −1%..−26%) but their TTFT further and the offline waves, whose requests do "
    "reach `I + O` together, the wrong way (+69% to +135%, +84% to +142%). Tried on the training loss before a rule "
    "was written for it, so not kept; the token-level admission with preemption it stands for was not built. No "
    "held-out figure of it was read.",
    "- **Kept: vLLM V0's KV admission with preemption in the step-by-step replays** (`replay._replay_trace_kv`, "
    "`KV_ADMISSION`; the rule written before it was built: keep it if it lowers the training loss). V0 without "
    "chunked prefill admits a waiting prompt while its blocks fit the free KV less the 1% watermark "
    "(`BlockSpaceManager.can_allocate`) and, when a decode step's tokens do not fit, preempts the most recently "
    "admitted request (`Scheduler._preempt`, RECOMPUTE: requeued at the head, prompt and generated tokens prefilled "
    "again); the replay had capped the batch at `KV / (I + O)`. No constant; the steady state (template, sheet "
    "functions, `planner size`) is unchanged. Training loss 0.28822 to 0.28115 (−2.5%; a first run with an "
    "admission bug gave 0.28529), kept: the KV-bound RTX 4090 and L4 runs' TPOT −14%..−43% to −20%..+6%, the RTX "
    "4090 suite-A TTFT at 25 req/s +4,536% to −19%, but several RTX 4090 suite-C TTFTs further off (−16% to −93% at "
    "its worst) and the eight-RTX-4090 offline run +69% to +130%. Training: TPOT 16.0% to 12.9%, TTFT 26.5%, output "
    "tok/s 14.1%, ±25% share 61.4% to 62.8%. Held out, read after the decision: TPOT 18.7% to 15.4%, TTFT 28.9% to "
    "31.3%, output tok/s 17.3% to 17.5%, ±25% share 59.5% unchanged. No refit round (it would repeat the one above).",
    "- Net effect of session 12 (latency10) on the held-out split: TPOT 21.0% to 15.4%, TTFT 32.5% to 31.3%, output "
    "tok/s 17.3% to 17.5%, ±25% share 57.0% to 59.5%. Every target (TPOT and output tok/s 15%, TTFT 25%, 70% within "
    "±25%) is still missed; TPOT is 0.4 points from its target.",
    "- **Kept (latency12): vLLM V1's async scheduling** (`schedule.async_scheduling_default`, "
    "`ASYNC_SCHEDULING_SINCE`). From the release of the training split's V1 runs (vLLM 0.20; the default came with "
    "vllm-project/vllm#27614: `VllmConfig.__post_init__` resolves `async_scheduling=None` to True \"unless there is "
    "an incompatible option\") `EngineCore.step_with_batch_queue` schedules batch n+1 right after submitting batch "
    "n, so a request that arrives while batch n runs enters batch n+2: one more step of wait than the synchronous "
    "scheduler, none on an idle engine. In the replays the request is admitted one step later; in the steady state "
    "TTFT gains `a·t_d` (Q4''). Not applied to an unnamed release, releases before 0.20 or pipeline parallelism. "
    "Diagnosis first (training only): vLLM 0.20's online TTFT at 5-10 req/s −19% to −57% while its one-client runs "
    "were right. No constant; rule set before it was run: keep it if it lowers the training loss. 0.28115 to 0.28018 "
    "(−0.35%, hinge 0), kept: those seven points to −43%..+12% (BF16 at 10 req/s −28% to +0%). Training: TTFT 26.5% "
    "to 25.9%, ±25% share 62.8% to 63.3%, TPOT and output tok/s unchanged. Held out, read after the decision: TTFT "
    "31.3% to 30.2%, ±25% share 59.5% to 60.6%, TPOT 15.4%, output tok/s 17.5%.",
    "- **Kept (latency12): SGLang's overlap scheduler admits a request one step late too** (`event_loop_overlap` "
    "receives requests, schedules and launches batch k, then waits for batch k−1's result: batch k+1 is scheduled "
    "when batch k starts; `SGLANG_OVERLAP_ADMISSION`), every SGLang release without pipeline parallelism. Rule set "
    "before it was run: keep it if it lowers the training loss below 0.28018. 0.28018 to 0.27891 (−0.45%, hinge 0), "
    "kept. Training: the cookbook's 16-64-client TTFTs 5-10 points closer (Qwen3-235B 64 clients −15% to −5%, "
    "DeepSeek-R1 −26% to −17%), its 100-client runs further (+16% to +37%, +30% to +42%, −1% to +12%), one-client "
    "runs unchanged: the cookbook's TTFT median abs 29% to 35%, its ±25% share 62% to 65%; all training TTFT 25.9% to "
    "24.0%, ±25% share 63.3% to 63.6%. Held out, read after the decision: TTFT 30.2% to 28.7%, ±25% share 60.6% to "
    "60.9%. No sample or seed answer moved (`tools/regenerate` changed `docs/accuracy.md` only: the samples are "
    "sized with vLLM without a release named, which keeps the synchronous scheduler).",
    "- Net effect of latency12 on the held-out split: TTFT 31.3% to 28.7%, ±25% share 59.5% to 60.9%, TPOT 15.4%, "
    "output tok/s 17.5%; training loss 0.28115 to 0.27891, no constant refitted. Every target (TPOT and output tok/s "
    "15%, TTFT 25%, 70% within ±25%) is still missed; TTFT is 3.7 points from its target.",
    "- **One GEMM peak for latency and for COMPUTE** (coordinator, session 12): `planner.latency.flops_for`, the peak "
    "a fleet's COMPUTE capacity is counted at, now is the serving model's `gemm_peak_flops` (moved from "
    "`planner/serving/step.py` to `planner/latency.py`): FP4 tensor cores for nvfp4/mxfp4, FP8 for int8 where the GPU "
    "has it, the INT8 peak for W8A8 on the A100; before, the COMPUTE column counted those at the 16-bit peak while "
    "their latency used the others. No serving prediction moved; the old roofline's rows above did (held-out output "
    "tok/s 155% to 168%), because that baseline calls `flops_for`: it now runs FP4 and INT8 models at the peaks the "
    "serving model uses.",
    "- **Session 12, latency11: dstack's Llama-3.1-405B runs diagnosed on the training split** (docs/serving.md "
    "section 4; loss 0.28115; 74 training predictions, 27% within ±25%: offline output tok/s +19% signed / 46% abs "
    "over 58 points, ShareGPT TTFT +76% / 76% over 8). Patterns: the H100 offline runs saturate from 16-32 "
    "sequences where the model climbs (2,048/2,048 +59% to +136% at 32-256 prompts; the run's log records 56.77 GiB "
    "of weights a GPU, the model counts 47.77: Meta's checkpoint's BF16 attention, excluded from this round); the "
    "two MI300X builds err in opposite directions (amd −37% to −59%, meta +22% to +105%); the ShareGPT runs were "
    "replayed with even arrivals and uniform lengths although their result files record every request's lengths.",
    "- **Tried, not kept (no constant; the rule, written before each was built: keep if the training loss falls "
    "below 0.28115 with the hinge at 0): the ShareGPT runs as benchmark_serving sent them** "
    "(`dstack_sharegpt_trace`, `planner/data/benchmark_harnesses.json` `dstack_sharegpt`: `np.random.seed(0)` "
    "exponential gaps, the recorded prompt lengths, and the recorded output lengths of the six stored result "
    "files): 0.28115 to 0.28310 (the H100's output tok/s +43% to +10%..+16%, but the meta MI300X run's TPOT +11% to "
    "+83%); **with vLLM V0's multi-step scheduling** (`num_scheduler_steps` 15 recorded for the MI300X serving "
    "runs; its replay code is not kept, commit 0da57e4 has it): 0.28312; the multi-step windows alone: "
    "0.2811493, unchanged. `DSTACK_TRACE` is off; nothing moved, held out or "
    "training (held out TPOT 15.4%, TTFT 31.3%, output tok/s 17.5%, 59.5% within ±25%). Measured outside any rule "
    "and not kept: the trace for the H100's single-step runs only, 0.28070. Every target is still missed.",
    "- **Kept (latency11): vLLM V0 decodes without CUDA graphs past `max_seq_len_to_capture`** (default 8,192; "
    "`ModelRunner._use_captured_graph` needs `max_decode_seq_len <= max_seq_len_to_capture`): a V0 replica whose "
    "mean decode context `I + O/2` exceeds it takes the eager floor on every step, as `enforce_eager` does "
    "(`planner.serving.step.v0_decode_eager`, `performance(..., max_seq_len_to_capture=)`). No constant; rule set "
    "before it was built: keep if the training loss falls below 0.28115. 0.2811493 to 0.2809657 (−0.07%), kept. "
    "Training: dstack's H100 32,784/2,048 offline runs +140% and +252% to +46% and +144% output tok/s; AccelMark's "
    "vLLM 0.7.3 suite-D one-client TPOT A100 80GB −41% to −36%, H100 +14% to +66%, H200 −29% to +22%; dstack's "
    "MI300X 10,000-token runs within 3 points; medians unchanged (TPOT 12.90% to 12.89%). Held out, read after the "
    "decision: TPOT 15.4%, TTFT 31.3%, output tok/s 17.5% unchanged, ±25% share 59.5% to 59.2%. Every target is "
    "still missed. No sample or seed answer moved.",
    "- **Tried and dropped (latency13): SGLang's fixed TTFT cost per prompt step instead of per request.** Diagnosed "
    "on the training split: SGLang's one-client TTFT predicted +5% to +313% (median +35%, 7 points) with the fitted "
    "93 ms `o_ttft`, which SGLang's request path (HTTP, tokenization, ZMQ hops, detokenizer) does not hold. Built: "
    "SGLang's `o_ttft` at vLLM V1's 3.09 ms and a new constant, SGLang's own eager floor for its prompt (`EXTEND`) "
    "steps, fitted alone (0.93 ms a layer). Rule set before it was run (a new constant, section 4's 1% rule): keep "
    "it only below 0.27612. Training loss 0.27891 to 0.27820 (−0.25%, hinge 0): dropped, code removed, nothing "
    "published moved. On the training split it brought Llama-3.1-70B's and DeepSeek-R1's one-client TTFT closer "
    "(+35% to −21%, +29% to +8%) but Qwen3-235B's further (+71% to +78%) and raised the loaded runs' TPOT (Qwen3-235B "
    "at 64 clients 0% to +28%): the one-client excess is not engine time paid per prompt step. vLLM 0.7.3 at TP8 "
    "(the brief's second pattern) is the step's multi-GPU cost (its one-client TPOT 12.3 ms measured, 14.2 ms of "
    "fixed step parts predicted), not addressed (docs/serving.md, session 12, latency13). Held out unchanged: TPOT "
    "15.4%, TTFT 28.7%, output tok/s 17.5%, 60.9% within ±25%.",
    "- **The refit round stays unpublished** (coordinator, session 12; latency9's and latency10's round, the same "
    "both times: all-reduce latency 4.9 to 7.9 µs, SGLang's fixed step cost 195 to 1 µs, training loss −0.2%). What "
    "had held it back, `tests/test_forecast.py`'s literal month-5 step, is gone: the step is now checked against the "
    "plan re-evaluated at that demand and replica count. Decided on the training figures: a 0.2% gain, smaller than "
    "the 1% the fitting rules ask of a new constant, that drives one constant to the edge of its range (a flat "
    "objective, not a measured SGLang cost) and flips `samples/selfhost-kv`'s documented LOAD binding to TPOT. Its "
    "held-out figures had been seen by both helpers (neutral: TPOT 18.7% either way) and did not decide it. Rerun at "
    "the session's end (training only, reverted, no held-out figure read): 0.2785165 to 0.2759 (−0.94%), the same two "
    "constants to the same places, the first-token overheads down (SGLang 93 to 58 ms, vLLM V1 3.1 to 1.2 ms); by the "
    "same rule not published.",
    "- **Tried, not kept (coordinator): Meta's FP8 checkpoint recipe again** for dstack's `1FP8-meta` runs "
    "(`CHECKPOINT_RECIPE`), since their log records 56.77 GiB of weights per GPU (latency11) and this session's V0 KV "
    "admission makes KV room matter in the replays. Rule before it ran: keep it if the training loss drops below "
    "0.2787223. It gave 0.2789218 (training output tok/s 14.1% to 13.8%, ±25% share 63.6% to 63.7%): not kept. No "
    "held-out figure of it was read.",
    "- **Tried and dropped (latency15): a per-sequence multi-GPU step cost for vLLM V0** (`tp_seq_overhead_s`, "
    "refitted for `vllm-v0` alone under today's model). Read from V0's code: at `tp > 1` a step adds one pickled "
    "message on the shared-memory queue and a fixed set of NCCL broadcasts of the model input "
    "(`broadcast_tensor_dict`: 24 B a token, a block-table row a sequence), the per-layer all-reduces (S5) and the "
    "logits' gather to the driver (`(tp−1)/tp·V·2 B` a sampled sequence, 0.5 µs on an H200's NVLink): fixed plus a "
    "small per-sequence part. Rule set before the fit (the 1% rule): keep it only below 0.2759. `bench.fit` on that "
    "constant alone, 3 rounds from 1 µs: 4.1 µs a sequence and doubling, training loss 0.2787223 to 0.2777732 "
    "(−0.34%, hinge 0): dropped, nothing published moved. Training medians unchanged (TPOT 13%, TTFT 24%, output "
    "tok/s 14%, ±25% share 64%; vLLM 0.7.3's TPOT 18% to 17%). No held-out figure of it was read; held out as "
    "before: TPOT 15.4%, TTFT 28.7%, output tok/s 17.5%, 60.6% within ±25% (docs/serving.md, session 12, latency15).",
    "- **vLLM V1's KV admission and preemption in the step-by-step replays** (latency14, "
    "`planner.serving.replay._replay_trace_kv_v1`, `KV_ADMISSION_V1`, `V1_PREEMPTED_BLOCKS_CACHED`; "
    "`Scheduler.schedule` and `KVCacheManager.allocate_slots`: running requests first, each allocating the blocks of "
    "the tokens it computes, the last running request preempted when they do not fit; waiting requests admitted by "
    "their first chunk's blocks, and only in a step without preemption; 16-token blocks; a preempted request's full "
    "blocks stay in V1's prefix cache until reused, its partial block first in line for reuse, as "
    "`BlockPool.free_blocks` orders them; that ordering, read afterwards, left the loss at 0.2785165). No constant, "
    "no refit. Rule before it ran: keep it if the "
    "training loss drops below 0.2787223. Tried first without the prefix cache (a preempted request recomputed from "
    "0): 0.2787852, not kept (the long-prompt offline waves thrash: suite D's offline run +9% to −60%, the 405B's "
    "32,784/2,048 at 32 prompts +16% to −83%). With it: 0.2785165 (−0.07%), kept: suite D's online runs on the A100 "
    "80GB TPOT −26% to −23%, TTFT −52%..−33% to −53%..−34%, the 405B on 4×MI300X 2,048/2,048 at 256 prompts +24% to "
    "+2% output tok/s; training output tok/s 14.1% to 13.9%, ±25% share 63.6% to 64.0%. Not KV-bound, so not moved: "
    "the A100 80GB knee (128 sequences, KV for 832). Held out unchanged: TPOT 15.4%, TTFT 28.7%, output tok/s "
    "17.5%, 60.6% within ±25%. No sample or seed answer moved (the steady state keeps the `KV/(I + O)` cap).",
    "- **Looked at, not built (latency16): SGLang's KV admission and retraction in the replays.** Read from SGLang "
    "0.5.6 (`PrefillAdder`: a request is refused only when its prompt plus `min(max_new_tokens, 4096)` reaches the "
    "free and evictable KV less the running requests' remaining outputs times `new_token_ratio`, 0.7 decaying to "
    "0.098; `retract_decode` only when a decode step's tokens do not fit; `max_running_requests` at least 2,048). In "
    "the cookbook's 16-100-client training runs the clients' whole prompts and outputs (clipped at 4,096) take at most "
    "45% of the KV pool (Llama-3.1-70B on 8×A100 80GB at 64 clients, 569k of 1.27M tokens; the others 0.5% to 29%), so "
    "the admission never binds and no request is retracted. Rule before anything was built: build it only if a "
    "training run can be bounded by it (then keep it below a training loss of 0.2785165). None can: nothing built, "
    "nothing published moved. Found on the way, not addressed: on 80-90 GB GPUs SGLang chunks a second prompt into "
    "a prompt step's leftover (`max_prefill_tokens` 16,384 above `chunked_prefill_size` 8,192), which the replay "
    "does not (docs/serving.md, session 12, latency16).",
    "- **Published (coordinator): the first-token overheads refit alone** (`tools/serving_fit --warm --rounds 1 "
    "--only ttft_overhead_s`; the rule written before it ran: publish if the training loss drops below 0.2785165, no "
    "`o_ttft` lands below 0.1 ms, and every sample still binds where its note says). vLLM V1 3.1 to 1.2 ms, SGLang 93 "
    "to 58 ms, vLLM V0 and TensorRT-LLM unchanged; training loss 0.2785165 to 0.2766570 (−0.67%), training TTFT "
    "24.0% to 23.9%, ±25% share 64.0% to 64.2%. Published by the rule. Held out, read after the decision: TTFT 28.7% "
    "to 31.3% (worse), ±25% share 60.6% to 59.2%, TPOT and output tok/s unchanged. The samples' TTFT at load drops "
    "about 2 ms; no binding, replica count or cost moved (samples/README.md).",
    "- Net effect of session 12 on the held-out split (main after latency10-16 and the coordinator's changes): TPOT "
    "21.0% to 15.4%, TTFT 32.5% to 31.3%, output tok/s 17.3% to 17.5%, ±25% share 57.0% to 59.2%; training loss "
    "0.29382 to 0.27666 (training TPOT 16.4% to 12.9%, TTFT 27.6% to 23.9%, output tok/s 14.1% to 13.9%, ±25% share "
    "61.0% to 64.2%). Every target (TPOT and output tok/s 15%, TTFT 25%, 70% within ±25%) is still missed; TPOT is "
    "0.4 points from its target, TTFT 6.3, output tok/s 2.5, the ±25% share 10.8.",
    "- **Tried, not kept (session 13, latency17): vLLM V0's per-sequence step cost overlapped with the GPU (S2'').** "
    "Read from vLLM 0.7.3 (its PyPI wheel): `ModelRunner.execute_model` launches the forward, then runs the previous "
    "step's `_process_model_outputs` (detokenisation, stop checks, `RequestOutput`s, `MQLLMEngine`'s socket send) "
    "through `async_callback` before the sampler waits for the GPU; scheduling and input preparation stay serial; the "
    "only context-dependent host work, the block-table copy, is about 1 µs a sequence at AccelMark's 280/310 and 30 µs "
    "at suite D's 28,650-token prompts (measured on this machine's CPU), too small to try. Form with no new constant: "
    "`t = o_engine + o_tp·log2(tp·pp) + max(t_body + t_comm, o_seq·(d + n_p))` (off with `enforce_eager` or `pp > "
    "1`). Rule before it ran: refit V0's `step_overhead_s` and `per_seq_overhead_s` alone (`--warm --rounds 3`) "
    "under S2 (B0) and S2'' (A); keep S2'' only below both 0.2766570 and (B0). (B0) 0.2748971 (5.12 ms, 112 µs); "
    "(A) 0.2860176 (8.19 ms, 202 µs), and from a second start at 4 ms and 0.2 ms the same 0.2860: dropped "
    "(`planner.serving.step.V0_ASYNC_OUTPUT_OVERLAP` False). Training TPOT of vLLM 0.7.3 by load (high open / low "
    "closed / low open): main −9.9% / +22.5% / +24.9%, (B0) −7.8% / +14.2% / +11.9%, (A) −12.3% / +33.9% / +46.8%: "
    "the loaded runs want the per-sequence cost added to the GPU's step, not hidden. Nothing published moved; held "
    "out (read after the decision): main TPOT 15.4%, TTFT 31.3%, output tok/s 17.5%, 59.2% within ±25%; (B0) 15.4%, "
    "30.3%, 17.4%, 60.6%; (A) 18.7%, 27.2%, 17.7%, 59.5%. (B0), a refit without a mechanism, is reported and not "
    "published (docs/serving.md, session 13, latency17).",
    "- **Session 13 (latency18): MoE's routed-token activation traffic (S7)**, read from the engines' kernels "
    "(TensorRT-LLM's CUTLASS `CutlassMoeFCRunner::runMoe`: the permuted copy written at the GEMM's input precision, "
    "the 16-bit gate and up outputs read and the activation written by `doActivation`, the finalize fused into the "
    "second GEMM; vLLM's and SGLang's Triton `fused_experts_impl`: `silu_and_mul`, `moe_sum` and the 8-bit "
    "quantisation passes), added to each step as memory-bound time at `weight_bw_eff`, no new constant "
    "(docs/serving.md, session 13, latency18). Rule written before it ran: keep it if the training loss falls. "
    "Training loss 0.2766570 to 0.2749068 (−0.63%; 0.2751093 with a first version that divided the permute term by "
    "`ep`, dropped because the Triton path runs its passes over all rows under EP), kept; training output tok/s "
    "13.9% to 13.5%, ±25% share 64.2% to 64.5%, TPOT and TTFT unchanged. The overview's MoE runs moved little: "
    "Qwen3-30B-A3B +37.6% to +36.5% median "
    "(its prompt steps sit on the eager floor, 2·48·0.41 ms = 39 ms, which the added 0.6-2.4 ms a step does not "
    "cross), Qwen3-235B-A22B +2.8% to +0.3%. Tried, not kept: a refit of `moe_eff` alone (`tools/serving_fit --warm "
    "--rounds 1 --only moe_eff`) moved nothing (0.4218). Held out, read after the decision: TPOT 15.4% "
    "unchanged, TTFT 31.3% to 30.3%, output tok/s 17.5% to 17.3%, ±25% share 59.2% to 59.9%; every target is still "
    "missed. No sample's or seed plan's answer moved (dense models only).",
    "- **Session 13 (latency19): every layer's non-GEMM activation traffic (S8), tried, not kept.** Read from the "
    "engines' code: residual add + RMSNorm in place twice a layer (`8h` each: vLLM `ops.fused_add_rms_norm`, SGLang "
    "`fused_add_rmsnorm`, TensorRT-LLM's PyTorch `RMSNorm` with the residual), the quantisation before each FP8/FP4 "
    "GEMM (`(2 + a)` bytes an element: vLLM `ops.scaled_fp8_quant`, TensorRT-LLM `static_quantize_e4m3_per_tensor`; "
    "TensorRT-LLM's attention writes its output quantised), RoPE in place in vLLM and SGLang (fused into "
    "TensorRT-LLM's attention op) and SiLU-and-mul (`6I`); Llama-3.1-8B FP8 on an H100: 7.0 MB a token (TensorRT-LLM),"
    " 8.1 MB (vLLM) (`planner.serving.step.layer_activation_bytes_per_token`, switch `LAYER_ACT_TRAFFIC`, off). Rule "
    "written before it ran: keep it if the training loss, acceptance hinge included, falls below 0.2749068; a variant "
    "S8p (prompt tokens only) written with it. Training loss 0.2749068 to 0.2722102 (S8) and 0.2727608 (S8p), but the "
    "acceptance hinge 0 to 1.133 and 0.910 (NIM Llama-3.3-70B FP8 on 2×H100, 5,000/500 at 50 clients: in flight 48.4 "
    "to 60.5, TPOT 58.4 to 73.1 ms against 59.7 measured): **neither kept**, no constant refitted. Read after the "
    "decision: the overview's prompt-heavy shapes moved as the brief expected (Llama-3.1-8B H100 2,048/128 +18.6% to "
    "+2.1%, 128/128 +11.7% to −2.5%) and its long-output shapes further slow (128/4,096 −25.1% to −27.0%); held out "
    "with S8 on: TPOT 15.4% to 15.5%, TTFT 30.3% to 29.2%, output tok/s 17.3% to 12.8%, ±25% share 59.9% to 63.0% "
    "(S8p: 15.2%, 28.6%, 13.4%, 62.3%). Nothing published moved (docs/serving.md, session 13, latency19).",
    "- **Session 13, the coordinator: refits ran, none published** (docs/serving.md, \"Session 13, the "
    "coordinator\"; every rule written before its fit ran, every decision on training figures). One warm round after "
    "S7 (`tools/serving_fit --warm --rounds 1`): 0.2749068 to 0.2740872 (−0.30%, under the rule's 0.5%). Three rounds: "
    "0.2718552 (−1.11%), but SGLang's fixed step cost at 1.11 µs, the flat direction the rule's 1 µs bound was meant "
    "to catch; rerun with it held at 195 µs: 0.2713188 (−1.31%), which failed the rule's test criterion "
    "(`tests/test_forecast.py::test_tpot_is_recomputed_not_scaled` read the seed's fleet step as TPOT-bound; with "
    "these constants LOAD, 84%, passes TPOT, 83%); the test was rewritten after the decision to check the recomputed "
    "TPOT in every month TPOT binds, whatever names the step. S8 (latency19) with a three-round refit: 0.2697310 with "
    "the acceptance hinge at 0, below the no-S8 refit, but `weight_bw_eff` and `kv_bw_eff` at their cap of 1 (100% "
    "of peak HBM bandwidth): not published; S8p with a refit 0.2722704, above the no-S8 refit. Held out, read after "
    "the decisions (latency19 had read S8's own before the S8 rule was written): S8 with its refit TPOT 12.2%, TTFT "
    "28.3%, output tok/s 12.8%, 63.7% within ±25%; no figure of the no-S8 refits was read.",
    "- Net effect of session 13 on the held-out split (main after latency17-19 and the coordinator's decisions; S7 is "
    "the only published change to a prediction): TPOT 15.4% unchanged, TTFT 31.3% to 30.3%, output tok/s 17.5% to "
    "17.3%, ±25% share 59.2% to 59.9%; training loss 0.2766570 to 0.2749068. Every target (TPOT and output tok/s 15%, "
    "TTFT 25%, 70% within ±25%) is still missed: TPOT by 0.4 points, TTFT 5.3, output tok/s 2.3, the ±25% share 10.1.",
    "- **Session 14 (latency20): S8 counted only beyond each GPU's last cache (S8L), tried, not kept.** Each of S8's "
    "passes counted as `max(0, M·b − C)` bytes (`M` the step's tokens, `b` the pass's bytes a token, `C` the L2, or "
    "the Infinity Cache on the MI300-series; `planner.serving.step.layer_activation_passes`, switch `LAYER_ACT_L2`, "
    "off); cache sizes with sources in planner/data/gpus.json (`l2_cache_bytes`, `infinity_cache_bytes`; null where "
    "unsourced). Rule written before it ran: keep only if the training loss with the acceptance hinge falls below "
    "0.2749068 unrefitted. 0.2735697, but the hinge 0 to 0.4962 (the acceptance case's in flight 48.4 to 56.7): **not "
    "kept**, no refit. Held out, read after the decision: TPOT 15.4%, TTFT 30.3%, output tok/s 17.3% to 13.5%, ±25% "
    "share 59.9% to 62.0%. Nothing published moved (docs/serving.md, session 14, latency20).",
    "- **Session 14, the coordinator: session 13's no-S8 refit published under a rule written first** (docs/serving.md"
    ", \"Session 14, the coordinator\"; its training figures were known from session 13, its held-out ones never "
    "read before the decision). `tools/serving_fit --warm --rounds 3`, SGLang's fixed step cost held at 195 µs: "
    "training loss 0.2749068 to 0.2713188 (−1.31%), hinge 0, no time constant driven below 1 µs, no efficiency at its "
    "cap. Moved: vLLM V0's fixed step 6.48 to 5.12 ms, per-sequence 89 to 112 µs, TP cost 2.56 to 1.60 ms, first-token "
    "overhead 15.0 to 13.3 ms; vLLM V1's fixed step 2.46 to 1.94 ms, per-sequence 1.5 to 20 µs, first-token overhead "
    "1.2 ms to 28 µs; TensorRT-LLM's fixed step 2.76 to 2.46 ms, first-token overhead 7.0 to 7.9 ms; SGLang's "
    "per-sequence 66 to 58 µs, first-token overhead 58 to 46 ms, ROCm efficiency 0.31 to 0.27; eager layer floor 0.41 "
    "to 0.52 ms; `attn_eff` 0.445 to 0.395; `w4_kernel_eff` 1 to 0.89. Held out, read after the decision: **TPOT 15.4% "
    "to 12.4%** (its 15% target met on the held-out split), TTFT 30.3% to 32.6% (worse), output tok/s 17.3% to 17.1%, "
    "±25% share 59.9% to 61.6%; training TPOT 12.9% to 12.7%, TTFT 23.9% to 23.7%, output tok/s 13.5% to 13.8%, ±25% "
    "share 64.5% to 64.2%.",
    "- **Session 14 (latency21): TensorRT-LLM's fusions read from its code (S8T), tried, not kept.** The performance "
    "overview's runs used the PyTorch backend (`trtllm-bench --backend pytorch`, the 1.0 era), whose dense Llama fuses "
    "the residual add, RMSNorm and FP8/NVFP4 quantisation into the all-reduce at TP > 1 (hidden size > 4,096) and "
    "writes SiLU-and-mul's output as the next GEMM's FP8 input (`gated_mlp.py`); NIM 1.8.0's pre-built engines keep "
    "S8's count (the `trtllm-build` defaults read: `reduce_fusion`, `norm_quant_fusion` off, `gemm_swiglu_plugin` "
    "unset). Switch `LAYER_ACT_TRTLLM_FUSION`, off. Rule written before it ran (the same criterion (a) as S8L, the "
    "published constants of the time): S8L with S8T 0.2742076 plus the unchanged hinge 0.4962 (the acceptance case "
    "is NIM's engine): **not kept**, no refit. Held out, read after the decision: TPOT 15.4%, TTFT 30.3%, output "
    "tok/s 17.3% to 15.2%, ±25% share 59.9% to 62.0% (docs/serving.md, session 14, latency21).",
    "- **Session 14, latency22: SGLang's first burst through its overlap loop (Q8b), kept.** Diagnosed on the training "
    "split: the SGLang cookbook's 16-64-client runs are predicted too fast in the mean while the medians and P99s the "
    "same `bench_serving` blocks print say the steady part is right and the first burst (the first `N` requests, sent "
    "together) waits several hundred ms more than the replay's one prompt step. Read from SGLang 0.5.6: the idle "
    "`event_loop_overlap` starts a prompt step with the first request that reaches it (the rest of the burst enters "
    "the next prompt step), and with `SGLANG_DISABLE_CONSECUTIVE_PREFILL_OVERLAP` False a prompt step's first tokens "
    "leave only after the next (eager) prompt step is launched: Q4' plus `max(0, F − max(0, b − F))`, `F = L·f_eager` "
    "(`planner.serving.replay.SGLANG_BURST_SPLIT`, `next_launch_wait_s`; no new constant, no refit). Rule written "
    "before it ran: keep only if the training loss including the acceptance hinge falls below 0.2713188 with the hinge "
    "at 0. Training loss 0.2713188 to 0.2684557 (−1.06%), hinge 0: kept. It closes a small part of the burst's gap "
    "(the eight 16-64-client training rows' median TTFT error −29% to −23.5%) and lengthens the 100-client bursts "
    "(Llama-3.1-70B +23% to +28%). Training: TPOT 12.7% unchanged, output tok/s 13.8% to 13.7%, TTFT 23.7% to 23.8%, "
    "±25% share 64.2% to 64.0%. Held out, read after the decision: TPOT 12.4%, TTFT 32.6% and output tok/s 17.1% "
    "unchanged, ±25% share 61.6% to 62.0%. Every target but TPOT (15%) is still missed: TTFT 32.6% against 25%, output "
    "tok/s 17.1% against 15%, 62.0% within ±25% against 70%. No sample moved.",
    "- **Session 14, latency23: vLLM V0's weight-only 8-bit GEMMs (Marlin/Machete), kept.** Diagnosed on the training "
    "split: AccelMark's vLLM 0.7.3 open-loop TTFTs are under-predicted more the higher the rate (median −5% at ≤ 5 "
    "req/s, −24% at 10, −37% at ≥ 25), and on the hosts whose TPOT the model meets they sort by weight format: FP8 on "
    "an A100 and W8A16 worse than bf16 and W8A8 at the same rate. Read from vLLM 0.7.3: FP8 below capability 8.9 runs "
    "`fp8_marlin_gemm` (`Fp8LinearMethod.use_marlin`), W8A16 the first of Machete (9.0+) and Marlin "
    "(`choose_mp_linear_kernel`): the weight-only mixed-input kernels W4A16 runs, which the model already gives "
    "`w4_kernel_eff` on their compute-bound part. Now the 8-bit ones take it too on vLLM V0 "
    "(`planner.serving.step.W8_WEIGHT_ONLY_KERNEL_EFF`, `weight_only_mixed_input`; no new constant, no refit). Rule "
    "written before it ran: keep only if the training loss including the acceptance hinge falls below 0.2684557 with "
    "the hinge at 0. Training loss 0.2684557 to 0.2679510 (−0.19%), hinge 0: kept. 20 training points move (the "
    "slow H200 host's W8A16 run hardly: its gap is the host). Training: TTFT 23.8% to 23.0%, TPOT 12.7% to 12.9%, "
    "output tok/s 13.7% unchanged, ±25% share 64.0% to 64.5%. Held out, read after the decision: TTFT 32.6% to "
    "31.0%, TPOT 12.4% to 13.7% (worse; its 15% target still met), output tok/s 17.1% to 17.5% (worse), ±25% share "
    "62.0% to 63.0%. Still missed: TTFT 31.0% against 25%, output tok/s 17.5% against 15%, 63.0% within ±25% against "
    "70%. No sample moved (`tools/regenerate` changed docs/accuracy.md only).",
    "- **Session 14 (latency24): TensorRT-LLM's CUDA-graph padding of decode batches (CG), tried, not kept.** "
    "Diagnosed on the training split: output tok/s at TP > 1 is predicted too fast (median +6.9%, TP1 +1.3%), "
    "TensorRT-LLM's overview on Hopper at TP >= 4 most (H100 TP8 +15.4%, TP4 +20.9%), not on Blackwell. Read from "
    "TensorRT-LLM 1.0-era `model_engine.py` (`_filter_cuda_graph_batch_sizes`, `_get_padded_batch`) and the overview's "
    "run options (graph batch sizes 1, 2, 4, ..., 8,192): a decode-only batch is padded to the next kept graph size, "
    "its GEMMs, LM head and collectives run at the padded count (`accuracy.CUDA_GRAPH_PADDING`, off; "
    "`step.padded_decode_tokens`). No new constant. Rule written before it ran: keep if the training loss with the "
    "hinge falls below 0.2684557. 0.2687860, hinge 0: **not kept** (the Blackwell and TP1/TP2 rows, fitted without "
    "padding, lost more than the Hopper rows gained). Held out, read after the decision: output tok/s 17.1% to 15.6%, "
    "±25% share 62.0% to 63.0%, TPOT and TTFT unchanged (docs/serving.md, session 14, latency24).",
    "- **Session 14, the coordinator: a refit after Q8b and the 8-bit weight-only kernels, with and without CG, not "
    "published** (docs/serving.md; rule written before either fit ran: each must fall 0.5% below 0.2679510). Three "
    "rounds, SGLang's fixed step held: R 0.2674097 (−0.20%), R+CG 0.2669862 (−0.36%), hinge 0 in both: neither "
    "qualifies. Held out, read after the decision: R TPOT 12.7%, TTFT 32.8%, output tok/s 17.1%, 62.7% within ±25%; "
    "R+CG 12.2%, 32.4%, 15.3%, 62.7%. Also this session (latency25, docs only): the AccelMark hosts' CPUs do not "
    "explain vLLM V0's slow-host residuals (the same CPU model gives opposite residuals; no citable single-thread "
    "figure), so nothing was built.",
    "- **Session 14 (latency26): TensorRT-LLM's whole-context admission (rule W), kept.** NIM 1.8.0's c25/c50 TTFT "
    "(−33%, −28% on the training split) decomposed: the one-5,000-token-context-per-step queue is already Q4's M/D/1 "
    "term (110 and 202 ms), so the gap is not it. Read from TensorRT-LLM's `microBatchScheduler.cpp`: without context "
    "chunking (`enableChunkedContext` false by default) a step takes whole prompts FCFS and stops at the first that "
    "does not fit; the replays chunked the next prompt instead (`schedule.TRTLLM_WHOLE_CONTEXTS`, "
    "`whole_prompt_room`). No constant, no refit. Rule written before it ran: keep if the training loss with the "
    "hinge falls below 0.2679510. 0.2672570, hinge 0: kept; 129 training points move (TensorRT-LLM overview offline "
    "replays, one DeepSeek-R1 blog point), the NIM rows do not. Held out, read after the decision: output tok/s "
    "17.5% to 17.4%, TPOT 13.7%, TTFT 31.0% and the ±25% share 63.0% unchanged.",
    "- **Session 14, the coordinator: the closed loop's spurious admission wait fixed** (latency26's finding; a "
    "numerical error, fixed whatever it did to the fit). `schedule.closed_loop` charged `(N_clients − N)/X` of "
    "admission wait whenever `N = d + X·TTFT` fell 0.1% short of the clients, which the decode-batch bisection (0.2% "
    "of `d`) could leave with no cap binding: now a shortfall counts as waiting only if the state just past the "
    "bracket is invalid or still short (else the bisection goes on inside it). Llama-3.3-70B FP8 on 2×H100 at 4 "
    "clients: TTFT 374 to 361 ms. Training loss 0.2672570 to 0.2673233, hinge 0; held-out medians unchanged.",
    "- **Session 15, latency27: attention DP's replicated weights in TensorRT-LLM's KV room (rule R)** "
    "(`step.attention_dp_replicated_bytes`, `api.ATTENTION_DP_REPLICATED_WEIGHTS`; docs/serving.md). With "
    "`enable_attention_dp` TensorRT-LLM keeps an MoE model's whole non-expert part on every rank (Llama 4's dense "
    "MLP and shared expert `overridden_tp_size=1`, the embedding without a mapping, the LM head whole; "
    "`tensorrt_llm/_torch/models/modeling_llama.py`, 1.0 era): the step already read those bytes, the KV room now "
    "loses `f·(dp − 1)·W_d` too (Maverick FP8 on 8 H100s: 12.30e9 B a GPU, 21.4 to 11.1 GiB of KV). No constant, "
    "no refit. Rule: keep if the training loss with the hinge falls below 0.2673233: 0.2662772, hinge 0, kept; 33 "
    "training points move (all overview rows with attention DP). Training, output tok/s median signed error: "
    "Maverick H100 TP8 +30.9% to −12.8%, Qwen3-235B H100 TP8 +26.2% to −1.6%, Scout H100 TP4 +20.9% to +5.3%, "
    "Maverick H200 TP8 −4.4% to −24.0% (a second wave where the run's prompts no longer fit the KV room); B200 "
    "Maverick (−13% to −45%) is not KV-bound and unchanged. Held out, read after the decision: output tok/s 17.4% "
    "to 16.8%, ±25% share 63.0% to 64.1%, TPOT 13.7% and TTFT 31.0% unchanged.",
    "- **Session 15, latency28: TensorRT-LLM's per-sequence host cost per attention-DP rank (rule A)** "
    "(`step.host_sequences`, `step.ATTENTION_DP_HOST_PER_RANK`, on): each GPU runs its own `PyExecutor` whose "
    "scheduling, input preparation, sampling and response handling loop over its own requests (`py_executor.py`, "
    "`executor_request_queue.py`, 1.0-1.1 era: new requests are balanced across ranks), so S2's `o_seq` term counts "
    "`ceil((d + n_p)/dp)`. No new constant, no refit. Rule: keep if the training loss with the hinge falls below "
    "0.2662772: 0.2642206, hinge 0, kept. Training, output tok/s median signed error: Maverick B200 −34.6% to "
    "−17.2% (1000/1000 −40% to −27%, 1000/2000 −45% to −36%, 128/128 −29% to +9%), Maverick H200 −24.0% to −17.6%, "
    "Maverick H100 −12.8% to −9.6%, Qwen3-235B B200 −6.5% to +9.8%, H200 +4.8% to +17.3%, Scout H100 +5.3% to +8.2%. "
    "Rule B (the experts' all-gather of the quantized input and reduce-scatter in the MoE layers only, "
    "`step.ATTENTION_DP_MOE_COLLECTIVES`) was tried on top: 0.2651954, not kept, off. Held out, read after the "
    "decisions: output tok/s 16.8% to 16.2%, ±25% share 64.1% to 63.4%, TPOT 13.7% and TTFT 31.0% unchanged.",
    "- **Session 15, latency34: benchmark_serving's zero TTFTs (rule Z)** (`BENCH_SERVING_ZERO_TTFT`, on; "
    "`bench_serving_zero_ttft_share`): vLLM 0.6's benchmark client leaves a request's TTFT at 0.0 unless a streamed "
    "chunk carries text, and `calculate_metrics` counts that 0 in the published mean TTFT; in dstack's six stored "
    "ShareGPT result files 378-379 of 1,000 requests stream no text (their `ttfts` 0.0 exactly where `output_lens` "
    "is 0), so a stored run's predicted mean TTFT is scaled by `1 − z` (`z` = that share, the run's own record; the "
    "amd and 4xMI300X runs, whose files are absent, unchanged). No constant, no refit. Rule: keep if the training loss "
    "with the hinge falls below 0.2642206: 0.2585553, hinge 0, kept. Training TTFT: 8xH100 qps16 +206% to +90%, "
    "qps32 +101% to +25%, qps1000 +81% to +13%, 8xMI300X meta qps1000 +93% to +20%. Held out, read after the "
    "decision: 8xMI300X meta qps16 +874% to +506%, qps32 +148% to +54%; TPOT 13.7%, TTFT 31.0%, output tok/s 16.2% "
    "and the ±25% share 63.4% unchanged.",
    "- **Session 15, latency33: a full warm refit of every fitted constant after session 15's mechanisms (rule C), "
    "kept** (docs/serving.md). Rule written before it ran: `tools/serving_fit --warm` over the 30 constants it fits "
    "by default (no new constant, no switch change), runs of 3, 3 and 2 rounds until the last round of a run changes "
    "no constant (at most 8); keep if converged, the training loss with the hinge at most 0.2628995 (0.5% below "
    "0.2642206), hinge 0 and no efficiency at its cap of 1.0. Run 1 (3 rounds) 0.2619068, still moving; run 2 (3 "
    "rounds) 0.2618090, its last round moved TensorRT-LLM's step cost; run 3 (2 rounds) moved nothing: converged, "
    "0.2618090, hinge 0, highest efficiency `weight_bw_eff` 0.9 (unchanged). Moved: TensorRT-LLM's fixed step "
    "2.458 to 1.080 ms, its per-sequence cost 4.45 to 10.12 us, its first-token overhead 7.91 to 8.89 ms; SGLang's "
    "fixed step 0.195 to 0.109 ms; vLLM V0's fixed step 5.12 to 4.55 ms, its multi-GPU step term 1.60 to 1.80 ms, "
    "its first-token overhead 13.3 to 15.0 ms; vLLM V1's per-sequence cost 20.2 to 25.6 us; the all-reduce latency "
    "4.94 to 5.56 us. Held out, read after the decision (not independent: latency32 read the held-out figures of "
    "its TensorRT-LLM-only control fit, output tok/s 15.5%, 64.4% within ±25%, before this refit was chosen): TPOT "
    "13.7% to 12.7%, TTFT 31.0% to 32.8%, output tok/s 16.2% to 15.5%, ±25% share 63.4% to 64.1%.",
    "- **Session 16, latency35 and latency37: AccelMark's in-process vLLM V0 first tokens (rule D0), kept with "
    "V0's overheads refitted** (`ACCELMARK_IN_PROCESS_DELIVERY`, on; `replay.in_process_first_token_s`; "
    "docs/serving.md). AccelMark's V0 runner streams from an `AsyncLLMEngine` in its own process: the worker thread "
    "that runs a step puts the previous step's outputs into the clients' `asyncio.Queue` with `call_soon`, which "
    "does not wake the event loop, so a first token is seen at the end of the next step or at the harness's next "
    "arrival timer (read in vLLM 0.7.3's wheel and AccelMark 5797fc4). latency35's rule D (published constants, bar "
    "0.2541437): D0 0.2552062, D1 (no front-end overhead in process) 0.2543108, neither kept. latency37's rule, "
    "written before it ran: the same variants with V0's first-token, step and per-sequence overheads refitted, "
    "credited net of a control refit (which moved nothing): D0r 0.2535207, D1r 0.2533702 (not 0.002 below D0r), so "
    "D0r kept: V0's fixed step 4.55 to 4.05 ms, its first-token overhead 15.0 to 8.34 ms. latency35's rule B (the "
    "suites' max_model_len as V0's prefill budget) moved nothing (the points already carry it) and latency36's rule "
    "L (collectives under the eager launch floor, `step.COMM_UNDER_LAUNCH_FLOOR`) rose to 0.2595006: both not kept, "
    "off. Held out, read after the decision: TPOT 12.7% to 12.2%, TTFT 32.8% to 27.8%, output tok/s 15.5% to 15.1%, "
    "±25% share 64.1% to 64.4%.",
    "- **Session 17, latency41: eight RTX 4090s without peer access, every collective through one PCIe uplink "
    "(rule H), kept by its rule** (`HOST_STAGED_COLLECTIVES`, on; `performance(..., host_staged_collectives=True)`; "
    "docs/serving.md). vLLM 0.7.3 turns its own all-reduce off without P2P, so NCCL stages collectives through host "
    "memory; AccelMark's env_info.json puts all eight boards under one PCIe switch tree of one host bridge, so each "
    "rank gets 1/(tp·pp) of the uplink. Applied only to the three runs listed with their topology in "
    "benchmark_harnesses.json. Training loss 0.2535207 to 0.2399354 (bar 0.2515207): kept. It overshoots (the moved "
    "points went from too fast to too slow by 18-63%). Held out, read after the decision: TPOT, TTFT and output tok/s "
    "unchanged (12.2%, 27.8%, 15.06%), ±25% share 64.4% to 64.1% (183 to 182 of 284 point-metrics).",
    "- Net effect of session 14 on the held-out split (main after the refit, latency22, latency23, latency26 and the "
    "closed-loop fix; S8L, S8T, CG and the later refits not published): TPOT 15.4% to 13.7% (its 15% target met on "
    "the held-out split), TTFT 30.3% to 31.0%, output tok/s 17.3% to 17.4%, ±25% share 59.9% to 63.0%; training loss "
    "0.2749068 to 0.2673233. Still missed: TTFT (25%) by 6.0 points, output tok/s (15%) by 2.4, the ±25% share (70%) "
    "by 7.0.",
    "- Net effect of session 15 on the held-out split (latency27's rule R, latency28's rule A, latency34's rule Z and "
    "latency33's refit, kept; rules B, O, M and P not kept; the memory round found one log, a miss): TPOT 13.7% to "
    "12.7%, TTFT 31.0% to 32.8%, output tok/s 17.4% to 15.5%, ±25% share 63.0% to 64.1%; training loss 0.2673233 "
    "to 0.2561437. Still missed: TTFT (25%) by 7.8 points, output tok/s (15%) by 0.5, the ±25% share (70%) by 5.9.",
    "- Net effect of session 16 on the held-out split (latency35's mechanism kept as rule D0 with latency37's refit "
    "of vLLM V0's overheads; latency35's rules D and B, latency36's L, latency38's K and KW, latency40's K and "
    "latency39's full refit not kept): TPOT 12.7% to 12.2%, TTFT 32.8% to 27.8%, output tok/s 15.5% to 15.1% "
    "(15.06%), ±25% share 64.1% to 64.4%; training loss 0.2561437 to 0.2535207. Still missed: TTFT (25%) by 2.8 "
    "points, output tok/s (15%) by 0.06, the ±25% share (70%) by 5.6.",
    "- Net effect of session 17 on the held-out split (latency41's rule H kept; latency42's rule U "
    "(`INFERENCE_PERF_PREFIX_CACHE`: BLIS's inference-perf prompts cycling through vLLM V1's prefix cache, training "
    "loss 0.2417621) and latency43's warm refit after rule H (converged at 0.2390371 against its bar of 0.2379354) "
    "not kept): TPOT 12.2%, TTFT 27.8% and output tok/s 15.06% unchanged, ±25% share 64.4% to 64.1%; training loss "
    "0.2535207 to 0.2399354. Still missed: TTFT (25%) by 2.8 points, output tok/s (15%) by 0.06, the ±25% share "
    "(70%) by 5.9.",
    "- **Session 23, rule T: the fit's loss trimmed at ln 1.5, kept** (`PUBLISHED_FIT_CAP_RATIO`, `tools/serving_fit "
    "--loss-cap`; docs/serving.md). Under the ln 4 cap every miss up to 4x pulled its constants as hard as a near "
    "miss, so the runs no constant can fit (AccelMark's slow suite-C H200 host, vLLM 0.20's knees on the A100, "
    "dstack's two MI300X builds) set the level for the rest; a lower cap trims them. No new constant, no mechanism. "
    "Rule written before any fit ran: three caps (ln 1.25, ln 1.5, ln 2), two warm runs of three rounds each; a cap "
    "qualifies if the hinge is 0, the training share within ±25% rises by at least 1 point, no training median rises "
    "by more than 0.5 points and the acceptance tests pass; the highest share wins. ln 1.25: 68.29% (fails); ln 1.5: "
    "67.99% to 69.36%, TPOT 12.49% to 12.03%, TTFT 22.39% to 18.07%, output tok/s 13.12% unchanged (kept); ln 2: "
    "69.05%. Moved: the ROCm efficiencies (SGLang 0.27 to 0.70, vLLM V1 0.27 to 0.19, V0 0.15 to 0.14), vLLM V0's "
    "first-token overhead 8.3 to 3.7 ms and multi-GPU step term 1.80 to 0.70 ms, small per-sequence and fixed-step "
    "terms. Held out, read after the decision: TPOT 12.2% to 13.3%, TTFT 27.8% to 30.7%, output tok/s 15.06% to "
    "13.6%, ±25% share 64.1% to 67.3% (182 to 191 of 284 point-metrics). `planner calibrate-bench` keeps ln 4.",
    "- **Session 23, rule S: the mechanisms not kept, judged again under the trimmed loss; none kept.** Seventeen "
    "switch settings (every mechanism left off by an earlier rule), each alone with rule T's constants, against a "
    "bar of 0.5% below the trimmed training loss (0.1648560) with the hinge 0 and no worse share or median: the best, "
    "rule K's KV room from the run's own settings, lowered it by 0.31%; the S8 family raised the share to 70.0-70.1% "
    "but broke the acceptance case (hinge 0.14-0.80). Every switch stays off; no held-out figure of any was computed.",
    "- **Session 23, rule T2: a second start for the trimmed fit, not kept.** 2.2.0's `--v0-start` (vLLM V0's "
    "fixed step, per-sequence and first-token overheads restarted at 2 ms, 0.1 ms and 15 ms) and three warm runs "
    "under the ln 1.5 loss: the first ended at 0.1649403, the next two wrote rule T's constants again (up to float "
    "rounding), so rule T's fit is the same minimum from this start; the bar (0.5% below 0.1648560) was not met.",
    "- Net effect of session 23 on the held-out split (rule T kept; rules S and T2 keeping nothing): TPOT 12.2% to "
    "13.3%, TTFT 27.8% to 30.7%, output tok/s 15.06% to 13.6%, ±25% share 64.1% to 67.3%. Output tok/s now meets "
    "its 15% target and TPOT its own; still missed: TTFT (25%) by 5.7 points and the ±25% share (70%) by 2.75.",
)
"""What changed after 2.2.0 (the 2.2.0 figures are the published ones, a record, not recomputed)."""


CHANGES = (
    "2.1.0 published, held out: TPOT 29%, TTFT 34%, output tok/s 16%, 57% within ±25% (fit on 435 training points, "
    "vLLM V0's step cost 6.4 ms). What 2.2.0 changed, mechanisms first, then one refit on the training split:",
    "",
    "- **AccelMark's harness** (`harness_settings`): its offline scenario runs `LLM(max_num_seqs=512)`, its online and "
    "interactive scenarios an in-process `AsyncLLMEngine` built without `max_num_seqs`; vLLM 0.20 (V1) then takes "
    "`UsageContext.ENGINE_CONTEXT` defaults, 128 sequences and 2,048 tokens per step (not the 256 / 2,048 of "
    "`vllm serve` on an A100), which is why its TPOT flattens at ~22 ms from 25 req/s up (predicted +88% before).",
    "- **One host, one observation**: the fit weighs each benchmark run alike (`fitted_objective(per_run=True)`). "
    "AccelMark's vLLM 0.7.3 runs of the same GPU and model differ by up to 1.9x in TPOT (H200 suites A and C); the "
    "sixteen online points of the slower run (suite C, all in the training split) had pulled V0's fixed step cost to "
    "6.4 ms where one-request runs need ~2 ms.",
    "- **Refit** warm-started from the 2.1.0 constants with V0's step, per-sequence and TTFT overheads restarted at "
    "2 ms, 0.1 ms and 15 ms (`tools/serving_fit --warm --v0-start`), then two more rounds (`--warm`); the issue-11 "
    "acceptance hinge kept. The V0 restart and the per-run weighting were decided after reading the 2.1.0 residuals "
    "(held-out ones included, as issue 11 reports them); the constants were fitted on the training split only.",
    "- `planner calibrate-bench` passes every run's `num_prompts` to the model (open loops past capacity and "
    "`--request-rate inf` bursts replayed as finite runs) and takes `--replicas`; a point's `num_prompts` is split "
    "among its `dp` replicas here too.",
)
"""What the 2.2.0 refit changed (the previous figures are the published 2.1.0 ones, a record, not recomputed)."""


def anchors_markdown(rows: list[Row]) -> str:
    """The anchors side by side with this model's held-out and the old roofline's figures on the same points."""
    held = [r for r in rows if not r.train]
    s, b = summary(held), summary(held, baseline=True)
    lines = ["| method | TPOT / ITL | TTFT | output tok/s | data |", "|---|---|---|---|---|"]
    lines += [f"| {name} | {a} | {t} | {o} | {where} |" for name, a, t, o, where in ANCHORS]
    lines.append(f"| **this model, held out** | **{_pct(s['tpot'][0])}** | **{_pct(s['ttft'][0])}** | "
                 f"**{_pct(s['otps'][0])}** | the held-out points below |")
    lines.append(f"| old roofline (`planner.latency`), same held-out points | {_pct(b['tpot'][0])} | "
                 f"{_pct(b['ttft'][0])} | {_pct(b['otps'][0])} | the held-out points below |")
    lines.append("")
    lines.append("Targets (issue 11, held out): TPOT and output tok/s ≤ 15%, TTFT ≤ 25%, ≥ 70% of predictions within "
                 f"±25%. This model: {_pct(s['tpot'][0])}, {_pct(s['otps'][0])}, {_pct(s['ttft'][0])}, "
                 f"{_pct(s['within25'])}.")
    return "\n".join(lines)


def markdown(rows: list[Row], *, calibration: Calibration, anchors: str | None = None) -> str:
    """The generated ``## Serving performance`` block of docs/accuracy.md."""
    train = [r for r in rows if r.train]
    held = [r for r in rows if not r.train]
    lines = [
        "## Serving performance",
        "",
        "Generated by `tools/regenerate` (`tests/test_serving_accuracy.py`, `planner.serving.accuracy`) from the "
        "published points in `tests/data/serving/`; do not edit by hand. Constants: "
        f"`{calibration.name}` ({calibration.source}). Split: SHA-256 of the point id, "
        f"{TRAIN_SHARE}% training / {100 - TRAIN_SHARE}% held out. Errors are `predicted / measured − 1`; "
        "latencies are compared only where the source gives a mean or median (p50 sources against the model's "
        "median). Open-loop runs past the replica's steady-state capacity are predicted as the finite runs they "
        "were (docs/serving.md Q8: the run of `num_prompts` requests replayed step by step, the queue growing for "
        "`n/λ` seconds); AccelMark's online runs at every rate are replayed from the harness's own arrival times "
        "and prompt lengths (Q8'); closed-loop runs with a published prompt count are replayed step by step, "
        "the SGLang cookbook's `random` runs with `bench_serving`'s own lengths (Q8''); "
        "a latency the model still calls *saturated* (no `num_prompts` in the source) "
        "where the "
        "source measured a finite value is counted in the last column and as a miss in the ±25% share.",
        "",
        f"Points modelled: {len(rows)} ({len(train)} training, {len(held)} held out).",
        "",
        "### Held-out and full-set error",
        "",
        "| set | model | TPOT median abs (n) | TTFT median abs (n) | output tok/s median abs (n) | within ±25% "
        "| saturated in the model |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, subset in (("held out", held), ("training", train), ("all", rows)):
        for label, base in (("serving model", False), ("old roofline (planner.latency)", True)):
            s = summary(subset, baseline=base)
            lines.append(f"| {name} | {label} | {_cell(s['tpot'])} | {_cell(s['ttft'])} | {_cell(s['otps'])} | "
                         f"{_pct(s['within25'])} | {s['saturated']} |")
    for title, points in (("Held-out error by regime", held),
                          ("Full-set error by regime (training and held out)", rows)):
        lines += ["", f"### {title}", "",
                  "| regime | TPOT (n) | TTFT (n) | output tok/s (n) | within ±25% | roofline TPOT | roofline tok/s |",
                  "|---|---|---|---|---|---|---|"]
        for name, pred in REGIMES:
            subset = [r for r in points if pred(r)]
            s, b = summary(subset), summary(subset, baseline=True)
            lines.append(f"| {name} | {_cell(s['tpot'])} | {_cell(s['ttft'])} | {_cell(s['otps'])} | "
                         f"{_pct(s['within25'])} | {_cell(b['tpot'])} | {_cell(b['otps'])} |")
    lines += ["", "### Anchors", "", (anchors or anchors_markdown(rows)).strip(), ""]
    lines += ["### What changed after 2.2.0", "", *CHANGES_NEXT, ""]
    lines += ["### What changed in 2.2.0", "", *CHANGES, ""]
    misses, saturated = [], []
    for r in rows:
        errs = [(abs(e), m, e) for m in METRICS if (e := r.error(m)) is not None]
        if any(math.isinf(e) for _, _, e in errs):
            saturated.append(r)
            errs = [t for t in errs if math.isfinite(t[2])]
        worst = max(errs, default=None)
        if r.note.startswith("not modelled"):
            misses.append((9.0, r, "–"))
        elif worst and worst[0] > 0.5:
            misses.append((worst[0], r, f"{LABELS[worst[1]]} {100 * worst[2]:+.0f}%"))
    misses.sort(key=lambda t: -t[0])
    by_source: dict[str, int] = {}
    for r in saturated:
        by_source[r.id.split("/")[0]] = by_source.get(r.id.split("/")[0], 0) + 1
    finite = sum(1 for r in rows if r.note.startswith("finite run"))
    traced = sum(1 for r in rows if r.note.startswith("harness"))
    lines += ["### Open-loop runs past capacity", "",
              f"{finite} points are open-loop runs at rates above the replica's steady-state capacity in the model, "
              f"predicted as finite runs (Q8); {traced} AccelMark online points are replayed from the harness's "
              "arrivals and prompt lengths at any rate (Q8'). "
              f"{len(saturated)} points are still *saturated* in the model with a finite measured latency"
              + (" (" + ", ".join(f"{k}: {v}" for k, v in sorted(by_source.items())) + ")" if by_source else "")
              + ": their sources give no request count to replay; they count as misses in the ±25% share.", ""]
    lines += ["### Largest finite misses (|error| > 50%)", "", f"{len(misses)} points; the 25 largest:", "",
              "| point | split | miss | reason |", "|---|---|---|---|"]
    for _, r, text in misses[:25]:
        lines.append(f"| `{r.id}` | {'train' if r.train else 'held out'} | {text} | {_reason(r)} |")
    lines += ["", "### Every point", "",
              "| point | split | TPOT ms meas / pred | TTFT ms meas / pred | tok/s meas / pred |",
              "|---|---|---|---|---|"]

    def pair(r: Row, m: str, scale: float) -> str:
        meas, pred = r.measured.get(m), r.predicted.get(m)
        if meas is None:
            return "–"
        p = "–" if pred is None else ("sat." if not math.isfinite(pred) else f"{pred * scale:.4g}")
        return f"{meas * scale:.4g} / {p}"

    for r in rows:
        lines.append(f"| `{r.id}` | {'train' if r.train else 'held'} | {pair(r, 'tpot', 1e3)} | "
                     f"{pair(r, 'ttft', 1e3)} | {pair(r, 'otps', 1.0)} |")
    return "\n".join(lines) + "\n"
