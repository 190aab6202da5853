"""Benchmark: what the tornado's token and hit-rate bars cost a recompute now that they are cells (template 2.7.0).

Those six bar ends (input tokens, output tokens, hit rate at -x and +x) change every fleet's request mix, so each is
``SENSITIVITY_BAR``: Results' cone evaluated again with the group scaled (planner.whatif.bars). This script times,
in one run, the recompute a validation makes of each plan (every template formula cell through the compiled
evaluator, :func:`planner.template.fast.evaluate_cells`, as ``planner validate``'s fast path) and the part of it
spent inside ``SENSITIVITY_BAR``, on the four samples and on ``-n`` generated 20-route plans (the validation
benchmark's plans: distinct inputs, so nothing is memoized from one plan to the next). CPU time, median over the
plans, best of ``--repeat`` passes for the samples.

    .venv/bin/python benchmarks/bench_tornado_cells.py -n 30 --repeat 3 --json benchmarks/results_tornado_2_7.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

SAMPLES = ("seed", "bulk-tpm", "classifier-rpm", "selfhost-kv")


def main() -> None:
    from bench_validate import plan_inputs

    from planner import template as ts
    from planner.template import fast
    from planner.whatif import bars
    from planner.whatif.source import load_inputs

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=30, help="generated 20-route plans")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()

    spent = [0.0]
    inner = bars._bar

    def timed(*a, **k):  # noqa: ANN002, ANN003, ANN202
        t = time.process_time()
        try:
            return inner(*a, **k)
        finally:
            spent[0] += time.process_time() - t

    bars._bar = timed
    keys = [(s, c) for s, c, _e, _r in ts.formula_cells()]

    def recompute(inputs: dict) -> tuple[float, float]:
        inner.cache_clear()  # a new plan: nothing kept from the last one (the samples are timed again and again)
        bars._base.cache_clear()
        fast.MEMO.clear()
        spent[0] = 0.0
        t = time.process_time()
        fast.evaluate_cells(inputs, keys)
        return time.process_time() - t, spent[0]

    out: dict = {"samples": {}, "generated": {}}
    print(f"{'plan':18} {'recompute':>10} {'of which bars':>14} {'share':>6}")
    for name in SAMPLES:
        inputs = load_inputs(ROOT / "samples" / f"{name}.toml")
        runs = [recompute(inputs) for _ in range(args.repeat)]
        total, bar = min(runs)
        out["samples"][name] = {"recompute_ms": total * 1e3, "bars_ms": bar * 1e3}
        print(f"{name:18} {total * 1e3:7.1f} ms {bar * 1e3:11.1f} ms {bar / total:6.0%}")
    totals, bar_times = [], []
    for seed in range(args.n):
        total, bar = recompute(plan_inputs(5000 + seed))
        totals.append(total)
        bar_times.append(bar)
    med, med_bar = statistics.median(totals), statistics.median(bar_times)
    out["generated"] = {"plans": args.n, "recompute_ms_median": med * 1e3, "bars_ms_median": med_bar * 1e3,
                        "share_median": statistics.median(b / t for b, t in zip(bar_times, totals))}
    print(f"{str(args.n) + ' generated':18} {med * 1e3:7.1f} ms {med_bar * 1e3:11.1f} ms "
          f"{out['generated']['share_median']:6.0%}  (medians)")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
