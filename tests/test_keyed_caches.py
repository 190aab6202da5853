"""Session 17 (speed9) made the template's evaluation cheaper with caches keyed on what determines a result and with
generated code that repeats general steps; each test here fails if a key misses a field (another plan's answer
comes back) or if the generated steps part from the general ones.

- :func:`planner.engines._stage_parts_kept` (kv_capacity's part that ``max_model_len`` does not change);
- :func:`planner.sheet.forecast._backends_kept` and :func:`~planner.sheet.forecast._fleet_share`;
- :func:`planner.whatif.bars._addresses` and :func:`~planner.whatif.bars._cone_code`;
- :mod:`planner.excel.compiled`'s generated registry calls (memo keys) and comparisons with literals;
- :func:`planner.coerce.prepare_args`' generated code, :func:`~planner.coerce.coerce_table`,
  :func:`planner.errors.check_number`, :func:`planner.excel.values.to_number`.
"""

from __future__ import annotations

import dataclasses
import math
import random
from pathlib import Path
from typing import Any

import pytest

from planner import coerce, engines
from planner import template as ts
from planner.errors import ArgumentError, Refusal, check_number
from planner.excel import compiled
from planner.excel.expr import Evaluator, HashedTuple, Lit, Udf, ValueStore, fn
from planner.excel.values import NA, XlError, to_number
from planner.registry import load
from planner.sheet import forecast as sf
from planner.validate import fastpath
from planner.validate.checks import Book, read_book
from planner.whatif import bars

SEED = Path(__file__).resolve().parents[1] / "samples" / "seed.xlsm"


def _show(values: dict[Any, Any] | None) -> dict[Any, tuple[str, str]] | None:
    return None if values is None else {k: (type(v).__name__, repr(v)) for k, v in values.items()}


_COMPUTING = ("planner.engines", "planner.serving", "planner.sheet", "planner.forecast", "planner.whatif",
              "planner.selfhosted", "planner.memory", "planner.latency", "planner.coerce", "planner.cost",
              "planner.decision", "planner.demand", "planner.limits")
"""The modules whose caches hold computed answers (the template's compiled cells are left built)."""


def _clear_caches() -> None:
    """The registry-call memo and every functools cache of the computing modules: what a plan evaluated alone in a
    new process finds."""
    import sys

    fastpath._MEMO.clear()
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith(_COMPUTING):
            continue
        for value in list(vars(module).values()):
            if callable(getattr(value, "cache_clear", None)) and getattr(value, "__module__", None) == name:
                value.cache_clear()


def _values(book: Book) -> dict[Any, tuple[str, str]] | None:
    out = fastpath.plan_values(book)
    return None if out is None else _show(out[0])


def _with(book: Book, changes: dict[tuple[str, str], Any]) -> Book:
    return dataclasses.replace(book, values={**book.values, **changes})


F = ts.FLEET.sheet
R = ts.ROUTES.sheet
VARIANTS = [  # two plans that differ only in one field a key must hold
    {(F, ts.FLEET.cell("tp", 0)): 8.0},
    {(F, ts.FLEET.cell("kv_dtype", 0)): "auto"},
    {(F, ts.FLEET.cell("weight_dtype", 0)): "bf16"},
    {(F, ts.FLEET.cell("gpu_memory_utilization", 0)): 0.85},
    {(F, ts.FLEET.cell("engine", 0)): "sglang"},
    {(R, ts.ROUTES.cell("peak_qps", 0)): 37.0},
    {(R, ts.ROUTES.cell("p95_context_tokens", 0)): 6000.0},
]


@pytest.mark.parametrize("change", VARIANTS, ids=lambda c: next(iter(c))[1])
def test_a_plan_after_another_gets_its_own_values(change: dict[tuple[str, str], Any]) -> None:
    """Evaluated right after the sample (every cache warm with its answers), a plan that differs in one field gets
    exactly what it gets with every cache empty, and not the sample's."""
    base = read_book(str(SEED))
    variant = _with(base, change)
    _clear_caches()
    first = _values(base)
    after = _values(variant)
    _clear_caches()
    alone = _values(variant)
    assert after == alone
    assert after != first


