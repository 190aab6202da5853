"""The capacity-plan template's contract, defined once: sheets, tables, columns (with units), input constraints and
every formula column as an expression.

An expression (:class:`Expr`) does two things from one definition:

- ``render(row)`` gives the Excel formula text written into the template (only functions of
  :data:`ALLOWED_BUILTINS`, which the headless ``formulas`` engine computes correctly, plus the registry's functions);
- ``evaluate(ev, row)`` computes the same value in Python, with Excel's semantics for empty cells, text and errors,
  calling the registry's functions through :func:`planner.coerce.call_sheet_function` (what every adapter calls).

:func:`evaluate_plan` evaluates every formula cell of a plan from its input cells. The template builder uses it for
the cached values, and the validator uses it as its fast path (formulas stays the oracle).

The method follows the reference formula set: demand D1-D4, provider-limit utilization, KV memory M2-M11, decode
time P1-P2, cost C1 and the decision C7-C8 (``/work/shared/reference/sizing-formulas.md``).
This module is pure: no I/O, no openpyxl.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from planner.a1 import index_to_col
from planner.demand import MINUTES_PER_DAY

TEMPLATE_ID = "llm-capacity-planner/capacity-plan"
TEMPLATE_VERSION = "1.1.0"
TEMPLATE_NAMES = {"PLANNER_TEMPLATE_ID": TEMPLATE_ID, "PLANNER_TEMPLATE_VERSION": TEMPLATE_VERSION}
"""Global defined names (constant strings) that identify the template."""

ALLOWED_BUILTINS = frozenset(
    {"IF", "IFERROR", "AND", "OR", "MIN", "MAX", "SUM", "INDEX", "MATCH", "ISNUMBER", "SUMIFS", "COUNTIFS"}
)
"""Excel built-ins the template may use: each is computed correctly by formulas 1.3.4 (checked by
``tests/test_template.py`` against a real recompute). No ``--``, ``N()``, SUBTOTAL, OFFSET, SEQUENCE or structured
references."""


# --------------------------------------------------------------------------------------------------------------
# Excel values in Python


class XlError(str):
    """An Excel error value such as ``#N/A`` (a ``str`` so it can be written as a cell value)."""


NA = XlError("#N/A")
VALUE = XlError("#VALUE!")
DIV0 = XlError("#DIV/0!")
NAME = XlError("#NAME?")
NUM = XlError("#NUM!")


def is_error(value: Any) -> bool:
    return isinstance(value, XlError)


def _num(value: Any) -> Any:
    """Excel's coercion of an operand to a number (empty is 0); an XlError for text or errors."""
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


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _truthy(value: Any) -> Any:
    if isinstance(value, XlError):
        return value
    if isinstance(value, str):
        t = value.strip().upper()
        if t in ("TRUE", "FALSE"):
            return t == "TRUE"
        return VALUE
    n = _num(value)
    return n if isinstance(n, XlError) else n != 0


def _compare(op: str, a: Any, b: Any) -> Any:
    for v in (a, b):
        if isinstance(v, XlError):
            return v
    # Excel: an empty cell compares as "" to text, as 0 to numbers, as FALSE to booleans.
    if a is None:
        a = "" if isinstance(b, str) else (False if isinstance(b, bool) else 0.0)
    if b is None:
        b = "" if isinstance(a, str) else (False if isinstance(a, bool) else 0.0)

    def rank(v: Any) -> int:
        return 2 if isinstance(v, bool) else 1 if isinstance(v, str) else 0

    ra, rb = rank(a), rank(b)
    if ra != rb:
        x, y = ra, rb
    elif ra == 1:
        x, y = a.lower(), b.lower()
    else:
        x, y = float(a), float(b)
    return {"=": x == y, "<>": x != y, "<": x < y, ">": x > y, "<=": x <= y, ">=": x >= y}[op]


def _equal_key(cell: Any, key: Any) -> bool:
    """MATCH(...,0) / SUMIFS equality: case-insensitive text, numeric equality, empty never matches."""
    if cell is None or (isinstance(cell, str) and cell == ""):
        return False
    if isinstance(key, str) and isinstance(cell, str):
        return cell.lower() == key.lower()
    if isinstance(key, (int, float)) and isinstance(cell, (int, float)) and not isinstance(cell, bool):
        return float(cell) == float(key)
    return False


# --------------------------------------------------------------------------------------------------------------
# Layout: tables and columns


@dataclass(frozen=True, kw_only=True)
class Column:
    """One column of a table. ``formula`` is ``None`` for an input column."""

    key: str
    header: str  # with its unit in brackets
    help: str
    formula: Expr | None = None
    kind: str = "number"  # number | text | flag
    choices: str | None = None  # a list name (see LISTS) or a "Table.column" range feeding a dropdown
    minimum: float | None = None
    maximum: float | None = None
    integer: bool = False
    number_format: str = "General"
    width: float = 14.0
    required: bool = False  # must be filled on a row whose first column is filled


@dataclass(frozen=True, kw_only=True)
class Table:
    """An Excel Table: header row ``header_row``, ``rows`` data rows below it, columns from ``first_col``."""

    name: str  # the Excel Table name (stable)
    sheet: str
    columns: tuple[Column, ...]
    rows: int
    header_row: int = 3
    first_col: int = 1
    title: str = ""
    note: str = ""

    @property
    def first_row(self) -> int:
        return self.header_row + 1

    @property
    def last_row(self) -> int:
        return self.header_row + self.rows

    @cached_property
    def _positions(self) -> dict[str, int]:
        # evaluation asks for addresses hundreds of thousands of times per batch: look them up, not scan
        return {c.key: i for i, c in enumerate(self.columns)}

    @cached_property
    def _letters(self) -> dict[str, str]:
        return {c.key: col_letter(self.first_col + i) for i, c in enumerate(self.columns)}

    def index(self, key: str) -> int:
        try:
            return self._positions[key]
        except KeyError:
            raise KeyError(f"{self.name} has no column {key!r}") from None

    def column(self, key: str) -> Column:
        return self.columns[self.index(key)]

    def letter(self, key: str) -> str:
        try:
            return self._letters[key]
        except KeyError:
            raise KeyError(f"{self.name} has no column {key!r}") from None

    def cell(self, key: str, row_index: int) -> str:
        """A1 address of column ``key`` on data row ``row_index`` (0-based)."""
        return f"{self.letter(key)}{self.first_row + row_index}"

    @property
    def ref(self) -> str:
        """The table's range, header included."""
        last = col_letter(self.first_col + len(self.columns) - 1)
        return f"{col_letter(self.first_col)}{self.header_row}:{last}{self.last_row}"

    @property
    def is_input(self) -> bool:
        return all(c.formula is None for c in self.columns)


col_letter = index_to_col
"""1 -> A, 27 -> AA (:func:`planner.a1.index_to_col`)."""


def _sheet_ref(sheet: str) -> str:
    return sheet if sheet.replace("_", "").isalnum() else "'" + sheet.replace("'", "''") + "'"


# --------------------------------------------------------------------------------------------------------------
# Expressions


class Evaluator:
    """Evaluates expressions against the cell values of one plan: ``values[(sheet, cell)]``."""

    def __init__(self, values: Mapping[tuple[str, str], Any], functions: Mapping[str, Any] | None = None,
                 memo: dict[tuple[Any, ...], Any] | None = None) -> None:
        self.values: dict[tuple[str, str], Any] = dict(values)
        if functions is None:
            from planner.registry import load

            functions = load()
        self.functions = functions
        # registry functions are pure: a call with the same scalar arguments gives the same value (None: no memo)
        self.memo = memo

    def get(self, sheet: str, cell: str) -> Any:
        v = self.values.get((sheet, cell))
        if isinstance(v, str) and v == "":
            return ""
        return v

    def column(self, table: Table, key: str) -> list[Any]:
        return [self.get(table.sheet, table.cell(key, i)) for i in range(table.rows)]


