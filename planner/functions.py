"""The Python face of the spreadsheet functions: ``planner.functions.NAME(...)`` takes exactly Excel's arguments.

The declarations live in the modules of :mod:`planner.sheet` (one ``@sheet_function`` each, the only place a
spreadsheet function is declared); importing this module imports them all and re-exports every registered function
under its spreadsheet name.
"""

from __future__ import annotations

import importlib
import pkgutil

import planner.sheet
from planner.registry import REGISTRY

for _info in sorted(pkgutil.iter_modules(planner.sheet.__path__), key=lambda m: m.name):
    importlib.import_module(f"planner.sheet.{_info.name}")

globals().update({_name: _spec.impl for _name, _spec in REGISTRY.items()})

__all__ = sorted(REGISTRY)  # noqa: PLE0605  (built from the registry at import time)
