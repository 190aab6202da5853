"""Benchmark: the fast path with edited formulas (``planner validate``) and ``planner recalc`` on the fast path.

One run, same machine, ratios taken within the run (the machine is shared; absolute times move with its load):

- **edits**: N distinct 20-route plans (``bench_validate.generate``) and, for each, a copy with one Results formula
  edited (``(formula)*1`` appended on a different cell per plan, cached values kept). Both sets are validated in
  one warm process, interleaved plan by plan; the ratio edited / unedited is the cost of one edit. The cold cost
  (a fresh ``planner validate`` process per file, CPU seconds) is measured on one plan of each kind.
- **recalc**: ``recalc_file`` in one warm process over N plans (read, fast path, XML-aware write), and the
  ``planner recalc`` CLI (isolated child) on one plan, CPU seconds of the child; optionally the general engine on
  one plan (``--general``) for the before/after figure. The template has a fixed 20 route rows, so "200 routes"
  is measured as 10 distinct 20-route plans recalculated back to back in one process (200 routes of work).

    .venv/bin/python benchmarks/bench_edits.py -n 40 --json benchmarks/results_edits.json
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def edit_one_formula(src: Path, dst: Path, i: int) -> str:
    """Copy ``src`` with one Results formula (column chosen by ``i``) multiplied by 1; returns the cell."""
    from planner import template as ts
    from planner.ooxml import read_workbook

    r = ts.RESULTS
    keys = [c.key for c in r.columns if c.formula is not None and c.kind == "number"]
    sheet = read_workbook(src, sheets=(r.sheet,)).sheet(r.sheet)
    part = sheet.part
    j = i
    while True:  # a cell holding a number (x*1 of a blank is #VALUE!, in Excel too)
        cell = r.cell(keys[j % len(keys)], j % r.rows)
        v = sheet.cells[cell].value
        if isinstance(v, int | float) and not isinstance(v, bool):
            break
        j += 7
    with zipfile.ZipFile(src) as zi, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zo:
        for info in zi.infolist():
            data = zi.read(info.filename)
            if info.filename == part:
                data, n = re.subn(rb'(<c r="%s"[^>]*><f>)(.*?)(</f>)' % cell.encode(), rb"\1(\2)*1\3", data)
                assert n == 1, cell
            zo.writestr(info, data)
    return cell


def cpu_of_child(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds user+sys) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, capture_output=True, check=False, cwd=ROOT)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=40, help="plans")
    ap.add_argument("--dir", type=Path, default=None, help="where the plans are written (kept for reruns)")
    ap.add_argument("--general", action="store_true", help="also time the general engine on one plan (slow)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    from bench_validate import generate

    from planner.recalc import _compute_general, recalc_file
    from planner.validate import validate_file

    directory = args.dir or Path(tempfile.mkdtemp(prefix="bench-edits-"))
    plans = generate(directory / "plans", args.n)
    (directory / "edited").mkdir(parents=True, exist_ok=True)
    edited = []
    for i, p in enumerate(plans):
        e = directory / "edited" / p.name
        if not e.exists():
            edit_one_formula(p, e, i)
        edited.append(e)
    out = directory / "out"
    out.mkdir(exist_ok=True)

    # warm-up: compiled template, registry, formulas' function table (imported once per process)
    validate_file(str(plans[0]))
    validate_file(str(edited[0]))
    recalc_file(plans[0], out / "warm.xlsm")

    t_plain = t_edit = c_plain = c_edit = 0.0
    engines = set()
    cpu = time.process_time
    from planner.validate import fastpath

    for p, e in zip(plans, edited):
        # the registry-call memo is emptied before each file: the edited copy has the plan's inputs, so it would
        # otherwise find every call of the plan validated just before it remembered (and look cheaper than it is)
        fastpath._MEMO.clear()
        t0, c0 = time.perf_counter(), cpu()
        base = validate_file(str(p))
        fastpath._MEMO.clear()
        t1, c1 = time.perf_counter(), cpu()
        rep = validate_file(str(e))
        t2, c2 = time.perf_counter(), cpu()
        t_plain += t1 - t0
        t_edit += t2 - t1
        c_plain += c1 - c0
        c_edit += c2 - c1
        engines.add(rep.engine)
        # the edit is reported and changes nothing else (policy findings of the plan itself stay as they are)
        assert sorted(f.code for f in rep.findings) == sorted(["formula-changed", *(f.code for f in base.findings)]), \
            rep.findings
    n = len(plans)
    res: dict = {
        "plans": n,
        "validate_unedited_ms_per_plan": round(1000 * t_plain / n, 1),
        "validate_one_edit_ms_per_plan": round(1000 * t_edit / n, 1),
        "edit_ratio_warm": round(t_edit / t_plain, 2),
        "validate_unedited_cpu_ms_per_plan": round(1000 * c_plain / n, 1),
        "validate_one_edit_cpu_ms_per_plan": round(1000 * c_edit / n, 1),
        "edit_ratio_warm_cpu": round(c_edit / c_plain, 2),
        "edited_engine": sorted(engines),
    }
    cli = [sys.executable, "-m", "planner.cli"]
    res["validate_cold_unedited_s"] = [round(x, 2) for x in cpu_of_child([*cli, "validate", str(plans[1])])]
    res["validate_cold_one_edit_s"] = [round(x, 2) for x in cpu_of_child([*cli, "validate", str(edited[1])])]

    t0, c0 = time.perf_counter(), cpu()
    for i, p in enumerate(plans):
        r = recalc_file(p, out / f"r{i}.xlsm")
        assert r.engine == "fast" and not r.findings, r.findings
    res["recalc_in_process_ms_per_plan"] = round(1000 * (time.perf_counter() - t0) / n, 1)
    res["recalc_in_process_cpu_ms_per_plan"] = round(1000 * (cpu() - c0) / n, 1)
    t0, c0 = time.perf_counter(), cpu()
    for i, p in enumerate(plans[:10]):
        recalc_file(p, out / f"r200-{i}.xlsm")
    res["recalc_200_routes_as_10_plans_s"] = round(time.perf_counter() - t0, 3)
    res["recalc_200_routes_as_10_plans_cpu_s"] = round(cpu() - c0, 3)
    res["recalc_cli_one_plan_s"] = [round(x, 2) for x in cpu_of_child(
        [*cli, "recalc", str(plans[2]), "-o", str(out / "cli.xlsm")])]
    res["recalc_cli_note"] = "[wall s, CPU s of the child processes] for planner recalc (isolated child)"
    if args.general:
        from planner.ooxml import read_workbook

        t0 = time.process_time()
        _compute_general(plans[3], read_workbook(plans[3]))
        res["recalc_general_engine_cpu_s"] = round(time.process_time() - t0, 2)
    if args.json:
        args.json.write_text(json.dumps(res, indent=1) + "\n")
    print(json.dumps(res, indent=1))
    return res


if __name__ == "__main__":
    main()
