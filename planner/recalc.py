"""Headless recompute of a workbook: fresh cached values, every other part kept byte for byte.

:func:`recalc_file` reads the package with :func:`planner.ooxml.read_workbook` (size limits, defusedxml), rewrites
each formula into plain A1 syntax (structured references, whole-column ranges, nested SUBTOTALs), refuses external
and DDE references (findings, never followed), evaluates with :mod:`planner.formulas_engine` and writes the values
with :func:`planner.ooxml.write_cached_values`. :func:`recalc_file_isolated` runs the same in a child process under a
time limit and an address-space limit. See ``docs/recalc.md``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planner import structured_refs as sr
from planner.a1 import index_to_col, split_cell, split_range
from planner.ooxml import (
    DEFAULT_LIMITS,
    Limits,
    WorkbookError,
    read_workbook,
    write_cached_values,
)


@dataclass(frozen=True, kw_only=True)
class RecalcFinding:
    """One problem found while recomputing: ``code`` is a kebab-case slug."""

    code: str  # a code of the one catalogue, planner.codes.CODES (a test checks every code recalc emits)
    sheet: str | None
    cell: str | None
    message: str


@dataclass(frozen=True, kw_only=True)
class RecalcResult:
    """``values``: ``(sheet, cell)`` → recomputed value of every formula cell (and array-formula cell)."""

    src: str
    dst: str | None
    values: dict[tuple[str, str], Any]
    findings: tuple[RecalcFinding, ...] = field(default=())


def compute(src: str | Path, *, limits: Limits = DEFAULT_LIMITS) -> RecalcResult:
    """Recompute ``src`` without writing anything. Raises :class:`WorkbookError` for an unreadable file."""
    view = read_workbook(src, limits)
    tables = sr.tables_from_view(view.tables.values())
    findings: list[RecalcFinding] = []
    constants: dict[tuple[str, str], Any] = {}
    formula_cells: dict[tuple[str, str], str] = {}
    for sheet in view.sheets:
        subtotal_cells = {
            split_cell(c.ref) for c in sheet.cells.values() if c.formula and "SUBTOTAL(" in c.formula.upper()
        }
        covered: set[str] = set()
        for c in sheet.cells.values():
            if c.array_ref and ":" in c.array_ref:
                t, lft, b, r = split_range(c.array_ref)
                covered |= {f"{index_to_col(j)}{i}" for i in range(t, b + 1) for j in range(lft, r + 1)}
        for c in sheet.cells.values():
            if c.formula is None:
                if c.ref not in covered:
                    constants[(sheet.name, c.ref)] = c.value
                continue
            row, col = split_cell(c.ref)
            text = c.formula
            target = c.array_ref if c.array_ref and ":" in c.array_ref else c.ref
            ext = sr.external_reference(text)
            if ext:
                code = "dde-formula" if ext.endswith("|") else "external-link"
                findings.append(RecalcFinding(code=code, sheet=sheet.name, cell=c.ref,
                                              message=f"{sheet.name}!{c.ref}: {code} {ext} not followed: ={text}"))
                formula_cells[(sheet.name, target)] = "=#REF!"
                continue
            try:
                text = sr.rewrite_structured(text, sheet=sheet.name, row=row, col=col, tables=tables)
            except sr.StructuredRefError as exc:
                findings.append(RecalcFinding(code="broken-structured-reference", sheet=sheet.name, cell=c.ref,
                                              message=f"{sheet.name}!{c.ref}: {exc}"))
                formula_cells[(sheet.name, target)] = "=#REF!"
                continue
            text = sr.bound_full_ranges(text, max_row=sheet.max_row, max_col=sheet.max_col)
            text = sr.exclude_cells_from_subtotal(text, excluded=subtotal_cells - {(row, col)})
            formula_cells[(sheet.name, target)] = "=" + text
    names = {k: v for k, v in view.defined_names.items() if "!" not in k or k.count("!") > 1}
    names = {k: v for k, v in names.items() if not sr.external_reference(v) and not k.startswith("_xlnm.")}
    for link in view.external_links:
        findings.append(RecalcFinding(code="external-link", sheet=None, cell=None,
                                      message=f"external link part to {link} (not followed)"))
    from planner.formulas_engine import evaluate

    results, problems = evaluate(constants, formula_cells, names)
    for (sheet, ref), msg in problems.items():
        cell = ref.split(":")[0]
        findings.append(RecalcFinding(code="unparsable-formula", sheet=sheet, cell=cell,
                                      message=f"{sheet}!{cell}: {msg}: {formula_cells.get((sheet, ref), '')}"))
    for (sheet, ref), text in formula_cells.items():
        cell = ref.split(":")[0]
        if (sheet, cell) not in results:
            findings.append(RecalcFinding(code="circular-reference", sheet=sheet, cell=cell,
                                          message=f"{sheet}!{cell}: no value computed (circular reference?): {text}"))
    return RecalcResult(src=str(src), dst=None, values=results, findings=tuple(findings))




def recalc_file(src: str | Path, dst: str | Path, *, limits: Limits = DEFAULT_LIMITS,
                full_calc_on_load: bool = False) -> RecalcResult:
    """Recompute ``src`` and write ``dst``: the same package with fresh cached values of the formula cells.

    ``src`` is never written. Raises :class:`planner.ooxml.WorkbookError` (message names the file) when ``src`` is
    not a readable workbook within ``limits``; per-cell problems are ``findings``.

    Example::

        result = recalc_file("plan.xlsx", "plan.recalc.xlsx")
        result.values[("Routes", "H3")]
    """
    s, d = Path(src), Path(dst)
    if d.exists() and s.resolve() == d.resolve():
        raise WorkbookError(d, "the output must not be the input (a submitted workbook is never modified)")
    result = compute(s, limits=limits)
    write_cached_values(s, d, result.values, full_calc_on_load=full_calc_on_load, limits=limits)
    return RecalcResult(src=str(s), dst=str(d), values=result.values, findings=result.findings)


def _encode(value: Any) -> Any:
    return value if value is None or isinstance(value, bool | int | float | str) else str(value)


def recalc_file_isolated(src: str | Path, dst: str | Path | None, *, limits: Limits = DEFAULT_LIMITS,
                         full_calc_on_load: bool = False) -> RecalcResult:
    """:func:`recalc_file` (or :func:`compute` when ``dst`` is None) in a child process limited to
    ``limits.time_limit_s`` seconds and ``limits.memory_limit_bytes`` of address space. A child that runs out of
    time or memory raises :class:`WorkbookError` naming the file (and the option that sets the limit)."""
    payload = json.dumps({"src": str(src), "dst": None if dst is None else str(dst),
                          "full_calc_on_load": full_calc_on_load,
                          "limits": {k: getattr(limits, k) for k in limits.__dataclass_fields__}})

    def limit() -> None:
        import resource

        mem = int(limits.memory_limit_bytes)
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        cpu = int(limits.time_limit_s) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))

    env = dict(os.environ, TQDM_DISABLE="1")
    try:
        proc = subprocess.run([sys.executable, "-m", "planner.recalc"], input=payload, capture_output=True, text=True,
                              timeout=limits.time_limit_s, preexec_fn=limit, env=env)
    except subprocess.TimeoutExpired:
        raise WorkbookError(src, f"recalc exceeded the time limit of {limits.time_limit_s:g} s") from None
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        if "MemoryError" in proc.stderr or proc.returncode < 0:
            raise WorkbookError(src, f"recalc exceeded the memory or CPU limit ({tail})")
        raise WorkbookError(src, f"recalc failed: {tail}")
    out = json.loads(proc.stdout)
    if "error" in out:
        raise WorkbookError(src, out["error"].split(": ", 1)[-1])
    return RecalcResult(
        src=str(src), dst=out["dst"],
        values={(s, c): v for s, c, v in out["values"]},
        findings=tuple(RecalcFinding(**f) for f in out["findings"]),
    )


def _child() -> None:
    req = json.loads(sys.stdin.read())
    limits = Limits(**req["limits"])
    try:
        if req["dst"]:
            res = recalc_file(req["src"], req["dst"], limits=limits,
                              full_calc_on_load=bool(req.get("full_calc_on_load")))
        else:
            res = compute(req["src"], limits=limits)
    except WorkbookError as exc:
        print(json.dumps({"error": str(exc)}))
        return
    print(json.dumps({
        "dst": res.dst,
        "values": [[s, c, _encode(v)] for (s, c), v in res.values.items()],
        "findings": [f.__dict__ for f in res.findings],
    }))


if __name__ == "__main__":
    _child()
