"""Tables and columns of a workbook laid out as Excel Tables: the addresses every expression resolves."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from planner.a1 import index_to_col


@dataclass(frozen=True, kw_only=True)
class Column:
    """One column of a table. ``formula`` is ``None`` for an input column."""

    key: str
    header: str  # with its unit in brackets
    help: str
    formula: Any = None  # an Expr (planner.excel.expr)
    kind: str = "number"  # number | text | flag
    choices: str | None = None  # a list name (see LISTS) or a "Table.column" range feeding a dropdown
    minimum: float | None = None
    maximum: float | None = None
    integer: bool = False
    number_format: str = "General"
    width: float = 14.0
    required: bool = False  # must be filled on a row whose first column is filled


@dataclass(frozen=True, kw_only=True)
class Table:
    """An Excel Table: header row ``header_row``, ``rows`` data rows below it, columns from ``first_col``."""

    name: str  # the Excel Table name (stable)
    sheet: str
    columns: tuple[Column, ...]
    rows: int
    header_row: int = 3
    first_col: int = 1
    title: str = ""
    note: str = ""

    @property
    def first_row(self) -> int:
        return self.header_row + 1

    @property
    def last_row(self) -> int:
        return self.header_row + self.rows

    @cached_property
    def _positions(self) -> dict[str, int]:
        # evaluation asks for addresses hundreds of thousands of times per batch: look them up, not scan
        return {c.key: i for i, c in enumerate(self.columns)}

    @cached_property
    def _letters(self) -> dict[str, str]:
        return {c.key: index_to_col(self.first_col + i) for i, c in enumerate(self.columns)}

    def index(self, key: str) -> int:
        try:
            return self._positions[key]
        except KeyError:
            raise KeyError(f"{self.name} has no column {key!r}") from None

    def column(self, key: str) -> Column:
        return self.columns[self.index(key)]

    def letter(self, key: str) -> str:
        try:
            return self._letters[key]
        except KeyError:
            raise KeyError(f"{self.name} has no column {key!r}") from None

    def cell(self, key: str, row_index: int) -> str:
        """A1 address of column ``key`` on data row ``row_index`` (0-based)."""
        return f"{self.letter(key)}{self.first_row + row_index}"

    @property
    def ref(self) -> str:
        """The table's range, header included."""
        last = index_to_col(self.first_col + len(self.columns) - 1)
        return f"{index_to_col(self.first_col)}{self.header_row}:{last}{self.last_row}"

    @property
    def is_input(self) -> bool:
        return all(c.formula is None for c in self.columns)


col_letter = index_to_col
"""1 -> A, 27 -> AA (:func:`planner.a1.index_to_col`)."""


def sheet_ref(sheet: str) -> str:
    return sheet if sheet.replace("_", "").isalnum() else "'" + sheet.replace("'", "''") + "'"
