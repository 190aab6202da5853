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
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

import planner.entry
import planner.udfs as udfs
from planner import addin
from planner.cli import cli
from planner.registry import load

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

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


def test_requirements_are_xlwings_unbounded_and_this_package_pinned() -> None:
    lines = [line.split("#")[0].strip() for line in REQUIREMENTS.read_text().splitlines() if line.strip()]
    assert lines == ["xlwings", f"llm-capacity-planner=={addin.package_version()}"]
    assert all(check.ok for check in addin.check_lite_requirements(REQUIREMENTS.read_text()))


@pytest.mark.parametrize(
    "text,failing",
    [
        ("xlwings==0.33.15  # required\nllm-capacity-planner==0.1.0\n", "requirements: xlwings"),
        ("llm-capacity-planner==0.1.0\n", "requirements: xlwings"),
        ("xlwings\nllm-capacity-planner==0.0.9\n", "requirements: llm-capacity-planner"),
        ("xlwings\nllm-capacity-planner\n", "requirements: llm-capacity-planner"),
        ("xlwings\nhttp://example.org/llm_capacity_planner-0.1.0-py3-none-any.whl\n", "requirements: llm-capacity"),
        ("xlwings\nhttps://example.org/llm_capacity_planner-0.1.0-cp312-cp312-linux_x86_64.whl\n", "requirements: llm"),
        ("xlwings\nhttps://example.org/llm_capacity_planner-0.2.0-py3-none-any.whl\n", "requirements: llm-capacity"),
    ],
)
def test_requirement_checks_refuse_what_lite_cannot_install(text: str, failing: str) -> None:
    """A pinned xlwings (our pin would fight the workbook's own), a version other than main.py's, an http or a
    platform wheel: each is a failed check."""
    checks = addin.check_lite_requirements(text, version="0.1.0")
    assert [c.name for c in checks if not c.ok] and all(c.name.startswith(failing) for c in checks if not c.ok)


def test_self_hosted_url_line_passes() -> None:
    text = addin.lite_requirements_source("https://example.org/w/llm_capacity_planner-0.1.0-py3-none-any.whl")
    assert all(c.ok for c in addin.check_lite_requirements(text, version="0.1.0"))


def _wheel(path: Path, requires: list[str], files: tuple[str, ...] = addin.FUNCTION_LAYER_FILES) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name in (*files, "planner/data/gpus.json"):
            zf.writestr(name, "")
        metadata = "Metadata-Version: 2.1\nName: llm-capacity-planner\nVersion: 0.1.0\n"
        metadata += "".join(f"Requires-Dist: {r}\n" for r in requires)
        zf.writestr("llm_capacity_planner-0.1.0.dist-info/METADATA", metadata)
    return path


def test_wheel_check(tmp_path: Path) -> None:
    name = "llm_capacity_planner-0.1.0-py3-none-any.whl"
    (tmp_path / "good").mkdir()
    (tmp_path / "bad").mkdir()
    good = _wheel(tmp_path / "good" / name, ['openpyxl>=3.1; extra == "cli"'])
    assert all(c.ok for c in addin.check_wheel(good, version="0.1.0"))
    heavy = _wheel(tmp_path / "bad" / name, ["openpyxl>=3.1", "xlwings<0.38,>=0.37.8"])
    (check,) = addin.check_wheel(heavy, version="0.1.0")
    assert not check.ok and "openpyxl>=3.1" in check.detail and "xlwings" in check.detail
    partial = _wheel(tmp_path / "bad" / "llm_capacity_planner-0.1.0-py3-none-any.whl", [], files=("planner/a.py",))
    (check,) = addin.check_wheel(partial, version="0.1.0")
    assert not check.ok and "planner/registry.py" in check.detail
    (tmp_path / "junk.whl").write_bytes(b"not a zip")
    assert not addin.check_wheel(tmp_path / "junk.whl", version="0.1.0")[0].ok


