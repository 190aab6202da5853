"""The fast path: a plan that conforms to a template version shares one compiled evaluation.

1. The template's formulas (:func:`planner.template.all_formulas`) are rendered once per process and
   normalised (:func:`normalize_formula`); each plan's formula cells are compared with them (the fingerprint).
2. The plan's input cells are evaluated with the template's Python evaluator (the expressions that also render the
   Excel formulas, calling the same registry functions as Excel and the ``formulas`` engine), in the template's
   evaluation order. A typed-over formula cell keeps its typed value, as in Excel, so later cells are compared
   with what Excel would have computed; an edited formula keeps its cached value (it is reported, and its own
   value is not checked).
3. Each cached value is compared with the recompute (:func:`planner.validate.checks.values_equal`), and the policy
   checks read the recomputed Results.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from planner import template as ts
from planner.validate.report import Finding, finding

if TYPE_CHECKING:
    from planner.validate.checks import Book

_LEXEME = re.compile(r""""(?:[^"]|"")*"|'((?:[^']|'')*)'!""")
_FUNC = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*)\(")
_PREFIX = re.compile(r"_XL(?:FN|WS|UDF)\.")
_BOOL_CALL = re.compile(r"(?<![A-Z0-9_.])(TRUE|FALSE)\(\)")
_NUMBER = re.compile(r"(?<![A-Z0-9_.$!:])(\d+\.?\d*(?:E[+-]?\d+)?|\.\d+(?:E[+-]?\d+)?)(?![A-Z0-9_(.!])")


@lru_cache(maxsize=1)
def _aliases() -> dict[str, str]:
    from planner.registry import alias_table, load

    load()
    return alias_table()


def normalize_formula(text: str) -> str:
    """Formula text compared by meaning, not bytes (the fingerprint): every writer's spelling of the same formula
    gives the same string. Outside string literals: no leading ``=``, no blanks, upper case, no ``_xlfn.`` /
    ``_xlws.`` / ``_xludf.`` prefix, no ``$`` (absolute markers do not change a cell's value), ``TRUE()`` /
    ``FALSE()`` (LibreOffice) as ``TRUE`` / ``FALSE``, quoted sheet names unquoted (``'Routes'!`` = ``Routes!``),
    numbers in one spelling (``0.50`` = ``.5``, ``1E3`` = ``1000``), and every spelling of a registry function
    as its plain name.

    >>> normalize_formula("=_xlfn.IFERROR( xlwings.capacity_rpm('Routes'!$C4), 0.0) + TRUE()")
    'IFERROR(CAPACITY_RPM(ROUTES!C4),0)+TRUE'
    """
    text = text[1:] if text.startswith("=") else text
    aliases = _aliases()
    parts: list[str] = []
    pos = 0
    for m in _LEXEME.finditer(text):
        parts.append(_norm_code(text[pos:m.start()], aliases))
        sheet = m.group(1)
        parts.append(m.group(0) if sheet is None else sheet.replace("''", "'").upper() + "!")
        pos = m.end()
    parts.append(_norm_code(text[pos:], aliases))
    return "".join(parts)


def _number(m: re.Match[str]) -> str:
    f = float(m.group(1))
    return repr(int(f)) if f.is_integer() and abs(f) < 1e15 else repr(f)


def _norm_code(code: str, aliases: dict[str, str]) -> str:
    code = _PREFIX.sub("", re.sub(r"\s+", "", code).upper()).replace("$", "")
    code = _NUMBER.sub(_number, _BOOL_CALL.sub(r"\1", code))
    return _FUNC.sub(lambda m: aliases.get(m.group(1), m.group(1)) + "(", code)


@lru_cache(maxsize=1)
def compiled() -> tuple[list[tuple[str, str, Any, int]], dict[tuple[str, str], str], dict[tuple[str, str], Any]]:
    """Per process, once: the template's formula cells in evaluation order, their texts, fixed cells."""
    cells = ts.formula_cells()
    expected = {(s, c): ts.formula_text(s, e, r) for s, c, e, r in cells}
    return cells, expected, ts.fixed_cells()


@lru_cache(maxsize=1)
def fingerprints() -> dict[tuple[str, str], str]:
    """The normalised template formula of every formula cell."""
    return {k: normalize_formula(v) for k, v in compiled()[1].items()}


_COLUMN_CELLS: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {}


_MEMO: dict[tuple[Any, ...], Any] = {}
"""Registry calls with scalar arguments, shared by the plans of one process: plans of one template repeat most
calls (the same fleets, models and catalog rows)."""

_COMPUTED_SHEETS = frozenset(sheet for sheet, _c, _e, _r in ts.formula_cells())


class _FastEvaluator(ts.Evaluator):
    """The template's evaluator with the addresses of whole columns computed once per process, and the columns of
    input sheets (which no formula writes) read once per plan."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._inputs: dict[tuple[str, str], list[Any]] = {}

    def column(self, table: ts.Table, key: str) -> list[Any]:
        cached = self._inputs.get((table.name, key))
        if cached is not None:
            return cached
        cells = _COLUMN_CELLS.get((table.name, key))
        if cells is None:
            cells = tuple((table.sheet, table.cell(key, i)) for i in range(table.rows))
            _COLUMN_CELLS[(table.name, key)] = cells
        get = self.values.get
        values = [("" if (v := get(k)) == "" else v) for k in cells]
        if table.sheet not in _COMPUTED_SHEETS:  # callers only read the list
            self._inputs[(table.name, key)] = values
        return values


def evaluate(book: Book, keep: dict[tuple[str, str], Any]) -> dict[tuple[str, str], Any]:
    """Every formula cell of the template recomputed from the plan's input cells (``keep``: cells whose value is
    taken as is instead of recomputed)."""
    from planner.registry import load

    cells, _expected, fixed = compiled()
    values: dict[tuple[str, str], Any] = dict(fixed)
    formula_keys = {(s, c) for s, c, _e, _r in cells}
    for k, v in book.values.items():
        if k not in formula_keys:
            values[k] = v
    ev = _FastEvaluator(values, load(), memo=_MEMO)
    out: dict[tuple[str, str], Any] = {}
    for sheet, cell, expr, row in cells:
        key = (sheet, cell)
        if key in keep:
            v = keep[key]
        else:
            v = expr.evaluate(ev, row)
        ev.values[key] = v
        out[key] = v
    return out


def _show(v: Any) -> Any:
    return str(v) if isinstance(v, ts.XlError) else v


def check_formulas_and_values(book: Book) -> Iterator[Finding]:
    """Fingerprint, recompute, cached-value comparison, Excel errors and policy, for a conforming layout."""
    from planner.validate.checks import values_equal

    cells, expected, _fixed = compiled()
    prints = fingerprints()
    keep: dict[tuple[str, str], Any] = {}
    skip: set[tuple[str, str]] = set()
    for sheet, cell, _e, _r in cells:
        key = (sheet, cell)
        text = book.formulas.get(key)
        if text is None:
            keep[key] = book.values.get(key)
            skip.add(key)
            yield finding("formula-overwritten", "template formula replaced by a typed value", sheet=sheet,
                          cell=cell, expected=expected[key], actual=_show(book.values.get(key)))
        elif text != expected[key] and normalize_formula(text) != prints[key]:
            keep[key] = book.values.get(key)
            skip.add(key)
            yield finding("formula-changed", "template formula edited", sheet=sheet, cell=cell,
                          expected=expected[key], actual=text)
    recomputed = evaluate(book, keep)
    errors: list[Finding] = []
    for sheet, cell, _e, _r in cells:
        key = (sheet, cell)
        cached = book.values.get(key)
        new = recomputed[key]
        if isinstance(cached, ts.XlError):
            errors.append(finding("excel-error-value", f"output holds the Excel error {cached}", sheet=sheet,
                                  cell=cell, expected="a value", actual=str(cached)))
            if key not in skip and str(new) != str(cached):
                yield finding("stale-value", "cached value differs from the recompute", sheet=sheet, cell=cell,
                              expected=_show(new), actual=str(cached))
            continue
        if key in skip:
            continue
        if cached is None and key not in book.formulas:
            continue
        if cached is None and book.view.calc_on_load:
            continue  # no cached value, and every reader recomputes on open (fullCalcOnLoad): nothing stale to show
        if cached is None and book.formulas.get(key) is not None and new not in ("", None):
            yield finding("missing-cached-value", "formula cell has no cached value", sheet=sheet, cell=cell,
                          expected=_show(new), actual=None)
            continue
        if isinstance(new, ts.XlError):
            errors.append(finding("excel-error-value", f"output computes to the Excel error {new}", sheet=sheet,
                                  cell=cell, expected="a value", actual=str(new)))
            if not values_equal(cached, new) and str(cached) != str(new):
                yield finding("stale-value", "cached value differs from the recompute", sheet=sheet, cell=cell,
                              expected=str(new), actual=_show(cached))
            continue
        if not values_equal(cached, new):
            yield finding("stale-value", "cached value differs from the recompute (stale or tampered)",
                          sheet=sheet, cell=cell, expected=_show(new), actual=_show(cached))
    yield from _first_error_per_row(errors)
    yield from check_policy(recomputed, book)


def _first_error_per_row(errors: list[Finding]) -> Iterator[Finding]:
    """One ``excel-error-value`` per sheet row (the first in evaluation order, where the error starts); the rest of
    the row's error cells are counted in its message."""
    rows: dict[tuple[str | None, str], list[Finding]] = {}
    for f in errors:
        rows.setdefault((f.sheet, (f.cell or "").lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ$")), []).append(f)
    for group in rows.values():
        first = group[0]
        if len(group) > 1:
            first = replace(first, message=f"{first.message} (and {len(group) - 1} more error cell(s) on this row)")
        yield first


def check_policy(values: dict[tuple[str, str], Any], book: Book) -> Iterator[Finding]:
    """Policy on the recomputed Results: threshold, KV fit, TPOT SLO, failover headroom."""
    r = ts.RESULTS
    threshold = book.values.get((ts.PLAN.sheet, ts.plan_value_cell("utilization_threshold")))
    if not isinstance(threshold, (int, float)) or isinstance(threshold, bool):
        threshold = 1.0

    def num(key: str, i: int) -> float | None:
        v = values.get((r.sheet, r.cell(key, i)))
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    for i in range(r.rows):
        route = values.get((r.sheet, r.cell("route", i)))
        if not isinstance(route, str) or not route:
            continue
        max_util = num("max_util", i)
        binding = values.get((r.sheet, r.cell("binding_constraint", i)))
        if max_util is not None and max_util > threshold:
            yield finding("utilization-over-threshold", f"route {route}: {binding} utilization above the plan's "
                          "threshold", sheet=r.sheet, cell=r.cell("max_util", i), expected=f"<= {threshold:g}",
                          actual=round(max_util, 6))
        kv = num("kv_util", i)
        if kv is not None and kv > 1:
            yield finding("kv-does-not-fit", f"route {route}: in-flight requests need more KV memory than the fleet "
                          "has", sheet=r.sheet, cell=r.cell("kv_util", i), expected="<= 1", actual=round(kv, 6))
        tpot = num("tpot_util", i)
        if tpot is not None and tpot > 1:
            yield finding("slo-not-met", f"route {route}: decode time per token at the peak batch misses the TPOT "
                          "SLO", sheet=r.sheet, cell=r.cell("tpot_util", i), expected="<= 1", actual=round(tpot, 6))
        if values.get((r.sheet, r.cell("failover_ok", i))) == "BREACH":
            fo = num("failover_util", i)
            yield finding("no-failover-headroom", f"route {route}: the failover backend cannot absorb this route",
                          sheet=r.sheet, cell=r.cell("failover_util", i), expected="<= 1",
                          actual=None if fo is None else round(fo, 6))
