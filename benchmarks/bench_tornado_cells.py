"""Benchmark: what the tornado's token and hit-rate bars would cost a recompute if they were cell formulas.

Those six bar ends (input tokens, output tokens, hit rate at -x and +x) change every fleet's request mix, so each
needs Results' chain again with new serving-model calls: a re-evaluation of the plan. This script times, in one
run, a warm evaluation of each sample (the recompute a workbook does, functions memoized) against the six
re-evaluations ``planner size`` makes for those bars (docs/whatif.md). CPU time, best of ``--repeat`` passes.

    .venv/bin/python benchmarks/bench_tornado_cells.py --repeat 3
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from planner import template as ts
from planner.whatif import levers
from planner.whatif.source import load_inputs

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ("seed", "bulk-tpm", "classifier-rpm", "selfhost-kv")
BARS = ("input_tokens", "output_tokens", "cache_hit_rate")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"{'sample':16} {'warm evaluation':>16} {'six re-evaluations':>19} {'ratio':>7}")
    for name in SAMPLES:
        inputs = load_inputs(ROOT / "samples" / f"{name}.toml")
        ts.evaluate_plan(inputs)  # warm: the template state and the memoized functions
        base, six = float("inf"), float("inf")
        for r in range(args.repeat):
            t = time.process_time()
            ts.evaluate_plan(inputs)
            base = min(base, time.process_time() - t)
            # new inputs each pass (a spread per pass), as a planner's edit would give: nothing memoized
            spread = 0.2 + 0.01 * r
            t = time.process_time()
            for g in BARS:
                for f in (1 - spread, 1 + spread):
                    ts.evaluate_plan(levers.scaled(inputs, levers.group(g), f))
            six = min(six, time.process_time() - t)
        print(f"{name:16} {base * 1e3:13.0f} ms {six * 1e3:16.0f} ms {six / base:6.1f}x")


if __name__ == "__main__":
    main()
