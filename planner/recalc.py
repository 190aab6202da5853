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
    SheetMemo,
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
    view: Any = field(default=None, repr=False, compare=False)
    """The :class:`planner.ooxml.WorkbookView` read (reused by the writer; not part of the result)."""
    engine: str = "formulas"
    """``"fast"``: the template's evaluation (plus formulas for what it does not know); ``"formulas"``: the general
    engine for the whole workbook."""


def compute(src: str | Path, *, limits: Limits = DEFAULT_LIMITS, memo: SheetMemo | None = None) -> RecalcResult:
    """Recompute ``src`` without writing anything. Raises :class:`WorkbookError` for an unreadable file. ``memo``: a
    :class:`planner.ooxml.SheetMemo` kept by a caller that recomputes many plans in one process (the same result;
    ``planner recalc`` reads one plan a process and passes none).

    A plan of the template (identity, sheets, tables and columns as the template has them) is computed on the
    validator's fast path: the template's own evaluation for its formula cells, the general engine (``formulas``)
    only for what the template does not know (an edited formula, one at a time; formulas in other cells, with just
    the cells they read). Any other workbook goes to the general engine as a whole.
    """
    view = read_workbook(src, limits, memo=memo)
    fast = _compute_template_plan(src, view, memo=memo)
    if fast is not None:
        return fast
    return _compute_general(src, view)


def _compute_template_plan(src: str | Path, view: Any, *, memo: SheetMemo | None = None) -> RecalcResult | None:
    """The fast path of :func:`compute`, or ``None`` when the workbook is not a plain template plan (not the template,
    external links, external or DDE formulas, or an input the template reads holds a formula that reads other
    formulas). An input holding a formula of constants (``=400*1000``) is computed first, by formulas."""
    from planner.validate.checks import book_from_view, check_structure, check_template

    book = book_from_view(view, memo=memo)  # memo: the last plan's flattening, its unchanged cells taken over
    if view.external_links or any(True for _ in check_template(book)) or any(True for _ in check_structure(book)):
        return None
    from planner.validate import fastpath

    expected = fastpath.compiled()[1]
    template_keys = expected.keys()
    # (set differences of the dictionary views: the plan's 7,916 formulas compared in C, not in a Python loop)
    same = _is_template_formulas(book.formulas, expected)  # the template's formulas and nothing else
    if same:
        extra_keys: Any = ()
    else:
        if any(sr.external_reference(t) for _k, t in book.formulas.items() - expected.items()):
            return None
        extra_keys = book.formulas.keys() - template_keys
    extra = {k: t for k, t in book.formulas.items() if k in extra_keys} if extra_keys else {}
    literals: dict[tuple[str, str], Any] = {}
    for k, t in extra.items():
        lit = fastpath.literal_value(t)
        if lit is not fastpath.NOT_LITERAL:  # =TRUE() (LibreOffice's spelling of a TRUE input), =5, ="x"
            literals[k] = lit
            book.values[k] = lit
    extra = {k: t for k, t in extra.items() if k not in literals}
    sheets = {s.name.lower(): s.name for s in view.sheets}
    names = {k: v for k, v in view.defined_names.items() if "!" not in k and not k.startswith("_xlnm.")}
    findings: list[RecalcFinding] = []
    values: dict[tuple[str, str], Any] = dict(literals)
    before: dict[tuple[str, str], str] = {}
    if extra:
        read = fastpath.template_reads()
        for k, t in extra.items():
            if k in read:  # an input cell holding a formula (=400*1000): computed first, if it reads only constants
                p = fastpath.precedents(t, k[0], sheets)
                if p is None or any(q in book.formulas and q not in literals for q in p):
                    return None  # the general engine orders the two kinds of cell
                before[k] = t
        if before:
            results = _general_cells(book, before, {}, names, sheets, findings)
            values.update(results)
            book.values.update({k: v for k, v in results.items() if v is not None})
            extra = {k: t for k, t in extra.items() if k not in before}
    planned = fastpath.plan_values(book, carries_template=True if same else None)  # (formulas not changed since)
    if planned is None:
        return None
    values_all, _edited = planned
    formulas = book.formulas
    # a typed-over template formula is a constant now: nothing to write; an Excel error as its text (_plain_value,
    # inline). The common plan has neither (every template cell a formula, none of 8,395 values an error): both
    # told in C (a keys view compared, the set of the values' types) and the values then taken whole. A plan whose
    # formulas are the template's (same) has a formula in every cell plan_values computes (its keys are template
    # formula cells, all of them among the plan's): the keys are not compared again (2.7 ms a plan, each key's hash
    # computed anew)
    if (same or formulas.keys() >= values_all.keys()) and set(map(type, values_all.values())) <= _PLAIN_TYPES:
        values.update(values_all)
    else:
        values.update({k: str(v) if isinstance(v, str) and type(v) is not str else v
                       for k, v in values_all.items() if k in formulas})
    if extra:
        values.update(_general_cells(book, extra, values, names, sheets, findings))
    return RecalcResult(src=str(src), dst=None, values=values, findings=tuple(findings), engine="fast", view=view)


