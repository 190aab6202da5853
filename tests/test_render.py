"""The workbook as LibreOffice prints it (tools/render-sheets): structural facts of the PDF, not pixels. Each sheet's
pages are found by their footer; the expected numbers are the workbook's cached values, formatted here."""

from __future__ import annotations

import os
import shutil
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import openpyxl
import pytest

from planner import template as ts
from planner.template.render import Rendered, page_png, render

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "samples" / "seed.xlsm"
TEMPLATE = ROOT / "templates" / "capacity-plan.xlsm"

_MISSING = [t for t in ("soffice", "pdftotext", "pdfinfo", "pdftoppm") if shutil.which(t) is None]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(_MISSING) and not os.environ.get("CI"), reason=f"not installed: {_MISSING}"),
]


def _percent(v: float) -> str:
    """Excel's "0%": half away from zero."""
    return f"{Decimal(repr(v * 100)).quantize(Decimal('1'), rounding=ROUND_HALF_UP)}%"


def _dollars(v: float) -> str:
    return f"${int(Decimal(repr(v)).quantize(Decimal('1'), rounding=ROUND_HALF_UP)):,}"


@pytest.fixture(scope="module")
def seed_pdf(tmp_path_factory: pytest.TempPathFactory) -> Rendered:
    return render(SEED, tmp_path_factory.mktemp("seed"))


def test_every_sheet_prints_and_summary_is_one_landscape_page(seed_pdf: Rendered) -> None:
    assert set(seed_pdf.pages) == set(ts.SHEET_ORDER)  # every page carries its sheet's footer
    (page,) = seed_pdf.pages["Summary"]
    width, height = seed_pdf.sizes[page]
    assert width > height
    assert sum(len(p) for p in seed_pdf.pages.values()) <= 2 * len(ts.SHEET_ORDER)  # was 73 pages before


def test_summary_shows_percentages_dollars_and_only_the_filled_routes(seed_pdf: Rendered) -> None:
    text = seed_pdf.sheet_text("Summary")
    values = openpyxl.load_workbook(SEED, data_only=True)
    res, summ = values["Results"], values["Summary"]
    routes = [res[ts.RESULTS.cell("route", i)].value for i in range(ts.RESULTS.rows)]
    filled = [i for i, r in enumerate(routes) if r]
    assert len(filled) == 3
    for i in filled:
        line = next(ln for ln in text.splitlines() if ln.strip().startswith(routes[i]))
        for key in ts.UTILIZATION_KEYS:
            v = summ[ts.SUMMARY.cell(key, i)].value
            if isinstance(v, float):
                assert _percent(v) in line, (routes[i], key)
        assert _dollars(summ[ts.SUMMARY.cell("cost_monthly_usd", i)].value) in line
        assert summ[ts.SUMMARY.cell("status", i)].value in line
    total = summ[f"{ts.TOTALS_COL_VALUE}{ts.TOTALS_FIRST_ROW}"].value
    assert _dollars(total) in text
    assert "Highest utilization per route (100% = at the limit)" in text  # the chart's title
    assert "Limit (100%)" in text  # its legend
    assert " 0.73 " not in text and "###" not in text


def test_no_column_too_narrow_and_wide_sheets_repeat_the_route_column(seed_pdf: Rendered) -> None:
    for page, text in seed_pdf.text.items():
        assert "###" not in text, page  # a number wider than its column
        for bad in ("Err:", "#VALUE!", "#DIV/0!"):
            assert bad not in text or page in seed_pdf.pages["ReadMe"], (page, bad)
    routes = ("completion", "agent", "chat")
    assert len(seed_pdf.pages["Results"]) > 1
    for page in seed_pdf.pages["Results"] + seed_pdf.pages["Failover"]:
        for route in routes:
            assert route in seed_pdf.text[page], (page, route)


def test_template_summary_is_one_page(tmp_path: Path) -> None:
    rendered = render(TEMPLATE, tmp_path)
    assert len(rendered.pages["Summary"]) == 1
    assert all("###" not in t for t in rendered.text.values())


def test_png_of_a_page_is_cropped_to_its_content(seed_pdf: Rendered, tmp_path: Path) -> None:
    png = page_png(seed_pdf.pdf, seed_pdf.pages["Summary"][0], tmp_path / "summary.png", dpi=50)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    page_w, page_h = seed_pdf.sizes[seed_pdf.pages["Summary"][0]]
    assert width == int(page_w * 50 / 72)
    assert height < page_h * 50 / 72 * 0.8  # the empty bottom of the page is cut
