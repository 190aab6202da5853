"""Render docs/img/excel-routes.png: a routes table as the add-in fills it.

Every result cell is computed by calling ``planner.udfs`` with the values Excel would pass (2-D lists, text cells,
empty cells), next to the formula text the cell holds. The sheet is written with openpyxl and rendered by LibreOffice
headless (xlsx -> pdf) and pdftoppm (pdf -> png). It is NOT a screenshot of Excel: no Excel runs here.

    .venv/bin/python docs/img/render_excel_example.py
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from openpyxl import Workbook
from openpyxl.styles import Alignment, Font, PatternFill

import planner.udfs as udfs

OUT = Path(__file__).with_name("excel-routes.png")
CROP = ["-x", "0", "-y", "0", "-W", "1210", "-H", "200"]  # the table only, not the empty rest of the page

ROUTES = [  # route, peak QPS cell, avg input cell, avg output cell (as typed: numbers, text, empty, junk)
    ("chat", 25, 2000, 500),
    ("search", "12.5", 1200, 300),  # a number typed as text
    ("batch", 4, 8000, None),  # an empty required cell
    ("agent", "lots", 3000, 800),  # not a number
]


def build(path: Path) -> None:
    wb = Workbook()
    ws = wb.active
    ws.title = "Routes"
    header = ["route", "peak_qps", "avg_input_tokens", "avg_output_tokens", "formula in F", "F: what the cell shows"]
    ws.append(header)
    for row, (name, qps, tin, tout) in enumerate(ROUTES, start=2):
        result = udfs.CAPACITY_TPM([[qps]], [[tin]], [[tout]])
        ws.append([name, qps, tin, tout, f"=CAPACITY_TPM(B{row},C{row},D{row})", result])
        ws.cell(row, 5).data_type = "s"  # show the formula text, do not evaluate it
    ws.append([])
    spill_row = len(ROUTES) + 3
    ws.cell(spill_row, 1, "whole column")
    ws.cell(spill_row, 5, "=CAPACITY_RPM(B2:B3)").data_type = "s"
    for offset, [value] in enumerate(udfs.CAPACITY_RPM([[r[1]] for r in ROUTES[:2]])):
        ws.cell(spill_row + offset, 6, value)
    bold = Font(bold=True)
    fill = PatternFill("solid", fgColor="DDEBF7")
    for cell in ws[1]:
        cell.font, cell.fill = bold, fill
    for row in ws.iter_rows(min_row=2):
        row[4].font = Font(name="DejaVu Sans Mono", size=9)
        row[5].alignment = Alignment(horizontal="right")
        if isinstance(row[5].value, float):
            row[5].number_format = "#,##0"
    for column, width in zip("ABCDEF", (12, 10, 16, 17, 30, 60)):
        ws.column_dimensions[column].width = width
    ws.page_setup.orientation = "landscape"
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    ws.page_setup.fitToWidth, ws.page_setup.fitToHeight = 1, 0
    ws.print_options.gridLines = True
    ws.page_margins.left = ws.page_margins.right = ws.page_margins.top = 0.2
    wb.save(path)


def main() -> int:
    soffice, pdftoppm = shutil.which("soffice"), shutil.which("pdftoppm")
    if not soffice or not pdftoppm:
        print("needs soffice (LibreOffice) and pdftoppm (poppler-utils)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        xlsx = Path(tmp) / "routes.xlsx"
        build(xlsx)
        subprocess.run(
            [soffice, "--headless", "--convert-to", "pdf", "--outdir", tmp, str(xlsx)],
            check=True,
            capture_output=True,
            timeout=120,
        )
        pdf, stem = str(Path(tmp) / "routes.pdf"), str(OUT.with_suffix(""))
        subprocess.run(
            [pdftoppm, "-png", "-r", "110", "-singlefile", *CROP, pdf, stem],
            check=True,
            timeout=60,
        )
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
