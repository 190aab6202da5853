"""What-if (issue #14 items 4-6): the cache-hit lever, self-host vs API, sensitivity, sweep and diff.

Expected values are computed by hand here from the stated inputs (the seed scenario's routes and the catalog's
prices), never read from the code under test; the What-if sheet's cells are checked against the plan re-evaluated
with the Routes cell edited.
"""

from __future__ import annotations

import csv
import doctest
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner import template as ts
from planner.cli import cli
from planner.errors import ArgumentError
from planner.template.sensitivity import GROUPS
from planner.whatif import levers, rules
from planner.whatif.source import load_inputs

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "samples" / "seed.toml"
SECONDS_PER_MONTH = 86_400 * 365.25 / 12


@pytest.fixture(scope="module")
def seed() -> dict:
    return load_inputs(SEED)


@pytest.fixture(scope="module")
def base(seed) -> dict:
    return ts.evaluate_plan(seed)


def _w(values, key, i):
    return values[(ts.WHATIF.sheet, ts.WHATIF.cell(key, i))]


def _res(values, key, i):
    return values[(ts.RESULTS.sheet, ts.RESULTS.cell(key, i))]


class TestRules:
    """W1-W4 against hand arithmetic."""

    def test_worked_examples_hold(self):
        for module in (rules, levers):
            result = doctest.testmod(module)
            assert result.attempted > 0 and result.failed == 0, module.__name__

    def test_selfhost_per_mtok_and_breakeven_rate(self):
        # 10,000 USD/month over 2e10 tokens: 0.5 USD/Mtok; 0.01 USD/request: 10,000 / (0.01 x 2,629,800 s) req/s
        assert 0.5 == pytest.approx(rules.selfhost_usd_per_mtok_at_load(10_000, tokens_per_month=2e10))
        assert 10_000 / (0.01 * SECONDS_PER_MONTH) == pytest.approx(
            rules.breakeven_qps(10_000, api_cost_per_request_usd=0.01))

    def test_breakeven_hit_rate_is_where_the_api_costs_what_self_hosting_does(self):
        # 1,000 in, 0 out, input 2, cached 0.2: cost(h) = (2,000 - 1,800 h) / 1e6; self-host 1.1 USD/Mtok = 1,100e-6
        h = rules.breakeven_hit_rate(1.1, avg_input_tokens=1000, avg_output_tokens=0, cache_write_tokens=0,
                                     usd_per_mtok_input=2, usd_per_mtok_cached_input=0.2,
                                     usd_per_mtok_cache_write=None, usd_per_mtok_output=8)

        assert 0.5 == pytest.approx(h)

    def test_no_cache_discount_is_refused(self):
        with pytest.raises(ArgumentError, match="usd_per_mtok_cached_input"):
            rules.breakeven_hit_rate(1.0, avg_input_tokens=1000, avg_output_tokens=10, cache_write_tokens=0,
                                     usd_per_mtok_input=2, usd_per_mtok_cached_input=2,
                                     usd_per_mtok_cache_write=None, usd_per_mtok_output=8)

    @pytest.mark.parametrize(("kwargs", "choice", "first"), [
        ({}, "self-host", "high volume"),
        ({"new_route": True}, "API", "new"),
        ({"peak_to_average": 4.0}, "API", "spiky: peak/avg 4 > 3"),
        ({"burst_factor": 3.5}, "API", "spiky: burst 3.5 > 3"),
        ({"avg_qps": 5.0}, "API", "low volume"),
        ({"api_usd_per_mtok": 0.1}, "API", "self-host 0.25 >= API 0.1"),
    ])
    def test_the_seeds_rule(self, kwargs, choice, first):
        """Steady high volume self-hosted; spiky, new, low volume or dearer per token on the API."""
        args = {"avg_qps": 100.0, "breakeven_qps_": 30.0, "selfhost_usd_per_mtok": 0.25, "api_usd_per_mtok": 1.5,
                "peak_to_average": 2.0, "api_backend": "api", "fleet_backend": "fleet", "route_failover": "api"}
        args.update(kwargs)
        r = rules.recommend(args.pop("avg_qps"), **args)

        assert (choice, True) == (r.choice, r.reasons.startswith(first))
        assert r.failover == ("fail over to api" if choice == "self-host" else
                              "fail over to fleet (add it as the failover; now api)")

    def test_one_side_only(self):
        r = rules.recommend(10, breakeven_qps_=None, selfhost_usd_per_mtok=None, api_usd_per_mtok=1.0,
                            peak_to_average=2, api_backend="api")
        assert ("API", "no self-hosted fleet in the plan") == (r.choice, r.reasons)


