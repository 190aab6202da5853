"""Benchmark: what the Options sheet (the fleet options search) adds to ``evaluate_plan`` on a 20-route plan.

Plan: 20 routes (interactive, latency-critical and bulk; 200-8,000 tokens in, 40-800 out), 12 of them on the six
fleet rows (Llama-3.1-8B/70B, Qwen3-30B-A3B, Mixtral-8x7B, Qwen3-235B-A22B on H100/H200/A100/B200 at TP 1-8), 8 on
two provider backends. Each variant runs in a fresh process after a warm-up evaluation of an empty plan (imports,
registry, catalog loaded), so every figure is a cold evaluation of the plan:

- ``before``: every formula cell but the Options sheet's (the template as it was before the sheet), in the same
  evaluation order;
- ``after``: every formula cell (the Options sheet searches each fleet's options once, memoised; its other cells are
  cache hits);
- ``after_warm``: the same plan evaluated a second time in the process (the search memo warm, as in ``planner
  validate`` over a batch of plans that share fleets).

    .venv/bin/python benchmarks/bench_options.py [--repeat 3] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

FLEETS = (
    ("l8b-h100", "llama-3.1-8b", "h100-sxm", 1, 20),
    ("l70b-h100", "llama-3.1-70b", "h100-sxm", 4, 12),
    ("q30b-h200", "qwen3-30b-a3b", "h200-sxm", 1, 6),
    ("mix-a100", "mixtral-8x7b", "a100-80gb-sxm", 4, 6),
    ("q235b-h200", "qwen3-235b-a22b", "h200-sxm", 8, 3),
    ("l70b-b200", "llama-3.1-70b", "b200-hgx", 2, 6),
)
PROVIDERS = ("anthropic-sonnet", "gemini-flash")


def scenario_text() -> str:
    lines = ['[plan]', 'name = "bench-20-routes"', "utilization_threshold = 0.8", ""]
    lines += ['[[providers]]', 'name = "anthropic-sonnet"', 'provider = "anthropic"', 'tier = "scale"',
              'model = "claude-sonnet-4.5"', "keys = 8", "",
              '[[providers]]', 'name = "gemini-flash"', 'provider = "gemini"', 'tier = "tier-3"',
              'model = "gemini-2.5-flash"', "keys = 6", ""]
    for name, model, gpu, tp, replicas in FLEETS:
        lines += ['[[fleets]]', f'name = "{name}"', f'model = "{model}"', f'gpu = "{gpu}"', f"tp = {tp}",
                  f"replicas = {replicas}", 'kv_dtype = "fp8"', ""]
    kinds = ("interactive", "latency-critical", "bulk")
    for i in range(20):
        backend = FLEETS[i % 6][0] if i < 12 else PROVIDERS[i % 2]
        inp, out = (200, 500, 2000, 4000, 8000)[i % 5], (40, 150, 300, 800)[i % 4]
        lines += ['[[routes]]', f'name = "r{i}"', f'kind = "{kinds[i % 3]}"', f"peak_qps = {1 + (i * 7) % 9}",
                  f"avg_input_tokens = {inp}", f"avg_output_tokens = {out}",
                  f"p95_context_tokens = {2 * (inp + out)}", f"max_tokens = {2 * out}", "cache_hit_rate = 0.3",
                  "ttft_slo_s = 2.0", "tpot_slo_s = 0.06", f'backend = "{backend}"', ""]
    return "\n".join(lines)


def one(variant: str) -> dict:
    """Time one cold evaluation of the plan in this (fresh) process."""
    import tomllib

    from planner import template as ts
    from planner.excel.expr import Evaluator
    from planner.scenario import parse_scenario
    from planner.sheet import options as sheet_options
    from planner.template.inputs import catalog_inputs, scenario_inputs

    catalog = catalog_inputs()
    ts.evaluate_plan(catalog)  # warm-up: an empty plan (imports, registry, catalog; no search)
    inputs = {**catalog, **scenario_inputs(parse_scenario(tomllib.loads(scenario_text()), path="bench.toml"))}
    cells = ts.formula_cells()
    if variant == "before":
        cells = [c for c in cells if c[0] != ts.OPTIONS.sheet]
    calls = {"n": 0}
    impl = sheet_options.FLEET_OPTION

    def counted(*args, **kwargs):
        calls["n"] += 1
        return impl(*args, **kwargs)

    from planner.registry import load

    functions = dict(load())
    spec = functions["FLEET_OPTION"]
    functions["FLEET_OPTION"] = type(spec)(**{**spec.__dict__, "impl": counted})

    def evaluate() -> float:
        values = dict(ts.fixed_cells())
        values.update(inputs)
        ev = Evaluator(values, functions)
        t0 = time.perf_counter()
        for sheet, cell, expr, row in cells:
            ev.values[(sheet, cell)] = expr.evaluate(ev, row)
        return time.perf_counter() - t0

    cold = evaluate()
    searches = sheet_options.opt._search.cache_info().misses
    warm = evaluate()
    return {"variant": variant, "cold_s": cold, "warm_s": warm, "formula_cells": len(cells),
            "fleet_option_calls": calls["n"] // 2, "searches": searches}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one)))
        return
    runs: dict[str, list[dict]] = {"before": [], "after": []}
    for _ in range(args.repeat):
        for variant in runs:
            proc = subprocess.run([sys.executable, __file__, "--one", variant], capture_output=True, text=True,
                                  check=True)
            runs[variant].append(json.loads(proc.stdout))
    before = min(r["cold_s"] for r in runs["before"])
    after = min(r["cold_s"] for r in runs["after"])
    after_warm = min(r["warm_s"] for r in runs["after"])
    result = {
        "plan": "20 routes, 6 fleets, 2 providers", "repeat": args.repeat,
        "formula_cells_before": runs["before"][0]["formula_cells"],
        "formula_cells_after": runs["after"][0]["formula_cells"],
        "before_s": before, "after_s": after, "after_warm_s": after_warm,
        "ratio_after_to_before": after / before, "ratio_warm_to_before": after_warm / before,
        "fleet_option_calls": runs["after"][0]["fleet_option_calls"], "searches": runs["after"][0]["searches"],
        "before_all_s": [r["cold_s"] for r in runs["before"]], "after_all_s": [r["cold_s"] for r in runs["after"]],
        "median_after_s": statistics.median(r["cold_s"] for r in runs["after"]),
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
