"""Raw OOXML (``.xlsx`` / ``.xlsm``) reading and lossless writing: :mod:`zipfile` + :mod:`defusedxml` only.

- :func:`open_package` checks a file before anything parses it: it must be a zip, with at most
  ``limits.max_entries`` entries, ``limits.max_part_bytes`` per part, ``limits.max_total_bytes`` in all and a
  compression ratio of at most ``limits.max_ratio`` (zip bombs are rejected from the central directory, before a
  byte is inflated, and again while reading, so a lying header cannot get past the limit).
- :func:`read_workbook` gives a fast, read-only :class:`WorkbookView`: sheets, cells (value, cached type, formula text
  with shared formulas expanded and array formulas marked), tables, defined names, data-validation counts and external
  links. XML is parsed with ``defusedxml`` (entity expansion, external entities and DTDs are refused). A caller that
  reads many plans of one template passes its own :class:`SheetMemo`: the same views, a sheet whose markup an
  earlier plan had (cached values and inline texts apart) read from that plan's cells.
- :func:`write_cached_values` copies a package entry by entry and patches only the ``<v>`` and ``t=`` of the given
  cells in the sheet XML; every other byte of every other part is kept (charts, drawings, VBA, styles, tables...).

Nothing here executes macros or follows links: ``vbaProject.bin`` and ``externalLink`` parts are opaque bytes.
"""

from __future__ import annotations

import io
import os
import re
import stat
import struct
import sys
import zipfile
import zlib
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import compress
from operator import attrgetter, is_not, itemgetter, methodcaller, ne, not_, or_
from pathlib import Path, PurePosixPath
from typing import Any
from xml.etree.ElementTree import ParseError, XMLPullParser
from xml.etree.ElementTree import fromstring as _c_fromstring

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring, iterparse

from planner.a1 import col_to_index, index_to_col, split_cell, split_range  # noqa: F401  (re-exported)
from planner.errors import PlannerError
from planner.excel.values import ERROR_VALUES, XlError

NS_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
NS_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
NS_PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"


class WorkbookError(PlannerError):
    """The file cannot be read as a workbook (not a zip, truncated, too big, hostile XML...)."""

    KINDS = ("unreadable", "not-a-workbook", "limit", "zip-bomb", "hostile-xml", "malformed", "special", "duplicate",
             "compression")
    """``kind``: the file cannot be opened; it is not an OOXML package; a size/count limit is exceeded; a part's
    compression ratio or inflated size betrays a zip bomb; XML with a DTD/entities was refused; a part is broken
    (bad cell reference, bad number, corrupt deflate data); the path is a FIFO, socket or device (never opened);
    two zip entries, sheets or tables share a name; a zip entry uses a compression other than stored/deflate."""

    def __init__(
        self, path: str | Path, problem: str, *, kind: str = "malformed", part: str | None = None,
        sheet: str | None = None,
    ) -> None:
        self.path = str(path)
        self.problem = problem
        self.kind = kind
        self.part = part
        self.sheet = sheet
        super().__init__(f"{path}: {problem}")




@dataclass(frozen=True, kw_only=True)
class Limits:
    """Resource limits for reading one workbook. Defaults fit any real plan with a wide margin."""

    max_file_bytes: int = 100 * 1024 * 1024
    max_entries: int = 5_000
    max_part_bytes: int = 64 * 1024 * 1024
    max_total_bytes: int = 256 * 1024 * 1024
    max_ratio: float = 200.0
    """Largest uncompressed/compressed ratio accepted for a part bigger than 1 MiB (ordinary XML is 5-30)."""
    max_cells: int = 2_000_000
    max_formula_cells: int = 200_000
    time_limit_s: float = 60.0
    """Wall-clock limit of :func:`planner.recalc.recalc_file_isolated`."""
    memory_limit_bytes: int = 2 * 1024 * 1024 * 1024
    """Address-space limit (``RLIMIT_AS``) of :func:`planner.recalc.recalc_file_isolated`."""


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True, kw_only=True)
class CellView:
    """One ``<c>`` element: ``value`` is the cached value (number, str, bool, error text, or None)."""

    ref: str
    value: Any
    type: str  # the t= attribute ("n" when absent): n, s, str, inlineStr, b, e, d
    formula: str | None = None  # without the leading "="; shared formulas expanded
    array_ref: str | None = None  # the ref= of an array (t="array") formula anchored here
    formula_kind: str | None = None  # None, "normal", "shared", "array", "dataTable"


def _cell_view(ref: str, value: Any, type_: str, formula: str | None, array_ref: str | None,
               formula_kind: str | None, _new: Any = object.__new__) -> CellView:
    """``CellView(ref=..., ...)`` without the frozen dataclass's per-field ``object.__setattr__`` (the same
    instance: equal, same hash and repr; a sheet has thousands of cells)."""
    c = _new(CellView)
    d = c.__dict__
    d["ref"] = ref
    d["value"] = value
    d["type"] = type_
    d["formula"] = formula
    d["array_ref"] = array_ref
    d["formula_kind"] = formula_kind
    return c


@dataclass(frozen=True, kw_only=True)
class TableView:
    name: str
    sheet: str
    ref: str
    columns: tuple[str, ...]
    header_row_count: int = 1
    totals_row_count: int = 0
    part: str = ""


@dataclass(frozen=True, kw_only=True)
class SheetView:
    name: str
    part: str
    cells: dict[str, CellView]
    dimension: str | None
    data_validations: int
    tables: tuple[str, ...]
    state: str = "visible"
    max_row: int = 0
    max_col: int = 0
    rule_formulas: tuple[tuple[str, str], ...] = ()
    """Formulas outside cells, ``(sqref, text)``: conditional formatting and data validation rules."""
    plain: bool = field(default=False, compare=False, repr=False)
    """The cells were read by search (:func:`_cells_by_search`): the part's one ``<sheetData>`` holds nothing but rows
    of cells in the common form (``r`` first, on the grid, each once), with no comment, CDATA or processing
    instruction in the part. The writer then finds a cell by its start tag alone (:func:`_patch_cells_by_jump`).
    How the part was read, not what it holds: not compared."""
    order: object | None = field(default=None, compare=False, repr=False)
    """A token shared by the sheets whose ``cells`` have the same references in the same order (read through a
    :class:`SheetMemo` from one kept skeleton: :attr:`_Skeleton.order`), or None. How the part was read: not
    compared. The writer picks such a sheet's cells by position (:func:`_wanted_kept`)."""


@dataclass(frozen=True, kw_only=True)
class WorkbookView:
    """A read-only view of a workbook package (see :func:`read_workbook`)."""

    path: str
    sheets: tuple[SheetView, ...]
    tables: dict[str, TableView]
    defined_names: dict[str, str]
    """``name`` (global) or ``Sheet!name`` (sheet-scoped) → formula text without ``=``."""
    external_links: tuple[str, ...]
    """Targets of the ``externalLink`` parts (never opened)."""
    has_vba: bool
    parts: tuple[str, ...] = field(default=())
    vba_parts: tuple[str, ...] = ()
    """Parts the workbook's relationships declare as its VBA project (whatever their name)."""
    sheet_kinds: dict[str, str] = field(default_factory=dict)
    """Every ``<sheet>`` of the workbook (cells or not) → its relationship type: ``worksheet``, ``chartsheet``,
    ``dialogsheet``, ``xlMacrosheet`` (an Excel 4 macro sheet), ``xlIntlMacrosheet``..."""
    calc_on_load: bool = False
    """``<calcPr fullCalcOnLoad="1">``: Excel and LibreOffice recompute every formula when they open the file (what
    openpyxl and other writers without a calculation engine set, leaving the cached values out)."""
    memo: SheetMemo | None = field(default=None, compare=False, repr=False)
    """The :class:`SheetMemo` the workbook was read through (:func:`read_workbook`'s ``memo``), or None: the one
    :func:`write_cached_values` then keeps its own entries in (a recalculating worker passes the view it read to the
    writer). How the view was read, not what it holds: not compared."""

    @property
    def sheet_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.sheets)

    def sheet(self, name: str) -> SheetView:
        for s in self.sheets:
            if s.name.lower() == name.lower():
                return s
        raise KeyError(name)


# ---------------------------------------------------------------------------------------------------------------------
# Package access with limits


class Package:
    """An opened, size-checked zip package. Use :func:`open_package`."""

    def __init__(self, path: Path, zf: zipfile.ZipFile, limits: Limits, *, memo: SheetMemo | None = None,
                 data: bytes | None = None) -> None:
        self.path = path
        self.zf = zf
        self.data = data
        """The file's bytes when ``zf`` reads them from memory (:func:`open_package` with a memo), else None."""
        self._shared = False
        """``zf`` is kept in :attr:`memo` (:meth:`keep_reads`) for the next package of the same bytes: not closed."""
        self.limits = limits
        self.names = [i.filename for i in zf.infolist()]
        self._total_read = 0
        self.memo = memo
        """Where each part read is remembered by its stored bytes (:meth:`read_size`), or None."""
        self._read: list[tuple[str, tuple[tuple[Any, ...], bytes, bytes, int, bytes | None]]] = []
        """The parts read, kept in :attr:`memo` by :meth:`keep_reads` once the caller's read succeeded."""

    def close(self) -> None:
        if not self._shared:
            self.zf.close()

    def __enter__(self) -> Package:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def has(self, name: str) -> bool:
        return name in self.names

    def read(self, name: str) -> bytes:
        """Read one part, enforcing the per-part and total limits while inflating."""
        try:
            info = self.zf.getinfo(name)
        except KeyError:
            raise WorkbookError(self.path, f"missing part {name}", part=name) from None
        stored = self.stored(info) if self.memo is not None else None
        known = self._known(info, stored) if stored is not None else None
        if known is not None and known[4] is not None:  # these very bytes inflated before: what they gave then
            self._count(name, len(known[4]))
            return known[4]
        cap = self.limits.max_part_bytes
        try:
            with self.zf.open(info) as fh:
                # at most one byte past the limit is ever inflated (the reader stops there; it also stops at the
                # declared size, checked against the limits before): one call, not a Python loop of 64 KiB chunks
                out = fh.read(cap + 1)
                if len(out) > cap:
                    raise WorkbookError(
                        self.path, f"part {name} inflates beyond {cap} bytes (limit max_part_bytes)",
                        kind="zip-bomb", part=name,
                    )
                if self._total_read + len(out) > self.limits.max_total_bytes:
                    raise WorkbookError(
                        self.path,
                        f"package inflates beyond {self.limits.max_total_bytes} bytes (limit max_total_bytes)",
                        kind="zip-bomb", part=name,
                    )
        except zlib.error as exc:
            raise WorkbookError(self.path, f"corrupt compressed data in part {name} ({exc})", part=name) from None
        except (zipfile.BadZipFile, EOFError, OSError, zipfile.LargeZipFile, RuntimeError, NotImplementedError,
                ValueError) as exc:
            raise WorkbookError(self.path, f"corrupt part {name}: {exc}", part=name) from None
        self._total_read += len(out)
        if self.memo is not None and stored is not None:
            self._read.append((info.filename, (_zip_record(info), *stored, len(out),
                                               out if len(out) <= KEEP_PART_BYTES else None)))
        return out

    def keep_reads(self) -> None:
        """Keep the parts read in :attr:`memo` (called when the read or write they were for succeeded: nothing is
        kept from one that failed)."""
        if self.memo is not None:
            for name, value in self._read:
                self.memo.remember_stored(name, value)
            if self.data is not None:
                self.memo.remember_package(self.data, self.zf, self.limits)
                self._shared = True
        self._read.clear()

    def _known(self, info: zipfile.ZipInfo, stored: tuple[bytes, bytes]
               ) -> tuple[tuple[Any, ...], bytes, bytes, int, bytes | None] | None:
        """:attr:`memo`'s read of the part ``info`` when its central-directory record, local header, name, extra
        field and compressed bytes are ``stored``'s, every byte compared (:mod:`zipfile` reads nothing else, so
        its inflation, checks and CRC give what they gave then: no CRC-only identity, no date), and ``info`` is the
        entry :meth:`read` reads under its name; else None."""
        if self.memo is None or self.zf.NameToInfo.get(info.filename) is not info:
            return None
        got = self.memo.stored_part(info.filename)
        if got is None or got[0] != _zip_record(info) or got[1] != stored[0] or got[2] != stored[1]:
            return None
        return got

    def _count(self, name: str, length: int) -> None:
        """A part of ``length`` bytes read without inflating it: the limits checked and counted as :meth:`read`
        checks and counts them."""
        cap = self.limits.max_part_bytes
        if length > cap:
            raise WorkbookError(self.path, f"part {name} inflates beyond {cap} bytes (limit max_part_bytes)",
                                kind="zip-bomb", part=name)
        if self._total_read + length > self.limits.max_total_bytes:
            raise WorkbookError(
                self.path, f"package inflates beyond {self.limits.max_total_bytes} bytes (limit max_total_bytes)",
                kind="zip-bomb", part=name,
            )
        self._total_read += length

    def stored(self, info: zipfile.ZipInfo) -> tuple[bytes, bytes] | None:
        """The entry ``info`` as the file stores it: its local header with the name and extra field after it, and
        its compressed bytes (what :mod:`zipfile` reads to inflate it); None when they cannot be read so (the caller
        then reads the part as :meth:`read` does, which reports why)."""
        data = self.data
        if data is not None:  # the same bytes as the file's reads below give (an offset in 0..len: open_package)
            o = info.header_offset
            head = data[o:o + _LOCAL_HEADER.size]
            if len(head) != _LOCAL_HEADER.size or head[:4] != b"PK\x03\x04":
                return None
            name_len, extra_len = struct.unpack("<HH", head[26:30])
            end = o + _LOCAL_HEADER.size + name_len + extra_len
            local = data[o:end]
            raw = data[end:end + info.compress_size]
            if len(local) != _LOCAL_HEADER.size + name_len + extra_len or len(raw) != info.compress_size:
                return None
            return local, raw
        fh = self.zf.fp
        if fh is None:
            return None
        try:
            fh.seek(info.header_offset)
            head = fh.read(_LOCAL_HEADER.size)
            if len(head) != _LOCAL_HEADER.size or head[:4] != b"PK\x03\x04":
                return None
            name_len, extra_len = struct.unpack("<HH", head[26:30])
            local = head + fh.read(name_len + extra_len)
            raw = fh.read(info.compress_size)
        except (OSError, ValueError):
            return None
        if len(local) != _LOCAL_HEADER.size + name_len + extra_len or len(raw) != info.compress_size:
            return None
        return local, raw

    def read_size(self, info: zipfile.ZipInfo, stored: tuple[bytes, bytes]) -> int | None:
        """The length :meth:`read` would give for the entry ``info`` (``stored``: :meth:`stored`'s answer for it),
        without inflating it, when :attr:`memo` holds a read of the same stored bytes (:meth:`_known`); the limits
        are checked and counted as :meth:`read` checks them. None otherwise. Worked example: a recalculating
        worker's writer copies a plan's 77 parts, each read before by the same plan's reader or the last plan's
        writer, without inflating one."""
        got = self._known(info, stored)
        if got is None:
            return None
        self._count(info.filename, got[3])
        return got[3]


KEEP_PART_BYTES = 64 * 1024
"""A part read through a :class:`SheetMemo` is kept there with its bytes when it inflates to at most this many: the
next read of the same stored bytes gives them without inflating them (a template plan's relationships, tables and
the sheets no plan changes: 68 of its 77 parts are the last plan's, 218 KB of 1.7 MB; the reader reads about 50 of
them)."""


def _zip_record(info: zipfile.ZipInfo) -> tuple[Any, ...]:
    """What :mod:`zipfile` takes from an entry's central-directory record to open and inflate it: name, flags,
    method, CRC, sizes, the DOS time (an encrypted entry's check byte), and where the next entry starts, relative to
    this one (a check of overlapping entries, in Pythons that have it)."""
    end = getattr(info, "_end_offset", None)
    return (info.orig_filename, info.flag_bits, info.compress_type, info.CRC, info.compress_size, info.file_size,
            getattr(info, "_raw_time", None), None if end is None else end - info.header_offset)


