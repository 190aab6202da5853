"""Benchmark: ``planner recalc`` on the fast path, "200 routes" as ten distinct 20-route plans in one process.

The template has a fixed 20 route rows (``ROUTE_ROWS``): a 200-route plan is ten distinct 20-route plans recalculated
back to back in one warm process (each read, recomputed and written whole by ``planner.recalc.recalc_file``), after
one warm-up plan. Per stage, CPU time of this process beside wall time (the machine is shared): ``compute`` (read
and the fast-path recompute, :func:`planner.recalc.compute`), ``write`` (the XML-aware writer of the cached
values, :func:`planner.ooxml.write_cached_values` with ``only_changed`` as recalc calls it), and ``recalc_file``
(both, with the atomic rename). ``--edited``: copies of the plans with every route's peak QPS raised 10 % and
their computed cells left stale, so the writer has values to change (the plans as generated already cache what
the recompute gives).
Every timed pass starts as a worker does after its first plan: the process-wide registry-call memo
(:data:`planner.template.fast.MEMO`) emptied and the warm-up plan computed, so no pass finds the calls an earlier
pass over the same ten plans made (before session 19 the ``recalc_file`` and ``recalc_file_memo`` passes did: their
figures were optimistic by the registry calls a batch of distinct plans repeats less often).
The collector is set up as in ``planner recalc``'s child process (:func:`planner.validate.fastpath.settle_gc`,
where it exists). Optionally (``--cli``) one plan through the CLI in a fresh process (isolated child included).
``recalc_file_memo``: the same ten plans through ``recalc_file`` with one :class:`planner.ooxml.SheetMemo` across
them, as a worker of ``planner recalc --output-dir`` keeps one (the first round's first plan fills it). ``--batch``:
the ten plans as one folder through ``planner recalc DIR --output-dir OUT --jobs J`` for J = 1 and 2, in a fresh
process each (start-up, walk, workers and their memos included), wall time and the CPU of the command with its
workers (best of ``--rounds``). ``--pool``: the ten plans through the library's batch call
(:func:`planner.recalc_batch.recalc_paths`, ``jobs`` = 1 and 2) in this warm process, whose forked workers inherit
its compiled template and caches (wall time, best of ``--rounds``; each round's workers start with this process's
registry memo emptied and the warm-up plan computed): what a long-lived caller (a CI gate, a service) pays for the
ten plans, without the CLI's start-up. ``--worker-memory N``: the peak RSS of a fresh process that recalculates N plans
one after another with one memo, as a worker does (after :func:`~planner.validate.fastpath.settle_gc`), read after
25, 50, 100, ... plans and after the last, with the memo's counted bytes: flat memory means the figures stay put.

    .venv/bin/python benchmarks/bench_recalc.py --dir /tmp/bench-plans --json benchmarks/results_recalc.json
    .venv/bin/python benchmarks/bench_recalc.py --dir /tmp/bench-plans-16 -n 10 --rounds 0 --worker-memory 200
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def _children_cpu() -> float:
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ch.ru_utime + ch.ru_stime


WORKER = """
import sys, tempfile
from pathlib import Path
from planner.ooxml import SheetMemo
from planner.recalc import recalc_file
from planner.validate import fastpath
paths = sys.argv[1:]
out = Path(tempfile.mkdtemp(prefix="bench-recalc-worker-")) / "out.xlsm"
fastpath.settle_gc()
memo = SheetMemo()
marks = {m for m in (25, 50, 100, 200, 500, 1000) if m < len(paths)} | {len(paths)}
for i, p in enumerate(paths, 1):
    recalc_file(p, out, memo=memo)
    if i in marks:
        print(i, peak_kib(), memo.bytes, flush=True)
