"""The fast path: a plan that conforms to a template version shares one compiled evaluation.

1. The template's formulas (:func:`planner.template.all_formulas`) are rendered once per process and
   normalised (:func:`normalize_formula`); each plan's formula cells are compared with them (the fingerprint).
2. The plan's input cells are evaluated with the template's Python evaluator (the expressions that also render the
   Excel formulas, calling the same registry functions as Excel and the ``formulas`` engine), in the template's
   evaluation order. A typed-over formula cell keeps its typed value, as in Excel, so later cells are compared
   with what Excel would have computed; an edited formula keeps its cached value (it is reported, and its own
   value is not checked).
3. Each cached value is compared with the recompute (:func:`planner.validate.checks.values_equal`), and the policy
   checks read the recomputed Results.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from planner import template as ts
from planner.excel.values import ERROR_VALUES, NAME
from planner.template import fast as _fast
from planner.validate.report import Finding, finding

if TYPE_CHECKING:
    from planner.validate.checks import Book

_LEXEME = re.compile(r""""(?:[^"]|"")*"|'((?:[^']|'')*)'!""")
_FUNC = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*)\(")
_PREFIX = re.compile(r"_XL(?:FN|WS|UDF)\.")
_BOOL_CALL = re.compile(r"(?<![A-Z0-9_.])(TRUE|FALSE)\(\)")
_NUMBER = re.compile(r"(?<![A-Z0-9_.$!:])(\d+\.?\d*(?:E[+-]?\d+)?|\.\d+(?:E[+-]?\d+)?)(?![A-Z0-9_(.!])")


@lru_cache(maxsize=1)
def _aliases() -> dict[str, str]:
    from planner.registry import alias_table, load

    load()
    return alias_table()


def normalize_formula(text: str) -> str:
    """Formula text compared by meaning, not bytes (the fingerprint): every writer's spelling of the same formula
    gives the same string. Outside string literals: no leading ``=``, no blanks, upper case, no ``_xlfn.`` /
    ``_xlws.`` / ``_xludf.`` prefix, no ``$`` (absolute markers do not change a cell's value), ``TRUE()`` /
    ``FALSE()`` (LibreOffice) as ``TRUE`` / ``FALSE``, quoted sheet names unquoted (``'Routes'!`` = ``Routes!``),
    numbers in one spelling (``0.50`` = ``.5``, ``1E3`` = ``1000``), and every spelling of a registry function
    as its plain name.

    >>> normalize_formula("=_xlfn.IFERROR( xlwings.capacity_rpm('Routes'!$C4), 0.0) + TRUE()")
    'IFERROR(CAPACITY_RPM(ROUTES!C4),0)+TRUE'
    """
    text = text[1:] if text.startswith("=") else text
    aliases = _aliases()
    parts: list[str] = []
    pos = 0
    for m in _LEXEME.finditer(text):
        parts.append(_norm_code(text[pos:m.start()], aliases))
        sheet = m.group(1)
        parts.append(m.group(0) if sheet is None else sheet.replace("''", "'").upper() + "!")
        pos = m.end()
    parts.append(_norm_code(text[pos:], aliases))
    return "".join(parts)


def _number(m: re.Match[str]) -> str:
    f = float(m.group(1))
    return repr(int(f)) if f.is_integer() and abs(f) < 1e15 else repr(f)


def _norm_code(code: str, aliases: dict[str, str]) -> str:
    code = _PREFIX.sub("", re.sub(r"\s+", "", code).upper()).replace("$", "")
    code = _NUMBER.sub(_number, _BOOL_CALL.sub(r"\1", code))
    return _FUNC.sub(lambda m: aliases.get(m.group(1), m.group(1)) + "(", code)


@lru_cache(maxsize=1)
def compiled() -> tuple[list[tuple[str, str, Any, int]], dict[tuple[str, str], str], dict[tuple[str, str], Any]]:
    """Per process, once: the template's formula cells in evaluation order, their texts, fixed cells."""
    cells = ts.formula_cells()
    one: dict[str, str] = {}  # equal texts of several cells as one object (a reader's memo hands that one out)
    expected = {(s, c): one.setdefault(t, t) for s, c, e, r in cells for t in (ts.formula_text(s, e, r),)}
    return cells, expected, ts.fixed_cells()


_PRINTS: dict[tuple[str, str], str] = {}


def fingerprint(key: tuple[str, str]) -> str:
    """The normalised template formula of one formula cell (normalised when first needed: most plans carry the
    template's exact text, and only a plan saved by another writer needs any)."""
    p = _PRINTS.get(key)
    if p is None:
        p = _PRINTS[key] = normalize_formula(compiled()[1][key])
    return p


# the template's compiled evaluation lives with the template (planner.template.fast): the What-if sheet's
# SENSITIVITY_BAR evaluates part of it again, in xlwings Lite too, where this package is not installed
_MEMO: dict[tuple[Any, ...], Any] = _fast.MEMO
"""Registry calls with scalar arguments, shared by the plans of one process: plans of one template repeat most
calls (the same fleets, models and catalog rows)."""
_COMPUTED_SHEETS = _fast.computed_sheets()
_topological = _fast.topological
_compiled_cells = _fast.compiled_cells


Key = tuple[str, str]


_REF = re.compile(
    r"(?<![A-Za-z0-9_.$'])(?:'((?:[^']|'')+)'!|([A-Za-z_][A-Za-z0-9_.]*)!)?(\$?[A-Za-z]{1,3}\$?[0-9]+)"
    r"(?::(?:'(?:[^']|'')+'!|[A-Za-z_][A-Za-z0-9_.]*!)?(\$?[A-Za-z]{1,3}\$?[0-9]+))?(?![A-Za-z0-9_(!])"
)
_NAME = re.compile(r"(?<![A-Za-z0-9_.$#])[A-Za-z_\\][A-Za-z0-9_.]*(?![A-Za-z0-9_.(!])")
_DYNAMIC = re.compile(r"(?<![A-Za-z0-9_.])(?:_XLFN\.)?(?:INDIRECT|OFFSET|CELL|INFO)\(", re.I)
_WHOLE = re.compile(r"(?<![A-Za-z0-9_.$])\$?[A-Za-z]{1,3}:\$?[A-Za-z]{1,3}(?![A-Za-z0-9_(])"
                    r"|(?<![A-Za-z0-9_.$])\$?\d+:\$?\d+")
MAX_RANGE_CELLS = 100_000


def precedents(text: str, sheet: str, sheets: dict[str, str] | None = None) -> frozenset[Key] | None:
    """The cells a formula reads, ``(sheet, "B3")``, from its text; ``None`` when they cannot be known from the text
    (defined names, structured or whole-column references, INDIRECT/OFFSET, a huge range). ``sheets`` maps lower-case
    sheet names to the workbook's spelling (a reference's sheet is matched in any case).

    >>> sorted(precedents("=IF(A1>0,SUM('My S'!$B$1:B2),Plan!C3)", "S"))
    [('My S', 'B1'), ('My S', 'B2'), ('Plan', 'C3'), ('S', 'A1')]
    >>> precedents("=SUM(A:A)", "S") is None, precedents("=Rate*2", "S") is None
    (True, True)
    >>> sorted(precedents("=IFERROR(A1/B1,#N/A)+1E3", "S"))
    [('S', 'A1'), ('S', 'B1')]
    """
    from planner.a1 import split_range

    code = _STRING_RE.sub('""', text)
    if "[" in code or _DYNAMIC.search(code) or _WHOLE.search(code):
        return None
    out: set[Key] = set()
    for m in _REF.finditer(code):
        name = m.group(1).replace("''", "'") if m.group(1) is not None else m.group(2) or sheet
        if sheets is not None:
            name = sheets.get(name.lower(), name)
        rng = m.group(3).replace("$", "") + (":" + m.group(4).replace("$", "") if m.group(4) else "")
        try:
            top, left, bottom, right = split_range(rng)
        except ValueError:
            return None
        if (bottom - top + 1) * (right - left + 1) > MAX_RANGE_CELLS:
            return None
        out.update(_expand(name, top, left, bottom, right))
    rest = _ERROR_LITERAL.sub("", _REF.sub("", code))
    for m in _NAME.finditer(rest):
        if m.group(0).upper() not in ("TRUE", "FALSE"):
            return None  # a defined name (or something the reference syntax does not cover)
    return frozenset(out)


_STRING_RE = re.compile(r'"(?:[^"]|"")*"')
_ERROR_LITERAL = re.compile(r"#(?:NULL!|DIV/0!|VALUE!|REF!|NAME\?|NUM!|N/A|GETTING_DATA|SPILL!|CALC!)", re.I)


@lru_cache(maxsize=4096)
def _expand(sheet: str, top: int, left: int, bottom: int, right: int) -> tuple[Key, ...]:
    from planner.a1 import index_to_col

    return tuple((sheet, f"{index_to_col(c)}{r}") for r in range(top, bottom + 1) for c in range(left, right + 1))


@lru_cache(maxsize=1)
def template_graph() -> tuple[dict[Key, frozenset[Key]], dict[Key, frozenset[Key]]]:
    """Per process, once: ``(precedents, dependents)`` of every template formula cell, from its rendered formula
    (cell level: a whole-column range reads every cell of it)."""
    prec: dict[Key, frozenset[Key]] = {}
    for (sheet, cell), text in compiled()[1].items():
        reads = precedents(text, sheet)
        assert reads is not None, f"template formula at {sheet}!{cell} has references the graph cannot follow"
        prec[(sheet, cell)] = reads
    deps: dict[Key, set[Key]] = {}
    for k, ps in prec.items():
        for p in ps:
            deps.setdefault(p, set()).add(k)
    return prec, {k: frozenset(v) for k, v in deps.items()}


@lru_cache(maxsize=1)
def _single_cell_readers() -> dict[Key, frozenset[Key]]:
    """Per process, once: input cell → the template formula cells that read it as a single-cell reference (not as
    one cell of a range such as a lookup column: such readers need not change when the input does)."""
    out: dict[Key, set[Key]] = {}
    for (sheet, cell), text in compiled()[1].items():
        for m in _REF.finditer(_STRING_RE.sub('""', text)):
            if m.group(4):
                continue
            name = m.group(1).replace("''", "'") if m.group(1) is not None else m.group(2) or sheet
            out.setdefault((name, m.group(3).replace("$", "")), set()).add((sheet, cell))
    return {k: frozenset(v) for k, v in out.items()}


@lru_cache(maxsize=1)
def template_reads() -> frozenset[Key]:
    """Every cell some template formula reads."""
    return frozenset().union(*template_graph()[0].values())


NOT_LITERAL = object()
_LITERAL_NUMBER = re.compile(r"^-?(?:\d+\.?\d*|\.\d+)(?:E[+-]?\d+)?$")


def literal_value(text: str) -> Any:
    """The value of a formula that is only a constant (``=TRUE()``, ``=FALSE``, ``=5``, ``="x"``), else
    :data:`NOT_LITERAL`.

    >>> literal_value("=TRUE()"), literal_value("=-2.5"), literal_value('="a""b"'), literal_value("=1+1") is NOT_LITERAL
    (True, -2.5, 'a"b', True)
    """
    body = text[1:] if text.startswith("=") else text
    body = body.strip()
    if len(body) >= 2 and body[0] == body[-1] == '"' and '"' not in body[1:-1].replace('""', ""):
        return body[1:-1].replace('""', '"')
    norm = normalize_formula(body)
    if norm in ("TRUE", "FALSE"):
        return norm == "TRUE"
    if _LITERAL_NUMBER.match(norm):
        return float(norm)
    return NOT_LITERAL


def evaluation_order(edited: dict[Key, frozenset[Key]]) -> list[Key] | None:
    """The template's formula cells in an order where every cell comes after what it reads, with the edited cells'
    own precedents (``edited``: cell → what its new formula reads). The template's order when no edited cell reads a
    cell computed after it; ``None`` on a circular reference."""
    cells = compiled()[0]
    order = [(s, c) for s, c, _e, _r in cells]
    pos = {k: i for i, k in enumerate(order)}
    if all(pos.get(p, -1) < pos[k] for k, ps in edited.items() for p in ps):
        return order
    prec = template_graph()[0]
    state: dict[Key, int] = {}
    out: list[Key] = []
    for root in order:
        if root in state:
            continue
        stack: list[tuple[Key, Any]] = [(root, iter(sorted(edited.get(root, prec[root]))))]
        state[root] = 1
        while stack:
            node, it = stack[-1]
            for p in it:
                if p not in pos:
                    continue  # an input cell
                st = state.get(p)
                if st == 1:
                    return None
                if st is None:
                    state[p] = 1
                    stack.append((p, iter(sorted(edited.get(p, prec[p])))))
                    break
            else:
                stack.pop()
                state[node] = 2
                out.append(node)
    return out


_SHEETS_UPPER = {t.sheet.upper(): t.sheet for t in ts.TABLES}


def _edited_value(text: str, sheet: str, ev: ts.Evaluator) -> Any:
    from planner.formulas_engine import evaluate_formula

    def get(s: str, c: str) -> Any:
        v = ev.values.get((_SHEETS_UPPER.get(s.upper(), s), c))
        return str(v) if isinstance(v, ts.XlError) else v

    try:
        v = evaluate_formula(text, sheet, get)
    except ValueError:
        return NAME
    if isinstance(v, str) and v in ERROR_VALUES:
        return ts.XlError(v)
    if isinstance(v, int) and not isinstance(v, bool):
        return float(v)
    return v


def evaluate(book: Book, keep: dict[Key, Any], edited: dict[Key, str] | None = None,
             order: list[Key] | None = None) -> dict[Key, Any]:
    """Every formula cell of the template recomputed from the plan's input cells (``keep``: cells whose value is
    taken as is instead of recomputed; ``edited``: cells whose own formula text is computed by the general engine,
    one formula each, in ``order`` from :func:`evaluation_order`)."""
    from planner.registry import load

    by_key = _cells_by_key()
    code = _compiled_cells()
    if not keep and not edited and order is None:  # the common case: every cell on the template's path
        # every template formula cell is computed in the template's order, which puts each cell after every cell it
        # reads (tests/test_recalc_fastpath.py), so a formula cell's cached value in book.values is overwritten
        # before any cell reads it: the plan's cells are taken whole (one copy in C) instead of filtered in Python
        return _fast.evaluate_cells(book.values, code, memo=_MEMO)
    # a formula cell's cached value is not an input (a fixed cell's own value stays where it is one)
    inputs = {k: v for k, v in book.values.items() if k not in by_key}
    ev = _fast.evaluator(inputs, load(), memo=_MEMO)
    out: dict[Key, Any] = {}
    edited = edited or {}
    store = ev.values
    for key in (order or by_key):
        if key in keep:
            v = keep[key]
        elif key in edited:
            v = _edited_value(edited[key], key[0], ev)
        else:
            v = code[key](ev)
        store[key] = v
        out[key] = v
    return out


@lru_cache(maxsize=1)
def _cells_by_key() -> dict[Key, tuple[str, str, Any, int]]:
    return {(s, c): (s, c, e, r) for s, c, e, r in compiled()[0]}


def warm() -> None:
    """Build, once per process, the template state every validation of a template plan uses (its formula cells in
    evaluation order and their compiled closures). The batch calls it before it starts workers, so they inherit
    that state instead of building it under each workbook's memory cap (template 2.3.0: about 46 MiB of address
    space, more than a plan's own validation). The cone-of-edits graph (:func:`template_graph`) and the
    fingerprints (:func:`fingerprint`, normalised per cell when a plan's text differs from the template's: only
    plans saved by another writer) are left to the few plans that need them."""
    _cells_by_key()
    _compiled_cells()
    _topological()


GC_THRESHOLD = (100_000, 10, 10)
"""The collector's thresholds in a process that works through plans (:func:`settle_gc`); CPython's default is
``(700, 10, 10)``."""


def settle_gc() -> None:
    """Set up the cyclic garbage collector of a process that validates or recomputes plans one after another (a
    batch worker, ``planner recalc``'s child): builds the compiled template cells if they are not built yet, then
    freezes what is alive.

    After the first plan a validating process holds about 534,000 objects the collector tracks (template 2.3.0: the
    modules, the template's expressions, closures and fingerprints), alive for the whole process. With the default
    settings every full collection walked all of them, and a plan's evaluation allocates enough containers to run
    about 66 young and 6 middle collections per plan: 28 ms of collector time per plan out of about 250 (measured
    with ``gc.callbacks`` over 20 plans, 2026-12-04). ``gc.freeze()`` moves everything alive now into the permanent
    generation, which no collection visits (in a forked worker the collector then no longer writes into the pages it
    shares with its parent). A young collection walks every container allocated since the last one and still
    alive, which in the middle of a plan is the plan itself (its view's 12,000 cells, its book, its evaluator):
    with a first threshold of 10,000 net allocations (session 7 to 17) that was 2-4 collections and 5-10 ms of
    collector time per plan, for almost nothing to collect. Since session 18 a plan leaves no cyclic garbage at all
    (a refusal held in a column no longer carries the traceback that tied the call stack into a cycle, and a bar
    end's store holds its evaluator weakly: ``gc.DEBUG_SAVEALL`` over four benchmark plans found 24,600 objects a
    plan before, none after; ``tests/test_no_cycles.py``), so reference counting frees each plan whole and the first
    threshold is 100,000 (:data:`GC_THRESHOLD`): a young collection about once every 20-30 plans, 0.5 ms of
    collector time per plan (``gc.callbacks`` over 40 recalculated plans, 2026-12-05). Cyclic garbage that some
    other plan might still make is collected when 100,000 net allocations have piled up, so memory stays bounded
    (``--one-process-memory`` in ``benchmarks/bench_validate.py``). Process-wide: called only in processes planner
    starts for this work, never from a library call. No collection runs first: in a forked worker it would write
    into every shared page.
    """
    import gc

    _cells_by_key()
    _compiled_cells()
    _topological()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)


