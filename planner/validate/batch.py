"""Batch validation over files and folders, with ``--jobs`` worker processes and per-workbook limits. The worker
pool (:func:`run_pool`) also runs ``planner recalc --output-dir`` (:mod:`planner.recalc_batch`, task ``recalc``).

Each workbook is validated in a worker process whose address space is capped (``memory_mib`` on top of what the
worker already uses, ``RLIMIT_AS``) and whose answer must come within ``timeout_s``. A worker that runs over
its time is killed and replaced, and the workbook gets a ``timeout`` finding; one that runs out of memory reports
``memory-limit`` (or dies and is replaced). Either way the batch goes on: every path gets a report.
Workers are started once and validate many workbooks each; when a worker may get more than one, it keeps its own
:class:`~planner.ooxml.SheetMemo` across them (created after its cap is set, so counted in it: at most
:func:`memo_bytes`, 32 MiB under the default 1024 MiB; emptied when the worker runs out of memory), so a sheet whose
markup an earlier plan had, cached values and inline texts apart, is read from that plan's cells: the same views.
(A first sighting costs more than a read without the memo, so a batch of one plan per worker keeps none.)
The fast path's compiled template is built once, before
the workers start, in the process they are forked from (:func:`planner.validate.fastpath.warm`): they share it, and
it does not count against a workbook's memory limit. They are forked from the caller when it runs one thread and
is the ``planner`` CLI (``fork_caller=True``: a small process holding nothing but the validator) or a caller of at
most :data:`FORK_CALLER_MAX_MIB` resident, and otherwise from a clean single-threaded server process
(``forkserver``, with the validator and that state preloaded, :mod:`planner.validate.preload`). A fork of a threaded
caller inherits its threads' held locks, which can hang the worker; a fork of a large caller inherits its heap: the
free blocks of that heap are address space the worker already has, so its cap does not count them, and a workbook
filling them pays a copy-on-write fault per page. (A small single-threaded script is still forked from: a server's
workers re-import the caller's ``__main__``, which runs a script without a ``__main__`` guard again.) Forked from
a 1 GiB test-runner process, 4 workbooks under a 40 MiB cap took 12.7 s (a loaded machine) where a small caller
takes 1.8 s, and 2 of 5 full test runs saw a ``timeout`` (60 s) where ``memory-limit`` was due; never with workers
from the server.

Running out of memory is recognised however it surfaces: a ``MemoryError``; a C extension's allocation failure
reported as ``SystemError`` (``error return without exception set``; the crash finding carries the exception's
type in its context, ``exception``) while the worker is within
:data:`NEAR_CAP_FRACTION` of its cap; or a worker that cannot even build its report and exits with
:data:`MEMORY_EXIT_CODE`. A reserve of :data:`RESERVE_BYTES` is held by each worker and released before the report
is built, and the exception (with the frames holding the workbook's data) is dropped first. A worker that ran out
of memory is replaced, so the next workbook starts in a fresh address space.

Folders are walked without following symbolic links out of the submitted paths (:func:`plan_paths`): a link that
points outside every submitted path is reported (``symlink-outside-root``) and never opened, a FIFO, socket or
device named like a workbook is reported (``special-file``) and never opened, and nothing is skipped silently:
dot-directories are walked, ``~$`` files that are real workbooks are validated (Office lock files get a
``path-skipped`` info), and a folder that cannot be listed (a path past the system limit) gets an ``unreadable``
report.
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import os
import signal
import stat
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection, wait
from typing import Any

from planner.ooxml import SHEET_MEMO_BYTES, SheetMemo
from planner.validate.report import BatchResult, Finding, Report

WORKBOOK_SUFFIXES = (".xlsx", ".xlsm")
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MEMORY_MIB = 1024
MEMORY_EXIT_CODE = 86
"""A worker's exit code when it ran out of memory and could not even send its report."""
NEAR_CAP_FRACTION = 0.9
"""A ``SystemError`` counts as an allocation failure when the worker's peak address space used this share of its
per-workbook budget (below it, it is a bug: ``validator-crash``)."""
RESERVE_BYTES = 2 * 1024 * 1024
MEMO_SHARE = 32
"""A worker's :class:`~planner.ooxml.SheetMemo` holds at most this share of the per-workbook memory limit (and at
most :data:`planner.ooxml.SHEET_MEMO_BYTES`): :func:`memo_bytes`."""


