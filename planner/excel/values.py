"""Excel values in Python: the one Excel error type every path uses, and Excel's coercions.

:class:`XlError` is what the template evaluator returns, what :mod:`planner.ooxml` reads from an error cell and what
:mod:`planner.formulas_engine` maps the ``formulas`` library's errors to, so every surface compares the same value.

The error policy (one for every surface): a registry function that refuses its arguments raises
:class:`planner.errors.PlannerError`; Excel (xlwings) shows its one-line message in the cell, and every headless path
(the template evaluator, ``planner recalc``, the validator's fast path) stores the same text as a plain string, so a
cell holding a function's refusal reads the same everywhere. Excel's own errors (``#N/A``, ``#DIV/0!`` ...) are
:class:`XlError` everywhere.
"""

from __future__ import annotations

import operator
from typing import Any

ERROR_VALUES = (
    "#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A", "#GETTING_DATA", "#SPILL!", "#CALC!",
)
"""Excel's error values, as cells store them (the last three: dynamic arrays and external data)."""

class XlError(str):
    """An Excel error value such as ``#N/A`` (a ``str`` so it can be written as a cell value)."""


NA = XlError("#N/A")
VALUE = XlError("#VALUE!")
DIV0 = XlError("#DIV/0!")
NAME = XlError("#NAME?")
NUM = XlError("#NUM!")


def is_error(value: Any) -> bool:
    """True for an Excel error value."""
    return isinstance(value, XlError)


def to_number(value: Any) -> Any:
    """Excel's coercion of an operand to a number (empty is 0); an XlError for text or errors."""
    if type(value) is float:  # the commonest operand: float(value) is value itself
        return value
    if isinstance(value, XlError):
        return value
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return VALUE
    return VALUE


def to_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def truthy(value: Any) -> Any:
    if isinstance(value, XlError):
        return value
    if isinstance(value, str):
        t = value.strip().upper()
        if t in ("TRUE", "FALSE"):
            return t == "TRUE"
        return VALUE
    n = to_number(value)
    return n if isinstance(n, XlError) else n != 0


_COMPARISONS = {"=": operator.eq, "<>": operator.ne, "<": operator.lt, ">": operator.gt, "<=": operator.le,
                ">=": operator.ge}


def compare(op: str, a: Any, b: Any) -> Any:
    if isinstance(a, XlError):
        return a
    if isinstance(b, XlError):
        return b
    # Excel: an empty cell compares as "" to text, as 0 to numbers, as FALSE to booleans.
    if a is None:
        a = "" if isinstance(b, str) else (False if isinstance(b, bool) else 0.0)
    if b is None:
        b = "" if isinstance(a, str) else (False if isinstance(a, bool) else 0.0)
    # rank: numbers 0, text 1, booleans 2 (Excel orders numbers < text < booleans)
    ra = 2 if isinstance(a, bool) else 1 if isinstance(a, str) else 0
    rb = 2 if isinstance(b, bool) else 1 if isinstance(b, str) else 0
    if ra != rb:
        x, y = ra, rb
    elif ra == 1:
        x, y = a.lower(), b.lower()
    else:
        x, y = float(a), float(b)
    return _COMPARISONS[op](x, y)


def equal_key(cell: Any, key: Any) -> bool:
    """MATCH(...,0) / SUMIFS equality: case-insensitive text, numeric equality, empty never matches."""
    if cell is None or (isinstance(cell, str) and cell == ""):
        return False
    if isinstance(key, str) and isinstance(cell, str):
        return cell.lower() == key.lower()
    if isinstance(key, (int, float)) and isinstance(cell, (int, float)) and not isinstance(cell, bool):
        return float(cell) == float(key)
    return False
