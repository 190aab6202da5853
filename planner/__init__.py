"""llm-capacity-planner: size LLM inference against provider rate limits and GPU KV memory.

The sizing core (pure functions, no I/O) lives in :mod:`planner.demand`, :mod:`planner.limits`,
:mod:`planner.memory`, :mod:`planner.latency`, :mod:`planner.serving`, :mod:`planner.cost` and
:mod:`planner.decision`; the spreadsheet functions are declared once in :mod:`planner.sheet` and exposed as
:mod:`planner.functions`.
"""

__version__ = "0.1.0"

from planner.engines import kv_capacity  # noqa: E402
from planner.serving.api import serving_performance  # noqa: E402

__all__ = ["kv_capacity", "serving_performance"]