class Expr:
    """A formula expression that renders to Excel text and evaluates in Python."""

    def render(self, row: int) -> str:  # row: 0-based data row of the cell being written
        raise TypeError(f"{type(self).__name__} does not render")

    def evaluate(self, ev: Evaluator, row: int) -> Any:
        raise TypeError(f"{type(self).__name__} does not evaluate")

    def functions(self) -> set[str]:
        """Function names used (upper case)."""
        return set().union(*(c.functions() for c in self.children()))

    def children(self) -> Sequence[Expr]:
        return ()

    # operator sugar
    def __add__(self, o: Any) -> Expr:
        return Bin("+", self, lit(o))

    def __sub__(self, o: Any) -> Expr:
        return Bin("-", self, lit(o))

    def __mul__(self, o: Any) -> Expr:
        return Bin("*", self, lit(o))

    def __truediv__(self, o: Any) -> Expr:
        return Bin("/", self, lit(o))

    def eq(self, o: Any) -> Expr:
        return Bin("=", self, lit(o))

    def ne(self, o: Any) -> Expr:
        return Bin("<>", self, lit(o))

    def gt(self, o: Any) -> Expr:
        return Bin(">", self, lit(o))

    def le(self, o: Any) -> Expr:
        return Bin("<=", self, lit(o))


def lit(value: Any) -> Expr:
    return value if isinstance(value, Expr) else Lit(value)


@dataclass(frozen=True)
class Lit(Expr):
    value: Any

    def render(self, row: int) -> str:
        v = self.value
        if isinstance(v, bool):
            return "TRUE" if v else "FALSE"
        if isinstance(v, str):
            return '"' + v.replace('"', '""') + '"'
        if isinstance(v, float) and v.is_integer():
            return str(int(v))
        return repr(v)

    def evaluate(self, ev: Evaluator, row: int) -> Any:
        return float(self.value) if isinstance(self.value, int) and not isinstance(self.value, bool) else self.value


@dataclass(frozen=True)
class Ref(Expr):
    """Column ``key`` of ``table`` on the same data row as the formula (tables are row-aligned with Routes)."""

    table: Table
    key: str

    def render(self, row: int) -> str:
        t = self.table
        return f"{_sheet_ref(t.sheet)}!${t.letter(self.key)}{t.first_row + row}"

    @cached_property
    def _addresses(self) -> tuple[tuple[str, str], ...]:
        # every data row's (sheet, cell) once: evaluation resolves the same reference for thousands of cells
        t = self.table
        return tuple((t.sheet, t.cell(self.key, i)) for i in range(t.rows))

    def evaluate(self, ev: Evaluator, row: int) -> Any:
        if 0 <= row < self.table.rows:
            sheet, cell = self._addresses[row]
            return ev.get(sheet, cell)
        return ev.get(self.table.sheet, self.table.cell(self.key, row))


@dataclass(frozen=True)
class At(Expr):
    """Column ``key`` of ``table`` on a fixed data row (absolute reference)."""

    table: Table
    key: str
    row_index: int

    def render(self, row: int) -> str:
        t = self.table
        return f"{_sheet_ref(t.sheet)}!${t.letter(self.key)}${t.first_row + self.row_index}"

    def evaluate(self, ev: Evaluator, row: int) -> Any:
        return ev.get(self.table.sheet, self.table.cell(self.key, self.row_index))


@dataclass(frozen=True)
class Cells(Expr):
    """A fixed range: ``Sheet!$A$4:$A$15`` (a whole data column), or one data row across columns."""

    table: Table
    first: str
    last: str | None = None  # None: the whole data column ``first``; else: the current row from first to last
    fixed_row: int | None = None  # with ``last``: a fixed data row instead of the current one

    def render(self, row: int) -> str:
        t = self.table
        s = _sheet_ref(t.sheet)
        if self.last is None:
            c = t.letter(self.first)
            return f"{s}!${c}${t.first_row}:${c}${t.last_row}"
        r = t.first_row + (row if self.fixed_row is None else self.fixed_row)
        lock = "$" if self.fixed_row is not None else ""
        return f"{s}!${t.letter(self.first)}{lock}{r}:${t.letter(self.last)}{lock}{r}"

    def evaluate(self, ev: Evaluator, row: int) -> list[Any]:
        t = self.table
        if self.last is None:
            return ev.column(t, self.first)
        r = row if self.fixed_row is None else self.fixed_row
        i, j = t.index(self.first), t.index(self.last)
        return [ev.get(t.sheet, t.cell(c.key, r)) for c in t.columns[i : j + 1]]


@dataclass(frozen=True)
class Bin(Expr):
    op: str
    a: Expr
    b: Expr

    def render(self, row: int) -> str:
        a, b = self.a.render(row), self.b.render(row)
        if isinstance(self.a, Bin) and _PREC[self.a.op] < _PREC[self.op]:
            a = f"({a})"
        if isinstance(self.b, Bin) and _PREC[self.b.op] <= _PREC[self.op]:
            b = f"({b})"
        return f"{a}{self.op}{b}"

    def evaluate(self, ev: Evaluator, row: int) -> Any:
        a, b = self.a.evaluate(ev, row), self.b.evaluate(ev, row)
        if self.op in ("=", "<>", "<", ">", "<=", ">="):
            return _compare(self.op, a, b)
        if self.op == "&":
            for v in (a, b):
                if isinstance(v, XlError):
                    return v
            return _text(a) + _text(b)
        x, y = _num(a), _num(b)
        for v in (x, y):
            if isinstance(v, XlError):
                return v
        if self.op == "+":
            return x + y
        if self.op == "-":
            return x - y
        if self.op == "*":
            return x * y
        if self.op == "/":
            return DIV0 if y == 0 else x / y
        raise AssertionError(self.op)

    def children(self) -> Sequence[Expr]:
        return (self.a, self.b)


_PREC = {"=": 0, "<>": 0, "<": 0, ">": 0, "<=": 0, ">=": 0, "&": 1, "+": 2, "-": 2, "*": 3, "/": 3}


def _scalar_args(values: Sequence[Any]) -> Any:
    for v in values:
        if isinstance(v, XlError):
            return v
    return None


def _flat(values: Sequence[Any]) -> list[Any]:
    out: list[Any] = []
    for v in values:
        out.extend(v if isinstance(v, list) else [v])
    return out


def _fn_if(ev: Evaluator, row: int, args: Sequence[Expr]) -> Any:
    c = _truthy(args[0].evaluate(ev, row))
    if isinstance(c, XlError):
        return c
    if c:
        return args[1].evaluate(ev, row)
    return args[2].evaluate(ev, row) if len(args) > 2 else False


def _fn_iferror(ev: Evaluator, row: int, args: Sequence[Expr]) -> Any:
    v = args[0].evaluate(ev, row)
    return args[1].evaluate(ev, row) if isinstance(v, XlError) else v


def _fn_minmax(pick: Callable[..., float]) -> Callable[[Evaluator, int, Sequence[Expr]], Any]:
    def f(ev: Evaluator, row: int, args: Sequence[Expr]) -> Any:
        nums = []
        for a in args:
            v = a.evaluate(ev, row)
            if isinstance(v, list):  # ranges: numbers only, text and empty ignored
                for x in v:
                    if isinstance(x, XlError):
                        return x
                    if isinstance(x, (int, float)) and not isinstance(x, bool):
                        nums.append(float(x))
            else:
                n = _num(v)
                if isinstance(n, XlError):
                    return n
                nums.append(n)
        return pick(nums) if nums else 0.0

    return f


def _fn_andor(want_all: bool) -> Callable[[Evaluator, int, Sequence[Expr]], Any]:
    def f(ev: Evaluator, row: int, args: Sequence[Expr]) -> Any:
        vals = []
        for a in args:
            t = _truthy(a.evaluate(ev, row))
            if isinstance(t, XlError):
                return t
            vals.append(t)
        return all(vals) if want_all else any(vals)

    return f


def _match(key: Any, cells: list[Any]) -> Any:
    if isinstance(key, XlError):
        return key
    for i, c in enumerate(cells):
        if _equal_key(c, key):
            return float(i + 1)
    return NA