def test_kv_capacity_keeps_nothing_of_another_setup() -> None:
    """kv_capacity with its stage parts kept equals the same call with the cache emptied first, over setups that
    differ in one input at a time (and in max_model_len, which the parts do not hold)."""
    base: dict[str, Any] = dict(model="llama-3.1-70b", gpu="h100-sxm", tp=4, pp=1, kv_cache_dtype="auto",
                                weight_dtype="auto", engine="vllm", max_model_len=4096)
    variants = [{}, {"tp": 8}, {"pp": 2}, {"kv_cache_dtype": "fp8"}, {"weight_dtype": "fp8"}, {"engine": "sglang"},
                {"engine": "sglang", "gpu_memory_utilization": 0.8}, {"engine": "vllm-v0"}, {"engine": "trtllm"},
                {"gpu": "h200-sxm"}, {"model": "llama-3.1-8b", "tp": 1}, {"max_num_seqs": 64},
                {"max_num_batched_tokens": 4096}, {"max_model_len": 32768}, {"engine_version": "0.8.5"},
                {"tp": 8.0}, {"gpu_memory_utilization": 0.85}]
    warm = [engines.kv_capacity(**{**base, **v}) for v in variants]
    for v, got in zip(variants, warm):
        engines._stage_parts_kept.cache_clear()
        assert engines.kv_capacity(**{**base, **v}) == got, v
    assert len({(c.weights_gib, c.reserve_gib, c.available_kv_gib) for c in warm}) > 10  # the inputs matter
    with pytest.raises(ArgumentError):  # an error is not kept: raised again, as the first time
        engines.kv_capacity(**{**base, "weight_dtype": "fp3"})
    with pytest.raises(ArgumentError):
        engines.kv_capacity(**{**base, "weight_dtype": "fp3"})


def _route_table(shares: list[float], backends: list[str]) -> HashedTuple:
    head = tuple(sf.ROUTE_KEYS)
    rows = []
    for i, (share, backend) in enumerate(zip(shares, backends)):
        cells = dict.fromkeys(sf.ROUTE_KEYS)
        cells.update(route=f"r{i}", backend=backend, compute_share=share)
        rows.append(tuple(cells[k] for k in sf.ROUTE_KEYS))
    return HashedTuple((head, *rows))


def test_fleet_share_is_keyed_on_the_table_the_month_and_the_backend() -> None:
    a = _route_table([0.1, 0.2, 0.3], ["f", "f", "g"])
    b = _route_table([0.1, 0.25, 0.3], ["f", "f", "g"])  # one share differs
    assert sf._fleet_share(a, None, 1, 1.0, "f") == sum([0.1 * 1.0, 0.2 * 1.0])
    assert sf._fleet_share(b, None, 1, 1.0, "f") == sum([0.1 * 1.0, 0.25 * 1.0])
    assert sf._fleet_share(a, None, 1, 1.0, "g") == 0.3
    assert sf._fleet_share(a, None, 1, 2.0, "f") == sum([0.1 * 2.0, 0.2 * 2.0])
    bad = _route_table([0.1, "lots", 0.3], ["f", "f", "g"])
    assert sf._fleet_share(bad, None, 1, 1.0, "g") == 0.3  # another backend's bad share is not read
    for _ in range(2):  # a raised call is not kept
        with pytest.raises(ArgumentError):
            sf._fleet_share(bad, None, 1, 1.0, "f")


def test_a_month_with_a_broken_route_does_not_break_the_kept_backends(monkeypatch: pytest.MonkeyPatch) -> None:
    """_month adds the route table's errors to its own copy of the kept backend table's broken rows: the next month
    of the same backend table does not inherit them."""
    from planner.template.forecast import FORECAST_BACKENDS

    book = read_book(str(SEED))
    _clear_caches()
    out = fastpath.plan_values(book)
    assert out is not None
    t = FORECAST_BACKENDS
    backends = HashedTuple((tuple(c.header for c in t.columns),
                            *(tuple(out[0].get((t.sheet, t.cell(c.key, i))) for c in t.columns)
                              for i in range(t.rows))))
    kept = dict(sf._backends_kept(backends)[2])
    parts = sf._parts
    monkeypatch.setattr(sf, "_parts", lambda *a: ((), {"llama70b-h100": "#N/A"}))
    _month, broken = sf._month(1.25, 0.8, backends)
    assert broken.get("llama70b-h100") == "#N/A"
    monkeypatch.setattr(sf, "_parts", parts)
    assert sf._backends_kept(backends)[2] == kept
    assert "llama70b-h100" not in sf._month(1.5, 0.8, backends)[1]


def test_bar_addresses_follow_the_table_object() -> None:
    t = ts.ROUTES
    at = bars._addresses(t)
    assert all(at[c.key][i] == (t.sheet, t.cell(c.key, i)) for c in t.columns for i in range(t.rows))
    other = dataclasses.replace(t, header_row=t.header_row + 5)  # the same name, another table
    moved = bars._addresses(other)
    assert moved[t.columns[0].key][0] == (other.sheet, other.cell(t.columns[0].key, 0)) != at[t.columns[0].key][0]
    assert bars._addresses(t)[t.columns[0].key][0] == (t.sheet, t.cell(t.columns[0].key, 0))


def test_cone_code_is_the_compiled_cells_of_its_cone() -> None:
    from planner.template.fast import compiled_cells

    code = compiled_cells()
    for changed in (None, ((ts.ROUTES.name, "avg_input_tokens"),)):
        assert bars._cone_code(changed) == {k: code[k] for k in bars._cone(changed)}


