"""The real ``planner validate`` command: formats, exit codes, severity overrides, batches."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from validate_support import ROOT, plan_bytes, write

from planner import template as ts
from planner.validate.batch import validate_paths
from planner.validate.make_invalid import EXPECTED_CODES, make_invalid
from planner.validate.report import finding_line

PLANNER = str(Path(sys.executable).with_name("planner"))


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PLANNER, "validate", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def plans(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("plans")
    write(d, "good.xlsm", plan_bytes())
    make_invalid(ROOT / "samples" / "bulk-tpm.toml", d / "invalid")
    return d


def test_json_output_equals_the_library_report(plans: Path) -> None:
    proc = run(str(plans), "--format", "json", "--jobs", "2")
    assert proc.returncode == 1, proc.stderr
    library = validate_paths([str(plans)], isolate=False).as_dict()
    assert json.loads(proc.stdout) == library
    assert set(library) == {"valid", "reports", "planner_version", "stats"}
    for r in library["reports"]:
        assert set(r) == {"path", "valid", "template_version", "findings", "truncated", "engine"}
        for f in r["findings"]:
            assert {"code", "severity", "sheet", "cell", "message", "expected", "actual"} <= set(f)
            assert f["help"] == "docs/findings.md#" + f["code"]


def test_invalid_samples_produce_their_codes(plans: Path) -> None:
    result = validate_paths([str(plans / "invalid")], isolate=False)
    got = {Path(r.path).name: {f.code for f in r.findings if f.severity == "error"} for r in result.reports}
    for name, wanted in EXPECTED_CODES.items():
        assert set(wanted) <= got[name], name
        assert not next(r for r in result.reports if r.path.endswith(name)).valid()


def test_committed_invalid_samples_are_current(tmp_path: Path) -> None:
    """samples/invalid/ is what make_invalid writes today."""
    make_invalid(ROOT / "samples" / "bulk-tpm.toml", tmp_path)
    for name in EXPECTED_CODES:
        committed = validate_paths([str(ROOT / "samples" / "invalid" / name)], isolate=False).reports[0]
        fresh = validate_paths([str(tmp_path / name)], isolate=False).reports[0]
        assert [(f.sheet, f.cell, f.code) for f in committed.findings] == \
            [(f.sheet, f.cell, f.code) for f in fresh.findings], name


def test_text_lines_are_greppable(plans: Path) -> None:
    proc = run(str(plans / "invalid" / "output-stale-value.xlsm"))
    assert proc.returncode == 1
    cell = ts.RESULTS.cell("cost_monthly_usd", 0)
    line = next(x for x in proc.stdout.splitlines() if " stale-value: " in x)
    assert line.startswith(f"{plans / 'invalid' / 'output-stale-value.xlsm'}:Results!{cell}: error stale-value: ")
    assert "actual 1234.5)" in line


def test_valid_plan_exits_0(plans: Path) -> None:
    proc = run(str(plans / "good.xlsm"))
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.splitlines()[0] == f"{plans / 'good.xlsm'}: ok (template {ts.TEMPLATE_VERSION})"


def test_strict_and_severity_overrides(plans: Path, tmp_path: Path) -> None:
    policy = str(plans / "invalid" / "policy-over-threshold.xlsm")
    assert run(policy).returncode == 1
    relaxed = ["--severity", "utilization-over-threshold=warning"]
    assert run(policy, *relaxed).returncode == 0  # only warnings left
    assert run(policy, *relaxed, "--strict").returncode == 1
    config = tmp_path / "v.toml"
    config.write_text('[severity]\n"utilization-over-threshold" = "off"\n"no-failover-headroom" = "info"\n')
    proc = run(policy, "--config", str(config), "--strict", "--format", "json")
    assert proc.returncode == 0
    assert [f["code"] for f in json.loads(proc.stdout)["reports"][0]["findings"]] == ["no-failover-headroom"]


def test_tool_could_not_run_exits_2(plans: Path, tmp_path: Path) -> None:
    assert run(str(plans), "--severity", "nonsense=error").returncode == 2
    assert run(str(plans), "--severity", "stale-value").returncode == 2
    (tmp_path / "empty").mkdir()
    proc = run(str(tmp_path / "empty"))
    assert proc.returncode == 2 and "no .xlsx/.xlsm" in proc.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text("[severity\n")
    assert run(str(plans), "--config", str(bad)).returncode == 2


def test_junit_parses(plans: Path, tmp_path: Path) -> None:
    out = tmp_path / "v.xml"
    proc = run(str(plans), "--format", "junit", "-o", str(out))
    assert proc.returncode == 1
    root = ET.parse(out).getroot()
    cases = root.findall(".//testcase")
    assert len(cases) == 1 + len(EXPECTED_CODES)
    failed = {Path(c.get("name", "")).name for c in cases if c.find("failure") is not None}
    assert failed == set(EXPECTED_CODES)
    assert root.get("failures") == str(len(EXPECTED_CODES))


def test_csv_parses_one_row_per_finding(plans: Path) -> None:
    proc = run(str(plans), "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    library = validate_paths([str(plans)], isolate=False)
    summary = rows.pop()
    assert (summary["path"], summary["code"]) == ("(summary)", "summary")
    assert summary["message"] == library.summary()
    assert len(rows) == sum(max(1, len(r.findings)) for r in library.reports)
    assert {(r["path"], r["sheet"], r["cell"], r["code"]) for r in rows if r["code"]} == {
        (r.path, f.sheet or "", f.cell or "", f.code) for r in library.reports for f in r.findings}


def test_batch_never_stops_for_a_bad_file(plans: Path, tmp_path: Path) -> None:
    junk = write(tmp_path, "junk.xlsx", b"PK\x03\x04 truncated")
    paths = [junk, str(tmp_path / "missing.xlsm"), str(plans / "good.xlsm")]
    result = validate_paths(paths, jobs=2)
    assert [r.path for r in result.reports] == paths
    assert [r.valid() for r in result.reports] == [False, False, True]


def test_no_progress_bar_when_piped(plans: Path) -> None:
    proc = run(str(plans))
    assert "validating" not in proc.stderr and "\r" not in proc.stdout + proc.stderr


def test_finding_line_format() -> None:
    from planner.validate.report import finding

    f = finding("stale-value", "cached value differs", sheet="Results", cell="S4", expected=1.5, actual=2)
    assert finding_line("p.xlsm", f) == "p.xlsm:Results!S4: error stale-value: cached value differs " \
        "(expected 1.5, actual 2)"
    g = finding("missing-sheet", "x", sheet="My Sheet")
    assert finding_line("p.xlsm", g).startswith("p.xlsm:'My Sheet': error missing-sheet")
    from planner.validate.report import Finding

    h = Finding.of("input-out-of-range", sheet="Routes", cell="H4", note="Prefix-cache hit", expected="0 <= x <= 1",
                   actual=1.5)
    assert finding_line("p.xlsm", h) == ('p.xlsm:Routes!H4: error input-out-of-range: Prefix-cache hit is out of '
                                         'range: expected "0 <= x <= 1", got 1.5')  # values shown once


EXCEL_MADE = Path("/work/shared/fixtures/excel-made")


@pytest.mark.skipif(not EXCEL_MADE.is_dir(), reason="the Excel-made fixtures are not on this machine")
def test_excel_made_workbooks_get_reports_not_crashes() -> None:
    """Workbooks saved by Excel (tables, structured references, charts, macros) are read without a crash, and the
    structured-reference syntax is not mistaken for a broken formula."""
    result = validate_paths([str(EXCEL_MADE)], jobs=2)
    assert len(result.reports) >= 60
    found = {f.code for r in result.reports for f in r.findings}
    assert "not-our-template" in found
    assert not found & {"validator-crash", "unparsable-formula", "timeout", "memory-limit", "unreadable"}


def test_inputs_are_never_modified(plans: Path) -> None:
    import hashlib

    files = sorted(plans.rglob("*.xls*"))
    before = {p: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in files}
    assert run(str(plans), "--jobs", "2").returncode == 1
    assert {p: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in files} == before


def test_progress_bar_on_a_terminal(plans: Path) -> None:
    """On a terminal (a pseudo-terminal here) batches show a progress bar on standard error."""
    import os
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # the child: standard output and error are the terminal
        os.execv(PLANNER, [PLANNER, "validate", str(plans)])
    chunks = []
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    _, status = os.waitpid(pid, 0)
    text = b"".join(chunks).decode(errors="replace")
    assert os.waitstatus_to_exitcode(status) == 1
    assert "validating" in text and "workbook(s):" in text


# --- catalogue options, formats and the published schema ------------------------------------------------------------


def test_json_report_matches_the_published_schema(plans: Path, tmp_path: Path) -> None:
    import os

    import jsonschema

    from planner.codes import CODES
    from planner.validate.report import report_schema

    text = (ROOT / "docs" / "report.schema.json").read_text()
    assert text == json.dumps(report_schema(), indent=2) + "\n"  # regenerate with tools/regenerate
    schema = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$defs"]["finding"]["properties"]["code"]["enum"] == list(CODES)
    os.mkfifo(tmp_path / "fifo.xlsx")
    (tmp_path / "lock.xlsm").symlink_to("/etc/passwd")
    proc = run(str(plans), str(tmp_path), "--format", "json", "--max-findings", "1")
    data = json.loads(proc.stdout)
    jsonschema.validate(data, schema)
    assert data["stats"]["workbooks"] == 1 + len(EXPECTED_CODES) + 2
    assert {f["code"] for r in data["reports"] for f in r["findings"]} >= {"special-file", "symlink-outside-root"}
    bad = dict(data, valid="yes")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_select_and_ignore_by_code_or_family(plans: Path) -> None:
    every = validate_paths([str(plans)], isolate=False)
    all_codes = {f.code for r in every.reports for f in r.findings}
    assert len(all_codes) > 2
    only_template = json.loads(run(str(plans), "--format", "json", "--select", "template").stdout)
    got = {f["code"] for r in only_template["reports"] for f in r["findings"]}
    assert got and got <= {"not-our-template", "unsupported-template-version"}
    rest = json.loads(run(str(plans), "--format", "json", "--ignore", "template,stale-value").stdout)
    got = {f["code"] for r in rest["reports"] for f in r["findings"]}
    assert got == all_codes - {"not-our-template", "unsupported-template-version", "stale-value"}
    bad = run(str(plans), "--select", "no-such-family")
    assert bad.returncode == 2 and "no-such-family" in bad.stderr


def test_max_findings_truncates_and_keeps_validity(plans: Path) -> None:
    full = json.loads(run(str(plans), "--format", "json").stdout)
    cut = json.loads(run(str(plans), "--format", "json", "--max-findings", "1").stdout)
    for a, b in zip(full["reports"], cut["reports"]):
        assert a["valid"] == b["valid"] and b["truncated"] == (len(a["findings"]) > 1)
        assert len(b["findings"]) == min(1, len(a["findings"]))
    assert cut["stats"]["truncated"] == sum(len(r["findings"]) > 1 for r in full["reports"]) > 0
    text = run(str(plans), "--max-findings", "1").stdout
    assert "truncated by --max-findings" in text.splitlines()[-1]


def test_summary_counts_in_every_format(plans: Path) -> None:
    library = validate_paths([str(plans)], isolate=False)
    stats = library.stats()
    summary = library.summary()
    assert summary.startswith(f"{stats['workbooks']} workbook(s): ")
    assert run(str(plans)).stdout.splitlines()[-1] == summary
    assert json.loads(run(str(plans), "--format", "json").stdout)["stats"] == stats
    assert list(csv.DictReader(io.StringIO(run(str(plans), "--format", "csv").stdout)))[-1]["message"] == summary
    junit = ET.fromstring(run(str(plans), "--format", "junit").stdout)
    props = {p.get("name"): int(p.get("value")) for p in junit.iter("property")}
    assert props == stats
    assert run(str(plans), "--format", "github").stdout.splitlines()[-1] == \
        f"::notice title=planner validate::{summary}"


def test_github_annotations(plans: Path) -> None:
    proc = run(str(plans), "--format", "github")
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    library = validate_paths([str(plans)], isolate=False)
    n = sum(len(r.findings) for r in library.reports)
    assert len(lines) == n + 1
    pattern = re.compile(r"::(error|warning|notice) file=[^,:]+,title=[a-z-]+::.+")
    assert all(pattern.fullmatch(line) for line in lines[:-1]), lines[:3]
    first = next(f for r in library.reports for f in r.findings)
    assert any(f"title={first.code}::" in line for line in lines)


def test_explain() -> None:
    from planner.codes import CODES

    proc = subprocess.run([PLANNER, "explain", "stale-value"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    assert proc.stdout.splitlines()[0] == "stale-value: Stale value"
    assert CODES["stale-value"].template in proc.stdout and "docs/findings.md#stale-value" in proc.stdout
    family = subprocess.run([PLANNER, "explain", "hostile"], capture_output=True, text=True, timeout=60)
    assert {c for c, s in CODES.items() if s.family == "hostile"} <= set(family.stdout.split())
    listing = subprocess.run([PLANNER, "explain", "--list"], capture_output=True, text=True, timeout=60)
    assert set(CODES) <= set(listing.stdout.split())
    bad = subprocess.run([PLANNER, "explain", "stale-valu"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "did you mean stale-value" in bad.stderr


def test_usage_errors_exit_2_everywhere(tmp_path: Path) -> None:
    missing = str(tmp_path / "absent.xlsx")
    for args in (["validate", missing], ["recalc", missing, "-o", str(tmp_path / "o.xlsx")],
                 ["size", str(tmp_path / "absent.toml")], ["calibrate", str(tmp_path / "absent.log")],
                 ["validate", "--max-findings", "0", missing], ["explain", "nope"]):
        proc = subprocess.run([PLANNER, *args], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr
