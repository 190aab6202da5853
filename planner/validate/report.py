"""Findings and reports as frozen values, and their renderers: text, json, junit, csv and github.

The JSON shape is fixed (``docs/validate.md``, ``docs/report.schema.json``)::

    {"valid": bool, "reports": [{"path": str, "valid": bool, "template_version": str|null, "truncated": bool,
                                  "findings": [{"code", "severity", "sheet", "cell", "message", "expected",
                                                "actual"}]}],
     "stats": {"workbooks", "invalid", "errors", "warnings", "infos", "truncated"}}

Every renderer keeps its output well-formed whatever the file and sheet names hold: paths that are not UTF-8 and
control characters are shown escaped (:func:`safe_text`), the CSV neutralises formula-looking text
(:func:`csv_safe`), and a name can never start a new line of the text report.
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

from planner.codes import render, show
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
    context: tuple[tuple[str, Any], ...] = ()
    """Extra data of the finding (e.g. ``(("dependents", 41),)``), as pairs so that a finding stays hashable."""

    @property
    def location(self) -> str:
        """``Sheet!A1``, ``Sheet`` or ``""``."""
        if self.sheet is None:
            return self.cell or ""
        sheet = self.sheet if self.sheet.replace("_", "").isalnum() else "'" + self.sheet.replace("'", "''") + "'"
        return f"{sheet}!{self.cell}" if self.cell else sheet

    def as_dict(self) -> dict[str, Any]:
        return {k: _plain(getattr(self, k)) for k in FINDING_KEYS}

    @classmethod
    def of(cls, code: str, *, sheet: str | None = None, cell: str | None = None, expected: Any = None,
           actual: Any = None, note: str = "", **context: Any) -> Finding:
        """A finding of ``code``: severity from the catalogue, message rendered from the code's template.

        >>> Finding.of("input-formula", sheet="Routes", cell="C4", actual="=400*1000").message
        'input cell holds a formula ("=400*1000"); type the value instead'
        """
        message = render(code, sheet=sheet, cell=cell, expected=expected, actual=actual, note=note,
                         context=context)
        return cls(code=code, severity=kind(code).severity, message=message, sheet=sheet, cell=cell,
                   expected=expected, actual=actual, context=tuple(sorted(context.items())))

    def wire(self) -> dict[str, Any]:
        """:meth:`as_dict` plus the context (the form worker processes send)."""
        return self.as_dict() | ({"context": [[k, _plain(v)] for k, v in self.context]} if self.context else {})


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
    truncated: bool = False
    """``--max-findings`` dropped some findings (the most severe ones are kept, so validity is unchanged)."""

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

    def selected(self, *, keep: set[str] | None = None, drop: set[str] | frozenset[str] = frozenset(),
                 max_findings: int | None = None) -> Report:
        """Only the codes in ``keep`` (all when None) and not in ``drop``; at most ``max_findings`` findings.

        Truncation keeps the most severe findings first (errors, then warnings, then infos), so a truncated
        report is invalid exactly when the full one is; the kept ones stay in report order.
        """
        out = [f for f in self.findings if (keep is None or f.code in keep) and f.code not in drop]
        truncated = self.truncated
        if max_findings is not None and len(out) > max_findings:
            rank = {"error": 0, "warning": 1, "info": 2}
            chosen = sorted(range(len(out)), key=lambda i: (rank.get(out[i].severity, 3), i))[:max_findings]
            out = [out[i] for i in sorted(chosen)]
            truncated = True
        return replace(self, findings=tuple(out), truncated=truncated)

    def flatten(self, spec: Sequence[str] = ("sheet", "cell", "code")) -> list[list[Any]]:
        """The findings as rows of the given fields: test verdicts as data (frictionless ``flatten``)."""
        return [[getattr(f, k) for k in spec] for f in self.findings]

    def as_dict(self, strict: bool = False) -> dict[str, Any]:
        return {"path": self.path, "valid": self.valid(strict), "template_version": self.template_version,
                "truncated": self.truncated, "engine": self.engine,
                "findings": [f.as_dict() | {"location": f.location, "help": f"docs/findings.md#{f.code}",
                                            "context": {k: _plain(v) for k, v in f.context}}
                             for f in self.findings]}

    def to_wire(self) -> dict[str, Any]:
        """A picklable/JSON form for worker processes (see :func:`Report.from_wire`)."""
        return {"path": self.path, "template_version": self.template_version, "engine": self.engine,
                "truncated": self.truncated, "findings": [f.wire() for f in self.findings]}

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> Report:
        return cls(path=data["path"], template_version=data["template_version"], engine=data.get("engine", "fast"),
                   truncated=data.get("truncated", False),
                   findings=tuple(Finding(**{**f, "context": tuple(tuple(kv) for kv in f.get("context", ()))})
                                  for f in data["findings"]))


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

    def stats(self) -> dict[str, int]:
        """Summary counts: workbooks, invalid ones, findings by severity, truncated reports."""
        every = [f for r in self.reports for f in r.findings]
        return {"workbooks": len(self.reports), "invalid": sum(not r.valid(self.strict) for r in self.reports),
                "errors": sum(f.severity == "error" for f in every),
                "warnings": sum(f.severity == "warning" for f in every),
                "infos": sum(f.severity == "info" for f in every),
                "truncated": sum(r.truncated for r in self.reports)}

    def summary(self) -> str:
        """``3 workbook(s): 2 valid, 1 invalid; 4 error(s), 1 warning(s), 0 info(s)``."""
        s = self.stats()
        line = (f"{s['workbooks']} workbook(s): {s['workbooks'] - s['invalid']} valid, {s['invalid']} invalid; "
                f"{s['errors']} error(s), {s['warnings']} warning(s), {s['infos']} info(s)")
        return line + (f"; {s['truncated']} report(s) truncated by --max-findings" if s["truncated"] else "")

    def as_dict(self) -> dict[str, Any]:
        from planner import __version__

        return {"valid": self.valid, "reports": [r.as_dict(self.strict) for r in self.reports],
                "planner_version": __version__, "stats": self.stats()}


_CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))}
_CONTROL.update({0x2028: "\\u2028", 0x2029: "\\u2029"})


def safe_text(text: str) -> str:
    r"""``text`` printable on one line of any report: bytes that are not UTF-8 (``surrogateescape`` in file
    names) as ``\xNN``, control characters and line separators as ``\xNN`` / ``\uNNNN``.

    >>> safe_text("a\nb: ok") == "a\\x0ab: ok"
    True
    >>> safe_text("caf\udce9.xlsx")
    'caf\\xe9.xlsx'
    """
    if text.isprintable():
        return text
    out = []
    for ch in text:
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:  # a byte that was not UTF-8, kept by surrogateescape
            out.append(f"\\x{o - 0xDC00:02x}")
        elif 0xD800 <= o <= 0xDFFF:
            out.append(f"\\u{o:04x}")
        else:
            out.append(_CONTROL.get(o, ch))
    return "".join(out)


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
    """``path:Sheet!A1: severity code: message (expected X, actual Y)``: one grep-able line, always one line (the
    values are added when the message does not show them already)."""
    loc = safe_text(f.location)
    where = f"{safe_text(path)}:{loc}:" if loc else f"{safe_text(path)}:"
    message = safe_text(" ".join(str(f.message).split()))
    tail = ""
    said = f.actual is not None and show(f.actual) in message and (f.expected is None or show(f.expected) in message)
    if (f.expected is not None or f.actual is not None) and not said:  # values the message does not show yet
        tail = f" (expected {_show(f.expected)}, actual {_show(f.actual)})"
    return f"{where} {f.severity} {f.code}: {message}{safe_text(tail)}"


def render_text(result: BatchResult, *, show_ok: bool = True) -> str:
    lines: list[str] = []
    for r in result.reports:
        lines += [finding_line(r.path, f) for f in r.findings]
        if r.truncated:
            lines.append(f"{safe_text(r.path)}: truncated: more findings than --max-findings")
        if show_ok and r.valid(result.strict):
            version = f"template {safe_text(r.template_version)}" if r.template_version else "no template version"
            lines.append(f"{safe_text(r.path)}: ok ({version}, {len(r.findings)} finding(s) below error)"
                         if r.findings else f"{safe_text(r.path)}: ok ({version})")
    lines.append(result.summary())
    return "\n".join(lines) + "\n"


def _json_safe(value: Any) -> Any:
    """Strings with lone surrogates (file names that are not UTF-8) made encodable, recursively."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return safe_text(value)
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


