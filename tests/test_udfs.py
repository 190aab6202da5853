"""planner.udfs, the xlwings add-in module: generated from the registry, complete, documented, and computing what the
core computes when called with the values Excel passes (2-D lists, None for empty cells, numbers typed as text).

On Linux the xlwings decorators are no-ops. To check what Excel's "Import Functions" would read, the tests also run
xlwings' own Windows decorator and VBA-wrapper code (``xlfunc``, ``xlarg``, ``generate_vba_wrapper`` from the
installed ``xlwings/udfs.py``, BSD-licensed); that module cannot be imported here only because it imports pywin32.
"""

from __future__ import annotations

import ast
import datetime
import inspect
import io
import re
import sys
import types
import typing
from pathlib import Path

import pytest
import xlwings

import planner.functions
import planner.udfs as udfs
from planner import addin
from planner.errors import PlannerError
from planner.registry import Arg, SheetFunction, load

REGISTRY = load()
SPECS = [REGISTRY[name] for name in sorted(REGISTRY)]
IDS = [spec.name for spec in SPECS]


def udf_functions(module: types.ModuleType) -> dict[str, typing.Callable]:
    return {
        name: obj
        for name, obj in vars(module).items()
        if inspect.isfunction(obj) and obj.__module__ == module.__name__ and not name.startswith("_")
    }


def test_udfs_module_is_current() -> None:
    assert addin.UDFS_PATH.read_text(encoding="utf-8") == addin.udfs_source(), (
        "planner/udfs.py is stale: run .venv/bin/python -m planner.addin --write"
    )


def test_udfs_exposes_exactly_the_registry() -> None:
    assert set(udf_functions(udfs)) == set(REGISTRY)
    assert len(REGISTRY) >= 2


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_positional_signature_matches_the_registry(spec: SheetFunction) -> None:
    params = list(inspect.signature(getattr(udfs, spec.name)).parameters.values())
    assert [p.name for p in params] == [a.name for a in spec.args]
    for param, arg in zip(params, spec.args):
        assert param.kind is param.POSITIONAL_OR_KEYWORD, f"{spec.name}.{param.name} is {param.kind}"
        if arg.optional:
            assert param.default is None
        else:
            assert param.default is param.empty


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_function_and_every_argument_have_help(spec: SheetFunction) -> None:
    func = getattr(udfs, spec.name)
    assert func.__doc__ == spec.description
    assert 20 <= len(func.__doc__) <= 255
    for arg in spec.args:
        text = spec.arg_help(arg)
        assert arg.help.strip() and 0 < len(text) <= 255


def _decorators() -> dict[str, list[ast.Call]]:
    tree = ast.parse(addin.UDFS_PATH.read_text(encoding="utf-8"))
    return {
        node.name: [d for d in node.decorator_list if isinstance(d, ast.Call)]
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
    }


def test_source_decorates_every_function_and_argument() -> None:
    decorators = _decorators()
    for spec in SPECS:
        calls = decorators[spec.name]
        assert ast.unparse(calls[0].func) == "xw.func"
        assert ast.literal_eval(calls[0].keywords[0].value) == spec.category
        args = [c for c in calls[1:] if ast.unparse(c.func) == "xw.arg"]
        assert [ast.literal_eval(c.args[0]) for c in args] == [a.name for a in spec.args]
        for call, arg in zip(args, spec.args):
            keywords = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
            assert keywords == {"ndim": 2, "err_to_str": True, "doc": spec.arg_help(arg)}


# --- xlwings' own Windows decorators and VBA generator, as Excel's Import Functions runs them ---------------------


@pytest.fixture(scope="module")
def windows_udfs() -> types.SimpleNamespace:
    source_path = Path(xlwings.__file__).with_name("udfs.py")
    tree = ast.parse(source_path.read_text(encoding="utf-8"))
    wanted = {
        "func_sig",
        "get_category",
        "get_async_mode",
        "check_bool",
        "extract_type_and_annotations",
        "xlfunc",
        "xlret",
        "xlarg",
        "generate_vba_wrapper",
    }
    nodes = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in wanted]
    assert {n.name for n in nodes} == wanted, "xlwings/udfs.py changed: update this test"
    namespace: dict[str, typing.Any] = {
        "inspect": inspect,
        "dt": datetime,
        "Annotated": typing.Annotated,
        "Any": typing.Any,
        "Callable": typing.Callable,
        "TypeVar": typing.TypeVar,
        "_F": typing.TypeVar("_F"),
        "get_args": typing.get_args,
        "get_origin": typing.get_origin,
        "get_type_hints": typing.get_type_hints,
        "VBAWriter": xlwings.utils.VBAWriter,
    }
    exec(compile(ast.Module(body=nodes, type_ignores=[]), str(source_path), "exec"), namespace)  # noqa: S102

    # Execute planner/udfs.py with those decorators as `xlwings.func/arg/ret`, as on Windows.
    windows_xlwings = types.ModuleType("xlwings")
    windows_xlwings.func, windows_xlwings.arg, windows_xlwings.ret = (
        namespace["xlfunc"],
        namespace["xlarg"],
        namespace["xlret"],
    )
    module = types.ModuleType("planner.udfs")
    saved = sys.modules["xlwings"]
    sys.modules["xlwings"] = windows_xlwings
    try:
        exec(compile(addin.UDFS_PATH.read_text(encoding="utf-8"), str(addin.UDFS_PATH), "exec"), module.__dict__)  # noqa: S102
    finally:
        sys.modules["xlwings"] = saved
    vba = io.StringIO()
    namespace["generate_vba_wrapper"]("planner.udfs", module, vba, types.SimpleNamespace(Name="plan.xlsm"))
    return types.SimpleNamespace(module=module, vba=vba.getvalue())


