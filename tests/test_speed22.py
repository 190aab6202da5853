"""Session 21, speed22: the registry's call path with its shortcuts gives what the general steps give.

- :func:`planner.coerce.call_sheet_function`'s test of the element-wise arguments' types (every one a plain scalar:
  no column to spill) against :func:`~planner.coerce._column_length`'s answer and the general path;
- the generated preparation of functions with whole-range arguments (``numbers`` / ``texts``) against
  :func:`~planner.coerce._prepare_args`: errors, refusals, blanks, texts, booleans and columns in each argument;
- the generated flag and boolean steps, the table blocks kept by identity (:func:`~planner.coerce._table_kept`);
- :meth:`planner.excel.expr.Udf._call`'s result mapping, :func:`planner.excel.compiled._arg` and the generated call
  site's memo key parts for TRUE/FALSE and blanks, against the steps they replaced (kept below);
- :func:`planner.errors.check_number`'s whole-number step.
"""

from __future__ import annotations

import dataclasses
import math
import random
from typing import Any

import numpy as np
import pytest

from planner import coerce
from planner.coerce import Column, call_sheet_function, prepare_args
from planner.errors import ArgumentError, PlannerError, Refusal, check_fraction, check_number
from planner.excel import compiled
from planner.excel.expr import NUM, HashedTuple, Udf, block_error, row_errors
from planner.excel.values import DIV0, NA, XlError
from planner.registry import load

# ---- the replaced steps, as they were on main ff1b3ce ---------------------------------------------------------------


def _old_call_sheet_function(spec: Any, *raw: Any, errors_as_text: bool = True) -> Any:
    n = coerce._column_length(spec, raw)
    if n is None:
        return _old_call_one(spec, raw, errors_as_text)
    flat = [coerce.flatten(v) if a.elementwise and coerce.is_range(v) else None for a, v in zip(spec.args, raw)]
    column = []
    for row in range(n):
        row_args = [(cells[row] if len(cells) > 1 else cells[0]) if cells is not None else v
                    for cells, v in zip(flat, raw)]
        column.append([_old_call_one(spec, row_args, errors_as_text)])
    return column


def _old_call_one(spec: Any, raw: Any, errors_as_text: bool) -> Any:
    try:
        return spec.impl(*coerce._prepare_args(spec, raw))
    except PlannerError as exc:
        if errors_as_text:
            return str(exc)
        raise


def _old_udf_result(result: Any) -> Any:
    if isinstance(result, float) and (math.isnan(result) or math.isinf(result)):
        return NUM
    if isinstance(result, int) and not isinstance(result, bool):
        return float(result)
    return result


def _old_arg(ev: Any, spec: Any, i: int, v: Any) -> Any:
    if isinstance(v, XlError):
        return v
    if isinstance(v, list):
        known = ev.__dict__.get("column_args")
        column: list[Any] = v
        hit = known.get(id(column)) if known is not None else None
        if hit is column and known is not None:
            hit = known[id(column)] = compiled.column_arg(column)
        if hit is not None and hit[0] is v:
            if hit[1] is not None and not row_errors(spec, i):
                return hit[1]
            return hit[3], hit[2]
        for x in v:
            if isinstance(x, XlError) and not row_errors(spec, i):
                return x
        return [[x] for x in v], (list, tuple(zip(map(type, v), v)))
    if isinstance(v, tuple):
        err = block_error(ev, v)
        if err is not None and not row_errors(spec, i):
            return err
    return v, (type(v), v)


def _old_check_number(argument: str, value: object, *, minimum: float | None = None,
                      maximum: float | None = None, exclusive_minimum: bool = False,
                      integer: bool = False) -> float:
    number: float
    if type(value) is float:
        number = value
    else:
        if type(value) is bool or not isinstance(value, (int, float)):
            raise ArgumentError(argument, value, "a number")
        number = float(value)
    if number != number or number in (math.inf, -math.inf):
        raise ArgumentError(argument, value, "a finite number")
    if integer and number != int(number):
        raise ArgumentError(argument, value, "a whole number")
    if minimum is not None:
        if exclusive_minimum and number <= minimum:
            raise ArgumentError(argument, value, f"a number > {minimum:g}")
        if not exclusive_minimum and number < minimum:
            raise ArgumentError(argument, value, f"a number >= {minimum:g}")
    if maximum is not None and number > maximum:
        raise ArgumentError(argument, value, "a number <= ...")
    return number


