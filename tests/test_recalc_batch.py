"""``planner recalc PATH... --output-dir DIR``: many plans in one command, through the real CLI.

Every output is compared with what ``planner recalc PLAN -o OUT`` (one plan, its own child process, no memo) writes
for the same plan: a batch worker reads its later plans through a sheet memo, so a plan whose markup an earlier one
had must still come out byte for byte as it does alone.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from xlsx_craft import cell_xml, write_xlsx

from planner.recalc_batch import OutputPathError, output_paths, recalc_paths

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
PLANNER = Path(sys.executable).with_name("planner")
# the seed first, then plans with the same template markup and other values: the stale one's cached values are
# not the recompute's, so its output differs from its input (what the memo must not carry over from the seed)
PLANS = ("seed.xlsm", "bulk-tpm.xlsm", "invalid/output-stale-value.xlsm")


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(PLANNER), "recalc", *map(str, args)], capture_output=True, text=True, cwd=ROOT,
                          timeout=600)


@pytest.fixture(scope="module")
def dde(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small workbook whose recompute has findings (a DDE formula, an unparsable one) and a value."""
    return write_xlsx(tmp_path_factory.mktemp("dde") / "dde.xlsx", [
        cell_xml("A1", 0, "cmd|' /C calc'!A0"), cell_xml("A2", 0, "SUM(1,,,(("), cell_xml("A3", 2),
        cell_xml("A4", 0, "A3+40")])


@pytest.fixture(scope="module")
def alone(tmp_path_factory: pytest.TempPathFactory, dde: Path) -> dict[str, bytes]:
    """Each plan recalculated alone by the one-plan command (the reference the batch is held to)."""
    out = tmp_path_factory.mktemp("alone")
    ref = {}
    for name, src in (*((n, SAMPLES / n) for n in PLANS), ("dde", dde)):
        dst = out / Path(name).name
        r = _run(src, "-o", dst)
        assert r.returncode in (0, 1), r.stderr
        ref[name] = dst.read_bytes()
    return ref


@pytest.fixture()
def submitted(tmp_path: Path, dde: Path) -> Path:
    """A submitted folder: three plans (one in a subfolder), a file that is not a workbook, a link out of it, and
    a plan whose recompute has findings (a DDE formula)."""
    root = tmp_path / "plans"
    (root / "q3").mkdir(parents=True)
    shutil.copy(SAMPLES / PLANS[0], root / "a-seed.xlsm")
    shutil.copy(SAMPLES / PLANS[1], root / "b-bulk.xlsm")
    shutil.copy(SAMPLES / PLANS[2], root / "q3" / "c-stale.xlsm")
    shutil.copy(dde, root / "d-dde.xlsx")
    (root / "e-junk.xlsx").write_bytes(b"not a zip at all")
    outside = tmp_path / "elsewhere.xlsm"
    shutil.copy(SAMPLES / PLANS[0], outside)
    os.symlink(outside, root / "f-link.xlsm")
    return root


def test_a_folder_in_one_command(submitted: Path, tmp_path: Path, alone: dict[str, bytes]) -> None:
    out = tmp_path / "out"
    r = _run(submitted, "--output-dir", out, "--jobs", "2")
    assert r.returncode == 1, r.stdout + r.stderr  # findings (the DDE plan) and two files not recomputed
    lines = r.stdout.splitlines()
    # in path order whatever order the workers finished in; the last line counts them
    assert lines[-1] == "6 plan(s): 4 written (1 with findings), 2 not recomputed"
    assert lines[0].startswith(f"{out / 'a-seed.xlsm'}: ")
    assert lines[0].endswith(" formula cells recomputed, 0 findings")
    assert any(line.startswith(f"{submitted / 'd-dde.xlsx'}: dde-formula: ") for line in lines)
    assert any(line.startswith(f"{submitted / 'e-junk.xlsx'}: not-a-workbook: ") and line.endswith("(not written)")
               for line in lines)
    assert any(line.startswith(f"{submitted / 'f-link.xlsm'}: symlink-outside-root: ") for line in lines)
    order = [line.split(":")[0] for line in lines[:-1]]
    assert order.index(str(out / "b-bulk.xlsm")) < order.index(str(out / "q3" / "c-stale.xlsm"))
    # the outputs: where the plans were, byte for byte what the one-plan command writes; nothing else
    assert (out / "a-seed.xlsm").read_bytes() == alone[PLANS[0]]
    assert (out / "b-bulk.xlsm").read_bytes() == alone[PLANS[1]]
    assert (out / "q3" / "c-stale.xlsm").read_bytes() == alone[PLANS[2]]
    assert (out / "d-dde.xlsx").read_bytes() == alone["dde"]
    assert (out / "q3" / "c-stale.xlsm").read_bytes() != (SAMPLES / PLANS[2]).read_bytes()  # values did change
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert written == ["a-seed.xlsm", "b-bulk.xlsm", "d-dde.xlsx", "q3/c-stale.xlsm"]


