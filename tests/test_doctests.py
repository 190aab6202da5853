"""Every worked example in every docstring of the package holds (DEVELOPERS.md: each formula's docstring gives a
worked example; a stale one must fail here, whichever module it is in). One test per module, so a failure names it."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import planner

MODULES = sorted(m.name for m in pkgutil.walk_packages(planner.__path__, "planner."))


def test_the_walk_finds_the_package() -> None:
    # a walk that silently found nothing would pass every test below
    assert len(MODULES) >= 90 and "planner.forecast.month" in MODULES and "planner.serving.step" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_worked_examples_hold(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, report=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples fail (python -m doctest -v)"
