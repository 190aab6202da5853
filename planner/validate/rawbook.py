"""A small, guarded raw reader of ``.xlsx``/``.xlsm`` files for the validator's fast path.

It reads, straight from the zip with defusedxml: sheet names, defined names, every cell's formula text and cached
value, the Excel Tables (name, range, column names), external-link parts and whether a VBA project is present.
Guards run before any XML is parsed: the zip's declared sizes and compression ratio (zip bombs), the size of each
part, and the number of cells per sheet. XML with a DTD or entities is refused (defusedxml). Nothing is evaluated,
followed or executed. Problems are returned as :class:`RawProblem` values, never raised past :func:`read_raw`.
"""

from __future__ import annotations

import posixpath
import re
import zipfile
from dataclasses import dataclass, field
from typing import Any

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

MAX_TOTAL_UNCOMPRESSED_BYTES = 256 * 1024 * 1024
MAX_PART_BYTES = 64 * 1024 * 1024
MAX_RATIO = 200.0
"""A part whose uncompressed size is more than this multiple of its compressed size (and above 1 MiB) is a bomb."""
MAX_CELLS_PER_SHEET = 500_000

NS_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
NS_REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
NS_PKG_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"


class Problem(Exception):
    """Raised inside the reader; carries a catalogue code."""

    def __init__(self, code: str, message: str, sheet: str | None = None, cell: str | None = None,
                 expected: Any = None, actual: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.sheet, self.cell = code, message, sheet, cell
        self.expected, self.actual = expected, actual


@dataclass(frozen=True, kw_only=True)
class RawTable:
    name: str
    sheet: str
    ref: str
    columns: tuple[str, ...]


@dataclass(kw_only=True)
class RawBook:
    """What the validator needs from one workbook."""

    sheets: list[str] = field(default_factory=list)
    defined_names: dict[str, str] = field(default_factory=dict)
    values: dict[tuple[str, str], Any] = field(default_factory=dict)  # cached values (and constants)
    formulas: dict[tuple[str, str], str] = field(default_factory=dict)  # "=..." text
    tables: dict[str, RawTable] = field(default_factory=dict)
    external_links: list[str] = field(default_factory=list)
    has_vba: bool = False
    problems: list[Problem] = field(default_factory=list)


class XlErrorValue(str):
    """A cached Excel error value (``#N/A``...)."""


def _check_zip(zf: zipfile.ZipFile) -> None:
    total = 0
    for info in zf.infolist():
        total += info.file_size
        if info.file_size > MAX_PART_BYTES:
            code = "zip-bomb" if info.file_size > MAX_RATIO * max(info.compress_size, 1) else "oversized-part"
            raise Problem(code, f"zip part {info.filename} expands to {info.file_size:,} bytes",
                          expected=f"<= {MAX_PART_BYTES:,} bytes", actual=info.file_size)
        if info.file_size > 1024 * 1024 and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise Problem("zip-bomb", f"zip part {info.filename} has compression ratio "
                          f"{info.file_size / max(info.compress_size, 1):,.0f}:1",
                          expected=f"<= {MAX_RATIO:g}:1", actual=f"{info.file_size / max(info.compress_size, 1):.0f}:1")
    if total > MAX_TOTAL_UNCOMPRESSED_BYTES:
        raise Problem("zip-bomb", f"the zip expands to {total:,} bytes in all",
                      expected=f"<= {MAX_TOTAL_UNCOMPRESSED_BYTES:,} bytes", actual=total)


def _read_part(zf: zipfile.ZipFile, name: str) -> bytes:
    with zf.open(name) as fh:  # read at most the limit: a lying header cannot make us inflate more
        data = fh.read(MAX_PART_BYTES + 1)
    if len(data) > MAX_PART_BYTES:
        raise Problem("zip-bomb", f"zip part {name} inflates beyond {MAX_PART_BYTES:,} bytes",
                      expected=f"<= {MAX_PART_BYTES:,} bytes", actual=f"> {MAX_PART_BYTES:,} bytes")
    return data


def _xml(zf: zipfile.ZipFile, name: str) -> Any:
    data = _read_part(zf, name)
    try:
        return fromstring(data, forbid_dtd=True)
    except DefusedXmlException as exc:
        raise Problem("xml-attack", f"part {name} uses a DTD or XML entities ({type(exc).__name__}); refused",
                      actual=type(exc).__name__) from None
    except Exception as exc:  # ParseError: a broken part
        raise Problem("unreadable", f"part {name} is not well-formed XML ({exc})") from None


def _rels(zf: zipfile.ZipFile, part: str) -> dict[str, tuple[str, str, str]]:
    """``{rId: (type, absolute target, target mode)}`` of a part."""
    d, base = posixpath.split(part)
    rels_name = posixpath.join(d, "_rels", base + ".rels")
    if rels_name not in zf.NameToInfo:
        return {}
    out = {}
    for rel in _xml(zf, rels_name):
        target = rel.get("Target", "")
        mode = rel.get("TargetMode", "Internal")
        if mode != "External":
            target = posixpath.normpath(target.lstrip("/") if target.startswith("/") else posixpath.join(d, target))
        out[rel.get("Id", "")] = (rel.get("Type", "").rsplit("/", 1)[-1], target, mode)
    return out


_CELL_RE = re.compile(r"([A-Z]+)(\d+)")


def split_cell(ref: str) -> tuple[int, int]:
    m = _CELL_RE.fullmatch(ref.replace("$", ""))
    if not m:
        raise ValueError(ref)
    col = 0
    for ch in m.group(1):
        col = col * 26 + ord(ch) - 64
    return col, int(m.group(2))


def cell_name(col: int, row: int) -> str:
    s = ""
    while col:
        col, rem = divmod(col - 1, 26)
        s = chr(65 + rem) + s
    return f"{s}{row}"


_REF_TOKEN = re.compile(r'("(?:[^"]|"")*")|(\$?)([A-Z]{1,3})(\$?)(\d+)(?![\d(A-Za-z_])')


def shift_formula(text: str, dcol: int, drow: int) -> str:
    """Translate the relative A1 references of a shared formula's master by (``dcol``, ``drow``)."""

    def sub(m: re.Match[str]) -> str:
        if m.group(1):
            return m.group(1)
        cabs, col, rabs, row = m.group(2), m.group(3), m.group(4), int(m.group(5))
        c, _ = split_cell(f"{col}1")
        if not cabs:
            c += dcol
        if not rabs:
            row += drow
        letters = cell_name(c, 1)[:-1]
        return f"{cabs}{letters}{rabs}{row}"

    return _REF_TOKEN.sub(sub, text)


def _sheet_cells(book: RawBook, root: Any, sheet: str, strings: list[str]) -> None:
    shared: dict[str, tuple[str, int, int]] = {}
    count = 0
    for c in root.iter(f"{NS_MAIN}c"):
        count += 1
        if count > MAX_CELLS_PER_SHEET:
            raise Problem("oversized-part", f"sheet {sheet} has more than {MAX_CELLS_PER_SHEET:,} cells",
                          sheet=sheet, expected=f"<= {MAX_CELLS_PER_SHEET:,} cells", actual="more")
        ref = c.get("r")
        if ref is None:
            continue
        t = c.get("t", "n")
        f = c.find(f"{NS_MAIN}f")
        if f is not None:
            ftext = f.text or ""
            if f.get("t") == "shared":
                si = f.get("si", "")
                if ftext:
                    col, row = split_cell(ref)
                    shared[si] = (ftext, col, row)
                elif si in shared:
                    master, mc, mr = shared[si]
                    col, row = split_cell(ref)
                    ftext = shift_formula(master, col - mc, row - mr)
            book.formulas[(sheet, ref)] = "=" + ftext
        v = None
        for cand in c.iterfind(f"{NS_MAIN}v"):  # the first <v> with text (tolerates an empty <v /> before it)
            if cand.text is not None:
                v = cand
                break
        value: Any = None
        if t == "inlineStr":
            is_ = c.find(f"{NS_MAIN}is")
            value = "".join(x.text or "" for x in is_.iter(f"{NS_MAIN}t")) if is_ is not None else ""
        elif v is not None and v.text is not None:
            text = v.text
            if t == "s":
                try:
                    value = strings[int(text)]
                except (ValueError, IndexError):
                    value = None
            elif t == "str":
                value = text
            elif t == "b":
                value = text.strip() in ("1", "true")
            elif t == "e":
                value = XlErrorValue(text)
            else:
                try:
                    value = float(text)
                except ValueError:
                    value = text
        elif f is not None and t == "str":
            value = ""
        if value is not None:
            book.values[(sheet, ref)] = value


def read_raw(path: str) -> RawBook:
    """Read ``path``; raises :class:`Problem` (with a catalogue code) when the file cannot be used at all."""
    try:
        zf = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise Problem("unreadable", "no such file") from None
    except IsADirectoryError:
        raise Problem("unreadable", "is a directory") from None
    except PermissionError:
        raise Problem("unreadable", "permission denied") from None
    except (zipfile.BadZipFile, OSError) as exc:
        raise Problem("not-a-workbook", f"not a zip-based Office Open XML workbook ({exc})") from None
    with zf:
        _check_zip(zf)
        names = set(zf.NameToInfo)
        book = RawBook()
        wb_part = "xl/workbook.xml"
        if wb_part not in names:
            raise Problem("not-a-workbook", "the zip has no xl/workbook.xml (not an Excel workbook)")
        book.has_vba = any(n.lower().endswith("vbaproject.bin") for n in names)
        wb = _xml(zf, wb_part)
        rels = _rels(zf, wb_part)
        strings: list[str] = []
        for _rid, (typ, target, _mode) in rels.items():
            if typ == "sharedStrings" and target in names:
                sst = _xml(zf, target)
                for si in sst.iter(f"{NS_MAIN}si"):
                    strings.append("".join(x.text or "" for x in si.iter(f"{NS_MAIN}t")
                                           if not _in_phonetic(si, x)))
            if typ == "externalLink":
                book.external_links.append(target)
        for dn in wb.iter(f"{NS_MAIN}definedName"):
            if dn.get("localSheetId") is None:
                book.defined_names[dn.get("name", "")] = dn.text or ""
        sheets: list[tuple[str, str]] = []
        for s in wb.iter(f"{NS_MAIN}sheet"):
            rid = s.get(f"{NS_REL}id", "")
            target = rels.get(rid, ("", "", ""))[1]
            sheets.append((s.get("name", ""), target))
            book.sheets.append(s.get("name", ""))
        for name, target in sheets:
            if target not in names:
                continue
            try:
                root = _xml(zf, target)
                _sheet_cells(book, root, name, strings)
                for _rid, (typ, tpart, _mode) in _rels(zf, target).items():
                    if typ == "table" and tpart in names:
                        t = _xml(zf, tpart)
                        cols = tuple(tc.get("name", "") for tc in t.iter(f"{NS_MAIN}tableColumn"))
                        tname = t.get("displayName") or t.get("name") or ""
                        book.tables[tname] = RawTable(name=tname, sheet=name, ref=t.get("ref", ""), columns=cols)
                    elif typ == "hyperlink":
                        continue
            except Problem as p:
                if p.sheet is None:
                    p.sheet = name
                book.problems.append(p)
        return book


def _in_phonetic(si: Any, node: Any) -> bool:
    for rph in si.iter(f"{NS_MAIN}rPh"):
        if node in list(rph.iter()):
            return True
    return False