def memo_bytes(memory_mib: int) -> int:
    """The budget of a worker's sheet memo under a per-workbook limit of ``memory_mib``: the smaller of
    ``memory_mib / MEMO_SHARE`` and :data:`planner.ooxml.SHEET_MEMO_BYTES` (1024 MiB: 32 MiB; 40 MiB: 1.25 MiB,
    too little for a template plan's largest sheet, which is then read in full each time)."""
    return min(SHEET_MEMO_BYTES, memory_mib * 1024 * 1024 // MEMO_SHARE)


@dataclass(frozen=True, kw_only=True)
class Limits:
    """Per-workbook limits."""

    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_mib: int = DEFAULT_MEMORY_MIB


@dataclass(frozen=True, kw_only=True)
class Planned:
    """One path of a batch: ``open_path`` is what a worker opens (the link target, checked to be inside the
    submitted paths), or ``report`` is already known (a link out of the roots, a special file, a skipped path)."""

    path: str
    open_path: str | None = None
    report: Report | None = None


def _inside(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def _known(path: str, code: str, **kw: Any) -> Planned:
    return Planned(path=path, report=Report(path=path, engine="none", findings=(Finding.of(code, **kw),)))


def _lock_file(path: str) -> bool:
    """An Office lock file (``~$name``: a few bytes of user name), not a zip package."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    try:
        return os.read(fd, 2) != b"PK"
    finally:
        os.close(fd)


def _entry(full: str, roots: list[str]) -> Planned | None:
    """What to do with one directory entry named like a workbook (None: not a workbook)."""
    try:
        st = os.lstat(full)
    except OSError as exc:
        return _known(full, "unreadable", note=exc.strerror or str(exc))
    if stat.S_ISLNK(st.st_mode):
        target = os.path.realpath(full)
        if not _inside(target, roots):
            return _known(full, "symlink-outside-root", actual=os.readlink(full))
        try:
            st = os.stat(target)
        except OSError as exc:
            return _known(full, "unreadable", note=f"symbolic link to {os.readlink(full)}: {exc.strerror}")
        if stat.S_ISDIR(st.st_mode):
            return None  # a folder inside the submitted paths: walked there
        open_path = target
    else:
        open_path = full
    if stat.S_ISDIR(st.st_mode):
        return None
    if not stat.S_ISREG(st.st_mode):
        return _known(full, "special-file", note=_special(st.st_mode))
    if os.path.basename(full).startswith("~$") and _lock_file(open_path):
        return _known(full, "path-skipped", note="an Office lock file (~$name, not a zip)")
    return Planned(path=full, open_path=open_path)


def _special(mode: int) -> str:
    return f"{_file_kind(mode)}, not a workbook file: never opened"


def _file_kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a regular file"


def plan_paths(paths: Iterable[str]) -> list[Planned]:
    """Every path of a batch: files as given, folders walked (sorted; dot-directories included), with the
    decisions of the module docstring. A path given on the command line that does not exist is kept (it gets an
    ``unreadable`` report)."""
    out: list[Planned] = []
    for p in paths:
        if not os.path.isdir(p):
            try:
                st = os.stat(p)
            except OSError:
                out.append(Planned(path=p, open_path=p))
                continue
            out.append(Planned(path=p, open_path=p) if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)
                       else _known(p, "special-file", note=_special(st.st_mode)))
            continue
        roots = [os.path.realpath(x) for x in paths if os.path.isdir(x)]
        found: list[Planned] = []
        errors: list[OSError] = []
        for root, dirs, files in os.walk(p, onerror=errors.append):
            dirs.sort()
            for name in list(dirs):
                full = os.path.join(root, name)
                if os.path.islink(full):
                    dirs.remove(name)  # never descended into; reported when it leaves the submitted paths
                    if not _inside(os.path.realpath(full), roots):
                        found.append(_known(full, "symlink-outside-root", actual=os.readlink(full)))
            for name in files:
                if name.lower().endswith(WORKBOOK_SUFFIXES):  # other files (a venv's python link...) are not plans
                    e = _entry(os.path.join(root, name), roots)
                    if e is not None:
                        found.append(e)
        for exc in errors:
            where = str(exc.filename) if exc.filename else p
            found.append(_known(where, "unreadable", note=f"cannot list this folder: {exc.strerror or exc}"))
        out += sorted(found, key=lambda e: e.path)
    return out


def expand_paths(paths: Iterable[str]) -> list[str]:
    """The paths :func:`plan_paths` gives for ``paths`` (files as given, folders walked)."""
    return [e.path for e in plan_paths(paths)]


def died_report(path: str, exitcode: int | None, memory_mib: int) -> Report:
    """The report of a worker that died on ``path``: killed (``SIGKILL``, the kernel's out-of-memory killer) is
    ``memory-limit``; any other signal or exit code is a ``validator-crash`` naming it."""
    if exitcode == MEMORY_EXIT_CODE:
        return _limit_report(path, f"validation ran out of the {memory_mib} MiB per-workbook memory limit "
                                   f"(--memory); the worker could not even send its report")
    if exitcode == -signal.SIGKILL:
        return Report(path=path, engine="none", findings=(Finding.of(
            "memory-limit", expected=f"<= {memory_mib} MiB",
            note=f"the validator process was killed (SIGKILL) on this workbook, most likely by the kernel's "
                 f"out-of-memory killer over the {memory_mib} MiB limit"),))
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        how = f"died of {name}"
    else:
        how = f"exited with code {exitcode}"
    return Report(path=path, engine="none", findings=(Finding.of(
        "validator-crash", note=f"the validator process {how} on this workbook (please report it); the batch "
                                f"goes on"),))


_CAP: dict[str, int] = {}  # this worker's address-space cap and its base, set by _worker
_RESERVE: list[bytearray] = []


def _status_kib(field: bytes) -> int | None:
    """A ``/proc/self/status`` figure in KiB (``VmPeak``, ``VmRSS``), or None where /proc does not say."""
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(field + b":"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def _peak_bytes() -> int | None:
    """This process's peak address space (``VmPeak``), or None where /proc does not say."""
    kib = _status_kib(b"VmPeak")
    return None if kib is None else kib * 1024


def _near_cap() -> bool:
    if "cap" not in _CAP:
        return False
    peak = _peak_bytes()
    budget = _CAP["cap"] - _CAP["base"]
    return peak is not None and peak - _CAP["base"] >= NEAR_CAP_FRACTION * budget


def _validate_one(path: str, memo: SheetMemo | None = None) -> tuple[dict[str, Any], bool]:
    """The wire report of ``path`` and whether the worker ran out of memory on it (it is then replaced); ``memo``:
    the worker's :class:`~planner.ooxml.SheetMemo`, emptied when memory ran out."""
    from planner.validate.checks import validate_file

    out_of_memory = False
    try:
        report = validate_file(path, memo=memo)
        if any(f.code == "validator-crash" and dict(f.context).get("exception") == "SystemError"
               for f in report.findings) and _near_cap():
            out_of_memory = True  # a C extension failed to allocate under the cap and said nothing
        else:
            return report.to_wire(), False
    except MemoryError:
        out_of_memory = True
    # Here the exception is gone, and with it the frames that held the workbook's data: memory is free again.
    _RESERVE.clear()
    if memo is not None:
        memo.clear()
    gc.collect()
    return _limit_report(path, "validation ran out of the per-workbook memory limit (--memory)").to_wire(), \
        out_of_memory


def _limit_report(path: str, note: str) -> Report:
    return Report(path=path, template_version=None, engine="none", findings=(Finding.of("memory-limit", note=note),))


def _run_one(task: str, item: Any, memo: SheetMemo | None) -> tuple[dict[str, Any], bool]:
    """A worker's job on one item: ``validate`` a path (:func:`_validate_one`), or ``recalc`` one plan into a
    temporary output file (:func:`planner.recalc_batch.recalc_one`)."""
    if task == "recalc":
        from planner.recalc_batch import recalc_one

        return recalc_one(item, memo)
    return _validate_one(item, memo)


def _worker(conn: Connection, memory_mib: int, keep_memo: bool = True, task: str = "validate") -> None:
    from planner.validate.fastpath import settle_gc

    # The inherited template state out of the collector's way, before the cap is measured and set: a worker whose
    # parent had not built it (a spawned one) builds it here, outside the per-workbook budget, as a forked one
    # inherits it.
    settle_gc()
    try:
        import resource

        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[0])
        base = pages * os.sysconf("SC_PAGE_SIZE")
        cap = base + memory_mib * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        _CAP.update(base=base, cap=cap)
    except (OSError, ValueError, ImportError):  # not Linux: the time limit still applies
        pass
    _RESERVE.append(bytearray(RESERVE_BYTES))
    # this worker's own memo, for the plans it is given (none when it gets one plan: a first sighting costs more)
    memo = SheetMemo(max_bytes=memo_bytes(memory_mib)) if keep_memo else None
    while True:
        try:
            item = conn.recv()
        except EOFError:
            return
        if item is None:
            return
        try:
            wire, out_of_memory = _run_one(task, item, memo)
            conn.send((wire, out_of_memory))
        except MemoryError:
            os._exit(MEMORY_EXIT_CODE)  # nothing can be allocated: the parent reports memory-limit from the code
        if out_of_memory:
            return  # the parent replaces this worker: the next workbook gets a fresh address space


class _Slot:
    def __init__(self, ctx: Any, memory_mib: int, keep_memo: bool = True, task: str = "validate") -> None:
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child, memory_mib, keep_memo, task), daemon=True)
        self.proc.start()
        child.close()
        self.index: int | None = None
        self.started = 0.0

    def give(self, index: int, item: Any) -> None:
        self.index, self.started = index, time.monotonic()
        self.conn.send(item)

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


def _main_reloadable() -> bool:
    """A server-started worker re-imports the caller's ``__main__`` (as ``__mp_main__``): possible for a module run
    with ``-m`` or a script on disk, not for code read from standard input or typed at a prompt."""
    import sys

    main = sys.modules.get("__main__")
    if getattr(getattr(main, "__spec__", None), "name", None):
        return True
    path = getattr(main, "__file__", None)
    return bool(path) and os.path.isfile(str(path))


FORK_CALLER_MAX_MIB = 512
"""A library caller runs its workers forked from itself only while its resident memory is at most this (the CLI
always does): a larger caller's free heap would widen every worker's memory limit (module docstring)."""


def _caller_fits(fork_caller: bool) -> bool:
    """Workers may be forked from this process: one thread, and the CLI or a caller of at most
    :data:`FORK_CALLER_MAX_MIB` resident."""
    if threading.active_count() > 1:
        return False
    if fork_caller:
        return True
    rss_kib = _status_kib(b"VmRSS")
    return rss_kib is not None and rss_kib <= FORK_CALLER_MAX_MIB * 1024


def _context(fork_caller: bool = False) -> Any:
    """Workers are forked from this process when it fits (:func:`_caller_fits`: fast, nothing imported twice), and
    otherwise from a clean server process (a threaded or large caller, a test runner; see the module docstring)."""
    methods = mp.get_all_start_methods()
    caller_fits = _caller_fits(fork_caller)
    if not caller_fits and "forkserver" in methods and _main_reloadable():
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["planner.validate.preload"])
        return ctx
    return mp.get_context("fork" if "fork" in methods else "spawn")