# ---- helpers ---------------------------------------------------------------------------------------------------------


def _recording(spec: Any) -> Any:
    """``spec`` with an implementation that returns the arguments it receives (what preparation made of them)."""
    return dataclasses.replace(spec, impl=lambda *a: ("called", repr(a), tuple(map(type, a))))


def _outcome(f: Any, *a: Any, **k: Any) -> tuple[Any, ...]:
    try:
        return ("ok", repr(f(*a, **k)))
    except (ArgumentError, Refusal) as exc:
        return ("error", type(exc).__name__, str(exc))


SCALARS: list[Any] = [1.0, 2.5, 3, 0, -0.0, 2.0**60, 2.0**53, -(2.0**53) + 1, math.nan, math.inf, True, False,
                      None, "", "  ", "abc", " Fleet ", "#N/A", " #DIV/0! ", "x: got 1, expected 2", "3", "1,000",
                      "50%", "TRUE", "no", NA, DIV0, np.float64(2.0), np.int64(4), np.bool_(True)]


def _column(rnd: random.Random, n: int) -> list[Any]:
    pool = [1.0, 2.0, 0.5, None, None, "a", " b ", "", "#N/A", "x: got 1, expected 2", 3, True, "7", -0.0]
    return [rnd.choice(pool) for _ in range(n)]


def _range_value(rnd: random.Random) -> Any:
    """A whole-range argument as an adapter or the evaluator hands it over: a Column, one-cell rows, a flat list, a
    1-cell range, a block, or a scalar."""
    n = rnd.choice([1, 2, 3, 5, 5, 20])
    cells = _column(rnd, n)
    if rnd.random() < 0.15:  # trailing blanks (cut at the longest used length)
        cells += [None] * rnd.randint(1, 3)
    if rnd.random() < 0.1:
        cells = [None] * n
    shape = rnd.randrange(6)
    if shape == 0:
        return Column(cells)
    if shape == 1:
        return [[c] for c in cells]
    if shape == 2:
        return list(cells)
    if shape == 3:
        return HashedTuple(tuple((c,) for c in cells))
    if shape == 4:
        return rnd.choice(SCALARS)
    return None


def _raw_for(spec: Any, rnd: random.Random) -> list[Any]:
    out: list[Any] = []
    for a in spec.args:
        if a.kind in ("numbers", "texts"):
            out.append(_range_value(rnd))
        elif a.kind == "table":
            out.append(rnd.choice([HashedTuple((("name", "x"), ("a", 1.0), ("b", "#N/A"))),
                                   HashedTuple((("name", "x"), ("a", 1.0), ("b", ""))), None, 1.0, "#REF!"]))
        else:
            out.append(rnd.choice(SCALARS) if rnd.random() < 0.85 else _range_value(rnd))
    k = rnd.random()
    if k < 0.1:
        out = out[:rnd.randint(0, len(out))]
    elif k < 0.13:
        out.append(1.0)  # too many arguments
    return out


RANGE_SPECS = [s for s in load().values() if any(a.kind in ("numbers", "texts") for a in s.args)]


# ---- the generated preparation of range functions --------------------------------------------------------------------


def test_every_function_is_prepared_by_generated_code() -> None:
    specs = list(load().values())
    assert all(coerce._prepared(s) is not None for s in specs)
    assert len(RANGE_SPECS) >= 10  # BACKEND_SUM, OUTAGE_SUM, MAX_UTILIZATION, FLEET_SUM ...


