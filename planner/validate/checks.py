"""The checks of one workbook. Each check *yields* findings and never raises; :func:`validate_file` turns anything
unexpected into a ``validator-crash`` finding so a batch never stops.

Order: file and hostile-content checks, template identity, structure (sheets, tables, columns), inputs, formulas
(fingerprint against the template), then the fast path (:mod:`planner.validate.fastpath`): recompute every formula
cell in Python and compare with the cached values, and the policy checks on the recomputed results.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import compress
from operator import and_, attrgetter, is_, is_not, itemgetter, not_
from typing import Any

from planner import template as ts
from planner.excel.values import XlError
from planner.formula_scan import scan, strip_strings
from planner.ooxml import (
    VIEW_BYTES,
    CellView,
    Limits,
    SheetMemo,
    WorkbookError,
    WorkbookView,
    open_package,
    read_workbook,
)
from planner.template.layout import FLAGS
from planner.validate.findings import STALE_ABS_TOL, STALE_REL_TOL
from planner.validate.report import Finding, Report, sort_findings

SUPPORTED_VERSIONS = (ts.TEMPLATE_VERSION,)



_WHOLE = re.compile(r"(?<![A-Za-z0-9_.])\$?[A-Z]{1,3}:\$?[A-Z]{1,3}(?![A-Za-z0-9_(])"
                    r"|(?<![A-Za-z0-9_.$])\$?\d+:\$?\d+(?![\d.])")


READ_LIMITS = Limits(max_cells=500_000)
"""Limits of :func:`planner.ooxml.read_workbook` for a submitted plan (a plan has a few thousand cells)."""

READ_CODES = {
    "unreadable": "unreadable",
    "not-a-workbook": "not-a-workbook",
    "limit": "oversized-part",
    "zip-bomb": "zip-bomb",
    "hostile-xml": "xml-attack",
    "malformed": "malformed-part",
    "special": "special-file",
    "duplicate": "duplicate-name",
    "compression": "unsupported-compression",
}
"""Finding code of each :attr:`planner.ooxml.WorkbookError.kind`."""


@dataclass(frozen=True, kw_only=True)
class Book:
    """A plan as the checks see it: the :class:`~planner.ooxml.WorkbookView` and its cells flattened to
    ``(sheet, cell)`` keys (``values``: cached values and constants; ``formulas``: ``"=..."`` texts)."""

    view: WorkbookView
    values: dict[tuple[str, str], Any]
    formulas: dict[tuple[str, str], str]


def book_from_view(view: WorkbookView, *, memo: SheetMemo | None = None) -> Book:
    """Flatten ``view``: numbers as float; a text formula or inline string without a cached value reads as ``""``.

    ``memo``: the caller's :class:`~planner.ooxml.SheetMemo` (the one its reads go through): the last book's
    flattening is kept there with the cell views it came from (:class:`_Flat`), and a book whose sheets have the same
    names and references takes its entries for every cell whose view is *the same object* as then (a frozen view,
    held by the entry so that its identity cannot be reused: the same cell, the same entry; a reader with the memo
    gives a cell whose texts did not change the view it gave before), flattening only the others
    (:func:`_flat_kept`). The same book, in the same order, in dictionaries of its own.

    Worked example: sheet ``Plan`` with ``A1 = 5`` (an int) and ``B1`` holding the formula ``A1*2`` with cached
    value ``10`` gives ``values == {("Plan", "A1"): 5.0, ("Plan", "B1"): 10.0}`` and
    ``formulas == {("Plan", "B1"): "=A1*2"}``.
    """
    if memo is not None:
        flat = _flat_kept(view, memo)
        return Book(view=view, values=flat.values.copy(), formulas=flat.formulas.copy())
    values: dict[tuple[str, str], Any] = {}
    formulas: dict[tuple[str, str], str] = {}
    for sheet in view.sheets:
        _flatten(sheet.name, sheet.cells, values, formulas)
    return Book(view=view, values=values, formulas=formulas)


def _flatten(name: str, cells: dict[str, CellView], values: dict[tuple[str, str], Any],
             formulas: dict[tuple[str, str], str]) -> None:
    """The cells of sheet ``name`` flattened into ``values`` and ``formulas`` (:func:`book_from_view`): the rule of
    :func:`_flatten_keyed`, each cell under ``(name, ref)``."""
    _flatten_keyed([(name, ref) for ref in cells], cells.values(), values, formulas)


@dataclass(slots=True, eq=False)
class _Flat:
    """A book's flattening kept in a :class:`~planner.ooxml.SheetMemo` (:func:`_flat_kept`): its sheets' names, for
    each sheet its cells' references, ``(sheet, ref)`` keys and views in order, the flattened ``values`` and
    ``formulas`` of those views under those keys (never handed out: :func:`book_from_view` gives copies), and
    ``bytes``, what the entry is counted as (:func:`_flat_bytes`)."""

    names: list[str]
    refs: list[list[str]]
    keys: list[list[tuple[str, str]]]
    views: list[list[CellView]]
    values: dict[tuple[str, str], Any]
    formulas: dict[tuple[str, str], str]
    bytes: int = 0
    types: list[list[type]] | None = None
    """For each sheet and cell of ``views``: its value's type (what the common change, a float for a float or an int
    for an int, needs to know of the view it replaces, without reading that view: :func:`_flat_kept`)."""
    cell_formulas: list[list[str | None]] | None = None
    """For each sheet and cell of ``views``: its view's ``formula`` (the same object)."""
    arrays: list[list[str | None]] | None = None
    """For each sheet and cell of ``views``: its view's ``array_ref`` (the same object)."""


