"""The one function registry.

Each spreadsheet function is declared exactly once, in :mod:`planner.functions`, with :func:`sheet_function`:
its name, its positional arguments (with unit, kind, default and help), its return unit, a one-line summary and a
worked example. Everything else is generated from :data:`REGISTRY`:

- :mod:`planner.udfs` (the xlwings add-in module), and the xlwings Lite bundle in ``addin/lite/``;
- the headless recompute's registration with the ``formulas`` library, under every spelling in :func:`spellings`;
- ``docs/functions.md`` and ``planner functions``.

So Excel and CI can never disagree: they call the same Python object with the same coerced arguments
(:func:`planner.coerce.call_sheet_function`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ARG_KINDS = ("number", "text", "flag", "numbers", "texts", "table")
"""``number``/``text``/``flag`` take one cell (a whole column makes the call element-wise and returns a column);
``numbers``/``texts`` take a whole range as one sequence (e.g. the utilizations of ``BINDING_CONSTRAINT``);
``table`` takes a range with its header row as rows of cells (e.g. the Models sheet for ``MODEL_SPEC``)."""


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


@dataclass(frozen=True, kw_only=True)
class Arg:
    """One positional argument of a spreadsheet function.

    ``blank`` says what an empty cell means for an argument that has no default (it keeps its position): when set,
    an empty cell is passed to the implementation as ``None`` instead of being refused (e.g. a blank cache-write
    price, "no separate write price").

    ``row_errors`` (a range read row by row through a key column, as SUMIFS reads its sum range): an Excel error or
    refusal in a cell reaches the implementation in place, as a :class:`planner.errors.Refusal` (in a ``table``, as
    its text), and is the result only where the function reads that row (:func:`planner.errors.read_row`). Without
    it, an error anywhere in an argument is the result: one route's refusal would become every backend's.

    ``reads`` (a ``row_errors`` table only): the keys of the only columns the implementation reads, so any value in
    the others (an error included) leaves the result as it is (tests/test_declared_reads.py scrambles them). What
    depends on a cell is then known more narrowly than Excel's range (:func:`planner.template.cone_cells`).
    """

    name: str
    unit: str
    help: str
    kind: str = "number"
    default: Any = REQUIRED
    blank: str = ""
    row_errors: bool = False
    reads: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.kind not in ARG_KINDS:
            raise ValueError(f"Arg {self.name}: kind {self.kind!r} is not one of {ARG_KINDS}")
        if not self.help.strip():
            raise ValueError(f"Arg {self.name}: help text is required")
        if self.row_errors and self.kind not in ("numbers", "texts", "table"):
            raise ValueError(f"Arg {self.name}: row_errors is for a range (numbers, texts or table), not "
                             f"{self.kind!r}")
        if self.reads is not None and not (self.kind == "table" and self.row_errors and self.reads
                                           and all(isinstance(k, str) and k for k in self.reads)):
            raise ValueError(f"Arg {self.name}: reads names the columns a row_errors table argument reads, "
                             f"got {self.reads!r}")

    @property
    def optional(self) -> bool:
        return self.default is not REQUIRED

    @property
    def elementwise(self) -> bool:
        return self.kind in ("number", "text", "flag")


@dataclass(frozen=True, kw_only=True)
class SheetFunction:
    """A registered spreadsheet function: metadata plus the Python implementation."""

    name: str
    summary: str
    args: tuple[Arg, ...]
    returns: str
    category: str
    example: str
    impl: Callable[..., Any]
    returns_kind: str = "number"  # "number" | "text"
    formula_ids: tuple[str, ...] = ()

    @property
    def signature(self) -> str:
        """``NAME(a, b, [c])`` as Excel's function wizard shows it."""
        parts = [f"[{a.name}]" if a.optional else a.name for a in self.args]
        return f"{self.name}({', '.join(parts)})"

    @property
    def description(self) -> str:
        """The function-wizard description (Excel keeps 255 characters)."""
        text = f"{self.summary} Returns {self.returns}."
        return text if len(text) <= 255 else text[:252] + "..."

    def arg_help(self, arg: Arg) -> str:
        """The argument help as the function wizard shows it (Excel keeps 255 characters)."""
        text = f"{arg.help} [{arg.unit}]" + ("" if not arg.optional else f" (optional, default {arg.default!r})")
        text += f" (may be blank: {arg.blank})" if arg.blank else ""
        return text if len(text) <= 255 else text[:252] + "..."


