"""Benchmark result files and fitting the serving constants to them (pure: parsed JSON in, values out).

Reads the result JSON of three tools (field names from their sources):

- ``vllm bench serve --save-result`` (``vllm/benchmarks/serve.py``: ``result`` dict with ``completed``,
  ``total_input_tokens``, ``total_output_tokens``, ``request_throughput``, ``output_throughput``,
  ``mean_ttft_ms``, ``mean_tpot_ms``, ``mean_itl_ms``, ``mean_e2el_ms``; ``main`` adds ``model_id``,
  ``num_prompts``, ``request_rate`` (``"inf"`` when unset) and ``max_concurrency``);
- SGLang ``python -m sglang.bench_serving --output-file`` (``python/sglang/bench_serving.py``: one JSON object
  per line with ``backend``, ``request_rate``, ``max_concurrency``, ``completed``, ``total_input_tokens``,
  ``total_output_tokens``, ``output_throughput``, ``mean_e2e_latency_ms``, ``mean_ttft_ms``, ``mean_tpot_ms``,
  ``mean_itl_ms``);
- NVIDIA genai-perf / AIPerf ``profile_export_genai_perf.json`` (``profile_export_aiperf.json``): one object per
  metric with ``unit`` and ``avg`` (``time_to_first_token``, ``inter_token_latency``, ``request_throughput``,
  ``output_token_throughput``, ``input_sequence_length``, ``output_sequence_length``) and the run's settings under
  ``input_config``.

:func:`fit` then adjusts a calibration's constants to the runs by coordinate descent in log space.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from planner.errors import PlannerError
from planner.serving.calibration import Calibration


class BenchFormatError(PlannerError):
    """A benchmark result file the planner cannot read; the message names the file and what is missing."""


@dataclass(frozen=True, kw_only=True)
class BenchRun:
    """One measured run: means as the tool reports them (seconds, tokens/s of the whole server)."""

    tool: str  # "vllm" | "sglang" | "genai-perf"
    model: str | None
    input_tokens: float
    output_tokens: float
    concurrency: float | None
    request_rate: float | None
    num_prompts: int | None
    tpot_s: float | None
    ttft_s: float | None
    output_tokens_per_s: float | None


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(float(value)) else None
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def _rate(value: Any) -> float | None:
    rate = _num(value)
    return rate if rate and rate > 0 else None


def _ms(record: Mapping[str, Any], *keys: str) -> float | None:
    for key in keys:
        value = _num(record.get(key))
        if value is not None and value > 0:
            return value / 1e3
    return None


def _from_vllm_like(record: Mapping[str, Any], where: str, tool: str) -> BenchRun:
    completed = _num(record.get("completed"))
    if not completed:
        raise BenchFormatError(f"{where}: no completed requests ('completed' is missing or 0)")
    total_in, total_out = _num(record.get("total_input_tokens")), _num(record.get("total_output_tokens"))
    if not total_in or not total_out:
        raise BenchFormatError(f"{where}: 'total_input_tokens' and 'total_output_tokens' are needed for the "
                               "request shape")
    conc = _rate(record.get("max_concurrency"))
    return BenchRun(
        tool=tool, model=record.get("model_id") if isinstance(record.get("model_id"), str) else None,
        input_tokens=total_in / completed, output_tokens=total_out / completed, concurrency=conc,
        request_rate=None if conc else _rate(record.get("request_rate")),
        num_prompts=int(_num(record.get("num_prompts")) or completed),
        tpot_s=_ms(record, "mean_tpot_ms", "mean_itl_ms"), ttft_s=_ms(record, "mean_ttft_ms"),
        output_tokens_per_s=_num(record.get("output_throughput")),
    )


def _avg(record: Mapping[str, Any], key: str, where: str, *, time: bool) -> float | None:
    metric = record.get(key)
    if not isinstance(metric, Mapping):
        return None
    value = _num(metric.get("avg"))
    if value is None:
        return None
    if time:
        unit = str(metric.get("unit", "ms")).lower()
        scale = {"ms": 1e-3, "s": 1.0, "sec": 1.0, "us": 1e-6, "ns": 1e-9}.get(unit)
        if scale is None:
            raise BenchFormatError(f"{where}: unknown time unit {unit!r} of {key}")
        value *= scale
    return value


def _find(config: Any, key: str) -> Any:
    """The first value of ``key`` anywhere in a nested input_config."""
    if isinstance(config, Mapping):
        if key in config and not isinstance(config[key], Mapping):
            return config[key]
        for value in config.values():
            found = _find(value, key)
            if found is not None:
                return found
    return None


def _from_genai_perf(record: Mapping[str, Any], where: str) -> BenchRun:
    isl = _avg(record, "input_sequence_length", where, time=False)
    osl = _avg(record, "output_sequence_length", where, time=False)
    if not isl or not osl:
        raise BenchFormatError(f"{where}: 'input_sequence_length' and 'output_sequence_length' (avg) are needed")
    config = record.get("input_config", {})
    model = _find(config, "model")
    if isinstance(model, list):
        model = model[0] if model else None
    conc = _rate(_find(config, "concurrency"))
    return BenchRun(
        tool="genai-perf", model=model if isinstance(model, str) else None, input_tokens=isl, output_tokens=osl,
        concurrency=conc, request_rate=None if conc else _rate(_find(config, "request_rate")),
        num_prompts=int(_num(_find(config, "request_count")) or 0) or None,
        tpot_s=_avg(record, "inter_token_latency", where, time=True),
        ttft_s=_avg(record, "time_to_first_token", where, time=True),
        output_tokens_per_s=_avg(record, "output_token_throughput", where, time=False),
    )


def parse(records: list[Any], *, where: str) -> list[BenchRun]:
    """The runs in a result file already decoded to JSON objects (one, or one per line for SGLang's JSONL).

    >>> run = parse([{"completed": 100, "total_input_tokens": 100000, "total_output_tokens": 20000,
    ...               "mean_ttft_ms": 50.0, "mean_tpot_ms": 9.0, "output_throughput": 1800.0,
    ...               "max_concurrency": 16, "request_rate": "inf", "model_id": "meta-llama/Llama-3.1-8B-Instruct",
    ...               "mean_e2el_ms": 1900.0}], where="r.json")[0]
    >>> run.tool, run.input_tokens, run.concurrency, run.tpot_s
    ('vllm', 1000.0, 16.0, 0.009)
    """
    runs = []
    for record in records:
        if not isinstance(record, Mapping):
            raise BenchFormatError(f"{where}: not a JSON object per run")
        if isinstance(record.get("time_to_first_token"), Mapping):
            runs.append(_from_genai_perf(record, where))
        elif "mean_e2e_latency_ms" in record:
            runs.append(_from_vllm_like(record, where, "sglang"))
        elif "mean_ttft_ms" in record or "mean_e2el_ms" in record:
            runs.append(_from_vllm_like(record, where, "vllm"))
        else:
            raise BenchFormatError(f"{where}: not a vllm bench serve, SGLang bench_serving or genai-perf result "
                                   "(none of mean_ttft_ms, mean_e2e_latency_ms, time_to_first_token)")
    if not runs:
        raise BenchFormatError(f"{where}: no runs in the file")
    return runs


FIT_CONSTANTS = ("weight_bw_eff", "kv_bw_eff", "gemm_eff", "ttft_overhead_s:{engine}", "step_overhead_s:{engine}",
                 "per_seq_overhead_s:{engine}")
"""What :func:`fit` adjusts for one setup (the engine's entries of the per-engine tables)."""

_EFFICIENCIES = {"weight_bw_eff", "kv_bw_eff", "gemm_eff", "attn_eff", "attn_eff_pre_hopper", "moe_eff",
                 "w4_kernel_eff", "rocm_eff", "fp4_eff"}


def get_constant(cal: Calibration, *, name: str) -> float:
    """A constant by name; ``table:engine`` for a per-engine entry."""
    if ":" in name:
        key, engine = name.split(":")
        if key == "step_overhead_s":  # the value the model uses (trtllm-pytorch falls back to trtllm)
            return cal.overhead_s(engine)
        table: dict[str, float] = dict(getattr(cal, key))
        return float(table.get(engine, table.get("vllm", 0.0)))
    return float(getattr(cal, name))


def set_constant(cal: Calibration, *, name: str, value: float) -> Calibration:
    """``cal`` with one constant changed (efficiencies capped at 1)."""
    if ":" in name:
        key, engine = name.split(":")
        if key in _EFFICIENCIES:
            value = min(value, 1.0)
        return cal.replace(**{key: {engine: value}})
    if name in _EFFICIENCIES:
        value = min(value, 1.0)
    return cal.replace(**{name: value})


def fit(cal: Calibration, *, names: tuple[str, ...], loss: Callable[[Calibration], float], rounds: int = 3,
        step: float = 1.6, log: Callable[[str], None] | None = None) -> tuple[Calibration, float]:
    """Coordinate descent in log space: each constant in turn is multiplied or divided by ``step`` while the loss
    falls; ``step`` shrinks to its square root each round. Returns the calibration and its loss.

    >>> from planner.serving.calibration import DERIVED
    >>> best, value = fit(DERIVED, names=("kv_bw_eff",), loss=lambda c: abs(math.log(c.kv_bw_eff / 0.3)), rounds=4)
    >>> round(best.kv_bw_eff, 2)
    0.3
    """
    best = loss(cal)
    for rnd in range(rounds):
        for name in names:
            for factor in (step, 1 / step):
                trial = set_constant(cal, name=name, value=get_constant(cal, name=name) * factor)
                value = loss(trial)
                if value < best - 1e-6:
                    cal, best = trial, value
                    while True:
                        trial = set_constant(cal, name=name, value=get_constant(cal, name=name) * factor)
                        value = loss(trial)
                        if value >= best - 1e-6:
                            break
                        cal, best = trial, value
                    break
            if log:
                log(f"round {rnd} {name} = {get_constant(cal, name=name):.4g}  loss {best:.4f}")
        step = step ** 0.5
    return cal, best
