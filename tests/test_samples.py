"""Sample plans: generated from their scenario files, current, and binding where their notes say."""

from __future__ import annotations

import shutil
from pathlib import Path

import openpyxl
import pytest

from planner import template as ts
from planner.template.build import build_sample

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
SCENARIOS = sorted(SAMPLES.glob("*.toml"))

# What each sample is built to show: route -> binding constraint (see samples/README.md).
BINDS = {
    "bulk-tpm": {"summarize": "TPM", "extract": "TPM"},
    "classifier-rpm": {"moderation": "BURST", "intent": "RPM"},
    "selfhost-kv": {"assistant": "LOAD"},  # TPOT until the session-9 serving refit (samples/README.md)
    "seed": {"completion": "TPOT", "agent": "ITPM", "chat": "ITPM"},
}


def _results(path: Path) -> dict[str, dict[str, object]]:
    ws = openpyxl.load_workbook(path, data_only=True)["Results"]
    out = {}
    for i in range(ts.RESULTS.rows):
        row = {c.key: ws[ts.RESULTS.cell(c.key, i)].value for c in ts.RESULTS.columns}
        if row["route"]:
            out[str(row["route"])] = row
    return out


def test_at_least_three_samples_and_each_is_documented() -> None:
    assert len(SCENARIOS) >= 3
    readme = (SAMPLES / "README.md").read_text(encoding="utf-8")
    for s in SCENARIOS:
        assert (SAMPLES / f"{s.stem}.xlsm").exists(), s.stem
        assert f"`{s.stem}" in readme, f"samples/README.md does not describe {s.stem}"


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: p.stem)
def test_sample_is_current(scenario: Path, tmp_path: Path) -> None:
    fresh = build_sample(scenario, tmp_path / f"{scenario.stem}.xlsm")
    assert fresh.read_bytes() == (SAMPLES / f"{scenario.stem}.xlsm").read_bytes(), (
        f"samples/{scenario.stem}.xlsm is stale: planner template sample {scenario} -o samples/{scenario.stem}.xlsm"
    )


@pytest.mark.parametrize("name", sorted(BINDS))
def test_sample_binds_where_its_note_says(name: str) -> None:
    results = _results(SAMPLES / f"{name}.xlsm")
    for route, constraint in BINDS[name].items():
        assert results[route]["binding_constraint"] == constraint, (route, results[route])


@pytest.mark.parametrize("name", sorted(BINDS))
def test_valid_samples_stay_within_limits_and_survive_failover(name: str) -> None:
    for route, row in _results(SAMPLES / f"{name}.xlsm").items():
        assert isinstance(row["max_util"], (int, float)) and 0 < row["max_util"] <= 1, (route, row["max_util"])
        assert row["status"] in ("OK", "WARN"), (route, row["status"])
        assert row["failover_ok"] in ("OK", "none"), (route, row["failover_util"])
        for k in ts.UTILIZATION_KEYS:
            assert isinstance(row[k], (int, float)) and not isinstance(row[k], bool), (route, k, row[k])


def test_seed_has_the_seed_shape() -> None:
    """A very high-volume latency-critical route on the fleet, a token-heavy agent route, a chat route."""
    results = _results(SAMPLES / "seed.xlsm")
    assert results["completion"]["backend_type"] == "fleet"
    assert results["completion"]["rpm_demand"] >= 10 * results["chat"]["rpm_demand"]
    routes = openpyxl.load_workbook(SAMPLES / "seed.xlsm", data_only=True)["Routes"]
    tokens = {}
    for i in range(ts.ROUTES.rows):
        name = routes[ts.ROUTES.cell("name", i)].value
        if name:
            tokens[name] = (routes[ts.ROUTES.cell("avg_input_tokens", i)].value
                            + routes[ts.ROUTES.cell("avg_output_tokens", i)].value)
    assert tokens["agent"] > 20 * tokens["chat"]  # tokens per request, before any provider's counting rule
    # prefix caching lowers the agent's monthly cost
    assert results["agent"]["cost_monthly_usd"] < results["agent"]["cost_monthly_no_cache_usd"]


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice (soffice) is not installed")
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: p.stem)
def test_sample_opens_in_libreoffice_and_shows_cached_values(scenario: Path, tmp_path: Path) -> None:
    from test_template import libreoffice_text

    text = libreoffice_text(SAMPLES / f"{scenario.stem}.xlsm", tmp_path)
    results = _results(SAMPLES / f"{scenario.stem}.xlsm")
    for route, row in results.items():
        assert route in text
        assert str(row["binding_constraint"]) in text
    readme, _, sheets = text.partition("\x0c")  # page 1 is the ReadMe sheet, whose text names #NAME? on purpose
    assert readme.lstrip().startswith("LLM inference capacity plan")
    for bad in ("Err:", "#NAME?", "#VALUE!", "#DIV/0!"):
        assert bad not in sheets, bad


