"""The closed catalogue of validation findings.

Every finding ``planner validate`` can report has a code from :data:`CATALOGUE`: a kebab-case slug, a family, a
default severity and a one-line meaning. ``docs/findings.md`` is generated from this table
(:func:`catalogue_markdown`) and a test keeps the two identical. Severities are configurable per code
(:func:`parse_severity_overrides`, ``--severity code=level`` or a TOML config file); ``off`` drops a code.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

SEVERITIES = ("error", "warning", "info")
LEVELS = (*SEVERITIES, "off")

STALE_REL_TOL = 1e-9
"""Relative tolerance when comparing a cached value with its recompute."""
STALE_ABS_TOL = 1e-9
"""Absolute tolerance when comparing a cached value with its recompute: numbers agree when
``abs(cached - recomputed) <= STALE_ABS_TOL + STALE_REL_TOL * abs(recomputed)``."""


@dataclass(frozen=True, kw_only=True)
class FindingKind:
    """One entry of the catalogue."""

    code: str
    family: str
    severity: str
    meaning: str


FAMILIES = {
    "file": "The file could not be opened as a workbook.",
    "template": "The workbook is not (a supported version of) the capacity-plan template.",
    "structure": "A sheet, table or column of the template is missing.",
    "input": "An input cell is missing, of the wrong type or out of range.",
    "formula": "A template formula was typed over or edited.",
    "output": "A computed value is an Excel error, or its cached value is not what the functions compute.",
    "policy": "The plan computes fine but breaks a capacity policy.",
    "hostile": "The file carries something dangerous or too big; it is reported and never followed or executed.",
}

_K = FindingKind
CATALOGUE: dict[str, FindingKind] = {
    k.code: k
    for k in (
        _K(code="unreadable", family="file", severity="error",
           meaning="The file cannot be read (missing, a directory, permission denied, truncated zip)."),
        _K(code="not-a-workbook", family="file", severity="error",
           meaning="The file is not an Office Open XML workbook (.xlsx/.xlsm): no zip, or no xl/workbook.xml."),
        _K(code="not-our-template", family="template", severity="error",
           meaning="The defined name PLANNER_TEMPLATE_ID is missing or names another template."),
        _K(code="unsupported-template-version", family="template", severity="error",
           meaning="PLANNER_TEMPLATE_VERSION is missing or is a version this planner does not validate."),
        _K(code="missing-sheet", family="structure", severity="error",
           meaning="A sheet of the template is missing (renamed or deleted)."),
        _K(code="missing-table", family="structure", severity="error",
           meaning="An Excel Table of the template is missing, or does not cover its template range."),
        _K(code="missing-column", family="structure", severity="error",
           meaning="A column header of a template table is missing or renamed."),
        _K(code="input-missing", family="input", severity="error",
           meaning="A required input is empty on a row that is in use."),
        _K(code="input-wrong-type", family="input", severity="error",
           meaning="An input holds the wrong type (text in a number column, an unknown list value, a bad flag)."),
        _K(code="input-out-of-range", family="input", severity="error",
           meaning="A numeric input is outside the range the template allows."),
        _K(code="formula-overwritten", family="formula", severity="error",
           meaning="A template formula cell holds a typed-in value instead of its formula."),
        _K(code="formula-changed", family="formula", severity="error",
           meaning="A template formula cell holds a different formula than the template's."),
        _K(code="excel-error-value", family="output", severity="error",
           meaning="A computed cell holds an Excel error value (#N/A, #VALUE!, #DIV/0!, #NAME?, #NUM!, #REF!)."),
        _K(code="stale-value", family="output", severity="error",
           meaning="A cached value differs from the recompute (stale, or tampered): tolerance rel 1e-9 + abs 1e-9."),
        _K(code="missing-cached-value", family="output", severity="warning",
           meaning="A formula cell has no cached value (the file was written without calculating it)."),
        _K(code="utilization-over-threshold", family="policy", severity="error",
           meaning="A route's binding utilization is above the plan's utilization_threshold."),
        _K(code="kv-does-not-fit", family="policy", severity="error",
           meaning="A self-hosted route's KV cache at p95 context does not fit the fleet's KV memory."),
        _K(code="slo-not-met", family="policy", severity="error",
           meaning="A route's estimated decode time per output token misses its TPOT SLO."),
        _K(code="no-failover-headroom", family="policy", severity="warning",
           meaning="A route's failover backend could not take its load (failover utilization > 1)."),
        _K(code="macro-present", family="hostile", severity="info",
           meaning="The workbook carries a VBA project; it is never executed."),
        _K(code="external-link", family="hostile", severity="error",
           meaning="The workbook links to another workbook or a remote source; the link is reported, never followed."),
        _K(code="dde-formula", family="hostile", severity="error",
           meaning="A formula calls a DDE / command channel (e.g. =cmd|'/c calc'!A1); it is never evaluated."),
        _K(code="unparsable-formula", family="hostile", severity="error",
           meaning="A formula cannot be parsed; the cell is reported and the rest of the workbook still checked."),
        _K(code="zip-bomb", family="hostile", severity="error",
           meaning="The zip expands beyond the size or ratio limits; it is rejected before parsing."),
        _K(code="oversized-part", family="hostile", severity="error",
           meaning="A sheet or part is larger than the limits (bytes, rows, or a whole-column range)."),
        _K(code="xml-attack", family="hostile", severity="error",
           meaning="An XML part uses DTDs or entities (billion laughs, XXE); it is rejected by defusedxml."),
        _K(code="timeout", family="hostile", severity="error",
           meaning="Validating the workbook took longer than the per-workbook time limit; it was stopped."),
        _K(code="memory-limit", family="hostile", severity="error",
           meaning="Validating the workbook needed more memory than the per-workbook limit; it was stopped."),
        _K(code="validator-crash", family="hostile", severity="error",
           meaning="The validator failed unexpectedly on this workbook (a bug: please report it); the batch goes on."),
    )
}


def kind(code: str) -> FindingKind:
    """The catalogue entry of ``code`` (a ``KeyError`` names the unknown code)."""
    try:
        return CATALOGUE[code]
    except KeyError:
        raise KeyError(f"unknown finding code {code!r}") from None


def parse_severity_overrides(items: Iterable[str] | Mapping[str, str]) -> dict[str, str]:
    """``["stale-value=warning", ...]`` (or a mapping) as ``{code: level}``, checked against the catalogue.

    >>> parse_severity_overrides(["stale-value=warning", "macro-present=off"])
    {'stale-value': 'warning', 'macro-present': 'off'}
    """
    from planner.errors import ArgumentError, UnknownNameError

    pairs: list[tuple[str, str]] = []
    if isinstance(items, Mapping):
        pairs = [(str(k), str(v)) for k, v in items.items()]
    else:
        for item in items:
            if "=" not in item:
                raise ArgumentError("--severity", item, "CODE=LEVEL, e.g. stale-value=warning")
            code, level = item.split("=", 1)
            pairs.append((code.strip(), level.strip()))
    out: dict[str, str] = {}
    for code, level in pairs:
        if code.lower() not in CATALOGUE:
            raise UnknownNameError("--severity code", code, CATALOGUE)
        if level.lower() not in LEVELS:
            raise ArgumentError("--severity level", level, "one of " + ", ".join(LEVELS))
        out[code.lower()] = level.lower()
    return out


def load_config(path: str) -> dict[str, str]:
    """Severity overrides from a TOML file with a ``[severity]`` table (``stale-value = "warning"``)."""
    import sys

    from planner.errors import ArgumentError

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise ArgumentError("--config", path, f"a readable TOML file ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ArgumentError("--config", path, f"valid TOML ({exc})") from None
    table = data.get("severity", {})
    if not isinstance(table, dict):
        raise ArgumentError("--config [severity]", table, "a table of code = level")
    return parse_severity_overrides(table)


def catalogue_markdown() -> str:
    """``docs/findings.md``: the catalogue as Markdown, family by family."""
    lines = [
        "# Validation findings",
        "",
        "Every finding of `planner validate` has a `code` from this closed catalogue, a `severity` (error, warning,",
        "info), a `sheet` and `cell` (when it concerns one), a `message`, and the `expected` and `actual` values.",
        "Severities below are the defaults; change them per code with `--severity CODE=LEVEL` (level `off` drops",
        "the code) or a `[severity]` table in a TOML file given with `--config`.",
        "",
        f"Cached values are compared with the recompute with tolerance rel {STALE_REL_TOL:g} + abs {STALE_ABS_TOL:g}:",
        "numbers agree when `abs(cached - recomputed) <= 1e-9 + 1e-9 * abs(recomputed)`; text, flags and error",
        "values must be identical (text is compared case-sensitively, an empty cell equals an empty string).",
        "",
        "Generated from `planner/validate/findings.py`; `tests/test_validate_findings.py` keeps this file identical.",
        "",
    ]
    for family, about in FAMILIES.items():
        lines += [f"## {family}", "", about, "", "| code | default severity | meaning |", "|---|---|---|"]
        for k in CATALOGUE.values():
            if k.family == family:
                lines.append(f"| `{k.code}` | {k.severity} | {k.meaning} |")
        lines.append("")
    return "\n".join(lines)