REGISTRY: dict[str, SheetFunction] = {}

NAMESPACE = "XLWINGS"
"""The Office.js namespace xlwings Server uses by default."""


def spellings(name: str) -> tuple[str, ...]:
    """Every spelling under which a saved workbook may store a call to ``name`` (upper case).

    - ``NAME``: classic xlwings UDFs (VBA wrappers in the ``.xlsm``), and any function as typed;
    - ``XLWINGS.NAME``: Office.js custom functions of xlwings Server (its default namespace), as shown in a cell;
    - ``_XLDUDF_NAME``: how Excel stores a namespace-less Office.js custom function in the file (xlwings Lite's
      functions carry no namespace); seen in workbooks saved with other add-ins, not yet on a Lite-saved one;
    - ``_XLDUDF_XLWINGS_NAME``: the same for the ``XLWINGS`` namespace (``_xldudf_<NAMESPACE>_<NAME>``), not yet seen
      on an xlwings-saved workbook;
    - ``_XLUDF.NAME``: the prefix Excel writes for a user-defined function it could not resolve when saving.

    Every reader of stored formulas (the headless recompute's function table, the validator's fingerprints)
    goes through :func:`alias_table`, so a spelling added here is recognised everywhere.

    >>> spellings("CAPACITY_RPM")[:3]
    ('CAPACITY_RPM', 'XLWINGS.CAPACITY_RPM', '_XLDUDF_CAPACITY_RPM')
    """
    n = name.upper()
    return (n, f"{NAMESPACE}.{n}", f"_XLDUDF_{n}", f"_XLDUDF_{NAMESPACE}_{n}", f"_XLUDF.{n}")


def alias_table() -> dict[str, str]:
    """Map every spelling (upper case) to the registry name it stands for."""
    return {spelling: name for name in REGISTRY for spelling in spellings(name)}


def canonical_name(spelling: str) -> str | None:
    """The registry name behind any spelling, or ``None`` when it is not one of ours."""
    return alias_table().get(spelling.upper())


def sheet_function(
    *,
    summary: str,
    args: tuple[Arg, ...] | list[Arg],
    returns: str,
    category: str,
    example: str,
    returns_kind: str = "number",
    formula_ids: tuple[str, ...] = (),
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a spreadsheet function. The decorated function's name is the spreadsheet name (UPPER_CASE).

    The implementation's positional parameters must match ``args`` one for one (same names, same order, same
    defaults), so that ``planner.functions.NAME(...)`` takes exactly the arguments Excel passes.
    """

    def register(impl: Callable[..., Any]) -> Callable[..., Any]:
        name = impl.__name__
        if name != name.upper():
            raise ValueError(f"{name}: spreadsheet function names are UPPER_CASE")
        if name in REGISTRY:
            raise ValueError(f"{name}: declared twice")
        params = list(inspect.signature(impl).parameters.values())
        declared = tuple(args)
        if [p.name for p in params] != [a.name for a in declared]:
            raise ValueError(f"{name}: parameters {[p.name for p in params]} != declared {[a.name for a in declared]}")
        for p, a in zip(params, declared):
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                raise ValueError(f"{name}.{p.name}: spreadsheet functions take positional arguments only")
            has_default = p.default is not p.empty
            if has_default != a.optional or (has_default and p.default != a.default):
                raise ValueError(f"{name}.{p.name}: default differs from the declaration")
        seen_optional = False
        for a in declared:
            if seen_optional and not a.optional:
                raise ValueError(f"{name}.{a.name}: a required argument follows an optional one")
            seen_optional = seen_optional or a.optional
        REGISTRY[name] = SheetFunction(
            name=name,
            summary=summary,
            args=declared,
            returns=returns,
            category=category,
            example=example,
            impl=impl,
            returns_kind=returns_kind,
            formula_ids=formula_ids,
        )
        return impl

    return register


def load() -> dict[str, SheetFunction]:
    """Import the declarations and return the registry (idempotent)."""
    from planner import functions  # noqa: F401  (importing declares the functions)

    return REGISTRY
