"""Function documentation generated from the registry (``docs/functions.md`` and ``planner functions``)."""

from __future__ import annotations

from planner.registry import load


def functions_text() -> str:
    """One block per function: signature, return unit, summary, arguments."""
    lines: list[str] = []
    for spec in sorted(load().values(), key=lambda s: (s.category, s.name)):
        lines.append(f"{spec.signature} -> {spec.returns}   [{spec.category}]")
        lines.append(f"    {spec.summary}")
        for arg in spec.args:
            lines.append(f"    {arg.name:<28} {spec.arg_help(arg)}")
        lines.append(f"    e.g. {spec.example}")
        lines.append("")
    return "\n".join(lines)


def functions_markdown() -> str:
    """The whole ``docs/functions.md`` page."""
    registry = load()
    out = [
        "# Spreadsheet functions",
        "",
        "Generated from the function registry (`planner functions --format markdown`); "
        "`tests/test_docs.py` keeps this page current. The same functions run in Excel (xlwings), "
        "in xlwings Lite and in the headless recompute.",
        "",
    ]
    categories = sorted({s.category for s in registry.values()})
    for category in categories:
        out += [f"## {category}", ""]
        for spec in sorted((s for s in registry.values() if s.category == category), key=lambda s: s.name):
            out += [f"### `{spec.signature}`", "", spec.summary, "", f"Returns: {spec.returns}.", ""]
            if spec.formula_ids:
                out += [f"Formula: {', '.join(spec.formula_ids)} (see the core docstrings).", ""]
            out += ["| argument | unit | help | default |", "| --- | --- | --- | --- |"]
            for arg in spec.args:
                default = "required" if not arg.optional else f"`{arg.default!r}`"
                default = f"may be blank: {arg.blank}" if arg.blank else default
                out.append(f"| `{arg.name}` | {arg.unit} | {arg.help} | {default} |")
            out += ["", f"Example: `{spec.example}`", ""]
    return "\n".join(out)