def _fn_match(ev: Evaluator, row: int, args: Sequence[Expr]) -> Any:
    return _match(args[0].evaluate(ev, row), args[1].evaluate(ev, row))


def _fn_index(ev: Evaluator, row: int, args: Sequence[Expr]) -> Any:
    cells = args[0].evaluate(ev, row)
    i = _num(args[1].evaluate(ev, row))
    if isinstance(i, XlError):
        return i
    if not 1 <= int(i) <= len(cells):
        return XlError("#REF!")
    v = cells[int(i) - 1]
    return 0.0 if v is None else v  # a reference to an empty cell reads as 0


def _fn_isnumber(ev: Evaluator, row: int, args: Sequence[Expr]) -> Any:
    v = args[0].evaluate(ev, row)
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _fn_sumifs(ev: Evaluator, row: int, args: Sequence[Expr]) -> Any:
    total_cells = args[0].evaluate(ev, row)
    crit_ranges = [args[i].evaluate(ev, row) for i in range(1, len(args), 2)]
    crits = [args[i].evaluate(ev, row) for i in range(2, len(args), 2)]
    err = _scalar_args(crits)
    if err is not None:
        return err
    total = 0.0
    for k, v in enumerate(total_cells):
        if all(_equal_key(cr[k], c) for cr, c in zip(crit_ranges, crits)):
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                total += float(v)
    return total


def _fn_countifs(ev: Evaluator, row: int, args: Sequence[Expr]) -> Any:
    crit_ranges = [args[i].evaluate(ev, row) for i in range(0, len(args), 2)]
    crits = [args[i].evaluate(ev, row) for i in range(1, len(args), 2)]
    n = 0
    for k in range(len(crit_ranges[0])):
        if all(_crit(cr[k], c) for cr, c in zip(crit_ranges, crits)):
            n += 1
    return float(n)


def _crit(cell: Any, crit: Any) -> bool:
    """COUNTIFS criterion: ``">1"`` style comparisons on numbers, else equality."""
    if isinstance(crit, str) and crit[:1] in "<>=" and crit:
        for op in ("<=", ">=", "<>", "<", ">", "="):
            if crit.startswith(op):
                try:
                    y = float(crit[len(op) :])
                except ValueError:
                    return False
                if not isinstance(cell, (int, float)) or isinstance(cell, bool):
                    return False
                return bool(_compare(op, float(cell), y))
    return _equal_key(cell, crit)


_BUILTINS: dict[str, Callable[[Evaluator, int, Sequence[Expr]], Any]] = {
    "IF": _fn_if,
    "IFERROR": _fn_iferror,
    "AND": _fn_andor(True),
    "OR": _fn_andor(False),
    "MIN": _fn_minmax(min),
    "MAX": _fn_minmax(max),
    "SUM": _fn_minmax(lambda xs: float(sum(xs))),
    "INDEX": _fn_index,
    "MATCH": _fn_match,
    "ISNUMBER": _fn_isnumber,
    "SUMIFS": _fn_sumifs,
    "COUNTIFS": _fn_countifs,
}
assert set(_BUILTINS) == ALLOWED_BUILTINS


@dataclass(frozen=True)
class Fn(Expr):
    """An Excel built-in from :data:`ALLOWED_BUILTINS`."""

    name: str
    args: tuple[Expr, ...]

    def __post_init__(self) -> None:
        if self.name not in ALLOWED_BUILTINS:
            raise ValueError(f"{self.name} is not an allowed built-in")

    def render(self, row: int) -> str:
        extra = ",0" if self.name == "MATCH" else ""
        return f"{self.name}({','.join(a.render(row) for a in self.args)}{extra})"

    def evaluate(self, ev: Evaluator, row: int) -> Any:
        return _BUILTINS[self.name](ev, row, self.args)

    def functions(self) -> set[str]:
        return {self.name} | super().functions()

    def children(self) -> Sequence[Expr]:
        return self.args


def fn(name: str, *args: Any) -> Fn:
    return Fn(name, tuple(lit(a) for a in args))


_MISSING = object()
MEMO_LIMIT = 8_192
"""Entries an evaluator's memo of registry calls holds before it starts over (bounded memory in long batches)."""


@dataclass(frozen=True)
class Udf(Expr):
    """A call to one of the registry's spreadsheet functions (classic xlwings UDF spelling: the plain name)."""

    name: str
    args: tuple[Expr, ...]

    def render(self, row: int) -> str:
        return f"{self.name}({','.join(a.render(row) for a in self.args)})"

    def evaluate(self, ev: Evaluator, row: int) -> Any:
        spec = ev.functions.get(self.name)
        if spec is None:
            return NAME
        raw = []
        for a in self.args:
            v = a.evaluate(ev, row)
            if isinstance(v, XlError):
                return v
            if isinstance(v, list):
                err = next((x for x in v if isinstance(x, XlError)), None)
                if err is not None:  # formulas' wrap_func: an error inside a range is the result
                    return err
                v = [[x] for x in v]
            raw.append(v)
        memo = ev.memo
        key = None
        if memo is not None and not any(isinstance(v, list) for v in raw):
            key = (self.name, *((type(v), v) for v in raw))  # the type too: TRUE == 1 == 1.0 in Python
            hit = memo.get(key, _MISSING)
            if hit is not _MISSING:
                return hit
        result = self._call(spec, raw)
        if key is not None:
            if len(memo) > MEMO_LIMIT:
                memo.clear()
            memo[key] = result
        return result

    @staticmethod
    def _call(spec: Any, raw: list[Any]) -> Any:
        from planner.coerce import call_sheet_function

        result = call_sheet_function(spec, *raw)
        if isinstance(result, float) and (math.isnan(result) or math.isinf(result)):
            return NUM
        if isinstance(result, int) and not isinstance(result, bool):
            return float(result)
        return result

    def functions(self) -> set[str]:
        return {self.name} | super().functions()

    def children(self) -> Sequence[Expr]:
        return self.args


def udf(name: str, *args: Any) -> Udf:
    return Udf(name, tuple(lit(a) for a in args))


def lookup(table: Table, key_col: str, key: Expr, value_col: str) -> Expr:
    """``INDEX(value column, MATCH(key, key column, 0))``."""
    return fn("INDEX", Cells(table, value_col), fn("MATCH", key, Cells(table, key_col)))


def when_filled(first: Expr, body: Expr) -> Expr:
    """Blank ("") on an unused row, else ``body``."""
    return fn("IF", first.eq(""), "", body)


@dataclass(frozen=True, kw_only=True)
class Sheet:
    name: str
    tables: tuple[Table, ...] = ()
    intro: tuple[str, ...] = ()
    tab_color: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------------------------------------------
# The template's tables

ROUTE_ROWS = 20
PROVIDER_ROWS = 8
FLEET_ROWS = 6
GPU_ROWS = 24
MODEL_ROWS = 36

ROUTE_KINDS = ("latency-critical", "bulk", "interactive")
KV_DTYPES = ("auto", "bf16", "fp16", "fp8", "int8")
WEIGHT_DTYPES = ("auto", "bf16", "fp16", "fp8", "int8", "int4", "mxfp4")
ENGINES = ("vllm", "sglang", "trtllm")
FLAGS = ("TRUE", "FALSE")
CONSTRAINTS = ("RPM", "TPM", "ITPM", "OTPM", "RPD", "TPD", "KV", "COMPUTE", "TPOT")
"""Constraint labels, in the order of the utilization columns of Results (what BINDING_CONSTRAINT returns)."""

LISTS: dict[str, tuple[str, ...]] = {
    "kind": ROUTE_KINDS,
    "kv_dtype": KV_DTYPES,
    "weight_dtype": WEIGHT_DTYPES,
    "engine": ENGINES,
    "flag": FLAGS,
    "constraint": CONSTRAINTS,
}

C = Column