def _show(v: Any) -> Any:
    return str(v) if isinstance(v, ts.XlError) else v


def plan_values(book: Book, *, carries_template: bool | None = None) -> tuple[dict[Key, Any], dict[Key, str]] | None:
    """The template's formula cells of a conforming plan computed on the fast path: ``(values, edited)`` where
    ``edited`` holds the cells whose formula differs from the template's (computed by the general engine, one formula
    each); a typed-over formula keeps its typed value. ``None`` when an edited formula's precedents cannot be known
    from its text or form a circular reference (the caller then uses the general engine for the whole workbook).
    ``carries_template``: whether ``book.formulas`` equals the template's (a caller that has just compared them
    says so; None: compared here)."""
    cells, expected, _fixed = compiled()
    keep: dict[Key, Any] = {}
    edited: dict[Key, str] = {}
    if not (_carries_template(book, expected) if carries_template is None else carries_template):
        for sheet, cell, _e, _r in cells:
            key = (sheet, cell)
            text = book.formulas.get(key)
            if text is None:
                keep[key] = book.values.get(key)
            elif text != expected[key] and normalize_formula(text) != fingerprint(key):
                edited[key] = text
    order = _order_for(book, edited)
    if order is False:
        return None
    return evaluate(book, keep, edited, order if isinstance(order, list) else None), edited


