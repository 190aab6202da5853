"""Benchmark: ``read_workbook`` of the working tree against the one of a git revision, interleaved A/B, and the check
that both give the same views.

Both versions of ``planner/ooxml.py`` are loaded in one process (the revision's from ``git show REV:planner/ooxml.py``)
and read the same plans in alternating rounds (A B, B A, A B...), CPU time of this process (``time.process_time``),
ms per plan for each round. Each round starts with the reader's cell memo emptied (``_CELL_MEMO``, when the version
has one), as a new batch finds it. ``--check`` first compares every view both versions give (sheets, every cell's
value with its Python type, type, formula, array ref and kind, tables, names, links, parts, the error and its kind
for a refused file) on the plans and on every workbook under ``tests/data``, ``samples`` and the ``--also`` folders.

With ``--memo`` both sides are the working tree: A reads without a memo, B with one :class:`planner.ooxml.SheetMemo`
a round (its first sightings included); ``--check`` then reads every workbook through one memo in five orders, with
the default budget and with 1 MiB, against the read without one. ``--rounds 0``: the check alone.

    .venv/bin/python benchmarks/bench_read.py --dir /tmp/bench-plans-12a --against main --rounds 6 --check
    .venv/bin/python benchmarks/bench_read.py --dir /tmp/bench-plans-16 --memo --rounds 6 --check --also DIR

With ``--book`` (``--against REV``): a batch worker's read and flattening, the revision's ``read_workbook`` and
``planner.validate.checks.book_from_view`` against the working tree's, each side with one ``SheetMemo`` a round (as a
worker of ``planner recalc DIR --output-dir`` or of batch validation keeps one; the working tree's flattening given
the memo too), the round's first plan read untimed (the figures are the second and later plans'), the collector set
up as such a worker sets it (``fastpath.settle_gc``), CPU ms a plan of the read and of the flattening apart.
``--check`` first compares, plan by plan through one memo each, the views and the books (every value with its Python
type, every formula, in order) of both sides.

    .venv/bin/python benchmarks/bench_read.py --dir /tmp/plans-10 --against d9c5f3a --book --rounds 6 --check
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


def _dump(mod: ModuleType, path: Path, memo: Any = None) -> Any:
    try:
        v = mod.read_workbook(path) if memo is None else mod.read_workbook(path, memo=memo)
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
    ap.add_argument("--memo", action="store_true",
                    help="A: the working tree without a memo, B: the same with one SheetMemo per round (--against "
                         "unused); --check reads every workbook in one memo in several orders")
    ap.add_argument("--also", type=Path, action="append", default=[],
                    help="another folder of workbooks for --check (any depth; repeatable)")
    ap.add_argument("--book", action="store_true",
                    help="the read with a memo and book_from_view, the revision against the working tree")
    args = ap.parse_args(argv)
    if args.book:
        return _book_main(args)
    if args.memo:
        return _memo_main(args)
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
        others = _others(args.also)
        differ = [p for p in plans + others if _dump(a, p) != _dump(b, p)]
        for p in differ:
            print("differs:", p)
        print(f"check: {len(plans) + len(others)} workbooks, {len(differ)} differ", flush=True)
        if differ:
            return 1
    if not args.rounds:
        return 0
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


def _others(also: list[Path]) -> list[Path]:
    """Every workbook under ``tests/data``, ``samples`` and the ``--also`` folders."""
    dirs = [ROOT / "tests/data", ROOT / "samples", *also]
    return sorted({p for d in dirs for p in d.rglob("*.xls[xm]") if p.is_file()})


def _memo_check(mod: ModuleType, books: list[Path], plans: list[Path]) -> int:
    """Views read through one memo, in several orders and with a small budget (entries dropped and read again),
    against the views read without one: the number of (order, workbook) pairs that differ."""
    import random

    want = {p: _dump(mod, p) for p in books}
    orders = {"sorted": books, "reversed": books[::-1]}
    for seed in (1, 2):
        shuffled = list(books)
        random.Random(seed).shuffle(shuffled)
        orders[f"shuffled {seed}"] = shuffled
    orders["plans twice, then the rest"] = plans + plans + books
    differ = 0
    for name, order in orders.items():
        for budget in (mod.SHEET_MEMO_BYTES, 1 << 20):
            memo = mod.SheetMemo(max_bytes=budget)
            bad = [p for p in order if _dump(mod, p, memo) != want[p]]
            for p in bad:
                print(f"differs ({name}, budget {budget}):", p)
            differ += len(bad)
            print(f"check {name}, budget {budget}: {len(order)} reads, {memo.hits} sheets from the memo, "
                  f"{memo.misses} read in full, {len(bad)} differ; memo {len(memo)} entries, {memo.bytes} bytes",
                  flush=True)
    return differ


def _memo_main(args: argparse.Namespace) -> int:
    plans = sorted(p for p in args.dir.iterdir() if p.suffix in (".xlsx", ".xlsm"))
    sys.path.insert(0, str(ROOT))
    b = _load("ooxml_b", ROOT / "planner" / "ooxml.py")
    if args.check:
        books = sorted(set(plans) | set(_others(args.also)))
        differ = _memo_check(b, books, plans)
        print(f"check: {len(books)} workbooks, {differ} reads differ", flush=True)
        if differ:
            return 1
    if not args.rounds:
        return 0
    for p in plans[:5]:
        b.read_workbook(p)
    res: dict[str, list[float]] = {"A": [], "B": []}
    for r in range(args.rounds):
        for name in ("A", "B") if r % 2 == 0 else ("B", "A"):
            memo = b.SheetMemo() if name == "B" else None
            gc.collect()
            t = time.process_time()
            for p in plans:
                b.read_workbook(p, memo=memo)
            ms = (time.process_time() - t) / len(plans) * 1e3
            res[name].append(ms)
            extra = f" ({memo.hits} sheets from the memo, {memo.misses} in full, {memo.bytes} bytes)" if memo else ""
            print(f"round {r} {name}: {ms:.2f} ms per plan{extra}", flush=True)
    pairs = ", ".join(f"{(1 - y / x) * 100:+.1f} %" for x, y in zip(res["A"], res["B"]))
    print(f"A (no memo) best {min(res['A']):.2f}, B (one SheetMemo a round) best {min(res['B']):.2f} ms per plan: "
          f"B faster by {(1 - min(res['B']) / min(res['A'])) * 100:.1f} % (each round's pair: {pairs})")
    return 0


def _book_dump(book: Any) -> Any:
    return ([(k, type(v).__name__, repr(v)) for k, v in book.values.items()], list(book.formulas.items()))


def _book_main(args: argparse.Namespace) -> int:
    plans = sorted(p for p in args.dir.iterdir() if p.suffix in (".xlsx", ".xlsm"))
    sys.path.insert(0, str(ROOT))
    import planner.ooxml as b_ox
    from planner.validate import checks as b_checks
    from planner.validate.fastpath import settle_gc

    with tempfile.TemporaryDirectory() as tmp:
        mods = {}
        for name, rel in (("ooxml_a", "planner/ooxml.py"), ("checks_a", "planner/validate/checks.py")):
            src = subprocess.run(["git", "-C", str(ROOT), "show", f"{args.against}:{rel}"], check=True,
                                 capture_output=True).stdout
            (Path(tmp) / f"{name}.py").write_bytes(src)
            mods[name] = _load(name, Path(tmp) / f"{name}.py")
    a_ox, a_checks = mods["ooxml_a"], mods["checks_a"]
    limits = b_checks.READ_LIMITS

    sides = {
        "A": (a_ox.SheetMemo, lambda p, m: a_ox.read_workbook(p, limits, memo=m),
              lambda v, m: a_checks.book_from_view(v)),
        "B": (b_ox.SheetMemo, lambda p, m: b_ox.read_workbook(p, limits, memo=m),
              lambda v, m: b_checks.book_from_view(v, memo=m)),
    }
    if args.check:
        memos = {k: s[0]() for k, s in sides.items()}
        differ = 0
        for p in plans:
            got = {}
            for k, (_new, read, flat) in sides.items():
                view = read(p, memos[k])
                got[k] = (_dump_view(view), _book_dump(flat(view, memos[k])))
            if got["A"] != got["B"]:
                differ += 1
                print("differs:", p)
        print(f"check: {len(plans)} plans through one memo each, {differ} differ (views and books)", flush=True)
        if differ:
            return 1
    if not args.rounds:
        return 0
    settle_gc()
    res: dict[str, list[tuple[float, float]]] = {"A": [], "B": []}
    for r in range(args.rounds):
        for name in ("A", "B") if r % 2 == 0 else ("B", "A"):
            new, read, flat = sides[name]
            memo = new()
            flat(read(plans[0], memo), memo)
            t_read = t_flat = 0.0
            for p in plans[1:]:
                t0 = time.process_time()
                view = read(p, memo)
                t1 = time.process_time()
                flat(view, memo)
                t_flat += time.process_time() - t1
                t_read += t1 - t0
            n = len(plans) - 1
            res[name].append((t_read / n * 1e3, t_flat / n * 1e3))
            print(f"round {r} {name}: read {t_read / n * 1e3:.2f}, book_from_view {t_flat / n * 1e3:.2f}, "
                  f"together {(t_read + t_flat) / n * 1e3:.2f} ms per plan", flush=True)
    for what, pick in (("read", lambda x: x[0]), ("book_from_view", lambda x: x[1]),
                       ("together", lambda x: x[0] + x[1])):
        a = [pick(x) for x in res["A"]]
        b = [pick(x) for x in res["B"]]
        pairs = ", ".join(f"{(1 - y / x) * 100:+.1f} %" for x, y in zip(a, b))
        print(f"{what}: A ({args.against}) best {min(a):.2f}, B (working tree) best {min(b):.2f} ms per plan: "
              f"B faster by {(1 - min(b) / min(a)) * 100:.1f} % (pairs: {pairs})")
    return 0


def _dump_view(v: Any) -> Any:
    sheets = [(s.name, s.part, [(k, c.ref, type(c.value).__name__, repr(c.value), c.type, c.formula, c.array_ref,
                                 c.formula_kind) for k, c in s.cells.items()],
               s.dimension, s.data_validations, s.tables, s.state, s.max_row, s.max_col, s.rule_formulas, s.plain)
              for s in v.sheets]
    return (sheets, {k: repr(t) for k, t in v.tables.items()}, v.defined_names, v.external_links, v.has_vba, v.parts,
            v.vba_parts, v.sheet_kinds, v.calc_on_load)


if __name__ == "__main__":
    raise SystemExit(main())