PLAN = Table(
    name="tblPlan",
    sheet="Plan",
    rows=4,
    title="Plan settings",
    note="One value per setting. Policy threshold, growth and the average-to-peak ratio used for monthly cost.",
    columns=(
        C(key="setting", header="Setting", help="Setting name (fixed)", kind="text", width=26),
        C(key="value", header="Value", help="Your value", kind="text", width=22),
        C(key="unit", header="Unit", help="Unit of the value (fixed)", kind="text", width=18),
        C(key="help", header="Meaning", help="What the setting does (fixed)", kind="text", width=70),
    ),
)
PLAN_SETTINGS: tuple[tuple[str, str, str, dict[str, Any]], ...] = (
    ("name", "text", "Name of the plan", {"kind": "text"}),
    ("utilization_threshold", "fraction", "Policy: a utilization above this is flagged (0 < x <= 1)",
     {"minimum": 0.0, "maximum": 1.0, "default": 0.8}),
    ("monthly_growth", "fraction/month", "Demand growth per month, for months to breach (0.08 = 8 %)",
     {"minimum": 0.0, "maximum": 10.0, "default": 0.0}),
    ("avg_to_peak_ratio", "fraction", "Average QPS over the month / peak QPS, for monthly cost and daily limits",
     {"minimum": 0.0, "maximum": 1.0, "default": 0.5}),
)


def plan_value_cell(setting: str) -> str:
    for i, (name, *_rest) in enumerate(PLAN_SETTINGS):
        if name == setting:
            return PLAN.cell("value", i)
    raise KeyError(setting)


@dataclass(frozen=True)
class PlanValue(Expr):
    """A plan setting (absolute reference to its value cell on the Plan sheet)."""

    setting: str

    def render(self, row: int) -> str:
        cell = plan_value_cell(self.setting)
        col = cell.rstrip("0123456789")
        return f"Plan!${col}${cell[len(col):]}"

    def evaluate(self, ev: Evaluator, row: int) -> Any:
        return ev.get(PLAN.sheet, plan_value_cell(self.setting))


GPUS = Table(
    name="tblGPUs",
    sheet="GPUs",
    rows=GPU_ROWS,
    title="GPU catalog (editable): facts the Fleet and Results sheets use",
    note="HBM as the driver reports it. Prices are on-demand USD per GPU-hour where a public source gives one.",
    columns=(
        C(key="name", header="GPU [name]", help="Catalog name used by Fleet", kind="text", width=16),
        C(key="display_name", header="Display name", help="Marketing name", kind="text", width=26),
        C(key="hbm_gib", header="HBM [GiB]", help="Memory the driver reports", minimum=0, number_format="0.0"),
        C(key="mem_bw_gb_s", header="Bandwidth [GB/s]", help="Peak HBM bandwidth", minimum=0, number_format="#,##0"),
        C(key="bf16_tflops", header="BF16 dense [TFLOP/s]", help="Peak dense BF16", minimum=0, number_format="#,##0"),
        C(key="fp8_tflops", header="FP8 dense [TFLOP/s]", help="Peak dense FP8 (blank: none)", minimum=0,
          number_format="#,##0"),
        C(key="usd_per_gpu_hour", header="Price [USD/GPU-h]", help="On-demand price", minimum=0,
          number_format="0.00"),
        C(key="source", header="Source", help="Where the facts come from", kind="text", width=40),
        C(key="as_of", header="As of [date]", help="Date of the facts", kind="text", width=14),
    ),
)

MODELS = Table(
    name="tblModels",
    sheet="Models",
    rows=MODEL_ROWS,
    title="Model catalog (editable): architecture facts from config.json",
    note="KV bytes per token depend on layers, KV heads and head_dim (M2), or the MLA latent (M3).",
    columns=(
        C(key="name", header="Model [name]", help="Catalog name used by Fleet", kind="text", width=20),
        C(key="hf_id", header="Hugging Face id", help="Repository id", kind="text", width=30),
        C(key="attention", header="Attention [gqa/mla]", help="Attention kind", kind="text", width=10),
        C(key="layers", header="Layers [count]", help="num_hidden_layers", minimum=1, integer=True),
        C(key="kv_heads", header="KV heads [count]", help="num_key_value_heads", minimum=1, integer=True),
        C(key="head_dim", header="Head dim [elements]", help="head_dim", minimum=1, integer=True),
        C(key="sliding_window", header="Sliding window [tokens]", help="Blank: none", minimum=0, integer=True),
        C(key="params_total_b", header="Params total [1e9]", help="All parameters (all experts)", minimum=0,
          number_format="0.00"),
        C(key="params_active_b", header="Params active [1e9]", help="Active per token", minimum=0,
          number_format="0.00"),
        C(key="max_context", header="Max context [tokens]", help="max_position_embeddings", minimum=0,
          number_format="#,##0"),
        C(key="source", header="Source", help="Where the facts come from", kind="text", width=40),
        C(key="as_of", header="As of [date]", help="Date of the facts", kind="text", width=14),
    ),
)

PROVIDERS = Table(
    name="tblProviders",
    sheet="Providers",
    rows=PROVIDER_ROWS,
    title="Provider API backends: rate limits, counting rules and prices",
    note="Limits are per key/deployment and per minute; blank means the provider sets no such limit. "
    "Prices are USD per million tokens.",
    columns=(
        C(key="name", header="Backend [name]", help="Unique backend name routes refer to", kind="text", width=20),
        C(key="provider", header="Provider", help="Provider (anthropic, openai, ...)", kind="text", width=12),
        C(key="tier", header="Tier", help="Usage tier", kind="text", width=10),
        C(key="model", header="Model", help="Provider model (class)", kind="text", width=20),
        C(key="keys", header="Keys [count]", help="Keys / deployments / regions sharing the load", minimum=1,
          maximum=1000, integer=True, required=True),
        C(key="rpm", header="RPM limit [req/min]", help="Requests per minute per key", minimum=0,
          number_format="#,##0"),
        C(key="tpm", header="TPM limit [tokens/min]", help="Total tokens per minute per key", minimum=0,
          number_format="#,##0"),
        C(key="itpm", header="ITPM limit [tokens/min]", help="Input tokens per minute per key", minimum=0,
          number_format="#,##0"),
        C(key="otpm", header="OTPM limit [tokens/min]", help="Output tokens per minute per key", minimum=0,
          number_format="#,##0"),
        C(key="rpd", header="RPD limit [req/day]", help="Requests per day per key (Gemini, OpenAI low tiers)",
          minimum=0, number_format="#,##0"),
        C(key="tpd", header="TPD limit [tokens/day]", help="Tokens per day per key (batch queues, low tiers)",
          minimum=0, number_format="#,##0"),
        C(key="cached_reads_count_itpm", header="Cached reads count [TRUE/FALSE]",
          help="Prefix-cache reads count toward ITPM/TPM", kind="flag", choices="flag", required=True),
        C(key="reserves_max_tokens", header="Reserves max_tokens [TRUE/FALSE]",
          help="Admission counts input + max_tokens (D3)", kind="flag", choices="flag", required=True),
        C(key="output_token_weight", header="Output quota weight [x]",
          help="Quota tokens one reserved output token burns toward TPM (AWS Bedrock, Claude 3.7+: 5); blank: 1",
          minimum=0, maximum=100, number_format="0.0"),
        C(key="usd_per_mtok_input", header="Input [USD/Mtok]", help="Uncached input price", minimum=0,
          number_format="0.000"),
        C(key="usd_per_mtok_cached_input", header="Cached input [USD/Mtok]", help="Cache-read price", minimum=0,
          number_format="0.000"),
        C(key="usd_per_mtok_cache_write", header="Cache write [USD/Mtok]", help="Cache-write price", minimum=0,
          number_format="0.000"),
        C(key="usd_per_mtok_output", header="Output [USD/Mtok]", help="Output price", minimum=0,
          number_format="0.000"),
    ),
)