def open_package(path: str | Path, limits: Limits = DEFAULT_LIMITS, *, memo: SheetMemo | None = None) -> Package:
    """Open ``path`` as a zip package after checking size, entry count, declared sizes and ratios. ``memo``: where
    the parts read are remembered by their stored bytes (:meth:`Package.read_size`)."""
    p = Path(path)
    try:
        st = p.stat()
    except OSError as exc:
        raise WorkbookError(p, f"cannot read file: {exc.strerror or exc}", kind="unreadable") from None
    _check_regular(p, st.st_mode)
    size = st.st_size
    if size > limits.max_file_bytes:
        raise WorkbookError(
            p, f"file is {size} bytes, above the limit of {limits.max_file_bytes} (max_file_bytes)", kind="limit"
        )
    data = zf_memory = None
    if memo is not None:
        data = _file_bytes(p, limits.max_file_bytes)
        if data is not None:
            kept = memo.take_package()
            if kept is not None and kept[0] == data and kept[2] == limits:
                # the last package's bytes, every byte compared, and limits: its zip directory parsed from them and
                # the checks below passed for them (a recalculation's write of the plan its read just read)
                return Package(p, kept[1], limits, memo=memo, data=data)
            zf_memory = _zip_in_memory(data)
            if zf_memory is None:
                data = None  # (read from the file below: whatever it reports, as without a memo)
    try:
        zf = zf_memory if zf_memory is not None else zipfile.ZipFile(p)
    except zipfile.BadZipFile:
        raise WorkbookError(
            p, "not a workbook: not a zip file (an .xlsx/.xlsm is a zip package)", kind="not-a-workbook"
        ) from None
    except (IsADirectoryError, PermissionError) as exc:
        raise WorkbookError(p, f"cannot read file: {exc.strerror or exc}", kind="unreadable") from None
    except (OSError, EOFError, ValueError) as exc:
        raise WorkbookError(p, f"not a workbook: {exc}", kind="not-a-workbook") from None
    infos = zf.infolist()
    if len(infos) > limits.max_entries:
        zf.close()
        raise WorkbookError(
            p, f"{len(infos)} zip entries, above the limit of {limits.max_entries} (max_entries)", kind="limit"
        )
    total = 0
    for info in infos:
        total += info.file_size
        bomb = info.file_size > limits.max_ratio * max(info.compress_size, 1)
        if info.file_size > limits.max_part_bytes:
            zf.close()
            raise WorkbookError(
                p,
                f"part {info.filename} declares {info.file_size} bytes, above {limits.max_part_bytes} (max_part_bytes)",
                kind="zip-bomb" if bomb else "limit", part=info.filename,
            )
        if info.file_size > 1 << 20 and bomb:
            zf.close()
            ratio = info.file_size / max(info.compress_size, 1)
            raise WorkbookError(
                p, f"part {info.filename} has compression ratio {ratio:.0f}, above {limits.max_ratio:g} (zip bomb?)",
                kind="zip-bomb", part=info.filename,
            )
    if total > limits.max_total_bytes:
        zf.close()
        raise WorkbookError(
            p, f"package declares {total} bytes, above {limits.max_total_bytes} (max_total_bytes)", kind="zip-bomb"
        )
    try:
        _check_entries(p, infos)
    except WorkbookError:
        zf.close()
        raise
    names = {i.filename for i in infos}
    if "[Content_Types].xml" not in names or "xl/workbook.xml" not in names:
        zf.close()
        raise WorkbookError(
            p, "not a workbook: the zip has no xl/workbook.xml (not an Excel .xlsx/.xlsm)", kind="not-a-workbook"
        )
    return Package(p, zf, limits, memo=memo, data=data)


KEEP_PACKAGE_BYTES = 1024 * 1024
"""The largest file a :class:`SheetMemo` keeps as its last package (:meth:`SheetMemo.remember_package`): a template
plan's is about 216 KB."""


def _file_bytes(p: Path, max_bytes: int) -> bytes | None:
    """The bytes of the file ``p`` when at most ``max_bytes``, or None when it cannot be read so (the caller opens it
    as a zip file then, which reports why). The caller checked its size first (a file that grew since: None)."""
    try:
        with open(p, "rb") as fh:
            data = fh.read()  # (sized by the file's length: read(max_bytes + 1) would allocate max_bytes first)
    except (OSError, ValueError):
        return None
    return data if len(data) <= max_bytes else None


def _zip_in_memory(data: bytes) -> zipfile.ZipFile | None:
    """``data`` opened as a zip file in memory, when :mod:`zipfile` opens it without an error and every entry's
    local header offset is within ``data`` (so that every seek of a read is one a file allows too, and every read
    gives what the file's would); else None (the caller opens the file: whatever it reports, as without a memo).
    The same directory as the file's: :mod:`zipfile` parses the same bytes."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except Exception:  # noqa: BLE001  (the file's open reports it, with the same message as without a memo)
        return None
    n = len(data)
    if not all(0 <= i.header_offset <= n for i in zf.infolist()):
        zf.close()
        return None
    return zf


# Reader hardening: checks that refuse what spreadsheet programs would read differently from us.

_COMPRESSIONS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate"}
_OTHER_COMPRESSIONS = {12: "bzip2", 14: "LZMA", 9: "deflate64", 93: "zstandard"}


def _check_regular(p: Path, mode: int) -> None:
    """Refuse a FIFO, socket or device before it is opened (opening could block or have side effects)."""
    if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
        return
    what = ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")
    raise WorkbookError(p, f"{what}, not a workbook file: never opened", kind="special")


def _check_entries(p: Path, infos: list[zipfile.ZipInfo]) -> None:
    """Refuse duplicate entry names (Excel and this reader would take different copies; names compare
    case-insensitively, as OPC part names do) and compressions other than stored and deflate."""
    seen: set[str] = set()
    for info in infos:
        key = info.filename.lower()
        if key in seen:
            raise WorkbookError(p, f"the zip holds two entries named {info.filename} (readers disagree on which "
                                   "one counts)", kind="duplicate", part=info.filename)
        seen.add(key)
        if info.compress_type not in _COMPRESSIONS:
            method = _OTHER_COMPRESSIONS.get(info.compress_type, f"method {info.compress_type}")
            raise WorkbookError(p, f"zip entry {info.filename} uses {method} compression (Excel writes only stored "
                                   "or deflate)", kind="compression", part=info.filename)


_CELL_REF = re.compile(r"([A-Z]{1,3})([1-9][0-9]{0,6})")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_BOOLS = {"0": False, "1": True, "false": False, "true": True}
_CELL_TYPES = frozenset({"n", "s", "str", "inlineStr", "b", "e", "d"})


def _int_attr(pkg: Package, part: str, el: Any, name: str, default: str) -> int:
    """An integer attribute, or :class:`WorkbookError` naming the part and attribute."""
    raw = el.get(name, default)
    try:
        if not re.fullmatch(r"[0-9]{1,9}", raw.strip()):
            raise ValueError
        return int(raw)
    except ValueError:
        raise WorkbookError(pkg.path, f"{part}: {name}={raw!r} is not a whole number", part=part) from None


def _check_unique(pkg: Package, what: str, names: list[str]) -> None:
    """Refuse two sheets (or tables) whose names differ only in case: Excel treats them as one name."""
    seen: dict[str, str] = {}
    for name in names:
        key = name.lower()
        if key in seen:
            raise WorkbookError(pkg.path, f"two {what}s named {seen[key]!r} and {name!r} (names are "
                                          "case-insensitive; readers disagree on which one counts)",
                                kind="duplicate")
        seen[key] = name


@contextmanager
def _xml_errors(pkg: Package, name: str) -> Iterator[None]:
    """Parse errors of part ``name`` as :class:`WorkbookError` (hostile XML apart from malformed XML)."""
    try:
        yield
    except DefusedXmlException as exc:
        raise WorkbookError(
            pkg.path, f"hostile XML refused in {name}: {type(exc).__name__}", kind="hostile-xml", part=name
        ) from None
    except MemoryError:
        raise
    except Exception as exc:  # ElementTree.ParseError and friends
        raise WorkbookError(pkg.path, f"malformed XML in {name}: {exc}", part=name) from None


def _events(
    pkg: Package, name: str, events: tuple[str, ...] = ("end",), data: bytes | None = None
) -> Iterator[tuple[str, Any]]:
    """The parse events of one part: by the C parser for a part without a DTD (:func:`_plain_xml`: no entity can be
    declared, so none can expand), else by defusedxml, which refuses the DTD. The same events in the same order.
    ``data``: the part's bytes when already read."""
    if data is None:
        data = pkg.read(name)
    with _xml_errors(pkg, name):
        if _plain_xml(data):
            parser = XMLPullParser(events)
            parser.feed(data)
            parser.close()
            yield from parser.read_events()
        else:
            yield from iterparse(io.BytesIO(data), events=events, forbid_dtd=True)


def _plain_xml(data: bytes) -> bool:
    """True when a part can go to the C parser unguarded: ASCII-compatible bytes (UTF-8, with or without BOM) and no
    document type declaration. Without a DTD no entity can be declared, so neither entity expansion nor external
    entities are possible (an undeclared entity is a parse error); anything else goes through defusedxml, which
    refuses the DTD. Saves the Python-level callbacks of defusedxml's parser on every sheet (about 40 % of a read).
    """
    head = data[3:4] if data.startswith(b"\xef\xbb\xbf") else data[:1]
    return head == b"<" and b"<!DOCTYPE" not in data and b"<!ENTITY" not in data


def _tree(pkg: Package, name: str, data: bytes | None = None) -> Any:
    """The whole part parsed at once (C parser: several times faster than :func:`_events` for a sheet); ``data``:
    the part's bytes when already read."""
    if data is None:
        data = pkg.read(name)
    with _xml_errors(pkg, name):
        if _plain_xml(data):
            return _c_fromstring(data)
        return fromstring(data, forbid_dtd=True)


@lru_cache(maxsize=4096)  # bounded: a hostile part may use any number of distinct tags
def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _rels(pkg: Package, part: str, memo: SheetMemo | None = None) -> dict[str, tuple[str, str]]:
    """Relationship id → (type suffix, absolute part name) for ``part``; ``memo``: the answer for these bytes of
    this part's relationships when read before."""
    rel_name = _rels_name(part)
    if not pkg.has(rel_name):
        return {}
    data = pkg.read(rel_name)
    if memo is not None:
        key = ("rels", part, data)
        known = memo.part(key)
        if known is not None:
            return dict(known)
    pp = PurePosixPath(part)
    out = {}
    for _ev, el in _events(pkg, rel_name, data=data):
        if _local(el.tag) == "Relationship":
            target = el.get("Target", "")
            mode = el.get("TargetMode", "")
            if mode == "External":
                absolute = target
            elif target.startswith("/"):
                absolute = target.lstrip("/")
            else:
                absolute = _normpath(str(pp.parent / target))
            out[el.get("Id", "")] = (el.get("Type", "").rsplit("/", 1)[-1], absolute)
    if memo is not None:
        memo.remember_part(key, dict(out))
    return out


@lru_cache(maxsize=1024)
def _rels_name(part: str) -> str:
    """The name of ``part``'s relationships part: ``xl/worksheets/sheet1.xml`` gives
    ``xl/worksheets/_rels/sheet1.xml.rels`` (kept for the last 1,024 names: a worker reads the same names plan after
    plan, and the path arithmetic costs more than the memo's lookup)."""
    pp = PurePosixPath(part)
    return str(pp.parent / "_rels" / (pp.name + ".rels"))


def _normpath(path: str) -> str:
    parts: list[str] = []
    for seg in path.split("/"):
        if seg == "..":
            if parts:
                parts.pop()
        elif seg and seg != ".":
            parts.append(seg)
    return "/".join(parts)


# ---------------------------------------------------------------------------------------------------------------------
# A1 helpers

# col_to_index, index_to_col, split_cell and split_range live in planner.a1 (pure); re-exported from here

_SHIFT_RE = re.compile(
    r"(\"(?:[^\"]|\"\")*\")"  # string literal
    r"|('(?:[^']|'')*'!|\b[A-Za-z_][\w.]*!)"  # sheet prefix (kept)
    r"|(\[[^\]]*\])"  # bracketed (structured refs, external book index)
    r"|(?<![\w.$])(\$?)([A-Za-z]{1,3})(\$?)(\d+)(?![\w(])"  # A1 cell
)


def shift_formula(formula: str, d_row: int, d_col: int) -> str:
    """Move the relative references of a shared formula by ``d_row`` rows and ``d_col`` columns.

    >>> shift_formula("A1+$B$1+Sheet2!C3+SUM(A1:A2)", 2, 1)
    'B3+$B$1+Sheet2!D5+SUM(B3:B4)'
    """

    def sub(m: re.Match[str]) -> str:
        if m.group(1) or m.group(2) or m.group(3):
            return m.group(0)
        cabs, col, rabs, row = m.group(4), m.group(5), m.group(6), m.group(7)
        c = col_to_index(col) if cabs else col_to_index(col) + d_col
        r = int(row) if rabs else int(row) + d_row
        if c < 1 or r < 1 or c > 16384 or r > 1048576:
            return "#REF!"
        return f"{cabs}{index_to_col(c)}{rabs}{r}"

    return _SHIFT_RE.sub(sub, formula)


# ---------------------------------------------------------------------------------------------------------------------
# Reading


def _shared_strings(pkg: Package, part: str | None) -> list[str]:
    if not part or not pkg.has(part):
        return []
    out: list[str] = []
    for _ev, el in _events(pkg, part):
        if _local(el.tag) == "si":
            out.append("".join(t.text or "" for t in el.iter() if _local(t.tag) == "t" and not _in_rph(el, t)))
            el.clear()
    return out


def _in_rph(si: Any, t: Any) -> bool:
    for rph in si.iter():
        if _local(rph.tag) == "rPh" and any(x is t for x in rph.iter()):
            return True
    return False


def _convert(v: str | None, t: str, strings: list[str], inline: str | None) -> Any:
    """The cached value of a cell; ``ValueError`` when it is not what its type says (``<v>4_00</v>``, a shared
    string index out of range, a flag that is not 0/1): programs read such values differently."""
    if t == "inlineStr":
        return inline
    if v is None:
        return None
    if t == "s":
        if not v.strip().isdigit() or int(v) >= len(strings):
            raise ValueError(f"shared-string index {v!r} is not one of the {len(strings)} strings")
        return strings[int(v)]
    if t == "b":
        if v.strip() not in _BOOLS:
            raise ValueError(f"boolean value {v!r} is not 0 or 1")
        return _BOOLS[v.strip()]
    if t == "e":
        return XlError(v)
    if t in ("str", "d"):
        return v
    if _NUMBER.fullmatch(v) is None:
        raise ValueError(f"cached value {v!r} is not a number")
    f = float(v)
    return int(f) if f.is_integer() and "." not in v and "E" not in v.upper() else f


MAX_ROW = 1_048_576
MAX_COL = 16_384


@lru_cache(maxsize=65536)  # plans of one template repeat the same references; bounded for hostile input
def _grid_position(ref: str | None) -> tuple[int, int] | None:
    """(row, column) of a cell reference on the sheet grid (``A1`` .. ``XFD1048576``), else None."""
    m = _CELL_REF.fullmatch(ref or "")
    if m is None:
        return None
    row, col = int(m.group(2)), col_to_index(m.group(1))
    return (row, col) if row <= MAX_ROW and col <= MAX_COL else None


_WS = r"[ \t\n]*"
_NAME = r"[A-Za-z_][A-Za-z0-9_.-]*(?::[A-Za-z_][A-Za-z0-9_.-]*)?"
_FAST_ROW = re.compile(_WS + r'<row((?: ' + _NAME + r'="[^"<&\t\r\n]*")*) ?(/?)>')
_FAST_ROW_END = re.compile(_WS + r"</row>")
_FAST_CELL = re.compile(
    _WS + r'<c r="([A-Z]{1,3}[1-9][0-9]{0,6})"((?: ' + _NAME + r'="[^"<&=\t\r\n]*")*)'
    r'(?: ?/>|>(?:<f((?: ' + _NAME + r'="[^"<&\t\r\n]*")*) ?(?:/>|>([^<]*)</f>))?(?:<v ?/>|<v>([^<]*)</v>)?'
    r'(?:<is><t(?: xml:space="preserve")?>([^<]*)</t></is>)?</c>)'
)
_FAST_ATTR = re.compile(r' (' + _NAME + r')="([^"]*)"')
_PREFIX_USE = re.compile(r' ([A-Za-z_][A-Za-z0-9_.-]*):[A-Za-z_][A-Za-z0-9_.-]*="')
_PREFIX_TAIL = re.compile(r':[A-Za-z_][A-Za-z0-9_.-]*="')
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_NOT_XML_ILLEGAL_BYTES = bytes(b for b in range(256) if not (b < 0x20 and b not in (0x09, 0x0A)))
"""Every byte but the control characters :data:`_XML_ILLEGAL` refuses (carriage return included): what
``bytes.translate`` deletes to leave only those."""