def test_generated_calls_keep_true_one_and_text_apart() -> None:
    """A registry call's memo key keeps an argument's type: TRUE, 1.0, "1" and a blank each get their own answer
    (CAPACITY_RPM refuses TRUE and text), shared memo or not, as the interpreter gives them."""
    functions = load()
    memo: dict[tuple[Any, ...], Any] = {}
    args: list[Any] = [1.0, True, "1", None, 1, "x", NA]
    for a in args + args[::-1]:
        e = Udf("CAPACITY_RPM", (Lit(a),))
        ev = Evaluator({}, functions, memo=memo)
        ev.values = ValueStore()
        interp = e.evaluate(Evaluator({}, functions, memo=None), 0)
        got = compiled.compile_fast(e, 0)(ev)
        assert (type(got), repr(got)) == (type(interp), repr(interp)), a


def test_generated_comparisons_with_literals_are_the_helpers() -> None:
    cases = [1.0, 0.0, -0.0, 2.5, math.nan, "", "a", "A", "fleet", "FLEET", "İ", None, True, False, 1, NA,
             XlError("#DIV/0!")]
    literals = ["", "fleet", "A", 0.0, 1.0, 2, True, None]
    for op in ("=", "<>", "<", ">", "<=", ">="):
        for b in literals:
            for a in cases:
                e = fn("IF", _cmp(op, a, b), 1, 0)
                ev = Evaluator({}, {})
                ev.values = ValueStore()
                want = e.evaluate(ev, 0)
                got = compiled.compile_fast(e, 0)(ev)
                assert (type(got), repr(got)) == (type(want), repr(want)), (a, op, b)


def _cmp(op: str, a: Any, b: Any) -> Any:
    from planner.excel.expr import Bin

    return Bin(op, Lit(a), Lit(b))


POOL: list[Any] = [1.0, 2.5, 3, 0, -0.0, True, False, None, "", "  ", "abc", " Fleet ", "#N/A", "#DIV/0!",
                   "x: got 1, expected 2", "3", "1,000", "50%", [[1.0], [2.0]], [[1.0]], [["#N/A"]], 2.0**60,
                   math.nan, (("a",),), HashedTuple((("name", "x"), ("a", 1.0), ("b", "#N/A"))),
                   HashedTuple((("name", "x"), ("a", 1.0), ("b", "")))]


def _outcome(f: Any, spec: Any, raw: list[Any]) -> tuple[Any, ...]:
    try:
        return ("ok", repr(f(spec, raw)))
    except (ArgumentError, Refusal) as exc:
        return ("error", type(exc).__name__, str(exc))


def test_generated_prepare_args_is_the_general_steps() -> None:
    """Every registry function with generated preparation, on random argument lists (numbers, texts, blanks, errors,
    refusals, ranges, columns, table blocks, too many arguments): the same values and the same error."""
    rnd = random.Random(17)
    n = 0
    for spec in load().values():
        if coerce._prepared(spec) is None:
            continue
        for _ in range(60):
            k = rnd.randint(0, len(spec.args) + 1)
            raw = [rnd.choice(POOL + [coerce.Column([1.0, 2.0]), coerce.Column(["#REF!"])]) for _ in range(k)]
            assert _outcome(coerce.prepare_args, spec, raw) == _outcome(coerce._prepare_args, spec, raw), (spec, raw)
            n += 1
    assert n > 5000


def test_coerce_table_fast_cells_are_the_general_ones() -> None:
    rows = [[1.0, "", "  ", "a", None, 2, True, NA, " #N/A ", -0.0, math.inf]]
    got = coerce.coerce_table(rows)
    assert [(type(v), repr(v)) for v in got[0]] == [
        (float, "1.0"), (type(None), "None"), (type(None), "None"), (str, "'a'"), (type(None), "None"),
        (float, "2.0"), (bool, "True"), (XlError, "'#N/A'"), (str, "' #N/A '"), (float, "-0.0"), (float, "inf")]


def test_check_number_and_to_number_keep_their_answers() -> None:
    import numpy as np

    assert check_number("x", 2.5) == 2.5 and type(check_number("x", 3)) is float
    assert type(check_number("x", np.float64(2.5))) is float
    for bad, says in ((True, "a number"), (None, "a number"), ("1", "a number"), (math.nan, "a finite number"),
                      (math.inf, "a finite number"), (-math.inf, "a finite number"), (np.bool_(True), "a number")):
        with pytest.raises(ArgumentError, match=says):
            check_number("x", bad)
    with pytest.raises(ArgumentError, match="a number >= 0"):
        check_number("x", -1.0, minimum=0)
    assert to_number(2.5) == 2.5 and to_number(None) == 0.0 and to_number(True) == 1.0
    assert to_number(NA) == NA and to_number(3) == 3.0 and type(to_number(3)) is float