FLEET = Table(
    name="tblFleet",
    sheet="Fleet",
    rows=FLEET_ROWS,
    title="Self-hosted fleets",
    note="One row per fleet (model x GPU x parallelism). Price blank: the GPU catalog price is used.",
    columns=(
        C(key="name", header="Backend [name]", help="Unique backend name routes refer to", kind="text", width=20),
        C(key="model", header="Model [name]", help="From the Models sheet", kind="text", choices="tblModels.name",
          required=True, width=20),
        C(key="gpu", header="GPU [name]", help="From the GPUs sheet", kind="text", choices="tblGPUs.name",
          required=True),
        C(key="tp", header="TP [GPUs]", help="Tensor-parallel degree", minimum=1, maximum=64, integer=True,
          required=True),
        C(key="pp", header="PP [stages]", help="Pipeline-parallel stages (GPUs per replica = TP x PP)", minimum=1,
          maximum=64, integer=True, required=True),
        C(key="replicas", header="Replicas [count]", help="Engine replicas", minimum=1, maximum=10000,
          integer=True, required=True),
        C(key="gpu_memory_utilization", header="GPU mem util [fraction]", help="vLLM gpu_memory_utilization",
          minimum=0.05, maximum=1.0, required=True, number_format="0.00"),
        C(key="kv_dtype", header="KV dtype", help="KV-cache dtype", kind="text", choices="kv_dtype", required=True),
        C(key="weight_dtype", header="Weight dtype", help="Weights as served: auto (the released checkpoint), bf16, "
          "fp8, int4, mxfp4, ...", kind="text", choices="weight_dtype", required=True),
        C(key="engine", header="Engine", help="Serving engine", kind="text", choices="engine", required=True),
        C(key="usd_per_gpu_hour", header="Price [USD/GPU-h]", help="Blank: GPU catalog price", minimum=0,
          number_format="0.00"),
        C(key="mbu", header="MBU [fraction]", help="Achieved fraction of peak HBM bandwidth (P1)", minimum=0.05,
          maximum=1.0, required=True, number_format="0.00"),
        C(key="mfu", header="MFU [fraction]", help="Achieved fraction of peak FLOP/s (P2 decode floor, P4 prefill)",
          minimum=0.05, maximum=1.0, required=True, number_format="0.00"),
    ),
)

ROUTES = Table(
    name="tblRoutes",
    sheet="Routes",
    rows=ROUTE_ROWS,
    title="Routes: one row per route or product surface",
    note="Demand at the peak. Backend and failover name a row of Providers or Fleet.",
    columns=(
        C(key="name", header="Route [name]", help="Unique route name", kind="text", width=18),
        C(key="kind", header="Kind", help="latency-critical, bulk or interactive", kind="text", choices="kind",
          required=True, width=16),
        C(key="peak_qps", header="Peak [req/s]", help="Requests per second at the peak", minimum=0,
          maximum=1e6, required=True, number_format="#,##0.0"),
        C(key="avg_input_tokens", header="Avg input [tokens]", help="Average prompt tokens", minimum=0,
          maximum=1e7, required=True, number_format="#,##0"),
        C(key="avg_output_tokens", header="Avg output [tokens]", help="Average completion tokens", minimum=0,
          maximum=1e6, required=True, number_format="#,##0"),
        C(key="p95_context_tokens", header="p95 context [tokens]", help="95th-percentile input + output",
          minimum=1, maximum=1e7, required=True, number_format="#,##0"),
        C(key="max_tokens", header="max_tokens [tokens]", help="Request cap (reserved where the provider does)",
          minimum=1, maximum=1e7, required=True, number_format="#,##0"),
        C(key="cache_hit_rate", header="Prefix-cache hit [fraction]", help="Share of input read from cache",
          minimum=0, maximum=1, required=True, number_format="0%"),
        C(key="cache_write_tokens", header="Cache writes [tokens/req]", help="Input tokens written to cache",
          minimum=0, maximum=1e7, required=True, number_format="#,##0"),
        C(key="ttft_slo_s", header="TTFT SLO [s]", help="Time to first token budget", minimum=0.001,
          maximum=600, required=True, number_format="0.000"),
        C(key="tpot_slo_s", header="TPOT SLO [s]", help="Time per output token budget", minimum=0.0001,
          maximum=10, required=True, number_format="0.000"),
        C(key="backend", header="Backend [name]", help="A Providers or Fleet backend", kind="text",
          choices="tblLists.backend", required=True, width=20),
        C(key="failover", header="Failover [name]", help="Backend taking the load when the primary is down",
          kind="text", choices="tblLists.backend", width=20),
    ),
)


@dataclass(frozen=True)
class PerRow(Expr):
    """A different expression on each data row (used by the Lists sheet's backend column)."""

    exprs: tuple[Expr, ...]

    def render(self, row: int) -> str:
        return self.exprs[row].render(row)

    def evaluate(self, ev: Evaluator, row: int) -> Any:
        return self.exprs[row].evaluate(ev, row)

    def children(self) -> Sequence[Expr]:
        return self.exprs


LIST_ROWS = PROVIDER_ROWS + FLEET_ROWS


def _backend_name(i: int) -> Expr:
    src, j = (PROVIDERS, i) if i < PROVIDER_ROWS else (FLEET, i - PROVIDER_ROWS)
    name = At(src, "name", j)
    return fn("IF", name.eq(""), "", name)


LISTS_TABLE = Table(
    name="tblLists",
    sheet="Lists",
    rows=LIST_ROWS,
    title="Lists feeding the dropdowns (fixed; the backend column follows Providers and Fleet)",
    columns=tuple(
        C(key=k, header=f"{k} [choice]", help=f"Allowed values of {k}", kind="text", width=18) for k in LISTS
    )
    + (
        C(key="backend", header="backend [name]", help="Provider and fleet backend names",
          kind="text", formula=PerRow(tuple(_backend_name(i) for i in range(LIST_ROWS))), width=20),
    ),
)

# ---- Results ------------------------------------------------------------------------------------------------


def _r(key: str) -> Expr:
    return Ref(ROUTES, key)


_BACKEND = _r("backend")
_FAILOVER = _r("failover")


def _prov(key: str, backend: Expr = _BACKEND) -> Expr:
    return lookup(PROVIDERS, "name", backend, key)


def _fleet(key: str, backend: Expr = _BACKEND) -> Expr:
    return lookup(FLEET, "name", backend, key)


def _is_provider(backend: Expr) -> Expr:
    return fn("ISNUMBER", fn("MATCH", backend, Cells(PROVIDERS, "name")))


def _is_fleet(backend: Expr) -> Expr:
    return fn("ISNUMBER", fn("MATCH", backend, Cells(FLEET, "name")))


def _res(key: str) -> Expr:
    return Ref(RESULTS_REF, key)


def _reserves(backend: Expr = _BACKEND) -> Expr:
    return fn("AND", _is_provider(backend), fn("IFERROR", _prov("reserves_max_tokens", backend), False))


def _gpu_price(backend: Expr = _BACKEND) -> Expr:
    own = _fleet("usd_per_gpu_hour", backend)
    return fn("IF", own.gt(0), own, lookup(GPUS, "name", _fleet("gpu", backend), "usd_per_gpu_hour"))


def _on_backend(key: str, backend: Expr = _BACKEND) -> Expr:
    """The sum of a Results column over every route whose primary backend is ``backend``: routes on one backend
    share its limits, KV cache and FLOP/s."""
    return fn("SUMIFS", Cells(RESULTS_REF, key), Cells(ROUTES, "backend"), backend)


def _limit_util(demand_key: str, limit_key: str) -> Expr:
    limit = _prov(limit_key)
    return fn(
        "IF",
        fn("AND", _res("backend_type").eq("provider"), fn("IFERROR", limit.gt(0), False)),
        udf("LIMIT_UTILIZATION", _on_backend(demand_key), limit, _prov("keys")),
        0,
    )


