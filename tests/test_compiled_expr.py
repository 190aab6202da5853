"""The compiled expressions (planner.excel.compiled) give the interpreter's values, type and bits, for every formula
cell of the template: on the samples' inputs, on generated 20-route plans (the benchmark's), and on inputs that
drive cells into Excel errors, refusals and blanks."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from planner import template as ts
from planner.excel.expr import Evaluator
from planner.scenario import load_scenario
from planner.template.inputs import scenario_inputs
from planner.validate import fastpath

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = sorted((ROOT / "samples").glob("*.toml"))


def _generated(seed: int) -> dict[tuple[str, str], Any]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from bench_validate import plan_inputs
    finally:
        sys.path.pop(0)
    return plan_inputs(seed)


def _compare(inputs: dict[tuple[str, str], Any]) -> int:
    """Interpreted (Expr.evaluate, no memo) and compiled (memo on, as the validator runs) side by side, cell by cell
    in the template's order, each fed its own results; returns the number of cells compared."""
    values = dict(ts.fixed_cells())
    values.update(inputs)
    interp = Evaluator(values, memo=None)
    comp = Evaluator(values, memo={})
    code = fastpath._compiled_cells()
    n = 0
    for sheet, cell, expr, row in ts.formula_cells():
        a = expr.evaluate(interp, row)
        b = code[(sheet, cell)](comp)
        assert type(a) is type(b) and repr(a) == repr(b), f"{sheet}!{cell}: interpreted {a!r}, compiled {b!r}"
        interp.values[(sheet, cell)] = a
        comp.values[(sheet, cell)] = b
        n += 1
    return n


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_compiled_equals_interpreted_on_samples(sample: Path) -> None:
    assert _compare(scenario_inputs(load_scenario(sample))) == len(ts.formula_cells())


@pytest.mark.parametrize("seed", [0, 7])
def test_compiled_equals_interpreted_on_generated_plans(seed: int) -> None:
    assert _compare(_generated(seed)) == len(ts.formula_cells())


def test_compiled_equals_interpreted_on_errors_and_blanks() -> None:
    inputs = _generated(3)
    r = ts.ROUTES
    inputs[(r.sheet, r.cell("peak_qps", 0))] = "lots"  # text in a number cell: refusals and #VALUE! downstream
    inputs[(r.sheet, r.cell("avg_input_tokens", 1))] = None  # an empty required cell
    inputs[(r.sheet, r.cell("backend", 2))] = "no-such-backend"  # lookups give #N/A
    inputs[(r.sheet, r.cell("ttft_slo_s", 4))] = 0.0
    inputs[(r.sheet, r.cell("name", 5))] = ""  # an unused row in the middle
    inputs[(r.sheet, r.cell("cache_hit_rate", 6))] = True  # a boolean where a number goes
    out = ts.evaluate_plan(inputs)
    kinds = {type(v).__name__ for v in out.values()}
    assert {"XlError", "str", "float"} <= kinds  # the inputs above do reach errors
    assert _compare(inputs) == len(ts.formula_cells())


def test_min_max_sum_share_one_aggregate() -> None:
    """SUM/MIN/MAX: the interpreter and the compiled closure both run ``expr.aggregate`` over their evaluated
    arguments, in order, stopping at the first error (values worked by hand)."""
    from planner.excel import compiled, expr
    from planner.excel.values import DIV0, NA, VALUE

    assert expr.aggregate(max, [[1, "x", None, True], 2.5]) == 2.5
    assert expr.aggregate(lambda xs: float(sum(xs)), [[1, 2], "3", None]) == 6.0  # text "3" is 3, empty is 0
    assert expr.aggregate(min, [[], []]) == 0.0  # no numbers
    seen: list[Any] = []

    def args() -> Any:
        for v in ([4.0], [NA, DIV0], 1.0):
            seen.append(v)
            yield v

    assert expr.aggregate(min, args()) is NA
    assert len(seen) == 2  # the third argument is never evaluated
    for lits, want in (((3.0, 7.0), 7.0), ((3.0, "2", True), 3.0), ((3.0, "text", 9.0), VALUE)):
        e = expr.Fn("MAX", tuple(expr.Lit(v) for v in lits))
        a = e.evaluate(expr.Evaluator({}, memo=None), 1)
        b = compiled.compile_expr(e, 1)(expr.Evaluator({}, memo={}))
        assert a == want
        assert type(a) is type(b) and repr(a) == repr(b)


