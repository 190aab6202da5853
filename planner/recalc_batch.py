"""Recalculate many plans in one command: ``planner recalc PATH... --output-dir DIR``.

Files and folders are walked as the batch validator walks them (:func:`planner.validate.batch.plan_paths`: links
never followed out of the submitted paths, special files never opened, nothing skipped silently), and each plan is
recomputed by :func:`planner.recalc.recalc_file` in a worker process under the per-workbook time and memory limits
(:func:`planner.validate.batch.run_pool`; ``jobs`` workers, each keeping a :class:`planner.ooxml.SheetMemo` across the
plans it gets). A plan's output goes to ``DIR`` under the same relative path it has under the folder it was found
in (a file given by name: its own name); the worker writes a temporary file next to it, and this process renames it
onto the output only after the worker reported success (after a refusal, a timeout or a crash it is removed: an
output is complete or absent). One bad file never stops the batch: it gets its reason, with a code of the one
catalogue (:mod:`planner.codes`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planner.errors import PlannerError
from planner.ooxml import DEFAULT_LIMITS, Limits, SheetMemo, WorkbookError, temp_path_for
from planner.recalc import TIME_LIMIT_HINT, RecalcFinding, recalc_file


@dataclass(frozen=True, kw_only=True)
class RecalcOutcome:
    """One plan of a batch: ``dst`` is the output written (None: nothing written, and ``failure`` says why, a
    :class:`planner.recalc.RecalcFinding` with a code of the catalogue); ``findings``: the recompute's own
    findings (the output is written with them, as ``planner recalc PLAN -o OUT`` writes it)."""

    path: str
    dst: str | None
    cells: int = 0
    engine: str | None = None
    findings: tuple[RecalcFinding, ...] = field(default=())
    failure: RecalcFinding | None = None

    @property
    def ok(self) -> bool:
        """Written without findings."""
        return self.failure is None and not self.findings


class OutputPathError(PlannerError):
    """The outputs of a batch cannot be placed: two plans would write one file, or an output is an input."""


def output_paths(planned: Sequence[str], *, folders: Sequence[str], out_dir: str | Path) -> list[Path]:
    """Where each plan of ``planned`` (found in the submitted ``folders``, or given by name) is written under
    ``out_dir``: its path relative to the first of ``folders`` that holds it, else its own name. Raises
    :class:`OutputPathError` when two plans would write one file or an output would be one of the plans.

    >>> [str(p) for p in output_paths(["plans/a.xlsx", "plans/q3/b.xlsx", "c.xlsm"], folders=["plans"],
    ...                               out_dir="out")]
    ['out/a.xlsx', 'out/q3/b.xlsx', 'out/c.xlsm']
    """
    base = Path(out_dir)
    out: list[Path] = []
    seen: dict[str, str] = {}
    inputs = {os.path.realpath(p) for p in planned}
    for p in planned:
        rel = None
        for r in folders:
            if os.path.abspath(p).startswith(os.path.abspath(r).rstrip(os.sep) + os.sep):
                rel = os.path.relpath(os.path.abspath(p), os.path.abspath(r))
                break
        dst = base / (rel if rel is not None else os.path.basename(p))
        key = os.path.realpath(dst)
        if key in seen:
            raise OutputPathError(f"{p} and {seen[key]} would both be written to {dst}; recalculate them into "
                                  "separate --output-dir folders")
        if key in inputs:
            raise OutputPathError(f"{dst} is one of the plans being recalculated (a submitted workbook is never "
                                  "modified); choose another --output-dir")
        seen[key] = p
        out.append(dst)
    return out


def recalc_one(item: dict[str, Any], memo: SheetMemo | None = None) -> tuple[dict[str, Any], bool]:
    """A worker's job (:func:`planner.validate.batch.run_pool`, task ``recalc``): recompute ``item["src"]`` into the
    temporary file ``item["tmp"]`` (left for the caller to rename onto ``item["dst"]``). Returns the wire answer and
    whether the worker ran out of memory (it is then replaced). Never raises for the workbook."""
    limits = Limits(**item["limits"])
    try:
        res = recalc_file(item["src"], item["dst"], limits=limits, tmp=item["tmp"], replace=False,
                          full_calc_on_load=item.get("full_calc_on_load", False), memo=memo)
    except MemoryError:
        # the exception is gone here, and with it the frames that held the workbook: release the reserve, as the
        # validator's worker does, so the answer can be built
        from planner.validate.batch import _RESERVE

        _RESERVE.clear()
        if memo is not None:
            memo.clear()
        return {"failure": {"code": "memory-limit", "message": "recalc ran out of the per-workbook memory limit "
                                                               "(--memory)"}}, True
    except WorkbookError as exc:
        from planner.validate.checks import READ_CODES

        return {"failure": {"code": READ_CODES.get(exc.kind, "unreadable"), "message": exc.problem,
                            "sheet": exc.sheet}}, False
    except RecursionError:
        return {"failure": {"code": "oversized-part", "message": "formulas nest too deeply"}}, False
    except Exception as exc:  # noqa: BLE001  (a batch never stops for one file)
        return {"failure": {"code": "validator-crash",
                            "message": f"recalc failed on this workbook ({type(exc).__name__}: {exc}; please "
                                       "report it); the batch goes on"}}, False
    return {"engine": res.engine, "cells": len(res.values), "findings": [f.__dict__ for f in res.findings]}, False


def recalc_paths(paths: Sequence[str], out_dir: str | Path, *, jobs: int = 1, limits: Limits = DEFAULT_LIMITS,
                 full_calc_on_load: bool = False, isolate: bool = True, fork_caller: bool = False,
                 on_outcome: Callable[[RecalcOutcome], None] | None = None) -> list[RecalcOutcome]:
    """Recompute every plan under ``paths`` into ``out_dir`` (:func:`output_paths`) and return one
    :class:`RecalcOutcome` per path, in path order. ``isolate=False`` runs in this process, without the time and
    memory limits (library use on trusted files); ``jobs`` is then ignored. Raises :class:`OutputPathError` before
    anything is written when the outputs cannot be placed; never raises for a workbook.

    Example::

        for o in recalc_paths(["plans/"], "recomputed/", jobs=2):
            print(o.path, o.dst, o.failure)
    """
    from planner.validate.batch import plan_paths

    planned = plan_paths(paths)
    dsts = output_paths([e.path for e in planned], folders=[p for p in paths if os.path.isdir(p)],
                        out_dir=out_dir)
    outcomes: list[RecalcOutcome | None] = [None] * len(planned)

    def done(i: int, outcome: RecalcOutcome) -> None:
        outcomes[i] = outcome
        if on_outcome is not None:
            on_outcome(outcome)

    items: list[tuple[int, dict[str, Any]]] = []
    for i, e in enumerate(planned):
        if e.report is not None:  # a link out of the roots, a special file, a lock file: never opened
            f = e.report.findings[0]
            done(i, RecalcOutcome(path=e.path, dst=None, failure=RecalcFinding(
                code=f.code, sheet=None, cell=None, message=f.message)))
            continue
        dst = dsts[i]
        items.append((i, {"src": e.open_path or e.path, "dst": str(dst), "tmp": None,
                          "full_calc_on_load": full_calc_on_load,
                          "limits": {k: getattr(limits, k) for k in limits.__dataclass_fields__}}))
    made: list[Path] = []  # folders this call creates: removed again at the end if no output landed in them
    for d in sorted({Path(item["dst"]).parent for _i, item in items}):
        missing = [q for q in (d, *d.parents) if not q.exists()]
        d.mkdir(parents=True, exist_ok=True)
        made += missing
    for _i, item in items:
        item["tmp"] = str(temp_path_for(item["dst"]))

    def finish(i: int, item: dict[str, Any], wire: dict[str, Any]) -> None:
        path = planned[i].path
        tmp, dst = Path(item["tmp"]), item["dst"]
        try:
            if "failure" in wire:
                fl = wire["failure"]
                done(i, RecalcOutcome(path=path, dst=None, failure=RecalcFinding(
                    code=fl["code"], sheet=fl.get("sheet"), cell=None, message=fl["message"])))
                return
            try:
                os.replace(tmp, dst)
            except OSError as exc:
                done(i, RecalcOutcome(path=path, dst=None, failure=RecalcFinding(
                    code="unreadable", sheet=None, cell=None, message=f"cannot write {dst}: {exc.strerror or exc}")))
                return
            done(i, RecalcOutcome(path=path, dst=dst, cells=wire["cells"], engine=wire["engine"],
                                  findings=tuple(RecalcFinding(**f) for f in wire["findings"])))
        finally:
            with suppress(OSError):
                if tmp.is_file() and not tmp.is_symlink():
                    tmp.unlink()

    by_index = dict(items)
    try:
        if not isolate:
            memo = SheetMemo() if len(items) > 1 else None  # this call's own: dropped with it
            for i, item in items:
                finish(i, item, recalc_one(item, memo)[0])
        else:
            _run_isolated(items, by_index, finish, jobs=jobs, limits=limits, fork_caller=fork_caller)
    finally:
        for d in sorted(made, key=lambda q: len(q.parts), reverse=True):
            with suppress(OSError):
                d.rmdir()  # only an empty one: a folder that got an output stays
    return [o for o in outcomes if o is not None]


def _run_isolated(items: list[tuple[int, dict[str, Any]]], by_index: dict[int, dict[str, Any]],
                  finish: Callable[[int, dict[str, Any], dict[str, Any]], None], *, jobs: int, limits: Limits,
                  fork_caller: bool) -> None:
    from planner.validate.batch import MEMORY_EXIT_CODE, run_pool

    mib = max(64, int(limits.memory_limit_bytes) // (1024 * 1024))

    def failed(i: int, how: str, code: int | None) -> None:
        if how == "timeout":
            fl = {"code": "timeout", "message": f"recalc exceeded the time limit of {limits.time_limit_s:g} s "
                                                f"({TIME_LIMIT_HINT})"}
        elif code in (-9, MEMORY_EXIT_CODE):  # SIGKILL (the kernel's OOM killer), or no memory for the answer
            fl = {"code": "memory-limit", "message": f"the recalc worker ran out of the {mib} MiB per-workbook "
                                                     "memory limit on this workbook and was stopped"}
        else:
            fl = {"code": "validator-crash", "message": f"the recalc worker died on this workbook (exit {code}; "
                                                        "please report it); the batch goes on"}
        finish(i, by_index[i], {"failure": fl})

    run_pool(items, task="recalc", jobs=jobs, timeout_s=limits.time_limit_s, memory_mib=mib,
             fork_caller=fork_caller, on_wire=lambda i, wire: finish(i, by_index[i], wire), on_failed=failed)


__all__ = ["OutputPathError", "RecalcOutcome", "output_paths", "recalc_one", "recalc_paths"]
