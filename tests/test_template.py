"""The capacity-plan template: generation, contract, cached values, functions used, LibreOffice load."""

from __future__ import annotations

import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner

from planner import template as ts
from planner.cli import cli
from planner.registry import load
from planner.template.build import TEMPLATE_FILENAME, build_template, write_plan
from planner.template.contract import contract_markdown
from planner.template.inputs import scenario_inputs

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "templates" / TEMPLATE_FILENAME


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_template(tmp_path_factory.mktemp("tpl"))


def test_regenerated_template_is_byte_identical_to_the_committed_one(built: Path) -> None:
    assert COMMITTED.exists(), "run: planner template build -o templates"
    assert built.read_bytes() == COMMITTED.read_bytes(), "templates/ is stale: run planner template build"


def test_generation_is_reproducible(built: Path, tmp_path: Path) -> None:
    again = build_template(tmp_path)
    assert again.read_bytes() == built.read_bytes()
    for info in zipfile.ZipFile(again).infolist():
        assert info.date_time == (2026, 1, 1, 0, 0, 0)


def test_cli_builds_the_template(tmp_path: Path, built: Path) -> None:
    result = CliRunner().invoke(cli, ["template", "build", "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / TEMPLATE_FILENAME).read_bytes() == built.read_bytes()


def test_macro_enabled_content_type(built: Path) -> None:
    types = zipfile.ZipFile(built).read("[Content_Types].xml").decode()
    assert "application/vnd.ms-excel.sheet.macroEnabled.main+xml" in types
    assert "spreadsheetml.sheet.main+xml" not in types


def test_sheets_tables_and_defined_names(built: Path) -> None:
    wb = openpyxl.load_workbook(built, keep_vba=True)
    assert wb.sheetnames == list(ts.SHEET_ORDER)
    for t in ts.TABLES:
        tables = wb[t.sheet].tables
        assert t.name in tables, t.name
        assert tables[t.name].ref == t.ref
    assert wb.defined_names["PLANNER_TEMPLATE_ID"].attr_text == f'"{ts.TEMPLATE_ID}"'
    assert wb.defined_names["PLANNER_TEMPLATE_VERSION"].attr_text == f'"{ts.TEMPLATE_VERSION}"'


def test_every_header_carries_a_unit_or_is_text() -> None:
    for t in ts.TABLES:
        for c in t.columns:
            if c.kind == "number":
                assert re.search(r"\[[^\]]+\]", c.header), f"{t.name}.{c.key}: {c.header!r} has no [unit]"


def test_formula_cells_locked_inputs_unlocked_and_sheets_protected(built: Path) -> None:
    wb = openpyxl.load_workbook(built)
    formulas = ts.all_formulas()
    for (sheet, cell), text in formulas.items():
        c = wb[sheet][cell]
        assert c.value == text
        assert c.protection.locked, f"{sheet}!{cell}"
    for t in (ts.ROUTES, ts.PROVIDERS, ts.FLEET):
        for col in t.columns:
            assert not wb[t.sheet][t.cell(col.key, 0)].protection.locked
    for name in ts.SHEET_ORDER:
        assert wb[name].protection.sheet, name
        assert not wb[name].protection.password


def test_validations_feed_dropdowns_from_catalogs_and_bound_numbers(built: Path) -> None:
    wb = openpyxl.load_workbook(built)
    fleet = {str(dv.sqref): dv for dv in wb["Fleet"].data_validations.dataValidation}
    model_col, gpu_col = ts.FLEET.letter("model"), ts.FLEET.letter("gpu")
    model_dv = fleet[f"{model_col}{ts.FLEET.first_row}:{model_col}{ts.FLEET.last_row}"]
    assert model_dv.type == "list" and model_dv.formula1.startswith("Models!$A$")
    assert fleet[f"{gpu_col}{ts.FLEET.first_row}:{gpu_col}{ts.FLEET.last_row}"].formula1.startswith("GPUs!$A$")
    routes = {str(dv.sqref): dv for dv in wb["Routes"].data_validations.dataValidation}
    hit = ts.ROUTES.letter("cache_hit_rate")
    dv = routes[f"{hit}{ts.ROUTES.first_row}:{hit}{ts.ROUTES.last_row}"]
    assert (dv.type, dv.formula1, dv.formula2) == ("decimal", "0", "1")
    backend = ts.ROUTES.letter("backend")
    assert routes[f"{backend}{ts.ROUTES.first_row}:{backend}{ts.ROUTES.last_row}"].formula1.startswith("Lists!")
    # the catalog sheets are filled and the dropdown ranges cover them
    assert wb["Models"][ts.MODELS.cell("name", 0)].value
    assert wb["GPUs"][ts.GPUS.cell("name", 0)].value


def test_conditional_formats_flag_over_one_and_binding(built: Path) -> None:
    wb = openpyxl.load_workbook(built)
    rules = [(str(rng.sqref), r.formula[0]) for rng in wb["Summary"].conditional_formatting for r in rng.rules]
    assert any(">1" in f for _s, f in rules)
    assert any("=MAX(" in f for _s, f in rules)
    assert any(">1" in r.formula[0] for rng in wb["Results"].conditional_formatting for r in rng.rules)


def test_functions_used_are_allowed_builtins_or_registry_functions() -> None:
    registry = load()
    used = ts.functions_used()
    unknown = sorted(n for n in used if n not in ts.ALLOWED_BUILTINS and n not in registry)
    assert not unknown, f"template calls functions that are neither allowed built-ins nor registered: {unknown}"
    texts = "\n".join(ts.all_formulas().values())
    for banned in ("--", "[#This Row]", "tbl"):
        assert banned not in texts, banned
    for name in ("N", "SUBTOTAL", "OFFSET", "SEQUENCE", "INDIRECT", "LAMBDA", "HYPERLINK"):
        assert not re.search(rf"(?<![A-Z0-9_.]){name}\(", texts), name
    # every name written as NAME( in the text is accounted for
    written = set(re.findall(r"([A-Z][A-Z0-9_.]*)\(", texts))
    assert written == used


def test_cached_values_equal_the_python_evaluation(built: Path) -> None:
    wb = openpyxl.load_workbook(built, data_only=True)
    expected = ts.evaluate_plan(_inputs_from(built))
    for (sheet, cell), value in expected.items():
        got = wb[sheet][cell].value
        if value == "":
            assert got in ("", None), f"{sheet}!{cell}: {got!r}"
        elif isinstance(value, float):
            assert got == pytest.approx(value, rel=1e-12), f"{sheet}!{cell}"
        else:
            assert str(got) == str(value), f"{sheet}!{cell}"


def _inputs_from(path: Path) -> dict[tuple[str, str], object]:
    wb = openpyxl.load_workbook(path)
    formulas = ts.all_formulas()
    out = {}
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for c in row:
                if c.value is not None and (ws.title, c.coordinate) not in formulas:
                    out[(ws.title, c.coordinate)] = c.value
    return out


def test_evaluator_semantics_on_a_small_plan() -> None:
    """A one-route plan: demand follows D1/D2, utilization = demand / (limit x keys), empty rows stay blank."""
    inputs = {
        ("Plan", ts.PLAN.cell("value", 1)): 0.8,
        ("Plan", ts.PLAN.cell("value", 2)): 0.1,
        ("Plan", ts.PLAN.cell("value", 3)): 0.5,
    }
    p = {"name": "api", "provider": "x", "tier": "t", "model": "m", "keys": 2, "rpm": 1000, "tpm": 1_000_000,
         "cached_reads_count_itpm": True, "reserves_max_tokens": False, "usd_per_mtok_input": 3,
         "usd_per_mtok_cached_input": 0.3, "usd_per_mtok_cache_write": 3.75, "usd_per_mtok_output": 15}
    r = {"name": "r1", "kind": "bulk", "peak_qps": 10, "avg_input_tokens": 1000, "avg_output_tokens": 100,
         "p95_context_tokens": 2000, "max_tokens": 256, "cache_hit_rate": 0, "cache_write_tokens": 0,
         "ttft_slo_s": 1, "tpot_slo_s": 0.05, "backend": "API"}
    for k, v in p.items():
        inputs[("Providers", ts.PROVIDERS.cell(k, 0))] = v
    for k, v in r.items():
        inputs[("Routes", ts.ROUTES.cell(k, 0))] = v
    out = ts.evaluate_plan(inputs)
    res = {c.key: out[("Results", ts.RESULTS.cell(c.key, 0))] for c in ts.RESULTS.columns}
    assert res["backend_type"] == "provider"  # backend names match case-insensitively, as in Excel
    assert res["rpm_demand"] == 600.0
    assert res["tpm_demand"] == 660_000.0
    assert res["rpm_util"] == pytest.approx(600 / 2000)
    assert res["tpm_util"] == pytest.approx(660_000 / 2_000_000)
    assert res["binding_constraint"] == "TPM"
    assert res["max_util"] == pytest.approx(0.33)
    assert res["status"] == "OK"
    assert res["failover_ok"] == "none"
    assert out[("Results", ts.RESULTS.cell("rpm_demand", 1))] == ""  # unused row
    inputs[("Routes", ts.ROUTES.cell("backend", 0))] = "nowhere"
    assert ts.evaluate_plan(inputs)[("Results", ts.RESULTS.cell("backend_type", 0))] == "unknown"


def test_fleet_weight_dtype_pp_and_mfu_reach_the_memory_and_latency_functions() -> None:
    """Fleet's PP, Weight dtype and MFU columns feed MAX_CONCURRENCY, KV_FIT, TPOT_S and the GPU count."""
    from planner import functions as F
    from planner.scenario import load_scenario
    from planner.template.inputs import catalog_inputs

    base = {**catalog_inputs(), **scenario_inputs(load_scenario(ROOT / "samples" / "selfhost-kv.toml"))}
    fleet_row = 0
    name = base[("Fleet", ts.FLEET.cell("name", fleet_row))]
    route = next(i for i in range(ts.ROUTES.rows) if base.get(("Routes", ts.ROUTES.cell("backend", i))) == name)

    def results(**fleet: object) -> dict[str, object]:
        inputs = dict(base)
        for k, v in fleet.items():
            inputs[("Fleet", ts.FLEET.cell(k, fleet_row))] = v
        out = ts.evaluate_plan(inputs)
        return {c.key: out[("Results", ts.RESULTS.cell(c.key, route))] for c in ts.RESULTS.columns}

    bf16 = results(weight_dtype="bf16", pp=1)
    fp8 = results(weight_dtype="fp8", pp=1)
    two_stages = results(weight_dtype="bf16", pp=2)
    f = {k: base[("Fleet", ts.FLEET.cell(k, fleet_row))] for k in ("model", "gpu", "tp", "gpu_memory_utilization",
                                                                    "kv_dtype", "engine", "replicas")}
    ctx = base[("Routes", ts.ROUTES.cell("p95_context_tokens", route))]
    assert fp8["max_concurrency"] == F.MAX_CONCURRENCY(f["model"], f["gpu"], f["tp"], f["gpu_memory_utilization"],
                                                       f["kv_dtype"], ctx, f["engine"], "fp8")
    assert fp8["max_concurrency"] > bf16["max_concurrency"]  # half the weight bytes leave more room for KV
    assert fp8["kv_util"] < bf16["kv_util"]
    assert fp8["tpot_at_load_s"] < bf16["tpot_at_load_s"]  # fewer weight bytes read per decode step
    assert two_stages["kv_util"] < bf16["kv_util"]  # each stage holds half the layers' weights and KV
    assert two_stages["cost_monthly_usd"] == pytest.approx(2 * bf16["cost_monthly_usd"])  # TP x PP GPUs per replica
    lean = results(weight_dtype="bf16", pp=1, mfu=0.05)  # MFU is the COMPUTE ceiling's, not the serving model's
    assert lean["compute_util"] == pytest.approx(bf16["compute_util"] * 0.4 / 0.05)


def test_daily_limits_count_the_average_day() -> None:
    """RPD/TPD: demand per day = per-minute demand x avg-to-peak x 1,440, over the provider's daily limit x keys;
    the workbook and ``planner size`` agree, and a daily limit can bind."""
    from planner.scenario import parse_scenario
    from planner.sizing import size_scenario
    from planner.template.inputs import catalog_inputs

    scenario = parse_scenario({
        "plan": {"name": "daily", "avg_to_peak_ratio": 0.5},
        "providers": [{"name": "flash", "provider": "gemini", "tier": "tier-1", "model": "gemini-2.5-flash",
                       "keys": 2}],
        "routes": [{"name": "r", "peak_qps": 0.5, "avg_input_tokens": 800, "avg_output_tokens": 100,
                    "ttft_slo_s": 2, "tpot_slo_s": 0.1, "backend": "flash"}],
    })
    out = ts.evaluate_plan({**catalog_inputs(), **scenario_inputs(scenario)})
    res = {c.key: out[("Results", ts.RESULTS.cell(c.key, 0))] for c in ts.RESULTS.columns}
    assert res["rpd_demand"] == pytest.approx(0.5 * 60 * 0.5 * 1440)  # 21,600 requests on an average day
    (route,) = size_scenario(scenario).routes
    by_kind = {c.label.rsplit(" ", 1)[1]: c.utilization for c in route.constraints}
    # Gemini meters limits per project: its two keys share the 10,000 a day, and the daily cap binds before RPM
    assert by_kind["RPD"] == pytest.approx(21_600 / 10_000)
    assert res["binding_constraint"] == "RPD" == route.binding


def test_recompute_with_formulas_agrees_with_cached_values(tmp_path: Path) -> None:
    """The headless engine (formulas, via planner.recalc) reproduces every cached value of a filled plan."""
    recalc = pytest.importorskip("planner.recalc")
    from planner.scenario import load_scenario

    src = write_plan(scenario_inputs(load_scenario(ROOT / "samples" / "seed.toml")), tmp_path / "seed.xlsm")
    dst = tmp_path / "seed-recalc.xlsm"
    recalc.recalc_file(src, dst)
    mine = openpyxl.load_workbook(src, data_only=True)
    theirs = openpyxl.load_workbook(dst, data_only=True)
    for sheet, cell in ts.all_formulas():
        a, b = mine[sheet][cell].value, theirs[sheet][cell].value
        if isinstance(a, float) and isinstance(b, (int, float)):
            assert b == pytest.approx(a, rel=1e-9), f"{sheet}!{cell}"
        else:
            assert (a or "") == (b or ""), f"{sheet}!{cell}: {a!r} != {b!r}"


def soffice() -> str | None:
    return shutil.which("soffice") or shutil.which("libreoffice")


@pytest.mark.skipif(soffice() is None, reason="LibreOffice (soffice) is not installed")
def test_template_opens_in_libreoffice(built: Path, tmp_path: Path) -> None:
    text = libreoffice_text(built, tmp_path)
    assert "Summary: utilization of every constraint per route" in text
    assert "Err:" not in text


def libreoffice_text(path: Path, tmp_path: Path) -> str:
    """Convert with LibreOffice headless to PDF (one page per sheet) and return the PDF's text."""
    profile = tmp_path / "lo-profile"
    out = tmp_path / "pdf"
    proc = subprocess.run(
        [soffice(), "--headless", "--norestore", f"-env:UserInstallation=file://{profile}", "--convert-to",
         'pdf:calc_pdf_Export:{"SinglePageSheets":{"type":"boolean","value":"true"}}', "--outdir", str(out),
         str(path)],
        capture_output=True, text=True, timeout=120,
    )
    pdf = out / (path.stem + ".pdf")
    assert proc.returncode == 0 and pdf.exists(), proc.stderr
    if shutil.which("pdftotext") is None:
        return pdf.read_bytes().decode("latin-1")
    return subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True).stdout


def test_docs_describe_the_current_contract() -> None:
    doc = (ROOT / "docs" / "template.md").read_text(encoding="utf-8")
    assert contract_markdown() in doc, "docs/template.md is stale: run tools/regenerate"
    assert ts.TEMPLATE_VERSION in doc and ts.TEMPLATE_ID in doc


def _seed():
    from planner.scenario import load_scenario

    return load_scenario(ROOT / "samples" / "seed.toml")
