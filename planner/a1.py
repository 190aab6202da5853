"""A1 references: column letters and numbers, cell and range parsing. Pure; shared by the OOXML reader and writer,
the structured-reference rewriter, the recompute and the template contract."""

from __future__ import annotations

import re
from functools import lru_cache

_CELL_RE = re.compile(r"^\$?([A-Za-z]{1,3})\$?(\d+)$")


def col_to_index(col: str) -> int:
    """``"A"`` → 1, ``"AA"`` → 27."""
    n = 0
    for ch in col.upper():
        n = n * 26 + ord(ch) - 64
    return n


def index_to_col(n: int) -> str:
    """``1`` → ``"A"``, ``27`` → ``"AA"``."""
    s = ""
    while n > 0:
        n, r = divmod(n - 1, 26)
        s = chr(65 + r) + s
    return s


@lru_cache(maxsize=65536)  # plans of one template repeat the same references; bounded for hostile input
def split_cell(ref: str) -> tuple[int, int]:
    """``"B3"`` → ``(3, 2)`` (row, column)."""
    m = _CELL_RE.match(ref)
    if not m:
        raise ValueError(f"not a cell reference: {ref!r}")
    return int(m.group(2)), col_to_index(m.group(1))


def split_range(ref: str) -> tuple[int, int, int, int]:
    """``"B3:D9"`` → ``(3, 2, 9, 4)`` (top, left, bottom, right)."""
    a, _, b = ref.partition(":")
    r1, c1 = split_cell(a)
    r2, c2 = split_cell(b or a)
    return min(r1, r2), min(c1, c2), max(r1, r2), max(c1, c2)