_VALUE = attrgetter("value")
_FORMULA = attrgetter("formula")
_ARRAY = attrgetter("array_ref")

_FLAT_KEY = ("flat",)
"""The :class:`~planner.ooxml.SheetMemo` key of the last book's :class:`_Flat` (one a memo)."""

_FLAT_CELL_BYTES = 2 * sys.getsizeof(("Plan", "A1")) + sys.getsizeof(1.0) + VIEW_BYTES
"""Per cell of a :class:`_Flat`, beyond its strings and value: its view's object and attribute dictionary, its
``(sheet, ref)`` key (counted twice), and a number converted from an int."""


def _cell_bytes(c: CellView) -> int:
    """What a cell's view holds of its own in a :class:`_Flat`, by :func:`sys.getsizeof`: its value (a number, a
    boolean or None as :data:`_NUMBER_BYTES`, the most a cell's number takes), its formula twice (the view's text and
    the ``=`` text of ``formulas``) and its array range."""
    d = c.__dict__
    x, f, a = d["value"], d["formula"], d["array_ref"]
    size = sys.getsizeof
    return ((_NUMBER_BYTES if x is None or type(x) in _NUMBERS else size(x))
            + (2 * size(f) + 1 if f is not None else 0) + (size(a) if a is not None else 0))


_NUMBERS = frozenset({int, float, bool})
_NUMBER_TYPES = frozenset({int, float})
"""The value types of a cell's common change (:func:`_flat_kept`): flattened as a float, counted as
:data:`_NUMBER_BYTES`."""
_NUMBER_BYTES = sys.getsizeof(int(1.7976931348623157e308))
"""The largest number a cell's value can be (:func:`planner.ooxml._convert`: an int only from a float's value):
164 bytes."""


def _flat_bytes(flat: _Flat) -> int:
    """An upper bound of what ``flat`` keeps alive, by :func:`sys.getsizeof`: its lists (those of what is kept of
    each view too) and two dictionaries, 200 bytes, and per cell its reference, :data:`_FLAT_CELL_BYTES` and
    :func:`_cell_bytes` (a view a skeleton of the memo holds too is counted at each). Worked example: a template
    plan (12,288 cells) counts 11.9 MB, where ``tracemalloc`` sees 3.0 MB more kept than the memo's skeletons hold
    (2026-12-05, template 2.8.0)."""
    size = sys.getsizeof
    n = (size(flat.names) + size(flat.refs) + size(flat.keys) + size(flat.views) + size(flat.values)
         + size(flat.formulas) + 200)
    for refs, keys, views in zip(flat.refs, flat.keys, flat.views):
        n += (size(refs) + size(keys) + size(views) + len(views) * _FLAT_CELL_BYTES + sum(map(size, refs))
              + sum(map(_cell_bytes, views)))
    for lists in (flat.types, flat.cell_formulas, flat.arrays):  # (their items: the views' own, or types)
        if lists is not None:
            n += size(lists) + sum(map(size, lists))
    return n


