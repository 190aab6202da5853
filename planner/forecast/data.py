"""The bundled demand profiles and commitment prices (package data ``planner/data/*.json``): the only I/O here."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any


@cache
def _load(filename: str) -> dict[str, Any]:
    with resources.files("planner").joinpath("data").joinpath(filename).open("r", encoding="utf-8") as handle:
        return json.load(handle)


def profiles() -> tuple[dict[str, Any], ...]:
    """The bundled hour-of-day profiles: ``name``, ``weekday`` (24), ``weekend`` (24 or None), ``source``, ``as_of``."""
    return tuple(_load("demand_profiles.json")["profiles"])


def profile(name: str) -> dict[str, Any] | None:
    """A bundled profile by name (case-insensitive), or None."""
    return next((p for p in profiles() if p["name"].lower() == str(name).strip().lower()), None)


def commitments() -> dict[str, Any]:
    """The commitment catalog: ``gpu_reserved``, ``provisioned_throughput`` and ``meta.not_found``."""
    return _load("commitments.json")


def reserved_ratio(gpu: str, *, term_months: int = 12) -> tuple[float, str] | None:
    """Reserved / on-demand price of ``gpu`` for a term (the first bundled source, like for like), with its source.

    Quotes whose term is not stated (``term_months`` null) never answer a 1- or 3-year question."""
    for row in commitments()["gpu_reserved"]:
        if row["gpu"] == str(gpu).strip().lower() and row["term_months"] == term_months:
            return row["reserved_usd_per_gpu_hour"] / row["on_demand_usd_per_gpu_hour"], row["source"]
    return None


def reserved_quotes() -> tuple[dict[str, Any], ...]:
    """Every bundled reserved GPU quote (per-GPU prices as published): ``gpu``, ``vendor``, ``term_months`` (None:
    not stated), ``on_demand_usd_per_gpu_hour``, ``reserved_usd_per_gpu_hour``, ``source``, ``as_of``."""
    return tuple(commitments()["gpu_reserved"])


def provisioned_offer(provider: str) -> dict[str, Any] | None:
    """The bundled provisioned-throughput offer a provider name maps to (``azure-openai`` -> Azure PTU, ``gemini`` and
    ``vertex`` -> Vertex AI GSU), or None."""
    name = str(provider).strip().lower()
    return next((o for o in commitments()["provisioned_throughput"] if name in o["aliases"]), None)