def test_planner_addin_lite_writes_a_self_hosted_bundle(tmp_path: Path) -> None:
    version = addin.package_version()
    wheel = _wheel(tmp_path / addin.wheel_filename(version), ['click>=8.1; extra == "cli"'])
    out = tmp_path / "bundle"
    args = ["addin", "lite", "-o", str(out), "--wheel", str(wheel), "--url", "https://example.org/wheels/"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert (out / "main.py").read_text() == addin.lite_main_source()
    lines = (out / "requirements.txt").read_text().splitlines()
    assert lines[1] == f"https://example.org/wheels/{wheel.name}"
    assert (out / wheel.name).read_bytes() == wheel.read_bytes()
    assert "[FAIL]" not in result.output and lines[1] in result.output


def test_planner_addin_lite_fails_on_a_heavy_wheel(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path / addin.wheel_filename(), ["formulas>=1.3.4"])
    result = CliRunner().invoke(cli, ["addin", "lite", "--wheel", str(wheel), "--url", "https://example.org/w"])
    assert result.exit_code == 1 and "[FAIL] wheel" in result.output and "formulas" in result.output
    result = CliRunner().invoke(cli, ["addin", "lite", "--wheel", str(wheel)])
    assert result.exit_code == 2 and "--url" in result.output


def test_planner_addin_lite_prints_the_released_pin() -> None:
    result = CliRunner().invoke(cli, ["addin", "lite"])
    assert result.exit_code == 0, result.output
    assert f"llm-capacity-planner=={addin.package_version()}" in result.output


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
            keywords = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
            assert keywords == {"ndim": 2, "err_to_str": True, "doc": spec.arg_help(arg)}


def test_lite_computes_what_the_desktop_add_in_computes(lite: types.ModuleType) -> None:
    calls = [
        ("CAPACITY_RPM", [[["25"]]]),
        ("CAPACITY_TPM", [[[10], ["20"], [None]], [[2000]], [[500]]]),
        ("CAPACITY_TPM", [[["ten"]], [[2000]], [[500]]]),
    ]
    for name, args in calls:
        assert getattr(lite, name)(*args) == getattr(udfs, name)(*args)
    assert lite.CAPACITY_TPM([[10]], [[2000]], [[500]]) == 60 * 10 * (2000 + 500)


HEAVY = ("openpyxl", "formulas", "schedula", "click", "numpy", "defusedxml", "xlwings", "tomli")


def test_the_function_layer_needs_no_outside_library() -> None:
    """With every outside library made unimportable, the function layer still imports and computes (what the
    base install, and so Lite, provides): registry, core, catalog data, planner.functions and planner.addin."""
    code = (
        "import sys\n"
        f"for name in {HEAVY!r}: sys.modules[name] = None\n"
        "import planner, planner.addin, planner.functions, planner.catalog, planner.registry\n"
        "reg = planner.registry.load()\n"
        "print(len(reg), planner.addin.excel_call(reg['CAPACITY_TPM'], [[10]], [[2000]], [[500]]),"
        " planner.kv_capacity('llama-3.1-70b', 'h100-sxm', tp=4).kv_cache_tokens > 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(len(REGISTRY)), repr(60 * 10 * (2000 + 500.0)), "True"]


def _imported_roots(path) -> set[str]:
    import ast

    roots = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            roots.add(node.module.split(".")[0])
    return roots


def test_each_outside_library_lives_in_one_module() -> None:
    """DEVELOPERS.md: each outside library is imported by one module of the package (import statements, not the
    generated code the add-in module holds as text)."""
    where: dict[str, list[str]] = {}
    for path in sorted((addin.REPO_ROOT / "planner").rglob("*.py")):
        for root in _imported_roots(path) & {*HEAVY, "oletools", "olefile", "python_calamine"}:
            where.setdefault(root, []).append(str(path.relative_to(addin.REPO_ROOT)))
    assert {k: v for k, v in where.items() if len(v) > 1 and k not in ("formulas", "schedula", "numpy")} == {}
    # formulas needs schedula and numpy for its arrays: the three live in the one adapter module
    assert where["formulas"] == where["schedula"] == where["numpy"] == ["planner/formulas_engine.py"]
    assert where["xlwings"] == ["planner/udfs.py"] and where["click"] == ["planner/cli.py"]


def test_the_base_install_requires_nothing() -> None:
    project = tomllib.loads((addin.REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["dependencies"] == []
    extras = project["optional-dependencies"]
    assert not any(r.startswith("xlwings") for r in extras["cli"]) and extras["excel"][0].startswith("xlwings")


def test_planner_command_without_the_cli_extra_says_which_install() -> None:
    code = "import sys\nsys.modules['click'] = None\nsys.argv = ['planner', 'functions']\nimport planner.entry\n"
    code += "planner.entry.main()\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.strip() == planner.entry.missing_message("click") and "[all]" in result.stderr


def test_release_workflow_builds_checks_and_publishes_the_wheel() -> None:
    """The release workflow runs on a version tag, builds the wheel whose name addin.wheel_filename gives, checks
    it with ``planner addin lite --wheel`` (options this CLI has) and attaches it to the GitHub release."""
    text = (addin.REPO_ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    assert 'tags: ["v*"]' in text and "python -m build" in text
    assert addin.wheel_filename("${VERSION}") in text
    command = next(line.strip() for line in text.splitlines() if "planner addin lite -o" in line)
    options = {opt for param in cli.commands["addin"].commands["lite"].params for opt in param.opts}
    assert {"-o", "--wheel", "--url"} <= options and "--wheel" in text and "--url" in text, command
    assert "gh release create" in text and "dist/*" in text