class TestCacheHitLever:
    """W5 on the seed: the What-if sheet against the plan re-evaluated, and both against hand arithmetic."""

    def test_agent_point_is_worth_the_read_discount_on_one_percent_of_its_input(self, seed, base):
        # agent: 6 req/s peak x 0.5 avg/peak, 60,000 input tokens; Anthropic Sonnet input 3, cache read 0.30 USD/Mtok
        prow = int(_res(base, "provider_row", 1)) - 1
        assert (3.0, 0.3) == (seed[("Providers", ts.PROVIDERS.cell("usd_per_mtok_input", prow))],
                              seed[("Providers", ts.PROVIDERS.cell("usd_per_mtok_cached_input", prow))])
        expected = 3 * SECONDS_PER_MONTH * 60_000 * 0.01 * (3.0 - 0.3) / 1e6  # 12,780.83 USD/month
        lever = levers.cache_hit_lever(seed)
        agent = lever.routes[1]

        assert "agent" == agent.route
        assert expected == pytest.approx(agent.saving_usd_per_month, rel=1e-9)
        assert expected == pytest.approx(_w(base, "saving_per_point_usd", 1), rel=1e-9)
        # Anthropic does not count cache reads toward ITPM: the uncached share falls from 15 % to 14 %
        before, after = agent.itpm_util
        assert before * 0.14 / 0.15 == pytest.approx(after, rel=1e-9)
        assert after == pytest.approx(_w(base, "itpm_util_after", 1), rel=1e-9)

    def test_every_route_and_the_total(self, seed, base):
        """The sheet's lever cells equal the plan re-evaluated with each Routes hit-rate cell one point higher."""
        lever = levers.cache_hit_lever(seed)
        for i, r in enumerate(lever.routes):
            edited = dict(seed)
            edited[("Routes", ts.ROUTES.cell("cache_hit_rate", i))] = r.hit_after
            again = ts.evaluate_plan(edited)
            assert r.hit_rate + 0.01 == pytest.approx(_w(base, "hit_after", i))
            assert _w(base, "saving_per_point_usd", i) == pytest.approx(r.saving_usd_per_month, abs=1e-6)
            if _res(base, "backend_type", i) == "fleet":
                assert _res(again, "ttft_at_load_s", i) == pytest.approx(_w(base, "ttft_after_s", i), rel=1e-6)
                assert r.ttft_s[1] < r.ttft_s[0]  # less prefill per request
            else:
                assert _res(again, "itpm_util", i) == pytest.approx(_w(base, "itpm_util_after", i), rel=1e-9)
        # the completion route is self-hosted: its GPU-hours do not move; chat's Gemini counts cache reads in ITPM
        assert 0.0 == lever.routes[0].saving_usd_per_month
        assert lever.routes[2].itpm_util[0] == lever.routes[2].itpm_util[1]
        assert sum(r.saving_usd_per_month for r in lever.routes) == pytest.approx(lever.total_saving_usd_per_month)


    def test_no_room_left_by_the_cache_writes(self, tmp_path):
        """agent at 95 % with 3,000 of 60,000 tokens written: the writes fill the other 5 %, so the point is not there
        (the sheet and the lever both stop at 1 - 3,000 / 60,000 and save nothing, never a refusal)."""
        path = tmp_path / "hit95.toml"
        path.write_text(SEED.read_text(encoding="utf-8").replace("cache_hit_rate = 0.85", "cache_hit_rate = 0.95"),
                        encoding="utf-8")
        inputs = load_inputs(path)
        values = ts.evaluate_plan(inputs)
        agent = levers.cache_hit_lever(inputs).routes[1]

        assert (0.95, 0.0) == (pytest.approx(agent.hit_after), agent.saving_usd_per_month)
        assert (0.95, 0.0) == (pytest.approx(_w(values, "hit_after", 1)), _w(values, "saving_per_point_usd", 1))


