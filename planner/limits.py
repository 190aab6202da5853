"""Provider-limit utilization and the keys, deployments or regions a route needs (C7 applied to rate limits).

A limit is per key (API key, deployment, region or organization: whatever the provider meters). Demand and limit
carry the same unit (requests or tokens per minute, or per day for RPD/TPD). Utilization 1.0 is the ceiling.
"""

from __future__ import annotations

import math

from planner.errors import ArgumentError, UnknownNameError, check_number
from planner.specs import ProviderLimits

LIMIT_NAMES = ("rpm", "tpm", "itpm", "otpm", "rpd", "tpd")
"""The limits :class:`planner.specs.ProviderLimits` can carry, per minute or per day."""

_ROUNDING = 1e-9
"""Relative slack before rounding up, so 3.0000000000004 keys (float noise) is 3 keys, not 4."""


def utilization(demand: float, limit: float, keys: float = 1) -> float:
    """Utilization of one limit spread over ``keys`` keys or deployments: ``u = demand / (limit * keys)``.

    Reference: C7 (``u_j = demand_j / limit_j``), with the limit multiplied by the number of keys that share the
    route evenly (a load-balancing router such as LiteLLM's simple-shuffle).

    1,500 RPM of demand against a 1,000-RPM tier over two keys runs at 75 %:

    >>> utilization(1500, 1000, 2)
    0.75
    >>> utilization(0, 4000)
    0.0
    """
    d = check_number("demand", demand, minimum=0)
    lim = check_number("limit", limit, minimum=0, exclusive_minimum=True)
    k = check_number("keys", keys, minimum=1, integer=True)
    return d / (lim * k)


def keys_needed(demand: float, limit_per_key: float, target_utilization: float = 1.0) -> int:
    """Keys, deployments or regions needed to keep one limit at or under a target utilization.

    ``keys = max(1, ceil(demand / (limit_per_key * target)))``: the smallest count whose utilization
    (:func:`utilization`) is <= ``target``; one fewer would exceed it. A route always needs at least one key.

    Reference: C7 and C8 (size under a buffer: ``limit * (1 - buffer)``, with ``target = 1 - buffer``). ***Derived.***

    12 M counted ITPM against a 4 M ITPM tier at a 70 % target needs 5 keys (4 would run at 75 %):

    >>> keys_needed(12_000_000, 4_000_000, 0.7)
    5
    >>> keys_needed(0, 1000)
    1
    """
    d = check_number("demand", demand, minimum=0)
    lim = check_number("limit_per_key", limit_per_key, minimum=0, exclusive_minimum=True)
    t = check_number("target_utilization", target_utilization, minimum=0, exclusive_minimum=True)
    ratio = d / (lim * t)
    return max(1, math.ceil(ratio * (1 - _ROUNDING)))


def keys_needed_all(demands: list[float], limits_per_key: list[float], target_utilization: float = 1.0) -> int:
    """Keys needed so that *every* limit stays under the target: the maximum of :func:`keys_needed` per limit.

    Limits given as ``None`` (the provider sets no such limit) are skipped.

    Reference: C7 ("fleet size = the maximum over the ... limit-derived counts").

    RPM 1,500 against 1,000 and TPM 3.6 M against 1 M, at a 90 % target: TPM binds with 4 keys.

    >>> keys_needed_all([1500, 3_600_000], [1000, 1_000_000], 0.9)
    4
    """
    if len(demands) != len(limits_per_key):
        raise ArgumentError("limits_per_key", len(limits_per_key), f"{len(demands)} limits, one per demand")
    counts = [
        keys_needed(d, lim, target_utilization) for d, lim in zip(demands, limits_per_key) if lim is not None
    ]
    return max(counts, default=1)


LIMIT_FIELDS = {
    **{name: name for name in LIMIT_NAMES},
    "window_s": "window_s",
    "output_token_weight": "output_token_weight",
}
"""Names :func:`limit_value` accepts (lower case) and the :class:`~planner.specs.ProviderLimits` field each reads."""


def limit_value(limits: ProviderLimits, limit_name: str) -> float:
    """One limit of a provider tier by name: ``rpm``, ``tpm``, ``itpm``, ``otpm``, ``rpd``, ``tpd``, or the counting
    parameters ``window_s`` (enforcement window) and ``output_token_weight`` (quota burned per output token, D3).

    Case-insensitive. A limit the provider does not set raises :class:`ArgumentError` listing those it does set.

    >>> from planner.specs import ProviderLimits
    >>> tier = ProviderLimits(provider="p", tier="t", model="m", rpm=50, itpm=30_000, source="s", as_of="2026")
    >>> limit_value(tier, "ITPM")
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