def test_generated_code_equals_interpreted_on_every_operand_kind() -> None:
    """compile_fast's generated functions (IF, IFERROR, ISNUMBER, INDEX, MATCH, comparisons, arithmetic, &) against the
    interpreter on operands of every kind a cell holds: numbers, zero, text (numeric and not, mixed case), blank,
    empty text, booleans and Excel errors; type and repr alike."""
    from planner.excel import compiled, expr
    from planner.excel.values import DIV0, NA

    operands = [2.0, 0.0, -1.5, "3", "abc", "ABC", "", None, True, False, NA, DIV0, " TRUE ", "false"]
    ev = expr.Evaluator({("S", "A1"): "abc", ("S", "A2"): None}, memo={})
    cases: list[expr.Expr] = []
    for a in operands:
        la = expr.Lit(a)
        cases.append(expr.Fn("IF", (la, expr.Lit("then"), expr.Lit("else"))))
        cases.append(expr.Fn("IF", (la, expr.Lit(1.0))))
        cases.append(expr.Fn("IFERROR", (la, expr.Lit("err"))))
        cases.append(expr.Fn("ISNUMBER", (la,)))
        for b in operands:
            for op in ("=", "<>", "<", ">", "<=", ">=", "+", "-", "*", "/", "&"):
                cases.append(expr.Bin(op, la, expr.Lit(b)))
    names = expr.Cells(ts.PROVIDERS, "name")
    for i in range(ts.PROVIDERS.rows):
        ev.values[(ts.PROVIDERS.sheet, ts.PROVIDERS.cell("name", i))] = operands[i % len(operands)]
    for a in operands + [1.0, 3.0, 99.0]:
        cases.append(expr.Fn("INDEX", (names, expr.Lit(a))))
        cases.append(expr.Fn("MATCH", (expr.Lit(a), names)))
    nested = expr.Fn("IF", (expr.Bin("=", expr.Lit(1.0), expr.Lit(1.0)),
                            expr.Fn("IFERROR", (expr.Bin("/", expr.Lit(1.0), expr.Lit(0.0)), expr.Lit("x"))),
                            expr.Lit("no")))
    cases.append(nested)
    for e in cases:
        a = e.evaluate(ev, 0)
        b = compiled.compile_fast(e, 0)(ev)
        assert type(a) is type(b) and repr(a) == repr(b), f"{e}: interpreted {a!r}, generated {b!r}"
    assert len(compiled._FACTORIES) < len(cases)  # one source per shape, not per cell


def test_columns_of_computed_sheets_are_complete_when_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """The template's order puts every cell that reads a whole column after that column's formula cells (what lets
    the fast path read each column once per plan); a reader moved before them is detected."""
    from planner.excel.expr import Cells

    assert fastpath._topological()
    cells, expected, fixed = fastpath.compiled()

    def reads_column(e: Any) -> bool:
        todo = [e]
        while todo:
            x = todo.pop()
            if type(x) is Cells and x.last is None and x.table.sheet in fastpath._COMPUTED_SHEETS:
                return True
            todo.extend(x.children())
        return False

    reader = next(i for i, c in enumerate(cells) if reads_column(c[2]))
    moved = [cells[reader]] + cells[:reader] + cells[reader + 1:]
    monkeypatch.setattr(ts, "formula_cells", lambda: moved)  # the order planner.template.fast checks
    assert fastpath._topological.__wrapped__() is False
