"""How every table of the workbook reads and prints, decided from its column declarations (pure: no I/O).

The rules go by a column's key, header unit and kind, never by a table's name, so any table declared later (another
sheet's) is formatted the same way without a line here:

- utilizations and shares (``*_util``, ``*_share``, a ``[fraction]`` unit) show as percentages (0.73 -> 73%);
- money (a ``USD`` unit) shows with a dollar sign and thousands separators, keeping the declared decimals;
- every other column keeps its declared format (months ``0.0``, seconds ``0.000``, tokens ``#,##0`` ...);
- status columns (``status``, ``*_ok``) get OK / WARN / BREACH colours, utilizations red above 100%;
- formula tables keyed by a name in their first column hide their empty rows (see :func:`filters_empty_rows`).

A display format changes how a value looks, never the value: the cached values and every formula are the same.
"""

from __future__ import annotations

import re

from planner.decision import INFINITE_CELL, UTIL_INFINITE
from planner.excel.tables import Column, Table

PERCENT = "0%"
PERCENT_FINE = "0.0%"
MONEY_UNIT = re.compile(r"\[USD\b")
STATUS_WORDS = ("OK", "WARN", "BREACH")


def is_percent(col: Column) -> bool:
    """A utilization, a share or a fraction: shown as a percentage.

    >>> from planner.excel.tables import Column
    >>> is_percent(Column(key="kv_util", header="KV util [x]", help=""))
    True
    >>> is_percent(Column(key="headroom_multiple", header="Headroom [x demand]", help=""))
    False
    """
    if col.kind != "number":
        return False
    return col.key.endswith(("_util", "_share")) or "[fraction" in col.header or col.number_format.endswith("%")


def holds_utilization(col: Column) -> bool:
    """A utilization (``util`` is one of the key's words): it can hold :data:`planner.decision.UTIL_INFINITE`.

    >>> from planner.excel.tables import Column
    >>> [holds_utilization(Column(key=k, header="", help="")) for k in ("load_util", "util_after", "kv_share")]
    [True, True, False]
    """
    return "util" in col.key.split("_")


def util_format(percent: str) -> str:
    """A utilization's format: the infinity sign for :data:`planner.decision.UTIL_INFINITE` (a fleet whose latency
    SLOs are missed at any load) and above, ``percent`` below (Excel and LibreOffice number-format conditions).

    >>> util_format("0%") == '[>=1000000000]"\u221e";0%'
    True
    """
    return f'[>={UTIL_INFINITE:.0f}]"{INFINITE_CELL}";{percent}'


UTIL_AXIS = util_format('[>=100]"";' + PERCENT)
"""A chart's utilization axis: the infinity sign at :data:`planner.decision.UTIL_INFINITE`, no label between 100
(10,000%) and it (one infinite utilization would otherwise label the axis in billions of percent), a percentage
below."""


def is_money(header: str) -> bool:
    """A header whose unit is in dollars (``[USD/month]``, ``[USD/Mtok]``, ``[USD/GPU-h]``).

    >>> is_money("Cost with cache [USD/month]"), is_money("Route [name]")
    (True, False)
    """
    return bool(MONEY_UNIT.search(header))


def money_format(declared: str) -> str:
    """A dollar format with thousands separators and the declared format's decimals.

    >>> money_format("#,##0"), money_format("0.000"), money_format("General")
    ('$#,##0', '$#,##0.000', '$#,##0.00')
    """
    if declared == "General":
        return "$#,##0.00"
    decimals = declared.split(".", 1)[1].rstrip("%") if "." in declared else ""
    return "$#,##0" + (f".{decimals}" if decimals else "")


def display_format(col: Column) -> str:
    """The number format a column is shown with (its declared one unless a rule above applies).

    >>> from planner.excel.tables import Column
    >>> display_format(Column(key="cost_monthly_usd", header="Cost [USD/month]", help="", number_format="#,##0"))
    '$#,##0'
    >>> display_format(Column(key="months_to_breach", header="Months [months]", help="", number_format="0.0"))
    '0.0'
    """
    if col.kind != "number":
        return col.number_format
    if is_percent(col):
        percent = col.number_format if col.number_format.endswith("%") else PERCENT
        return util_format(percent) if holds_utilization(col) else percent
    if is_money(col.header):
        return money_format(col.number_format)
    return col.number_format


def display_width(col: Column) -> float:
    """Column width: a computed percentage needs fewer characters than the declared width allows (the header wraps).

    >>> from planner.excel.tables import Column
    >>> display_width(Column(key="kv_util", header="KV util [x]", help="", width=14, formula="=1"))
    9.0
    """
    if is_percent(col) and col.formula is not None:
        return min(col.width, 9.0)
    return col.width


def total_format(label: str, declared: str) -> str:
    """The format of a plan total by its label's unit (the totals are label, formula, declared format).

    >>> total_format("Total cost [USD/month]", "#,##0"), total_format("Highest utilization [x]", "0.00")[-3:]
    ('$#,##0', ';0%')
    """
    low = label.lower()
    if "utilization" in low or "outage [x]" in low:
        return util_format(PERCENT)
    if is_money(label):
        return money_format(declared)
    return declared


def plan_setting_format(unit: str) -> str:
    """The format of a Plan setting's value cell by its unit: fractions as percentages, growth to a tenth.

    >>> plan_setting_format("fraction"), plan_setting_format("fraction/month"), plan_setting_format("x")
    ('0%', '0.0%', 'General')
    """
    if unit == "fraction":
        return PERCENT
    if unit.startswith("fraction/"):
        return PERCENT_FINE
    return "General"


def is_status(col: Column) -> bool:
    """A column holding OK / WARN / BREACH words.

    >>> from planner.excel.tables import Column
    >>> is_status(Column(key="failover_ok", header="Failover check", help="", kind="text"))
    True
    """
    return col.kind == "text" and (col.key == "status" or col.key.endswith("_ok"))


def is_utilization(col: Column) -> bool:
    """A computed utilization: red above 1 (100%)."""
    return col.formula is not None and col.kind == "number" and col.key.endswith("_util")


def filters_empty_rows(t: Table) -> bool:
    """A table whose first column is a name computed from an input table's (a route, a backend, a fleet): its rows
    follow that table's, so the rows past the filled ones are empty (or hold inputs no route reads: the per-route
    demand table). Those are hidden by a non-blank filter on that column."""
    return (not t.is_input and bool(t.columns) and t.columns[0].kind == "text"
            and t.columns[0].formula is not None)
