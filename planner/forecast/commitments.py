"""Commitments against pay-as-you-go: reserved GPUs and provisioned throughput (PTU, model units, GSUs).

- A reserved GPU costs its reserved rate for every hour of the term, used or not; on demand costs only the hours
  used. It pays off when the hours used exceed ``reserved / on_demand`` of the term (the break-even fraction).
- Provisioned throughput costs a fixed amount per unit and month; pay-as-you-go costs the tokens. It pays off when
  the month's pay-as-you-go bill exceeds the provisioned units' cost: the break-even volume.
- Provisioned units are priced per hour (Azure PTU without commitment), per week (a Vertex 1-week term) or per month;
  ``unit_monthly_usd`` puts them on one monthly footing.
- The month the forecast crosses a break-even volume follows from compound growth, as C7's months to breach.
"""

from __future__ import annotations

import math

from planner.cost import HOURS_PER_MONTH
from planner.errors import ArgumentError, check_number

WEEKS_PER_MONTH = HOURS_PER_MONTH / (7 * 24)
"""365.25 / 12 / 7 = 4.348 weeks in the average month (the same month as C4's 730.5 hours)."""


def reserved_break_even_fraction(reserved_usd_per_hour: float, *, on_demand_usd_per_hour: float) -> float:
    """Share of the term's hours a reserved GPU must be busy to cost no more than on demand: ``p_res / p_od``.

    Reference: C4/C5 (rented GPUs, docs/method.md "Commitments"); any reservation priced per hour for a term.

    $1.79 reserved against $2.23 on demand pays off above 80.3 % of the hours:

    >>> round(reserved_break_even_fraction(1.79, on_demand_usd_per_hour=2.23), 4)
    0.8027
    """
    r = check_number("reserved_usd_per_hour", reserved_usd_per_hour, minimum=0)
    o = check_number("on_demand_usd_per_hour", on_demand_usd_per_hour, minimum=0, exclusive_minimum=True)
    return r / o


def provisioned_break_even_usd(units: float, *, usd_per_unit_month: float) -> float:
    """The pay-as-you-go bill per month above which ``units`` provisioned units cost less: ``units * p_unit``.

    Reference: Azure OpenAI PTU billing (hourly, or monthly / yearly reservations per PTU); Bedrock model units and
    Vertex GSUs have the same shape.

    15 PTU (the global minimum) at $260 per PTU-month: pay-as-you-go above $3,900 a month.

    >>> provisioned_break_even_usd(15, usd_per_unit_month=260)
    3900.0
    """
    n = check_number("units", units, minimum=0)
    return n * check_number("usd_per_unit_month", usd_per_unit_month, minimum=0)


def units_for_throughput(tokens_per_min: float, *, tokens_per_min_per_unit: float, minimum_units: float = 1,
                         increment: float = 1) -> float:
    """Provisioned units needed for a peak throughput: ``max(min, ceil(T / t_unit / inc) * inc)``.

    Reference: Azure OpenAI PTU sizing (input TPM per PTU, minimum 15 and increments of 5 for global deployments,
    facts.md §1.4).

    400,000 input tokens per minute on gpt-4.1 at 3,000 TPM per PTU: 135 PTU.

    >>> units_for_throughput(400_000, tokens_per_min_per_unit=3000, minimum_units=15, increment=5)
    135.0
    """
    t = check_number("tokens_per_min", tokens_per_min, minimum=0)
    per = check_number("tokens_per_min_per_unit", tokens_per_min_per_unit, minimum=0, exclusive_minimum=True)
    lo = check_number("minimum_units", minimum_units, minimum=0)
    inc = check_number("increment", increment, minimum=0, exclusive_minimum=True)
    return float(max(lo, math.ceil(t / per / inc - 1e-9) * inc))


def units_for_split_throughput(input_tokens_per_min: float, *, output_tokens_per_min: float,
                                input_tokens_per_min_per_unit: float, output_tokens_per_min_per_unit: float) -> float:
    """Provisioned units for a peak when a unit is specified by two throughputs, input and output tokens per minute
    (an Amazon Bedrock model unit): ``max(ceil(I / i_unit), ceil(O / o_unit))``, at least 1.

    Reference: Amazon Bedrock user guide, prov-throughput.html: "The throughput level of an MU specifies the number
    of input tokens that an MU can process across all requests within a span of one minute [and] the number of
    output tokens that an MU can generate"; each unit delivers both, so the scarcer one sets the count.

    300,000 input and 25,000 output tokens a minute on a quote of 50,000 and 2,000 per unit: the output needs 13
    units (12.5 rounded up), the input 6:

    >>> units_for_split_throughput(300_000, output_tokens_per_min=25_000, input_tokens_per_min_per_unit=50_000,
    ...                            output_tokens_per_min_per_unit=2_000)
    13.0
    """
    i = check_number("input_tokens_per_min", input_tokens_per_min, minimum=0)
    o = check_number("output_tokens_per_min", output_tokens_per_min, minimum=0)
    iu = check_number("input_tokens_per_min_per_unit", input_tokens_per_min_per_unit, minimum=0,
                      exclusive_minimum=True)
    ou = check_number("output_tokens_per_min_per_unit", output_tokens_per_min_per_unit, minimum=0,
                      exclusive_minimum=True)
    return float(max(1, math.ceil(i / iu - 1e-9), math.ceil(o / ou - 1e-9)))