@pytest.mark.parametrize("seed", range(6))
def test_range_functions_prepare_as_the_general_steps(seed: int) -> None:
    """Random argument lists for every function with a numbers/texts argument: the same values (types too) and the
    same error as :func:`~planner.coerce._prepare_args`. Columns are fresh each time and shared between the two
    (the Column keeps its coerced cells: the second reader must get what the first got)."""
    rnd = random.Random(seed)
    n = 0
    for spec in RANGE_SPECS:
        for _ in range(120):
            raw = _raw_for(spec, rnd)
            want = _outcome(coerce._prepare_args, spec, raw)
            got = _outcome(prepare_args, spec, raw)
            assert got == want, (spec.name, raw)
            if got[0] == "ok":  # the types, not only the shown values
                assert [type(v) for v in prepare_args(spec, raw)] == [type(v) for v in coerce._prepare_args(spec,
                                                                                                           raw)]
            n += 1
    assert n == 120 * len(RANGE_SPECS)


def test_a_range_function_error_in_each_argument() -> None:
    """BACKEND_SUM and OUTAGE_SUM with an error, a refusal, a blank, a text, TRUE in each argument in turn (the others
    good): the error the general steps give, in argument order, the ranges coerced before the scalars."""
    good = {"BACKEND_SUM": ["a", Column(["a", "b", "a"]), Column([1.0, 2.0, 3.0])],
            "OUTAGE_SUM": ["a", "c", Column(["a", "a", "b"]), Column(["c", "c", "c"]), Column([1.0, None, 2.0])],
            "MAX_UTILIZATION": [Column([0.5, 0.7, None])],
            "BACKEND_ARGMAX": ["a", Column(["a", "b", "a"]), Column([1.0, 2.0, 3.0]), Column(["x", "y", "z"])]}
    bad = [NA, "#N/A", "x: got 1, expected 2", None, "", "abc", True, False, 2.5, Column(["#DIV/0!", 1.0]),
           Column(["abc", None]), Column([None, None]), [["#N/A"]], [[True]], Column(["a", "x: got 1, expected 2"])]
    n = 0
    for name, args in good.items():
        spec = load()[name]
        for i in range(len(args)):
            for b in bad:
                raw = list(args)
                raw[i] = b
                assert _outcome(prepare_args, spec, raw) == _outcome(coerce._prepare_args, spec, raw), (name, i, b)
                n += 1
        # two bad arguments: the first in argument order wins; a bad range beats a bad scalar before it (coerced first)
        raw = list(args)
        raw[0] = "abc" if spec.args[0].kind == "numbers" else 2.5
        raw[-1] = Column(["zzz", 1.0]) if spec.args[-1].kind == "numbers" else Column([1.0])
        assert _outcome(prepare_args, spec, raw) == _outcome(coerce._prepare_args, spec, raw)
    assert n > 100


def test_range_cut_at_the_longest_used_length() -> None:
    spec = load()["BACKEND_ARGMAX"]
    raw = ["a", Column(["a", "b", None, None]), Column([1.0, None, None, None]), Column(["x", "y", "z", None])]
    got = prepare_args(spec, raw)
    assert got == coerce._prepare_args(spec, raw) == ["a", ["a", "b", None], [1, None, None], ["x", "y", "z"]]
    # every range blank: None, then the function's own empty-cell rule (a required argument: refused)
    raw = ["a", Column([None, None]), Column([None, None]), Column([None, None])]
    assert _outcome(prepare_args, spec, raw) == _outcome(coerce._prepare_args, spec, raw)
    assert _outcome(prepare_args, spec, raw)[0] == "error"


def test_kept_column_cells_are_copied_per_call() -> None:
    spec = load()["BACKEND_SUM"]
    col = Column([1.0, 2.0, None])
    first = prepare_args(spec, ["a", Column(["a", "a", "b"]), col])
    first[2].append(99)
    assert prepare_args(spec, ["a", Column(["a", "a", "b"]), col])[2] == [1, 2, None]


# ---- call_sheet_function ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_call_sheet_function_is_the_general_path(seed: int) -> None:
    """Every registry function, random arguments (scalars, ranges at element-wise places, columns, blocks), a
    recording implementation: the same prepared arguments, the same spilled column, the same error text or error."""
    rnd = random.Random(100 + seed)
    n = 0
    for spec in load().values():
        rec = _recording(spec)
        for _ in range(25):
            raw = _raw_for(spec, rnd)
            for as_text in (True, False):
                want = _outcome(_old_call_sheet_function, rec, *raw, errors_as_text=as_text)
                got = _outcome(call_sheet_function, rec, *raw, errors_as_text=as_text)
                assert got == want, (spec.name, raw)
            n += 1
    assert n > 2000