def test_xlwings_metadata_is_what_the_function_wizard_shows(windows_udfs: types.SimpleNamespace) -> None:
    for spec in SPECS:
        info = getattr(windows_udfs.module, spec.name).__xlfunc__
        assert info["name"] == spec.name
        assert info["category"] == spec.category
        assert info["ret"]["doc"] == spec.description
        assert [a["name"] for a in info["args"]] == [a.name for a in spec.args]
        for xl_arg, arg in zip(info["args"], spec.args):
            assert xl_arg["doc"] == spec.arg_help(arg)
            assert xl_arg["options"] == {"ndim": 2, "err_to_str": True}
            assert ("optional" in xl_arg) == arg.optional


def test_import_functions_vba_wraps_every_function(windows_udfs: types.SimpleNamespace) -> None:
    vba = windows_udfs.vba
    declared = re.findall(r"^Function (\w+)\(([^)]*)\)", vba, flags=re.M)
    assert sorted(name for name, _ in declared) == sorted(REGISTRY)
    for name, params in declared:
        spec = REGISTRY[name]
        expected = ", ".join(("Optional " if a.optional else "") + a.name for a in spec.args)
        assert params == expected
        assert f'{name} = XLPy.CallUDF("planner.udfs", "{name}", Array(' in vba


# --- Excel-shaped calls give the core's numbers -----------------------------------------------------------------

_LITERAL = re.compile(r'\s*("(?:[^"]|"")*"|TRUE|FALSE|-?[\d.]+(?:[eE][-+]?\d+)?%?|\{[^}]*\})\s*(?:,|$)', re.I)


def _literals(text: str) -> list[typing.Any] | None:
    values: list[typing.Any] = []
    pos = 0
    while pos < len(text):
        token = _LITERAL.match(text, pos)
        if not token:
            return None
        lit = token.group(1)
        if lit.startswith("{"):  # an array constant {a,b,c}: one row, as Excel passes it; {a,b;c,d}: rows
            rows = [_literals(row) for row in lit[1:-1].split(";")]
            if any(r is None or any(isinstance(v, list) for v in r) for r in rows):
                return None
            values.append(rows if len(rows) > 1 else rows[0])
        elif lit.startswith('"'):
            values.append(lit[1:-1].replace('""', '"'))
        elif lit.upper() in ("TRUE", "FALSE"):
            values.append(lit.upper() == "TRUE")
        elif lit.endswith("%"):
            values.append(float(lit[:-1]) / 100)
        else:
            values.append(float(lit) if any(c in lit for c in ".eE") else int(lit))
        pos = token.end()
    return values


def example_args(spec: SheetFunction) -> list[typing.Any] | None:
    """The literal arguments of the registry example (``=NAME(10, "x", {1,2}) -> ...``); None if it uses cells."""
    match = re.match(rf"=\s*{spec.name}\((.*)\)\s*(?:->|$)", spec.example.strip(), flags=re.I)
    if not match:
        return None
    values = _literals(match.group(1))
    if values is None or len(values) > len(spec.args):
        return None
    if any(isinstance(v, list) != (not a.elementwise) for a, v in zip(spec.args, values)):
        return None  # a range given where one value is expected, or the reverse
    return values


EXAMPLES = [(spec, example_args(spec)) for spec in SPECS]
LITERAL_EXAMPLES = [(spec, args) for spec, args in EXAMPLES if args is not None]
SCALAR_EXAMPLES = [(spec, args) for spec, args in LITERAL_EXAMPLES if all(a.elementwise for a in spec.args)]


def test_most_examples_are_callable_literally() -> None:
    assert len(LITERAL_EXAMPLES) >= min(5, len(SPECS))
    assert len(LITERAL_EXAMPLES) >= len(SPECS) // 2


