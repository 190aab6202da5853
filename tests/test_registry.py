"""The one function registry: every declared function is complete, and the coercion layer every adapter uses."""

from __future__ import annotations

import inspect
import math
import re

import pytest

from planner import functions
from planner.coerce import call_sheet_function
from planner.errors import ArgumentError
from planner.registry import REGISTRY, load

load()

ISSUE_2_NAMES = (
    "CAPACITY_RPM", "CAPACITY_TPM", "CAPACITY_ITPM", "CAPACITY_OTPM", "ADMISSION_TPM", "WINDOW_PEAK",
    "LIMIT_UTILIZATION", "KEYS_NEEDED", "PROVIDER_LIMIT", "PROVIDER_PRICE", "API_COST_PER_REQUEST",
    "API_COST_MONTHLY", "CACHE_SAVINGS_MONTHLY", "CACHE_BREAKEVEN_HIT_RATE", "SELFHOST_USD_PER_MTOK",
    "BINDING_CONSTRAINT", "MAX_UTILIZATION", "HEADROOM", "HEADROOM_MULTIPLE", "MONTHS_TO_BREACH",
    "FAILOVER_UTILIZATION",
)
"""Names issue 2 asks for in the demand, limit, cost and decision families."""

LEADING_ARGS = {
    "CAPACITY_RPM": ["peak_qps"],
    "CAPACITY_TPM": ["peak_qps", "avg_input_tokens", "avg_output_tokens"],
    "BINDING_CONSTRAINT": ["labels", "utilizations"],
    "PROVIDER_LIMIT": ["provider", "tier", "model", "limit_name"],
    "PROVIDER_PRICE": ["provider", "tier", "model", "price_name"],
}
"""Exactly these leading arguments (issue 2 §4 and the brief)."""

SPECS = sorted(REGISTRY.values(), key=lambda s: s.name)
CORE_CATEGORIES = ("Demand", "Limits", "Cost", "Decision", "Memory", "Latency", "What-if")


@pytest.mark.parametrize("name", ISSUE_2_NAMES)
def test_issue_2_names_exist(name):
    assert name in REGISTRY
    assert getattr(functions, name) is REGISTRY[name].impl


@pytest.mark.parametrize("name", sorted(LEADING_ARGS))
def test_leading_arguments(name):
    expected = LEADING_ARGS[name]
    assert [a.name for a in REGISTRY[name].args][: len(expected)] == expected
    assert all(not a.optional for a in REGISTRY[name].args[: len(expected)])


def test_binding_constraint_takes_ranges_and_returns_text():
    spec = REGISTRY["BINDING_CONSTRAINT"]
    assert [a.kind for a in spec.args] == ["texts", "numbers"]
    assert spec.returns_kind == "text"


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_declaration_is_complete(spec):
    """UPPER name, summary, category, example, return unit and help and unit for every argument."""
    assert re.fullmatch(r"[A-Z][A-Z0-9_]*", spec.name)
    assert spec.summary.strip() and spec.category.strip() and spec.returns.strip()
    assert spec.example.startswith(f"={spec.name}(")
    assert spec.returns_kind in ("number", "text")
    for arg in spec.args:
        assert arg.help.strip(), arg.name
        assert arg.unit.strip(), arg.name
        assert len(spec.arg_help(arg)) <= 255
    assert len(spec.description) <= 255


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_signature_is_positional_and_matches_the_declaration(spec):
    params = list(inspect.signature(spec.impl).parameters.values())
    assert [p.name for p in params] == [a.name for a in spec.args]
    for p, arg in zip(params, spec.args):
        assert p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        assert (p.default is not p.empty) == arg.optional
        if arg.optional:
            assert p.default == arg.default


def _excel_literal(text: str):
    """One argument of an example as the value Excel would pass: array constants become lists, 10% becomes 0.1."""
    text = text.strip()
    if text.startswith("{") and ";" in text:  # a 2-D array constant: rows split by ";" (a table argument)
        return [[_excel_literal(part) for part in row.split(",")] for row in text.strip("{}").split(";")]
    if text.startswith("{"):
        return [_excel_literal(part) for part in text.strip("{}").split(",")]
    if text.startswith('"'):
        return text.strip('"')
    if text.upper() in ("TRUE", "FALSE"):
        return text.upper() == "TRUE"
    if text.endswith("%"):
        return float(text[:-1]) / 100
    return float(text)


