"""A plan's input cells: the bundled catalog (GPUs and Models sheets) and a scenario (Plan, Providers, Fleet, Routes).

``planner size`` evaluates ``{**catalog_inputs(), **scenario_inputs(s)}`` through
:func:`planner.template.evaluate_plan`,
exactly what the template builder writes into a sample workbook. Pure: the catalog is read through
:mod:`planner.catalog` (package data), nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from planner import template as ts
from planner.errors import ArgumentError


def catalog_inputs() -> dict[tuple[str, str], Any]:
    """GPUs and Models sheets filled from the bundled catalog."""
    from planner import catalog

    out: dict[tuple[str, str], Any] = {}
    gpus = catalog.gpus()[: ts.GPU_ROWS]
    for i, g in enumerate(gpus):
        row = {
            "name": g.name,
            "display_name": g.display_name,
            "hbm_gib": round(g.hbm_gib, 2),
            "mem_bw_gb_s": g.mem_bw_bytes_per_s / 1e9,
            "bf16_tflops": g.bf16_flops_per_s / 1e12,
            "fp8_tflops": None if g.fp8_flops_per_s is None else g.fp8_flops_per_s / 1e12,
            "usd_per_gpu_hour": g.usd_per_gpu_hour,
            "source": g.source,
            "as_of": g.as_of,
        }
        for k, v in row.items():
            out[(ts.GPUS.sheet, ts.GPUS.cell(k, i))] = v
    for i, m in enumerate(catalog.models()[: ts.MODEL_ROWS]):
        row = {
            "name": m.name,
            "hf_id": m.hf_id,
            "attention": m.attention,
            "layers": m.num_hidden_layers,
            "kv_heads": m.num_key_value_heads,
            "head_dim": m.head_dim,
            "sliding_window": m.sliding_window,
            "params_total_b": round(m.params_total / 1e9, 3),
            "params_active_b": round(m.params_active / 1e9, 3),
            "max_context": m.max_position_embeddings,
            "source": m.source,
            "as_of": m.as_of,
        }
        for k, v in row.items():
            out[(ts.MODELS.sheet, ts.MODELS.cell(k, i))] = v
    return out


def _put(out: dict, t: ts.Table, i: int, row: Mapping[str, Any]) -> None:
    for k, v in row.items():
        if v is not None:
            out[(t.sheet, t.cell(k, i))] = float(v) if isinstance(v, int) and not isinstance(v, bool) else v


def scenario_inputs(scenario: Any) -> dict[tuple[str, str], Any]:
    """The template's input cells for a :class:`planner.scenario.Scenario` (provider limits from the catalog
    unless the scenario overrides them)."""
    from planner import catalog

    for name, n, limit in (("routes", len(scenario.routes), ts.ROUTE_ROWS),
                           ("providers", len(scenario.providers), ts.PROVIDER_ROWS),
                           ("fleets", len(scenario.fleets), ts.FLEET_ROWS)):
        if n > limit:
            raise ArgumentError(f"{scenario.path}: {name}", n, f"at most {limit} entries (template rows)")
    out: dict[tuple[str, str], Any] = {}
    p = scenario.plan
    settings = {"name": p.name, "utilization_threshold": p.utilization_threshold,
                "monthly_growth": p.monthly_growth, "avg_to_peak_ratio": p.avg_to_peak_ratio}
    for i, (name, *_rest) in enumerate(ts.PLAN_SETTINGS):
        out[(ts.PLAN.sheet, ts.PLAN.cell("value", i))] = settings[name]
    for i, b in enumerate(scenario.providers):
        lim = catalog.get_provider_limits(b.provider, b.tier, b.model)
        row: dict[str, Any] = {"name": b.name, "provider": b.provider, "tier": b.tier, "model": b.model,
                               "keys": b.keys}
        for k in ("rpm", "tpm", "itpm", "otpm", "rpd", "tpd", "cached_reads_count_itpm", "reserves_max_tokens",
                  "output_token_weight", "usd_per_mtok_input", "usd_per_mtok_cached_input",
                  "usd_per_mtok_cache_write", "usd_per_mtok_output"):
            own = getattr(b, k, None)
            row[k] = own if own is not None else getattr(lim, k)
        _put(out, ts.PROVIDERS, i, row)
    for i, f in enumerate(scenario.fleets):
        _put(out, ts.FLEET, i, {
            "name": f.name, "model": f.model, "gpu": f.gpu, "tp": f.tp, "pp": f.pp, "replicas": f.replicas,
            "gpu_memory_utilization": f.gpu_memory_utilization, "kv_dtype": f.kv_dtype,
            "weight_dtype": f.weight_dtype, "engine": f.engine, "usd_per_gpu_hour": f.usd_per_gpu_hour,
            "mbu": f.mbu, "mfu": f.mfu,
        })
    for i, r in enumerate(scenario.routes):
        ctx = r.p95_context_tokens if r.p95_context_tokens is not None else r.avg_input_tokens + r.avg_output_tokens
        _put(out, ts.ROUTES, i, {
            "name": r.name, "kind": r.kind, "peak_qps": r.peak_qps, "avg_input_tokens": r.avg_input_tokens,
            "avg_output_tokens": r.avg_output_tokens, "p95_context_tokens": ctx,
            "max_tokens": r.max_tokens if r.max_tokens is not None else r.avg_output_tokens * 4,
            "cache_hit_rate": r.cache_hit_rate, "cache_write_tokens": r.cache_write_tokens,
            "ttft_slo_s": r.ttft_slo_s if r.ttft_slo_s is not None else 2.0,
            "tpot_slo_s": r.tpot_slo_s if r.tpot_slo_s is not None else 0.1,
            "backend": r.backend, "failover": r.failover,
        })
    return out