def _carries_template(book: Book, expected: dict[Key, str]) -> bool:
    """Whether every template formula cell of the plan holds the template's exact text (the common case: a plan the
    template wrote and nobody edited a formula of): then no cell is typed over or edited, and the per-cell loops
    that look for those can be skipped. Tested in C: the plan's formulas equal to the template's as dictionaries, or
    (a plan with formulas of its own elsewhere) the template's ``(cell, text)`` pairs all among the plan's."""
    formulas = book.formulas
    return formulas == expected or formulas.items() >= expected.items()


def _order_for(book: Book, edited: dict[Key, str]) -> list[Key] | bool:
    if not edited:
        return True
    sheets = {s.name.lower(): s.name for s in book.view.sheets}
    deps: dict[Key, frozenset[Key]] = {}
    template_cells = _cells_by_key()
    for key, text in edited.items():
        p = precedents(text, key[0], sheets)
        if p is None:
            return False
        if any(k in book.formulas and k not in template_cells for k in p):
            return False  # reads a formula the template does not know: the general engine computes the workbook
        deps[key] = p
    order = evaluation_order(deps)
    return False if order is None else order


def check_formulas_and_values(book: Book, info: dict[str, Any] | None = None) -> Iterator[Finding]:
    """Fingerprint, recompute, cached-value comparison, Excel errors and policy, for a conforming layout.

    Edited formulas are computed with the general engine, one formula each, and the rest on the template's path
    (``info["engine"] = "fast+formulas"``); when an edited formula's precedents cannot be known, its cached value is
    used and ``info["engine"] = "fallback"`` asks the caller for the general engine on the whole workbook."""
    from planner.validate.checks import values_equal

    cells, expected, _fixed = compiled()
    keep: dict[Key, Any] = {}
    skip: set[Key] = set()
    edited: dict[Key, str] = {}
    for sheet, cell, _e, _r in () if _carries_template(book, expected) else cells:
        key = (sheet, cell)
        text = book.formulas.get(key)
        if text is None:
            keep[key] = book.values.get(key)
            skip.add(key)
            yield finding("formula-overwritten", "template formula replaced by a typed value", sheet=sheet,
                          cell=cell, expected=expected[key], actual=_show(book.values.get(key)))
        elif text != expected[key] and normalize_formula(text) != fingerprint(key):
            edited[key] = text
            yield finding("formula-changed", "template formula edited", sheet=sheet, cell=cell,
                          expected=expected[key], actual=text)
    order = _order_for(book, edited)
    engine = "fast"
    if order is False:
        for key in edited:
            keep[key] = book.values.get(key)
            skip.add(key)
        edited = {}
        order = True
        engine = "fallback"
    elif edited:
        engine = "fast+formulas"
    if info is not None:
        info["engine"] = engine
    recomputed = evaluate(book, keep, edited, order if isinstance(order, list) else None)
    # a writer without a calculation engine (openpyxl, pandas through openpyxl) drops every cached value and sets
    # fullCalcOnLoad: Excel and LibreOffice compute them on open, so their absence is not a finding
    uncached = book.view.calc_on_load and not any(
        book.values.get(k) is not None for k in expected if k in book.formulas)
    errors: list[Finding] = []
    stale: dict[Key, Finding] = {}
    values, xl_error = book.values, ts.XlError
    # the commonest case first, in one comprehension: the same value (what every check below accepts, without
    # finding); the rest in the template's evaluation order
    differ = [k for k in _cells_by_key() if not (type(c := values.get(k)) is type(n := recomputed[k]) and c == n
                                                 and not isinstance(c, xl_error))]
    for key in differ:
        sheet, cell = key
        cached = values.get(key)
        new = recomputed[key]
        if isinstance(cached, ts.XlError):
            errors.append(finding("excel-error-value", f"output holds the Excel error {cached}", sheet=sheet,
                                  cell=cell, expected="a value", actual=str(cached)))
            if key not in skip and str(new) != str(cached):
                stale[key] = finding("stale-value", "cached value differs from the recompute", sheet=sheet,
                                     cell=cell, expected=_show(new), actual=str(cached))
            continue
        if key in skip:
            continue
        if cached is None and uncached:
            continue  # saved without any cached value (openpyxl), and readers recompute on open: nothing to show
        if cached is None and book.formulas.get(key) is not None and new not in ("", None):
            yield finding("missing-cached-value", "formula cell has no cached value", sheet=sheet, cell=cell,
                          expected=_show(new), actual=None)
            continue
        if isinstance(new, ts.XlError):
            errors.append(finding("excel-error-value", f"output computes to the Excel error {new}", sheet=sheet,
                                  cell=cell, expected="a value", actual=str(new)))
            if not values_equal(cached, new) and str(cached) != str(new):
                stale[key] = finding("stale-value", "cached value differs from the recompute", sheet=sheet,
                                     cell=cell, expected=str(new), actual=_show(cached))
            continue
        if not values_equal(cached, new):
            what = "an edited formula's cached value differs from its recompute (formulas)" if key in edited \
                else "cached value differs from the recompute (stale or tampered)"
            stale[key] = finding("stale-value", what, sheet=sheet, cell=cell, expected=_show(new),
                                 actual=_show(cached))
    yield from stale_roots(book, stale, edited)
    yield from _first_error_per_row(errors)
    yield from check_policy(recomputed, book)


