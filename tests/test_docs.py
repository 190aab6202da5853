"""docs/functions.md is generated from the registry and kept current."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from planner.docs import functions_markdown, functions_text
from planner.registry import load

ROOT = Path(__file__).resolve().parents[1]
PLANNER = Path(sys.executable).with_name("planner")


def test_functions_md_is_current():
    """Regenerate with: .venv/bin/planner functions --format markdown > docs/functions.md"""
    assert (ROOT / "docs" / "functions.md").read_text(encoding="utf-8") == functions_markdown()


def test_every_function_is_documented():
    page = functions_markdown()
    text = functions_text()
    for spec in load().values():
        assert f"### `{spec.signature}`" in page
        assert f"Example: `{spec.example}`" in page
        assert spec.signature in text
        for arg in spec.args:
            assert f"| `{arg.name}` |" in page


def test_cli_prints_the_same_page():
    """The real console script writes exactly the generated page."""
    result = subprocess.run([str(PLANNER), "functions", "--format", "markdown"], capture_output=True, text=True,
                            check=False, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == functions_markdown()


def test_core_worked_examples_hold():
    """The worked examples in the core docstrings (demand, limits, cost, decision) are true."""
    import doctest

    from planner import cost, decision, demand, limits

    for module in (demand, limits, cost, decision):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.attempted > 0 and result.failed == 0, module.__name__
