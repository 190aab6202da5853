"""xlwings Lite, really: Pyodide (the npm package) under Node installs this checkout's wheel and xlwings' pure wheel
from local files with micropip, with every network request refused, loads ``addin/lite/main.py`` as Lite does and
calls every registered function with Office.js-shaped arguments (2-D arrays, nulls, empty strings, error objects).
Each result must equal what the desktop module (:mod:`planner.udfs`, CPython) returns for the same cells.

``tools/pyodide-setup`` (run by ``.ci/run`` at install time) puts Pyodide, micropip's and xlwings' wheels and the
project wheel in ``.cache/pyodide`` (``PLANNER_PYODIDE_CACHE``); nothing is downloaded here. Without Node or that
cache the tests skip, except under ``CI=true``, where they fail.

The calls go through xlwings' own Office.js path (``custom_functions_meta``/``custom_functions_call``) only when an
xlwings licence key is in ``XLWINGS_LICENSE_KEY``: outside Lite that code is licence-gated. Without a key (the
default, and CI) the functions are called directly with the values xlwings' Office.js reader hands them
(``tests/pyodide/lite_probe.py``: ``as_lite_passes``), and the metadata is checked from the loaded functions and
their ``@arg`` declarations.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest
from test_udfs import example_args

import planner.udfs as udfs
from planner import addin
from planner.registry import SheetFunction, load

REPO = addin.REPO_ROOT
CACHE = Path(os.environ.get("PLANNER_PYODIDE_CACHE", REPO / ".cache" / "pyodide"))
DRIVER = REPO / "tests" / "pyodide" / "run.mjs"
REGISTRY = load()
SPECS = [REGISTRY[name] for name in sorted(REGISTRY)]
HEAVY = {"openpyxl", "formulas", "schedula", "numpy", "scipy", "regex", "click", "defusedxml", "tqdm", "pandas"}

NA = {"type": "Error", "errorType": "notAvailable", "basicValue": "#N/A"}
DIV0 = {"type": "Error", "errorType": "div0", "basicValue": "#DIV/0!"}
"""Error cells as Office.js passes them to a custom function (``allowErrorForDataTypeAny``)."""


def _versions() -> list[str]:
    return sorted(p.parent.parent.parent.name for p in CACHE.glob("*/node_modules/pyodide/pyodide.mjs"))


def _wheel(pattern: str) -> Path | None:
    found = sorted((CACHE / "wheels").glob(pattern))
    return found[-1] if found else None


def _missing() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed (Debian: apt-get install nodejs npm)"
    if not _versions():
        return f"no Pyodide in {CACHE} (run tools/pyodide-setup)"
    if _wheel("llm_capacity_planner-*.whl") is None or _wheel("xlwings-*-py3-none-any.whl") is None:
        return f"no project or xlwings wheel in {CACHE / 'wheels'} (run tools/pyodide-setup)"
    return None


def _require_setup() -> None:
    reason = _missing()
    if reason is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but the Pyodide test cannot run: {reason}")
    pytest.skip(reason)


# --- the cases: Office.js-shaped arguments ----------------------------------------------------------------------


def _office(spec: SheetFunction, values: list[Any]) -> list[Any]:
    """Registry example values as Office.js passes them (every parameter is a matrix): a cell ``[[v]]``, a range
    one row, an omitted optional argument ``null``."""
    shaped: list[Any] = [[v] if isinstance(v, list) else [[v]] for v in values]
    return shaped + [None] * (len(spec.args) - len(values))


def lite_cases() -> list[dict[str, Any]]:
    """Per function: the registry example, and edge cases built from it (error objects, empty strings, nulls,
    a whole column with an empty cell and a number typed as text)."""
    cases = []
    for spec in SPECS:
        values = example_args(spec)
        assert values is not None, f"{spec.name}: the registry example is not literal"
        base = _office(spec, values)

        def add(kind: str, args: list[Any], spec: SheetFunction = spec) -> None:
            cases.append({"id": f"{spec.name}:{kind}", "name": spec.name, "args": args})

        add("example", base)
        add("error-first", [[[NA]], *base[1:]])
        optional = [i for i, a in enumerate(spec.args) if a.optional]
        if optional:
            last = optional[-1]
            add("error-optional", [*base[:last], [[DIV0]], *base[last + 1 :]])
            add("empty-string-optional", [*base[: optional[0]], [[""]], *base[optional[0] + 1 :]])
            add("null-cell-optional", [*base[: optional[0]], [[None]], *base[optional[0] + 1 :]])
        required = [i for i, a in enumerate(spec.args) if not a.optional]
        if required:
            add("empty-required", [*base[: required[-1]], [[""]], *base[required[-1] + 1 :]])
        numbers = [
            i
            for i, (a, v) in enumerate(zip(spec.args, values))
            if a.kind == "number" and isinstance(v, (int, float)) and not isinstance(v, bool)
        ]
        if numbers:
            i = numbers[0]
            column = [[values[i]], [None], [""], [repr(values[i] * 2 if values[i] else 1)]]
            add("column", [*base[:i], column, *base[i + 1 :]])
    return cases


def _desktop_cell(value: Any) -> Any:
    """The same cell as classic xlwings hands it to ``planner.udfs`` (``ndim=2, err_to_str=True``): an empty cell
    is None, an error cell its text."""
    if isinstance(value, dict):
        return value["basicValue"]
    return None if value == "" else value


def desktop_result(case: dict[str, Any]) -> Any:
    args = [None if a is None else [[_desktop_cell(c) for c in row] for row in a] for a in case["args"]]
    return getattr(udfs, case["name"])(*args)


def _as_matrix(value: Any) -> Any:
    return value if isinstance(value, list) else [[value]]


# --- running Pyodide ----------------------------------------------------------------------------------------------


def requirement_wheels() -> list[Path]:
    """The local wheels for the lines of ``addin/lite/requirements.txt``, as micropip would resolve them online:
    ``xlwings`` -> xlwings' pure wheel, ``llm-capacity-planner==V`` -> this checkout's wheel of version V."""
    wheels = []
    for line in (addin.LITE_DIR / "requirements.txt").read_text(encoding="utf-8").splitlines():
        requirement = line.split("#", 1)[0].strip()
        if not requirement:
            continue
        name = re.split(r"[<>=!~ ;\[]", requirement, maxsplit=1)[0].lower()
        if name == "xlwings":
            wheel = _wheel("xlwings-*-py3-none-any.whl")
        else:
            assert name == addin.PACKAGE, requirement
            version = requirement.split("==", 1)[1]
            wheel = _wheel(f"llm_capacity_planner-{version}-py3-none-any.whl")
        assert wheel is not None, f"no local wheel for {requirement!r} in {CACHE / 'wheels'}"
        wheels.append(wheel)
    return wheels


_REPORTS: dict[str, dict[str, Any]] = {}


def pyodide_report(version: str, tmp_dir: Path) -> dict[str, Any]:
    if version not in _REPORTS:
        pyodide_dir = CACHE / version / "node_modules" / "pyodide"
        lock = json.loads((pyodide_dir / "pyodide-lock.json").read_text(encoding="utf-8"))
        micropip = _wheel(f"micropip-{lock['packages']['micropip']['version']}-*.whl")
        assert micropip is not None, f"no micropip wheel for Pyodide {version} (run tools/pyodide-setup)"
        cases_path = tmp_dir / f"cases-{version}.json"
        cases_path.write_text(json.dumps(lite_cases()), encoding="utf-8")
        run = subprocess.run(
            ["node", str(DRIVER), str(pyodide_dir), str(micropip), str(addin.LITE_DIR / "main.py"), str(cases_path)]
            + [str(w) for w in requirement_wheels()],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert run.returncode == 0, run.stderr[-4000:]
        _REPORTS[version] = json.loads(run.stdout.strip().splitlines()[-1])
    return _REPORTS[version]


@pytest.fixture(scope="module", params=_versions() or ["(none)"])
def report(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    _require_setup()
    return pyodide_report(request.param, tmp_path_factory.mktemp("pyodide"))


# --- the tests ------------------------------------------------------------------------------------------------------


def test_the_project_wheel_is_this_checkout() -> None:
    """The cached wheel must hold exactly the checkout's function layer (else rerun tools/pyodide-setup)."""
    _require_setup()
    wheel = _wheel("llm_capacity_planner-*.whl")
    assert wheel is not None
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            if name.startswith("planner/") and name.endswith((".py", ".json")):
                digest = hashlib.sha256(zf.read(name)).hexdigest()
                assert digest == hashlib.sha256((REPO / name).read_bytes()).hexdigest(), (
                    f"{wheel.name}: {name} differs from the checkout; rerun tools/pyodide-setup"
                )
    assert [c for c in addin.check_wheel(wheel) if not c.ok] == []


