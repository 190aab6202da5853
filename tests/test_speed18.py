"""Session 20 (speed18): the forecast's and the per-backend functions' own time, every value as before. Each shortcut
is checked against the code it replaced (kept here) over many random inputs, and each cache against inputs that
differ only in what its key must tell apart:

- :func:`planner.sheet.forecast._breach_growths` (BACKEND_MONTHS_TO_BREACH's route table read once, kept per shared
  table object);
- :class:`planner.sheet.forecast._RouteMonth` (FORECAST_ROUTE_MONTH's month read once a month);
- :func:`planner.sheet.forecast._whole` (the month's serving calls with whole TP and PP as ints);
- :func:`planner.decision._backend_rows` (BACKEND_SUM, BACKEND_MAX, BACKEND_ARGMAX and OUTAGE_SUM: a backend
  column's rows by name, kept per column).
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from planner import decision
from planner.coerce import SharedRows
from planner.errors import ArgumentError, PlannerError, Refusal, check_number, read_row
from planner.sheet import forecast as sf
from planner.sheet import serving as ss


def _outcome(call: Any, *args: Any, **kwargs: Any) -> tuple[str, str]:
    try:
        return "value", repr(call(*args, **kwargs))
    except PlannerError as error:
        return type(error).__name__, str(error)


# ---- BACKEND_MONTHS_TO_BREACH -----------------------------------------------------------------------------------

def _reference_breach(backend: Any, routes: Any, monthly_growth: Any, utilization: Any) -> float:
    """BACKEND_MONTHS_TO_BREACH as it was before speed18 (every call reads the table through _share_rows)."""
    g = float(check_number("monthly_growth", monthly_growth, minimum=-1, exclusive_minimum=True))
    key = str(backend).strip().lower()
    mine = sf._share_rows(routes, backend=key)
    rates = sf._route_growths([r["growth"] for r in mine], plan_growth=g)
    if len(set(rates)) <= 1:
        return decision.months_to_breach(utilization, monthly_growth_rate=rates[0] if rates else g)
    return sf._backend_breach(mine, rates)


_NAMES = ("a", " A ", "b", "B", "c", None, "", "#N/A")
_GROWTHS = (None, None, None, "", 0.05, 0.1, -0.5, "#VALUE!", "fast", -1.0)
_SHARES = (0.0, 0.1, 0.3, 0.45, None, "#DIV/0!")


def _breach_table(rng: random.Random, rows: int) -> list[list[Any]]:
    out = [list(sf.ROUTE_KEYS)]
    for i in range(rows):
        cells: list[Any] = [None] * len(sf.ROUTE_KEYS)
        cells[0] = rng.choice((f"r{i}", f"r{i}", f"r{i}", None, " "))
        cells[sf.ROUTE_KEYS.index("backend")] = rng.choice(_NAMES)
        cells[sf.ROUTE_KEYS.index("growth")] = rng.choice(_GROWTHS)
        for k in sf.SHARE_KEYS:
            cells[sf.ROUTE_KEYS.index(k)] = rng.choice(_SHARES) if rng.random() < 0.3 else rng.random() * 0.2
        out.append(cells)
    return out


def test_breach_as_before_on_random_tables() -> None:
    """Every backend of 300 random route tables (blank and erroneous names, growths and shares; one, mixed or no
    own growth rates), several growths and utilizations: the same value or the same error as the path it replaced,
    for the table as a plain list and as shared rows (kept), asked twice."""
    rng = random.Random(18)
    for n in range(300):
        table = _breach_table(rng, rng.randint(0, 8))
        shared = SharedRows(table)
        for backend, g, u in itertools.product(("a", "b", "C", "zz"), (0.0, 0.08, -0.2, "x"), (0.0, 0.6, 1.2)):
            want = _outcome(_reference_breach, backend, table, g, u)
            assert _outcome(sf.BACKEND_MONTHS_TO_BREACH, backend, table, g, u) == want, (n, backend, g, u)
            for _ in range(2):
                assert _outcome(sf.BACKEND_MONTHS_TO_BREACH, backend, shared, g, u) == want, (n, backend, g, u)


def test_breach_table_of_the_wrong_width_raises_every_time() -> None:
    table = SharedRows([list(sf.ROUTE_KEYS)[:-1]])
    for _ in range(2):
        with pytest.raises(ArgumentError):
            sf.BACKEND_MONTHS_TO_BREACH("a", table, 0.1, 0.5)


def test_breach_kept_per_table_object() -> None:
    """Two shared tables one cell apart (a growth; an error in a share), asked one after the other: each its own
    answer (a table kept by its ``id`` is held, so another table never takes its place)."""
    base = [list(sf.ROUTE_KEYS)]
    for i, growth in enumerate((0.1, None)):
        cells: list[Any] = [None] * len(sf.ROUTE_KEYS)
        cells[0], cells[sf.ROUTE_KEYS.index("backend")], cells[sf.ROUTE_KEYS.index("growth")] = f"r{i}", "a", growth
        cells[sf.ROUTE_KEYS.index("itpm_share")] = 0.3
        base.append(cells)
    one = SharedRows([list(r) for r in base])
    other = [list(r) for r in base]
    other[1][sf.ROUTE_KEYS.index("growth")] = None  # both routes at the Plan's growth: the closed form on u
    two = SharedRows(other)
    broken = [list(r) for r in base]
    broken[2][sf.ROUTE_KEYS.index("tpm_share")] = "#REF!"
    three = SharedRows(broken)
    for _ in range(2):
        assert round(sf.BACKEND_MONTHS_TO_BREACH("a", one, 0.0, 0.6), 2) == 8.89
        assert sf.BACKEND_MONTHS_TO_BREACH("a", two, 0.0, 0.6) == decision.MONTHS_NEVER
        assert sf.BACKEND_MONTHS_TO_BREACH("a", two, 0.1, 0.6) == decision.months_to_breach(0.6,
                                                                                             monthly_growth_rate=0.1)
        with pytest.raises(Refusal, match="#REF!"):
            sf.BACKEND_MONTHS_TO_BREACH("a", three, 0.1, 0.6)
        assert sf.BACKEND_MONTHS_TO_BREACH("b", three, 0.1, 0.6) == decision.months_to_breach(
            0.6, monthly_growth_rate=0.1)  # no route on b: the closed form at the Plan's growth


# ---- FORECAST_ROUTE_MONTH ---------------------------------------------------------------------------------------

def _reference_route_month(field: Any, multiplier: Any, threshold: Any, backends: Any, route: Any,
                           month_number: Any, routes: Any, route_demand: Any = None) -> float:
    """FORECAST_ROUTE_MONTH as it was before speed18 (its fleet share sum as _fleet_share's loop was)."""
    f, x, t = sf._month_inputs(field, fields=sf.ROUTE_FIELDS, multiplier=multiplier, threshold=threshold)
    m = int(check_number("month_number", month_number, minimum=1, integer=True))
    key = str(route).strip().lower()
    table, plan, index = sf._hashable(routes), sf._hashable(backends), sf._hashable(route_demand)
    rows = sf._route_rows(table)
    multiples = sf._multiples(table, index, m, x)
    at = sf._route_at(table).get(key)
    if at is None or sf._blank(rows[at]["backend"]):
        raise ArgumentError("route", route, "a route of the Forecast sheet's route table with a backend")
    mine = rows[at]
    backend = str(mine["backend"]).strip()
    month, broken = sf._month(x, t, plan, m, table, index)
    error = broken.get(backend.lower()) or broken.get("?")
    if error is not None:
        raise Refusal(error)
    own = multiples[at]
    plan_b = sf._plan_backend_at(plan).get(backend.lower())
    if plan_b is None or plan_b.kind != "fleet":
        return sf._month1_bill(table, at) * own
    share = sum((sf._num(r["compute_share"], 0.0) or 0.0) * multiple for r, multiple in zip(rows, multiples)
                if not sf._blank(r["backend"]) and str(r["backend"]).strip().lower() == backend.lower())
    if share <= 0:
        return 0.0
    step = month.backend(backend)
    cost = plan_b.step_usd * plan_b.units + (step.action_usd if step is not None else 0.0)
    return cost * (sf._num(mine["compute_share"], 0.0) or 0.0) * own / share


def _backend_row(**cells: Any) -> tuple:
    return tuple(cells.get(k, 0.0) for k in sf.BACKEND_KEYS)


def _plan_backends(rng: random.Random) -> tuple:
    """An API backend (its ITPM per key, keys multiply it) and a fleet that needs no serving-model run (no rate),
    at random utilizations: the months' steps add keys and replicas."""
    api = _backend_row(backend="api", type="provider", top_route="chat", linear_util=rng.uniform(0.2, 1.2),
                       binding="ITPM", units=float(rng.randint(1, 3)), scope="key", multiplied_by="key",
                       limit_util=0.5, limit_binding="ITPM", mix_output_tokens=1.0)
    fleet = _backend_row(backend="Fleet", type="fleet", top_route="batch", linear_util=rng.uniform(0.2, 1.5),
                         binding="COMPUTE", units=float(rng.randint(1, 4)), step_usd=rng.choice((0.0, 2400.0)),
                         compute_util=rng.uniform(0.1, 1.0), load_util=rng.uniform(0.0, 0.9), mix_output_tokens=1.0)
    return (tuple(sf.BACKEND_KEYS), api, fleet)


def _route_cells(rng: random.Random, name: Any, backend: Any) -> tuple:
    cells = {k: 0.0 for k in sf.ROUTE_KEYS}
    cells.update(route=name, backend=backend, kind="interactive", linear_binding="ITPM", limit_binding="ITPM",
                 growth=rng.choice((None, None, None, None, 0.05, 0.2, "#N/A")),
                 input_usd=rng.choice((100.0, 3.5, None, "#VALUE!")), cache_read_usd=rng.uniform(0, 5),
                 cache_write_usd=rng.uniform(0, 2), output_usd=rng.uniform(0, 60),
                 compute_share=rng.choice((0.0, 0.1, 0.35, -0.0, None, "x")), itpm_share=rng.uniform(0, 0.3),
                 qps=rng.uniform(0, 2))
    return tuple(cells[k] for k in sf.ROUTE_KEYS)


def test_route_month_as_before_on_random_plans() -> None:
    """Every route (and unknown names) of 120 random route tables of API and fleet routes (own growths, blank and
    erroneous cells, repeated names), months 1, 2 and 9 at several multiples: the same value or error as the body it
    replaced, asked twice (the month's context kept)."""
    rng = random.Random(20)
    for n in range(120):
        backends = _plan_backends(rng)
        names = [rng.choice(("chat", "rag", "batch", "Chat ", "code", "a", "b", None))
                 for _ in range(rng.randint(1, 8))]
        table = (tuple(sf.ROUTE_KEYS), *(_route_cells(rng, name, rng.choice(("api", " API", "fleet", "Fleet ", "fleet",
                                                                             "nope", None)))
                                         for name in names))
        for route, month, x in itertools.product(("chat", "rag", "batch", "code", "a", "b", "none"), (1, 2, 9),
                                                 (1.0, 1.35)):
            want = _outcome(_reference_route_month, "usd", x, 0.8, backends, route, month, table)
            for _ in range(2):
                got = _outcome(sf.FORECAST_ROUTE_MONTH, "usd", x, 0.8, backends, route, month, table)
                assert got == want, (n, route, month, x)


def test_route_month_kept_per_month_and_tables() -> None:
    """Months one key apart (the multiple, the threshold, the backend table: a step price, the month, the route
    table: a compute share, the demand table), asked one after the other: each its own answer, the body's before
    speed18."""
    rng = random.Random(7)
    backends = _plan_backends(rng)
    fleet = dict(zip(sf.BACKEND_KEYS, backends[2]))
    fleet.update(linear_util=1.4, compute_util=1.4, units=2.0, step_usd=1000.0)
    backends = (backends[0], backends[1], tuple(fleet[k] for k in sf.BACKEND_KEYS))
    dearer = (backends[0], backends[1], tuple({**fleet, "step_usd": 1700.0}[k] for k in sf.BACKEND_KEYS))

    def routes(share_a: float, growth_b: Any) -> tuple:
        rows = [dict(zip(sf.ROUTE_KEYS, _route_cells(rng, name, "fleet"))) for name in ("a", "b")]
        rows[0].update(compute_share=share_a, growth=None)
        rows[1].update(compute_share=0.75, growth=growth_b)
        return (tuple(sf.ROUTE_KEYS), *(tuple(r[k] for k in sf.ROUTE_KEYS) for r in rows))

    table, moved, growing = routes(0.25, None), routes(0.5, None), routes(0.25, 0.1)
    demand = (("route", *range(1, 13)), ("a", *[2.0] * 12), ("b", *[1.0] * 12))
    groups = [[(1.0, 0.8, backends, 3, table, None), (1.2, 0.8, backends, 3, table, None),
               (1.0, 0.5, backends, 3, table, None), (1.0, 0.8, dearer, 3, table, None),
               (1.0, 0.8, backends, 3, moved, None), (1.0, 0.8, backends, 3, table, demand)],
              [(1.0, 0.8, backends, 3, growing, None), (1.0, 0.8, backends, 4, growing, None)]]
    for cases in groups:
        answers = [sf.FORECAST_ROUTE_MONTH("usd", x, t, b, "a", m, r, d) for x, t, b, m, r, d in cases]
        assert len(set(answers)) == len(answers), answers
        for (x, t, b, m, r, d), got in zip(cases, answers):
            assert got == _reference_route_month("usd", x, t, b, "a", m, r, d)


# ---- the months' serving calls ----------------------------------------------------------------------------------

def test_whole_tp_and_pp_give_the_fleet_functions_figures() -> None:
    """The serving model's TTFT and TPOT with TP and PP as whole floats (the backend table's cells, before speed18)
    and as the ints the month now passes: the same figures."""
    for model, gpu, tp, pp, rate in (("llama-3.1-8b", "h100-sxm", 1.0, 1.0, 2.0), ("llama-3.1-70b", "h100-sxm", 4.0,
                                                                                   1.0, 0.3),
                                     ("llama-3.1-70b", "h100-sxm", 2.0, 2.0, 0.2)):
        as_float = ss._perf(model, gpu, tp, 2000.0, 300.0, 0, rate, "vllm", "auto", "auto", 0.2, pp, "")
        as_int = ss._perf(model, gpu, sf._whole(tp), 2000.0, 300.0, 0, rate, "vllm", "auto", "auto", 0.2,
                          sf._whole(pp), "")
        assert type(sf._whole(tp)) is int
        assert (as_float.ttft_s, as_float.tpot_s) == (as_int.ttft_s, as_int.tpot_s)


# ---- BACKEND_SUM, BACKEND_MAX, BACKEND_ARGMAX, OUTAGE_SUM -------------------------------------------------------

def _ref_sum(backend: Any, *, backends: Any, values: Any) -> float:
    key = (backend or "").strip().lower()
    if not key:
        raise ArgumentError("backend", backend, "a backend name")
    if len(backends) != len(values):
        raise ArgumentError("values", len(values), f"one value per route ({len(backends)} backends)")
    total = 0.0
    for b, v in zip(backends, values):
        if b is not None and str(b).strip().lower() == key and v is not None:
            total += float(read_row(v))
    return total


def _ref_outage(failed: Any, *, receiver: Any, backends: Any, failovers: Any, values: Any) -> float:
    f, r = (failed or "").strip().lower(), (receiver or "").strip().lower()
    if not f or not r:
        raise ArgumentError("backend", failed if not f else receiver, "a backend name")
    if not len(backends) == len(failovers) == len(values):
        raise ArgumentError("values", len(values), "one backend, failover and value per route")
    total = 0.0
    for b, fo, v in zip(backends, failovers, values):
        if v is not None and b is not None and fo is not None and str(b).strip().lower() == f \
                and str(fo).strip().lower() == r:
            total += float(read_row(v))
    return total


def _ref_max(backend: Any, *, backends: Any, values: Any) -> float:
    key = (backend or "").strip().lower()
    found = [float(read_row(v)) for b, v in zip(backends, values)
             if b is not None and v is not None and str(b).strip().lower() == key]
    return max(found, default=0.0)


def _ref_argmax(backend: Any, *, backends: Any, values: Any, labels: Any) -> str:
    key = (backend or "").strip().lower()
    best, label = None, ""
    for b, v, lab in zip(backends, values, labels):
        if b is None or v is None or str(b).strip().lower() != key:
            continue
        x = float(read_row(v))
        if best is None or x > best:
            best, label = x, "" if lab is None else str(read_row(lab))
    return label


_CELLS = ("a", "A ", " a", "b", "c", None, None, "")
_ODD = (1.0, 1, True, "1", "1.0")  # cells that are not texts: compared as str(b) row by row (no kept answer)
_VALUES = (0.5, 1.25, 3, 0.1 + 0.2, 1e-17, -2.0, None, None)


def _column(rng: random.Random, n: int, odd: bool) -> list[Any]:
    return [rng.choice(_ODD) if odd and rng.random() < 0.2 else rng.choice(_CELLS) for _ in range(n)]


def test_per_backend_functions_as_before_on_random_columns() -> None:
    """3,000 random columns (case and space variants, blanks, refusals held in values and labels, numbers and
    booleans among the names, columns of unequal lengths): each function's value or error is the loop's, for every
    backend asked, twice."""
    rng = random.Random(5)
    for n in range(3000):
        rows = rng.randint(0, 9)
        odd = rng.random() < 0.2
        backends = _column(rng, rows, odd)
        failovers = _column(rng, rows, odd)
        values: list[Any] = [rng.choice(_VALUES) for _ in range(rows)]
        if rng.random() < 0.2 and rows:
            values[rng.randrange(rows)] = Refusal("kv_budget: got '-91 GiB', expected a positive KV budget")
        labels: list[Any] = [rng.choice(("c TPM", "d KV", None, 3.0)) for _ in range(rows)]
        if rng.random() < 0.1 and rows:
            labels[rng.randrange(rows)] = Refusal("label: got 'x', expected a label")
        if rng.random() < 0.15:  # unequal lengths: sum and outage refuse, max and argmax read zip's rows
            values = values[:rng.randint(0, rows)]
        for backend in ("a", "b", "c", "A", "z", "1", "1.0", "true", "", None):
            for _ in range(2):
                assert _outcome(decision.backend_sum, backend, backends=backends, values=values) == \
                    _outcome(_ref_sum, backend, backends=backends, values=values), (n, backend)
                assert _outcome(decision.backend_max, backend, backends=backends, values=values) == \
                    _outcome(_ref_max, backend, backends=backends, values=values), (n, backend)
                assert _outcome(decision.backend_argmax, backend, backends=backends, values=values,
                                labels=labels) == \
                    _outcome(_ref_argmax, backend, backends=backends, values=values, labels=labels), (n, backend)
                for receiver in ("b", "c", "A"):
                    assert _outcome(decision.outage_sum, backend, receiver=receiver, backends=backends,
                                    failovers=failovers, values=values) == \
                        _outcome(_ref_outage, backend, receiver=receiver, backends=backends, failovers=failovers,
                                 values=values), (n, backend, receiver)


def test_backend_rows_kept_per_column() -> None:
    """Two columns one name apart give their own rows; a column with a number among its names has no kept answer
    (``1`` and ``1.0`` are one key of the cache but two texts of the loop); an unhashable cell is read row by
    row."""
    assert decision._backend_rows(("a", "b", "A")) == {"a": (0, 2), "b": (1,)}
    assert decision._backend_rows(("a", "b", "b")) == {"a": (0,), "b": (1, 2)}
    assert decision.backend_sum("a", backends=["a", "b", "A"], values=[1.0, 2.0, 3.0]) == 4.0
    assert decision.backend_sum("a", backends=["a", "b", "b"], values=[1.0, 2.0, 3.0]) == 1.0
    assert decision._backend_rows((1, "a")) is None
    assert decision.backend_sum("1.0", backends=[1.0, "a"], values=[2.0, 3.0]) == 2.0
    assert decision.backend_sum("1", backends=[1, "a"], values=[2.0, 3.0]) == 2.0
    assert decision.backend_max("a", backends=[["x"], "a"], values=[2.0, 3.0]) == 3.0


# ---- the forecast functions' field, multiple and threshold ------------------------------------------------------

def test_month_inputs_kept_as_read() -> None:
    """Fields, multiples and thresholds of every kind (ints and floats, booleans, 0.0 and -0.0, NaN, infinities,
    texts, None), asked twice in a random order: the same answer (type and ``repr``) or error as the reading it
    keeps."""
    rng = random.Random(3)
    fields = ("max_util", " Max_Util ", "usd", "input_usd", "nope", None, 1.0)
    numbers = (1, 1.0, True, False, 0, 0.0, -0.0, 1.05, -1.0, float("nan"), float("inf"), "1.2", None)
    cases = list(itertools.product(fields, numbers, numbers))
    rng.shuffle(cases)
    for field, x, t in cases + cases:
        for allowed in (sf.MONTH_FIELDS + sf.BILL_FIELDS, sf.ROUTE_FIELDS):
            want = _outcome(sf._read_month_inputs, field, allowed, x, t)
            got = _outcome(sf._month_inputs, field, fields=allowed, multiplier=x, threshold=t)
            assert got == want, (field, x, t)
            if got[0] == "value":
                assert [type(v) for v in sf._month_inputs(field, fields=allowed, multiplier=x, threshold=t)] == \
                    [type(v) for v in sf._read_month_inputs(field, allowed, x, t)]


def test_burst_with_the_kept_month_one_factor() -> None:
    """A month's BURST with the month-1 Poisson factor kept per (rate, window): the formula with both factors
    computed, for 400 random bursty backends and multiples (windows of 1 to 60 s, means below and above the exact
    sum's 500), asked twice."""
    from planner.forecast import month as fm
    from planner.limits import poisson_burst_factor

    rng = random.Random(11)
    for _ in range(400):
        rpm = rng.choice((rng.uniform(0.01, 50), rng.uniform(50, 5000), rng.uniform(5000, 200000), 60.0, 60))
        window = rng.choice((1.0, 1, 10.0, 60.0, rng.uniform(0.5, 60)))
        b = fm.Backend(name="p", kind="provider", top_route="r", linear_util=0.5, binding="BURST", units=1,
                       burst_util=rng.uniform(0.01, 1.5), burst_rpm=rpm, window_s=window)
        for x in (0.8, 1.0, rng.uniform(0.5, 3)):
            want = b.burst_util * x * (poisson_burst_factor(rpm * x, window_s=window)
                                       / poisson_burst_factor(rpm, window_s=window))
            assert repr(fm._burst(b, x)) == repr(want)
            assert repr(fm._burst(b, x)) == repr(want)


def _ref_present(utilizations: Any, argument: str = "utilizations") -> list[float]:
    values = [u for u in [None if u is None else check_number(argument, u, minimum=0) for u in list(utilizations)]
              if u is not None]
    if not values:
        raise ArgumentError(argument, list(utilizations), "at least one utilization")
    return values


def test_max_utilization_as_before_on_random_columns() -> None:
    """MAX_UTILIZATION's and HEADROOM_MULTIPLE's utilizations (floats, -0.0, ints, booleans, NaN, infinities,
    negatives, texts, blanks) read as before: the same list (types and ``repr``) or error, 5,000 random columns."""
    rng = random.Random(2)
    cells = (0.0, -0.0, 0.5, 1.25, 1e9, 3, 0, True, float("nan"), float("inf"), -0.1, -2, "0.5", None, None)
    for _ in range(5000):
        column = [rng.choice(cells) if rng.random() < 0.3 else rng.random() for _ in range(rng.randint(0, 8))]
        want = _outcome(_ref_present, column)
        assert _outcome(decision._present, column) == want, column
        if want[0] == "value":
            assert [type(v) for v in decision._present(column)] == [type(v) for v in _ref_present(column)]
        assert _outcome(decision.max_utilization, column) == _outcome(lambda c: max(_ref_present(c)), column)