def _flat_kept(view: WorkbookView, memo: SheetMemo) -> _Flat:
    """The flattening of ``view`` (:func:`_flatten` of each sheet), from the one kept in ``memo`` when the sheets
    have the same names and references, in the same order: the cells whose view is the same object as then keep
    their entries, the others are flattened anew into them. A changed cell that would enter or leave ``values`` or
    ``formulas`` (a cached value that became empty, a formula that came or went) would move entries in the
    dictionaries' order: the book is then flattened anew, as is a book of other sheets or references. The common
    change (a float replaced by a float or an int by an int, the same formula and array range) is found for a
    sheet's changed cells at once from what the entry keeps of the views they replace (``types``, the values'
    types; ``cell_formulas``, ``arrays``: the old views not read again) and written with one ``update``. The entry is
    taken out of the memo while it changes, in place, and kept again after (nothing half-changed stays there if
    this is interrupted or flattened anew); its count (:func:`_flat_bytes`) moves by the changed cells'
    :func:`_cell_bytes`."""
    names = [s.name for s in view.sheets]
    refs = [list(s.cells) for s in view.sheets]
    views = [list(s.cells.values()) for s in view.sheets]
    kept: _Flat | None = memo.take(_FLAT_KEY)
    if kept is not None and kept.names == names and kept.refs == refs and kept.types is not None \
            and kept.cell_formulas is not None and kept.arrays is not None:
        values, formulas = kept.values, kept.formulas
        delta = 0
        for sheet_keys, now, old, old_types, old_formulas, old_arrays in zip(
                kept.keys, views, kept.views, kept.types, kept.cell_formulas, kept.arrays):
            changed = list(compress(range(len(now)), map(is_not, now, old)))
            if len(changed) > 1:
                # the common change (a new cached number of the old one's type, float or int, the same formula and
                # array range: in values before and after, as a float, and counted as before, :func:`_cell_bytes`),
                # for all of them at once, from what is kept of the views they replace (the same tests as below, in
                # C); an int made a float only where it is one (the floats are the views' own objects, as below)
                pick = itemgetter(*changed)
                new_views = pick(now)
                new_values = list(map(_VALUE, new_views))
                new_types = list(map(type, new_values))
                common = list(map(and_, map(and_, map(is_, new_types, pick(old_types)),
                                            map(_NUMBER_TYPES.__contains__, new_types)),
                                  map(and_, map(is_, map(_FORMULA, new_views), pick(old_formulas)),
                                      map(is_, map(_ARRAY, new_views), pick(old_arrays)))))
                values.update(zip(compress(pick(sheet_keys), common), map(float, compress(new_values, common))))
                changed = list(compress(changed, map(not_, common)))
            size = sys.getsizeof
            for i in changed:
                c, o = now[i], old[i]
                v = c.value
                tv = type(v)
                if tv is old_types[i] and c.formula is o.formula and c.array_ref is o.array_ref:
                    # the common changes, one at a time: a number as above; a text (``str``, never None) for a
                    # text, flattened as it is and counted by its size instead of the old one's
                    if tv is float or tv is int:
                        values[sheet_keys[i]] = float(v)
                        continue
                    if tv is str:
                        values[sheet_keys[i]] = v
                        delta += size(v) - size(o.value)
                        continue
                old_types[i] = tv
                old_formulas[i] = c.formula
                old_arrays[i] = c.array_ref
                delta += _cell_bytes(c) - _cell_bytes(o)
                k = sheet_keys[i]
                f = c.formula
                of = o.formula
                if f is not of and f != of:
                    if (f is None) != (of is None):
                        break  # the cell enters or leaves formulas
                    if f is not None:
                        t = "=" + f
                        formulas[k] = _template_texts().get(t, t)
                if f is not None and v is None and c.type == "str":
                    v = ""
                if v is None:
                    if c.type != "inlineStr":
                        if k in values:
                            break  # the cell leaves values
                        continue
                    v = ""
                elif type(v) is int:
                    v = float(v)
                if k not in values:
                    break  # the cell enters values
                values[k] = v
            else:
                continue
            break
        else:  # every changed cell kept its place: the same keys in the same order, new entries
            kept.views = views
            kept.bytes += delta
            memo.keep(_FLAT_KEY, kept, size=kept.bytes)
            return kept
    values = {}
    formulas = {}
    if sum(map(len, views)) * _FLAT_CELL_BYTES > memo.max_bytes:  # could not be kept: not built to be
        for sheet in view.sheets:
            _flatten(sheet.name, sheet.cells, values, formulas)
        return _Flat(names=names, refs=refs, keys=[], views=views, values=values, formulas=formulas)
    keys = [[(s.name, r) for r in sheet_refs] for s, sheet_refs in zip(view.sheets, refs)]
    for sheet_keys, sheet_views in zip(keys, views):
        _flatten_keyed(sheet_keys, sheet_views, values, formulas)
    # a text equal to the template's formula is kept as the template's own object, and so handed to every later plan
    # whose cell is unchanged: comparing a plan's formulas with the template's (every recalc and validation of a
    # template plan) then finds each equal text by identity instead of comparing its characters (about 1.5 ms a plan)
    texts = _template_texts()
    formulas.update([(k, e) for k, t in formulas.items() if (e := texts.get(t)) is not None])
    flat = _Flat(names=names, refs=refs, keys=keys, views=views, values=values, formulas=formulas,
                 types=[list(map(type, map(_VALUE, sheet_views))) for sheet_views in views],
                 cell_formulas=[list(map(_FORMULA, sheet_views)) for sheet_views in views],
                 arrays=[list(map(_ARRAY, sheet_views)) for sheet_views in views])
    flat.bytes = _flat_bytes(flat)
    memo.keep(_FLAT_KEY, flat, size=flat.bytes)
    return flat