class TestSelfhostVsApi:
    def test_completion_per_mtok_both_ways(self, seed, base):
        """Completion: 400 req/s peak x 0.5, 1,500 + 40 tokens. API (Anthropic Sonnet: 3 in, 0.30 read, 15 out):
        (3 x 600 + 0.3 x 900 + 15 x 40) / 1e6 per request; self-host: the H100 fleet's cost over its tokens."""
        api_per_request = (3 * 600 + 0.3 * 900 + 15 * 40) / 1e6
        tokens = 200 * 1540 * SECONDS_PER_MONTH
        fleet_cost = _w(base, "fleet_cost_monthly_usd", 0)
        # 22 replicas x TP 4 H100 at the catalog price, 730.5 h
        gpus = seed[("Fleet", ts.FLEET.cell("replicas", 0))] * seed[("Fleet", ts.FLEET.cell("tp", 0))]
        assert 88 == gpus

        assert api_per_request * 1e6 / 1540 == pytest.approx(_w(base, "api_usd_per_mtok", 0))
        assert fleet_cost * 1e6 / tokens == pytest.approx(_w(base, "selfhost_usd_per_mtok", 0))
        assert fleet_cost / (api_per_request * SECONDS_PER_MONTH) == pytest.approx(_w(base, "breakeven_qps", 0))
        assert "self-host" == _w(base, "recommendation", 0)
        assert "chat" == _w(base, "route", 2) and "API" == _w(base, "recommendation", 2)

    def test_a_new_route_goes_to_the_api(self, tmp_path):
        text = SEED.read_text(encoding="utf-8").replace('failover = "llama70b-h200"',
                                                        'failover = "llama70b-h200"\nnew = true')
        path = tmp_path / "new.toml"
        path.write_text(text, encoding="utf-8")
        values = ts.evaluate_plan(load_inputs(path))

        assert "API" == _w(values, "recommendation", 0)
        assert _w(values, "reasons", 0).startswith("new: demand not yet known")


class TestSensitivity:
    def test_tornado_and_cases(self, seed, base):
        """Peak QPS +20 %: the API routes' bills grow 20 %, the fleets' GPU-hours do not."""
        s = levers.sensitivity(seed, spread=0.2)
        api = sum(_res(base, "cost_monthly_usd", i) for i in (1, 2))
        bar = next(b for b in s.tornado if b.input == "peak_qps")

        assert s.base.monthly_cost_usd + 0.2 * api == pytest.approx(bar.high.monthly_cost_usd)
        assert s.base.monthly_cost_usd - 0.2 * api == pytest.approx(bar.low.monthly_cost_usd)
        growth = next(b for b in s.tornado if b.input == "monthly_growth")
        assert growth.low.monthly_cost_usd == growth.high.monthly_cost_usd == s.base.monthly_cost_usd
        assert growth.low.first_breach_months > s.base.first_breach_months > growth.high.first_breach_months
        assert s.cases["low"].first_breach_months > s.cases["base"].first_breach_months \
            > s.cases["high"].first_breach_months
        swings = [b.cost_swing_usd for b in s.tornado]
        assert swings == sorted(swings, reverse=True)

    def test_hit_rate_is_capped_where_the_cache_writes_leave_no_room(self, seed):
        # agent: 3,000 of 60,000 input tokens written: at most 95 % read (0.85 x 1.2 = 1.02 would be refused)
        edited = levers.scaled(seed, levers.group("cache_hit_rate"), 1.2)
        assert 0.95 == pytest.approx(edited[("Routes", ts.ROUTES.cell("cache_hit_rate", 1))])
        assert 0.72 == pytest.approx(edited[("Routes", ts.ROUTES.cell("cache_hit_rate", 0))])


