"""Formula expressions: one definition renders the Excel formula and evaluates it in Python.

An expression (:class:`Expr`) does two things from one definition:

- ``render(row)`` gives the Excel formula text written into the template (only functions of
  :data:`ALLOWED_BUILTINS`, which the headless ``formulas`` engine computes correctly, plus the registry's functions);
- ``evaluate(ev, row)`` computes the same value in Python, with Excel's semantics for empty cells, text and errors,
  calling the registry's functions through :func:`planner.coerce.call_sheet_function` (what every adapter calls).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from operator import itemgetter
from typing import Any

from planner.coerce import call_sheet_function
from planner.excel.tables import Table, sheet_ref
from planner.excel.values import DIV0, NA, NAME, NUM, XlError, compare, equal_key, to_number, to_text, truthy

ALLOWED_BUILTINS = frozenset(
    {"IF", "IFERROR", "AND", "OR", "MIN", "MAX", "SUM", "INDEX", "MATCH", "ISNUMBER", "SUMIFS", "COUNTIFS"}
)
"""Excel built-ins the template may use: each is computed correctly by formulas 1.3.4 (checked by
``tests/test_template.py`` against a real recompute). No ``--``, ``N()``, SUBTOTAL, OFFSET, SEQUENCE or structured
references."""

class ValueStore(dict):  # type: ignore[type-arg]
    """A plan's cell values ``{(sheet, cell): value}`` in which a cell not there reads as blank (``None``), so a
    compiled expression reads a cell with a subscript (``values[key]``: a dictionary look-up in C, where ``.get``
    is a method call) and a subclass can compute a cell on its first read (``__missing__``,
    :mod:`planner.whatif.bars`) without its hits leaving C.

    >>> v = ValueStore({("S", "A1"): 1.0})
    >>> v[("S", "A1")], v[("S", "B2")], ("S", "B2") in v
    (1.0, None, False)
    """

    __slots__ = ()

    def __missing__(self, key: Any) -> Any:
        return None


class Evaluator:
    """Evaluates expressions against the cell values of one plan: ``values[(sheet, cell)]`` (a :class:`ValueStore`:
    a cell not there is blank)."""

    def __init__(self, values: Mapping[tuple[str, str], Any], functions: Mapping[str, Any] | None = None,
                 memo: dict[tuple[Any, ...], Any] | None = None) -> None:
        self.values: dict[tuple[str, str], Any] = ValueStore(values)
        if functions is None:
            from planner.registry import load

            functions = load()
        self.functions = functions
        # registry functions are pure: a call with the same scalar arguments gives the same value (None: no memo)
        self.memo = memo

    def get(self, sheet: str, cell: str) -> Any:
        v = self.values[(sheet, cell)]
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
        return f"{sheet_ref(t.sheet)}!${t.letter(self.key)}{t.first_row + row}"

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
        return f"{sheet_ref(t.sheet)}!${t.letter(self.key)}${t.first_row + self.row_index}"

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
        s = sheet_ref(t.sheet)
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
class Block(Expr):
    """A whole table with its header row (``Models!$A$3:$W$39``), for ``table`` arguments: evaluates to a tuple of
    row tuples (hashable, so calls taking it are memoized like scalar calls). The header row is the table's own
    headers, which the validator checks are unchanged."""

    table: Table

    def render(self, row: int) -> str:
        t = self.table
        first, last = t.letter(t.columns[0].key), t.letter(t.columns[-1].key)
        return f"{sheet_ref(t.sheet)}!${first}${t.header_row}:${last}${t.last_row}"

    def evaluate(self, ev: Evaluator, row: int) -> tuple[tuple[Any, ...], ...]:
        # Read once per plan: cells are evaluated in dependency order, so the first reader sees the block's final
        # values (every fleet function of every route reads the same Fleet and Specs blocks).
        t = self.table
        cache = ev.__dict__.setdefault("_blocks", {})
        key = block_key(t)
        block = cache.get(key)
        if block is None:
            header, addresses = _block_addresses(t, key)
            values = ev.values  # what Evaluator.get returns (a blank cell None), read in C
            rows = [header]
            getters = _row_getters(key, addresses)
            if getters is not None:  # each row's cells in one C call, left to right, each a subscript as below
                rows += [get(values) for get in getters]
            else:
                rows += [tuple([values[address] for address in row]) for row in addresses]
            block = HashedTuple(rows)
            # the last evaluator's block of this table when its cells are the same (a tornado bar end's Fleet and
            # Specs are its plan's): equal memo keys then hold the same object, and a look-up compares it by
            # identity instead of cell by cell (one comparison here, where the look-ups are many)
            last = _LAST_BLOCK.get(key)
            if last is not None and last == block and all(map(_same_types, last, block)):
                block = last  # (types too: 1.0 == True, and the memo keys tell them apart)
            else:
                _LAST_BLOCK[key] = block
            cache[key] = block
        return block


def _same_types(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    return tuple(map(type, a)) == tuple(map(type, b))


_BLOCK_KEYS: dict[tuple[Any, ...], str] = {}
_LAST_BLOCK: dict[str, HashedTuple] = {}
"""The last block built of each table (by :func:`block_key`): one per table of the template, replaced by the next
plan's."""