def _core(spec: SheetFunction, args: list[typing.Any]) -> typing.Any:
    """The core's result, or the message of the planner error it raises (what the cell must then show)."""
    try:
        return getattr(planner.functions, spec.name)(*args)
    except PlannerError as exc:
        return str(exc)


def _as_text(value: typing.Any) -> typing.Any:
    return repr(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


def _excel_shaped(spec: SheetFunction, args: list[typing.Any]) -> list[typing.Any]:
    """Every value as Excel passes it with ``ndim=2`` (a single cell ``[[v]]``, an array constant or a row
    ``[[a, b, c]]``), numbers typed as text, and missing optional arguments as empty cells."""
    shaped = []
    for arg, value in zip(spec.args, args):
        if arg.kind == "table":
            shaped.append(value)  # rows of cells, as Excel hands a range
        elif isinstance(value, list):
            shaped.append([[_as_text(v) for v in value]] if arg.kind == "numbers" else [value])
        else:
            shaped.append([[_as_text(value) if arg.kind == "number" else value]])
    shaped += [[[None]] for _ in spec.args[len(args) :]]
    return shaped


@pytest.mark.parametrize("spec,args", LITERAL_EXAMPLES, ids=[s.name for s, _ in LITERAL_EXAMPLES])
def test_excel_shaped_call_equals_core(spec: SheetFunction, args: list[typing.Any]) -> None:
    expected = _core(spec, args)
    udf = getattr(udfs, spec.name)
    assert udf(*_excel_shaped(spec, args)) == expected
    assert udf(*args) == expected
    if any(a.kind == "table" for a in spec.args):  # a table is rows of cells in every shape; the rest is 1-D
        return
    assert udf(*[[v] if isinstance(v, list) else [[v]] for v in args]) == expected
    # 1-D lists (what xlwings passes for a row without ndim=2) and bare scalars also work (above).
    if any(isinstance(v, list) for v in args):  # a range given as a column instead of a row
        assert udf(*[[[x] for x in v] if isinstance(v, list) else v for v in args]) == expected


@pytest.mark.parametrize("spec,args", SCALAR_EXAMPLES, ids=[s.name for s, _ in SCALAR_EXAMPLES])
def test_whole_column_returns_a_column(spec: SheetFunction, args: list[typing.Any]) -> None:
    numeric = [i for i, (a, v) in enumerate(zip(spec.args, args)) if a.kind == "number" and not isinstance(v, bool)]
    if not numeric:
        pytest.skip("no number argument to spread over a column")
    i = numeric[0]
    rows = [args[i], args[i] * 2 if args[i] else 1, args[i]]
    column_args = [[[v]] for v in args]
    column_args[i] = [[str(v)] for v in rows]  # a whole column, numbers typed as text
    expected = [[_core(spec, [*args[:i], v, *args[i + 1 :]])] for v in rows]
    assert getattr(udfs, spec.name)(*column_args) == expected


def test_capacity_tpm_from_a_routes_table() -> None:
    qps = [[10], [None], ["2.5"]]  # an empty cell in the middle of the column
    result = udfs.CAPACITY_TPM(qps, [[2000]], [[500]])
    assert result[0] == [planner.functions.CAPACITY_TPM(10, 2000, 500)]
    assert result[2] == [planner.functions.CAPACITY_TPM(2.5, 2000, 500)]
    assert "peak_qps" in result[1][0]  # the empty required cell is named, not a traceback


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_bad_text_is_a_message_naming_the_argument(spec: SheetFunction) -> None:
    number_args = [a for a in spec.args if a.kind == "number"]
    if not number_args:
        pytest.skip("no number argument")
    target = number_args[0]
    args = [[["not a number"]] if a is target else [[None]] for a in spec.args]
    message = getattr(udfs, spec.name)(*args)
    assert isinstance(message, str) and len(message) <= 255
    assert target.name in message or any(a.name in message for a in spec.args if not a.optional)


def test_error_cell_is_passed_on_not_taken_as_empty() -> None:
    """An Excel error in an argument is the result (the error policy, docs/template.md): never the default."""
    assert udfs.CAPACITY_RPM([["#N/A"]]) == "#N/A"
    assert udfs.CAPACITY_ITPM([[10]], [[20000]], [["#DIV/0!"]]) == "#DIV/0!"


def test_unexpected_exception_is_a_short_message_naming_the_argument() -> None:
    def SCALE(a, b=2.0):  # noqa: N802  (a spreadsheet-style function built only for this test)
        doubled = 2 * a
        return doubled / b

    spec = SheetFunction(
        name="SCALE",
        summary="Twice a, divided by b.",
        args=(Arg(name="a", unit="x", help="a"), Arg(name="b", unit="x", help="b", default=2.0)),
        returns="x",
        category="Test",
        example="=SCALE(1, 2) -> 1",
        impl=SCALE,
    )
    assert addin.excel_call(spec, [[3]], [[None]]) == 3.0
    message = addin.excel_call(spec, [[3]], [[0]])
    assert message.startswith("SCALE: ZeroDivisionError: ") and message.endswith("(check b)")
    column = addin.excel_call(spec, [[3], [4]], [[0], [None]])  # only the failing row shows the message
    assert column == [[message], [4.0]]


# --- names Excel and VBA accept ----------------------------------------------------------------------------------

VBA_RESERVED = set(
    """and as attribute boolean byref byte byval call case cbool cbyte ccur cdate cdbl cdec cint clng clnglng clngptr
    close const csng cstr currency cvar date decimal declare defbool defbyte defcur defdate defdbl defint deflng
    deflnglng deflngptr defobj defsng defstr defvar dim do double each else elseif empty end endif enum eqv erase error
    event exit false for friend function get global gosub goto if imp implements in input integer is let lib like line
    local long longlong longptr loop lset me mod new next not nothing null on open option optional or paramarray
    preserve print private property ptrsafe public put raiseevent redim rem resume return rset seek select set single
    static step stop string sub then to true type typeof until variant wend while with withevents write xor""".split()
)
WRAPPER_NAMES = {"array", "application", "xlpy", "thisworkbook", "activeworkbook", "err", "range", "failed"}
"""Names the xlwings VBA wrapper uses inside every function: a parameter of that name would shadow them. The
wrapper's line label ``failed:`` is included too: whether VBA keeps labels apart from variables cannot be checked
without Excel, so the safe rule is to never use the name."""


def test_argument_names_are_valid_vba_parameters() -> None:
    function_names = {name.lower() for name in REGISTRY}
    for spec in SPECS:
        for arg in spec.args:
            name = arg.name.lower()
            assert re.fullmatch(r"[a-z][a-z0-9_]{0,254}", name), f"{spec.name}.{arg.name}"
            assert name not in VBA_RESERVED | WRAPPER_NAMES, f"{spec.name}.{arg.name} is a VBA keyword or wrapper name"
            assert name not in function_names, f"{spec.name}.{arg.name} is also a function name"


def test_function_names_are_not_cell_references_or_excel_built_ins() -> None:
    import json
    import subprocess
    import sys

    # the formulas library's own list, read in a fresh process: planner's general engine adds the registry's
    # functions to that (process-wide) list, so in a test run that has recomputed a plan they would all be in it
    code = "import json, formulas; print(json.dumps(list(formulas.get_functions())))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    built_ins = {name.upper() for name in json.loads(out.stdout)}
    assert {"SUM", "INDEX", "XLOOKUP"} <= built_ins
    for name in REGISTRY:
        assert re.fullmatch(r"[A-Z][A-Z0-9_.]*", name)
        assert not re.fullmatch(r"[A-Z]{1,3}[0-9]{1,7}", name), f"{name} looks like a cell reference"
        assert not re.fullmatch(r"R[0-9]*C[0-9]*", name), f"{name} looks like an R1C1 reference"
        assert name not in built_ins, f"{name} is an Excel built-in function"


def test_numpy_arrays_are_ranges_too() -> None:
    import numpy as np

    column = np.array([[10.0], [20.0]])
    assert udfs.CAPACITY_TPM(column, np.array([[2000.0]]), 500) == udfs.CAPACITY_TPM([[10], [20]], [[2000]], [[500]])
    assert udfs.CAPACITY_TPM(column, 2000, 500)[1] == [planner.functions.CAPACITY_TPM(20, 2000, 500)]


def test_an_unpriced_gpu_is_named_not_dumped_as_its_token() -> None:
    """``GPU_PRICE`` of a GPU the GPUs sheet leaves unpriced names the GPU (the L4 has no bundled price); the whole
    spec token (every fact of the GPU) is not what the planner has to fix."""
    import json

    from planner.functions import GPU_PRICE, GPU_SPEC

    gpus = json.loads((Path(__file__).resolve().parents[1] / "planner" / "data" / "gpus.json").read_text())
    l4 = next(g for g in (gpus["gpus"] if isinstance(gpus, dict) else gpus) if g["id"] == "l4")
    assert l4["usd_per_gpu_hour"] is None
    from planner.errors import ArgumentError

    token = GPU_SPEC("l4", [["GPU [name]"], ["l4"]])
    with pytest.raises(ArgumentError) as caught:
        GPU_PRICE(token)
    message = str(caught.value)
    assert message.startswith("gpu: got 'l4', expected a GPU with a price per GPU-hour"), message
    assert "|" not in message