def _prefixes_used(region: str) -> set[str]:
    """The prefixes of the attribute names :data:`_PREFIX_USE` finds (`` p:name="``), found from the ``:name="``
    after each (a literal to search for, where the pattern tried every blank): the run of name characters before
    the colon, when a blank precedes it and it starts as a name does."""
    out: set[str] = set()
    names = _NAME_CHARS
    for m in _PREFIX_TAIL.finditer(region):
        k = m.start()
        b = k
        while b > 0 and region[b - 1] in names:
            b -= 1
        if b < k and b > 0 and region[b - 1] == " " and (region[b].isalpha() or region[b] == "_") \
                and region[b].isascii():
            out.add(region[b:k])
    return out
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\r\ufffe\uffff]")
_ENTITIES = ("&lt;", "&gt;", "&quot;", "&apos;", "&amp;")
_OTHER_REFERENCE = re.compile("&(?!lt;|gt;|quot;|apos;|amp;)")
"""An ``&`` that does not start one of :data:`_ENTITIES` (a character reference, or anything else)."""
_XML_DECL_ENCODING = re.compile(rb"""encoding\s*=\s*["']([^"']*)["']""")


def _fast_text(s: str) -> str | None:
    """Element text as the XML parser gives it, for text with no ``<``: the five predefined entities replaced
    (``&amp;`` last); None (the caller lets the parser read the part) for a character reference or anything else."""
    if "&" not in s:
        return s
    if _OTHER_REFERENCE.search(s) is not None:
        return None
    return s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&apos;", "'") \
        .replace("&amp;", "&")


SEARCH_MAX_PART_BYTES = 2 * 1024 * 1024
"""Largest worksheet part whose cells are read by search (:func:`_split_sheet_data`); a template plan's largest sheet
is about 200 KB. A bigger part goes to the XML parser, as before: on a sheet of hundreds of thousands of cells the
parser reaches the per-workbook memory limit several times sooner (4.6 s against 13.7 s for 400,000 cells at
``--memory 160``, on a loaded machine), which keeps that limit, not the time limit, the one that stops it."""


def _split_sheet_data(data: bytes) -> tuple[bytes, str] | None:
    """A worksheet part as (the part with ``<sheetData/>`` in place of its cells, the cells' text) when the cells can
    be read without the XML parser: UTF-8 (declared or not) with no DTD, comment, CDATA or processing instruction
    outside the cells' text; one ``<sheetData>`` element without attributes; its text valid UTF-8 without characters
    XML refuses, ``]]>`` or carriage returns, whose attribute prefixes the root element declares; at most
    :data:`SEARCH_MAX_PART_BYTES`. None otherwise (the parser reads the part, and reports what is wrong with it).
    :func:`_split_part` and :func:`_cells_text_ok` (the checks of the cells' text, which a :class:`SheetMemo` makes on
    the parts of it that are new)."""
    split = _split_part(data)
    if split is None or not _cells_text_ok(split[1], split[2], split[3]):
        return None
    return split[0], split[2]


def _split_part(data: bytes) -> tuple[bytes, bytes, str, bytes] | None:
    """:func:`_split_sheet_data` but for the checks of the cells' text (:func:`_cells_text_ok`): (the part with
    ``<sheetData/>`` in place of its cells, the cells' bytes, their text, the root element's start tag), or None.

    The cells' text is not searched for ``<!`` or ``<?`` (two two-byte searches stopping at every ``<`` of the
    part: about 2.9 ms of a template plan's 1.6 MB of sheets): every reader of that text refuses it, which sends
    the part to the parser as a None here did. :func:`_cells_by_search` accepts a text only where each ``<`` begins
    one of its tags (``<row``, ``<c ``, ``<f``, ``<v``, ``<is>``, ``<t``, their ends; no text or attribute value it
    matches holds a ``<``), and :meth:`SheetMemo.cells` serves a text only when its pieces outside the value slots
    (which hold no ``<``) are those of a text :func:`_cells_by_search` accepted."""
    if len(data) > SEARCH_MAX_PART_BYTES:
        return None
    if (data[3:4] if data.startswith(b"\xef\xbb\xbf") else data[:1]) != b"<":
        return None  # _plain_xml's first test (its others look for "<!", absent here)
    i = data.find(b"<sheetData>")
    j = data.rfind(b"</sheetData>")  # (the only one when the counts below hold: found from the end, which is near)
    if i == -1 or j < i:
        return None
    head, tail = data[: i + 11], data[j:]
    if b"<!" in head or b"<!" in tail:
        return None  # (no "<!": no DTD, comment or CDATA outside the cells; inside them, the docstring)
    start = 0
    if data.startswith(b"\xef\xbb\xbf"):
        start = 3
    if data.startswith(b"<?", start):
        end = data.find(b"?>", start)
        if end == -1:
            return None
        enc = _XML_DECL_ENCODING.search(data, start, end)
        if enc is not None and enc.group(1).lower() not in (b"utf-8", b"utf8"):
            return None
        start = end + 2
    if head.find(b"<?", start) != -1 or b"<?" in tail or head.count(b"sheetData") != 1 \
            or tail.count(b"sheetData") != 1:
        return None  # (with none in the cells' bytes, _cells_text_ok: the part's one <sheetData> and its end)
    raw = data[i + 11 : j]
    try:
        region = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if "\ufffe" in region or "\uffff" in region:
        return None  # the other characters of _XML_ILLEGAL, in the decoded text (immediate for an ASCII region)
    return data[:i] + b"<sheetData/>" + data[j + 12 :], raw, region, data[start : data.find(b">", start)]


def _cells_text_ok(raw: bytes, text: str, root_tag: bytes) -> bool:
    """The checks :func:`_split_sheet_data` makes of a part's cells (``raw``, decoded as ``text``; or of the new
    texts of a :class:`SheetMemo` region, joined by ``<``, which is in none of the patterns): no ``sheetData``, no
    ``]]>``, no byte XML refuses (a control character, carriage return included), and every attribute prefix
    (:func:`_prefixes_used`) declared in ``root_tag`` (``xml`` is predefined). None of these patterns holds a ``<``,
    so a region passes exactly when each of its pieces cut at a ``<`` does."""
    if b"sheetData" in raw or (b"]" in raw and b"]]>" in raw) or len(raw.translate(None, _NOT_XML_ILLEGAL_BYTES)):
        return False  # (the one-byte test first: most parts have no "]", and it is a memchr, not a substring search)
    return _prefixes_declared(_prefixes_used(text), root_tag)


def _prefixes_declared(prefixes: Iterable[str], root_tag: bytes) -> bool:
    """Every one of ``prefixes`` declared in ``root_tag`` (``xml`` is predefined)."""
    for prefix in prefixes:
        if prefix != "xml" and b"xmlns:" + prefix.encode() + b"=" not in root_tag:
            return False
    return True


def _cells_by_search(
    region: str, strings: list[str], limits: Limits
) -> tuple[dict[str, CellView], int, int] | None:
    """The cells of a ``<sheetData>`` whose text (:func:`_split_sheet_data`) is nothing but rows of cells in the
    common form (:data:`_FAST_CELL`: ``r`` first, plain attributes, an optional ``<f>``, ``<v>`` and inline string
    ``<is><t>``), read by regular expressions: the same cell views :func:`_read_sheet`'s parser loop builds. None
    when anything else is there, or when that loop would raise (a duplicate cell, an unknown type, a value that is
    not what its type says, a limit): the parser then reads the part and reports it."""
    cells: dict[str, CellView] = {}
    shared: dict[str, tuple[str, int, int]] = {}
    max_row = max_col = n_formulas = 0
    max_cells, max_formulas = limits.max_cells, limits.max_formula_cells
    row_match, row_end, cell_match = _FAST_ROW.match, _FAST_ROW_END.match, _FAST_CELL.match
    grid, types, convert, text = _grid_position, _CELL_TYPES, _convert, _fast_text
    pos, n = 0, len(region)
    type_of: dict[str, str] = {}  # the attributes after r (` s="3" t="n"`) repeat: their t read once
    number, n_strings, new = _NUMBER.fullmatch, len(strings), object.__new__
    while True:
        rm = row_match(region, pos)
        if rm is None:
            break
        row_attrs = _FAST_ATTR.findall(rm.group(1))
        if len({k for k, _v in row_attrs}) != len(row_attrs):
            return None  # an attribute given twice: not well-formed
        r_attr = next((v for k, v in row_attrs if k == "r"), None)
        if r_attr is not None and not (r_attr.isdigit() and 0 < int(r_attr) <= MAX_ROW):
            return None
        pos = rm.end()
        if rm.group(2):  # <row .../>
            continue
        while True:
            m = cell_match(region, pos)
            if m is None:
                break
            pos = m.end()
            ref, attrs, f_attrs, f_body, v, inline = m.groups()
            p = grid(ref)
            if p is None:
                return None
            t = type_of.get(attrs)
            if t is None:
                pairs = _FAST_ATTR.findall(attrs)
                names = [k for k, _v in pairs]
                unique = len(set(names)) == len(names) and "r" not in names  # else not well-formed
                t = type_of[attrs] = next((v for k, v in pairs if k == "t"), "n") if unique else ""
            if t not in types:
                return None
            f_text = kind = array_ref = None
            if f_attrs is not None:
                kind = "normal"
                si = ref_attr = None
                if f_attrs:
                    fa = dict(_FAST_ATTR.findall(f_attrs))
                    if len(fa) != f_attrs.count('="'):
                        return None
                    kind, si, ref_attr = fa.get("t", "normal"), fa.get("si", ""), fa.get("ref")
                f_text = (f_body if "&" not in f_body else text(f_body)) if f_body else ""
                if f_text is None:
                    return None
                if kind == "shared":
                    if f_text:
                        shared[si] = (f_text, p[0], p[1])
                    elif si in shared:
                        base, r0, c0 = shared[si]
                        f_text = shift_formula(base, p[0] - r0, p[1] - c0)
                    else:
                        return None
                elif kind == "array":
                    array_ref = ref_attr or ref
                n_formulas += 1
                if n_formulas > max_formulas:
                    return None
            if not v:
                v = None
            elif "&" in v:
                v = text(v)
                if v is None:
                    return None
            if inline is not None and "&" in inline:
                inline = text(inline)
                if inline is None:
                    return None
            if p[0] > max_row:
                max_row = p[0]
            if p[1] > max_col:
                max_col = p[1]
            if ref in cells:
                return None
            if v is None and t != "inlineStr":
                value = None  # what _convert gives a cell without a value
            elif t == "n":  # _convert's number case, without the call
                if number(v) is None:
                    return None
                f = float(v)
                value = int(f) if f.is_integer() and "." not in v and "E" not in v and "e" not in v else f
            elif t == "s" and v.isdigit() and int(v) < n_strings:  # _convert's shared string (checks as there)
                value = strings[int(v)]
            else:
                try:
                    value = convert(v, t, strings, inline)
                except ValueError:
                    return None
            c = cells[ref] = new(CellView)  # _cell_view, inline
            d = c.__dict__
            d["ref"] = ref
            d["value"] = value
            d["type"] = t
            d["formula"] = f_text
            d["array_ref"] = array_ref
            d["formula_kind"] = kind
            if len(cells) > max_cells:
                return None
        em = row_end(region, pos)
        if em is None:
            return None
        pos = em.end()
    if region[pos:n].strip(" \t\n"):
        return None  # something else than rows of plain cells
    return cells, max_row, max_col


_SLOT = re.compile(r'(<v>|<t>|<t xml:space="preserve">)([^<]*)')
"""A value slot of a cell region (:class:`SheetMemo`): the text of a ``<v>`` (a cached value, the ``<v>``
alternative of :data:`_FAST_CELL`) or of an inline string's ``<t>`` (its ``<is><t>`` alternative), the start tag
captured as well. In a region :func:`_cells_by_search` reads, each of these start tags begins one such text (no
other element has those names, and no text or attribute value holds a ``<``)."""

SHEET_MEMO_BYTES = 32 * 1024 * 1024
"""Default budget of a :class:`SheetMemo` (bytes, as :meth:`SheetMemo.entry_bytes` counts them, an upper bound):
one template plan's 16 sheets count 13.7 MB (``tracemalloc`` saw 9.8 MB kept; 2026-12-05, template 2.8.0), so the
budget holds the template's sheets and a dozen variants of the one sheet whose markup follows the values (a results
cell with ``t="str"`` in one plan and a number in the next: 42 variants in 175 benchmark plans); the least recently
used entries go first. Over 100 plans of ``/tmp/bench-plans-16``: 1,564 of 1,600 sheets from the memo, 32.7 MB
counted, 23.2 MB by ``tracemalloc``. Since session 18 the results sheet's variants are kept row by row (1.9 MB over
those 100 plans) and :func:`planner.validate.checks.book_from_view` keeps the last book's flattening here (11.9 MB
counted): 27.6 MB counted after 100 plans, 1,571 of 1,600 sheets from the memo."""


@dataclass(slots=True, eq=False)
class _Skeleton:
    """What a sheet's cells give, the texts of its slots (:data:`_SLOT`) apart (:class:`SheetMemo`): ``base`` maps
    every cell in reading order to its view (for a cell with a slot, built per workbook: the view the last sighting
    built, which ``last_views`` holds too, or None before the first, after a refusal and for a shared string, so
    that a sighting's cells are a copy of it with the cells it builds in place); ``slotted``: for each
    of those cells in order, ``(ref, type, formula, array_ref, formula_kind, index of its <v> slot or -1, index of
    its inline-text slot or -1)``. ``last_texts`` and ``last_views``: the slot texts of the last sighting and the
    views built from them, of every slotted cell but shared strings (whose value depends on the workbook's strings
    too): a cell whose texts are those again gets that view again (a pure function of its texts and the skeleton).
    ``reuse_bytes``: what those two keep, as :meth:`SheetMemo.entry_bytes` counts."""

    base: dict[str, CellView | None]
    slotted: tuple[tuple[str, str, str | None, str | None, str | None, int, int], ...]
    n_formulas: int
    max_row: int
    max_col: int
    slot_cell: tuple[int, ...] = ()
    """For each slot, the index of its cell in ``slotted``."""
    shared_strings: tuple[int, ...] = ()
    """The indexes in ``slotted`` of the shared-string cells (``t="s"``), built anew each time."""
    last_texts: list[str] | None = None
    last_views: dict[str, CellView] = field(default_factory=dict)
    reuse_bytes: int = 0
    numbers: frozenset[int] = frozenset()
    """The indexes in ``slotted`` of the cells of type ``n`` with a ``<v>`` slot and no inline text (a template
    plan's commonest change: a cached number), converted together (:func:`_numbers_from_texts`)."""
    v_slots: tuple[int, ...] = ()
    """For each cell in ``slotted``, the index of its ``<v>`` slot or -1."""
    order: object = field(default_factory=object)
    """This skeleton's token (:attr:`SheetView.order`): ``base`` never gains, loses or reorders a key, so every
    ``cells`` served from it (``base.copy()``) has its references in its order."""
    prefixes: frozenset[str] = frozenset()
    """The attribute prefixes the skeleton's pieces use (:func:`_prefixes_used`): each must be declared in the root
    element of a part served from it (:meth:`SheetMemo.cells`)."""


