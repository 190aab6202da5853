"""Provider-limit utilization, the scope of a limit, burst windows, and the keys a route needs (C7 on rate limits).

Demand and limit carry the same unit (requests or tokens per minute, or per day for RPD/TPD). Utilization 1.0 is the
ceiling. A limit is metered per *scope* (:data:`planner.specs.LIMIT_SCOPES`): per organization or project (more API
keys share the one pool), or per key, deployment or account and Region (each one carries its own copy). Only the
latter are multiplied by ``keys`` (:func:`effective_limit`). A per-minute limit may be enforced over a shorter window
(OpenAI: per second; Anthropic: a token bucket; Azure: 1 s or 10 s), so a plan inside its per-minute limit can still
be throttled by a burst (:func:`burst_utilization`).
"""

from __future__ import annotations

import math
from statistics import NormalDist

from planner.errors import ArgumentError, UnknownNameError, check_fraction, check_number
from planner.specs import LIMIT_MULTIPLIERS, LIMIT_SCOPES, ProviderLimits

LIMIT_NAMES = ("rpm", "tpm", "itpm", "otpm", "rpd", "tpd")
"""The limits :class:`planner.specs.ProviderLimits` can carry, per minute or per day."""

_ROUNDING = 1e-9
"""Relative slack before rounding up, so 3.0000000000004 keys (float noise) is 3 keys, not 4."""


def utilization(demand: float, *, limit: float, keys: float = 1) -> float:
    """Utilization of one limit spread over ``keys`` keys or deployments: ``u = demand / (limit * keys)``.

    Reference: C7 (``u_j = demand_j / limit_j``), with the limit multiplied by the number of keys that share the
    route evenly (a load-balancing router such as LiteLLM's simple-shuffle).

    1,500 RPM of demand against a 1,000-RPM tier over two keys runs at 75 %:

    >>> utilization(1500, limit=1000, keys=2)
    0.75
    >>> utilization(0, limit=4000)
    0.0
    """
    d = check_number("demand", demand, minimum=0)
    lim = check_number("limit", limit, minimum=0, exclusive_minimum=True)
    k = check_number("keys", keys, minimum=1, integer=True)
    return d / (lim * k)


MULTIPLYING_SCOPES = ("key", "deployment", "account-region")
"""Scopes whose limit every key, deployment or account-Region pair carries in full, so ``keys`` multiplies it."""

SECONDS_PER_MINUTE = 60.0


def check_scope(scope: object) -> str:
    """``scope`` as one of :data:`planner.specs.LIMIT_SCOPES` (case-insensitive, spaces and underscores as dashes).

    >>> check_scope("Account_Region")
    'account-region'
    """
    text = "-".join(str(scope).strip().lower().replace("_", " ").split()) if isinstance(scope, str) else scope
    if text not in LIMIT_SCOPES:
        raise UnknownNameError("scope", scope, LIMIT_SCOPES)
    return text  # type: ignore[return-value]


def keys_multiply(scope: str) -> bool:
    """Whether adding keys (deployments, account-Region pairs) adds capacity under ``scope``.

    >>> keys_multiply("organization"), keys_multiply("deployment")
    (False, True)
    """
    return check_scope(scope) in MULTIPLYING_SCOPES


def effective_limit(limit: float, *, keys: float = 1, scope: str) -> float:
    """The capacity ``keys`` keys (or deployments, or account-Region pairs) have together under one limit.

    ``capacity = limit * keys`` when the limit is metered per ``key``, ``deployment`` or ``account-region``, each of
    the ``keys`` carrying its own full copy; ``capacity = limit`` when it is metered per ``organization`` or
    ``project``, where every key draws on the one pool. Precisely:

    - OpenAI: limits are set per organization (a project's own limit is a cap inside it): keys in one organization
      share it, x1;
    - Anthropic: "rate limits are set at the organization level" (workspace limits are caps inside it): x1;
    - Gemini: "rate limits are applied per project, not per API key": x1;
    - Azure OpenAI: the TPM quota is per subscription, Region and model, and is split among the deployments drawing
      on it; ``keys`` counts deployments that each hold a full quota (in different Regions or subscriptions): x keys;
    - Amazon Bedrock: service quotas are per account and Region; ``keys`` counts account-Region pairs: x keys.

    Reference: C7 (``u = demand / limit``) with the limit of the metered unit; facts.md 1.1-1.5 (scope rows);
    docs/catalog.md "Limit scope".

    Three Anthropic keys against a 2 M ITPM organization limit still have 2 M; three Azure deployments in three
    Regions at 450 k TPM each have 1.35 M:

    >>> effective_limit(2_000_000, keys=3, scope="organization")
    2000000.0
    >>> effective_limit(450_000, keys=3, scope="deployment")
    1350000.0
    """
    lim = check_number("limit", limit, minimum=0, exclusive_minimum=True)
    k = check_number("keys", keys, minimum=1, integer=True)
    return lim * k if keys_multiply(scope) else lim


