"""The one catalogue of finding codes, shared by ``planner validate`` and ``planner recalc``.

Each code is a :class:`CodeSpec`: a kebab-case ``code``, its ``family`` (usable with ``--select``/``--ignore``), a
default ``severity``, a ``title``, a message ``template`` and a ``description`` (what it means and how to fix it;
``planner explain CODE`` prints it, ``docs/findings.md`` is generated from it). A finding's message is rendered from
the template (:func:`render`) with the finding's ``sheet``, ``cell``, ``expected``, ``actual``, ``note`` and context.
Stdlib only.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SEVERITIES = ("error", "warning", "info")
"""error: the plan cannot be accepted; warning: a reviewer should look (fails under ``--strict``); info: recorded."""

FAMILIES: dict[str, str] = {
    "file": "The path could not be opened as a workbook, or was not opened on purpose.",
    "template": "The workbook is not (a supported version of) the capacity-plan template.",
    "structure": "A sheet, table or column of the template is missing.",
    "input": "An input cell is missing, of the wrong type, out of range, or computed by a formula.",
    "formula": "A template formula was typed over or edited, or cannot be computed.",
    "output": "A computed value is an Excel error, or its cached value is not what the functions compute.",
    "policy": "The plan computes fine but breaks a capacity policy.",
    "hostile": "The file carries something dangerous or too big; it is reported and never followed or executed.",
}

TEMPLATE_FIELDS = frozenset({"sheet", "cell", "expected", "actual", "note"})
"""Placeholders every template may use; a finding's context adds its own (e.g. ``dependents``)."""


@dataclass(frozen=True, kw_only=True)
class CodeSpec:
    """One catalogue entry."""

    code: str
    family: str
    severity: str
    title: str
    template: str
    description: str

    @property
    def meaning(self) -> str:
        """The first sentence of the description (the one-line meaning shown in tables)."""
        return self.description.split("\n", 1)[0]

    def fields(self) -> set[str]:
        """The placeholders of :attr:`template`."""
        return {name for _t, name, _f, _c in string.Formatter().parse(self.template) if name}


def _c(code: str, family: str, severity: str, title: str, template: str, description: str) -> CodeSpec:
    return CodeSpec(code=code, family=family, severity=severity, title=title, template=template,
                    description=description)