class SheetMemo:
    """What the sheets of earlier workbooks gave, for a caller that reads many workbooks of one template (a batch
    worker): owned and passed by that caller (:func:`read_workbook`'s ``memo``), never process-wide.

    A worksheet's cell region (:func:`_split_sheet_data`) is cut at the texts of its ``<v>`` and inline ``<t>``
    elements (:data:`_SLOT`): what is left, the *skeleton*, fixes every cell's reference, type, formula (shared
    formulas expanded), array range, kind and the sheet's extent; the texts fill the slots. The first sighting of a
    skeleton is read as without a memo (:func:`_cells_by_search`) and kept when that read succeeded and every slot
    is proved to be one cell's value or inline text; a later region with an equal skeleton (the same string,
    compared in full, not a hash) gets those cells with its own texts converted exactly as
    :func:`_cells_by_search` converts them (number syntax, int or float, a shared-string index checked against
    *this* workbook's strings, ``&`` references, an empty ``<v></v>`` as no value), and None, as there, where that
    conversion refuses a text or a count is above *this* read's limits (the parser then reads the part).

    Worked example: a plan whose region is ``<row r="1"><c r="A1"><v>5</v></c></row>`` leaves the skeleton
    ``<row r="1"><c r="A1">`` + ``<v>`` + ``</v></c></row>`` (the pieces joined by a separator no region holds)
    with one slot holding ``5``; the next plan's ``<v>7.5</v>`` there reads as ``A1 = 7.5`` (a float) without a
    cell being matched.

    A part's head (every byte but the cells: dimension, data validations, rule formulas) is kept the same way, by
    its bytes, and so are a relationships part and a table part (by name, sheet and bytes). The last sighting's
    views of a skeleton are kept too: a cell whose texts are the same again gets its view again
    (:func:`_cells_from_skeleton`). Memory: at most ``max_bytes`` as :meth:`entry_bytes` counts it, least recently
    used entries dropped first; an entry above the budget alone is never kept. Nothing is kept from a read that
    failed, and nothing a caller gets can change an entry (views are frozen; dictionaries are copied).

    Since session 19 each part read is kept too, by its stored bytes (central-directory record, local header,
    compressed bytes; with its bytes when at most :data:`KEEP_PART_BYTES`): a read of the same stored bytes gets
    those bytes without inflating them (:meth:`Package.read`), and the writer copies such a part without inflating
    it (:meth:`Package.read_size`); the writer keeps its last answers here as well (:func:`_wanted_kept`). Those
    entries only save time: they are kept where they fit beside the others, never pushing one out.
    """

    def __init__(self, *, max_bytes: int = SHEET_MEMO_BYTES) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self.hits = self.misses = 0
        self._entries: OrderedDict[tuple[Any, ...], tuple[Any, int]] = OrderedDict()
        self._missed: set[str] = set()
        """Names of parts whose skeleton was missed once (:meth:`cells`): at most 256, of at most 200 characters."""
        self._by_rows: set[str] = set()
        """Names of parts whose last read was row by row (:meth:`cells`): read so first next time. At most 256, of
        at most 200 characters."""
        self._package: tuple[bytes, zipfile.ZipFile, Limits] | None = None
        """The last package read or written through this memo (:meth:`remember_package`): one, of at most
        :data:`KEEP_PACKAGE_BYTES` file bytes."""
        self.last_order: object | None = None
        """The :attr:`_Skeleton.order` of the cells the last :meth:`cells` gave whole from one skeleton, else None."""
        self._keys: dict[str, str] = {}
        """Part name -> the skeleton text of its last region kept (the key of an entry: held only while the entry
        is), whose hash is computed: a region with the same skeleton looks its entry up under that string, found
        equal by comparison, without hashing its own (a template plan's 1.5 MB: 0.4 ms). At most 256 names."""

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Drop every entry (a worker that ran out of memory)."""
        self._entries.clear()
        self._keys.clear()
        self._package = None
        self.bytes = 0

    def _keep(self, key: tuple[Any, ...], value: Any, size: int, *, evict: bool = True) -> None:
        """Keep (or resize) an entry of ``size`` bytes, the newest; drop the oldest while above the budget. An entry
        larger than the budget alone is dropped; with ``evict=False``, one that does not fit without dropping
        another (what only saves the writer time: it never pushes out what the reads need)."""
        old = self._entries.pop(key, None)
        if old is not None:
            self.bytes -= old[1]
        if size > (self.max_bytes if evict else self.max_bytes - self.bytes):
            self._forget_text(key)
            return
        self._entries[key] = (value, size)
        self.bytes += size
        while self.bytes > self.max_bytes:
            _k, (_v, n) = self._entries.popitem(last=False)
            self.bytes -= n
            self._forget_text(_k)

    def _forget_text(self, key: tuple[Any, ...]) -> None:
        """A ``cells`` entry dropped: its text no longer kept for a part's next region (:attr:`_keys`)."""
        if key[0] == "cells" and self._keys:
            self._keys = {p: k for p, k in self._keys.items() if k is not key[1]}

    def cells(
        self, region: str, *, strings: list[str], limits: Limits, part: str = "", raw: bytes | None = None,
        root_tag: bytes = b"",
    ) -> tuple[dict[str, CellView], int, int] | None:
        """:func:`_cells_by_search` of ``region`` (the same answer). ``part``: the part's name; a part whose skeleton
        was missed before (one whose markup follows its values, e.g. a results cell with ``t="str"`` in one plan and
        a number in the next) is read row by row on a miss (:meth:`_cells_by_rows`).

        ``raw``: the region's bytes, from :func:`_split_part`, whose checks of the cells (:func:`_cells_text_ok`,
        against ``root_tag``) are made here, None where they fail: of the whole region on a miss; of the slot texts
        alone (joined by ``<``) on a hit, whose pieces are those of a region that passed them, less their prefixes,
        checked against this ``root_tag``. Without ``raw`` the region is one :func:`_split_sheet_data` gave.

        A part whose last read was row by row (its markup follows its values: the whole region's skeleton, kept
        from its first sighting, is missed) is read row by row first, its whole region checked as on a miss, and
        looked up whole only where that gives None: the whole region is not cut into slots for a lookup that
        misses (its rows answer as the whole would, :meth:`_cells_by_rows`)."""
        all_ascii = region.isascii()
        rows_tried = False
        self.last_order = None
        if raw is not None and part in self._by_rows:
            if not _cells_text_ok(raw, region, root_tag):
                self.misses += 1
                return None
            found = self._cells_by_rows(region, strings, limits, all_ascii)  # (counts its own hit or miss)
            if found is not None:
                return found
            self._by_rows.discard(part)
            rows_tried = True
        parts = _SLOT.split(region)  # piece, start tag, text, piece, start tag, text, ..., piece
        texts = parts[2::3]
        del parts[2::3]
        text = "\x00".join(parts)  # "\x00" is in no region (_split_part refuses it)
        last = self._keys.get(part)
        if last is not None and last == text:
            text = last  # the same characters, hashed before
        key = ("cells", text)
        got = self._entries.get(key)
        if got is not None:
            if last is not text and len(part) <= 200:  # kept under this text from now on (one string held)
                del self._entries[key]
                self._entries[key] = got
                if len(self._keys) >= 256:
                    self._keys.clear()
                self._keys[part] = text
            if raw is not None and not rows_tried:
                joined = "<".join(texts)
                if not (_cells_text_ok(joined.encode(), joined, root_tag)
                        and _prefixes_declared(got[0].prefixes, root_tag)):
                    self.misses += 1
                    return None
            self.hits += 1
            out = self._served(key, got, texts, strings, limits, all_ascii)
            if out is not None:
                self.last_order = got[0].order  # (base.copy(): the skeleton's references in its order)
            return out
        if raw is not None and not rows_tried and not _cells_text_ok(raw, region, root_tag):
            self.misses += 1
            return None
        if part in self._missed:
            if not rows_tried:
                found = self._cells_by_rows(region, strings, limits, all_ascii)  # (counts its own hit or miss)
                if found is not None:
                    if len(self._by_rows) >= 256:
                        self._by_rows.clear()
                    self._by_rows.add(part)  # (a name in _missed: at most 200 characters)
                    return found
        elif len(part) <= 200:  # (a name is kept, bounded in number and length; counted in entry_bytes' 200s)
            if len(self._missed) >= 256:
                self._missed.clear()
            self._missed.add(part)
        self.misses += 1
        found = _cells_by_search(region, strings, limits)
        if found is not None:
            self._remember_cells(key, region, parts, texts, found, all_ascii)
        return found

    def _served(self, key: tuple[Any, ...], got: tuple[Any, int], texts: list[str], strings: list[str],
                limits: Limits, all_ascii: bool) -> tuple[dict[str, CellView], int, int] | None:
        """The cells of a region whose skeleton is the entry ``got`` under ``key``, with these ``texts``
        (:func:`_cells_from_skeleton`); the entry's count follows the views it keeps for the next sighting."""
        self._entries.move_to_end(key)
        skeleton = got[0]
        before = skeleton.reuse_bytes
        out = _cells_from_skeleton(skeleton, texts, strings, limits, all_ascii=all_ascii)
        if skeleton.last_texts is None:  # refused half-way: its views are of no one sighting, and not counted
            skeleton.last_views.clear()
            skeleton.base.update(dict.fromkeys(map(itemgetter(0), skeleton.slotted)))  # (None: as before the first)
            skeleton.reuse_bytes = 0
        if skeleton.reuse_bytes != before:  # the views kept for the next sighting changed: the entry's size
            self._keep(key, skeleton, got[1] - before + skeleton.reuse_bytes)
        return out

    def _remember_cells(self, key: tuple[Any, ...], region: str, parts: list[str], texts: list[str],
                        found: tuple[dict[str, CellView], int, int], all_ascii: bool) -> None:
        """Keep the skeleton of ``region`` (``parts`` and ``texts``: cut as :meth:`cells` cuts it) that
        :func:`_cells_by_search` read as ``found``, when its slots are proved to be the cells' (:func:`_skeleton`)."""
        n_tags = region.count("<v>") + region.count("<t>") + region.count('<t xml:space="preserve">')
        skeleton = _skeleton(parts, found, n_tags)
        if skeleton is not None:
            skeleton.prefixes = frozenset(_prefixes_used("<".join(parts)))
            _keep_views(skeleton, texts, found[0], all_ascii=all_ascii)
            n = self.entry_bytes(key[1], skeleton)  # (the views last_views holds: counted there, not in base)
            skeleton.base.update(skeleton.last_views)
            self._keep(key, skeleton, n)

    def _cells_by_rows(self, region: str, strings: list[str], limits: Limits,
                       all_ascii: bool) -> tuple[dict[str, CellView], int, int] | None:
        """:func:`_cells_by_search` of ``region`` read as pieces cut after each ``</row>`` (a piece: one row, with
        the empty rows ``<row .../>`` before it; the text after the last ``</row>`` a piece of its own unless
        blank), each piece as a region of its own (an entry ``("rows", skeleton)`` for each, served or kept as
        :meth:`cells` does for a whole region), or None: the caller then reads the whole region.

        The same answer as the whole region's, when it is not None: each piece is read alone as
        :func:`_cells_by_search` reads it (rows of cells only, nothing after the last row but blanks), and that
        reader's only state across rows is the cells read (a duplicate: refused here too, the count of the merged
        cells below the sum of the pieces'), the counts under ``limits`` (checked on the sums), the extent (the
        pieces' largest) and the shared formulas: a piece read alone finds a shared formula's first cell only in
        itself, and there it is the last one before the cell in the whole region too. A new piece's entry is kept
        only when the whole region was read so. Worked example: a results sheet of 68 rows whose plans differ in
        the ``t="str"`` of a few cells finds 66 rows in the memo and reads two.
        """
        pieces = region.split("</row>")
        if len(pieces) > 4096:
            return None  # (a sheet of many rows: its entries would crowd the memo out)
        last = pieces.pop()
        chunks = [p + "</row>" for p in pieces]
        if last.strip(" \t\n"):
            chunks.append(last)
        cells: dict[str, CellView] = {}
        n_cells = n_formulas = max_row = max_col = 0
        new: list[tuple[tuple[str, str], str, list[str], list[str], tuple[dict[str, CellView], int, int]]] = []
        for chunk in chunks:
            parts = _SLOT.split(chunk)
            texts = parts[2::3]
            del parts[2::3]
            key = ("rows", "\x00".join(parts))
            got = self._entries.get(key)
            if got is not None:
                found = self._served(key, got, texts, strings, limits, all_ascii)
                if found is None:
                    return None
                n_formulas += got[0].n_formulas
            else:
                found = _cells_by_search(chunk, strings, limits)
                if found is None:
                    return None
                new.append((key, chunk, parts, texts, found))
                n_formulas += sum(1 for c in found[0].values() if c.formula is not None)
            part_cells, r, c = found
            cells.update(part_cells)
            n_cells += len(part_cells)
            max_row = max(max_row, r)
            max_col = max(max_col, c)
        if len(cells) != n_cells or n_cells > limits.max_cells or n_formulas > limits.max_formula_cells:
            return None
        for key, chunk, parts, texts, found in new:
            self._remember_cells(key, chunk, parts, texts, found, all_ascii)
        if new:
            self.misses += 1
        else:
            self.hits += 1  # every row from the memo
        return cells, max_row, max_col

    def head(self, head: bytes) -> tuple[str | None, int, tuple[tuple[str, str], ...]] | None:
        """(dimension, data validations, rule formulas) of a part's head read before, else None."""
        key = ("head", head)
        got = self._entries.get(key)
        if got is None:
            return None
        self._entries.move_to_end(key)
        return got[0]  # type: ignore[no-any-return]

    def remember_head(self, head: bytes, *, dimension: str | None, n_dv: int,
                      rules: tuple[tuple[str, str], ...]) -> None:
        """Keep what :func:`_read_sheet` found in ``head`` (a part with ``<sheetData/>`` for its cells)."""
        size = sys.getsizeof
        n = (size(head) + size(rules) + sum(size(r) + size(r[0]) + size(r[1]) for r in rules)
             + (size(dimension) if dimension is not None else 0) + 200)
        self._keep(("head", head), (dimension, n_dv, rules), n)

    def stored_part(self, name: str) -> tuple[tuple[Any, ...], bytes, bytes, int, bytes | None] | None:
        """The last part read under ``name`` (:meth:`Package.read_size`): its record, stored bytes, length, and
        its bytes when at most :data:`KEEP_PART_BYTES`."""
        got = self._entries.get(("stored", name))
        if got is None:
            return None
        self._entries.move_to_end(("stored", name))
        return got[0]  # type: ignore[no-any-return]

    def remember_stored(self, name: str, value: tuple[tuple[Any, ...], bytes, bytes, int, bytes | None]) -> None:
        """Keep a part read under ``name`` (the last one: an entry a name), counted as its name, record, stored
        bytes and bytes, and 200 bytes."""
        size = sys.getsizeof
        self._keep(("stored", name), value,
                   size(name) + size(value[0]) + sum(map(size, value[0])) + size(value[1]) + size(value[2])
                   + (size(value[4]) if value[4] is not None else 0) + 200, evict=False)

    def take_package(self) -> tuple[bytes, zipfile.ZipFile, Limits] | None:
        """Take the package :meth:`remember_package` kept (None when none is): the slot is empty after."""
        got, self._package = self._package, None
        return got

    def remember_package(self, data: bytes, zf: zipfile.ZipFile, limits: Limits) -> None:
        """Keep the last package read or written (:func:`open_package`) in this memo's one package slot: the file's
        ``data``, the zip file ``zf`` reading them from memory, and the ``limits`` its checks passed under, for the
        next :func:`open_package` through this memo (a recalculation's write of the plan its read just read: the zip
        directory not parsed again). Only a file of at most :data:`KEEP_PACKAGE_BYTES`: the slot holds at most that
        and the zip file's entry records (about 400 bytes an entry with their strings: 31 KB for a template plan's
        77), outside ``max_bytes`` (the budget's entries never make room for it, nor it for them)."""
        self._package = (data, zf, limits) if len(data) <= KEEP_PACKAGE_BYTES else None

    def part(self, key: tuple[Any, ...]) -> Any:
        """What :func:`_rels` or :func:`_read_table` gave for ``key`` (kind, part name, sheet, the part's bytes)
        before, else None."""
        got = self._entries.get(key)
        if got is None:
            return None
        self._entries.move_to_end(key)
        return got[0]

    def take(self, key: tuple[Any, ...]) -> Any:
        """Take the entry ``key`` out (its bytes no longer counted): its value, or None. A caller that changes a
        kept value takes it first and keeps it again after (:meth:`keep`), so that nothing half-changed stays."""
        got = self._entries.pop(key, None)
        if got is None:
            return None
        self.bytes -= got[1]
        return got[0]

    def keep(self, key: tuple[Any, ...], value: Any, *, size: int, evict: bool = True) -> None:
        """Keep ``value`` under ``key`` (a tuple whose first item names the kind of entry: ``"flat"`` is
        :func:`planner.validate.checks.book_from_view`'s), counted as ``size`` bytes, the caller's upper bound of
        what it keeps alive; the least recently used entries go first, and a value above the budget alone is not
        kept; with ``evict=False`` neither is one that does not fit beside the others."""
        self._keep(key, value, size, evict=evict)

    def remember_part(self, key: tuple[Any, ...], value: dict[str, tuple[str, str]] | TableView) -> None:
        """Keep what a relationships or table part gave: counted as the key's strings and bytes, the value's
        strings and containers, and 200 bytes."""
        size = sys.getsizeof
        n = 200 + size(key) + sum(size(x) for x in key)
        if isinstance(value, TableView):
            n += size(value) + size(value.__dict__) + size(value.columns) + sum(map(size, value.columns)) + sum(
                size(x) for x in (value.name, value.sheet, value.ref, value.part))
        else:
            n += size(value) + sum(size(k) + size(v) + size(v[0]) + size(v[1]) for k, v in value.items())
        self._keep(key, value, n)

    @staticmethod
    def entry_bytes(skeleton_text: str, skeleton: _Skeleton) -> int:
        """The bytes an entry keeps alive, by :func:`sys.getsizeof`: its skeleton text, the base dictionary, each
        cell view kept there (object, attribute dictionary, reference, formula, array range, value), each slotted
        cell (tuple, reference, formula, array range), the last sighting's texts and views (:func:`_keep_views`),
        plus 200 for the key and the ordered dictionary's link. An
        object two of them share is counted at each (an upper bound: 13.7 MB counted where ``tracemalloc`` saw
        9.8 MB kept for one template plan); ``None``, small integers and the type letters are the process's own."""
        size = sys.getsizeof
        n = (size(skeleton_text) + size(skeleton.base) + size(skeleton.slotted) + 200 + skeleton.reuse_bytes
             + size(skeleton.numbers) + size(skeleton.v_slots))
        if skeleton.prefixes:
            n += size(skeleton.prefixes) + sum(map(size, skeleton.prefixes))
        view_size = 0
        for c in skeleton.base.values():
            if c is not None:
                d = c.__dict__
                if not view_size:
                    view_size = size(c) + size(d)
                n += view_size + size(d["ref"])
                for k in ("formula", "array_ref", "value"):
                    if d[k] is not None:
                        n += size(d[k])
        for slot in skeleton.slotted:
            n += size(slot) + size(slot[0])
            for x in slot[2:5]:
                if x is not None:
                    n += size(x)
        return n


