"""The one module that imports the ``formulas`` library (and ``schedula``).

:func:`evaluate` builds a ``formulas.ExcelModel`` from plain cell dictionaries (never from a file: the library's own
loader would follow external workbook references on disk), one cell at a time so that an unparsable formula becomes a
finding for that cell instead of aborting the load, then calculates it.

Every registry function is registered (under every spelling of :func:`planner.registry.spellings`) before any
formula is parsed, plus ``SUBTOTAL`` (function numbers 1-11 and 101-111), for the duration of :func:`evaluate`.
"""

from __future__ import annotations

import math
import os
import statistics
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

os.environ.setdefault("TQDM_DISABLE", "1")

import formulas  # noqa: E402
import numpy as np  # noqa: E402
import schedula as sh  # noqa: E402
from formulas.cell import Cell, Ref  # noqa: E402
from formulas.functions import wrap_func  # noqa: E402

from planner import registry  # noqa: E402
from planner.coerce import call_sheet_function  # noqa: E402
from planner.errors import PlannerError  # noqa: E402
from planner.excel.values import ERROR_VALUES  # noqa: E402

BOOK = "plan.xlsx"


def _plain(value: Any) -> Any:
    """numpy arrays / schedula EMPTY / XlError → lists / None / error text."""
    if isinstance(value, np.ndarray):
        if value.shape == (1, 1):
            return _plain(value[0, 0])
        return (
            [[_plain(x) for x in row] for row in value.reshape(value.shape[0], -1).tolist()]
            if value.ndim
            else _plain(value.item())
        )
    if value is sh.EMPTY:
        return None
    if isinstance(value, formulas.functions.XlError):
        return str(value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def _adapter(spec: registry.SheetFunction) -> Any:
    def call(*args: Any) -> Any:
        try:
            result = call_sheet_function(spec, *[_plain(a) for a in args])  # refusals as their text, as in Excel
        except PlannerError:
            return formulas.functions.Error.errors["#VALUE!"]
        except (TypeError, ValueError, ZeroDivisionError, OverflowError):
            return formulas.functions.Error.errors["#VALUE!"]
        if isinstance(result, list):
            return np.array(result, dtype=object)
        if isinstance(result, str) and result in ERROR_VALUES:  # an Excel error passed through: the error itself
            return formulas.functions.Error.errors.get(result, result)
        return result

    call.__name__ = spec.name
    return wrap_func(call)


def _flat_numbers(refs: tuple[Any, ...], *, counta: bool = False) -> list[Any]:
    out: list[Any] = []
    for r in refs:
        items = np.asarray(r, dtype=object).ravel().tolist() if isinstance(r, np.ndarray) else [r]
        for x in items:
            if isinstance(x, formulas.functions.XlError):
                raise _XlErr(x)
            if x is sh.EMPTY or x is None:
                continue
            if counta:
                out.append(x)
            elif isinstance(x, bool | np.bool_) or isinstance(x, str):
                continue
            else:
                out.append(float(x))
    return out


class _XlErr(Exception):
    def __init__(self, err: Any) -> None:
        self.err = err


def subtotal(function_num: Any, *refs: Any) -> Any:
    """Excel ``SUBTOTAL``: 1/101 AVERAGE, 2 COUNT, 3 COUNTA, 4 MAX, 5 MIN, 6 PRODUCT, 7 STDEV, 8 STDEVP, 9 SUM,
    10 VAR, 11 VARP. Hidden rows are not known to the engine, so 101-111 equal 1-11 (no row is hidden in a
    headless recompute). Nested SUBTOTAL cells are removed from the ranges before parsing
    (:func:`planner.structured_refs.exclude_cells_from_subtotal`)."""
    err = formulas.functions.Error.errors
    try:
        n = int(_plain(function_num))
    except (TypeError, ValueError):
        return err["#VALUE!"]
    k = n - 100 if n > 100 else n
    try:
        vals = _flat_numbers(refs, counta=(k == 3))
    except _XlErr as e:
        return e.err
    try:
        if k == 1:
            return statistics.fmean(vals) if vals else err["#DIV/0!"]
        if k in (2, 3):
            return len(vals)
        if k == 4:
            return max(vals) if vals else 0
        if k == 5:
            return min(vals) if vals else 0
        if k == 6:
            return math.prod(vals)
        if k == 7:
            return statistics.stdev(vals) if len(vals) > 1 else err["#DIV/0!"]
        if k == 8:
            return statistics.pstdev(vals) if vals else err["#DIV/0!"]
        if k == 9:
            return math.fsum(vals)
        if k == 10:
            return statistics.variance(vals) if len(vals) > 1 else err["#DIV/0!"]
        if k == 11:
            return statistics.pvariance(vals) if vals else err["#DIV/0!"]
    except (ValueError, OverflowError):
        return err["#NUM!"]
    return err["#VALUE!"]


def _our_functions() -> dict[str, Any]:
    global _ours
    if _ours is None:
        table: dict[str, Any] = {}
        for spec in registry.load().values():
            fn = _adapter(spec)
            for spelling in registry.spellings(spec.name):
                table[spelling] = fn
        table["SUBTOTAL"] = wrap_func(subtotal)
        _ours = table
    return _ours


_ours: dict[str, Any] | None = None


@contextmanager
def registered_functions() -> Iterator[None]:
    """Register every registry function under all its spellings, and SUBTOTAL, in formulas' global function
    table for the duration of the block (the table is restored afterwards, so other users of formulas see the
    library's own functions only)."""
    table = formulas.get_functions()
    ours = _our_functions()
    saved = {k: table[k] for k in ours if k in table}
    table.update(ours)
    try:
        yield
    finally:
        for k in ours:
            if k in saved:
                table[k] = saved[k]
            else:
                table.pop(k, None)


def _key(sheet: str, ref: str) -> str:
    return f"'[{BOOK}]{sheet.upper().replace(chr(39), chr(39) * 2)}'!{ref}"


def parse_error(formula: str) -> str | None:
    """The parser's complaint about ``formula`` (with ``=``), or ``None`` when it parses."""
    try:
        formulas.Parser().ast(formula)
    except Exception as exc:  # FormulaError and the library's internal errors alike
        return str(exc).split("\n")[0] or type(exc).__name__
    return None


def evaluate(
    values: Mapping[tuple[str, str], Any],
    formula_cells: Mapping[tuple[str, str], str],
    names: Mapping[str, str],
) -> tuple[dict[tuple[str, str], Any], dict[tuple[str, str], str]]:
    """Compute ``formula_cells`` (``(sheet, "B3" or "B3:C4")`` → formula text with ``=``) given constant ``values``
    and global defined ``names`` (name → ``=Sheet!$A$1``).

    Returns ``(results, problems)``: results per single cell ``(sheet, "B3")`` (numbers, str, bool, error text, or
    None), and per formula cell that could not be parsed or compiled, the message (that cell evaluates to
    ``#NAME?``).
    """
    with registered_functions():
        return _evaluate(values, formula_cells, names)


def _evaluate(
    values: Mapping[tuple[str, str], Any],
    formula_cells: Mapping[tuple[str, str], str],
    names: Mapping[str, str],
) -> tuple[dict[tuple[str, str], Any], dict[tuple[str, str], str]]:
    model = formulas.ExcelModel()
    problems: dict[tuple[str, str], str] = {}
    sheet_of = {}
    cells: dict[str, Any] = {}
    refs: dict[str, Any] = {}
    nodes: set[Any] = set()
    for (sheet, ref), v in values.items():
        k = _key(sheet, ref)
        sheet_of[k.upper()] = sheet
        cells[k] = Cell(k, v if v is not None else [[sh.EMPTY]], context=None, replace_missing_ref=True)
    for name, text in names.items():
        k = f"'[{BOOK}]'!{name.upper()}"
        try:
            c = Ref(k, text if text.startswith("=") else "=" + text, context=None).compile(context=None)
        except Exception:  # noqa: BLE001 - a bad name must not abort the load
            continue
        refs[c.output] = None
        nodes.update(c.add(model.dsp, context=None))
        cells[c.output] = c
    for (sheet, ref), text in formula_cells.items():
        k = _key(sheet, ref)
        try:
            c = Cell(k, text, context=None, replace_missing_ref=True)
        except Exception as exc:  # noqa: BLE001 - one bad formula is a finding, not an abort
            problems[(sheet, ref)] = str(exc).split("\n")[0] or type(exc).__name__
            c = Cell(k, "=#NAME?", context=None, replace_missing_ref=True)
        cells[c.output] = c
        sheet_of[c.output.upper()] = sheet
    model._update_refs(nodes, refs)
    for k, c in cells.items():
        if k in refs:
            continue
        try:
            nodes.update(c.compile(references=refs).add(model.dsp))
        except Exception as exc:  # noqa: BLE001
            problems[("?", k)] = str(exc).split("\n")[0]
    model.cells.update(cells)
    model.assemble()
    model.inverse_references()
    solution = model.calculate()
    results: dict[tuple[str, str], Any] = {}
    wanted = {(s.upper(), r) for (s, r) in formula_cells}
    upper_to_sheet = {s.upper(): s for s, _ in formula_cells}
    for key, value in solution.items():
        if not isinstance(key, str) or "!" not in key:
            continue
        sheet_part, _, ref = key.rpartition("!")
        sheet_u = sheet_part.strip("'").split("]", 1)[-1].replace("''", "'")
        if (sheet_u, ref) not in wanted:
            continue
        sheet = upper_to_sheet[sheet_u]
        arr = getattr(value, "value", value)
        arr = np.asarray(arr, dtype=object)
        a, _, _b = ref.partition(":")
        from planner.a1 import index_to_col, split_cell

        r0, c0 = split_cell(a)
        if arr.ndim < 2:
            arr = arr.reshape(1, -1)
        for i in range(arr.shape[0]):
            for j in range(arr.shape[1]):
                results[(sheet, f"{index_to_col(c0 + j)}{r0 + i}")] = _plain(arr[i, j])
    return results, problems


_COMPILED: dict[str, Any] = {}
"""Compiled single formulas by text, per process (bounded: cleared past 1,024 entries)."""


def evaluate_formula(text: str, sheet: str, get: Any) -> Any:
    """The value of one formula (``text`` with ``=``) on ``sheet``, its inputs read with ``get(sheet, "B3")``
    (a value, or ``None`` for an empty cell). The formula is parsed and compiled once per process and called with
    just its own inputs: no model of the workbook is built. Returns a number, str, bool, error text or ``None``.
    Raises ``ValueError`` when the formula cannot be parsed or compiled (the caller reports it).

    Used for the cells of a template plan whose formula was edited (the template's evaluator computes the rest).
    """
    from planner.a1 import index_to_col, split_range

    with registered_functions():
        func = _COMPILED.get(text)
        if func is None:
            try:
                func = formulas.Parser().ast(text)[1].compile()
            except Exception as exc:  # noqa: BLE001 - the library's parse/compile errors alike
                raise ValueError(str(exc).split("\n")[0] or type(exc).__name__) from None
            if len(_COMPILED) > 1024:
                _COMPILED.clear()
            _COMPILED[text] = func
        args = []
        for name in func.inputs:
            ref_sheet, _, ref = name.rpartition("!")
            ref_sheet = ref_sheet.strip("'").replace("''", "'") or sheet
            try:
                top, left, bottom, right = split_range(ref.replace("$", ""))
            except ValueError:
                raise ValueError(f"unsupported reference {name}") from None
            rows = [[_engine_value(get(ref_sheet, f"{index_to_col(c)}{r}")) for c in range(left, right + 1)]
                    for r in range(top, bottom + 1)]
            args.append(rows[0][0] if len(rows) == 1 and len(rows[0]) == 1 else np.array(rows, dtype=object))
        try:
            result = func(*args)
        except Exception as exc:  # noqa: BLE001
            raise ValueError(str(exc).split("\n")[0] or type(exc).__name__) from None
    return _plain(result)


def _engine_value(v: Any) -> Any:
    if v is None:
        return sh.EMPTY
    if isinstance(v, str) and v in formulas.functions.Error.errors:
        return formulas.functions.Error.errors[v]
    return v
