"""``planner validate``: check submitted plan workbooks against the template, recompute them, apply the policy.

- :mod:`planner.validate.findings`: the closed catalogue of finding codes (``docs/findings.md``);
- :mod:`planner.validate.report`: :class:`Finding`, :class:`Report`, :class:`BatchResult` and the renderers;
- :mod:`planner.validate.checks`: the checks, on a plan read by :func:`planner.ooxml.read_workbook`;
- :mod:`planner.validate.fastpath`: the template's compiled evaluation; :mod:`planner.validate.batch`: batches.
"""

from planner.validate.batch import Limits, expand_paths, validate_paths
from planner.validate.checks import validate_file
from planner.validate.report import BatchResult, Finding, Report

__all__ = ["BatchResult", "Finding", "Limits", "Report", "expand_paths", "validate_file", "validate_paths"]