@lru_cache(maxsize=1)
def _template_texts() -> dict[str, str]:
    """The template's formula texts (``"=..."``), each mapped to itself: the objects a flattening kept in a
    :class:`~planner.ooxml.SheetMemo` holds instead of equal texts of its own (built once per process; a reader with
    a memo reads many plans, most of them the template's)."""
    from planner.validate.fastpath import compiled

    return {t: t for t in compiled()[1].values()}


def _flatten_keyed(keys: list[tuple[str, str]], views: Iterable[CellView], values: dict[tuple[str, str], Any],
                   formulas: dict[tuple[str, str], str]) -> None:
    """A sheet's cells given as their keys and views flattened into ``values`` and ``formulas``: a number as a
    float, a formula's text with its ``=``, a text formula or inline string without a cached value as ``""``, an
    empty cell left out."""
    for k, c in zip(keys, views):
        v = c.value
        if c.formula is not None:
            formulas[k] = "=" + c.formula
            if v is None and c.type == "str":
                v = ""
        if v is None:
            if c.type != "inlineStr":
                continue
            v = ""
        elif type(v) is int:
            v = float(v)
        values[k] = v


def read_book(path: str, *, memo: SheetMemo | None = None) -> Book:
    """Read ``path`` with :func:`planner.ooxml.read_workbook` (raises :class:`~planner.ooxml.WorkbookError`);
    ``memo``: the caller's :class:`~planner.ooxml.SheetMemo` across the plans it reads (the same book, sooner)."""
    return book_from_view(read_workbook(path, READ_LIMITS, memo=memo), memo=memo)


def _balanced(text: str) -> bool:
    """Quotes closed, parentheses and brackets balanced (outside strings and quoted sheet names; inside a
    structured reference ``'`` escapes the next character, as in ``[Column'#]``)."""
    paren = bracket = 0
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if bracket and ch == "'":
            i += 2
            continue
        if ch == '"' or (ch == "'" and not bracket):
            j = text.find(ch, i + 1)
            while j != -1 and j + 1 < n and text[j + 1] == ch:
                j = text.find(ch, j + 2)
            if j == -1:
                return False
            i = j + 1
            continue
        if ch == "[":
            bracket += 1
        elif ch == "]":
            bracket -= 1
        elif ch == "(" and not bracket:
            paren += 1
        elif ch == ")" and not bracket:
            paren -= 1
        if paren < 0 or bracket < 0:
            return False
        i += 1
    return paren == 0 and bracket == 0


def check_hostile(book: Book) -> Iterator[Finding]:
    """External links, DDE, hostile functions (every formula of every sheet, and defined names), Excel 4 macro
    sheets and auto-run names, VBA projects."""
    for part in book.view.external_links:
        yield Finding.of("external-link", actual=part)
    from planner.validate.fastpath import compiled

    template = compiled()[1]
    # a plan holding exactly the template's formulas, no more or fewer (compared in C), has none to screen
    for (sheet, cell), text in () if book.formulas == template else book.formulas.items():
        if template.get((sheet, cell)) == text:  # exactly the template's formula: known safe
            continue
        yield from _screen(text, sheet=sheet, cell=cell)
    for sheet_view in book.view.sheets:  # conditional formatting and data validation: Excel evaluates them too
        for sqref, text in sheet_view.rule_formulas:
            yield from (f for f in _screen("=" + text, sheet=sheet_view.name, cell=sqref.split(" ")[0] or None)
                        if f.code in _REACHING_OUT)
    for name, text in book.view.defined_names.items():
        yield from (f for f in _screen("=" + text, sheet=None, cell=None, name=name)
                    if f.code in _REACHING_OUT)  # print titles ($1:$1) and the like are whole rows by design
        bare = name.split("!")[-1].lower().removeprefix("_xlnm.")
        if bare.startswith(_AUTO_NAMES):
            yield Finding.of("xlm-macro", actual=name, note=f"defined name {name} runs on open")
    for name, kind in book.view.sheet_kinds.items():
        if kind.lower() in _MACRO_SHEETS:
            yield Finding.of("xlm-macro", sheet=name, actual=kind, note=f"sheet {name} is an Excel 4 {kind}")
    yield from check_vba(book)


