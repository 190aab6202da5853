"""A provisioned-throughput quote on Providers (template 2.7.0, issue 14 item 3).

Amazon Bedrock publishes neither the price nor the throughput of a model unit (prov-throughput.html: ask the account
manager), so tblProvisioned sizes and prices a backend from the quote a planner types on Providers. Expected values
are worked by hand from the scenario's own numbers (peak QPS x tokens x 60, the quote's figures, 730.5 hours a
month), never read from the evaluator.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from planner import template as ts
from planner.forecast.commitments import units_for_split_throughput
from planner.scenario import parse_scenario, tomllib
from planner.template.inputs import catalog_inputs, scenario_inputs
from planner.whatif.source import load_inputs

ROOT = Path(__file__).resolve().parents[1]
HOURS = 730.5

# the seed, with the agent route served by Bedrock (Anthropic as its failover) and a quote typed for Bedrock
QUOTE = {"pt_usd_per_unit_hour": 40.0, "pt_input_tpm_per_unit": 50_000.0, "pt_output_tpm_per_unit": 2_000.0}


def _seed(bedrock_quote: dict[str, float], gemini_quote: dict[str, float] | None = None) -> str:
    text = (ROOT / "samples" / "seed.toml").read_text(encoding="utf-8")
    text = text.replace('backend = "anthropic-sonnet"\nfailover = "bedrock-sonnet"',
                        'backend = "bedrock-sonnet"\nfailover = "anthropic-sonnet"')
    lines = "".join(f"{k} = {v}\n" for k, v in bedrock_quote.items())
    text = text.replace('name = "bedrock-sonnet"\nprovider = "bedrock"\ntier = "default-cross-region"\n'
                        'model = "claude-sonnet-4.6"\nkeys = 6\n',
                        'name = "bedrock-sonnet"\nprovider = "bedrock"\ntier = "default-cross-region"\n'
                        f'model = "claude-sonnet-4.6"\nkeys = 6\n{lines}')
    if gemini_quote:
        lines = "".join(f"{k} = {v}\n" for k, v in gemini_quote.items())
        text = text.replace('model = "gemini-2.5-flash"\nkeys = 6\n', f'model = "gemini-2.5-flash"\nkeys = 6\n{lines}')
    return text


def _provisioned(text: str) -> dict[str, dict[str, object]]:
    scenario = parse_scenario(tomllib.loads(text), path="quote.toml")
    values = ts.evaluate_plan({**catalog_inputs(), **scenario_inputs(scenario)})
    t = ts.PROVISIONED
    rows = {}
    for i in range(t.rows):
        row = {c.key: values.get((t.sheet, t.cell(c.key, i))) for c in t.columns}
        if row["backend"]:
            rows[str(row["backend"])] = row
    return rows


def _agent() -> dict[str, float]:
    route = next(r for r in tomllib.loads(_seed(QUOTE))["routes"] if r["name"] == "agent")
    return {k: float(route[k]) for k in ("peak_qps", "avg_input_tokens", "avg_output_tokens", "cache_hit_rate",
                                         "cache_write_tokens")}


def test_split_throughput_units_cover_both_demands_and_one_fewer_does_not() -> None:
    for i, o, iu, ou in ((300_000, 25_000, 50_000, 2_000), (3.2e6, 1e4, 5e4, 2e3), (0, 0, 10, 10),
                         (100_000, 100_000, 100_000, 100_000)):
        n = units_for_split_throughput(i, output_tokens_per_min=o, input_tokens_per_min_per_unit=iu,
                                       output_tokens_per_min_per_unit=ou)
        assert n >= 1 and n * iu >= i and n * ou >= o
        if n > 1:
            assert (n - 1) * iu < i or (n - 1) * ou < o


def test_bedrock_is_sized_and_priced_from_the_quote() -> None:
    a = _agent()
    # OTPM at the peak: 60 x 6 req/s x 1,200 output tokens = 432,000 a minute, 216 units at 2,000 a unit; the input
    # Bedrock counts (cache reads excluded) is far below 216 x 50,000
    otpm = 60 * a["peak_qps"] * a["avg_output_tokens"]
    assert otpm == 432_000
    units = math.ceil(otpm / QUOTE["pt_output_tpm_per_unit"])
    counted_input = a["avg_input_tokens"] * (1 - a["cache_hit_rate"]) + a["cache_write_tokens"]  # 12,000 a request
    assert 60 * a["peak_qps"] * counted_input < units * QUOTE["pt_input_tpm_per_unit"]
    row = _provisioned(_seed(QUOTE))["bedrock-sonnet"]
    assert row["basis"] == "your quote"
    assert row["units"] == units == 216
    assert row["provisioned_monthly_usd"] == pytest.approx(216 * 40 * HOURS, rel=1e-12)  # $6,311,520
    payg = row["payg_monthly_usd"]
    assert isinstance(payg, float) and payg > 0
    assert row["break_even_multiple"] == pytest.approx(216 * 40 * HOURS / payg, rel=1e-12)


def test_without_a_quote_bedrock_says_so() -> None:
    row = _provisioned(_seed({}))["bedrock-sonnet"]
    assert row["basis"] == "bundled offer"
    assert "Bedrock" in str(row["units"]) or "bedrock" in str(row["units"])  # the refusal names why
    assert row["provisioned_monthly_usd"] == "no price: quote on Providers"


def test_throughput_without_a_price_is_refused_for_bedrock() -> None:
    row = _provisioned(_seed({k: v for k, v in QUOTE.items() if k != "pt_usd_per_unit_hour"}))["bedrock-sonnet"]
    assert row["basis"] == "your throughput, bundled price"
    assert row["units"] == 216
    assert "bedrock" in str(row["provisioned_monthly_usd"]).lower()  # no public price for a model unit


def test_a_price_alone_prices_the_bundled_units() -> None:
    """Gemini keeps its bundled Vertex AI GSU sizing; a negotiated price per GSU-hour replaces the list price."""
    base = _provisioned(_seed(QUOTE))["gemini-flash"]
    quoted = _provisioned(_seed(QUOTE, {"pt_usd_per_unit_hour": 3.5}))["gemini-flash"]
    assert base["basis"] == "bundled offer" and quoted["basis"] == "bundled throughput, your price"
    assert isinstance(base["units"], float) and quoted["units"] == base["units"]
    assert quoted["provisioned_monthly_usd"] == pytest.approx(base["units"] * 3.5 * HOURS, rel=1e-12)


def test_plan_file_and_scenario_carry_the_same_quote(tmp_path: Path) -> None:
    scenario = tmp_path / "quote.toml"
    scenario.write_text(_seed(QUOTE), encoding="utf-8")
    book = tmp_path / "quote.xlsm"
    subprocess.run([sys.executable, "-m", "planner.cli", "template", "sample", str(scenario), "-o", str(book)],
                   check=True, capture_output=True, cwd=ROOT)
    from_file, from_scenario = load_inputs(book), load_inputs(scenario)
    row = next(i for i in range(ts.PROVIDERS.rows)
               if from_scenario.get(("Providers", ts.PROVIDERS.cell("name", i))) == "bedrock-sonnet")
    for key, value in QUOTE.items():
        cell = ("Providers", ts.PROVIDERS.cell(key, row))
        assert from_file[cell] == from_scenario[cell] == value
    # planner size reports the quote's units and price (the real CLI, JSON)
    out = subprocess.run([sys.executable, "-m", "planner.cli", "size", str(scenario), "--months", "12", "--format",
                          "json"], check=True, capture_output=True, text=True, cwd=ROOT).stdout
    rows = {r["backend"]: r for r in json.loads(out)["commitments"]["provisioned_throughput"]}
    assert rows["bedrock-sonnet"]["units"] == 216
    assert rows["bedrock-sonnet"]["provisioned_monthly_usd"] == pytest.approx(216 * 40 * HOURS)


def test_validator_refuses_a_negative_quote(tmp_path: Path) -> None:
    scenario = tmp_path / "quote.toml"
    scenario.write_text(_seed({**QUOTE, "pt_usd_per_unit_hour": -1}), encoding="utf-8")
    book = tmp_path / "quote.xlsm"
    subprocess.run([sys.executable, "-m", "planner.cli", "template", "sample", str(scenario), "-o", str(book)],
                   check=True, capture_output=True, cwd=ROOT)
    res = subprocess.run([sys.executable, "-m", "planner.cli", "validate", str(book), "--format", "json"],
                         capture_output=True, text=True, cwd=ROOT)
    report = json.loads(res.stdout)
    findings = [f for file in report["reports"] for f in file["findings"]]
    col = ts.PROVIDERS.cell("pt_usd_per_unit_hour", 1).rstrip("0123456789")
    assert any(f["code"] == "input-out-of-range" and f"Providers!{col}" in f["location"] for f in findings), findings