SAMPLES = ("seed", "bulk-tpm", "classifier-rpm", "selfhost-kv")


def _close(sheet_value, reevaluated) -> bool:
    """A sheet cell against the re-evaluated plan's figure: numbers to 1e-9 (relative above 1); "never" is the
    re-evaluation's None (no breach at this growth)."""
    if reevaluated is None:
        return sheet_value == "never"
    return isinstance(sheet_value, float) and abs(sheet_value - reevaluated) <= 1e-9 * max(1.0, abs(reevaluated))


class TestTornadoSheet:
    """tblTornado and tblDemandCases (What-if sheet) against THE plan method run again with the input scaled: every
    formula cell agrees to 1e-9 on every sample, including classifier-rpm, bound by a per-second (BURST) limit."""

    @pytest.mark.parametrize("sample", SAMPLES)
    def test_every_formula_cell_agrees_with_the_reevaluation(self, sample):
        from planner.template import sensitivity as sv

        inputs = load_inputs(ROOT / "samples" / f"{sample}.toml")
        values = ts.evaluate_plan(inputs)
        t = ts.TORNADO
        formulas = 0
        for i, (name, _label) in enumerate(sv.GROUPS):
            assert name == values.get((t.sheet, t.cell("input", i)), ts.fixed_cells()[(t.sheet, t.cell("input", i))])
            for side, f in (("lo", 0.8), ("hi", 1.2)):
                assert values[(t.sheet, t.cell(f"factor_{side}", i))] == pytest.approx(f)
                again = levers.figures(ts.evaluate_plan(levers.scaled(inputs, levers.group(name), f)), inputs)
                bill = values[(t.sheet, t.cell(f"bill_{side}_usd", i))]
                assert _close(bill, again.monthly_cost_usd), (name, side, bill, again.monthly_cost_usd)
                util = values[(t.sheet, t.cell(f"util_{side}", i))]
                breach = values[(t.sheet, t.cell(f"breach_{side}_months", i))]
                # every bar end is a cell (the tokens and hit-rate bars through SENSITIVITY_BAR, which evaluates
                # only Results' cone from the sheet's tables; the oracle here is the whole plan evaluated again)
                formulas += 1
                assert _close(util, again.highest_utilization), (name, side, util, again.highest_utilization)
                assert _close(breach, again.first_breach_months), (name, side, breach, again.first_breach_months)
        assert 14 == formulas
        d = ts.DEMAND_CASES
        for i, (case, f) in enumerate((("low", 0.8), ("base", 1.0), ("high", 1.2))):
            edited = levers.scaled(levers.scaled(inputs, levers.group("peak_qps"), f), levers.group("monthly_growth"),
                                   f)
            again = levers.figures(ts.evaluate_plan(edited), inputs)
            assert _close(values[(d.sheet, d.cell("bill_usd", i))], again.monthly_cost_usd), case
            assert _close(values[(d.sheet, d.cell("max_util", i))], again.highest_utilization), case
            assert _close(values[(d.sheet, d.cell("breach_months", i))], again.first_breach_months), case

    def test_the_ratio_bar_of_a_plan_with_a_profiled_route_is_results_again(self):
        """A route that names an hour-of-day profile keeps its own ratio, so the ratio bar has no closed form: its
        cells are SENSITIVITY_BAR, and they equal the whole plan evaluated again with the Plan's ratio scaled."""
        text = (ROOT / "samples" / "seed.toml").read_text(encoding="utf-8")
        text = text.replace('name = "chat"\n', 'name = "chat"\nprofile = "business-hours-chat"\n', 1)
        from planner.scenario import parse_scenario, tomllib
        from planner.template.inputs import catalog_inputs, scenario_inputs

        inputs = {**catalog_inputs(), **scenario_inputs(parse_scenario(tomllib.loads(text)))}
        values = ts.evaluate_plan(inputs)
        t = ts.TORNADO
        row = next(i for i in range(t.rows) if ts.fixed_cells()[(t.sheet, t.cell("input", i))] == "avg_to_peak_ratio")
        assert values[(t.sheet, ts.SENSITIVITY_BARS.cell("reevaluated", row))] == 1
        for side, f in (("lo", 0.8), ("hi", 1.2)):
            again = levers.figures(ts.evaluate_plan(levers.scaled(inputs, levers.group("avg_to_peak_ratio"), f)),
                                   inputs)
            assert _close(values[(t.sheet, t.cell(f"util_{side}", row))], again.highest_utilization)
            assert _close(values[(t.sheet, t.cell(f"breach_{side}_months", row))], again.first_breach_months)

    def test_token_and_hit_bars_with_routes_growing_apart_are_the_plan_again(self):
        """With routes of their own growth the breach month reads each backend's routes' shares (the Forecast route
        table), which the scaled tokens move: the bars (only the cells that read the scaled column evaluated again,
        the rest the plan's own) against the whole plan evaluated again."""
        text = (ROOT / "samples" / "seed.toml").read_text(encoding="utf-8")
        text = text.replace('name = "chat"\n', 'name = "chat"\nmonthly_growth = 0.2\n', 1)
        text = text.replace('name = "completion"\n', 'name = "completion"\nmonthly_growth = 0.03\n', 1)
        from planner.scenario import parse_scenario, tomllib
        from planner.template.inputs import catalog_inputs, scenario_inputs

        inputs = {**catalog_inputs(), **scenario_inputs(parse_scenario(tomllib.loads(text)))}
        values = ts.evaluate_plan(inputs)
        t = ts.TORNADO
        for row, (name, _label) in enumerate(GROUPS):
            if name not in ("input_tokens", "output_tokens", "cache_hit_rate"):
                continue
            for side, f in (("lo", 0.8), ("hi", 1.2)):
                again = levers.figures(ts.evaluate_plan(levers.scaled(inputs, levers.group(name), f)), inputs)
                assert _close(values[(t.sheet, t.cell(f"util_{side}", row))], again.highest_utilization), name
                assert _close(values[(t.sheet, t.cell(f"breach_{side}_months", row))], again.first_breach_months)

    def test_the_burst_bound_plan_scales_its_poisson_burst(self):
        """classifier-rpm binds on BURST (Poisson at p99, per second): at 0.8x demand the busiest second is not
        0.8 x as busy. 0.81 x 0.8 = 64.8 % would be the linear answer; the plan re-evaluated says otherwise."""
        inputs = load_inputs(ROOT / "samples" / "classifier-rpm.toml")
        values = ts.evaluate_plan(inputs)
        row = next(i for i in range(ts.TORNADO.rows) if ts.fixed_cells()[("What-if", ts.TORNADO.cell("input", i))]
                   == "peak_qps")
        low = values[("What-if", ts.TORNADO.cell("util_lo", row))]
        assert "BURST" == values[(ts.RESULTS.sheet, ts.RESULTS.cell("binding_constraint", 0))]
        assert low != pytest.approx(0.81 * 0.8)
        again = levers.figures(ts.evaluate_plan(levers.scaled(inputs, levers.group("peak_qps"), 0.8)), inputs)
        assert low == pytest.approx(again.highest_utilization, rel=1e-9)

    def test_hit_rate_high_bar_on_selfhost_kv_is_a_number(self):
        """0.85 x 1.2 = 1.02: clipped below 1 (1 - 1 / 24,000: the last prompt token is computed), not #VALUE!."""
        inputs = load_inputs(ROOT / "samples" / "selfhost-kv.toml")
        edited = levers.scaled(inputs, levers.group("cache_hit_rate"), 1.2)
        assert 1 - 1 / 24_000 == pytest.approx(edited[("Routes", ts.ROUTES.cell("cache_hit_rate", 0))], abs=1e-12)
        s = levers.sensitivity_view(ts.evaluate_plan(inputs), inputs)
        bar = next(b for b in s.tornado if b.input == "cache_hit_rate")
        assert bar.reevaluated
        assert isinstance(bar.high.highest_utilization, float) and 0 < bar.high.highest_utilization < 1

    def test_spread_is_the_plan_setting(self):
        inputs = dict(load_inputs(SEED))
        inputs[("Plan", ts.plan_value_cell("sensitivity_spread"))] = 0.3
        values = ts.evaluate_plan(inputs)
        assert 0.7 == pytest.approx(values[("What-if", ts.TORNADO.cell("factor_lo", 0))])
        assert 1.3 == pytest.approx(values[("What-if", ts.TORNADO.cell("factor_hi", 0))])
        assert 0.3 == pytest.approx(levers.sensitivity_view(values, inputs).spread)