_REACHING_OUT = frozenset({"dde-formula", "external-link", "hostile-function"})
"""The codes of a formula that reaches outside the workbook (screened in names and rules as in cells)."""
_AUTO_NAMES = ("auto_open", "auto_close", "auto_activate", "auto_deactivate")
"""Defined names Excel runs as Excel 4 macros (any name that starts with one of them)."""
_MACRO_SHEETS = frozenset({"xlmacrosheet", "xlintlmacrosheet", "dialogsheet", "macrosheet"})


def _screen(text: str, *, sheet: str | None, cell: str | None, name: str | None = None) -> Iterator[Finding]:
    """The findings of one formula: DDE, external references and hostile functions (all that apply), else
    unbalanced text or a whole-column range. Linear in the length of the formula."""
    where = {"note": f"defined name {name}"} if name else {}
    s = scan(text)
    hit = False
    if s.dde:
        hit = True
        yield Finding.of("dde-formula", sheet=sheet, cell=cell, actual=text[:200], **where)
    if s.external:
        hit = True
        yield Finding.of("external-link", sheet=sheet, cell=cell, actual=text[:200], **where)
    if s.hostile_functions:
        hit = True
        yield Finding.of("hostile-function", sheet=sheet, cell=cell, expected=", ".join(s.hostile_functions),
                         actual=text[:200], **where)
    if hit:
        return
    if not _balanced(text):
        yield Finding.of("unparsable-formula", sheet=sheet, cell=cell, actual=text[:200],
                         note="unbalanced quotes or parentheses")
    elif _WHOLE.search(strip_strings(text)):
        yield Finding.of("oversized-part", sheet=sheet, cell=cell, expected="a bounded range", actual=text[:200],
                         note="formula uses a whole-column or whole-row range; never evaluated")


def _vba_candidates(view: WorkbookView) -> list[str]:
    """Parts that may hold a VBA project: every part that is not XML (checked by content: an OLE file)."""
    return [p for p in view.parts if not p.endswith("/") and not p.lower().endswith((".xml", ".rels", ".vml"))]


def check_vba(book: Book) -> Iterator[Finding]:
    """Every part that is an OLE file, and any part the workbook declares as its VBA project, is parsed with
    oletools (:mod:`planner.validate.vba`); only the generated xlwings wrapper module is accepted (``macro-present``,
    info), anything else is ``macro-not-allowed``."""
    from planner.validate.vba import OLE_MAGIC, check_project  # oletools: imported only when a part may be VBA

    declared = list(book.view.vba_parts)
    candidates = list(dict.fromkeys(_vba_candidates(book.view) + declared))
    if not candidates:
        return
    with open_package(book.view.path, READ_LIMITS) as pkg:
        for part in candidates:
            if not pkg.has(part):
                continue
            data = pkg.read(part)
            if not data.startswith(OLE_MAGIC):
                if part.lower().endswith("vbaproject.bin") or part in declared:
                    yield Finding.of("macro-not-allowed", actual=part,
                                     note="the VBA project cannot be parsed (not an OLE file)")
                continue
            for v in check_project(part, data):
                if v.ok:
                    yield Finding.of("macro-present", actual=v.module)
                else:
                    yield Finding.of("macro-not-allowed", actual=v.module or part, note=v.problem)


def check_input_formulas(book: Book) -> Iterator[Finding]:
    """Input cells must hold values: a formula there (``=400*1000`` cached as 400) is refused, since Excel and
    LibreOffice recompute it on open while the checks would read its cached value."""
    from planner.validate.fastpath import NOT_LITERAL, compiled, literal_value

    template = compiled()[1]
    for t in ts.INPUT_TABLES:
        for i in range(t.rows):
            for col in t.columns:
                key = (t.sheet, t.cell(col.key, i))
                text = book.formulas.get(key)
                if text is None or key in template:
                    continue
                lit = literal_value(text)  # LibreOffice saves a TRUE/FALSE input as =TRUE() / =FALSE()
                if lit is not NOT_LITERAL and values_equal(book.values.get(key), lit):
                    continue  # a constant that recomputes to its cached value: nothing differs on open
                yield Finding.of("input-formula", sheet=key[0], cell=key[1], actual=text[:200])


