"""Self-host vs API: the per-route formulas behind the What-if sheet (W1-W5 in docs/method.md section 8).

Pure functions, keyword-only after the leading quantity; prices in USD per million tokens, rates in requests per
second averaged over the month, costs in USD per month. Both sides are compared on one token basis: total (input +
output) tokens served at the average rate (:mod:`planner.cost`'s rule).
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.cost import TOKENS_PER_MTOK, api_cost_per_request_usd
from planner.demand import DAYS_PER_MONTH, SECONDS_PER_DAY
from planner.errors import ArgumentError, check_fraction, check_number

SPIKY_PEAK_TO_AVERAGE = 3.0
"""A route whose peak is more than 3x its monthly average is spiky (W4): a fleet sized for the peak would idle for
two thirds of its GPU-hours on average, which is what pay-per-token APIs avoid."""

SPIKY_BURST_FACTOR = 3.0
"""A busiest window more than 3x the average window at the peak minute (the Plan's burst factor) is spiky too."""


def selfhost_usd_per_mtok_at_load(fleet_cost_monthly_usd: float, *, tokens_per_month: float) -> float:
    """Self-hosted cost per million total tokens at the plan's utilization (W1): the fleet's monthly bill over the
    tokens (input + output) its routes send it in a month at their average rate.

    ``$/Mtok = 1e6 * fleet_cost_monthly / tokens_per_month``

    A route not on the fleet is priced at the same figure: the fleet grown to carry it at the same utilization costs
    the same per token (the request mix aside).

    Reference: C4 with the volume of D2 at the average rate (C6's token basis). ***Derived.***

    The seed's H100 fleet (205,709 USD/month) serving 200 req/s on average of 1,500 + 40 tokens (810 billion tokens
    a month) costs 0.254 USD per million tokens:

    >>> round(selfhost_usd_per_mtok_at_load(205_709, tokens_per_month=200 * 1540 * 86_400 * 30.4375), 3)
    0.254
    """
    cost = check_number("fleet_cost_monthly_usd", fleet_cost_monthly_usd, minimum=0)
    tokens = check_number("tokens_per_month", tokens_per_month, minimum=0, exclusive_minimum=True)
    return TOKENS_PER_MTOK * cost / tokens


def breakeven_qps(fleet_cost_monthly_usd: float, *, api_cost_per_request_usd: float,
                  days_per_month: float = DAYS_PER_MONTH) -> float:
    """Break-even request rate (W2): the average requests per second at which the route's API bill equals the
    fleet's monthly cost. Below it the API is cheaper than running the fleet; above it the fleet is, provided it
    carries the load (the Results sheet's utilizations say whether it does).

    ``qps* = fleet_cost_monthly / (api_cost_per_request * 86,400 * days_per_month)``

    Reference: C6 (break-even volume ``self_host_monthly / blended price``) in requests instead of tokens.

    A 205,709 USD/month fleet against 0.267 cents per request breaks even at 29.3 req/s on average:

    >>> round(breakeven_qps(205_709, api_cost_per_request_usd=0.00267), 1)
    29.3
    """
    cost = check_number("fleet_cost_monthly_usd", fleet_cost_monthly_usd, minimum=0)
    per_request = check_number("api_cost_per_request_usd", api_cost_per_request_usd, minimum=0,
                               exclusive_minimum=True)
    days = check_number("days_per_month", days_per_month, minimum=0, exclusive_minimum=True)
    return cost / (per_request * SECONDS_PER_DAY * days)


def breakeven_hit_rate(selfhost_usd_per_mtok: float, *, avg_input_tokens: float, avg_output_tokens: float,
                       cache_write_tokens: float, usd_per_mtok_input: float, usd_per_mtok_cached_input: float | None,
                       usd_per_mtok_cache_write: float | None, usd_per_mtok_output: float) -> float:
    """The API's prefix-cache hit rate at which its cost per million tokens equals self-hosting's (W3).

    The API's cost per request is linear in the hit rate ``h`` (C1, with the cache writes ``w`` fixed):
    ``cost(h) = cost(0) - h * I * (p_in - p_read) / 1e6``, so ``h* = (cost(0) - target) / (cost(0) - cost(1))``
    with ``target = selfhost_usd_per_mtok * (I + O) / 1e6``. Above ``h*`` the API is cheaper. The result is not
    clipped: below 0 the API is cheaper even without caching; above ``1 - w / I`` (the highest hit rate the cache
    writes allow) self-hosting is cheaper at any hit rate. With no cache discount (``p_read = p_in``) the hit rate
    moves nothing and the function refuses.

    Reference: C1 solved for ``h`` against C4/W1. ***Derived.***

    Claude Sonnet (3 / 0.30 / 15 USD per Mtok, no writes) for the seed's completion request (1,500 in, 40 out)
    against self-hosting at 0.254 USD/Mtok: the API would need a hit rate of 1.163, beyond any cache
    (``cost(0) = (3 x 1500 + 15 x 40) / 1e6 = 0.0051``, target ``0.254 x 1540 / 1e6``, slope ``1500 x 2.7 / 1e6``).

    >>> round(breakeven_hit_rate(0.254, avg_input_tokens=1500, avg_output_tokens=40, cache_write_tokens=0,
    ...       usd_per_mtok_input=3, usd_per_mtok_cached_input=0.3, usd_per_mtok_cache_write=None,
    ...       usd_per_mtok_output=15), 3)
    1.163
    """
    target = check_number("selfhost_usd_per_mtok", selfhost_usd_per_mtok, minimum=0)
    i = check_number("avg_input_tokens", avg_input_tokens, minimum=0, exclusive_minimum=True)
    o = check_number("avg_output_tokens", avg_output_tokens, minimum=0)
    w = check_number("cache_write_tokens", cache_write_tokens, minimum=0)
    if w > i:
        raise ArgumentError("cache_write_tokens", cache_write_tokens, f"at most avg_input_tokens = {i:g}")

    # prices checked once through C1 itself (blank cache prices: the input price)
    api_cost_per_request_usd(i, avg_output_tokens=o, usd_per_mtok_input=usd_per_mtok_input,
                             usd_per_mtok_output=usd_per_mtok_output, cache_write_tokens=w,
                             usd_per_mtok_cached_input=usd_per_mtok_cached_input,
                             usd_per_mtok_cache_write=usd_per_mtok_cache_write)
    usd_per_mtok_input_ = float(usd_per_mtok_input)
    p_read = usd_per_mtok_input_ if usd_per_mtok_cached_input is None else float(usd_per_mtok_cached_input)
    p_write = usd_per_mtok_input_ if usd_per_mtok_cache_write is None else float(usd_per_mtok_cache_write)
    p_out = float(usd_per_mtok_output)

    def cost(h: float) -> float:
        # C1 without its cache-write bound (w <= I(1-h)): the line continues past it, the caller reads h* off it
        return (usd_per_mtok_input_ * (i * (1 - h) - w) + p_read * i * h + p_write * w + p_out * o) / TOKENS_PER_MTOK

    slope = cost(0.0) - cost(1.0)
    if slope <= 0:
        raise ArgumentError("usd_per_mtok_cached_input", usd_per_mtok_cached_input,
                            f"a cache-read price below the input price {usd_per_mtok_input_:g}")
    return (cost(0.0) - target * (i + o) / TOKENS_PER_MTOK) / slope


@dataclass(frozen=True, kw_only=True)
class Recommendation:
    """W4's verdict for one route: ``choice`` is ``"self-host"`` or ``"API"``; ``reasons`` says which inputs drove
    it, most decisive first; ``failover`` names the other side to fail over to (or says the plan has none)."""

    choice: str
    reasons: str
    failover: str

    @property
    def text(self) -> str:
        return f"{self.choice}: {self.reasons}; {self.failover}"


def recommend(avg_qps: float, *, breakeven_qps_: float | None, selfhost_usd_per_mtok: float | None,
              api_usd_per_mtok: float | None, peak_to_average: float, burst_factor: float | None = None,
              new_route: bool = False, api_backend: str = "", fleet_backend: str = "",
              route_failover: str = "") -> Recommendation:
    """The seed's rule (W4): steady high volume self-hosted; spiky or new routes on APIs; failover between them.

    - **new**: the route's New flag (a new model or product: its demand is not known yet) -> API;
    - **spiky**: peak / average > :data:`SPIKY_PEAK_TO_AVERAGE` (3) or the Plan's burst factor >
      :data:`SPIKY_BURST_FACTOR` (3) -> API;
    - **high volume**: the average rate at or above the break-even rate (W2), and self-hosting cheaper per million
      tokens at the plan's utilization (W1 against C1): both -> self-host; either missing -> API;
    - only one side in the plan (no fleet or no provider as the route's backend, its failover or on the plan at
      all): that side, said so;
    - **failover**: the other side (self-host fails over to the API and the API to the fleet); where the route's
      failover is not on the other side, the recommendation names the one to add.

    Reference: the seed's rule (README "The method"); C6 break-even volume. ***Heuristic thresholds.***

    >>> r = recommend(200, breakeven_qps_=29.3, selfhost_usd_per_mtok=0.26, api_usd_per_mtok=1.73,
    ...               peak_to_average=2.0, api_backend="anthropic-sonnet", fleet_backend="llama70b-h100",
    ...               route_failover="llama70b-h200")
    >>> r.choice, r.failover
    ('self-host', 'fail over to anthropic-sonnet (add it as the failover; now llama70b-h200)')
    >>> recommend(20, breakeven_qps_=61.0, selfhost_usd_per_mtok=0.26, api_usd_per_mtok=0.46,
    ...           peak_to_average=2.0, api_backend="gemini-flash", fleet_backend="llama70b-h100").reasons
    'low volume: 20 req/s avg < break-even 61 req/s; self-host 0.26 < API 0.46 USD/Mtok; steady: peak/avg 2 <= 3'
    """
    qps = check_number("avg_qps", avg_qps, minimum=0)
    p2a = check_number("peak_to_average", peak_to_average, minimum=1)
    if not fleet_backend and not api_backend:
        raise ArgumentError("backend", "", "a provider or a fleet for the route")
    if not fleet_backend:
        return Recommendation(choice="API", reasons="no self-hosted fleet in the plan", failover="no fleet to fail "
                              "over to")
    if not api_backend:
        return Recommendation(choice="self-host", reasons="no provider API in the plan",
                              failover="no API to fail over to")
    spiky = p2a > SPIKY_PEAK_TO_AVERAGE or (burst_factor is not None and burst_factor > SPIKY_BURST_FACTOR)
    reasons: list[tuple[str, str]] = []  # (reason, the side it favours)
    if new_route:
        reasons.append(("new: demand not yet known", "API"))
    if p2a > SPIKY_PEAK_TO_AVERAGE:
        reasons.append((f"spiky: peak/avg {p2a:.3g} > {SPIKY_PEAK_TO_AVERAGE:g}", "API"))
    elif spiky:
        reasons.append((f"spiky: burst {burst_factor:.3g} > {SPIKY_BURST_FACTOR:g}", "API"))
    high = breakeven_qps_ is not None and qps >= breakeven_qps_
    if breakeven_qps_ is None:
        reasons.append(("no break-even rate (fleet cost or API price missing)", "API"))
    else:
        reasons.append((f"{'high' if high else 'low'} volume: {qps:.3g} req/s avg {'>=' if high else '<'} "
                        f"break-even {breakeven_qps_:.3g} req/s", "self-host" if high else "API"))
    cheaper = False
    if selfhost_usd_per_mtok is not None and api_usd_per_mtok is not None:
        cheaper = selfhost_usd_per_mtok < api_usd_per_mtok
        reasons.append((f"self-host {selfhost_usd_per_mtok:.3g} {'<' if cheaper else '>='} API "
                        f"{api_usd_per_mtok:.3g} USD/Mtok", "self-host" if cheaper else "API"))
    if not spiky:
        reasons.append((f"steady: peak/avg {p2a:.3g} <= {SPIKY_PEAK_TO_AVERAGE:g}", "self-host"))
    choice = "self-host" if (high and cheaper and not spiky and not new_route) else "API"
    # the reasons that decided it first, then the ones that pointed the other way
    ordered = [r for r, side in reasons if side == choice] + [r for r, side in reasons if side != choice]
    other = api_backend if choice == "self-host" else fleet_backend
    failover = f"fail over to {other}" + ("" if route_failover == other else
                                          f" (add it as the failover; now {route_failover or 'none'})")
    return Recommendation(choice=choice, reasons="; ".join(ordered), failover=failover)


def peak_to_average(avg_to_peak_ratio: float) -> float:
    """Peak over average demand from the Plan's average-to-peak ratio: ``1 / ratio``.

    >>> peak_to_average(0.5)
    2.0
    """
    return 1.0 / check_fraction("avg_to_peak_ratio", avg_to_peak_ratio, allow_zero=False)
