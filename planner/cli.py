"""The ``planner`` command line: a thin click layer. Each command opens its input, makes one library call and
translates planner errors into a one-line message and an exit code (0 ok, 1 findings, 2 could not run).

Every command's help ends with an example; ``tests/test_cli_help.py`` checks that.
"""

from __future__ import annotations

import sys

import click

from planner.errors import PlannerError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="llm-capacity-planner")
def cli() -> None:
    """Size LLM inference: demand, provider limits, GPU KV memory and the binding constraint.

    Example: planner functions
    """


def fail(message: str, code: int = 2) -> None:
    """Print a one-line error and exit (2: the tool could not run)."""
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


@cli.command("functions")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown"]), default="text", show_default=True)
def functions_cmd(fmt: str) -> None:
    """List every spreadsheet function with its signature, return unit and help.

    Example: planner functions --format markdown > docs/functions.md
    """
    from planner.docs import functions_markdown, functions_text

    click.echo(functions_markdown() if fmt == "markdown" else functions_text(), nl=False)


def main() -> None:
    """Console-script entry point."""
    try:
        cli(standalone_mode=True)
    except PlannerError as exc:  # a planner error that escaped a command: one line, never a traceback
        fail(str(exc))


if __name__ == "__main__":
    main()