def _skeleton(parts: list[str], found: tuple[dict[str, CellView], int, int], n_tags: int) -> _Skeleton | None:
    """The :class:`_Skeleton` of a region :func:`_cells_by_search` read as ``found``; ``parts``: the region cut by
    :data:`_SLOT` less the texts (piece, start tag, piece, ..., piece); ``n_tags``: the region's count of the three
    start tags. None when the slots cannot be proved to be the cells' values and inline texts: every start tag must
    begin a slot (``n_tags`` equal to the slots); a slot belongs to the cell of the last ``<c r="`` before it (a
    cell's start: no ``<`` is in a value, text or attribute), or, with none since the slot before, to that slot's
    cell, as the inline text after its ``<v>``; a cell has at most one of each."""
    cells, max_row, max_col = found
    n_slots = len(parts) // 2
    if n_tags != n_slots:
        return None
    base: dict[str, CellView | None] = dict(cells)
    slotted: list[tuple[str, str, str | None, str | None, str | None, int, int]] = []
    for k in range(n_slots):
        piece, tag = parts[2 * k], parts[2 * k + 1]
        at = piece.rfind('<c r="')
        if at == -1:  # in the cell of the slot before: its inline text after its <v>
            if not slotted or tag == "<v>" or slotted[-1][5] != k - 1 or slotted[-1][6] != -1:
                return None
            slotted[-1] = slotted[-1][:6] + (k,)
            continue
        ref = piece[at + 6 : piece.find('"', at + 6)]
        c = base.get(ref)
        if c is None:
            return None  # not a cell, or a second slot in a cell
        base[ref] = None
        v_k, t_k = (k, -1) if tag == "<v>" else (-1, k)
        slotted.append((c.ref, c.type, c.formula, c.array_ref, c.formula_kind, v_k, t_k))
    n_formulas = sum(1 for c in cells.values() if c.formula is not None)
    slot_cell = [0] * n_slots
    for i, cell in enumerate(slotted):
        for k in cell[5:]:
            if k >= 0:
                slot_cell[k] = i
    return _Skeleton(base=base, slotted=tuple(slotted), n_formulas=n_formulas, max_row=max_row, max_col=max_col,
                     slot_cell=tuple(slot_cell),
                     shared_strings=tuple(i for i, cell in enumerate(slotted) if cell[1] == "s"),
                     numbers=frozenset(i for i, cell in enumerate(slotted) if cell[1] == "n" and cell[6] == -1),
                     v_slots=tuple(cell[5] for cell in slotted))


_VIEW_BYTES = sys.getsizeof(_cell_view("A1", None, "n", None, None, None)) + sys.getsizeof(
    _cell_view("A1", None, "n", None, None, None).__dict__)
"""A cell view's object and attribute dictionary (its strings and value apart)."""
VIEW_BYTES = _VIEW_BYTES


def _keep_views(skeleton: _Skeleton, texts: list[str], cells: dict[str, CellView], *, all_ascii: bool = False) -> None:
    """Keep ``texts`` and the views of ``cells`` built from them (every slotted cell but shared strings) for the
    next sighting (:func:`_cells_from_skeleton`)."""
    skeleton.last_views = {ref: cells[ref] for ref, t, *_rest in skeleton.slotted if t != "s"}
    _kept(skeleton, texts, all_ascii=all_ascii)


_ASCII_STR_BYTES = sys.getsizeof("")
"""A str of ASCII characters takes this many bytes and one per character (:func:`sys.getsizeof`)."""


def _kept(skeleton: _Skeleton, texts: list[str], *, all_ascii: bool = False) -> None:
    """``texts`` are the last sighting's (``all_ascii``: all of them ASCII, e.g. cut from an ASCII region), and
    ``last_views`` the views built from them: what they hold, counted as the texts list and each text, the views
    dictionary, and per view its object and attribute dictionary, 200 bytes, and twice its texts (its value is a
    number of at most 164 bytes, a boolean, None, or a text or error no longer than its text: 117 bytes for
    ``#N/A``). Worked example: a template plan's 10,492 slotted cells hold
    7.9 MB by this count."""
    size = sys.getsizeof
    views = skeleton.last_views
    skeleton.last_texts = texts
    # an ASCII text of n characters takes _ASCII_STR_BYTES + n bytes: the same sum as the sizes', without a call each
    texts_bytes = _ASCII_STR_BYTES * len(texts) + sum(map(len, texts)) if all_ascii else sum(map(size, texts))
    skeleton.reuse_bytes = size(texts) + 3 * texts_bytes + size(views) + len(views) * (_VIEW_BYTES + 200)


_NUMBER_CHARS = b"0123456789+-.eE"
"""The characters of a :data:`_NUMBER` text."""
_SIGNS = methodcaller("lstrip", "+-")


def _numbers_from_texts(texts: tuple[str, ...]) -> list[float | int] | None:
    """The values :func:`_cells_by_search` gives cells of type ``n`` with these ``<v>`` texts (at least two), each
    converted as there: every text a number (:data:`_NUMBER`), a float, or an int where the text has no ``.`` nor
    exponent and the float is whole. None when a text is not a number (an empty one, an entity, ...): the caller
    converts them one by one, as there (and refuses). Worked example: ``("4", "4.5", "-2", "1e3")`` gives
    ``[4, 4.5, -2, 1000.0]``.

    Every text a :data:`_NUMBER` is told without the pattern: the texts' bytes hold nothing but
    :data:`_NUMBER_CHARS` (one ``bytes.translate`` over them all) and :func:`float` takes each. Over those
    characters :func:`float`'s grammar (sign, digits with at most one ``.``, at least one digit, an optional
    exponent of ``e`` or ``E``, a sign and digits; its other spellings need letters, ``_`` or blanks) is
    :data:`_NUMBER`'s: ``"1e"``, ``"."``, ``"+-1"``, ``""`` fail both (tests/test_speed21.py compares the two over
    random texts)."""
    if "".join(texts).encode("utf-8", "replace").translate(None, _NUMBER_CHARS):
        return None  # a character no number has (an entity's "&", a blank, a letter, a non-ASCII digit...)
    try:
        values: list[float | int] = list(map(float, texts))
    except ValueError:
        return None
    # a number with no "." and no exponent is an int when whole: [+-]digits (the test above allows nothing else);
    # the whole ones found first, in C (few of a plan's changed numbers are), their texts looked at after
    for i in compress(range(len(texts)), map(float.is_integer, values)):  # (not an overflowing inf, nor a NaN)
        if _SIGNS(texts[i]).isdigit():
            values[i] = int(values[i])
    return values


def _cells_from_skeleton(
    skeleton: _Skeleton, texts: list[str], strings: list[str], limits: Limits, *, all_ascii: bool = False
) -> tuple[dict[str, CellView], int, int] | None:
    """:func:`_cells_by_search` of a region with this skeleton and these slot ``texts``: each value converted as
    there (each branch below is one of its own, in its order), None where it returns None (a value or inline text
    its conversion refuses, more cells or formula cells than ``limits`` allow).

    A cell whose slot texts are all the last sighting's gets the view built from them then (a pure function of
    its texts and the skeleton), except a shared string, whose value depends on this workbook's strings too: only
    the other cells are built, and kept for the next sighting. While they are built the kept views are not those
    of one sighting: a refusal leaves none to reuse (``last_texts`` None), and the next sighting builds every cell.
    """
    base = skeleton.base
    if len(base) > limits.max_cells or skeleton.n_formulas > limits.max_formula_cells:
        return None
    cells = base.copy()  # (every cell but shared strings as last time: base holds the last sighting's views)
    slotted, views, last = skeleton.slotted, skeleton.last_views, skeleton.last_texts
    todo: Iterable[int]
    if last is not None and len(last) == len(texts):
        slot_cell = skeleton.slot_cell
        todo = set(compress(slot_cell, map(ne, texts, last)))  # the cells of the slots whose text changed
        todo.update(skeleton.shared_strings)
    else:
        todo = range(len(slotted))
    skeleton.last_texts = None
    number, n_strings, new, text, convert = _NUMBER.fullmatch, len(strings), object.__new__, _fast_text, _convert
    if last is not None and len(todo) > 1:
        nums = todo & skeleton.numbers  # type: ignore[operator]
        if len(nums) > 1:
            idx = list(nums)
            values = _numbers_from_texts(itemgetter(*itemgetter(*idx)(skeleton.v_slots))(texts))
            if values is not None:  # else each is converted below (and refused there, as alone)
                todo -= nums  # type: ignore[operator]
                for i, value in zip(idx, values):
                    ref, t, f_text, array_ref, kind, _v_k, _t_k = slotted[i]
                    c = cells[ref] = new(CellView)  # _cell_view, inline
                    d = c.__dict__
                    d["ref"] = ref
                    d["value"] = value
                    d["type"] = t
                    d["formula"] = f_text
                    d["array_ref"] = array_ref
                    d["formula_kind"] = kind
                    views[ref] = base[ref] = c
    for i in todo:
        ref, t, f_text, array_ref, kind, v_k, t_k = slotted[i]
        v = texts[v_k] if v_k >= 0 else None
        if not v:
            v = None
        elif "&" in v:
            v = text(v)
            if v is None:
                return None
        inline = texts[t_k] if t_k >= 0 else None
        if inline is not None and "&" in inline:
            inline = text(inline)
            if inline is None:
                return None
        # _cells_by_search's conversion, inlined here as there (a call per cell costs more than the memo saves on
        # it); tests/test_sheet_memo.py reads every case through both and compares the views
        if v is None and t != "inlineStr":
            value = None
        elif t == "n":
            if number(v) is None:
                return None
            f = float(v)
            value = int(f) if f.is_integer() and "." not in v and "E" not in v and "e" not in v else f
        elif t == "s" and v.isdigit() and int(v) < n_strings:
            value = strings[int(v)]
        else:
            try:
                value = convert(v, t, strings, inline)
            except ValueError:
                return None
        c = cells[ref] = new(CellView)  # _cell_view, inline
        d = c.__dict__
        d["ref"] = ref
        d["value"] = value
        d["type"] = t
        d["formula"] = f_text
        d["array_ref"] = array_ref
        d["formula_kind"] = kind
        if t != "s":
            views[ref] = base[ref] = c
    _kept(skeleton, texts, all_ascii=all_ascii)
    return cells, skeleton.max_row, skeleton.max_col  # type: ignore[return-value]


