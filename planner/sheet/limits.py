"""Spreadsheet functions for provider limits: utilization, keys needed, catalog limits, Azure RPM/TPM coupling."""

from __future__ import annotations

from planner import demand, limits
from planner.registry import Arg, sheet_function

DEMAND = Arg(name="demand", unit="per min or per day", help="Demand in the limit's unit (e.g. CAPACITY_ITPM)")
PROVIDER = Arg(name="provider", unit="name", kind="text", help="Provider in the catalog (e.g. anthropic)")
TIER = Arg(name="tier", unit="name", kind="text", help="Usage tier of the provider (e.g. tier-4)")
MODEL = Arg(name="model", unit="name", kind="text", help="Model the limits apply to (e.g. claude-sonnet-4.5)")


@sheet_function(
    summary="Utilization of one provider limit (RPM, TPM, ITPM, OTPM, RPD or TPD) spread over keys or "
    "deployments: demand / (limit x keys); 1 is the ceiling.",
    args=(
        DEMAND,
        Arg(name="limit", unit="per min or per day", help="The limit per key or deployment, same unit as demand"),
        Arg(name="keys", unit="count", help="Keys, deployments or regions sharing the demand evenly", default=1),
    ),
    returns="fraction",
    category="Limits",
    example="=LIMIT_UTILIZATION(1500, 1000, 2) -> 0.75",
    formula_ids=("C7",),
)
def LIMIT_UTILIZATION(demand, limit, keys=1):
    return limits.utilization(demand, limit, keys)


@sheet_function(
    summary="Keys, deployments or regions needed to keep one limit at or under a target utilization: "
    "ceil(demand / (limit x target)), at least 1.",
    args=(
        DEMAND,
        Arg(name="limit_per_key", unit="per min or per day", help="The limit of one key or deployment"),
        Arg(
            name="target_utilization",
            unit="fraction",
            help="Highest utilization to plan for (e.g. 0.8 keeps a 20% buffer)",
            default=1.0,
        ),
    ),
    returns="count",
    category="Limits",
    example="=KEYS_NEEDED(12000000, 4000000, 0.7) -> 5",
    formula_ids=("C7", "C8"),
)
def KEYS_NEEDED(demand, limit_per_key, target_utilization=1.0):
    return limits.keys_needed(demand, limit_per_key, target_utilization)


@sheet_function(
    summary="The RPM limit Azure OpenAI derives from a TPM quota: ratio x TPM / 1000 (6 per 1,000 TPM on older "
    "chat models).",
    args=(
        Arg(name="tpm_limit", unit="tokens/min", help="TPM quota assigned to the deployment"),
        Arg(
            name="rpm_per_1000_tpm",
            unit="req/min per 1000 tokens/min",
            help="RPM granted per 1,000 TPM (6 for older chat models; set per model for newer ones)",
            default=6.0,
        ),
    ),
    returns="req/min",
    category="Limits",
    example="=AZURE_RPM_LIMIT(20000) -> 120",
    formula_ids=("D5",),
)
def AZURE_RPM_LIMIT(tpm_limit, rpm_per_1000_tpm=6.0):
    return demand.azure_rpm_limit(tpm_limit, rpm_per_1000_tpm)


@sheet_function(
    summary="One rate limit of a provider tier from the catalog: rpm, tpm, itpm, otpm, rpd, tpd, window_s (s) or "
    "output_token_weight (quota units per output token).",
    args=(
        PROVIDER,
        TIER,
        MODEL,
        Arg(
            name="limit_name",
            unit="name",
            kind="text",
            help="rpm, tpm, itpm, otpm (per minute), rpd, tpd (per day), window_s or output_token_weight",
        ),
    ),
    returns="the limit's unit (per min, per day, or s)",
    category="Limits",
    example='=PROVIDER_LIMIT("anthropic", "tier-4", "claude-sonnet-4.5", "itpm") -> 2000000',
)
def PROVIDER_LIMIT(provider, tier, model, limit_name):
    from planner import catalog

    return limits.limit_value(catalog.get_provider_limits(provider, tier, model), limit_name)
