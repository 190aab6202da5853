"""The closed catalogue of findings, as ``planner validate`` uses it (the entries live in :mod:`planner.codes`).

Every finding ``planner validate`` or ``planner recalc`` can report has a code from :data:`CATALOGUE`: a kebab-case
slug, a family, a default severity, a title, a message template and a description.
``docs/findings.md`` is generated from this table
(:func:`catalogue_markdown`) and a test keeps the two identical. Severities are configurable per code
(:func:`parse_severity_overrides`, ``--severity code=level`` or a TOML config file); ``off`` drops a code.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from planner.codes import CODES, FAMILIES, SEVERITIES, CodeSpec, spec

__all__ = ["CATALOGUE", "FAMILIES", "LEVELS", "SEVERITIES", "FindingKind", "catalogue_markdown", "kind",
           "load_config", "parse_severity_overrides"]

LEVELS = (*SEVERITIES, "off")

STALE_REL_TOL = 1e-9
"""Relative tolerance when comparing a cached value with its recompute."""
STALE_ABS_TOL = 1e-9
"""Absolute tolerance when comparing a cached value with its recompute: numbers agree when
``abs(cached - recomputed) <= STALE_ABS_TOL + STALE_REL_TOL * abs(recomputed)``."""


FindingKind = CodeSpec
"""The former name of a catalogue entry (:class:`planner.codes.CodeSpec`)."""

CATALOGUE: dict[str, CodeSpec] = CODES
"""The one catalogue (:data:`planner.codes.CODES`): ``planner validate`` and ``planner recalc`` share it."""


def kind(code: str) -> CodeSpec:
    """The catalogue entry of ``code`` (a ``KeyError`` names the unknown code)."""
    return spec(code)


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
    from planner.errors import ArgumentError
    from planner.scenario import tomllib  # the one module that picks tomllib or tomli (Python 3.10)
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
    """``docs/findings.md``: the catalogue as Markdown, family by family, then one section per code."""
    lines = [
        "# Findings",
        "",
        "Every finding of `planner validate` and `planner recalc` has a `code` from this closed catalogue, a",
        "`severity` (error, warning, info), a `sheet` and `cell` (when it concerns one), a `message` rendered from",
        "the code's template, and the `expected` and `actual` values. `planner explain CODE` prints one entry.",
        "Severities below are the defaults; change them per code with `--severity CODE=LEVEL` (level `off` drops",
        "the code) or a `[severity]` table in a TOML file given with `--config`; keep or drop codes or whole",
        "families with `--select` / `--ignore`.",
        "",
        f"Cached values are compared with the recompute with tolerance rel {STALE_REL_TOL:g} + abs {STALE_ABS_TOL:g}:",
        "numbers agree when `abs(cached - recomputed) <= 1e-9 + 1e-9 * abs(recomputed)`; text, flags and error",
        "values must be identical (text is compared case-sensitively, an empty cell equals an empty string).",
        "",
        "Generated from `planner/codes.py`; `tests/test_validate_findings.py` keeps this file identical.",
        "",
        "## Families",
        "",
    ]
    for family, about in FAMILIES.items():
        lines += [f"### {family}", "", about, "", "| code | default severity | title |", "|---|---|---|"]
        for k in CATALOGUE.values():
            if k.family == family:
                lines.append(f"| [`{k.code}`](#{k.code}) | {k.severity} | {k.title} |")
        lines.append("")
    lines += ["## Codes", ""]
    for k in CATALOGUE.values():
        lines += [f"### {k.code} {{#{k.code}}}", "",
                  f"*{k.title}*: family `{k.family}`, default severity `{k.severity}`.", "",
                  f"Message: `{k.template}`", "", k.description, ""]
    return "\n".join(lines)