class TestCli:
    def test_size_json_has_the_whatif_sections(self):
        result = CliRunner().invoke(cli, ["size", str(SEED), "--format", "json"])
        assert result.exit_code == 0, result.output
        data = json.loads(result.output)

        assert {"cache_hit_lever", "selfhost_vs_api", "sensitivity"} <= set(data)
        assert ["completion", "agent", "chat"] == [r["route"] for r in data["selfhost_vs_api"]]
        assert {"low", "base", "high"} == set(data["sensitivity"]["cases"])

    def test_size_no_whatif_skips_the_whatif_sections(self):
        result = CliRunner().invoke(cli, ["size", str(SEED), "--format", "json", "--no-whatif"])
        assert result.exit_code == 0, result.output
        data = json.loads(result.output)

        assert data["cache_hit_lever"] is None and data["sensitivity"] is None and not data["selfhost_vs_api"]
        assert ["completion", "agent", "chat"] == [r["route"] for r in data["routes"]]
        text = CliRunner().invoke(cli, ["size", str(SEED), "--no-whatif"]).output
        assert "sensitivity" not in text and "cache-hit lever" not in text

    def test_size_help_shows_no_whatif_with_an_example(self):
        result = CliRunner().invoke(cli, ["size", "--help"])
        assert "--no-whatif" in result.output and "planner size samples/seed.toml --no-whatif" in result.output

    def test_sweep_csv(self):
        result = CliRunner().invoke(cli, ["sweep", str(SEED), "--vary", "routes.chat.peak_qps=20:80", "--steps", "4",
                                          "--format", "csv"])
        assert result.exit_code == 0, result.output
        rows = list(csv.DictReader(io.StringIO(result.output)))

        assert ["20.0", "40.0", "60.0", "80.0"] == [r["routes.chat.peak_qps"] for r in rows]
        # chat binds on Gemini's ITPM: 2,500 input x 60 x QPS against 8M a minute per project (6 keys, one limit)
        assert float(rows[3]["chat.max_util"]) == pytest.approx(80 * 60 * 2500 / 8e6)
        assert "ITPM" == rows[3]["chat.binding"]

    @pytest.mark.parametrize(("vary", "message"), [
        ("routes.nope.peak_qps=1:2", "Routes name: got 'nope'"),
        ("routes.chat.speed=1:2", "Routes column: got 'speed'"),
    ])
    def test_sweep_bad_name_names_the_file(self, vary, message):
        result = CliRunner().invoke(cli, ["sweep", str(SEED), "--vary", vary])
        assert 2 == result.exit_code
        assert f"{SEED}: " in result.output and message in result.output

    def test_sweep_usage_error(self):
        assert 2 == CliRunner().invoke(cli, ["sweep", str(SEED), "--vary", "peak_qps"]).exit_code

    def test_diff_scenario_and_its_workbook_are_the_same_plan(self):
        result = CliRunner().invoke(cli, ["diff", str(SEED), str(ROOT / "samples" / "seed.xlsm")])
        assert result.exit_code == 0, result.output
        assert "0 input cells and 0 computed cells differ" in result.output

    def test_diff_names_route_column_and_binding(self, tmp_path):
        path = tmp_path / "more-chat.toml"
        path.write_text(SEED.read_text(encoding="utf-8").replace("peak_qps = 40\n", "peak_qps = 60\n"),
                        encoding="utf-8")
        result = CliRunner().invoke(cli, ["diff", str(SEED), str(path)])
        assert result.exit_code == 0, result.output

        assert "input Routes!C6 chat / Peak [req/s]: 40 -> 60" in result.output
        # ITPM of chat: 60 x 60 x 2,500 / 8M = 1.125
        itpm = ts.RESULTS.cell("itpm_util", 2)  # chat is the third route
        assert f"Results!{itpm} chat / ITPM util [x]: 0.75 -> 1.125" in result.output
        data = json.loads(CliRunner().invoke(cli, ["diff", str(SEED), str(path), "--format", "json"]).output)
        assert data["after"]["highest_utilization"] == pytest.approx(1.125)


