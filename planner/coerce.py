"""Excel-shaped arguments to clean Python values, shared by every adapter (xlwings desktop, Lite, formulas).

Excel hands a function a scalar, ``None`` for an empty cell, a 1-D or 2-D list for a range, and numbers typed as
text. :func:`call_sheet_function` turns those into what the declared :class:`~planner.registry.Arg` kinds promise,
applies the documented defaults for empty cells, and, when an element-wise argument receives a whole column, calls
the function once per row and returns a column (a list of one-element rows) that Excel spills.
A planner error becomes its one-line message, which is what the cell shows.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from itertools import chain, compress
from typing import Any

from planner.errors import ArgumentError, PlannerError, Refusal, is_refusal_text
from planner.excel.values import ERROR_VALUES
from planner.registry import SheetFunction

Grid = list[list[Any]]


_SCALAR_TYPES = frozenset({float, int, bool, str, bytes, type(None)})
_ERRORS = frozenset(ERROR_VALUES)
"""Excel's error values as a set: membership by hash (the same strings as the tuple's, equal by ``==``)."""
_WHOLE = 2**53
"""Below it a whole float becomes an int (:func:`_number`)."""


class Column(list):  # type: ignore[type-arg]
    """A whole-column argument as one-cell rows (``[[a], [b], ...]``: equal to that plain list, and read the same way
    by every function here) that keeps, on the object itself, what each call would otherwise recompute from it: its
    cells, the first Excel error among them, and its coerced cells per argument kind. Built once per plan for each
    table column by :func:`planner.excel.compiled.column_arg`; a plan's per-route ``BACKEND_SUM`` / ``OUTAGE_SUM`` /
    ``FLEET_SUM`` cells receive the same few 20-cell columns hundreds of times, and each call coerced all 20 cells
    again (about 7,500 :func:`coerce_scalar` calls per plan, template 2.6.0).

    Safe to share because the cells are never changed after it is built (the evaluator hands out a column once it is
    complete, :func:`planner.validate.fastpath._topological`) and :func:`prepare_args` hands each call a copy of the
    coerced list (``cells[:used]``), so no function can change what the next call receives. A coerced list holding a
    :class:`Refusal` (an ``Arg.row_errors`` argument with an error in a row) is not kept: each call gets its own.

    >>> c = Column([1.0, "x"])
    >>> c == [[1.0], ["x"]], c.cells
    (True, [1.0, 'x'])
    """

    __slots__ = ("cells", "coerced", "error")

    def __init__(self, cells: list[Any]) -> None:
        super().__init__([[x] for x in cells])
        self.cells = cells
        self.coerced: dict[tuple[str, bool], tuple[list[Any], int]] = {}
        self.error: Any = _UNSCANNED


_UNSCANNED = object()


def is_range(value: Any) -> bool:
    """True for anything list- or array-shaped (not a string)."""
    t = type(value)
    if t is list or t is tuple:
        return True
    if t in _SCALAR_TYPES:
        return False
    return not isinstance(value, (str, bytes)) and hasattr(value, "__iter__")


def _rows_of_lists(value: Any) -> bool:
    """A non-empty plain list of plain lists (what the template evaluator and xlwings hand over for a column)."""
    if (type(value) is not list and type(value) is not Column) or not value:
        return False
    for r in value:
        if type(r) is not list:
            return False
    return True


def to_grid(value: Any) -> Grid:
    """A scalar, a 1-D sequence or a 2-D sequence (or numpy array) as a 2-D list of rows."""
    if _rows_of_lists(value):  # the common shape, as the general path below would copy it
        return [list(r) for r in value]
    if hasattr(value, "tolist"):
        value = value.tolist()
    if not is_range(value):
        return [[value]]
    rows = list(value)
    if not rows:
        return []
    if all(is_range(r) for r in rows):
        return [list(r.tolist() if hasattr(r, "tolist") else r) for r in rows]
    return [[v] for v in rows]


def flatten(value: Any) -> list[Any]:
    """All cells of a range, row by row (a new list)."""
    if type(value) is Column:
        return list(value.cells)
    if _rows_of_lists(value):
        return [v for row in value for v in row]
    return [v for row in to_grid(value) for v in row]


def _is_empty(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value.strip() == "")


def _number(value: float | int) -> float | int:
    """A number argument as the function receives it: a whole float below 2**53 becomes an int (a whole number reads
    "3" in a message on every surface; a file stores "3", Python 3.0), anything else is unchanged."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def coerce_scalar(kind: str, name: str, value: Any) -> Any:
    """One cell value as the kind promises; ``None`` stays ``None`` (the caller applies the default)."""
    t = type(value)
    if kind == "number" and (t is float or t is int):  # the common cells first, by the general path's own rule
        return _number(value)
    if value is None:
        return None
    if _is_empty(value):
        return None
    if hasattr(value, "item") and not is_range(value):  # numpy scalar
        value = value.item()
    if isinstance(value, str) and (is_refusal_text(value) or value.strip() in _ERRORS):
        # an upstream refusal, or an Excel error handed over as text (xlwings' err_to_str): pass it on unchanged
        raise Refusal(value.strip())
    if kind == "number":
        if isinstance(value, bool):
            raise ArgumentError(name, value, "a number")
        if isinstance(value, (int, float)):
            return _number(value)
        if isinstance(value, str):
            text = value.strip().replace(",", "").replace("_", "")
            percent = text.endswith("%")
            try:
                number = float(text[:-1] if percent else text)
            except ValueError:
                raise ArgumentError(name, value, "a number") from None
            return number / 100 if percent else number
        raise ArgumentError(name, value, "a number")
    if kind == "text":
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return str(value).strip()
    if kind == "flag":
        if isinstance(value, bool):
            return value
        if isinstance(value, (int, float)):
            return bool(value)
        text = str(value).strip().lower()
        if text in ("true", "yes", "y", "1"):
            return True
        if text in ("false", "no", "n", "0"):
            return False
        raise ArgumentError(name, value, "TRUE or FALSE")
    raise AssertionError(kind)