def _demand_on(backend: Expr, demand_key: str) -> Expr:
    """The route's demand as ``backend`` counts it: max_tokens reserved at admission or not (TPM, OTPM), cached reads
    counted toward ITPM or not. Results uses the primary backend; the failover check the failover backend."""
    qps, inp, out, cap = _q("peak_qps"), _q("avg_input_tokens"), _q("avg_output_tokens"), _q("max_tokens")
    if demand_key == "rpm_demand":
        return udf("CAPACITY_RPM", qps)
    counts = fn("IF", _is_provider(backend), fn("IFERROR", _prov("cached_reads_count_itpm", backend), True), True)
    itpm = udf("CAPACITY_ITPM", qps, inp, _q("cache_hit_rate"), _q("cache_write_tokens"), counts)
    if demand_key == "itpm_demand":
        return itpm
    if demand_key == "otpm_demand":
        return udf("CAPACITY_OTPM", qps, out)
    # daily volume at the average rate: a day holds one peak, not 1,440 of them
    if demand_key == "rpd_demand":
        return udf("CAPACITY_RPD", qps * PlanValue("avg_to_peak_ratio"))
    if demand_key == "tpd_demand":  # the counted tokens of a minute (TPM rules) over an average day
        return _demand_on(backend, "tpm_demand") * PlanValue("avg_to_peak_ratio") * MINUTES_PER_DAY
    if demand_key == "tpm_demand":  # counted input + output, or + max_tokens x quota weight where reserved (D3)
        weight = _prov("output_token_weight", backend)
        weight = fn("IF", fn("IFERROR", weight.gt(0), False), weight, 1)
        return itpm + fn("IF", _reserves(backend), udf("CAPACITY_OTPM", qps, cap) * weight,
                         udf("CAPACITY_OTPM", qps, out))
    raise KeyError(demand_key)


def _failover_provider_util(demand_key: str, limit_key: str) -> Expr:
    limit = _prov(limit_key, _FAILOVER)
    # routes whose primary is the failover backend already count by its rules; this route is recounted by them
    moved = _on_backend(demand_key, _FAILOVER) + _demand_on(_FAILOVER, demand_key)
    util = udf("LIMIT_UTILIZATION", moved, limit, _prov("keys", _FAILOVER))
    return fn("IF", fn("IFERROR", limit.gt(0), False), util, 0)


def _e2e() -> Expr:
    """P6 at the SLOs: the latency Little's law holds a request in flight for (TTFT SLO + (O - 1) x TPOT SLO)."""
    return udf("E2E_LATENCY_S", _r("ttft_slo_s"), _r("tpot_slo_s"), _r("avg_output_tokens"))


def _kv_share_on(backend: Expr) -> Expr:
    """M11 ``KV_FIT``: the route's in-flight KV at its p95 context over fleet ``backend``'s KV budget."""
    return udf("KV_FIT", _fleet("model", backend), _fleet("gpu", backend), _r("peak_qps"), _e2e(),
               _r("p95_context_tokens"), *(_fleet(k, backend) for k in (
                   "replicas", "tp", "gpu_memory_utilization", "kv_dtype", "engine", "weight_dtype", "pp")))


def _compute_share_on(backend: Expr) -> Expr:
    """P2/P4 ``COMPUTE_UTILIZATION``: the route's FLOP/s at peak over fleet ``backend``'s achieved FLOP/s."""
    return udf("COMPUTE_UTILIZATION", _fleet("model", backend), _fleet("gpu", backend), _r("peak_qps"),
               _r("avg_input_tokens"), _r("avg_output_tokens"), _fleet("replicas", backend), _fleet("tp", backend),
               _r("cache_hit_rate"), *(_fleet(k, backend) for k in ("mfu", "weight_dtype", "pp")))


def _failover_fleet_util() -> Expr:
    """The failover fleet's KV and compute utilizations with this route moved onto it: the shares of the routes it
    already serves plus this route's share on that fleet (both are linear in load)."""
    kv = _on_backend("kv_share", _FAILOVER) + _kv_share_on(_FAILOVER)
    compute = _on_backend("compute_share", _FAILOVER) + _compute_share_on(_FAILOVER)
    return fn("MAX", kv, compute)


def _q(key: str) -> Expr:
    return _r(key)


def _blank_unless_fleet(body: Expr) -> Expr:
    return fn("IF", _res("backend_type").eq("fleet"), body, "")


def _zero_unless_fleet(body: Expr) -> Expr:
    return fn("IF", _res("backend_type").eq("fleet"), body, 0)


RESULT_KEYS = (
    "route", "backend_type", "rpm_demand", "tpm_demand", "itpm_demand", "otpm_demand", "rpd_demand", "tpd_demand",
    "concurrency_needed",
    "kv_share", "compute_share", "decode_tokens_in_flight",
    "rpm_util", "tpm_util", "itpm_util", "otpm_util", "rpd_util", "tpd_util", "kv_util", "compute_util", "tpot_util",
    "kv_bytes_per_request", "max_concurrency", "batch_per_replica", "tpot_at_peak_s",
    "cost_monthly_no_cache_usd", "cost_monthly_usd", "failover_util", "failover_ok",
    "max_util", "binding_constraint", "headroom_multiple", "months_to_breach", "status",
)
UTILIZATION_KEYS = ("rpm_util", "tpm_util", "itpm_util", "otpm_util", "rpd_util", "tpd_util", "kv_util", "compute_util",
                    "tpot_util")

# The Results layout (keys -> letters) exists before its formulas, which refer to earlier Results columns.
RESULTS_REF = Table(
    name="tblResults",
    sheet="Results",
    rows=ROUTE_ROWS,
    columns=tuple(C(key=k, header=k, help=k) for k in RESULT_KEYS),
)


