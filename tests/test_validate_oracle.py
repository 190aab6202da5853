"""The fast path agrees with the general engine (the ``formulas`` library) cell for cell on the samples."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from validate_support import ROOT

from planner import template as ts
from planner.validate.checks import read_book, values_equal
from planner.validate.fastpath import evaluate

SAMPLES = ("bulk-tpm.xlsm", "classifier-rpm.xlsm")


def formulas_values(path: Path) -> dict[tuple[str, str], Any]:
    """Every formula cell of ``path`` computed by formulas (registry functions registered under every spelling)."""
    formulas = pytest.importorskip("formulas")
    from formulas.functions import wrap_func

    from planner.coerce import call_sheet_function
    from planner.registry import load, spellings

    table = formulas.get_functions()
    import schedula as sh

    def plain(a: Any) -> Any:
        a = a.tolist() if hasattr(a, "tolist") else a
        if isinstance(a, list):
            return [plain(x) for x in a]
        return None if a is sh.EMPTY else a

    for name, spec in load().items():
        def impl(*args: Any, _spec: Any = spec) -> Any:
            return call_sheet_function(_spec, *[plain(a) for a in args])

        for s in spellings(name):
            table[s] = wrap_func(impl)
    model = formulas.ExcelModel().loads(str(path)).finish()
    solution = model.calculate()
    out: dict[tuple[str, str], Any] = {}
    for key, value in solution.items():
        ref = str(key)
        if "!" not in ref or ":" in ref.split("!")[1]:
            continue
        sheet, cell = ref.rsplit("!", 1)
        sheet = sheet.strip("'").split("]", 1)[-1]
        v = value.value[0, 0] if hasattr(value, "value") else value
        if hasattr(v, "item"):
            v = v.item()
        out[(sheet.upper(), cell.upper())] = v
    return out


def _plain(v: Any) -> Any:
    if isinstance(v, ts.XlError):
        return str(v)
    if v is None or type(v).__name__ == "XlError" or str(v) == "empty":
        return "" if v is None or str(v) == "empty" else str(v)
    return v


@pytest.mark.parametrize("name", SAMPLES)
def test_fast_path_agrees_with_formulas(name: str) -> None:
    path = ROOT / "samples" / name
    if not path.exists():
        pytest.skip(f"{name} not generated")
    fast = evaluate(read_book(str(path)), keep={})
    oracle = formulas_values(path)
    compared = 0
    for (sheet, cell), mine in fast.items():
        theirs = oracle.get((sheet.upper(), cell))
        if theirs is None:
            continue
        a, b = _plain(mine), _plain(theirs)
        if isinstance(a, bool) or isinstance(b, bool):
            assert a == b, f"{sheet}!{cell}"
        elif isinstance(a, (int, float)) and isinstance(b, (int, float)):
            assert values_equal(b, a), f"{sheet}!{cell}: fast {a!r}, formulas {b!r}"
        else:
            assert str(a) == str(b), f"{sheet}!{cell}: fast {a!r}, formulas {b!r}"
        compared += 1
    assert compared >= 0.9 * len(ts.all_formulas()), compared