class TestSpikyFromTheRouteProfile:
    """W4's "spiky" reads the route's own hour-of-day profile: peak / week average = 1 / Profiles' month ratio."""

    @staticmethod
    def _reasons(profile: object) -> tuple[str, str]:
        import tomllib

        from planner.scenario import parse_scenario
        from planner.sizing import evaluate_scenario

        d = tomllib.loads(SEED.read_text())
        d["routes"][2]["profile"] = profile  # chat
        v = evaluate_scenario(parse_scenario(d, path="p.toml"))
        w = ts.WHATIF
        return v[(w.sheet, w.cell("recommendation", 2))], v[(w.sheet, w.cell("reasons", 2))]

    def test_a_spiky_own_profile_sends_the_route_to_the_api(self):
        # one busy hour at 1.0, 23 at 0.1, every day: average (1 + 2.3) / 24 = 0.1375 of the peak, peak/avg 7.27
        rec, why = self._reasons([1.0] + [0.1] * 23)
        assert "API" == rec
        assert f"spiky: peak/avg {24 / 3.3:.3g} > 3" in why

    def test_a_flat_profile_is_steady_whatever_the_plan_ratio(self):
        # flat-batch: average = peak (peak/avg 1), though the Plan's ratio 0.5 would give 2
        _rec, why = self._reasons("flat-batch")
        assert "steady: peak/avg 1 <= 3" in why


