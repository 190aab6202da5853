"""Craft minimal .xlsx packages byte by byte for the recalc and hostile-input tests."""

from __future__ import annotations

import zipfile
from pathlib import Path

CT = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    "</Types>"
)
ROOT_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
    'Target="xl/workbook.xml"/></Relationships>'
)
WB = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
    '<sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets>{names}</workbook>'
)
WB_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" '
    'Target="worksheets/sheet1.xml"/>{extra}</Relationships>'
)


def cell_xml(ref: str, value: object = None, formula: str | None = None) -> str:
    f = "" if formula is None else "<f>" + formula.replace("&", "&amp;").replace("<", "&lt;") + "</f>"
    if isinstance(value, str):
        return f'<c r="{ref}" t="str">{f}<v>{value}</v></c>'
    v = "" if value is None else f"<v>{value}</v>"
    return f'<c r="{ref}">{f}{v}</c>'


def sheet_xml(cells: list[str], dimension: str = "A1", prolog: str = "") -> str:
    return (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>{prolog}'
        '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
        f'<dimension ref="{dimension}"/><sheetData><row r="1">{"".join(cells)}</row></sheetData></worksheet>'
    )


def write_xlsx(path: Path, cells: list[str], *, dimension: str = "A1", names: str = "", prolog: str = "",
               extra_parts: dict[str, bytes | str] | None = None, wb_rels_extra: str = "") -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", CT)
        z.writestr("_rels/.rels", ROOT_RELS)
        z.writestr("xl/workbook.xml", WB.format(names=names))
        z.writestr("xl/_rels/workbook.xml.rels", WB_RELS.format(extra=wb_rels_extra))
        z.writestr("xl/worksheets/sheet1.xml", sheet_xml(cells, dimension, prolog))
        for name, data in (extra_parts or {}).items():
            z.writestr(name, data)
    return path