def block_key(t: Table) -> str:
    """One text per table identity ``(sheet, header row, first column, column keys, rows)``, the same object for
    every reader of that table (made once per process): the key of an evaluator's blocks, whose look-up then hashes
    nothing new (a text keeps its hash; a tuple of a Forecast table's 34 column keys was hashed on every call that
    passes the table). Two tables share a key exactly when their identities are equal.

    >>> from planner import template as ts
    >>> block_key(ts.ROUTES) is block_key(ts.ROUTES), block_key(ts.ROUTES) == block_key(ts.FLEET)
    (True, False)
    """
    ident = (t.sheet, t.header_row, t.first_col, tuple(c.key for c in t.columns), t.rows)
    key = _BLOCK_KEYS.get(ident)
    if key is None:
        key = _BLOCK_KEYS[ident] = repr(ident)
    return key


_BLOCK_ADDRESSES: dict[str, tuple[tuple[Any, ...], tuple[tuple[tuple[str, str], ...], ...]]] = {}


def block_sheet(key: str) -> str | None:
    """The sheet of the table whose blocks are kept under ``key`` (:func:`block_key`) by an evaluator that has read
    one (None: no block of that key read in this process, or a table without a data row).

    >>> from planner import template as ts
    >>> _ = Block(ts.FLEET).evaluate(Evaluator({}, {}), 0)
    >>> block_sheet(block_key(ts.FLEET))
    'Fleet'
    """
    hit = _BLOCK_ADDRESSES.get(key)
    if hit is None or not hit[1] or not hit[1][0]:
        return None
    return hit[1][0][0][0]


_ROW_GETTERS: dict[str, tuple[Any, tuple[Callable[[Any], tuple[Any, ...]], ...] | None]] = {}


def _row_getters(key: str, addresses: tuple[tuple[tuple[str, str], ...], ...]
                 ) -> tuple[Callable[[Any], tuple[Any, ...]], ...] | None:
    """One :func:`operator.itemgetter` per row of a table's ``addresses`` (:func:`_block_addresses`'s), made once per
    process per table shape (``key``, the addresses object held and compared by identity): ``get(values)`` is the
    row's cells as a tuple, read left to right, each ``values[address]`` (a store's ``__missing__`` answers a cell
    not there, as the subscript does). None when a row has fewer than two cells (an itemgetter of one address
    returns the value, not a 1-tuple): the caller reads cell by cell."""
    hit = _ROW_GETTERS.get(key)
    if hit is None or hit[0] is not addresses:
        getters = (tuple(itemgetter(*row) for row in addresses)
                   if all(len(row) > 1 for row in addresses) else None)
        hit = _ROW_GETTERS[key] = (addresses, getters)
    return hit[1]


def _block_addresses(t: Table, key: str) -> tuple[tuple[Any, ...], tuple[tuple[tuple[str, str], ...], ...]]:
    """A table's header row and its cells' ``(sheet, cell)`` addresses row by row, computed once per process per
    table shape (``key``, :meth:`Block.evaluate`'s) instead of once per evaluator."""
    hit = _BLOCK_ADDRESSES.get(key)
    if hit is None or hit[0] != tuple(c.header for c in t.columns):
        hit = _BLOCK_ADDRESSES[key] = (tuple(c.header for c in t.columns),
                                       tuple(tuple((t.sheet, t.cell(c.key, i)) for c in t.columns)
                                             for i in range(t.rows)))
    return hit


