"""Findings and reports as frozen values, and their renderers: text, json, junit and csv.

The JSON shape is fixed (``docs/validate.md``)::

    {"valid": bool, "reports": [{"path": str, "valid": bool, "template_version": str|null,
                                  "findings": [{"code", "severity", "sheet", "cell", "message", "expected",
                                                "actual"}]}]}
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from planner.validate.findings import CATALOGUE, kind

FINDING_KEYS = ("code", "severity", "sheet", "cell", "message", "expected", "actual")


def _plain(value: Any) -> Any:
    """A JSON-safe scalar: numbers, text, booleans or None (NaN/inf become text)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return repr(value)
        return int(value) if value.is_integer() and abs(value) < 2**53 else value
    return str(value)


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One finding: a catalogue ``code``, its ``severity``, where (``sheet``, ``cell``) and what."""

    code: str
    severity: str
    message: str
    sheet: str | None = None
    cell: str | None = None
    expected: Any = None
    actual: Any = None

    @property
    def location(self) -> str:
        """``Sheet!A1``, ``Sheet`` or ``""``."""
        if self.sheet is None:
            return self.cell or ""
        sheet = self.sheet if self.sheet.replace("_", "").isalnum() else "'" + self.sheet.replace("'", "''") + "'"
        return f"{sheet}!{self.cell}" if self.cell else sheet

    def as_dict(self) -> dict[str, Any]:
        return {k: _plain(getattr(self, k)) for k in FINDING_KEYS}


def finding(code: str, message: str, *, sheet: str | None = None, cell: str | None = None,
            expected: Any = None, actual: Any = None) -> Finding:
    """A finding with the catalogue's default severity for ``code``."""
    return Finding(code=code, severity=kind(code).severity, message=message, sheet=sheet, cell=cell,
                   expected=expected, actual=actual)


@dataclass(frozen=True, kw_only=True)
class Report:
    """The findings of one workbook."""

    path: str
    template_version: str | None = None
    findings: tuple[Finding, ...] = ()
    engine: str = "fast"  # "fast": the template's compiled evaluation; "formulas": the general engine; "none"

    def valid(self, strict: bool = False) -> bool:
        bad = ("error", "warning") if strict else ("error",)
        return not any(f.severity in bad for f in self.findings)

    def with_severities(self, overrides: Mapping[str, str]) -> Report:
        """Severity overrides applied (``off`` drops the code)."""
        if not overrides:
            return self
        out = []
        for f in self.findings:
            level = overrides.get(f.code)
            if level == "off":
                continue
            out.append(replace(f, severity=level) if level else f)
        return replace(self, findings=tuple(out))

    def as_dict(self, strict: bool = False) -> dict[str, Any]:
        return {"path": self.path, "valid": self.valid(strict), "template_version": self.template_version,
                "findings": [f.as_dict() for f in self.findings]}

    def to_wire(self) -> dict[str, Any]:
        """A picklable/JSON form for worker processes (see :func:`Report.from_wire`)."""
        return {"path": self.path, "template_version": self.template_version, "engine": self.engine,
                "findings": [f.as_dict() for f in self.findings]}

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> Report:
        return cls(path=data["path"], template_version=data["template_version"], engine=data.get("engine", "fast"),
                   findings=tuple(Finding(**f) for f in data["findings"]))


@dataclass(frozen=True, kw_only=True)
class BatchResult:
    """The reports of a batch, in the order of the input paths."""

    reports: tuple[Report, ...] = field(default_factory=tuple)
    strict: bool = False

    @property
    def valid(self) -> bool:
        return all(r.valid(self.strict) for r in self.reports)

    @property
    def exit_code(self) -> int:
        """0 when every plan is valid, 1 otherwise (2, could not run, is the CLI's)."""
        return 0 if self.valid else 1

    def as_dict(self) -> dict[str, Any]:
        return {"valid": self.valid, "reports": [r.as_dict(self.strict) for r in self.reports]}


def _show(value: Any) -> str:
    v = _plain(value)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if v is None:
        return "empty"
    return repr(v)