def test_the_cases_cover_every_function_and_shape() -> None:
    cases = lite_cases()
    assert {c["name"] for c in cases} == set(REGISTRY)
    kinds = {c["id"].split(":")[1] for c in cases}
    assert {"example", "error-first", "error-optional", "empty-string-optional", "column"} <= kinds
    na = desktop_result({"name": "CAPACITY_ITPM", "args": [[[10]], [[20000]], [[NA]]]})
    assert na == "#N/A"  # the case: the error is the result on the desktop, never the optional default


@pytest.mark.slow
def test_lite_installs_the_function_layer_alone(report: dict[str, Any]) -> None:
    assert report["platform"] == "emscripten"
    assert tuple(int(p) for p in report["python"].split(".")[:2]) >= (3, 10)
    assert report["refused_requests"] == [], "the install or the calls tried the network"
    assert sorted(report["micropip_list"]) == sorted(["micropip", "xlwings", addin.PACKAGE])
    imported = set(report["modules"])
    assert not imported & HEAVY, f"imported in Pyodide: {sorted(imported & HEAVY)}"
    assert {"planner", "xlwings", "main"} <= set(report["imported_by_install_and_main"])


@pytest.mark.slow
def test_every_function_registers_with_the_registry_metadata(report: dict[str, Any]) -> None:
    registered = {f["name"].split(".")[-1]: f for f in report["registered"]}
    assert set(registered) == set(REGISTRY)
    for spec in SPECS:
        entry = registered[spec.name]
        assert entry["description"] == spec.description
        assert entry["parameters"] == [[a.name, spec.arg_help(a), a.optional] for a in spec.args]
        if "options" in entry:  # direct mode: the @arg declarations xlwings would read
            assert entry["options"] == [[a.name, {"ndim": 2, "err_to_str": True}] for a in spec.args]


@pytest.mark.slow
def test_every_result_equals_the_desktop(report: dict[str, Any]) -> None:
    cases = lite_cases()
    results = report["results"]
    assert set(results) == {c["id"] for c in cases}
    differ = []
    for case in cases:
        lite, desktop = results[case["id"]], desktop_result(case)
        if report["mode"] == "xlwings":  # xlwings' Office.js writer returns every result as a matrix
            desktop = _as_matrix(desktop)
        if lite != desktop:
            differ.append(f"{case['id']}: Lite {lite!r} != desktop {desktop!r}")
    print(f"Pyodide {report['pyodide']} ({report['mode']}): {len(cases) - len(differ)} of {len(cases)} equal")
    assert not differ, "\n".join(differ[:20])
