"""Invalid sample plans, one per family of finding, made from a valid plan (``samples/invalid/``).

Each sample starts from the inputs of a valid scenario and breaks one thing, either through the inputs (written
with the template builder, so its cached values are consistent) or by editing one XML part of the written file
(what a submitter's tampering looks like). The source file is never modified.

    python -m planner.validate.make_invalid samples/bulk-tpm.toml samples/invalid
"""

from __future__ import annotations

import io
import re
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from planner import template as ts

EXPECTED_CODES: dict[str, tuple[str, ...]] = {
    "file-not-a-workbook.xlsx": ("not-a-workbook",),
    "template-not-our-template.xlsm": ("not-our-template",),
    "structure-missing-sheet.xlsm": ("missing-sheet",),
    "input-out-of-range.xlsm": ("input-out-of-range",),
    "formula-overwritten.xlsm": ("formula-overwritten",),
    "output-stale-value.xlsm": ("stale-value",),
    "policy-over-threshold.xlsm": ("utilization-over-threshold",),  # plus the warning no-failover-headroom
    "hostile-dde-formula.xlsm": ("dde-formula", "formula-changed"),
}
"""Each invalid sample and the finding codes it must produce (``tests/test_validate_samples.py``)."""


def _sheet_part(sheet: str) -> str:
    return f"xl/worksheets/sheet{ts.SHEET_ORDER.index(sheet) + 1}.xml"


def edit_part(data: bytes, part: str, edit: Callable[[str], str]) -> bytes:
    """A copy of the zip ``data`` with ``part`` rewritten by ``edit`` (the text must change)."""
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info.filename)
            if info.filename == part:
                new = edit(body.decode("utf-8"))
                if new == body.decode("utf-8"):
                    raise ValueError(f"{part}: edit changed nothing")
                body = new.encode("utf-8")
            dst.writestr(info, body)
    return buf.getvalue()


def _cell_re(addr: str) -> re.Pattern[str]:
    return re.compile(rf'<c r="{addr}"([^>]*)>(.*?)</c>', re.S)


def _set_cached(addr: str, text: str) -> Callable[[str], str]:
    return lambda xml: _cell_re(addr).sub(lambda m: re.sub(r"<v>.*?</v>", f"<v>{text}</v>", m.group(0)), xml, 1)


def _drop_formula(addr: str) -> Callable[[str], str]:
    return lambda xml: _cell_re(addr).sub(lambda m: re.sub(r"<f>.*?</f>", "", m.group(0)), xml, 1)


def _set_formula(addr: str, formula: str) -> Callable[[str], str]:
    return lambda xml: _cell_re(addr).sub(lambda m: re.sub(r"<f>.*?</f>", f"<f>{formula}</f>", m.group(0)), xml, 1)


def make_invalid(scenario: str | Path, out_dir: str | Path) -> list[Path]:
    """Write the invalid samples of :data:`EXPECTED_CODES` into ``out_dir``; return their paths."""
    from planner.scenario import load_scenario
    from planner.template.build import write_plan
    from planner.template.inputs import scenario_inputs

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    inputs: dict[tuple[str, str], Any] = scenario_inputs(load_scenario(scenario))
    with tempfile.TemporaryDirectory() as tmp:
        valid = write_plan(inputs, Path(tmp) / "valid.xlsm").read_bytes()
        over = dict(inputs)
        over[(ts.ROUTES.sheet, ts.ROUTES.cell("cache_hit_rate", 0))] = 1.5
        out_of_range = write_plan(over, Path(tmp) / "range.xlsm").read_bytes()
        busy = dict(inputs)
        qps = (ts.ROUTES.sheet, ts.ROUTES.cell("peak_qps", 0))
        busy[qps] = float(busy[qps]) * 1.4
        # and a failover backend on a lower tier (half its ITPM), too small to absorb the busy route (its limits are
        # per organization, so fewer keys would change nothing)
        itpm = (ts.PROVIDERS.sheet, ts.PROVIDERS.cell("itpm", 1))
        busy[itpm] = float(busy[itpm]) / 2
        policy = write_plan(busy, Path(tmp) / "busy.xlsm").read_bytes()
    results = _sheet_part(ts.RESULTS.sheet)
    cost = ts.RESULTS.cell("cost_monthly_usd", 0)
    rpm = ts.RESULTS.cell("rpm_demand", 0)
    files: dict[str, bytes] = {
        "file-not-a-workbook.xlsx": b"route,peak_qps\nchat,12\n",
        "template-not-our-template.xlsm": edit_part(
            valid, "xl/workbook.xml", lambda x: x.replace(f'"{ts.TEMPLATE_ID}"', '"someone-else/budget"')),
        "structure-missing-sheet.xlsm": edit_part(
            valid, "xl/workbook.xml", lambda x: x.replace('<sheet name="Fleet"', '<sheet name="Fleet (old)"')),
        "input-out-of-range.xlsm": out_of_range,
        "formula-overwritten.xlsm": edit_part(valid, results, _drop_formula(rpm)),
        "output-stale-value.xlsm": edit_part(valid, results, _set_cached(cost, "1234.5")),
        "policy-over-threshold.xlsm": policy,
        "hostile-dde-formula.xlsm": edit_part(valid, results, _set_formula(rpm, "cmd|'/c calc'!A1")),
    }
    paths = []
    for name, body in files.items():
        p = out / name
        p.write_bytes(body)
        paths.append(p)
    return paths


if __name__ == "__main__":
    for p in make_invalid(sys.argv[1], sys.argv[2]):
        print(p)