def _read_sheet(
    pkg: Package, part: str, strings: list[str], limits: Limits, rules: list[tuple[str, str]] | None = None,
    memo: SheetMemo | None = None,
) -> tuple[dict[str, CellView], str | None, int, int, int, bool]:
    """The cells of one sheet, read where spreadsheet applications read them (``sheetData/row/c``); with ``rules``,
    the formulas outside cells (conditional formatting, data validation, their ``x14`` extensions) are appended to
    it as ``(sqref, formula text)``: Excel evaluates them too. The last item: the cells were read by search
    (:attr:`SheetView.plain`). ``memo``: what earlier sheets with the same markup gave (:class:`SheetMemo`); the
    same answer, sooner."""
    cells: dict[str, CellView] = {}
    shared: dict[str, tuple[str, int, int]] = {}
    dimension = None
    n_dv = 0
    max_row = max_col = 0
    n_formulas = 0
    local = _local
    max_cells = limits.max_cells
    root = None
    data = pkg.read(part)
    split = _split_part(data)
    if split is not None:  # the cells by regular expressions, the rest of the part by the parser
        if memo is None:
            found = (_cells_by_search(split[2], strings, limits) if _cells_text_ok(split[1], split[2], split[3])
                     else None)  # (_split_sheet_data's checks)
        else:  # (the memo makes those checks on what is new)
            found = memo.cells(split[2], strings=strings, limits=limits, part=part, raw=split[1], root_tag=split[3])
        if found is not None:
            if memo is not None:
                known = memo.head(split[0])
                if known is not None:  # this head (every byte of the part but its cells) was read before
                    if rules is not None:
                        rules += known[2]
                    return found[0], known[0], known[1], found[1], found[2], True
            try:
                head = _c_fromstring(split[0])
            except ParseError:
                head = None  # the parser reads the whole part, and reports the error at its real position
            if head is not None and [local(top.tag) for top in head].count("sheetData") == 1:
                root = head
                cells, max_row, max_col = found
    n_rules = len(rules) if rules is not None else 0
    for top in root if root is not None else _tree(pkg, part, data):
        if local(top.tag) != "sheetData":
            sqref = ""
            for el in top.iter():  # everything but the cells: dimension, data validations, rule formulas
                tag = local(el.tag)
                if tag == "dimension":
                    dimension = el.get("ref")
                elif tag == "dataValidation":
                    n_dv += 1
                    if rules is not None:
                        rules += [(el.get("sqref", ""), x.text) for x in el.iter()
                                  if local(x.tag) in _RULE_TAGS and x.text]
                    el.clear()  # its formulas are taken: the walk does not visit them again
                elif rules is not None:
                    if tag in ("conditionalFormatting", "sqref"):
                        sqref = el.get("sqref") or (el.text or "")
                    elif tag in _RULE_TAGS and el.text:
                        rules.append((sqref, el.text))
            continue
        if root is not None:
            continue  # its cells were read by search
        for row_el in top:
            if local(row_el.tag) != "row":
                continue
            r_attr = row_el.get("r")
            if r_attr is not None and not (r_attr.isdigit() and 0 < int(r_attr) <= MAX_ROW):
                raise WorkbookError(pkg.path, f"{part}: row number r={r_attr!r} is not a row of the sheet grid",
                                    part=part)
            for el in row_el:
                if local(el.tag) != "c":
                    continue
                ref = el.get("r")
                pos = _grid_position(ref)
                if pos is None:
                    raise WorkbookError(pkg.path, f"{part}: cell reference r={ref!r} is not on the sheet grid (A1 to "
                                                  "XFD1048576)", part=part)
                cur_row, cur_col = pos
                t = el.get("t", "n")
                if t not in _CELL_TYPES:
                    raise WorkbookError(pkg.path, f"{part}: cell {ref} has the unknown type t={t!r}", part=part)
                v = f_text = None
                inline = None
                kind = array_ref = None
                for child in el:
                    ct = local(child.tag)
                    if ct == "v":
                        if v is None:  # the first <v> with text (an empty <v/> before it is tolerated)
                            v = child.text
                    elif ct == "f":
                        kind = child.get("t", "normal")
                        f_text = child.text or ""
                        if kind == "shared":
                            si = child.get("si", "")
                            if f_text:
                                shared[si] = (f_text, cur_row, cur_col)
                            elif si in shared:
                                base, r0, c0 = shared[si]
                                f_text = shift_formula(base, cur_row - r0, cur_col - c0)
                            else:
                                raise WorkbookError(pkg.path, f"{part}: cell {ref} uses shared formula si={si!r}, "
                                                              "which no cell before it defines", part=part)
                        elif kind == "array":
                            array_ref = child.get("ref") or ref
                    elif ct == "is":
                        inline = "".join(x.text or "" for x in child.iter() if local(x.tag) == "t")
                if cur_row > max_row:
                    max_row = cur_row
                if cur_col > max_col:
                    max_col = cur_col
                if f_text is not None:
                    n_formulas += 1
                    if n_formulas > limits.max_formula_cells:
                        raise WorkbookError(
                            pkg.path,
                            f"{part}: more than {limits.max_formula_cells} formula cells (max_formula_cells)",
                            kind="limit", part=part,
                        )
                if ref in cells:
                    raise WorkbookError(pkg.path, f"{part}: cell {ref} appears twice (readers disagree on which "
                                                  "counts)", kind="duplicate", part=part)
                try:
                    value = _convert(v, t, strings, inline)
                except ValueError as exc:
                    raise WorkbookError(pkg.path, f"{part}: cell {ref}: {exc}", part=part) from None
                cells[ref] = _cell_view(ref, value, t, f_text, array_ref, kind)  # type: ignore[arg-type]
                if len(cells) > max_cells:
                    raise WorkbookError(
                        pkg.path, f"{part}: more than {limits.max_cells} cells (max_cells)", kind="limit", part=part
                    )
    if memo is not None and root is not None and rules is not None and split is not None:
        memo.remember_head(split[0], dimension=dimension, n_dv=n_dv, rules=tuple(rules[n_rules:]))
    return cells, dimension, n_dv, max_row, max_col, root is not None


_RULE_TAGS = frozenset({"formula", "formula1", "formula2", "f"})


def read_workbook(
    path: str | Path, limits: Limits = DEFAULT_LIMITS, *, sheets: tuple[str, ...] | None = None,
    memo: SheetMemo | None = None,
) -> WorkbookView:
    """Read ``path`` (xlsx/xlsm) into a :class:`WorkbookView` without evaluating anything.

    Each sheet's cells map ``"B3"`` → :class:`CellView` (cached value converted: numbers as int/float, shared strings
    resolved, booleans as bool, errors as :class:`XlError` texts such as ``"#VALUE!"``), with ``formula`` the
    text without ``=`` (shared formulas are expanded for every cell of the group; an array formula has
    ``formula_kind == "array"`` and ``array_ref``). With ``sheets`` only those sheets (any case) are parsed, the
    fastest way to read a few sheets of a big workbook. With ``memo`` (a :class:`SheetMemo` the caller keeps across
    the workbooks it reads) a sheet whose markup an earlier sheet had, cached values apart, is read from that
    sheet's cells and this one's values: the same view, sooner (for a batch of plans of one template). Raises
    :class:`WorkbookError` (message names the file) for anything that is not a readable, within-limits workbook; its
    ``kind`` says why, and ``part`` / ``sheet`` where, when known.

    Example::

        view = read_workbook("plan.xlsx")
        view.sheet("Routes").cells["B3"].value
    """
    with open_package(path, limits, memo=memo) as pkg:  # (the parts it reads: the writer's, not inflated again)
        wb_rels = _rels(pkg, "xl/workbook.xml", memo)
        sheets_meta: list[tuple[str, str, str]] = []
        sheet_kinds: dict[str, str] = {}
        defined: dict[str, str] = {}
        local_ids: list[tuple[int, str, str]] = []
        calc_on_load = False
        for _ev, el in _events(pkg, "xl/workbook.xml"):
            tag = _local(el.tag)
            if tag == "calcPr":
                calc_on_load = el.get("fullCalcOnLoad", "").strip().lower() in ("1", "true")
            elif tag == "sheet":
                rid = el.get(f"{{{NS_REL}}}id", "")
                kind, target = wb_rels.get(rid, ("", ""))
                sheet_kinds[el.get("name", "")] = kind
                sheets_meta.append(
                    (el.get("name", ""), target if kind == "worksheet" else "", el.get("state", "visible"))
                )
            elif tag == "definedName":
                name = el.get("name", "")
                if el.get("localSheetId") is not None:
                    local_ids.append((_int_attr(pkg, "xl/workbook.xml", el, "localSheetId", "0"), name,
                                      el.text or ""))
                else:
                    defined[name] = el.text or ""
        _check_unique(pkg, "sheet", [m[0] for m in sheets_meta])
        for idx, name, text in local_ids:
            if 0 <= idx < len(sheets_meta):
                defined[f"{sheets_meta[idx][0]}!{name}"] = text
        strings_part = next((t for k, t in wb_rels.values() if k == "sharedStrings"), None)
        strings = _shared_strings(pkg, strings_part)
        externals = tuple(t for k, t in wb_rels.values() if k == "externalLink")
        ext_targets = []
        for ext in externals:
            for _k, target in _rels(pkg, ext).values():
                ext_targets.append(target)
        views = []
        tables: dict[str, TableView] = {}
        for name, part, state in sheets_meta:
            if not part or not pkg.has(part):
                continue  # chartsheets and dialog sheets carry no cells
            if sheets is not None and name.lower() not in {x.lower() for x in sheets}:
                continue
            try:
                rules: list[tuple[str, str]] = []
                cells, dim, n_dv, mr, mc, plain = _read_sheet(pkg, part, strings, limits, rules, memo)
                # (plain with a memo: the cells are what memo.cells gave, its last call for this part)
                order = memo.last_order if memo is not None and plain else None
            except WorkbookError as exc:
                exc.sheet = name
                raise
            names = []
            for kind, tpart in _rels(pkg, part, memo).values():
                if kind == "table" and pkg.has(tpart):
                    tv = _read_table(pkg, tpart, name, memo)
                    _check_unique(pkg, "table", [*tables, tv.name])
                    tables[tv.name] = tv
                    names.append(tv.name)
            views.append(
                SheetView(
                    name=name,
                    part=part,
                    cells=cells,
                    dimension=dim,
                    data_validations=n_dv,
                    tables=tuple(names),
                    state=state,
                    max_row=mr,
                    max_col=mc,
                    rule_formulas=tuple(rules),
                    plain=plain,
                    order=order,
                )
            )
        pkg.keep_reads()
        return WorkbookView(
            path=str(path),
            sheets=tuple(views),
            tables=tables,
            defined_names=defined,
            external_links=tuple(ext_targets) or externals,
            has_vba=any(n.lower().endswith("vbaproject.bin") for n in pkg.names),
            parts=tuple(pkg.names),
            sheet_kinds=sheet_kinds,
            vba_parts=tuple(t for k, t in wb_rels.values() if k.lower() == "vbaproject"),
            calc_on_load=calc_on_load,
            memo=memo,
        )


def _read_table(pkg: Package, part: str, sheet: str, memo: SheetMemo | None = None) -> TableView:
    """The table part ``part`` of sheet ``sheet``; ``memo``: the answer for these bytes when read before."""
    name = ref = ""
    hdr, tot = 1, 0
    cols: list[str] = []
    data = pkg.read(part)
    if memo is not None:
        key = ("table", part, sheet, data)
        known = memo.part(key)
        if known is not None:
            return known  # type: ignore[no-any-return]
    for _ev, el in _events(pkg, part, data=data):
        tag = _local(el.tag)
        if tag == "tableColumn":
            cols.append(el.get("name", ""))
        elif tag == "table":
            name = el.get("displayName") or el.get("name", "")
            ref = el.get("ref", "")
            hdr = _int_attr(pkg, part, el, "headerRowCount", "1")
            tot = _int_attr(pkg, part, el, "totalsRowCount", "0")
    view = TableView(
        name=name, sheet=sheet, ref=ref, columns=tuple(cols), header_row_count=hdr, totals_row_count=tot, part=part
    )
    if memo is not None:
        memo.remember_part(key, view)
    return view


# ---------------------------------------------------------------------------------------------------------------------
# Writing
#
# The sheet XML is not re-serialised: a small XML lexer (comments, CDATA, processing instructions, start/end/empty
# tags with quoted attributes) walks the part, resolves namespace prefixes as it goes, and copies every byte it does
# not have to change. Only the ``<c>`` elements of the requested cells are rebuilt: their start tag keeps every
# attribute but ``t`` (set anew), their ``<v>``/``<is>`` children are replaced by one ``<v>`` placed after ``<f>``,
# and every other child (``<f>``, ``<extLst>``) is kept as it was. Any prefix (``<x:c>``), quoting style, empty
# ``<v/>``/``<v />``, cells without ``r=`` (position implied by order) and the strict-OOXML namespace are understood.

SPREADSHEET_NAMESPACES = frozenset({NS_MAIN.encode(), b"http://purl.oclc.org/ooxml/spreadsheetml/main"})

_TOKEN = re.compile(
    rb"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>|<!(?:[^>\"']|\"[^\"]*\"|'[^']*')*>"
    rb"|<(/?)([^\s/>]+)((?:[^>\"']|\"[^\"]*\"|'[^']*')*)>",
    re.S,
)
_ATTR = re.compile(rb"""(\s+)([^\s=]+)\s*=\s*("[^"]*"|'[^']*')""")
_XML_BAD_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_FULLCALC_RE = re.compile(rb"<(?:[\w.-]+:)?calcPr\b(?:[^>\"']|\"[^\"]*\"|'[^']*')*?/?>")


def _xml_text(s: str) -> bytes:
    """Element text: ``& < >`` escaped; characters XML 1.0 cannot carry as OOXML's ``_xHHHH_`` escape."""
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _XML_BAD_CHARS.sub(lambda m: f"_x{ord(m.group(0)):04X}_", s)
    return s.encode("utf-8")


def _format_value(value: Any) -> tuple[bytes | None, bytes]:
    """(t attribute or None, <v> body) for a cached value."""
    if type(value) is float and value - value == 0.0:  # finite: the commonest value, as the general rule below
        return None, (repr(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)).encode()
    if value is None:
        return b"str", b""
    if isinstance(value, bool):
        return b"b", b"1" if value else b"0"
    if isinstance(value, int | float) and not isinstance(value, bool):
        f = float(value)
        if f != f or f in (float("inf"), float("-inf")):
            return b"e", b"#NUM!"
        text = repr(int(f)) if f.is_integer() and abs(f) < 1e15 else repr(f)
        return None, text.encode()
    s = str(value)
    if s in ERROR_VALUES:
        return b"e", s.encode()
    return b"str", _xml_text(s)



_WRITE_REF = re.compile(r"^\$?([A-Za-z]{1,3})\$?([0-9]{1,7})$")


def _split_qname(qname: bytes) -> tuple[bytes, bytes]:
    prefix, _, local = qname.rpartition(b":")
    return prefix, local


def _ns_decls(attrs: bytes) -> dict[bytes, bytes] | None:
    if b"xmlns" not in attrs:
        return None
    out: dict[bytes, bytes] = {}
    for m in _ATTR.finditer(attrs):
        name = m.group(2)
        if name == b"xmlns":
            out[b""] = m.group(3)[1:-1]
        elif name.startswith(b"xmlns:"):
            out[name[6:]] = m.group(3)[1:-1]
    return out or None


def _attr(attrs: bytes, name: bytes) -> bytes | None:
    for m in _ATTR.finditer(attrs):
        if m.group(2) == name:
            return m.group(3)[1:-1]
    return None


def patch_sheet_xml(xml: bytes, values: Mapping[str, Any], *, plain: bool = False) -> tuple[bytes, set[str]]:
    """Set the cached value of each cell in ``values`` (``"B3"`` → value) in one worksheet part.

    Returns the new part and the references that were not found as ``<c>`` elements (nothing is inserted for them).
    Bytes outside the rebuilt ``<c>`` elements are copied unchanged. Raises ``ValueError`` on XML the lexer cannot
    follow (unbalanced tags). ``plain``: the part is one :func:`read_workbook` read by search
    (:attr:`SheetView.plain`), so each wanted cell is found by its start tag alone.

    >>> xml = b'<worksheet xmlns="%s"><sheetData><row r="1"><c r="A1"><f>1+1</f><v /></c></row></sheetData></worksheet>'
    >>> patch_sheet_xml(xml % NS_MAIN.encode(), {"A1": 2})[0].split(b"<sheetData>")[1]
    b'<row r="1"><c r="A1"><f>1+1</f><v>2</v></c></row></sheetData></worksheet>'
    """
    want = {k.replace("$", "").upper(): v for k, v in values.items()}
    fast = _patch_cells_by_jump(xml, want) if plain else None
    if fast is None:
        fast = _patch_cells_by_search(xml, want)
    if fast is not None:
        return fast
    out: list[bytes] = []
    pos = 0
    ns_stack: list[dict[bytes, bytes] | None] = []
    scope: dict[bytes, bytes] = {}
    scopes: list[dict[bytes, bytes]] = []
    row = 0
    col = 0
    found: set[str] = set()
    it = _TOKEN.finditer(xml)
    for m in it:
        closing, qname, attrs = m.group(1), m.group(2), m.group(3)
        if qname is None:
            continue  # comment, CDATA, PI, declaration: copied as they are
        if closing:
            if ns_stack:
                if ns_stack.pop() is not None:
                    scope = scopes.pop()
            continue
        empty = attrs.endswith(b"/")
        decls = _ns_decls(attrs)
        if decls is not None:
            scopes.append(scope)
            scope = {**scope, **decls}
        prefix, local = _split_qname(qname)
        in_main = scope.get(prefix) in SPREADSHEET_NAMESPACES
        if in_main and local == b"row":
            r = _attr(attrs, b"r")
            row = int(r) if r is not None and r.isdigit() else row + 1
            col = 0
        elif in_main and local == b"c":
            r = _attr(attrs, b"r")
            cm = _WRITE_REF.match(r.decode("utf-8", "replace")) if r is not None else None
            if cm:
                col = col_to_index(cm.group(1))
                ref = f"{cm.group(1).upper()}{int(cm.group(2))}"
            else:
                col += 1
                ref = f"{index_to_col(col)}{row}"
            if ref in want:
                end, new = _rebuild_cell(xml, m, qname, prefix, attrs, empty, want[ref])
                out.append(xml[pos : m.start()])
                out.append(new)
                pos = end
                found.add(ref)
                # the lexer resumes after the cell: skip the tokens inside it
                if not empty:
                    for m2 in it:
                        if m2.end() >= end:
                            break
                if decls is not None:
                    scope = scopes.pop()
                continue
        if empty:
            if decls is not None:
                scope = scopes.pop()
        else:
            ns_stack.append(decls)
    out.append(xml[pos:])
    return b"".join(out), set(want) - found