class HashedTuple(tuple):
    """A tuple that computes its hash once: equal to (and hashed like) the plain tuple of the same items. A plan's
    blocks and columns are parts of the registry-call memo keys and of the coercion's table cache, hashed on every
    call that receives them (a Models block has 800 cells); each block and input column is built once per plan, so
    its hash is computed once.

    >>> h = HashedTuple(((1.0, "a"), (2.0, "b")))
    >>> h == ((1.0, "a"), (2.0, "b")), hash(h) == hash(((1.0, "a"), (2.0, "b"))), {h: 1}[((1.0, "a"), (2.0, "b"))]
    (True, True, 1)
    """

    def __init__(self, items: Any = ()) -> None:
        self._hash = tuple.__hash__(self)

    def __hash__(self) -> int:
        return self._hash


class ValueToken:
    """One object per distinct memo-key part of a column or block argument (:func:`value_token`): compared by
    identity and hashed by ``id`` in C, where the part itself (a tuple holding a
    :class:`HashedTuple`, or a column's cells with their types) costs a Python ``__hash__`` call or a hash of every
    cell each time a key holding it is looked up."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<ValueToken {id(self):#x}>"


VALUE_TOKENS_LIMIT = 1_024
"""Parts :func:`value_token` keeps before it starts over: a 20-route plan makes about 134 (counted over 60 plans),
so about eight plans' worth. The table holds each part (a plan's blocks and columns): with 8,192 a recalculating
worker kept about 61 plans' blocks and its peak RSS rose 98.6 -> 117.6 MiB over 25 -> 400 plans (92.6 -> 102.7 on
ff1b3ce); an equal part after the table is emptied gets a new token (a memo miss, same value)."""
_TOKENS: dict[Any, ValueToken] = {}
_COLUMN_TOKENS: dict[tuple[tuple[type, ...], tuple[Any, ...]], Any] = {}
""":func:`column_token`'s tokens by ``(cell types, cells)`` of a column (a row's range: 10-12 cells; a 20-route plan's
Results and tornado make 52 distinct ones, plans 1-6 of ``/tmp/bench-plans-16`` counted), each :data:`_TOKENS`'
token for that column's part; at most :data:`VALUE_TOKENS_LIMIT` entries, and emptied with :data:`_TOKENS`."""


def value_token(part: Any) -> Any:
    """The registry-call memo key's part for a column or block argument: one :class:`ValueToken` per distinct
    ``part`` (``(type, value)`` of a block, ``(list, cells with their types)`` of a column, as :meth:`Udf.evaluate`
    keyed them before), kept in ``_TOKENS`` (key: ``part``; at most :data:`VALUE_TOKENS_LIMIT` entries, then emptied).
    Two arguments get the same token exactly when their parts are equal while the table is not emptied; after it is,
    an equal part gets a new token (a memo miss where there was a hit: the call is made again, same value); a token
    is never reused (every memo key holding it holds it). An unhashable part is returned as it is (the memo's look-up
    then raises ``TypeError``: computed, not remembered, as before).

    >>> a = value_token((list, ((float, 1.0),)))
    >>> a is value_token((list, ((float, 1.0),))), a is value_token((list, ((int, 1),)))
    (True, False)
    """
    try:
        tok = _TOKENS.get(part)
    except TypeError:
        return part
    if tok is None:
        if len(_TOKENS) >= VALUE_TOKENS_LIMIT:
            _TOKENS.clear()
            _COLUMN_TOKENS.clear()  # (its tokens are _TOKENS' own: emptied with it)
        tok = _TOKENS[part] = ValueToken()
    return tok


