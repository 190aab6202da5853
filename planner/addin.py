"""The Excel add-in, minus Excel: the call wrapper every UDF uses, the generators of ``planner/udfs.py`` and of the
xlwings Lite bundle, and the pure logic behind ``planner addin`` (xlwings configuration, environment checks, the
remaining manual steps).

Everything Excel sees is generated from the registry (:func:`planner.registry.load`), so the add-in can never
disagree with the headless recompute: both call :func:`planner.coerce.call_sheet_function` on the same declaration.
Regenerate the checked-in files after adding a function::

    .venv/bin/python -m planner.addin --write

``tests/test_udfs.py`` and ``tests/test_lite.py`` fail when a checked-in file is not what the generator gives.
This module does not import xlwings (only :mod:`planner.udfs` and the Lite bundle do).
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import importlib.util
import inspect
import os
import re
import sys
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner import coerce
from planner.coerce import call_sheet_function
from planner.errors import PlannerError
from planner.registry import SheetFunction, load

PACKAGE = "llm-capacity-planner"
UDF_MODULE = "planner.udfs"
MESSAGE_LIMIT = 255
"""Excel shows at most 255 characters of a UDF's text result in the formula bar without truncation issues."""

XLWINGS_SUPPORTED = ("0.37.8", "0.38")
"""The xlwings range of ``pyproject.toml`` (>= first, < second)."""

REPO_ROOT = Path(__file__).resolve().parent.parent
UDFS_PATH = REPO_ROOT / "planner" / "udfs.py"
LITE_DIR = REPO_ROOT / "addin" / "lite"
CONF_PATH = REPO_ROOT / "addin" / "xlwings.conf"


# --------------------------------------------------------------------------------------------------------------
# The call every generated UDF makes


def excel_call(spec: SheetFunction, *raw: Any) -> Any:
    """Call ``spec`` with the values Excel passed and return what the cell shows.

    Planner errors become their one-line message (:func:`call_sheet_function` with ``errors_as_text``). Any other
    exception also becomes a short message, naming the argument at fault where the traceback shows it, so a cell
    never shows a traceback. xlwings' classic VBA wrapper would otherwise show the whole Python error text, and
    Office.js (xlwings Lite) would show ``#VALUE!``.

    >>> from planner.registry import load
    >>> excel_call(load()["CAPACITY_RPM"], [[25]])
    1500.0
    >>> excel_call(load()["CAPACITY_RPM"], [["lots"]])
    "peak_qps: got 'lots', expected a number"
    """
    try:
        return call_sheet_function(_guarded(spec), *raw, errors_as_text=True)
    except Exception as exc:  # noqa: BLE001  (the cell must show a message, whatever went wrong)
        return unexpected_error_message(spec, exc)


class UnexpectedError(PlannerError):
    """A non-planner exception inside a function, carried as its short cell message (so that, in a column call,
    only that row shows the message and the other rows keep their results)."""


_GUARDED: dict[int, tuple[SheetFunction, SheetFunction]] = {}


def _guarded(spec: SheetFunction) -> SheetFunction:
    """``spec`` with an implementation that turns any non-planner exception into :class:`UnexpectedError`."""
    cached = _GUARDED.get(id(spec))
    if cached is not None and cached[0] is spec:
        return cached[1]
    impl = spec.impl

    def guarded_impl(*args: Any) -> Any:
        try:
            return impl(*args)
        except PlannerError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise UnexpectedError(unexpected_error_message(spec, exc)) from exc

    guarded = dataclasses.replace(spec, impl=guarded_impl)
    _GUARDED[id(spec)] = (spec, guarded)
    return guarded


def unexpected_error_message(spec: SheetFunction, exc: BaseException) -> str:
    """``NAME: ZeroDivisionError: division by zero (check avg_output_tokens)``, at most 255 characters.

    The argument is taken from the exception's ``argument`` attribute when it has one, otherwise from the innermost
    line of the traceback (outside this module and :mod:`planner.coerce`) that mentions one of the function's
    argument names, otherwise from the exception text.
    """
    suspects = _suspect_arguments(spec, exc)
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    text = f"{spec.name}: {type(exc).__name__}" + (f": {detail}" if detail else "")
    if suspects:
        text += f" (check {', '.join(suspects)})"
    return text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 3] + "..."


