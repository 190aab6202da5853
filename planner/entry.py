"""The ``planner`` console script: a guard in front of :mod:`planner.cli`.

The base install is the function layer only (no outside library, which is what xlwings Lite installs); the command
line and the workbook/recompute stack come with the ``cli`` extra. Without it, the command says which install gives
it instead of showing a traceback.
"""

from __future__ import annotations

import importlib.util
import sys

CLI_EXTRA_MODULES = ("click", "openpyxl", "formulas", "schedula", "defusedxml", "numpy")
"""Top-level modules that come with ``pip install 'llm-capacity-planner[cli]'``."""

INSTALL_HINT = "pip install 'llm-capacity-planner[all]'  (or, from a checkout: pip install -e '.[all]')"


def missing_message(module: str) -> str:
    """The one line shown when a module of the ``cli`` extra is not installed.

    >>> missing_message("click").startswith("error: the planner command needs 'click', which comes with the cli")
    True
    """
    return f"error: the planner command needs {module!r}, which comes with the cli extra: {INSTALL_HINT}"


def main() -> None:
    """Run :func:`planner.cli.main`, or exit 2 with :func:`missing_message` when the ``cli`` extra is missing."""
    if importlib.util.find_spec("click") is None:
        print(missing_message("click"), file=sys.stderr)
        sys.exit(2)
    from planner.cli import main as cli_main

    try:
        cli_main()
    except ModuleNotFoundError as exc:
        top = (exc.name or "").split(".")[0]
        if top not in CLI_EXTRA_MODULES:
            raise
        print(missing_message(top), file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