def validate_paths(
    paths: Sequence[str],
    *,
    jobs: int = 1,
    limits: Limits = Limits(),
    severity: Mapping[str, str] | None = None,
    strict: bool = False,
    isolate: bool = True,
    on_report: Callable[[Report], None] | None = None,
    select: set[str] | None = None,
    ignore: set[str] | None = None,
    max_findings: int | None = None,
    fork_caller: bool = False,
) -> BatchResult:
    """Validate every workbook under ``paths`` and return their reports in path order (never raises on a file).

    ``isolate=False`` validates in this process, without the time and memory limits (for library use on trusted
    files); ``jobs`` is then ignored. ``fork_caller=True`` (the CLI) forks the workers from this process whatever
    its size (see the module docstring).
    """
    planned = plan_paths(paths)
    files = [e.open_path or e.path for e in planned]
    overrides = dict(severity or {})
    reports: list[Report | None] = [None] * len(files)

    def done(i: int, report: Report) -> None:
        report = replace(report, path=planned[i].path).with_severities(overrides)
        report = report.selected(keep=select, drop=ignore or frozenset(), max_findings=max_findings)
        reports[i] = report
        if on_report is not None:
            on_report(report)

    todo = []
    for i, e in enumerate(planned):
        if e.report is not None:
            done(i, e.report)
        else:
            todo.append((i, files[i]))

    if not isolate:
        from planner.validate.checks import validate_file

        memo = SheetMemo() if len(todo) > 1 else None  # this call's own: dropped with it
        for i, f in todo:
            done(i, validate_file(f, memo=memo))
        return BatchResult(reports=tuple(r for r in reports if r is not None), strict=strict)

    def died(i: int, how: str, code: int | None) -> None:
        if how == "timeout":
            done(i, Report(path=files[i], engine="none", findings=(Finding.of(
                "timeout", note=f"{limits.timeout_s:g} s", expected=f"<= {limits.timeout_s:g} s",
                actual=f"> {limits.timeout_s:g} s"),)))
        else:
            done(i, died_report(files[i], code, limits.memory_mib))

    run_pool(todo, task="validate", jobs=jobs, timeout_s=limits.timeout_s, memory_mib=limits.memory_mib,
             fork_caller=fork_caller, on_wire=lambda i, wire: done(i, Report.from_wire(wire)), on_failed=died)
    return BatchResult(reports=tuple(r for r in reports if r is not None), strict=strict)


