"""Real plan workbooks for the validate tests: a valid plan written by the template builder, and copies with one
thing broken (XML edits of the written file, or different inputs)."""

from __future__ import annotations

import io
import re
import zipfile
from functools import lru_cache
from pathlib import Path
from typing import Any

from planner import template as ts
from planner.validate.make_invalid import edit_part

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "samples" / "bulk-tpm.toml"


@lru_cache(maxsize=1)
def base_inputs() -> dict[tuple[str, str], Any]:
    from planner.scenario import load_scenario
    from planner.template.inputs import scenario_inputs

    return scenario_inputs(load_scenario(SCENARIO))


_PLANS: dict[str, bytes] = {}


def plan_bytes(changes: dict[tuple[str, str], Any] | None = None, drop: tuple[tuple[str, str], ...] = ()) -> bytes:
    """A plan written by the template builder from the bulk-tpm inputs with ``changes`` applied."""
    key = repr(sorted((changes or {}).items())) + repr(drop)
    if key not in _PLANS:
        import tempfile

        from planner.template.build import write_plan

        inputs = {**base_inputs(), **(changes or {})}
        for k in drop:
            inputs.pop(k, None)
        with tempfile.TemporaryDirectory() as tmp:
            _PLANS[key] = write_plan(inputs, Path(tmp) / "p.xlsm").read_bytes()
    return _PLANS[key]


def sheet_part(sheet: str) -> str:
    return f"xl/worksheets/sheet{ts.SHEET_ORDER.index(sheet) + 1}.xml"


def cell_xml(data: bytes, sheet: str, addr: str) -> str:
    xml = zipfile.ZipFile(io.BytesIO(data)).read(sheet_part(sheet)).decode()
    m = re.search(rf'<c r="{addr}"[^>]*>.*?</c>', xml, re.S)
    assert m, addr
    return m.group(0)


def replace_cell(data: bytes, sheet: str, addr: str, new_xml: str) -> bytes:
    return edit_part(data, sheet_part(sheet),
                     lambda x: re.sub(rf'<c r="{addr}"[^>]*>.*?</c>', new_xml, x, count=1, flags=re.S))


def add_part(data: bytes, name: str, body: bytes) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info, src.read(info.filename))
        dst.writestr(name, body)
    return buf.getvalue()


def table_part(data: bytes, table_name: str) -> str:
    z = zipfile.ZipFile(io.BytesIO(data))
    for n in z.namelist():
        if n.startswith("xl/tables/") and f'displayName="{table_name}"' in z.read(n).decode():
            return n
    raise AssertionError(table_name)


def write(tmp_path: Path, name: str, data: bytes) -> str:
    p = tmp_path / name
    p.write_bytes(data)
    return str(p)
