"""Spreadsheet functions for decisions: binding constraint, headroom, months to breach, failover (C7, C8)."""

from __future__ import annotations

from planner import decision
from planner.registry import Arg, sheet_function

UTILIZATIONS = Arg(
    name="utilizations",
    unit="fractions",
    kind="numbers",
    help="Utilizations (demand / limit) of every constraint, a range; blank cells are skipped",
)


@sheet_function(
    summary="The label of the highest utilization: the constraint that binds first (ties go to the first).",
    args=(
        Arg(name="labels", unit="names", kind="texts", help="Names of the constraints (RPM, ITPM, KV, ...), a range"),
        UTILIZATIONS,
    ),
    returns="label",
    returns_kind="text",
    category="Decision",
    example='=BINDING_CONSTRAINT({"RPM","ITPM","KV"}, {0.42,0.91,0.88}) -> "ITPM"',
    formula_ids=("C7",),
)
def BINDING_CONSTRAINT(labels, utilizations):
    return decision.binding_constraint(labels, utilizations=utilizations)


@sheet_function(
    summary="The highest of the utilizations (MAX that skips blanks and refuses text).",
    args=(UTILIZATIONS,),
    returns="fraction",
    category="Decision",
    example="=MAX_UTILIZATION({0.42,0.91,0.35}) -> 0.91",
    formula_ids=("C7",),
)
def MAX_UTILIZATION(utilizations):
    return decision.max_utilization(utilizations)


@sheet_function(
    summary="Headroom before the first ceiling: 1 - max utilization (negative when a limit is exceeded).",
    args=(UTILIZATIONS,),
    returns="fraction",
    category="Decision",
    example="=HEADROOM({0.42,0.8,0.35}) -> 0.2",
    formula_ids=("C7",),
)
def HEADROOM(utilizations):
    return decision.headroom(utilizations)


@sheet_function(
    summary="How many times demand can grow before the first ceiling: 1 / max utilization (< 1: already over).",
    args=(UTILIZATIONS,),
    returns="x demand",
    category="Decision",
    example="=HEADROOM_MULTIPLE({0.25,0.5}) -> 2",
    formula_ids=("C7",),
)
def HEADROOM_MULTIPLE(utilizations):
    return decision.headroom_multiple(utilizations)


@sheet_function(
    summary="Months of compound growth until a utilization reaches 1: log(1/u) / log(1+g); 0 if already over, "
    "9999 if never (no growth or nothing in use).",
    args=(
        Arg(name="utilization", unit="fraction", help="Current utilization (e.g. MAX_UTILIZATION of the route)"),
        Arg(name="monthly_growth_rate", unit="fraction/month", help="Demand growth per month (0.1 or 10%)"),
    ),
    returns="months",
    category="Decision",
    example="=MONTHS_TO_BREACH(0.6, 10%) -> 5.36",
    formula_ids=("C7",),
)
def MONTHS_TO_BREACH(utilization, monthly_growth_rate):
    return decision.months_to_breach(utilization, monthly_growth_rate=monthly_growth_rate)


@sheet_function(
    summary="Utilization of the surviving backends when one is down and the whole peak is rerouted over the "
    "others in proportion to capacity (<= 1: failover is feasible).",
    args=(
        Arg(name="peak_demand", unit="per min or req/s", help="Peak demand of everything the backends carry"),
        Arg(
            name="capacities",
            unit="per min or req/s",
            kind="numbers",
            help="Capacity (limit) of each backend, a range, same unit as peak_demand",
        ),
        Arg(
            name="failed_backend",
            unit="position",
            help="1-based position of the backend that fails; 0 = the largest (worst case)",
            default=0,
        ),
    ),
    returns="fraction",
    category="Decision",
    example="=FAILOVER_UTILIZATION(1500, {1000,1000,1000}) -> 0.75",
    formula_ids=("C8",),
)
def FAILOVER_UTILIZATION(peak_demand, capacities, failed_backend=0):
    return decision.failover_utilization(peak_demand, capacities=capacities, failed=failed_backend)


@sheet_function(
    summary="Demand that overflows a primary backend kept under a safety buffer: max(0, demand - limit x (1 - "
    "buffer)).",
    args=(
        Arg(name="demand", unit="per min", help="Demand sent to the primary backend"),
        Arg(name="primary_limit", unit="per min", help="Limit of the primary backend, same unit as demand"),
        Arg(name="buffer", unit="fraction", help="Share of the limit kept free (0.2 keeps 20%)", default=0.0),
    ),
    returns="per min",
    category="Decision",
    example="=SPILLOVER(1500, 1000, 0.2) -> 700",
    formula_ids=("C8",),
)
def SPILLOVER(demand, primary_limit, buffer=0.0):
    return decision.spillover(demand, primary_limit=primary_limit, buffer=buffer)