def test_element_wise_ranges_still_spill() -> None:
    spec = _recording(load()["CAPACITY_TPM"])
    for raw in ([[[1.0], [2.0]], 100.0, 50.0], [1.0, [[100.0], [200.0]], 50.0], [1.0, 100.0, 50.0, [[0.1]]],
                [1.0, 100.0, 50.0, 0.0, 0.0, [[True], [False]]], [[[1.0], [2.0]], [[1.0], [2.0], [3.0]]]):
        assert _outcome(call_sheet_function, spec, *raw) == _outcome(_old_call_sheet_function, spec, *raw)
    assert isinstance(call_sheet_function(spec, [[1.0], [2.0]], 100.0, 50.0), list)
    # a block at an element-wise place is a range too (its cells counted)
    raw = [HashedTuple(((1.0,), (2.0,))), 100.0, 50.0]
    assert _outcome(call_sheet_function, spec, *raw) == _outcome(_old_call_sheet_function, spec, *raw)


def test_flags_and_booleans_in_each_argument() -> None:
    """CAPACITY_TPM (a flag among numbers) with TRUE, FALSE, 1, "yes", "maybe", blank, an error in each place."""
    spec = _recording(load()["CAPACITY_TPM"])
    base = [2.0, 1000.0, 200.0, 0.5, 0.0, True, None, 1.0]
    n = 0
    for i in range(len(base)):
        for v in (True, False, 1.0, 0, "yes", "N", "maybe", None, "", NA, "#N/A", np.bool_(False), 2.5):
            raw = list(base)
            raw[i] = v
            assert _outcome(call_sheet_function, spec, *raw) == _outcome(_old_call_sheet_function, spec, *raw)
            assert _outcome(prepare_args, spec, raw) == _outcome(coerce._prepare_args, spec, raw)
            n += 1
    assert n == 13 * len(base)


# ---- table blocks kept by identity -----------------------------------------------------------------------------------


def test_table_kept_is_the_table_by_value() -> None:
    rnd = random.Random(5)
    cells = [1.0, None, "", " ", "a", "#N/A", 2, True]
    blocks = [HashedTuple(tuple(tuple(rnd.choice(cells) for _ in range(3)) for _ in range(rnd.randint(1, 4))))
              for _ in range(200)]
    for b in blocks + blocks[::-1]:
        assert coerce._table_kept(b) == coerce._table(b)
        same = HashedTuple(tuple(b))  # equal, not the same object: the answer by value
        assert coerce._table_kept(same) == coerce._table(b)
    assert len(coerce._TABLES_BY_ID) <= coerce.TABLES_BY_ID_KEPT


def test_table_kept_holds_its_blocks() -> None:
    coerce._TABLES_BY_ID.clear()
    b = HashedTuple((("name", "x"), ("a", 1.0)))
    out = coerce._table_kept(b)
    assert coerce._TABLES_BY_ID[id(b)] == (b, out) and coerce._TABLES_BY_ID[id(b)][0] is b
    assert coerce._table_kept(b) is out
    with pytest.raises(TypeError):  # an unhashable block, as before
        coerce._table_kept(((["x"],),))


# ---- the evaluator's side ------------------------------------------------------------------------------------------


def test_udf_result_mapping() -> None:
    class F(float):
        pass

    results = [1.5, 0.0, -0.0, math.nan, math.inf, -math.inf, 3, 0, True, False, "text", "", NA, DIV0, None,
               [[1.0]], np.float64("nan"), np.float64(2.5), F(math.inf), F(2.0), np.int64(3), 2**70]
    for r in results:
        spec = dataclasses.replace(load()["MAX_UTILIZATION"], impl=lambda *a, r=r: r)
        got = Udf._call(spec, [Column([0.5])])
        want = _old_udf_result(r)
        assert type(got) is type(want) and (got is want or got == want or (got != got and want != want)), r