_FLOAT_OR_BLANK = frozenset((float, type(None)))


def coerce_sequence(kind: str, name: str, value: Any, *, row_errors: bool = False) -> list[Any]:
    """A whole range as a flat list; empty cells stay ``None`` (see :func:`prepare_args` for trailing blanks). With
    ``row_errors`` an error or refusal in a cell stays in place as a :class:`Refusal` (``Arg.row_errors``)."""
    scalar_kind = "number" if kind == "numbers" else "text"
    cells = flatten(value)
    if scalar_kind == "number" and _FLOAT_OR_BLANK.issuperset(map(type, cells)):
        # floats and blanks only (a plan's computed columns): coerce_scalar's answer for each, without a call each
        # (a whole float below 2**53 an int, :func:`_number`; any other float itself; a blank None)
        return [None if v is None else int(v) if v.is_integer() and abs(v) < _WHOLE else v for v in cells]
    if not row_errors:
        return [coerce_scalar(scalar_kind, name, v) for v in cells]
    out: list[Any] = []
    for v in cells:
        try:
            out.append(coerce_scalar(scalar_kind, name, v))
        except Refusal as refusal:
            # kept without its traceback: the traceback's frames (this one holds ``out``, which holds the refusal)
            # would make a reference cycle that keeps every frame of the call stack and all they hold (the plan's
            # view, book and evaluator) alive until the cyclic collector finds them
            out.append(refusal.with_traceback(None))
    return out


def coerce_table(value: Any) -> list[list[Any]]:
    """A ``table`` argument: the range as rows of cells, empty cells (and empty text) as ``None``, numbers as
    floats; the function reads it by its header row."""
    return _coerce_rows(to_grid(value))


_PLAIN_CELLS = frozenset((float, str, type(None)))
"""The cell types of a row that :func:`_coerce_rows` converts without a step per cell: a float stays, a text stays
unless it is empty or blank (None), a blank stays None (a plan's table blocks hold only these)."""