def _split_args(inner: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in inner:
        depth += ch in "{" and 1 or (-1 if ch == "}" else 0)
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    return parts + [current] if current.strip() else parts


CORE_SPECS = [s for s in SPECS if s.category in CORE_CATEGORIES]


@pytest.mark.parametrize("spec", CORE_SPECS, ids=lambda s: s.name)
def test_example_evaluates_to_its_stated_result(spec):
    """The documented example, called through the same coercion as Excel, gives the value it promises."""
    match = re.fullmatch(rf"={spec.name}\((.*)\) -> (.+)", spec.example)
    assert match, f"example {spec.example!r} should read =NAME(args) -> result"
    args = [_excel_literal(a) for a in _split_args(match.group(1))]
    result = call_sheet_function(spec, *args, errors_as_text=False)
    expected = match.group(2).strip()
    if spec.returns_kind == "text":
        assert result == expected.strip('"')
    else:
        decimals = len(expected.split(".")[1]) if "." in expected else 0
        assert round(result, decimals) == pytest.approx(float(expected))


class TestCallSheetFunction:
    """planner.coerce.call_sheet_function: what every adapter (xlwings, Lite, formulas) calls."""

    def test_two_d_ranges_become_sequences(self):
        spec = REGISTRY["BINDING_CONSTRAINT"]
        assert call_sheet_function(spec, [["RPM"], ["TPM"], ["KV"]], [[0.2], [0.7], [0.5]]) == "TPM"
        assert call_sheet_function(spec, [["RPM", "TPM", "KV"]], [[0.2, 0.7, 0.9]]) == "KV"

    def test_empty_cell_takes_the_default(self):
        spec = REGISTRY["LIMIT_UTILIZATION"]
        assert call_sheet_function(spec, 500, 1000, None) == 0.5
        assert call_sheet_function(REGISTRY["WINDOW_PEAK"], 600, None, None) == 10

    def test_numbers_typed_as_text(self):
        assert call_sheet_function(REGISTRY["CAPACITY_RPM"], "25") == 1500
        assert call_sheet_function(REGISTRY["CAPACITY_TPM"], "1,000", "2000", "500") == 150_000_000
        months = call_sheet_function(REGISTRY["MONTHS_TO_BREACH"], "60%", "10%")
        assert months == pytest.approx(math.log(1 / 0.6) / math.log(1.1))

    def test_flags_as_text_or_numbers(self):
        """TRUE/FALSE typed as text, or 1/0, select the provider's counting rule."""
        spec = REGISTRY["CAPACITY_ITPM"]
        assert call_sheet_function(spec, 10, 20_000, "80%", 0, "TRUE") == 12_000_000
        assert call_sheet_function(spec, 10, 20_000, "80%", 0, 0) == pytest.approx(2_400_000)
        text = call_sheet_function(spec, 10, 20_000, 0.8, 0, "maybe")
        assert text == "cached_reads_count: got 'maybe', expected TRUE or FALSE"

    def test_text_arguments_are_case_insensitive(self):
        spec = REGISTRY["PROVIDER_LIMIT"]
        assert call_sheet_function(spec, "ANTHROPIC", "Tier 4", "claude-sonnet-4.5", "Itpm") == 2_000_000

    def test_column_broadcast(self):
        """An element-wise argument given a column makes a column; scalars are repeated on every row."""
        column = call_sheet_function(REGISTRY["CAPACITY_TPM"], [[1], [2], [3]], 1000, [[0], [500], [1000]])
        assert column == [[60_000.0], [180_000.0], [360_000.0]]

    def test_columns_of_different_lengths_are_an_error(self):
        with pytest.raises(ArgumentError, match="^ranges: got \\[2, 3\\]"):
            call_sheet_function(REGISTRY["CAPACITY_TPM"], [[1], [2]], 1000, [[0], [500], [1000]])

    def test_errors_become_cell_text(self):
        """A planner error is the cell's text: one line naming the argument."""
        assert call_sheet_function(REGISTRY["CAPACITY_RPM"], -1) == "peak_qps: got -1, expected a number >= 0"
        assert call_sheet_function(REGISTRY["CAPACITY_RPM"], "lots") == "peak_qps: got 'lots', expected a number"
        text = call_sheet_function(REGISTRY["LIMIT_UTILIZATION"], None, 1000)
        assert text == "demand: got None, expected a value (the cell is empty)"

    def test_errors_propagate_when_asked(self):
        with pytest.raises(ArgumentError, match="^limit: got 0"):
            call_sheet_function(REGISTRY["LIMIT_UTILIZATION"], 1, 0, errors_as_text=False)

    def test_errors_per_row_in_a_column(self):
        column = call_sheet_function(REGISTRY["CAPACITY_RPM"], [[1], [-1]])
        assert column == [[60.0], ["peak_qps: got -1, expected a number >= 0"]]

    def test_whole_numbers_become_ints_on_every_path(self):
        """A whole float below 2**53 is handed over as an int, whether it arrives as a Python float (the fast path),
        a float subclass or a numpy scalar (the general path): one rule, so messages read "3", not "3.0"."""
        import numpy as np

        from planner.coerce import coerce_scalar

        class Sub(float):
            pass

        for v in (3.0, Sub(3.0), np.float64(3.0)):
            got = coerce_scalar("number", "x", v)
            assert type(got) is int and got == 3
        for v in (3.5, Sub(3.5), np.float64(3.5)):
            assert coerce_scalar("number", "x", v) == 3.5
        assert type(coerce_scalar("number", "x", 2.0**53)) is float  # past 2**53 a float stays a float
        assert type(coerce_scalar("number", "x", Sub(2.0**53))) is Sub
        assert coerce_scalar("number", "x", 7) == 7
        assert call_sheet_function(REGISTRY["CAPACITY_RPM"], -3.0) == "peak_qps: got -3, expected a number >= 0"

    def test_too_many_arguments(self):
        text = call_sheet_function(REGISTRY["CAPACITY_RPM"], 1, 2)
        assert text == "CAPACITY_RPM: got 2, expected at most 1 arguments"


def test_office_js_spellings_map_to_the_registry_name() -> None:
    """``_xldudf_NAME`` (namespace-less Office.js, as xlwings Lite's functions) and the namespaced forms all name the
    registry function, case-insensitively, in the alias table every stored-formula reader uses."""
    from planner.registry import canonical_name, load
    from planner.validate.fastpath import normalize_formula

    load()
    spelled = ("_xldudf_CAPACITY_TPM", "_XLDUDF_XLWINGS_CAPACITY_TPM", "xlwings.capacity_tpm", "_xludf.capacity_tpm")
    for spelling in spelled:
        assert canonical_name(spelling) == "CAPACITY_TPM"
    assert canonical_name("XLWINGS.PLAN.CAPACITY_TPM") is None  # a sub-namespace nothing here ever registers
    assert canonical_name("_xldudf_NOT_OURS") is None
    assert normalize_formula("=_xlfn.IFERROR(_xldudf_CAPACITY_TPM(A1, B1, C1), 0)") == (
        "IFERROR(CAPACITY_TPM(A1,B1,C1),0)"
    )