def _results_columns() -> tuple[Column, ...]:
    qps, inp, out = _q("peak_qps"), _q("avg_input_tokens"), _q("avg_output_tokens")
    route = _res("route")

    def col(key: str, header: str, help: str, body: Expr, fmt: str = "#,##0", kind: str = "number",
            width: float = 14.0) -> Column:
        formula = body if key == "route" else when_filled(route, body)
        return C(key=key, header=header, help=help, formula=formula, number_format=fmt, kind=kind, width=width)

    fleet_args = lambda *keys: [_fleet(k) for k in keys]  # noqa: E731
    price = lambda k: fn("IFERROR", _prov(k), 0)  # noqa: E731
    avg_qps = qps * PlanValue("avg_to_peak_ratio")
    e2e = _e2e()
    util_fmt = "0.00"
    return (
        col("route", "Route [name]", "Route name (from Routes)",
            fn("IF", _r("name").eq(""), "", _r("name")), kind="text", width=18),
        col("backend_type", "Backend type", "provider, fleet or unknown",
            fn("IF", _is_provider(_BACKEND), "provider", fn("IF", _is_fleet(_BACKEND), "fleet", "unknown")),
            kind="text", width=10),
        col("rpm_demand", "RPM demand [req/min]", "D1: 60 x peak QPS", _demand_on(_BACKEND, "rpm_demand")),
        col("tpm_demand", "TPM demand [tokens/min]", "D2/D3: total tokens per minute (max_tokens if reserved)",
            _demand_on(_BACKEND, "tpm_demand")),
        col("itpm_demand", "ITPM demand [tokens/min]", "D4: counted input tokens per minute",
            _demand_on(_BACKEND, "itpm_demand")),
        col("otpm_demand", "OTPM demand [tokens/min]", "D2/D3: output tokens per minute (max_tokens if reserved)",
            _demand_on(_BACKEND, "otpm_demand")),
        col("rpd_demand", "RPD demand [req/day]", "Requests per day at the average rate (peak x avg-to-peak x 1,440)",
            _demand_on(_BACKEND, "rpd_demand")),
        col("tpd_demand", "TPD demand [tokens/day]", "Counted tokens per day at the average rate",
            _demand_on(_BACKEND, "tpd_demand")),
        col("concurrency_needed", "In flight at peak [requests]",
            "P7 Little's law at the SLO: QPS x E2E latency (P6, TTFT SLO + output x TPOT SLO)",
            udf("CONCURRENCY", qps, e2e), fmt="#,##0.0"),
        col("kv_share", "KV share [x]", "M11 KV_FIT: this route's in-flight KV at p95 context / its fleet's KV budget",
            _zero_unless_fleet(_kv_share_on(_BACKEND)), util_fmt),
        col("compute_share", "Compute share [x]", "P2/P4 COMPUTE_UTILIZATION: this route's FLOP/s at peak / its "
            "fleet's GPUs x peak FLOP/s x MFU", _zero_unless_fleet(_compute_share_on(_BACKEND)), util_fmt),
        col("decode_tokens_in_flight", "Decode context in flight [tokens]",
            "M8: in flight at peak x (input + output/2), to weight the fleet's decode context",
            _res("concurrency_needed") * (inp + out / 2), "#,##0"),
        # utilization columns, in CONSTRAINTS order (contiguous: BINDING_CONSTRAINT reads them as one range); each is
        # the utilization of the route's backend with all the routes it serves

        col("rpm_util", "RPM util [x]", "RPM demand / (limit x keys)", _limit_util("rpm_demand", "rpm"), util_fmt),
        col("tpm_util", "TPM util [x]", "TPM demand / (limit x keys)", _limit_util("tpm_demand", "tpm"), util_fmt),
        col("itpm_util", "ITPM util [x]", "ITPM demand / (limit x keys)", _limit_util("itpm_demand", "itpm"),
            util_fmt),
        col("otpm_util", "OTPM util [x]", "OTPM demand / (limit x keys)", _limit_util("otpm_demand", "otpm"),
            util_fmt),
        col("rpd_util", "RPD util [x]", "RPD demand / (limit x keys)", _limit_util("rpd_demand", "rpd"), util_fmt),
        col("tpd_util", "TPD util [x]", "TPD demand / (limit x keys)", _limit_util("tpd_demand", "tpd"), util_fmt),
        col("kv_util", "KV util [x]", "M11: KV of every route in flight on the fleet / its KV budget (sum of shares)",
            _zero_unless_fleet(_on_backend("kv_share")), util_fmt),
        col("compute_util", "Compute util [x]", "P2/P4: FLOP/s of every route on the fleet / GPUs x peak FLOP/s x MFU",
            _zero_unless_fleet(_on_backend("compute_share")), util_fmt),
        col("tpot_util", "TPOT util [x]", "TPOT at the peak batch / TPOT SLO",
            _zero_unless_fleet(_res("tpot_at_peak_s") / _q("tpot_slo_s")), util_fmt),
        col("kv_bytes_per_request", "KV per request [bytes]", "M8: KV bytes per request at p95 context",
            _blank_unless_fleet(udf("KV_BYTES_PER_REQUEST", *fleet_args("model"), _q("p95_context_tokens"),
                                    *fleet_args("kv_dtype", "tp"), 16, _fleet("pp"))), "#,##0"),
        col("max_concurrency", "Max concurrency [req/replica]", "M11: requests at p95 context that fit one replica",
            _blank_unless_fleet(udf("MAX_CONCURRENCY", *fleet_args("model", "gpu", "tp", "gpu_memory_utilization",
                                                                    "kv_dtype"), _q("p95_context_tokens"),
                                    *fleet_args("engine", "weight_dtype", "pp"))), "#,##0"),
        col("batch_per_replica", "Peak batch [req/replica]",
            "In flight at peak on the fleet (all its routes) / replicas",
            _blank_unless_fleet(_on_backend("concurrency_needed") / _fleet("replicas")), "#,##0.0"),
        col("tpot_at_peak_s", "TPOT at peak [s]", "P1-P2: decode step at the fleet's peak batch and in-flight-weighted "
            "context (M8)",
            _blank_unless_fleet(udf("TPOT_S", *fleet_args("model", "gpu", "tp"), _res("batch_per_replica"),
                                    fn("IFERROR", _on_backend("decode_tokens_in_flight")
                                       / _on_backend("concurrency_needed"), inp + out / 2),
                                    *fleet_args("kv_dtype", "mbu", "mfu", "weight_dtype"))),
            "0.0000"),
        col("cost_monthly_no_cache_usd", "Cost no cache [USD/month]", "C1 at hit rate 0 (fleet: GPU-hours)",
            fn("IF", _res("backend_type").eq("fleet"),
               udf("SELFHOST_USD_MONTHLY", _gpu_price(), _fleet("tp") * _fleet("pp") * _fleet("replicas")),
               udf("API_COST_MONTHLY", avg_qps, inp, out, 0, 0, price("usd_per_mtok_input"),
                   price("usd_per_mtok_cached_input"), price("usd_per_mtok_cache_write"),
                   price("usd_per_mtok_output"))), "#,##0"),
        col("cost_monthly_usd", "Cost with cache [USD/month]", "C1 at the route's hit rate (fleet: GPU-hours)",
            fn("IF", _res("backend_type").eq("fleet"),
               udf("SELFHOST_USD_MONTHLY", _gpu_price(), _fleet("tp") * _fleet("pp") * _fleet("replicas")),
               udf("API_COST_MONTHLY", avg_qps, inp, out, _q("cache_hit_rate"), _q("cache_write_tokens"),
                   price("usd_per_mtok_input"), price("usd_per_mtok_cached_input"),
                   price("usd_per_mtok_cache_write"), price("usd_per_mtok_output"))), "#,##0"),
        col("failover_util", "Failover util [x]", "C8: highest utilization of the failover backend with this route "
            "moved onto it (plus the routes it already serves)",
            fn("IF", _FAILOVER.eq(""), 0,
               fn("IF", _is_provider(_FAILOVER),
                  fn("MAX", _failover_provider_util("rpm_demand", "rpm"), _failover_provider_util("tpm_demand", "tpm"),
                     _failover_provider_util("itpm_demand", "itpm"), _failover_provider_util("otpm_demand", "otpm"),
                     _failover_provider_util("rpd_demand", "rpd"), _failover_provider_util("tpd_demand", "tpd")),
                  fn("IF", _is_fleet(_FAILOVER), _failover_fleet_util(), 0))), util_fmt),
        col("failover_ok", "Failover check", "OK when the failover backend absorbs the route at <= 1",
            fn("IF", _FAILOVER.eq(""), "none", fn("IF", _res("failover_util").le(1), "OK", "BREACH")),
            kind="text", width=10),
        col("max_util", "Max util [x]", "C7: highest utilization of the route",
            fn("MAX", Cells(RESULTS_REF, "rpm_util", "tpot_util")), util_fmt),
        col("binding_constraint", "Binding constraint", "C7: the constraint with the highest utilization",
            udf("BINDING_CONSTRAINT", Cells(LISTS_TABLE, "constraint"), Cells(RESULTS_REF, "rpm_util", "tpot_util")),
            kind="text", width=12),
        col("headroom_multiple", "Headroom [x demand]", "C7: demand multiple before the first ceiling",
            udf("HEADROOM_MULTIPLE", Cells(RESULTS_REF, "rpm_util", "tpot_util")), "0.00"),
        col("months_to_breach", "Months to breach [months]", "Months of growth until max util reaches 1",
            udf("MONTHS_TO_BREACH", _res("max_util"), PlanValue("monthly_growth")), "0.0"),
        col("status", "Status", "OK, WARN (above the plan threshold) or BREACH (above 1)",
            fn("IF", _res("max_util").gt(1), "BREACH",
               fn("IF", _res("max_util").gt(PlanValue("utilization_threshold")), "WARN", "OK")),
            kind="text", width=10),
    )


RESULTS = Table(
    name="tblResults",
    sheet="Results",
    rows=ROUTE_ROWS,
    title="Results per route (formulas; locked)",
    note="Demand, then provider limits, then GPU memory and decode time, then the binding constraint.",
    columns=_results_columns(),
)
assert tuple(c.key for c in RESULTS.columns) == RESULT_KEYS

_SUMMARY_KEYS = ("route", *UTILIZATION_KEYS, "failover_util", "binding_constraint", "headroom_multiple",
                 "months_to_breach", "cost_monthly_usd", "status")