def scoped_utilization(demand: float, *, limit: float, keys: float = 1, scope: str) -> float:
    """Utilization of one limit given its scope: ``u = demand / effective_limit(limit, keys, scope)``.

    Reference: C7 with :func:`effective_limit`.

    1,500 RPM against a 1,000-RPM organization limit is 150 % however many keys share it; against two Bedrock
    Regions it is 75 %:

    >>> scoped_utilization(1500, limit=1000, keys=2, scope="organization")
    1.5
    >>> scoped_utilization(1500, limit=1000, keys=2, scope="account-region")
    0.75
    """
    d = check_number("demand", demand, minimum=0)
    return d / effective_limit(limit, keys=keys, scope=scope)


_SCOPE_WORDS = {
    "organization": ("organization", "keys in one organization share it"),
    "project": ("project", "keys in one project share it"),
    "key": ("API key", "each key has its own"),
    "deployment": ("deployment", "each deployment with its own quota (another Region or subscription) has its own"),
    "account-region": ("AWS account and Region", "each account-Region pair has its own"),
}


def limit_scope_text(scope: str, *, keys: float = 1, multiplied_by: str | None = None,
                     raise_by: tuple[str, ...] | list[str] = ()) -> str:
    """One line a planner can read: what the limit is metered per, what ``keys`` count for, and what would raise it.

    >>> limit_scope_text("organization", keys=3, raise_by=("a higher usage tier", "a limit increase request"))
    ... # doctest: +NORMALIZE_WHITESPACE
    'per organization: keys in one organization share it, so 3 keys count as 1;
     raise it with a higher usage tier or a limit increase request'
    >>> limit_scope_text("account-region", keys=2, multiplied_by="region", raise_by=("provisioned throughput",))
    ... # doctest: +NORMALIZE_WHITESPACE
    'per AWS account and Region: each account-Region pair has its own, so 2 keys count as 2;
     more capacity: another region or provisioned throughput'
    """
    sc = check_scope(scope)
    k = int(check_number("keys", keys, minimum=1, integer=True))
    if multiplied_by is not None and multiplied_by not in LIMIT_MULTIPLIERS:
        raise UnknownNameError("multiplied_by", multiplied_by, LIMIT_MULTIPLIERS)
    unit, sharing = _SCOPE_WORDS[sc]
    counted = k if sc in MULTIPLYING_SCOPES else 1
    head = f"per {unit}: {sharing}, so {k} key{'s' if k != 1 else ''} count{'' if k != 1 else 's'} as {counted}"
    ways = [str(r) for r in raise_by]
    if multiplied_by is not None:
        ways = [f"another {multiplied_by}", *ways]
        return f"{head}; more capacity: {_join_or(ways)}"
    return f"{head}; raise it with {_join_or(ways)}" if ways else head