CODES: dict[str, CodeSpec] = {c.code: c for c in (
    # file
    _c("unreadable", "file", "error", "Unreadable file", "{note}",
       "The file cannot be read (missing, a directory, permission denied, truncated zip, a path past the system "
       "limit). Check the path and the permissions; re-save the workbook if the zip is truncated."),
    _c("not-a-workbook", "file", "error", "Not a workbook", "{note}",
       "The file is not an Office Open XML workbook (.xlsx/.xlsm): no zip, or no xl/workbook.xml. Save it from "
       "Excel or LibreOffice as .xlsx or .xlsm."),
    _c("malformed-part", "file", "error", "Malformed part", "{note}",
       "A part of the package breaks the file format: a cell reference off the sheet grid (r=\"4C\", r=\"\"), a "
       "cached number that is not a number (<v>4_00</v>), a non-numeric count or sheet index, corrupt compressed "
       "data. Spreadsheet programs disagree on how to read such a part, so the workbook is refused; re-save it "
       "from Excel or LibreOffice."),
    _c("special-file", "file", "error", "Not a regular file", "{note}",
       "The path is a FIFO, socket or device. It is reported and never opened (opening could block or have side "
       "effects)."),
    _c("path-skipped", "file", "info", "Path skipped", "not validated: {note}",
       "A path under a submitted folder was not validated, on purpose: an Office lock file (~$name, not a zip). "
       "Recorded so that nothing under a submitted folder is skipped silently."),
    # template
    _c("not-our-template", "template", "error", "Not the template",
       "not the capacity-plan template (defined name PLANNER_TEMPLATE_ID is {actual}, expected {expected})",
       "The defined name PLANNER_TEMPLATE_ID is missing or names another template. Start from "
       "templates/capacity-plan.xlsm (planner template build)."),
    _c("unsupported-template-version", "template", "error", "Unsupported template version",
       "template version {actual} is not supported (supported: {expected})",
       "PLANNER_TEMPLATE_VERSION is missing or is a version this planner does not validate. Rebuild the plan on "
       "the current template."),
    # structure
    _c("missing-sheet", "structure", "error", "Missing sheet", "sheet {expected} is missing",
       "A sheet of the template is missing (renamed or deleted). Restore it from the template."),
    _c("duplicate-name", "structure", "error", "Duplicate name", "{note}",
       "Two sheets (names are case-insensitive: Results and RESULTS), two tables or two zip entries share a "
       "name. Readers disagree on which one counts (LibreOffice may show the copy the validator did not read), so "
       "the workbook is refused. Delete or rename the copy."),
    _c("missing-table", "structure", "error", "Missing table", "{note} (expected {expected}, found {actual})",
       "An Excel Table of the template is missing, or does not cover its template range."),
    _c("missing-column", "structure", "error", "Missing column", "column {expected} {note} is missing or renamed",
       "A column header of a template table is missing or renamed. Restore the header text."),
    # input
    _c("input-missing", "input", "error", "Missing input", "{note} is required on a row in use",
       "A required input is empty on a row that is in use. Fill it in."),
    _c("input-wrong-type", "input", "error", "Wrong input type", "{note}: expected {expected}, got {actual}",
       "An input holds the wrong type (text in a number column, an unknown list value, a bad flag, an error)."),
    _c("input-out-of-range", "input", "error", "Input out of range",
       "{note} is out of range: expected {expected}, got {actual}",
       "A numeric input is outside the range the template allows."),
    _c("input-formula", "input", "error", "Formula in an input cell",
       "input cell holds a formula ({actual}); type the value instead",
       "An input cell holds a formula. Its cached value is not trusted (Excel and LibreOffice recompute it on "
       "open, e.g. =400*1000 cached as 400), so the plan is refused; type the value."),
    # formula
    _c("formula-overwritten", "formula", "error", "Formula overwritten",
       "template formula replaced by a typed value {actual}",
       "A template formula cell holds a typed-in value instead of its formula. Restore the formula."),
    _c("formula-changed", "formula", "error", "Formula edited", "template formula edited: {actual}",
       "A template formula cell holds a different formula than the template's (compared by meaning, not bytes)."),
    _c("circular-reference", "formula", "error", "Not computed",
       "no value could be computed for this cell (circular reference?): {actual}",
       "The general engine computed no value for a formula cell, most often because of a circular reference."),
    _c("broken-structured-reference", "formula", "error", "Broken structured reference",
       "structured reference cannot be resolved: {note}",
       "A structured reference (Table[Column]) names a table or column that does not exist."),
    # output
    _c("excel-error-value", "output", "error", "Excel error value", "output holds the Excel error {actual}",
       "A computed cell holds an Excel error value (#N/A, #VALUE!, #DIV/0!, #NAME?, #NUM!, #REF!)."),
    _c("stale-value", "output", "error", "Stale value",
       "cached value {actual} differs from the recompute {expected}",
       "A cached value differs from the recompute (stale, or tampered): tolerance rel 1e-9 + abs 1e-9. Open the "
       "plan in Excel and save it, or run planner recalc."),
    _c("input-changed-since-recalc", "output", "error", "Input changed since the last recompute",
       "input changed after the workbook was last computed: {note}",
       "An input cell changed after the workbook was last computed: the cells computed from it hold stale cached "
       "values (they are counted here, not listed one by one). Recompute the plan (planner recalc, or open and save "
       "it in Excel)."),
    _c("missing-cached-value", "output", "warning", "Missing cached value", "formula cell has no cached value",
       "A formula cell has no cached value (the file was written without calculating it)."),
    _c("value-not-written", "output", "error", "Value not written",
       "computed, but the sheet has no <c> element for it: no value written there",
       "planner recalc computed a cell but its sheet has no <c> element for it (e.g. a cell of an array-formula "
       "range left out by the writer): the output keeps no value there."),
    # policy
    _c("utilization-over-threshold", "policy", "error", "Utilization over threshold", "{note}",
       "A route's binding utilization is above the plan's utilization_threshold."),
    _c("kv-does-not-fit", "policy", "error", "KV cache does not fit", "{note}",
       "A self-hosted route's KV cache at p95 context does not fit the fleet's KV memory."),
    _c("slo-not-met", "policy", "error", "SLO not met", "{note}",
       "A route's estimated decode time per output token misses its TPOT SLO."),
    _c("no-failover-headroom", "policy", "warning", "No failover headroom", "{note}",
       "A route's failover backend could not take its load (failover utilization > 1)."),
    # hostile
    _c("macro-present", "hostile", "info", "Generated xlwings module", "VBA project with the generated module "
       "{actual} only; never executed",
       "The workbook carries a VBA project holding only the xlwings wrapper module that Import Functions generates "
       "(xlwings_udfs, calls to planner.udfs). It is never executed."),
    _c("macro-not-allowed", "hostile", "error", "Macro not allowed", "VBA module {actual} is not allowed: {note}",
       "The workbook carries VBA that is not the generated xlwings wrapper: another module, an auto-run "
       "procedure (Auto_Open, Workbook_Open...), a VBA project that cannot be parsed, or a VBA part under another "
       "name. Nothing is executed; remove the code (save as .xlsx, or re-import the functions)."),
    _c("xlm-macro", "hostile", "error", "Excel 4 macro", "Excel 4 macro content: {note}",
       "The workbook carries an Excel 4 (XLM) macro sheet or an auto-run defined name (Auto_Open, Auto_Close, "
       "...). Excel 4 macros run on open; they are never executed here. Delete the macro sheet or name."),
    _c("external-link", "hostile", "error", "External link", "external reference {actual}; never followed",
       "The workbook or a formula refers to another workbook or a remote source; the link is reported, never "
       "followed. (planner recalc's former external-reference.)"),
    _c("dde-formula", "hostile", "error", "DDE formula", "DDE / command formula {actual}; never evaluated",
       "A formula calls a DDE / command channel (e.g. =cmd|'/c calc'!A1); it is never evaluated."),
    _c("hostile-function", "hostile", "error", "Hostile function", "formula calls {expected}; never evaluated",
       "A formula calls a function that reaches outside the workbook or runs code: WEBSERVICE, CALL, EXEC, "
       "REGISTER, REGISTER.ID, RTD, HYPERLINK, IMAGE. Screened in every cell of every sheet and in defined names."),
    _c("unparsable-formula", "hostile", "error", "Unparsable formula", "formula cannot be parsed: {note}",
       "A formula cannot be parsed; the cell is reported and the rest of the workbook still checked."),
    _c("unsupported-compression", "hostile", "error", "Unsupported compression", "{note}",
       "A zip entry uses a compression other than stored or deflate (bzip2, LZMA...). Excel writes only those two; "
       "the workbook is refused."),
    _c("zip-bomb", "hostile", "error", "Zip bomb", "{note}",
       "The zip expands beyond the size or ratio limits; it is rejected before parsing."),
    _c("oversized-part", "hostile", "error", "Oversized", "{note}",
       "A sheet or part is larger than the limits (bytes, rows, or a whole-column range)."),
    _c("xml-attack", "hostile", "error", "XML attack", "{note}",
       "An XML part uses DTDs or entities (billion laughs, XXE); it is rejected by defusedxml."),
    _c("symlink-outside-root", "hostile", "error", "Link out of the submitted folder",
       "symbolic link to {actual}, outside the submitted paths; never followed",
       "A symbolic link under a submitted folder points outside every submitted path (/etc/passwd, a plan "
       "elsewhere on disk). It is reported and never opened."),
    _c("timeout", "hostile", "error", "Time limit", "validation took longer than {note} and was stopped",
       "Validating the workbook took longer than the per-workbook time limit (--timeout; `planner recalc`: "
       "--time-limit); it was stopped, and recalc wrote nothing for it."),
    _c("memory-limit", "hostile", "error", "Memory limit", "{note}",
       "Validating (or recalculating) the workbook needed more memory than the per-workbook limit (--memory; "
       "`planner recalc`: 2 GiB); it was stopped."),
    _c("validator-crash", "hostile", "error", "Validator crash", "{note}",
       "The validator (or `planner recalc`) failed unexpectedly on this workbook (a bug: please report it); the "
       "batch goes on."),
)}