def run_pool(todo: Sequence[tuple[int, Any]], *, task: str, jobs: int, timeout_s: float, memory_mib: int,
             fork_caller: bool, on_wire: Callable[[int, dict[str, Any]], None],
             on_failed: Callable[[int, str, int | None], None]) -> None:
    """Run ``task`` on every ``(index, item)`` of ``todo`` in ``jobs`` worker processes, each item under
    ``timeout_s`` seconds and ``memory_mib`` MiB (module docstring). ``on_wire(index, wire)`` receives a worker's
    answer; ``on_failed(index, how, exitcode)`` an item whose worker ran out of time (``how="timeout"``, the worker
    killed) or died (``"died"``, its exit code). A worker that ran out of memory, timed out or died is replaced;
    the batch goes on. Never raises for an item."""
    if not todo:
        return
    ctx = _context(fork_caller)
    if ctx.get_start_method() == "fork":
        from planner.validate.fastpath import warm

        warm()  # built once here and inherited by every worker, outside their memory caps
    jobs = max(1, min(jobs, len(todo)))
    pending = list(todo)
    pending.reverse()
    many = len(todo) > jobs  # some worker gets more than one plan: its sheet memo pays
    slots = [_Slot(ctx, memory_mib, many, task) for _ in range(jobs)]
    try:
        for s in slots:
            if pending:
                s.give(*pending.pop())
        while any(s.index is not None for s in slots):
            busy = [s for s in slots if s.index is not None]
            now = time.monotonic()
            next_deadline = min(s.started + timeout_s for s in busy)
            ready = wait([s.conn for s in busy], timeout=max(0.0, next_deadline - now))
            for k, s in enumerate(slots):
                if s.index is None:
                    continue
                i = s.index
                if s.conn in ready:
                    try:
                        wire, out_of_memory = s.conn.recv()
                        s.index = None
                        on_wire(i, wire)
                        if out_of_memory:
                            s.stop()  # it has exited: a fresh worker takes the next workbook
                            slots[k] = s = _Slot(ctx, memory_mib, many, task)
                    except (EOFError, OSError):  # the worker died: killed by the kernel, or crashed
                        s.proc.join(timeout=5)
                        code = s.proc.exitcode
                        s.index = None
                        s.stop(kill=True)
                        on_failed(i, "died", code)
                        slots[k] = s = _Slot(ctx, memory_mib, many, task)
                elif time.monotonic() - s.started >= timeout_s:
                    s.stop(kill=True)
                    s.index = None
                    on_failed(i, "timeout", None)
                    slots[k] = s = _Slot(ctx, memory_mib, many, task)
                if s.index is None and pending:
                    s.give(*pending.pop())
    finally:
        for s in slots:
            s.stop(kill=s.index is not None)
