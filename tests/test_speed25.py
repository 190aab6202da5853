"""Session 21, speed25: the registry-call memo keys' tokens (:func:`planner.excel.expr.value_token`) against the
parts they stand for, over many inputs.

- a token per distinct part: two parts get the same token exactly when they are equal (types of the cells
  included, as the memo compared them), over random columns and blocks;
- a generated call site (:func:`planner.excel.compiled._udf`) and the interpreter (:meth:`Udf.evaluate`) through
  one memo: a call is remembered once per distinct old key (the parts themselves) and every answer is the answer
  without a memo; kept input columns (``column_args``), columns not kept and blocks share keys as before (a
  site's and the interpreter's keys differ in their literal texts' parts, as before);
- the token table is bounded and, once emptied, never gives an old token to another part.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

from planner import template as ts
from planner.excel import compiled
from planner.excel import expr as ex
from planner.excel.expr import Block, Evaluator, HashedTuple, Lit, Udf, value_token
from planner.registry import load

NAN = float("nan")
CELLS = (1.0, 0.0, -0.0, 2.0, True, False, 1, 2, "a", "A", "", None, "#N/A", NAN)


def _old_column_part(cells: list[Any]) -> tuple[Any, ...]:
    return (list, tuple(zip(map(type, cells), cells)))


@pytest.mark.parametrize("seed", range(4))
def test_a_token_per_distinct_part(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Random column parts (cells with their types) and blocks (``HashedTuple`` of rows): the same token exactly
    when the parts are equal (1 and 1.0 and TRUE apart in a column, a NaN equal only to itself). The table is not
    emptied during the test (1,800 parts, above the process's limit: an emptied table is the next test's)."""
    monkeypatch.setattr(ex, "VALUE_TOKENS_LIMIT", 100_000)
    monkeypatch.setattr(ex, "_TOKENS", {})
    rnd = random.Random(seed)
    parts: list[Any] = []
    for _ in range(600):
        n = rnd.randint(1, 3)
        cells = [rnd.choice(CELLS) for _ in range(n)]
        parts.append(_old_column_part(cells))
        rows = HashedTuple(tuple(rnd.choice(CELLS) for _ in range(2)) for _ in range(rnd.randint(1, 2)))
        parts.append((HashedTuple, rows))
        parts.append((tuple, tuple(rows)))
    tokens = [value_token(p) for p in parts]
    for _ in range(20_000):
        i, j = rnd.randrange(len(parts)), rnd.randrange(len(parts))
        assert (tokens[i] is tokens[j]) == (parts[i] == parts[j]), (parts[i], parts[j])
    assert all(value_token(p) is t for p, t in zip(parts, tokens))


