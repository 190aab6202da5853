"""Text, JSON and CSV of ``planner sweep`` and ``planner diff`` (strings only: the CLI prints them)."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict
from typing import Any

from planner.decision import utilization_text
from planner.whatif.levers import PlanDiff, SweepStep


def _cell(v: Any) -> Any:
    return "" if v is None else v


def _num_text(v: Any, pct: bool = False) -> str:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return utilization_text(v) if pct else f"{v:,.4g}" if abs(v) < 1e4 else f"{v:,.0f}"
    return "-" if v in (None, "") else str(v)


def sweep_output(name: str, rows: list[SweepStep], fmt: str) -> str:
    """``rows`` of :func:`planner.whatif.levers.sweep` as text (a table), JSON or CSV (one line per value)."""
    if fmt == "json":
        return json.dumps({"vary": name, "steps": [asdict(r) for r in rows]}, indent=2) + "\n"
    routes = sorted({r for row in rows for r in row.routes})
    header = [name, "monthly_cost_usd", "highest_utilization", "worst_route", "binding", "first_breach_months",
              "routes_in_breach", *(f"{r}.max_util" for r in routes), *(f"{r}.binding" for r in routes)]
    table = []
    for row in rows:
        f = row.figures
        table.append([row.value, f.monthly_cost_usd, f.highest_utilization, f.worst_route, f.binding,
                      _cell(f.first_breach_months), f.routes_in_breach,
                      *(_cell(row.routes.get(r, {}).get("max_util")) for r in routes),
                      *(_cell(row.routes.get(r, {}).get("binding")) for r in routes)])
    if fmt == "csv":
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(header)
        w.writerows(table)
        return out.getvalue()
    lines = [f"{name:>14} {'bill USD/month':>16} {'highest util':>13} {'binds':<22} {'first breach':>13}"]
    for row in rows:
        f = row.figures
        where = f"{f.worst_route} {f.binding}".strip()
        breach = "never" if f.first_breach_months is None else f"{f.first_breach_months:.1f} months"
        lines.append(f"{row.value:>14g} {_num_text(f.monthly_cost_usd):>16} "
                     f"{_num_text(f.highest_utilization, pct=True):>13} {where:<22} {breach:>13}")
    return "\n".join(lines) + "\n"


def diff_output(d: PlanDiff, fmt: str, *, inputs_only: bool = False) -> str:
    """A :class:`~planner.whatif.levers.PlanDiff` as text, JSON or CSV (one line per changed cell)."""
    changes = [c for c in d.changes if c.is_input or not inputs_only]
    if fmt == "json":
        return json.dumps({"changes": [asdict(c) for c in changes],
                           "binding_changes": [{"route": r, "before": a, "after": b} for r, a, b in d.binding_changes],
                           "before": asdict(d.figures[0]), "after": asdict(d.figures[1])}, indent=2) + "\n"
    if fmt == "csv":
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["kind", "sheet", "cell", "row", "column", "before", "after"])
        for c in changes:
            w.writerow(["input" if c.is_input else "computed", c.sheet, c.cell, c.row, c.column, _cell(c.before),
                        _cell(c.after)])
        return out.getvalue()
    a, b = d.figures
    lines = [f"bill {_num_text(a.monthly_cost_usd)} -> {_num_text(b.monthly_cost_usd)} USD/month; highest "
             f"utilization {_num_text(a.highest_utilization, pct=True)} -> {_num_text(b.highest_utilization, pct=True)}"
             f" ({a.worst_route} {a.binding} -> {b.worst_route} {b.binding})"]
    for route, before, after in d.binding_changes:
        lines.append(f"binding constraint of {route}: {before} -> {after}")
    n_in = sum(c.is_input for c in changes)
    lines.append(f"{n_in} input cells and {len(changes) - n_in} computed cells differ")
    for c in changes:
        tag = "input" if c.is_input else "     "
        lines.append(f"{tag} {c.sheet}!{c.cell} {c.row} / {c.column}: {_num_text(c.before)} -> {_num_text(c.after)}")
    return "\n".join(lines) + "\n"