def test_arg_is_the_old_steps() -> None:
    """:func:`planner.excel.compiled._arg` over errors, columns (kept, known, unknown, with errors), blocks and other
    values, for an argument with and without ``row_errors``."""
    spec = load()["BACKEND_ARGMAX"]  # argument 2: row_errors; argument 1: not

    class Ev:
        pass

    for i in (1, 2):
        for make in range(8):
            ev_a, ev_b = Ev(), Ev()
            col = [1.0, "a", None]
            values: list[Any] = [NA, DIV0, True, None, 3, "x", col, [1.0, NA], HashedTuple((("a", NA),)),
                                 HashedTuple((("a", 1.0),)), Column([1.0]), ((1.0, 2.0),)]
            if make % 2:
                ev_a.column_args = {id(col): col}  # type: ignore[attr-defined]
                ev_b.column_args = {id(col): col}  # type: ignore[attr-defined]
            for v in values:
                a, b = compiled._arg(ev_a, spec, i, v), _old_arg(ev_b, spec, i, v)
                assert repr(a) == repr(b), (i, v)
                if isinstance(a, tuple) and isinstance(b, tuple) and type(a[0]) is type(b[0]):
                    assert a[1] == b[1]


def test_generated_call_site_keys_booleans_and_blanks_as_before() -> None:
    """A call site whose argument evaluates to TRUE, FALSE, a blank, 1.0 or a text: the memo key's part is what
    :func:`planner.excel.compiled._arg` makes of it (TRUE, 1 and 1.0 apart, as :meth:`Udf.evaluate` keys them), and
    the value reaches the function unchanged."""
    from planner.excel.expr import Evaluator, udf

    seen: list[Any] = []
    spec = dataclasses.replace(load()["CAPACITY_TPM"], impl=lambda *a: seen.append(a) or 1.0)
    for v in (True, False, None, 1.0, "x", NA):  # (a literal 1 is the float 1.0)
        e = udf("CAPACITY_TPM", 2.0, 100.0, 10.0, 0.0, 0.0, v)
        memo_a: dict[Any, Any] = {}
        memo_b: dict[Any, Any] = {}
        ev_a = Evaluator({}, {"CAPACITY_TPM": spec}, memo=memo_a)
        ev_b = Evaluator({}, {"CAPACITY_TPM": spec}, memo=memo_b)
        seen.clear()
        got = compiled._udf(e, 0)(ev_a)
        want = e.evaluate(ev_b, 0)
        assert repr(got) == repr(want), v
        assert len(seen) in (0, 2) and (not seen or repr(seen[0]) == repr(seen[1])), v
        if v is NA:
            assert not memo_a and not memo_b
            continue
        # the generated site keys a float or a plain text by itself, anything else as (type, value), as _arg does
        (key_a,), (key_b,) = memo_a, memo_b
        part = key_a[-1]
        if type(v) is float or type(v) is str:
            assert part is v
        else:
            assert type(part) is tuple and part[0] is type(v) and part[1] is v and key_b[-1] == part


# ---- check_number ----------------------------------------------------------------------------------------------------


def test_check_number_whole_numbers() -> None:
    rnd = random.Random(9)
    values: list[Any] = [0, 1, -1, 2**53, 2**53 + 1, 10**300, -(10**300), 10**400, True, False, 3.0, -0.0, math.nan,
                         math.inf, np.int64(5), np.float64(5.5), "3", None]
    values += [rnd.randint(-10**6, 10**6) for _ in range(300)]
    for v in values:
        for kw in ({}, {"minimum": 0}, {"minimum": 0, "exclusive_minimum": True}, {"maximum": 10},
                   {"integer": True}, {"minimum": 1, "maximum": 1000}):
            try:
                want: Any = ("ok", _old_check_number("x", v, **kw))  # type: ignore[arg-type]
            except ArgumentError:
                want = ("error",)
            except OverflowError:
                want = ("overflow",)
            try:
                got: Any = ("ok", check_number("x", v, **kw))  # type: ignore[arg-type]
            except ArgumentError:
                got = ("error",)
            except OverflowError:
                got = ("overflow",)
            assert got == want and (got[0] != "ok" or type(got[1]) is float), (v, kw)
    assert check_fraction("x", 1) == 1.0 and type(check_fraction("x", 0)) is float