def break_even_month(volume: float, *, break_even_volume: float, monthly_growth: float) -> float:
    """The first forecast month whose volume reaches ``break_even_volume`` (month 1: the plan as entered).

    ``m = 1 + ceil(ln(V_be / V_1) / ln(1 + g))``; 1 when already there; 9999 when it is never reached (no growth).

    Reference: compound growth, as C7's months to breach.

    $5,000 of API spend a month growing 8 % a month reaches $12,000 in month 13 (5,000 x 1.08^12 = 12,591):

    >>> break_even_month(5000, break_even_volume=12000, monthly_growth=0.08)
    13.0
    >>> break_even_month(5000, break_even_volume=3900, monthly_growth=0.0)
    1.0
    """
    v = check_number("volume", volume, minimum=0)
    be = check_number("break_even_volume", break_even_volume, minimum=0)
    g = check_number("monthly_growth", monthly_growth, minimum=-0.99)
    if v >= be:
        return 1.0
    if v <= 0 or g <= 0:
        return 9999.0
    return float(1 + math.ceil(math.log(be / v) / math.log(1.0 + g) - 1e-9))


def unit_monthly_usd(price_usd: float, *, per: str) -> float:
    """A commitment price on a monthly footing: ``p x 730.5`` per hour, ``p x 4.348`` per week, ``p`` per month.

    Reference: C4's month of 365.25 x 24 / 12 = 730.5 hours; Azure OpenAI PTU is priced per hour without commitment,
    Vertex AI provisioned throughput per GSU and week (1-week term) or month (1-month, 3-month, 1-year terms).

    $2 per PTU-hour is $1,461 a PTU-month; $1,200 per GSU-week is $5,218 a GSU-month:

    >>> unit_monthly_usd(2.0, per="hour")
    1461.0
    >>> round(unit_monthly_usd(1200.0, per="week"), 1)
    5217.9
    >>> unit_monthly_usd(2700.0, per="month")
    2700.0
    """
    p = check_number("price_usd", price_usd, minimum=0)
    factor = {"hour": HOURS_PER_MONTH, "week": WEEKS_PER_MONTH, "month": 1.0}.get(str(per).strip().lower())
    if factor is None:
        raise ArgumentError("per", per, "hour, week or month")
    return p * factor


def reserved_saving_usd(gpus: float, *, on_demand_usd_per_gpu_hour: float, reserved_usd_per_gpu_hour: float,
                        busy_fraction: float = 1.0) -> float:
    """Monthly saving of reserving ``gpus`` for a term instead of renting the busy hours on demand:
    ``n x 730.5 x (b x p_od - p_res)`` (negative: the reservation costs more).

    Reference: C4 (GPU-hours x price); a reservation bills every hour of the term, on demand only the busy share ``b``.

    88 H100s always on at $3.20 on demand against $2.72 reserved save 88 x 730.5 x 0.48 = $30,856 a month; busy 80 %
    of the hours they lose 88 x 730.5 x (0.8 x 3.20 - 2.72) = -$10,285:

    >>> round(reserved_saving_usd(88, on_demand_usd_per_gpu_hour=3.2, reserved_usd_per_gpu_hour=2.72))
    30856
    >>> round(reserved_saving_usd(88, on_demand_usd_per_gpu_hour=3.2, reserved_usd_per_gpu_hour=2.72,
    ...                           busy_fraction=0.8))
    -10285
    """
    n = check_number("gpus", gpus, minimum=0)
    od = check_number("on_demand_usd_per_gpu_hour", on_demand_usd_per_gpu_hour, minimum=0)
    res = check_number("reserved_usd_per_gpu_hour", reserved_usd_per_gpu_hour, minimum=0)
    b = check_number("busy_fraction", busy_fraction, minimum=0, maximum=1)
    return n * HOURS_PER_MONTH * (b * od - res)


def break_even_multiple(payg_usd_per_month: float, *, provisioned_usd_per_month: float) -> float:
    """The demand multiple of month 1 at which pay-as-you-go spend reaches the provisioned units' cost:
    ``x_be = C_prov / C_payg`` (below 1: the units already pay in month 1).

    Reference: pay-as-you-go spend scales with demand (C1); the units' cost does not while they hold the peak.

    $39,447 of API spend a month against 300 PTU at $260 ($78,000): demand must grow 1.98 x:

    >>> round(break_even_multiple(39447, provisioned_usd_per_month=78000), 3)
    1.977
    """
    payg = check_number("payg_usd_per_month", payg_usd_per_month, minimum=0, exclusive_minimum=True)
    return check_number("provisioned_usd_per_month", provisioned_usd_per_month, minimum=0) / payg


__all__ = [
    "WEEKS_PER_MONTH", "break_even_month", "break_even_multiple", "provisioned_break_even_usd",
    "reserved_break_even_fraction", "reserved_saving_usd", "unit_monthly_usd", "units_for_split_throughput",
    "units_for_throughput",
]
