"""Formula screening is linear in the formula's length (issue 12: the former DDE regex took 36 s on 60 KB).

Times :func:`planner.formula_scan.scan` on hostile formulas of 6 KB, 60 KB and 600 KB and prints the ratio of each
step (10x longer text): a linear scan gives about 10, a quadratic one about 100.

Run: .venv/bin/python benchmarks/bench_formula_scan.py
"""

from __future__ import annotations

import time

from planner.formula_scan import scan

PATTERNS = {
    "letters then !|": lambda n: "a" * n + "!|",
    "open brackets": lambda n: "[" * n,
    "quotes": lambda n: "'" * n + "x",
    "unterminated string": lambda n: '"' + "a" * n,
    "dde with quotes": lambda n: "cmd|" + "'" * n,
    "calls": lambda n: "a(" * (n // 2),
    "bracket runs": lambda n: "[a" * (n // 2) + "]",
    "pipes": lambda n: "x|" * (n // 2),
}


def best_ms(text: str, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        scan(text)
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def main() -> None:
    sizes = (6_000, 60_000, 600_000)
    print(f"{'pattern':<22}" + "".join(f"{n // 1000:>8} KB" for n in sizes) + "   ratio 60/6   ratio 600/60")
    for name, make in PATTERNS.items():
        ms = [best_ms(make(n)) for n in sizes]
        cols = "".join(f"{m:>8.2f}ms" for m in ms)
        print(f"{name:<22}{cols}   {ms[1] / ms[0]:>10.1f}   {ms[2] / ms[1]:>12.1f}")


if __name__ == "__main__":
    main()