def column_token(types: tuple[type, ...], cells: list[Any]) -> Any:
    """``value_token((list, tuple(zip(types, cells))))``, the memo key's part of a column (``types``: its cells'
    types), found first by ``(types, tuple(cells))`` in :data:`_COLUMN_TOKENS`: two flat tuples, built, hashed and
    compared in C, where the part is a tuple of one pair per cell (built, hashed and compared pair by pair on every
    call of a generated site with a column no evaluator keeps, a row's range such as ``$AG4:$AR4``). The two keys
    are equal exactly when the parts are (each compares the same types and the same cells, in order, a cell equal to
    itself by identity as a tuple compares it), and :data:`_COLUMN_TOKENS` is emptied whenever :data:`_TOKENS` is,
    so the answer is always :func:`value_token`'s. Unhashable cells: the part itself, as :func:`value_token` gives
    it.

    >>> column_token((float, str), [1.0, "x"]) is value_token((list, ((float, 1.0), (str, "x"))))
    True
    """
    key = (types, tuple(cells))
    try:
        tok = _COLUMN_TOKENS.get(key)
    except TypeError:  # (an unhashable cell: value_token gives the part as it is)
        return value_token((list, tuple(zip(types, cells))))
    if tok is None:
        tok = value_token((list, tuple(zip(types, cells))))
        if len(_COLUMN_TOKENS) >= VALUE_TOKENS_LIMIT:
            _COLUMN_TOKENS.clear()
        _COLUMN_TOKENS[key] = tok
    return tok


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
            return compare(self.op, a, b)
        if self.op == "&":
            for v in (a, b):
                if isinstance(v, XlError):
                    return v
            return to_text(a) + to_text(b)
        x, y = to_number(a), to_number(b)
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
    c = truthy(args[0].evaluate(ev, row))
    if isinstance(c, XlError):
        return c
    if c:
        return args[1].evaluate(ev, row)
    return args[2].evaluate(ev, row) if len(args) > 2 else False


def _fn_iferror(ev: Evaluator, row: int, args: Sequence[Expr]) -> Any:
    v = args[0].evaluate(ev, row)
    return args[1].evaluate(ev, row) if isinstance(v, XlError) else v


_ALL_FLOATS = frozenset((float,))


def aggregate(pick: Callable[[list[float]], Any], values: Iterable[Any]) -> Any:
    """MIN, MAX or SUM (``pick``) over already-evaluated argument values, with Excel's rules: a range (a list)
    contributes its numbers only (text, booleans and empty cells ignored) and its first error; a scalar is coerced
    with :func:`to_number` (its error returned). No numbers gives 0. ``values`` may be a generator: it is consumed
    only up to the first error, so the interpreter and the compiled closures (both call this) evaluate the same
    arguments in the same order. Example: ``aggregate(max, [[1, "x", None], 2.5])`` is 2.5."""
    nums: list[float] = []
    for v in values:
        t = type(v)
        if t is float:  # the commonest scalar: to_number(v) is v itself
            nums.append(v)
            continue
        if t is list and _ALL_FLOATS.issuperset(map(type, v)):  # a range of numbers only (found in C): each cell
            nums += v  # is what the loop below appends, in order
            continue
        if isinstance(v, list):  # ranges: numbers only, text and empty ignored
            for x in v:
                if type(x) is float:  # the commonest cell: a number (float(x) is x itself)
                    nums.append(x)
                    continue
                if isinstance(x, XlError):
                    return x
                if isinstance(x, (int, float)) and not isinstance(x, bool):
                    nums.append(float(x))
        else:
            n = to_number(v)
            if isinstance(n, XlError):
                return n
            nums.append(n)
    return pick(nums) if nums else 0.0


def _fn_minmax(pick: Callable[[list[float]], Any]) -> Callable[[Evaluator, int, Sequence[Expr]], Any]:
    def f(ev: Evaluator, row: int, args: Sequence[Expr]) -> Any:
        return aggregate(pick, (a.evaluate(ev, row) for a in args))

    return f


def _fn_andor(want_all: bool) -> Callable[[Evaluator, int, Sequence[Expr]], Any]:
    def f(ev: Evaluator, row: int, args: Sequence[Expr]) -> Any:
        vals = []
        for a in args:
            t = truthy(a.evaluate(ev, row))
            if isinstance(t, XlError):
                return t
            vals.append(t)
        return all(vals) if want_all else any(vals)

    return f


def _match(key: Any, cells: list[Any]) -> Any:
    """``MATCH(key, cells, 0)``: the 1-based position of the first cell :func:`equal_key` to ``key``, else #N/A.
    A plain text key (the commonest: a route, fleet or model name) is compared as ``equal_key`` compares it, written
    out: a cell matches when it is a non-empty text (an error's text too) whose lower case is the key's, so the
    key is lowered once instead of once per cell."""
    if type(key) is str:
        low = key.lower()
        for i, c in enumerate(cells):
            if isinstance(c, str) and c != "" and c.lower() == low:
                return float(i + 1)
        return NA
    if isinstance(key, XlError):
        return key
    for i, c in enumerate(cells):
        if equal_key(c, key):
            return float(i + 1)
    return NA