def _coerce_rows(rows: Grid, *, blank_texts: set[str] | None = None) -> list[list[Any]]:
    """:func:`coerce_table` of the grid ``rows`` (fresh lists, :func:`to_grid`'s: a row needing no change is kept).
    ``blank_texts``: the empty or blank texts among the cells (:func:`_table` finds them in C), None if not known. A
    row of :data:`_PLAIN_CELLS` holding none of them is the answer as it is; another row of those types is converted
    by one comprehension; any other row cell by cell, by the general step. A tornado bar's Forecast route table (21
    rows of 32 cells) is converted about seven times a plan."""
    out = []
    for row in rows:
        if _PLAIN_CELLS.issuperset(map(type, row)):
            if blank_texts is not None and blank_texts.isdisjoint(row):
                out.append(row)
            else:
                out.append([None if type(v) is str and v.strip() == "" else v for v in row])
            continue
        cells = []
        for v in row:
            t = type(v)
            if t is float:  # the commonest cells, as the general step below leaves them (no .item, not empty)
                cells.append(v)
                continue
            if t is str:  # a text: empty (None) or itself, as below
                cells.append(None if v.strip() == "" else v)
                continue
            if hasattr(v, "item") and not is_range(v):
                v = v.item()
            cells.append(None if _is_empty(v) else float(v) if isinstance(v, int) and not isinstance(v, bool) else v)
        out.append(cells)
    return out


class SharedRows(list):  # type: ignore[type-arg]
    """The coerced rows of a table block (:func:`_table`), one object handed to every call that reads that block:
    a plain list of rows to its readers, marked so that a function may keep what it derives from it by identity
    (:func:`planner.sheet.plan._row`). Nobody changes it after it is built."""

    __slots__ = ()


_TABLES_BY_ID: dict[int, tuple[tuple[Any, ...], tuple[str | None, list[list[Any]]]]] = {}
TABLES_BY_ID_KEPT = 64
"""Blocks :func:`_table_kept` remembers by identity (then emptied): a 20-route plan hands its registry calls 19
distinct blocks (the base's and its bar ends'), looked up about 1,880 times (counted over plans 1-3)."""


def _table_kept(value: tuple[Any, ...]) -> tuple[str | None, list[list[Any]]]:
    """:func:`_table`'s answer for a table block, found first by the block's identity: a plan's calls receive the
    same few block objects (the Forecast route table three times a FORECAST_ROUTE_MONTH call, 240 calls a plan), and
    the cache by value hashes its key anew on each look-up (a Python ``__hash__`` for a block,
    :class:`planner.excel.expr.HashedTuple`). Kept: ``id(block) -> (block, answer)`` (the block held, so that its
    ``id`` is not reused; a tuple of tuples of cells, never changed), :data:`TABLES_BY_ID_KEPT` entries, then
    emptied. The answer is the object :func:`_table` gave for that block (equal to what it gives for any equal
    block: the same error and the same rows)."""
    hit = _TABLES_BY_ID.get(id(value))
    if hit is not None and hit[0] is value:
        return hit[1]
    out = _table(value)  # raises TypeError for an unhashable block, as before (nothing kept)
    if len(_TABLES_BY_ID) >= TABLES_BY_ID_KEPT:
        _TABLES_BY_ID.clear()
    _TABLES_BY_ID[id(value)] = (value, out)
    return out


@functools.lru_cache(maxsize=32)
def _table(value: tuple[Any, ...]) -> tuple[str | None, list[list[Any]]]:
    """A table block's first Excel error (or None) and its coerced rows, computed once per distinct block: every
    fleet or provider function of every route reads the same Fleet, Specs and Providers blocks. Callers only read
    the rows (a :class:`SharedRows`)."""
    rows = to_grid(value)  # (flatten(value): these rows' cells, row by row)
    try:  # the block's distinct texts, found in C: most blocks hold no error and no blank text
        texts = set(filter(str.__instancecheck__, set(chain.from_iterable(rows))))
        stripped = set(map(str.strip, texts))
    except TypeError:  # an unhashable cell: every cell looked at, one by one
        texts = stripped = None
    if stripped is None or not _ERRORS.isdisjoint(stripped):  # the first error in row order, as before
        for cell in chain.from_iterable(rows):
            if isinstance(cell, str) and cell.strip() in _ERRORS:
                return cell.strip(), SharedRows(_coerce_rows(rows))  # the rows too: an Arg.row_errors table reads them
    blank_texts = None if texts is None else {t for t in texts if t.strip() == ""} if "" in stripped else set()
    return None, SharedRows(_coerce_rows(rows, blank_texts=blank_texts))