"""


def worker_memory(paths: list[Path]) -> dict[str, dict[str, float]]:
    """Peak RSS (MiB) and the memo's counted MiB of a fresh process recalculating ``paths`` in order with one
    :class:`planner.ooxml.SheetMemo` (:data:`WORKER`), by the number of plans done. The peak is the worker's own
    (``VmHWM`` on Linux): ``ru_maxrss`` would start at this process's size when it forked the worker (until session
    22 it was used, so a large parent, one that had just generated plans, showed as the worker's peak)."""
    from bench_validate import PEAK_KIB

    out = subprocess.run([sys.executable, "-c", PEAK_KIB + WORKER, *map(str, paths)], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    return {i: {"peak_rss_mib": round(int(rss) / 1024, 1), "memo_mib": round(int(b) / 2**20, 1)}
            for i, rss, b in (line.split() for line in out.stdout.splitlines() if line)}


def edited_copy(src: Path, dst: Path) -> Path:
    """A copy of ``src`` whose every route's peak QPS is 10 % higher, its computed cells left as they were (stale)."""
    from planner import template as ts
    from planner.ooxml import read_workbook, write_cached_values

    r = ts.ROUTES
    cells = read_workbook(src).sheet(r.sheet).cells
    new = {}
    for i in range(r.rows):
        ref = r.cell("peak_qps", i)
        v = cells[ref].value
        if isinstance(v, int | float) and not isinstance(v, bool):
            new[(r.sheet, ref)] = round(v * 1.1, 6)
    write_cached_values(src, dst, new)
    return dst


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, required=True, help="plans (generated by bench_validate.generate if absent)")
    ap.add_argument("-n", type=int, default=10, help="plans of 20 routes (10: 200 routes)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds; the best (least CPU) is kept")
    ap.add_argument("--cli", action="store_true", help="also one plan through `planner recalc` in a fresh process")
    ap.add_argument("--edited", action="store_true",
                    help="recalculate copies of the plans whose every route's peak QPS was raised 10 %% after their "
                         "last recompute (inputs edited, cached values stale: most computed cells change); without "
                         "it the plans are as generated (cached values current: the recompute changes no value)")
    ap.add_argument("--pool", action="store_true",
                    help="also the ten plans through planner.recalc_batch.recalc_paths(jobs=J), J = 1 and 2, in this "
                    "warm process (wall time: the workers are forked from it)")
    ap.add_argument("--batch", action="store_true",
                    help="also the ten plans as one folder through `planner recalc DIR --output-dir OUT --jobs J`")
    ap.add_argument("--worker-memory", type=int, default=0, metavar="N",
                    help="also the peak RSS of one process recalculating N plans with one memo (0: skip)")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    from bench_validate import emit, generate

    from planner.ooxml import SheetMemo, write_cached_values
    from planner.recalc import compute, recalc_file
    from planner.validate import fastpath

    paths = generate(a.dir, a.n + 1)
    out = Path(tempfile.mkdtemp(prefix="bench-recalc-"))
    if a.edited:
        edits = Path(tempfile.mkdtemp(prefix="bench-recalc-edited-"))
        paths = [edited_copy(p, edits / p.name) for p in paths]
    warm, plans = paths[0], paths[1:]
    recalc_file(warm, out / "warm.xlsm")
    settle = getattr(fastpath, "settle_gc", None)  # absent before 2026-12-04: run on older code for a baseline
    if settle is not None:
        settle()  # as planner's batch workers and recalc child do
    res: dict = {"plans": len(plans), "routes": 20 * len(plans), "rounds": a.rounds, "edited": a.edited}
    best: dict[str, tuple[float, float]] = {}
    memo_calls = getattr(fastpath, "_MEMO", {})

    def fresh_registry_memo() -> None:
        # the registry-call memo is process-wide: a pass over plans an earlier pass computed would find every call
        # it makes (what no batch of distinct plans finds). Each timed pass starts as a worker does after its first
        # plan: the memo emptied, then the warm-up plan computed.
        memo_calls.clear()
        compute(warm)

    for _ in range(a.rounds):
        stages: dict[str, tuple[float, float]] = {}
        fresh_registry_memo()
        t0, c0 = time.perf_counter(), time.process_time()
        results = [compute(p) for p in plans]
        stages["compute"] = (time.perf_counter() - t0, time.process_time() - c0)
        t0, c0 = time.perf_counter(), time.process_time()
        for p, r in zip(plans, results):
            write_cached_values(p, out / p.name, r.values, view=r.view, only_changed=True)
        stages["write"] = (time.perf_counter() - t0, time.process_time() - c0)
        fresh_registry_memo()
        t0, c0 = time.perf_counter(), time.process_time()
        for p in plans:
            recalc_file(p, out / p.name)
        stages["recalc_file"] = (time.perf_counter() - t0, time.process_time() - c0)
        memo = SheetMemo()
        memo_calls.clear()
        recalc_file(warm, out / "warm.xlsm", memo=memo)  # the worker's first plan: its sightings, and the memo's
        t0, c0 = time.perf_counter(), time.process_time()
        for p in plans:
            recalc_file(p, out / p.name, memo=memo)
        stages["recalc_file_memo"] = (time.perf_counter() - t0, time.process_time() - c0)
        for k, v in stages.items():
            if k not in best or v[1] < best[k][1]:
                best[k] = v
    for k, (wall, cpu) in best.items():
        res[f"{k}_wall_s"] = round(wall, 3)
        res[f"{k}_cpu_s"] = round(cpu, 3)
    if a.pool:
        from planner.recalc_batch import recalc_paths

        for jobs in (1, 2):
            best_wall: float | None = None
            for _ in range(a.rounds):
                fresh_registry_memo()  # the workers inherit this process's memo, as the CLI's inherit its parent's
                dest = Path(tempfile.mkdtemp(prefix="bench-recalc-pool-"))
                t0 = time.perf_counter()
                outcomes = recalc_paths([str(p) for p in plans], dest, jobs=jobs)
                wall = time.perf_counter() - t0
                assert all(o.ok for o in outcomes), [o for o in outcomes if not o.ok]
                if best_wall is None or wall < best_wall:
                    best_wall = wall
            assert best_wall is not None
            res[f"pool_jobs{jobs}_wall_s"] = round(best_wall, 3)
    if a.batch:
        folder = Path(tempfile.mkdtemp(prefix="bench-recalc-folder-"))
        for p in plans:
            (folder / p.name).write_bytes(p.read_bytes())  # copies: links out of the folder are not followed
        for jobs in (1, 2):
            best_b: tuple[float, float] | None = None
            for _ in range(a.rounds):
                dest = Path(tempfile.mkdtemp(prefix="bench-recalc-out-"))
                c0, t0 = _children_cpu(), time.perf_counter()
                subprocess.run([sys.executable, "-m", "planner.cli", "recalc", str(folder), "--output-dir",
                                str(dest), "--jobs", str(jobs)], check=True, cwd=ROOT, capture_output=True)
                run = (time.perf_counter() - t0, _children_cpu() - c0)
                if best_b is None or run[0] < best_b[0]:
                    best_b = run
            assert best_b is not None
            res[f"cli_batch_jobs{jobs}_wall_s"] = round(best_b[0], 3)
            res[f"cli_batch_jobs{jobs}_cpu_s"] = round(best_b[1], 3)
    if a.worker_memory:
        res["worker_memory"] = worker_memory(generate(a.dir, a.worker_memory))
    if a.cli:
        c0, t0 = _children_cpu(), time.perf_counter()
        subprocess.run([sys.executable, "-m", "planner.cli", "recalc", str(plans[0]), "-o", str(out / "cli.xlsm")],
                       check=True, cwd=ROOT, capture_output=True)
        res["cli_one_plan_wall_s"] = round(time.perf_counter() - t0, 3)
        res["cli_one_plan_cpu_s"] = round(_children_cpu() - c0, 3)
    return emit(res, a.json)


if __name__ == "__main__":
    main()