def _name_value(book: Book, name: str) -> str | None:
    raw = book.view.defined_names.get(name)
    if raw is None:
        return None
    raw = raw.strip()
    return raw[1:-1].replace('""', '"') if raw.startswith('"') and raw.endswith('"') else raw


def check_template(book: Book) -> Iterator[Finding]:
    tid = _name_value(book, "PLANNER_TEMPLATE_ID")
    if tid != ts.TEMPLATE_ID:
        yield Finding.of("not-our-template",
                      expected=ts.TEMPLATE_ID, actual=tid)
        return
    version = _name_value(book, "PLANNER_TEMPLATE_VERSION")
    if version not in SUPPORTED_VERSIONS:
        yield Finding.of("unsupported-template-version", expected=", ".join(SUPPORTED_VERSIONS),
                      actual=version)


_HEADERS: list[tuple[tuple[Any, ...], list[tuple[list[tuple[str, str]], list[str]]]]] = []
"""At most one ``(tables, headers)``: :func:`_table_headers` of ``tables`` (the template's :data:`ts.TABLES`)."""


def _table_headers(tables: tuple[Any, ...]) -> list[tuple[list[tuple[str, str]], list[str]]]:
    """For each table of ``tables`` (in order) its header cells' ``(sheet, cell)`` keys and the headers they must
    hold, in column order: what :func:`check_structure` compares, built once per process (kept in
    :data:`_HEADERS`, one entry, rebuilt when ``tables`` is another object). Worked example: a table on sheet
    ``Routes`` from column B, header row 4, columns ``Route`` and ``Model`` gives
    ``([("Routes", "B4"), ("Routes", "C4")], ["Route", "Model"])``."""
    if _HEADERS and _HEADERS[0][0] is tables:
        return _HEADERS[0][1]
    out = [([(t.sheet, f"{ts.col_letter(t.first_col + j)}{t.header_row}") for j in range(len(t.columns))],
            [col.header for col in t.columns]) for t in tables]
    _HEADERS[:] = [(tables, out)]
    return out


def check_structure(book: Book) -> Iterator[Finding]:
    present = set(book.view.sheet_names)
    for name in ts.SHEET_ORDER:
        if name not in present:
            yield Finding.of("missing-sheet", sheet=name, expected=name, actual=None)
    get = book.values.get
    for t, (keys, headers) in zip(ts.TABLES, _table_headers(ts.TABLES)):
        if t.sheet not in present:
            continue
        raw = book.view.tables.get(t.name)
        if raw is None:
            yield Finding.of("missing-table", note=f"Excel Table {t.name} is missing", sheet=t.sheet,
                          cell=t.ref.split(":")[0], expected=f"{t.name} {t.ref}", actual=None)
            continue
        if raw.sheet != t.sheet or raw.ref != t.ref:
            yield Finding.of("missing-table", note=f"Excel Table {t.name} does not cover its template range",
                          sheet=t.sheet, cell=t.ref.split(":")[0], expected=f"{t.sheet}!{t.ref}",
                          actual=f"{raw.sheet}!{raw.ref}")
        # every header cell holding its header (a plan's common case: compared in C, no key built) gives no
        # finding below (equal there, so not ``!=``: a header is a str, the values' texts str or XlError)
        if list(map(get, keys)) == headers:
            continue
        for j, ((sheet, cell), header) in enumerate(zip(keys, headers)):
            got = get((sheet, cell))
            if got is None:  # no header cell: the table's own column list
                got = raw.columns[j] if j < len(raw.columns) else None
            if got != header:
                yield Finding.of("missing-column", note=f"of {t.name}",
                              sheet=sheet, cell=cell, expected=header, actual=got)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v


def _column_values(book: Book, ref: str) -> set[str]:
    """The allowed values of a dropdown fed by a table column (a computed column as the workbook computes it)."""
    table_name, key = ref.split(".")
    t = ts.table(table_name)
    expr = t.column(key).formula
    ev = None
    if expr is not None:  # a computed list (Lists.backend): its values as the workbook computes them, not as cached
        ev = ts.Evaluator({**ts.fixed_cells(), **book.values}, functions={})
    out = set()
    for i in range(t.rows):
        v = book.values.get((t.sheet, t.cell(key, i))) if ev is None else expr.evaluate(ev, i)
        if isinstance(v, str) and v:
            out.add(v.lower())
    return out