class TestTornadoChart:
    """The tornado's bars: each side's change of the bill from the base, and the chart on the What-if sheet."""

    def test_change_columns_are_the_reevaluated_bill_minus_the_base(self):
        from planner.template import sensitivity as sv

        inputs = load_inputs(ROOT / "samples" / "seed.toml")
        values = ts.evaluate_plan(inputs)
        base_bill = levers.figures(values, inputs).monthly_cost_usd
        t = ts.TORNADO
        for i, (name, _label) in enumerate(sv.GROUPS):
            for side, f in (("lo", 0.8), ("hi", 1.2)):
                again = levers.figures(ts.evaluate_plan(levers.scaled(inputs, levers.group(name), f)), inputs)
                change = values[(t.sheet, t.cell(f"bill_{side}_change_usd", i))]
                assert change == pytest.approx(again.monthly_cost_usd - base_bill, abs=1e-6), (name, side)
        # peak QPS +20 % on the seed: the API routes' bills (agent 493,482 + chat 67,717 USD) x 0.2, by hand
        row = next(i for i, (g, _) in enumerate(sv.GROUPS) if g == "peak_qps")
        assert values[(t.sheet, t.cell("bill_hi_change_usd", row))] == pytest.approx(0.2 * 561_199, abs=1.0)

    def test_the_sample_workbook_carries_the_tornado_chart(self):
        import re
        import zipfile

        t = ts.TORNADO
        with zipfile.ZipFile(ROOT / "samples" / "seed.xlsm") as z:
            charts = [z.read(n).decode() for n in z.namelist() if n.startswith("xl/charts/chart")]
        tornado = [c for c in charts if "Tornado" in c]
        assert len(tornado) == 1
        xml = tornado[0]
        assert re.search(r'<(?:c:)?barDir val="bar"\s*/>', xml) and re.search(r'<(?:c:)?overlap val="100"\s*/>', xml)
        refs = re.findall(r"<(?:c:)?f>([^<]+)</(?:c:)?f>", xml)
        for side in ("lo", "hi"):
            letter = t.letter(f"bill_{side}_change_usd")
            assert f"'What-if'!${letter}${t.first_row}:${letter}${t.last_row}" in refs, refs
        label = t.letter("label")
        assert f"'What-if'!${label}${t.first_row}:${label}${t.last_row}" in refs