def _fn_match(ev: Evaluator, row: int, args: Sequence[Expr]) -> Any:
    return _match(args[0].evaluate(ev, row), args[1].evaluate(ev, row))


def _fn_index(ev: Evaluator, row: int, args: Sequence[Expr]) -> Any:
    cells = args[0].evaluate(ev, row)
    i = to_number(args[1].evaluate(ev, row))
    if isinstance(i, XlError):
        return i
    if not 1 <= int(i) <= len(cells):
        return XlError("#REF!")
    # a reference to an empty cell: 0 to arithmetic and comparisons (Bin coerces None), empty to a function argument
    # (xlwings and the formulas engine hand a UDF None for it)
    return cells[int(i) - 1]


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
        if all(equal_key(cr[k], c) for cr, c in zip(crit_ranges, crits)):
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
                return bool(compare(op, float(cell), y))
    return equal_key(cell, crit)


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


def row_errors(spec: Any, i: int) -> bool:
    """Whether argument ``i`` of registry function ``spec`` reads its range row by row (``Arg.row_errors``): an
    error in a row the function skips is then not the result, so the error reaches the function in place."""
    args = spec.args
    return i < len(args) and args[i].row_errors


def block_error(ev: Evaluator, block: tuple[tuple[Any, ...], ...]) -> XlError | None:
    """The first Excel error in a block's cells, row by row (None: no error): the result of a registry call that
    receives the block. Scanned once per block per evaluator: a plan's blocks are read once (:meth:`Block.evaluate`)
    and every fleet or provider function of every route receives the same block object (a Models block has 800
    cells). Remembered by identity, with the block held so that its ``id`` cannot be reused.

    >>> block_error(Evaluator({}, {}), (("name", "x"), (1.0, NA)))
    '#N/A'
    """
    seen = ev.__dict__.get("_block_errors")
    if seen is None:
        seen = ev.__dict__["_block_errors"] = {}
    hit = seen.get(id(block))
    if hit is not None and hit[0] is block:
        return hit[1]
    # the cells' types first, found in C (a block is about 700 cells, and most hold no error): the cells looked
    # at one by one only when one of them is an error
    err = (next((x for r in block for x in r if isinstance(x, XlError)), None)
           if any(issubclass(t, XlError) for t in set(map(type, chain.from_iterable(block)))) else None)
    seen[id(block)] = (block, err)
    return err


_MISSING = object()
_INF = math.inf
_NEG_INF = -math.inf
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
        for i, a in enumerate(self.args):
            v = a.evaluate(ev, row)
            if isinstance(v, XlError):
                return v
            if isinstance(v, list):
                err = next((x for x in v if isinstance(x, XlError)), None)
                if err is not None and not row_errors(spec, i):  # an error inside a range is the result
                    return err
                v = [[x] for x in v]
            elif isinstance(v, tuple):  # a Block: rows of cells
                err = block_error(ev, v)
                if err is not None and not row_errors(spec, i):
                    return err
            raw.append(v)
        memo = ev.memo
        key = None
        if memo is not None:
            # the type too: TRUE == 1 == 1.0 in Python; a column (list of one-cell rows) by its cells' values, so the
            # many cells that total one backend's column (BACKEND_SUM, OUTAGE_SUM per route) compute it once
            # (a column or block by its value_token: equal parts, the same token)
            key = (self.name, *(value_token((list, tuple((type(r[0]), r[0]) for r in v))) if isinstance(v, list)
                                else value_token((type(v), v)) if isinstance(v, tuple) else (type(v), v)
                                for v in raw))
            try:
                hit = memo.get(key, _MISSING)
            except TypeError:  # an unhashable argument: computed, not remembered
                hit, key = _MISSING, None
            if hit is not _MISSING:
                return hit
        result = self._call(spec, raw)
        # a spilled column is not shared between cells
        if key is not None and memo is not None and not isinstance(result, list):
            if len(memo) > MEMO_LIMIT:
                memo.clear()
            memo[key] = result
        return result

    @staticmethod
    def _call(spec: Any, raw: list[Any]) -> Any:
        result = call_sheet_function(spec, *raw)
        t = type(result)
        if t is str:  # a text or a refusal's message: as it is (the tests below are False for it)
            return result
        if t is float:  # the commonest result: NaN or an infinity is #NUM!, as below
            return result if _NEG_INF < result < _INF else NUM
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
