"""The ``planner`` command line: a thin click layer. Each command opens its input, makes one library call and
translates planner errors into a one-line message and an exit code (0 ok, 1 findings, 2 could not run).

Every command's help ends with an example; ``tests/test_cli_help.py`` checks that.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

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


@cli.group("addin", invoke_without_command=True)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Write (or update) an xlwings.conf at this path, e.g. next to the workbook.",
)
@click.option("--user-config", is_flag=True, help="Write (or update) ~/.xlwings/xlwings.conf, the user configuration.")
@click.option(
    "--interpreter",
    help="Python that Excel should start (INTERPRETER_WIN / INTERPRETER_MAC); default: this Python on Windows/macOS.",
)
@click.option(
    "--lite-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write the xlwings Lite bundle (main.py, requirements.txt) into this directory.",
)
@click.option(
    "--lite-requirement", help="The requirements.txt line for Lite (default: the package pinned to this version)."
)
@click.pass_context
def addin_cmd(
    ctx: click.Context,
    config_path: Path | None,
    user_config: bool,
    interpreter: str | None,
    lite_dir: Path | None,
    lite_requirement: str | None,
) -> None:
    """Prepare the Excel add-in as far as possible without Excel: write the xlwings configuration
    (UDF Modules = planner.udfs), check the environment, write the xlwings Lite bundle, and print the steps that
    remain to be done in Excel. Exit 0 when every check passes, 1 when one fails, 2 when a file cannot be written.

    Example: planner addin --config ./xlwings.conf --lite-dir ./lite
    """
    from planner import addin

    if ctx.invoked_subcommand is not None:
        return
    if interpreter is None and sys.platform.startswith(("win", "darwin")):
        interpreter = sys.executable
    settings = addin.config_settings(interpreter)
    written: Path | None = None
    targets = [p for p in (config_path, addin.user_config_path() if user_config else None) if p is not None]
    try:
        for target in targets:
            addin.write_config(target, settings)
            click.echo(f"wrote {target}")
            written = target
        if lite_dir is not None:
            for path in addin.write_lite_bundle(lite_dir, lite_requirement):
                click.echo(f"wrote {path}")
    except OSError as exc:
        fail(f"{exc.filename or ''}: {exc.strerror or exc}")
    if not targets:
        click.echo("xlwings configuration (not written; use --config PATH or --user-config):")
        click.echo(addin.config_text(settings), nl=False)
    click.echo("")
    checks = addin.check_environment(config=written)
    for check in checks:
        click.echo(f"[{'ok' if check.ok else 'FAIL'}] {check.name}: {check.detail}")
    click.echo("")
    click.echo("Remaining steps in Excel:")
    for number, step in enumerate(addin.remaining_steps(config_written=written), start=1):
        click.echo(f"  {number}. {step}")
    if not all(check.ok for check in checks):
        sys.exit(1)


@addin_cmd.command("lite")
@click.option(
    "-o",
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write the bundle (main.py, requirements.txt, and the wheel with --wheel) into this directory.",
)
@click.option(
    "--wheel",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="A wheel you host yourself (built with: pip wheel --no-deps . -w dist); it is checked and copied.",
)
@click.option("--url", help="With --wheel: the https:// address (folder) the wheel will be served from.")
def addin_lite_cmd(out_dir: Path | None, wheel: Path | None, url: str | None) -> None:
    """Build and check the xlwings Lite bundle: main.py (generated from the registry, err_to_str on every argument)
    and the exact requirements.txt lines, for the released package (llm-capacity-planner==VERSION) or, with
    --wheel and --url, for a wheel you host yourself. Exit 0 when every check passes, 1 when one fails.

    Example: planner addin lite -o ./lite --wheel dist/llm_capacity_planner-0.1.0-py3-none-any.whl --url https://example.org/wheels
    """
    from planner import addin

    if (wheel is None) != (url is None):
        fail("--wheel and --url go together: the wheel file, and the https:// folder it will be served from")
    requirement = f"{url.rstrip('/')}/{wheel.name}" if wheel is not None and url else None
    checks = addin.check_lite_requirements(addin.lite_requirements_source(requirement))
    if wheel is not None:
        checks += addin.check_wheel(wheel)
    if out_dir is not None:
        try:
            for path in addin.write_lite_bundle(out_dir, wheel=wheel, url=url):
                click.echo(f"wrote {path}")
        except OSError as exc:
            fail(f"{exc.filename or ''}: {exc.strerror or exc}")
    click.echo("requirements.txt (xlwings Lite > requirements.txt tab):")
    click.echo(addin.lite_requirements_source(requirement), nl=False)
    click.echo("")
    for check in checks:
        click.echo(f"[{'ok' if check.ok else 'FAIL'}] {check.name}: {check.detail}")
    if not all(check.ok for check in checks):
        sys.exit(1)


@cli.command("size")
@click.argument("scenario", type=click.Path(dir_okay=False), required=False)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--spread", type=click.FloatRange(min=0.01, max=0.9), default=None,
              help="The sensitivity section's +- fraction on each input (and the low / high demand cases); "
              "default: the plan's sensitivity_spread (0.2).")
@click.option("--months", type=click.IntRange(12, 36), default=None,
              help="Add the forecast (the Forecast sheet's months 1..N, 12 to 36): the bill by token class, what "
              "binds and the step that relieves it; JSON gains forecast: [{month, route, ...}] per route per month "
              "and forecast_months: [...] plan-wide.")
@click.option("--no-whatif", "no_whatif", is_flag=True, default=False,
              help="Skip the What-if views (cache-hit lever, self-host vs API, sensitivity) for speed: the Results, "
              "totals, outages and fleet options only (with --months, the forecast still prints). "
              "Example: planner size samples/seed.toml --no-whatif")
def size_cmd(scenario: str | None, fmt: str, spread: float | None, months: int | None, no_whatif: bool) -> None:
    """Size a plan written as a TOML scenario: per route, demand, the utilization of every limit, KV fit, the
    binding constraint and headroom. Without SCENARIO, sizes the bundled seed scenario.

    The scenario is evaluated through the template (the same evaluation as a workbook's cells), so every figure is
    a Results cell. The What-if sections follow: one point of prefix-cache hit rate per route, self-host vs API
    per route, and the sensitivity (each input at -/+ --spread, and low / base / high demand: the What-if sheet's
    tornado and demand cases; the tokens and hit-rate bars are the plan's Results evaluated again). Exit 1 when
    a cell holds an error (each named as Results!A1 with its message), 2 on a bad file.

    Example: planner size samples/seed.toml --format json
    (quicker, without the What-if sections: planner size samples/seed.toml --no-whatif)
    """
    from planner.scenario import load_scenario
    from planner.sizing import bundled_scenario_path, render_text, size_scenario

    try:
        plan = load_scenario(scenario or bundled_scenario_path())
        if months is not None:
            from planner.sizing import with_forecast

            report = with_forecast(plan, months, spread=spread, whatif=not no_whatif)
        else:
            report = size_scenario(plan, spread=spread, whatif=not no_whatif)
    except PlannerError as exc:
        fail(str(exc))
        return
    if fmt == "json":
        click.echo(report.to_json())
    else:
        click.echo(render_text(report))
        if report.forecast_months is not None:
            from planner.template.forecast import render_by_route, render_commitments, render_forecast

            click.echo("")
            click.echo(render_forecast(report.forecast_months))
            click.echo("")
            click.echo(render_by_route(report.forecast or ()))
            click.echo("")
            click.echo(render_commitments(report.commitments or {}))
    if report.has_errors:
        sys.exit(1)


def _vary(text: str) -> tuple[str, float, float]:
    """``NAME=LO:HI`` of ``--vary``."""
    name, sep, span = text.partition("=")
    lo, sep2, hi = span.partition(":")
    try:
        if not (sep and sep2 and name.strip()):
            raise ValueError
        return name.strip(), float(lo), float(hi)
    except ValueError:
        raise click.BadParameter(f"{text!r}: expected NAME=LO:HI, e.g. routes.chat.peak_qps=20:80",
                                 param_hint="--vary") from None

@cli.command("sweep")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("--vary", "vary", required=True, metavar="NAME=LO:HI",
              help="The input to vary and its range: a cell (plan.monthly_growth, routes.NAME.COLUMN, "
              "providers.NAME.COLUMN, fleet.NAME.COLUMN, Routes!C4) set to each value, or an input group (peak_qps, "
              "input_tokens, output_tokens, cache_hit_rate, monthly_growth, avg_to_peak_ratio, mfu) multiplied by it.")
@click.option("--steps", type=click.IntRange(min=2, max=101), default=5, show_default=True,
              help="Values from LO to HI, both included.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "csv"]), default="text", show_default=True)
def sweep_cmd(scenario: str, vary: str, steps: int, fmt: str) -> None:
    """Re-evaluate a plan (scenario TOML or workbook) across a range of one input: per value, the monthly bill,
    the highest utilization and where it binds, the first breach and each route's status.

    Example: planner sweep samples/seed.toml --vary routes.chat.peak_qps=20:80 --steps 4 --format csv
    """
    from planner.whatif import levers, render
    from planner.whatif.source import load_inputs

    name, lo, hi = _vary(vary)
    try:
        rows = levers.sweep(load_inputs(scenario), name, levers.steps_between(lo, hi, steps))
    except PlannerError as exc:
        fail(f"{scenario}: {exc}")
        return
    click.echo(render.sweep_output(name, rows, fmt), nl=False)


@cli.command("diff")
@click.argument("before", type=click.Path(dir_okay=False))
@click.argument("after", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["text", "json", "csv"]), default="text", show_default=True)
@click.option("--inputs-only", is_flag=True, help="List the input cells that differ, not the computed ones.")
def diff_cmd(before: str, after: str, fmt: str, inputs_only: bool) -> None:
    """Compare two plans (scenario TOML or workbook) cell by cell in planner terms: every input and computed cell
    that differs (table, route or backend, column header, before -> after, Sheet!A1), the routes whose binding
    constraint changed, and the bill and highest utilization of each. Exit 0 whether or not they differ.

    Example: planner diff samples/seed.toml my-plan.xlsm --format csv
    """
    from planner.whatif import levers, render
    from planner.whatif.source import load_inputs

    try:
        a, b = load_inputs(before), load_inputs(after)
    except PlannerError as exc:
        fail(str(exc))
        return
    click.echo(render.diff_output(levers.diff(a, b), fmt, inputs_only=inputs_only), nl=False)


@cli.group("template")
def template_group() -> None:
    """Build the capacity-plan template workbook, or a filled plan from a scenario file.

    Example: planner template build -o templates
    """


@template_group.command("build")
@click.option("-o", "--output", "directory", type=click.Path(file_okay=False), default="templates",
              show_default=True, help="Directory to write capacity-plan.xlsm into.")
def template_build_cmd(directory: str) -> None:
    """Write the empty capacity-plan template (.xlsm) with cached values for every formula.

    Example: planner template build -o templates
    """
    from planner.template.build import build_template

    try:
        path = build_template(directory)
    except (PlannerError, OSError) as exc:
        fail(str(exc))
        return
    click.echo(str(path))


@template_group.command("sample")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "out", type=click.Path(dir_okay=False), required=True,
              help="Workbook to write (.xlsm).")
def template_sample_cmd(scenario: str, out: str) -> None:
    """Write a filled plan workbook from a TOML scenario (routes, providers, fleets), with cached values.

    Example: planner template sample samples/seed.toml -o samples/seed.xlsm
    """
    from planner.template.build import build_sample

    try:
        path = build_sample(scenario, out)
    except (PlannerError, OSError) as exc:
        fail(str(exc))
        return
    click.echo(str(path))


@cli.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--format", "fmt", type=click.Choice(["text", "json", "junit", "csv", "github"]), default="text",
              show_default=True, help="text: one grep-able line per finding; json, junit (CI dashboards), csv, "
              "github (workflow annotations).")
@click.option("-o", "--output", "out", type=click.Path(dir_okay=False), default=None,
              help="Write the report to this file instead of standard output.")
@click.option("--strict", is_flag=True, help="Warnings fail too (exit 1).")
@click.option("--severity", "severities", multiple=True, metavar="CODE=LEVEL",
              help="Override a finding's severity (error, warning, info, off); repeatable.")
@click.option("--config", "config", type=click.Path(dir_okay=False), default=None,
              help="TOML file with a [severity] table of CODE = LEVEL.")
@click.option("--select", "select", multiple=True, metavar="CODE|FAMILY",
              help="Report only these codes or families (comma-separated or repeated).")
@click.option("--ignore", "ignore", multiple=True, metavar="CODE|FAMILY",
              help="Drop these codes or families (comma-separated or repeated).")
@click.option("--max-findings", type=click.IntRange(min=1), default=None,
              help="At most N findings per workbook (errors kept first; the report is marked truncated).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Worker processes.")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0.1), default=60.0, show_default=True,
              help="Time limit per workbook [s].")
@click.option("--memory", "memory_mib", type=click.IntRange(min=64), default=1024, show_default=True,
              help="Memory limit per workbook [MiB].")
def validate_cmd(paths: tuple[str, ...], fmt: str, out: str | None, strict: bool, severities: tuple[str, ...],
                 config: str | None, select: tuple[str, ...], ignore: tuple[str, ...], max_findings: int | None,
                 jobs: int, timeout_s: float, memory_mib: int) -> None:
    """Validate submitted plan workbooks (files or folders): template, inputs, formulas, cached values, policy.

    Exit 0 when every plan is valid, 1 when a finding has error severity (or warning with --strict), 2 when the
    tool could not run (a usage error, a path that does not exist). Finding codes: docs/findings.md and
    planner explain CODE.

    Example: planner validate samples/ --format junit -o validate.xml
    """
    from planner.codes import select_codes
    from planner.validate.batch import Limits, expand_paths, validate_paths
    from planner.validate.findings import load_config, parse_severity_overrides
    from planner.validate.report import RENDERERS, safe_text

    try:
        overrides = load_config(config) if config else {}
        overrides.update(parse_severity_overrides(severities))
    except PlannerError as exc:
        fail(str(exc))
    try:
        keep = select_codes(select) if select else None
        drop = select_codes(ignore)
    except KeyError as exc:
        fail(f"--select/--ignore: unknown code or family {exc.args[0]!r} (planner explain --list shows them)")
    files = expand_paths(paths)
    if not files:
        fail(f"no .xlsx/.xlsm workbooks under {safe_text(', '.join(paths))}")
    show_bar = sys.stdout.isatty() and sys.stderr.isatty() and len(files) > 1
    limits = Limits(timeout_s=timeout_s, memory_mib=memory_mib)
    try:
        if show_bar:
            with click.progressbar(length=len(files), label="validating", file=sys.stderr) as bar:
                result = validate_paths(paths, jobs=jobs, limits=limits, severity=overrides, strict=strict,
                                        on_report=lambda _r: bar.update(1), select=keep, ignore=drop,
                                        max_findings=max_findings, fork_caller=True)
        else:
            result = validate_paths(paths, jobs=jobs, limits=limits, severity=overrides, strict=strict,
                                    select=keep, ignore=drop, max_findings=max_findings, fork_caller=True)
        text = RENDERERS[fmt](result)
    except OSError as exc:
        fail(f"could not run the validation: {safe_text(str(exc))}")
    if out:
        try:
            with open(out, "w", encoding="utf-8", errors="backslashreplace") as fh:
                fh.write(text)
        except OSError as exc:
            fail(f"--output {safe_text(out)}: {exc.strerror}")
        if fmt != "text":
            click.echo(result.summary(), err=True)
    else:
        click.echo(text, nl=False)
    sys.exit(result.exit_code)


@cli.command("explain")
@click.argument("code", required=False)
@click.option("--list", "list_all", is_flag=True, help="List every code and family.")
def explain_cmd(code: str | None, list_all: bool) -> None:
    """Explain a finding code (or list the codes of a family): title, family, default severity, message
    template and what to do. Exit 2 for an unknown code.

    Example: planner explain stale-value
    """
    import difflib

    from planner.codes import CODES, FAMILIES

    if list_all or not code:
        for family, about in FAMILIES.items():
            click.echo(f"{family}: {about}")
            for each in CODES.values():
                if each.family == family:
                    click.echo(f"  {each.code:<30} {each.severity:<8} {each.title}")
        return
    name = code.strip().lower()
    if name in FAMILIES:
        click.echo(f"{name}: {FAMILIES[name]}")
        for each in CODES.values():
            if each.family == name:
                click.echo(f"  {each.code:<30} {each.severity:<8} {each.title}")
        return
    spec = CODES.get(name)
    if spec is None:
        close = difflib.get_close_matches(name, list(CODES) + list(FAMILIES), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else " (planner explain --list shows every code)"
        fail(f"unknown finding code {code!r}{hint}")
        return
    click.echo(f"{spec.code}: {spec.title}")
    click.echo(f"family: {spec.family}; default severity: {spec.severity}")
    click.echo(f"message: {spec.template}")
    click.echo("")
    click.echo(spec.description)
    click.echo("")
    click.echo(f"docs/findings.md#{spec.code}")


@cli.command("calibrate")
@click.argument("logfile", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--model", help="Model of the run: catalog name, Hugging Face id or config.json path.")
@click.option("--gpu", help="GPU of the run (catalog name, e.g. h100-sxm).")
@click.option("--tp", type=click.IntRange(min=1), default=None, help="Tensor-parallel degree.")
@click.option("--pp", type=click.IntRange(min=1), default=None, help="Pipeline-parallel degree.")
@click.option("--gpu-memory-utilization", type=float, default=None,
              help="The engine's memory fraction of the run (default: the engine's default).")
@click.option("--engine", default=None, help="vllm, vllm-v0, sglang or trtllm (default: detected from the log).")
@click.option("--engine-version", default=None, help="Engine version of the run (e.g. 0.19.0).")
@click.option("--kv-cache-dtype", default=None, help="KV cache dtype of the run (auto, fp8, ...).")
@click.option("--weight-dtype", default=None, help="Weight dtype of the run (auto, fp8, int4, mxfp4, fp32, ...).")
@click.option("--max-model-len", type=click.IntRange(min=1), default=None, help="--max-model-len of the run.")
@click.option("--max-num-batched-tokens", type=click.IntRange(min=1), default=None,
              help="--max-num-batched-tokens of the run.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def calibrate_cmd(logfile: Path, model: str | None, gpu: str | None, tp: int | None, pp: int | None,
                  gpu_memory_utilization: float | None, engine: str | None, engine_version: str | None,
                  kv_cache_dtype: str | None, weight_dtype: str | None, max_model_len: int | None,
                  max_num_batched_tokens: int | None, fmt: str) -> None:
    """Read a vLLM or SGLang startup log and report what the engine allocated (weights, available KV memory, KV
    cache tokens, maximum concurrency). With --model and --gpu, also back-solve the overhead the engine measured
    (activation + non-torch memory) and show the prediction without it and with it, so that later predictions for
    the same setup match the log. Exit 0 when the log was read, 2 when it cannot be read or has no KV lines.

    Example: planner calibrate vllm.log --model llama-3.1-8b --gpu h100-sxm --gpu-memory-utilization 0.95
    """
    import json

    from planner.calibrate import report

    try:
        text = logfile.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        fail(f"{logfile}: {exc.strerror or exc}")
    if (model is None) != (gpu is None):
        fail("--model and --gpu go together (give both to back-solve the overhead)")
    try:
        out = report(text, model, gpu, tp=tp, pp=pp, gpu_memory_utilization=gpu_memory_utilization, engine=engine,
                     engine_version=engine_version, kv_cache_dtype=kv_cache_dtype, weight_dtype=weight_dtype,
                     max_model_len=max_model_len, max_num_batched_tokens=max_num_batched_tokens)
    except PlannerError as exc:
        fail(f"{logfile}: {exc}")
    if fmt == "json":
        click.echo(json.dumps(out, indent=1))
        return
    for key, value in out.items():
        if value is None:
            continue
        shown = f"{value:,.2f}" if isinstance(value, float) else f"{value:,}" if isinstance(value, int) else value
        click.echo(f"{key:<30} {shown}")


@cli.command("calibrate-bench")
@click.argument("result", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--gpu", help="GPU that ran the benchmark (catalog name; the result files do not record it).")
@click.option("--model", help="Model (catalog name or config.json); default: the one the result names.")
@click.option("--tp", type=int, default=1, show_default=True, help="Tensor-parallel size of the server.")
@click.option("--pp", type=int, default=1, show_default=True, help="Pipeline-parallel size of the server.")
@click.option("--replicas", type=int, default=1, show_default=True,
              help="Identical servers behind one load balancer that the benchmark client drove together.")
@click.option("--engine", help="vllm, sglang or trtllm (default: the tool's engine).")
@click.option("--engine-version", help="Engine version, e.g. 0.11.0 (vLLM below 0.8 is V0).")
@click.option("--weight-dtype", default="auto", show_default=True, help="Weight dtype served (auto, fp8, awq, ...).")
@click.option("--kv-cache-dtype", default="auto", show_default=True, help="KV cache dtype (auto or fp8).")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the calibration JSON here (default: RESULT with .calibration.json).")
def calibrate_bench_cmd(result: Path, gpu: str | None, model: str | None, tp: int, pp: int, replicas: int,
                        engine: str | None, engine_version: str | None, weight_dtype: str, kv_cache_dtype: str,
                        output: Path | None) -> None:
    """Fit the serving model's step overhead and efficiency constants to your own benchmark: the JSON that
    `vllm bench serve --save-result`, SGLang `bench_serving --output-file` (JSON lines) or genai-perf
    (profile_export_genai_perf.json) writes. Prints predicted vs measured before and after the fit and writes a
    calibration file that serving_performance(calibration=...) accepts.

    Example: planner calibrate-bench vllm-16qps-concurrency16.json --gpu h100-sxm -o h100-vllm.calibration.json
    """
    import json

    from planner.serving.api import calibrate_from_bench
    from planner.serving.calibration import to_dict

    try:
        report = calibrate_from_bench(result, gpu=gpu, model=model, tp=tp, pp=pp, engine=engine,
                                      engine_version=engine_version, weight_dtype=weight_dtype,
                                      kv_cache_dtype=kv_cache_dtype, replicas=replicas)
    except PlannerError as exc:
        fail(str(exc))
        return
    scale = {"tpot": ("TPOT ms", 1e3), "ttft": ("TTFT ms", 1e3), "otps": ("output tok/s", 1.0)}
    click.echo(f"{'run':<28} {'metric':<13} {'measured':>10} {'before':>10} {'after':>10}")
    for row in report.rows:
        label, k = scale[row["metric"]]

        def fmt(v: float | None, k: float = k) -> str:
            return "sat." if v is None or v != v or v == float("inf") else f"{v * k:.4g}"

        click.echo(f"{row['run']:<28} {label:<13} {fmt(row['measured']):>10} {fmt(row['before']):>10} "
                   f"{fmt(row['after']):>10}")
    target = output or result.with_name(result.stem + ".calibration.json")
    target.write_text(json.dumps(to_dict(report.calibration), indent=1) + "\n", encoding="utf-8")
    click.echo(f"loss {report.loss_before:.3f} -> {report.loss_after:.3f}; wrote {target}")


@cli.command("recalc")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--output", "out", type=click.Path(dir_okay=False), default=None,
              help="New workbook to write (one PLAN).")
@click.option("--output-dir", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Folder for the new workbooks (many plans, or folders of plans): each under its path relative "
                   "to the folder it was found in.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Worker processes (with --output-dir).")
@click.option("--isolated/--in-process", default=True, show_default=True,
              help="Run in a child process under the time and memory limits.")
@click.option("--time-limit", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              help="Seconds per workbook.")
@click.option("--full-calc-on-load", is_flag=True, help="Also ask Excel to recompute everything when it opens OUT.")
def recalc_cmd(paths: tuple[str, ...], out: str | None, out_dir: str | None, jobs: int, isolated: bool,
               time_limit: float, full_calc_on_load: bool) -> None:
    """Recompute every formula of each plan headlessly and write a new workbook: the same workbook, every part kept
    byte for byte, with fresh cached values. Findings (unparsable, external or DDE formulas) are listed; a plan is
    never written. One plan: -o OUT. Many plans or folders: --output-dir DIR (links never followed out of the
    given paths; one bad file never stops the batch). Exit 0 all recomputed without findings, 1 findings or a plan
    not recomputed, 2 could not run.

    Example: planner recalc plan.xlsx -o plan.recalc.xlsx

    Example: planner recalc plans/ --output-dir recomputed/ --jobs 2
    """
    from planner.ooxml import Limits
    from planner.validate.report import safe_text

    limits = Limits(time_limit_s=time_limit)
    either = "give either -o OUT (one plan) or --output-dir DIR (many plans)"
    if out_dir is None:
        if out is None:
            fail(either)
            return
        if len(paths) != 1:
            fail(f"-o OUT takes one plan ({len(paths)} given); use --output-dir DIR for many")
            return
        _recalc_one_cmd(paths[0], out, isolated, limits, full_calc_on_load)
        return
    if out is not None:
        fail(either)
        return
    from planner.recalc_batch import OutputPathError, recalc_paths

    missing = [p for p in paths if not os.path.lexists(p)]
    if missing:
        fail(f"no such file or folder: {missing[0]}")
        return
    try:
        outcomes = recalc_paths(list(paths), out_dir, jobs=jobs, limits=limits, full_calc_on_load=full_calc_on_load,
                                isolate=isolated, fork_caller=True)
    except (OutputPathError, OSError) as exc:
        fail(str(exc))
        return
    for o in outcomes:  # in path order, whatever order the workers finished in
        for f in o.findings:
            click.echo(safe_text(f"{o.path}: {f.code}: {f.message}"))
        if o.failure is not None:
            click.echo(safe_text(f"{o.path}: {o.failure.code}: {o.failure.message} (not written)"))
        else:
            click.echo(safe_text(f"{o.dst}: {o.cells} formula cells recomputed, {len(o.findings)} findings"))
    failed = sum(o.failure is not None for o in outcomes)
    with_findings = sum(o.failure is None and bool(o.findings) for o in outcomes)
    click.echo(f"{len(outcomes)} plan(s): {len(outcomes) - failed} written ({with_findings} with findings), "
               f"{failed} not recomputed")
    if not all(o.ok for o in outcomes):
        sys.exit(1)


def _recalc_one_cmd(plan: str, out: str, isolated: bool, limits: Any, full_calc_on_load: bool) -> None:
    from planner.ooxml import WorkbookError
    from planner.recalc import recalc_file, recalc_file_isolated

    if os.path.isdir(plan):
        fail(f"{plan} is a folder: use --output-dir DIR to recalculate the plans in it")
        return
    try:
        if isolated:
            result = recalc_file_isolated(plan, out, limits=limits, full_calc_on_load=full_calc_on_load)
        else:
            result = recalc_file(plan, out, limits=limits, full_calc_on_load=full_calc_on_load)
    except (WorkbookError, PlannerError) as exc:
        fail(str(exc))
        return
    for f in result.findings:
        click.echo(f"{plan}: {f.code}: {f.message}")
    click.echo(f"{out}: {len(result.values)} formula cells recomputed, {len(result.findings)} findings")
    if result.findings:
        sys.exit(1)


def main() -> None:
    """Console-script entry point."""
    try:
        cli(standalone_mode=True)
    except PlannerError as exc:  # a planner error that escaped a command: one line, never a traceback
        fail(str(exc))


if __name__ == "__main__":
    main()