def _coerced_column(kind: str, name: str, value: Any, row_errors: bool) -> tuple[list[Any], int]:
    """:func:`coerce_sequence` of a range argument and its used length (:func:`_used_length`); for a
    :class:`Column`, computed once per column and kind (the caller reads the list and copies what it hands on)."""
    if type(value) is not Column:
        cells = coerce_sequence(kind, name, value, row_errors=row_errors)
        return cells, _used_length(cells)
    hit = value.coerced.get((kind, row_errors))
    if hit is not None:
        return hit
    cells = coerce_sequence(kind, name, value, row_errors=row_errors)  # raises as before (nothing kept)
    out = cells, _used_length(cells)
    if not (row_errors and any(isinstance(c, Refusal) for c in cells)):
        value.coerced[(kind, row_errors)] = out
    return out


def _used_length(cells: list[Any]) -> int:
    n = len(cells)
    while n and cells[n - 1] is None:
        n -= 1
    return n


def _column_length(spec: SheetFunction, raw: Sequence[Any]) -> int | None:
    lengths = set()
    n_raw = len(raw)
    for i in _elementwise(spec):
        if i >= n_raw:
            break
        value = raw[i]
        t = type(value)
        if t is float or t is str or t is int or value is None:
            continue  # a scalar (is_range's answer, without the call)
        if is_range(value):
            cells = value.cells if t is Column else flatten(value)
            if len(cells) != 1:
                lengths.add(len(cells))
    if not lengths:
        return None
    if len(lengths) > 1:
        raise ArgumentError("ranges", sorted(lengths), "ranges of one length (one row per route)")
    return lengths.pop()


_ArgPlan = tuple[int, str, str, bool, bool, str, Any, bool]
_PLANS: dict[str, tuple[SheetFunction, tuple[_ArgPlan, ...], bool]] = {}
_ELEMENTWISE: dict[str, tuple[SheetFunction, tuple[int, ...], tuple[bool, ...]]] = {}
_SCALAR_ARGS = frozenset((float, str, int, bool, type(None)))
"""The argument types :func:`_column_length` takes as a scalar without a look (:func:`is_range` is False for each)."""


def _elementwise(spec: SheetFunction) -> tuple[int, ...]:
    """Per function, once: the positions of its element-wise arguments (what :func:`_column_length` looks at); kept
    with a flag per argument (element-wise or not, for :func:`itertools.compress` in :func:`call_sheet_function`).
    One entry per registry function name (the spec held: a redefined function gets its own)."""
    hit = _ELEMENTWISE.get(spec.name)
    if hit is not None and hit[0] is spec:
        return hit[1]
    out = tuple(i for i, a in enumerate(spec.args) if a.elementwise)
    _ELEMENTWISE[spec.name] = (spec, out, tuple(a.elementwise for a in spec.args))
    return out


def _arg_plan(spec: SheetFunction) -> tuple[tuple[_ArgPlan, ...], bool]:
    """Per function, once: each argument as ``(index, kind, name, elementwise, optional, blank, default,
    row_errors)``, and
    whether any argument is a whole range (``numbers``/``texts``): what :func:`prepare_args` reads on every call,
    without the per-call attribute and property look-ups. Keyed by name, with the spec held (a redefined function
    gets its own plan)."""
    hit = _PLANS.get(spec.name)
    if hit is not None and hit[0] is spec:
        return hit[1], hit[2]
    plan = tuple((i, a.kind, a.name, a.elementwise, a.optional, a.blank, a.default, a.row_errors)
                 for i, a in enumerate(spec.args))
    ranges = any(kind in ("numbers", "texts") for _i, kind, *_rest in plan)
    _PLANS[spec.name] = (spec, plan, ranges)
    return plan, ranges


