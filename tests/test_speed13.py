"""Session 18 (speed13) made the registry functions' own work cheaper with every value unchanged; each test here fails
if a rewritten step parts from the one it replaced or if a cache answers another table's question.

- :func:`planner.serving.step.step_parts` (helpers written inline): against the replaced body, kept below as the
  reference, over replicas of dense, MoE and MLA models, engines, parallel shapes and the rule switches;
- :func:`planner.serving.schedule.state` (step times summed in place, :func:`~planner.serving.schedule._state`);
- :func:`planner.sheet.forecast._month1_bill`, :func:`~planner.sheet.forecast._bill_column` and
  :func:`~planner.sheet.forecast._plan_backend_at` (keyed on the table, the row or field; a raised call not kept);
- :func:`planner.memory.check_parallelism`'s whole-number path.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest

from planner import memory
from planner.catalog import get_gpu, get_model
from planner.errors import ArgumentError, PlannerError, Refusal, check_number, read_row
from planner.serving import schedule as sch
from planner.serving import step
from planner.serving.api import load_calibration
from planner.serving.calibration import DERIVED
from planner.sheet import forecast as sf


def _reference_step_parts(r: step.Replica, cal: Any, *, decode_seqs: float, prefill_tokens: float = 0.0,
                          prefill_seqs: float = 0.0) -> tuple[float, float, float]:
    """:func:`planner.serving.step.step_parts` as it was before speed13 (branch speed12), the rules read from the
    module as it reads them."""
    d, p = decode_seqs, prefill_tokens
    m = d + p
    if m <= 0:
        return 0.0, 0.0, 0.0
    sampled = d + prefill_seqs
    host = r.seq_s * step.host_sequences(r.engine, sampled, dp=r.dp)
    routed = m
    if r.graph_sizes and p <= 0:
        m = sampled = step.padded_decode_tokens(d, r.graph_sizes, dp=r.dp)
    eff = cal.gemm_eff * m / (m + cal.gemm_half_tokens) * r.quant_kernel_eff
    flops = r.body_flops_per_token * m + r.head_flops_per_token * sampled
    compute = flops / (r.peak_flops_per_s * eff * r.vendor_eff)
    read = r.dense_bytes
    if r.dequant_bytes and m > step.EXLLAMA_MAX_Q_GEMM_ROWS:
        read += r.dequant_bytes
    if r.num_experts:
        e, k = r.num_experts, r.experts_per_token
        touched = min(e * (1 - (1 - k / e) ** routed), k * routed, e)
        read += touched * r.expert_bytes
        per_expert_tokens = m * r.experts_per_token / max(touched, 1.0)
        eff_e = cal.moe_eff * cal.gemm_eff * per_expert_tokens / (per_expert_tokens + cal.gemm_half_tokens)
        compute += r.expert_flops_per_token * m / (r.peak_flops_per_s * eff_e * r.quant_kernel_eff * r.vendor_eff)
    gemm = max(read / (r.mem_bw_bytes_per_s * cal.weight_bw_eff), compute)
    if r.moe_act_bytes:
        gemm += r.moe_act_bytes * m / (r.mem_bw_bytes_per_s * cal.weight_bw_eff)
    if r.layer_act_passes:
        tokens = p if step.LAYER_ACT_PROMPT_ONLY else m
        moved = sum(n * max(0.0, tokens * b - r.act_cache_bytes) for b, n in r.layer_act_passes)
        gemm += moved / (r.mem_bw_bytes_per_s * cal.weight_bw_eff)
    g = float(r.dp)
    attn = max(d / g * r.kv_read_bytes_per_seq / (r.mem_bw_bytes_per_s * cal.kv_bw_eff),
               (d * r.attn_flops_per_seq + p * r.attn_flops_per_prefill_token) / g
               / (r.peak16_flops_per_s * (cal.attn_eff if r.attn_eff is None else r.attn_eff) * r.vendor_eff))
    comm = 0.0
    if r.tp > 1 or r.pp > 1 or r.ep > 1:
        alpha = cal.pcie_allreduce_latency_s if r.link_is_pcie else cal.allreduce_latency_s
        msg = m * r.hidden * step.ACT_BYTES
        tp_attn = r.tp // r.dp
        if tp_attn > 1:
            comm += r.layers * (alpha + 2 * (tp_attn - 1) / tp_attn * msg / g / r.link_bytes_per_s)
        if r.ep > 1 and r.num_experts:
            comm += 2 * r.layers * (alpha + r.experts_per_token * msg / r.tp * (r.ep - 1) / r.ep
                                    / r.link_bytes_per_s)
        elif r.moe_comm_layers:
            comm += r.moe_comm_layers * (2 * alpha + (r.tp - 1) / r.tp * m * r.hidden
                                         * (r.moe_gather_bytes + step.ACT_BYTES) / r.link_bytes_per_s)
        elif r.tp > 1:
            comm += r.layers * (alpha + 2 * (r.tp - 1) / r.tp * msg / r.link_bytes_per_s)
        if r.pp > 1:
            comm += (r.pp - 1) * (alpha + msg / r.link_bytes_per_s)
    layers = step.launch_layers(r)
    floor = layers * cal.layer_floor_s
    eager = r.eager or (p > 0 and r.eager_prefill)
    if eager:
        floor = max(floor, layers * cal.eager_layer_floor_s)
    if step.COMM_UNDER_LAUNCH_FLOOR:
        body, comm = step.comm_under_launch_floor(gemm + attn, comm, floor)
    else:
        body = max(gemm + attn, floor)
    if r.overlap_host:
        launch = layers * cal.eager_layer_floor_s if eager else 0.0
        return max(launch + r.fixed_s + host - (body + comm), 0.0), body, comm
    if r.overlap_seq:
        return r.fixed_s + max(host - (body + comm), 0.0), body, comm
    return r.fixed_s + host, body, comm


def _replicas() -> list[tuple[step.Replica, Any]]:
    """Replicas over the step's branches: dense, MoE and MLA models; one GPU and tensor, pipeline, expert and
    attention data parallelism; vLLM, V0, SGLang and TensorRT-LLM (its PyTorch backend's overlap); 8- and 4-bit
    weights (GPTQ's ExLlama path); CUDA-graph padding; eager steps; two calibrations."""
    out = []
    cals = (DERIVED, load_calibration(None))
    shapes = [  # model, gpu, tp, pp, ep, dp, engine, weight dtype, extra
        ("llama-3.1-8b", "h100-sxm", 1, 1, 1, 1, "vllm", "auto", {}),
        ("llama-3.1-8b", "a100-80gb", 1, 1, 1, 1, "vllm-v0", "int4", {"quantization": "gptq"}),
        ("llama-3.1-70b", "h100-sxm", 4, 2, 1, 1, "sglang", "fp8", {}),
        ("llama-3.1-70b", "h100-pcie", 2, 1, 1, 1, "vllm", "auto", {"enforce_eager": True}),
        ("qwen3-30b-a3b", "h100-sxm", 2, 1, 2, 1, "vllm", "auto", {}),
        ("qwen3-30b-a3b", "h100-sxm", 8, 1, 1, 8, "trtllm", "fp8",
         {"eager_prefill": True, "graph_sizes": (1, 8, 64, 256)}),
        ("deepseek-v3", "h200", 8, 1, 1, 8, "trtllm", "fp8", {"graph_sizes": (1, 4, 32)}),
        ("deepseek-v3", "h200", 8, 1, 1, 1, "sglang", "fp8", {}),
    ]
    for cal, (model, gpu, tp, pp, ep, dp, engine, wd, extra) in itertools.product(cals, shapes):
        try:
            r = step.build_replica(get_model(model), get_gpu(gpu), tp=tp, pp=pp, ep=ep, dp=dp, weight_dtype=wd,
                                   context_tokens=1500.0, input_tokens=1000.0, cached_tokens=200.0, engine=engine,
                                   calibration=cal, **extra)
        except PlannerError:
            continue
        out.append((r, cal))
    return out


_STEPS = [dict(decode_seqs=d, prefill_tokens=p, prefill_seqs=p / 700.0)
          for d in (0.0, 0.4, 1.0, 7.0, 64.0, 300.0, 3001.0) for p in (0.0, 37.0, 2048.0)]

_RULES = ("ATTENTION_DP_HOST_PER_RANK", "LAYER_ACT_TRAFFIC", "LAYER_ACT_PROMPT_ONLY", "MOE_LAUNCH_BY_LAYER",
          "COMM_UNDER_LAUNCH_FLOOR")


@pytest.mark.parametrize("flip", [None, *_RULES])
def test_step_parts_as_before(monkeypatch: pytest.MonkeyPatch, flip: str | None) -> None:
    """Every replica and step, under the rules as they are and with each one switched: the same three floats as the
    replaced body (their ``repr``, so -0.0 and 0.0 too). ``LAYER_ACT_TRAFFIC`` is read when a replica is built."""
    if flip is not None:
        monkeypatch.setattr(step, flip, not getattr(step, flip))
    replicas = _replicas()
    assert len(replicas) >= 12
    n = 0
    for (r, cal), kw in itertools.product(replicas, _STEPS):
        assert repr(step.step_parts(r, cal, **kw)) == repr(_reference_step_parts(r, cal, **kw)), (r.engine, kw)
        n += 1
    assert n == len(replicas) * len(_STEPS)


def test_state_sums_the_step_parts_and_is_a_state() -> None:
    """A steady state's decode step is step_time_s's (the parts summed in the same order), and the state built
    without the dataclass's ``__init__`` equals, hashes and shows as the one built with it."""
    for r, cal in _replicas()[:6]:
        s = sch.engine_schedule(r.engine.split("-")[0] if r.engine != "vllm-v0" else "vllm-v0", gpu_big=True,
                                gpu_gib=79.6, max_position=131072)
        load = sch.Load(replica=r, calibration=cal, schedule=s, input_tokens=800.0, output_tokens=200.0,
                        max_running=256.0)
        for d in (0.3, 1.0, 17.0, 200.0):
            st = sch.state(load, d=d)
            assert st.decode_step_s == step.step_time_s(r, cal, decode_seqs=max(d, 1.0))
            built = sch.State(**st.__dict__)
            assert st == built and hash(st) == hash(built) and repr(st) == repr(built)
            assert type(st) is sch.State and set(st.__dict__) == {f for f in sch.State.__dataclass_fields__}
            with pytest.raises(AttributeError):  # still frozen
                st.tpot_s = 0.0  # type: ignore[misc]


def _route_table(rows: list[dict[str, Any]]) -> tuple:
    return (tuple(sf.ROUTE_KEYS), *(tuple(r.get(k) for k in sf.ROUTE_KEYS) for r in rows))


def _routes() -> list[dict[str, Any]]:
    """Four route rows: two API routes (one with its own growth), a row without a route, a fleet's route."""
    return [dict(route="chat", backend="api", input_usd=100.0, cache_read_usd=2.0, cache_write_usd=1.5,
                 output_usd=50.0, growth=0.1),
            dict(route=None, backend="api", input_usd=7.0, output_usd=7.0),  # no route: left out
            dict(route="rag", backend="api", input_usd=30.0, cache_read_usd=None, cache_write_usd=0.0,
                 output_usd=12.0),
            dict(route="batch", backend="fleet", input_usd=1.0, cache_read_usd=0.25, cache_write_usd=0.0,
                 output_usd=3.0, growth=0.3)]


def _reference_bill(f: str, table: tuple, month: int, x: float) -> float:
    """FORECAST_MONTH's bill field as it was before speed13."""
    return sum(float(check_number(f, v)) * multiple
               for r, multiple in zip(sf._route_rows(table), sf._multiples(table, None, month, x))
               if not sf._blank(r["route"]) for v in (read_row(r[f]),) if not sf._blank(v))


def _outcome(call: Any, *args: Any) -> tuple[str, str]:
    try:
        return "value", repr(call(*args))
    except PlannerError as error:
        return type(error).__name__, str(error)


_BACKENDS = (tuple(sf.BACKEND_KEYS),)


def test_bill_fields_as_before_and_keyed_on_the_table_and_field() -> None:
    """Each bill field of several months and multiples: the same sum (or the same error) as the loop it replaced,
    for tables that differ in one cell asked one after the other (a column kept for the first is not the second's),
    and a bad cell's error raised again on the next call (a raised call is not kept)."""
    rows = _routes()
    variants = [rows]
    for i, key, value in ((0, "output_usd", 51.0), (2, "cache_read_usd", 4.0), (3, "input_usd", None),
                          (1, "route", "late"), (2, "output_usd", "12x"), (3, "cache_write_usd", Refusal("kv: bad")),
                          (0, "growth", 0.2)):
        changed = [dict(r) for r in rows]
        changed[i][key] = value
        variants.append(changed)
    for variant, month, x, f in itertools.product(variants, (1, 3, 12), (1.0, 1.7), sf.BILL_FIELDS):
        table = _route_table(variant)
        got = _outcome(sf.FORECAST_MONTH, f, x, 0.8, _BACKENDS, month, table)
        assert got == _outcome(_reference_bill, f, sf._hashable(table), month, x), (variant, f)
        assert got == _outcome(sf.FORECAST_MONTH, f, x, 0.8, _BACKENDS, month, table)


def _reference_route_bill(row: dict[str, Any], multiple: float) -> float:
    """An API route's month as FORECAST_ROUTE_MONTH computed it before speed13."""
    return sum(float(check_number(k, read_row(row[k]))) for k in sf.BILL_FIELDS) * multiple


def test_api_route_bill_keyed_on_the_table_and_the_row() -> None:
    """An API route's month: its month-1 classes summed, times its multiple, for each route of tables one cell apart
    (the kept month-1 bill is the table's and the row's); a refusal in a class is raised on every call."""
    rows = _routes()
    backends = (tuple(sf.BACKEND_KEYS),
                tuple({"backend": "api", "type": "provider", "top_route": "chat", "linear_util": 0.5,
                       "binding": "ITPM", "units": 1.0, "limit_util": 0.5, "limit_binding": "ITPM"}.get(k, 0.0)
                      for k in sf.BACKEND_KEYS))
    for i, key, value in ((None, None, None), (0, "cache_write_usd", 2.5), (2, "output_usd", 13.0),
                          (0, "input_usd", Refusal("input_usd: got 'x', expected a number"))):
        variant = [dict(r) for r in rows]
        if i is not None:
            variant[i][key] = value
        table = _route_table(variant)
        for route, month in itertools.product(("chat", "rag"), (1, 2, 7)):
            got = _outcome(sf.FORECAST_ROUTE_MONTH, "usd", 1.2, 0.8, backends, route, month, table)
            mine = next(r for r in variant if r["route"] == route)
            multiple = sf._multiples(sf._hashable(table), None, month, 1.2)[variant.index(mine)]
            assert got == _outcome(_reference_route_bill, mine, multiple), (route, month, key)
            assert got == _outcome(sf.FORECAST_ROUTE_MONTH, "usd", 1.2, 0.8, backends, route, month, table)


def test_backend_by_name_is_the_first_row_of_that_name() -> None:
    """The backend table's rows by name, the first of a repeated name (as the scan it replaced found it), for two
    tables one type apart."""
    def backend(name: str, kind: str) -> tuple:
        cells = {"backend": name, "type": kind, "top_route": "r", "linear_util": 0.5, "binding": "ITPM",
                 "units": 1.0}
        return tuple(cells.get(k, 0.0) for k in sf.BACKEND_KEYS)

    a = (tuple(sf.BACKEND_KEYS), backend(" API ", "provider"), backend("api", "fleet"), backend("f", "fleet"))
    b = (tuple(sf.BACKEND_KEYS), backend(" API ", "fleet"), backend("api", "fleet"), backend("f", "fleet"))
    assert sf._plan_backend_at(a)["api"].kind == "provider"
    assert sf._plan_backend_at(b)["api"].kind == "fleet"
    assert set(sf._plan_backend_at(a)) == {"api", "f"}


@pytest.mark.parametrize("tp,pp", [(1, 1), (8, 2), (4, 1.0), (4.0, 1), (True, 1), (0, 1), (3, 1), (2, 200), (-2, 1),
                                   (2**53 + 1, 1), (1.5, 1), (math.inf, 1), ("2", 1)])
def test_check_parallelism_as_before(tp: Any, pp: Any) -> None:
    """Whole numbers taken as they are give check_number's answer; anything else goes through it as before."""
    model = get_model("llama-3.1-70b")

    def reference() -> tuple[int, int]:
        tp_n = int(check_number("tp", tp, minimum=1, integer=True))
        pp_n = int(check_number("pp", pp, minimum=1, integer=True))
        if not memory._tp_splits(model, tp_n):
            raise ArgumentError("tp", tp, "a divisor")
        if pp_n > model.num_hidden_layers:
            raise ArgumentError("pp", pp, "at most the layers")
        return tp_n, pp_n

    got, want = _outcome(lambda: memory.check_parallelism(model, tp=tp, pp=pp)), _outcome(reference)
    assert got[0] == want[0]
    if got[0] == "value":
        assert got == want and [type(v) for v in memory.check_parallelism(model, tp=tp, pp=pp)] == [int, int]