def render_json(result: BatchResult) -> str:
    return json.dumps(_json_safe(result.as_dict()), indent=2, ensure_ascii=False) + "\n"


CSV_HEADER = ("path", "valid", "template_version", *FINDING_KEYS)
CSV_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
"""Leading characters that make a spreadsheet read a cell as a formula (OWASP CSV injection)."""


def csv_safe(value: Any) -> Any:
    """A CSV cell that no spreadsheet reads as a formula: text starting with ``= + - @``, tab or CR gets a
    leading ``'`` (OWASP); numbers stay numbers.

    >>> csv_safe("=cmd|'/c calc'!A1"), csv_safe(-3), csv_safe("ok")
    ("'=cmd|'/c calc'!A1", -3, 'ok')
    """
    if isinstance(value, str):
        value = safe_text(value) if not value.isprintable() else value
        if value.startswith(CSV_TRIGGERS):
            return "'" + value
    return value


def render_csv(result: BatchResult) -> str:
    """One row per finding; a valid workbook without findings gets one row with an empty code; a last row with
    path ``(summary)`` carries the counts in its message."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_HEADER)
    for r in result.reports:
        head = [csv_safe(r.path), "true" if r.valid(result.strict) else "false", csv_safe(r.template_version or "")]
        if not r.findings:
            w.writerow(head + [""] * len(FINDING_KEYS))
        for f in r.findings:
            d = f.as_dict()
            w.writerow(head + ["" if d[k] is None else csv_safe(d[k]) for k in FINDING_KEYS])
    row = dict.fromkeys(FINDING_KEYS, "")
    row.update(code="summary", message=result.summary())
    w.writerow(["(summary)", "true" if result.valid else "false", "", *row.values()])
    return buf.getvalue()


def _xml_safe(text: str) -> str:
    """Text that XML 1.0 can carry: control characters and non-UTF-8 bytes escaped (see :func:`safe_text`)."""
    return safe_text(text)


def render_junit(result: BatchResult) -> str:
    """JUnit XML: one test case per workbook; a failure lists its failing findings, the rest go to system-out."""
    bad = ("error", "warning") if result.strict else ("error",)
    stats = result.stats()
    failures = stats["invalid"]
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<testsuites name="planner validate" tests="{len(result.reports)}" failures="{failures}">',
           f'<testsuite name="planner validate" tests="{len(result.reports)}" failures="{failures}" errors="0">',
           "<properties>" + "".join(f"<property name={quoteattr(k)} value={quoteattr(str(v))}/>"
                                    for k, v in stats.items()) + "</properties>"]
    for r in result.reports:
        out.append(f"<testcase classname={quoteattr('planner.validate')} name={quoteattr(_xml_safe(r.path))}>")
        failing = [f for f in r.findings if f.severity in bad]
        if failing:
            msg = f"{len(failing)} finding(s): " + ", ".join(sorted({f.code for f in failing}))
            body = "\n".join(finding_line(r.path, f) for f in failing)
            out.append(f"<failure message={quoteattr(msg)} type={quoteattr(failing[0].code)}>{escape(body)}</failure>")
        rest = [f for f in r.findings if f.severity not in bad]
        if rest or r.truncated:
            lines = [finding_line(r.path, f) for f in rest] + (["truncated by --max-findings"] if r.truncated else [])
            out.append(f"<system-out>{escape(chr(10).join(lines))}</system-out>")
        out.append("</testcase>")
    out += ["</testsuite>", "</testsuites>"]
    return "\n".join(out) + "\n"


def _gh_data(text: str) -> str:
    return safe_text(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_property(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


_GH_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def render_github(result: BatchResult) -> str:
    """GitHub Actions workflow commands: ``::error file=PATH,title=CODE::Sheet!A1: message``, one per finding,
    then a ``::notice`` with the summary counts (shown as annotations on the pull request)."""
    lines = []
    for r in result.reports:
        for f in r.findings:
            level = _GH_LEVEL.get(f.severity, "notice")
            if result.strict and level == "warning":
                level = "error"
            where = f"{f.location}: " if f.location else ""
            lines.append(f"::{level} file={_gh_property(r.path)},title={_gh_property(f.code)}::"
                         f"{_gh_data(where + ' '.join(str(f.message).split()))}")
        if r.truncated:
            lines.append(f"::warning file={_gh_property(r.path)},title=truncated::more findings than --max-findings")
    lines.append(f"::notice title=planner validate::{_gh_data(result.summary())}")
    return "\n".join(lines) + "\n"


def report_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of :func:`render_json`'s output, published as ``docs/report.schema.json``.
    Required keys are the stable contract; other keys are extras that may be added."""
    from planner.codes import CODES, SEVERITIES

    scalar = {"type": ["number", "string", "boolean", "null"]}
    counts = ("workbooks", "invalid", "errors", "warnings", "infos", "truncated")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "docs/report.schema.json",
        "title": "planner validate report",
        "description": "The JSON report of `planner validate --format json` (docs/validate.md). Required keys are "
                       "the stable contract; other keys are extras that may be added. Generated by "
                       "planner.validate.report.report_schema.",
        "type": "object",
        "required": ["valid", "reports", "stats"],
        "properties": {
            "valid": {"type": "boolean", "description": "Every workbook valid (under --strict, warnings count)."},
            "planner_version": {"type": "string"},
            "stats": {"type": "object", "required": list(counts),
                      "properties": {k: {"type": "integer", "minimum": 0} for k in counts}},
            "reports": {"type": "array", "items": {"$ref": "#/$defs/report"}},
        },
        "$defs": {
            "report": {
                "type": "object",
                "required": ["path", "valid", "template_version", "findings", "truncated"],
                "properties": {
                    "path": {"type": "string", "description": "As given or found; bytes that are not UTF-8 and "
                                                              "control characters are shown as \\xNN escapes."},
                    "valid": {"type": "boolean"},
                    "template_version": {"type": ["string", "null"]},
                    "truncated": {"type": "boolean", "description": "--max-findings dropped findings."},
                    "engine": {"type": "string"},
                    "findings": {"type": "array", "items": {"$ref": "#/$defs/finding"}},
                },
            },
            "finding": {
                "type": "object",
                "required": list(FINDING_KEYS),
                "properties": {
                    "code": {"enum": list(CODES), "description": "A code of docs/findings.md."},
                    "severity": {"enum": list(SEVERITIES)},
                    "sheet": {"type": ["string", "null"]},
                    "cell": {"type": ["string", "null"]},
                    "message": {"type": "string"},
                    "expected": scalar,
                    "actual": scalar,
                    "location": {"type": "string"},
                    "help": {"type": "string"},
                    "context": {"type": "object", "additionalProperties": scalar,
                                "description": "Extra data of the finding, e.g. dependents of a stale cell."},
                },
            },
        },
    }


RENDERERS = {"text": render_text, "json": render_json, "csv": render_csv, "junit": render_junit,
             "github": render_github}


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