def _suspect_arguments(spec: SheetFunction, exc: BaseException) -> list[str]:
    names = [a.name for a in spec.args]
    argument = getattr(exc, "argument", None)
    if isinstance(argument, str) and argument in names:
        return [argument]
    adapters = {Path(__file__).resolve(), Path(coerce.__file__).resolve()}
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if Path(frame.filename).resolve() in adapters:
            continue
        line = frame.line or ""
        found = [n for n in names if re.search(rf"\b{re.escape(n)}\b", line)]
        if found:
            return found
    return [n for n in names if re.search(rf"\b{re.escape(n)}\b", str(exc))]


# --------------------------------------------------------------------------------------------------------------
# Generators


def _registry(registry: Mapping[str, SheetFunction] | None) -> list[SheetFunction]:
    reg = load() if registry is None else registry
    return [reg[name] for name in sorted(reg)]


def _params(spec: SheetFunction) -> str:
    return ", ".join(f"{a.name}=None" if a.optional else a.name for a in spec.args)


def _call(spec: SheetFunction) -> str:
    return ", ".join([f"_REGISTRY[{spec.name!r}]", *(a.name for a in spec.args)])


def _docstring(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    return f'"""{escaped}"""'


UDFS_HEADER = '''# ruff: noqa: E501  (generated: one line per decorator keeps the file diffable)
"""The xlwings add-in module (``UDF Modules`` = ``planner.udfs``): one Excel function per registry entry.

GENERATED by ``planner.addin.udfs_source()`` from the function registry: do not edit by hand. Regenerate with
``python -m planner.addin --write``; ``tests/test_udfs.py`` fails when this file is not current.

- ``@xw.func(category=...)``: the function-wizard category; the docstring is the function-wizard description.
- ``@xw.arg(name, ndim=2, err_to_str=True, doc=...)`` for every argument: the argument help; every range arrives
  as a 2-D list (a single cell as ``[[value]]``), and an error cell as its text (``"#N/A"``), so it is refused with
  a message instead of being taken for an empty cell and its default.
- No ``@xw.ret``: a result is one value, or a column (a list of one-element rows) that Excel 365 spills natively;
  ``expand="table"`` is the legacy pre-365 mechanism that xlwings advises against.
- Positional parameters only (xlwings rejects keyword-only ones); optional ones default to ``None``, which
  ``planner.coerce`` replaces with the documented default, exactly as for an empty cell.

On Linux and macOS the xlwings decorators are no-ops, so this module imports and runs anywhere (that is how the
tests call it); on Windows, Excel's "Import Functions" reads the metadata they attach.
"""

from __future__ import annotations

import xlwings as xw

from planner.addin import excel_call
from planner.registry import load

_REGISTRY = load()
'''


def udfs_source(registry: Mapping[str, SheetFunction] | None = None) -> str:
    """The text of ``planner/udfs.py`` for the current registry."""
    out = [UDFS_HEADER.rstrip("\n")]
    for spec in _registry(registry):
        out.append("")
        out.append("")
        out.append(f"@xw.func(category={spec.category!r})")
        for arg in spec.args:
            out.append(f"@xw.arg({arg.name!r}, ndim=2, err_to_str=True, doc={spec.arg_help(arg)!r})")
        out.append(f"def {spec.name}({_params(spec)}):")
        out.append(f"    {_docstring(spec.description)}")
        out.append(f"    return excel_call({_call(spec)})")
    return "\n".join(out) + "\n"


LITE_HEADER = '''# ruff: noqa: E501  (generated: one line per decorator keeps the file diffable)
"""llm-capacity-planner for xlwings Lite: paste this into the workbook's main.py (xlwings Lite editor).

GENERATED by ``planner.addin.lite_main_source()`` from the function registry: do not edit by hand. Get a fresh
copy with ``planner addin lite -o DIR``; ``tests/test_lite.py`` fails when the checked-in copy is not current.

The functions come from the ``llm-capacity-planner`` wheel that requirements.txt installs (the function layer: no
other package); nothing is copied here, so Lite computes exactly what the desktop add-in and the headless recompute
compute. ``@arg(..., ndim=2, err_to_str=True)`` makes every argument a 2-D list and an error cell its text
(``"#N/A"``), which is refused with a message, as on the desktop; an empty cell arrives as ``None`` and takes the
documented default. A problem comes back as a one-line message in the cell.
"""

from xlwings import arg, func

from planner.addin import excel_call
from planner.registry import load

_REGISTRY = load()
'''


def lite_main_source(registry: Mapping[str, SheetFunction] | None = None) -> str:
    """The text of ``addin/lite/main.py`` for the current registry."""
    out = [LITE_HEADER.rstrip("\n")]
    for spec in _registry(registry):
        out.append("")
        out.append("")
        out.append("@func")
        for arg in spec.args:
            out.append(f"@arg({arg.name!r}, ndim=2, err_to_str=True, doc={spec.arg_help(arg)!r})")
        out.append(f"def {spec.name}({_params(spec)}):")
        out.append(f"    {_docstring(spec.description)}")
        out.append(f"    return excel_call({_call(spec)})")
    return "\n".join(out) + "\n"


def package_version() -> str:
    """The installed version of this package (what the Lite requirements pin)."""
    return importlib.metadata.version(PACKAGE)


LITE_XLWINGS_LINE = "xlwings  # required by xlwings Lite; keep your workbook's own xlwings line instead if it has one"
"""xlwings Lite needs xlwings itself in requirements.txt. We add no version bound: the function layer works with the
xlwings Lite provides (the decorators are all it uses), so an older workbook's ``xlwings==0.33.15`` stays valid."""

WHEEL_NAME = re.compile(r"^llm_capacity_planner-(?P<version>[0-9][^-]*)-py3-none-any\.whl$")
"""The file name of this project's pure wheel, the only kind micropip installs from a URL."""


def wheel_filename(version: str | None = None) -> str:
    """``llm_capacity_planner-0.1.0-py3-none-any.whl`` for ``version`` (default: the installed version)."""
    return f"{PACKAGE.replace('-', '_')}-{version or package_version()}-py3-none-any.whl"


def lite_package_line(url: str | None = None) -> str:
    """The requirements.txt line for the package: pinned to this version on the package index, or the URL of a
    self-hosted wheel (``url`` ending in ``/llm_capacity_planner-VERSION-py3-none-any.whl``)."""
    return url or f"{PACKAGE}=={package_version()}"


def lite_requirements_source(requirement: str | None = None) -> str:
    """The text of ``addin/lite/requirements.txt``: xlwings (unpinned) and the package, pinned to this version
    unless a line is given (for example the URL of a wheel you host yourself)."""
    return f"{LITE_XLWINGS_LINE}\n{lite_package_line(requirement)}\n"


def _requirement_lines(text: str) -> list[str]:
    return [line.split("#", 1)[0].strip() for line in text.splitlines() if line.split("#", 1)[0].strip()]


def check_lite_requirements(text: str, version: str | None = None) -> list[Check]:
    """Check the lines of a Lite requirements.txt: one unbounded xlwings line, and one line for this package,
    either ``llm-capacity-planner==VERSION`` or an ``https://`` URL of its pure wheel of that version."""
    version = version or package_version()
    lines = _requirement_lines(text)
    xlwings_lines = [line for line in lines if re.match(r"^xlwings\b", line, flags=re.I)]
    ours = [line for line in lines if PACKAGE in line or PACKAGE.replace("-", "_") in line]
    checks = [
        Check(
            name="requirements: xlwings",
            ok=len(xlwings_lines) == 1 and not re.search(r"[<=~!]", xlwings_lines[0]),
            detail=(xlwings_lines[0] + " (no bound from this package)") if len(xlwings_lines) == 1
            else f"expected one xlwings line, found {len(xlwings_lines)}",
        )
    ]
    if len(ours) != 1:
        checks.append(Check(name=f"requirements: {PACKAGE}", ok=False, detail=f"expected one line, found {len(ours)}"))
        return checks
    line = ours[0]
    if "://" in line or line.endswith(".whl"):
        name = line.rsplit("/", 1)[-1]
        match = WHEEL_NAME.match(name)
        problems = [] if line.startswith("https://") else ["not an https:// URL (Excel add-ins load over HTTPS)"]
        if not match:
            problems.append(f"{name} is not a pure wheel of {PACKAGE} (expected {wheel_filename(version)})")
        elif match.group("version") != version:
            problems.append(f"wheel version {match.group('version')} differs from main.py's {version}")
        checks.append(Check(name=f"requirements: {PACKAGE}", ok=not problems, detail="; ".join([line, *problems])))
    else:
        ok = line.replace(" ", "") == f"{PACKAGE}=={version}"
        checks.append(
            Check(
                name=f"requirements: {PACKAGE}",
                ok=ok,
                detail=line + ("" if ok else f" (main.py is generated for {PACKAGE}=={version}: pin exactly that)"),
            )
        )
    return checks


FUNCTION_LAYER_FILES = ("planner/addin.py", "planner/registry.py", "planner/functions.py", "planner/coerce.py")
"""Files the Lite main.py needs from the wheel (it imports planner.addin and planner.registry)."""


def check_wheel(path: Path, version: str | None = None) -> list[Check]:
    """Check a wheel for Lite: a pure ``py3-none-any`` wheel of this package and version, whose only unconditional
    requirement is nothing (every ``Requires-Dist`` belongs to an extra), with the function layer and catalog data."""
    import zipfile

    version = version or package_version()
    problems: list[str] = []
    match = WHEEL_NAME.match(path.name)
    if not match:
        problems.append(f"{path.name} is not a pure wheel of {PACKAGE} (expected {wheel_filename(version)})")
    elif match.group("version") != version:
        problems.append(f"version {match.group('version')} differs from main.py's {version}")
    try:
        with zipfile.ZipFile(path) as wheel:
            names = set(wheel.namelist())
            metadata_name = next((n for n in names if n.endswith(".dist-info/METADATA")), None)
            metadata = wheel.read(metadata_name).decode("utf-8") if metadata_name else ""
    except (OSError, zipfile.BadZipFile) as exc:
        return [Check(name="wheel", ok=False, detail=f"{path}: cannot read it as a wheel ({exc})")]
    missing = [f for f in FUNCTION_LAYER_FILES if f not in names]
    if missing:
        problems.append(f"missing {', '.join(missing)}")
    if not any(n.startswith("planner/data/") and n.endswith(".json") for n in names):
        problems.append("no catalog data (planner/data/*.json)")
    requires = [line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    unconditional = [r for r in requires if "extra ==" not in r]
    if unconditional:
        problems.append(f"installs more than the function layer: {', '.join(unconditional)}")
    detail = f"{path.name}: pure, {len(requires)} requirements all in extras, function layer and catalog data present"
    return [Check(name="wheel", ok=not problems, detail="; ".join([path.name, *problems]) if problems else detail)]


def config_settings(interpreter: str | None = None, platform: str | None = None) -> dict[str, str]:
    """The xlwings settings the add-in needs: ``UDF MODULES``, plus the interpreter for this platform when given."""
    settings = {"UDF MODULES": UDF_MODULE}
    if interpreter:
        key = "INTERPRETER_MAC" if (platform or sys.platform).startswith("darwin") else "INTERPRETER_WIN"
        settings[key] = interpreter
    return settings


def config_text(settings: Mapping[str, str]) -> str:
    """``"KEY","VALUE"`` lines, the only syntax xlwings' config reader accepts (no comments)."""
    return "".join(f'"{key}","{value}"\n' for key, value in settings.items())


_CONF_LINE = re.compile(r'^\s*"([^"]*)"\s*,\s*"([^"]*)"\s*$')


def merge_config(existing: str, settings: Mapping[str, str]) -> str:
    """Set ``settings`` in an existing xlwings.conf text, keeping every other line (a licence key, a conda env)."""
    wanted = {k.upper(): (k, v) for k, v in settings.items()}
    lines: list[str] = []
    for line in existing.splitlines():
        match = _CONF_LINE.match(line)
        if match and match.group(1).upper() in wanted:
            key, value = wanted.pop(match.group(1).upper())
            lines.append(f'"{key}","{value}"')
        elif line.strip():
            lines.append(line)
    lines += [f'"{key}","{value}"' for key, value in wanted.values()]
    return "\n".join(lines) + "\n"


def user_config_path() -> Path:
    """Where xlwings reads the user configuration: ``~/.xlwings/xlwings.conf``."""
    return Path.home() / ".xlwings" / "xlwings.conf"


def write_config(path: Path, settings: Mapping[str, str]) -> str:
    """Write (or update) the xlwings configuration at ``path``; return the text written."""
    existing = path.read_text(encoding="utf-8") if path.is_file() else ""
    text = merge_config(existing, settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return text


def write_lite_bundle(
    directory: Path, requirement: str | None = None, *, wheel: Path | None = None, url: str | None = None
) -> list[Path]:
    """Write ``main.py`` and ``requirements.txt`` of the Lite bundle into ``directory``.

    With ``wheel`` (a self-hosted wheel), the wheel is copied next to them and requirements.txt points at
    ``url`` + its file name, where you will serve it from.
    """
    import shutil

    directory.mkdir(parents=True, exist_ok=True)
    main, reqs = directory / "main.py", directory / "requirements.txt"
    written = [main, reqs]
    if wheel is not None:
        if not url:
            raise ValueError("a self-hosted wheel needs the https:// address it will be served from (--url)")
        requirement = f"{url.rstrip('/')}/{wheel.name}"
        copy = directory / wheel.name
        if wheel.resolve() != copy.resolve():
            shutil.copyfile(wheel, copy)
        written.append(copy)
    main.write_text(lite_main_source(), encoding="utf-8")
    reqs.write_text(lite_requirements_source(requirement), encoding="utf-8")
    return written


def generated_files() -> dict[Path, str]:
    """Every checked-in generated file and the text it must have."""
    return {
        UDFS_PATH: udfs_source(),
        LITE_DIR / "main.py": lite_main_source(),
        LITE_DIR / "requirements.txt": lite_requirements_source(),
        CONF_PATH: config_text(config_settings()),
    }


# --------------------------------------------------------------------------------------------------------------
# Environment checks and the remaining steps


@dataclass(frozen=True, kw_only=True)
class Check:
    """One line of the ``planner addin`` report; ``ok=False`` is a finding (exit code 1)."""

    name: str
    ok: bool
    detail: str


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:3])


def read_config(path: Path) -> dict[str, str]:
    """The ``"KEY","VALUE"`` pairs of an xlwings.conf (keys upper case); empty when the file does not exist."""
    if not path.is_file():
        return {}
    pairs = (_CONF_LINE.match(line) for line in path.read_text(encoding="utf-8").splitlines())
    return {m.group(1).upper(): m.group(2) for m in pairs if m}


def check_environment(platform: str | None = None, config: Path | None = None) -> list[Check]:
    """Python version, platform, xlwings version, ``planner.udfs`` importable and complete, registry size, and
    whether the xlwings configuration (``config``, default the user configuration) names ``planner.udfs``.

    A missing configuration is a finding only on Windows, the one platform where classic UDFs run.
    """
    platform = platform or sys.platform
    checks = [
        Check(
            name="python",
            ok=sys.version_info >= (3, 10),
            detail=f"{sys.version.split()[0]} at {sys.executable}",
        )
    ]
    if platform.startswith("win"):
        checks.append(Check(name="platform", ok=True, detail="Windows: classic xlwings UDFs are supported"))
    elif platform.startswith("darwin"):
        checks.append(
            Check(
                name="platform",
                ok=True,
                detail="macOS: classic xlwings UDFs are Windows-only; use the xlwings Lite bundle (addin/lite/)",
            )
        )
    else:
        checks.append(
            Check(
                name="platform",
                ok=True,
                detail=f"{platform}: no desktop Excel here; the configuration and Lite bundle can still be prepared",
            )
        )
    try:
        version = importlib.metadata.version("xlwings")
        low, high = (_version_tuple(v) for v in XLWINGS_SUPPORTED)
        ok = low <= _version_tuple(version) < high
        checks.append(
            Check(
                name="xlwings",
                ok=ok,
                detail=version + ("" if ok else f" (supported: >={XLWINGS_SUPPORTED[0]},<{XLWINGS_SUPPORTED[1]})"),
            )
        )
    except importlib.metadata.PackageNotFoundError:
        checks.append(
            Check(name="xlwings", ok=False, detail=f"not installed: pip install '{PACKAGE}[excel]' (desktop Excel)")
        )
    config = config or user_config_path()
    modules = read_config(config).get("UDF MODULES", "")
    configured = UDF_MODULE in [m.strip() for m in modules.split(";")]
    checks.append(
        Check(
            name="config",
            ok=configured or not platform.startswith("win"),
            detail=f"{config}: "
            + (f"UDF MODULES = {modules}" if configured else "no UDF MODULES = planner.udfs yet (--user-config)"),
        )
    )
    if platform.startswith("win"):
        has_com = importlib.util.find_spec("pythoncom") is not None
        checks.append(
            Check(name="pywin32", ok=has_com, detail="installed" if has_com else "missing: pip install pywin32")
        )
    registry = load()
    checks.append(Check(name="registry", ok=bool(registry), detail=f"{len(registry)} functions"))
    try:
        udfs = importlib.import_module(UDF_MODULE)
        exposed = {n for n in registry if callable(getattr(udfs, n, None))}
        missing = sorted(set(registry) - exposed)
        changed = sorted(
            n
            for n in exposed
            if list(inspect.signature(getattr(udfs, n)).parameters) != [a.name for a in registry[n].args]
        )
        problems = [f"missing {', '.join(missing)}"] if missing else []
        problems += [f"arguments differ for {', '.join(changed)}"] if changed else []
        checks.append(
            Check(
                name=UDF_MODULE,
                ok=not problems,
                detail=f"importable, {len(exposed)} of {len(registry)} functions"
                + (f"; {'; '.join(problems)} (regenerate: python -m planner.addin --write)" if problems else ""),
            )
        )
    except Exception as exc:  # noqa: BLE001  (report any import failure as a finding)
        checks.append(Check(name=UDF_MODULE, ok=False, detail=f"not importable: {type(exc).__name__}: {exc}"))
    return checks


def remaining_steps(platform: str | None = None, config_written: Path | None = None) -> list[str]:
    """What the user still has to do in Excel, in order."""
    platform = platform or sys.platform
    conf = str(config_written) if config_written else "~/.xlwings/xlwings.conf (planner addin --user-config)"
    if platform.startswith("darwin"):
        return [
            "Classic xlwings UDFs run on Windows only. On macOS use xlwings Lite (free, also for commercial use):",
            "In Excel: Home > Add-ins, search 'xlwings', Add (installs xlwings Lite).",
            "Open the template, open the xlwings Lite pane, put the lines of addin/lite/requirements.txt in the"
            " requirements.txt tab and addin/lite/main.py in main.py (planner addin lite -o DIR writes and checks"
            " both; --wheel and --url for a wheel you host yourself).",
            "Wait for the install to finish in the Output pane; restart xlwings Lite if it asks; the functions"
            " (e.g. =CAPACITY_RPM(25)) are then available in every cell.",
        ]
    return [
        f"pip install '{PACKAGE}[excel]' into the Python that Excel will use (the interpreter in {conf}).",
        "xlwings addin install   (copies the xlwings add-in into Excel's XLSTART folder).",
        "Excel: File > Options > Trust Center > Trust Center Settings > Macro Settings >"
        " tick 'Trust access to the VBA project object model' (needed by Import Functions).",
        f"Check the configuration: UDF Modules = {UDF_MODULE} (written to {conf}).",
        "Open the capacity-plan template, then on the xlwings ribbon tab click 'Import Functions'.",
        "Save the workbook as .xlsm (Excel Macro-Enabled Workbook): a .xlsx drops the VBA wrappers (#NAME?).",
        "Type =CAPACITY_RPM(25) in a cell: it shows 1500.",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m planner.addin --write`` rewrites the generated files; ``--check`` reports stale ones."""
    args = list(sys.argv[1:] if argv is None else argv)
    stale = [path for path, text in generated_files().items() if not path.is_file() or path.read_text() != text]
    if "--write" in args:
        for path, text in generated_files().items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {os.path.relpath(path, REPO_ROOT)}")
        return 0
    for path in stale:
        print(f"stale: {os.path.relpath(path, REPO_ROOT)}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