_DEFAULT_NS_DECL = re.compile(rb"""\sxmlns\s*=\s*("[^"]*"|'[^']*')""")
_NS_DECL_AT = re.compile(rb"""xmlns\s*=\s*("[^"]*"|'[^']*')""")
_PREFIXED_CELL = re.compile(rb"<[^\s/>!?]+:c[\s/>]")
_CELL_FOLLOW = frozenset(b" \t\r\n/>")
_XML_SPACE = frozenset(b" \t\n\r\x0b\x0c")  # what \\s matches in a bytes pattern


def _searchable(xml: bytes, *, plain: bool = False) -> int | None:
    """Where the root element starts when the writer may find cells by search, else None: no comment, CDATA,
    processing instruction or declaration after the XML declaration; one default namespace declaration (each
    ``xmlns=`` preceded by white space, as :data:`_DEFAULT_NS_DECL` finds them), the spreadsheet namespace, on the
    root element; no namespace-prefixed ``c`` element. ``plain``: the part is one the reader read by search
    (:attr:`SheetView.plain`: it checked the first two on these bytes, and its cells hold no prefixed element), so
    only the namespace declarations are looked for."""
    start = 0
    if xml.startswith(b"<?"):
        start = xml.find(b"?>") + 2
        if start == 1:
            return None
    if not plain and (b"<!" in xml or xml.find(b"<?", start) != -1):
        return None
    root_end = xml.find(b">", start)
    decls: list[tuple[int, bytes]] = []
    i = xml.find(b"xmlns")
    while i != -1:  # the few places "xmlns" occurs, instead of a pattern tried at every byte
        if i > 0 and xml[i - 1] in _XML_SPACE:
            m = _NS_DECL_AT.match(xml, i)
            if m is not None:
                decls.append((i - 1, m.group(1)))
                i = m.end()
                i = xml.find(b"xmlns", i)
                continue
        i = xml.find(b"xmlns", i + 5)
    if len(decls) != 1 or decls[0][1][1:-1] not in SPREADSHEET_NAMESPACES or decls[0][0] > root_end:
        return None
    if not plain and b":c" in xml and _PREFIXED_CELL.search(xml):
        return None
    return start


def _patch_cells_by_jump(xml: bytes, want: dict[str, Any]) -> tuple[bytes, set[str]] | None:
    """:func:`patch_sheet_xml` for a part whose cells :func:`read_workbook` read by search (:attr:`SheetView.plain`:
    inside its one ``<sheetData>`` every ``<c`` starts a cell of a row, ``r`` first, each reference once): each
    wanted cell is found by its start tag (``<c r="B3"``, ``bytes.find`` from the previous one, the wanted cells in
    row order) and rebuilt as :func:`_patch_cells_by_search` rebuilds it; the cells in between are copied without
    being looked at. The same bytes out (cells outside ``<sheetData>``, which no reader reads, are not looked for);
    ``None`` (the caller searches every cell) unless :func:`_searchable` and every wanted cell is found in that
    order."""
    if _searchable(xml, plain=True) is None:
        return None
    lo = xml.find(b"<sheetData>")  # the only one (the reader counted them)
    hi = xml.rfind(b"</sheetData>")
    if lo == -1 or hi < lo:
        return None
    grid = _grid_position
    try:
        order = sorted(want, key=grid)  # None (off the grid) cannot be compared with a position: TypeError
    except TypeError:
        return None
    out: list[bytes] = []
    pos = 0  # copied up to here
    at = lo  # searched from here
    plain_cell = _PLAIN_CELL.match
    for ref in order:
        i = xml.find(b'<c r="' + ref.encode() + b'"', at, hi)
        if i == -1:
            return None
        pm = plain_cell(xml, i)
        if pm is not None:
            out.append(xml[pos:i])
            out.append(_rebuild_plain_cell(pm, want[ref]))
            pos = at = pm.end()
            continue
        m = _TOKEN.match(xml, i)
        if m is None or m.group(2) != b"c":
            return None
        attrs = m.group(3)
        end, new = _rebuild_cell(xml, m, b"c", b"", attrs, attrs.endswith(b"/"), want[ref])
        out.append(xml[pos:i])
        out.append(new)
        pos = at = end
    out.append(xml[pos:])
    return b"".join(out), set()


def _patch_cells_by_search(xml: bytes, want: dict[str, Any]) -> tuple[bytes, set[str]] | None:
    """:func:`patch_sheet_xml` for the sheets nearly every writer produces, jumping from one ``<c`` start tag to the
    next (``bytes.find``) instead of lexing every tag; the same bytes out. ``None`` (the caller lexes the whole part)
    unless: no comment, CDATA, processing instruction or declaration after the XML declaration; one default
    namespace declaration, the spreadsheet namespace, on the root element; no namespace-prefixed ``c`` element; and
    every cell carries an ``r`` reference (an ``r``-less cell's address depends on the cells and rows before it)."""
    start = _searchable(xml)
    if start is None:
        return None
    out: list[bytes] = []
    pos = 0
    found: set[str] = set()
    i = xml.find(b"<c", start)
    follow = _CELL_FOLLOW
    plain_cell = _PLAIN_CELL.match
    while i != -1:
        if i + 2 < len(xml) and xml[i + 2] in follow:
            pm = plain_cell(xml, i)
            if pm is not None:  # the commonest cell form, rebuilt as _rebuild_cell would, in one match
                ref = pm.group(2).decode()
                nxt = pm.end()
                if ref in want:
                    out.append(xml[pos:i])
                    out.append(_rebuild_plain_cell(pm, want[ref]))
                    pos = nxt
                    found.add(ref)
                i = xml.find(b"<c", nxt)
                continue
            m = _TOKEN.match(xml, i)
            if m is None or m.group(2) != b"c":
                return None
            attrs = m.group(3)
            r = _attr(attrs, b"r")
            cm = _WRITE_REF.match(r.decode("utf-8", "replace")) if r is not None else None
            if cm is None:
                return None
            ref = f"{cm.group(1).upper()}{int(cm.group(2))}"
            nxt = m.end()
            if ref in want:
                end, new = _rebuild_cell(xml, m, b"c", b"", attrs, attrs.endswith(b"/"), want[ref])
                out.append(xml[pos:i])
                out.append(new)
                pos = nxt = end
                found.add(ref)
            i = xml.find(b"<c", nxt)
        else:
            i = xml.find(b"<c", i + 2)
    out.append(xml[pos:])
    return b"".join(out), set(want) - found


_ATTRS = rb"(?:[^>\"'/]|\"[^\"]*\"|'[^']*')*"
_SIMPLE_CELL_BODY = re.compile(
    rb"(<(?:[\w.-]+:)?f\b" + _ATTRS + rb"(?:/>|>[^<]*</(?:[\w.-]+:)?f>))?"
    rb"(<(?:[\w.-]+:)?v\b\s*(?:/>|>[^<]*</(?:[\w.-]+:)?v>))?"
    rb"</([^\s>]+)>"
)
"""The body of a cell as almost every writer produces it: an optional ``<f>`` with plain text, an optional ``<v>``,
then the end tag (group 3, compared with the start tag's name). Anything else takes the general path."""


_PLAIN_CELL = re.compile(
    rb'<c( r="([A-Z]{1,3}[1-9][0-9]{0,6})"(?: [A-Za-z]+="[^"<>=&]*")*)'
    rb'(?: ?/>|>(<f(?: [A-Za-z]+="[^"<>=&]*")*(?:/>|>[^<]*</f>))?(?:<v/>|<v>[^<]*</v>)?</c>)'
)
"""A cell in the form nearly every writer gives it: ``r`` first (upper-case column, no leading zero), unprefixed
attributes with plain values, no space before ``>``; a body of an optional plain ``<f>`` and an optional ``<v>``
(group 1: the attributes, 2: the reference, 3: the ``<f>`` element). :func:`_rebuild_plain_cell` gives the bytes
:func:`_rebuild_cell` gives such a cell; any other form goes to :func:`_rebuild_cell`. A value holds no ``=``, so
`` t="`` in the attributes can only start the ``t`` attribute."""
_T_ATTR = re.compile(rb' t="[^"]*"')


def _rebuild_plain_cell(m: re.Match[bytes], value: Any) -> bytes:
    """The new bytes of a cell matched by :data:`_PLAIN_CELL`: its attributes without ``t``, the value's ``t``, the
    ``<f>`` kept, the new ``<v>`` (what :func:`_rebuild_cell` makes of it; ``tests/test_fast_io.py`` compares)."""
    t, body = _format_value(value)
    attrs = m.group(1)
    if b' t="' in attrs:
        attrs = _T_ATTR.sub(b"", attrs)
    return (b"<c" + attrs + (b' t="' + t + b'">' if t is not None else b">") + (m.group(3) or b"")
            + b"<v>" + body + b"</v></c>")


def _rebuild_cell(
    xml: bytes, start: re.Match[bytes], qname: bytes, prefix: bytes, attrs: bytes, empty: bool, value: Any
) -> tuple[int, bytes]:
    """(end offset of the ``<c>`` element, its new bytes)."""
    t, body = _format_value(value)
    body_attrs = attrs[:-1] if empty else attrs
    kept = _ATTR.sub(lambda a: b"" if a.group(2) == b"t" else a.group(0), body_attrs).rstrip()
    tail = body_attrs[len(body_attrs.rstrip()) :] if not empty else b""
    new_start = b"<" + qname + kept + (b' t="' + t + b'"' if t is not None else b"") + tail + b">"
    vq = (prefix + b":v") if prefix else b"v"
    new_v = b"<" + vq + b">" + body + b"</" + vq + b">"
    end_tag = b"</" + qname + b">"
    if empty:
        return start.end(), new_start + new_v + end_tag
    simple = _SIMPLE_CELL_BODY.match(xml, start.end())
    if simple and simple.group(3) == qname:  # <f>text</f> and/or one <v>: no nesting, no CDATA, no comment
        return simple.end(), new_start + (simple.group(1) or b"") + new_v + end_tag
    children: list[tuple[bytes, bytes]] = []  # (local name, bytes) of each direct child; text between as b""
    depth = 0
    pos = start.end()
    child_start = pos
    child_name = b""
    for m in _TOKEN.finditer(xml, start.end()):
        closing, q, a = m.group(1), m.group(2), m.group(3)
        if q is None:
            continue
        if closing:
            if depth == 0:  # the cell's own end tag
                if m.start() > pos:
                    children.append((b"", xml[pos : m.start()]))
                break
            depth -= 1
            if depth == 0:
                children.append((child_name, xml[child_start : m.end()]))
                pos = m.end()
            continue
        if depth == 0:
            if m.start() > pos:
                children.append((b"", xml[pos : m.start()]))
            child_start = m.start()
            child_name = _split_qname(q)[1]
            if a.endswith(b"/"):
                children.append((child_name, xml[child_start : m.end()]))
                pos = m.end()
                continue
        if not a.endswith(b"/"):
            depth += 1
    else:
        raise ValueError(f"unterminated <{qname.decode('utf-8', 'replace')}> element")
    end = m.end()
    kept_children = [(n, b) for n, b in children if n not in (b"v", b"is")]
    at = 0
    for i, (n, _b) in enumerate(kept_children):
        if n == b"f":
            at = i + 1
    kept_children.insert(at, (b"v", new_v))
    return end, new_start + b"".join(b for _n, b in kept_children) + end_tag


def _set_full_calc(xml: bytes) -> bytes:
    m = _FULLCALC_RE.search(xml)
    if m:
        tag = m.group(0)
        if b"fullCalcOnLoad" in tag:
            return xml
        new = tag[:-2] + b' fullCalcOnLoad="1"/>' if tag.endswith(b"/>") else tag[:-1] + b' fullCalcOnLoad="1">'
        return xml[: m.start()] + new + xml[m.end() :]
    close = xml.rfind(b"</")
    prefix = _split_qname(xml[close + 2 : xml.find(b">", close)])[0]
    calc = (prefix + b":calcPr") if prefix else b"calcPr"
    return xml[:close] + b"<" + calc + b' fullCalcOnLoad="1"/>' + xml[close:]


def temp_path_for(dst: str | Path) -> Path:
    """A fresh name next to ``dst`` for writing it atomically (``.NAME.<random>.tmp``; never an existing path)."""
    import secrets

    d = Path(dst)
    return d.with_name(f".{d.name}.{os.getpid()}-{secrets.token_hex(6)}.tmp")


