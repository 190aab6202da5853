"""Scenario loading: field-level errors naming the file and field; sizing of provider-backed routes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from planner import catalog
from planner.errors import ArgumentError
from planner.scenario import load_scenario, parse_scenario
from planner.sizing import size_scenario

PROVIDERS_ONLY = """
[plan]
name = "prov"
monthly_growth = 0.05
[[providers]]
name = "a"
provider = "anthropic"
tier = "tier-4"
model = "claude-sonnet-4.5"
keys = 2
[[providers]]
name = "o"
provider = "openai"
tier = "tier-5"
model = "gpt-4.1"
[[routes]]
name = "agent"
peak_qps = 6
avg_input_tokens = 60000
avg_output_tokens = 1200
cache_hit_rate = 0.85
max_tokens = 4096
backend = "a"
failover = "o"
[[routes]]
name = "chat"
peak_qps = 40
avg_input_tokens = 2500
avg_output_tokens = 400
max_tokens = 1024
backend = "o"
failover = "a"
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "plan.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_provider_routes_use_the_catalog_limits_and_counting_rules(tmp_path: Path) -> None:
    report = size_scenario(load_scenario(_write(tmp_path, PROVIDERS_ONLY)))
    agent, chat = report.routes
    tier = catalog.get_provider_limits("anthropic", "tier-4", "claude-sonnet-4.5")
    # Anthropic excludes cache reads from ITPM: 6 req/s x 60,000 x (1 - 0.85) per minute, over two keys.
    assert agent.results["itpm_demand"] == pytest.approx(60 * 6 * 60000 * (1 - 0.85))
    itpm = next(c for c in agent.constraints if c.label == "a ITPM")
    # Anthropic's limits are per organization: its two keys share one limit (scope), so they do not multiply it.
    assert tier.scope == "organization"
    assert itpm.utilization == pytest.approx(60 * 6 * 60000 * 0.15 / tier.itpm)
    assert agent.binding == max(agent.constraints, key=lambda c: c.utilization).label.split()[-1]
    assert agent.headroom_multiple == pytest.approx(1 / agent.max_utilization)
    # OpenAI reserves max_tokens at admission: TPM counts input + max_tokens.
    assert chat.results["tpm_demand"] == pytest.approx(60 * 40 * (2500 + 1024))


def test_failover_adds_the_route_to_the_failover_backends_own_load(tmp_path: Path) -> None:
    report = size_scenario(load_scenario(_write(tmp_path, PROVIDERS_ONLY)))
    agent, chat = report.routes
    # With "a" down, "o" carries chat (its own) plus agent: its TPM utilization must exceed chat's alone.
    chat_tpm = next(c for c in chat.constraints if c.label == "o TPM").utilization
    assert agent.failover_backend == "o"
    assert agent.failover_utilization > chat_tpm


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (('peak_qps = 6', 'peak_qps = "six"'), "routes[0].peak_qps"),
        (('backend = "a"', 'backend = "nowhere"'), "routes[0].backend"),
        (('keys = 2', 'keys = 2.5'), "providers[0].keys"),
        (('name = "agent"', 'name = "agent"\nkind = "sometimes"'), "routes[0].kind"),
        (('avg_output_tokens = 1200\n', 'avg_output_tokens = 1200\ncolour = "red"\n'), "routes[0].colour"),
    ],
)
def test_bad_fields_name_the_file_and_field(tmp_path: Path, edit: tuple[str, str], field: str) -> None:
    path = _write(tmp_path, PROVIDERS_ONLY.replace(*edit, 1))
    with pytest.raises(ArgumentError) as info:
        load_scenario(path)
    assert info.value.argument == f"{path}: {field}"
    assert "\n" not in str(info.value)


def test_missing_required_field() -> None:
    with pytest.raises(ArgumentError) as info:
        parse_scenario({"providers": [], "routes": [{"name": "x", "backend": "a"}]}, path="p.toml")
    assert info.value.argument.startswith("p.toml: routes[0].")


def test_size_cli_json_matches_the_library(tmp_path: Path) -> None:
    path = _write(tmp_path, PROVIDERS_ONLY)
    result = subprocess.run(
        [sys.executable, "-m", "planner.cli", "size", str(path), "--format", "json"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == json.loads(size_scenario(load_scenario(path)).to_json())


def test_size_cli_bad_file_is_one_line_exit_2(tmp_path: Path) -> None:
    path = _write(tmp_path, "this is = = not toml")
    result = subprocess.run([sys.executable, "-m", "planner.cli", "size", str(path)], capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr
    assert str(path) in result.stderr


def test_two_routes_losing_one_primary_add_up_on_the_backup(tmp_path: Path) -> None:
    """Issue #10: each route alone fills 60% of the backup's RPM; the outage moves both at once (120%), and
    ``planner size --format json`` lists it under ``outages``."""
    text = """
[plan]
name = "outage"
[[providers]]
name = "primary"
provider = "openai"
tier = "tier-5"
model = "gpt-4.1"
[[providers]]
name = "backup"
provider = "anthropic"
tier = "scale"
model = "claude-sonnet-4.5"
""" + "".join(f"""
[[routes]]
name = "r{i}"
peak_qps = 100
avg_input_tokens = 100
avg_output_tokens = 10
backend = "primary"
failover = "backup"
""" for i in (1, 2))
    path = _write(tmp_path, text)
    backup_rpm = catalog.get_provider_limits("anthropic", "scale", "claude-sonnet-4.5").rpm
    one_route = 100 * 60 / backup_rpm  # 6,000 RPM of 10,000
    result = subprocess.run([sys.executable, "-m", "planner.cli", "size", str(path), "--format", "json"],
                            capture_output=True, text=True)
    report = json.loads(result.stdout)
    assert all(r["failover_utilization"] == pytest.approx(2 * one_route) for r in report["routes"])
    (outage,) = [o for o in report["outages"] if o["backend"] == "primary"]
    assert outage["receiver"] == "backup" and outage["constraint"] == "RPM"
    assert outage["utilization"] == pytest.approx(2 * one_route)
    assert outage["status"] == "BREACH"
