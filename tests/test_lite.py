"""The xlwings Lite bundle (addin/lite/): current with the registry, importable, and computing what planner.udfs and
the core compute. Lite itself (Pyodide inside Excel) cannot run here; on Linux ``from xlwings import func, arg``
gives no-op decorators, so the bundle imports and its functions can be called directly."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import subprocess
import sys
import types

import pytest

import planner.udfs as udfs
from planner import addin
from planner.registry import load

REGISTRY = load()
MAIN = addin.LITE_DIR / "main.py"
REQUIREMENTS = addin.LITE_DIR / "requirements.txt"


@pytest.fixture(scope="module")
def lite() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("lite_main", MAIN)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bundle_is_current() -> None:
    assert MAIN.read_text(encoding="utf-8") == addin.lite_main_source(), (
        "addin/lite/main.py is stale: run .venv/bin/python -m planner.addin --write"
    )
    assert REQUIREMENTS.read_text(encoding="utf-8") == addin.lite_requirements_source()


def test_requirements_pin_this_package() -> None:
    lines = [line for line in REQUIREMENTS.read_text().splitlines() if line.strip()]
    assert lines == [f"llm-capacity-planner=={addin.package_version()}"]


def test_main_imports_only_xlwings_and_planner() -> None:
    tree = ast.parse(MAIN.read_text(encoding="utf-8"))
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            modules.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
    assert modules == {"xlwings", "planner"}


def test_bundle_matches_the_registry(lite: types.ModuleType) -> None:
    functions = {
        name: obj for name, obj in vars(lite).items() if inspect.isfunction(obj) and obj.__module__ == "lite_main"
    }
    assert set(functions) == set(REGISTRY)
    for name, func in functions.items():
        spec = REGISTRY[name]
        params = list(inspect.signature(func).parameters.values())
        assert [p.name for p in params] == [a.name for a in spec.args]
        assert all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params)
        assert [p.default is None for p in params] == [a.optional for a in spec.args]
        assert func.__doc__ == spec.description


def test_every_function_and_argument_is_decorated_with_help() -> None:
    tree = ast.parse(MAIN.read_text(encoding="utf-8"))
    for node in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
        spec = REGISTRY[node.name]
        assert ast.unparse(node.decorator_list[0]) == "func"
        calls = node.decorator_list[1:]
        assert [ast.literal_eval(c.args[0]) for c in calls] == [a.name for a in spec.args]
        for call, arg in zip(calls, spec.args):
            assert {k.arg: ast.literal_eval(k.value) for k in call.keywords} == {"ndim": 2, "doc": spec.arg_help(arg)}


def test_lite_computes_what_the_desktop_add_in_computes(lite: types.ModuleType) -> None:
    calls = [
        ("CAPACITY_RPM", [[["25"]]]),
        ("CAPACITY_TPM", [[[10], ["20"], [None]], [[2000]], [[500]]]),
        ("CAPACITY_TPM", [[["ten"]], [[2000]], [[500]]]),
    ]
    for name, args in calls:
        assert getattr(lite, name)(*args) == getattr(udfs, name)(*args)
    assert lite.CAPACITY_TPM([[10]], [[2000]], [[500]]) == 60 * 10 * (2000 + 500)


def test_the_function_layer_needs_no_heavy_library() -> None:
    """In Pyodide only planner's own code runs for a function call: no openpyxl, formulas or click import."""
    code = (
        "import sys, planner.addin, planner.functions\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'openpyxl', 'formulas', 'schedula', 'click'}))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
