"""A plan's input cells from a file: a scenario TOML (with the bundled catalog on the GPUs and Models sheets, as
``planner size`` does) or a workbook (.xlsm/.xlsx: the cells of its input sheets, which no formula writes). The only
module of :mod:`planner.whatif` that reads files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from planner import template as ts
from planner.errors import PlannerError


def load_inputs(path: str | Path) -> dict[tuple[str, str], Any]:
    """``{(sheet, cell): value}`` of a plan's input cells. Raises :class:`PlannerError` naming the file."""
    p = Path(path)
    if p.suffix.lower() == ".toml":
        from planner.scenario import load_scenario
        from planner.template.inputs import catalog_inputs, scenario_inputs

        return {**catalog_inputs(), **scenario_inputs(load_scenario(p))}
    if p.suffix.lower() in (".xlsm", ".xlsx"):
        from planner.ooxml import read_workbook

        # every input column of every table: the input sheets' and those on computed sheets (the Forecast's demand
        # index, your own reserved-GPU quotes), so a plan's file and its scenario give the same plan
        inputs = [(t, c) for t in ts.TABLES for c in t.columns if c.formula is None]
        sheets = tuple(dict.fromkeys(t.sheet for t, _c in inputs))
        data = {(t.sheet, t.cell(c.key, i)) for t, c in inputs for i in range(t.rows)}
        data -= set(ts.fixed_cells())  # setting names, units, month numbers, bundled quotes: the template's
        book = read_workbook(p, sheets=sheets)
        out: dict[tuple[str, str], Any] = {}
        for name in sheets:
            try:
                view = book.sheet(name)
            except KeyError:
                raise PlannerError(f"{p}: no sheet {name!r} (not a capacity-plan workbook)") from None
            for ref, c in view.cells.items():
                if c.formula is None and c.value is not None and (view.name, ref) in data:
                    v = c.value
                    out[(view.name, ref)] = float(v) if isinstance(v, int) and not isinstance(v, bool) else v
        return out
    raise PlannerError(f"{p}: expected a scenario .toml or a plan workbook .xlsm/.xlsx")
