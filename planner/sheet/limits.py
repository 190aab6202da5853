"""Spreadsheet functions for provider limits: utilization, scope (what keys multiply), burst windows, keys needed,
catalog limits, Azure RPM/TPM coupling."""

from __future__ import annotations

from planner import demand, limits
from planner.registry import Arg, sheet_function

DEMAND = Arg(name="demand", unit="per min or per day", help="Demand in the limit's unit (e.g. CAPACITY_ITPM)")
PROVIDER = Arg(name="provider", unit="name", kind="text", help="Provider in the catalog (e.g. anthropic)")
TIER = Arg(name="tier", unit="name", kind="text", help="Usage tier of the provider (e.g. tier-4)")
MODEL = Arg(name="model", unit="name", kind="text", help="Model the limits apply to (e.g. claude-sonnet-4.5)")
KEYS = Arg(name="keys", unit="count", help="API keys, deployments or account-Region pairs the route is spread over")
SCOPE = Arg(
    name="scope",
    unit="name",
    kind="text",
    help="What the limit is metered per: organization, project (keys share it), key, deployment or account-region "
    "(each carries its own copy)",
)


@sheet_function(
    summary="Utilization of one provider limit (RPM, TPM, ITPM, OTPM, RPD or TPD): demand / LIMIT_CAPACITY(limit, "
    "keys, scope); keys multiply the limit only for scope key, deployment or account-region. 1 is the ceiling.",
    args=(
        DEMAND,
        Arg(name="limit", unit="per min or per day", help="The limit of one key or deployment, same unit as demand"),
        Arg(name="keys", unit="count", help="Keys, deployments or regions sharing the demand evenly", default=1),
        Arg(
            name="scope",
            unit="name",
            kind="text",
            help="What the limit is metered per (organization, project, key, deployment, account-region); blank: key, "
            "i.e. keys multiply it (as before scopes existed)",
            default="key",
        ),
    ),
    returns="fraction",
    category="Limits",
    example='=LIMIT_UTILIZATION(1500, 1000, 2, "organization") -> 1.5',
    formula_ids=("C7",),
)
def LIMIT_UTILIZATION(demand, limit, keys=1, scope="key"):
    return limits.scoped_utilization(demand, limit=limit, keys=keys, scope=scope)


@sheet_function(
    summary="Capacity of one limit over several keys, given what it is metered per: limit x keys for scope key, "
    "deployment or account-region; the limit itself for organization or project (keys share one pool).",
    args=(
        Arg(name="limit", unit="per min or per day", help="The limit of one key, deployment or organization"),
        KEYS,
        SCOPE,
    ),
    returns="the limit's unit",
    category="Limits",
    example='=LIMIT_CAPACITY(2000000, 3, "organization") -> 2000000',
    formula_ids=("C7",),
)
def LIMIT_CAPACITY(limit, keys, scope):
    return limits.effective_limit(limit, keys=keys, scope=scope)


@sheet_function(
    summary="What a limit is metered per and what would raise it, as one line: e.g. 'per organization: keys in one "
    "organization share it, so 3 keys count as 1; raise it with a higher usage tier or ...'.",
    args=(
        SCOPE,
        KEYS,
        Arg(
            name="multiplied_by",
            unit="name",
            kind="text",
            help="What, added, brings another full copy of the limit (region, deployment, account, project, key); "
            "blank if nothing",
            default="",
        ),
        Arg(
            name="raise_by",
            unit="text",
            kind="text",
            help="Other ways to raise it, separated by semicolons (e.g. a higher tier; provisioned throughput)",
            default="",
        ),
    ),
    returns="text",
    returns_kind="text",
    category="Limits",
    example='=LIMIT_SCOPE_TEXT("project", 2, "", "a higher usage tier") -> per project: keys in one project share '
    "it, so 2 keys count as 1; raise it with a higher usage tier",
    formula_ids=("C7",),
)
def LIMIT_SCOPE_TEXT(scope, keys, multiplied_by="", raise_by=""):
    ways = tuple(part.strip() for part in str(raise_by).split(";") if part.strip())
    return limits.limit_scope_text(scope, keys=keys, multiplied_by=multiplied_by or None, raise_by=ways)


