"""Expressions compiled to closures: the same values as :meth:`planner.excel.expr.Expr.evaluate`, without walking
the expression tree per cell.

``compile_expr(expr, row)`` turns one formula cell's expression into a function of the evaluator, once per process:
the cell addresses of its references are resolved for its row, each operator and built-in picks its code once, and
the registry calls keep the evaluator's memo (a call site as one generated function, :func:`_udf`, whose keys are
equal exactly when :class:`~planner.excel.expr.Udf`'s are, in a shorter form). Each closure mirrors
the interpreted ``evaluate`` of its node step for step (operands in the same order, errors in the same order, the
same coercions), so the values are the same objects' values, bit for bit; ``tests/test_compiled_expr.py`` checks
every formula cell of the samples and of generated plans against the interpreter. An expression type the compiler
does not know is evaluated by its own ``evaluate``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from types import MappingProxyType
from typing import Any

from planner.coerce import Column
from planner.excel.expr import (
    _MISSING,
    MEMO_LIMIT,
    At,
    Bin,
    Block,
    Cells,
    Evaluator,
    Expr,
    Fn,
    Lit,
    Ref,
    Udf,
    _crit,
    _match,
    _scalar_args,
    aggregate,
    block_error,
    block_key,
    column_token,
    row_errors,
    value_token,
)
from planner.excel.values import (
    _COMPARISONS,
    DIV0,
    NAME,
    XlError,
    compare,
    equal_key,
    to_number,
    to_text,
    truthy,
)

Compiled = Callable[[Evaluator], Any]


def compile_expr(expr: Expr, row: int) -> Compiled:
    """A function ``f(ev)`` giving ``expr.evaluate(ev, row)`` (the formula cell's data row ``row``)."""
    comp = _COMPILERS.get(type(expr))
    if comp is None:
        return lambda ev: expr.evaluate(ev, row)
    return comp(expr, row)


def _lit(e: Lit, row: int) -> Compiled:
    v = e.value
    v = float(v) if isinstance(v, int) and not isinstance(v, bool) else v
    return lambda ev: v


def _get(key: tuple[str, str]) -> Compiled:
    # Evaluator.get returns the stored value ("" for ""): the store's value (a ValueStore: None when absent)
    return lambda ev: ev.values[key]


def _ref(e: Ref, row: int) -> Compiled:
    t = e.table
    if 0 <= row < t.rows:
        return _get(e._addresses[row])
    return _get((t.sheet, t.cell(e.key, row)))


def _at(e: At, row: int) -> Compiled:
    return _get((e.table.sheet, e.table.cell(e.key, e.row_index)))


def _cells(e: Cells, row: int) -> Compiled:
    t = e.table
    if e.last is None:
        first = e.first
        return lambda ev: ev.column(t, first)
    r = row if e.fixed_row is None else e.fixed_row
    i, j = t.index(e.first), t.index(e.last)
    keys = tuple((t.sheet, t.cell(c.key, r)) for c in t.columns[i : j + 1])
    if len(keys) == 1:
        only = keys[0]
        return lambda ev: [ev.values[only]]
    # the cells read in one C call, left to right, each a subscript as the list comprehension's (a store's
    # __missing__ still answers a cell not there: blank, or computed on first read in a bar's store)
    read = itemgetter(*keys)
    return lambda ev: list(read(ev.values))


def _block(e: Block, row: int) -> Compiled:
    t = e.table
    key = block_key(t)  # Block.evaluate's key

    def f(ev: Evaluator) -> Any:
        cache = ev.__dict__.get("_blocks")  # the block Block.evaluate read for this evaluator, without its key
        if cache is not None:
            block = cache.get(key)
            if block is not None:
                return block
        return e.evaluate(ev, row)

    return f


def _bin(e: Bin, row: int) -> Compiled:
    fa, fb = compile_expr(e.a, row), compile_expr(e.b, row)
    op = e.op
    if op in ("=", "<>", "<", ">", "<=", ">="):
        on_values = _cmp_helper(op)  # (the generated code's comparison: one rule for both)

        def cmp(ev: Evaluator) -> Any:
            return on_values(fa(ev), fb(ev))

        return cmp
    if op == "&":
        def concat(ev: Evaluator) -> Any:
            a, b = fa(ev), fb(ev)
            if isinstance(a, XlError):
                return a
            if isinstance(b, XlError):
                return b
            return to_text(a) + to_text(b)

        return concat

    if op == "+":
        def add(ev: Evaluator) -> Any:
            x, y = fa(ev), fb(ev)
            if type(x) is float and type(y) is float:  # to_number's result for floats: themselves
                return x + y
            return _add(x, y)

        return add
    if op == "-":
        def sub(ev: Evaluator) -> Any:
            x, y = fa(ev), fb(ev)
            if type(x) is float and type(y) is float:  # to_number's result for floats: themselves
                return x - y
            return _sub(x, y)

        return sub
    if op == "*":
        def mul(ev: Evaluator) -> Any:
            x, y = fa(ev), fb(ev)
            if type(x) is float and type(y) is float:  # to_number's result for floats: themselves
                return x * y
            return _mul(x, y)

        return mul
    if op == "/":
        def div(ev: Evaluator) -> Any:
            x, y = fa(ev), fb(ev)
            if type(x) is float and type(y) is float:
                return DIV0 if y == 0 else x / y
            return _div(x, y)

        return div
    return lambda ev: e.evaluate(ev, row)  # pragma: no cover  (Bin.evaluate raises for an unknown operator)


def _fn(e: Fn, row: int) -> Compiled:
    args = [compile_fast(a, row) for a in e.args]
    build = _FN_COMPILERS.get(e.name)
    if build is None:  # pragma: no cover  (every allowed built-in has one)
        return lambda ev: e.evaluate(ev, row)
    return build(args)


def _c_if(args: Sequence[Compiled]) -> Compiled:
    cond = args[0]
    then = args[1]
    other = args[2] if len(args) > 2 else None

    def f(ev: Evaluator) -> Any:
        c = cond(ev)
        if c is True:  # truthy's result for a boolean: itself
            return then(ev)
        if c is False:
            return other(ev) if other is not None else False
        c = truthy(c)
        if isinstance(c, XlError):
            return c
        if c:
            return then(ev)
        return other(ev) if other is not None else False

    return f


def _c_iferror(args: Sequence[Compiled]) -> Compiled:
    a, b = args[0], args[1]

    def f(ev: Evaluator) -> Any:
        v = a(ev)
        return b(ev) if isinstance(v, XlError) else v

    return f


def _c_minmax(pick: Callable[[list[float]], Any]) -> Callable[[Sequence[Compiled]], Compiled]:
    def build(args: Sequence[Compiled]) -> Compiled:
        def f(ev: Evaluator) -> Any:
            return aggregate(pick, (a(ev) for a in args))

        return f

    return build


def _c_andor(want_all: bool) -> Callable[[Sequence[Compiled]], Compiled]:
    def build(args: Sequence[Compiled]) -> Compiled:
        def f(ev: Evaluator) -> Any:
            vals = []
            for a in args:
                t = truthy(a(ev))
                if isinstance(t, XlError):
                    return t
                vals.append(t)
            return all(vals) if want_all else any(vals)

        return f

    return build


def _c_index(args: Sequence[Compiled]) -> Compiled:
    ca, ci = args[0], args[1]

    def f(ev: Evaluator) -> Any:
        cells = ca(ev)
        i = to_number(ci(ev))
        if isinstance(i, XlError):
            return i
        if not 1 <= int(i) <= len(cells):
            return XlError("#REF!")
        return cells[int(i) - 1]

    return f


def _c_match(args: Sequence[Compiled]) -> Compiled:
    ck, cc = args[0], args[1]
    return lambda ev: _match(ck(ev), cc(ev))


def _c_isnumber(args: Sequence[Compiled]) -> Compiled:
    a = args[0]

    def f(ev: Evaluator) -> Any:
        v = a(ev)
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    return f


def _c_sumifs(args: Sequence[Compiled]) -> Compiled:
    total_f = args[0]
    range_fs = [args[i] for i in range(1, len(args), 2)]
    crit_fs = [args[i] for i in range(2, len(args), 2)]

    def f(ev: Evaluator) -> Any:
        total_cells = total_f(ev)
        crit_ranges = [g(ev) for g in range_fs]
        crits = [g(ev) for g in crit_fs]
        err = _scalar_args(crits)
        if err is not None:
            return err
        total = 0.0
        pairs = list(zip(crit_ranges, crits))
        for k, v in enumerate(total_cells):
            if all(equal_key(cr[k], c) for cr, c in pairs):
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    total += float(v)
        return total

    return f


def _c_countifs(args: Sequence[Compiled]) -> Compiled:
    range_fs = [args[i] for i in range(0, len(args), 2)]
    crit_fs = [args[i] for i in range(1, len(args), 2)]

    def f(ev: Evaluator) -> Any:
        crit_ranges = [g(ev) for g in range_fs]
        crits = [g(ev) for g in crit_fs]
        n = 0
        pairs = list(zip(crit_ranges, crits))
        for k in range(len(crit_ranges[0])):
            if all(_crit(cr[k], c) for cr, c in pairs):
                n += 1
        return float(n)

    return f


_FN_COMPILERS: dict[str, Callable[[Sequence[Compiled]], Compiled]] = {
    "IF": _c_if,
    "IFERROR": _c_iferror,
    "AND": _c_andor(True),
    "OR": _c_andor(False),
    "MIN": _c_minmax(min),
    "MAX": _c_minmax(max),
    "SUM": _c_minmax(lambda xs: float(sum(xs))),
    "INDEX": _c_index,
    "MATCH": _c_match,
    "ISNUMBER": _c_isnumber,
    "SUMIFS": _c_sumifs,
    "COUNTIFS": _c_countifs,
}


def _udf(e: Udf, row: int) -> Compiled:
    """A registry call, as one generated function per call-site shape: its arguments are evaluated in order, an
    Excel error among them is the result (the first, in argument order, as :meth:`Udf.evaluate`), the call is
    looked up in the evaluator's memo and made once per distinct arguments.

    An argument's control flow, comparisons, arithmetic and cell reads are written inline, as :func:`compile_fast`
    writes a cell's (:class:`_Gen`; any other node is its closure); a literal argument (a field name, a month
    number) is known when compiled: its value and its part of the memo key are constants.

    The memo key is ``(name, part, part, ...)``: a float or plain text argument is its own part (the commonest;
    a float never equals a text, nor a tuple), any other value ``(type, value)`` as :meth:`Udf.evaluate` keys it
    (``TRUE``, ``1`` and ``1.0`` stay apart), a block the :func:`~planner.excel.expr.value_token` of its
    ``(type, value)`` (made once per evaluator and block, kept with it), a column the token of its cells with their
    types (:func:`column_arg`): a token is hashed in C, where the part it stands for was hashed again (a block's by
    a Python ``__hash__`` call) on every look-up. Two calls share a key exactly when :meth:`Udf.evaluate`'s keys are
    equal. A column no evaluator keeps (a row's range, read anew by each call) is keyed from its cells
    (:func:`_arg_key`) and made the one-cell rows the function receives only when the call is made (:func:`_rows`,
    on a memo miss)."""
    src, consts = _udf_source(e, row, inline=True)
    if src is None:  # an argument too large to write inline: each argument its closure
        src, consts = _udf_source(e, row, inline=False)
    assert src is not None
    factory = _UDF_FACTORIES.get(src)
    if factory is None:
        scope = dict(_HELPERS)
        scope.update(_UDF_HELPERS)
        exec(compile(src, "<planner.excel.compiled udf>", "exec"), scope)  # noqa: S102  (source built from the expression's node kinds alone, no text of a workbook)
        factory = _UDF_FACTORIES[src] = scope["_factory"]
    return factory(*consts)


def _udf_source(e: Udf, row: int, *, inline: bool) -> tuple[str | None, list[Any]]:
    """The generated source of :func:`_udf`'s call site and its constants; ``(None, [])`` when ``inline`` and the
    arguments hold more than :data:`GENERATED_MAX_NODES` nodes."""
    g = _Gen()
    name = g.const(e.name)
    blocks = False  # whether a table block is an argument (the evaluator's blocks read once a call)
    general = False  # whether an argument may be a column not kept (its cells, made rows at the call: _cells)
    lines: list[str] = []
    raw: list[str] = []
    parts: list[str] = []
    for i, a in enumerate(e.args):
        lit = _literal_part(a)
        if lit is not None:  # a float or a plain text known now: no call, no test
            c = g.const(lit)
            raw.append(c)
            parts.append(c)
            continue
        v = f"v{i}"
        if type(a) is Block:  # always the evaluator's block (a tuple of row tuples), read once per evaluator
            blocks = True
            t = a.table
            # the evaluator's blocks are keyed by the table's identity as Block.evaluate keys its cache, written as
            # one text: a text's hash is kept in the object, where a tuple of the columns' keys is hashed again on
            # every look-up (a Forecast table has 34 columns, and every month cell of every route passes three)
            key = g.const(block_key(t))
            lines += [f"h = _blocks.get({key})",
                      "if h is None:",  # the block and its first error (block_error), kept for the evaluator
                      f"    h = _blocks[{key}] = ((b := {g.const(compile_fast(a, row))}(ev)), _block_error(ev, b),",
                      "                           _value_token((type(b), b)))",
                      f"{v}, err, p{i} = h",
                      f"if err is not None and not _row_errors(spec, {i}):",
                      "    return err"]
            raw.append(v)
            parts.append(f"p{i}")
            continue
        code = g.expr(a, row) if inline else f"{g.const(compile_fast(a, row))}(ev)"
        lines += [f"{v} = {code}",
                  f"t = type({v})",
                  "if t is float or t is str:",  # an XlError is a str subclass: not here
                  f"    p{i} = {v}",
                  "elif t is bool or t is _NoneType:",  # _arg's answer for them, without the call
                  f"    p{i} = (t, {v})",
                  "else:",
                  # a column the evaluator keeps, prepared and without an error (most column arguments: a per-route
                  # BACKEND_SUM's two): column_arg's rows and part, as _arg answers, without the call
                  f"    h = ev.__dict__.get('column_args', _NO_COLUMNS).get(id({v}))",
                  f"    if type(h) is tuple and h[0] is {v} and h[1] is None:",
                  f"        {v}, p{i} = h[3], h[2]",
                  "    else:",
                  # (a column not kept stays its cells here: its one-cell rows are built at the call, on a miss)
                  f"        x = _arg_key(ev, spec, {i}, {v})",
                  "        if type(x) is not tuple:",
                  "            return x",
                  f"        {v}, p{i} = x",
                  f"        if type({v}) is list:",  # (only a column not kept is a plain list here: see _rows)
                  "            _cells = True"]
        general = True
        raw.append(v)
        parts.append(f"p{i}")
    if inline and g.nodes > GENERATED_MAX_NODES:
        return None, []
    body = "\n".join("        " + line for line in lines)
    src = (f"def _factory({', '.join(f'_c{k}' for k in range(len(g.consts)))}):\n"
           "    def call(ev):\n"
           f"        spec = ev.functions.get({name})\n"
           "        if spec is None:\n"
           "            return _NAME\n"
           "        _v = ev.values\n"
           + ("        _blocks = ev.__dict__.get('_block_args')\n"
              "        if _blocks is None:\n"
              "            _blocks = ev.__dict__['_block_args'] = {}\n" if blocks else "")
           + ("        _cells = False\n" if general else "")
           + (body + "\n" if body else "")
           + f"        key = ({name}, {''.join(p + ', ' for p in parts)})\n"
           "        memo = ev.memo\n"
           "        if memo is not None:\n"
           "            try:\n"
           "                hit = memo.get(key, _MISSING)\n"
           "            except TypeError:  # an unhashable argument: computed, not remembered\n"
           "                hit, key = _MISSING, None\n"
           "            if hit is not _MISSING:\n"
           "                return hit\n"
           + (f"        result = _Udf._call(spec, [_rows(a) for a in ({''.join(r + ', ' for r in raw)})] if _cells"
              f" else [{', '.join(raw)}])\n" if general else f"        result = _Udf._call(spec, [{', '.join(raw)}])\n")
           + "        if key is not None and memo is not None and not isinstance(result, list):\n"
           "            if len(memo) > _MEMO_LIMIT:\n"
           "                memo.clear()\n"
           "            memo[key] = result\n"
           "        return result\n"
           "    return call\n")
    return src, g.consts


def _literal_part(a: Expr) -> Any:
    """A literal argument's value as the call receives it (:func:`_lit`'s: an int as a float) when it is a float or a
    plain text, else None (evaluated per call, as any other argument)."""
    if type(a) is not Lit:
        return None
    v = a.value
    v = float(v) if isinstance(v, int) and not isinstance(v, bool) else v
    return v if type(v) is float or type(v) is str else None


def _arg(ev: Evaluator, spec: Any, i: int, v: Any) -> Any:
    """One argument of a registry call that is neither a float nor a plain text: ``(value as the function receives
    it, its part of the memo key)``, or the Excel error that is the call's result (:func:`_udf`'s generated code
    returns it). The steps of :meth:`Udf.evaluate` for that argument. A plain list (a column, the commonest
    argument here) is looked at first: it is never an error nor a tuple."""
    if type(v) is not list:
        if isinstance(v, XlError):
            return v
        if not isinstance(v, list):
            if isinstance(v, tuple):  # a Block: rows of cells
                err = block_error(ev, v)
                if err is not None and not row_errors(spec, i):
                    return err
            return v, (type(v), v)
    known = ev.__dict__.get("column_args")
    column: list[Any] = v
    hit = known.get(id(column)) if known is not None else None
    if hit is column and known is not None:  # an input column kept but not prepared yet: prepared on
        hit = known[id(column)] = column_arg(column)  # its first registry call
    if hit is not None and hit[0] is v:  # an input column prepared once per plan (column_arg)
        if hit[1] is not None and not row_errors(spec, i):
            return hit[1]
        return hit[3], hit[2]
    types = tuple(map(type, v))
    if not _PLAIN_CELLS.issuperset(types):  # (found in C: most columns hold numbers, texts and blanks only)
        for x in v:
            if isinstance(x, XlError) and not row_errors(spec, i):  # an error in a range is the result
                return x
    return [[x] for x in v], (list, tuple(zip(types, v)))


def _arg_key(ev: Evaluator, spec: Any, i: int, v: Any) -> Any:
    """:func:`_arg` as a generated call site uses it: ``(value, its part of the memo key)`` or the Excel error that is
    the call's result, where a column no evaluator keeps (a plain list of cells: a row's range such as
    ``$AG4:$AR4``, read anew by every call) stays its cells and its part is already the token of ``(list, cells
    with their types)``; :func:`_rows` turns the cells into :func:`_arg`'s one-cell rows when the call is made (a
    memo miss). A memo hit, most such calls (the tornado's bar ends' ``MAX_UTILIZATION`` and ``HEADROOM_MULTIPLE``
    cells), then builds no rows. Any other argument: :func:`_arg`'s answer, a tuple's or a column's part as its
    token. ``(_rows(x[0]), x[1])`` of the answer ``x`` is :func:`_arg`'s answer with its part tokenized
    (tests/test_speed27.py).

    >>> cells, part = _arg_key(Evaluator({}, {}), None, 0, [1.0, "x"])
    >>> cells, _rows(cells), part is value_token((list, ((float, 1.0), (str, "x"))))
    ([1.0, 'x'], [[1.0], ['x']], True)
    """
    if isinstance(v, list):
        known = ev.__dict__.get("column_args")
        # a kept column's id is in known (which holds it, so no other live list has that id): _arg's steps
        if known is None or id(v) not in known:
            if type(v) is not list:  # a list's subclass (a Column): its cells as a plain list, whose rows _arg gives
                v = list(v)
            types = tuple(map(type, v))
            if not _PLAIN_CELLS.issuperset(types):  # _arg's error scan, in its order
                for x in v:
                    if isinstance(x, XlError) and not row_errors(spec, i):
                        return x
            return v, column_token(types, v)
    x = _arg(ev, spec, i, v)
    if type(x) is tuple:
        p = x[1]
        if type(p) is tuple and isinstance(p[1], tuple):  # a tuple's part (type, cells) as its token
            return x[0], value_token(p)
    return x


def _rows(v: Any) -> Any:
    """An argument as the registry function receives it, from :func:`_arg_key`'s value: a plain list (a column no
    evaluator keeps, as its cells) as one-cell rows, as :func:`_arg` gives it; anything else (a float, a text, a
    kept column's :class:`~planner.coerce.Column`, a block) as it is.

    >>> _rows([1.0, None]), _rows(2.0)
    ([[1.0], [None]], 2.0)
    """
    return [[x] for x in v] if type(v) is list else v


_PLAIN_CELLS = frozenset((float, str, int, bool, type(None)))
"""Cell types that are never an Excel error (an :class:`XlError` is a ``str`` subclass, its type not ``str``)."""


_UDF_FACTORIES: dict[str, Callable[..., Compiled]] = {}
_UDF_HELPERS: dict[str, Any] = {"_NAME": NAME, "_MISSING": _MISSING, "_MEMO_LIMIT": MEMO_LIMIT, "_Udf": Udf,
                                "_block_error": block_error, "_row_errors": row_errors, "_arg_key": _arg_key,
                                "_rows": _rows, "_NO_COLUMNS": MappingProxyType({}),
                                "_NoneType": type(None), "_value_token": value_token}


def column_arg(cells: list[Any]) -> tuple[list[Any], XlError | None, Any, list[list[Any]]]:
    """What a registry call makes of a column argument ``cells``, computed once: ``(cells, first error or None, its
    part of the memo key, the column as one-cell rows)``, as the loop in :func:`_udf` computes it per call. An
    evaluator that returns the same list for a column on every call (:class:`planner.validate.fastpath`'s, for the
    columns of input sheets) keeps these in ``ev.column_args[id(cells)]`` (the list held, so its ``id`` is not
    reused) and every call reading that column skips the scan, the key and the copy: a plan's per-route
    ``BACKEND_SUM`` and ``OUTAGE_SUM`` cells read the same 20-cell columns hundreds of times.

    >>> cells, error, part, rows = column_arg([1.0, "x"])
    >>> cells, error, rows, part is value_token((list, ((float, 1.0), (str, "x"))))
    ([1.0, 'x'], None, [[1.0], ['x']], True)
    >>> type(column_arg([1.0])[3]).__name__
    'Column'
    >>> column_arg([1.0, DIV0])[1]
    '#DIV/0!'
    """
    types = tuple(map(type, cells))
    # (the scan only when a cell's type may be an error's: found in C, as _arg's)
    error = (None if _PLAIN_CELLS.issuperset(types) else next((x for x in cells if isinstance(x, XlError)), None))
    # the key part and the rows even with an error: an Arg.row_errors argument reads the column past it; the rows
    # as a Column, which keeps its coerced cells for every call that receives it (planner.coerce.prepare_args); the
    # part's token found by the cells and their types (column_token: value_token's token)
    return cells, error, column_token(types, cells), Column(cells)


_COMPILERS: dict[type, Callable[[Any, int], Compiled]] = {
    Lit: _lit,
    Ref: _ref,
    At: _at,
    Cells: _cells,
    Block: _block,
    Bin: _bin,
    Fn: _fn,
    Udf: _udf,
}



def register(kind: type, compiler: Callable[[Any, int], Compiled]) -> None:
    """Compile expressions of ``kind`` (a template's own :class:`Expr` subclass) with ``compiler(expr, row)``."""
    _COMPILERS[kind] = compiler


# ---- generated code -----------------------------------------------------------------------------------------------
# The closures above cost one Python call per node: a per-route cell such as IF($A45="","",IF(Results!$D4="fleet",
# ...)) runs a dozen. compile_fast writes the nodes that are only control flow and cell reads (IF, IFERROR,
# ISNUMBER, comparisons, arithmetic, &, references and literals) as one Python expression of a generated function,
# step for step as the closures do them (operands in the same order, each evaluated once, the same helper for the
# same coercion); any other node (a registry call, a range, INDEX, MATCH, SUM ...) is its closure, called from that
# expression. The source depends only on the expression's shape, not on its addresses or literals (those are the
# generated factory's arguments), so one template column's cells share one compiled source.


def _cmp_helper(op: str) -> Callable[[Any, Any], Any]:
    opf = _COMPARISONS[op]

    def cmp(a: Any, b: Any) -> Any:  # values.compare, with its commonest operands answered first
        ta, tb = type(a), type(b)
        if ta is float and tb is float:  # compare's own result for two numbers
            return opf(a, b)
        if ta is str and tb is str:  # two plain texts (an XlError is a str subclass: not here)
            return opf(a.lower(), b.lower())
        if tb is str:  # a number or a blank against a plain text (IF($C5="",...)): compare's ranks, inline
            if ta is float:
                return opf(0, 1)
            if a is None:
                return opf("", b.lower())
        return compare(op, a, b)

    return cmp


def _add(x: Any, y: Any) -> Any:
    if type(x) is float and type(y) is float:
        return x + y
    x, y = to_number(x), to_number(y)
    if isinstance(x, XlError):
        return x
    if isinstance(y, XlError):
        return y
    return x + y


def _sub(x: Any, y: Any) -> Any:
    if type(x) is float and type(y) is float:
        return x - y
    x, y = to_number(x), to_number(y)
    if isinstance(x, XlError):
        return x
    if isinstance(y, XlError):
        return y
    return x - y


def _mul(x: Any, y: Any) -> Any:
    if type(x) is float and type(y) is float:
        return x * y
    x, y = to_number(x), to_number(y)
    if isinstance(x, XlError):
        return x
    if isinstance(y, XlError):
        return y
    return x * y


def _div(x: Any, y: Any) -> Any:
    if type(x) is float and type(y) is float:
        return DIV0 if y == 0 else x / y
    x, y = to_number(x), to_number(y)
    if isinstance(x, XlError):
        return x
    if isinstance(y, XlError):
        return y
    return DIV0 if y == 0 else x / y


def _index(cells: Any, i: Any) -> Any:  # _c_index's closure, on values
    i = to_number(i)
    if isinstance(i, XlError):
        return i
    if not 1 <= int(i) <= len(cells):
        return XlError("#REF!")
    return cells[int(i) - 1]


def _concat(a: Any, b: Any) -> Any:
    if isinstance(a, XlError):
        return a
    if isinstance(b, XlError):
        return b
    return to_text(a) + to_text(b)


_HELPERS: dict[str, Any] = {
    "_truthy": truthy, "_XlError": XlError, "_num_types": (int, float), "_bool": bool,
    "_index": _index, "_match": _match,
    "_op_add": _add, "_op_sub": _sub, "_op_mul": _mul, "_op_div": _div, "_op_cat": _concat,
    **{f"_cmp{i}": _cmp_helper(op) for i, op in enumerate(_COMPARISONS)},
}
_CMP_NAMES = {op: f"_cmp{i}" for i, op in enumerate(_COMPARISONS)}
_PY_OPS = {"=": "==", "<>": "!=", "<": "<", ">": ">", "<=": "<=", ">=": ">="}
"""Python's operator for each comparison, as :data:`~planner.excel.values._COMPARISONS` applies it."""
_ARITH_NAMES = {"+": "_op_add", "-": "_op_sub", "*": "_op_mul", "/": "_op_div", "&": "_op_cat"}
_FACTORIES: dict[str, Callable[..., Compiled]] = {}
GENERATED_MAX_NODES = 400
"""Largest expression (in nodes written inline) compiled to one generated function; a larger one keeps closures."""


class _Gen:
    def __init__(self) -> None:
        self.consts: list[Any] = []
        self.temps = 0
        self.nodes = 0

    def const(self, v: Any) -> str:
        self.consts.append(v)
        return f"_c{len(self.consts) - 1}"

    def temp(self) -> str:
        self.temps += 1
        return f"_t{self.temps}"

    def expr(self, e: Any, row: int) -> str:  # Any: the node's type is tested exactly (type(e) is ...), not narrowed
        self.nodes += 1
        t = type(e)
        if t is Lit:
            v = e.value
            return self.const(float(v) if isinstance(v, int) and not isinstance(v, bool) else v)
        if t is Ref:
            tb = e.table
            key = e._addresses[row] if 0 <= row < tb.rows else (tb.sheet, tb.cell(e.key, row))
            return f"_v[{self.const(key)}]"
        if t is At:
            return f"_v[{self.const((e.table.sheet, e.table.cell(e.key, e.row_index)))}]"
        if t is Bin and e.op in _CMP_NAMES and type(e.b) is Lit:
            # a comparison with a literal (IF($A45="", ...): most of a plan's comparisons): the helper's two common
            # cases written inline, the helper for the rest (the same steps; the literal has no evaluation of its own)
            name = _CMP_NAMES[e.op]
            b = e.b.value
            b = float(b) if isinstance(b, int) and not isinstance(b, bool) else b
            a = self.expr(e.a, row)
            c = self.const(b)
            self.nodes += 1
            v = self.temp()
            if type(b) is str and b == "" and e.op in ("=", "<>"):  # IF($A45="", ...): a text's lower case is ""
                return f"(({v} {_PY_OPS[e.op]} '') if type({v} := {a}) is str else {name}({v}, {c}))"  # iff it is
            if type(b) is str:  # plain text both sides: compared in lower case (an XlError is not a str here)
                low = self.const(b.lower())
                return f"(({v}.lower() {_PY_OPS[e.op]} {low}) if type({v} := {a}) is str else {name}({v}, {c}))"
            if type(b) is float:  # numbers both sides: compared as they are
                return f"(({v} {_PY_OPS[e.op]} {c}) if type({v} := {a}) is float else {name}({v}, {c}))"
            return f"{name}({a}, {c})"
        if t is Bin and (e.op in _CMP_NAMES or e.op in _ARITH_NAMES):
            name = _CMP_NAMES.get(e.op) or _ARITH_NAMES[e.op]
            return f"{name}({self.expr(e.a, row)}, {self.expr(e.b, row)})"
        if t is Fn and e.name == "IF" and len(e.args) in (2, 3):
            c = self.temp()
            cond = self.expr(e.args[0], row)
            then = self.expr(e.args[1], row)
            other = self.expr(e.args[2], row) if len(e.args) > 2 else "False"
            return (f"({then} if ({c} := {cond}) is True or ({c} is not False and ({c} := _truthy({c})) is True) "
                    f"else ({other} if {c} is False else {c}))")
        if t is Fn and e.name == "IFERROR" and len(e.args) == 2:
            v = self.temp()
            a = self.expr(e.args[0], row)
            return f"({self.expr(e.args[1], row)} if isinstance(({v} := {a}), _XlError) else {v})"
        if t is Cells and e.last is None:
            return f"ev.column({self.const(e.table)}, {self.const(e.first)})"
        if t is Fn and e.name == "INDEX" and len(e.args) == 2:
            return f"_index({self.expr(e.args[0], row)}, {self.expr(e.args[1], row)})"
        if t is Fn and e.name == "MATCH" and len(e.args) == 2:
            return f"_match({self.expr(e.args[0], row)}, {self.expr(e.args[1], row)})"
        if t is Fn and e.name == "ISNUMBER" and len(e.args) == 1:
            v = self.temp()
            return f"(isinstance(({v} := {self.expr(e.args[0], row)}), _num_types) and not isinstance({v}, _bool))"
        return f"{self.const(compile_expr(e, row))}(ev)"


def _inline(e: Any) -> bool:
    t = type(e)
    return (t is Bin and (e.op in _CMP_NAMES or e.op in _ARITH_NAMES)) or (
        t is Fn and e.name in ("IF", "IFERROR", "ISNUMBER", "INDEX", "MATCH"))


def compile_fast(expr: Expr, row: int) -> Compiled:
    """A function ``f(ev)`` giving ``expr.evaluate(ev, row)``, as :func:`compile_expr`, with the control flow,
    comparisons, arithmetic and cell reads of the expression written as one generated Python function (the other
    nodes are their closures). The same values as :func:`compile_expr`, step for step; an expression whose root
    is not one of those nodes (a reference, a registry call) is its closure, and so is one of more than
    :data:`GENERATED_MAX_NODES` nodes.

    >>> from planner.excel.expr import fn, lit
    >>> f = compile_fast(fn("IF", lit(1.0).eq(2.0), "a", fn("IFERROR", lit(1.0) / lit(0.0), "div")), 0)
    >>> f(Evaluator({}, {}))
    'div'
    """
    if not _inline(expr):
        return compile_expr(expr, row)
    g = _Gen()
    body = g.expr(expr, row)
    if g.nodes > GENERATED_MAX_NODES:
        return compile_expr(expr, row)
    factory = _FACTORIES.get(body)
    if factory is None:
        params = ", ".join(f"_c{i}" for i in range(len(g.consts)))
        src = (f"def _factory({params}):\n"
               f"    def cell(ev):\n"
               f"        _v = ev.values\n"
               f"        return {body}\n"
               f"    return cell\n")
        scope = dict(_HELPERS)
        exec(compile(src, "<planner.excel.compiled>", "exec"), scope)  # noqa: S102  (source built above from the template's own node kinds, no text of a workbook)
        factory = _FACTORIES[body] = scope["_factory"]
    return factory(*g.consts)
