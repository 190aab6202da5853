"""The template's contract as Markdown (kept in ``docs/template.md``; a test checks it is current)."""

from __future__ import annotations

from planner.template import LISTS_TABLE, PLAN, TABLES


def contract_markdown() -> str:
    """The tables of the contract as Markdown (kept in ``docs/template.md``; a test checks it is current)."""
    lines: list[str] = []
    for t in TABLES:
        lines += [
            f"### `{t.name}` on sheet `{t.sheet}` (`{t.ref}`, {t.rows} data rows from row {t.first_row})",
            "",
            "| Col | Key | Header | Kind | Constraint |",
            "|---|---|---|---|---|",
        ]
        for c in t.columns:
            cons = []
            if c.choices:
                cons.append(f"dropdown: {c.choices}")
            if c.minimum is not None or c.maximum is not None:
                lo = "" if c.minimum is None else f"{c.minimum:g}"
                hi = "" if c.maximum is None else f"{c.maximum:g}"
                cons.append(f"{'whole ' if c.integer else ''}{lo}..{hi}")
            if c.required:
                cons.append("required")
            fixed = t is LISTS_TABLE or (t is PLAN and c.key != "value")
            kind = "formula" if c.formula is not None else ("fixed" if fixed else "input")
            lines.append(f"| {t.letter(c.key)} | `{c.key}` | {c.header} | {kind} | {', '.join(cons)} |")
        lines.append("")
    return "\n".join(lines)