def stale_roots(book: Book, stale: dict[Key, Finding], edited: dict[Key, str]) -> Iterator[Finding]:
    """Findings that name the cause: a stale cell is reported only where none of its precedents is itself stale
    (its message counts the stale cells downstream of it), and an input cell whose computed dependents are stale is
    named with ``input-changed-since-recalc``.

    An input is named when at least half of the formula cells reading it directly (as a single cell, when some do:
    a lookup over its column need not change with it) are stale and at least two stale
    cells lie downstream of it (one tampered cached value is not an input change); inputs are picked greedily until
    every stale root is explained by one: the input read by most stale roots first, then the one with the larger
    share of stale direct dependents.
    """
    if not stale:
        return
    prec, deps = template_graph()
    sheets = {s.name.lower(): s.name for s in book.view.sheets}
    own: dict[Key, frozenset[Key]] = {}
    for k, text in edited.items():
        reads = precedents(text, k[0], sheets)
        own[k] = reads if reads is not None else prec.get(k, frozenset())
    formula_keys = prec.keys()
    dependents: dict[Key, set[Key]] = {k: set(v) for k, v in deps.items()}
    for k, ps in own.items():  # an edited cell reads what its own formula reads
        for p in prec.get(k, ()):
            dependents.get(p, set()).discard(k)
        for p in ps:
            dependents.setdefault(p, set()).add(k)

    def precs(k: Key) -> frozenset[Key]:
        return own.get(k, prec.get(k, frozenset()))

    def downstream(start: Key) -> set[Key]:
        seen: set[Key] = set()
        todo = [d for d in dependents.get(start, ()) if d in stale]
        while todo:
            k = todo.pop()
            if k in seen:
                continue
            seen.add(k)
            todo.extend(d for d in dependents.get(k, ()) if d in stale and d not in seen)
        return seen

    roots = [k for k in stale if not any(p in stale for p in precs(k))]
    if not roots:  # a circle of stale cells: report them all
        roots = list(stale)
    candidates: dict[Key, set[Key]] = {}
    for r in roots:
        if r in edited:
            continue  # its own new formula explains it
        for p in precs(r):
            if p not in formula_keys:
                candidates.setdefault(p, set()).add(r)
    scored = []
    single = _single_cell_readers()
    for inp, covered in candidates.items():
        direct = [d for d in dependents.get(inp, ()) if d in formula_keys]
        pointwise = [d for d in direct if d in single.get(inp, ()) or d in own]
        direct = pointwise or direct  # readers of a whole column (lookups) need not change with one of its cells
        frac = sum(d in stale for d in direct) / len(direct) if direct else 0.0
        scored.append((-len(covered), -frac, inp))
    scored.sort()
    uncovered = set(roots) - set(edited)
    cause: dict[Key, Key] = {}
    for _n, neg_frac, inp in scored:
        if not uncovered:
            break
        if -neg_frac < 0.5 or not (candidates[inp] & uncovered):
            continue
        cone = downstream(inp)
        if len(cone) < 2:
            continue
        for r in candidates[inp] & uncovered:
            cause[r] = inp
        uncovered -= candidates[inp]
        first = sorted(candidates[inp], key=lambda k: (k[0], _cell_order(k[1])))[0]
        yield finding("input-changed-since-recalc",
                      f"input changed after the workbook was last computed: {len(cone)} cell(s) computed from it "
                      f"hold stale values (first {first[0]}!{first[1]}); recompute it (planner recalc, or open and "
                      "save it in Excel)",
                      sheet=inp[0], cell=inp[1], expected="cached values computed from this input",
                      actual=_show(book.values.get(inp)))
    for r in roots:
        f = stale[r]
        n = len(downstream(r))
        msg = f.message
        if r in cause:
            msg += f"; its input {cause[r][0]}!{cause[r][1]} changed since the last recompute"
        if n:
            msg += f"; {n} dependent cell(s) are stale because of it (not listed)"
        yield replace(f, message=msg) if msg != f.message else f