def _check_value(book: Book, sheet: str, cell: str, label: str, v: Any, *, kind: str, required: bool,
                 minimum: float | None, maximum: float | None, integer: bool, choices: str | None,
                 lists: dict[str, set[str]] | None = None) -> Iterator[Finding]:
    if v is None or (isinstance(v, str) and not v.strip()):
        if required:
            yield Finding.of("input-missing", note=label, sheet=sheet, cell=cell,
                          expected="a value", actual=None)
        return
    if isinstance(v, XlError):
        yield Finding.of("input-wrong-type", note=label, sheet=sheet, cell=cell,
                      expected=kind, actual=str(v))
        return
    if kind == "number":
        if not _is_number(v):
            yield Finding.of("input-wrong-type", note=label, sheet=sheet, cell=cell,
                          expected="a number", actual=v)
            return
        x = float(v)
        if integer and not x.is_integer():
            yield Finding.of("input-wrong-type", note=label, sheet=sheet, cell=cell,
                          expected="a whole number", actual=v)
        if (minimum is not None and x < minimum) or (maximum is not None and x > maximum):
            lo = "-inf" if minimum is None else f"{minimum:g}"
            hi = "inf" if maximum is None else f"{maximum:g}"
            yield Finding.of("input-out-of-range", note=label, sheet=sheet, cell=cell,
                          expected=f"{lo} <= x <= {hi}", actual=v)
        return
    if kind == "flag":
        if not (isinstance(v, bool) or (isinstance(v, str) and v.strip().upper() in FLAGS)):
            yield Finding.of("input-wrong-type", note=label, sheet=sheet, cell=cell,
                          expected="TRUE or FALSE", actual=v)
        return
    if choices:
        allowed = ({x.lower() for x in ts.LISTS[choices]} if choices in ts.LISTS
                   else (lists.get(choices) if lists is not None and choices in lists else None)
                   or _column_values(book, choices))
        if str(v).strip().lower() not in allowed:
            shown = ", ".join(sorted(allowed)[:8]) + (" ..." if len(allowed) > 8 else "")
            yield Finding.of("input-wrong-type", note=label, sheet=sheet, cell=cell,
                          expected=f"one of {shown}", actual=v)


def check_inputs(book: Book) -> Iterator[Finding]:
    for i, (name, unit, _help, opts) in enumerate(ts.PLAN_SETTINGS):
        cell = ts.PLAN.cell("value", i)
        yield from _check_value(book, ts.PLAN.sheet, cell, f"Plan setting {name} [{unit}]",
                                book.values.get((ts.PLAN.sheet, cell)), kind=opts.get("kind", "number"),
                                required=opts.get("required", True), minimum=opts.get("minimum"),
                                maximum=opts.get("maximum"),
                                integer=False, choices=None)
    lists = {c.choices: _column_values(book, c.choices) for t in ts.INPUT_TABLES for c in t.columns
             if c.choices and c.choices not in ts.LISTS}  # once per plan
    for t in ts.INPUT_TABLES:
        if t is ts.PLAN:
            continue
        first = t.columns[0]
        for i in range(t.rows):
            key_value = book.values.get((t.sheet, t.cell(first.key, i)))
            in_use = not (key_value is None or (isinstance(key_value, str) and not key_value.strip()))
            if not in_use:
                continue
            for col in t.columns[1:]:
                cell = t.cell(col.key, i)
                yield from _check_value(book, t.sheet, cell, f"{t.name} {col.header}", book.values.get((t.sheet, cell)),
                                        kind=col.kind, required=col.required, minimum=col.minimum,
                                        maximum=col.maximum, integer=col.integer, choices=col.choices,
                                        lists=lists)


