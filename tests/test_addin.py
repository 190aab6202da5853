"""``planner addin``: writes the xlwings configuration that xlwings' own reader accepts, the Lite bundle, checks
the environment and prints the remaining steps. Real CLI (click runner and the installed console script)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import xlwings
import xlwings.utils
from click.testing import CliRunner

from planner import addin
from planner.cli import cli

PLANNER = Path(sys.executable).with_name("planner")


def _run(args: list[str], home: Path):
    return CliRunner().invoke(cli, ["addin", *args], env={"HOME": str(home), "USERPROFILE": str(home)})


def test_writes_config_and_lite_bundle(tmp_path: Path) -> None:
    conf, lite = tmp_path / "book" / "xlwings.conf", tmp_path / "lite"
    result = _run(["--config", str(conf), "--lite-dir", str(lite)], tmp_path / "home")
    assert result.exit_code == 0, result.output
    assert conf.read_text() == '"UDF MODULES","planner.udfs"\n'
    assert (lite / "main.py").read_text() == addin.lite_main_source()
    assert (lite / "requirements.txt").read_text() == addin.lite_requirements_source()
    assert f"[ok] planner.udfs: importable, {len(addin.load())} of {len(addin.load())} functions" in result.output
    assert "Import Functions" in result.output and ".xlsm" in result.output
    assert "Trust access to the VBA project object model" in result.output
    assert not (tmp_path / "home" / ".xlwings").exists()  # the user config is only written with --user-config


def test_config_is_read_back_by_xlwings(tmp_path: Path, monkeypatch) -> None:
    conf = tmp_path / "xlwings.conf"
    assert _run(["--config", str(conf), "--interpreter", r"C:\Python311\python.exe"], tmp_path).exit_code == 0
    monkeypatch.setattr(xlwings, "USER_CONFIG_FILE", str(conf))
    config = xlwings.utils.read_user_config()
    assert config["udf modules"] == "planner.udfs"
    assert r"C:\Python311\python.exe" in config.values()


def test_update_keeps_other_settings(tmp_path: Path) -> None:
    conf = tmp_path / "xlwings.conf"
    conf.write_text('"LICENSE_KEY","abc"\n"UDF MODULES","old_module"\n"CONDA ENV","base"\n')
    assert _run(["--config", str(conf)], tmp_path).exit_code == 0
    assert conf.read_text() == '"LICENSE_KEY","abc"\n"UDF MODULES","planner.udfs"\n"CONDA ENV","base"\n'


def test_user_config_only_with_the_flag(tmp_path: Path) -> None:
    result = _run([], tmp_path)
    assert result.exit_code == 0, result.output
    assert '"UDF MODULES","planner.udfs"' in result.output and "not written" in result.output
    assert not (tmp_path / ".xlwings").exists()
    result = _run(["--user-config"], tmp_path)
    assert result.exit_code == 0, result.output
    assert (tmp_path / ".xlwings" / "xlwings.conf").read_text().startswith('"UDF MODULES","planner.udfs"')


def test_unwritable_path_exits_2(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = _run(["--config", str(blocker / "xlwings.conf")], tmp_path)
    assert result.exit_code == 2
    assert result.output.count("error:") == 1 and "Traceback" not in result.output


def test_interpreter_key_follows_the_platform() -> None:
    assert addin.config_settings("py", "win32") == {"UDF MODULES": "planner.udfs", "INTERPRETER_WIN": "py"}
    assert addin.config_settings("/usr/bin/python3", "darwin")["INTERPRETER_MAC"] == "/usr/bin/python3"
    assert addin.config_settings() == {"UDF MODULES": "planner.udfs"}


def test_checked_in_config_is_current() -> None:
    assert addin.CONF_PATH.read_text() == addin.config_text(addin.config_settings())


def test_macos_steps_point_to_lite() -> None:
    steps = " ".join(addin.remaining_steps("darwin"))
    assert "xlwings Lite" in steps and "Windows only" in steps
    assert any("xlwings addin install" in s for s in addin.remaining_steps("win32"))


def test_environment_checks(tmp_path: Path) -> None:
    conf = tmp_path / "xlwings.conf"
    checks = {c.name: c for c in addin.check_environment("win32", conf)}
    assert set(checks) == {"python", "platform", "xlwings", "config", "pywin32", "registry", "planner.udfs"}
    assert checks["xlwings"].detail.startswith(xlwings.__version__) and checks["xlwings"].ok
    assert checks["registry"].detail == f"{len(addin.load())} functions"
    assert not checks["config"].ok  # Windows without UDF MODULES is a finding
    assert not checks["pywin32"].ok  # no pywin32 on this Linux machine
    assert addin.check_environment("linux", conf)[2].name == "xlwings"
    assert {c.name: c.ok for c in addin.check_environment("linux", conf)}["config"]  # informational off Windows
    addin.write_config(conf, addin.config_settings())
    assert {c.name: c for c in addin.check_environment("win32", conf)}["config"].ok


def test_console_script(tmp_path: Path) -> None:
    conf = tmp_path / "xlwings.conf"
    result = subprocess.run(
        [str(PLANNER), "addin", "--config", str(conf)], capture_output=True, text=True, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert conf.is_file() and "Remaining steps in Excel:" in result.stdout


def test_generated_files_are_current() -> None:
    result = subprocess.run([sys.executable, "-m", "planner.addin"], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_excel_docs_list_every_spelling() -> None:
    from planner.registry import spellings

    text = (addin.REPO_ROOT / "docs" / "excel.md").read_text(encoding="utf-8")
    for spelling in spellings("CAPACITY_TPM"):
        assert f"`{spelling}`" in text
    assert "img/excel-routes.png" in text and (addin.REPO_ROOT / "docs" / "img" / "excel-routes.png").is_file()
