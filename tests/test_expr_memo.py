"""Registry calls with column arguments are remembered like scalar calls: the per-route cells that total one backend's
column (BACKEND_SUM, OUTAGE_SUM) compute each distinct call once per plan, and the values do not change."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from planner.excel import expr
from planner.validate import fastpath
from planner.validate.checks import read_book

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "bulk-tpm.xlsm"


def test_column_calls_are_computed_once_per_distinct_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    book = read_book(str(SAMPLE))
    keep = {k: book.values.get(k) for k in fastpath.compiled()[1] if book.formulas.get(k) is None}
    fastpath._MEMO.clear()
    plain = fastpath.evaluate(book, keep)  # reference values (memo on: compare with memo off below)
    computed: Counter[tuple] = Counter()
    orig_call = expr.Udf._call

    def counting_call(spec, raw):  # noqa: ANN001, ANN202
        if any(isinstance(v, list) for v in raw):
            computed[(spec.name, repr(raw))] += 1
            computed[spec.name] += 1
        return orig_call(spec, raw)

    monkeypatch.setattr(expr.Udf, "_call", staticmethod(counting_call))
    fastpath._MEMO.clear()
    again = fastpath.evaluate(book, keep)
    assert max(n for k, n in computed.items() if isinstance(k, tuple)) == 1  # each distinct column call computed once
    # the cells that call BACKEND_SUM on a filled route row (the calls the memo saves), from the template's formulas
    calling = sum(1 for s, c, e, _r in fastpath.compiled()[0] if "BACKEND_SUM" in e.functions()
                  and plain[(s, c)] not in ("", None))
    assert 0 < computed["BACKEND_SUM"] < calling  # and the repeats (routes of one backend) reused
    assert again == plain
    monkeypatch.setattr(fastpath, "_MEMO", None)
    no_memo = fastpath.evaluate(book, keep)  # no memo at all: the same values
    assert no_memo == plain