def values_equal(cached: Any, recomputed: Any) -> bool:
    """Tolerance: numbers within ``1e-9 + 1e-9 * |recomputed|``; text/flags/errors identical; empty == ""; a
    flag cached as the number 1/0 (how LibreOffice saves a formula's TRUE/FALSE) equals TRUE/FALSE.

    >>> values_equal(1, True), values_equal(True, 1), values_equal(2, True), values_equal(None, "")
    (True, False, False, True)
    """
    if cached is None:
        cached = ""
    if recomputed is None:
        recomputed = ""
    if isinstance(recomputed, bool) and _is_number(cached) and cached in (0, 1):
        return cached == recomputed  # LibreOffice caches a formula's TRUE/FALSE as the number 1/0 (t="n")
    if isinstance(recomputed, bool) or isinstance(cached, bool):
        return isinstance(recomputed, bool) and isinstance(cached, bool) and recomputed == cached
    if _is_number(cached) and _is_number(recomputed):
        return abs(float(cached) - float(recomputed)) <= STALE_ABS_TOL + STALE_REL_TOL * abs(float(recomputed))
    if isinstance(cached, str) and isinstance(recomputed, str):
        return str(cached) == str(recomputed)
    return False


def validate_book(book: Book, path: str) -> Report:
    """Every check of a workbook already read."""
    from planner.validate.fastpath import check_formulas_and_values

    out: list[Finding] = list(check_hostile(book))
    template = list(check_template(book))
    out += template
    version = _name_value(book, "PLANNER_TEMPLATE_VERSION")
    if template:
        return Report(path=path, template_version=version, findings=sort_findings(out), engine="none")
    structure = list(check_structure(book))
    out += structure
    if structure:
        return Report(path=path, template_version=version, findings=sort_findings(out), engine="none")
    out += check_inputs(book)
    out += check_input_formulas(book)
    changed: list[Finding] = []
    info: dict[str, Any] = {}
    for f in check_formulas_and_values(book, info):
        if f.code == "formula-changed":
            changed.append(f)
        out.append(f)
    engine = info.get("engine", "fast")
    hostile = any(f.code in ("dde-formula", "external-link", "unparsable-formula", "oversized-part",
                             "hostile-function", "xlm-macro") for f in out)
    if engine == "fallback" and changed and not hostile:  # an edit the fast path cannot place: whole workbook
        general = list(check_changed_with_general_engine(path, book, changed))
        engine = "formulas" if general is not None and general != [None] else "fast+cached"
        out += [f for f in general if f is not None]
    if engine == "fallback":
        engine = "fast+cached"
    return Report(path=path, template_version=version, findings=sort_findings(out), engine=engine)


def check_changed_with_general_engine(path: str, book: Book, changed: list[Finding]) -> Iterator[Finding | None]:
    """For a non-conforming workbook (edited formulas), recompute it with the general engine (``planner.recalc``,
    formulas) into a temporary file and compare the edited cells' cached values with that recompute.

    Yields ``None`` alone when the general engine is not available or cannot run on this workbook: the edited
    cells are then reported (``formula-changed``) and their cached values used as they are.
    """
    import os
    import tempfile

    try:
        from planner.recalc import recalc_file
    except ImportError:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="planner-validate-") as tmp:
        out = os.path.join(tmp, "recalc" + os.path.splitext(path)[1])
        try:
            recalc_file(path, out)
            fresh = read_book(out)
        except Exception:  # noqa: BLE001  (the general engine refused this workbook: keep the fast-path findings)
            yield None
            return
    for f in changed:
        key = (f.sheet or "", f.cell or "")
        cached, new = book.values.get(key), fresh.values.get(key)
        if not values_equal(cached, new):
            yield Finding.of("stale-value", note="general engine",
                          sheet=f.sheet, cell=f.cell, expected=new, actual=cached)


def validate_file(path: str, *, memo: SheetMemo | None = None) -> Report:
    """Validate one workbook on disk; never raises (except ``MemoryError``, which the batch turns into a finding).
    ``memo``: a :class:`~planner.ooxml.SheetMemo` the caller keeps across the workbooks it validates (a batch
    worker): the same report, the sheets of later plans of one template read sooner."""
    try:
        try:
            book = read_book(path, memo=memo)
        except WorkbookError as exc:
            return Report(path=path, engine="none", findings=(
                Finding.of(READ_CODES.get(exc.kind, "unreadable"), sheet=exc.sheet, actual=exc.part,
                           note=exc.problem),))
        return validate_book(book, path)
    except MemoryError:
        raise
    except RecursionError:
        return Report(path=path, engine="none", findings=(Finding.of("oversized-part", note="formulas nest too "
                                                                                            "deeply"),))
    except Exception as exc:  # noqa: BLE001  (a batch never stops for one file)
        return Report(path=path, engine="none",
                      findings=(Finding.of("validator-crash", note=f"{type(exc).__name__}: {exc}",
                                           exception=type(exc).__name__),))
