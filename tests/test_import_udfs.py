"""Excel's "Import Functions" on Linux: xlwings' own ``xlwings.udfs.import_udfs`` (the code the ribbon button runs on
Windows) runs over ``planner.udfs`` against a fake workbook. Only the Windows COM modules are stubbed (``pythoncom``,
``pywintypes``, ``win32com.client``: the reason ``xlwings.udfs`` cannot be imported on Linux) and the workbook's COM
object, which records what xlwings asks of Excel: the VBA module it imports and each ``Application.MacroOptions``
call (the function wizard's description, category and argument help). Everything else is xlwings' code.

What stays unverified without Excel: that Excel accepts the module and the MacroOptions, and shows them.
"""

from __future__ import annotations

import importlib
import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import xlwings

from planner import addin
from planner.registry import load

REGISTRY = load()


class ComError(Exception):
    """pywintypes.com_error."""


class VBComponents:
    def __init__(self) -> None:
        self.imported: list[str] = []
        self.removed: list[str] = []
        self.present: set[str] = set()

    def __call__(self, name: str) -> str:
        if name not in self.present:
            raise ComError(f"no component {name}")
        return name

    def Remove(self, component: str) -> None:  # noqa: N802  (COM method name)
        self.removed.append(component)
        self.present.discard(component)

    def Import(self, path: str) -> None:  # noqa: N802
        text = Path(path).read_text()
        self.imported.append(text)
        match = re.search(r'Attribute VB_Name = "(\w+)"', text)
        assert match
        self.present.add(match.group(1))


class Application:
    Version = "16.0"

    def __init__(self) -> None:
        self.macro_options: list[tuple[str, dict[str, Any]]] = []

    def MacroOptions(self, macro: str, **options: Any) -> None:  # noqa: N802
        self.macro_options.append((macro, options))

    def Run(self, *args: Any) -> None:  # noqa: N802
        raise AssertionError(f"the fallback import path should not be needed: {args}")


class Workbook:
    Name = "capacity-plan.xlsm"

    def __init__(self) -> None:
        self.VBProject = types.SimpleNamespace(VBComponents=VBComponents())
        self.Application = Application()


@pytest.fixture()
def windows_xlwings(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    """``xlwings.udfs`` imported for real, with the three pywin32 modules stubbed."""
    pythoncom = types.ModuleType("pythoncom")
    pythoncom.CoInitialize = lambda: None
    pywintypes = types.ModuleType("pywintypes")
    pywintypes.com_error = ComError
    win32com = types.ModuleType("win32com")
    client = types.ModuleType("win32com.client")
    client.Dispatch = lambda obj: obj
    win32com.client = client
    for name, module in {
        "pythoncom": pythoncom,
        "pywintypes": pywintypes,
        "win32com": win32com,
        "win32com.client": client,
    }.items():
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.delitem(sys.modules, "xlwings.udfs", raising=False)
    udfs = importlib.import_module("xlwings.udfs")
    yield udfs
    sys.modules.pop("xlwings.udfs", None)
    if hasattr(xlwings, "udfs"):  # the import set it on the package: leave xlwings as Linux has it
        delattr(xlwings, "udfs")


def _windows_planner_udfs(udfs: types.ModuleType) -> types.ModuleType:
    """planner/udfs.py executed as on Windows, where ``xw.func``/``xw.arg``/``xw.ret`` are ``xlwings.udfs``'s."""
    windows = types.ModuleType("xlwings")
    windows.__dict__.update(vars(xlwings))
    windows.func, windows.arg, windows.ret = udfs.xlfunc, udfs.xlarg, udfs.xlret
    module = types.ModuleType("planner.udfs")
    module.__file__ = str(addin.UDFS_PATH)
    saved = sys.modules["xlwings"]
    sys.modules["xlwings"] = windows
    try:
        exec(compile(addin.UDFS_PATH.read_text(encoding="utf-8"), str(addin.UDFS_PATH), "exec"), module.__dict__)  # noqa: S102
    finally:
        sys.modules["xlwings"] = saved
    return module


def test_import_functions_writes_one_wrapper_and_one_macro_options_per_function(
    windows_xlwings: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = _windows_planner_udfs(windows_xlwings)
    # The UDF server's module cache, as after its first call: get_udf_module then skips the embedded-code scan
    # (a licensed feature that needs a live workbook) and returns this module.
    monkeypatch.setitem(
        windows_xlwings.udf_modules,
        "planner.udfs",
        {"module": module, "filetime": None, "filename": str(addin.UDFS_PATH)},
    )
    book = Workbook()
    book.VBProject.VBComponents.present.add("xlwings_udfs")  # a previous import, which xlwings replaces
    windows_xlwings.import_udfs(addin.UDF_MODULE, book)

    components = book.VBProject.VBComponents
    assert components.removed == ["xlwings_udfs"] and len(components.imported) == 1
    vba = components.imported[0]
    wrappers = re.findall(r"^Function (\w+)\(([^)]*)\)", vba, flags=re.M)
    assert sorted(name for name, _ in wrappers) == sorted(REGISTRY)  # one wrapper per function, no other
    assert vba.count("\nEnd Function") == len(REGISTRY)
    blocks = {m.group(1): m.group(0) for m in re.finditer(r"^Function (\w+)\(.*?^End Function", vba, flags=re.M | re.S)}
    for name, params in wrappers:
        spec = REGISTRY[name]
        assert params == ", ".join(("Optional " if a.optional else "") + a.name for a in spec.args)
        assert f'XLPy.CallUDF("planner.udfs", "{name}", Array(' in blocks[name]

    calls = book.Application.macro_options
    assert sorted(macro for macro, _ in calls) == sorted(f"'capacity-plan.xlsm'!{name}" for name in REGISTRY)
    for macro, options in calls:
        spec = REGISTRY[macro.split("!")[1]]
        assert options["Description"] == spec.description
        assert options["Category"] == spec.category
        assert options["ArgumentDescriptions"] == [spec.arg_help(a) for a in spec.args]
        assert all(len(text) <= 255 for text in [options["Description"], *options["ArgumentDescriptions"]])
