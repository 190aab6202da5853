"""Benchmark: ``read_workbook`` of the working tree against the one of a git revision, interleaved A/B, and the check
that both give the same views.

Both versions of ``planner/ooxml.py`` are loaded in one process (the revision's from ``git show REV:planner/ooxml.py``)
and read the same plans in alternating rounds (A B, B A, A B...), CPU time of this process (``time.process_time``),
ms per plan for each round. Each round starts with the reader's cell memo emptied (``_CELL_MEMO``, when the version
has one), as a new batch finds it. ``--check`` first compares every view both versions give (sheets, every cell's
value with its Python type, type, formula, array ref and kind, tables, names, links, parts, the error and its kind
for a refused file) on the plans and on every workbook under ``tests/data`` and ``samples``.

    .venv/bin/python benchmarks/bench_read.py --dir /tmp/bench-plans-12a --against main --rounds 6 --check
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def _dump(mod: ModuleType, path: Path) -> Any:
    try:
        v = mod.read_workbook(path)
    except Exception as exc:  # noqa: BLE001  (the same refusal is part of the comparison)
        return ("error", type(exc).__name__, getattr(exc, "kind", None), str(exc))
    sheets = [(s.name, s.part, [(k, c.ref, type(c.value).__name__, repr(c.value), c.type, c.formula, c.array_ref,
                                 c.formula_kind) for k, c in s.cells.items()],
               s.dimension, s.data_validations, s.tables, s.state, s.max_row, s.max_col, s.rule_formulas, s.plain)
              for s in v.sheets]
    return (sheets, {k: repr(t) for k, t in v.tables.items()}, v.defined_names, v.external_links, v.has_vba, v.parts,
            v.vba_parts, v.sheet_kinds, v.calc_on_load)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", type=Path, required=True, help="folder of plans (*.xlsx, *.xlsm)")
    ap.add_argument("--against", default="HEAD", help="git revision of the A side (default HEAD)")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--check", action="store_true", help="compare the views first (exit 1 on a difference)")
    args = ap.parse_args(argv)
    plans = sorted(p for p in args.dir.iterdir() if p.suffix in (".xlsx", ".xlsm"))
    src = subprocess.run(["git", "-C", str(ROOT), "show", f"{args.against}:planner/ooxml.py"], check=True,
                         capture_output=True).stdout
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        a_path = Path(tmp) / "ooxml_a.py"
        a_path.write_bytes(src)
        a = _load("ooxml_a", a_path)
    b = _load("ooxml_b", ROOT / "planner" / "ooxml.py")
    if args.check:
        others = sorted(p for d in ("tests/data", "samples") for p in (ROOT / d).rglob("*.xls[xm]"))
        differ = [p for p in plans + others if _dump(a, p) != _dump(b, p)]
        for p in differ:
            print("differs:", p)
        print(f"check: {len(plans) + len(others)} workbooks, {len(differ)} differ", flush=True)
        if differ:
            return 1
    for p in plans[:5]:
        a.read_workbook(p)
        b.read_workbook(p)
    res: dict[str, list[float]] = {"A": [], "B": []}
    for r in range(args.rounds):
        for name, mod in (("A", a), ("B", b)) if r % 2 == 0 else (("B", b), ("A", a)):
            getattr(mod, "_CELL_MEMO", {}).clear()
            gc.collect()
            t = time.process_time()
            for p in plans:
                mod.read_workbook(p)
            ms = (time.process_time() - t) / len(plans) * 1e3
            res[name].append(ms)
            print(f"round {r} {name}: {ms:.2f} ms per plan", flush=True)
    pairs = ", ".join(f"{(1 - y / x) * 100:+.1f} %" for x, y in zip(res["A"], res["B"]))
    print(f"A ({args.against}) best {min(res['A']):.2f}, B (working tree) best {min(res['B']):.2f} ms per plan: "
          f"B faster by {(1 - min(res['B']) / min(res['A'])) * 100:.1f} % (each round's pair: {pairs})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