def prepare_args(spec: SheetFunction, raw: Sequence[Any]) -> list[Any]:
    """Coerce one call's arguments (scalars only) and fill defaults; raise ArgumentError for a missing one.

    Every function is prepared by its own generated code (:func:`_prepared`: the steps of :func:`_prepare_args`
    for its argument kinds, unrolled); :func:`_prepare_args` is the general statement of those steps (and the path
    of a function :func:`_prepared` cannot write)."""
    fast = _PREPARED.get(spec.name)
    if fast is None or fast[0] is not spec:
        fast = _PREPARED[spec.name] = (spec, _prepared(spec))
    if fast[1] is not None:
        return fast[1](raw)
    return _prepare_args(spec, raw)


def _prepare_args(spec: SheetFunction, raw: Sequence[Any]) -> list[Any]:
    plan, has_ranges = _arg_plan(spec)
    n_args, n_raw = len(plan), len(raw)
    if n_raw > n_args:
        raise ArgumentError(spec.name, n_raw, f"at most {n_args} arguments")
    tables: dict[int, tuple[str | None, list[list[Any]]]] | None = None
    for i, value in enumerate(raw):  # an Excel error in any argument is the result (the first, in argument order)
        t = type(value)
        if t is float or t is int or value is None:
            continue  # not an error text
        if plan[i][7]:
            continue  # Arg.row_errors: the implementation reads the rows it needs (coerce_sequence keeps errors)
        if t is str:  # a plain text (the loop below for it, without is_range and flatten)
            if value.strip() in _ERRORS:
                raise Refusal(value.strip())
            continue
        if t is Column:
            _raise_column_error(value)
            continue
        if isinstance(value, tuple) and plan[i][1] == "table":
            read = _table_kept(value)  # a plan's table block, read once per plan (hashable, so checked once)
            if read[0] is not None:
                raise Refusal(read[0])
            if tables is None:
                tables = {}
            tables[i] = read  # its rows below, without a second look-up
            continue
        for cell in flatten(value) if is_range(value) else (value,):
            if isinstance(cell, str) and cell.strip() in _ERRORS:
                raise Refusal(cell.strip())
    values: list[Any] = []
    # Trailing blank rows of whole-column ranges are cut at the last row any range argument uses, so paired
    # ranges (labels and utilizations) stay aligned even when the last utilization is blank.
    sequences: dict[int, list[Any]] = {}
    used = 0
    if has_ranges:
        lengths = []
        for i, kind, name, *rest in plan:
            if kind in ("numbers", "texts") and i < n_raw and raw[i] is not None:
                cells, n = _coerced_column(kind, name, raw[i], rest[-1])
                sequences[i] = cells
                lengths.append(n)
        used = max(lengths, default=0)
    for i, kind, name, elementwise, optional, blank, default, _row_errors in plan:
        value = raw[i] if i < n_raw else None
        v: Any
        if elementwise:
            t = type(value)
            if kind == "number" and (t is float or t is int):  # coerce_scalar's first case, without the calls
                v = int(value) if t is float and value.is_integer() and abs(value) < _WHOLE else value  # _number
            elif kind == "text" and t is str:  # coerce_scalar's steps for a plain text, without the calls
                v = value.strip()
                if not v:
                    v = None  # an empty cell
                elif (": got " in value and ", expected " in value) or v in _ERRORS:  # is_refusal_text, an error
                    raise Refusal(v)
            else:
                cell = flatten(value)[0] if is_range(value) else value
                v = coerce_scalar(kind, name, cell)
        elif kind == "table":
            read = tables.get(i) if tables is not None else None
            v = (read[1] if read is not None else None if value is None
                 else _table_kept(value)[1] if isinstance(value, tuple) else coerce_table(value))
        else:
            cells = sequences.get(i, [])[:used]
            v = cells if any(c is not None for c in cells) else None
        if v is None:
            if blank and not optional:
                values.append(None)  # a documented meaning of an empty cell (Arg.blank): the implementation decides
                continue
            if not optional:
                raise ArgumentError(name, None, "a value (the cell is empty)")
            v = default
        values.append(v)
    # Drop trailing defaults so the implementation sees its own defaults (identical by construction).
    return values


_PREPARED: dict[str, tuple[SheetFunction, Any]] = {}
_NO_CELLS: list[Any] = []
"""A range argument not given: no cells (never changed: a slice of it is a new list)."""


