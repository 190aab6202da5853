"""Render a plan workbook as it prints: LibreOffice headless (xlsx -> PDF with each sheet's page setup), then
poppler (``pdftotext`` for each page's text, ``pdftoppm`` for PNG pictures). Used by ``tools/render-sheets``, the
render tests and the pictures in docs/img/.

Each printed page carries the footer ``<sheet> - page <p> of <n>`` (set by :mod:`planner.template.build`), so the
pages of a sheet are found by their footer, not guessed from their order.

    python -m planner.template.render samples/seed.xlsm -o build/render --png --dpi 80

Needs ``soffice`` (Debian: libreoffice-calc) and poppler-utils on PATH; :class:`planner.errors.ArgumentError` says
which is missing.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from planner.errors import ArgumentError

FOOTER = re.compile(r"^(?P<sheet>.+?) - page (?P<page>\d+) of (?P<total>\d+)\s*$", re.MULTILINE)


@dataclass(frozen=True, kw_only=True)
class Rendered:
    """A workbook's PDF and, per sheet, its 1-based page numbers and each page's text (``pdftotext -layout``)."""

    pdf: Path
    pages: dict[str, list[int]]
    text: dict[int, str]
    sizes: dict[int, tuple[float, float]]  # page -> (width, height) in points

    def sheet_text(self, sheet: str) -> str:
        return "\f".join(self.text[p] for p in self.pages.get(sheet, []))


def _tool(*names: str) -> str:
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    raise ArgumentError("render", names[0], "installed (Debian: libreoffice-calc, poppler-utils)")


def to_pdf(workbook: str | Path, outdir: str | Path, *, timeout_s: float = 300) -> Path:
    """Convert ``workbook`` to ``outdir/<stem>.pdf`` with LibreOffice headless, each sheet by its own page setup
    (print area, fit to pages, title rows). A fresh user profile each time: nothing of the machine's settings."""
    soffice = _tool("soffice", "libreoffice")
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [soffice, "--headless", "--norestore", f"-env:UserInstallation=file://{profile}", "--convert-to", "pdf",
             "--outdir", str(out), str(workbook)],
            capture_output=True, text=True, timeout=timeout_s, check=False,
        )
    pdf = out / (Path(workbook).stem + ".pdf")
    if proc.returncode != 0 or not pdf.exists():
        raise ArgumentError("render", str(workbook), f"converted to PDF by LibreOffice ({proc.stderr.strip()[:200]})")
    return pdf


def _page_count(pdf: Path) -> int:
    info = subprocess.run([_tool("pdfinfo"), str(pdf)], capture_output=True, text=True, check=True).stdout
    return int(re.search(r"^Pages:\s+(\d+)", info, re.MULTILINE).group(1))  # type: ignore[union-attr]


def _page_sizes(pdf: Path, pages: int) -> dict[int, tuple[float, float]]:
    info = subprocess.run([_tool("pdfinfo"), "-f", "1", "-l", str(pages), str(pdf)], capture_output=True, text=True,
                          check=True).stdout
    return {int(m.group(1)): (float(m.group(2)), float(m.group(3)))
            for m in re.finditer(r"^Page\s+(\d+) size:\s+([\d.]+) x ([\d.]+)", info, re.MULTILINE)}


def read_pdf(pdf: Path) -> Rendered:
    """Each page's text and size, and the sheet each page belongs to (by its footer)."""
    pdftotext = _tool("pdftotext")
    n = _page_count(pdf)
    text: dict[int, str] = {}
    pages: dict[str, list[int]] = {}
    for p in range(1, n + 1):
        text[p] = subprocess.run([pdftotext, "-layout", "-f", str(p), "-l", str(p), str(pdf), "-"],
                                 capture_output=True, text=True, check=True).stdout
        footers = list(FOOTER.finditer(text[p]))  # the last footer-shaped line of the page is its footer
        pages.setdefault(footers[-1].group("sheet").strip() if footers else "", []).append(p)
    return Rendered(pdf=pdf, pages=pages, text=text, sizes=_page_sizes(pdf, n))


def render(workbook: str | Path, outdir: str | Path) -> Rendered:
    """:func:`to_pdf` then :func:`read_pdf`."""
    return read_pdf(to_pdf(workbook, outdir))


def page_png(pdf: Path, page: int, png: str | Path, *, dpi: int = 80, crop_to_content: bool = True) -> Path:
    """One page as a PNG, cropped below its lowest text (the page's empty bottom) when ``crop_to_content``."""
    pdftoppm = _tool("pdftoppm")
    out = Path(png)
    out.parent.mkdir(parents=True, exist_ok=True)
    crop: list[str] = []
    if crop_to_content:
        bbox = subprocess.run([_tool("pdftotext"), "-bbox", "-f", str(page), "-l", str(page), str(pdf), "-"],
                              capture_output=True, text=True, check=True).stdout
        words = [(float(m.group(1)), m.group(2)) for m in
                 re.finditer(r'yMax="([\d.]+)">([^<]*)</word>', bbox)]
        footer_y = max((y for y, w in words if w == "page"), default=None)
        body = [y for y, _w in words if footer_y is None or y < footer_y - 20]
        if body:
            scale = dpi / 72
            width = int(_page_sizes(pdf, page)[page][0] * scale)
            crop = ["-x", "0", "-y", "0", "-W", str(width), "-H", str(int((max(body) + 18) * scale))]
    with tempfile.TemporaryDirectory() as tmp:
        stem = Path(tmp) / "page"
        subprocess.run([pdftoppm, "-f", str(page), "-l", str(page), "-r", str(dpi), "-png", "-singlefile", *crop,
                        str(pdf), str(stem)], check=True, capture_output=True, timeout=120)
        shutil.copyfile(stem.with_suffix(".png"), out)
    return out


def sheet_pngs(rendered: Rendered, outdir: str | Path, *, dpi: int = 80) -> list[Path]:
    """Every page as ``<sheet>-<k>.png`` (k = the sheet's page, from 1)."""
    out: list[Path] = []
    for sheet, pages in rendered.pages.items():
        for k, p in enumerate(pages, start=1):
            out.append(page_png(rendered.pdf, p, Path(outdir) / f"{sheet or 'page'}-{k}.png", dpi=dpi))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="render-sheets", description=__doc__.split("\n\n")[0])
    ap.add_argument("workbooks", nargs="+", type=Path)
    ap.add_argument("-o", "--outdir", type=Path, default=Path("build/render"))
    ap.add_argument("--png", action="store_true", help="also one PNG per page, <workbook>/<sheet>-<k>.png")
    ap.add_argument("--dpi", type=int, default=80)
    args = ap.parse_args(argv)
    for wb in args.workbooks:
        outdir = args.outdir / wb.stem
        rendered = render(wb, outdir)
        print(f"{rendered.pdf}: {sum(len(p) for p in rendered.pages.values())} page(s)")
        for sheet, pages in rendered.pages.items():
            w, h = rendered.sizes[pages[0]]
            print(f"  {sheet or '(no footer)'}: {len(pages)} page(s), {'landscape' if w > h else 'portrait'}")
        if args.png:
            for png in sheet_pngs(rendered, outdir, dpi=args.dpi):
                print(f"  {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
