"""The serving model: engine step time (:mod:`.step`), continuous batching under load (:mod:`.schedule`), its
constants (:mod:`.calibration`), benchmark results and fits (:mod:`.bench`) and the library API (:mod:`.api`).

See ``docs/serving.md`` for the formulas, references and which constants are fitted.
"""

from planner.serving.api import (
    ServingResult,
    cheapest_fleets,
    disaggregated_pools,
    max_rate_at_slo,
    replicas_at_slo,
    serving_performance,
)
from planner.serving.calibration import Calibration

__all__ = ["Calibration", "ServingResult", "cheapest_fleets", "disaggregated_pools", "max_rate_at_slo",
           "replicas_at_slo", "serving_performance"]