def _create_new(path: Path) -> Any:
    """Open ``path`` for writing only if it does not exist yet (``O_EXCL``: never through a link or onto a file)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    return os.fdopen(os.open(path, flags, 0o644), "wb")


_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")
_CENTRAL_HEADER = struct.Struct("<4s4B4HL2L5H2L")
_END_RECORD = struct.Struct("<4s4H2LH")
_ZIP_VERSION = 20  # what zipfile writes for stored and deflate entries without zip64 (2.0)
_ZIP32_MAX = 0xFFFFFFFF


def _raw_entry(fh: Any, info: zipfile.ZipInfo) -> bytes:
    """The compressed bytes of one zip entry as stored in the file (``fh``: the package's file, between reads of
    :class:`zipfile.ZipFile`, which seeks before each of its own), found from its local header as :mod:`zipfile`
    finds them."""
    fh.seek(info.header_offset)
    head = fh.read(_LOCAL_HEADER.size)
    if len(head) != _LOCAL_HEADER.size or head[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"bad local header for {info.filename}")
    name_len, extra_len = struct.unpack("<HH", head[26:30])
    fh.seek(name_len + extra_len, 1)
    raw = fh.read(info.compress_size)
    if len(raw) != info.compress_size:
        raise zipfile.BadZipFile(f"truncated entry {info.filename}")
    return raw


class _ZipOut:
    """A minimal zip writer (no zip64: a workbook within :class:`Limits` is far below 4 GiB) that takes each entry
    either as bytes to compress or as the compressed bytes of the input entry, copied as they are. The headers are
    those :class:`zipfile.ZipFile` writes for a ``ZipInfo`` with the same name, timestamp, method, attributes and
    comment (version 2.0, sizes in the local header, UTF-8 flag only for a non-ASCII name)."""

    def __init__(self, fh: Any, level: int) -> None:
        self.fh = fh
        self.level = level
        self.central: list[bytes] = []
        self.offset = 0

    def add(self, info: zipfile.ZipInfo, data: bytes, raw: bytes | None = None, *, length: int | None = None
            ) -> None:
        """Write ``data`` (the entry's uncompressed bytes) under ``info``'s name and method; ``raw``: those bytes
        already compressed by that method (the input entry's own bytes), written instead of compressing anew;
        ``length``: with ``raw``, the uncompressed length, ``data`` not given."""
        method = info.compress_type
        copied = None if raw is None else info.CRC  # zipfile checked it when the entry was inflated
        if raw is None:
            if method == zipfile.ZIP_DEFLATED:
                c = zlib.compressobj(self.level, zlib.DEFLATED, -15)
                raw = c.compress(data) + c.flush()
            else:
                raw = data
        try:
            name, flags = info.filename.encode("ascii"), 0
        except UnicodeEncodeError:
            name, flags = info.filename.encode("utf-8"), 0x800
        dt = info.date_time
        dosdate = (dt[0] - 1980) << 9 | dt[1] << 5 | dt[2]
        dostime = dt[3] << 11 | dt[4] << 5 | (dt[5] // 2)
        crc = zlib.crc32(data) if copied is None else copied
        n = len(data) if length is None or copied is None else length
        if max(len(raw), n, self.offset) > _ZIP32_MAX:
            raise ValueError("the workbook is too large to write (above 4 GiB)")
        head = _LOCAL_HEADER.pack(b"PK\x03\x04", _ZIP_VERSION, 0, flags, method, dostime, dosdate, crc, len(raw),
                                  n, len(name), 0)
        comment = info.comment or b""
        self.central.append(_CENTRAL_HEADER.pack(
            b"PK\x01\x02", _ZIP_VERSION, info.create_system, _ZIP_VERSION, 0, flags, method, dostime, dosdate, crc,
            len(raw), n, len(name), 0, len(comment), 0, 0, info.external_attr, self.offset) + name + comment)
        self.fh.write(head)
        self.fh.write(name)
        self.fh.write(raw)
        self.offset += len(head) + len(name) + len(raw)

    def close(self) -> None:
        directory = b"".join(self.central)
        if len(self.central) > 0xFFFF or self.offset > _ZIP32_MAX:
            raise ValueError("the workbook is too large to write (zip64 needed)")
        self.fh.write(directory)
        self.fh.write(_END_RECORD.pack(b"PK\x05\x06", 0, 0, len(self.central), len(self.central), len(directory),
                                       self.offset, 0))


def _holds(cell: CellView, value: Any) -> bool:
    """True when ``cell`` already caches ``value`` as the writer would write it: the same kind (a number without
    ``t`` or with ``t="n"``, ``t="b"``, ``t="str"``, ``t="e"``) and an equal value (a finite number, the same boolean,
    text or error; an empty text cell without a cached value holds ``""``, as
    :func:`planner.validate.checks.book_from_view` reads it). Such a cell needs no rewrite: every reader reads the
    value it would get from the rewritten one."""
    old, t = cell.value, cell.type
    tv = type(value)
    if tv is float or tv is int:
        to = type(old)
        return t == "n" and (to is float or to is int) and old == value and value - value == 0
    if tv is bool:
        return t == "b" and old is value
    if isinstance(value, str):
        s = str(value)
        if s in ERROR_VALUES:
            return t == "e" and str(old) == s
        return t == "str" and (old == s if type(old) is str else old is None and s == "")  # <v></v>: ""
    return False


_PLAIN_VALUES = frozenset({float, int, bool, str, XlError, type(None)})
"""The value types whose equality (``!=``) and type decide :func:`_holds` (a value equal to another of the same
type gives the same answer against the same cell): what a recalculation gives (numbers, booleans, texts, errors)."""


@dataclass(slots=True, eq=False)
class _WriteGroup:
    """One sheet's share of the last :func:`write_cached_values` call through a :class:`SheetMemo`
    (:func:`_wanted_kept`): the sheet's name as the values give it, the positions of its cells in the values and
    their references (in the values' order), and for each cell the view and the value it was given then, the value's
    type (``types`` None: a type outside :data:`_PLAIN_VALUES`, never reused), and what :func:`_holds` answered."""

    sheet: str
    positions: list[int]
    refs: list[str]
    views: list[CellView]
    values: list[Any]
    types: list[type] | None
    holds: list[bool]
    value_bytes: int = 0
    """The values' :func:`sys.getsizeof` (an equal value of the same type takes as many bytes: only the changed
    ones are counted again)."""
    order: object | None = None
    """The :attr:`SheetView.order` of the sheet ``pick`` was built for (None: no ``pick``)."""
    pick: Any = None
    """An ``itemgetter`` of the positions of ``refs`` among the references of a sheet of that order, its ints
    :func:`_positions`' (a sheet of the same order has the same references in the same order: the cells picked
    from its list of views are those ``refs`` look up)."""


_ERROR_TEXTS = frozenset(ERROR_VALUES)
_REF_OF = attrgetter("ref")

_POSITIONS: list[int] = []
"""``list(range(n))`` for the largest ``n`` :func:`_positions` gave (at most :data:`_MAX_POSITIONS`): one list of
the process, at most 590 KB."""
_MAX_POSITIONS = 16_384


def _positions(n: int) -> list[int] | None:
    """The positions ``0 .. n - 1`` (or more) as the process's own int objects (:data:`_POSITIONS`), or None above
    :data:`_MAX_POSITIONS`: a writer's pick of a sheet's cells by position (:attr:`_WriteGroup.pick`) then holds
    pointers to these ints, not ints of its own (a position above 256 is an object: 28 bytes a cell). Worked
    example: ``_positions(3)[:3] == [0, 1, 2]``."""
    if n > _MAX_POSITIONS:
        return None
    if len(_POSITIONS) < n:
        _POSITIONS[:] = range(max(n, 4096))
    return _POSITIONS

_WRITE_KEY = ("write",)
"""The :class:`SheetMemo` key of the last write's :class:`_WriteGroup` list (one a memo), with its values' keys."""


def _wanted_kept(view: WorkbookView, values: Mapping[tuple[str, str], Any], memo: SheetMemo
                 ) -> tuple[dict[str, dict[str, Any]], dict[str, SheetView]] | None:
    """``(by_part, sheet_of_part)`` of :func:`write_cached_values` with ``only_changed``: per sheet part, the cells
    (reference -> value) whose view does not already hold the value (:func:`_holds`), in the values' order, and the
    part's sheet; the same dictionaries as its loop builds, by sheet instead of cell by cell. None when that loop
    must run (it normalises a reference not found as given, reports a missing sheet, and lets the values of two
    spellings of one sheet's name overwrite each other: none of that is done here).

    With the last call's entry in ``memo`` (:data:`_WRITE_KEY`) for the same keys in the same order, a cell whose
    view is the same object as then (views are frozen; the entry holds them, so no other object can take that
    identity) and whose value has the same type, one of :data:`_PLAIN_VALUES`, and is equal (``!=`` false: a NaN is
    never reused) gets the same answer as then; :func:`_holds` is asked for the others only. Worked example: a
    recalculating worker's second plan of the template, 8,395 computed cells, asks it for the cells whose cached
    texts changed. The entry is taken out of the memo while it changes and kept again after."""
    keys = list(values)
    vals = list(values.values())
    kept = memo.take(_WRITE_KEY)
    groups: list[_WriteGroup]
    if kept is not None and kept[0] == keys:
        groups = kept[1]
    else:
        by_sheet: dict[str, _WriteGroup] = {}
        for i, (sheet, ref) in enumerate(keys):
            g = by_sheet.get(sheet)
            if g is None:
                g = by_sheet[sheet] = _WriteGroup(sheet=sheet, positions=[], refs=[], views=[], values=[],
                                                  types=None, holds=[])
            g.positions.append(i)
            g.refs.append(ref)
        groups = list(by_sheet.values())
    by_part: dict[str, dict[str, Any]] = {}
    sheet_of_part: dict[str, SheetView] = {}
    parts: set[str] = set()
    holds = _holds
    size = sys.getsizeof
    errors = _ERROR_TEXTS
    n_bytes = size(keys) + 200
    for g in groups:
        try:
            sv = view.sheet(g.sheet)
        except KeyError:
            return None
        if sv.part in parts:
            return None  # two spellings of one sheet's name
        parts.add(sv.part)
        cells = sv.cells
        if g.pick is not None and sv.order is not None and sv.order is g.order:
            # the same references in the same order as the sheet pick was built for: the views at their positions
            # (a list's items, not 8,395 lookups of cold keys in a dictionary: 1.0 against 0.6 ms a plan)
            views = list(g.pick(list(cells.values())))
        else:
            try:
                views = list(itemgetter(*g.refs)(cells)) if len(g.refs) > 1 else [cells[g.refs[0]]]
            except KeyError:
                return None  # a reference not found as given
            g.order = g.pick = None
            ints = _positions(len(cells)) if sv.order is not None and len(g.refs) > 1 else None
            if ints is not None:
                where = dict(zip(cells, ints))  # (each reference once: a dictionary's keys)
                g.pick = itemgetter(*map(where.__getitem__, g.refs))
                g.order = sv.order
        vs = list(itemgetter(*g.positions)(vals)) if len(g.positions) > 1 else [vals[g.positions[0]]]
        types = list(map(type, vs))
        if g.types is not None and g.types == types:
            answers = g.holds
            last = g.values
            for i in compress(range(len(vs)), map(or_, map(is_not, views, g.views), map(ne, vs, last))):
                c, v = views[i], vs[i]
                tv = type(v)
                # _holds' answer for the two commonest types, inline (a call per cell costs as much as the test)
                if tv is float:  # (as many bytes as the float it replaces)
                    old = c.value
                    answers[i] = (c.type == "n" and (type(old) is float or type(old) is int) and old == v
                                  and v - v == 0)
                    continue
                g.value_bytes += size(v) - size(last[i])
                if tv is str:
                    old = c.value
                    if v in errors:
                        answers[i] = c.type == "e" and str(old) == v
                    else:
                        answers[i] = c.type == "str" and (old == v if type(old) is str else old is None and v == "")
                else:
                    answers[i] = holds(c, v)
        else:
            answers = list(map(holds, views, vs))
            g.types = types if _PLAIN_VALUES.issuperset(types) else None
            g.value_bytes = sum(map(size, vs))
            # the references as the reader's own objects (each view's ``ref`` is its key in ``cells``, the same
            # object in the next plan's view read through the memo): the next lookups find each key by identity,
            # without comparing its characters (about 0.5 ms a plan); the same texts, so the same cells picked
            refs = list(map(_REF_OF, views))
            if refs == g.refs:
                g.refs = refs
        g.views, g.values, g.holds = views, vs, answers
        n_bytes += (size(g.positions) + size(g.refs) + 5 * size(views) + len(views) * (_VIEW_BYTES + 200 + 32)
                    + g.value_bytes + (size(views) + 100 if g.pick is not None else 0))  # (pick: its tuple)
        # (a plan whose cached values are the computed ones, the common case, holds every value: nothing to pick)
        want = {} if all(answers) else dict(compress(zip(g.refs, vs), map(not_, answers)))
        if want:
            by_part[sv.part] = want
            sheet_of_part[sv.part] = sv
    memo.keep(_WRITE_KEY, (keys, groups), size=n_bytes, evict=False)  # (never at the reads' expense)
    return by_part, sheet_of_part


DEFLATE_LEVEL = 1
"""zlib level of the parts :func:`write_cached_values` changes (parts it does not change keep their compressed bytes).
Level 1 compresses a template plan's worksheets (1.5 MB of XML) in about 5 ms against 16 ms at zlib's default level
6 (what :mod:`zipfile` uses), for 215 KB against 171 KB (measured on a benchmark plan, 2026-12-04): speed over size,
as the output is a working copy that Excel or LibreOffice compress again when they save it."""


def write_cached_values(
    src: str | Path,
    dst: str | Path,
    values: Mapping[tuple[str, str], Any],
    *,
    full_calc_on_load: bool = False,
    limits: Limits = DEFAULT_LIMITS,
    tmp: str | Path | None = None,
    replace: bool = True,
    view: WorkbookView | None = None,
    only_changed: bool = False,
) -> set[tuple[str, str]]:
    """Copy ``src`` to ``dst`` entry by entry, setting the cached value of each ``(sheet, cell)`` in ``values``.

    Only the ``<v>`` element and the ``t=`` attribute of those cells change (formulas, styles and every other
    attribute stay); every other zip entry keeps its name, order, compression method, timestamp and uncompressed
    bytes (and its compressed bytes, copied as they are: only a changed part is compressed anew). A value is a
    number, bool, str, an error text (``"#VALUE!"``...) or None (empty string). With ``full_calc_on_load`` the
    workbook's ``<calcPr>`` gets ``fullCalcOnLoad="1"`` so Excel recomputes on open. With ``only_changed`` a cell
    that already caches its value in the form the writer would give it (:func:`_holds`: a number without ``t``
    equal to the new number, the same boolean, text or error) keeps its bytes, and a sheet where no cell changes is
    copied as it is.

    ``src`` is only read; ``dst`` must be a different file. The package is written to a new temporary file next to
    ``dst`` (created exclusively: never through an existing file or link), flushed to disk and renamed onto ``dst``
    in one step; on any error the temporary file is removed and ``dst`` is untouched. With ``replace=False`` the
    rename is left to the caller, who gets the finished temporary file at ``tmp``. ``view``: ``src`` as
    :func:`read_workbook` already read it (saves reading it again). Returns the cells that are not
    ``<c>`` elements of their sheet (their values could not be written).

    A ``view`` read through a :class:`SheetMemo` (:attr:`WorkbookView.memo`: a recalculating worker's) lets the
    writer keep its own entries there, the same bytes out, sooner: the last write's :func:`_holds` answers, asked
    again only for cells whose view or value changed (:func:`_wanted_kept`, with ``only_changed``), and every part
    read before (by the same plan's read or the last write) copied without being inflated again when its stored
    bytes are those read then, every byte compared (:meth:`Package.read_size`); a part of at most
    :data:`KEEP_PART_BYTES` it changes is patched from the bytes kept then. These entries are kept only where they
    fit beside what the reads need (never at their expense).

    Example::

        write_cached_values("plan.xlsx", "out.xlsx", {("Routes", "H3"): 42.0})
    """
    s, d = Path(src), Path(dst)
    if d.exists() and s.exists() and s.resolve() == d.resolve():
        raise WorkbookError(d, "the output must not be the input (a submitted workbook is never modified)")
    if d.is_dir():
        raise WorkbookError(d, "the output is a directory")
    if view is None or view.path != str(s):
        view = read_workbook(s, limits)
    by_part: dict[str, dict[str, Any]] = {}
    sheet_of_part: dict[str, SheetView] = {}
    sheet_views: dict[str, tuple[SheetView, dict[str, CellView], dict[str, Any]]] = {}
    holds = _holds
    kept = _wanted_kept(view, values, view.memo) if only_changed and view.memo is not None else None
    if kept is not None:
        by_part, sheet_of_part = kept
    for (sheet, cell), value in values.items() if kept is None else ():
        entry = sheet_views.get(sheet)
        if entry is None:
            try:
                sv = view.sheet(sheet)
            except KeyError:
                raise WorkbookError(s, f"no sheet named {sheet!r} (sheets: {', '.join(view.sheet_names)})") from None
            entry = sheet_views[sheet] = (sv, sv.cells, {})
        sv, cells, want = entry
        current = cells.get(cell)  # a reference as the reader gives it (most are) needs no normalising
        if current is None:
            cell = cell.replace("$", "").upper()
            current = cells.get(cell)
        if only_changed and current is not None and holds(current, value):
            continue
        if not want:
            by_part[sv.part] = want
            sheet_of_part[sv.part] = sv
        want[cell] = value
    t = Path(tmp) if tmp is not None else temp_path_for(d)
    missing: set[tuple[str, str]] = set()
    created = False
    try:
        with open_package(s, limits, memo=view.memo) as pkg, _create_new(t) as fh:
            raw_fh = pkg.zf.fp  # the file zipfile opened and read the entries from (never opened a second time)
            created = True
            seen: set[str] = set()
            out = _ZipOut(fh, DEFLATE_LEVEL)
            for info in pkg.zf.infolist():
                if info.filename in seen:
                    raise WorkbookError(s, f"duplicate zip entry {info.filename} (readers disagree on which one "
                                        "counts); refused", part=info.filename)
                seen.add(info.filename)
                copied = info.filename not in by_part and not (full_calc_on_load
                                                               and info.filename == "xl/workbook.xml")
                stored = pkg.stored(info) if copied and pkg.memo is not None else None
                length = pkg.read_size(info, stored) if stored is not None else None
                if length is not None:  # these very bytes inflated and checked before (read_size): copied
                    try:
                        out.add(info, b"", stored[1], length=length)  # type: ignore[index]
                    except ValueError as exc:
                        raise WorkbookError(s, str(exc), kind="limit") from None
                    continue
                data = pkg.read(info.filename)  # inflated and checked (limits, CRC) even when copied as it is
                raw = None
                if info.filename in by_part:
                    try:
                        sv = sheet_of_part[info.filename]
                        data, lost = patch_sheet_xml(data, by_part[info.filename], plain=sv.plain)
                    except ValueError as exc:
                        raise WorkbookError(s, f"malformed XML in {info.filename}: {exc}",
                                            part=info.filename) from None
                    missing |= {(sv.name, ref) for ref in lost}
                elif full_calc_on_load and info.filename == "xl/workbook.xml":
                    data = _set_full_calc(data)
                else:
                    try:
                        raw = _raw_entry(raw_fh, info)
                    except (OSError, zipfile.BadZipFile) as exc:
                        raise WorkbookError(s, f"corrupt part {info.filename}: {exc}", part=info.filename) from None
                try:
                    out.add(info, data, raw)
                except ValueError as exc:
                    raise WorkbookError(s, str(exc), kind="limit") from None
            out.close()
            fh.flush()
            os.fsync(fh.fileno())
            pkg.keep_reads()
        if replace:
            os.replace(t, d)
    except BaseException:
        if created:
            with suppress(OSError):
                t.unlink()
        raise
    return missing