def finding_line(path: str, f: Finding) -> str:
    """``path:Sheet!A1: severity code: message (expected X, actual Y)``: one grep-able line."""
    where = f"{path}:{f.location}:" if f.location else f"{path}:"
    tail = ""
    if f.expected is not None or f.actual is not None:
        tail = f" (expected {_show(f.expected)}, actual {_show(f.actual)})"
    message = " ".join(str(f.message).split())
    return f"{where} {f.severity} {f.code}: {message}{tail}"


def render_text(result: BatchResult, *, show_ok: bool = True) -> str:
    lines: list[str] = []
    for r in result.reports:
        lines += [finding_line(r.path, f) for f in r.findings]
        if show_ok and r.valid(result.strict):
            version = f"template {r.template_version}" if r.template_version else "no template version"
            lines.append(f"{r.path}: ok ({version}, {len(r.findings)} finding(s) below error)"
                         if r.findings else f"{r.path}: ok ({version})")
    n = len(result.reports)
    bad = sum(not r.valid(result.strict) for r in result.reports)
    counts = {s: sum(f.severity == s for r in result.reports for f in r.findings) for s in ("error", "warning")}
    lines.append(f"{n} plan(s): {n - bad} valid, {bad} invalid; {counts['error']} error(s), "
                 f"{counts['warning']} warning(s)")
    return "\n".join(lines) + "\n"


def render_json(result: BatchResult) -> str:
    return json.dumps(result.as_dict(), indent=2, ensure_ascii=False) + "\n"


CSV_HEADER = ("path", "valid", "template_version", *FINDING_KEYS)


def render_csv(result: BatchResult) -> str:
    """One row per finding; a valid workbook without findings gets one row with an empty code."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_HEADER)
    for r in result.reports:
        head = [r.path, "true" if r.valid(result.strict) else "false", r.template_version or ""]
        if not r.findings:
            w.writerow(head + [""] * len(FINDING_KEYS))
        for f in r.findings:
            d = f.as_dict()
            w.writerow(head + ["" if d[k] is None else d[k] for k in FINDING_KEYS])
    return buf.getvalue()


def render_junit(result: BatchResult) -> str:
    """JUnit XML: one test case per workbook; a failure lists its failing findings, the rest go to system-out."""
    bad = ("error", "warning") if result.strict else ("error",)
    failures = sum(not r.valid(result.strict) for r in result.reports)
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<testsuites name="planner validate" tests="{len(result.reports)}" failures="{failures}">',
           f'<testsuite name="planner validate" tests="{len(result.reports)}" failures="{failures}" errors="0">']
    for r in result.reports:
        out.append(f"<testcase classname={quoteattr('planner.validate')} name={quoteattr(r.path)}>")
        failing = [f for f in r.findings if f.severity in bad]
        if failing:
            msg = f"{len(failing)} finding(s): " + ", ".join(sorted({f.code for f in failing}))
            body = "\n".join(finding_line(r.path, f) for f in failing)
            out.append(f"<failure message={quoteattr(msg)} type={quoteattr(failing[0].code)}>{escape(body)}</failure>")
        rest = [f for f in r.findings if f.severity not in bad]
        if rest:
            out.append(f"<system-out>{escape(chr(10).join(finding_line(r.path, f) for f in rest))}</system-out>")
        out.append("</testcase>")
    out += ["</testsuite>", "</testsuites>"]
    return "\n".join(out) + "\n"


RENDERERS = {"text": render_text, "json": render_json, "csv": render_csv, "junit": render_junit}


def sort_findings(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    """Catalogue order, then sheet and cell: stable output whatever order the checks ran in."""
    order = {c: i for i, c in enumerate(CATALOGUE)}
    return tuple(sorted(findings, key=lambda f: (order.get(f.code, 999), f.sheet or "", _cell_key(f.cell))))


def _cell_key(cell: str | None) -> tuple[int, str]:
    if not cell:
        return (0, "")
    letters = cell.rstrip("0123456789").lstrip("$")
    digits = cell[len(cell.rstrip("0123456789")):]
    return (int(digits) if digits else 0, f"{len(letters):02d}{letters}")


def results_from(reports: Sequence[Report], *, strict: bool = False) -> BatchResult:
    return BatchResult(reports=tuple(reports), strict=strict)
