"""Every CLI command has help, and that help ends with an example (sqlite-utils style)."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest

from planner.cli import cli


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    found = []
    for name, command in sorted(group.commands.items()):
        found.append(((*prefix, name), command))
        if isinstance(command, click.Group):
            found.extend(_commands(command, (*prefix, name)))
    return found


COMMANDS = _commands(cli)


def test_there_are_commands() -> None:
    names = {" ".join(path) for path, _ in COMMANDS}
    assert "functions" in names


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=[" ".join(p) for p, _ in COMMANDS])
def test_command_help_ends_with_an_example(path: tuple[str, ...]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "planner.cli", *path, "--help"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    lines = [line.strip() for line in result.stdout.splitlines() if line.strip()]
    examples = [line for line in lines if line.startswith("Example:")]
    assert examples, f"planner {' '.join(path)} --help has no 'Example:' line"
    assert examples[-1].startswith("Example: planner ")


def test_top_level_help_lists_every_command() -> None:
    result = subprocess.run([sys.executable, "-m", "planner.cli", "--help"], capture_output=True, text=True)
    assert result.returncode == 0
    for name in cli.commands:
        assert name in result.stdout
