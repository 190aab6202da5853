"""Provider-limit utilization and the keys, deployments or regions a route needs (C7 applied to rate limits).

A limit is per key (API key, deployment, region or organization: whatever the provider meters). Demand and limit
carry the same unit (requests or tokens per minute, or per day for RPD/TPD). Utilization 1.0 is the ceiling.
"""

from __future__ import annotations

import math

from planner.errors import ArgumentError, check_number

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