_SAME_FORMULAS: list[tuple[dict[tuple[str, str], str], dict[tuple[str, str], str]]] = []
"""At most one ``(expected, seen)``: ``seen`` a copy, held only here and never changed, of a plan's formulas found
equal to ``expected`` (the template's, :func:`planner.validate.fastpath.compiled`). About 8,000 entries whose keys
and texts are the plan's own objects (the flattening's memo hands the same ones to every later plan)."""


def _is_template_formulas(formulas: dict[tuple[str, str], str], expected: dict[tuple[str, str], str]) -> bool:
    """``formulas == expected``, sooner for a plan like the last one: compared first with the last plan's formulas
    found equal to ``expected`` (:data:`_SAME_FORMULAS`; equality is transitive, so equal to those is equal to
    ``expected``; not equal to those: compared with ``expected`` as before).

    Why: a plan flattened through a :class:`planner.ooxml.SheetMemo` (a recalculating worker's) has the same key
    tuples and formula texts as the last plan for its unchanged cells, and ``dict.__eq__`` finds each such entry by
    identity, while against ``expected`` every key is a tuple of its own, compared item by item (7,916 entries: 0.09
    against 0.45 ms warm, about 1.5 ms inside a plan). Worked example: plan 1 equal to ``expected`` is kept; plan 2,
    equal to plan 1, is equal to ``expected`` without being compared with it; a plan with one formula edited is
    compared with both and is not."""
    kept = _SAME_FORMULAS[0] if _SAME_FORMULAS else None
    # (only for the same flattening's objects, told by the first key: another's, equal but compared item by item,
    # would cost as much as ``expected`` and never be replaced)
    if (kept is not None and kept[0] is expected and next(iter(formulas), None) is next(iter(kept[1]), None)
            and formulas == kept[1]):
        return True
    if formulas != expected:
        return False
    _SAME_FORMULAS[:] = [(expected, dict(formulas))]  # a copy: the plan's own dictionary may change later
    return True


def _general_cells(book: Any, cells: dict[tuple[str, str], str], computed: dict[tuple[str, str], Any],
                   names: dict[str, str], sheets: dict[str, str],
                   findings: list[RecalcFinding]) -> dict[tuple[str, str], Any]:
    """Formula cells the template does not know, computed by formulas from the workbook's constants and the values
    ``computed`` so far (only the cells they read, when their references say which)."""
    from planner.formulas_engine import evaluate
    from planner.validate import fastpath

    needed: set[tuple[str, str]] | None = set()
    for (sheet, _cell), text in cells.items():
        p = fastpath.precedents(text, sheet, sheets)
        if p is None or needed is None:
            needed = None
            break
        needed |= p
    constants = {k: v for k, v in book.values.items() if k not in book.formulas or k in computed}
    constants.update(computed)
    if needed is not None:
        constants = {k: v for k, v in constants.items() if k in needed and k not in cells}
    results, problems = evaluate(constants, cells, names)
    for (sheet, ref), msg in problems.items():
        cell = ref.split(":")[0]
        findings.append(RecalcFinding(code="unparsable-formula", sheet=sheet, cell=cell,
                                      message=f"{sheet}!{cell}: {msg}: {cells.get((sheet, ref), '')}"))
    out: dict[tuple[str, str], Any] = {}
    for k, text in cells.items():
        if k in results:
            out[k] = results[k]
        else:
            findings.append(RecalcFinding(code="circular-reference", sheet=k[0], cell=k[1],
                                          message=f"{k[0]}!{k[1]}: no value computed (circular reference?): {text}"))
    return out


_PLAIN_TYPES = frozenset((str, float, bool, int, type(None)))
"""The value types :func:`_plain_value` returns unchanged (an Excel error, a ``str`` subclass, becomes its text)."""


def _plain_value(v: Any) -> Any:
    """A value of the template's evaluation as written to a cell (an Excel error as its text)."""
    if isinstance(v, str) and type(v) is not str:
        return str(v)
    return v


def _compute_general(src: str | Path, view: Any) -> RecalcResult:
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
    return RecalcResult(src=str(src), dst=None, values=results, findings=tuple(findings), engine="formulas",
                        view=view)




