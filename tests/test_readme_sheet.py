"""A workbook a planner opens without Python: every cell that calls a planner function carries its cached value, and
the ReadMe sheet says which add-in to install and what such a cell shows before it is installed (and the commands it
names exist)."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import openpyxl
import pytest

from planner.cli import cli
from planner.readme_text import ADDIN_LINES
from planner.registry import load

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
WORKBOOKS = [REPO / "templates" / "capacity-plan.xlsm", *sorted((REPO / "samples").glob("*.xlsm"))]
CALL = re.compile(r"\b(" + "|".join(sorted(load(), key=len, reverse=True)) + r")\(")


@pytest.mark.parametrize("path", WORKBOOKS, ids=[p.name for p in WORKBOOKS])
def test_every_function_cell_has_a_cached_value(path: Path) -> None:
    """Every formula cell that calls a planner function stores a value (``<v>``) beside its formula, so a reader
    without the add-in shows it; in a filled plan those values are numbers or text, not errors."""
    calls = filled = 0
    with zipfile.ZipFile(path) as zf:
        for name in (n for n in zf.namelist() if re.fullmatch(r"xl/worksheets/sheet\d+\.xml", n)):
            xml = zf.read(name).decode("utf-8")
            for cell in re.finditer(r"<c r=\"(\w+)\"[^>]*>(.*?)</c>", xml):
                formula = re.search(r"<f[^>]*>(.*?)</f>", cell.group(2))
                if not formula or not CALL.search(formula.group(1)):
                    continue
                calls += 1
                value = re.search(r"<v>(.*?)</v>|<v/>", cell.group(2))
                assert value is not None, f"{path.name} {name} {cell.group(1)}: no cached value"
                assert not (value.group(1) or "").startswith("#"), f"{path.name} {name} {cell.group(1)}"
                filled += bool(value.group(1))
    assert calls > 20
    if path.parent.name == "samples":
        assert filled > 20, f"{path.name}: only {filled} of {calls} function cells hold a value"


def test_readme_says_which_add_in_and_what_a_cell_shows_before() -> None:
    wb = openpyxl.load_workbook(WORKBOOKS[0])
    lines = [c.value for c in wb["ReadMe"]["A"] if c.value]
    start = lines.index(ADDIN_LINES[0][1])
    assert lines[start : start + len(ADDIN_LINES)] == [text for _, text in ADDIN_LINES]
    assert start < lines.index("How to fill it")  # before the filling instructions
    text = " ".join(text for _, text in ADDIN_LINES)
    assert "#NAME?" in text and "xlwings Lite" in text and "Import Functions" in text
    # The commands and the extra it names exist.
    assert "lite" in cli.commands["addin"].commands
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert "llm-capacity-planner[excel]" in text and "excel" in extras