def test_table_kept_never_answers_for_a_freed_block() -> None:
    """Blocks made and dropped one after the other (CPython reuses a freed object's ``id``): each gets its own
    answer, because the kept entry holds its block."""
    rnd = random.Random(11)
    for _ in range(500):
        b = HashedTuple(tuple(tuple(rnd.choice([1.0, 2.0, "a", "", "#N/A", None]) for _ in range(2))
                              for _ in range(2)))
        assert coerce._table_kept(b) == coerce._table.__wrapped__(b)
        del b


# ---- a table block's rows read by itemgetters ---------------------------------------------------------------------


class _OrderStore(dict):  # type: ignore[type-arg]
    """A store that answers every cell (0.0) on its first read and notes the order of the reads."""

    def __init__(self) -> None:
        super().__init__()
        self.order: list[Any] = []

    def __missing__(self, k: Any) -> Any:
        self.order.append(k)
        return 0.0


def test_block_rows_read_as_cell_by_cell() -> None:
    """Every template table read as a block (:meth:`planner.excel.expr.Block.evaluate`) from a store holding random
    cells (numbers, texts, blanks, errors, TRUE; some cells missing: the store's answer for them) equals the
    cell-by-cell read, types included; a store that computes a cell on its first read is asked in the same order."""
    from planner import template as T
    from planner.excel import expr
    from planner.excel.expr import Block, Evaluator, Table

    rnd = random.Random(21)
    tables = [getattr(T, n) for n in dir(T) if isinstance(getattr(T, n), Table)]
    assert len(tables) > 10
    for t in tables:
        key = expr.block_key(t)
        header, addresses = expr._block_addresses(t, key)
        cells = {a: rnd.choice([1.0, 0.0, "x", "", None, NA, True, 3]) for row in addresses for a in row
                 if rnd.random() < 0.9}
        ev = Evaluator(cells, {})
        got = Block(t).evaluate(ev, 0)
        want = (header, *(tuple(ev.values[a] for a in row) for row in addresses))
        assert got == want and [tuple(map(type, r)) for r in got] == [tuple(map(type, r)) for r in want], t.name

        ev2 = Evaluator({}, {})
        store = _OrderStore()
        ev2.values = store
        Block(t).evaluate(ev2, 0)
        assert store.order == [a for row in addresses for a in row], t.name


def test_row_getters_one_cell_rows_and_new_addresses() -> None:
    from planner.excel import expr

    one = ((("S", "A1"),), (("S", "A2"),))
    assert expr._row_getters("test-one", one) is None  # an itemgetter of one address is not a 1-tuple
    two = ((("S", "A1"), ("S", "B1")),)
    g = expr._row_getters("test-two", two)
    assert g is not None and g[0]({("S", "A1"): 1.0, ("S", "B1"): "b"}) == (1.0, "b")
    other = ((("S", "A2"), ("S", "B2")),)  # the same key, other addresses (a changed table): made again
    g2 = expr._row_getters("test-two", other)
    assert g2 is not None and g2[0]({("S", "A2"): 2.0, ("S", "B2"): "c"}) == (2.0, "c")


def test_check_fraction_is_check_number() -> None:
    rnd = random.Random(4)
    values: list[Any] = [0.0, -0.0, 1.0, 0.5, 1.0000000000000002, -1e-300, 5e-324, math.nan, math.inf, -math.inf,
                         0, 1, 2, True, None, "0.5", np.float64(0.5), np.float64(1.5)]
    values += [rnd.uniform(-0.5, 1.5) for _ in range(300)]
    for v in values:
        for allow_zero in (True, False):
            try:
                want: Any = ("ok", repr(check_number("x", v, minimum=0.0, maximum=1.0,
                                                     exclusive_minimum=not allow_zero)))
            except ArgumentError as exc:
                want = ("error", str(exc))
            try:
                got: Any = ("ok", repr(check_fraction("x", v, allow_zero=allow_zero)))
            except ArgumentError as exc:
                got = ("error", str(exc))
            assert got == want, (v, allow_zero)
