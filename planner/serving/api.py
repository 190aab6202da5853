"""Serving performance of one replica under load, and sizing at the SLO (the library API of the serving model).

- :func:`serving_performance`: TPOT, TTFT, E2E, throughput and running batch of one replica for a closed loop
  (``concurrency`` clients), an open loop (``request_rate``) or offline (neither), from :mod:`.step` and
  :mod:`.schedule`;
- :func:`max_rate_at_slo` and :func:`replicas_at_slo`: the highest request rate one replica sustains with the
  open-loop mean TTFT and TPOT within their SLOs, and the replicas a rate needs;
- :func:`disaggregated_pools`: prefill and decode pools of a disaggregated deployment and the KV-transfer
  bandwidth between them;
- :func:`cheapest_fleets`: the cheapest fleets (GPU type, TP/PP, weight and KV precision, replicas,
  disaggregated or not) that meet both SLOs at a rate.

Model and GPU are catalog names or specs; the constants are the fitted ones (``planner/data/
serving_calibration.json``) unless ``calibration`` gives a :class:`Calibration`, its JSON form or a file path.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, cast

from planner.engines import kv_capacity, normalize_engine, vllm_v1_default_max_num_seqs
from planner.errors import ArgumentError, PlannerError, check_fraction, check_number
from planner.serving import replay, step
from planner.serving import schedule as sch
from planner.serving.calibration import Calibration, from_dict
from planner.serving.step import build_replica, step_time_s, weight_dtype_name
from planner.specs import GIB, GpuSpec, ModelSpec

TP_CHOICES = (1, 2, 4, 8)
"""Tensor-parallel sizes :func:`cheapest_fleets` tries."""


@dataclass(frozen=True, kw_only=True)
class ServingResult:
    """Means over requests, as ``vllm bench serve`` reports them; ``saturated`` (open loop beyond the replica's
    maximum rate) makes every latency ``inf`` and the throughputs the maximum the replica delivers.
    ``max_requests_per_s`` is the replica's steady-state maximum where the call computed it (offline, saturated
    open loop), NaN otherwise; ``admission_wait_s`` is the wait of closed-loop clients beyond the running cap."""

    tpot_s: float
    ttft_s: float
    e2e_s: float
    output_tokens_per_s: float
    requests_per_s: float
    running_batch: float
    saturated: bool
    mode: str  # "closed" | "open" | "offline"; "open-finite" | "offline-finite": a replayed run of num_prompts (Q8);
    # "open-trace": replayed runs of known arrivals and prompt lengths (Q8')
    decode_batch: float
    decode_step_s: float
    prefill_share: float
    admission_wait_s: float
    max_requests_per_s: float
    max_running: float
    budget_tokens: int
    max_num_seqs: int
    engine: str
    calibration: str


@lru_cache(maxsize=1)
def default_calibration() -> Calibration:
    """The constants fitted on the training split of the published points (``docs/serving.md``)."""
    from planner.catalog import serving_calibration_data

    return from_dict(serving_calibration_data(), where="planner/data/serving_calibration.json")


def load_calibration(calibration: Calibration | Mapping | str | Path | None) -> Calibration:
    """A :class:`Calibration` from itself, its JSON form, or the path of a calibration file (None: the default)."""
    if calibration is None:
        return default_calibration()
    if isinstance(calibration, Calibration):
        return calibration
    if isinstance(calibration, Mapping):
        return from_dict(dict(calibration))
    path = Path(str(calibration)).expanduser()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ArgumentError("calibration", str(calibration), f"a readable calibration JSON file ({type(exc).__name__})"
                            ) from None
    return from_dict(data, where=str(path))


def _specs(model: ModelSpec | str, gpu: GpuSpec | str) -> tuple[ModelSpec, GpuSpec]:
    from planner.catalog import get_gpu, get_model

    return get_model(model), get_gpu(gpu)


ATTENTION_DP_REPLICATED_WEIGHTS = True
"""Whether a TensorRT-LLM replica with attention data parallelism (``dp`` > 1, MoE) takes the non-expert weights
every rank holds whole out of its KV room (rule R, :func:`planner.serving.step.attention_dp_replicated_bytes`;
session 15, latency27, docs/serving.md)."""


KV_FROM_RUN_SETTINGS = False
"""Whether a vLLM replica's KV room comes from :func:`planner.engines.kv_capacity` at the run's own settings (rule K,
session 16, latency38, docs/serving.md): ``max_model_len`` (the run's, else the model's maximum, vLLM's default),
the profile batch (the schedule's ``max_num_batched_tokens`` when the run gives it or, V0, states chunked prefill;
else the engine memory model's default for the engine and version) and ``max_num_seqs``, instead of a fixed
``max_model_len`` of 8,192 and the default profile batch (:func:`kv_room_settings`)."""


def kv_room_settings(engine: str, *, max_model_len: int | None, model_max_len: int | None,
                     max_num_batched_tokens: int | None, chunked_prefill: bool | None,
                     budget_tokens: int) -> tuple[int, int | None]:
    """(``max_model_len``, profile ``max_num_batched_tokens`` or None for the engine memory model's default) at
    which :func:`_kv_tokens` sizes the KV room of an ``engine`` replica (a :func:`planner.engines.normalize_engine`
    key); ``budget_tokens`` is the schedule's step budget (:func:`planner.serving.schedule.engine_schedule`).

    Rule K (:data:`KV_FROM_RUN_SETTINGS`): vLLM profiles one step of ``max_num_batched_tokens`` before it sizes its
    KV cache (V0 ``Worker.determine_num_available_blocks``, V1 ``gpu_worker.determine_available_memory``), and V0's
    default for that batch is ``max(max_model_len, 2048)`` without chunked prefill, 512 with it (``SchedulerConfig``,
    vLLM 0.6.4 ``vllm/config.py``), chunked prefill being on by default above 32K of ``max_model_len``
    (``EngineArgs.create_engine_config``). So the room follows the run's ``max_model_len`` (else the model's maximum,
    what vLLM takes) and, where the run gives the batch or (V0) the chunked-prefill setting, the schedule's budget;
    otherwise ``None``, :func:`planner.engines.kv_capacity`'s own version-aware default. SGLang and TensorRT-LLM,
    and every engine with the switch off: ``(8192, None)``, the room as before rule K.

    Worked example, dstack's Llama-3.1-405B runs on vLLM 0.6 (V0): ``--max-model-len 91680`` with chunked prefill
    off profiles the 91,680-token step the schedule runs; with nothing stated, the long-context default.

    >>> import planner.serving.api as api
    >>> old, api.KV_FROM_RUN_SETTINGS = api.KV_FROM_RUN_SETTINGS, True
    >>> kv_room_settings("vllm-v0", max_model_len=91680, model_max_len=131072, max_num_batched_tokens=None,
    ...                  chunked_prefill=False, budget_tokens=91680)
    (91680, 91680)
    >>> kv_room_settings("vllm-v0", max_model_len=None, model_max_len=131072, max_num_batched_tokens=None,
    ...                  chunked_prefill=None, budget_tokens=512)
    (131072, None)
    >>> kv_room_settings("sglang", max_model_len=4096, model_max_len=131072, max_num_batched_tokens=2048,
    ...                  chunked_prefill=None, budget_tokens=2048)
    (8192, None)
    >>> api.KV_FROM_RUN_SETTINGS = old
    """
    if not KV_FROM_RUN_SETTINGS or engine not in ("vllm", "vllm-v0"):
        return 8192, None
    length = int(max_model_len or model_max_len or 8192)
    stated = bool(max_num_batched_tokens) or (engine == "vllm-v0" and chunked_prefill is not None)
    return length, (int(budget_tokens) if stated else None)


@lru_cache(maxsize=4096)
def _kv_tokens(model: ModelSpec, gpu: GpuSpec, tp: int, pp: int, kv_dtype: str, weight_dtype: str, engine: str,
               version: str | None, max_num_seqs: int | None, extra_weight_bytes: float = 0.0,
               loaded_weight_bytes: float = 0.0, *, max_model_len: int = 8192,
               max_num_batched_tokens: int | None = None,
               gpu_memory_utilization: float | None = None,
               weights_gib: float | None = None) -> tuple[float, int]:
    """(KV tokens per replica, block size), cached: the engine memory model costs ~2 ms. ``extra_weight_bytes``:
    weight bytes per GPU the engine memory model does not count (a checkpoint's 16-bit layers,
    :func:`planner.serving.step.unquantized_params`), taken from the KV room. ``loaded_weight_bytes``: weight bytes
    per GPU loaded before an engine that sizes its KV cache as a fraction ``f`` of the memory then free
    (TensorRT-LLM, ``KV = (HBM − weights − activation)·f``), taken from the room at ``f``: ``room − f·bytes`` (rule R's
    replicated weights under attention DP, :func:`planner.serving.step.attention_dp_replicated_bytes`).
    ``max_model_len``, ``max_num_batched_tokens`` (None: the engine's default profile batch) and
    ``gpu_memory_utilization`` (None: the engine's default fraction) go to :func:`planner.engines.kv_capacity`
    (:func:`kv_room_settings`), and so does ``weights_gib``, a logged weight load per GPU that replaces the model's
    count (None: the model's)."""
    try:
        cap = kv_capacity(model, gpu, tp=tp, pp=pp, kv_cache_dtype=kv_dtype, weight_dtype=weight_dtype,
                          engine=engine, engine_version=version, max_model_len=max_model_len,
                          max_num_batched_tokens=max_num_batched_tokens, max_num_seqs=max_num_seqs,
                          gpu_memory_utilization=gpu_memory_utilization, weights_gib=weights_gib)
    except PlannerError:
        return 0.0, 16
    room = cap.available_kv_gib * GIB - extra_weight_bytes - cap.memory_fraction * loaded_weight_bytes
    if room <= 0:
        return 0.0, cap.block_size
    return room / max(cap.kv_bytes_per_logged_token, 1e-9), cap.block_size


@dataclass(frozen=True, kw_only=True)
class _Setup:
    load: sch.Load
    pp: int
    output_tokens: float
    engine: str
    calibration: Calibration
    kv_running: float


def _parallel(spec: ModelSpec, tp: int, ep: int, dp: int) -> tuple[int, int]:
    """Checked expert-parallel and attention data-parallel sizes: both divide ``tp``; ``ep > 1`` needs experts."""
    ep = int(check_number("ep", ep, minimum=1, integer=True))
    dp = int(check_number("dp", dp, minimum=1, integer=True))
    if tp % ep:
        raise ArgumentError("ep", ep, f"a divisor of tp={tp} (experts are spread over the replica's GPUs)")
    if tp % dp:
        raise ArgumentError("dp", dp, f"a divisor of tp={tp} (attention runs in dp groups of tp/dp GPUs)")
    if ep > 1 and not (spec.architecture == "moe" and (spec.num_experts or 0) > 1):
        raise ArgumentError("ep", ep, f"1 for {spec.name} (expert parallelism needs a mixture-of-experts model)")
    return ep, dp


def _setup(model, gpu, *, tp, pp, engine, engine_version, weight_dtype, kv_cache_dtype, input_tokens, output_tokens,
           cache_hit_rate, max_num_batched_tokens, max_num_seqs, calibration, max_model_len=None,
           chunked_prefill=None, ep=1, dp=1, enforce_eager=False, quantization=None,
           checkpoint_recipe=None, eager_prefill=None, max_seq_len_to_capture=None,
           cuda_graph_batch_sizes=None, in_process_delivery=False, front_end=True,
           gpu_memory_utilization=None, loaded_weights_gib=None, host_staged_collectives=False) -> _Setup:
    spec, card = _specs(model, gpu)
    tp = int(check_number("tp", tp, minimum=1, integer=True))
    pp = int(check_number("pp", pp, minimum=1, integer=True))
    ep, dp = _parallel(spec, tp, ep, dp)
    i, o, h = _mix(input_tokens, output_tokens, cache_hit_rate)
    f = _fleet(spec, card, tp=tp, pp=pp, ep=ep, dp=dp, engine=engine, engine_version=engine_version,
               weight_dtype=weight_dtype, kv_cache_dtype=kv_cache_dtype,
               max_num_batched_tokens=max_num_batched_tokens, max_num_seqs=max_num_seqs, calibration=calibration,
               max_model_len=max_model_len, chunked_prefill=chunked_prefill, enforce_eager=enforce_eager,
               checkpoint_recipe=checkpoint_recipe, in_process_delivery=in_process_delivery,
               gpu_memory_utilization=gpu_memory_utilization, loaded_weights_gib=loaded_weights_gib)
    return _mixed(f, i, o, h, enforce_eager=enforce_eager, quantization=quantization,
                  checkpoint_recipe=checkpoint_recipe, eager_prefill=eager_prefill,
                  max_seq_len_to_capture=max_seq_len_to_capture, cuda_graph_batch_sizes=cuda_graph_batch_sizes,
                  in_process_delivery=in_process_delivery, front_end=front_end,
                  host_staged_collectives=host_staged_collectives)


def _mix(input_tokens, output_tokens, cache_hit_rate) -> tuple[float, float, float]:
    """:func:`_setup`'s checks of the request mix: input and output tokens at least 1, a hit rate in [0, 1)."""
    i = check_number("input_tokens", input_tokens, minimum=1)
    o = check_number("output_tokens", output_tokens, minimum=1)
    h = check_fraction("cache_hit_rate", cache_hit_rate)
    if h >= 1:
        raise ArgumentError("cache_hit_rate", cache_hit_rate, "a fraction below 1 (the last prompt token is computed)")
    return i, o, h


@dataclass(frozen=True, kw_only=True)
class _Fleet:
    """What :func:`_setup` derives from a replica's shape, engine, dtypes and calibration, none of it from the request
    mix: the specs, the checked sizes, the engine's key and schedule, the KV room (``kv_tokens`` per replica, after
    the attention-DP adjustment, and its block size). ``replicas`` holds, for a kept fleet only
    (:func:`_fleet_kept`), the fields of a replica built for it without CUDA graphs and with them
    (``enforce_eager`` False and True: the one flag the mix can set), as :func:`_mixed` first builds them."""

    spec: ModelSpec
    card: GpuSpec
    tp: int
    pp: int
    ep: int
    dp: int
    key: str
    cal: Calibration
    wd: str
    kd: str
    sched: sch.EngineSchedule
    kv_tokens: float
    block: int
    replicas: dict[bool, dict[str, Any]] | None = None


def _fleet(spec: ModelSpec, card: GpuSpec, *, tp: int, pp: int, ep: int, dp: int, engine, engine_version,
           weight_dtype, kv_cache_dtype, max_num_batched_tokens, max_num_seqs, calibration, max_model_len,
           chunked_prefill, enforce_eager, checkpoint_recipe, in_process_delivery, gpu_memory_utilization,
           loaded_weights_gib, replicas: dict[bool, dict[str, Any]] | None = None) -> _Fleet:
    """:func:`_setup`'s steps after the mix's checks that do not read the mix, in its order (and its refusals)."""
    key = normalize_engine(engine, engine_version=engine_version)
    if in_process_delivery and (key != "vllm-v0" or pp > 1 or enforce_eager):
        raise ArgumentError("in_process_delivery", in_process_delivery,
                            "False unless vLLM V0 with async output processing (pp 1, no enforce_eager)")
    cal = load_calibration(calibration)
    wd = weight_dtype_name(weight_dtype)
    kd = str(kv_cache_dtype).strip().lower()
    kd = {"bf16": "auto", "fp16": "auto"}.get(kd, kd)
    gib = card.hbm_bytes / GIB
    big = card.hbm_bytes >= 70 * GIB and "a100" not in f"{card.name} {card.display_name}".lower()
    sched = sch.engine_schedule(key, gpu_big=big, gpu_gib=gib,
                                max_position=max_model_len or spec.max_position_embeddings,
                                max_num_batched_tokens=max_num_batched_tokens, max_num_seqs=max_num_seqs,
                                chunked_prefill=chunked_prefill,
                                async_scheduling=sch.async_scheduling_default(key, engine_version=engine_version,
                                                                              pp=pp))
    seqs_for_kv = max_num_seqs or (vllm_v1_default_max_num_seqs(card, engine_version=engine_version)
                                   if key == "vllm" else None)
    extra = 0.0
    logged = None if loaded_weights_gib is None else check_number("loaded_weights_gib", loaded_weights_gib,
                                                                   minimum=0, exclusive_minimum=True)
    if checkpoint_recipe and wd in ("fp8", "w8a8", "int8") and logged is None:  # 16-bit layers: one more byte each

        from planner.serving.step import unquantized_params

        extra = unquantized_params(spec, checkpoint_recipe) * (2.0 - 1.0) / (tp * pp)
    replicated = 0.0
    if ATTENTION_DP_REPLICATED_WEIGHTS and key == "trtllm" and dp > 1:  # rule R: attention DP's whole non-experts
        from planner.serving.step import attention_dp_replicated_bytes

        replicated = attention_dp_replicated_bytes(spec, tp=tp, dp=dp, pp=pp, weight_dtype=wd)
    kv_len, kv_batch = kv_room_settings(key, max_model_len=max_model_len, model_max_len=spec.max_position_embeddings,
                                        max_num_batched_tokens=max_num_batched_tokens,
                                        chunked_prefill=chunked_prefill, budget_tokens=sched.budget_tokens)
    util = None if gpu_memory_utilization is None else check_fraction("gpu_memory_utilization",
                                                                     gpu_memory_utilization, allow_zero=False)
    kv_tokens, block = _kv_tokens(spec, card, tp, pp, kd, wd, key, engine_version, seqs_for_kv, extra, replicated,
                                  max_model_len=kv_len, max_num_batched_tokens=kv_batch,
                                  gpu_memory_utilization=util, weights_gib=logged)
    if kv_tokens <= 0:
        raise ArgumentError("gpu", f"{card.name} x{tp * pp}", f"room for {spec.name}'s weights and a KV cache "
                            "(more GPUs, a smaller weight dtype or a bigger GPU)")
    if dp > 1:  # each attention group keeps its own sequences' KV, split tp/dp ways (no head replication)
        from planner.memory import kv_bytes_per_token_layer

        kv_tokens *= dp * kv_bytes_per_token_layer(spec, tp=tp, kv_cache_dtype=kd) / kv_bytes_per_token_layer(
            spec, tp=tp // dp, kv_cache_dtype=kd)
    return _Fleet(spec=spec, card=card, tp=tp, pp=pp, ep=ep, dp=dp, key=key, cal=cal, wd=wd, kd=kd, sched=sched,
                  kv_tokens=kv_tokens, block=block, replicas=replicas)


def _mixed(f: _Fleet, i: float, o: float, h: float, *, enforce_eager=False, quantization=None,
           checkpoint_recipe=None, eager_prefill=None, max_seq_len_to_capture=None, cuda_graph_batch_sizes=None,
           in_process_delivery=False, front_end=True, host_staged_collectives=False) -> _Setup:
    """:func:`_setup`'s last steps: the replica and the load for the checked mix ``(i, o, h)`` on the fleet ``f``.
    A kept fleet (``f.replicas`` not None, only with these steps' defaults) builds its replica once per
    ``enforce_eager`` flag with :func:`planner.serving.step.build_replica` and then takes those fields with the three
    the mix sets (:func:`planner.serving.step.mix_terms`, the same function ``build_replica`` calls)."""
    spec, card, tp, pp, ep, dp, key, cal = f.spec, f.card, f.tp, f.pp, f.ep, f.dp, f.key, f.cal
    sched, kv_tokens, block = f.sched, f.kv_tokens, f.block
    per_request = math.ceil((i + o) / block) * block
    kv_running = kv_tokens / per_request
    cached = i * h
    eager = enforce_eager or step.v0_decode_eager(key, context_tokens=i + o / 2.0,
                                             max_seq_len_to_capture=max_seq_len_to_capture)
    graphs: tuple[int, ...] = ()
    if cuda_graph_batch_sizes:  # rule CG: one rank's limits (attention DP splits the replica's over dp ranks)
        from planner.serving.step import cuda_graph_sizes

        graphs = cuda_graph_sizes(tuple(int(g) for g in cuda_graph_batch_sizes),
                                  max_batch_size=float(sched.max_num_seqs) / dp,
                                  max_num_tokens=float(sched.budget_tokens) / dp)
    kept = f.replicas.get(eager) if f.replicas is not None else None
    if kept is not None:
        replica = step.with_mix(kept, model=spec, tp=tp, dp=dp, kv_cache_dtype=f.kd, context_tokens=i + o / 2.0,
                                input_tokens=i, cached_tokens=cached)
    else:
        replica = build_replica(spec, card, tp=tp, pp=pp, ep=ep, dp=dp, weight_dtype=f.wd, kv_cache_dtype=f.kd,
                                context_tokens=i + o / 2.0, input_tokens=i, cached_tokens=cached, engine=key,
                                calibration=cal, enforce_eager=eager, quantization=quantization,
                                checkpoint_recipe=checkpoint_recipe, eager_prefill=eager_prefill, graph_sizes=graphs,
                                host_staged=bool(host_staged_collectives))
        if f.replicas is not None:
            f.replicas[eager] = dict(replica.__dict__)
    if not front_end:  # rule D1: a client in the engine's own process has no HTTP/API-server front end: o_ttft 0
        replica = replace(replica, ttft_fixed_s=0.0)
    max_running = min(float(sched.max_num_seqs), kv_running) / pp
    load = sch.Load(replica=replica, calibration=cal, schedule=sched, input_tokens=max(i - cached, 1.0),
                    output_tokens=o, max_running=max_running, kv_tokens=kv_tokens / pp,
                    in_process_delivery=bool(in_process_delivery))
    return _Setup(load=load, pp=pp, output_tokens=o, engine=key, calibration=cal, kv_running=kv_running)


FLEET_CACHE_SIZE = 256
"""Fleets :func:`_fleet_kept` keeps (least recently used first out): a 20-route plan's serving functions ask about 3
fleets, its two fleet searches about 60 candidates (the catalog's GPUs x TP x PP x dtypes of one model)."""


@lru_cache(maxsize=FLEET_CACHE_SIZE, typed=True)
def _fleet_kept(model, gpu, tp, pp, engine, weight_dtype, kv_cache_dtype, calibration) -> _Fleet | None:
    """:func:`_setup`'s checks of the shape and :func:`_fleet` for the arguments :func:`setup_simple` takes (every
    other argument at its default), with an empty replica store (:class:`_Fleet`'s ``replicas``); None where they
    refuse the fleet (a :class:`PlannerError`: then ``_setup`` refuses every mix on it, whatever it raises first).
    Key: every argument, compared with its type (``calibration`` None or a :class:`Calibration`: a path's file may
    change)."""
    try:
        spec, card = _specs(model, gpu)
        tp = int(check_number("tp", tp, minimum=1, integer=True))
        pp = int(check_number("pp", pp, minimum=1, integer=True))
        ep, dp = _parallel(spec, tp, 1, 1)
        return _fleet(spec, card, tp=tp, pp=pp, ep=ep, dp=dp, engine=engine, engine_version=None,
                      weight_dtype=weight_dtype, kv_cache_dtype=kv_cache_dtype, max_num_batched_tokens=None,
                      max_num_seqs=None, calibration=calibration, max_model_len=None, chunked_prefill=None,
                      enforce_eager=False, checkpoint_recipe=None, in_process_delivery=False,
                      gpu_memory_utilization=None, loaded_weights_gib=None, replicas={})
    except PlannerError:
        return None


def setup_simple(model, gpu, *, tp, pp, engine, weight_dtype, kv_cache_dtype, input_tokens, output_tokens,
                 cache_hit_rate, calibration, or_none: bool = False) -> _Setup | None:
    """``_setup(model, gpu, tp=tp, pp=pp, engine=engine, engine_version=None, weight_dtype=weight_dtype,
    kv_cache_dtype=kv_cache_dtype, input_tokens=input_tokens, output_tokens=output_tokens,
    cache_hit_rate=cache_hit_rate, max_num_batched_tokens=None, max_num_seqs=None, calibration=calibration)``, every
    other argument at its default, as the sheet's serving functions and the fleet search set up a replica: the
    same setup, field for field, from the fleet's part kept (:func:`_fleet_kept`: what the mix does not change, the
    replica's constants included) and the mix's part computed. Only a model and GPU that are hashable and a
    ``calibration`` that is None or a :class:`Calibration` are kept; a fleet that is refused, or a mix the kept fleet
    refuses, goes through :func:`_setup` itself, so its refusal is the one ``_setup`` raises first. ``or_none``: None
    instead of any refusal, without ``_setup``'s path (the fleet search keeps a refused candidate as None; a kept
    refused fleet costs a lookup).

    Worked example: a tornado's bar ends ask one fleet with the input, the output or the hit rate scaled: the first
    sets up the fleet (the specs, the engine's schedule, the KV room, the replica's weights, FLOP/s and overheads),
    the others only the mix's KV read and attention FLOPs per sequence and the load.

    >>> a = setup_simple("llama-3.1-8b", "h100-sxm", tp=1, pp=1, engine="vllm", weight_dtype="auto",
    ...                  kv_cache_dtype="auto", input_tokens=1000, output_tokens=200, cache_hit_rate=0.0,
    ...                  calibration=None)
    >>> a == _setup("llama-3.1-8b", "h100-sxm", tp=1, pp=1, engine="vllm", engine_version=None,
    ...             weight_dtype="auto", kv_cache_dtype="auto", input_tokens=1000, output_tokens=200,
    ...             cache_hit_rate=0.0, max_num_batched_tokens=None, max_num_seqs=None, calibration=None)
    True
    """
    def long() -> _Setup:
        return _setup(model, gpu, tp=tp, pp=pp, engine=engine, engine_version=None, weight_dtype=weight_dtype,
                      kv_cache_dtype=kv_cache_dtype, input_tokens=input_tokens, output_tokens=output_tokens,
                      cache_hit_rate=cache_hit_rate, max_num_batched_tokens=None, max_num_seqs=None,
                      calibration=calibration)

    def unkept() -> _Setup | None:
        if not or_none:
            return long()
        try:
            return long()
        except PlannerError:
            return None

    if not (calibration is None or isinstance(calibration, Calibration)):
        return unkept()
    try:
        f = _fleet_kept(model, gpu, tp, pp, engine, weight_dtype, kv_cache_dtype, calibration)
    except TypeError:  # an unhashable argument
        return unkept()
    if f is None:  # a refused fleet: _setup raises its refusal in its order
        return None if or_none else long()
    try:
        i, o, h = _mix(input_tokens, output_tokens, cache_hit_rate)
        return _mixed(f, i, o, h)
    except PlannerError:
        if or_none:
            return None
        return long()


def serving_performance(
    model: ModelSpec | str,
    gpu: GpuSpec | str,
    *,
    tp: int = 1,
    pp: int = 1,
    engine: str = "vllm",
    engine_version: str | None = None,
    weight_dtype: str = "auto",
    kv_cache_dtype: str = "auto",
    input_tokens: float,
    output_tokens: float,
    concurrency: float | None = None,
    request_rate: float | None = None,
    cache_hit_rate: float = 0.0,
    max_num_batched_tokens: int | None = None,
    max_num_seqs: int | None = None,
    calibration: Calibration | Mapping | str | None = None,
    ep: int = 1,
    dp: int = 1,
    max_model_len: int | None = None,
    chunked_prefill: bool | None = None,
    gpu_memory_utilization: float | None = None,
) -> ServingResult:
    """Mean TPOT, TTFT, E2E and throughput of one replica of ``tp × pp`` ``gpu`` serving ``model`` (S1-S7, Q1-Q6).

    ``concurrency`` N: a closed loop of N clients (``vllm bench serve --max-concurrency N`` with enough prompts);
    ``request_rate`` λ: an open Poisson loop (``--request-rate λ``); neither: offline maximum throughput (the
    running batch at its cap; TTFT then excludes the wait for admission). ``ep``: expert-parallel size (MoE only,
    divides ``tp``: the MoE layers' all-reduce becomes an all-to-all of the routed tokens); ``dp``: attention
    data-parallel groups (divides ``tp``: attention weights replicated ``dp`` times, each group's KV split ``tp/dp``
    ways, so KV heads are no longer replicated when ``tp`` exceeds them; see :func:`planner.serving.step.
    build_replica`). The replica is still ``tp × pp`` GPUs. ``max_model_len`` and ``chunked_prefill`` are the
    engine's (None: its defaults, the model's maximum length; vLLM V0 chunks prompts above 32K of it), and with
    :data:`KV_FROM_RUN_SETTINGS` they, ``max_num_batched_tokens`` and ``max_num_seqs`` also set the step vLLM profiles
    before it sizes its KV cache (:func:`kv_room_settings`); ``gpu_memory_utilization`` is the engine's memory
    fraction (vLLM's ``gpu_memory_utilization``, SGLang's ``mem_fraction_static``, TensorRT-LLM's
    ``free_gpu_memory_fraction``; None: the engine's default), as :func:`planner.engines.kv_capacity` takes it.
    ``E2E = TTFT + (O−1)·TPOT``;
    ``output tokens/s = O·X``. Refs: docs/serving.md; vLLM ``benchmarks/serve`` metric definitions.

    Worked example, Llama-3.1-8B on one H100 SXM, 1,000 tokens in, 200 out, 16 clients (vLLM V1 defaults, fitted
    constants): a decode batch of about 15 and a TPOT of about 8 ms.

    >>> r = serving_performance("llama-3.1-8b", "h100-sxm", input_tokens=1000, output_tokens=200, concurrency=16)
    >>> 5e-3 < r.tpot_s < 12e-3, 10 < r.running_batch <= 16, r.saturated
    (True, True, False)
    >>> serving_performance("llama-3.1-8b", "h100-sxm", input_tokens=1000, output_tokens=200,
    ...                     request_rate=1e4).saturated
    True
    """
    return performance(model, gpu, tp=tp, pp=pp, engine=engine, engine_version=engine_version,
                       weight_dtype=weight_dtype, kv_cache_dtype=kv_cache_dtype, input_tokens=input_tokens,
                       output_tokens=output_tokens, concurrency=concurrency, request_rate=request_rate,
                       cache_hit_rate=cache_hit_rate, max_num_batched_tokens=max_num_batched_tokens,
                       max_num_seqs=max_num_seqs, calibration=calibration, ep=ep, dp=dp,
                       max_model_len=max_model_len, chunked_prefill=chunked_prefill,
                       gpu_memory_utilization=gpu_memory_utilization)


def performance(model, gpu, *, tp=1, pp=1, engine="vllm", engine_version=None, weight_dtype="auto",
                kv_cache_dtype="auto", input_tokens, output_tokens, concurrency=None, request_rate=None,
                cache_hit_rate=0.0, max_num_batched_tokens=None, max_num_seqs=None, calibration=None,
                max_model_len: int | None = None, num_prompts: int | None = None,
                chunked_prefill: bool | None = None, latency_stat: str = "mean", ep: int = 1,
                dp: int = 1, trace: list[replay.TraceRun] | None = None,
                lengths: tuple[list[int], list[int]] | None = None, enforce_eager: bool = False,
                quantization: str | None = None, checkpoint_recipe: str | None = None,
                eager_prefill: bool | None = None,
                max_seq_len_to_capture: int | None = None,
                cuda_graph_batch_sizes: tuple[int, ...] | None = None, in_process_delivery: bool = False,
                front_end: bool = True, gpu_memory_utilization: float | None = None,
                loaded_weights_gib: float | None = None, host_staged_collectives: bool = False) -> ServingResult:
    """:func:`serving_performance` with the engine's ``max_model_len`` (vLLM V0 turns chunked prefill on above 32K
    context; None: the model's maximum), the ``num_prompts`` of a finite benchmark run (closed loop: the run
    replayed step by step as :func:`planner.serving.replay.trace_closed_run` with every request of the same
    uncached prompt and output length, :func:`uniform_lengths`, mode ``closed-trace``, the one closed-loop replay
    the accuracy tables and ``planner calibrate-bench`` use; offline: prompts that
    all fit the running batch run as one batch, :func:`planner.serving.schedule.one_shot_batch`; open loop past the
    steady-state capacity: the run replayed step by step, :func:`planner.serving.replay.finite_open_run`, mode
    ``open-finite``, latencies as ``latency_stat`` ("mean" or "median") over its requests) and vLLM V0's
    ``enable_chunked_prefill``. ``trace`` (with ``request_rate``): the runs' known arrival times and prompt lengths
    (:func:`planner.serving.accuracy.harness_trace`), and where a run carries a third list its requests' output
    lengths (:func:`planner.serving.accuracy.dstack_sharegpt_trace`; output tokens/s then uses their mean),
    replayed at any load with
    :func:`planner.serving.replay.trace_open_run` (mode ``open-trace``; ``request_rate`` only labels the load).
    ``lengths`` (with ``concurrency``): the run's per-request uncached prompt and output tokens, in order, replayed
    as a finite closed-loop run with :func:`planner.serving.replay.trace_closed_run` (mode ``closed-trace``).
    ``enforce_eager`` and ``quantization`` are vLLM's engine arguments of those names (no CUDA graphs; ``"gptq"``
    named explicitly runs a GPTQ checkpoint on the ExLlama kernels instead of Marlin), as
    :func:`planner.serving.step.build_replica` models them. ``checkpoint_recipe`` names a quantized checkpoint that
    keeps some linear layers in 16 bits (``"meta-fp8"``, :data:`planner.serving.step.CHECKPOINT_RECIPES`): their
    extra bytes come out of the KV room and the step reads and computes them at 16 bits. ``eager_prefill``: steps
    that carry prompt tokens run without CUDA graphs (None: the engine's default; True for TensorRT-LLM's PyTorch
    backend, :data:`planner.serving.step.EAGER_PREFILL`). ``max_seq_len_to_capture``: vLLM V0's engine argument
    (None: its default, 8,192); a V0 replica whose mean decode context exceeds it decodes without CUDA graphs
    (:func:`planner.serving.step.v0_decode_eager`). ``cuda_graph_batch_sizes``: TensorRT-LLM's PyTorch backend with
    ``cuda_graph_config.enable_padding`` and these ``batch_sizes`` (rule CG): a decode-only step runs its GEMMs and
    collectives at the padded batch (:func:`planner.serving.step.cuda_graph_sizes`,
    :func:`planner.serving.step.padded_decode_tokens`); None, no padding. ``in_process_delivery`` (rule D, vLLM V0
    with async output processing only): the client is an ``AsyncLLMEngine`` in the engine's own process, as
    AccelMark's V0 runner, and sees a step's first tokens at the end of the next step or at the next arrival of its
    open loop (:func:`planner.serving.replay.in_process_first_token_s`); applied in the step-by-step replays
    (``trace``, ``lengths``, ``num_prompts``), the steady state keeps Q4'. ``front_end=False``: no HTTP/API-server
    front end between client and engine, so the engine's first-token overhead ``o_ttft`` is 0 (rule D1).
    ``gpu_memory_utilization``: the engine's memory fraction (None: its default), as :func:`serving_performance`.
    ``loaded_weights_gib``: the weight load per GPU the engine logged (vLLM's "Loading model weights took X GB", in
    GiB), which replaces the model's weight count in the KV room (:func:`planner.engines.kv_capacity`'s
    ``weights_gib``; a ``checkpoint_recipe``'s extra bytes are then not added again); the step still reads the weights
    at ``weight_dtype``. ``host_staged_collectives`` (rule H): the GPUs have no peer access and share one PCIe uplink
    to host memory, through which NCCL stages every collective, so each rank gets ``1/(tp·pp)`` of the link
    (:func:`planner.serving.step.host_staged_link_bytes_per_s`)."""
    if concurrency is not None and request_rate is not None:
        raise ArgumentError("request_rate", request_rate, "None when concurrency is given (one load at a time)")
    s = _setup(model, gpu, tp=tp, pp=pp, engine=engine, engine_version=engine_version, weight_dtype=weight_dtype,
               kv_cache_dtype=kv_cache_dtype, input_tokens=input_tokens, output_tokens=output_tokens,
               cache_hit_rate=cache_hit_rate, max_num_batched_tokens=max_num_batched_tokens,
               max_num_seqs=max_num_seqs, calibration=calibration, max_model_len=max_model_len,
               chunked_prefill=chunked_prefill, ep=ep, dp=dp, enforce_eager=enforce_eager,
               quantization=quantization, checkpoint_recipe=checkpoint_recipe, eager_prefill=eager_prefill,
               max_seq_len_to_capture=max_seq_len_to_capture, cuda_graph_batch_sizes=cuda_graph_batch_sizes,
               in_process_delivery=in_process_delivery, front_end=front_end,
               gpu_memory_utilization=gpu_memory_utilization, loaded_weights_gib=loaded_weights_gib,
               host_staged_collectives=host_staged_collectives)
    return _perform(s, concurrency=concurrency, request_rate=request_rate, num_prompts=num_prompts,
                    latency_stat=latency_stat, trace=trace, lengths=lengths)


def _perform(s: _Setup, *, concurrency: float | None, request_rate: float | None, num_prompts: int | None = None,
             latency_stat: str = "mean", trace: list[replay.TraceRun] | None = None,
             lengths: tuple[list[int], list[int]] | None = None,
             memo: dict[float, sch.State] | None = None) -> ServingResult:
    """:func:`performance` of the replica ``s`` (:func:`_setup` of its arguments) at its load, the steady states
    of ``s.load`` through ``memo`` (:func:`planner.serving.schedule.solved`: a memo of this setup's load only; a
    closed loop changes the load, so its solve does not use it)."""
    pp = s.pp
    wait = 0.0
    peak: sch.State | None = None
    if concurrency is not None:
        n = check_number("concurrency", concurrency, minimum=0, exclusive_minimum=True)
        if not lengths and num_prompts:  # a finite run: replayed with uniform lengths (Q8'')
            lengths = uniform_lengths(s, prompts=int(num_prompts))
        if lengths:
            return _closed_traced(s, int(round(n)), lengths, latency_stat)
        st, wait = sch.closed_loop(s.load, clients=n / pp)
        mode = "closed"
    elif request_rate is not None:
        lam = check_number("request_rate", request_rate, minimum=0, exclusive_minimum=True)
        if trace:
            return _traced(s, trace, latency_stat)
        steady = sch.open_loop(s.load, rate=lam / pp, memo=memo)
        mode = "open"
        if steady is None:
            peak = sch.max_throughput(s.load, memo=memo)
            if num_prompts:  # a finite run past capacity: what the client measures (Q8)
                return _finite(s, lam, int(num_prompts), latency_stat, "open-finite", peak)
            return _result(s, peak, mode="open", saturated=True, wait=0.0, peak=peak)
        st = steady
    elif num_prompts and (OFFLINE_REPLAY or num_prompts / pp <= s.load.max_running):
        if OFFLINE_REPLAY:  # all prompts at once: a finite run at an unbounded rate (Q8), waves past the cap
            return _finite(s, math.inf, int(num_prompts), latency_stat, "offline-finite", None)
        st = sch.one_shot_batch(s.load, prompts=num_prompts / pp)
        mode = "offline"
    else:
        st = peak = sch.max_throughput(s.load, memo=memo)
        mode = "offline"
        st = sch.State(**{**st.__dict__, "ttft_s": s.load.replica.ttft_fixed_s + st.ttft_service_s
                          + sch.first_token_delay_s(s.load.replica, decode_seqs=st.decode_batch)})
    return _result(s, st, mode=mode, saturated=False, wait=wait, peak=peak)


OFFLINE_REPLAY = True
"""Offline runs of ``num_prompts`` replayed as a finite run with every prompt arriving at once (Q8)."""


def uniform_lengths(s: _Setup, *, prompts: int) -> tuple[list[int], list[int]]:
    """The per-request (uncached prompt, output) tokens of a finite closed-loop run of ``prompts`` requests of one
    shape: ``round(I·(1−h))`` (at least 1) and ``round(O)`` (at least 1) each, the lengths
    :func:`planner.serving.replay.trace_closed_run` replays when a run gives ``num_prompts`` but no per-request
    lengths (Q8'' with uniform lengths)."""
    p = max(int(prompts), 1)
    return ([max(int(round(s.load.input_tokens)), 1)] * p, [max(int(round(s.output_tokens)), 1)] * p)


def _traced(s: _Setup, trace: list[replay.TraceRun], stat: str) -> ServingResult:
    pp = s.pp  # each of the pp virtual engines takes every pp-th request
    runs = [cast(replay.TraceRun, tuple(list(x[k::pp]) for x in r)) for r in trace for k in range(pp) if len(r[0]) > k]
    run = replay.trace_open_run(s.load, runs=runs, stat=stat)
    outs = [o for r in trace if len(r) > 2 for o in r[2]]  # recorded output lengths: their mean, else O
    mean_out = sum(outs) / len(outs) if outs and all(len(r) > 2 for r in trace) else s.output_tokens
    return ServingResult(
        tpot_s=run.tpot_s, ttft_s=run.ttft_s, e2e_s=run.ttft_s + max(mean_out - 1, 0) * run.tpot_s,
        output_tokens_per_s=run.requests_per_s * pp * mean_out, requests_per_s=run.requests_per_s * pp,
        running_batch=run.mean_running * pp, saturated=False, mode="open-trace", decode_batch=run.mean_running * pp,
        decode_step_s=run.tpot_s, prefill_share=math.nan, admission_wait_s=0.0, max_requests_per_s=math.nan,
        max_running=s.load.max_running * pp, budget_tokens=s.load.schedule.budget_tokens,
        max_num_seqs=s.load.schedule.max_num_seqs, engine=s.engine, calibration=s.calibration.name)


def _closed_traced(s: _Setup, clients: int, lengths: tuple[list[int], list[int]], stat: str) -> ServingResult:
    pp = s.pp  # each of the pp virtual engines takes every pp-th request and 1/pp of the clients
    ins, outs = lengths
    ttfts: list[float] = []
    tpots: list[float] = []
    rates, runnings = [], []
    for k in range(min(pp, len(ins))):
        run = replay.trace_closed_run(s.load, clients=max(clients // pp, 1), input_tokens=list(ins[k::pp]),
                                   output_tokens=list(outs[k::pp]), stat=stat)
        ttfts.append(run.ttft_s)
        tpots.append(run.tpot_s)
        rates.append(run.requests_per_s)
        runnings.append(run.mean_running)
    ttft, tpot = sum(ttfts) / len(ttfts), sum(tpots) / len(tpots)
    x = sum(rates)
    mean_out = sum(outs) / len(outs)
    return ServingResult(
        tpot_s=tpot, ttft_s=ttft, e2e_s=ttft + max(mean_out - 1, 0) * tpot,
        output_tokens_per_s=x * mean_out, requests_per_s=x,
        running_batch=sum(runnings), saturated=False, mode="closed-trace", decode_batch=sum(runnings),
        decode_step_s=tpot, prefill_share=math.nan, admission_wait_s=0.0, max_requests_per_s=math.nan,
        max_running=s.load.max_running * pp, budget_tokens=s.load.schedule.budget_tokens,
        max_num_seqs=s.load.schedule.max_num_seqs, engine=s.engine, calibration=s.calibration.name)


def _finite(s: _Setup, rate: float, prompts: int, stat: str, mode: str, peak: sch.State | None) -> ServingResult:
    pp = s.pp
    run = replay.finite_open_run(s.load, rate=rate / pp, prompts=max(int(prompts / pp), 1), stat=stat)
    return ServingResult(
        tpot_s=run.tpot_s, ttft_s=run.ttft_s, e2e_s=run.ttft_s + max(s.output_tokens - 1, 0) * run.tpot_s,
        output_tokens_per_s=run.requests_per_s * pp * s.output_tokens, requests_per_s=run.requests_per_s * pp,
        running_batch=run.peak_running * pp, saturated=False, mode=mode, decode_batch=run.peak_running * pp,
        decode_step_s=run.tpot_s, prefill_share=math.nan, admission_wait_s=0.0,
        max_requests_per_s=(peak.requests_per_s * pp) if peak is not None else math.nan,
        max_running=s.load.max_running * pp, budget_tokens=s.load.schedule.budget_tokens,
        max_num_seqs=s.load.schedule.max_num_seqs, engine=s.engine, calibration=s.calibration.name)


def _result(s: _Setup, st: sch.State, *, mode: str, saturated: bool, wait: float, peak: sch.State | None
            ) -> ServingResult:
    o, pp = s.output_tokens, s.pp
    x = st.requests_per_s * pp
    ttft = math.inf if saturated else st.ttft_s + wait
    tpot = math.inf if saturated else st.tpot_s
    e2e = ttft + max(o - 1.0, 0.0) * tpot
    return ServingResult(
        tpot_s=tpot, ttft_s=ttft, e2e_s=e2e, output_tokens_per_s=x * o, requests_per_s=x,
        running_batch=st.running * pp, saturated=saturated, mode=mode, decode_batch=st.decode_batch * pp,
        decode_step_s=st.decode_step_s, prefill_share=st.prefill_share, admission_wait_s=wait,
        max_requests_per_s=(peak.requests_per_s * pp) if peak is not None else math.nan,
        max_running=s.load.max_running * pp, budget_tokens=s.load.schedule.budget_tokens,
        max_num_seqs=s.load.schedule.max_num_seqs, engine=s.engine, calibration=s.calibration.name,
    )


def _slo_limits(ttft_slo_s: float, tpot_slo_s: float) -> tuple[float, float]:
    """:func:`max_rate_at_slo`'s SLOs checked (each > 0, or ``math.inf``: none), in its order (TTFT first)."""
    ttft = math.inf if ttft_slo_s == math.inf else check_number("ttft_slo_s", ttft_slo_s, minimum=0,
                                                                 exclusive_minimum=True)
    # math.inf: no TPOT SLO (a one-token route has no gap between tokens), as math.inf is no TTFT SLO
    tpot = math.inf if tpot_slo_s == math.inf else check_number("tpot_slo_s", tpot_slo_s, minimum=0,
                                                                 exclusive_minimum=True)
    return ttft, tpot


def _rate_at_slo(s: _Setup, ttft_slo_s: float, tpot_slo_s: float,
                 memo: dict[float, sch.State] | None = None) -> float:
    """:func:`max_rate_at_slo` of the replica ``s`` at checked SLOs, the states of ``s.load`` through ``memo``
    (:func:`planner.serving.schedule.solved`)."""
    peak = sch.max_throughput(s.load, memo=memo)

    def meets(st: sch.State) -> bool:
        return st.ttft_s <= ttft_slo_s and st.tpot_s <= tpot_slo_s

    if peak.valid and meets(peak):
        return peak.requests_per_s * s.pp
    best = sch._bisect(s.load, meets, peak.decode_batch, memo=memo)
    if not (best.valid and meets(best)):
        return 0.0
    return best.requests_per_s * s.pp


def max_rate_at_slo(
    model: ModelSpec | str,
    gpu: GpuSpec | str,
    *,
    ttft_slo_s: float,
    tpot_slo_s: float,
    input_tokens: float,
    output_tokens: float,
    tp: int = 1,
    pp: int = 1,
    engine: str = "vllm",
    engine_version: str | None = None,
    weight_dtype: str = "auto",
    kv_cache_dtype: str = "auto",
    cache_hit_rate: float = 0.0,
    max_num_batched_tokens: int | None = None,
    max_num_seqs: int | None = None,
    calibration: Calibration | Mapping | str | None = None,
) -> float:
    """The highest Poisson request rate one replica sustains with mean TTFT ≤ ``ttft_slo_s`` and mean TPOT ≤
    ``tpot_slo_s`` (0 when even a vanishing load misses them): the largest decode batch ``d`` whose steady state
    (Q1-Q5) meets both, ``λ = X(d)`` (TTFT and TPOT rise with ``d``). Ref: NVIDIA NIM "highest concurrency within
    the latency bound", Dynamo SLA planner.

    Worked example, the autocomplete route of issue 11 (Llama-3.1-8B, one H100, 1,500 in / 60 out, TTFT 500 ms,
    TPOT 20 ms): every prompt's mixed step costs ~40 ms of prefill on top of a ~7 ms decode step, so TPOT ≤ 20 ms
    leaves about 15-30 requests/s per GPU (the prefill compute bound at 60% MFU alone is 28/s).

    >>> 10 < max_rate_at_slo("llama-3.1-8b", "h100-sxm", ttft_slo_s=0.5, tpot_slo_s=0.02, input_tokens=1500,
    ...                      output_tokens=60) < 28
    True
    """
    ttft, tpot = _slo_limits(ttft_slo_s, tpot_slo_s)
    s = _setup(model, gpu, tp=tp, pp=pp, engine=engine, engine_version=engine_version, weight_dtype=weight_dtype,
               kv_cache_dtype=kv_cache_dtype, input_tokens=input_tokens, output_tokens=output_tokens,
               cache_hit_rate=cache_hit_rate, max_num_batched_tokens=max_num_batched_tokens,
               max_num_seqs=max_num_seqs, calibration=calibration)
    return _rate_at_slo(s, ttft, tpot)


def replicas_at_slo(request_rate: float, *, rate_per_replica: float, failover_replicas: int = 0) -> int:
    """Replicas for ``request_rate``: ``ceil(λ / λ_replica) + k_failover`` (λ_replica from :func:`max_rate_at_slo`).

    >>> replicas_at_slo(2000, rate_per_replica=19.2), replicas_at_slo(2000, rate_per_replica=19.2, failover_replicas=2)
    (105, 107)
    """
    lam = check_number("request_rate", request_rate, minimum=0)
    rep = check_number("rate_per_replica", rate_per_replica, minimum=0)
    k = int(check_number("failover_replicas", failover_replicas, minimum=0, integer=True))
    if lam == 0:
        return k
    if rep <= 0:
        raise ArgumentError("tpot_slo_s", "unreachable", "SLOs one replica meets at some load (it misses them at "
                            "any rate: a faster GPU, more TP or a looser SLO)")
    return max(1, math.ceil(lam / rep - 1e-9)) + k


@dataclass(frozen=True, kw_only=True)
class DisaggregatedPools:
    """A prefill pool and a decode pool for one rate, and the KV bytes/s the prefill pool ships to the decode one."""

    prefill_replicas: int
    decode_replicas: int
    prefill_rate_per_replica: float
    decode_rate_per_replica: float
    decode_batch: float
    kv_transfer_bytes_per_s: float
    kv_transfer_s: float  # time to ship one request's KV over one direction of a 400 Gb/s NIC per GPU
    gpus: int


NIC_BYTES_PER_S = 50e9
"""One 400 Gb/s NIC per GPU (ConnectX-7 / InfiniBand NDR), the usual disaggregated fabric, bytes/s one way."""


def disaggregated_pools(
    model: ModelSpec | str,
    gpu: GpuSpec | str,
    *,
    request_rate: float,
    ttft_slo_s: float,
    tpot_slo_s: float,
    input_tokens: float,
    output_tokens: float,
    prefill_tp: int = 1,
    decode_tp: int = 1,
    engine: str = "vllm",
    weight_dtype: str = "auto",
    kv_cache_dtype: str = "auto",
    cache_hit_rate: float = 0.0,
    calibration: Calibration | Mapping | str | None = None,
) -> DisaggregatedPools:
    """Prefill and decode pools of a disaggregated deployment (NVIDIA Dynamo, SGLang PD, llm-d) at ``request_rate``.

    - Prefill replica: prompt-only steps of ``budget`` tokens, an M/D/1 queue: the largest rate with
      ``o_ttft + W_q + t_prefill + t_KV ≤ TTFT SLO`` (``t_KV = I·KV_token / (tp·NIC)``).
    - Decode replica: decode-only steps, no prefill interference: the largest batch with ``t_d(d) ≤ TPOT SLO``
      within the KV capacity, ``λ = d / ((O−1)·t_d)``.
    - KV transfer: ``λ·I·KV_token`` bytes/s from the prefill pool to the decode pool.

    >>> p = disaggregated_pools("llama-3.1-8b", "h100-sxm", request_rate=2000, ttft_slo_s=0.5, tpot_slo_s=0.02,
    ...                         input_tokens=1500, output_tokens=60)
    >>> p.prefill_replicas > p.decode_replicas, round(p.kv_transfer_bytes_per_s / 1e9)
    (True, 393)
    """
    lam = check_number("request_rate", request_rate, minimum=0)
    ttft = check_number("ttft_slo_s", ttft_slo_s, minimum=0, exclusive_minimum=True)
    tpot = check_number("tpot_slo_s", tpot_slo_s, minimum=0, exclusive_minimum=True)
    common = dict(engine=engine, engine_version=None, weight_dtype=weight_dtype, kv_cache_dtype=kv_cache_dtype,
                  input_tokens=input_tokens, output_tokens=output_tokens, cache_hit_rate=cache_hit_rate,
                  max_num_batched_tokens=None, max_num_seqs=None, calibration=calibration)
    pre = _setup(model, gpu, tp=prefill_tp, pp=1, **common)
    dec = pre if decode_tp == prefill_tp else _setup(model, gpu, tp=decode_tp, pp=1, **common)
    spec, _ = _specs(model, gpu)
    return _pools(spec, pre, dec, lam=lam, ttft=ttft, tpot=tpot, input_tokens=input_tokens,
                  output_tokens=output_tokens, prefill_tp=prefill_tp, decode_tp=decode_tp,
                  kv_cache_dtype=kv_cache_dtype)


def _pools(spec: ModelSpec, pre: _Setup, dec: _Setup, *, lam: float, ttft: float, tpot: float, input_tokens: float,
           output_tokens: float, prefill_tp: int, decode_tp: int, kv_cache_dtype: str) -> DisaggregatedPools:
    """:func:`disaggregated_pools` from its checked numbers and its prefill and decode replicas' setups (the fleet
    search passes the setup it already holds for the candidate: ``_setup`` is pure, so it is the same one)."""
    from planner import memory

    kd = str(kv_cache_dtype).lower()
    kv_token = memory.kv_bytes_per_token(spec, kv_cache_dtype={"bf16": "auto", "fp16": "auto"}.get(kd, kd))
    i = float(input_tokens)
    t_kv = i * kv_token / (prefill_tp * NIC_BYTES_PER_S)
    # prefill pool
    load, cal = pre.load, pre.calibration
    iu = load.input_tokens
    p_m = float(load.schedule.budget_tokens)
    t_full = step_time_s(load.replica, cal, decode_seqs=0.0, prefill_tokens=p_m, prefill_seqs=p_m / iu)
    chunk = min(iu, p_m)
    t_one = step_time_s(load.replica, cal, decode_seqs=0.0, prefill_tokens=chunk, prefill_seqs=chunk / iu)
    service = math.ceil(iu / p_m - 1e-9) * t_one
    per_prompt = t_full * iu / p_m  # engine time per prompt when steps are full
    slack = ttft - cal.ttft_fixed_s(load.replica.engine) - service - t_kv
    if slack <= 0:
        raise ArgumentError("ttft_slo_s", ttft, f"more than the prefill time of one prompt ({service + t_kv:.3f} s)")
    # W_q = rho·s/(2(1−rho)) ≤ slack  →  rho ≤ 2·slack/(s + 2·slack)
    rho = min(2 * slack / (per_prompt + 2 * slack), 0.95)
    pre_rate = rho / per_prompt
    # decode pool
    dl, o1 = dec.load, max(float(output_tokens) - 1.0, 1.0)
    lo, hi = 0.0, sch.upper_batch(dl)
    if step_time_s(dl.replica, dl.calibration, decode_seqs=1.0) > tpot:
        raise ArgumentError("tpot_slo_s", tpot, "more than one decode step of one sequence on the decode replica")
    for _ in range(sch.BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        if step_time_s(dl.replica, dl.calibration, decode_seqs=max(mid, 1.0)) <= tpot:
            lo = mid
        else:
            hi = mid
    d = max(lo, 1.0)
    dec_rate = d / (o1 * step_time_s(dl.replica, dl.calibration, decode_seqs=d))
    n_pre = replicas_at_slo(lam, rate_per_replica=pre_rate)
    n_dec = replicas_at_slo(lam, rate_per_replica=dec_rate)
    return DisaggregatedPools(prefill_replicas=n_pre, decode_replicas=n_dec, prefill_rate_per_replica=pre_rate,
                              decode_rate_per_replica=dec_rate, decode_batch=d,
                              kv_transfer_bytes_per_s=lam * i * kv_token, kv_transfer_s=t_kv,
                              gpus=n_pre * prefill_tp + n_dec * decode_tp)


def decode_rate_bound(load: sch.Load, *, output_tokens: float) -> float:
    """An upper bound on the decode pool's rate per replica that :func:`disaggregated_pools` finds on a decode
    replica of ``load``, without its bisection::

        λ_dec ≤ D / (max(O−1, 1)·t_floor(D))·(1 + 1e-9),   D = max(upper_batch, 1),   t_floor = step_floor_s

    Why it holds: the pool's batch is ``d = max(lo, 1)`` with ``lo`` inside ``[0, upper_batch]``, its rate
    ``d / (max(O−1, 1)·t_d(d))``, the decode step ``t_d(d)`` at least :func:`planner.serving.step.step_floor_s` at
    ``d``, and ``d/t_floor(d)`` rises with ``d``. ``inf`` (no bound) when the floor is 0.

    Worked example: the replica of :func:`planner.serving.schedule.rate_bound`'s example (6 sequences at most, a
    27.8 ms floor) decodes at most 0.240 requests/s of 901 output tokens.

    >>> from planner.catalog import get_gpu, get_model
    >>> from planner.serving.calibration import DERIVED
    >>> from planner.serving.step import build_replica
    >>> r = build_replica(get_model("llama-3.1-70b"), get_gpu("h100-sxm"), tp=2, context_tokens=3000,
    ...                   input_tokens=2500, calibration=DERIVED)
    >>> s = sch.engine_schedule("vllm", gpu_big=True, gpu_gib=79.6, max_position=131072)
    >>> load = sch.Load(replica=r, calibration=DERIVED, schedule=s, input_tokens=2500, output_tokens=901,
    ...                 max_running=6)
    >>> round(decode_rate_bound(load, output_tokens=901), 3)
    0.24
    """
    from planner.serving.step import step_floor_s

    d = max(sch.upper_batch(load), 1.0)
    floor = step_floor_s(load.replica, load.calibration, decode_seqs=d)
    if not floor > 0:
        return math.inf
    return d / (max(float(output_tokens) - 1.0, 1.0) * floor) * (1.0 + sch.RATE_BOUND_SLACK)


@dataclass(frozen=True, kw_only=True)
class FleetOption:
    """One fleet that meets both SLOs at the rate."""

    gpu: str
    tp: int
    pp: int
    weight_dtype: str
    kv_cache_dtype: str
    disaggregated: bool
    replicas: int
    prefill_replicas: int
    decode_replicas: int
    gpus: int
    usd_per_hour: float
    rate_per_replica: float


def cheapest_fleets(
    model: ModelSpec | str,
    *,
    request_rate: float,
    ttft_slo_s: float,
    tpot_slo_s: float,
    input_tokens: float,
    output_tokens: float,
    gpus: tuple[str, ...] | None = None,
    tps: tuple[int, ...] = TP_CHOICES,
    weight_dtypes: tuple[str, ...] = ("auto", "fp8"),
    kv_cache_dtypes: tuple[str, ...] = ("auto", "fp8"),
    engine: str = "vllm",
    cache_hit_rate: float = 0.0,
    disaggregation: bool = True,
    top: int = 5,
    calibration: Calibration | Mapping | str | None = None,
) -> list[FleetOption]:
    """The ``top`` cheapest fleets for ``request_rate`` within both SLOs: every priced catalog GPU (or ``gpus``)
    × TP (and TP 8 × PP 2) × weight dtype × KV dtype, aggregated (``replicas_at_slo``) and, with
    ``disaggregation``, split into prefill and decode pools; cost ``GPUs × catalog USD per GPU-hour``. The search is
    :func:`planner.serving.options.fleet_choices` (each candidate listed here once per mode). Options that do not
    fit or cannot meet the SLOs are left out. Cheapest first; ties by fewer GPUs.

    Worked example: 50 req/s of 1,000 in / 200 out within 1 s TTFT and 50 ms TPOT on H100 or A100 80GB: the
    cheapest option costs its GPUs times their catalog price per GPU-hour.

    >>> from planner.catalog import get_gpu
    >>> best = cheapest_fleets("llama-3.1-8b", request_rate=50, ttft_slo_s=1.0, tpot_slo_s=0.05, input_tokens=1000,
    ...                        output_tokens=200, gpus=("h100-sxm", "a100-80gb-sxm"), top=1)[0]
    >>> best.usd_per_hour == best.gpus * get_gpu(best.gpu).usd_per_gpu_hour
    True
    """
    from planner.serving.options import fleet_choices

    choices = fleet_choices(model, request_rate=request_rate, ttft_slo_s=ttft_slo_s, tpot_slo_s=tpot_slo_s,
                            input_tokens=input_tokens, output_tokens=output_tokens, gpus=gpus, tps=tps,
                            weight_dtypes=weight_dtypes, kv_cache_dtypes=kv_cache_dtypes, engine=engine,
                            cache_hit_rate=cache_hit_rate, disaggregation=disaggregation, calibration=calibration,
                            top=top)
    options: list[FleetOption] = []
    for c in choices:  # each candidate in both modes, as separate options
        common: dict[str, Any] = dict(gpu=c.gpu, tp=c.tp, pp=c.pp, weight_dtype=c.weight_dtype,
                                      kv_cache_dtype=c.kv_cache_dtype)
        if c.aggregated_gpus > 0:
            n = c.aggregated_gpus // (c.tp * c.pp)
            options.append(FleetOption(**common, disaggregated=False, replicas=n, prefill_replicas=0,
                                       decode_replicas=0, gpus=c.aggregated_gpus,
                                       usd_per_hour=c.aggregated_gpus * c.usd_per_gpu_hour,
                                       rate_per_replica=c.rate_per_replica))
        if c.disaggregated_gpus > 0:
            options.append(FleetOption(**common, disaggregated=True,
                                       replicas=c.prefill_replicas + c.decode_replicas,
                                       prefill_replicas=c.prefill_replicas, decode_replicas=c.decode_replicas,
                                       gpus=c.disaggregated_gpus,
                                       usd_per_hour=c.disaggregated_gpus * c.usd_per_gpu_hour,
                                       rate_per_replica=math.nan))
    options.sort(key=lambda f: (f.usd_per_hour, f.gpus, f.disaggregated))
    return options[: max(int(top), 1)]


def describe(result: ServingResult) -> dict[str, Any]:
    """The result as plain numbers (for the CLI and the accuracy report)."""
    return dict(result.__dict__)


@dataclass(frozen=True, kw_only=True)
class BenchCalibration:
    """What ``planner calibrate-bench`` reports: the fitted calibration and, per run, measured vs predicted
    (TPOT, TTFT, output tokens/s) before and after the fit."""

    calibration: Calibration
    rows: tuple[dict[str, Any], ...]
    loss_before: float
    loss_after: float


def _read_bench(path: Path) -> list[Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ArgumentError("RESULT", str(path), f"a readable benchmark result file ({type(exc).__name__})") from None
    try:
        data = json.loads(text)
        return data if isinstance(data, list) else [data]
    except json.JSONDecodeError:
        pass
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                from planner.serving.bench import BenchFormatError

                raise BenchFormatError(f"{path}: line {number} is not JSON (expected a JSON result or JSON lines)"
                                       ) from None
    return records


def calibrate_from_bench(
    path: str | Path,
    *,
    gpu: GpuSpec | str | None,
    model: ModelSpec | str | None = None,
    tp: int = 1,
    pp: int = 1,
    engine: str | None = None,
    engine_version: str | None = None,
    weight_dtype: str = "auto",
    kv_cache_dtype: str = "auto",
    start: Calibration | Mapping | str | None = None,
    replicas: int = 1,
) -> BenchCalibration:
    """Fit the constants of :data:`planner.serving.bench.FIT_CONSTANTS` to the runs of one benchmark result file
    (``vllm bench serve``, SGLang ``bench_serving`` or genai-perf), starting from ``start`` (the default
    calibration). The file does not say which GPU ran it; ``gpu`` is required, ``model`` when the file does not name
    a catalog model. ``replicas``: identical servers of ``tp × pp`` GPUs behind one load balancer (the client's
    rate and concurrency are shared among them, its throughput is theirs together).

    Each run is predicted as the finite run it was: its ``num_prompts`` go to the model in every mode (a closed loop's
    first ``concurrency`` requests arrive together; an open loop past the replica's capacity is replayed step by step;
    ``--request-rate inf`` without a concurrency cap sends all prompts at once, replayed as one offline run), so a
    run's queueing is predicted, not reported as *saturated* or as a steady state it never reached.
    """
    from planner.catalog import get_model
    from planner.serving import accuracy
    from planner.serving.bench import FIT_CONSTANTS, BenchFormatError, fit, parse

    where = str(path)
    runs = parse(_read_bench(Path(path).expanduser()), where=where)
    if gpu is None:
        raise BenchFormatError(f"{where}: the result does not record the GPU; pass --gpu")
    name = model if model is not None else runs[0].model
    if name is None:
        raise BenchFormatError(f"{where}: no model named in the result ({runs[0].tool}); pass --model")
    try:
        spec = get_model(name)
    except PlannerError:
        raise BenchFormatError(f"{where}: model {name!r} is not in the catalog; pass --model with a catalog name or "
                               "a config.json") from None
    card = _specs(spec, gpu)[1]
    replicas = int(check_number("replicas", replicas, minimum=1, integer=True))
    key = normalize_engine(engine or ("sglang" if runs[0].tool == "sglang" else "vllm"), engine_version=engine_version)
    cal0 = load_calibration(start)
    points = []
    for i, run in enumerate(runs):
        measured = {k: v for k, v in (("tpot_ms", run.tpot_s and run.tpot_s * 1e3),
                                      ("ttft_ms", run.ttft_s and run.ttft_s * 1e3),
                                      ("output_tokens_per_s", run.output_tokens_per_s)) if v}
        if not measured:
            raise BenchFormatError(f"{where}: run {i + 1} has none of TPOT, TTFT, output throughput")
        mode = "closed" if run.concurrency else ("open" if run.request_rate else "offline")
        points.append({
            "id": f"{Path(where).name}#{i + 1}", "engine": {"vllm-v0": "vllm"}.get(key, key),
            "engine_version": engine_version if key != "vllm-v0" else (engine_version or "0.6.6"),
            "model": spec, "model_in_catalog": True, "gpu": card, "gpu_in_catalog": True,
            "gpu_count": tp * pp * replicas, "dp": replicas if replicas > 1 else None,
            "tp": tp, "pp": pp, "weight_dtype": weight_dtype, "kv_cache_dtype": kv_cache_dtype,
            "input_tokens": run.input_tokens, "output_tokens": run.output_tokens, "mode": mode,
            "concurrency": run.concurrency, "request_rate_per_s": run.request_rate,
            "num_prompts": run.num_prompts, "measured": measured,
            "throughput_scope": "total", "stat": "mean",
        })

    def loss(c: Calibration) -> float:
        return accuracy.fitted_objective(accuracy.evaluate(points, calibration=c))

    names = tuple(n.format(engine=key) for n in FIT_CONSTANTS)
    before = accuracy.evaluate(points, calibration=cal0)
    fitted, after_loss = fit(cal0, names=names, loss=loss, rounds=3)
    fitted = fitted.replace(name=f"calibrate-bench {Path(where).name}",
                            source=f"planner calibrate-bench {Path(where).name} ({runs[0].tool}, {spec.name} on "
                            f"{card.name} x{tp * pp}" + (f", {replicas} replicas" if replicas > 1 else "")
                            + f", {key})")
    after = accuracy.evaluate(points, calibration=fitted)
    rows = []
    for b, a in zip(before, after):
        for metric in ("tpot", "ttft", "otps"):
            if metric in b.measured:
                rows.append({"run": b.id, "metric": metric, "measured": b.measured[metric],
                             "before": b.predicted.get(metric), "after": a.predicted.get(metric)})
    return BenchCalibration(calibration=fitted, rows=tuple(rows), loss_before=loss(cal0), loss_after=after_loss)