class _Missing(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return "?"


def show(value: Any) -> str:
    """A value as a message shows it: text quoted, numbers plain, ``empty`` for None."""
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return '"' + value + '"'
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return str(value)


def render(code: str, *, sheet: str | None = None, cell: str | None = None, expected: Any = None,
           actual: Any = None, note: str = "", context: Mapping[str, Any] | None = None) -> str:
    """The message of a finding of ``code``: its template filled in (values shown by :func:`show`).

    >>> render("stale-value", expected=400.0, actual=4)
    'cached value 4 differs from the recompute 400'
    """
    spec = CODES[code]
    values = _Missing({k: show(v) for k, v in (context or {}).items()})
    values.update(sheet=sheet or "", cell=cell or "", expected=show(expected), actual=show(actual), note=note)
    return spec.template.format_map(values).strip()


def spec(code: str) -> CodeSpec:
    """The catalogue entry of ``code`` (a ``KeyError`` names the unknown code)."""
    try:
        return CODES[code]
    except KeyError:
        raise KeyError(f"unknown finding code {code!r}") from None


def select_codes(names: tuple[str, ...] | list[str]) -> set[str]:
    """Codes named by ``names``: each a code or a family. Raises ``KeyError`` naming an unknown one.

    >>> sorted(select_codes(["template", "stale-value"]))
    ['not-our-template', 'stale-value', 'unsupported-template-version']
    """
    out: set[str] = set()
    for raw in names:
        for name in (x.strip().lower() for x in raw.split(",")):
            if not name:
                continue
            if name in CODES:
                out.add(name)
            elif name in FAMILIES:
                out |= {c for c, s in CODES.items() if s.family == name}
            else:
                raise KeyError(name)
    return out