def _raise_column_error(col: Column) -> None:
    """Raise the first Excel error among a column argument's cells as a :class:`Refusal` (scanned once per column:
    the answer is kept on it)."""
    error = col.error
    if error is _UNSCANNED:
        error = col.error = next((c.strip() for c in col.cells if isinstance(c, str) and c.strip() in _ERRORS), None)
    if error is not None:
        raise Refusal(error)


def _scan_other(value: Any, table: bool) -> tuple[str | None, list[list[Any]]] | None:
    """:func:`_prepare_args`' error scan of an argument that is not a number, a plain text or empty: raises the
    first Excel error in it as a :class:`Refusal`; returns a table block's read (``table``: a ``table`` argument)
    for its coercion, else None."""
    if type(value) is Column:
        _raise_column_error(value)
        return None
    if table and isinstance(value, tuple):
        read = _table_kept(value)  # a plan's table block, read once per plan (hashable, so checked once)
        if read[0] is not None:
            raise Refusal(read[0])
        return read
    for cell in flatten(value) if is_range(value) else (value,):
        if isinstance(cell, str) and cell.strip() in _ERRORS:
            raise Refusal(cell.strip())
    return None


def _prepared(spec: SheetFunction) -> Any:
    """``f(raw)`` doing :func:`_prepare_args`' steps for ``spec``'s arguments, unrolled as generated code (each
    argument's kind, name, default and blank rule known when generated). The same values and the same errors, in
    the same order: every argument's Excel error first (argument order), then each whole-range (``numbers`` /
    ``texts``) argument given coerced in turn (:func:`_coerced_column`) and its used length, then each argument
    coerced in turn (a range cut at the longest used length; None when nothing is left in it)."""
    plan, _has_ranges = _arg_plan(spec)
    consts: list[Any] = [spec.name]
    reads: list[str] = []  # a table argument's read from the error scan, for its coercion
    scan: list[str] = []
    ranges: list[str] = []  # the range arguments coerced, before any argument is (as _prepare_args does)
    used: list[str] = []  # their used lengths
    body: list[str] = []

    def const(v: Any) -> str:
        consts.append(v)
        return f"_k{len(consts) - 1}"

    for i, kind, name, elementwise, optional, blank, default, row_errors in plan:
        is_table = kind == "table"
        if is_table:
            reads.append(f"r{i} = None")
        if not row_errors:  # Arg.row_errors: the implementation reads the rows it needs
            scan += [f"if n_raw > {i}:",
                     f"    value = raw[{i}]",
                     "    t = type(value)",
                     "    if t is str:",
                     "        if value.strip() in _ERRORS:",
                     "            raise Refusal(value.strip())",
                     "    elif not (t is float or t is int or t is bool or value is None):",
                     f"        {'r' + str(i) + ' = ' if is_table else ''}_scan_other(value, {is_table})"]
        body.append(f"value = raw[{i}] if n_raw > {i} else None")
        k, n = const(kind), const(name)
        if elementwise:
            body.append("t = type(value)")
            if kind == "number":
                body += ["if t is float or t is int:  # coerce_scalar's first case",
                         f"    v{i} = int(value) if t is float and value.is_integer() and abs(value) < _WHOLE "
                         "else value",
                         "else:",
                         f"    v{i} = coerce_scalar({k}, {n}, flatten(value)[0] if is_range(value) else value)"]
            elif kind == "text":
                body += ["if t is str:  # coerce_scalar's steps for a plain text",
                         f"    v{i} = value.strip()",
                         f"    if not v{i}:",
                         f"        v{i} = None",
                         f"    elif (': got ' in value and ', expected ' in value) or v{i} in _ERRORS:",
                         f"        raise Refusal(v{i})",
                         "else:",
                         f"    v{i} = coerce_scalar({k}, {n}, flatten(value)[0] if is_range(value) else value)"]
            elif kind == "flag":
                body += ["if t is bool:  # coerce_scalar's answer for TRUE or FALSE: itself",
                         f"    v{i} = value",
                         "else:",
                         f"    v{i} = coerce_scalar({k}, {n}, flatten(value)[0] if is_range(value) else value)"]
            else:  # pragma: no cover  (the element-wise kinds are number, text and flag)
                body.append(f"v{i} = coerce_scalar({k}, {n}, flatten(value)[0] if is_range(value) else value)")
        elif is_table:
            body.append(f"v{i} = r{i}[1] if r{i} is not None else None if value is None else _table_kept(value)[1] "
                        "if isinstance(value, tuple) else coerce_table(value)")
        else:  # a whole range: _coerce_column's cells cut at the longest used length, None if nothing is left
            ranges += [f"if n_raw > {i} and raw[{i}] is not None:",
                       f"    s{i}, u{i} = _coerced_column({k}, {n}, raw[{i}], {row_errors})",
                       "else:",
                       f"    s{i}, u{i} = _NO_CELLS, 0"]
            used.append(f"u{i}")
            # any cell not None, the first looked at first (count(None): the cells are numbers, texts, None or
            # refusals, none of them equal to None)
            body += [f"v{i} = s{i}[:used]",
                     f"if not v{i} or (v{i}[0] is None and v{i}.count(None) == len(v{i})):",
                     f"    v{i} = None"]
        if blank and not optional:
            continue  # a documented meaning of an empty cell (Arg.blank): None reaches the implementation
        body.append(f"if v{i} is None:")
        if not optional:
            body.append(f"    raise ArgumentError({n}, None, 'a value (the cell is empty)')")
        else:
            body.append(f"    v{i} = {const(default)}")
    lines = ["n_raw = len(raw)",
             f"if n_raw > {len(plan)}:",
             f"    raise ArgumentError(_k0, n_raw, 'at most {len(plan)} arguments')",
             *reads, *scan, *ranges,
             *([f"used = {used[0]}" if len(used) == 1 else f"used = max({', '.join(used)})"] if used else []),
             *body,
             f"return [{', '.join(f'v{i}' for i in range(len(plan)))}]"]
    src = (f"def _factory({', '.join(f'_k{j}' for j in range(len(consts)))}):\n"
           "    def prepare(raw):\n"
           + "".join(f"        {line}\n" for line in lines)
           + "    return prepare\n")
    scope: dict[str, Any] = {}
    # the module's own namespace as the function's globals: coerce_scalar, flatten ... as a call to them finds them
    exec(compile(src, f"<planner.coerce prepare {spec.name}>", "exec"), globals(), scope)  # noqa: S102  (source built from the registry's own declarations)
    return scope["_factory"](*consts)