def _join_or(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def limit_scope_text_for(limits: ProviderLimits, *, keys: float = 1) -> str:
    """:func:`limit_scope_text` for a catalog tier (its ``scope``, ``multiplied_by`` and ``raise_by``)."""
    return limit_scope_text(limits.scope, keys=keys, multiplied_by=limits.multiplied_by, raise_by=limits.raise_by)


def window_limit(per_min_limit: float, *, window_s: float) -> float:
    """The share of a per-minute limit one enforcement window allows: ``limit_window = limit_per_min * w / 60``.

    Reference: D1 ("check the peak second: RPS <= RPM_limit / 60"); OpenAI help article 6891753 ("60,000
    requests/minute may be enforced as 1,000 requests/second"); Anthropic rate-limits page (token bucket: "60 RPM may
    be enforced as 1 request per second"); Azure OpenAI quota page (1 s or 10 s windows).

    >>> window_limit(60_000, window_s=1)
    1000.0
    >>> window_limit(600, window_s=10)  # Azure: a 600-RPM deployment allows 100 requests per 10 s
    100.0
    """
    lim = check_number("per_min_limit", per_min_limit, minimum=0, exclusive_minimum=True)
    w = check_number("window_s", window_s, minimum=0, exclusive_minimum=True, maximum=SECONDS_PER_MINUTE)
    return lim * w / SECONDS_PER_MINUTE


def burst_utilization(per_min_demand: float, *, per_min_limit: float, window_s: float, burst_factor: float,
                      keys: float = 1, scope: str) -> float:
    """Utilization of the busiest enforcement window at a stated burst factor.

    ``u_burst = (demand_per_min * w / 60 * b) / (effective_limit(limit_per_min, keys, scope) * w / 60)``, where
    ``b`` is the ratio of the busiest ``w``-second window's demand to the average window at the per-minute rate
    (1 = perfectly smooth). The window length cancels in the ratio, but not in ``b``: the shorter the window, the
    burstier the traffic looks (see :func:`poisson_burst_factor`), which is why a plan within its per-minute limit can
    be throttled per second.

    Reference: D1 and :func:`window_limit`; OpenAI help article 6891753 (per-second enforcement, "sending short
    bursts of requests ... can lead to rate limit errors"); Anthropic rate-limits page (token bucket, continuous
    replenishment). ***Derived.***

    600 RPM against a 1,000-RPM organization limit enforced per second, with the busiest second at 2x the average:
    120 % in that second although the minute runs at 60 %:

    >>> burst_utilization(600, per_min_limit=1000, window_s=1, burst_factor=2, scope="organization")
    1.2
    """
    d = check_number("per_min_demand", per_min_demand, minimum=0)
    b = check_number("burst_factor", burst_factor, minimum=1)
    cap = window_limit(effective_limit(per_min_limit, keys=keys, scope=scope), window_s=window_s)
    return d * window_s / SECONDS_PER_MINUTE * b / cap


_EXACT_POISSON_MEAN = 500.0
"""Up to this mean the Poisson quantile is summed exactly; above it the Cornish-Fisher expansion is used."""


def poisson_burst_factor(per_min_rate: float, *, window_s: float, quantile: float = 0.99) -> float:
    """Burst factor of random (Poisson) arrivals: the ``quantile`` of the count in a ``window_s`` window over its mean.

    ``b = Q_q(Poisson(m)) / m`` with ``m = rate_per_min * w / 60``. It is a floor for real traffic (which is burstier
    than Poisson) and only for counts of requests; tokens per request add their own spread. The quantile is summed
    exactly for ``m <= 500`` and taken from the Cornish-Fisher expansion ``m + z*sqrt(m) + (z^2 - 1)/6`` (rounded up)
    above, which is within one request of the exact quantile there (tests/test_limits.py checks it). A window with no
    expected arrival (``m = 0``) has factor 1.

    Reference: Poisson counts of a Poisson process (MLPerf server scenario, facts.md 5.1, sends Poisson arrivals);
    Cornish-Fisher expansion of the Poisson quantile. ***Derived.***

    60 requests a minute checked per second: the mean second holds 1 request, the 99th-percentile second 4, so
    b = 4; over 10 s windows (mean 10) it is 18 / 10 = 1.8:

    >>> poisson_burst_factor(60, window_s=1)
    4.0
    >>> poisson_burst_factor(60, window_s=10)
    1.8
    """
    r = check_number("per_min_rate", per_min_rate, minimum=0)
    w = check_number("window_s", window_s, minimum=0, exclusive_minimum=True, maximum=SECONDS_PER_MINUTE)
    q = check_fraction("quantile", quantile)
    if not 0 < q < 1:
        raise ArgumentError("quantile", quantile, "a fraction 0 < q < 1")
    mean = r * w / SECONDS_PER_MINUTE
    if mean == 0:
        return 1.0
    if mean <= _EXACT_POISSON_MEAN:
        pmf = math.exp(-mean)
        cdf, k = pmf, 0
        while cdf < q:
            k += 1
            pmf *= mean / k
            cdf += pmf
        return max(1.0, k / mean)
    z = NormalDist().inv_cdf(q)
    return max(1.0, math.ceil(mean + z * math.sqrt(mean) + (z * z - 1) / 6) / mean)


def keys_needed(demand: float, *, limit_per_key: float, target_utilization: float = 1.0) -> int:
    """Keys, deployments or regions needed to keep one limit at or under a target utilization.

    ``keys = max(1, ceil(demand / (limit_per_key * target)))``: the smallest count whose utilization
    (:func:`utilization`) is <= ``target``; one fewer would exceed it. A route always needs at least one key.

    Reference: C7 and C8 (size under a buffer: ``limit * (1 - buffer)``, with ``target = 1 - buffer``). ***Derived.***

    12 M counted ITPM against a 4 M ITPM tier at a 70 % target needs 5 keys (4 would run at 75 %):

    >>> keys_needed(12_000_000, limit_per_key=4_000_000, target_utilization=0.7)
    5
    >>> keys_needed(0, limit_per_key=1000)
    1
    """
    d = check_number("demand", demand, minimum=0)
    lim = check_number("limit_per_key", limit_per_key, minimum=0, exclusive_minimum=True)
    t = check_number("target_utilization", target_utilization, minimum=0, exclusive_minimum=True)
    ratio = d / (lim * t)
    return max(1, math.ceil(ratio * (1 - _ROUNDING)))


def keys_needed_all(demands: list[float], *, limits_per_key: list[float], target_utilization: float = 1.0) -> int:
    """Keys needed so that *every* limit stays under the target: the maximum of :func:`keys_needed` per limit.

    Limits given as ``None`` (the provider sets no such limit) are skipped.

    Reference: C7 ("fleet size = the maximum over the ... limit-derived counts").

    RPM 1,500 against 1,000 and TPM 3.6 M against 1 M, at a 90 % target: TPM binds with 4 keys.

    >>> keys_needed_all([1500, 3_600_000], limits_per_key=[1000, 1_000_000], target_utilization=0.9)
    4
    """
    if len(demands) != len(limits_per_key):
        raise ArgumentError("limits_per_key", len(limits_per_key), f"{len(demands)} limits, one per demand")
    counts = [
        keys_needed(d, limit_per_key=lim, target_utilization=target_utilization)
        for d, lim in zip(demands, limits_per_key) if lim is not None
    ]
    return max(counts, default=1)


LIMIT_FIELDS = {
    **{name: name for name in LIMIT_NAMES},
    "window_s": "window_s",
    "output_token_weight": "output_token_weight",
}
"""Names :func:`limit_value` accepts (lower case) and the :class:`~planner.specs.ProviderLimits` field each reads."""


def limit_value(limits: ProviderLimits, *, limit_name: str) -> float:
    """One limit of a provider tier by name: ``rpm``, ``tpm``, ``itpm``, ``otpm``, ``rpd``, ``tpd``, or the counting
    parameters ``window_s`` (enforcement window) and ``output_token_weight`` (quota burned per output token, D3).

    Case-insensitive. A limit the provider does not set raises :class:`ArgumentError` listing those it does set.

    >>> from planner.specs import ProviderLimits
    >>> tier = ProviderLimits(provider="p", tier="t", model="m", rpm=50, itpm=30_000, source="s", as_of="2026")
    >>> limit_value(tier, limit_name="ITPM")
    30000.0
    """
    key = str(limit_name).strip().lower()
    if key not in LIMIT_FIELDS:
        raise UnknownNameError("limit_name", limit_name, LIMIT_FIELDS)
    value = getattr(limits, LIMIT_FIELDS[key])
    if value is None:
        set_here = [n for n in LIMIT_FIELDS if getattr(limits, LIMIT_FIELDS[n]) is not None]
        raise ArgumentError("limit_name", limit_name, f"a limit {limits.key} sets: {', '.join(set_here)}")
    return float(value)