def _cell_order(cell: str) -> tuple[int, int]:
    from planner.a1 import split_cell

    return split_cell(cell)


def _first_error_per_row(errors: list[Finding]) -> Iterator[Finding]:
    """One ``excel-error-value`` per sheet row (the first in evaluation order, where the error starts); the rest of
    the row's error cells are counted in its message."""
    rows: dict[tuple[str | None, str], list[Finding]] = {}
    for f in errors:
        rows.setdefault((f.sheet, (f.cell or "").lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ$")), []).append(f)
    for group in rows.values():
        first = group[0]
        if len(group) > 1:
            first = replace(first, message=f"{first.message} (and {len(group) - 1} more error cell(s) on this row)")
        yield first


def check_policy(values: dict[tuple[str, str], Any], book: Book) -> Iterator[Finding]:
    """Policy on the recomputed Results: threshold, KV fit, TPOT SLO, failover headroom."""
    r = ts.RESULTS
    threshold = book.values.get((ts.PLAN.sheet, ts.plan_value_cell("utilization_threshold")))
    if not isinstance(threshold, (int, float)) or isinstance(threshold, bool):
        threshold = 1.0

    def num(key: str, i: int) -> float | None:
        v = values.get((r.sheet, r.cell(key, i)))
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    for i in range(r.rows):
        route = values.get((r.sheet, r.cell("route", i)))
        if not isinstance(route, str) or not route:
            continue
        max_util = num("max_util", i)
        binding = values.get((r.sheet, r.cell("binding_constraint", i)))
        if max_util is not None and max_util > threshold:
            yield finding("utilization-over-threshold", f"route {route}: {binding} utilization above the plan's "
                          "threshold", sheet=r.sheet, cell=r.cell("max_util", i), expected=f"<= {threshold:g}",
                          actual=round(max_util, 6))
        kv = num("kv_util", i)
        if kv is not None and kv > 1:
            yield finding("kv-does-not-fit", f"route {route}: in-flight requests need more KV memory than the fleet "
                          "has", sheet=r.sheet, cell=r.cell("kv_util", i), expected="<= 1", actual=round(kv, 6))
        tpot = num("tpot_util", i)
        if tpot is not None and tpot > 1:
            yield finding("slo-not-met", f"route {route}: decode time per token at the peak batch misses the TPOT "
                          "SLO", sheet=r.sheet, cell=r.cell("tpot_util", i), expected="<= 1", actual=round(tpot, 6))
        if values.get((r.sheet, r.cell("failover_ok", i))) == "BREACH":
            fo = num("failover_util", i)
            yield finding("no-failover-headroom", f"route {route}: the failover backend cannot absorb this route",
                          sheet=r.sheet, cell=r.cell("failover_util", i), expected="<= 1",
                          actual=None if fo is None else round(fo, 6))
