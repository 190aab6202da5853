"""Batch validation over files and folders, with ``--jobs`` worker processes and per-workbook limits.

Each workbook is validated in a worker process whose address space is capped (``memory_mib`` on top of what the
worker already uses, ``RLIMIT_AS``) and whose answer must come within ``timeout_s``. A worker that runs over
its time is killed and replaced, and the workbook gets a ``timeout`` finding; one that runs out of memory reports
``memory-limit`` (or dies and is replaced). Either way the batch goes on: every path gets a report.
Workers are started once (fork) and validate many workbooks each, so the fast path's compiled template is built
once per worker, not once per plan.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from planner.validate.report import BatchResult, Report, finding

WORKBOOK_SUFFIXES = (".xlsx", ".xlsm")
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MEMORY_MIB = 1024


@dataclass(frozen=True, kw_only=True)
class Limits:
    """Per-workbook limits."""

    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_mib: int = DEFAULT_MEMORY_MIB


def expand_paths(paths: Iterable[str]) -> list[str]:
    """Files as given; folders walked recursively for ``.xlsx``/``.xlsm`` (sorted, Office lock files ``~$`` skipped).

    A path that does not exist is kept: it gets an ``unreadable`` report.
    """
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            found = []
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in files:
                    if name.lower().endswith(WORKBOOK_SUFFIXES) and not name.startswith("~$"):
                        found.append(os.path.join(root, name))
            out += sorted(found)
        else:
            out.append(p)
    return out


def _validate_one(path: str) -> dict[str, Any]:
    from planner.validate.checks import validate_file

    try:
        return validate_file(path).to_wire()
    except MemoryError:
        return _limit_report(path, "memory-limit", "validation ran out of the per-workbook memory limit").to_wire()


def _limit_report(path: str, code: str, message: str, **kw: Any) -> Report:
    return Report(path=path, template_version=None, engine="none", findings=(finding(code, message, **kw),))


def _worker(conn: Connection, memory_mib: int) -> None:
    try:
        import resource

        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[0])
        base = pages * os.sysconf("SC_PAGE_SIZE")
        cap = base + memory_mib * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    except (OSError, ValueError, ImportError):  # not Linux: the time limit still applies
        pass
    while True:
        try:
            path = conn.recv()
        except EOFError:
            return
        if path is None:
            return
        try:
            conn.send(_validate_one(path))
        except MemoryError:
            conn.send(_limit_report(path, "memory-limit", "out of memory while sending the report").to_wire())


class _Slot:
    def __init__(self, ctx: Any, memory_mib: int) -> None:
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child, memory_mib), daemon=True)
        self.proc.start()
        child.close()
        self.index: int | None = None
        self.started = 0.0

    def give(self, index: int, path: str) -> None:
        self.index, self.started = index, time.monotonic()
        self.conn.send(path)

    def stop(self, kill: bool = False) -> None:
        try:
            if kill:
                self.proc.kill()
            else:
                self.conn.send(None)
        except (OSError, BrokenPipeError):
            pass
        self.proc.join(timeout=5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()
        self.conn.close()


def validate_paths(
    paths: Sequence[str],
    *,
    jobs: int = 1,
    limits: Limits = Limits(),
    severity: Mapping[str, str] | None = None,
    strict: bool = False,
    isolate: bool = True,
    on_report: Callable[[Report], None] | None = None,
) -> BatchResult:
    """Validate every workbook under ``paths`` and return their reports in path order (never raises on a file).

    ``isolate=False`` validates in this process, without the time and memory limits (for library use on trusted
    files); ``jobs`` is then ignored.
    """
    files = expand_paths(paths)
    overrides = dict(severity or {})
    reports: list[Report | None] = [None] * len(files)

    def done(i: int, report: Report) -> None:
        report = report.with_severities(overrides)
        reports[i] = report
        if on_report is not None:
            on_report(report)

    if not isolate:
        from planner.validate.checks import validate_file

        for i, f in enumerate(files):
            done(i, validate_file(f))
        return BatchResult(reports=tuple(r for r in reports if r is not None), strict=strict)

    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    jobs = max(1, min(jobs, len(files) or 1))
    pending = list(enumerate(files))
    pending.reverse()
    slots = [_Slot(ctx, limits.memory_mib) for _ in range(jobs)]
    try:
        for s in slots:
            if pending:
                s.give(*pending.pop())
        while any(s.index is not None for s in slots):
            busy = [s for s in slots if s.index is not None]
            now = time.monotonic()
            next_deadline = min(s.started + limits.timeout_s for s in busy)
            ready = wait([s.conn for s in busy], timeout=max(0.0, next_deadline - now))
            for k, s in enumerate(slots):
                if s.index is None:
                    continue
                i = s.index
                if s.conn in ready:
                    try:
                        done(i, Report.from_wire(s.conn.recv()))
                        s.index = None
                    except (EOFError, OSError):  # the worker died: killed by the kernel, or crashed
                        code = s.proc.exitcode
                        s.stop(kill=True)
                        done(i, _limit_report(files[i], "memory-limit",
                                              f"the validator process died (exit code {code}) on this workbook, "
                                              f"most likely over the {limits.memory_mib} MiB memory limit",
                                              expected=f"<= {limits.memory_mib} MiB"))
                        slots[k] = s = _Slot(ctx, limits.memory_mib)
                elif time.monotonic() - s.started >= limits.timeout_s:
                    s.stop(kill=True)
                    done(i, _limit_report(files[i], "timeout",
                                          f"validation took longer than {limits.timeout_s:g} s and was stopped",
                                          expected=f"<= {limits.timeout_s:g} s", actual=f"> {limits.timeout_s:g} s"))
                    slots[k] = s = _Slot(ctx, limits.memory_mib)
                if s.index is None and pending:
                    s.give(*pending.pop())
    finally:
        for s in slots:
            s.stop(kill=s.index is not None)
    return BatchResult(reports=tuple(r for r in reports if r is not None), strict=strict)
