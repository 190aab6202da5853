"""Pure rewrites of Excel formula text into the plain A1 syntax the ``formulas`` library parses.

- :func:`rewrite_structured` turns structured references to Tables (``Table1[Column3]``, ``[Column3]``,
  ``Table1[[#This Row],[Column3]]``, ``[@Col]``, ``Table1[#Totals]``, ``#Headers``, ``#Data``, ``#All``, column
  ranges ``[[Col1]:[Col3]]``, escaped names ``[Column'#]``) into A1 ranges, using each table's ``ref``, header and
  totals row counts and column names (from ``xl/tables/*.xml``).
- :func:`bound_full_ranges` turns whole-column/whole-row ranges (``A:A``, ``3:3``) into ranges bounded by the used
  range, so that a formula cannot make the engine walk a million rows.
- :func:`exclude_cells_from_subtotal` removes nested ``SUBTOTAL`` cells from the single-column/row ranges a
  ``SUBTOTAL`` sums, as Excel does.
- :func:`external_reference` detects references to other workbooks (``[1]Sheet!A1``, ``'[x.xlsx]S'!A1``) and
  DDE-style links (``cmd|' /C calc'!A0``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from planner.a1 import index_to_col, split_range
from planner.formula_scan import external_reference as _detect


@dataclass(frozen=True, kw_only=True)
class Table:
    """What a rewrite needs of one Excel Table."""

    name: str
    sheet: str
    top: int
    left: int
    bottom: int
    right: int
    columns: tuple[str, ...]
    header_rows: int = 1
    totals_rows: int = 0


class StructuredRefError(ValueError):
    """A structured reference that names an unknown table or column, or has a bad specifier."""


def _quote_sheet(sheet: str) -> str:
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", sheet) and not re.fullmatch(r"[A-Za-z]{1,3}\d+", sheet):
        return sheet
    return "'" + sheet.replace("'", "''") + "'"


def _unescape(name: str) -> str:
    return re.sub(r"'(.)", r"\1", name).strip()


def _scan_brackets(text: str, start: int) -> int:
    """Index just after the bracket group opening at ``text[start] == '['`` (``'`` escapes the next char)."""
    depth = 0
    i = start
    while i < len(text):
        ch = text[i]
        if ch == "'":
            i += 2
            continue
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise StructuredRefError(f"unbalanced brackets in {text[start:]!r}")


def _parse_items(inner: str) -> list[str]:
    """``[#This Row],[Column1]:[Column3]`` → ``['#This Row', 'Column1:Column3']``; ``Column3`` → ``['Column3']``."""
    inner = inner.strip()
    if not inner:
        return []
    if not inner.startswith("["):
        if inner.startswith("@"):
            rest = inner[1:].strip()
            if rest.startswith("["):
                return ["#This Row", *_parse_items(rest)]
            return ["#This Row", _unescape(rest)] if rest else ["#This Row"]
        return [_unescape(inner)]
    items: list[str] = []
    i = 0
    while i < len(inner):
        ch = inner[i]
        if ch == "[":
            j = _scan_brackets(inner, i)
            part = _unescape(inner[i + 1: j - 1])
            if items and items[-1].endswith(":"):
                items[-1] += part
            else:
                items.append(part)
            i = j
        elif ch == ":":
            items[-1] += ":"
            i += 1
        elif ch in ", ":
            i += 1
        elif ch == "@":
            items.append("#This Row")
            i += 1
        else:
            raise StructuredRefError(f"unexpected {ch!r} in structured reference [{inner}]")
    return items


def _resolve(table: Table, items: list[str], row: int, here_sheet: str) -> str:
    specials = [s.lower() for s in items if s.startswith("#")]
    cols = [s for s in items if not s.startswith("#")]
    first_data = table.top + table.header_rows
    last_data = table.bottom - table.totals_rows
    rows: list[tuple[int, int]] = []
    for s in specials or ["#data"]:
        if s == "#all":
            rows.append((table.top, table.bottom))
        elif s == "#data":
            rows.append((first_data, last_data))
        elif s == "#headers":
            if not table.header_rows:
                return "#REF!"
            rows.append((table.top, table.top))
        elif s == "#totals":
            if not table.totals_rows:
                return "#REF!"
            rows.append((table.bottom, table.bottom))
        elif s in ("#this row", "#thisrow"):
            if not first_data <= row <= last_data:
                return "#VALUE!"
            rows.append((row, row))
        else:
            raise StructuredRefError(f"unknown specifier {s!r} for table {table.name}")
    r1, r2 = min(r[0] for r in rows), max(r[1] for r in rows)
    lower = [c.lower() for c in table.columns]

    def index(name: str) -> int:
        try:
            return table.left + lower.index(name.strip().lower())
        except ValueError:
            raise StructuredRefError(
                f"table {table.name} has no column {name!r} (columns: {', '.join(table.columns)})"
            ) from None

    if not cols:
        c1, c2 = table.left, table.right
    else:
        idx: list[int] = []
        for c in cols:
            a, sep, b = c.partition(":")
            idx.append(index(a))
            if sep:
                idx.append(index(b))
        c1, c2 = min(idx), max(idx)
    a = f"{index_to_col(c1)}{r1}"
    b = f"{index_to_col(c2)}{r2}"
    ref = a if a == b else f"{a}:{b}"
    if table.sheet.lower() != here_sheet.lower():
        ref = f"{_quote_sheet(table.sheet)}!{ref}"
    return ref


_TOKEN_RE = re.compile(r"\"(?:[^\"]|\"\")*\"|'(?:[^']|'')*'")


def rewrite_structured(formula: str, *, sheet: str, row: int, col: int, tables: Mapping[str, Table]) -> str:
    """Rewrite the structured references in ``formula`` (text without ``=``) for the cell at ``row``/``col`` of
    ``sheet``. ``tables`` maps table names (any case) to :class:`Table`. Raises :class:`StructuredRefError`.

    >>> t = Table(name="Table1", sheet="Sheet1", top=3, left=2, bottom=6, right=4,
    ...           columns=("Column1", "Column2", "Column3"), totals_rows=1)
    >>> rewrite_structured("SUM(Table1[[#This Row],[Column1]:[Column2]])", sheet="Sheet1", row=4, col=5,
    ...                    tables={"table1": t})
    'SUM(B4:C4)'
    >>> rewrite_structured("SUBTOTAL(109,[Column3])", sheet="Sheet1", row=6, col=4, tables={"table1": t})
    'SUBTOTAL(109,D4:D5)'
    >>> rewrite_structured("Table1[#Totals]+Table1[@Column1]", sheet="Other", row=4, col=1, tables={"table1": t})
    'Sheet1!B6:D6+Sheet1!B4'
    """
    by_name = {k.lower(): v for k, v in tables.items()}
    if by_name:
        formula = _bare_table_names(formula, by_name, sheet)
    if "[" not in formula:
        return formula
    here = next(
        (t for t in by_name.values() if t.sheet.lower() == sheet.lower() and t.top <= row <= t.bottom
         and t.left <= col <= t.right),
        None,
    )
    out: list[str] = []
    i = 0
    n = len(formula)
    while i < n:
        ch = formula[i]
        if ch in "\"'":
            m = _TOKEN_RE.match(formula, i)
            if not m:
                raise StructuredRefError(f"unterminated quote in {formula!r}")
            out.append(m.group(0))
            i = m.end()
            continue
        if ch == "[":
            # table name just before?
            j = len("".join(out))
            joined = "".join(out)
            m = re.search(r"([A-Za-z_\\][\w.\\]*)$", joined)
            end = _scan_brackets(formula, i)
            inner = formula[i + 1: end - 1]
            if m and m.group(1).lower() in by_name:
                table = by_name[m.group(1).lower()]
                prefix = joined[: j - len(m.group(1))]
                out = [prefix]
            elif re.fullmatch(r"\d+", inner) or inner.lower().endswith((".xlsx", ".xlsm", ".xls", ".xlsb")):
                out.append(formula[i:end])  # external workbook reference: left for external_reference()
                i = end
                continue
            elif m:
                raise StructuredRefError(f"no table named {m.group(1)!r} (tables: {', '.join(tables) or 'none'})")
            else:
                if here is None:
                    raise StructuredRefError(f"[{inner}] is a table column reference outside any table")
                table = here
            out.append(_resolve(table, _parse_items(inner), row, sheet))
            i = end
            continue
        out.append(ch)
        i += 1
    return "".join(out)


_BARE_RE = re.compile(r"(\"(?:[^\"]|\"\")*\"|'(?:[^']|'')*')|(?<![\w.\]\\])([A-Za-z_\\][\w.\\]*)(?![\w.\[(!])")


def _bare_table_names(formula: str, by_name: Mapping[str, Table], sheet: str) -> str:
    """A table name on its own (``SUM(Table1)``) means its data rows."""

    def sub(m: re.Match[str]) -> str:
        if m.group(1) or m.group(2).lower() not in by_name:
            return m.group(0)
        t = by_name[m.group(2).lower()]
        return _resolve(t, [], 0, sheet)

    return _BARE_RE.sub(sub, formula)


def tables_from_view(views: Iterable[object]) -> dict[str, Table]:
    """Convert :class:`planner.ooxml.TableView` objects into :class:`Table` (keyed by lower-case name)."""
    out = {}
    for v in views:
        top, left, bottom, right = split_range(v.ref)  # type: ignore[attr-defined]
        out[v.name.lower()] = Table(  # type: ignore[attr-defined]
            name=v.name, sheet=v.sheet, top=top, left=left, bottom=bottom, right=right,  # type: ignore[attr-defined]
            columns=tuple(v.columns), header_rows=v.header_row_count,  # type: ignore[attr-defined]
            totals_rows=v.totals_row_count,  # type: ignore[attr-defined]
        )
    return out


_FULL_RE = re.compile(
    r"(\"(?:[^\"]|\"\")*\")|(?<![\w.$:])(\$?)([A-Za-z]{1,3}):(\$?)([A-Za-z]{1,3})(?![\w(!])"
    r"|(?<![\w.$:])(\$?)(\d+):(\$?)(\d+)(?![\w.(!])"
)


def bound_full_ranges(formula: str, *, max_row: int, max_col: int) -> str:
    """Bound whole-column (``A:A``) and whole-row (``2:2``) ranges by the used range.

    >>> bound_full_ranges('SUM(A:B)+SUM($3:$4)&"A:A"', max_row=20, max_col=5)
    'SUM(A1:B20)+SUM($A$3:$E$4)&"A:A"'
    """
    max_row, max_col = max(max_row, 1), max(max_col, 1)

    def sub(m: re.Match[str]) -> str:
        if m.group(1):
            return m.group(1)
        if m.group(3):
            return f"{m.group(2)}{m.group(3)}1:{m.group(4)}{m.group(5)}{max_row}"
        a, b = m.group(6), m.group(8)
        return f"{a}A{a}{m.group(7)}:{b}{index_to_col(max_col)}{b}{m.group(9)}"

    return _FULL_RE.sub(sub, formula)


_SUBTOTAL_RE = re.compile(r"\bSUBTOTAL\(", re.I)
_RANGE_ARG_RE = re.compile(r"^\s*(\$?)([A-Z]{1,3})(\$?)(\d+):(\$?)([A-Z]{1,3})(\$?)(\d+)\s*$", re.I)


def exclude_cells_from_subtotal(formula: str, *, excluded: set[tuple[int, int]]) -> str:
    """Drop ``excluded`` (row, column) cells, the other SUBTOTAL cells of the sheet, from one-column ranges
    passed to ``SUBTOTAL`` in ``formula``: Excel ignores nested subtotals.

    >>> exclude_cells_from_subtotal("SUBTOTAL(9,B2:B10)", excluded={(6, 2)})
    'SUBTOTAL(9,B2:B5,B7:B10)'
    """
    if not excluded or not _SUBTOTAL_RE.search(formula):
        return formula
    out = []
    pos = 0
    for m in _SUBTOTAL_RE.finditer(formula):
        start = m.end()
        depth, i = 1, start
        while i < len(formula) and depth:
            if formula[i] == "(":
                depth += 1
            elif formula[i] == ")":
                depth -= 1
            elif formula[i] == '"':
                i = formula.find('"', i + 1)
                if i < 0:
                    return formula
            i += 1
        args = _split_args(formula[start: i - 1])
        new_args = [args[0]] + [_exclude(a, excluded) for a in args[1:]]
        out.append(formula[pos:start] + ",".join(new_args) + ")")
        pos = i
    out.append(formula[pos:])
    return "".join(out)


def _split_args(text: str) -> list[str]:
    args: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch == "," and depth == 0:
            args.append("".join(cur))
            cur = []
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur.append(ch)
    args.append("".join(cur))
    return args


def _exclude(arg: str, excluded: set[tuple[int, int]]) -> str:
    m = _RANGE_ARG_RE.match(arg)
    if not m or m.group(2).upper() != m.group(6).upper():
        return arg
    c = 0
    for ch in m.group(2).upper():
        c = c * 26 + ord(ch) - 64
    r1, r2 = int(m.group(4)), int(m.group(8))
    skip = sorted(r for r, cc in excluded if cc == c and r1 <= r <= r2)
    if not skip:
        return arg
    col = m.group(2).upper()
    pieces, start = [], r1
    for r in skip + [r2 + 1]:
        if start <= r - 1:
            pieces.append(f"{col}{start}" if start == r - 1 else f"{col}{start}:{col}{r - 1}")
        start = r + 1
    return ",".join(pieces) if pieces else "#REF!"


def external_reference(formula: str) -> str | None:
    """The external workbook or DDE target a formula refers to, or ``None``: the one linear-time detector,
    :func:`planner.formula_scan.external_reference`, shared with ``planner validate``.

    >>> external_reference("[1]Sheet1!A1+1")
    '[1]'
    >>> external_reference("'../[secret.xlsx]S'!A1")
    '[secret.xlsx]'
    >>> external_reference("cmd|' /C calc'!A0")
    'cmd|'
    >>> external_reference('"[1]x!"&A1') is None
    True

    Linear in the formula's length (a 60 KB formula is scanned in milliseconds).
    """
    return _detect(formula)
