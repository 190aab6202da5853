"""The type checker passes on the package (mypy, configured in pyproject.toml; modules with known errors are listed
there and nowhere else)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_mypy_is_clean() -> None:
    pytest.importorskip("mypy")
    result = subprocess.run([sys.executable, "-m", "mypy", "planner"], cwd=ROOT, capture_output=True, text=True,
                            check=False, timeout=600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "Success" in result.stdout
