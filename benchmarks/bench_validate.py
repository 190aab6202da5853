"""Benchmark: ``planner validate`` on many distinct plans, side by side with LibreOffice and naive formulas.

One run, same files:

- generate N distinct plans from the template (every route row filled, inputs varied per plan; two provider
  backends and two self-hosted fleets, every third route on a fleet), cached values written by the template
  builder;
- **fast path**: ``validate_paths`` (isolated workers, one compiled template per worker) with ``--jobs 1`` and
  ``--jobs 2``;
- **LibreOffice warm**: ``/work/shared/bench/lo_batch_recalc.py`` (one headless soffice, load + calculateAll +
  read per plan), run with the system Python that has ``uno``;
- **naive formulas**: ``formulas.ExcelModel().loads(path).finish()`` + ``calculate()`` per file, with the
  registry's functions registered under every spelling, on a subset (``--naive``), scaled per plan;
- **peak memory**: a fresh process validates the first 100, 250 and N plans; its peak RSS is recorded.

    .venv/bin/python benchmarks/bench_validate.py            # 500 plans (about 3 minutes)
    .venv/bin/python benchmarks/bench_validate.py --smoke    # 6 plans, fast path only (seconds)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
LO_BENCH = Path("/work/shared/bench/lo_batch_recalc.py")


def plan_inputs(seed: int) -> dict:
    """Distinct inputs: the bulk-tpm scenario's backends, every route row filled with varied demand."""
    from planner import template as ts
    from planner.scenario import load_scenario
    from planner.template.inputs import scenario_inputs

    base = scenario_inputs(load_scenario(ROOT / "samples" / "bulk-tpm.toml"))
    fleet = {k: v for k, v in scenario_inputs(load_scenario(ROOT / "samples" / "selfhost-kv.toml")).items()
             if k[0] == ts.FLEET.sheet}
    rng = random.Random(seed)
    backends = [base[(ts.PROVIDERS.sheet, ts.PROVIDERS.cell("name", i))] for i in range(2)]
    fleets = [fleet[(ts.FLEET.sheet, ts.FLEET.cell("name", i))] for i in range(2)]
    out = {k: v for k, v in base.items() if k[0] != ts.ROUTES.sheet}
    out.update(fleet)
    out[(ts.PLAN.sheet, ts.PLAN.cell("value", 0))] = f"bench plan {seed}"
    r = ts.ROUTES
    for i in range(r.rows):
        inp, outp = rng.randint(200, 20000), rng.randint(20, 2000)
        row = {
            # 20 routes share two providers' limits: peak demand per route sized so a plan stays within them
            "name": f"route-{i}", "kind": rng.choice(ts.ROUTE_KINDS), "peak_qps": round(rng.uniform(0.05, 1.8), 3),
            "avg_input_tokens": float(inp), "avg_output_tokens": float(outp),
            "p95_context_tokens": float(2 * (inp + outp)), "max_tokens": float(4 * outp),
            "cache_hit_rate": (hit := round(rng.uniform(0, 0.9), 2)),
            "cache_write_tokens": float(rng.randint(0, 500)),
            "ttft_slo_s": 2.0, "tpot_slo_s": 0.1, "backend": backends[i % 2], "failover": backends[(i + 1) % 2],
        }
        if i % 3 == 2:  # every third route on a self-hosted fleet (KV memory and decode time computed)
            row.update(peak_qps=round(rng.uniform(0.05, 0.3), 3), avg_input_tokens=float(inp // 4),
                       p95_context_tokens=float(inp // 2 + 2 * outp), backend=fleets[0], failover=fleets[1])
        # cache writes are part of the non-read input (CAPACITY_ITPM rejects more)
        row["cache_write_tokens"] = min(row["cache_write_tokens"],
                                        float(max(0, int(row["avg_input_tokens"] * (1 - hit)) - 1)))
        for k, v in row.items():
            out[(r.sheet, r.cell(k, i))] = v
    return out


def generate(directory: Path, n: int) -> list[Path]:
    from planner.template.build import write_plan

    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        p = directory / f"plan-{i:04d}.xlsm"
        if not p.exists():
            write_plan(plan_inputs(i), p)
        paths.append(p)
    return paths


def cpu_s() -> float:
    """CPU seconds (user + system) of this process and every child process it has waited for (the validation
    workers; LibreOffice and its client): on a shared machine CPU time moves much less with the load than wall
    time does."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + ch.ru_utime + ch.ru_stime


def time_fast(paths: list[Path], jobs: int) -> tuple[float, int]:
    from planner.validate.batch import validate_paths

    t0 = time.perf_counter()
    # fork_caller: this process stands for the CLI (small, single-threaded), whose workers are forked from it (their
    # CPU is then this process's children's); any other caller's come from the forkserver
    result = validate_paths([str(p) for p in paths], jobs=jobs, fork_caller=True)
    elapsed = time.perf_counter() - t0
    codes = {f.code for r in result.reports for f in r.findings if f.severity == "error"}
    bad = {"stale-value", "formula-changed", "formula-overwritten", "validator-crash", "timeout", "memory-limit"}
    assert not (codes & bad), f"the benchmark plans should recompute cleanly: {codes & bad}"
    return elapsed, len(result.reports)


PEAK_KIB = """
import resource


def peak_kib():
    # this process's own peak RSS in KiB (VmHWM: its memory since exec); ru_maxrss also counts the memory of the
    # parent that forked it (Linux keeps the larger across exec), which is the bench's, not the measured process's
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
"""
"""Source of ``peak_kib()`` for the measured processes' code (until session 22 they read ``ru_maxrss``, so a large
bench process, one that had just generated plans, showed as their peak)."""


def peak_rss_mib(paths: list[Path]) -> float:
    """Peak RSS of a fresh process validating ``paths`` in-process (no workers), MiB."""
    code = (PEAK_KIB + "import sys; from planner.validate.batch import validate_paths\n"
            "validate_paths(sys.argv[1:], isolate=False)\n"
            "print(peak_kib())\n")
    out = subprocess.run([sys.executable, "-c", code, *map(str, paths)], capture_output=True, text=True, check=True,
                         cwd=ROOT)
    return int(out.stdout.strip()) / 1024


def peak_rss_checkpoints(paths: list[Path], marks: list[int]) -> dict[str, float]:
    """Peak RSS (MiB) of one fresh process validating ``paths`` one by one in-process (no workers), read after the
    first ``m`` plans for each ``m`` in ``marks``: flat memory means the figures stay put as plans go by. The
    collector is set up as in a batch worker (``fastpath.settle_gc``, where it exists)."""
    code = (PEAK_KIB + "import sys; from planner.validate.batch import validate_paths\n"
            "from planner.validate import fastpath\n"
            "getattr(fastpath, 'settle_gc', lambda: None)()  # as a batch worker does (where it exists)\n"
            "marks = set(int(m) for m in sys.argv[1].split(','))\n"
            "for i, p in enumerate(sys.argv[2:], 1):\n"
            "    validate_paths([p], isolate=False)\n"
            "    if i in marks: print(i, peak_kib(), flush=True)\n")
    out = subprocess.run([sys.executable, "-c", code, ",".join(map(str, marks)), *map(str, paths)],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    return {k: round(int(v) / 1024, 1) for k, v in (line.split() for line in out.stdout.split("\n") if line)}


def time_libreoffice(directory: Path) -> dict | None:
    if not LO_BENCH.exists() or shutil.which("soffice") is None or not Path("/usr/bin/python3").exists():
        return None
    with tempfile.TemporaryDirectory() as profile:
        out = subprocess.run(["/usr/bin/python3", str(LO_BENCH), str(directory), "--profile", profile, "--json"],
                             capture_output=True, text=True, timeout=3600)
    if out.returncode != 0:
        print("LibreOffice benchmark failed:", out.stderr[-500:], file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def time_naive_formulas(paths: list[Path]) -> float:
    """Seconds per plan: formulas loads + finish + calculate, per file, registry functions registered."""
    import formulas
    import schedula as sh
    from formulas.functions import wrap_func

    from planner.coerce import call_sheet_function
    from planner.registry import load, spellings

    def plain(a):  # noqa: ANN001, ANN202  (formulas' empty cell is None for the registry)
        a = a.tolist() if hasattr(a, "tolist") else a
        return [plain(x) for x in a] if isinstance(a, list) else (None if a is sh.EMPTY else a)

    table = formulas.get_functions()
    for name, spec in load().items():
        def impl(*args, _spec=spec):  # noqa: ANN001, ANN202
            return call_sheet_function(_spec, *[plain(a) for a in args])

        for s in spellings(name):
            table[s] = wrap_func(impl)
    t0 = time.perf_counter()
    for p in paths:
        model = formulas.ExcelModel().loads(str(p)).finish()
        model.calculate()
    return (time.perf_counter() - t0) / len(paths)


def emit(res: dict, path: Path | None, *, indent: int = 1) -> dict:
    """Print a benchmark's figures as JSON and write them to ``path`` too (``--json``); returns them."""
    text = json.dumps(res, indent=indent)
    print(text)
    if path:
        path.write_text(text + "\n")
    return res


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=500, help="plans")
    ap.add_argument("--naive", type=int, default=5, help="plans timed with naive formulas (0: skip)")
    ap.add_argument("--dir", type=Path, default=None, help="where the plans are written (kept for reruns)")
    ap.add_argument("--no-libreoffice", action="store_true")
    ap.add_argument("--no-memory", action="store_true", help="skip the peak-memory runs")
    ap.add_argument("--one-process-memory", action="store_true",
                    help="peak memory after 100, 250 and N plans read in one process (instead of one per mark)")
    ap.add_argument("--lo-n", type=int, default=0,
                    help="LibreOffice on the first LO_N plans only (a copy of them in their own folder), with the "
                         "fast path (--jobs 1) timed again on the same plans; 0: every plan")
    ap.add_argument("--smoke", action="store_true", help="6 plans, fast path only")
    ap.add_argument("--json", type=Path, default=None, help="write the figures here")
    a = ap.parse_args(argv)
    if a.smoke:
        a.n, a.naive, a.no_libreoffice = 6, 0, True
    work = a.dir or Path(tempfile.mkdtemp(prefix="bench-validate-"))
    t0 = time.perf_counter()
    paths = generate(work, a.n)
    res: dict = {"plans": a.n, "routes_per_plan": None, "generate_s": round(time.perf_counter() - t0, 2)}
    from planner import template as ts

    res["routes_per_plan"] = ts.ROUTE_ROWS
    res["formula_cells_per_plan"] = len(ts.all_formulas())
    for jobs in (1, 2):
        c0 = cpu_s()
        s, n = time_fast(paths, jobs)
        res[f"fast_jobs{jobs}_s"] = round(s, 3)
        res[f"fast_jobs{jobs}_ms_per_plan"] = round(1000 * s / n, 2)
        res[f"fast_jobs{jobs}_cpu_ms_per_plan"] = round(1000 * (cpu_s() - c0) / n, 2)
    res["jobs_speedup"] = round(res["fast_jobs1_s"] / res["fast_jobs2_s"], 2)
    if a.no_memory:
        pass
    elif not a.smoke:
        marks = [m for m in (100, 250, a.n) if m <= a.n]
        if a.one_process_memory:
            res["peak_rss_mib_one_process"] = peak_rss_checkpoints(paths, marks)
        else:
            res["peak_rss_mib"] = {str(m): round(peak_rss_mib(paths[:m]), 1) for m in marks}
    else:
        res["peak_rss_mib"] = {str(a.n): round(peak_rss_mib(paths), 1)}
    lo_dir = work
    if not a.no_libreoffice and 0 < a.lo_n < a.n:
        lo_dir = Path(tempfile.mkdtemp(prefix="bench-validate-lo-"))
        for p in paths[: a.lo_n]:
            shutil.copy(p, lo_dir / p.name)
        c0 = cpu_s()
        s, n = time_fast(paths[: a.lo_n], 1)
        res["lo_subset_plans"] = n
        res["fast_jobs1_lo_subset_ms_per_plan"] = round(1000 * s / n, 2)
        res["fast_jobs1_lo_subset_cpu_ms_per_plan"] = round(1000 * (cpu_s() - c0) / n, 2)
    if not a.no_libreoffice:
        c0 = cpu_s()
        lo = time_libreoffice(lo_dir)
        if lo:
            lo["cpu_s"] = round(cpu_s() - c0, 2)
            res["libreoffice_cpu_ms_per_plan"] = round(1000 * lo["cpu_s"] / lo["files"], 2)
            res["cpu_speedup_vs_libreoffice_jobs1"] = round(
                res["libreoffice_cpu_ms_per_plan"] / res["fast_jobs1_cpu_ms_per_plan"], 1)
            if "fast_jobs1_lo_subset_cpu_ms_per_plan" in res:
                res["cpu_speedup_vs_libreoffice_same_plans_jobs1"] = round(
                    res["libreoffice_cpu_ms_per_plan"] / res["fast_jobs1_lo_subset_cpu_ms_per_plan"], 1)
                res["speedup_vs_libreoffice_same_plans_jobs1"] = round(
                    1000 * lo["total_s"] / lo["files"] / res["fast_jobs1_lo_subset_ms_per_plan"], 1)
            res["libreoffice"] = lo
            lo_ms = 1000 * lo["total_s"] / lo["files"]
            res["libreoffice_ms_per_plan"] = round(lo_ms, 2)
            res["speedup_vs_libreoffice_jobs1"] = round(lo_ms / res["fast_jobs1_ms_per_plan"], 1)
            res["speedup_vs_libreoffice_jobs2"] = round(lo_ms / res["fast_jobs2_ms_per_plan"], 1)
    if a.naive:
        naive_s = time_naive_formulas(paths[: a.naive])
        res["naive_formulas_ms_per_plan"] = round(1000 * naive_s, 1)
        res["naive_formulas_plans_timed"] = a.naive
        res["speedup_vs_naive_formulas_jobs1"] = round(1000 * naive_s / res["fast_jobs1_ms_per_plan"], 1)
    res["cpu_count"] = os.cpu_count()
    res["python_peak_rss_mib_this_process"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return emit(res, a.json, indent=2)


if __name__ == "__main__":
    main()