@sheet_function(
    summary="The scope of a provider tier's limits from the catalog (organization, project, key, deployment or "
    "account-region), or with keys the one-line text of what they count for and what would raise the limit.",
    args=(
        PROVIDER,
        TIER,
        MODEL,
        Arg(
            name="keys",
            unit="count",
            help="Blank: return the scope name; a count: return the text for that many keys",
            default=None,
        ),
    ),
    returns="text",
    returns_kind="text",
    category="Limits",
    example='=PROVIDER_LIMIT_SCOPE("gemini", "tier-1", "gemini-2.5-flash") -> project',
    formula_ids=("C7",),
)
def PROVIDER_LIMIT_SCOPE(provider, tier, model, keys=None):
    from planner import catalog

    tier_limits = catalog.get_provider_limits(provider, tier, model)
    if keys is None:
        return tier_limits.scope
    return limits.limit_scope_text_for(tier_limits, keys=keys)


@sheet_function(
    summary="The share of a per-minute limit one enforcement window allows: limit x window / 60 (OpenAI may enforce "
    "per second; Anthropic's token bucket; Azure 1 s or 10 s).",
    args=(
        Arg(name="per_min_limit", unit="per min", help="The per-minute limit (RPM, TPM, ITPM or OTPM)"),
        Arg(name="window_s", unit="s", help="Enforcement window in seconds (1 to 60; the catalog's window_s)"),
    ),
    returns="per window",
    category="Limits",
    example="=WINDOW_LIMIT(60000, 1) -> 1000",
    formula_ids=("D1",),
)
def WINDOW_LIMIT(per_min_limit, window_s):
    return limits.window_limit(per_min_limit, window_s=window_s)


@sheet_function(
    summary="Utilization of the busiest enforcement window: per-minute demand x burst factor against the window's "
    "share of the per-minute limit (keys multiplied only where the scope allows). 1 is the ceiling.",
    args=(
        Arg(name="per_min_demand", unit="per min", help="Demand in the limit's unit at the planned (peak) rate"),
        Arg(name="per_min_limit", unit="per min", help="The per-minute limit of one key, deployment or organization"),
        Arg(name="window_s", unit="s", help="Enforcement window in seconds (the catalog's window_s: 1 or 60)"),
        Arg(
            name="burst_factor",
            unit="ratio",
            help="Busiest window's demand over the average window's (1 = smooth; POISSON_BURST_FACTOR for random "
            "arrivals)",
        ),
        KEYS,
        SCOPE,
    ),
    returns="fraction",
    category="Limits",
    example='=BURST_UTILIZATION(600, 1000, 1, 2, 1, "organization") -> 1.2',
    formula_ids=("D1", "C7"),
)
def BURST_UTILIZATION(per_min_demand, per_min_limit, window_s, burst_factor, keys, scope):
    return limits.burst_utilization(
        per_min_demand, per_min_limit=per_min_limit, window_s=window_s, burst_factor=burst_factor, keys=keys,
        scope=scope,
    )


@sheet_function(
    summary="Burst factor of random (Poisson) arrivals: the quantile of requests in one window over the mean per "
    "window. A floor for real traffic; counts of requests only.",
    args=(
        Arg(name="per_min_rate", unit="req/min", help="Average requests per minute"),
        Arg(name="window_s", unit="s", help="Enforcement window in seconds (1 to 60)"),
        Arg(name="quantile", unit="fraction", help="Quantile of the busiest window to plan for", default=0.99),
    ),
    returns="ratio",
    category="Limits",
    example="=POISSON_BURST_FACTOR(60, 1) -> 4",
    formula_ids=("D1",),
)
def POISSON_BURST_FACTOR(per_min_rate, window_s, quantile=0.99):
    return limits.poisson_burst_factor(per_min_rate, window_s=window_s, quantile=quantile)


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
    return limits.keys_needed(demand, limit_per_key=limit_per_key, target_utilization=target_utilization)


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
    return demand.azure_rpm_limit(tpm_limit, rpm_per_1000_tpm=rpm_per_1000_tpm)


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

    return limits.limit_value(catalog.get_provider_limits(provider, tier, model), limit_name=limit_name)