def call_sheet_function(spec: SheetFunction, *raw: Any, errors_as_text: bool = True) -> Any:
    """Call ``spec`` with Excel-shaped arguments.

    Returns a scalar for scalar arguments, or a column (list of one-element rows) when an element-wise argument
    received a multi-cell range. With ``errors_as_text`` a :class:`PlannerError` becomes its message (the cell text);
    otherwise it propagates (the formulas adapter turns it into ``#VALUE!``).
    """
    hit = _ELEMENTWISE.get(spec.name)
    if hit is None or hit[0] is not spec:
        _elementwise(spec)
        hit = _ELEMENTWISE[spec.name]
    if _SCALAR_ARGS.issuperset(map(type, compress(raw, hit[2]))):
        # every element-wise argument given is a plain scalar: _column_length's answer (None) found in C, without
        # its loop (most calls: a table block or a column goes only to a table or range argument)
        return _call_one(spec, raw, errors_as_text)
    n = _column_length(spec, raw)
    if n is None:
        return _call_one(spec, raw, errors_as_text)
    # each element-wise range flattened once (flatten is pure: the same cells for every row)
    flat = [flatten(value) if arg.elementwise and is_range(value) else None for arg, value in zip(spec.args, raw)]
    column = []
    for row in range(n):
        row_args = []
        for cells, value in zip(flat, raw):
            if cells is not None:
                row_args.append(cells[row] if len(cells) > 1 else cells[0])
            else:
                row_args.append(value)
        column.append([_call_one(spec, row_args, errors_as_text)])
    return column


def _call_one(spec: SheetFunction, raw: Sequence[Any], errors_as_text: bool) -> Any:
    try:
        return spec.impl(*prepare_args(spec, raw))
    except PlannerError as exc:
        if errors_as_text:
            return str(exc)
        raise