SUMMARY = Table(
    name="tblSummary",
    sheet="Summary",
    rows=ROUTE_ROWS,
    header_row=4,
    title="Summary: utilization of every constraint per route (1.00 = at the limit)",
    columns=tuple(
        C(
            key=k,
            header=RESULTS.column(k).header,
            help=RESULTS.column(k).help,
            formula=Ref(RESULTS, k),
            kind=RESULTS.column(k).kind,
            number_format=RESULTS.column(k).number_format,
            width=RESULTS.column(k).width,
        )
        for k in _SUMMARY_KEYS
    ),
)

TOTALS: tuple[tuple[str, str, Expr, str], ...] = (
    ("Total cost with cache [USD/month]", "cost_monthly_usd", fn("SUM", Cells(RESULTS, "cost_monthly_usd")),
     "#,##0"),
    ("Total cost no cache [USD/month]", "cost_monthly_no_cache_usd",
     fn("SUM", Cells(RESULTS, "cost_monthly_no_cache_usd")), "#,##0"),
    ("Routes in breach [count]", "status", fn("COUNTIFS", Cells(RESULTS, "status"), "BREACH"), "0"),
    ("Routes above threshold [count]", "status", fn("COUNTIFS", Cells(RESULTS, "status"), "WARN"), "0"),
    ("Highest utilization [x]", "max_util", fn("MAX", Cells(RESULTS, "max_util")), "0.00"),
)
"""Plan-wide figures on the Summary sheet, in rows 2.. of columns O:P (label, formula)."""

# the plan totals block sits right of the Summary table, one empty column between (it moves when the table grows)
TOTALS_COL_LABEL = col_letter(SUMMARY.first_col + len(SUMMARY.columns) + 1)
TOTALS_COL_VALUE = col_letter(SUMMARY.first_col + len(SUMMARY.columns) + 2)
TOTALS_FIRST_ROW = 5

INPUT_TABLES = (PLAN, ROUTES, PROVIDERS, FLEET, GPUS, MODELS)
FORMULA_TABLES = (LISTS_TABLE, RESULTS, SUMMARY)
TABLES = (PLAN, ROUTES, PROVIDERS, FLEET, RESULTS, SUMMARY, GPUS, MODELS, LISTS_TABLE)
SHEET_ORDER = ("ReadMe", "Summary", "Plan", "Routes", "Providers", "Fleet", "Results", "GPUs", "Models", "Lists")


def table(name: str) -> Table:
    for t in TABLES:
        if t.name == name:
            return t
    raise KeyError(name)


def _references(expr: Expr) -> set[tuple[str, str]]:
    """(table name, column key) pairs an expression reads."""
    if isinstance(expr, (Ref, Cells)):
        keys = {expr.first, expr.last} if isinstance(expr, Cells) else {expr.key}
        if isinstance(expr, Cells) and expr.last is not None:
            t = expr.table
            i, j = t.index(expr.first), t.index(expr.last)
            keys = {c.key for c in t.columns[i : j + 1]}
        return {(expr.table.name, k) for k in keys if k is not None}
    if isinstance(expr, At):
        return {(expr.table.name, expr.key)}
    return set().union(*(_references(c) for c in expr.children()))


def _column_order() -> list[tuple[Table, Column]]:
    """Formula columns in dependency order (a column after every column it reads)."""
    nodes = {(t.name, c.key): (t, c) for t in FORMULA_TABLES for c in t.columns if c.formula is not None}
    order: list[tuple[Table, Column]] = []
    state: dict[tuple[str, str], int] = {}

    def visit(node: tuple[str, str]) -> None:
        if state.get(node) == 2:
            return
        if state.get(node) == 1:
            raise ValueError(f"circular reference through {node}")
        state[node] = 1
        t, c = nodes[node]
        assert c.formula is not None
        for dep in sorted(_references(c.formula)):
            if dep in nodes and dep != node:
                visit(dep)
        state[node] = 2
        order.append((t, c))

    for node in nodes:
        visit(node)
    return order


def formula_cells() -> list[tuple[str, str, Expr, int]]:
    """Every formula cell of the template, in evaluation order: ``(sheet, cell, expr, data_row)``.

    Columns come in dependency order and each column is evaluated for all rows, so a column may use whole
    columns computed before it (SUMIFS for failover).
    """
    out: list[tuple[str, str, Expr, int]] = []
    for t, c in _column_order():
        assert c.formula is not None
        for i in range(t.rows):
            out.append((t.sheet, t.cell(c.key, i), c.formula, i))
    for i, (_label, _key, expr, _fmt) in enumerate(TOTALS):
        out.append((SUMMARY.sheet, f"{TOTALS_COL_VALUE}{TOTALS_FIRST_ROW + i}", expr, 0))
    return out


def all_formulas() -> dict[tuple[str, str], str]:
    """``{(sheet, cell): "=formula"}`` for every formula cell of the template."""
    return {(sheet, cell): "=" + expr.render(row) for sheet, cell, expr, row in formula_cells()}


def functions_used() -> set[str]:
    """Every function name (built-in and registry) the template's formulas call."""
    return set().union(*(expr.functions() for _s, _c, expr, _r in formula_cells()))


def fixed_cells() -> dict[tuple[str, str], Any]:
    """Cells whose content is part of the template itself (list values, plan setting names and units)."""
    out: dict[tuple[str, str], Any] = {}
    for key, values in LISTS.items():
        for i, v in enumerate(values):
            out[(LISTS_TABLE.sheet, LISTS_TABLE.cell(key, i))] = v
    for i, (name, unit, help, _opts) in enumerate(PLAN_SETTINGS):
        out[(PLAN.sheet, PLAN.cell("setting", i))] = name
        out[(PLAN.sheet, PLAN.cell("unit", i))] = unit
        out[(PLAN.sheet, PLAN.cell("help", i))] = help
    return out


def evaluate_plan(
    inputs: Mapping[tuple[str, str], Any], functions: Mapping[str, Any] | None = None
) -> dict[tuple[str, str], Any]:
    """Evaluate every formula cell of a plan from its input cells, in Python.

    ``inputs`` maps ``(sheet, cell)`` (``("Routes", "C4")``) to the cell's value (``None`` or absent: empty).
    Returns ``{(sheet, cell): value}`` for every formula cell: numbers as ``float``, text as ``str``, errors as
    :class:`XlError`, ``""`` on unused rows. ``functions`` defaults to the registry (:func:`planner.registry.load`).
    """
    values = dict(fixed_cells())
    values.update(inputs)
    ev = Evaluator(values, functions)
    out: dict[tuple[str, str], Any] = {}
    for sheet, cell, expr, row in formula_cells():
        v = expr.evaluate(ev, row)
        ev.values[(sheet, cell)] = v
        out[(sheet, cell)] = v
    return out


def contract_markdown() -> str:
    """The tables of the contract as Markdown (kept in ``docs/template.md``; a test checks it is current)."""
    lines: list[str] = []
    for t in TABLES:
        lines += [
            f"### `{t.name}` on sheet `{t.sheet}` (`{t.ref}`, {t.rows} data rows from row {t.first_row})",
            "",
            "| Col | Key | Header | Kind | Constraint |",
            "|---|---|---|---|---|",
        ]
        for c in t.columns:
            cons = []
            if c.choices:
                cons.append(f"dropdown: {c.choices}")
            if c.minimum is not None or c.maximum is not None:
                lo = "" if c.minimum is None else f"{c.minimum:g}"
                hi = "" if c.maximum is None else f"{c.maximum:g}"
                cons.append(f"{'whole ' if c.integer else ''}{lo}..{hi}")
            if c.required:
                cons.append("required")
            fixed = t is LISTS_TABLE or (t is PLAN and c.key != "value")
            kind = "formula" if c.formula is not None else ("fixed" if fixed else "input")
            lines.append(f"| {t.letter(c.key)} | `{c.key}` | {c.header} | {kind} | {', '.join(cons)} |")
        lines.append("")
    return "\n".join(lines)