def test_in_process_writes_the_same_bytes(submitted: Path, tmp_path: Path, alone: dict[str, bytes]) -> None:
    out = tmp_path / "out"
    outcomes = recalc_paths([str(submitted)], out, isolate=False)
    assert [Path(o.path).name for o in outcomes] == ["a-seed.xlsm", "b-bulk.xlsm", "d-dde.xlsx", "e-junk.xlsx",
                                                      "f-link.xlsm", "c-stale.xlsm"]
    by_name = {Path(o.path).name: o for o in outcomes}
    assert by_name["e-junk.xlsx"].failure is not None and by_name["e-junk.xlsx"].failure.code == "not-a-workbook"
    assert by_name["f-link.xlsm"].failure is not None
    assert by_name["f-link.xlsm"].failure.code == "symlink-outside-root"
    assert by_name["d-dde.xlsx"].findings and not by_name["d-dde.xlsx"].ok
    assert by_name["a-seed.xlsm"].ok and by_name["a-seed.xlsm"].engine == "fast"
    assert (out / "q3" / "c-stale.xlsm").read_bytes() == alone[PLANS[2]]
    assert (out / "b-bulk.xlsm").read_bytes() == alone[PLANS[1]]


def test_a_plan_over_its_time_limit_leaves_nothing(tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    for name in ("x.xlsm", "y.xlsm"):
        shutil.copy(SAMPLES / "seed.xlsm", src / name)
    out = tmp_path / "out"
    r = _run(src, "--output-dir", out, "--time-limit", "0.1")
    assert r.returncode == 1
    assert r.stdout.count(": timeout: recalc exceeded the time limit of 0.1 s (raise it with --time-limit "
                          "SECONDS) (not written)") == 2, r.stdout
    assert not out.exists()  # no output, no temporary file, not even the folder this command created for them


def test_outputs_that_cannot_be_placed_are_refused_before_anything_runs(tmp_path: Path) -> None:
    for d in ("one", "two"):
        (tmp_path / d).mkdir()
        shutil.copy(SAMPLES / "seed.xlsm", tmp_path / d / "plan.xlsm")
    out = tmp_path / "out"
    r = _run(tmp_path / "one" / "plan.xlsm", tmp_path / "two" / "plan.xlsm", "--output-dir", out)
    assert r.returncode == 2
    assert "would both be written to" in r.stderr and "plan.xlsm" in r.stderr
    assert not out.exists()
    r = _run(tmp_path / "one", "--output-dir", tmp_path / "one")  # the outputs would be the inputs
    assert r.returncode == 2 and "never modified" in r.stderr
    assert (tmp_path / "one" / "plan.xlsm").read_bytes() == (SAMPLES / "seed.xlsm").read_bytes()


@pytest.mark.parametrize("args, message", [
    (("samples/seed.xlsm",), "either -o OUT"),
    (("samples/seed.xlsm", "-o", "x.xlsm", "--output-dir", "d"), "either -o OUT"),
    (("samples/seed.xlsm", "samples/bulk-tpm.xlsm", "-o", "x.xlsm"), "-o OUT takes one plan (2 given)"),
    (("samples", "-o", "x.xlsm"), "is a folder: use --output-dir"),
    (("no-such-plan.xlsm", "--output-dir", "d"), "no such file or folder: no-such-plan.xlsm"),
])
def test_usage_errors_exit_2(args: tuple[str, ...], message: str) -> None:
    r = _run(*args)
    assert r.returncode == 2 and message in r.stderr, r.stderr


def test_output_paths() -> None:
    assert [str(p) for p in output_paths(["p/a.xlsx", "p/q/b.xlsx", "c.xlsm"], folders=["p"], out_dir="o")] == \
        ["o/a.xlsx", "o/q/b.xlsx", "o/c.xlsm"]
    with pytest.raises(OutputPathError, match="would both be written to"):
        output_paths(["x/a.xlsx", "y/a.xlsx"], folders=[], out_dir="o")
    with pytest.raises(OutputPathError, match="is one of the plans"):
        output_paths(["x/a.xlsx"], folders=["x"], out_dir="x")
