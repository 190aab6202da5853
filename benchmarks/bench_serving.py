"""Benchmark: the time of one ``planner.serving_performance`` call, against the old roofline in the same run.

Workload: 200 distinct route shapes (model, GPU, TP, input/output lengths, load kind and level varied with a fixed
seed), as a 200-route workbook recomputes them. Each call is timed cold for its shape (no result caching in the
serving model; the engine memory model's KV capacity is cached per model/GPU/TP/dtype, as in a workbook's
recompute after the first). Baseline: the pre-issue-11 roofline for the same shapes (``selfhosted.decode_model``
+ ``tpot_s`` + ``selfhosted.ttft_s``), in the same process.

    .venv/bin/python benchmarks/bench_serving.py [--routes 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from planner import selfhosted, serving_performance  # noqa: E402

MODELS = (("llama-3.1-8b", (1, 2)), ("llama-3.1-70b", (2, 4, 8)), ("mixtral-8x7b", (2, 4)),
          ("qwen3-30b-a3b", (1, 2)))
GPUS = ("h100-sxm", "h200-sxm", "a100-80gb-sxm")


def shapes(n: int, seed: int = 11) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        model, tps = rng.choice(MODELS)
        kind = rng.choice(("closed", "open", "offline"))
        shape = dict(model=model, gpu=rng.choice(GPUS), tp=rng.choice(tps), input_tokens=rng.choice(
            (200, 500, 1000, 2000, 4000)), output_tokens=rng.choice((50, 150, 300, 800)))
        if kind == "closed":
            shape["concurrency"] = rng.choice((1, 4, 16, 64, 128))
        elif kind == "open":
            shape["request_rate"] = rng.choice((0.5, 2.0, 5.0))
        out.append(shape)
    return out


def time_calls(fn, items, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for item in items:
            fn(item)
        best = min(best, (time.perf_counter() - start) / len(items))
    return best


def serving(shape: dict) -> None:
    serving_performance(**shape)


def roofline(shape: dict) -> None:
    ctx = shape["input_tokens"] + shape["output_tokens"] / 2
    dec = selfhosted.decode_model(shape["model"], shape["gpu"], context_tokens=ctx, tp=shape["tp"])
    dec.tpot_s(shape.get("concurrency", 16))
    selfhosted.ttft_s(shape["model"], shape["gpu"], input_tokens=shape["input_tokens"], tp=shape["tp"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--routes", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    items = shapes(args.routes)
    for item in items:  # warm the catalog and the per-model KV-capacity cache, as a workbook's first recompute does
        serving(item)
        roofline(item)
    new = time_calls(serving, items, args.repeat)
    old = time_calls(roofline, items, args.repeat)
    by_kind = {}
    for kind in ("closed", "open", "offline"):
        subset = [s for s in items if (kind == "closed" and "concurrency" in s) or (kind == "open" and
                  "request_rate" in s) or (kind == "offline" and "concurrency" not in s and "request_rate" not in s)]
        by_kind[kind] = time_calls(serving, subset, args.repeat) * 1e3 if subset else None
    result = {"routes": len(items), "serving_ms_per_call": new * 1e3, "roofline_ms_per_call": old * 1e3,
              "ratio_serving_over_roofline": new / old, "serving_ms_by_load": by_kind,
              "python": sys.version.split()[0]}
    print(json.dumps(result, indent=1))
    per_call = statistics.fmean([new * 1e3])
    print(f"serving_performance: {per_call:.3f} ms/call (target <= 2 ms); roofline: {old * 1e3:.3f} ms/call; "
          f"ratio {new / old:.1f}x")


if __name__ == "__main__":
    main()