def recalc_file(src: str | Path, dst: str | Path, *, limits: Limits = DEFAULT_LIMITS,
                full_calc_on_load: bool = False, tmp: str | Path | None = None,
                replace: bool = True, memo: SheetMemo | None = None) -> RecalcResult:
    """Recompute ``src`` and write ``dst``: the same package with fresh cached values of the formula cells.

    ``src`` is never written. ``dst`` appears complete or not at all: the package is written to a new temporary file
    next to it and renamed onto it (with ``replace=False`` the finished temporary file ``tmp`` is left for the caller
    to rename). Raises :class:`planner.ooxml.WorkbookError` (message names the file) when ``src`` is not a readable
    workbook within ``limits``; per-cell problems are ``findings``. ``memo``: as :func:`compute`'s.

    Example::

        result = recalc_file("plan.xlsx", "plan.recalc.xlsx")
        result.values[("Routes", "H3")]
    """
    s, d = Path(src), Path(dst)
    if d.exists() and s.resolve() == d.resolve():
        raise WorkbookError(d, "the output must not be the input (a submitted workbook is never modified)")
    result = compute(s, limits=limits, memo=memo)
    missing = write_cached_values(s, d, result.values, full_calc_on_load=full_calc_on_load, limits=limits, tmp=tmp,
                                  replace=replace, view=result.view, only_changed=True)
    lost = tuple(RecalcFinding(code="value-not-written", sheet=sheet, cell=cell,
                               message=f"{sheet}!{cell}: computed, but the sheet has no <c> element for it: no value "
                                       "written there")
                 for sheet, cell in sorted(missing))
    return RecalcResult(src=str(s), dst=str(d), values=result.values, findings=result.findings + lost,
                        engine=result.engine)


def _encode(value: Any) -> Any:
    if isinstance(value, str) and type(value) is not str:
        return str(value)
    return value if value is None or isinstance(value, bool | int | float | str) else str(value)


TIME_LIMIT_HINT = "raise it with --time-limit SECONDS"


def recalc_file_isolated(src: str | Path, dst: str | Path | None, *, limits: Limits = DEFAULT_LIMITS,
                         full_calc_on_load: bool = False) -> RecalcResult:
    """:func:`recalc_file` (or :func:`compute` when ``dst`` is None) in a child process limited to
    ``limits.time_limit_s`` seconds and ``limits.memory_limit_bytes`` of address space. A child that runs out of
    time or memory raises :class:`WorkbookError` naming the file (the time-limit message names ``--time-limit``).

    The child writes a new temporary file next to ``dst``; this process renames it onto ``dst`` only after the child
    reported success, and removes it on a refusal, a timeout or a crash: ``dst`` is never left partial or stale."""
    from planner.ooxml import temp_path_for

    tmp = None if dst is None else temp_path_for(dst)
    payload = json.dumps({"src": str(src), "dst": None if dst is None else str(dst),
                          "tmp": None if tmp is None else str(tmp), "full_calc_on_load": full_calc_on_load,
                          "limits": {k: getattr(limits, k) for k in limits.__dataclass_fields__}})

    def limit() -> None:
        import resource

        mem = int(limits.memory_limit_bytes)
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        cpu = int(limits.time_limit_s) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))

    env = dict(os.environ, TQDM_DISABLE="1")
    try:
        try:
            proc = subprocess.run([sys.executable, "-m", "planner.recalc"], input=payload, capture_output=True,
                                  text=True, timeout=limits.time_limit_s, preexec_fn=limit, env=env)
        except subprocess.TimeoutExpired:
            raise WorkbookError(src, f"recalc exceeded the time limit of {limits.time_limit_s:g} s "
                                f"({TIME_LIMIT_HINT})") from None
        if proc.returncode != 0:
            tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            if "MemoryError" in proc.stderr:
                raise WorkbookError(src, f"recalc exceeded the memory limit of "
                                    f"{limits.memory_limit_bytes / 2**30:g} GiB ({tail})")
            if proc.returncode in (-9, -24):  # SIGKILL / SIGXCPU from RLIMIT_CPU
                raise WorkbookError(src, f"recalc exceeded the CPU time limit of {limits.time_limit_s:g} s "
                                    f"({TIME_LIMIT_HINT})")
            raise WorkbookError(src, f"recalc failed (exit {proc.returncode}): {tail}")
        out = json.loads(proc.stdout)
        if "error" in out:
            raise WorkbookError(src, out["error"].split(": ", 1)[-1])
        if tmp is not None and dst is not None:
            os.replace(tmp, dst)
    finally:
        if tmp is not None:
            from contextlib import suppress

            with suppress(OSError):
                if tmp.is_file() and not tmp.is_symlink():
                    tmp.unlink()
    return RecalcResult(
        src=str(src), dst=out["dst"],
        values={(s, c): v for s, c, v in out["values"]},
        findings=tuple(RecalcFinding(**f) for f in out["findings"]),
        engine=out.get("engine", "formulas"),
    )


def _child() -> None:
    req = json.loads(sys.stdin.read())
    limits = Limits(**req["limits"])
    from planner.validate.fastpath import settle_gc

    settle_gc()  # this process only recomputes: the template state built once, out of the collector's way
    try:
        if req["dst"]:
            res = recalc_file(req["src"], req["dst"], limits=limits, tmp=req["tmp"], replace=False,
                              full_calc_on_load=req.get("full_calc_on_load", False))
        else:
            res = compute(req["src"], limits=limits)
    except WorkbookError as exc:
        print(json.dumps({"error": str(exc)}))
        return
    print(json.dumps({
        "dst": res.dst,
        "engine": res.engine,
        "values": [[s, c, _encode(v)] for (s, c), v in res.values.items()],
        "findings": [f.__dict__ for f in res.findings],
    }))


if __name__ == "__main__":
    _child()