def test_tokens_bounded_and_never_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a table of 5 parts: it never holds more; once emptied, a part gets a new token, and no token ever
    stands for two unequal parts."""
    monkeypatch.setattr(ex, "VALUE_TOKENS_LIMIT", 5)
    monkeypatch.setattr(ex, "_TOKENS", {})
    seen: dict[int, tuple[Any, Any]] = {}
    rnd = random.Random(7)
    for _ in range(500):
        part = _old_column_part([rnd.choice((1.0, 2.0, 3.0, True)) for _ in range(2)])
        tok = value_token(part)
        assert len(ex._TOKENS) <= 5
        if id(tok) in seen:
            held, was = seen[id(tok)]
            assert held is tok and was == part
        seen[id(tok)] = (tok, part)
    assert value_token([1.0]) == [1.0]  # an unhashable part as it is (the memo then refuses it, as before)


def _spec(name: str) -> Any:
    spec = load()[name]
    return dataclasses.replace(spec, impl=lambda *a: float(len(repr(a))))  # an answer that tells arguments apart


@pytest.mark.parametrize("seed", range(3))
def test_column_calls_remembered_once_per_old_key(seed: int) -> None:
    """``BACKEND_SUM(backend, backends, values)`` with random columns (new list objects, some kept by the evaluator
    as input columns, some not), compiled and interpreted in turn through one memo: one memo entry per distinct old
    key, and every answer the memo-less answer."""
    rnd = random.Random(seed)
    spec = _spec("BACKEND_SUM")
    functions = {"BACKEND_SUM": spec}
    memo: dict[Any, Any] = {}
    old_keys = set()
    cells = (1.0, 1, True, "x", None)  # few, so that equal columns come back in every path
    for k in range(300):
        backends = [rnd.choice(("a", "b")) for _ in range(2)]
        values = [rnd.choice(cells) for _ in range(2)]
        e = Udf("BACKEND_SUM", (Lit("a"), Lit(backends), Lit(values)))
        ev = Evaluator({}, functions, memo=memo)
        if k % 3 == 0:  # kept input columns, as the fast evaluator keeps them
            ev.column_args = {id(backends): backends, id(values): values}  # type: ignore[attr-defined]
        got = compiled._udf(e, 0)(ev) if k % 2 else e.evaluate(ev, 0)
        want = e.evaluate(Evaluator({}, functions, memo=None), 0)
        assert repr(got) == repr(want)
        if not isinstance(want, list):  # (a spilled column is not remembered)
            # the site keys the literal text by itself, the interpreter as (type, value): their keys never met
            name = "a" if k % 2 else (str, "a")
            old_keys.add(("BACKEND_SUM", name, _old_column_part(backends), _old_column_part(values)))
    assert len(memo) == len(old_keys)


def test_block_calls_share_keys_as_before() -> None:
    """A registry call taking the Fleet block, compiled and interpreted, in evaluators with equal blocks (new
    objects) and with a block changed in one cell: one memo entry per distinct old key, each answer the memo-less
    one."""
    spec = _spec("FLEET_KV_FIT")
    functions = {"FLEET_KV_FIT": spec}
    memo: dict[Any, Any] = {}
    fleet = ts.FLEET
    cell = (fleet.sheet, fleet.cell(fleet.columns[1].key, 0))
    e = Udf("FLEET_KV_FIT", (Lit("f"), Block(fleet), Lit(1.0), Lit(2.0), Lit(3.0)))
    site = compiled._udf(e, 0)
    old_keys = set()
    for v in (1.0, 1.0, 2.0, "x", 1.0, "x", None, None):
        ev = Evaluator({cell: v}, functions, memo=memo)
        got = site(ev)
        ev2 = Evaluator({cell: v}, functions, memo=None)
        assert repr(got) == repr(e.evaluate(ev2, 0))
        block = Block(fleet).evaluate(ev2, 0)
        old_keys.add(("f", (type(block), block), 1.0, 2.0, 3.0))  # the generated site's
        again = Evaluator({cell: v}, functions, memo=memo)
        assert repr(e.evaluate(again, 0)) == repr(got)
        old_keys.add(((str, "f"), (type(block), block), (float, 1.0), (float, 2.0), (float, 3.0)))  # interpreter's
    assert len(memo) == len(old_keys) == 8


def _old_aggregate(pick: Any, values: Any) -> Any:  # expr.aggregate before speed25
    from planner.excel.values import XlError, to_number

    nums = []
    for v in values:
        if isinstance(v, list):
            for x in v:
                if type(x) is float:
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


@pytest.mark.parametrize("seed", range(3))
def test_aggregate_is_the_old_loop(seed: int) -> None:
    """MIN, MAX and SUM over random arguments (ranges of numbers only, mixed ranges with texts, blanks, booleans,
    ints and errors, empty ranges, and scalars of every kind): the same answer (type and ``repr``) as the loop the
    shortcuts skip, and the arguments consumed up to the same one."""
    from planner.excel.values import DIV0, NA

    rnd = random.Random(seed)
    cells = (1.0, -0.0, 2.5, NAN, 3, True, False, None, "", "x", "2", NA, DIV0)
    for _ in range(3000):
        args: list[Any] = []
        for _ in range(rnd.randint(0, 4)):
            k = rnd.random()
            if k < 0.4:
                args.append([rnd.random() for _ in range(rnd.randint(0, 5))])
            elif k < 0.7:
                args.append([rnd.choice(cells) for _ in range(rnd.randint(0, 5))])
            else:
                args.append(rnd.choice(cells))
        for pick in (min, max, sum):
            got_seen: list[Any] = []
            want_seen: list[Any] = []
            got = ex.aggregate(pick, (got_seen.append(a) or a for a in args))
            want = _old_aggregate(pick, (want_seen.append(a) or a for a in args))
            assert type(got) is type(want) and repr(got) == repr(want), (args, pick)
            assert len(got_seen) == len(want_seen)


@pytest.mark.parametrize("seed", range(3))
def test_match_of_a_text_is_equal_key(seed: int) -> None:
    """``MATCH(key, cells, 0)`` with random keys (texts in any case, "", numbers, TRUE, blanks, errors) over random
    cells: the position of the first cell ``equal_key`` matches, else #N/A (the key's error for an error key)."""
    from planner.excel.values import DIV0, NA, XlError, equal_key

    rnd = random.Random(seed)
    cells = ("a", "A", "b", "B ", "", None, 1.0, 2, True, "#N/A", NA, DIV0, "ä", "Ä", "1")
    for _ in range(5000):
        row = [rnd.choice(cells) for _ in range(rnd.randint(0, 6))]
        key = rnd.choice(cells)
        want = key if isinstance(key, XlError) else next(
            (float(i + 1) for i, c in enumerate(row) if equal_key(c, key)), NA)
        got = ex._match(key, row)
        assert type(got) is type(want) and repr(got) == repr(want), (key, row)


def test_a_column_not_kept_is_the_old_steps() -> None:
    """:func:`planner.excel.compiled._arg` of a column no evaluator keeps, over random cells (errors, error-like
    texts, ints, TRUE, blanks, NaN): the first error (for an argument without ``row_errors``) or the one-cell rows
    and the part the old loop gave."""
    from planner.excel.values import DIV0, NA, XlError

    spec = load()["BACKEND_ARGMAX"]  # argument 2: row_errors; argument 1: not
    rnd = random.Random(5)
    cells = (1.0, NAN, 2, True, None, "", "x", "#N/A", NA, DIV0)
    for _ in range(3000):
        v = [rnd.choice(cells) for _ in range(rnd.randint(0, 6))]
        for i in (1, 2):
            err = next((x for x in v if isinstance(x, XlError)), None)
            want = err if err is not None and i == 1 else ([[x] for x in v], (list, tuple(zip(map(type, v), v))))
            got = compiled._arg(Evaluator({}, {}), spec, i, v)
            assert repr(got) == repr(want) and type(got) is type(want), (i, v)
